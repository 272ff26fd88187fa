// SPDX-License-Identifier: MIT
/*
 * A precision plan: the precision each node computes in and, for int8, the range its
 * input was calibrated to, as --precision int8 or auto decided them (DIR/precision.json),
 * for --precision PLAN.json to run again without measuring or calibrating: picked on a
 * few samples, judged or served on others.
 *   {"metric": "ctc", "budget": 0.01, "error": 0.005,
 *    "nodes": [{"index": 12, "node": "conv1", "precision": "int8", "range": [0, 6.2]}]}
 * Nodes not listed compute float32.  The index and name of each node must agree with the
 * model's (a plan is for one model); anything else in the file is refused by name.
 */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "heteroopt/runtime.h"

int cli_plan_write(const char *path, const struct ho_graph *g, const char *const *want,
		   const float *range, const char *metric, double budget, double error)
{
	json_t *o = json_object(), *a = json_array();
	int ret;

	for (uint32_t i = 0; i < g->n_nodes; i++) {
		json_t *n;

		if (!want[i])
			continue;
		n = json_pack("{s:I, s:s, s:s}", "index", (json_int_t)i, "node", g->nodes[i].name,
			      "precision", want[i]);
		if (range && !isnan(range[2 * i]))
			json_object_set_new(n, "range",
					    json_pack("[f, f]", range[2 * i], range[2 * i + 1]));
		json_array_append_new(a, n);
	}
	if (metric) {
		json_object_set_new(o, "metric", json_string(metric));
		json_object_set_new(o, "budget", json_real(budget));
		json_object_set_new(o, "error", json_real(error));
	}
	json_object_set_new(o, "nodes", a);
	ret = json_dump_file(o, path, JSON_INDENT(1)) ? -EIO : 0;
	json_decref(o);
	if (ret)
		cli_error("run: cannot write %s", path);
	return ret;
}

/* The first key of o not in keys, or NULL (cli.h). */
const char *cli_odd_key(json_t *o, const char *const *keys)
{
	const char *k;
	json_t *v;

	json_object_foreach(o, k, v)
	{
		bool known = false;

		for (uint32_t i = 0; keys[i]; i++)
			known |= !strcmp(k, keys[i]);
		if (!known)
			return k;
	}
	return NULL;
}

/* Node entry e into want and range; -EINVAL printed. */
static int plan_node(const char *path, const struct ho_graph *g, json_t *e, const char **want,
		     float *range)
{
	static const char *const keys[] = {"index", "node", "precision", "range", NULL};
	json_t *ix = json_object_get(e, "index"), *nm = json_object_get(e, "node"),
	       *pr = json_object_get(e, "precision"), *rg = json_object_get(e, "range");
	const char *odd = json_is_object(e) ? cli_odd_key(e, keys) : NULL;
	json_int_t i = json_is_integer(ix) ? json_integer_value(ix) : -1;
	const char *p = json_string_value(pr);

	if (!json_is_object(e) || odd || i < 0 || i >= g->n_nodes || !json_is_string(nm) || !p) {
		cli_error("run: %s: a node entry %s%s%s", path,
			  odd ? "has an unknown key '"
			      : "needs an index of this model's nodes, "
				"its name and a precision",
			  odd ? odd : "", odd ? "'" : "");
		return -EINVAL;
	}
	if (strcmp(json_string_value(nm), g->nodes[i].name)) {
		cli_error("run: %s: node %lld is '%s' in this model, not '%s' (a plan is for the "
			  "model it was made for)",
			  path, (long long)i, g->nodes[i].name, json_string_value(nm));
		return -EINVAL;
	}
	for (uint32_t k = 1; ho_rt_precisions[k]; k++)
		if (!strcmp(p, ho_rt_precisions[k]))
			want[i] = ho_rt_precisions[k];
	if (!want[i]) {
		cli_error("run: %s: node '%s': precision '%s' is not a reduced one (bf16, int8)",
			  path, g->nodes[i].name, p);
		return -EINVAL;
	}
	if (!rg)
		return 0;
	double lo = json_number_value(json_array_get(rg, 0)),
	       hi = json_number_value(json_array_get(rg, 1));

	if (json_array_size(rg) != 2 || !json_is_number(json_array_get(rg, 0)) ||
	    !json_is_number(json_array_get(rg, 1)) || !isfinite(lo) || !isfinite(hi) || lo > hi) {
		cli_error("run: %s: node '%s': range is not [lowest, highest]", path,
			  g->nodes[i].name);
		return -EINVAL;
	}
	range[2 * i] = (float)lo;
	range[2 * i + 1] = (float)hi;
	return 0;
}

int cli_plan_read(const char *path, const struct ho_graph *g, const char ***want, float **range)
{
	static const char *const keys[] = {"metric", "budget", "error", "nodes", NULL};
	json_error_t je;
	json_t *o = json_load_file(path, 0, &je), *nodes;
	const char *odd = NULL;
	size_t k;
	json_t *e;
	int ret = -EINVAL;

	*want = calloc(g->n_nodes + 1, sizeof(**want));
	*range = malloc(2 * sizeof(float) * (g->n_nodes + 1));
	if (!*want || !*range) {
		cli_error("run: out of memory");
		ret = -ENOMEM;
		goto out;
	}
	for (uint32_t i = 0; i < 2 * g->n_nodes; i++)
		(*range)[i] = NAN;
	if (!o) {
		cli_error("run: %s: %s (line %d)", path, je.text, je.line);
		goto out;
	}
	nodes = json_object_get(o, "nodes");
	if (!json_is_object(o) || (odd = cli_odd_key(o, keys)) || !json_is_array(nodes)) {
		cli_error("run: %s: %s%s%s", path,
			  json_is_object(o) && odd ? "unknown key '" : "not a precision plan ",
			  json_is_object(o) && odd ? odd : "(an object with \"nodes\")",
			  json_is_object(o) && odd ? "'" : "");
		goto out;
	}
	ret = 0;
	json_array_foreach(nodes, k, e)
	{
		if ((ret = plan_node(path, g, e, *want, *range)))
			break;
	}
out:
	json_decref(o);
	if (ret) {
		free(*want);
		free(*range);
		*want = NULL;
		*range = NULL;
	}
	return ret;
}
