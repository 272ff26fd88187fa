// SPDX-License-Identifier: MIT
/*
 * Shapes that only a run decides: a NonZero's or a NonMaxSuppression's
 * output, a Reshape whose shape is a model input, a Range over computed
 * bounds.  The plan covers the nodes whose shapes are known before a run;
 * the rest, the tail (every node that reads or writes a tensor of unknown
 * shape, and all that follow one), waits for the plan's part to run.  Its
 * tensors the tail reads are kept to the end of that run (and brought to
 * the host where their device's memory is its own); then the tail becomes
 * a graph of its own (ho_graph_extract, the same tensor ids) whose inputs are bound to the
 * shapes they came out with and, where a node's output shape cannot follow
 * from shapes alone, to their values.  Shape inference then computes what
 * the values decide (a NonMaxSuppression over bound boxes is folded, on
 * the host, as ONNX Runtime runs it on its CPU), and the tail is planned
 * on the devices the schedule gave its nodes and run as any graph is,
 * split again where its own shapes wait for values computed in it.  Its
 * plan is kept while the values it was made for come again: frames of one
 * shape plan it once.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "exec_priv.h"

#define HO_TAIL_MAX_DEPTH 8
/* passes of inlining Ifs whose conditions are known (an If in a branch needs a second) */
#define HO_TAIL_INLINES 4
/* elements of a tail input bound by value before any larger one is */
#define HO_TAIL_SMALL 4096

struct ho_tail {
	bool *take;	    /* per node of the plan's graph: the tail's */
	int32_t *dev_of;    /* per node: the device the schedule gave it */
	struct ho_graph *g; /* the tail as a graph, as last planned */
	/* the graphs it was made through (extracted, each If inlined): it shares their bytes */
	struct ho_graph *made[HO_TAIL_INLINES + 1];
	uint32_t n_made;
	uint32_t *node_of; /* per node of g: the plan's graph's */
	struct ho_rt *rt;  /* its plan */
	bool *by_value;	   /* per input of g: planned for its values */
	void *key;	   /* those values, as they were */
	size_t key_len;
	bool reusable; /* no value the plan cannot compare (strings) */
};

static bool ho_unknown(const struct ho_tensor *t)
{
	return ho_shape_numel(&t->shape) < 0;
}

static void ho_tail_drop_graphs(struct ho_tail *tl)
{
	while (tl->n_made)
		ho_graph_free(tl->made[--tl->n_made]);
	tl->g = NULL;
	free(tl->node_of);
	tl->node_of = NULL;
}

void ho_rt_tail_free(struct ho_tail *tl)
{
	if (!tl)
		return;
	ho_rt_free(tl->rt);
	ho_tail_drop_graphs(tl);
	free(tl->by_value);
	free(tl->key);
	free(tl->take);
	free(tl->dev_of);
	free(tl);
}

/* Node n's output shape is open although its inputs' shapes are known. */
static bool ho_node_stuck(const struct ho_graph *g, const struct ho_node *n)
{
	bool out_unknown = false;

	for (uint32_t k = 0; k < n->n_inputs; k++)
		if (n->inputs[k] >= 0 && ho_unknown(&g->tensors[n->inputs[k]]))
			return false;
	for (uint32_t k = 0; k < n->n_outputs; k++)
		out_unknown |= n->outputs[k] >= 0 && ho_unknown(&g->tensors[n->outputs[k]]);
	return out_unknown;
}

int ho_rt_tail_split(struct ho_rt *rt, int depth, struct ho_error *err)
{
	const struct ho_graph *g = rt->g;
	struct ho_tail *tl;
	uint32_t tasks = 0, taken;
	bool *take = calloc(g->n_nodes + 1, sizeof(bool));

	if (!take)
		return ho_err(err, -ENOMEM, "out of memory");
	taken = ho_graph_run_decides(g, take);
	for (uint32_t i = 0; i < g->n_nodes; i++)
		tasks += rt->node_dev[i] >= 0;
	if (!taken) {
		free(take);
		return 0; /* every shape a node that runs touches is known */
	}
	tl = calloc(1, sizeof(*tl));
	if (!tl || !(tl->dev_of = calloc(g->n_nodes + 1, sizeof(int32_t)))) {
		free(take);
		free(tl);
		return ho_err(err, -ENOMEM, "out of memory");
	}
	tl->take = take;
	rt->tail = tl;
	rt->report.deferred = taken;
	for (uint32_t i = 0; i < g->n_nodes; i++)
		tl->dev_of[i] = rt->node_dev[i];
	if (depth >= HO_TAIL_MAX_DEPTH || (depth > 0 && taken == tasks)) {
		const struct ho_node *n = NULL;

		for (uint32_t i = 0; i < g->n_nodes && !n; i++)
			if (tl->take[g->topo[i]] && ho_node_stuck(g, &g->nodes[g->topo[i]]))
				n = &g->nodes[g->topo[i]];
		if (n)
			return ho_err(err, -EINVAL,
				      "node '%s' (%s): the shape of its output is not known even "
				      "with the values of its inputs",
				      n->name, n->op_type);
		return ho_err(err, -EINVAL,
			      "the model's shapes are not known even with the "
			      "values its nodes compute");
	}
	rt->keep = calloc(g->n_tensors + 1, 1);
	if (!rt->keep)
		return ho_err(err, -ENOMEM, "out of memory");
	for (uint32_t i = 0; i < g->n_nodes; i++) {
		const struct ho_node *n = &g->nodes[i];

		if (!tl->take[i])
			continue;
		rt->node_dev[i] = -1; /* not in this plan */
		for (uint32_t k = 0; k < n->n_inputs + n->n_implicit; k++) {
			int32_t t = k < n->n_inputs ? n->inputs[k] : n->implicit[k - n->n_inputs];
			int32_t p = t >= 0 ? g->tensors[t].producer : -1;

			if (t >= 0 && (p < 0 ? (g->tensors[t].flags & HO_T_INPUT) : !tl->take[p]))
				rt->keep[t] = 1;
		}
	}
	return 0;
}

/* Where the host reads tensor t of the plan's graph after a run. */
static const void *ho_tail_host_bytes(const struct ho_rt *rt, int32_t t)
{
	if (rt->is_copy[AT(rt, t, rt->host)])
		return rt->buf[AT(rt, t, rt->host)];
	if (rt->home[t] < 0)
		return NULL;
	return rt->buf[AT(rt, t, rt->home[t])];
}

/* The tail as a graph, its inputs bound: by value those marked, the others by shape. */
static int ho_tail_graph(struct ho_rt *rt, struct ho_error *err)
{
	struct ho_tail *tl = rt->tail;
	const struct ho_graph *g = rt->g;
	struct ho_graph *sg;
	int ret;

	ho_tail_drop_graphs(tl);
	ret = ho_graph_extract(g, tl->take, &tl->g, err);
	if (ret)
		return ret;
	sg = tl->made[tl->n_made++] = tl->g;
	if (!(tl->node_of = calloc(sg->n_nodes + 1, sizeof(uint32_t))))
		return ho_err(err, -ENOMEM, "out of memory");
	for (uint32_t i = 0, j = 0; i < g->n_nodes; i++)
		if (tl->take[g->topo[i]])
			tl->node_of[j++] = (uint32_t)g->topo[i];
	if (!tl->by_value && !(tl->by_value = calloc(sg->n_inputs + 1, sizeof(bool))))
		return ho_err(err, -ENOMEM, "out of memory");
	for (uint32_t i = 0; i < sg->n_inputs; i++) {
		const struct ho_tensor *t = &sg->tensors[sg->inputs[i]];
		int32_t pt = sg->inputs[i];
		const void *data = ho_tail_host_bytes(rt, pt);

		if (!tl->by_value[i])
			continue;
		if (!data && t->bytes)
			return ho_err(err, -EINVAL,
				      "tensor '%s': its values are not in host memory", t->name);
		ret = ho_graph_bind_value(sg, t->name, t->dtype, t->shape.dim, t->shape.rank, data,
					  g->tensors[pt].bytes, err);
		if (ret)
			return ret;
	}
	ret = ho_shape_infer(sg, err);
	/* an If the bound values decide is its branch: its nodes then plan as the tail's */
	while (!ret && tl->n_made <= HO_TAIL_INLINES) {
		struct ho_graph *ig;
		uint32_t *origin, *node_of;

		if ((ret = ho_graph_inline_ifs(tl->g, &ig, &origin, err)) || !ig)
			break;
		tl->made[tl->n_made++] = tl->g = ig;
		node_of = calloc(ig->n_nodes + 1, sizeof(uint32_t));
		for (uint32_t i = 0; node_of && i < ig->n_nodes; i++)
			node_of[i] = tl->node_of[origin[i]];
		free(origin);
		free(tl->node_of);
		if (!(tl->node_of = node_of))
			return ho_err(err, -ENOMEM, "out of memory");
		ret = ho_shape_infer(ig, err);
	}
	return ret;
}

/*
 * Mark for binding by value the tail's inputs that a node reads whose output
 * shape its inputs' shapes leave open: the small ones (shapes, axes, counts)
 * first, the large (a NonZero's input) only where those do not suffice, as
 * a plan made for a large tensor's values is made again for every other.
 */
static bool ho_tail_mark(struct ho_tail *tl, bool large)
{
	const struct ho_graph *sg = tl->g;
	bool more = false;

	for (uint32_t j = 0; j < sg->n_nodes; j++) {
		const struct ho_node *n = &sg->nodes[j];

		if (!ho_node_stuck(sg, n))
			continue;
		for (uint32_t k = 0; k < n->n_inputs; k++)
			for (uint32_t i = 0; n->inputs[k] >= 0 && i < sg->n_inputs; i++)
				if (sg->inputs[i] == n->inputs[k] && !tl->by_value[i] &&
				    (large || ho_shape_numel(&sg->tensors[sg->inputs[i]].shape) <=
						  HO_TAIL_SMALL))
					more = tl->by_value[i] = true;
	}
	return more;
}

/*
 * Plan the tail: find which of its inputs decide its shapes by their values
 * (the inputs of each node whose output shape the shapes alone leave open,
 * until none is left open or no more inputs of the tail help), then plan it
 * on its nodes' devices.
 */
/*
 * The user's bounds against the extents the run decided, once the tail's
 * shapes are known: a tensor of the model by its name, one of an inlined
 * branch by its name in the branch ("If_7/name").
 */
static int ho_tail_bounds(const struct ho_rt *rt, const struct ho_graph *sg, struct ho_error *err)
{
	for (uint32_t b = 0; b < rt->n_bounds; b++) {
		const char *name = rt->bounds[b].tensor;
		size_t len = strlen(name);

		for (uint32_t t = 0; t < sg->n_tensors; t++) {
			const struct ho_tensor *x = &sg->tensors[t];
			size_t xl = strlen(x->name);
			bool of_g =
			    t < rt->g->n_tensors && !strcmp(rt->g->tensors[t].name, x->name);
			int ret;

			if (ho_shape_numel(&x->shape) < 0 ||
			    (strcmp(x->name, name) && (xl <= len || x->name[xl - len - 1] != '/' ||
						       strcmp(x->name + xl - len, name))))
				continue;
			/* a tensor of g: the extents g left open; an inlined one: all of them */
			ret = of_g ? ho_extent_check(rt->g, (int32_t)t, &x->shape, &rt->bounds[b],
						     err)
				   : ho_extent_check(sg, -1, &x->shape, &rt->bounds[b], err);
			if (ret)
				return ret;
		}
	}
	return 0;
}

static int ho_tail_plan(struct ho_rt *rt, struct ho_error *err)
{
	struct ho_tail *tl = rt->tail;
	struct ho_rt_placement pl = {0};
	struct ho_rt_opts o = {0};
	const char **precision = NULL; /* per node of the tail: as asked of it in the plan */
	float *range = NULL;	       /* ... and its input's calibrated range */
	struct ho_graph *sg;
	size_t len = 0;
	int ret;

	ho_rt_free(tl->rt);
	tl->rt = NULL;
	free(tl->by_value);
	tl->by_value = NULL;
	do {
		if ((ret = ho_tail_graph(rt, err)))
			return ret;
		sg = tl->g;
	} while (ho_tail_mark(tl, false) || ho_tail_mark(tl, true));
	if ((ret = ho_tail_bounds(rt, sg, err)))
		return ret;
	/* the key: the values it is planned for */
	tl->reusable = true;
	for (uint32_t i = 0; i < sg->n_inputs; i++)
		if (tl->by_value[i]) {
			len += sg->tensors[sg->inputs[i]].bytes;
			tl->reusable &= sg->tensors[sg->inputs[i]].dtype != HO_DT_STRING;
		}
	free(tl->key);
	tl->key_len = 0;
	if (!(tl->key = malloc(len + 1)))
		return ho_err(err, -ENOMEM, "out of memory");
	for (uint32_t i = 0; i < sg->n_inputs; i++) {
		int32_t t = sg->inputs[i];
		uint64_t b = sg->tensors[t].bytes;

		if (tl->by_value[i] && b)
			memcpy((char *)tl->key + tl->key_len, ho_tail_host_bytes(rt, t), b);
		tl->key_len += tl->by_value[i] ? b : 0;
	}
	/* its nodes where the schedule put them (an inlined branch's: where its If was) */
	pl.node_device = calloc(sg->n_nodes + 1, sizeof(int32_t));
	pl.node_prio = calloc(sg->n_nodes + 1, sizeof(uint32_t));
	precision = calloc(sg->n_nodes + 1, sizeof(*precision));
	range = rt->node_range ? calloc(2 * (size_t)sg->n_nodes + 1, sizeof(float)) : NULL;
	if (!pl.node_device || !pl.node_prio || !precision || (rt->node_range && !range)) {
		ret = ho_err(err, -ENOMEM, "out of memory");
		goto out;
	}
	for (uint32_t j = 0; j < sg->n_nodes; j++) {
		pl.node_device[j] = tl->dev_of[tl->node_of[j]];
		pl.node_prio[j] = rt->prio[tl->node_of[j]];
		precision[j] = rt->want_precision[tl->node_of[j]];
		if (range)
			memcpy(&range[2 * j], &rt->node_range[2 * tl->node_of[j]],
			       2 * sizeof(float));
	}
	o.node_precision = precision;
	o.node_range = range;
	pl.n_devices = rt->n_dev;
	memcpy(pl.dev, rt->desc, sizeof(pl.dev));
	pl.host = rt->host;
	memcpy(pl.in_place, rt->in_place, sizeof(pl.in_place));
	o.placement = &pl;
	o.bounds = rt->bounds;
	o.n_bounds = rt->n_bounds;
	ret = ho_rt_plan(sg, &o, rt->depth + 1, &tl->rt, err);
	rt->report.deferred_plans += !ret;
out:
	free(pl.node_device);
	free(pl.node_prio);
	free(precision);
	free(range);
	return ret;
}

/* The tail's plan was made for the values its value-bound inputs have now. */
static bool ho_tail_same_values(const struct ho_rt *rt)
{
	const struct ho_tail *tl = rt->tail;
	const struct ho_graph *sg = tl->g;
	size_t at = 0;

	if (!tl->rt || !tl->reusable)
		return false;
	for (uint32_t i = 0; i < sg->n_inputs; i++) {
		int32_t t = sg->inputs[i];
		uint64_t b = sg->tensors[t].bytes;

		if (!tl->by_value[i])
			continue;
		if (b && memcmp((const char *)tl->key + at, ho_tail_host_bytes(rt, t), b))
			return false;
		at += b;
	}
	return true;
}

/* The tail's run in the plan's report: its nodes' times from the plan's start. */
static void ho_tail_report(struct ho_rt *rt)
{
	const struct ho_tail *tl = rt->tail;
	const struct ho_rt_report *s = &tl->rt->report;
	struct ho_rt_report *r = &rt->report;
	double shift = tl->rt->t0 - rt->t0;

	for (uint32_t j = 0; j < tl->g->n_nodes; j++)
		rt->start[tl->node_of[j]] = rt->end[tl->node_of[j]] = -1;
	for (uint32_t j = 0; j < tl->g->n_nodes; j++) { /* an inlined If: its branch's span */
		uint32_t id = tl->node_of[j];

		if (s->start_s[j] < 0)
			continue;
		if (rt->start[id] < 0 || s->start_s[j] + shift < rt->start[id])
			rt->start[id] = s->start_s[j] + shift;
		if (s->end_s[j] + shift > rt->end[id])
			rt->end[id] = s->end_s[j] + shift;
	}
	r->makespan_s = s->makespan_s + shift;
	r->transfers += s->transfers;
	r->bytes_moved += s->bytes_moved;
	r->zero_copy += s->zero_copy;
	r->chains += s->chains;
	r->chain_bytes += s->chain_bytes;
	for (uint32_t d = 0; d < rt->n_dev; d++) {
		r->busy_s[d] += s->busy_s[d];
		r->nodes_run[d] += s->nodes_run[d];
	}
}

int ho_rt_tail_run(struct ho_rt *rt, struct ho_error *err)
{
	struct ho_tail *tl = rt->tail;
	const struct ho_graph *sg;
	int ret;

	if (rt->dev[rt->host].info.own_memory)
		return ho_err(err, -ENOTSUP,
			      "shapes a run decides need the host device (%s) to share host "
			      "memory",
			      rt->desc[rt->host].name);
	if (!ho_tail_same_values(rt) && (ret = ho_tail_plan(rt, err)))
		return ret;
	sg = tl->g;
	for (uint32_t i = 0; i < sg->n_inputs; i++) {
		const struct ho_tensor *t = &sg->tensors[sg->inputs[i]];

		/* those bound by value too: the plan holds them, and checks them */
		ret = ho_rt_set_input_data(tl->rt, t->name, t->dtype, t->shape.dim, t->shape.rank,
					   ho_tail_host_bytes(rt, sg->inputs[i]), err);
		if (ret)
			return ret;
	}
	ret = ho_rt_run(tl->rt, err);
	if (!ret)
		ho_tail_report(rt);
	return ret;
}

const void *ho_rt_tail_output(const struct ho_rt *rt, int32_t t, const struct ho_tensor **tt)
{
	const struct ho_tail *tl = rt->tail;

	for (uint32_t i = 0; tl && tl->rt && i < tl->g->n_outputs; i++)
		if (tl->g->outputs[i] == t)
			return ho_rt_output_data(tl->rt, i, tt);
	return NULL;
}
