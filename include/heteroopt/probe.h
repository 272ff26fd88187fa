/* SPDX-License-Identifier: MIT */
/*
 * The probes (probes/): measure this machine with the runtime's own kernels
 * and pool, and write the profile the scheduler's cost model reads.
 *
 * A probe of a box runs, on each CPU device as the box defines it (its cores
 * and threads): a sweep of kernels per class (convolutions, depthwise,
 * matmuls, element-wise, pooling, normalisation, softmax, reductions, data
 * movement), fitted per class to time = fixed + FLOPs / rate + bytes /
 * bandwidth; memory bandwidth by size and stride; the dispatch overhead per
 * node; pool copies and the hand-off between every pair of devices; the
 * slowdown of each pair running at once; and, for models named, each
 * node's kernel family in place.  Every figure is a median over repeats
 * with outliers dropped; one whose spread stays too wide is flagged.
 *
 * Calls return 0 or -errno with a message in struct ho_error; -EINTR when
 * the stop flag was raised.  No global state.
 */
#ifndef HETEROOPT_PROBE_H
#define HETEROOPT_PROBE_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <heteroopt/graph.h>
#include <heteroopt/sched.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One measured figure (probes/measure.c). */
struct ho_probe_stat {
	double median, min, max; /* seconds, over the samples kept */
	double spread;		 /* (P75 - P25) / median of the samples kept */
	uint32_t kept, dropped;	 /* samples; dropped: outliers beyond 3 MADs */
	uint32_t rounds;	 /* measurements made: more than one when the spread was wide */
	bool flagged;		 /* still wider than allowed after the last round */
};

struct ho_probe_method {
	uint32_t warmup, repeats; /* runs before measuring, and measured */
	uint32_t rounds;	  /* the most measurements when the spread is wide */
	double max_spread;	  /* allowed (P75 - P25) / median */
	double min_seconds;	  /* repeat until the samples take at least this long */
};

/*
 * Time once(arg) (seconds it reports, or < 0 on error: returned as -EIO)
 * as m says.  stop, when set, ends it with -EINTR.
 */
int ho_probe_measure(double (*once)(void *arg), void *arg, const struct ho_probe_method *m,
		     volatile sig_atomic_t *stop, struct ho_probe_stat *out);
/* The median of n samples after dropping those beyond 3 MADs (v is reordered). */
void ho_probe_robust(double *v, uint32_t n, struct ho_probe_stat *out);

/*
 * A class's fitted model (probes/fit.c): time = fixed + flops / rate +
 * bytes / bandwidth, least squares on relative error, every term >= 0.
 */
struct ho_kernel_model {
	double fixed_s, rate, bandwidth; /* s, FLOP/s (0: no term), bytes/s (0: no term) */
	uint32_t block; /* the kernels work on output channels in blocks of this many */
	uint32_t points;
	double fit_error; /* mean absolute relative error over the points */
};
struct ho_fit_point {
	double flops, bytes, seconds;
	double channels;    /* a convolution's output channels; 0: none */
	double known_s;	    /* of seconds, what no term of the model is fitted to */
	double in_channels; /* input channels its kernel blocks too (ho_node_block_in_channels) */
};
/*
 * flops_term: fit a FLOP rate (dense classes), its FLOPs counted over output
 * channels padded to the block (ho_channel_pad) that fits best, or with
 * fewer than five points to block (1: none); else time = fixed + bytes /
 * bandwidth.
 */
int ho_fit_kernel_model(const struct ho_fit_point *pts, uint32_t n, bool flops_term, uint32_t block,
			struct ho_kernel_model *out);
double ho_kernel_model_time(const struct ho_kernel_model *m, double flops, double bytes,
			    double channels);
/*
 * The same, for a class priced at its own bandwidth in the caches and at the
 * probe's streaming rate past them where that is slower
 * (ho_profile_stream_bw over curve, a bandwidth_by_size list; NULL: the
 * plain fit): each point fitted as that prices it.
 */
int ho_fit_class_model(const struct ho_fit_point *pts, uint32_t n, bool flops_term, uint32_t block,
		       const struct json_t *curve, struct ho_kernel_model *out);

/*
 * What a whole run takes beyond its kernels (probes/fit.c): a share of the
 * kernels plus a time per node, least squares on the error relative to
 * each run, both >= 0.  From one run only the share.
 */
struct ho_run_point {
	double run, kernels, beyond; /* s: the run, its kernels summed, what is left */
	double nodes;
};
struct ho_run_model {
	double share, per_node_s;
	double fit_error; /* mean absolute error relative to the runs */
};
int ho_fit_run_model(const struct ho_run_point *pts, uint32_t n, struct ho_run_model *out);

/* What this machine is (probes/machine.c): a profile's and a schedule's "machine". */
struct ho_machine {
	char cpu[128];	 /* model name */
	char flags[256]; /* the ISA extensions that change kernels: avx2 avx512f amx_tile ... */
	int cpus, numa_nodes;
	char numa[256];	 /* CPUs of each node: "0-1" or "0-7;8-15" */
	char kernel[96]; /* uname -r */
	char ump[48];	 /* ump.ko's ABI version and features, or "not loaded" */
	char onednn[32]; /* oneDNN's version */
	char gpu[128];	 /* "none" until a GPU backend exists */
};
void ho_machine_read(struct ho_machine *m);
/*
 * Compare the "machine" object of a profile or schedule file with m: 0 when
 * the same, 1 with what differs in diff ("cpu: 'X' there, 'Y' here; ..."),
 * 2 when the file records none, < 0 when it cannot be read.
 */
int ho_machine_compare(const char *path, const struct ho_machine *m, char *diff, size_t len);

/*
 * A box for this machine: its CPUs split into n CPU devices (cores
 * divided evenly, each device on the NUMA node of its cores), memory
 * from the node sizes, shared-memory links between them.  opencl: the
 * OpenCL devices that share host memory join it, naming their backend and
 * listing the operators it runs; one that computes on CPU cores (PoCL)
 * takes the last group's cores in place of its CPU device (n >= 2).
 */
int ho_probe_write_box(const char *path, uint32_t n, bool opencl, struct ho_error *err);

/* What to probe. */
struct ho_probe_model {
	const char *path;
	const char *const *shapes; /* NAME=D0xD1... bindings for its symbolic inputs */
	uint32_t n_shapes;
};

struct ho_probe_opts {
	bool quick; /* fewer shapes and repeats: under 20 s on two cores */
	/* Only the links: the hand-off and pool copies between each pair of devices. */
	bool links_only;
	const struct ho_probe_model *models;
	uint32_t n_models;
	/* Called as each step starts; done/total counts steps.  NULL: silent. */
	void (*progress)(const char *step, uint32_t done, uint32_t total, void *arg);
	void *progress_arg;
	volatile sig_atomic_t *stop; /* raised (Ctrl-C): the probe ends with -EINTR */
};

/*
 * Probe box's devices on this machine and write the profile to path, whole
 * or not at all (a temporary file renamed at the end).  box_path is
 * recorded in the profile.  Devices of a kind the runtime cannot drive
 * here (anything but cpu) are an error naming them: a profile must not
 * claim figures nobody measured.
 */
int ho_probe_box(const struct ho_box *box, const char *box_path, const struct ho_probe_opts *o,
		 const char *path, struct ho_error *err);

/* Calibration (probes/calibrate.c): a plan run for real against its prediction. */
struct ho_calib_node {
	int dev;	  /* -1: not a task */
	int how;	  /* HO_TASK_*: in the predicted timeline */
	double predicted; /* s, the kernel's predicted time, its launch aside (0: fused, view) */
	double measured;  /* s, median over the runs */
};
struct ho_calibration {
	double predicted;	    /* s, the simulator's makespan */
	double measured, p90, p99;  /* s, over the warm runs */
	double kernels;		    /* s, the nodes' own times summed (medians) */
	uint32_t tasks;		    /* nodes that ran */
	uint32_t n;		    /* graph nodes */
	struct ho_calib_node *node; /* per graph node */
};
/*
 * Run the plan (assign and order per task of p, built from g and box with
 * the profile under test) repeats times after two warm-up runs.
 */
int ho_calibrate(const struct ho_graph *g, const struct ho_box *box, const struct ho_profile *prof,
		 const struct ho_problem *p, const uint16_t *assign, const uint32_t *order,
		 uint32_t repeats, struct ho_calibration **out, struct ho_error *err);
void ho_calibration_free(struct ho_calibration *c);
/*
 * Write profile_in refitted as profile_out (whole or not at all): every
 * node that ran its own kernel becomes a point of its family (replacing a
 * point of the same work), and a device a run used alone gets its
 * kernel_scale (run, less prof's launches, over the kernels summed).
 */
int ho_calibration_refit(const char *profile_in, const char *profile_out, const struct ho_graph *g,
			 const struct ho_box *box, const struct ho_profile *prof,
			 const struct ho_calibration *const *runs, uint32_t n_runs,
			 struct ho_error *err);

#ifdef __cplusplus
}
#endif
#endif
