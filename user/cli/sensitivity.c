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
};

/* One plan of g with opts o over the inputs, run once: into *rt. */
static int sens_run(const struct ho_graph *g, const struct ho_rt_opts *o,
		    const struct cli_inputs *in, struct ho_rt **rt, struct ho_error *err)
{
	int ret = ho_rt_new(g, o, rt, err);

	for (int i = 0; !ret && i < in->n; i++)
		ret = ho_rt_set_input_data(*rt, in->name[i], ho_npy_dtype(in->npy[i].descr),
					   in->npy[i].shape, in->npy[i].ndim, in->npy[i].data, err);
	return ret ? ret : ho_rt_run(*rt, err);
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

int cli_sensitivity(const struct ho_graph *g, const struct ho_rt_opts *base,
		    const struct cli_inputs *in, const char *precision, const char *outdir)
{
	struct ho_rt_opts o = *base;
	struct ho_rt *ref = NULL, *rt = NULL;
	struct ho_error err = {0};
	const char **want = calloc(g->n_nodes + 1, sizeof(*want));
	struct sens_node *nodes = calloc(g->n_nodes + 1, sizeof(*nodes));
	char path[4096];
	uint32_t n = 0;
	double all;
	int ret = -ENOMEM;

	if (!want || !nodes)
		goto out;
	o.precision = NULL;
	if ((ret = sens_run(g, &o, in, &ref, &err)))
		goto fail;
	o.precision = precision;
	if ((ret = sens_run(g, &o, in, &rt, &err)))
		goto fail;
	all = sens_error(g, ref, rt);
	for (uint32_t i = 0; i < g->n_nodes; i++)
		if (ho_rt_last_report(rt)->node_precision[i])
			nodes[n++].id = i;
	ho_rt_free(rt);
	rt = NULL;
	o.precision = NULL;
	o.node_precision = want;
	for (uint32_t k = 0; k < n; k++) {
		want[nodes[k].id] = precision;
		ret = sens_run(g, &o, in, &rt, &err);
		want[nodes[k].id] = NULL;
		if (ret)
			goto fail;
		nodes[k].error = sens_error(g, ref, rt);
		ho_rt_free(rt);
		rt = NULL;
	}
	qsort(nodes, n, sizeof(*nodes), by_error);
	printf("sensitivity: %u nodes can compute in %s; all of them: error %.2e of the largest "
	       "output (float32's)\n",
	       n, precision, all);
	printf("  %-44s %-16s %s\n", "node (alone in the precision, worst first)", "op", "error");
	for (uint32_t k = 0; k < n; k++)
		printf("  %-44.44s %-16.16s %.2e\n", g->nodes[nodes[k].id].name,
		       g->nodes[nodes[k].id].op_type, nodes[k].error);
	snprintf(path, sizeof(path), "%s/sensitivity.json", outdir);
	if ((ret = sens_write(g, precision, all, nodes, n, path))) {
		cli_error("run: --sensitivity: cannot write %s", path);
		goto out;
	}
	printf("sensitivity: %s\n", path);
	goto out;
fail:
	cli_error("run: --sensitivity %s: %s", precision, err.msg);
out:
	ho_rt_free(ref);
	ho_rt_free(rt);
	free(want);
	free(nodes);
	return ret ? 1 : 0;
}
