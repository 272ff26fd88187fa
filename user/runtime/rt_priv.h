/* SPDX-License-Identifier: MIT */
/* Between the runtime's executor and its backends. Not installed. */
#ifndef HO_RT_PRIV_H
#define HO_RT_PRIV_H

#include <stdbool.h>

#include "heteroopt/runtime.h"

/*
 * A backend: what the executor asks of one device.  The executor owns the
 * plan, asks each device for its memory region, places tensors in it, has
 * its kernels prepared once over those addresses, launches them, and copies
 * between regions; a backend for CUDA or XRT fills the same table.
 */
struct ho_backend; /* one device's instance */
struct ho_kernel;  /* one node's prepared work (with any folded post-op) */
struct ho_pool;
struct ho_pool_buf;

/* Nodes folded into a kernel: a Conv's batch norm or a MatMul's bias Add, then an
 * element-wise node; -1 none. */
struct ho_fusion {
	int32_t bn, post;
};

struct ho_backend_info {
	const char *name; /* for reports: "cpu (oneDNN)", "emu (emulated, oneDNN)" */
	bool emulated;
	bool host_memory; /* kernels address host memory: other host-memory devices' tensors
			   * are read in place, no copy */
};

struct ho_backend_ops {
	int (*open)(const struct ho_rt_device *dev, int threads, struct ho_backend **out,
		    struct ho_error *err);
	void (*close)(struct ho_backend *b);
	void (*query)(const struct ho_backend *b, struct ho_backend_info *info);
	/* The device's tensor memory: a region from the pool on its NUMA node. */
	int (*alloc)(struct ho_backend *b, struct ho_pool *pool, size_t bytes, int node,
		     struct ho_pool_buf *out);
	void (*free)(struct ho_backend *b, struct ho_pool *pool, struct ho_pool_buf *buf);
	/* An fd another process or driver can map the region by (dma-buf or memfd). */
	int (*export_fd)(struct ho_backend *b, struct ho_pool *pool, const struct ho_pool_buf *buf);
	/* Memory another device or process exported (a dma-buf, a memfd), as a buffer. */
	int (*import_fd)(struct ho_backend *b, struct ho_pool *pool, int fd,
			 struct ho_pool_buf *out);
	/*
	 * Build node's kernel over the tensors' buffers (buf, indexed by tensor
	 * id; they stay where they are for the plan's life), channels_last[t]
	 * saying which are NHWC.  fuse (NULL: none) names nodes folded in: a
	 * Conv's BatchNormalization (into the weights) or a MatMul's bias Add,
	 * then an element-wise node run as a post-op; the kernel then writes the
	 * last one's output.  *out is NULL for a node with nothing to do.
	 */
	int (*prepare)(struct ho_backend *b, const struct ho_graph *g, uint32_t node,
		       const struct ho_fusion *fuse, void *const *buf, const uint8_t *channels_last,
		       struct ho_kernel **out, struct ho_error *err);
	int (*launch)(struct ho_backend *b, struct ho_kernel *k, struct ho_error *err);
	void (*kernel_free)(struct ho_kernel *k);
	int (*sync)(struct ho_backend *b);
};

/* backends/cpu: oneDNN on this machine's cores; backends/emu: the same, as an accelerator. */
extern const struct ho_backend_ops ho_backend_cpu, ho_backend_emu;
/* The registry (backends/backends.c): the ops of an enum ho_rt_backend (NULL: none). */
const struct ho_backend_ops *ho_backend_ops_of(int backend);
/* A constant tensor's bytes (weights, Constant outputs, folded values) into dst. */
int ho_rt_fill_constant(const struct ho_tensor *t, void *dst);
/*
 * Tensor t's bytes at its home in plan rt, for a control-flow kernel that
 * feeds its subgraph's plan (inputs, outer tensors) and reads its outputs in
 * place; an input asked for counts as given.  NULL: nothing reads it.
 */
void *ho_rt_tensor_data(struct ho_rt *rt, int32_t t);
/* The backend a box device of this kind runs on (cpu: cpu; any other: emu). */
int ho_backend_for_kind(const char *kind);

/*
 * Layout classes: kernels that work on NHWC as well as NCHW and may mix
 * them (Conv, Concat), and among those the ones whose output must share the
 * layout of its full-shape inputs (element-wise, pooling, batch norm).
 */
bool ho_cpu_op_any_layout(const char *op_type);
bool ho_cpu_op_same_layout(const char *op_type);
bool ho_cpu_op_binary(const char *op_type);

/* The memory plan (memplan.c): offsets in one device's region, reusing bytes. */
struct ho_mp_item {
	uint64_t size;
	int32_t writer;		 /* node that writes it (-1: written before the run) */
	bool copy;		 /* written by a copy that starts once writer is done */
	double copy_start;	 /* a copy: when the schedule starts it (s), or -1 */
	bool permanent;		 /* inputs, constants: held from before the run, never shared */
	bool to_end;		 /* outputs: from their write to the end of the run */
	uint32_t prio;		 /* the writer's place in the schedule's order */
	const uint32_t *readers; /* nodes that read it */
	uint32_t n_readers;
	/* What reads these very bytes: a home's readers through a replica are
	 * replaced by the copy (n_nodes + tensor x device) that fills it. */
	const uint32_t *direct;
	uint32_t n_direct;
	uint32_t tensor; /* the executor's: whose bytes these are */
	uint64_t offset; /* out */
};
/* What orders two nodes' runs. */
struct ho_mp_order {
	const uint64_t *anc; /* per node, its graph ancestors: words 64-bit words; NULL: no reuse */
	uint32_t words;
	const double *start, *end; /* per node, the timeline the executor enforces; NULL: none */
	const uint32_t *prio;	   /* per node: the schedule's order, tie-breaker of start */
	uint32_t n_nodes;	   /* readers from n_nodes up are copies, */
	const double *copy_end;	   /* their predicted completion (-1: unknown), or NULL */
};
/* Each node's ancestors as bitsets of words 64-bit words; NULL if too large. */
uint64_t *ho_memplan_ancestors(const struct ho_graph *g, uint32_t *words);
/* The plan: the region's size, and the reuses only the timeline orders. */
struct ho_mp_plan {
	uint64_t total;
	struct ho_mp_wait {
		uint32_t before, after; /* items: after's writer waits for before's readers */
		bool direct;		/* ... its direct readers (copies included) */
	} * waits;
	uint32_t n_waits, cap_waits;
};
int ho_memplan(struct ho_mp_item *items, uint32_t n, const struct ho_mp_order *o,
	       struct ho_mp_plan *pl);

#endif
