// SPDX-License-Identifier: MIT
/*
 * Operators a model spells out in pieces, made the operator again at load.
 * PyTorch exports nn.GELU as Div(x, sqrt 2) -> Erf -> Add 1 -> Mul x -> Mul
 * 0.5, five passes over memory where Gelu (its exact form) is one: on vit_b_16,
 * convnext_tiny and maxvit_t those four extra passes were a sixth of the time.
 * Before opset 17 it exports nn.LayerNorm as nine nodes (ho_layer_norm_chain),
 * one LayerNormalization kernel here.
 * PaddlePaddle's exports spell hard-swish as Add 3 -> Clip [0, 6] -> Mul x -> Div 6
 * (ho_hardswish_chain): four passes where HardSwish is one, and one a Conv before it can
 * take as a post-op.
 * A scale and shift by constants after a Conv become its weights' (conv_affine.c).
 * A zero Pad before a Conv or an AveragePool becomes their pads (ho_pad_consumer).
 * A Transpose then a scaling by a scalar swap places before a MatMul (ho_scaled_transpose).
 * Only a chain whose every link is read by the next alone, and none is a
 * graph output, is folded; the constants must be the formula's.  The chain's
 * last node becomes the Gelu, the others leave the graph (their tensors stay,
 * read and written by nothing); it names their outputs (absorbed), so that
 * what was imported can still be told from what the model says.
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
	if (!ho_is(g, add, "Add", 2) || !ho_scalar(g, ho_other_input(g, add, en->outputs[0]), &v) ||
	    !ho_near(v, 1.0))
		return -1;
	m1 = ho_only_reader(g, g->nodes[add].outputs[0]);
	if (!ho_is(g, m1, "Mul", 2))
		return -1;
	t = ho_other_input(g, m1, g->nodes[add].outputs[0]);
	if (t == x) { /* x * (1 + erf), then * 0.5 */
		m2 = ho_only_reader(g, g->nodes[m1].outputs[0]);
		if (!ho_is(g, m2, "Mul", 2) ||
		    !ho_scalar(g, ho_other_input(g, m2, g->nodes[m1].outputs[0]), &v) ||
		    !ho_near(v, 0.5))
			return -1;
		chain[3] = m1;
		chain[4] = m2;
	} else { /* (x * 0.5) * (1 + erf) */
		int32_t h = t >= 0 ? g->tensors[t].producer : -1;

		if (!ho_is(g, h, "Mul", 2) || ho_only_reader(g, t) != m1 ||
		    ho_other_input(g, h, x) < 0 || !ho_scalar(g, ho_other_input(g, h, x), &v) ||
		    !ho_near(v, 0.5))
			return -1;
		chain[3] = h;
		chain[4] = m1;
	}
	chain[0] = scale;
	chain[1] = e;
	chain[2] = add;
	return x;
}

/*
 * The hard-swish chain through the Clip node c: x + 3, clipped to [0, 6] (opset 11's
 * inputs, or before it its attributes: PP-OCRv4's recogniser is opset 9), times x, then
 * / 6 or * (1 / 6).  Fills the chain's four nodes, its last one last; x.
 */
static int32_t ho_hardswish_chain(const struct ho_graph *g, int32_t c, int32_t chain[4])
{
	const struct ho_node *cn = &g->nodes[c];
	int32_t add, x, m, d, at;
	float v, lo, hi;

	if (ho_is(g, c, "Clip", 1)) {
		lo = ho_node_attr_f(cn, "min", -INFINITY);
		hi = ho_node_attr_f(cn, "max", INFINITY);
	} else if (!ho_is(g, c, "Clip", 3) || !ho_scalar(g, cn->inputs[1], &lo) ||
		   !ho_scalar(g, cn->inputs[2], &hi)) {
		return -1;
	}
	if (cn->inputs[0] < 0 || lo != 0 || hi != 6)
		return -1;
	add = g->tensors[cn->inputs[0]].producer;
	if (!ho_is(g, add, "Add", 2) || ho_only_reader(g, cn->inputs[0]) != c)
		return -1;
	at = ho_scalar(g, g->nodes[add].inputs[1], &v) ? 1 : 0;
	if ((!at && !ho_scalar(g, g->nodes[add].inputs[0], &v)) || v != 3)
		return -1;
	x = g->nodes[add].inputs[1 - at];
	m = ho_only_reader(g, cn->outputs[0]);
	if (x < 0 || !ho_is(g, m, "Mul", 2) || ho_other_input(g, m, cn->outputs[0]) != x)
		return -1;
	d = ho_only_reader(g, g->nodes[m].outputs[0]);
	if (!(ho_is(g, d, "Div", 2) && g->nodes[d].inputs[0] == g->nodes[m].outputs[0] &&
	      ho_scalar(g, g->nodes[d].inputs[1], &v) && v == 6) &&
	    !(ho_is(g, d, "Mul", 2) &&
	      ho_scalar(g, ho_other_input(g, d, g->nodes[m].outputs[0]), &v) &&
	      ho_near(v, 1.0 / 6)))
		return -1;
	chain[0] = add;
	chain[1] = c;
	chain[2] = m;
	chain[3] = d;
	return x;
}

/* A ReduceMean of x over its last axis, the dims kept (opset 13's attribute form). */
static bool ho_mean_last(const struct ho_graph *g, int32_t n, int32_t x)
{
	int64_t axes;

	return ho_is(g, n, "ReduceMean", 1) && g->nodes[n].inputs[0] == x &&
	       ho_node_attr_ints(&g->nodes[n], "axes", &axes, 1, 0) && axes == -1 &&
	       ho_node_attr(&g->nodes[n], "axes") && ho_node_attr_i(&g->nodes[n], "keepdims", 1);
}

/*
 * A constant float vector of more than one element (a LayerNorm's scale or
 * bias), itself or through Identity nodes (PyTorch's exporter shares equal
 * weights that way: every LayerNorm's untrained bias is one tensor).
 */
static int64_t ho_vector(const struct ho_graph *g, int32_t t)
{
	for (int hops = 0; t >= 0 && hops < 4 && g->tensors[t].producer >= 0; hops++) {
		const struct ho_node *p = &g->nodes[g->tensors[t].producer];

		if (strcmp(p->op_type, "Identity")) /* a Constant node's output is one itself */
			break;
		t = p->n_inputs == 1 ? p->inputs[0] : -1;
	}
	const struct ho_tensor *x = t >= 0 ? &g->tensors[t] : NULL;

	if (!x || !(x->flags & (HO_T_INITIALIZER | HO_T_CONSTANT)) || x->dtype != HO_DT_FLOAT ||
	    x->shape.rank != 1 || x->shape.dim[0] < 2)
		return -1;
	return x->shape.dim[0];
}

/*
 * LayerNormalization over the last axis as PyTorch exports it before opset 17:
 * m = mean(x), d = x - m, var = mean(d ^ 2), (d / sqrt(var + eps)) * scale + bias,
 * nine nodes and as many passes.  The chain starts at the first ReduceMean r;
 * fills its nodes (the last one last), x, and the epsilon; -1 where it is not one.
 */
static int32_t ho_layer_norm_chain(const struct ho_graph *g, int32_t r, int32_t chain[9],
				   float *eps)
{
	int32_t x = ho_is(g, r, "ReduceMean", 1) ? g->nodes[r].inputs[0] : -1, sub, d, pw, r2, ad,
		sq, dv, mul, add, t;
	float two;

	if (x < 0 || !ho_mean_last(g, r, x))
		return -1;
	sub = ho_only_reader(g, g->nodes[r].outputs[0]);
	if (!ho_is(g, sub, "Sub", 2) || g->nodes[sub].inputs[0] != x ||
	    g->nodes[sub].inputs[1] != g->nodes[r].outputs[0])
		return -1;
	d = g->nodes[sub].outputs[0];
	if (g->tensors[d].n_consumers != 2 || (g->tensors[d].flags & HO_T_OUTPUT))
		return -1;
	pw = g->tensors[d].consumers[0];
	dv = g->tensors[d].consumers[1];
	if (!ho_is(g, pw, "Pow", 2)) {
		t = pw, pw = dv, dv = t;
	}
	if (!ho_is(g, pw, "Pow", 2) || g->nodes[pw].inputs[0] != d ||
	    !ho_scalar(g, g->nodes[pw].inputs[1], &two) || two != 2.0f)
		return -1;
	r2 = ho_only_reader(g, g->nodes[pw].outputs[0]);
	if (!ho_mean_last(g, r2, g->nodes[pw].outputs[0]))
		return -1;
	ad = ho_only_reader(g, g->nodes[r2].outputs[0]);
	if (!ho_is(g, ad, "Add", 2) ||
	    !ho_scalar(g, ho_other_input(g, ad, g->nodes[r2].outputs[0]), eps))
		return -1;
	sq = ho_only_reader(g, g->nodes[ad].outputs[0]);
	if (!ho_is(g, sq, "Sqrt", 1) || ho_only_reader(g, g->nodes[sq].outputs[0]) != dv ||
	    !ho_is(g, dv, "Div", 2) || g->nodes[dv].inputs[0] != d ||
	    g->nodes[dv].inputs[1] != g->nodes[sq].outputs[0])
		return -1;
	mul = ho_only_reader(g, g->nodes[dv].outputs[0]);
	if (!ho_is(g, mul, "Mul", 2))
		return -1;
	add = ho_only_reader(g, g->nodes[mul].outputs[0]);
	if (!ho_is(g, add, "Add", 2) ||
	    ho_vector(g, ho_other_input(g, mul, g->nodes[dv].outputs[0])) < 2 ||
	    ho_vector(g, ho_other_input(g, add, g->nodes[mul].outputs[0])) !=
		ho_vector(g, ho_other_input(g, mul, g->nodes[dv].outputs[0])))
		return -1;
	chain[0] = r, chain[1] = sub, chain[2] = pw, chain[3] = r2, chain[4] = ad;
	chain[5] = sq, chain[6] = dv, chain[7] = mul, chain[8] = add;
	return x;
}

/* Node n made LayerNormalization(x, scale, bias) over the last axis. */
static int ho_make_layer_norm(struct ho_graph *g, struct ho_node *n, int32_t x, int32_t scale,
			      int32_t bias, float eps, struct ho_error *err)
{
	int32_t *in = ho_arena_alloc(g->priv->arena, 3 * sizeof(int32_t));
	struct ho_attr *at = ho_arena_calloc(g->priv->arena, 2, sizeof(*at));

	if (!in || !at)
		return ho_err(err, -ENOMEM, "out of memory");
	in[0] = x, in[1] = scale, in[2] = bias;
	at[0] = (struct ho_attr){.name = "axis", .type = HO_ATTR_INT, .i = -1};
	at[1] = (struct ho_attr){.name = "epsilon", .type = HO_ATTR_FLOAT, .f = eps};
	n->op_type = "LayerNormalization";
	n->inputs = in;
	n->n_inputs = 3;
	n->attrs = at;
	n->n_attrs = 2;
	return 0;
}

/* Node n stands for chain's first k nodes too: their outputs' names. */
static int ho_absorb(struct ho_graph *g, struct ho_node *n, const int32_t *chain, int k,
		     struct ho_error *err)
{
	const char **names = ho_arena_calloc(g->priv->arena, (size_t)k, sizeof(*names));

	if (!names)
		return ho_err(err, -ENOMEM, "out of memory");
	for (int i = 0; i < k; i++)
		names[i] = g->tensors[g->nodes[chain[i]].outputs[0]].name;
	n->absorbed = names;
	n->n_absorbed = (uint32_t)k;
	return 0;
}

/*
 * A Pad of zeros on the spatial axes only, read by a Conv or an AveragePool alone
 * (explicit pads, no ceil_mode; an AveragePool with none of its own): its pads become
 * theirs, an AveragePool's counting the padding as the explicit zeros were counted.
 * PyTorch writes inception's count_include_pad pools so (nine Pad + AveragePool pairs
 * in inception_v3, 0.8 ms of a pass over memory each run).  The consumer, or -1; its
 * pads (begins, then ends) in pads.
 */
static int32_t ho_pad_consumer(const struct ho_graph *g, int32_t p, int64_t *pads, int *np)
{
	const struct ho_node *pn = &g->nodes[p], *cn;
	const struct ho_attr *mode = ho_node_attr(pn, "mode");
	int64_t all[2 * HO_MAX_RANK], cur[2 * HO_MAX_RANK], v[1];
	int32_t c;
	int n = -1, r;
	float zero;

	if (strcmp(pn->op_type, "Pad") || *pn->domain || pn->n_outputs != 1 || pn->outputs[0] < 0 ||
	    pn->n_inputs < 1 || pn->n_inputs > 3 ||
	    (mode && (mode->type != HO_ATTR_STRING || strcmp(mode->s, "constant"))) ||
	    (c = ho_only_reader(g, pn->outputs[0])) < 0)
		return -1;
	if (pn->n_inputs == 1) { /* before opset 11: attributes */
		const struct ho_attr *pa = ho_node_attr(pn, "pads");

		if (!pa || pa->type != HO_ATTR_INTS || pa->n > 2 * HO_MAX_RANK ||
		    ho_node_attr_f(pn, "value", 0) != 0)
			return -1;
		n = (int)pa->n;
		memcpy(all, pa->ints, pa->n * sizeof(int64_t));
	} else {
		const struct ho_tensor *pt = ho_node_input(g, pn, 1), *vt = ho_node_input(g, pn, 2);
		bool zeros = !vt || (ho_scalar(g, pn->inputs[2], &zero) && zero == 0) ||
			     ((vt->flags & HO_T_KNOWN) && vt->data &&
			      ho_tensor_ints(vt, vt->data, v, 1) == 1 && v[0] == 0);

		if (!pt || !(pt->flags & HO_T_KNOWN) || !pt->data || !zeros)
			return -1;
		n = ho_tensor_ints(pt, pt->data, all, 2 * HO_MAX_RANK);
	}
	r = n / 2;
	if (n < 6 || n % 2 || all[0] || all[1] || all[r] || all[r + 1])
		return -1;
	for (int a = 2; a < r; a++) {
		if (all[a] < 0 || all[r + a] < 0)
			return -1;
		pads[a - 2] = all[a];
		pads[r - 2 + a - 2] = all[r + a];
	}
	cn = &g->nodes[c];
	if (cn->n_inputs < 1 || cn->inputs[0] != pn->outputs[0] || *cn->domain || cn->n_absorbed ||
	    (strcmp(cn->op_type, "Conv") && strcmp(cn->op_type, "AveragePool")))
		return -1;
	const struct ho_attr *ap = ho_node_attr(cn, "auto_pad");

	if ((ap && (ap->type != HO_ATTR_STRING || strcmp(ap->s, "NOTSET"))) ||
	    !ho_node_attr_ints(cn, "pads", cur, (size_t)(n - 4), 0))
		return -1;
	for (int i = 0; i < n - 4; i++) {
		if (!strcmp(cn->op_type, "AveragePool") && cur[i])
			return -1; /* its own pads exclude or include: not both kinds at once */
		pads[i] += cur[i];
	}
	if (!strcmp(cn->op_type, "AveragePool") && ho_node_attr_i(cn, "ceil_mode", 0))
		return -1;
	*np = n - 4;
	return c;
}

/* Node c reads the Pad p's input, its pads those given (an AveragePool counting them). */
static int ho_take_pad(struct ho_graph *g, int32_t p, int32_t c, const int64_t *pads, int np,
		       struct ho_error *err)
{
	struct ho_node *cn = &g->nodes[c];
	struct ho_attr *at = ho_arena_calloc(g->priv->arena, cn->n_attrs + 2, sizeof(*at));
	int64_t *v = ho_arena_alloc(g->priv->arena, (size_t)np * sizeof(int64_t));
	uint32_t k = 0;

	if (!at || !v)
		return ho_err(err, -ENOMEM, "out of memory");
	for (uint32_t i = 0; i < cn->n_attrs; i++)
		if (strcmp(cn->attrs[i].name, "pads") &&
		    strcmp(cn->attrs[i].name, "count_include_pad"))
			at[k++] = cn->attrs[i];
	memcpy(v, pads, (size_t)np * sizeof(int64_t));
	at[k++] =
	    (struct ho_attr){.name = "pads", .type = HO_ATTR_INTS, .n = (size_t)np, .ints = v};
	if (!strcmp(cn->op_type, "AveragePool"))
		at[k++] =
		    (struct ho_attr){.name = "count_include_pad", .type = HO_ATTR_INT, .i = 1};
	cn->attrs = at;
	cn->n_attrs = k;
	cn->inputs[0] = g->nodes[p].inputs[0];
	return ho_absorb(g, cn, &p, 1, err);
}

/*
 * A Transpose read only by a Mul or Div by a scalar constant whose result only a MatMul
 * reads (the query of torch's multi-head attention, scaled after its Transpose): the
 * two swap, the scaling first, so that the Transpose is the MatMul's operand and may be
 * read through its strides (ho_matmul_through).  The same work in the other order: a
 * scalar scales every element alike.
 */
static bool ho_scaled_transpose(const struct ho_graph *g, int32_t tr)
{
	int32_t d, t, other;
	float v;

	if (!ho_is(g, tr, "Transpose", 1) || (t = g->nodes[tr].outputs[0]) < 0 ||
	    (d = ho_only_reader(g, t)) < 0 || (!ho_is(g, d, "Mul", 2) && !ho_is(g, d, "Div", 2)))
		return false;
	other = ho_other_input(g, d, t);
	if (other < 0 || other == t || !ho_scalar(g, other, &v) ||
	    (!strcmp(g->nodes[d].op_type, "Div") && g->nodes[d].inputs[0] != t))
		return false;
	return ho_is(g, ho_only_reader(g, g->nodes[d].outputs[0]), "MatMul", 2);
}

/* The Transpose tr and the scaling d after it change places (ho_scaled_transpose): the
 * scaling reads the Transpose's input and writes the tensor between them, which shape
 * inference sizes anew. */
static void ho_swap_scaled(struct ho_graph *g, int32_t tr, int32_t d)
{
	struct ho_node tn = g->nodes[tr], dn = g->nodes[d];
	int32_t t = tn.outputs[0];

	for (uint32_t k = 0; k < dn.n_inputs; k++)
		if (dn.inputs[k] == t)
			dn.inputs[k] = tn.inputs[0];
	tn.inputs[0] = t;
	tn.outputs[0] = dn.outputs[0];
	dn.outputs[0] = t;
	g->nodes[tr] = dn; /* producers stay: t's is tr, the result's d */
	g->nodes[d] = tn;
	g->tensors[t].flags &= ~HO_T_DECLARED;
}

/* Whether any of chain's k nodes has left already (another fold took it). */
static bool ho_any_gone(const bool *gone, const int32_t *chain, int k)
{
	for (int i = 0; i < k; i++)
		if (gone[chain[i]])
			return true;
	return false;
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
	int ret = 0;

	if (!gone)
		return ho_err(err, -ENOMEM, "out of memory");
	/* first, while every consumer list is as imported: in place, the swap leaves them
	 * right but for the scalar's, which the folds below never ask for */
	for (uint32_t i = 0; i < g->n_nodes; i++) {
		if (!ho_scaled_transpose(g, (int32_t)i))
			continue;
		ho_swap_scaled(g, (int32_t)i, ho_only_reader(g, g->nodes[i].outputs[0]));
		folded++; /* not a fold, but a consumer changed: validated anew below */
	}
	for (uint32_t i = 0; i < g->n_nodes; i++) {
		int32_t chain[5], x = ho_gelu_chain(g, (int32_t)i, chain);
		struct ho_node *last;

		if (x < 0 || ho_any_gone(gone, chain, 5))
			continue;
		last = &g->nodes[chain[4]];
		if ((ret = ho_absorb(g, last, chain, 4, err)))
			goto out;
		for (int k = 0; k < 4; k++)
			gone[chain[k]] = true;
		last->op_type = "Gelu";
		last->inputs[0] = x;
		last->n_inputs = 1;
		last->n_attrs = 0; /* approximate: "none", the erf form */
		folded++;
	}
	for (uint32_t i = 0; i < g->n_nodes; i++) {
		int32_t chain[4], x = ho_hardswish_chain(g, (int32_t)i, chain);
		struct ho_node *last;

		if (x < 0 || ho_any_gone(gone, chain, 4))
			continue;
		last = &g->nodes[chain[3]];
		if ((ret = ho_absorb(g, last, chain, 3, err)))
			goto out;
		for (int k = 0; k < 3; k++)
			gone[chain[k]] = true;
		last->op_type = "HardSwish";
		last->inputs[0] = x;
		last->n_inputs = 1;
		last->n_attrs = 0;
		folded++;
	}
	for (uint32_t i = 0; i < g->n_nodes; i++) {
		int32_t chain[9], x;
		float eps;

		if (gone[i] || (x = ho_layer_norm_chain(g, (int32_t)i, chain, &eps)) < 0 ||
		    ho_any_gone(gone, chain, 9))
			continue;
		int32_t y = g->nodes[chain[6]].outputs[0], m = g->nodes[chain[7]].outputs[0];

		if ((ret = ho_make_layer_norm(g, &g->nodes[chain[8]], x,
					      ho_other_input(g, chain[7], y),
					      ho_other_input(g, chain[8], m), eps, err)) ||
		    (ret = ho_absorb(g, &g->nodes[chain[8]], chain, 8, err)))
			goto out;
		for (int k = 0; k < 8; k++)
			gone[chain[k]] = true;
		folded++;
	}
	/* after the hard-swishes, whose Div by 6 is no scale of a Conv's input; a reader list
	 * the folds above left stale names a node gone or more than one, where it stops */
	if ((ret = ho_graph_fold_conv_affine(g, gone, &folded, err)))
		goto out;
	for (uint32_t i = 0; i < g->n_nodes; i++) {
		int64_t pads[2 * HO_MAX_RANK];
		int32_t c;
		int np;

		if (gone[i] || (c = ho_pad_consumer(g, (int32_t)i, pads, &np)) < 0 || gone[c])
			continue;
		if ((ret = ho_take_pad(g, (int32_t)i, c, pads, np, err)))
			goto out;
		gone[i] = true;
		folded++;
	}
	ret = folded ? ho_drop_nodes(g, gone, err) : 0;
out:
	free(gone);
	return ret;
}
