// SPDX-License-Identifier: MIT
/*
 * A scale and shift by constants after a Conv, folded into its weights and bias at load.
 * PaddlePaddle exports each re-parameterised block of its OCR models as Conv -> Mul by a
 * scalar -> Add of a scalar (the PP-OCRv4 detector: 25 of its 62 Convs, then a
 * hard-swish): two passes over the map each, which no precision speeds up, and the Conv
 * could not take the hard-swish as its post-op through them.  y = s * conv(x) + a is
 * the Conv with weights s * W and bias s * b + a, per output channel; that holds with any
 * padding, as the scale and shift come after the sums.
 * Before a Conv too, by scalars (of rank 0 or 1: the map's shape is not known at load,
 * and a wider constant could broadcast it to what the Conv reads), the shift only where
 * the Conv pads nothing: conv(s * x + a) is the Conv with weights W * s and bias
 * b + a * sum(W) (a padded zero would have been a).  PaddlePaddle writes the same Mul
 * and Add after each hard-swish; the detector's ten before a 1x1 Conv fold so.
 * Folded: Mul and Div by, Add and Sub of, a constant that is a scalar or one value per
 * output channel (broadcast on the channel axis alone), each link read by the next alone
 * and no graph output; a shift only where the Conv has a bias to take it.  The weights
 * and bias must be the Conv's alone, known at load.  The Conv keeps its name, writes the
 * last link's output and names the others' (absorbed); the links leave the graph.
 */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "graph_priv.h"

/* The most links one Conv takes in (PaddlePaddle writes two). */
#define HO_AFFINE_MAX 4

/* A float weight known at load that one node alone reads: its elements (*n), else NULL. */
static const float *ho_own_weight(const struct ho_graph *g, int32_t t, int64_t *n)
{
	const struct ho_tensor *x = t >= 0 ? &g->tensors[t] : NULL;

	if (!x || !(x->flags & (HO_T_INITIALIZER | HO_T_CONSTANT)) || x->dtype != HO_DT_FLOAT ||
	    !x->data || x->n_consumers != 1 || (x->flags & HO_T_OUTPUT) ||
	    (*n = ho_shape_numel(&x->shape)) < 1 || x->data_len != (uint64_t)*n * sizeof(float))
		return NULL;
	return x->data;
}

/*
 * Constant t as one value per output channel of a rank-dimensional map with oc
 * channels: its data, and in *per how many (1: a scalar, oc: per channel); else NULL.
 */
static const float *ho_channel_const(const struct ho_graph *g, int32_t t, int rank, int64_t oc,
				     int64_t *per)
{
	const struct ho_tensor *x = t >= 0 ? &g->tensors[t] : NULL;
	int64_t n;

	if (!x || !(x->flags & (HO_T_INITIALIZER | HO_T_CONSTANT)) || x->dtype != HO_DT_FLOAT ||
	    !x->data || x->shape.rank < 0 || x->shape.rank > rank ||
	    (n = ho_shape_numel(&x->shape)) < 1 || x->data_len != (uint64_t)n * sizeof(float))
		return NULL;
	if (n != 1) { /* oc on the channel axis (1 of rank, aligned from the right) */
		int ch = x->shape.rank - rank + 1;

		if (n != oc || ch < 0 || x->shape.dim[ch] != oc)
			return NULL;
	}
	*per = x->shape.rank > 1 ? -n : n; /* < 0: of a rank that may broadcast the map's */
	return x->data;
}

/* One link: y = scale * x + shift, per channel (one of them NULL where the op has none). */
struct ho_affine_link {
	int32_t node, in; /* in: the map it reads */
	const float *scale, *shift;
	int64_t per;	     /* values: 1 or the channels */
	bool wide;	     /* the constant's rank is past 1: it may widen the map it reads */
	bool invert, negate; /* Div: 1 / scale; Sub: -shift */
};

/* Node b, reading t, as an affine link of a map of rank and oc channels. */
static bool ho_affine_link(const struct ho_graph *g, int32_t b, int32_t t, int rank, int64_t oc,
			   struct ho_affine_link *l)
{
	const struct ho_node *n = &g->nodes[b];
	const char *op = n->op_type;
	bool mul = !strcmp(op, "Mul"), div = !strcmp(op, "Div"), add = !strcmp(op, "Add"),
	     sub = !strcmp(op, "Sub");
	int k;

	if (!(mul || div || add || sub) || *n->domain || n->n_inputs != 2 || n->n_outputs != 1 ||
	    n->outputs[0] < 0 || n->inputs[0] == n->inputs[1])
		return false;
	k = n->inputs[0] == t ? 1 : 0; /* the constant's place: after x for Div and Sub */
	if (n->inputs[1 - k] != t || ((div || sub) && k != 1))
		return false;
	*l = (struct ho_affine_link){.node = b, .in = t, .invert = div, .negate = sub};
	const float *c = ho_channel_const(g, n->inputs[k], rank, oc, &l->per);

	if (!c)
		return false;
	l->wide = l->per < 0;
	l->per = l->wide ? -l->per : l->per;
	if (add || sub) {
		l->shift = c;
		return true;
	}
	for (int64_t o = 0; o < l->per; o++)
		if (!isfinite(c[o]) || (div && c[o] == 0))
			return false; /* a scale of no number stays as written */
	l->scale = c;
	return true;
}

/* Conv n pads nothing: its pads all 0 (VALID, or NOTSET with no pads). */
static bool ho_pads_nothing(const struct ho_node *n)
{
	const struct ho_attr *p = ho_node_attr(n, "pads");
	const struct ho_attr *ap = ho_node_attr(n, "auto_pad");

	if (ap && ap->s && strcmp(ap->s, "NOTSET") && strcmp(ap->s, "VALID"))
		return false;
	for (size_t i = 0; p && i < p->n; i++)
		if (p->ints[i])
			return false;
	return true;
}

/*
 * The links before Conv c (read by the next alone, the first reading the map), up to
 * HO_AFFINE_MAX, into l in the order they compute: how many.  A shift only where the
 * Conv has a bias and pads nothing; cin its input channels.
 */
static int ho_affine_before(const struct ho_graph *g, int32_t c, int rank, int64_t cin,
			    bool shift_ok, const bool *gone, struct ho_affine_link *l)
{
	struct ho_affine_link back[HO_AFFINE_MAX];
	int32_t t = g->nodes[c].inputs[0], b;
	int n = 0;

	while (n < HO_AFFINE_MAX && t >= 0 && g->tensors[t].n_consumers == 1 &&
	       !(g->tensors[t].flags & HO_T_OUTPUT) && (b = g->tensors[t].producer) >= 0 &&
	       !gone[b] && g->nodes[b].n_inputs == 2) {
		int32_t x = -1;

		for (int k = 0; k < 2 && x < 0; k++)
			if (ho_affine_link(g, b, g->nodes[b].inputs[k], rank, cin, &back[n]))
				x = g->nodes[b].inputs[k];
		/* before a Conv the map's shape is not known yet: a scalar of rank 0 or 1 keeps
		 * it, where one per channel, or of rank 4, could broadcast a map of one channel
		 * or of lower rank to what the Conv reads */
		if (x < 0 || (back[n].shift && !shift_ok) || back[n].per != 1 || back[n].wide)
			break;
		t = x;
		n++;
	}
	for (int i = 0; i < n; i++)
		l[i] = back[n - 1 - i];
	return n;
}

/* The links after Conv c, up to HO_AFFINE_MAX, into l: how many (a shift only with bias). */
static int ho_affine_links(const struct ho_graph *g, int32_t c, int rank, int64_t oc, bool bias,
			   const bool *gone, struct ho_affine_link *l)
{
	int32_t t = g->nodes[c].outputs[0], b;
	int n = 0;

	while (n < HO_AFFINE_MAX && t >= 0 && g->tensors[t].n_consumers == 1 &&
	       !(g->tensors[t].flags & HO_T_OUTPUT) && (b = g->tensors[t].consumers[0]) >= 0 &&
	       !gone[b] && ho_affine_link(g, b, t, rank, oc, &l[n]) && (bias || !l[n].shift)) {
		t = g->nodes[b].outputs[0];
		n++;
	}
	return n;
}

/* Weight t's elements replaced by v (n of them), its decoded value too where it had one. */
static int ho_set_weight(struct ho_graph *g, int32_t t, float *v, int64_t n, struct ho_error *err)
{
	struct ho_tensor *x = &g->tensors[t];

	x->data = v;
	if (x->value &&
	    !(x->value = ho_value_from_data(g->priv->arena, x->dtype, v, x->data_len, n)))
		return ho_err(err, -ENOMEM, "out of memory");
	return 0;
}

/* Links l[0..k), in the order they compute, as one y = s * x + a on channel ch. */
static void ho_affine_compose(const struct ho_affine_link *l, int k, int64_t ch, double *s,
			      double *a)
{
	*s = 1;
	*a = 0;
	for (int i = 0; i < k; i++) {
		const float *v = l[i].scale ? l[i].scale : l[i].shift;
		double x = v[l[i].per == 1 ? 0 : ch];

		if (l[i].scale) {
			*s = l[i].invert ? *s / x : *s * x;
			*a = l[i].invert ? *a / x : *a * x;
		} else {
			*a += l[i].negate ? -x : x;
		}
	}
}

/* Node n names the outputs of links l[0..k) too (absorbed), with out (-1: none) first. */
static int ho_absorb_links(struct ho_graph *g, struct ho_node *n, int32_t out,
			   const struct ho_affine_link *l, int k, struct ho_error *err)
{
	uint32_t m = n->n_absorbed;
	const char **names = ho_arena_calloc(g->priv->arena, m + (size_t)k + 1, sizeof(*names));

	if (!names)
		return ho_err(err, -ENOMEM, "out of memory");
	for (uint32_t i = 0; i < n->n_absorbed; i++)
		names[i] = n->absorbed[i];
	if (out >= 0)
		names[m++] = g->tensors[out].name;
	for (int i = 0; i < k; i++)
		if (out < 0 || i + 1 < k) /* after the Conv, the last link's output is its own */
			names[m++] = g->tensors[g->nodes[l[i].node].outputs[0]].name;
	n->absorbed = names;
	n->n_absorbed = m;
	return 0;
}

/* A new buffer of n floats in g's arena, or NULL. */
static float *ho_floats(struct ho_graph *g, int64_t n)
{
	return n > 0 ? ho_arena_alloc(g->priv->arena, (size_t)n * sizeof(float)) : NULL;
}

/* Conv c's weights and bias scaled and shifted by links l[0..k) after it, which leave. */
static int ho_take_after(struct ho_graph *g, int32_t c, const struct ho_affine_link *l, int k,
			 bool *gone, struct ho_error *err)
{
	struct ho_node *n = &g->nodes[c];
	int32_t wt = n->inputs[1], bt = n->n_inputs > 2 ? n->inputs[2] : -1;
	int64_t nw, nb = 0, oc = g->tensors[wt].shape.dim[0];
	const float *w = ho_own_weight(g, wt, &nw), *b = bt >= 0 ? ho_own_weight(g, bt, &nb) : NULL;
	float *fw = ho_floats(g, nw), *fb = b ? ho_floats(g, nb) : NULL;
	int32_t out = g->nodes[l[k - 1].node].outputs[0];
	int64_t per = nw / oc;
	int ret;

	if (!fw || (b && !fb))
		return ho_err(err, -ENOMEM, "out of memory");
	for (int64_t o = 0; o < oc; o++) {
		double s, a;

		ho_affine_compose(l, k, o, &s, &a);
		for (int64_t j = 0; j < per; j++)
			fw[o * per + j] = (float)(w[o * per + j] * s);
		if (fb)
			fb[o] = (float)(b[o] * s + a);
	}
	if ((ret = ho_set_weight(g, wt, fw, nw, err)) ||
	    (fb && (ret = ho_set_weight(g, bt, fb, nb, err))) ||
	    (ret = ho_absorb_links(g, n, n->outputs[0], l, k, err)))
		return ret;
	/* the Conv writes the last link's output */
	g->tensors[n->outputs[0]].producer = -1;
	n->outputs[0] = out;
	g->tensors[out].producer = c;
	for (int i = 0; i < k; i++)
		gone[l[i].node] = true;
	return 0;
}

/* Conv c's weights and bias taking links l[0..k) before it (per input channel), which
 * leave: the Conv reads what the first read. */
static int ho_take_before(struct ho_graph *g, int32_t c, const struct ho_affine_link *l, int k,
			  bool *gone, struct ho_error *err)
{
	struct ho_node *n = &g->nodes[c];
	int32_t wt = n->inputs[1], bt = n->n_inputs > 2 ? n->inputs[2] : -1;
	const struct ho_tensor *wx = &g->tensors[wt];
	int64_t nw, nb = 0, oc = wx->shape.dim[0], cpg = wx->shape.dim[1];
	const float *w = ho_own_weight(g, wt, &nw), *b = bt >= 0 ? ho_own_weight(g, bt, &nb) : NULL;
	float *fw = ho_floats(g, nw), *fb = b ? ho_floats(g, nb) : NULL;
	int64_t groups = ho_node_attr_i(n, "group", 1), opg = oc / groups, kk = nw / oc / cpg;
	int ret;

	if (!fw || (b && !fb))
		return ho_err(err, -ENOMEM, "out of memory");
	for (int64_t o = 0; o < oc; o++) {
		double sum = 0, s, a;

		for (int64_t ci = 0; ci < cpg; ci++) {
			const float *wo = &w[(o * cpg + ci) * kk];

			ho_affine_compose(l, k, o / opg * cpg + ci, &s, &a);
			for (int64_t j = 0; j < kk; j++) {
				fw[(o * cpg + ci) * kk + j] = (float)(wo[j] * s);
				sum += wo[j] * a;
			}
		}
		if (fb)
			fb[o] = (float)(b[o] + sum);
	}
	if ((ret = ho_set_weight(g, wt, fw, nw, err)) ||
	    (fb && (ret = ho_set_weight(g, bt, fb, nb, err))) ||
	    (ret = ho_absorb_links(g, n, -1, l, k, err)))
		return ret;
	n->inputs[0] = l[0].in;
	for (int i = 0; i < k; i++)
		gone[l[i].node] = true;
	return 0;
}

int ho_graph_fold_conv_affine(struct ho_graph *g, bool *gone, uint32_t *folded,
			      struct ho_error *err)
{
	for (uint32_t c = 0; c < g->n_nodes; c++) {
		const struct ho_node *n = &g->nodes[c];
		struct ho_affine_link l[HO_AFFINE_MAX];
		int64_t nw, nb = 0, groups;
		int k, ret;

		if (gone[c] || strcmp(n->op_type, "Conv") || *n->domain || n->n_inputs < 2 ||
		    n->inputs[0] < 0 || n->n_outputs != 1 || n->outputs[0] < 0 || n->n_absorbed ||
		    !ho_own_weight(g, n->inputs[1], &nw) || g->tensors[n->inputs[1]].shape.rank < 3)
			continue;
		const struct ho_shape *ws = &g->tensors[n->inputs[1]].shape;
		bool bias = n->n_inputs > 2 && n->inputs[2] >= 0;

		groups = ho_node_attr_i(n, "group", 1);
		if (ws->dim[0] < 1 || ws->dim[1] < 1 || groups < 1 || ws->dim[0] % groups ||
		    (bias && (!ho_own_weight(g, n->inputs[2], &nb) || nb != ws->dim[0])))
			continue;
		k = ho_affine_before(g, (int32_t)c, ws->rank, ws->dim[1] * groups,
				     bias && ho_pads_nothing(n), gone, l);
		if (k && (ret = ho_take_before(g, (int32_t)c, l, k, gone, err)))
			return ret;
		*folded += k > 0;
		k = ho_affine_links(g, (int32_t)c, ws->rank, ws->dim[0], bias, gone, l);
		if (k && (ret = ho_take_after(g, (int32_t)c, l, k, gone, err)))
			return ret;
		*folded += k > 0;
	}
	return 0;
}
