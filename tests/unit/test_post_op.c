// SPDX-License-Identifier: MIT
/*
 * A post-op fused into a convolution's kernel costs its work there: the
 * profile's post_op_ns per output element, added to the head's kernel on
 * its device, unless the head's own time was measured with it (a family
 * holds it).  On squeezenet1_1 (every Conv fuses a Relu), all on cpu0, the
 * predicted latency must grow by exactly the fused Relus' elements times
 * the figure, less those of a head whose family is given; and a profile
 * naming an op that is no post-op, or a negative time, is refused.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "heteroopt/graph.h"
#include "heteroopt/sched.h"
#include "test_util.h"

/* Latency with everything on cpu0; *fused_s: the fused tasks' own costs summed. */
static double latency(const struct ho_graph *g, const struct ho_box *box, const char *text,
		      double *fused_s)
{
	struct ho_profile *pf = NULL;
	struct ho_problem *p = NULL;
	struct ho_error err = {0};
	double lat;

	if (t_profile_text(text, box, &pf, &err))
		fprintf(stderr, "profile: %s\n", err.msg);
	T_REQUIRE(pf);
	T_REQUIRE(ho_problem_from_graph(g, box, pf, &p, &err) == 0);
	lat = t_sim_latency(p, false);
	*fused_s = 0;
	for (uint32_t t = 0; p->fused_comp && t < p->n; t++)
		*fused_s += p->fused_comp[(size_t)t * p->d];
	ho_problem_free(p);
	ho_profile_free(pf);
	return lat;
}

int main(void)
{
	char model[4096], key[256], text[1024];
	struct ho_graph *g = NULL;
	struct ho_box *box = NULL;
	struct ho_profile *pf = NULL;
	struct ho_error err = {0};
	int64_t dims[4] = {1, 3, 224, 224};
	double relu_elems = 0, first_elems = 0, fused0, fused1, fused2;
	int32_t first = -1;
	static const char base[] =
	    "{\"devices\": {\"cpu0\": {\"launch_us\": 1, \"kernel_models\": {"
	    "\"conv\": {\"fixed_us\": 2, \"gflops\": 100, \"gbps\": 20},"
	    "\"eltwise\": {\"fixed_us\": 1, \"gflops\": 0, \"gbps\": 20},"
	    "\"pool\": {\"fixed_us\": 1, \"gflops\": 0, \"gbps\": 20},"
	    "\"movement\": {\"fixed_us\": 1, \"gflops\": 0, \"gbps\": 20}}%s}}}";

	if (t_model_path(model, sizeof(model), "squeezenet1_1.onnx")) {
		t_model_skipped("squeezenet1_1.onnx");
		return T_SKIP;
	}
	T_REQUIRE(ho_onnx_load(model, NULL, &g, &err) == 0);
	T_REQUIRE(ho_graph_bind_input(g, "input", dims, 4, &err) == 0);
	T_REQUIRE(ho_shape_infer(g, &err) == 0);
	ho_features_compute(g);
	T_REQUIRE(ho_box_load("boxes/this-machine-2cpu.json", &box, &err) == 0);

	/* the Relus each Conv fuses, and the first Conv's family */
	for (uint32_t i = 0; i < g->n_nodes; i++) {
		int32_t bn, post;

		if (strcmp(g->nodes[i].op_type, "Conv"))
			continue;
		ho_conv_chain(g, i, &bn, &post);
		if (post < 0 || strcmp(g->nodes[post].op_type, "Relu"))
			continue;
		double e = (double)ho_shape_numel(&g->tensors[g->nodes[post].outputs[0]].shape);

		relu_elems += e;
		if (first < 0) {
			first = (int32_t)i;
			first_elems = e;
		}
	}
	T_REQUIRE(first >= 0 && relu_elems > 0);
	ho_node_family(g, (uint32_t)first, key, sizeof(key));

	snprintf(text, sizeof(text), base, "");
	double plain = latency(g, box, text, &fused0);

	snprintf(text, sizeof(text), base, ", \"post_op_ns\": {\"Relu\": 0.5}");
	double with = latency(g, box, text, &fused1);

	T_CHECK(fused0 == 0, "no post_op_ns: fused work costs nothing (%g s)", fused0);
	T_CHECK(fabs(fused1 - relu_elems * 0.5e-9) < 1e-12, "fused Relus: %g s, expected %g",
		fused1, relu_elems * 0.5e-9);
	T_CHECK(fabs(with - plain - fused1) < 1e-9,
		"one device: the latency grows by the fused work, %g s against %g", with - plain,
		fused1);

	/* the first Conv measured with its Relu: that Relu adds nothing */
	char extra[512];

	snprintf(extra, sizeof(extra),
		 ", \"post_op_ns\": {\"Relu\": 0.5}, \"families\": {\"%s\": [[%.17g, 50]]}", key,
		 ho_node_work(&g->nodes[first]));
	snprintf(text, sizeof(text), base, extra);
	latency(g, box, text, &fused2);
	T_CHECK(fabs(fused1 - fused2 - first_elems * 0.5e-9) < 1e-12,
		"a head whose family was measured: its post-op not counted again (%g s less)",
		fused1 - fused2);

	snprintf(text, sizeof(text), base, ", \"post_op_ns\": {\"Conv\": 0.5}");
	T_CHECK(t_profile_text(text, box, &pf, &err) != 0 && strstr(err.msg, "post_op_ns.Conv"),
		"an op fused as no post-op is refused: %s", err.msg);
	snprintf(text, sizeof(text), base, ", \"post_op_ns\": {\"Sigmoid\": -1}");
	T_CHECK(t_profile_text(text, box, &pf, &err) != 0 && strstr(err.msg, "post_op_ns.Sigmoid"),
		"a negative time is refused: %s", err.msg);

	ho_box_free(box);
	ho_graph_free(g);
	return t_failures ? 1 : 0;
}
