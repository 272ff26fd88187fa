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

/*
 * Where b's pages are, asked of the kernel page by page (get_mempolicy) for
 * up to 64 pages spread over it: their node, -ENODATA if they are on more
 * than one, -ENOSYS without NUMA support.
 */
int ho_pool_buf_node(const struct ho_pool_buf *b);
/*
 * A buffer in the P2P memory the PCI device pci ("0000:03:00.0") publishes,
 * federated into ump.ko first if it is not yet (CAP_SYS_ADMIN), mapped
 * uncached; node -1.  -EOPNOTSUPP in the user-space pool, -ENODEV if the
 * device publishes none (or the kernel has no CONFIG_PCI_P2PDMA).
 */
int ho_pool_alloc_p2p(struct ho_pool *p, size_t size, const char *pci, struct ho_pool_buf *b);
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

/*
 * Asynchronous copies.  A queue takes chains (ho_pool_submit), starts them
 * at the latest at the next reap or flush, and hands back each one's
 * completion as it comes (ho_pool_reap).  With ump: an io_uring ring of its
 * own whose uring_cmd submits each chain to /dev/ump, or UMP_IOC_SUBMIT and
 * UMP_IOC_WAIT where the module has no uring_cmd or HO_POOL_QUEUE_IOCTL asks;
 * in the user-space pool: a copy thread of its own.  One thread at a time
 * uses a queue; the buffers a chain names stay until it is reaped; closing
 * waits for what is in flight.
 */
#define HO_POOL_QUEUE_IOCTL 1u
#define HO_POOL_QUEUE_MAX_DEPTH 1024u

struct ho_pool_queue;

struct ho_pool_done {
	uint64_t tag; /* as submitted */
	int status;   /* 0 or the chain's -errno */
};

/* The figures of the pool's copy engines, from ump.ko's UMP_IOC_STATS. */
struct ho_pool_stats {
	uint64_t chains[2]; /* finished, by engine: [0] CPU, [1] DMA */
	uint64_t bytes[2];
	uint64_t errors;  /* chains that failed */
	uint64_t staged;  /* bytes bounced through host memory */
	uint32_t buffers; /* live buffers of every kind, every file */
};

/* depth: chains in flight at most, 1..HO_POOL_QUEUE_MAX_DEPTH. */
int ho_pool_queue_open(struct ho_pool *p, unsigned int depth, unsigned int flags,
		       struct ho_pool_queue **out);
void ho_pool_queue_close(struct ho_pool_queue *q);
/* "io_uring", "ioctl" or "copy thread": the path its chains take. */
const char *ho_pool_queue_path(const struct ho_pool_queue *q);
unsigned int ho_pool_queue_in_flight(const struct ho_pool_queue *q);
/* A chain of n copies; -EBUSY with depth chains in flight.  c may go at once. */
int ho_pool_submit(struct ho_pool_queue *q, const struct ho_pool_copy *c, unsigned int n,
		   uint64_t tag);
/* Start what was submitted and not started yet. */
int ho_pool_flush(struct ho_pool_queue *q);
/*
 * Up to max completions; with wait, sleeps until there is one if any chain
 * is in flight.  Returns how many (0: none yet, or none in flight).
 */
int ho_pool_reap(struct ho_pool_queue *q, struct ho_pool_done *out, unsigned int max, int wait);
/*
 * A chain through the queue's path, waited for: its status.  Only with
 * nothing in flight (-EBUSY); in the user-space pool it copies in the
 * caller's thread, the hand-off to the copy thread being all it would add.
 */
int ho_pool_queue_copy(struct ho_pool_queue *q, const struct ho_pool_copy *c, unsigned int n);
/* -EOPNOTSUPP in the user-space pool, which has no engines to count. */
int ho_pool_stats(struct ho_pool *p, struct ho_pool_stats *s);

#ifdef __cplusplus
}
#endif
#endif
