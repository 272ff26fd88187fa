// SPDX-License-Identifier: MIT
/*
 * The executor over two devices, on a real model: squeezenet1_1 with its
 * nodes alternating between a CPU device and an emulated accelerator (so
 * nearly every edge crosses, and every crossing into or out of the emulator
 * is a real pool copy).  Checks the answer against PyTorch's, that the
 * measured timeline respects every dependency and never overlaps two nodes
 * on one device, that a device failing mid-run gives a clear error and the
 * same plan then runs again correctly, and that bad inputs are refused.
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

	snprintf(pl.dev[0].name, sizeof(pl.dev[0].name), "cpu0");
	pl.dev[0].backend = HO_RT_CPU;
	pl.dev[0].threads = 1;
	pl.dev[0].numa_node = 0;
	snprintf(pl.dev[1].name, sizeof(pl.dev[1].name), "emu0");
	pl.dev[1].backend = HO_RT_EMU;
	pl.dev[1].threads = 1;
	pl.dev[1].numa_node = 0;
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
	ho_rt_free(rt);

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
	free(pl.node_device);
	free(pl.node_prio);
	ho_npy_free(&in);
	ho_npy_free(&ref);
	ho_graph_free(g);
	return t_failures ? 1 : 0;
}
