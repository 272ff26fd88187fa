// SPDX-License-Identifier: MIT
/*
 * The cost model's families on a real model: a node's time is its family's
 * points at its work, the mean where several nodes of the family had that
 * work (so that a model the probe ran sums to what it measured), log-log
 * between two works around it, at the nearest point's rate beyond them and
 * down to the class's fixed cost below; and a family's name does not depend
 * on which default attributes the exporter wrote out.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "heteroopt/sched.h"
#include "test_util.h"

static const struct ho_box *box;
static const struct ho_graph *g;

/* Node id's time on cpu0 under a profile whose only family is key's, with points pts,
 * and the device's further fields more (", \"kernel_models\": ..." or ""). */
static double cost_more(uint32_t id, const char *key, const char *pts, const char *more)
{
	char path[] = "/tmp/ho-family-XXXXXX";
	int fd = mkstemp(path);
	struct ho_profile *prof = NULL;
	struct ho_error err = {0};
	double t = -1;
	FILE *f;

	if (fd < 0 || !(f = fdopen(fd, "w")))
		return -1;
	fprintf(f,
		"{\"devices\": {\"cpu0\": {\"launch_us\": 0, \"kernel_scale\": 1,"
		" \"families\": {\"%s\": %s}%s}}}",
		key, pts, more);
	fclose(f);
	if (ho_profile_load(path, box, &prof, &err))
		fprintf(stderr, "profile: %s\n", err.msg);
	else
		t = ho_cost_node(g, &g->nodes[id], box, 0, prof) * 1e6;
	ho_profile_free(prof);
	unlink(path);
	return t;
}

static double cost_with(uint32_t id, const char *key, const char *pts)
{
	return cost_more(id, key, pts, "");
}

/*
 * A family measured with other post-ops than the node's (the sweep fuses a
 * Relu, a model a Clip, a Swish or none): the same kernel, less what its
 * post-ops cost; and past its largest point a compute family grows as its
 * class model does, not with the work, and far past it is the class model.
 */
static void other_chain_and_beyond(uint32_t a, const char *key)
{
	const struct ho_node *nd = &g->nodes[a];
	double w = ho_node_work(nd), e = (double)ho_shape_numel(&g->tensors[nd->outputs[0]].shape);
	char base[256], other[300], pts[256], more[256];
	const char *plus = strstr(key, " +");

	T_REQUIRE(plus != NULL);
	snprintf(base, sizeof(base), "%.*s", (int)(plus - key), key);
	snprintf(other, sizeof(other), "%s +Swish", base);
	snprintf(pts, sizeof(pts), "[[%.17g, 300]]", w);
	snprintf(more, sizeof(more), ", \"post_op_ns\": {\"Sigmoid\": %.17g}", 100e3 / e);
	T_CHECK(fabs(cost_more(a, other, pts, more) - 200) < 1e-6,
		"measured with a Swish of 100 us: 300 less it, %g", cost_more(a, other, pts, more));
	T_CHECK(fabs(cost_more(a, base, pts, "") - 300) < 1e-6,
		"measured with no post-op: its time, %g", cost_more(a, base, pts, ""));
	/* a key its own extends ("group=1" and "group=16") is another kernel's */
	snprintf(other, sizeof(other), "%s6 +Relu", base);
	T_CHECK(cost_more(a, other, pts, "") == cost_more(a, "MaxPool float32", pts, ""),
		"another kernel's family (%s) is not its: %g, as with none", other,
		cost_more(a, other, pts, ""));

	/* the class model: 10 us fixed plus 100 us of FLOPs at this node's work */
	snprintf(more, sizeof(more),
		 ", \"kernel_models\": {\"conv\": {\"fixed_us\": 10, \"gflops\": %.17g, "
		 "\"gbps\": 0, \"block\": 1}}",
		 nd->feat.flops / 100e-6 / 1e9);
	snprintf(pts, sizeof(pts), "[[%.17g, 40]]", w / 2);
	T_CHECK(fabs(cost_more(a, key, pts, more) - 40 * 110 / 60.) < 1e-6,
		"a point at half its work: 40 us grown as the class from 60 to 110, %g",
		cost_more(a, key, pts, more));
	snprintf(pts, sizeof(pts), "[[%.17g, 40]]", w / 100);
	T_CHECK(fabs(cost_more(a, key, pts, more) - 110) < 1e-6,
		"a point at a hundredth of its work: the class model, %g",
		cost_more(a, key, pts, more));
}

/*
 * A grouped convolution's channels pad to the class's block group by group:
 * RegNet's groups of 8 against a block of 16 take twice their FLOPs' time, a
 * dense layer's 64 channels none more.
 */
static void grouped_blocks(uint32_t dense)
{
	const struct ho_graph *keep = g;
	struct ho_graph *rg = NULL;
	int64_t dims[4] = {1, 3, 224, 224};
	char more[256];
	const double gflops = 100;

	snprintf(more, sizeof(more),
		 ", \"kernel_models\": {\"conv\": {\"fixed_us\": 0, \"gflops\": %g, "
		 "\"gbps\": 0, \"block\": 16}}",
		 gflops);
	T_CHECK(fabs(cost_more(dense, "none", "[[1, 1]]", more) -
		     g->nodes[dense].feat.flops / gflops / 1e3) < 1e-6,
		"a dense 64-channel layer: its FLOPs' time, %g us",
		cost_more(dense, "none", "[[1, 1]]", more));
	if (t_load_model("regnet_y_400mf.onnx", "input", dims, 4, &rg)) {
		printf("regnet_y_400mf.onnx not in $HETEROOPT_MODELS: its groups unchecked\n");
		return;
	}
	g = rg;
	for (uint32_t i = 0; i < rg->n_nodes; i++) {
		const struct ho_attr *group = ho_node_attr(&rg->nodes[i], "group");
		const struct ho_tensor *w = ho_node_input(rg, &rg->nodes[i], 1);

		if (strcmp(rg->nodes[i].op_type, "Conv") || !group || group->i <= 1 || !w ||
		    w->shape.dim[1] != 8)
			continue;
		T_CHECK(fabs(cost_more(i, "none", "[[1, 1]]", more) -
			     2 * rg->nodes[i].feat.flops * ho_node_tap_share(rg, &rg->nodes[i]) /
				 gflops / 1e3) < 1e-6,
			"%s, groups of 8 in %lld: twice its FLOPs' time, %g us", rg->nodes[i].name,
			(long long)group->i, cost_more(i, "none", "[[1, 1]]", more));
		break;
	}
	g = keep;
	ho_graph_free(rg);
}

/*
 * DeepLabV3's atrous convolutions over a 14x14 map: at dilation 12 some outputs read
 * each of the 3 tap rows of an axis inside the map, at 24 and 36 only the centre one;
 * priced at that share of their FLOPs.  A 3x3 at padding 1 reads every tap.
 */
static void atrous_taps(void)
{
	static const struct {
		int64_t dilation, taps;
	} want[3] = {{12, 3}, {24, 1}, {36, 1}};
	const struct ho_graph *keep = g;
	struct ho_graph *dg = NULL;
	int64_t dims[4] = {1, 3, 224, 224};
	const char *more = ", \"kernel_models\": {\"conv\": {\"fixed_us\": 0, \"gflops\": 100, "
			   "\"gbps\": 0, \"block\": 1}}";
	int seen = 0, plain = 0;

	for (uint32_t i = 0; i < keep->n_nodes; i++) {
		const struct ho_tensor *w = ho_node_input(keep, &keep->nodes[i], 1);

		if (strcmp(keep->nodes[i].op_type, "Conv") || w->shape.dim[2] != 3)
			continue;
		plain++;
		T_CHECK(ho_node_tap_share(keep, &keep->nodes[i]) == 1,
			"%s: a 3x3 keeps %g of its taps", keep->nodes[i].name,
			ho_node_tap_share(keep, &keep->nodes[i]));
	}
	T_CHECK(plain > 0, "no 3x3 convolution");
	if (t_load_model("deeplabv3_mobilenet_v3_large.onnx", "input", dims, 4, &dg)) {
		printf("deeplabv3_mobilenet_v3_large.onnx not in $HETEROOPT_MODELS: atrous "
		       "unchecked\n");
		return;
	}
	g = dg;
	for (uint32_t i = 0; i < dg->n_nodes; i++) {
		const struct ho_attr *dl = ho_node_attr(&dg->nodes[i], "dilations");
		double share = ho_node_tap_share(dg, &dg->nodes[i]);

		for (int k = 0; k < 3 && dl && dl->n == 2; k++) {
			double r = (double)want[k].taps / 3;

			if (dl->ints[0] != want[k].dilation)
				continue;
			seen++;
			T_CHECK(fabs(share - r * r) < 1e-12, "%s, dilation %lld: %g of its taps",
				dg->nodes[i].name, (long long)want[k].dilation, share);
			T_CHECK(fabs(cost_more(i, "none", "[[1, 1]]", more) -
				     dg->nodes[i].feat.flops * r * r / 100e3) < 1e-6,
				"%s priced at that share: %g us", dg->nodes[i].name,
				cost_more(i, "none", "[[1, 1]]", more));
		}
	}
	T_CHECK(seen == 3, "%d atrous convolutions found", seen);
	g = keep;
	ho_graph_free(dg);
}

/*
 * A dense 3x3 stride-1 convolution is a class of its own (the cpu backend runs it on a
 * Winograd kernel): priced by its model where the profile fitted one, by the
 * convolutions' where it did not; one to a 13x13 map, a strided 3x3 and a 1x1 stay
 * convolutions.
 */
static void winograd_class(void)
{
	uint32_t k3 = UINT32_MAX, k3_13 = UINT32_MAX, s2 = UINT32_MAX, k1 = UINT32_MAX;
	const char *both = ", \"kernel_models\": {\"conv\": {\"fixed_us\": 0, \"gflops\": 100, "
			   "\"gbps\": 0, \"block\": 1}, \"conv3x3\": {\"fixed_us\": 0, "
			   "\"gflops\": 200, \"gbps\": 0, \"block\": 1}}",
		   *conv = ", \"kernel_models\": {\"conv\": {\"fixed_us\": 0, \"gflops\": 100, "
			   "\"gbps\": 0, \"block\": 1}}";

	for (uint32_t i = 0; i < g->n_nodes; i++) {
		const struct ho_tensor *w = ho_node_input(g, &g->nodes[i], 1);
		int64_t st[2];

		if (strcmp(g->nodes[i].op_type, "Conv") || !w)
			continue;
		ho_node_attr_ints(&g->nodes[i], "strides", st, 2, 1);
		if (w->shape.dim[2] == 1)
			k1 = i;
		else if (st[0] == 2)
			s2 = i;
		else if (w->shape.dim[2] == 3 && k3 == UINT32_MAX)
			k3 = i; /* fire2's, at 55x55 */
		else if (w->shape.dim[2] == 3)
			k3_13 = i; /* fire9's, at 13x13 */
	}
	T_REQUIRE(k3 != UINT32_MAX && k3_13 != UINT32_MAX && s2 != UINT32_MAX && k1 != UINT32_MAX);
	T_CHECK(ho_kernel_class(g, &g->nodes[k3]) == HO_KC_CONV_3X3 &&
		    ho_kernel_class(g, &g->nodes[k3_13]) == HO_KC_CONV &&
		    ho_kernel_class(g, &g->nodes[s2]) == HO_KC_CONV &&
		    ho_kernel_class(g, &g->nodes[k1]) == HO_KC_CONV,
		"classes: %s, %s at 13x13, %s, %s",
		ho_kernel_class_name(ho_kernel_class(g, &g->nodes[k3])),
		ho_kernel_class_name(ho_kernel_class(g, &g->nodes[k3_13])),
		ho_kernel_class_name(ho_kernel_class(g, &g->nodes[s2])),
		ho_kernel_class_name(ho_kernel_class(g, &g->nodes[k1])));
	T_CHECK(fabs(cost_more(k3, "none", "[[1, 1]]", both) -
		     g->nodes[k3].feat.flops / 200 / 1e3) < 1e-6,
		"%s on conv3x3's model: %g us", g->nodes[k3].name,
		cost_more(k3, "none", "[[1, 1]]", both));
	T_CHECK(fabs(cost_more(k3, "none", "[[1, 1]]", conv) -
		     g->nodes[k3].feat.flops / 100 / 1e3) < 1e-6,
		"... on conv's where the profile has no conv3x3: %g us",
		cost_more(k3, "none", "[[1, 1]]", conv));
	T_CHECK(fabs(cost_more(s2, "none", "[[1, 1]]", both) -
		     g->nodes[s2].feat.flops / 100 / 1e3) < 1e-6,
		"a strided 3x3 on conv's: %g us", cost_more(s2, "none", "[[1, 1]]", both));
}

int main(void)
{
	struct ho_graph *gr = NULL;
	struct ho_box *b = NULL;
	struct ho_error err = {0};
	int64_t dims[4] = {1, 3, 224, 224};
	char key[256], other[256], pts[512];
	uint32_t a = UINT32_MAX, twin = UINT32_MAX;

	if (t_load_model("squeezenet1_1.onnx", "input", dims, 4, &gr)) {
		t_model_skipped("squeezenet1_1.onnx");
		return T_SKIP;
	}
	T_REQUIRE(ho_box_load("boxes/this-machine-2cpu.json", &b, &err) == 0);
	g = gr;
	box = b;

	/* two convolutions of one family and one work: fire2's and fire3's expand 1x1 */
	for (uint32_t i = 0; i < g->n_nodes && twin == UINT32_MAX; i++) {
		if (strcmp(g->nodes[i].op_type, "Conv"))
			continue;
		ho_node_family(g, i, key, sizeof(key));
		for (uint32_t j = 0; j < i; j++) {
			if (strcmp(g->nodes[j].op_type, "Conv"))
				continue;
			ho_node_family(g, j, other, sizeof(other));
			if (!strcmp(key, other) &&
			    ho_node_work(&g->nodes[i]) == ho_node_work(&g->nodes[j])) {
				a = j;
				twin = i;
				break;
			}
		}
	}
	T_REQUIRE(twin != UINT32_MAX);
	ho_node_family(g, a, key, sizeof(key));
	double w = ho_node_work(&g->nodes[a]);

	snprintf(pts, sizeof(pts), "[[%.17g, 100], [%.17g, 300]]", w, w);
	T_CHECK(fabs(cost_with(a, key, pts) - 200) < 1e-6, "two points at its work: the mean, %g",
		cost_with(a, key, pts));
	T_CHECK(fabs(cost_with(twin, key, pts) - 200) < 1e-6, "its twin: the same mean, %g",
		cost_with(twin, key, pts));
	snprintf(pts, sizeof(pts), "[[%.17g, 50], [%.17g, 150], [%.17g, 400]]", w / 2, w / 2,
		 w * 2);
	T_CHECK(fabs(cost_with(a, key, pts) - 200) < 1e-6,
		"between the mean of 50 and 150 at half its work and 400 at twice it: %g",
		cost_with(a, key, pts));
	snprintf(pts, sizeof(pts), "[[%.17g, 10], [%.17g, 30]]", w / 4, w / 4);
	T_CHECK(fabs(cost_with(a, key, pts) - 80) < 1e-6,
		"beyond the largest work: at its rate, %g", cost_with(a, key, pts));
	snprintf(pts, sizeof(pts), "[[%.17g, 100], [%.17g, 300]]", w * 2, w * 2);
	T_CHECK(fabs(cost_with(a, key, pts) - 100) < 1e-6,
		"below the smallest work, no class model: down to zero, %g",
		cost_with(a, key, pts));
	snprintf(pts, sizeof(pts), "[[%.17g, 100], [%.17g, 300]]", w, w / 2);
	T_CHECK(cost_with(a, key, pts) < 0, "points out of order are refused");

	other_chain_and_beyond(a, key);
	grouped_blocks(a);
	atrous_taps();
	winograd_class();

	/*
	 * One kernel, one family however the exporter spelt it: PyTorch writes
	 * default dilations, strides and pads out, the probe's sweep leaves them
	 * to the defaults.  Unnamed, each is written as its default.
	 */
	struct ho_node *nd = &gr->nodes[a];
	static const char *const walk[] = {"dilations", "strides", "pads"};
	uint32_t spelt = 0;

	for (uint32_t i = 0; i < nd->n_attrs; i++)
		for (size_t k = 0; k < sizeof(walk) / sizeof(walk[0]); k++) {
			struct ho_attr *at = &nd->attrs[i];
			bool dflt =
			    at->type == HO_ATTR_INTS && at->n > 0 && !strcmp(at->name, walk[k]);

			for (size_t j = 0; dflt && j < at->n; j++)
				dflt = at->ints[j] == (k == 2 ? 0 : 1);
			if (dflt) {
				at->name = "unnamed";
				spelt++;
			}
		}
	ho_node_family(g, a, other, sizeof(other));
	T_CHECK(spelt >= 2 && !strcmp(key, other),
		"defaults left unnamed (%u of them): \"%s\", spelt out: \"%s\"", spelt, other, key);
	T_CHECK(strstr(other, " strides=1x1 dilations=1x1 pads=0x0x0x0 group=1") != NULL,
		"a 1x1 convolution's walk, written out: %s", other);

	ho_box_free(b);
	ho_graph_free(gr);
	return t_failures ? 1 : 0;
}
