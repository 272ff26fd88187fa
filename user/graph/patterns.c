// SPDX-License-Identifier: MIT
/*
 * Operators a model spells out in pieces, made the operator again at load.
 * PyTorch exports nn.GELU as Div(x, sqrt 2) -> Erf -> Add 1 -> Mul x -> Mul
 * 0.5, five passes over memory where Gelu (its exact form) is one: on vit_b_16,
 * convnext_tiny and maxvit_t those four extra passes were a sixth of the time.
 * Only a chain whose every link is read by the next alone, and none is a
 * graph output, is folded; the constants must be the formula's.  The chain's
 * last node becomes the Gelu, the others leave the graph (their tensors stay,
 * read and written by nothing).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "graph_priv.h"

/* The float scalar tensor t holds, if it is one known at load. */
static bool ho_scalar(const struct ho_graph *g, int32_t t, float *v)
{
	const struct ho_tensor *x = t >= 0 ? &g->tensors[t] : NULL;

	if (!x || !(x->flags & (HO_T_INITIALIZER | HO_T_CONSTANT)) || x->dtype != HO_DT_FLOAT ||
	    !x->data || x->data_len != sizeof(float))
		return false;
	memcpy(v, x->data, sizeof(float));
	return true;
}

static bool ho_near(float v, double want)
{
	return fabs(v - want) <= 1e-6 * fabs(want);
}

/* The one node reading tensor t (and t no graph output), else -1. */
static int32_t ho_only_reader(const struct ho_graph *g, int32_t t)
{
	const struct ho_tensor *x = &g->tensors[t];

	return x->n_consumers == 1 && !(x->flags & HO_T_OUTPUT) ? x->consumers[0] : -1;
}

static bool ho_is(const struct ho_graph *g, int32_t n, const char *op, uint32_t ins)
{
	return n >= 0 && !strcmp(g->nodes[n].op_type, op) && !*g->nodes[n].domain &&
	       g->nodes[n].n_inputs == ins && g->nodes[n].n_outputs == 1 &&
	       g->nodes[n].outputs[0] >= 0;
}

/* Input k of binary node n other than tensor t, -1 if t is not an input of it. */
static int32_t ho_other(const struct ho_graph *g, int32_t n, int32_t t)
{
	const struct ho_node *nd = &g->nodes[n];

	return nd->inputs[0] == t ? nd->inputs[1] : nd->inputs[1] == t ? nd->inputs[0] : -1;
}

/*
 * The Gelu chain ending at the Erf node e: x / sqrt 2 (or x * (1 / sqrt 2)), erf, + 1, then
 * x times it and 0.5 in either order.  Fills the chain's nodes, its last one last; x.
 */
static int32_t ho_gelu_chain(const struct ho_graph *g, int32_t e, int32_t chain[5])
{
	const struct ho_node *en = &g->nodes[e];
	int32_t scale, x, add, m1, m2, t;
	float v;

	if (!ho_is(g, e, "Erf", 1) || en->inputs[0] < 0)
		return -1;
	scale = g->tensors[en->inputs[0]].producer;
	if (ho_is(g, scale, "Div", 2) && ho_scalar(g, g->nodes[scale].inputs[1], &v) &&
	    ho_near(v, M_SQRT2))
		x = g->nodes[scale].inputs[0];
	else if (ho_is(g, scale, "Mul", 2) && ho_scalar(g, g->nodes[scale].inputs[1], &v) &&
		 ho_near(v, M_SQRT1_2))
		x = g->nodes[scale].inputs[0];
	else if (ho_is(g, scale, "Mul", 2) && ho_scalar(g, g->nodes[scale].inputs[0], &v) &&
		 ho_near(v, M_SQRT1_2))
		x = g->nodes[scale].inputs[1];
	else
		return -1;
	if (x < 0 || ho_only_reader(g, en->inputs[0]) != e)
		return -1;
	add = ho_only_reader(g, en->outputs[0]);
	if (!ho_is(g, add, "Add", 2) || !ho_scalar(g, ho_other(g, add, en->outputs[0]), &v) ||
	    !ho_near(v, 1.0))
		return -1;
	m1 = ho_only_reader(g, g->nodes[add].outputs[0]);
	if (!ho_is(g, m1, "Mul", 2))
		return -1;
	t = ho_other(g, m1, g->nodes[add].outputs[0]);
	if (t == x) { /* x * (1 + erf), then * 0.5 */
		m2 = ho_only_reader(g, g->nodes[m1].outputs[0]);
		if (!ho_is(g, m2, "Mul", 2) ||
		    !ho_scalar(g, ho_other(g, m2, g->nodes[m1].outputs[0]), &v) || !ho_near(v, 0.5))
			return -1;
		chain[3] = m1;
		chain[4] = m2;
	} else { /* (x * 0.5) * (1 + erf) */
		int32_t h = t >= 0 ? g->tensors[t].producer : -1;

		if (!ho_is(g, h, "Mul", 2) || ho_only_reader(g, t) != m1 || ho_other(g, h, x) < 0 ||
		    !ho_scalar(g, ho_other(g, h, x), &v) || !ho_near(v, 0.5))
			return -1;
		chain[3] = h;
		chain[4] = m1;
	}
	chain[0] = scale;
	chain[1] = e;
	chain[2] = add;
	return x;
}

/* Drop the nodes gone marks, the rest keeping their order; producers follow. */
static int ho_drop_nodes(struct ho_graph *g, const bool *gone, struct ho_error *err)
{
	int32_t *to = calloc(g->n_nodes + 1, sizeof(int32_t));
	uint32_t n = 0;

	if (!to)
		return ho_err(err, -ENOMEM, "out of memory");
	for (uint32_t i = 0; i < g->n_nodes; i++) {
		to[i] = gone[i] ? -1 : (int32_t)n;
		if (!gone[i])
			g->nodes[n++] = g->nodes[i];
	}
	for (uint32_t t = 0; t < g->n_tensors; t++)
		if (g->tensors[t].producer >= 0)
			g->tensors[t].producer = to[g->tensors[t].producer];
	g->n_nodes = n;
	free(to);
	return ho_graph_validate(g, err);
}

int ho_graph_fold_patterns(struct ho_graph *g, struct ho_error *err)
{
	bool *gone = calloc(g->n_nodes + 1, sizeof(bool));
	uint32_t folded = 0;
	int ret;

	if (!gone)
		return ho_err(err, -ENOMEM, "out of memory");
	for (uint32_t i = 0; i < g->n_nodes; i++) {
		int32_t chain[5], x = ho_gelu_chain(g, (int32_t)i, chain);
		struct ho_node *last;

		if (x < 0)
			continue;
		for (int k = 0; k < 4; k++)
			gone[chain[k]] = true;
		last = &g->nodes[chain[4]];
		last->op_type = "Gelu";
		last->inputs[0] = x;
		last->n_inputs = 1;
		last->n_attrs = 0; /* approximate: "none", the erf form */
		folded++;
	}
	ret = folded ? ho_drop_nodes(g, gone, err) : 0;
	free(gone);
	return ret;
}
