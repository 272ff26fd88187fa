// SPDX-License-Identifier: MIT
/*
 * run --sensitivity bf16|int8: how far a model's outputs move when one node alone
 * computes in a reduced precision, on the inputs given (calibration inputs; a batch of
 * samples in one input is judged over every row): a plan and run in float32, one with
 * every node asked the precision (those whose kernels take it are the candidates, and
 * the whole model's error), then one per candidate with it alone.  The error of a run is
 * --accuracy-metric's (accuracy.c).  Printed worst first, and written as
 * DIR/sensitivity.json: what a schedule that picks each node's precision under an
 * accuracy budget reads.  run --precision auto picks from it (below).
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
	double t32, tq; /* s its kernel took in float32 and in the precision (least of warm runs) */
};

/* s node n's kernel saves in the precision, as measured. */
static double sens_saved(const struct sens_node *n)
{
	return n->t32 - n->tq;
}

/* The warm runs whose least time is a node's: on 2 noisy cores one run's is not (a small
 * node's time in one run moved by half). */
#define SENS_WARM 3

/* One plan of g with opts o over the inputs, run once cold and then warm times: into *rt.
 * best (NULL: not kept): each node's least time over the warm runs (s; 0: it did not run). */
static int sens_run(const struct ho_graph *g, const struct ho_rt_opts *o,
		    const struct cli_inputs *in, int warm, double *best, struct ho_rt **rt,
		    struct ho_error *err)
{
	int ret = ho_rt_new(g, o, rt, err);

	for (int i = 0; !ret && i < in->n; i++)
		ret = ho_rt_set_input_data(*rt, in->name[i], ho_npy_dtype(in->npy[i].descr),
					   in->npy[i].shape, in->npy[i].ndim, in->npy[i].data, err);
	for (int r = 0; !ret && r <= warm; r++) {
		if ((ret = ho_rt_run(*rt, err)) || !best || !r)
			continue;
		const struct ho_rt_report *rep = ho_rt_last_report(*rt);

		for (uint32_t i = 0; i < g->n_nodes; i++) {
			double s = rep->start_s[i] >= 0 ? rep->end_s[i] - rep->start_s[i] : 0;

			best[i] = r == 1 || s < best[i] ? s : best[i];
		}
	}
	return ret;
}

static int by_error(const void *x, const void *y)
{
	const struct sens_node *a = x, *b = y;

	return a->error < b->error   ? 1
	       : a->error > b->error ? -1
				     : (a->id > b->id) - (a->id < b->id);
}

/* range (NULL: none): per node, the input range its int8 kernel was calibrated to, which a
 * schedule that gives it int8 carries to the runtime. */
static int sens_write(const struct ho_graph *g, const char *precision, const char *metric,
		      double all, const struct sens_node *nodes, uint32_t n, const float *range,
		      const char *path)
{
	json_t *o = json_object(), *a = json_array();

	for (uint32_t k = 0; k < n; k++) {
		const float *r = range ? &range[2 * nodes[k].id] : NULL;
		json_t *e = json_pack("{s:s, s:s, s:f}", "node", g->nodes[nodes[k].id].name, "op",
				      g->nodes[nodes[k].id].op_type, "error", nodes[k].error);

		if (nodes[k].t32 > 0 && nodes[k].tq > 0)
			json_object_set_new(e, "seconds",
					    json_pack("[f, f]", nodes[k].t32, nodes[k].tq));
		if (r && !isnan(r[0]))
			json_object_set_new(e, "range", json_pack("[f, f]", r[0], r[1]));
		json_array_append_new(a, e);
	}
	json_object_set_new(o, "precision", json_string(precision));
	json_object_set_new(o, "metric", json_string(metric));
	json_object_set_new(o, "all_nodes_error", json_real(all));
	json_object_set_new(o, "nodes", a);
	int ret = json_dump_file(o, path, JSON_INDENT(1)) ? -EIO : 0;

	json_decref(o);
	return ret;
}

/* What one measurement found: float32's run (ref) and each node's time in it (t32), the
 * candidates worst first, and the error with all of them in the precision. */
struct sens {
	struct ho_rt *ref;
	double *t32;
	struct sens_node *nodes;
	uint32_t n;
	double all;
};

static void sens_free(struct sens *m)
{
	ho_rt_free(m->ref);
	free(m->t32);
	free(m->nodes);
}

/*
 * The model in float32, with every node asked precision, then each candidate alone.
 * prior (NULL: none): an earlier measurement whose float32 run and times this one
 * judges and prices against too, so that what two precisions save is told apart from
 * one float32 run's times, not two (and float32 is not run again).
 */
static int sens_measure(const struct ho_graph *g, const struct ho_rt_opts *base,
			const struct cli_inputs *in, const char *precision,
			const struct cli_accuracy *acc, const struct sens *prior, struct sens *m,
			struct ho_error *err)
{
	struct ho_rt_opts o = *base;
	struct ho_rt *rt = NULL;
	const struct ho_rt *ref = prior ? prior->ref : NULL;
	const char **want = calloc(g->n_nodes + 1, sizeof(*want));
	double *tq = calloc(g->n_nodes + 1, sizeof(*tq)), *t32 = prior ? prior->t32 : NULL;
	int ret = -ENOMEM;

	*m = (struct sens){0};
	if (!want || !tq || !(m->nodes = calloc(g->n_nodes + 1, sizeof(*m->nodes))))
		goto out;
	o.precision = NULL;
	o.node_precision = NULL;
	/* each node's time in each: what the precision saves, and what a schedule prices */
	if (!ref) {
		if (!(t32 = m->t32 = calloc(g->n_nodes + 1, sizeof(*t32))))
			goto out;
		if ((ret = sens_run(g, &o, in, SENS_WARM, t32, &m->ref, err)))
			goto out;
		ref = m->ref;
	}
	o.precision = precision;
	if ((ret = sens_run(g, &o, in, SENS_WARM, tq, &rt, err)))
		goto out;
	m->all = cli_accuracy_error(g, acc, ref, rt);
	for (uint32_t i = 0; i < g->n_nodes; i++)
		if (ho_rt_last_report(rt)->node_precision[i])
			m->nodes[m->n++] = (struct sens_node){.id = i, .t32 = t32[i], .tq = tq[i]};
	o.precision = NULL;
	o.node_precision = want;
	for (uint32_t k = 0; k < m->n && !ret; k++) {
		ho_rt_free(rt);
		rt = NULL;
		want[m->nodes[k].id] = precision;
		ret = sens_run(g, &o, in, 0, NULL, &rt, err);
		want[m->nodes[k].id] = NULL;
		if (!ret)
			m->nodes[k].error = cli_accuracy_error(g, acc, ref, rt);
	}
	qsort(m->nodes, m->n, sizeof(*m->nodes), by_error);
out:
	ho_rt_free(rt);
	free(want);
	free(tq);
	return ret;
}

int cli_sensitivity(const struct ho_graph *g, const struct ho_rt_opts *base,
		    const struct cli_inputs *in, const char *precision,
		    const struct cli_accuracy *acc, const char *outdir)
{
	struct ho_error err = {0};
	struct sens m;
	char path[4096], metric[32];
	int ret = sens_measure(g, base, in, precision, acc, NULL, &m, &err);

	cli_accuracy_name(acc, metric, sizeof(metric));
	if (ret) {
		cli_error("run: --sensitivity %s: %s", precision, err.msg);
		goto out;
	}
	printf("sensitivity: %u nodes can compute in %s; all of them: error %.2e (%s)\n", m.n,
	       precision, m.all, metric);
	printf("  %-44s %-16s %s\n", "node (alone in the precision, worst first)", "op", "error");
	for (uint32_t k = 0; k < m.n; k++)
		printf("  %-44.44s %-16.16s %.2e\n", g->nodes[m.nodes[k].id].name,
		       g->nodes[m.nodes[k].id].op_type, m.nodes[k].error);
	snprintf(path, sizeof(path), "%s/sensitivity.json", outdir);
	if ((ret = sens_write(g, precision, metric, m.all, m.nodes, m.n, base->node_range, path)))
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
	double sa = sens_saved(a), sb = sens_saved(b),
	       ga = sa > 0 ? sa / fmax(a->error, 1e-12) : -1,
	       gb = sb > 0 ? sb / fmax(b->error, 1e-12) : -1;

	return ga < gb ? 1 : ga > gb ? -1 : (a->id > b->id) - (a->id < b->id);
}

/* A run of want's precisions: its error against ref. */
static int auto_error(const struct ho_graph *g, const struct ho_rt_opts *o,
		      const struct cli_inputs *in, const struct cli_accuracy *acc,
		      const struct ho_rt *ref, double *error, struct ho_error *err)
{
	struct ho_rt *rt = NULL;
	int ret = sens_run(g, o, in, 0, NULL, &rt, err);

	*error = ret ? 0 : cli_accuracy_error(g, acc, ref, rt);
	ho_rt_free(rt);
	return ret;
}

/* The precisions auto tries, the one that saves the most first. */
static const char *const auto_precisions[] = {"int8", "bf16"};
#define AUTO_N (sizeof(auto_precisions) / sizeof(auto_precisions[0]))

/* What auto measured and picks: per precision its sensitivity (have: measured; why not,
 * else) and how many nodes it speeds up, and the pick's error. */
struct auto_state {
	const struct ho_graph *g;
	struct ho_rt_opts o; /* node_precision: want */
	const struct cli_inputs *in;
	const struct cli_accuracy *acc;
	const char **want;
	double budget, error;
	struct sens m[AUTO_N];
	bool have[AUTO_N];
	char why[AUTO_N][600];
	uint32_t useful[AUTO_N], took[AUTO_N];
	const struct ho_rt *ref;
};

/*
 * Precision p for the nodes that save the most time per unit of error (each alone, as
 * measured) of those no earlier precision took, as many as keep the error, measured for
 * real with them all, within the budget: a binary search on how many (errors of nodes
 * together partly cancel, so their sum would take too few).
 */
static int auto_take(struct auto_state *s, uint32_t p, struct ho_error *err)
{
	struct sens *m = &s->m[p];
	uint32_t *ids = calloc(m->n + 1, sizeof(*ids)), n = 0, lo = 0, hi;
	double error = 0;
	int ret = 0;

	if (!ids)
		return ho_err(err, -ENOMEM, "out of memory");
	qsort(m->nodes, m->n, sizeof(*m->nodes), by_gain);
	s->useful[p] = 0;
	for (uint32_t k = 0; k < m->n; k++) {
		s->useful[p] +=
		    sens_saved(&m->nodes[k]) > 0; /* of all, an earlier precision's too */
		if (sens_saved(&m->nodes[k]) > 0 && !s->want[m->nodes[k].id])
			ids[n++] = m->nodes[k].id;
	}
	/* the most that fit: lo does (none: the error so far), hi + 1 does not */
	for (hi = n; lo < hi;) {
		uint32_t mid = lo + (hi - lo + 1) / 2;

		for (uint32_t k = 0; k < n; k++)
			s->want[ids[k]] = k < mid ? auto_precisions[p] : NULL;
		if ((ret = auto_error(s->g, &s->o, s->in, s->acc, s->ref, &error, err)))
			break;
		if (error <= s->budget)
			lo = mid;
		else
			hi = mid - 1;
	}
	for (uint32_t k = 0; k < n; k++)
		s->want[ids[k]] = k < lo ? auto_precisions[p] : NULL;
	s->took[p] = lo;
	free(ids);
	return ret;
}

/* The time the nodes want puts in a precision save, as measured alone. */
static double auto_saved(const struct auto_state *s)
{
	double saved = 0;

	for (uint32_t p = 0; p < AUTO_N; p++)
		for (uint32_t k = 0; s->have[p] && k < s->m[p].n; k++)
			if (s->want[s->m[p].nodes[k].id] == auto_precisions[p])
				saved += sens_saved(&s->m[p].nodes[k]);
	return saved;
}

/*
 * Mixed, each precision in turn (int8 first); then each precision alone over every node
 * it speeds up where that, measured, fits too, and saves more as measured node by node:
 * the pick is never slower, so measured, than the best single precision in the budget.
 */
static int auto_pick(struct auto_state *s, struct ho_error *err)
{
	double saved;
	int ret = 0;

	for (uint32_t p = 0; p < AUTO_N && !ret; p++)
		if (s->have[p])
			ret = auto_take(s, p, err);
	saved = auto_saved(s);
	for (uint32_t p = 0; p < AUTO_N && !ret; p++) {
		const char **mixed = malloc(sizeof(*mixed) * (s->g->n_nodes + 1));
		double alone, error = 0;
		uint32_t n_alone = 0;

		if (!mixed)
			return ho_err(err, -ENOMEM, "out of memory");
		memcpy(mixed, s->want, sizeof(*mixed) * s->g->n_nodes);
		for (uint32_t i = 0; i < s->g->n_nodes; i++)
			s->want[i] = NULL;
		for (uint32_t k = 0; s->have[p] && k < s->m[p].n; k++)
			if (sens_saved(&s->m[p].nodes[k]) > 0) {
				s->want[s->m[p].nodes[k].id] = auto_precisions[p];
				n_alone++;
			}
		alone = auto_saved(s);
		if (!s->have[p] || alone <= saved ||
		    (ret = auto_error(s->g, &s->o, s->in, s->acc, s->ref, &error, err)) ||
		    error > s->budget) {
			memcpy(s->want, mixed, sizeof(*mixed) * s->g->n_nodes);
		} else {
			saved = alone;
			/* as many as it speeds up: of all, not only of those the mix left it (a
			 * CI run under load said 5 in bf16 where 20 ran) */
			for (uint32_t q = 0; q < AUTO_N; q++)
				s->took[q] = q == p ? n_alone : 0;
		}
		free(mixed);
	}
	return ret ? ret : auto_error(s->g, &s->o, s->in, s->acc, s->ref, &s->error, err);
}

static void auto_print(const struct auto_state *s)
{
	char metric[32];
	uint32_t reduced = 0;

	printf("precision auto:");
	for (uint32_t p = 0; p < AUTO_N; p++)
		if (s->have[p]) {
			printf("%s %u nodes in %s (of %u it speeds up)", reduced ? "," : "",
			       s->took[p], auto_precisions[p], s->useful[p]);
			reduced++;
		}
	printf(", measured error %.2e (%s) within the budget %.2e; all in one:", s->error,
	       cli_accuracy_name(s->acc, metric, sizeof(metric)), s->budget);
	for (uint32_t p = 0; p < AUTO_N; p++)
		if (s->have[p])
			printf(" %s %.2e", auto_precisions[p], s->m[p].all);
	printf("; %.2f ms less as measured alone\n", auto_saved(s) * 1e3);
	for (uint32_t p = 0; p < AUTO_N; p++)
		if (!s->have[p])
			printf("precision auto: no %s (%s)\n", auto_precisions[p], s->why[p]);
}

/*
 * --precision auto --accuracy BUDGET: per node int8, bf16 or float32, as auto_pick says;
 * a precision the CPU lacks (or int8 with no calibration) is left out, saying why, and
 * with neither every node stays float32.  Into want; 0, or 1 with the error printed.
 */
int cli_precision_auto(const struct ho_graph *g, const struct ho_rt_opts *base,
		       const struct cli_inputs *in, double budget, const struct cli_accuracy *acc,
		       const char *no_int8, const char **want, double *error)
{
	struct auto_state s = {
	    .g = g, .o = *base, .in = in, .acc = acc, .want = want, .budget = budget};
	struct ho_error err = {0};
	const struct sens *first = NULL; /* the first measured: its float32 run is the others' */
	int ret = 0;

	s.o.precision = NULL;
	s.o.node_precision = want;
	for (uint32_t p = 0; p < AUTO_N && !ret; p++) {
		if (!strcmp(auto_precisions[p], "int8") && !base->node_range) {
			snprintf(s.why[p], sizeof(s.why[p]), "%s",
				 no_int8 ? no_int8 : "not calibrated");
			continue;
		}
		ret = sens_measure(g, base, in, auto_precisions[p], acc, first, &s.m[p], &err);
		if (ret == -EOPNOTSUPP) { /* not on this CPU */
			snprintf(s.why[p], sizeof(s.why[p]), "%s", err.msg);
			ret = 0;
			continue;
		}
		s.have[p] = !ret;
		first = first ? first : s.have[p] ? &s.m[p] : NULL;
		s.ref = first ? first->ref : NULL;
	}
	if (!ret && !s.ref) {
		printf("precision auto: float32 (%s; %s)\n", s.why[0], s.why[1]);
		goto out;
	}
	if (!ret)
		ret = auto_pick(&s, &err);
	if (ret)
		cli_error("run: --precision auto: %s", err.msg);
	else
		auto_print(&s);
	*error = s.error;
out:
	for (uint32_t p = 0; p < AUTO_N; p++)
		sens_free(&s.m[p]);
	return ret ? 1 : 0;
}
