/* SPDX-License-Identifier: MIT */
/* Inside the probes: the in-memory model builder, the runner and the kernel sweep. */
#ifndef HO_PROBE_PRIV_H
#define HO_PROBE_PRIV_H

#include <heteroopt/probe.h>
#include <heteroopt/runtime.h>

#include <jansson.h>

#include "common.h"

/* machine.c: the machine as a profile records it. */
json_t *ho_machine_json(const struct ho_machine *m);

/* onnx_build.c: one small model, read back through the importer. */
struct ho_pb;
struct ho_pb *ho_pb_new(uint64_t seed);
void ho_pb_free(struct ho_pb *pb);
int ho_pb_input(struct ho_pb *pb, const char *name, int rank, const int64_t *dims);
int ho_pb_output(struct ho_pb *pb, const char *name);
int ho_pb_weight(struct ho_pb *pb, const char *name, int rank, const int64_t *dims);
int ho_pb_weight_i64(struct ho_pb *pb, const char *name, int count, const int64_t *values);
/* inputs: comma-separated names, an empty one for an omitted optional input; node index */
int ho_pb_node(struct ho_pb *pb, const char *op, const char *inputs, const char *output);
/* Name the node "main": the one its probe times (default: the first). */
int ho_pb_main(struct ho_pb *pb, int node);
int ho_pb_attr_int(struct ho_pb *pb, int node, const char *name, int64_t v);
int ho_pb_attr_float(struct ho_pb *pb, int node, const char *name, float v);
int ho_pb_attr_ints(struct ho_pb *pb, int node, const char *name, int n, const int64_t *v);
int ho_pb_load(struct ho_pb *pb, struct ho_graph **out, struct ho_error *err);

/* copies.c: pool copies from node na to nb by every queue path, into link ("gbps", "copies"). */
int ho_probe_copies(const struct ho_probe_method *m, const struct ho_probe_opts *o, int na, int nb,
		    json_t *link, struct ho_error *err);

/* measure.c: v sorted, and its q-quantile (linear between neighbours); 0 where n is 0. */
double ho_probe_quantile(double *v, uint32_t n, double q);

/* twins.c: devices the box makes alike, whose figures must agree. */
bool ho_probe_twins(const struct ho_box *box, int a, int b);
/* How far apart two device records (a profile's) measured: the factor between them that a
 * quarter of their sweep's kernels exceed; 0 where they share none.  *a_slower: a took
 * longer on most.  Past HO_PROBE_TWIN_GAP, twins are measured again. */
#define HO_PROBE_TWIN_GAP 1.25
double ho_probe_twin_gap(const json_t *a, const json_t *b, bool *a_slower);

/* runner.c: a graph planned on some of a box's devices, inputs random. */
struct ho_probe_run {
	struct ho_graph *g;
	struct ho_rt *rt;
	struct ho_rt_placement pl;
	double last_kernel_s; /* the last run: the sum of its nodes' own times */
	double last_wall_s;   /* ... and the run from start to end */
	bool wall;	      /* once() reports the wall time, not the kernels' */
	bool overhead;	      /* ... less the kernels': dispatch, hand-offs, copies */
	int32_t main;	      /* >= 0: once() reports this node's time alone */
};
/* The node a probe graph times: the one named main, else its first task. */
uint32_t ho_probe_main_node(const struct ho_graph *g);
/*
 * Plan g (taken: freed with the run) with node i on devs[node_dev[i]] (NULL:
 * all on devs[0]); in-place reads as the box's shared-memory links allow.
 */
int ho_probe_run_open(struct ho_probe_run *r, struct ho_graph *g, const struct ho_box *box,
		      const int *devs, uint32_t n_devs, const uint8_t *node_dev,
		      struct ho_error *err);
double ho_probe_run_once(void *run); /* for ho_probe_measure */
/* Every input of g set in rt to values away from 0 and denormals, as activations are. */
int ho_probe_set_inputs(const struct ho_graph *g, struct ho_rt *rt, struct ho_error *err);
void ho_probe_run_close(struct ho_probe_run *r);

/* kernels.c: the sweep, one row per probed kernel. */
struct ho_probe_case {
	const char *what; /* "conv 64>64 56x56 k3 s1" */
	int (*build)(struct ho_pb *pb, const int64_t *a);
	int64_t a[8];
	bool quick; /* also in --quick */
	int role;   /* HO_PROBE_* below: what else the row measures */
};
#define HO_PROBE_SWEEP 0
#define HO_PROBE_BANDWIDTH 1 /* Relu by size: bandwidth by buffer size */
#define HO_PROBE_STRIDE 2    /* Slice by step: bandwidth by stride */
#define HO_PROBE_INTERFERE_MEM 3
#define HO_PROBE_INTERFERE_COMPUTE 4
#define HO_PROBE_SWISH 5    /* a convolution as the row before, a Swish fused for its Relu */
#define HO_PROBE_RELAYOUT 6 /* NCHW to channels-last: what changing a tensor's layout costs */
extern const struct ho_probe_case ho_probe_cases[];
/* Row c's graph, planned on box device d. */
int ho_probe_case_open(const struct ho_box *box, const struct ho_probe_case *c, int d,
		       struct ho_probe_run *r, struct ho_error *err);
/* The same with its main node asked precision (one of ho_rt_precisions; NULL: float32). */
int ho_probe_case_open_in(const struct ho_box *box, const struct ho_probe_case *c, int d,
			  const char *precision, struct ho_probe_run *r, struct ho_error *err);

/* precision.c: the speed-ups of the reduced precisions, per kernel class. */
#define HO_PROBE_PREC_ROWS 64
struct ho_probe_speedups {
	double r[4][HO_KC_COUNT][HO_PROBE_PREC_ROWS];	 /* precision (ho_rt_precisions) */
	double work[4][HO_KC_COUNT][HO_PROBE_PREC_ROWS]; /* each row's (ho_node_work) */
	uint32_t n[4][HO_KC_COUNT];
};
/* Row c (class kc, f32_s in float32) timed again on box device d in each reduced precision
 * its kernel takes there; each speed-up into sp and onto the sweep's row. */
int ho_probe_precisions(const struct ho_box *box, const struct ho_probe_case *c, int d, int kc,
			double f32_s, const struct ho_probe_method *m, volatile sig_atomic_t *stop,
			struct ho_probe_speedups *sp, json_t *row, struct ho_error *err);
/* {precision: {class: [[work, speed-up], ...]}}; NULL where none was measured. */
json_t *ho_probe_speedups_json(const struct ho_probe_speedups *sp);
int ho_probe_build_chain(struct ho_pb *pb, uint32_t n, int64_t elems); /* n Relus on elems floats */

#endif
