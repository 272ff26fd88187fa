// SPDX-License-Identifier: MIT
/*
 * What the ONNX front end must get right on valid models: weights from
 * initializers, Constant nodes and external files; If/Loop as composite nodes
 * with their outer references; every attribute kind; shape binding.
 */
#include <math.h>

#include "heteroopt/graph.h"
#include "test_util.h"

static struct ho_graph *load(const char *name, const char *bind)
{
	char path[4096];
	struct ho_error err = {0};
	struct ho_graph *g = NULL;

	if (t_model_path(path, sizeof(path), name)) {
		t_model_skipped(name);
		return NULL;
	}
	if (ho_onnx_load(path, NULL, &g, &err)) {
		T_CHECK(0, "%s: %s", name, err.msg);
		return NULL;
	}
	if (bind) {
		char in[64];
		int64_t dims[HO_MAX_RANK];
		int rank;

		if (ho_parse_shape_arg(bind, in, sizeof(in), dims, &rank, &err) ||
		    ho_graph_bind_input(g, in, dims, rank, &err)) {
			T_CHECK(0, "%s: %s", name, err.msg);
			ho_graph_free(g);
			return NULL;
		}
	}
	if (ho_shape_infer(g, &err)) {
		T_CHECK(0, "%s: %s", name, err.msg);
		ho_graph_free(g);
		return NULL;
	}
	ho_features_compute(g);
	return g;
}

static const struct ho_tensor *tensor(const struct ho_graph *g, const char *name)
{
	int32_t id = ho_graph_find_tensor(g, name);

	T_CHECK(id >= 0, "tensor %s not found", name);
	return id >= 0 ? &g->tensors[id] : NULL;
}

static void external_data(void)
{
	struct ho_graph *g = load("external/mlp_external.onnx", "x=4x64");
	const struct ho_tensor *w, *y;

	if (!g)
		return;
	w = tensor(g, "w1");
	y = tensor(g, "y");
	if (w && y) {
		const float *f = w->data;

		T_CHECK(w->flags & HO_T_INITIALIZER, "w1 not an initializer");
		T_CHECK(w->data_len == 64 * 32 * 4, "w1 has %llu bytes",
			(unsigned long long)w->data_len);
		/* gen_models.py stores arange(64*32)/1000. */
		for (int i = 0; f && i < 64 * 32; i += 97)
			T_CHECK(fabsf(f[i] - (float)i / 1000.0f) < 1e-6f, "w1[%d] = %f", i, f[i]);
		T_CHECK(y->shape.rank == 2 && y->shape.dim[0] == 4 && y->shape.dim[1] == 32,
			"y shape");
		T_CHECK(y->bytes == 4 * 32 * 4, "y bytes %llu", (unsigned long long)y->bytes);
	}
	ho_graph_free(g);
}

static void control_flow(void)
{
	struct ho_graph *g = load("control_flow.onnx", NULL);
	const struct ho_node *ifn = NULL, *loop = NULL;

	if (!g)
		return;
	for (uint32_t i = 0; i < g->n_nodes; i++) {
		if (!strcmp(g->nodes[i].op_type, "If"))
			ifn = &g->nodes[i];
		if (!strcmp(g->nodes[i].op_type, "Loop"))
			loop = &g->nodes[i];
	}
	T_CHECK(ifn && loop, "If/Loop missing");
	if (ifn && loop) {
		T_CHECK(ifn->flags & HO_N_COMPOSITE && ifn->n_subgraphs == 2, "If has %u subgraphs",
			ifn->n_subgraphs);
		/* Both branches read x from the enclosing graph. */
		T_CHECK(ifn->n_implicit == 1 && !strcmp(g->tensors[ifn->implicit[0]].name, "x"),
			"If implicit inputs");
		T_CHECK(loop->n_implicit == 1 && !strcmp(g->tensors[loop->implicit[0]].name, "y"),
			"Loop reads y from outside");
		/* Loop body: one Add of 2x3 elements, three trips. */
		T_CHECK(loop->feat.flops == 3 * 6, "Loop flops %g", loop->feat.flops);
		T_CHECK(ifn->feat.flops == 6, "If flops %g", ifn->feat.flops);
		const struct ho_tensor *z = tensor(g, "z"), *out = tensor(g, "out");

		T_CHECK(z && z->shape.rank == 2 && z->shape.dim[0] == 2 && z->shape.dim[1] == 3,
			"z shape");
		T_CHECK(out && out->shape.rank == 2 && out->shape.dim[1] == 4, "out shape");
	}
	/* The If must run after the Greater that feeds it and the loop after the If. */
	uint32_t pos_if = 0, pos_loop = 0, pos_gt = 0;

	for (uint32_t i = 0; i < g->n_nodes; i++) {
		const char *op = g->nodes[g->topo[i]].op_type;

		if (!strcmp(op, "If"))
			pos_if = i;
		else if (!strcmp(op, "Loop"))
			pos_loop = i;
		else if (!strcmp(op, "Greater"))
			pos_gt = i;
	}
	T_CHECK(pos_gt < pos_if && pos_if < pos_loop, "topological order %u %u %u", pos_gt, pos_if,
		pos_loop);
	ho_graph_free(g);
}

static void paddle_constants(void)
{
	struct ho_graph *g = load("ch_PP-OCRv4_det_infer.onnx", "x=1x3x640x640");
	uint32_t with_data = 0, constants = 0;
	const struct ho_attr *at;

	if (!g)
		return;
	for (uint32_t i = 0; i < g->n_tensors; i++) {
		const struct ho_tensor *t = &g->tensors[i];

		if (t->flags & HO_T_CONSTANT) {
			constants++;
			/* Empty tensors (Resize's unused roi/scales) carry no bytes. */
			with_data += t->data_len == t->bytes && (t->data || !t->bytes);
		}
	}
	/* PaddleOCR keeps every weight in a Constant node. */
	T_CHECK(constants == 342 && with_data == 342, "%u constants, %u with data", constants,
		with_data);
	const struct ho_tensor *out = &g->tensors[g->outputs[0]];

	T_CHECK(out->shape.rank == 4 && out->shape.dim[2] == 640 && out->shape.dim[3] == 640,
		"detector output is not 640x640");
	/* Attribute kinds survive import. */
	for (uint32_t i = 0; i < g->n_nodes; i++) {
		if (strcmp(g->nodes[i].op_type, "Resize"))
			continue;
		at = ho_node_attr(&g->nodes[i], "mode");
		T_CHECK(at && at->type == HO_ATTR_STRING && at->s_len > 0, "Resize mode");
		break;
	}
	ho_graph_free(g);
}

static void weights_and_features(void)
{
	struct ho_graph *g = load("resnet18.onnx", "input=2x3x224x224");
	double macs = 0;
	uint64_t wbytes = 0;

	if (!g)
		return;
	for (uint32_t i = 0; i < g->n_tensors; i++)
		if (g->tensors[i].flags & HO_T_INITIALIZER) {
			T_CHECK(g->tensors[i].data && g->tensors[i].data_len == g->tensors[i].bytes,
				"%s data", g->tensors[i].name);
			wbytes += g->tensors[i].data_len;
		}
	for (uint32_t i = 0; i < g->n_nodes; i++) {
		const struct ho_node *nd = &g->nodes[i];

		macs += nd->feat.macs;
		if (!strcmp(nd->op_type, "Conv"))
			T_CHECK(nd->feat.op_class == HO_OPC_COMPUTE && nd->feat.intensity > 1,
				"%s class/intensity", nd->name);
		if (!strcmp(nd->op_type, "Flatten"))
			T_CHECK(nd->feat.op_class == HO_OPC_MOVEMENT && nd->feat.flops == 0,
				"Flatten");
		T_CHECK(nd->feat.bytes_read > 0 && nd->feat.bytes_written > 0, "%s bytes",
			nd->name);
	}
	/* Batch 2 doubles resnet18's 1.814 GMAC per image. */
	T_CHECK(fabs(macs - 2 * 1814073344.0) < 1, "batch-2 MACs %.0f", macs);
	T_CHECK(wbytes > 46000000 && wbytes < 47000000, "weights %llu bytes",
		(unsigned long long)wbytes);
	ho_graph_free(g);
}

static void shape_args(void)
{
	char name[32];
	int64_t d[HO_MAX_RANK];
	int r;
	struct ho_error err;

	T_CHECK(!ho_parse_shape_arg("x=1x3x224x224", name, sizeof(name), d, &r, &err) && r == 4 &&
		    d[3] == 224 && !strcmp(name, "x"),
		"plain");
	T_CHECK(!ho_parse_shape_arg("a=b=5", name, sizeof(name), d, &r, &err) &&
		    !strcmp(name, "a=b") && r == 1,
		"name with '='");
	T_CHECK(!ho_parse_shape_arg("s=", name, sizeof(name), d, &r, &err) && r == 0, "scalar");
	T_CHECK(ho_parse_shape_arg("x=1x-3", name, sizeof(name), d, &r, &err) < 0, "negative");
	T_CHECK(ho_parse_shape_arg("x=1xx3", name, sizeof(name), d, &r, &err) < 0, "empty dim");
	T_CHECK(ho_parse_shape_arg("=1", name, sizeof(name), d, &r, &err) < 0, "no name");
	T_CHECK(ho_parse_shape_arg("x=1x1x1x1x1x1x1x1x1", name, sizeof(name), d, &r, &err) < 0,
		"rank 9");
	T_CHECK(ho_parse_shape_arg("x=99999999999999999999", name, sizeof(name), d, &r, &err) < 0,
		"overflow");
}

int main(void)
{
	char path[4096];

	if (t_model_path(path, sizeof(path), "control_flow.onnx")) {
		fprintf(stderr, "skipped: models not generated (scripts/models.sh)\n");
		return T_SKIP;
	}
	shape_args();
	external_data();
	control_flow();
	paddle_constants();
	weights_and_features();
	if (t_failures)
		fprintf(stderr, "%d checks failed\n", t_failures);
	return t_failures ? 1 : 0;
}
