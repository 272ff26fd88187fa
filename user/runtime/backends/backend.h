/* SPDX-License-Identifier: MIT */
/*
 * The backend contract: everything the executor asks of a device, and the
 * only door between them.  The executor owns the plan and the memory (every
 * region comes from the pool, ump.ko or the fallback); a backend owns its
 * kernels, queues and threads.  It is handed tensors as (block, offset)
 * handles it made itself, never calls back into the executor, and is listed
 * once, by name, in backends.c.  Not installed.
 */
#ifndef HO_BACKEND_H
#define HO_BACKEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "heteroopt/runtime.h"

struct ho_backend;   /* one device's instance */
struct ho_kernel;    /* one node's prepared work (with any folded post-op) */
struct ho_dev_block; /* a backend's handle on a block of memory it addresses */

/* Nodes folded into a kernel: a Conv's batch norm or a MatMul's bias Add, a Conv's
 * residual Add (sum: its result added into the other operand's bytes, which are
 * also the chain's output's), then an element-wise node; -1 none.  through: the
 * inputs (bit k: input k) it reads through the strides of the Transpose that made
 * them, whose output shares its input's bytes (ho_matmul_through).  precision: the
 * arithmetic asked of the kernel (ho_rt_precisions: "bf16"), NULL float32; a kernel
 * that has none such computes float32 and says so (ops.precision).  range: its
 * first input's calibrated [lo, hi] (int8), NULL none. */
struct ho_fusion {
	int32_t bn, post, sum;
	uint32_t through;
	const char *precision;
	const float *range;
};

/*
 * A tensor's bytes as a device sees them: off bytes into a block the
 * backend wrapped (ops.wrap).  host is the same bytes in this process's
 * address space, for backends whose kernels address host memory and for
 * reading constants at prepare time; the executor itself never touches it.
 */
struct ho_mem {
	struct ho_dev_block *block;
	uint64_t off;
	void *host;
};

struct ho_backend_info {
	const char *name; /* for reports: "cpu (oneDNN)", "opencl (PoCL, pthread-...)" */
	bool emulated;	  /* stands in for another device: paced to the schedule's times */
	bool host_memory; /* kernels address host memory: other host-memory devices'
			   * tensors are read in place, no copy */
	bool own_memory;  /* its blocks are memory of its own (ops.read and ops.write) */
};

/* How an operator's kernel treats 4-D float layouts (the executor chooses NHWC
 * for tensors that only HO_BE_ANY_LAYOUT kernels touch). */
enum ho_be_layout {
	HO_BE_PLAIN = 0,      /* row-major only */
	HO_BE_ANY_LAYOUT = 1, /* NCHW or NHWC, mixed (Conv, Concat) */
	HO_BE_SAME_LAYOUT = 3 /* either, but its output's as its full-shape inputs' */
};

struct ho_backend_ops {
	const char *name; /* the registry's key, as boxes and schedules name it */
	/*
	 * Open the device dev describes (its platform and device where the
	 * backend has several).  threads: the threads its kernels run on, 0 for
	 * the library's own choice.  Fails naming the device when it is absent.
	 */
	int (*open)(const struct ho_rt_device *dev, int threads, struct ho_backend **out,
		    struct ho_error *err);
	/* The devices it could open here, up to cap: how many (probe --write-box lists
	 * them in a box).  NULL: none of its own (the host's cores, the emulator). */
	int (*devices)(struct ho_rt_found *out, int cap);
	void (*close)(struct ho_backend *b);
	void (*query)(const struct ho_backend *b, struct ho_backend_info *info);
	/* The operator types it runs (a node may still be refused by prepare for its
	 * attributes or types); what `probe --write-box` lists as supported_ops. */
	bool (*runs)(const char *op_type);
	/*
	 * Whether prepare would take node as it stands (its attributes, types
	 * and shapes), alone (fuse NULL) or with the nodes fuse names folded in,
	 * every tensor row-major: 0, or -EOPNOTSUPP naming what it lacks.  mem
	 * holds constants' bytes (host) and no blocks: no device is opened, so
	 * the scheduler asks it of boxes other than this machine.  NULL: runs()
	 * decides alone.
	 */
	int (*check)(const struct ho_graph *g, uint32_t node, const struct ho_fusion *fuse,
		     const struct ho_mem *mem, struct ho_error *err);
	/* Layout class of op_type's kernel, and whether it is binary (broadcasting). */
	enum ho_be_layout (*layout)(const char *op_type, bool *binary);
	/*
	 * A handle on len bytes of host memory at host (a pool region, outside
	 * pages bound to a tensor): kernels reach tensors in it through it.
	 * NULL: the backend addresses host memory directly, the handle is unused.
	 */
	int (*wrap)(struct ho_backend *b, void *host, size_t len, struct ho_dev_block **out,
		    struct ho_error *err);
	void (*unwrap)(struct ho_backend *b, struct ho_dev_block *blk);
	/*
	 * A device that keeps its own memory (info.own_memory: a discrete GPU):
	 * wrap gives a block of device memory standing for the host range, filled
	 * from it once (the plan's constants), and the executor moves tensors in
	 * and out only through these, each in order after the kernels launched
	 * before it and done when it returns.  Otherwise unused (NULL): the
	 * blocks are the host memory itself.
	 */
	int (*read)(struct ho_backend *b, struct ho_dev_block *blk, uint64_t off, void *dst,
		    size_t len, struct ho_error *err);
	int (*write)(struct ho_backend *b, struct ho_dev_block *blk, uint64_t off, const void *src,
		     size_t len, struct ho_error *err);
	/*
	 * Build node's kernel over the tensors' memory (mem, indexed by tensor
	 * id; it stays where it is for the plan's life), channels_last[t] saying
	 * which are NHWC.  fuse (NULL: none) names nodes folded in: a Conv's
	 * BatchNormalization (into the weights) or a MatMul's bias Add, then an
	 * element-wise node run as a post-op; the kernel then writes the last
	 * one's output.  *out is NULL for a node with nothing to do.
	 */
	int (*prepare)(struct ho_backend *b, const struct ho_graph *g, uint32_t node,
		       const struct ho_fusion *fuse, const struct ho_mem *mem,
		       const uint8_t *channels_last, struct ho_kernel **out, struct ho_error *err);
	/* Called on a worker's thread before it runs this device's kernels. */
	void (*thread_init)(struct ho_backend *b);
	/*
	 * Run k.  Without wait, k's outputs are written and visible to the host
	 * when it returns.  With wait, it may return once k is queued: the device
	 * runs its kernels in launch order, so the executor launches a node's
	 * successors on the same device at once, and waits for k (wait) only
	 * where another device, a copy or the caller needs its outputs.
	 */
	int (*launch)(struct ho_backend *b, struct ho_kernel *k, struct ho_error *err);
	/*
	 * Block until the last launch of k has written its outputs for the host
	 * and other devices; *start and *end: when the device began and finished
	 * it, in seconds of ho_clock_s()'s clock (left as they are where the
	 * device does not say).  An error names the node: a kernel that failed,
	 * a device lost.  NULL: launch is synchronous.
	 */
	int (*wait)(struct ho_backend *b, struct ho_kernel *k, double *start, double *end,
		    struct ho_error *err);
	/*
	 * Without blocking: k's last launch has ended (or failed: wait says how),
	 * so a wait for it returns at once.  NULL: only wait tells.
	 */
	bool (*done)(struct ho_backend *b, const struct ho_kernel *k);
	/*
	 * Memory k has of its own, into m: held, bytes it keeps while the plan lives;
	 * packed, the weights it took over in its layout (packed_sig: shared by every
	 * kernel of the device that reads the same weight in the same layout, as a
	 * detector's heads read theirs at each pyramid level); scratch, bytes it needs
	 * only while it runs, from a workspace the device's kernels share (the device
	 * holds its largest kernel's).  NULL: none beyond the plan's tensors.
	 */
	void (*kernel_memory)(const struct ho_kernel *k, struct ho_kernel_memory *m);
	/* The arithmetic k computes in where it is not its tensors' own ("bf16": a
	 * convolution on a device opened for bf16), else NULL.  NULL: always theirs. */
	const char *(*precision)(const struct ho_kernel *k);
	/* The range k's first input took in its runs so far, where k was asked a precision
	 * that quantizes it and given no range (ho_fusion.range), by rule (ho_rt_observed):
	 * 0, -ENOENT (none), or -EINVAL (an unknown rule).  NULL: none. */
	int (*observed)(const struct ho_kernel *k, const char *rule, float range[2]);
	/*
	 * The inputs of node (bit k: input k) its kernel copies at prepare into memory of
	 * its own and never reads again: weights reordered into the kernel's layout, only
	 * constants whose bytes the graph holds (ho_tensor_holds_bytes).  The plan gives
	 * them no memory on the device and prepare reads the graph's own bytes (host, no
	 * block): a model's weights are then held once, in the kernel's layout, not twice.
	 * NULL: none.  What the scheduler counts too (ho_kernel_memory.taken).
	 */
	uint32_t (*takes_over)(const struct ho_graph *g, uint32_t node);
	/*
	 * The inputs of node (bit k: input k) its kernel can read through the strides of
	 * the Transpose that makes them (ho_matmul_through), where both run on this
	 * device: that Transpose then runs nothing and its output holds no bytes of its
	 * own.  NULL: none.  What the scheduler counts too (ho_kernel_memory.through).
	 */
	uint32_t (*folds_transposes)(const struct ho_graph *g, uint32_t node);
	void (*kernel_free)(struct ho_kernel *k);
	/* Wait for everything launched: on an error, before the plan's memory is reused. */
	int (*sync)(struct ho_backend *b);
};

/* The registry (backends.c). */
/* The backend of this name; NULL: none is built in. */
const struct ho_backend_ops *ho_backend_find(const char *name);
/* The backend that runs a graph on this host's cores: the registry's first. */
const struct ho_backend_ops *ho_backend_host(void);

#endif
