// SPDX-License-Identifier: MIT
/*
 * Shapes a run decides, at their largest: what the scheduler prices and
 * plans memory for when a model's post-processing (a detector's score
 * threshold, NonMaxSuppression, a TopK of a computed k) leaves extents to
 * the run.  Shape inference runs again with those rules answering the most
 * their output can hold, or the user's tighter bound; the rest follows.
 */
#include "shape.h"

/* What bounds each operator's data-dependent output, in words: one table. */
static const struct {
	const char *op;
	const char *how;
} ho_bound_hows[] = {
    {"NonZero", "every element of its input non-zero"},
    {"NonMaxSuppression", "every box kept, up to its limit per batch and class"},
    {"Compress", "every slice kept"},
    {"Unique", "every element distinct"},
    {"TopK", "k the whole axis"},
};

static uint32_t ho_bounds_walk(struct ho_graph *g, const char *name, bool clear, bool *found);

static const struct ho_graph_priv *ho_bounds_root(const struct ho_graph *g)
{
	while (g->parent)
		g = g->parent;
	return g->priv;
}

bool ho_graph_names_tensor(const struct ho_graph *g, const char *name)
{
	bool found = false;

	ho_bounds_walk((struct ho_graph *)g, name, false, &found);
	return found;
}

bool ho_infer_at_bounds(const struct ho_graph *g)
{
	return ho_bounds_root(g)->at_bounds;
}

int64_t run_decided(struct ho_infer *c, uint32_t k, int64_t most)
{
	const struct ho_graph_priv *p = ho_bounds_root(c->g);
	struct ho_tensor *t = out_t(c, k);

	if (!p->at_bounds || !t)
		return HO_DIM_UNKNOWN;
	for (uint32_t i = 0; i < p->n_bounds; i++)
		if (!strcmp(p->bounds[i].tensor, t->name) &&
		    (most < 0 || p->bounds[i].max < most)) {
			most = p->bounds[i].max;
			t->flags |= HO_T_USER_BOUND;
		}
	if (most < 0)
		return HO_DIM_UNKNOWN;
	t->flags |= HO_T_AT_BOUND;
	return most;
}

const char *ho_bound_how(const struct ho_graph *g, const struct ho_tensor *t)
{
	const char *op = t->producer >= 0 ? g->nodes[t->producer].op_type : "";

	if (t->flags & HO_T_USER_BOUND)
		return "the user's bound (--bound)";
	for (size_t i = 0; i < sizeof(ho_bound_hows) / sizeof(ho_bound_hows[0]); i++)
		if (!strcmp(ho_bound_hows[i].op, op))
			return ho_bound_hows[i].how;
	return "its inputs' bounds";
}

/* Tensor flags cleared (clear) or counted: g's and its subgraphs'. */
static uint32_t ho_bounds_walk(struct ho_graph *g, const char *name, bool clear, bool *found)
{
	uint32_t n = 0;

	for (uint32_t t = 0; t < g->n_tensors; t++) {
		struct ho_tensor *x = &g->tensors[t];

		if (name && !strcmp(x->name, name)) {
			*found = true;
			n += !!(x->flags & HO_T_USER_BOUND);
		} else if (!name) {
			n += !!(x->flags & HO_T_AT_BOUND);
		}
		if (clear)
			x->flags &= ~(HO_T_AT_BOUND | HO_T_USER_BOUND);
	}
	for (uint32_t i = 0; i < g->n_nodes; i++)
		for (uint32_t s = 0; s < g->nodes[i].n_subgraphs; s++)
			n += ho_bounds_walk(g->nodes[i].subgraphs[s], name, clear, found);
	return n;
}

int ho_graph_infer_bounds(struct ho_graph *g, const struct ho_extent_bound *bounds, uint32_t n,
			  struct ho_error *err)
{
	struct ho_graph_priv *p = g->priv;
	bool found;
	int ret;

	for (uint32_t i = 0; i < n; i++) {
		found = false;
		ho_bounds_walk(g, bounds[i].tensor, false, &found);
		if (!found)
			return ho_err(err, -ENOENT, "--bound: the model has no tensor '%s'",
				      bounds[i].tensor);
		if (bounds[i].max < 0 || bounds[i].max > HO_DIM_MAX)
			return ho_err(err, -EINVAL, "--bound %s: %" PRId64 " is not an extent",
				      bounds[i].tensor, bounds[i].max);
	}
	ho_bounds_walk(g, NULL, true, &found);
	bool *take = calloc(g->n_nodes + 1, sizeof(bool));

	if (!take)
		return ho_err(err, -ENOMEM, "out of memory");
	ho_graph_run_decides(g, take);
	for (uint32_t i = 0; i < g->n_nodes; i++)
		g->nodes[i].flags =
		    (g->nodes[i].flags & ~HO_N_RUN_DECIDES) | (take[i] ? HO_N_RUN_DECIDES : 0);
	free(take);
	p->at_bounds = true;
	p->bounds = bounds;
	p->n_bounds = n;
	ret = ho_infer_graph(g, err, 0);
	p->at_bounds = false;
	p->bounds = NULL;
	p->n_bounds = 0;
	for (uint32_t i = 0; i < n && !ret; i++) {
		found = false;
		if (!ho_bounds_walk(g, bounds[i].tensor, false, &found))
			ret = ho_err(
			    err, -EINVAL,
			    "--bound %s: its shape does not wait for a run, so a bound on it "
			    "means nothing",
			    bounds[i].tensor);
	}
	if (ret) {
		struct ho_error again = {0};

		ho_bounds_walk(g, NULL, true, &found);
		for (uint32_t i = 0; i < g->n_nodes; i++)
			g->nodes[i].flags &= ~HO_N_RUN_DECIDES;
		ho_infer_graph(g, &again, 0); /* the shapes as they were */
		ho_features_compute(g);
		return ret;
	}
	ho_features_compute(g);
	return (int)ho_bounds_walk(g, NULL, false, &found);
}

int ho_extent_check(const struct ho_graph *g, int32_t id, const struct ho_shape *s,
		    const struct ho_extent_bound *b, struct ho_error *err)
{
	const struct ho_shape *open = id >= 0 ? &g->tensors[id].shape : NULL;

	for (int d = 0; d < s->rank; d++)
		if ((!open || open->rank < 0 || open->dim[d] < 0) && s->dim[d] > b->max)
			return ho_err(err, -E2BIG,
				      "tensor '%s': %" PRId64
				      " along axis %d, past its bound %" PRId64 " (--bound)",
				      b->tensor, s->dim[d], d, b->max);
	return 0;
}

int ho_parse_bound_arg(const char *arg, struct ho_extent_bound *b, struct ho_error *err)
{
	const char *eq = strrchr(arg, '=');
	char *end;
	long long v;

	if (!eq || eq == arg || !eq[1])
		return ho_err(err, -EINVAL, "--bound: '%s' is not NAME=N", arg);
	errno = 0;
	v = strtoll(eq + 1, &end, 10);
	if (*end || errno || v < 0 || v > HO_DIM_MAX)
		return ho_err(err, -EINVAL, "--bound %s: '%s' is not a whole number from 0 to 2^40",
			      arg, eq + 1);
	b->tensor = strndup(arg, (size_t)(eq - arg));
	if (!b->tensor)
		return ho_err(err, -ENOMEM, "out of memory");
	b->max = v;
	return 0;
}
