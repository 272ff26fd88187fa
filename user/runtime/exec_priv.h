/* SPDX-License-Identifier: MIT */
/*
 * The executor's state, shared by its two halves: plan.c makes a plan once
 * (placement, layouts, fusion, the memory plan, the kernels), run.c runs it
 * (the workers, copy threads and their hand-offs).  Not installed.
 */
#ifndef HO_EXEC_PRIV_H
#define HO_EXEC_PRIV_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "heteroopt/pool.h"
#include "rt_priv.h"

/* A thread that serves every run of a plan, from its first to ho_rt_free. */
struct ho_rt_thread {
	struct ho_rt_dev *dv;
	void *(*body)(void *); /* one run's part: ho_rt_worker or ho_rt_copier */
	pthread_t tid;
	bool up;
	uint64_t last_run; /* the run it took part in last */
};

/* A block of host memory a device's backend wrapped: a region, an external span. */
struct ho_rt_block {
	void *host;
	size_t len;
	struct ho_dev_block *blk;
};

/* Nodes a device whose launches only queue may have in flight: enough to hide a
 * launch's latency behind the ones before it, few enough that a failure is found soon. */
#define HO_RT_INFLIGHT 256

struct ho_rt_dev {
	struct ho_rt *rt;
	uint32_t idx;
	const struct ho_backend_ops *ops;
	struct ho_backend *be;
	struct ho_backend_info info;
	struct ho_pool_buf region;
	uint64_t region_used;
	struct ho_rt_block *blocks; /* what its kernels address, each wrapped once */
	uint32_t n_blocks;
	int threads;	 /* its kernels' threads; 0: the backend's choice */
	uint32_t *nodes; /* its nodes, in priority order */
	uint32_t n_nodes;
	/* Copies into this device's region: a queue filled as producers finish,
	 * drained by a thread of its own so that copies overlap compute. */
	uint32_t *cq; /* tensor ids */
	uint32_t cq_cap, cq_head, cq_tail;
	/* The copy thread's chains in flight (copyq), and the worker's own
	 * queue for the copies it makes and waits for itself (syncq). */
	struct ho_pool_queue *copyq, *syncq;
	uint32_t copy_depth; /* copyq's */
	struct ho_rt_thread worker, copier;
	/* Nodes launched on a device whose launch only queues (ops.wait), oldest
	 * first: done for its own later nodes, not yet for anyone else. */
	uint32_t inflight[HO_RT_INFLIGHT];
	bool if_shares[HO_RT_INFLIGHT]; /* its end releases others' work too */
	uint32_t if_head, if_n, if_n_shares;
	double last_end; /* when the last of them finished, from the run's start */
};

/*
 * Frame buffers of one external tensor kept mapped: a producer's ring of
 * them comes back under the span by moving page tables, not by faulting
 * every page in again (external.c).
 */
#define HO_RT_EXT_FRAMES 8

/* Outside memory bound to an external tensor once, and kept. */
struct ho_rt_frame {
	unsigned long dev, ino;	   /* which memory: the file's device and inode */
	uint64_t offset;	   /* where in it the tensor starts */
	bool held;		   /* in use; else a free place */
	struct ho_pool_buf import; /* the pool's import of it, for copies; ptr NULL: none */
	int sync_fd;		   /* a descriptor of it, to bracket CPU access with */
	bool parked;		   /* its pages mapped in its slot, ready to move under the span */
	uint64_t used;		   /* the bind that used it last */
};

/* A graph input or output that may live in outside memory (external.c). */
struct ho_rt_ext {
	int32_t t;		/* the tensor whose bytes these are */
	int32_t named;		/* the input or output named: t, or a view of t */
	uint32_t dev;		/* its home */
	size_t len;		/* its bytes, rounded up to pages: the span kernels address */
	struct ho_pool_buf own; /* its own memory; its span is where every kernel points */
	char *slots;		/* HO_RT_EXT_FRAMES spans of len reserved, where frames park */
	struct ho_rt_frame frame[HO_RT_EXT_FRAMES];
	int cur;	/* the frame under the span, or -1: its own pages */
	uint64_t binds; /* binds so far: the clock of frame[].used */
	bool copied;	/* the plan copies it between devices: a frame needs the pool's import */
	bool no_park;	/* mremap cannot move these mappings: each bind maps afresh */
};

struct ho_rt {
	const struct ho_graph *g;
	uint32_t n_dev;
	struct ho_rt_device desc[HO_RT_MAX_DEVICES];
	struct ho_rt_dev dev[HO_RT_MAX_DEVICES];
	int host;
	uint64_t in_place[HO_RT_MAX_DEVICES]; /* per device: devices whose memory it reads */
	double pred_peak[HO_RT_MAX_DEVICES];  /* bytes, the simulator's peak of each region */
	int pace;
	int32_t fail_node;
	struct ho_pool *pool;
	int32_t *node_dev;	  /* per node; -1: nothing to run */
	uint32_t *prio;		  /* per node */
	const double *pred_start; /* per node, or NULL */
	const double *pred_end;
	const double *pred_copy_start; /* per tensor x device, or NULL */
	const double *pred_copy_end;
	int32_t *home;	  /* per tensor: device holding it */
	void **buf;	  /* per tensor x device: its data there, NULL if absent */
	uint8_t *is_copy; /* per tensor x device: a replica filled by a pool copy */
	uint8_t *taken;	  /* per tensor x device: a constant its kernels there took over
			   * (ho_backend_ops.takes_over), read from the graph's bytes */
	uint64_t *offset; /* per tensor x device: offset in the device's region */
	uint8_t *is_set;  /* per graph input: fed since the plan was made */
	uint8_t *nhwc;	  /* per tensor: stored channels-last */
	int32_t *post;	  /* per node: the element-wise node folded into it, or -1 */
	int32_t *sum;	  /* per node: the residual Add folded into it (its output in the
			   * other operand's bytes: ho_rt_root), or -1 */
	int32_t *bn;	  /* per node: the BatchNormalization folded into it, or -1 */
	int32_t *folded;  /* per node: the Conv whose kernel it is folded into, or -1 */
	/*
	 * per node: an alias op (Reshape, ...) the schedule put on a device that
	 * cannot read its source: like the simulator, its output is then its own
	 * tensor there, filled by a copy within the device's region.
	 */
	uint8_t *moves;
	/* per alias node: where its output starts in its source's bytes (ho_view_offset),
	 * worked out once at plan time, not at each move */
	uint64_t *view_off;
	/* per tensor: the Concat output it is written straight into (ho_concat_in_place),
	 * into_off bytes in, or -1; per node: a Concat so gathered, running nothing */
	int32_t *into;
	uint64_t *into_off;
	uint8_t *gathers;
	const char **node_precision; /* per node: its kernel's arithmetic, NULL: float32 */
	const char **want_precision; /* per node: the arithmetic asked of it (ho_fusion) */
	float *node_range;	     /* ho_rt_opts.node_range, kept for tails; NULL: none */
	struct ho_kernel **k;
	struct ho_control **ctl; /* per node: If, Loop and Scan, the executor's own (control.c) */
	/* run state, under lock */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	uint64_t progress; /* bumped with every broadcast; read without the lock by spinners */
	double spin_s;	   /* how long an idle worker watches it before it sleeps */
	uint32_t *waiting; /* per node: producer nodes not yet done */
	/* Memory waits (memplan.c): node i's finish releases mem_succ[mem_off[i]..],
	 * a node below n_nodes, else the copy AT(t, d) at n_nodes + AT(t, d) */
	uint32_t *mem_off, *mem_succ;
	uint32_t *copy_waiting; /* per tensor x device: nodes the copy still waits for */
	uint8_t *done;
	uint8_t *copied; /* per tensor x device, this run */
	uint32_t remaining;
	/* nodes of this run finished and in all, read unlocked (ho_rt_progress) */
	uint32_t finished, to_run;
	uint32_t running, copying; /* nodes and copies in progress */
	int run_err;
	struct ho_error err;
	/*
	 * Workers and copy threads live from the first run to ho_rt_free and
	 * sleep on run_cond between runs.  Made for every run, they cost the
	 * transformer split over two CPU devices 0.3 ms a run (medians of 41:
	 * 2.54-2.88 ms against 2.25-2.48 ms) and a 3-node split half its time.
	 */
	pthread_cond_t run_cond; /* a run starts, a thread ends its part, or quit */
	uint64_t run_id;	 /* bumped to start a run */
	uint32_t workers_busy, copiers_busy;
	bool quit;
	double t0;
	double *start, *end;
	double *copy_start, *copy_end; /* per tensor x device: this run's copy, -1 if none */
	struct ho_rt_ext *ext;	       /* opts.external, n_ext of them */
	uint32_t n_ext;
	int32_t *ext_of; /* per tensor: its index in ext, or -1 */
	struct ho_rt_report report;
	int depth;	      /* 0: the caller's plan; n: the tail of a tail of ... */
	struct ho_tail *tail; /* the nodes whose shapes a run decides (tail.c), or NULL */
	uint8_t *keep;	      /* per tensor: read by the tail, kept to the run's end */
	const struct ho_extent_bound *bounds; /* opts.bounds: checked as the tail is planned */
	uint32_t n_bounds;
};

#define AT(rt, t, d) ((size_t)(t) * (rt)->n_dev + (size_t)(d))

/* Held from before the run: weights, constants, inputs, and a subgraph's outer
 * tensors (known, or fed by the control-flow kernel that runs the subgraph). */
static inline bool ho_is_data(const struct ho_tensor *t)
{
	return t->flags &
	       (HO_T_INITIALIZER | HO_T_CONSTANT | HO_T_FOLDED | HO_T_INPUT | HO_T_OUTER);
}

/* check.c: host memory for every tensor of a graph, nothing planned: constants hold their
 * bytes (copied where copy, or kernels may write them), the rest one scratch block. */
struct ho_scratch_mem {
	struct ho_mem *mem;
	void **own; /* per tensor: a constant's bytes allocated here, else NULL */
	char *scratch;
};
int ho_scratch_new(struct ho_scratch_mem *s, const struct ho_graph *g, bool copy,
		   struct ho_error *err);
void ho_scratch_free(struct ho_scratch_mem *s, const struct ho_graph *g);
/* Whether node i's backend takes it with bn, post and sum folded in (-1: none), asked of
 * its check over s (zeroed: made on first use); a backend without one takes every fusion. */
bool ho_rt_takes_fused(const struct ho_rt *rt, struct ho_scratch_mem *s, uint32_t i, int32_t bn,
		       int32_t post, int32_t sum);

/* plan.c: ho_rt_new for the tail of a plan depth deep */
int ho_rt_plan(const struct ho_graph *g, const struct ho_rt_opts *o, int depth, struct ho_rt **out,
	       struct ho_error *err);
/* tail.c: the nodes whose shapes a run decides, planned and run once the plan's have run */
int ho_rt_tail_split(struct ho_rt *rt, int depth, struct ho_error *err);
int ho_rt_tail_run(struct ho_rt *rt, struct ho_error *err);
const void *ho_rt_tail_output(const struct ho_rt *rt, int32_t t, const struct ho_tensor **tt);
void ho_rt_tail_free(struct ho_tail *tl);
/* Tensor t lives to the run's end: a graph output, or read by the tail. */
static inline bool ho_rt_kept(const struct ho_rt *rt, int32_t t)
{
	return (rt->g->tensors[t].flags & HO_T_OUTPUT) || (rt->keep && rt->keep[t]);
}

/* layouts.c: channels-last tensors and folded nodes, before the memory plan */
int ho_rt_layouts(struct ho_rt *rt, struct ho_error *err);
/* The same over g, node i's kernel on node_ops[i] (NULL: it runs nowhere), into nhwc[t]. */
void ho_rt_layouts_over(const struct ho_graph *g, const struct ho_backend_ops *const *node_ops,
			uint8_t *nhwc);
void ho_rt_fuse(struct ho_rt *rt);
/* Node i's output shares its first input's bytes: a view (Reshape, ...), or a
 * Transpose the MatMul after it reads through (ho_rt_fuse folded it into that one). */
bool ho_rt_is_alias(const struct ho_rt *rt, uint32_t i);
/* A tensor a fused kernel skips: a Conv's output (or its folded batch norm's) that
 * the chain's last node writes instead. */
bool ho_rt_unwritten(const struct ho_rt *rt, int32_t t);
/* The node of Conv h's chain that writes its result (element-wise, else residual Add); -1 if
 * neither folded (layouts.c). */
int32_t ho_rt_chain_end(const struct ho_rt *rt, uint32_t h);
/* regions.c: the memory plan of every device's tensors, and the regions */
bool ho_rt_home_unread(const struct ho_rt *rt, int32_t t);
int ho_rt_memplan(struct ho_rt *rt, uint64_t *need, struct ho_error *err);
int ho_rt_region_alloc(struct ho_rt *rt, uint32_t d, uint64_t size, struct ho_error *err);
/* prepare.c: every node's kernel on its device's backend */
int ho_rt_kernels(struct ho_rt *rt, struct ho_error *err);

/* What device d sees of tensor t: its own copy, else the home it shares; NULL if none. */
void *ho_rt_view(const struct ho_rt *rt, int32_t t, uint32_t d);

/* Shared by the two halves. */
int ho_rt_move(struct ho_rt *rt, uint32_t id, uint32_t d, struct ho_error *err);
void ho_rt_stop_threads(struct ho_rt *rt);

/* run.c, for copies.c */
void ho_rt_wake(struct ho_rt *rt);
void ho_rt_fail(struct ho_rt *rt, int ret, const struct ho_error *e);
/* The counter a memory wait's target keeps: a node's, or (from n_nodes up) a copy's. */
uint32_t *ho_rt_wait_count(struct ho_rt *rt, uint32_t target);
void ho_rt_release(struct ho_rt *rt, size_t src);

/* copies.c: under the lock unless said */
void ho_rt_queue_copies(struct ho_rt *rt, int32_t t);
/* The first queued copy into dv whose bytes are free, taken; UINT32_MAX: none. */
uint32_t ho_rt_take_copy(struct ho_rt *rt, struct ho_rt_dev *dv);
/* Make copy t into dv, taken above, and wait for it (the lock released meanwhile). */
void ho_rt_copy(struct ho_rt *rt, struct ho_rt_dev *dv, uint32_t t);
/*
 * Control flow node id on device d, which keeps its own memory, runs on its
 * host pages: its inputs fetched there before (to_host), its outputs put back after.
 */
int ho_rt_host_side(struct ho_rt *rt, uint32_t d, uint32_t id, bool to_host, struct ho_error *err);
/*
 * Before a run: the graph's inputs whose home is a device that keeps its own
 * memory (one running a graph alone), written there from their host pages.
 */
int ho_rt_put_inputs(struct ho_rt *rt, struct ho_error *err);
/*
 * After a run: outputs made on a device that keeps its own memory, read
 * into its host pages where no copy to the host's memory was planned (an
 * output bound to outside memory, whose frame is those pages, and every
 * output where the host itself keeps its own memory).
 */
int ho_rt_fetch_outputs(struct ho_rt *rt, struct ho_error *err);
/* The block of dv's that holds host address p, and p's offset in it; NULL: none. */
struct ho_dev_block *ho_rt_block_at(const struct ho_rt_dev *dv, const void *p, uint64_t *off);
/*
 * len bytes from src, as device s's pages stand for them, to dst in device
 * d's: through the backend of an end that keeps its own memory (the host
 * pages of dst between them where both do).
 */
int ho_rt_copy_between(struct ho_rt *rt, uint32_t s, const void *src, uint32_t d, void *dst,
		       size_t len, struct ho_error *err);
/* A device's copy thread (unlocked). */
void *ho_rt_copier(void *arg);
int32_t ho_rt_root(const struct ho_rt *rt, int32_t t);

/* control.c: If, Loop and Scan, each subgraph a plan of its own on the host's backend. */
struct ho_control;
bool ho_rt_is_control(const char *op_type);
/* mem: per tensor id, its host address; threads: the subplans' (0: the backend's choice). */
int ho_rt_control_prepare(const struct ho_graph *g, const struct ho_node *n,
			  const struct ho_mem *mem, int threads, struct ho_control **out,
			  struct ho_error *err);
int ho_rt_control_run(struct ho_control *cf, struct ho_error *err);
void ho_rt_control_free(struct ho_control *cf);

/* plan.c: the blocks a device's backend wrapped, unwrapped. */
void ho_rt_blocks_free(struct ho_rt_dev *dv);

/* external.c: tensors in outside memory. */
/* After homes are known, before the memory plan: which tensors, checked. */
int ho_rt_ext_plan(struct ho_rt *rt, const struct ho_rt_opts *o, struct ho_error *err);
/* After the regions: each one's own pages, where its home's kernels will point. */
int ho_rt_ext_alloc(struct ho_rt *rt, struct ho_error *err);
void ho_rt_ext_free(struct ho_rt *rt);
/* The pool buffer, and the offset in it, that hold address p of device d: for a copy. */
const struct ho_pool_buf *ho_rt_buf_of(const struct ho_rt *rt, uint32_t d, const void *p,
				       size_t *off);
/* Around a run: CPU access to the bound dma-bufs begins (start) and ends. */
void ho_rt_ext_sync(struct ho_rt *rt, bool start);

#endif
