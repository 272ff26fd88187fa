// SPDX-License-Identifier: MIT
/*
 * The simulator's layouts are the executor's: for the PP-OCRv4 detector
 * (whose neck carries a layout through chains of Resize and Add) placed over
 * cpu0 (oneDNN, channels-last) and an OpenCL device (plain) in random blocks,
 * every tensor the scheduler takes as channels-last is one the executor
 * stores so, and the reverse.  Placed on cpu0 alone, nothing is charged
 * beyond what the probe measured; split, the convolutions that meet a plain
 * tensor are charged its bytes at the probe's relayout rate.  No OpenCL
 * device is opened: both sides ask the backends' tables.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "backends/backend.h"
#include "exec_priv.h"
#include "sched_priv.h"
#include "test_util.h"

static const char box_json[] =
    "{\"name\": \"cpu-ocl\", \"host\": \"cpu0\", \"devices\": ["
    "{\"name\": \"cpu0\", \"kind\": \"cpu\", \"peak_gflops\": {\"float32\": 300},"
    " \"mem_bw_gbps\": 40, \"mem_gib\": 8},"
    "{\"name\": \"ocl0\", \"kind\": \"cpu\", \"peak_gflops\": {\"float32\": 20},"
    " \"mem_bw_gbps\": 10, \"mem_gib\": 8, \"backend\": {\"name\": \"opencl\"}}],"
    "\"links\": [{\"a\": \"cpu0\", \"b\": \"ocl0\", \"shared_memory\": true, \"latency_us\": 2}]}";
static const char box2_json[] =
    "{\"name\": \"two-cpu\", \"host\": \"cpu0\", \"devices\": ["
    "{\"name\": \"cpu0\", \"kind\": \"cpu\", \"peak_gflops\": {\"float32\": 300},"
    " \"mem_bw_gbps\": 40, \"mem_gib\": 8},"
    "{\"name\": \"cpu1\", \"kind\": \"cpu\", \"peak_gflops\": {\"float32\": 300},"
    " \"mem_bw_gbps\": 40, \"mem_gib\": 8}],"
    "\"links\": [{\"a\": \"cpu0\", \"b\": \"cpu1\", \"shared_memory\": true, \"latency_us\": 2}]}";
/* 10 GB/s: 1 ms turns 10 MB */
static const char profile_json[] = "{\"devices\": {\"cpu0\": {\"relayout_gbps\": 10}}}";

/* The executor's layouts for the plan assign (task order) over g. */
static void executor_layouts(const struct ho_graph *g, const uint16_t *assign, uint8_t *nhwc)
{
	const struct ho_backend_ops *cpu = ho_backend_find("cpu"), *ocl = ho_backend_find("opencl");
	const struct ho_backend_ops **node_ops = calloc(g->n_nodes + 1, sizeof(*node_ops));
	uint32_t t = 0;

	T_REQUIRE(node_ops && cpu && ocl);
	for (uint32_t i = 0; i < g->n_nodes; i++)
		if (ho_node_is_task(&g->nodes[i]))
			node_ops[i] = assign[t++] ? ocl : cpu;
	ho_rt_layouts_over(g, node_ops, nhwc);
	free(node_ops);
}

/* Whether the two sides agree on every task's output; how many are channels-last. */
static uint32_t same_layouts(const struct ho_graph *g, const struct ho_problem *p,
			     const uint16_t *assign)
{
	uint8_t *sched = calloc(p->m + 1, 1), *exec = calloc(g->n_tensors + 1, 1);
	uint32_t t = 0, kept = 0;

	T_REQUIRE(sched && exec);
	ho_layouts_under(p, assign, sched);
	executor_layouts(g, assign, exec);
	for (uint32_t i = 0; i < g->n_nodes; i++) {
		const struct ho_node *nd = &g->nodes[i];

		if (!ho_node_is_task(nd))
			continue;
		if (p->task_out[t] != HO_NO_ITEM) {
			int32_t y = nd->outputs[0];

			if (sched[p->task_out[t]] != exec[y])
				T_FAIL("%s: the scheduler has it %s, the executor %s", nd->name,
				       sched[p->task_out[t]] ? "channels-last" : "plain",
				       exec[y] ? "channels-last" : "plain");
			kept += exec[y];
		}
		t++;
	}
	free(sched);
	free(exec);
	return kept;
}

/* Seconds charged beyond the device alone, summed over the plan's tasks. */
static double charged(const struct ho_problem *p, const uint16_t *assign)
{
	uint8_t *nhwc = calloc(p->m + 1, 1);
	double s = 0;

	T_REQUIRE(nhwc);
	ho_layouts_under(p, assign, nhwc);
	for (uint32_t t = 0; t < p->n; t++)
		s += ho_relayout_time(p, t, assign[t], nhwc) -
		     p->relayout_alone[(size_t)t * p->d + assign[t]];
	free(nhwc);
	return s;
}

/*
 * A profile that measured no node of the model (a quick probe's class models):
 * the stem, which turns the plain model input for its channels-last kernel, is
 * priced that turn on top on cpu0, the device with a relayout rate, and a
 * node that turns nothing as it was; also where every device is channels-last
 * and no plan changes a layout (the two-CPU box).
 */
static void stem_pays_its_input(const struct ho_graph *g, const char *box_text, bool all_cl)
{
	struct ho_box *box;
	struct ho_profile *prof;
	struct ho_problem *p;
	struct ho_error err = {0};
	uint8_t *layout = malloc((size_t)g->n_nodes * 2);
	uint32_t t = 0, stem = 0, later = 0;

	T_REQUIRE(layout && ho_box_parse(box_text, &box, &err) == 0);
	T_REQUIRE(t_profile_text(profile_json, box, &prof, &err) == 0);
	struct ho_backend_view bv = {NULL, layout, ho_rt_box_layouts(box, g, layout), NULL, NULL};

	T_REQUIRE(ho_problem_from_graph_on(g, box, prof, &bv, &p, &err) == 0);
	T_CHECK(!p->relayout == all_cl, "per-plan layouts: %s", p->relayout ? "yes" : "no");
	for (uint32_t i = 0; i < g->n_nodes; i++) {
		const struct ho_node *nd = &g->nodes[i];
		const struct ho_tensor *x = ho_node_input(g, nd, 0);

		if (!ho_node_is_task(nd))
			continue;
		for (uint32_t j = 0; j < p->d && !strcmp(nd->op_type, "Conv"); j++) {
			double base = ho_cost_node(g, nd, box, (int)j, prof),
			       c = p->comp[t * p->d + j];

			if (x->flags & HO_T_INPUT) {
				stem++;
				T_CHECK(fabs(c - base - (j ? 0 : (double)x->bytes / 10e9)) < 1e-12,
					"%s on device %u: %g s, %g s before", nd->name, j, c, base);
			} else {
				later += fabs(c - base) < 1e-15;
			}
		}
		t++;
	}
	T_CHECK(stem == p->d && later > 40 * p->d, "stems %u, convolutions as they were %u", stem,
		later);
	ho_problem_free(p);
	ho_profile_free(prof);
	ho_box_free(box);
	free(layout);
}

int main(void)
{
	static const int64_t dims[4] = {1, 3, 160, 160};
	struct ho_graph *g;
	struct ho_box *box;
	struct ho_profile *prof;
	struct ho_problem *p;
	struct ho_error err = {0};
	uint8_t *layout;
	uint16_t *assign;
	double most = 0;

	if (t_load_model("ch_PP-OCRv4_det_infer.onnx", "x", dims, 4, &g)) {
		t_model_skipped("ch_PP-OCRv4_det_infer.onnx");
		return 77;
	}
	T_REQUIRE(ho_box_parse(box_json, &box, &err) == 0);
	T_REQUIRE(t_profile_text(profile_json, box, &prof, &err) == 0);
	layout = malloc((size_t)g->n_nodes * 2);
	T_REQUIRE(layout);
	struct ho_backend_view bv = {NULL, layout, ho_rt_box_layouts(box, g, layout), NULL, NULL};

	/* cpu0 keeps activations channels-last, the OpenCL device not */
	T_CHECK(bv.channels_last == 1, "channels-last devices 0x%llx",
		(unsigned long long)bv.channels_last);
	T_REQUIRE(ho_problem_from_graph_on(g, box, prof, &bv, &p, &err) == 0);
	T_REQUIRE(p->relayout && p->n > 100);
	assign = calloc(p->n, sizeof(uint16_t));
	T_REQUIRE(assign);

	/* alone on cpu0: the probe's own layouts, nothing charged */
	T_CHECK(same_layouts(g, p, assign) > 50, "few channels-last tensors on cpu0 alone");
	T_CHECK(charged(p, assign) == 0, "%g s charged on cpu0 alone", charged(p, assign));

	/* random blocks of tasks on the OpenCL device, where it runs them */
	srand(7);
	for (int round = 0; round < 40; round++) {
		uint32_t block = 1 + (uint32_t)(rand() % 12);

		for (uint32_t t = 0; t < p->n; t++) {
			uint16_t want = (uint16_t)((t / block + (uint32_t)round) % 2);

			assign[p->topo[t]] = p->allowed[p->topo[t]] >> want & 1 ? want : 0;
		}
		same_layouts(g, p, assign);
		most = fmax(most, charged(p, assign));
	}
	/* some split turned at least one 32x80x80 activation (0.8 MB: 80 us at 10 GB/s) */
	T_CHECK(most >= 80e-6, "at most %g s charged over 40 splits", most);

	stem_pays_its_input(g, box_json, false);
	stem_pays_its_input(g, box2_json, true);

	free(assign);
	free(layout);
	ho_problem_free(p);
	ho_profile_free(prof);
	ho_box_free(box);
	ho_graph_free(g);
	return t_failures ? 1 : 0;
}
