/* SPDX-License-Identifier: MIT */
/*
 * The runtime: executes a model's graph with real kernels, on one CPU device
 * or as a schedule from `heteroopt schedule` places it over a box's devices.
 *
 * A plan is made once: every device's tensors in one region of the memory
 * pool on the device's NUMA node (ump.ko when loaded, else the user-space
 * fallback), every oneDNN primitive created, conv weights reordered.  A run
 * then has one worker thread per device taking its nodes in the schedule's
 * priority order as their inputs become ready; a tensor needed on a device
 * whose memory is not its producer's is copied there by a pool copy before
 * its first consumer runs, and devices the box links with shared_memory
 * (CPU devices of one host) read each other's tensors in place, as the
 * schedule assumed: the handle moves, no bytes do.
 * Each device runs on the backend its box names (`opencl`: an OpenCL device
 * through the ICD loader), else on its kind's: `cpu` (oneDNN) for a cpu, and
 * for any other kind `emu`, the cpu's kernels in a region of its own,
 * optionally paced to the schedule's predicted node times: an accelerator
 * stand-in for tests.
 *
 * Owns: every buffer of the plan, its primitives, engines and threads; the
 * graph stays the caller's and must outlive the plan.  No global state;
 * calls return 0 or -errno and describe the problem in struct ho_error.
 */
#ifndef HETEROOPT_RUNTIME_H
#define HETEROOPT_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#include <heteroopt/graph.h>

#ifdef __cplusplus
extern "C" {
#endif

struct ho_rt;

#define HO_RT_MAX_DEVICES 16
#define HO_RT_CORE_WORDS 4 /* CPU ids 0..255 */
/* The most copies into one device its copy thread keeps in flight on the pool's queue. */
#define HO_RT_COPY_DEPTH 64

struct ho_rt_device {
	char name[64];
	char backend[32];		  /* the backend it runs on, by name ("cpu", "emu",
					   * "opencl", "cuda"); "": the host's */
	char platform[64], device[64];	  /* which one the backend opens, where it has several
					   * (OpenCL: substrings of the platform's and the
					   * device's names; CUDA: of the GPU's); "": its first */
	char memory[8];			  /* "host": its tensors in host memory, addressed in
					   * place; "device": in its own; "": as it offers */
	int threads;			  /* its kernels' threads; 0 = the backend's choice */
	int numa_node;			  /* where its region lives; -1 = anywhere */
	uint64_t cores[HO_RT_CORE_WORDS]; /* CPU ids its worker is pinned to; none: any */
	char numa_from[32];		  /* how numa_node was found: box, cores, pci ... */
	char p2p_pci[16];  /* its region in this PCI device's P2P memory; "": host memory */
	char precision[8]; /* its kernels' arithmetic (ho_rt_precisions); "": float32 */
};

/* The precisions a device's kernels may compute in, the first the graph's own (float32):
 * "bf16" rounds a convolution's inputs and weights to bfloat16 on a CPU that has it
 * natively (AVX512-BF16, AMX), accumulating and writing float32; "int8" quantizes them
 * (the input by its calibrated range, ho_rt_opts.node_range; the weights per output
 * channel) on a CPU with VNNI or AMX, int32 sums scaled back to float32.
 * NULL-terminated. */
extern const char *const ho_rt_precisions[];

/*
 * The backend a box device of this kind runs on: the one it names (named, ""
 * none), else its kind's: the host's for a cpu, any other kind emulated.
 * NULL: it names one that is not built in.
 */
const char *ho_rt_backend_for(const char *kind, const char *named);

/* A device a backend finds on this machine, as a box names it ("backend" key). */
struct ho_rt_found {
	char backend[32], platform[64], device[64];
	char kind[16];	 /* the box's kind for it: cpu, gpu, fpga */
	bool cpu_cores;	 /* it computes on this machine's CPU cores (PoCL) */
	bool own_memory; /* it keeps its own memory (a discrete GPU): tensors cross by copies */
};
/* The devices the backends find here beyond the host's own cores, up to cap: how many. */
int ho_rt_find_devices(struct ho_rt_found *out, int cap);
/* Whether backend (by name) has a kernel for op_type: a box device's supported_ops. */
bool ho_rt_backend_runs(const char *backend, const char *op_type);

struct ho_box;
/*
 * Box device d as the runtime opens it: its backend (by name; its kind's where
 * it names none), which one, its threads, cores, NUMA node (the box's, else
 * its cores' or its PCI device's) and memory.  -ENOENT: it names a backend
 * that is not built in (out->backend keeps the name).
 */
int ho_rt_device_of(const struct ho_box *box, int d, struct ho_rt_device *out);

/* Where each node runs and in what priority: a schedule, loaded by ho_rt_schedule_load(). */
struct ho_rt_placement {
	uint32_t n_devices;
	struct ho_rt_device dev[HO_RT_MAX_DEVICES];
	int host;			       /* holds graph inputs and outputs */
	uint64_t in_place[HO_RT_MAX_DEVICES];  /* per device: devices whose memory it reads */
	uint64_t exclusive[HO_RT_MAX_DEVICES]; /* per device: those sharing its cores (box
						* alternative_to): a schedule uses one side */
	int32_t *node_device; /* per graph node; -1: not a task (folded, Constant) */
	uint32_t *node_prio;  /* per graph node: its place in the schedule's order */
	/* per graph node: the precision the schedule gave it, an index into ho_rt_precisions
	 * (0: its device's), and two floats, the input range its int8 kernel quantizes to
	 * (NaN: none); NULL: the schedule gave none */
	uint8_t *node_precision;
	float *node_range;
	double *pred_start; /* per graph node, seconds: the schedule's timeline */
	double *pred_end;
	double *pred_copy_start; /* per tensor x device: when the schedule starts its copy, or -1 */
	double *pred_copy_end;	 /* ... and when it is done reading the source (its first hop) */
	double pred_makespan;	 /* s */
	uint32_t pred_transfers; /* copies the schedule makes (in-place reads are none) */
	uint32_t pred_fused;	 /* nodes the schedule runs inside the kernel before them */
	uint32_t pred_gathered;	 /* Concats whose inputs it writes into their output */
	double pred_bytes;
	double pred_peak[HO_RT_MAX_DEVICES];	   /* bytes, the simulator's peak per device */
	double pred_kernel_mem[HO_RT_MAX_DEVICES]; /* of it, the kernels' own (not the region's) */
	int pick;
	char box[256];
};

struct ho_rt_schedule_opts {
	int pick;		/* front member to run; -1: the schedule's own pick */
	const char *box_path;	/* NULL: the box the schedule names, from its folder */
	const char *model_path; /* the file g was read from, checked against the schedule's
				   model fingerprint; NULL: not checked */
	const char *base_dir;	/* ho_rt_schedule_parse: where the schedule's relative paths
				   start; NULL: the current folder */
};

/*
 * Read a schedule JSON made for g (inputs bound, shapes inferred).  Fails
 * with a message when it is for another model (other nodes, another model
 * file's fingerprint), other input shapes, or another box (other devices, a
 * box file with another fingerprint).  o may be NULL: the defaults above.
 */
int ho_rt_schedule_load(const char *path, const struct ho_rt_schedule_opts *o,
			const struct ho_graph *g, struct ho_rt_placement **out,
			struct ho_error *err);
/* The same for a schedule held in memory (len bytes of JSON text). */
int ho_rt_schedule_parse(const char *text, size_t len, const struct ho_rt_schedule_opts *o,
			 const struct ho_graph *g, struct ho_rt_placement **out,
			 struct ho_error *err);
void ho_rt_placement_free(struct ho_rt_placement *pl);

struct ho_rt_opts {
	int threads;	       /* single-device plans: oneDNN threads; 0 = OpenMP's choice */
	const char *precision; /* single-device plans: its kernels' (ho_rt_precisions); NULL:
				* float32 */
	/* per graph node: the precision asked of its kernel, over the device's (NULL array or
	 * entry: the device's); a kernel without it computes float32 and the report says so */
	const char *const *node_precision;
	/* per graph node, two floats: the range [lo, hi] its first input takes, calibrated,
	 * which an int8 kernel quantizes it to; NaN (or a NULL array): not calibrated, and a
	 * kernel asked int8 then computes float32 and observes the range (ho_rt_observed) */
	const float *node_range;
	const struct ho_rt_placement *placement; /* NULL: every node on one CPU device */
	int pace; /* emu nodes start no earlier and last no shorter than predicted */
	const char *inject_failure; /* tests: the node of this name fails in the next run */
	/* For comparison, what the plan does by default undone: */
	int plain_layout; /* every tensor row-major: no channels-last between kernels */
	int no_fusion;	  /* every node its own kernel: no batch norm, bias or post-op folded */
	int copy_ioctl;	  /* with ump.ko: copies by UMP_IOC_SUBMIT and WAIT, not io_uring */
	/* Graph inputs and outputs that ho_rt_bind_fd may place in outside memory: each
	 * gets pages of its own, apart from the region the memory plan packs. */
	const char *const *external;
	uint32_t n_external;
	/* --bound: the most a tensor whose extents a run decides may hold; a run that
	 * makes it larger fails, naming it (tail.c) */
	const struct ho_extent_bound *bounds;
	uint32_t n_bounds;
};

/* What the last run did, against what the schedule predicted. */
struct ho_rt_report {
	double makespan_s;
	uint32_t transfers; /* pool copies made */
	double bytes_moved;
	uint32_t zero_copy; /* cross-device edges served in place */
	uint32_t fused;	    /* batch norm, bias and element-wise nodes folded into a Conv/MatMul */
	uint32_t through;   /* Transposes a MatMul reads through: each output its input's bytes */
	uint32_t gathered;  /* Concats whose inputs were written straight into their output */
	/* per node: the arithmetic its kernel computes in where not the graph's float32
	 * ("bf16"), else NULL; and how many so */
	const char *const *node_precision;
	uint32_t reduced;
	uint32_t memory_waits; /* node pairs ordered so that one reuses the other's bytes */
	/* Nodes whose shapes only the run decides (a NonZero's output and all after it):
	 * planned once the others have run, as the values came (user/runtime/tail.c). */
	uint32_t deferred;
	uint32_t deferred_plans; /* plans made for them so far: one per new set of those
				  * values (the same values again reuse the last) */
	const double *start_s;	 /* per graph node, from the run's start; < 0: did not run */
	const double *end_s;
	/* Per tensor x device (index t * n_devices + d): when its copy into d was taken and
	 * when it was done, from the run's start; < 0: no copy there this run. */
	const double *copy_start_s, *copy_end_s;
	uint32_t n_devices;
	double busy_s[HO_RT_MAX_DEVICES];
	const char *backend[HO_RT_MAX_DEVICES];	     /* each device's backend, by name */
	const char *backend_desc[HO_RT_MAX_DEVICES]; /* ... and in words: "cpu (oneDNN)" */
	uint32_t emulated;			     /* bit d: device d was emulated */
	uint32_t own_memory; /* bit d: device d keeps its own memory (copies go through its
			      * backend: uploads and downloads) */
	uint32_t nodes_run[HO_RT_MAX_DEVICES];
	const char *pool;      /* which memory pool and why */
	const char *copy_path; /* "io_uring", "ioctl" or "copy thread" */
	uint32_t chains;       /* pool chains submitted: the copies and in-region moves */
	double chain_bytes;
	/* The run's chains and bytes as ump.ko counted them (UMP_IOC_STATS
	 * before and after, every file's); -1: no module */
	int64_t module_chains, module_bytes;
	int64_t module_staged; /* of those bytes, bounced through host memory (no P2P route) */
	/* The memory plan: each device's region, and what it would be without reuse. */
	uint64_t region_bytes[HO_RT_MAX_DEVICES];
	uint64_t unshared_bytes[HO_RT_MAX_DEVICES];
	/* Beyond it, each device's kernels' own memory: what they keep (weights in their
	 * layout) and the workspace they share while each runs (the largest's need). */
	uint64_t kernel_held_bytes[HO_RT_MAX_DEVICES], workspace_bytes[HO_RT_MAX_DEVICES];
	int cpu_seen[HO_RT_MAX_DEVICES]; /* the CPU a device's first node ran on; -1 none */
	/* The node each device's region is on, asked of the kernel (ho_pool_buf_node). */
	int region_node[HO_RT_MAX_DEVICES];
	/* Inputs read and outputs written where ho_rt_bind_fd put them: no copy in or out. */
	uint32_t bound;
	double bound_bytes;
};

/*
 * Plan g (shapes inferred, inputs bound) for the cpu backend.  Fails naming
 * the first node whose operator, attribute or data type it cannot run.
 */
int ho_rt_new(const struct ho_graph *g, const struct ho_rt_opts *o, struct ho_rt **out,
	      struct ho_error *err);
void ho_rt_free(struct ho_rt *rt);

/*
 * Every node of g (shapes inferred) the cpu backend cannot run, all at once:
 * each kernel is prepared over scratch buffers (nothing runs) and each
 * refusal goes to fn with its one line (node, operator, what is missing).
 * Returns how many were refused, or -errno.
 */
typedef void (*ho_rt_refusal_fn)(const struct ho_node *n, const char *why, void *arg);
int ho_rt_check(const struct ho_graph *g, ho_rt_refusal_fn fn, void *arg, struct ho_error *err);
/*
 * Which nodes of g (shapes inferred) backend (by name) takes as they stand:
 * their op types, attributes, element types and shapes, as its prepare would
 * judge them.  takes[node] for every node (true for nodes that are not
 * tasks); each refusal goes to fn (NULL: none).  A backend with a check()
 * opens no device, so it answers for boxes other than this machine; one
 * without (the host's CPU kernels) prepares each kernel on this CPU, as
 * ho_rt_check does.  Returns how many it refused, or -errno.
 */
int ho_rt_backend_nodes(const char *backend, const struct ho_graph *g, bool *takes,
			ho_rt_refusal_fn fn, void *arg, struct ho_error *err);
/*
 * The same for every device of box, as the scheduler reads it: devices[node]
 * has bit d where box device d's backend takes the node (every bit for a
 * backend not built here).  fn (NULL: none) gets each node no device takes,
 * with a backend's reason.  km (NULL: not asked), at node * n_devices + d: the
 * memory the node's kernel has of its own on device d, where its backend's
 * kernels were prepared here (else zero).
 */
struct ho_kernel_memory; /* heteroopt/sched.h */
int ho_rt_box_takes(const struct ho_box *box, const struct ho_graph *g, uint64_t *devices,
		    struct ho_kernel_memory *km, ho_rt_refusal_fn fn, void *arg,
		    struct ho_error *err);
/*
 * How box's backends treat layouts: layout[node * n_devices + d] (NULL: not
 * asked), the HO_LAYOUT_* class of the node's kernel on device d (plain for a
 * backend not built here).  Returns the devices that keep 4-D activations
 * channels-last between their convolutions (their Conv takes either layout).
 */
uint64_t ho_rt_box_layouts(const struct ho_box *box, const struct ho_graph *g, uint8_t *layout);
/*
 * Which devices of box fold each link of a chain (ho_chain_links) into its head's kernel:
 * folds[node] has bit d where device d's backend takes the fused kernel with that link
 * and those before it (its check; a backend with none, or not built here, takes every
 * chain); every bit for a node that is no link.  A MatMul's Transpose is the kernel's own
 * answer (ho_kernel_memory.through), not asked here.
 */
int ho_rt_box_folds(const struct ho_box *box, const struct ho_graph *g, uint64_t *folds,
		    struct ho_error *err);

/* Copy an input in: float32 data of exactly the bound shape's element count. */
int ho_rt_set_input(struct ho_rt *rt, const char *name, const int64_t *shape, int rank,
		    const float *data, struct ho_error *err);
/* The same for an input of any type: dtype must be the model's.  Strings are pointers to
 * NUL-terminated UTF-8, which must stay valid until the last run that reads them. */
int ho_rt_set_input_data(struct ho_rt *rt, const char *name, int dtype, const int64_t *shape,
			 int rank, const void *data, struct ho_error *err);
/*
 * Run every node once; inputs must all have been set.  The first run of a
 * plan over several devices starts its threads (a worker per device, a copy
 * thread per device that receives copies); they serve every later run and
 * end in ho_rt_free.  Runs of one plan must not overlap.
 */
int ho_rt_run(struct ho_rt *rt, struct ho_error *err);
/*
 * Zero-copy hand-off.  Place tensor name (one of opts.external) in the memory fd holds from
 * offset on: a dma-buf (a udmabuf, a dma-heap's, another process's pool buffer) or a memfd,
 * offset page-aligned, the tensor's bytes rounded up to pages within it.  Every later run
 * reads (an input: it counts as given) or writes (an output) the tensor there, with no copy,
 * until it is bound again; fd -1 gives it its own memory back.  The plan keeps a reference
 * of its own: the caller may close fd.  With ump.ko the pool imports the dma-buf, so copies
 * to and from other devices reach it too; CPU access is bracketed by DMA_BUF_IOCTL_SYNC.
 */
int ho_rt_bind_fd(struct ho_rt *rt, const char *name, int fd, uint64_t offset,
		  struct ho_error *err);
/* A new fd of tensor name's own memory (one of opts.external): a dma-buf with ump.ko, else a
 * memfd, for another process to map. */
int ho_rt_export_fd(struct ho_rt *rt, const char *name, struct ho_error *err);

/* Output i (0..g->n_outputs-1) of the last run: its tensor and its data. */
const float *ho_rt_output(const struct ho_rt *rt, uint32_t i, const struct ho_tensor **t);
/* The same for an output of any type: (*t)->dtype says which. */
const void *ho_rt_output_data(const struct ho_rt *rt, uint32_t i, const struct ho_tensor **t);
const struct ho_rt_report *ho_rt_last_report(const struct ho_rt *rt);
/*
 * The range node's first input took over the runs so far, as its kernel (asked int8, not
 * calibrated) observed it, by rule: "max", lowest to highest; "mse", clipped where the
 * int8 values' squared error (rounding inside, clipping outside) is least; "pNN.NN", at
 * that percentile of |x|.  -ENOENT: none observed; -EINVAL: an unknown rule.
 */
int ho_rt_observed(const struct ho_rt *rt, uint32_t node, const char *rule, float range[2]);
/*
 * How far the run in progress is: nodes finished of those it runs.  Safe from
 * another thread while ho_rt_run runs (a progress line for a long run).
 */
void ho_rt_progress(const struct ho_rt *rt, uint32_t *finished, uint32_t *nodes);

#ifdef __cplusplus
}
#endif
#endif
