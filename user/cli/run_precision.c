// SPDX-License-Identifier: MIT
/*
 * run's precision options, before the timed plan: --precision PLAN.json read back;
 * int8's input ranges calibrated (quantize.c), for --precision int8, --sensitivity int8
 * and auto (which goes on without int8 where the CPU has none); auto's pick measured
 * (sensitivity.c); and what int8 or auto decided written as DIR/precision.json, for
 * --precision DIR/precision.json to run again as it is.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "heteroopt/runtime.h"

/* --precision auto's budget, before any work: -EINVAL printed where it has none. */
static int auto_budget(const struct cli_precision_args *a, double *budget)
{
	char *end = NULL;

	*budget = a->accuracy ? strtod(a->accuracy, &end) : -1;
	if (!a->accuracy || end == a->accuracy || *end || !(*budget >= 0) || !isfinite(*budget)) {
		cli_error("run: --precision auto needs --accuracy BUDGET, a fraction (of float32's "
			  "largest output, or by --accuracy-metric) such as 1e-3%s%s%s",
			  a->accuracy ? " ('" : "", a->accuracy ? a->accuracy : "",
			  a->accuracy ? "' is none)" : "");
		return -EINVAL;
	}
	if (a->schedule) {
		cli_error("run: --precision auto: a schedule's devices compute as it planned them");
		return -EINVAL;
	}
	return 0;
}

/* The options that go together, checked before any work: 0, or 2 printed. */
static int precision_usage(const struct cli_precision_args *a, bool is_auto, bool int8,
			   double *budget, struct cli_accuracy *acc)
{
	if (a->accuracy && !is_auto) {
		cli_error("run: --accuracy: it is the budget of --precision auto");
		return 2;
	}
	if (is_auto && auto_budget(a, budget))
		return 2;
	if (cli_accuracy_parse(a->accuracy_metric, acc))
		return 2;
	if (a->accuracy_metric && !is_auto && !a->sensitivity) {
		cli_error("run: --accuracy-metric: it judges --precision auto and --sensitivity");
		return 2;
	}
	if ((a->calibrate->n || a->int8_range) && !int8) {
		cli_error("run: --%s: it is for --precision int8 or auto (or --sensitivity int8)",
			  a->calibrate->n ? "calibrate" : "int8-range");
		return 2;
	}
	return 0;
}

/* What int8 or auto decided, as DIR/precision.json. */
static int precision_write(const struct ho_graph *g, const struct cli_precision_args *a,
			   const char *const *want, const float *ranges, const char *metric,
			   double budget, double error)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/precision.json", a->outdir);
	if (cli_plan_write(path, g, want, ranges, metric, budget, error))
		return 1;
	printf("precision: %s (--precision %s runs it again as it is)\n", path, path);
	return 0;
}

int cli_run_precision(const struct ho_graph *g, const struct cli_precision_args *a,
		      struct ho_rt_opts *ro, const struct cli_inputs *ci, struct cli_accuracy *acc,
		      const char ***want, float **ranges)
{
	const char *p = a->precision;
	size_t len = p ? strlen(p) : 0;
	bool is_auto = p && !strcmp(p, "auto"), is_int8 = p && !strcmp(p, "int8"),
	     plan = len > 5 && !strcmp(p + len - 5, ".json"),
	     int8 = is_int8 || is_auto || (a->sensitivity && !strcmp(a->sensitivity, "int8"));
	struct ho_error no_int8 = {0};
	double budget = 0, error = 0;
	char metric[32];
	int rc = precision_usage(a, is_auto, int8, &budget, acc);

	if (rc)
		return rc;
	if (plan) {
		if (a->schedule) {
			cli_error("run: --precision %s: a schedule's devices compute as it planned "
				  "them",
				  p);
			return 2;
		}
		if (cli_plan_read(p, g, want, ranges))
			return 1;
		ro->precision = NULL;
		ro->node_precision = *want;
		ro->node_range = *ranges;
		return 0;
	}
	if (int8 && !a->schedule) { /* auto goes on without int8 where the CPU has none */
		int r = cli_int8_ranges(g, ro, ci, a->calibrate,
					a->int8_range ? a->int8_range : "p99.99", ranges,
					is_auto ? &no_int8 : NULL);

		if (r && !(is_auto && r == -EOPNOTSUPP))
			return 1;
		ro->node_range = *ranges;
	}
	if (is_auto) {
		if (!(*want = calloc(g->n_nodes + 1, sizeof(**want)))) {
			cli_error("run: out of memory");
			return 1;
		}
		ro->precision = NULL;
		if (cli_precision_auto(g, ro, ci, budget, acc, no_int8.msg[0] ? no_int8.msg : NULL,
				       *want, &error))
			return 1;
		ro->node_precision = *want;
		return precision_write(g, a, *want, *ranges,
				       cli_accuracy_name(acc, metric, sizeof(metric)), budget,
				       error);
	}
	if (is_int8 && *ranges) { /* every node calibration saw */
		const char **all = calloc(g->n_nodes + 1, sizeof(*all));

		for (uint32_t i = 0; all && i < g->n_nodes; i++)
			all[i] = isnan((*ranges)[2 * i]) ? NULL : "int8";
		rc = all ? precision_write(g, a, all, *ranges, NULL, 0, 0) : 1;
		free(all);
	}
	return rc;
}
