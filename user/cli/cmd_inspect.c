// SPDX-License-Identifier: MIT
/* heteroopt inspect: load a model, bind its inputs, infer shapes, report costs. */
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "heteroopt/graph.h"
#include "heteroopt/runtime.h"

static void fmt_shape(const struct ho_shape *s, char *buf, size_t n)
{
	size_t p = 0;

	if (s->rank < 0) {
		snprintf(buf, n, "?");
		return;
	}
	p += (size_t)snprintf(buf, n, "[");
	for (int i = 0; i < s->rank && p < n; i++)
		p += s->dim[i] >= 0
			 ? (size_t)snprintf(buf + p, n - p, "%s%" PRId64, i ? "," : "", s->dim[i])
			 : (size_t)snprintf(buf + p, n - p, "%s?", i ? "," : "");
	if (p < n)
		snprintf(buf + p, n - p, "]");
}

static void fmt_si(double v, const char *unit, char *buf, size_t n)
{
	const char *pre[] = {"", "K", "M", "G", "T", "P"};
	int k = 0;

	while (v >= 1000 && k < 5) {
		v /= 1000;
		k++;
	}
	snprintf(buf, n, "%.3g %s%s", v, pre[k], unit);
}

struct op_count {
	const char *op;
	unsigned n;
};

static int cmp_count(const void *a, const void *b)
{
	const struct op_count *x = a, *y = b;

	if (x->n != y->n)
		return x->n < y->n ? 1 : -1;
	return strcmp(x->op, y->op);
}

static size_t histogram(const struct ho_graph *g, struct op_count *h)
{
	size_t n = 0;

	for (uint32_t i = 0; i < g->n_nodes; i++) {
		size_t k;

		for (k = 0; k < n; k++)
			if (!strcmp(h[k].op, g->nodes[i].op_type))
				break;
		if (k == n) {
			h[n].op = g->nodes[i].op_type;
			h[n++].n = 0;
		}
		h[k].n++;
	}
	qsort(h, n, sizeof(*h), cmp_count);
	return n;
}

static bool is_weight(const struct ho_tensor *t)
{
	return (t->flags & (HO_T_INITIALIZER | HO_T_CONSTANT)) && !(t->flags & HO_T_FOLDED);
}

static int64_t param_count(const struct ho_graph *g, uint64_t *bytes)
{
	int64_t n = 0;

	*bytes = 0;
	for (uint32_t i = 0; i < g->n_tensors; i++) {
		const struct ho_tensor *t = &g->tensors[i];

		/* Weights: initializers and Constant outputs of more than a handful of elements. */
		if (is_weight(t) && ho_shape_numel(&t->shape) > 0 && t->dtype != HO_DT_INT64) {
			n += ho_shape_numel(&t->shape);
			*bytes += t->bytes;
		}
	}
	return n;
}

static json_t *shape_json(const struct ho_shape *s)
{
	json_t *a;

	if (s->rank < 0)
		return json_null();
	a = json_array();
	for (int i = 0; i < s->rank; i++)
		json_array_append_new(a, s->dim[i] >= 0 ? json_integer(s->dim[i]) : json_null());
	return a;
}

static json_t *tensor_ids_json(const struct ho_graph *g, const int32_t *ids, uint32_t n)
{
	json_t *a = json_array();

	for (uint32_t i = 0; i < n; i++)
		json_array_append_new(a, ids[i] >= 0 ? json_string(g->tensors[ids[i]].name)
						     : json_string(""));
	return a;
}

/* What the cpu backend refuses, collected for the text or the JSON. */
struct refusals {
	json_t *list; /* JSON: one object per refusal; NULL: print the lines */
	int n;
};

static void on_refusal(const struct ho_node *n, const char *why, void *arg)
{
	struct refusals *r = arg;

	r->n++;
	if (!r->list) {
		printf("  %s\n", why);
		return;
	}
	json_t *o = json_object();

	json_object_set_new(o, "node", json_string(n->name));
	json_object_set_new(o, "op", json_string(n->op_type));
	json_object_set_new(o, "why", json_string(why));
	json_array_append_new(r->list, o);
}

/*
 * What backend (NULL: the host's, its kernels prepared for real) refuses of g, each
 * refusal to fn (NULL: none): how many, or -errno.
 */
static int refusals_of(const char *backend, const struct ho_graph *g, ho_rt_refusal_fn fn,
		       struct refusals *r)
{
	bool *takes;
	int ret;

	if (!backend)
		return ho_rt_check(g, fn, r, NULL);
	if (!(takes = calloc(g->n_nodes + 1, sizeof(bool))))
		return -ENOMEM;
	ret = ho_rt_backend_nodes(backend, g, takes, fn, r, NULL);
	free(takes);
	return ret;
}

static int print_json(const char *path, const struct ho_graph *g, const char *backend)
{
	struct op_count *h = calloc(g->n_nodes + 1, sizeof(*h));
	json_t *root = json_object(), *ops = json_object(), *tensors = json_object();
	json_t *nodes = json_array(), *opsets = json_object();
	double flops = 0, macs = 0;
	uint64_t pbytes;
	size_t nh;

	if (!h)
		return 1;
	nh = histogram(g, h);
	for (size_t i = 0; i < nh; i++)
		json_object_set_new(ops, h[i].op, json_integer(h[i].n));
	free(h);
	for (uint32_t i = 0; i < g->n_opsets; i++)
		json_object_set_new(opsets, g->opsets[i].domain,
				    json_integer(g->opsets[i].version));
	/* a folded chain's inner tensors are the model's, not ours: the nodes name them */
	bool *absorbed = calloc(g->n_tensors + 1, sizeof(bool));

	if (!absorbed)
		return 1;
	for (uint32_t i = 0; i < g->n_nodes; i++)
		for (uint32_t k = 0; k < g->nodes[i].n_absorbed; k++) {
			int32_t t = ho_graph_find_tensor(g, g->nodes[i].absorbed[k]);

			if (t >= 0)
				absorbed[t] = true;
		}
	for (uint32_t i = 0; i < g->n_tensors; i++) {
		const struct ho_tensor *t = &g->tensors[i];
		json_t *o;

		if (absorbed[i])
			continue;
		o = json_object();
		json_object_set_new(o, "dtype", json_string(ho_dtype_name(t->dtype)));
		json_object_set_new(o, "shape", shape_json(&t->shape));
		json_object_set_new(o, "bytes", json_integer((json_int_t)t->bytes));
		json_object_set_new(o, "weight", json_boolean(is_weight(t)));
		json_object_set_new(o, "folded", json_boolean(t->flags & HO_T_FOLDED));
		json_object_set_new(tensors, t->name, o);
	}
	free(absorbed);
	for (uint32_t i = 0; i < g->n_nodes; i++) {
		const struct ho_node *nd = &g->nodes[g->topo[i]];
		json_t *o = json_object();

		flops += nd->feat.flops;
		macs += nd->feat.macs;
		json_object_set_new(o, "name", json_string(nd->name));
		json_object_set_new(o, "op", json_string(nd->op_type));
		json_object_set_new(o, "domain", json_string(nd->domain));
		json_object_set_new(o, "inputs", tensor_ids_json(g, nd->inputs, nd->n_inputs));
		json_object_set_new(o, "outputs", tensor_ids_json(g, nd->outputs, nd->n_outputs));
		json_object_set_new(o, "class", json_string(ho_op_class_name(nd->feat.op_class)));
		json_object_set_new(o, "flops", json_real(nd->feat.flops));
		json_object_set_new(o, "macs", json_real(nd->feat.macs));
		json_object_set_new(o, "bytes_read", json_integer((json_int_t)nd->feat.bytes_read));
		json_object_set_new(o, "bytes_written",
				    json_integer((json_int_t)nd->feat.bytes_written));
		json_object_set_new(o, "param_bytes",
				    json_integer((json_int_t)nd->feat.param_bytes));
		json_object_set_new(o, "intensity", json_real(nd->feat.intensity));
		json_object_set_new(o, "folded", json_boolean(nd->flags & HO_N_FOLDED));
		json_object_set_new(o, "subgraphs", json_integer(nd->n_subgraphs));
		json_t *ab = json_array();

		for (uint32_t k = 0; k < nd->n_absorbed; k++)
			json_array_append_new(ab, json_string(nd->absorbed[k]));
		json_object_set_new(o, "absorbed", ab);
		json_array_append_new(nodes, o);
	}
	json_object_set_new(root, "model", json_string(path));
	json_object_set_new(root, "producer", json_string(g->producer));
	json_object_set_new(root, "ir_version", json_integer(g->ir_version));
	json_object_set_new(root, "opsets", opsets);
	json_object_set_new(root, "node_count", json_integer(g->n_nodes));
	json_object_set_new(root, "op_histogram", ops);
	json_object_set_new(root, "parameters", json_integer(param_count(g, &pbytes)));
	json_object_set_new(root, "parameter_bytes", json_integer((json_int_t)pbytes));
	json_object_set_new(root, "flops", json_real(flops));
	json_object_set_new(root, "macs", json_real(macs));
	json_object_set_new(root, "inputs", tensor_ids_json(g, g->inputs, g->n_inputs));
	json_object_set_new(root, "outputs", tensor_ids_json(g, g->outputs, g->n_outputs));
	json_object_set_new(root, "tensors", tensors);
	json_object_set_new(root, "nodes", nodes);
	struct refusals r = {json_array(), 0};

	if (refusals_of(backend, g, on_refusal, &r) < 0)
		json_object_set_new(root, "unrunnable", json_null());
	else
		json_object_set_new(root, "unrunnable", r.list);
	int ret = json_dumpf(root, stdout, JSON_INDENT(1) | JSON_PRESERVE_ORDER);

	fputc('\n', stdout);
	json_decref(root);
	return ret ? 1 : 0;
}

static int cmp_bytes_desc(const void *a, const void *b, void *ctx)
{
	const struct ho_graph *g = ctx;
	uint64_t x = g->tensors[*(const int32_t *)a].bytes,
		 y = g->tensors[*(const int32_t *)b].bytes;

	return x < y ? 1 : x > y ? -1 : 0;
}

static void print_text(const char *path, const struct ho_graph *g, int top, const char *backend,
		       uint32_t n_decided, int n_bounded)
{
	const char *be = backend ? backend : "cpu";
	struct op_count *h = calloc(g->n_nodes + 1, sizeof(*h));
	int32_t *order = malloc((g->n_tensors + 1) * sizeof(*order));
	char s1[128], s2[64], s3[64];
	double flops = 0, macs = 0;
	uint64_t pbytes;
	int64_t params = param_count(g, &pbytes);
	uint32_t n_act = 0, folded = 0, absorbed = 0, into = 0;

	if (!h || !order) {
		free(h);
		free(order);
		return;
	}
	for (uint32_t i = 0; i < g->n_nodes; i++) {
		flops += g->nodes[i].feat.flops;
		macs += g->nodes[i].feat.macs;
		folded += !!(g->nodes[i].flags & HO_N_FOLDED);
		absorbed += g->nodes[i].n_absorbed;
		into += g->nodes[i].n_absorbed > 0;
	}
	printf("model      %s\n", path);
	printf("producer   %s, IR version %" PRId64 ", opset",
	       *g->producer ? g->producer : "(unknown)", g->ir_version);
	for (uint32_t i = 0; i < g->n_opsets; i++)
		printf(" %s%s%" PRId64, *g->opsets[i].domain ? g->opsets[i].domain : "ai.onnx", ":",
		       g->opsets[i].version);
	printf("\n");
	for (uint32_t i = 0; i < g->n_inputs; i++) {
		const struct ho_tensor *t = &g->tensors[g->inputs[i]];

		fmt_shape(&t->shape, s1, sizeof(s1));
		printf("input      %s %s %s\n", t->name, ho_dtype_name(t->dtype), s1);
	}
	for (uint32_t i = 0; i < g->n_outputs; i++) {
		const struct ho_tensor *t = &g->tensors[g->outputs[i]];

		fmt_shape(&t->shape, s1, sizeof(s1));
		printf("output     %s %s %s\n", t->name, ho_dtype_name(t->dtype), s1);
	}
	printf("nodes      %u (%u folded at load time)\n", g->n_nodes, folded);
	if (into) {
		printf("           of the model's %u, %u fused at load into %u (",
		       g->n_nodes + absorbed, absorbed + into, into);
		/* the operators they became, each once, in the graph's order */
		for (uint32_t i = 0, shown = 0; i < g->n_nodes; i++) {
			bool seen = !g->nodes[i].n_absorbed;

			for (uint32_t j = 0; j < i && !seen; j++)
				seen = g->nodes[j].n_absorbed &&
				       !strcmp(g->nodes[j].op_type, g->nodes[i].op_type);
			if (!seen)
				printf("%s%s", shown++ ? ", " : "", g->nodes[i].op_type);
		}
		printf(")\n");
	}
	size_t nh = histogram(g, h);

	printf("ops       ");
	for (size_t i = 0; i < nh; i++)
		printf(" %s:%u", h[i].op, h[i].n);
	printf("\n");
	fmt_si((double)params, "", s2, sizeof(s2));
	fmt_si((double)pbytes, "B", s3, sizeof(s3));
	printf("parameters %s(%s)\n", s2, s3);
	fmt_si(flops, "FLOP", s2, sizeof(s2));
	fmt_si(macs, "MAC", s3, sizeof(s3));
	printf("compute    %s (%s in Conv/MatMul/Gemm)\n", s2, s3);
	uint32_t widened = 0;

	for (uint32_t i = 0; i < g->n_tensors; i++)
		widened += !!(g->tensors[i].flags & HO_T_WIDENED);
	if (widened)
		printf("precision  float16 weights: computed in float32 (%u tensors), the model's "
		       "float16 inputs and outputs cast at the boundary\n",
		       widened);
	/* every node the runtime cannot run, up front and all at once */
	int tasks = 0, refused;
	struct refusals r = {NULL, 0};

	for (uint32_t i = 0; i < g->n_nodes; i++)
		tasks += ho_node_is_task(&g->nodes[i]);
	fflush(stdout);
	refused = refusals_of(backend, g, NULL, &r);
	if (refused < 0)
		printf("runtime    not checked (out of memory)\n");
	else if (!refused)
		printf("runtime    all %d nodes run on the %s backend\n", tasks, be);
	else {
		printf("runtime    %d of %d nodes cannot run on the %s backend yet:\n", refused,
		       tasks, be);
		refusals_of(backend, g, on_refusal, &r);
	}
	if (n_decided)
		printf("run-time   %u nodes' shapes only a run decides (a NonZero's, a "
		       "NonMaxSuppression's, and all after): planned as each run meets them\n",
		       n_decided);
	if (n_bounded > 0) {
		printf("bounded    %d tensors whose extents a run decides, priced at their most "
		       "(shapes and costs below follow from them):\n",
		       n_bounded);
		cli_bounds_print(g, "  ", n_bounded);
	}

	for (uint32_t i = 0; i < g->n_tensors; i++)
		if (!is_weight(&g->tensors[i]) && !(g->tensors[i].flags & HO_T_FOLDED))
			order[n_act++] = (int32_t)i;
	qsort_r(order, n_act, sizeof(*order), cmp_bytes_desc, (void *)g);
	printf("largest activations:\n");
	for (int i = 0; i < top && (uint32_t)i < n_act; i++) {
		const struct ho_tensor *t = &g->tensors[order[i]];

		fmt_shape(&t->shape, s1, sizeof(s1));
		fmt_si((double)t->bytes, "B", s2, sizeof(s2));
		printf("  %-40.40s %-8s %-22s %s\n", t->name, ho_dtype_name(t->dtype), s1, s2);
	}
	printf("\n%-5s %-32s %-18s %-8s %-22s %10s %10s %10s %10s %7s\n", "#", "node", "op",
	       "class", "output shape", "MFLOP", "read KB", "write KB", "param KB", "FLOP/B");
	for (uint32_t i = 0; i < g->n_nodes; i++) {
		const struct ho_node *nd = &g->nodes[g->topo[i]];
		const struct ho_tensor *o =
		    nd->n_outputs && nd->outputs[0] >= 0 ? &g->tensors[nd->outputs[0]] : NULL;

		if (o)
			fmt_shape(&o->shape, s1, sizeof(s1));
		else
			snprintf(s1, sizeof(s1), "-");
		printf("%-5u %-32.32s %-18.18s %-8s %-22.22s %10.2f %10.1f %10.1f %10.1f %7.2f\n",
		       i, nd->name, nd->op_type, ho_op_class_name(nd->feat.op_class), s1,
		       nd->feat.flops / 1e6, (double)nd->feat.bytes_read / 1024,
		       (double)nd->feat.bytes_written / 1024, (double)nd->feat.param_bytes / 1024,
		       nd->feat.intensity);
	}
	free(h);
	free(order);
}

struct inspect_args {
	const char *model;
	struct cli_list shapes, bounds;
	bool json;
	unsigned long long top;
	const char *backend;
};

static const struct cli_opt inspect_opts[] = {
    {"--shape", NULL, CLI_LIST, "NAME=D0xD1x...",
     "bind the extents of input NAME (needed for symbolic ones);\nrepeatable",
     offsetof(struct inspect_args, shapes), 0, 0},
    {"--bound", NULL, CLI_LIST, "TENSOR=N",
     "the most each extent of TENSOR holds where a run decides it\n"
     "(default: the most its operator allows); repeatable",
     offsetof(struct inspect_args, bounds), 0, 0},
    {"--json", NULL, CLI_FLAG, NULL, "print the graph, shapes and per-node costs as JSON",
     offsetof(struct inspect_args, json), 0, 0},
    {"--top", NULL, CLI_COUNT, "N", "list the N largest tensors (default 5)",
     offsetof(struct inspect_args, top), 0, 1000000},
    {"--backend", NULL, CLI_TEXT, "NAME",
     "list the nodes backend NAME (opencl, ...) refuses,\nasked as the scheduler asks it "
     "(default: the cpu\nbackend's kernels, prepared)",
     offsetof(struct inspect_args, backend), 0, 0},
    {0},
};

static const struct cli_command inspect_cmd = {
    .name = "inspect",
    .usage = "MODEL.onnx [--shape NAME=D0xD1x...]... [--bound TENSOR=N]... [--json] [--top N]\n"
	     "       [--backend NAME]",
    .about = "Read an ONNX model, bind its inputs, infer every tensor's shape and print\n"
	     "each node's operator, op class, output shape, FLOPs, bytes and intensity.",
    .positional = "model",
    .positional_at = offsetof(struct inspect_args, model),
    .opts = inspect_opts,
};

int cmd_inspect(int argc, char **argv)
{
	struct inspect_args a = {.top = 5};
	struct ho_error err = {0};
	struct ho_graph *g = NULL;
	const char *model;
	int ret = 1;

	switch (cli_parse(&inspect_cmd, argc, argv, &a)) {
	case 1:
		return 0;
	case -1:
		return 2;
	}
	if (!a.model) {
		cli_usage(&inspect_cmd, stderr);
		return 2;
	}
	model = a.model;
	if (ho_onnx_load(model, NULL, &g, &err)) {
		cli_error("%s", err.msg);
		return 1;
	}
	for (int i = 0; i < a.shapes.n; i++) {
		char name[256];
		int64_t dims[HO_MAX_RANK];
		int rank;

		if (ho_parse_shape_arg(a.shapes.v[i], name, sizeof(name), dims, &rank, &err) ||
		    ho_graph_bind_input(g, name, dims, rank, &err)) {
			cli_error("%s", err.msg);
			goto out;
		}
	}
	if (ho_shape_infer(g, &err)) {
		cli_error("%s: %s", model, err.msg);
		goto out;
	}
	if (a.backend && !ho_rt_backend_runs(a.backend, "Constant")) {
		cli_error("inspect: --backend %s: no backend of that name is built in", a.backend);
		goto out;
	}
	uint32_t n_decided = ho_graph_run_decides(g, NULL);
	int n_bounded = 0;

	if ((n_decided || a.bounds.n) && (n_bounded = cli_bounds_price(g, &a.bounds)) < 0)
		goto out;
	if (a.json)
		ret = print_json(model, g, a.backend);
	else {
		print_text(model, g, (int)a.top, a.backend, n_decided, n_bounded);
		ret = 0;
	}
out:
	ho_graph_free(g);
	return ret;
}
