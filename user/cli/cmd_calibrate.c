// SPDX-License-Identifier: MIT
/*
 * heteroopt calibrate: how far the cost model is from this machine.  Runs a
 * plan's nodes for real (each device alone, or a schedule's pick) and
 * reports predicted against measured, end to end and per node (mean
 * absolute percentage error, a distribution, the worst nodes); -o writes
 * the profile refitted from what ran.
 */
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <heteroopt/probe.h>
#include <heteroopt/runtime.h>

#include "cli.h"

struct cal_args {
	const char *model, *box, *profile, *schedule, *out;
	struct cli_list shapes;
	unsigned long long repeat, worst;
};

#define CA(field) offsetof(struct cal_args, field)
static const struct cli_opt cal_opts[] = {
    {"--box", NULL, CLI_TEXT, "BOX.json", "the box the plan is for (required)", CA(box), 0, 0},
    {"--profile", NULL, CLI_TEXT, "PROFILE.json",
     "the measured figures under test (default: the box's own)", CA(profile), 0, 0},
    {"--shape", NULL, CLI_LIST, "NAME=D0xD1...", "bind a symbolic input (repeatable)", CA(shapes),
     0, 0},
    {"--schedule", NULL, CLI_TEXT, "S.json",
     "run that schedule's pick (default: every device alone,\none plan each)", CA(schedule), 0, 0},
    {"--repeat", NULL, CLI_COUNT, "N", "warm runs measured, after two warm-up runs (default 10)",
     CA(repeat), 1, 10000},
    {"--worst", NULL, CLI_COUNT, "N", "nodes listed with the largest errors (default 5)", CA(worst),
     0, 1000},
    {"--output", "-o", CLI_TEXT, "REFIT.json",
     "write the profile refitted from what ran: each node that\nran its own kernel becomes a "
     "point of its family",
     CA(out), 0, 0},
    {0},
};

static const struct cli_command cal_cmd = {
    .name = "calibrate",
    .usage = "MODEL.onnx --box BOX.json [--profile P.json] [--schedule S.json] [-o REFIT.json]",
    .about = "Run MODEL's plan here and hold every node and the whole run against what the\n"
	     "cost model predicts for it with the box and profile given.",
    .positional = "model",
    .positional_at = CA(model),
    .opts = cal_opts,
};

static int cal_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Largest absolute error first. */
static int cal_by_error(const void *a, const void *b, void *arg)
{
	const struct ho_calibration *c = arg;
	const struct ho_calib_node *x = &c->node[*(const uint32_t *)a],
				   *y = &c->node[*(const uint32_t *)b];
	double ex = fabs(x->measured - x->predicted), ey = fabs(y->measured - y->predicted);

	return ex < ey ? 1 : ex > ey ? -1 : 0;
}

static void cal_report(const char *label, const struct ho_graph *g, const struct ho_box *box,
		       const struct ho_calibration *c, uint32_t repeat, uint32_t worst)
{
	double *e = calloc(c->n + 1, sizeof(double)), sum = 0;
	uint32_t *ids = calloc(c->n + 1, sizeof(uint32_t)), n = 0, bucket[5] = {0};
	static const double edge[4] = {0.05, 0.10, 0.25, 0.50};

	printf("calibrate: %s: predicted %.3f ms, measured %.3f ms (median of %u warm runs; P90 "
	       "%.3f, P99 %.3f): measured/predicted %.3f\n",
	       label, c->predicted * 1e3, c->measured * 1e3, repeat, c->p90 * 1e3, c->p99 * 1e3,
	       c->predicted > 0 ? c->measured / c->predicted : 0);
	/* on one device the rest is dispatch; over several, devices overlap */
	printf("  kernels %.3f ms summed over %u nodes and their devices (busy time)\n",
	       c->kernels * 1e3, c->tasks);
	if (!e || !ids)
		goto out;
	for (uint32_t i = 0; i < c->n; i++) {
		const struct ho_calib_node *cn = &c->node[i];
		int b = 0;

		if (cn->dev < 0 || cn->how != HO_TASK_RAN || !(cn->measured > 0))
			continue;
		e[n] = fabs(cn->predicted - cn->measured) / cn->measured;
		sum += e[n];
		while (b < 4 && e[n] >= edge[b])
			b++;
		bucket[b]++;
		ids[n++] = i;
	}
	if (!n)
		goto out;
	qsort(e, n, sizeof(double), cal_cmp);
	printf("  per node (%u that ran a kernel): mean absolute percentage error %.1f%%, median "
	       "%.1f%%, P90 %.1f%%, largest %.1f%%\n",
	       n, sum / n * 100, e[n / 2] * 100, e[(uint32_t)(0.9 * (n - 1))] * 100,
	       e[n - 1] * 100);
	printf("  nodes by error: <5%% %u, 5-10%% %u, 10-25%% %u, 25-50%% %u, >50%% %u\n",
	       bucket[0], bucket[1], bucket[2], bucket[3], bucket[4]);
	qsort_r(ids, n, sizeof(uint32_t), cal_by_error, (void *)c);
	for (uint32_t k = 0; k < worst && k < n; k++) {
		const struct ho_calib_node *cn = &c->node[ids[k]];

		printf("  worst %u: %-40.40s %-12.12s %-6s predicted %8.3f ms, measured %8.3f ms "
		       "(%+.0f%%)\n",
		       k + 1, g->nodes[ids[k]].name, g->nodes[ids[k]].op_type,
		       box->dev[cn->dev].name, cn->predicted * 1e3, cn->measured * 1e3,
		       (cn->measured - cn->predicted) / cn->measured * 100);
	}
out:
	free(e);
	free(ids);
}

/* A schedule's pick as the problem's assign and order. */
static int cal_from_schedule(const struct cal_args *a, const struct ho_graph *g,
			     const struct ho_problem *p, uint16_t *assign, uint32_t *order)
{
	struct ho_rt_schedule_opts so = {.pick = -1, .box_path = a->box, .model_path = a->model};
	struct ho_rt_placement *pl = NULL;
	struct ho_error err = {0};
	uint32_t *prio = calloc(p->n + 1, sizeof(uint32_t));

	if (!prio || ho_rt_schedule_load(a->schedule, &so, g, &pl, &err)) {
		cli_error("calibrate: %s", prio ? err.msg : "out of memory");
		free(prio);
		return -1;
	}
	for (uint32_t i = 0, k = 0; i < g->n_nodes; i++)
		if (ho_node_is_task(&g->nodes[i])) {
			assign[k] = (uint16_t)pl->node_device[i];
			prio[k] = pl->node_prio[i];
			order[k] = k;
			k++;
		}
	/* the schedule's priority order, which is topological */
	for (uint32_t i = 1; i < p->n; i++)
		for (uint32_t j = i; j > 0 && prio[order[j - 1]] > prio[order[j]]; j--) {
			uint32_t t = order[j];

			order[j] = order[j - 1];
			order[j - 1] = t;
		}
	free(prio);
	ho_rt_placement_free(pl);
	return 0;
}

int cmd_calibrate(int argc, char **argv)
{
	struct cal_args a = {.repeat = 10, .worst = 5};
	struct ho_calibration *runs[HO_MAX_DEVICES + 1] = {0};
	struct ho_graph *g = NULL;
	struct ho_box *box = NULL;
	struct ho_profile *prof = NULL;
	struct ho_problem *p = NULL;
	struct ho_plan *plan = NULL;
	struct ho_error err = {0};
	uint32_t n_runs = 0;
	int rc = 1;

	switch (cli_parse(&cal_cmd, argc, argv, &a)) {
	case 1:
		return 0;
	case -1:
		return 2;
	}
	if (!a.model || !a.box) {
		cli_error(
		    "calibrate: a model and --box are needed (see heteroopt calibrate --help)");
		return 2;
	}
	if (a.out && !a.profile) {
		cli_error("calibrate: -o refits a profile: give it with --profile");
		return 2;
	}
	if (a.out && cli_can_write(a.out, "calibrate: -o"))
		return 1;
	if (ho_onnx_load(a.model, NULL, &g, &err))
		goto fail;
	for (int i = 0; i < a.shapes.n; i++) {
		char name[256];
		int64_t dims[HO_MAX_RANK];
		int rank;

		if (ho_parse_shape_arg(a.shapes.v[i], name, sizeof(name), dims, &rank, &err) ||
		    ho_graph_bind_input(g, name, dims, rank, &err))
			goto fail;
	}
	if (ho_shape_infer(g, &err) || ho_box_load(a.box, &box, &err))
		goto fail;
	if (a.profile) {
		if (ho_profile_load(a.profile, box, &prof, &err))
			goto fail;
		cli_warn_machine(a.profile, "profile");
	}
	if (cli_problem(g, box, prof, &p, &err))
		goto fail;
	plan = ho_plan_new(p->n);
	if (!plan) {
		cli_error("calibrate: out of memory");
		goto out;
	}
	for (uint32_t d = 0; d <= p->d && n_runs < HO_MAX_DEVICES; d++) {
		char label[128];

		if (a.schedule && d > 0)
			break;
		if (!a.schedule && d == p->d)
			break;
		if (a.schedule) {
			if (cal_from_schedule(&a, g, p, plan->assign, plan->order))
				goto out;
			snprintf(label, sizeof(label), "the pick of %s", a.schedule);
		} else {
			ho_plan_single(p, (int)d, plan);
			snprintf(label, sizeof(label), "%s alone", box->dev[d].name);
		}
		if (ho_calibrate(g, box, prof, p, plan->assign, plan->order, (uint32_t)a.repeat,
				 &runs[n_runs], &err))
			goto fail;
		cal_report(label, g, box, runs[n_runs], (uint32_t)a.repeat, (uint32_t)a.worst);
		n_runs++;
	}
	if (a.out) {
		if (ho_calibration_refit(a.profile, a.out, g, box, prof,
					 (const struct ho_calibration *const *)runs, n_runs, &err))
			goto fail;
		printf("calibrate: wrote %s, %s refitted from these runs\n", a.out, a.profile);
	}
	rc = 0;
	goto out;
fail:
	cli_error("calibrate: %s", err.msg);
out:
	for (uint32_t k = 0; k < n_runs; k++)
		ho_calibration_free(runs[k]);
	ho_plan_free(plan);
	ho_problem_free(p);
	ho_profile_free(prof);
	ho_box_free(box);
	ho_graph_free(g);
	return rc;
}
