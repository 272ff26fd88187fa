/* SPDX-License-Identifier: MIT */
/*
 * The runtime: executes a model's graph with real kernels.
 *
 * This first stage runs every node on one CPU device through oneDNN (the
 * "cpu" backend), in the graph's topological order; schedules spanning
 * several devices, the emulated accelerator and pool-backed tensors build on
 * it (user/runtime/README.md says what exists).  A plan is made once (every
 * oneDNN primitive created, weights reordered into the layouts the kernels
 * want) and run any number of times.
 *
 * Owns: every buffer of the plan, its primitives and its engine; the graph
 * stays the caller's and must outlive the plan.  No global state; calls
 * return 0 or -errno and describe the problem in struct ho_error.
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

struct ho_rt_opts {
	int threads; /* oneDNN threads; 0 = what OpenMP chooses */
};

/*
 * Plan g (shapes inferred, inputs bound) for the cpu backend.  Fails naming
 * the first node whose operator, attribute or data type it cannot run.
 */
int ho_rt_new(const struct ho_graph *g, const struct ho_rt_opts *o, struct ho_rt **out,
	      struct ho_error *err);
void ho_rt_free(struct ho_rt *rt);

/* Copy an input in: float32 data of exactly the bound shape's element count. */
int ho_rt_set_input(struct ho_rt *rt, const char *name, const int64_t *shape, int rank,
		    const float *data, struct ho_error *err);
/* Run every node once; inputs must all have been set. */
int ho_rt_run(struct ho_rt *rt, struct ho_error *err);
/* Output i (0..g->n_outputs-1) of the last run: its tensor and its data. */
const float *ho_rt_output(const struct ho_rt *rt, uint32_t i, const struct ho_tensor **t);

#ifdef __cplusplus
}
#endif
#endif
