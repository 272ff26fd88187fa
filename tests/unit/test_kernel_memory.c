// SPDX-License-Identifier: MIT
/*
 * A kernel's own memory, priced as it is held: what the cpu backend's kernels keep
 * (weights in their own layout) and need while they run (scratchpads, copies in their
 * own layout, from one workspace per device) is what the scheduler's memory peak adds,
 * and what a plan of the runtime holds.  On squeezenet1_1 at 224x224:
 *  - the preparing check (ho_rt_box_takes) says each node's, and its convolutions hold
 *    at least their weights' bytes;
 *  - a runtime plan prepared as that check prepares (its layouts, unfused) holds the same
 *    bytes, and its workspace is the largest kernel's need;
 *  - the simulated peak of a device grows by its nodes' held bytes plus its largest
 *    scratch, once per device, on one device and on two, less the weights its kernels
 *    took over (every Conv's: held in their layout alone, no bytes of the device's;
 *    the plan's regions hold none either: tests/runtime/test_numerics.sh).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heteroopt/runtime.h"
#include "heteroopt/sched.h"
#include "test_util.h"

static const char box_json[] =
    "{\"name\": \"kmem\", \"host\": \"cpu0\", \"devices\": ["
    "{\"name\": \"cpu0\", \"kind\": \"cpu\", \"peak_gflops\": {\"float32\": 100},"
    " \"mem_bw_gbps\": 20, \"mem_gib\": 8, \"threads\": 1},"
    "{\"name\": \"emu0\", \"kind\": \"npu\", \"backend\": {\"name\": \"emu\"}, \"peak_gflops\": "
    "{\"float32\": "
    "100},"
    " \"mem_bw_gbps\": 20, \"mem_gib\": 8, \"threads\": 1}],"
    " \"links\": [{\"a\": \"cpu0\", \"b\": \"emu0\", \"gbps\": 20, \"latency_us\": 1, \"p2p\": "
    "true}]}";

/* Device j's simulated peak, the nodes placed by assign, exactly (a timeline). */
static void peaks(const struct ho_problem *p, const uint16_t *assign, double *peak)
{
	struct ho_sim *s = ho_sim_new(p);
	struct ho_timeline *tl = ho_timeline_new(p);
	struct ho_eval ev;

	T_REQUIRE(s && tl && ho_sim_eval(s, assign, p->topo, NULL, &ev, tl) == 0);
	for (uint32_t j = 0; j < p->d; j++)
		peak[j] = ev.peak_mem[j];
	ho_timeline_free(tl);
	ho_sim_free(s);
}

/* The peak with the kernels' memory against without, on one device and split over two. */
static void peak_counts_kernels(const struct ho_graph *g, const struct ho_box *box,
				const struct ho_kernel_memory *km, const uint64_t *takes)
{
	struct ho_backend_view with = {.takes = takes, .memory = km}, without = {.takes = takes};
	struct ho_problem *p, *q;
	struct ho_error err = {0};

	T_REQUIRE(ho_problem_from_graph_on(g, box, NULL, &with, &p, &err) == 0);
	T_REQUIRE(ho_problem_from_graph_on(g, box, NULL, &without, &q, &err) == 0);
	uint16_t *assign = calloc(p->n + 1, sizeof(uint16_t));
	uint32_t *node_of = calloc(p->n + 1, sizeof(uint32_t)), t = 0;

	T_REQUIRE(assign && node_of);
	for (uint32_t i = 0; i < g->n_nodes; i++)
		if (ho_node_is_task(&g->nodes[i]))
			node_of[t++] = i;
	T_REQUIRE(t == p->n);
	for (int split = 0; split < 2; split++) {
		double a[HO_MAX_DEVICES], b[HO_MAX_DEVICES], held[2] = {0}, ws[2] = {0},
							     taken[2] = {0};

		for (uint32_t k = 0; k < p->n; k++) {
			const struct ho_node *n = &g->nodes[node_of[p->topo[k]]];
			const struct ho_kernel_memory *m;
			uint16_t j = (uint16_t)(split && k >= p->n / 2);

			assign[p->topo[k]] = j;
			m = &km[(size_t)node_of[p->topo[k]] * 2 + j];
			held[j] += (double)(m->held + m->packed); /* no weight read twice here */
			ws[j] = fmax(ws[j], (double)m->scratch);
			/* squeezenet reads each weight once */
			for (uint32_t in = 0; in < n->n_inputs; in++)
				if (m->taken >> in & 1)
					taken[j] += (double)ho_node_input(g, n, in)->bytes;
		}
		peaks(p, assign, a);
		peaks(q, assign, b);
		for (uint32_t j = 0; j < 2; j++)
			T_CHECK(fabs(a[j] - b[j] - held[j] - ws[j] + taken[j]) < 1.0,
				"%s, %s: peak %.0f, %.0f without kernels' memory: %.0f more, not "
				"%.0f held + %.0f workspace - %.0f taken over",
				split ? "split" : "one device", p->dev_name[j], a[j], b[j],
				a[j] - b[j], held[j], ws[j], taken[j]);
		printf("  %s: cpu0 %.2f MB (%.2f without), emu0 %.2f MB (%.2f without)\n",
		       split ? "split in two" : "all on cpu0", a[0] / 1e6, b[0] / 1e6, a[1] / 1e6,
		       b[1] / 1e6);
	}
	free(node_of);
	free(assign);
	ho_problem_free(q);
	ho_problem_free(p);
}

int main(void)
{
	static const int64_t dims[4] = {1, 3, 224, 224};
	struct ho_graph *g;
	struct ho_box *box;
	struct ho_error err = {0};
	struct ho_rt *rt = NULL;
	uint64_t held = 0, conv_weights = 0;
	uint64_t scratch = 0;

	if (t_load_model("squeezenet1_1.onnx", "input", dims, 4, &g)) {
		t_model_skipped("squeezenet1_1.onnx");
		return 77;
	}
	T_REQUIRE(ho_box_parse(box_json, &box, &err) == 0);
	struct ho_kernel_memory *km = calloc((size_t)g->n_nodes * 2 + 1, sizeof(*km));
	uint64_t *takes = calloc(g->n_nodes + 1, sizeof(uint64_t));

	T_REQUIRE(km && takes && ho_rt_box_takes(box, g, takes, km, NULL, NULL, &err) == 0);
	for (uint32_t i = 0; i < g->n_nodes; i++) {
		const struct ho_node *n = &g->nodes[i];

		/* the same kernels on both devices: the same memory */
		T_CHECK(km[i * 2].held == km[i * 2 + 1].held &&
			    km[i * 2].packed == km[i * 2 + 1].packed &&
			    km[i * 2].scratch == km[i * 2 + 1].scratch,
			"%s: cpu0 %llu + %llu, emu0 %llu + %llu bytes", n->name,
			(unsigned long long)km[i * 2].held, (unsigned long long)km[i * 2].scratch,
			(unsigned long long)km[i * 2 + 1].held,
			(unsigned long long)km[i * 2 + 1].scratch);
		held += km[i * 2].held + km[i * 2].packed;
		scratch = km[i * 2].scratch > scratch ? km[i * 2].scratch : scratch;
		if (!strcmp(n->op_type, "Conv")) {
			conv_weights += ho_node_input(g, n, 1)->bytes;
			T_CHECK(km[i * 2].taken == 1u << 1 && km[i * 2 + 1].taken == 1u << 1,
				"%s: its weights not taken over (inputs %#x, %#x)", n->name,
				km[i * 2].taken, km[i * 2 + 1].taken);
		}
	}
	printf("  squeezenet1_1: kernels hold %.2f MB (convolution weights %.2f MB), the largest "
	       "needs %.2f MB while it runs\n",
	       held / 1e6, conv_weights / 1e6, scratch / 1e6);
	T_CHECK(held >= conv_weights, "kernels hold %llu bytes, the weights are %llu",
		(unsigned long long)held, (unsigned long long)conv_weights);

	/* a plan prepared as the check prepares holds what the check said */
	struct ho_rt_opts o = {.threads = 1, .no_fusion = 1};

	T_REQUIRE(ho_rt_new(g, &o, &rt, &err) == 0);
	const struct ho_rt_report *r = ho_rt_last_report(rt);

	T_CHECK(r->kernel_held_bytes[0] == held && r->workspace_bytes[0] == scratch,
		"the plan's kernels hold %llu and share %llu bytes; the check said %llu and %llu",
		(unsigned long long)r->kernel_held_bytes[0],
		(unsigned long long)r->workspace_bytes[0], (unsigned long long)held,
		(unsigned long long)scratch);
	ho_rt_free(rt);

	peak_counts_kernels(g, box, km, takes);
	free(takes);
	free(km);
	ho_box_free(box);
	ho_graph_free(g);
	return t_failures ? 1 : 0;
}
