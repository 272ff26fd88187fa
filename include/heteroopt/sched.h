/* SPDX-License-Identifier: MIT */
/*
 * HeteroOpt scheduler: the scheduling problem, the event simulator,
 * baselines (single device, greedy, HEFT, PEFT) and NSGA-II, over a box and
 * its profile (box.h).
 *
 * Ownership: a struct ho_box and a struct ho_problem own all their arrays;
 * free them with ho_box_free() / ho_problem_free().  A struct ho_sim is a
 * reusable workspace: ho_sim_eval() allocates nothing, so the search can call
 * it millions of times.  Errors: -errno plus a struct ho_error (graph.h).
 */
#ifndef HETEROOPT_SCHED_H
#define HETEROOPT_SCHED_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "heteroopt/box.h"
#include "heteroopt/fingerprint.h"
#include "heteroopt/graph.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the scheduling problem (user/scheduler/problem.c) ---- */

/*
 * A DAG of n tasks on d devices.  Dependencies are data items: item k is
 * produced by task item_prod[k] and read by its consumers; moving it between
 * devices costs either item_comm[k] (classic cost-matrix problems: HEFT test
 * vectors, STG) or a transfer over the box's links.
 */
#define HO_NOT_VIEW UINT32_MAX
#define HO_VIEW_OF_WEIGHT (UINT32_MAX - 1)
#define HO_NOT_FUSED UINT32_MAX

struct ho_problem {
	uint32_t n, d, m;	/* tasks, devices, data items */
	char (*task_name)[256]; /* graph node names, cut at 255 bytes */
	char (*task_op)[HO_NAME_LEN];
	char (*dev_name)[HO_NAME_LEN];
	double *comp;	   /* n*d seconds; INFINITY where the device cannot run it */
	double *energy;	   /* n*d joules of dynamic energy */
	uint64_t *allowed; /* n device masks (pins, support) */
	/* items */
	uint32_t *item_prod;
	double *item_bytes;
	double *item_comm;			     /* m, matrix mode; NULL in box mode */
	uint8_t *item_pinned_out;		     /* 1: a graph output, lives until the end */
	uint32_t *cons_off, *cons;		     /* consumers of each item (CSR, m+1) */
	uint32_t *in_off, *in_items;		     /* items each task reads (CSR, n+1) */
	uint32_t *pred_off, *pred, *succ_off, *succ; /* task adjacency (CSR, n+1) */
	/*
	 * Views (ho_op_is_view): the item task t shows under another shape, or
	 * HO_VIEW_OF_WEIGHT, and the item it makes; HO_NOT_VIEW for other tasks.
	 * Where its device reads the source, a view costs nothing and its item
	 * is the source's bytes.  NULL for cost-matrix problems.
	 */
	uint32_t *view_src, *view_out;
	/*
	 * A Transpose a MatMul reads through (ho_matmul_through) is a view only where
	 * it and that MatMul (view_reader[t]) run on one device of view_devs[t] (whose
	 * kernel reads so: kernel_mem's through); HO_NOT_VIEW for other views.  NULL
	 * without such a Transpose.
	 */
	uint32_t *view_reader;
	uint64_t *view_devs;
	/*
	 * Concat in place (ho_concat_in_place): gather_out[t], the output item of a Concat
	 * whose inputs may be written straight into it; gather_by[k], for the item an
	 * input of it shows (its written source), that Concat.  It runs nothing where all
	 * are written on its device, plain.  HO_NOT_VIEW otherwise; NULL without any.
	 */
	uint32_t *gather_out, *gather_by;
	/*
	 * Fusion (ho_conv_chain, ho_matmul_chain): the task before t in a Conv's
	 * or MatMul's chain, whose output item t reads (fuse_in), and the chain's
	 * head (fuse_head); HO_NOT_FUSED for tasks in no chain.  On the device of
	 * the task before it, if that one is the head or fused itself, t runs
	 * inside the head's kernel, and fuse_in is never written.  NULL
	 * without chains.  fused_comp[t * d + k]: what t adds to the head's
	 * kernel on device k, in s (its work per element, where the head's own
	 * time was not measured with it); NULL: nothing.  fuse_res[t]: for a
	 * residual Add (ho_conv_residual), the item the kernel adds into, which
	 * must be made and read on that device alone (else t runs apart).
	 */
	uint32_t *fuse_prev, *fuse_in, *fuse_head, *fuse_res;
	/* fuse_devs[t]: the devices on which t folds so (whose backend takes the fused
	 * kernel; a MatMul's Transpose: where its kernel writes through it, kernel_mem's
	 * through); NULL: any device */
	uint64_t *fuse_devs;
	double *fused_comp;
	/* weights resident on each device that runs a consumer */
	uint32_t n_weights;
	double *weight_bytes;
	uint32_t *wcons_off, *wcons;
	/* per wcons entry: the devices on which that consumer's kernel holds the weight in its
	 * own layout (kernel_mem's taken), so that the device holds no other copy for it;
	 * NULL: none */
	uint64_t *wcons_taken;
	/* t * d: the memory task t's kernel has of its own on device j (of a device's
	 * scratch, the largest counts: its kernels share one workspace); NULL: none */
	struct ho_kernel_memory *kernel_mem;
	/* t * d: the group of kernels sharing the copy of one weight in one layout
	 * (kernel_mem's packed_sig), held once per device; NULL: none */
	uint32_t *packed_group, n_packed_groups;
	/* box mode */
	const struct ho_box *box;
	uint32_t n_links;
	double *link_lat, *link_bw, *link_epb;
	int32_t *route;	     /* d*d*2 link ids per (src,dst): hop 1, hop 2 (-1 none) */
	double *route_fixed; /* d*d: latency + fixed cost of all hops; in place: the hand-off */
	/* d*d: sum over hops of 1 / bandwidth (s per byte); in place: the hand-off's,
	   reading a tensor the other device just wrote */
	double *route_inv_bw;
	uint64_t *in_place; /* d masks: the devices whose memory device j reads in place */
	double small_transfer;
	bool contention;    /* a link carries one transfer at a time */
	bool handoff;	    /* some in-place pair has a hand-off latency (route_fixed) */
	double *capacity;   /* d usable bytes (capacity * safety); 0 = unlimited */
	double *idle_power; /* d */
	int default_device; /* reference for normalisation (the host) */
	/*
	 * Devices that share cores (box alternative_to): exclusive[j], those a plan
	 * using j must leave empty (a violation otherwise); whole, the devices
	 * that are others' cores as one, which the list heuristics leave to their
	 * "alone" baseline.  NULL and 0 where the box has none.
	 */
	uint64_t *exclusive;
	uint64_t whole;
	uint32_t *topo;	    /* n tasks in a topological order */
	uint64_t *task_sig; /* n structural signatures (op, shapes, weights); NULL if unknown */
	/*
	 * Interference (a profile's): work of class c (0 memory-bound, 1
	 * compute-bound) on device i takes slowdown[(c * d + i) * d + j] times
	 * as long while device j runs; task t's share of compute-bound work is
	 * task_compute[t] (0 to 1), the rest memory-bound.  NULL: none.
	 */
	double *slowdown;
	double *task_compute;
	/*
	 * Layouts (the executor's rule, user/scheduler/layouts.c): the devices
	 * that keep 4-D activations channels-last; task_layout[t * d + j], the
	 * HO_LAYOUT_* class of t's kernel on device j; task_out[t], the item t
	 * writes (HO_NO_ITEM: none); item_layout[k], HO_ITEM_*; in_tied[e],
	 * whether input edge e must share its task's output layout (a
	 * HO_LAYOUT_SAME kernel's).  relayout[k * d + j]: seconds channels-last
	 * device j takes to turn item k to the other layout (0: unmeasured);
	 * relayout_alone[t * d + j], what t pays so with every task on j, as
	 * the probe measured it.  relayout NULL: none of it.  item_nhwc[k]: item k
	 * channels-last under every plan, where the layouts do not depend on the plan
	 * (every device channels-last alike, relayout NULL); NULL: none is.
	 */
	uint64_t channels_last;
	uint8_t *task_layout, *item_layout, *in_tied, *item_nhwc;
	uint32_t *task_out;
	double *relayout, *relayout_alone;
	/*
	 * Precisions (ho_problem_set_precisions): n_prec of them, named as the runtime names
	 * them, the first the graph's float32.  prec_comp[(t * d + j) * n_prec + q]: the
	 * seconds t takes on device j computing in q; 0 where j's kernel for t has no q (it
	 * then computes float32).  prec_error[t * n_prec + q]: the error the model's outputs
	 * show with t alone in q, measured (its sensitivity); a plan's error is estimated as
	 * their sum.  n_prec 0 or 1, NULLs: float32 alone.
	 */
	uint32_t n_prec;
	char (*prec_name)[16];
	double *prec_comp, *prec_error;
	/* (t * n_prec + q) * 2: the input range t's kernel quantizes to in q; NaN: none */
	float *prec_range;
};
#define HO_NO_ITEM UINT32_MAX
#define HO_ITEM_4D 0x1u /* a 4-D float tensor */
#define HO_ITEM_MAY_NHWC                                                                           \
	0x2u			 /* an activation (no graph input or output) kept channels-last    \
				  * where its writer and readers allow */
#define HO_ITEM_LAYOUT_FREE 0x4u /* its two layouts are the same bytes (ho_shape_layout_free) */

/* What the runtime answers of a box's backends for one graph (ho_rt_box_takes,
 * ho_rt_box_layouts); NULL members: not asked. */
/* The memory a node's kernel has of its own on a device, beyond the tensors it reads and
 * writes. */
struct ho_kernel_memory {
	uint64_t held;	  /* kept while the plan lives: weights in the kernel's own layout */
	uint64_t scratch; /* needed while it runs, from a workspace the device's kernels share */
	uint32_t taken;	  /* its inputs (bit k: input k) it holds in its layout alone: weights
			   * the device need not hold as well (ho_backend_ops.takes_over) */
	/* the copy of those weights in its layout, apart from held: one per device for all
	 * the kernels there that read one weight in one layout (packed_sig says which) */
	uint64_t packed, packed_sig;
	uint32_t through; /* its inputs (bit k) it reads through the strides of the Transpose
			   * that makes them, on its device (ho_backend_ops.folds_transposes) */
};

struct ho_backend_view {
	const uint64_t *takes;	/* per node: the devices whose backend takes it */
	const uint8_t *layout;	/* node * devices: the HO_LAYOUT_* of its kernel there */
	uint64_t channels_last; /* the devices that keep activations channels-last */
	const struct ho_kernel_memory *memory; /* node * devices (NULL: none known) */
	/* per node that is a link of a chain (ho_chain_links): the devices whose backend
	 * folds it into its head's kernel (NULL: every device) */
	const uint64_t *folds;
};

void ho_problem_free(struct ho_problem *p);
/*
 * Precision as a decision (user/scheduler/precision.c): names[0..n_prec), the first
 * float32; speedup[(t * d + j) * n_prec + q], how many times faster t runs on j in q
 * (0: j has no q for t); error[t * n_prec + q], t's sensitivity in q; range (NULL, or two
 * floats at (t * n_prec + q) * 2): the input range t's kernel quantizes to in q (int8's
 * calibration), which a plan carries to the runtime.  Copied.
 */
int ho_problem_set_precisions(struct ho_problem *p, uint32_t n_prec, const char *const *names,
			      const double *speedup, const double *error, const float *range,
			      struct ho_error *err);
/* The precision t computes in on device j where its gene asks q: q where j offers it,
 * else float32 (0). */
static inline uint32_t ho_task_precision(const struct ho_problem *p, const uint8_t *prec,
					 uint32_t t, uint32_t j)
{
	uint32_t q = prec && p->n_prec > 1 ? prec[t] : 0;

	return q && p->prec_comp[((size_t)t * p->d + j) * p->n_prec + q] > 0 ? q : 0;
}
/* Seconds t takes on j computing as its gene asks (p->comp's where float32). */
static inline double ho_task_comp(const struct ho_problem *p, const uint8_t *prec, uint32_t t,
				  uint32_t j)
{
	uint32_t q = ho_task_precision(p, prec, t, j);

	return q ? p->prec_comp[((size_t)t * p->d + j) * p->n_prec + q]
		 : p->comp[(size_t)t * p->d + j];
}

/* Build from a graph with inferred shapes, a box and an optional profile. */
struct ho_profile;
int ho_problem_from_graph(const struct ho_graph *g, const struct ho_box *box,
			  const struct ho_profile *prof, struct ho_problem **out,
			  struct ho_error *err);
/* The same with the box's backends' answers (NULL: none): a node is never placed where its
 * backend does not take it, and tensors change layout where the backends say. */
int ho_problem_from_graph_on(const struct ho_graph *g, const struct ho_box *box,
			     const struct ho_profile *prof, const struct ho_backend_view *bv,
			     struct ho_problem **out, struct ho_error *err);
/* Classic inputs: HEFT-paper CSV pair, STG file, JSON DAG. */
int ho_problem_from_csv(const char *comp_csv, const char *edges_csv, struct ho_problem **out,
			struct ho_error *err);
int ho_problem_from_stg(const char *path, uint32_t n_procs, struct ho_problem **out,
			struct ho_error *err);
int ho_problem_from_dag_json(const char *path, struct ho_problem **out, struct ho_error *err);
/* Pin tasks whose op type or name equals key to one device. */
int ho_problem_pin(struct ho_problem *p, const char *key, const char *device, struct ho_error *err);

/* ---- cost model (user/scheduler/cost.c) ---- */

/* The launch overhead the cost model adds to every node on device dev, s. */
double ho_cost_launch(const struct ho_box *box, int dev, const struct ho_profile *prof);
/* Seconds for node on device (INFINITY if unsupported). */
double ho_cost_node(const struct ho_graph *g, const struct ho_node *nd, const struct ho_box *box,
		    int dev, const struct ho_profile *prof);

/* ---- simulator (user/scheduler/sim.c) ---- */

enum ho_objective {
	HO_OBJ_LATENCY = 0,    /* makespan, s */
	HO_OBJ_MEMORY = 1,     /* max over devices of peak / usable capacity */
	HO_OBJ_ENERGY = 2,     /* J */
	HO_OBJ_THROUGHPUT = 3, /* steady-state period, s (1 / inferences per s) */
	HO_OBJ_BALANCE = 4,    /* max device busy time / mean busy time */
	HO_OBJ_ERROR = 5,      /* the outputs' error estimated from the sensitivities */
	HO_OBJ_COUNT
};

struct ho_eval {
	double obj[HO_OBJ_COUNT];
	double violation; /* 0 = feasible; sum of normalised excesses */
	double peak_mem[HO_MAX_DEVICES];
	double kernel_mem[HO_MAX_DEVICES]; /* of peak_mem, the kernels' own (ho_kernel_memory) */
	double busy[HO_MAX_DEVICES];
	uint32_t n_transfers;
	double bytes_moved;
	uint32_t n_infeasible;	/* tasks on a device that cannot run them */
	uint32_t peak_is_bound; /* 1: peak_mem holds an upper bound (lazy memory, feasible) */
};

struct ho_transfer {
	uint32_t item, task; /* the consumer that first needed it; UINT32_MAX: none, a graph
			      * output fetched to the host */
	int src, dst, link;  /* one record per hop */
	double start, end;
};

/* How a task ran in a timeline: its own kernel, a view read in place, inside its chain's head. */
#define HO_TASK_RAN 0
#define HO_TASK_VIEW 1
#define HO_TASK_FUSED 2
#define HO_TASK_GATHERED 3 /* a Concat whose inputs were written into its output */

struct ho_timeline {
	double *start, *end; /* n */
	uint8_t *how;	     /* n: HO_TASK_* */
	struct ho_transfer *xfer;
	uint32_t n_xfer, cap_xfer;
};

struct ho_constraints {
	double max_latency;		/* 0 = none */
	double max_mem[HO_MAX_DEVICES]; /* bytes, 0 = none */
	double max_error;		/* the accuracy budget (HO_OBJ_ERROR), 0 = none */
};

struct ho_sim;
struct ho_sim *ho_sim_new(const struct ho_problem *p);
void ho_sim_free(struct ho_sim *s);
/* The precision genes the next evaluations read (n, borrowed; NULL: float32 alone). */
void ho_sim_precision(struct ho_sim *s, const uint8_t *prec);
/*
 * List-schedule tasks in the order given (a topological order) on the
 * devices given; tl may be NULL.  Returns 0, or -EINVAL if order is not
 * topological.
 */
int ho_sim_eval(struct ho_sim *s, const uint16_t *assign, const uint32_t *order,
		const struct ho_constraints *c, struct ho_eval *ev, struct ho_timeline *tl);
/*
 * After ho_sim_eval with a timeline (memory then exact): device dev's bytes
 * in use over time, weights included, as steps: from t[i] on, bytes[i].  Fills
 * up to max points and returns how many there are (max 0: count them).
 */
int ho_sim_memory_curve(const struct ho_sim *s, uint32_t dev, double *t, double *bytes,
			uint32_t max);
/*
 * Evaluate while choosing devices: each task, in order, goes to the device
 * where it would finish first given the copies and device gaps the earlier
 * tasks left (contention-aware EFT).  assign is read as the tie-breaker and
 * overwritten with the choice.
 */
int ho_sim_decode(struct ho_sim *s, uint16_t *assign, const uint32_t *order,
		  const struct ho_constraints *c, struct ho_eval *ev, struct ho_timeline *tl);
/* Which tasks ho_sim_decode_window re-chooses, and by what. */
struct ho_decode {
	uint32_t from, to; /* order positions [from, to) */
	/*
	 * 0: earliest finish.  w > 0: finish + w * the task's energy there / the
	 * box's idle power (the time the idle devices take to burn as much).
	 */
	double energy_weight;
};
int ho_sim_decode_window(struct ho_sim *s, uint16_t *assign, const uint32_t *order,
			 const struct ho_decode *how, const struct ho_constraints *c,
			 struct ho_eval *ev, struct ho_timeline *tl);
/*
 * Lazy memory: compute the exact peak sweep only when an upper bound (every
 * buffer at once) exceeds a capacity, or a per-device limit or a timeline is
 * asked for; otherwise peak_mem holds the bound and peak_is_bound is set.
 * The search uses it when memory is not an objective.
 */
void ho_sim_lazy_memory(struct ho_sim *s, bool on);
struct ho_timeline *ho_timeline_new(const struct ho_problem *p);
void ho_timeline_free(struct ho_timeline *tl);

/* ---- baselines (user/scheduler/{single,greedy,heft,peft}.c) ---- */

struct ho_plan {
	uint16_t *assign; /* n */
	uint32_t *order;  /* n, topological */
	double makespan;  /* as the algorithm itself computed it (HEFT/PEFT) */
};

/*
 * A planner: one heuristic that makes a plan (user/scheduler/planners.c lists
 * them).  per_device planners make one plan per device (dev = 0..d-1); the
 * others ignore dev.  label names a plan in reports ("%s" takes the device).
 */
struct ho_planner {
	const char *name, *label, *description;
	bool per_device;
	int (*plan)(const struct ho_problem *p, int dev, struct ho_plan *out);
};
/* The planners in the order baselines are reported; NULL ends the list. */
extern const struct ho_planner *const ho_planners[];
/* How many plans the planners make for p (each device alone counts d). */
uint32_t ho_planner_plans(const struct ho_problem *p);

struct ho_plan *ho_plan_new(uint32_t n);
void ho_plan_free(struct ho_plan *pl);
int ho_plan_single(const struct ho_problem *p, int dev, struct ho_plan *out);
int ho_plan_greedy(const struct ho_problem *p, struct ho_plan *out);
/* rank_u: optional n-array receiving the upward ranks. */
int ho_plan_heft(const struct ho_problem *p, struct ho_plan *out, double *rank_u);
/* oct: optional n*d array receiving the optimistic cost table. */
int ho_plan_peft(const struct ho_problem *p, struct ho_plan *out, double *oct);

/* ---- NSGA-II (user/scheduler/nsga2.c) ---- */

/* Where a search stands, for a progress line. */
struct ho_search_progress {
	uint32_t generation, generations; /* generations run, and the most it will run */
	uint64_t evaluations;
	double hypervolume;  /* of the first front so far */
	uint32_t front_size; /* its feasible members */
	double elapsed_s;
	uint32_t shared_blocks; /* tasks that follow an identical earlier block (share_blocks) */
	bool done;
};

struct ho_search_opts {
	uint32_t population;  /* default 128 */
	uint32_t generations; /* default 200 */
	uint64_t seed;
	uint32_t threads;	    /* 0 = one per core */
	uint32_t objectives;	    /* bitmask of 1 << enum ho_objective */
	double crossover, mutation; /* probabilities */
	uint32_t stall_window; /* stop when hypervolume gains < 1e-4 for this many generations; 0 =
				  never */
	bool coarsen_chains;   /* one device gene per single-producer/single-consumer chain */
	bool share_blocks;     /* one device gene per position in repeated identical blocks */
	struct ho_constraints constraints;
	/* Called every 10 generations and once at the end (done); NULL: silent. */
	void (*progress)(const struct ho_search_progress *sp, void *arg);
	void *progress_arg;
	/* Raised (Ctrl-C): the search ends after the generation it is in, with the front so
	 * far (ho_front.interrupted). */
	volatile sig_atomic_t *stop;
	const struct ho_plan *const *seeds; /* extra individuals (baselines) */
	uint32_t n_seeds;
};

struct ho_solution {
	uint16_t *assign;
	uint32_t *order;
	uint8_t *prec; /* n precision genes (ho_task_precision); NULL: float32 alone */
	struct ho_eval ev;
};

struct ho_front {
	uint32_t n;
	struct ho_solution *sol;
	uint32_t generations_run;
	double hypervolume;
	uint64_t evaluations;
	bool interrupted; /* stopped by ho_search_opts.stop before its end */
};

void ho_search_defaults(struct ho_search_opts *o);
int ho_search(const struct ho_problem *p, const struct ho_search_opts *o, struct ho_front **out,
	      struct ho_error *err);
void ho_front_free(struct ho_front *f);
/*
 * Hypervolume (user/scheduler/hypervolume.c): the share of the box [lo, ref]
 * that the points dominate, exact up to three objectives, seeded Monte Carlo
 * beyond.  pts[i][obj[m]] is point i's m-th objective; lo and ref have k
 * entries.  ho_hypervolume takes lo and ref indexed by enum ho_objective.
 */
int ho_hypervolume_points(const double *const *pts, uint32_t n, const int *obj, uint32_t k,
			  const double *lo, const double *ref, double *out);
int ho_hypervolume(const struct ho_front *f, uint32_t objectives, const double *lo,
		   const double *ref, double *out);

/* ---- selection (user/scheduler/select.c) ---- */

enum ho_pick { HO_PICK_WEIGHTED, HO_PICK_TOPSIS, HO_PICK_CONSTRAINT };
/* weights: HO_OBJ_COUNT entries; base: objectives of the reference schedule. */
int ho_pick(const struct ho_front *f, enum ho_pick how, uint32_t objectives, const double *weights,
	    const double *base);

/* ---- explanations and output (user/scheduler/{explain,schedule_json}.c) ---- */

/* One sentence on why task t runs on assign[t] (in the precision prec gives it, NULL:
 * float32); tl is that schedule's timeline. */
void ho_explain(const struct ho_problem *p, const uint16_t *assign, const uint8_t *prec,
		const struct ho_eval *ev, const struct ho_timeline *tl, uint32_t t, char *buf,
		size_t n);

struct ho_baseline {
	char name[48];
	const struct ho_plan *plan;
	struct ho_eval ev;
};

struct ho_schedule_doc {
	const struct ho_problem *p;
	const struct ho_front *front;
	int picked;
	const char *pick_method;
	uint32_t objectives;
	const struct ho_search_opts *search;
	const struct ho_baseline *baselines;
	uint32_t n_baselines;
	const char *model, *box, *profile; /* paths (profile may be NULL) */
	const struct ho_profile *prof;	   /* its machine is recorded; NULL: none */
	const struct ho_graph *graph;	   /* its input shapes are recorded; NULL: none */
	/* What the loader checks the files against; 0: ho_schedule_write reads the file at
	 * model, box or profile (none there: 0 is written, and nothing can be checked). */
	uint64_t fp_model, fp_box, fp_profile, fp_settings;
	/* Precisions: the metric the errors are in, the budget, and the pick's error as measured
	 * on real inputs (NaN: not measured); metric NULL: none of it. */
	const char *metric;
	double budget, measured;
};

const char *ho_objective_name(int obj);
int ho_schedule_write(const char *path, const struct ho_schedule_doc *doc, struct ho_error *err);

#ifdef __cplusplus
}
#endif
#endif
