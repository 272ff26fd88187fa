/* SPDX-License-Identifier: MIT */
/*
 * The pool's state, shared by its two halves: pool.c (buffers, synchronous
 * copies, the two backends) and pool_queue.c (asynchronous copy queues).
 * Not installed.
 */
#ifndef HO_POOL_PRIV_H
#define HO_POOL_PRIV_H

#include <heteroopt/pool.h>
#include <ump/libump.h>

struct ho_pool_ops {
	int (*alloc)(struct ho_pool *p, size_t size, int node, struct ho_pool_buf *b);
	void (*free)(struct ho_pool *p, struct ho_pool_buf *b);
	int (*copy)(struct ho_pool *p, const struct ho_pool_copy *c, unsigned int n);
	int (*share_fd)(struct ho_pool *p, const struct ho_pool_buf *b);
	int (*import)(struct ho_pool *p, int fd, struct ho_pool_buf *b);
};

struct ho_pool {
	const struct ho_pool_ops *ops;
	struct ump ump;
	int nodes;
	size_t page;
	char describe[160];
};

/* The fallback's copy of a chain, with the bounds checks ump.ko makes. */
int ho_pool_user_copy(struct ho_pool *p, const struct ho_pool_copy *c, unsigned int n);

#endif
