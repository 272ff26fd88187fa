// SPDX-License-Identifier: MIT
/*
 * run --sensitivity bf16: how far a model's outputs move when one node alone computes
 * in bf16, on the inputs given (calibration inputs): a plan and run in float32, one
 * with every node asked bf16 (those whose kernels take it are the candidates, and the
 * whole model's error), then one per candidate with it alone.  The error of a run: its
 * largest |difference| from float32's outputs over their largest magnitude, over the
 * model's float outputs.  Printed worst first, and written as DIR/sensitivity.json:
 * what a schedule that picks each node's precision under an accuracy budget reads.
 */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "heteroopt/npy.h"
#include "heteroopt/runtime.h"

struct sens_node {
	uint32_t id;
	double error;
	double saved; /* s its kernel took less in the precision than in float32 (one run) */
};

/* One plan of g with opts o over the inputs, run runs times: into *rt. */
static int sens_run(const struct ho_graph *g, const struct ho_rt_opts *o,
		    const struct cli_inputs *in, int runs, struct ho_rt **rt, struct ho_error *err)
{
	int ret = ho_rt_new(g, o, rt, err);

	for (int i = 0; !ret && i < in->n; i++)
		ret = ho_rt_set_input_data(*rt, in->name[i], ho_npy_dtype(in->npy[i].descr),
					   in->npy[i].shape, in->npy[i].ndim, in->npy[i].data, err);
	for (int r = 0; !ret && r < runs; r++)
		ret = ho_rt_run(*rt, err);
	return ret;
}

/* Node i's time in rt's last run (s). */
static double sens_time(const struct ho_rt *rt, uint32_t i)
{
	const struct ho_rt_report *r = ho_rt_last_report(rt);

	return r->start_s[i] >= 0 ? r->end_s[i] - r->start_s[i] : 0;
}

/* rt's float outputs against ref's: the largest |difference| over the largest |ref|. */
static double sens_error(const struct ho_graph *g, const struct ho_rt *ref, const struct ho_rt *rt)
{
	double diff = 0, mag = 0;

	for (uint32_t i = 0; i < g->n_outputs; i++) {
		const struct ho_tensor *t;
		const float *a = ho_rt_output(ref, i, &t), *b = ho_rt_output(rt, i, &t);

		if (!a || !b || t->dtype != HO_DT_FLOAT)
			continue;
		for (int64_t e = 0; e < ho_shape_numel(&t->shape); e++) {
			diff = fmax(diff, fabs((double)a[e] - b[e]));
			mag = fmax(mag, fabs((double)a[e]));
		}
	}
	return mag > 0 ? diff / mag : diff;
}

static int by_error(const void *x, const void *y)
{
	const struct sens_node *a = x, *b = y;

	return a->error < b->error   ? 1
	       : a->error > b->error ? -1
				     : (a->id > b->id) - (a->id < b->id);
}

static int sens_write(const struct ho_graph *g, const char *precision, double all,
		      const struct sens_node *nodes, uint32_t n, const char *path)
{
	json_t *o = json_object(), *a = json_array();

	for (uint32_t k = 0; k < n; k++)
		json_array_append_new(
		    a, json_pack("{s:s, s:s, s:f}", "node", g->nodes[nodes[k].id].name, "op",
				 g->nodes[nodes[k].id].op_type, "error", nodes[k].error));
	json_object_set_new(o, "precision", json_string(precision));
	json_object_set_new(o, "all_nodes_error", json_real(all));
	json_object_set_new(o, "nodes", a);
	int ret = json_dump_file(o, path, JSON_INDENT(1)) ? -EIO : 0;

	json_decref(o);
	return ret;
}

/* What one measurement found: float32's run (ref), the candidates worst first, and the
 * error with all of them in the precision. */
struct sens {
	struct ho_rt *ref;
	struct sens_node *nodes;
	uint32_t n;
	double all;
};

static void sens_free(struct sens *m)
{
	ho_rt_free(m->ref);
	free(m->nodes);
}

/* The model in float32, with every node asked precision, then each candidate alone. */
static int sens_measure(const struct ho_graph *g, const struct ho_rt_opts *base,
			const struct cli_inputs *in, const char *precision, struct sens *m,
			struct ho_error *err)
{
	struct ho_rt_opts o = *base;
	struct ho_rt *rt = NULL;
	const char **want = calloc(g->n_nodes + 1, sizeof(*want));
	int ret = -ENOMEM;

	*m = (struct sens){0};
	if (!want || !(m->nodes = calloc(g->n_nodes + 1, sizeof(*m->nodes))))
		goto out;
	o.precision = NULL;
	o.node_precision = NULL;
	/* twice, the second warm: its nodes' times are what the precision saves against */
	if ((ret = sens_run(g, &o, in, 2, &m->ref, err)))
		goto out;
	o.precision = precision;
	if ((ret = sens_run(g, &o, in, 2, &rt, err)))
		goto out;
	m->all = sens_error(g, m->ref, rt);
	for (uint32_t i = 0; i < g->n_nodes; i++)
		if (ho_rt_last_report(rt)->node_precision[i])
			m->nodes[m->n++] = (struct sens_node){
			    .id = i, .saved = sens_time(m->ref, i) - sens_time(rt, i)};
	o.precision = NULL;
	o.node_precision = want;
	for (uint32_t k = 0; k < m->n && !ret; k++) {
		ho_rt_free(rt);
		rt = NULL;
		want[m->nodes[k].id] = precision;
		ret = sens_run(g, &o, in, 1, &rt, err);
		want[m->nodes[k].id] = NULL;
		if (!ret)
			m->nodes[k].error = sens_error(g, m->ref, rt);
	}
	qsort(m->nodes, m->n, sizeof(*m->nodes), by_error);
out:
	ho_rt_free(rt);
	free(want);
	return ret;
}

int cli_sensitivity(const struct ho_graph *g, const struct ho_rt_opts *base,
		    const struct cli_inputs *in, const char *precision, const char *outdir)
{
	struct ho_error err = {0};
	struct sens m;
	char path[4096];
	int ret = sens_measure(g, base, in, precision, &m, &err);

	if (ret) {
		cli_error("run: --sensitivity %s: %s", precision, err.msg);
		goto out;
	}
	printf("sensitivity: %u nodes can compute in %s; all of them: error %.2e of the largest "
	       "output (float32's)\n",
	       m.n, precision, m.all);
	printf("  %-44s %-16s %s\n", "node (alone in the precision, worst first)", "op", "error");
	for (uint32_t k = 0; k < m.n; k++)
		printf("  %-44.44s %-16.16s %.2e\n", g->nodes[m.nodes[k].id].name,
		       g->nodes[m.nodes[k].id].op_type, m.nodes[k].error);
	snprintf(path, sizeof(path), "%s/sensitivity.json", outdir);
	if ((ret = sens_write(g, precision, m.all, m.nodes, m.n, path)))
		cli_error("run: --sensitivity: cannot write %s", path);
	else
		printf("sensitivity: %s\n", path);
out:
	sens_free(&m);
	return ret ? 1 : 0;
}

/* More time saved per unit of error first; a node that saves nothing last. */
static int by_gain(const void *x, const void *y)
{
	const struct sens_node *a = x, *b = y;
	double ga = a->saved > 0 ? a->saved / fmax(a->error, 1e-12) : -1,
	       gb = b->saved > 0 ? b->saved / fmax(b->error, 1e-12) : -1;

	return ga < gb ? 1 : ga > gb ? -1 : (a->id > b->id) - (a->id < b->id);
}

/* The first take nodes of m in prec, the rest float32: its error against float32. */
static int sens_prefix(const struct ho_graph *g, struct ho_rt_opts *o, const struct cli_inputs *in,
		       const struct sens *m, uint32_t take, const char *prec, const char **want,
		       double *error, struct ho_error *err)
{
	struct ho_rt *rt = NULL;
	int ret = 0;

	for (uint32_t i = 0; i < g->n_nodes; i++)
		want[i] = NULL;
	for (uint32_t k = 0; k < take; k++)
		want[m->nodes[k].id] = prec;
	*error = 0;
	if (take && !(ret = sens_run(g, o, in, 1, &rt, err)))
		*error = sens_error(g, m->ref, rt);
	ho_rt_free(rt);
	return ret;
}

/*
 * --precision auto --accuracy BUDGET: the nodes that save the most time per unit of error
 * (each alone, as measured) first, and of them the longest run whose error, measured for
 * real with them all in bf16, stays within the budget (a binary search: errors of nodes
 * together partly cancel, so their sum would take too few).  Nodes bf16 does not speed
 * up stay float32; all do where the CPU has no bf16 (said why).  Into want (per node:
 * "bf16" or NULL); 0, or 1 with the error printed.
 */
int cli_precision_auto(const struct ho_graph *g, const struct ho_rt_opts *base,
		       const struct cli_inputs *in, double budget, const char **want)
{
	static const char *const prec = "bf16";
	struct ho_rt_opts o = *base;
	struct ho_error err = {0};
	struct sens m;
	double error = 0, saved = 0;
	uint32_t lo = 0, hi, useful = 0;
	int ret = sens_measure(g, base, in, prec, &m, &err);

	if (ret == -EOPNOTSUPP) { /* no native bf16: float32 */
		printf("precision auto: float32 (%s)\n", err.msg);
		ret = 0;
		goto out;
	}
	if (ret)
		goto fail;
	qsort(m.nodes, m.n, sizeof(*m.nodes), by_gain);
	while (useful < m.n && m.nodes[useful].saved > 0)
		useful++;
	o.precision = NULL;
	o.node_precision = want;
	/* the longest prefix within the budget: lo fits (none: error 0), hi + 1 does not */
	for (hi = useful; lo < hi;) {
		uint32_t mid = lo + (hi - lo + 1) / 2;

		if ((ret = sens_prefix(g, &o, in, &m, mid, prec, want, &error, &err)))
			goto fail;
		if (error <= budget)
			lo = mid;
		else
			hi = mid - 1;
	}
	if ((ret = sens_prefix(g, &o, in, &m, lo, prec, want, &error, &err)))
		goto fail;
	for (uint32_t k = 0; k < lo; k++)
		saved += m.nodes[k].saved;
	printf("precision auto: %u of %u nodes in bf16 (of %u it speeds up, most time saved per "
	       "error first), measured error %.2e within the budget %.2e (all %u: %.2e); "
	       "%.2f ms less as measured alone\n",
	       lo, m.n, useful, error, budget, m.n, m.all, saved * 1e3);
	goto out;
fail:
	cli_error("run: --precision auto: %s", err.msg);
out:
	sens_free(&m);
	return ret ? 1 : 0;
}
