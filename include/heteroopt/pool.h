/* SPDX-License-Identifier: MIT */
/*
 * Tensor memory for the runtime: buffers on a chosen NUMA node, CPU-mapped,
 * copyable in chains and shareable by fd. Backed by the unified memory pool
 * (/dev/ump through libump) when ump.ko is loaded, otherwise by a user-space
 * pool with the same contract: memfd buffers whose pages libnuma binds to
 * the node. Which one is in use is chosen at open and reported by
 * ho_pool_describe(); the caller never needs to care.
 *
 * Owns: the buffers it hands out (each must be freed before close); no
 * global state. Calls return 0 or -errno.
 */
#ifndef HETEROOPT_POOL_H
#define HETEROOPT_POOL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Use the user-space pool even when /dev/ump is there. */
#define HO_POOL_FALLBACK 1u

struct ho_pool;

struct ho_pool_buf {
	void *ptr;	 /* CPU mapping, page-aligned */
	size_t size;	 /* bytes, rounded up to pages */
	int node;	 /* NUMA node the pages are on */
	uint32_t handle; /* ump handle; 0 in the user-space pool */
	int fd;		 /* memfd in the user-space pool; -1 with ump */
};

struct ho_pool_copy {
	const struct ho_pool_buf *src, *dst;
	size_t src_off, dst_off, len;
};

int ho_pool_open(unsigned int flags, struct ho_pool **out);
void ho_pool_close(struct ho_pool *p);
/* "ump (...)" or "user-space fallback (...): why". */
const char *ho_pool_describe(const struct ho_pool *p);
int ho_pool_is_ump(const struct ho_pool *p);
/* Number of NUMA nodes buffers can be placed on (nodes 0..n-1). */
int ho_pool_nodes(const struct ho_pool *p);

/* Zeroed buffer of at least size bytes on node. */
int ho_pool_alloc(struct ho_pool *p, size_t size, int node, struct ho_pool_buf *b);
void ho_pool_free(struct ho_pool *p, struct ho_pool_buf *b);
/* Copies run in order, each with memmove semantics; all or an error. */
int ho_pool_copy(struct ho_pool *p, const struct ho_pool_copy *c, unsigned int n);
/* A new fd another process or driver can map: a dma-buf (ump) or the memfd. */
int ho_pool_share_fd(struct ho_pool *p, const struct ho_pool_buf *b);
/*
 * Memory another driver or process exported as fd (a dma-buf with ump; any
 * mappable fd, a memfd, in the user-space pool): mapped and copyable like a
 * buffer of the pool, node -1.  It holds its own reference: the caller keeps
 * fd.  ho_pool_free() releases it.
 */
int ho_pool_import(struct ho_pool *p, int fd, struct ho_pool_buf *b);

#ifdef __cplusplus
}
#endif
#endif
