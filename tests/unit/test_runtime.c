// SPDX-License-Identifier: MIT
/*
 * The executor over two devices, on a real model: squeezenet1_1 with its
 * nodes alternating between a CPU device and an emulated accelerator (so
 * nearly every edge crosses, and every crossing into or out of the emulator
 * is a real pool copy).  Checks the answer against PyTorch's, that the
 * measured timeline respects every dependency and never overlaps two nodes
 * on one device, that a device failing mid-run gives a clear error and the
 * same plan then runs again correctly, that its threads outlive a run and
 * end with the plan, and that bad inputs are refused.
 * Then the transformer with its Reshapes off their sources' device: the
 * copies must be the ones the scheduler's model implies.
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "heteroopt/graph.h"
#include "heteroopt/npy.h"
#include "heteroopt/runtime.h"
#include "test_util.h"

/* Threads of this process now. */
static uint32_t live_threads(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	unsigned n = 0;

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "Threads: %u", &n) == 1)
			break;
	if (f)
		fclose(f);
	return n;
}

static double max_ratio(const float *y, const struct ho_npy *ref)
{
	double diff = 0, mag = 0;

	for (size_t i = 0; i < ref->count; i++) {
		double r = ((const float *)ref->data)[i];

		diff = fmax(diff, fabs(y[i] - r));
		mag = fmax(mag, fabs(r));
	}
	return mag > 0 ? diff / mag : diff;
}

static void check_timeline(const struct ho_graph *g, const struct ho_rt_placement *pl,
			   const struct ho_rt_report *r)
{
	for (uint32_t i = 0; i < g->n_nodes; i++) {
		const struct ho_node *n = &g->nodes[i];

		if (pl->node_device[i] < 0)
			continue;
		T_CHECK(r->start_s[i] >= 0 && r->end_s[i] >= r->start_s[i], "node %s did not run",
			n->name);
		for (uint32_t k = 0; k < n->n_inputs; k++) {
			int32_t t = n->inputs[k], p = t >= 0 ? g->tensors[t].producer : -1;

			if (p >= 0 && pl->node_device[p] >= 0)
				T_CHECK(r->end_s[p] <= r->start_s[i], "%s started before %s ended",
					n->name, g->nodes[p].name);
		}
		for (uint32_t j = i + 1; j < g->n_nodes; j++)
			if (pl->node_device[j] == pl->node_device[i])
				T_CHECK(
				    r->end_s[i] <= r->start_s[j] || r->end_s[j] <= r->start_s[i],
				    "%s and %s overlap on one device", n->name, g->nodes[j].name);
	}
}

/*
 * The simulator's rule: a tensor is copied once to each other device that
 * reads it, from the device its node ran on, alias ops (Reshape) included.
 */
static uint32_t placement_copies(const struct ho_graph *g, const struct ho_rt_placement *pl)
{
	uint32_t n = 0;

	for (uint32_t t = 0; t < g->n_tensors; t++) {
		const struct ho_tensor *tt = &g->tensors[t];
		int32_t p = tt->producer, from = p >= 0 ? pl->node_device[p] : pl->host;
		bool to[HO_RT_MAX_DEVICES] = {false};

		if ((tt->flags & (HO_T_INITIALIZER | HO_T_CONSTANT | HO_T_FOLDED)) || from < 0)
			continue;
		for (uint32_t c = 0; c < tt->n_consumers; c++) {
			int32_t d = pl->node_device[tt->consumers[c]];

			if (d >= 0 && d != from && !to[d]) {
				to[d] = true;
				n++;
			}
		}
	}
	return n;
}

/*
 * The transformer with every Reshape, and what reads it, on emu0, the rest on
 * cpu0: each Reshape then runs off its source's device.  Its output must be
 * emu0's own tensor, as the scheduler models it: one copy in, none back.
 */
static void reshape_off_source(struct ho_rt_placement *pl)
{
	char model[4096];
	struct ho_graph *g = NULL;
	struct ho_error err;
	struct ho_rt *rt = NULL;
	struct ho_rt_opts o = {.placement = pl};
	int64_t dims[3] = {1, 32, 256};
	float *x = malloc(32 * 256 * sizeof(float)), *one = NULL;
	const struct ho_tensor *yt;
	uint32_t moved = 0;

	T_REQUIRE(x);
	for (int i = 0; i < 32 * 256; i++)
		x[i] = (float)((i * 7919) % 1000) / 500.0f - 1.0f;
	if (t_model_path(model, sizeof(model), "transformer_encoder.onnx") ||
	    ho_onnx_load(model, NULL, &g, &err) || ho_graph_bind_input(g, "src", dims, 3, &err) ||
	    ho_shape_infer(g, &err)) {
		T_CHECK(0, "transformer_encoder.onnx: %s", err.msg);
		free(x);
		return;
	}
	free(pl->node_device);
	free(pl->node_prio);
	pl->node_device = calloc(g->n_nodes, sizeof(int32_t));
	pl->node_prio = calloc(g->n_nodes, sizeof(uint32_t));
	T_REQUIRE(pl->node_device && pl->node_prio);
	for (int pass = 0; pass < 2; pass++) {
		for (uint32_t i = 0; i < g->n_nodes; i++) {
			uint32_t id = (uint32_t)g->topo[i];
			const struct ho_node *n = &g->nodes[id];

			pl->node_prio[id] = i;
			pl->node_device[id] = (n->flags & HO_N_FOLDED) ? -1 : 0;
			if (!pass || pl->node_device[id] < 0 || !n->n_inputs || n->inputs[0] < 0)
				continue;
			int32_t src = g->tensors[n->inputs[0]].producer;
			bool reshape = !strcmp(n->op_type, "Reshape"),
			     reads_one = src >= 0 && !strcmp(g->nodes[src].op_type, "Reshape");

			if (reshape || reads_one)
				pl->node_device[id] = 1;
			moved += reshape && src >= 0 && strcmp(g->nodes[src].op_type, "Reshape");
		}
		T_REQUIRE(ho_rt_new(g, &o, &rt, &err) == 0);
		T_REQUIRE(ho_rt_set_input(rt, "src", dims, 3, x, &err) == 0);
		T_REQUIRE(ho_rt_run(rt, &err) == 0);
		const float *y = ho_rt_output(rt, 0, &yt);
		const struct ho_rt_report *r = ho_rt_last_report(rt);

		if (!pass) {
			one = malloc(yt->bytes);
			T_REQUIRE(one);
			memcpy(one, y, yt->bytes);
		} else {
			double worst = 0;

			for (size_t i = 0; i < yt->bytes / sizeof(float); i++)
				worst = fmax(worst, fabs(y[i] - one[i]));
			T_CHECK(worst <= 1e-5, "Reshapes on emu0: output off by %.2e", worst);
			T_CHECK(r->transfers == placement_copies(g, pl),
				"Reshapes on emu0: %u copies made, the placement implies %u",
				r->transfers, placement_copies(g, pl));
			printf(
			    "  transformer, %u Reshapes off their source's device: %u copies (the "
			    "placement implies %u); output against one device's %.1e\n",
			    moved, r->transfers, placement_copies(g, pl), worst);
		}
		ho_rt_free(rt);
	}
	free(one);
	free(x);
	ho_graph_free(g);
}

int main(void)
{
	char model[4096], in_path[4096], out_path[4096];
	struct ho_graph *g = NULL;
	struct ho_npy in = {0}, ref = {0};
	struct ho_error err;
	struct ho_rt_placement pl = {.n_devices = 2, .host = 0, .pred_makespan = 0};
	struct ho_rt_opts o = {.placement = &pl};
	struct ho_rt *rt = NULL;
	const struct ho_tensor *yt;
	uint32_t runnable = 0, mid = 0;
	int64_t bad[4] = {1, 3, 112, 112};

	alarm(120); /* a hang is a failure, not a stuck suite */

	if (t_model_path(model, sizeof(model), "squeezenet1_1.onnx") ||
	    t_model_path(in_path, sizeof(in_path), "squeezenet1_1.ref_in.npy") ||
	    t_model_path(out_path, sizeof(out_path), "squeezenet1_1.ref_out.npy")) {
		printf("skipped: squeezenet1_1 and its reference not in $HETEROOPT_MODELS\n");
		return T_SKIP;
	}
	T_REQUIRE(ho_onnx_load(model, NULL, &g, &err) == 0);
	T_REQUIRE(ho_npy_read(in_path, &in, &err) == 0 && ho_npy_read(out_path, &ref, &err) == 0);
	T_REQUIRE(ho_graph_bind_input(g, "input", in.shape, in.ndim, &err) == 0);
	T_REQUIRE(ho_shape_infer(g, &err) == 0);

	t_rt_device(&pl.dev[0], "cpu0", "cpu", 0);
	t_rt_device(&pl.dev[1], "emu0", "emu", 0);
	pl.node_device = calloc(g->n_nodes, sizeof(int32_t));
	pl.node_prio = calloc(g->n_nodes, sizeof(uint32_t));
	T_REQUIRE(pl.node_device && pl.node_prio);
	for (uint32_t i = 0; i < g->n_nodes; i++) {
		uint32_t id = (uint32_t)g->topo[i];
		const struct ho_node *n = &g->nodes[id];
		bool task = !(n->flags & HO_N_FOLDED) && strcmp(n->op_type, "Constant");

		pl.node_device[id] = task ? (int32_t)(runnable++ % 2) : -1;
		pl.node_prio[id] = i;
		if (task && runnable == 20)
			mid = id;
	}

	/* A device failing in the middle of a run. */
	o.inject_failure = g->nodes[mid].name;
	T_REQUIRE(ho_rt_new(g, &o, &rt, &err) == 0);
	T_CHECK(ho_rt_set_input(rt, "input", bad, 4, in.data, &err) != 0 &&
		    strstr(err.msg, "dimension 2"),
		"a wrong input shape was accepted: %s", err.msg);
	T_REQUIRE(ho_rt_set_input(rt, "input", in.shape, in.ndim, in.data, &err) == 0);
	T_CHECK(ho_rt_run(rt, &err) != 0 && strstr(err.msg, g->nodes[mid].name) &&
		    strstr(err.msg, "injected"),
		"injected failure not reported: %s", err.msg);
	printf("  failure: %s\n", err.msg);

	/* The same plan, again: the right answer. */
	T_CHECK(ho_rt_run(rt, &err) == 0, "run after a failure: %s", err.msg);
	{
		const float *y = ho_rt_output(rt, 0, &yt);
		const struct ho_rt_report *r = ho_rt_last_report(rt);
		double ratio = max_ratio(y, &ref);

		T_CHECK(yt->bytes == ref.nbytes, "output size %llu, reference %zu",
			(unsigned long long)yt->bytes, ref.nbytes);
		T_CHECK(ratio <= 1e-4, "output off PyTorch's by %.2e of its magnitude", ratio);
		T_CHECK(r->nodes_run[0] + r->nodes_run[1] == runnable, "%u + %u nodes ran, not %u",
			r->nodes_run[0], r->nodes_run[1], runnable);
		T_CHECK(r->transfers > 0 && r->bytes_moved > 0, "no copies into or out of emu0");
		T_CHECK(r->transfers == placement_copies(g, &pl),
			"%u copies made, the placement "
			"implies %u",
			r->transfers, placement_copies(g, &pl));
		check_timeline(g, &pl, r);
		/* The memory plan shares bytes between tensors whose lives cannot meet. */
		for (int d = 0; d < 2; d++)
			T_CHECK(r->region_bytes[d] < r->unshared_bytes[d],
				"device %d: %llu bytes planned, %llu without reuse", d,
				(unsigned long long)r->region_bytes[d],
				(unsigned long long)r->unshared_bytes[d]);
		printf("  alternating cpu0/emu0: %u nodes, %u copies (%.0f bytes), %.3f ms, "
		       "ratio to PyTorch %.2e; regions %llu + %llu bytes (%llu + %llu without "
		       "reuse)\n",
		       runnable, r->transfers, r->bytes_moved, r->makespan_s * 1e3, ratio,
		       (unsigned long long)r->region_bytes[0],
		       (unsigned long long)r->region_bytes[1],
		       (unsigned long long)r->unshared_bytes[0],
		       (unsigned long long)r->unshared_bytes[1]);
	}
	/* Workers and copy threads live from the first run to ho_rt_free: more runs start none. */
	{
		uint32_t live = live_threads(), after, freed;

		for (int i = 0; i < 5; i++)
			T_CHECK(ho_rt_run(rt, &err) == 0, "run %d of 5 more: %s", i + 1, err.msg);
		after = live_threads();
		ho_rt_free(rt);
		freed = live_threads();
		T_CHECK(live > 0 && after == live, "%u threads after 5 more runs, %u before", after,
			live);
		T_CHECK(freed < live, "%u threads after ho_rt_free, %u while the plan lived", freed,
			live);
		printf("  threads: %u while the plan lives (also after 5 more runs), %u after "
		       "ho_rt_free\n",
		       live, freed);
	}

	/*
	 * A timeline that runs the graph backwards (the API does not check it;
	 * ho_rt_schedule_load does) with no memory to spare: buffer reuse then
	 * waits in a circle.  The run must stop with an error, not hang.
	 */
	pl.pred_start = calloc(g->n_nodes, sizeof(double));
	pl.pred_end = calloc(g->n_nodes, sizeof(double));
	T_REQUIRE(pl.pred_start && pl.pred_end);
	for (uint32_t i = 0; i < g->n_nodes; i++) {
		pl.pred_start[g->topo[i]] = (double)(g->n_nodes - i);
		pl.pred_end[g->topo[i]] = (double)(g->n_nodes - i) + 0.5;
	}
	o.inject_failure = NULL;
	T_REQUIRE(ho_rt_new(g, &o, &rt, &err) == 0);
	T_REQUIRE(ho_rt_set_input(rt, "input", in.shape, in.ndim, in.data, &err) == 0);
	T_CHECK(ho_rt_run(rt, &err) == -EDEADLK && strstr(err.msg, "wait on each other"),
		"a backwards timeline did not stop with an error: %s", err.msg);
	printf("  backwards timeline: %s\n", err.msg);
	ho_rt_free(rt);
	free(pl.pred_start);
	free(pl.pred_end);
	pl.pred_start = pl.pred_end = NULL;
	reshape_off_source(&pl);
	free(pl.node_device);
	free(pl.node_prio);
	ho_npy_free(&in);
	ho_npy_free(&ref);
	ho_graph_free(g);
	return t_failures ? 1 : 0;
}
