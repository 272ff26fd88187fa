// SPDX-License-Identifier: MIT
/*
 * Running a probe: a graph planned by the runtime on a box's devices, as a
 * schedule would place it (the device's cores and threads, its region of
 * the pool), with random inputs.  One run's time is what its nodes' own
 * kernels took, as `heteroopt run --report` measures a node, or the whole
 * run from start to end (for dispatch and hand-off).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "probe_priv.h"

int ho_probe_set_inputs(const struct ho_graph *g, struct ho_rt *rt, struct ho_error *err)
{

	for (uint32_t i = 0; i < g->n_inputs; i++) {
		const struct ho_tensor *t = &g->tensors[g->inputs[i]];
		int64_t n = ho_shape_numel(&t->shape);
		float *x;
		int ret;

		if (n < 0)
			return ho_err(err, -EINVAL, "probe: input '%s' has no shape", t->name);
		x = malloc((size_t)n * sizeof(float) + 1);
		if (!x)
			return ho_err(err, -ENOMEM, "probe: out of memory");
		/* values away from 0 and denormals, as activations are */
		for (int64_t k = 0; k < n; k++)
			x[k] = (float)((k * 2654435761u) % 1000) * 1e-3f - 0.5f;
		ret = ho_rt_set_input(rt, t->name, t->shape.dim, t->shape.rank, x, err);
		free(x);
		if (ret)
			return ret;
	}
	return 0;
}

/* As ho_probe_run_open, with the precision and input ranges of o (NULL: float32). */
static int probe_run_start(struct ho_probe_run *r, struct ho_graph *g, const struct ho_box *box,
			   const int *devs, uint32_t n_devs, const uint8_t *node_dev,
			   const struct ho_rt_opts *as, struct ho_error *err)
{
	struct ho_rt_opts o = {0};
	int ret;

	if (as) {
		o.node_precision = as->node_precision;
		o.node_range = as->node_range;
	}

	memset(r, 0, sizeof(*r));
	r->g = g;
	r->main = -1;
	if (n_devs > HO_RT_MAX_DEVICES)
		return ho_err(err, -EINVAL, "probe: %u devices", n_devs);
	r->pl.n_devices = n_devs;
	for (uint32_t i = 0; i < n_devs; i++) {
		uint64_t mask = ho_box_in_place(box, devs[i]);

		/* one not built in keeps its name, for the runtime to refuse by it */
		ho_rt_device_of(box, devs[i], &r->pl.dev[i]);
		for (uint32_t j = 0; j < n_devs; j++)
			if (mask >> devs[j] & 1)
				r->pl.in_place[i] |= 1ull << j;
	}
	r->pl.host = 0;
	r->pl.pick = 0;
	r->pl.node_device = calloc(g->n_nodes + 1, sizeof(int32_t));
	r->pl.node_prio = calloc(g->n_nodes + 1, sizeof(uint32_t));
	if (!r->pl.node_device || !r->pl.node_prio)
		return ho_err(err, -ENOMEM, "probe: out of memory");
	for (uint32_t i = 0; i < g->n_nodes; i++) {
		uint32_t v = (uint32_t)g->topo[i];

		r->pl.node_device[v] =
		    ho_node_is_task(&g->nodes[v]) ? (node_dev ? node_dev[v] : 0) : -1;
		r->pl.node_prio[v] = i;
	}
	o.placement = &r->pl;
	if ((ret = ho_rt_new(g, &o, &r->rt, err)))
		return ret;
	return ho_probe_set_inputs(g, r->rt, err);
}

int ho_probe_run_open(struct ho_probe_run *r, struct ho_graph *g, const struct ho_box *box,
		      const int *devs, uint32_t n_devs, const uint8_t *node_dev,
		      struct ho_error *err)
{
	return probe_run_start(r, g, box, devs, n_devs, node_dev, NULL, err);
}

double ho_probe_run_once(void *run)
{
	struct ho_probe_run *r = run;
	const struct ho_rt_report *rep;
	struct ho_error err;
	double t0 = ho_clock_s(), sum = 0;

	if (ho_rt_run(r->rt, &err))
		return -1;
	r->last_wall_s = ho_clock_s() - t0;
	rep = ho_rt_last_report(r->rt);
	for (uint32_t i = 0; i < r->g->n_nodes; i++)
		if (rep->start_s[i] >= 0)
			sum += rep->end_s[i] - rep->start_s[i];
	r->last_kernel_s = sum;
	if (r->main >= 0 && !r->wall)
		return rep->end_s[r->main] - rep->start_s[r->main];
	if (r->wall && r->overhead)
		return fmax(0, r->last_wall_s - sum);
	return r->wall ? r->last_wall_s : sum;
}

void ho_probe_run_close(struct ho_probe_run *r)
{
	ho_rt_free(r->rt);
	ho_graph_free(r->g);
	free(r->pl.node_device);
	free(r->pl.node_prio);
	memset(r, 0, sizeof(*r));
}

int ho_probe_case_open(const struct ho_box *box, const struct ho_probe_case *c, int d,
		       struct ho_probe_run *r, struct ho_error *err)
{
	return ho_probe_case_open_in(box, c, d, NULL, r, err);
}

int ho_probe_case_open_in(const struct ho_box *box, const struct ho_probe_case *c, int d,
			  const char *precision, struct ho_probe_run *r, struct ho_error *err)
{
	struct ho_graph *g = NULL;
	struct ho_pb *pb = ho_pb_new(0x9e3779b97f4a7c15ull);
	int ret;

	memset(r, 0, sizeof(*r));
	if (!pb)
		return ho_err(err, -ENOMEM, "probe: out of memory");
	ret = c->build(pb, c->a);
	/* the table is ours: a row that does not build is a bug, named */
	ret = ret ? ho_err(err, ret, "probe: %s does not build", c->what) : ho_pb_load(pb, &g, err);
	ho_pb_free(pb);
	if (ret || (ret = ho_shape_infer(g, err))) {
		ho_graph_free(g);
		return ret;
	}
	uint32_t main = ho_probe_main_node(g);
	const char **want = precision ? calloc(g->n_nodes + 1, sizeof(*want)) : NULL;
	float *range = precision ? malloc((2 * (size_t)g->n_nodes + 1) * sizeof(float)) : NULL;
	struct ho_rt_opts as = {.node_precision = want, .node_range = range};

	if (precision && (!want || !range)) {
		free(want);
		free(range);
		ho_graph_free(g);
		return ho_err(err, -ENOMEM, "probe: out of memory");
	}
	for (uint32_t i = 0; range && i < 2 * g->n_nodes; i++)
		range[i] = NAN;
	if (precision) {
		/* the main node alone asked it, its input quantized to a range wide enough for
		 * any of the sweep's: what is timed is the kernel, not how it rounds */
		want[main] = precision;
		range[2 * main] = -8;
		range[2 * main + 1] = 8;
	}
	ret = probe_run_start(r, g, box, &d, 1, NULL, precision ? &as : NULL, err);
	free(want);
	free(range);
	if (ret)
		return ret;
	r->main = (int32_t)main;
	return 0;
}

uint32_t ho_probe_main_node(const struct ho_graph *g)
{
	uint32_t first = UINT32_MAX;

	for (uint32_t i = 0; i < g->n_nodes; i++) {
		uint32_t v = (uint32_t)g->topo[i];

		if (!ho_node_is_task(&g->nodes[v]))
			continue;
		if (!strcmp(g->nodes[v].name, "main"))
			return v;
		if (first == UINT32_MAX)
			first = v;
	}
	return first == UINT32_MAX ? 0 : first;
}
