// SPDX-License-Identifier: MIT
/*
 * schedule --sensitivity FILE --accuracy BUDGET --input NAME=FILE.npy: each node's
 * precision chosen with its device.  The files are run --sensitivity's (one per reduced
 * precision: the nodes whose kernels take it, each one's error alone in it, int8's input
 * ranges); the profile's precision_speedup prices them on each device.  The search keeps
 * the estimated error (the sum of the chosen nodes' sensitivities) within the budget; the
 * schedule picked is then run on the inputs given against float32 on one CPU, and its
 * measured error decides: over the budget, the next fastest is measured, and where none
 * fits the most accurate is offered with the budget it misses.
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
#include "heteroopt/sched.h"

static const char *const sens_keys[] = {"precision", "metric", "all_nodes_error", "nodes", NULL};
static const char *const sens_node_keys[] = {"node", "op", "error", "range", "seconds", NULL};

/* What the files say of each (task, reduced precision), indexed t * np + q. */
struct sens_read {
	double *error;	 /* alone in q, scaled (sens_scale); < 0: not measured, no candidate */
	double *speedup; /* float32's time over q's, as measured on a CPU; 0: not measured */
	float *range;	 /* int8's [lo, hi] per task; NaN: none */
};

/* The task named name, or -1. */
static int32_t task_named(const struct ho_problem *p, const char *name)
{
	for (uint32_t t = 0; t < p->n; t++)
		if (!strcmp(p->task_name[t], name))
			return (int32_t)t;
	return -1;
}

/* A node's "seconds": [float32, q] -> float32's over q's (0: none given); < 0: malformed. */
static double sens_speedup(json_t *s)
{
	double a = json_number_value(json_array_get(s, 0)),
	       b = json_number_value(json_array_get(s, 1));

	if (!s)
		return 0;
	return json_array_size(s) == 2 && a > 0 && b > 0 && isfinite(a) && isfinite(b) ? a / b : -1;
}

/* One file's nodes: their errors, measured speed-ups and ranges as precision q's, into r. */
static int sens_nodes(const char *path, const struct ho_problem *p, json_t *nodes, uint32_t q,
		      uint32_t np, const struct sens_read *r)
{
	size_t i;
	json_t *e;

	if (!json_is_array(nodes))
		return cli_error("schedule: --sensitivity %s: nodes must be a list", path), -EINVAL;
	json_array_foreach(nodes, i, e)
	{
		const char *name = json_string_value(json_object_get(e, "node")), *k;
		json_t *err = json_object_get(e, "error"), *rg = json_object_get(e, "range");
		int32_t t = name ? task_named(p, name) : -1;
		double s = sens_speedup(json_object_get(e, "seconds"));

		if (!json_is_object(e) || (k = cli_odd_key(e, sens_node_keys))) {
			cli_error("schedule: --sensitivity %s: nodes[%zu]%s%s%s", path, i,
				  json_is_object(e) ? ": unknown key '" : " is not an object",
				  json_is_object(e) ? k : "", json_is_object(e) ? "'" : "");
			return -EINVAL;
		}
		if (t < 0 || !json_is_number(err) || !(json_number_value(err) >= 0) ||
		    !isfinite(json_number_value(err))) {
			cli_error("schedule: --sensitivity %s: nodes[%zu]: %s", path, i,
				  t < 0 ? "names no node of the model (another model's file?)"
					: "its error must be a number >= 0");
			return -EINVAL;
		}
		if (s < 0) {
			cli_error(
			    "schedule: --sensitivity %s: nodes[%zu]: seconds must be [float32, "
			    "%s], each > 0",
			    path, i, ho_rt_precisions[q]);
			return -EINVAL;
		}
		r->error[(size_t)t * np + q] = json_number_value(err);
		r->speedup[(size_t)t * np + q] = s;
		if (!rg)
			continue;
		double lo = json_number_value(json_array_get(rg, 0)),
		       hi = json_number_value(json_array_get(rg, 1));

		if (json_array_size(rg) != 2 || !isfinite(lo) || !isfinite(hi) || !(lo <= hi)) {
			cli_error("schedule: --sensitivity %s: nodes[%zu]: range must be [lo, hi]",
				  path, i);
			return -EINVAL;
		}
		r->range[((size_t)t * np + q) * 2] = (float)lo;
		r->range[((size_t)t * np + q) * 2 + 1] = (float)hi;
	}
	return 0;
}

/*
 * The nodes' errors in q scaled so that all of them sum to the error measured with all of
 * them in q: errors of nodes together partly cancel (resnet50 in bf16: 5e-3 measured for
 * its 53 Convs, their sum 2.6e-2), and a plain sum would keep the search from plans the
 * budget allows.  A mix between is estimated by the same factor; the pick is measured.
 */
static void sens_scale(const struct ho_problem *p, uint32_t q, uint32_t np, double all,
		       double *error)
{
	double sum = 0;

	for (uint32_t t = 0; t < p->n; t++)
		sum += error[(size_t)t * np + q] > 0 ? error[(size_t)t * np + q] : 0;
	for (uint32_t t = 0; sum > 0 && t < p->n; t++)
		if (error[(size_t)t * np + q] > 0)
			error[(size_t)t * np + q] *= all / sum;
}

/* One file: its precision (once), its metric (the others'), its nodes. */
static int sens_file(const char *path, const struct ho_problem *p, uint32_t np, bool *seen,
		     char *metric, size_t len, const struct sens_read *r)
{
	json_error_t jerr;
	json_t *root = json_load_file(path, JSON_REJECT_DUPLICATES, &jerr);
	const char *prec = json_string_value(json_object_get(root, "precision")),
		   *m = json_string_value(json_object_get(root, "metric")), *k;
	uint32_t q = 1;
	int ret = -EINVAL;

	if (!root) {
		cli_error("schedule: --sensitivity %s: %s (line %d)", path, jerr.text, jerr.line);
		return -EINVAL;
	}
	while (prec && ho_rt_precisions[q] && strcmp(prec, ho_rt_precisions[q]))
		q++;
	if ((k = cli_odd_key(root, sens_keys)))
		cli_error("schedule: --sensitivity %s: unknown key '%s'", path, k);
	else if (!prec || !ho_rt_precisions[q] || q >= np)
		cli_error("schedule: --sensitivity %s: precision '%s' is none of the reduced "
			  "precisions (run --sensitivity bf16|int8 writes the file)",
			  path, prec ? prec : "");
	else if (seen[q])
		cli_error("schedule: --sensitivity %s: a second file for %s", path, prec);
	else if (!m || (*metric && strcmp(metric, m)))
		cli_error(
		    "schedule: --sensitivity %s: metric '%s', where the other file's is '%s': "
		    "one budget judges one metric",
		    path, m ? m : "", metric);
	else if (!json_is_number(json_object_get(root, "all_nodes_error")) ||
		 !(json_number_value(json_object_get(root, "all_nodes_error")) >= 0))
		cli_error("schedule: --sensitivity %s: all_nodes_error must be a number >= 0",
			  path);
	else if (!(ret = sens_nodes(path, p, json_object_get(root, "nodes"), q, np, r)))
		sens_scale(p, q, np, json_number_value(json_object_get(root, "all_nodes_error")),
			   r->error);
	if (!ret) {
		seen[q] = true;
		snprintf(metric, len, "%s", m);
	}
	json_decref(root);
	return ret;
}

/*
 * speedup filled for every task whose error in q was measured (error >= 0): on a device
 * the profile gives q, the task's own speed-up where the file measured one and the device
 * is a CPU (run --sensitivity runs on one), else the profile's for its kernel class and
 * work.  A class's speed-up misprices its odd members: regnet's grouped convolutions
 * gained far more in int8 than the dense ones the probe timed, and a schedule that
 * priced them so lost to int8 alone.  How many (task, device, precision) are priced.
 */
static uint32_t prec_price(const struct ho_graph *g, const struct ho_box *box,
			   const struct ho_profile *prof, const struct ho_problem *p, uint32_t np,
			   const struct sens_read *r, double *speedup)
{
	uint32_t offered = 0;

	for (uint32_t t = 0; t < p->n; t++) {
		uint32_t id = 0;

		while (id < g->n_nodes && strcmp(g->nodes[id].name, p->task_name[t]))
			id++;
		if (id == g->n_nodes)
			continue;
		int kc = ho_kernel_class(g, &g->nodes[id]);
		double work = ho_node_work(&g->nodes[id]);

		for (uint32_t j = 0; j < p->d; j++)
			for (uint32_t q = 1; q < np; q++) {
				double s = r->error[(size_t)t * np + q] >= 0
					       ? ho_profile_speedup(prof, (int)j,
								    ho_rt_precisions[q], kc, work)
					       : 0,
				       own = r->speedup ? r->speedup[(size_t)t * np + q] : 0;

				if (s > 0 && own > 0 && !strcmp(box->dev[j].kind, "cpu"))
					s = own;
				speedup[((size_t)t * p->d + j) * np + q] = s;
				offered += s > 0;
			}
	}
	return offered;
}

int cli_sched_precisions_priced(const struct ho_graph *g, const struct ho_box *box,
				const struct ho_profile *prof, struct ho_problem *p)
{
	uint32_t np = 0;
	struct ho_error err = {0};
	int ret = -ENOMEM;

	while (ho_rt_precisions[np])
		np++;
	double *error = calloc((size_t)p->n * np + 1, sizeof(double)),
	       *speedup = calloc((size_t)p->n * p->d * np + 1, sizeof(double));

	if (error && speedup)
		ret = prec_price(g, box, prof, p, np, &(struct sens_read){.error = error}, speedup)
			  ? ho_problem_set_precisions(p, np, ho_rt_precisions, speedup, error, NULL,
						      &err)
			  : -ENOENT;
	free(error);
	free(speedup);
	return ret;
}

int cli_sched_precisions(const struct ho_graph *g, const struct ho_box *box,
			 const struct ho_profile *prof, const struct cli_list *files,
			 struct ho_problem *p, char *metric, size_t len)
{
	uint32_t np = 0;
	bool seen[8] = {false};
	struct ho_error err = {0};
	int ret = -ENOMEM;

	while (ho_rt_precisions[np])
		np++;
	double *error = malloc(((size_t)p->n * np + 1) * sizeof(double)),
	       *own = calloc((size_t)p->n * np + 1, sizeof(double)),
	       *speedup = calloc((size_t)p->n * p->d * np + 1, sizeof(double));
	float *range = malloc((2 * (size_t)p->n * np + 1) * sizeof(float));
	const struct sens_read r = {error, own, range};

	*metric = '\0';
	if (!error || !own || !speedup || !range) {
		cli_error("schedule: out of memory");
		goto out;
	}
	for (size_t i = 0; i < (size_t)p->n * np; i++)
		error[i] = -1; /* not measured: no candidate */
	for (size_t i = 0; i < 2 * (size_t)p->n * np; i++)
		range[i] = NAN;
	for (int f = 0; f < files->n; f++)
		if ((ret = sens_file(files->v[f], p, np, seen, metric, len, &r)))
			goto out;
	if (!prec_price(g, box, prof, p, np, &r, speedup)) {
		cli_error(
		    "schedule: --sensitivity: the profile gives no device a speed-up in %s for "
		    "these nodes (heteroopt probe measures one where the CPU computes it)",
		    files->n > 1 ? "those precisions" : "that precision");
		ret = -EINVAL;
		goto out;
	}
	if ((ret = ho_problem_set_precisions(p, np, ho_rt_precisions, speedup, error, range, &err)))
		cli_error("schedule: %s", err.msg);
out:
	free(error);
	free(own);
	free(speedup);
	free(range);
	return ret;
}

/* g run on the inputs with opts o (NULL: float32 on one CPU), into *rt. */
static int prec_run(const struct ho_graph *g, const struct ho_rt_opts *o,
		    const struct cli_inputs *in, struct ho_rt **rt, struct ho_error *err)
{
	int ret = ho_rt_new(g, o, rt, err);

	for (int i = 0; !ret && i < in->n; i++)
		ret = ho_rt_set_input_data(*rt, in->name[i], ho_npy_dtype(in->npy[i].descr),
					   in->npy[i].shape, in->npy[i].ndim, in->npy[i].data, err);
	return ret ? ret : ho_rt_run(*rt, err);
}

/* Member m of the schedule at s->path run as the runtime loads it: its error against ref. */
static int prec_member_error(const struct ho_graph *g, const struct cli_sched_check *s, int m,
			     const struct ho_rt *ref, double *out)
{
	struct ho_rt_placement *pl = NULL;
	struct ho_rt *rt = NULL;
	struct ho_error err = {0};
	int ret = cli_placement(s->path, s->box, (unsigned long long)m, s->model, g, &pl, &err);

	if (!ret) {
		struct ho_rt_opts o = {.placement = pl};

		ret = prec_run(g, &o, s->in, &rt, &err);
	}
	if (ret)
		cli_error("schedule: front[%d] run on the inputs: %s", m, err.msg);
	else
		*out = cli_accuracy_error(g, s->acc, ref, rt);
	ho_rt_free(rt);
	ho_rt_placement_free(pl);
	return ret;
}

int cli_sched_check(const struct ho_graph *g, const struct ho_front *f,
		    const struct cli_sched_check *s, int *picked, double *measured)
{
	struct ho_rt *ref = NULL;
	struct ho_error err = {0};
	int tried = 0, best = -1, ret = prec_run(g, NULL, s->in, &ref, &err), seen[CLI_SCHED_TRIES];
	double e = INFINITY, short_by = 1;

	if (ret) {
		cli_error("schedule: float32 on the inputs: %s", err.msg);
		goto out;
	}
	/*
	 * The pick, then while it measures over the budget the fastest member not yet run whose
	 * estimate, scaled by the most the estimates fell short so far, fits: near the budget
	 * the fastest are those the estimate flatters, and their neighbours would be too.
	 */
	for (int m = *picked; !ret && m >= 0 && tried < CLI_SCHED_TRIES; tried++) {
		if ((ret = prec_member_error(g, s, m, ref, &e)))
			break;
		printf("accuracy: front[%d] measured %.3g (estimated %.3g, budget %.3g, %s)\n", m,
		       e, f->sol[m].ev.obj[HO_OBJ_ERROR], s->budget, s->metric);
		if (e <= s->budget) {
			*picked = m;
			*measured = e;
			goto out;
		}
		double est = f->sol[m].ev.obj[HO_OBJ_ERROR];
		int next = -1;

		short_by = fmax(short_by, est > 0 ? e / est : INFINITY);
		seen[tried] = m;
		for (uint32_t i = 0; i < f->n; i++) {
			bool run = false;

			for (int k = 0; k <= tried; k++)
				run |= seen[k] == (int)i;
			/* a NaN (0 times infinity: an estimate of 0 that measured over) never fits
			 */
			if (!run && f->sol[i].ev.obj[HO_OBJ_ERROR] * short_by <= s->budget &&
			    (next < 0 || f->sol[i].ev.obj[HO_OBJ_LATENCY] <
					     f->sol[next].ev.obj[HO_OBJ_LATENCY]))
				next = (int)i;
		}
		m = next;
	}
	/* none fits: the most accurate, with the budget it misses */
	for (uint32_t i = 0; !ret && i < f->n; i++)
		if (best < 0 || f->sol[i].ev.obj[HO_OBJ_ERROR] < f->sol[best].ev.obj[HO_OBJ_ERROR])
			best = (int)i;
	if (!ret && !(ret = prec_member_error(g, s, best, ref, &e))) {
		*picked = best;
		*measured = e;
		printf("accuracy: front[%d], the most accurate, measured %.3g (%s)\n", best, e,
		       s->metric);
	}
out:
	ho_rt_free(ref);
	return ret;
}
