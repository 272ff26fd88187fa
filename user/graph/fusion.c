// SPDX-License-Identifier: MIT
/*
 * Kernel fusion told from the graph alone.  A Conv's kernel (oneDNN's, and
 * any accelerator's worth the name) takes in a BatchNormalization after it
 * (folded into its weights) and then one element-wise node (applied as it
 * writes), each the only reader of the one before: one pass over memory
 * instead of three.  A MatMul by constant weights takes in the Add of a
 * constant bias after it, and then one element-wise node.  A Conv's kernel
 * also takes in a residual Add (ResNet's, RegNet's, MobileNet's skip) and
 * one element-wise node after it, adding into the other operand's bytes
 * (oneDNN's sum post-op).  The runtime
 * fuses such a chain where all of it runs on one device; the simulator
 * charges it likewise, so that splitting a chain over two devices costs
 * what it costs: the lost fusion as well as the copy.
 */
#include <math.h>
#include <string.h>

#include "graph_priv.h"

int32_t ho_sole_reader(const struct ho_graph *g, int32_t t)
{
	int32_t b;

	if (t < 0 || g->tensors[t].n_consumers != 1 || (g->tensors[t].flags & HO_T_OUTPUT))
		return -1;
	b = g->tensors[t].consumers[0];
	if (!g->nodes[b].n_inputs || g->nodes[b].inputs[0] != t || !g->nodes[b].n_outputs ||
	    g->nodes[b].outputs[0] < 0)
		return -1;
	return b;
}

/*
 * b is an inference BatchNormalization whose four parameters are constants: foldable into
 * weights.  In training mode it normalises by the batch's own statistics, which no weights hold.
 */
static bool ho_constant_bn(const struct ho_graph *g, int32_t b)
{
	const struct ho_node *n = &g->nodes[b];
	const struct ho_attr *tm = ho_node_attr(n, "training_mode");

	if (strcmp(n->op_type, "BatchNormalization") || n->n_inputs < 5 ||
	    (tm && tm->type == HO_ATTR_INT && tm->i))
		return false;
	for (uint32_t o = 1; o < n->n_outputs; o++)
		if (n->outputs[o] >= 0)
			return false; /* its statistics are asked for */
	for (uint32_t k = 1; k < 5; k++)
		if (n->inputs[k] < 0 ||
		    !(g->tensors[n->inputs[k]].flags & (HO_T_INITIALIZER | HO_T_CONSTANT)))
			return false;
	return true;
}

int32_t ho_view_root(const struct ho_graph *g, int32_t t)
{
	for (;;) {
		int32_t p = g->tensors[t].producer;

		/* a view's first output is its input's bytes; any other (Dropout's mask) is not */
		if (p < 0 || (g->nodes[p].flags & HO_N_FOLDED) ||
		    !ho_node_is_view(g, &g->nodes[p]) || !g->nodes[p].n_inputs ||
		    g->nodes[p].inputs[0] < 0 || g->nodes[p].outputs[0] != t)
			return t;
		t = g->nodes[p].inputs[0];
	}
}

static bool ho_is_constant(const struct ho_tensor *t)
{
	return t->flags & HO_T_KNOWN;
}

/* Node b can run as a post-op: an element-wise op whose other operands are constants. */
static bool ho_post_op(const struct ho_graph *g, int32_t b)
{
	const struct ho_node *n = &g->nodes[b];

	if (!ho_op_is_post_op(n->op_type))
		return false;
	for (uint32_t i = 1; i < n->n_inputs; i++)
		if (n->inputs[i] >= 0 && !ho_is_constant(&g->tensors[n->inputs[i]]))
			return false;
	return true;
}

/* A constant float tensor of n elements, all on the last of rank axes: a bias. */
static bool ho_is_bias(const struct ho_tensor *c, int64_t n, int rank)
{
	if (!ho_is_constant(c) || c->dtype != HO_DT_FLOAT || c->shape.rank < 1 ||
	    c->shape.rank > rank || c->shape.dim[c->shape.rank - 1] != n)
		return false;
	return ho_shape_numel(&c->shape) == n;
}

void ho_matmul_chain(const struct ho_graph *g, uint32_t mm, int32_t *add, int32_t *post)
{
	const struct ho_node *n = &g->nodes[mm];
	const struct ho_tensor *w;
	int32_t t, b, other;

	*add = *post = -1;
	if (strcmp(n->op_type, "MatMul") || n->n_inputs < 2 || n->inputs[1] < 0 || !n->n_outputs ||
	    (t = n->outputs[0]) < 0 || g->tensors[t].n_consumers != 1 ||
	    (g->tensors[t].flags & HO_T_OUTPUT))
		return;
	w = &g->tensors[ho_view_root(g, n->inputs[1])];
	b = g->tensors[t].consumers[0];
	/* weights of no rows: a sum of nothing, which oneDNN's matmul cannot make (it divides
	 * by K); the MatMul and the Add then run apart */
	if (!ho_is_constant(w) || w->shape.rank != 2 || w->dtype != HO_DT_FLOAT ||
	    w->shape.dim[0] < 1 || strcmp(g->nodes[b].op_type, "Add") ||
	    g->nodes[b].n_inputs != 2 || !g->nodes[b].n_outputs || g->nodes[b].outputs[0] < 0)
		return;
	other = ho_other_input(g, b, t);
	if (other < 0 || other == t ||
	    !ho_is_bias(&g->tensors[ho_view_root(g, other)], w->shape.dim[1],
			g->tensors[t].shape.rank) ||
	    g->tensors[g->nodes[b].outputs[0]].shape.rank != g->tensors[t].shape.rank)
		return;
	*add = b;
	b = ho_sole_reader(g, g->nodes[b].outputs[0]);
	if (b >= 0 && ho_post_op(g, b))
		*post = b;
}

void ho_bn_fold(const struct ho_node *bn, const float *const p[4], const float *w, const float *b,
		int64_t oc, int64_t per, float *fw, float *fb)
{
	float eps = ho_node_attr_f(bn, "epsilon", 1e-5f);

	for (int64_t o = 0; o < oc; o++) {
		float scale = p[0][o] / sqrtf(p[3][o] + eps);

		for (int64_t j = 0; j < per; j++)
			fw[o * per + j] = w[o * per + j] * scale;
		fb[o] = ((b ? b[o] : 0.0f) - p[2][o]) * scale + p[1][o];
	}
}

/* HardSigmoid as HardSwish gates: alpha 1/6, beta 1/2 (torch writes 0.16666667). */
static bool ho_hard_swish_gate(const struct ho_node *n)
{
	return !strcmp(n->op_type, "HardSigmoid") &&
	       fabsf(ho_node_attr_f(n, "alpha", 0.2f) - 1.0f / 6) < 1e-7f &&
	       ho_node_attr_f(n, "beta", 0.5f) == 0.5f;
}

int32_t ho_gate_of_mul(const struct ho_graph *g, int32_t m)
{
	const struct ho_node *n = &g->nodes[m];

	if (strcmp(n->op_type, "Mul") || n->n_inputs != 2 || !n->n_outputs || n->outputs[0] < 0)
		return -1;
	for (int k = 0; k < 2; k++) {
		int32_t s = n->inputs[k], y = n->inputs[1 - k], p;

		if (s < 0 || y < 0 || s == y || (p = g->tensors[s].producer) < 0)
			continue;
		if ((!strcmp(g->nodes[p].op_type, "Sigmoid") || ho_hard_swish_gate(&g->nodes[p])) &&
		    g->nodes[p].n_inputs == 1 && g->nodes[p].inputs[0] == y &&
		    g->tensors[s].n_consumers == 1 && !(g->tensors[s].flags & HO_T_OUTPUT) &&
		    !(g->tensors[y].flags & HO_T_OUTPUT))
			return p;
	}
	return -1;
}

bool ho_gate_is_sigmoid(const struct ho_graph *g, int32_t gate)
{
	return !strcmp(g->nodes[gate].op_type, "Sigmoid");
}

/* t's readers are just a gate and the Mul of t by it: that Mul, else -1. */
static int32_t ho_gated_of(const struct ho_graph *g, int32_t t)
{
	const struct ho_tensor *tt = &g->tensors[t];

	if (tt->n_consumers != 2 || (tt->flags & HO_T_OUTPUT))
		return -1;
	for (int k = 0; k < 2; k++) {
		int32_t m = tt->consumers[k], s = tt->consumers[1 - k];

		if (ho_gate_of_mul(g, m) == s)
			return m;
	}
	return -1;
}

void ho_conv_chain(const struct ho_graph *g, uint32_t conv, int32_t *bn, int32_t *post)
{
	const struct ho_node *n = &g->nodes[conv];
	int32_t b, t;

	*bn = *post = -1;
	if ((strcmp(n->op_type, "Conv") && strcmp(n->op_type, "ConvTranspose")) || !n->n_outputs)
		return;
	t = n->outputs[0];
	b = ho_sole_reader(g, t);
	/*
	 * The fold rewrites the weights and bias once, before any run: they must be known
	 * then, themselves (a view of them on another device is a copy a run makes).
	 */
	if (b >= 0 && !strcmp(n->op_type, "Conv") && ho_constant_bn(g, b) && n->n_inputs > 1 &&
	    n->inputs[1] >= 0 && ho_is_constant(&g->tensors[n->inputs[1]]) &&
	    (n->n_inputs < 3 || n->inputs[2] < 0 || ho_is_constant(&g->tensors[n->inputs[2]]))) {
		*bn = b;
		t = g->nodes[b].outputs[0];
		b = ho_sole_reader(g, t);
	}
	if (b >= 0 && ho_post_op(g, b))
		*post = b;
	/*
	 * x * sigmoid(x) (swish) or x * hardsigmoid(x) (HardSwish, as torch
	 * exports it): one post-op, its gate folded too, after any
	 * convolution.  Once kept off depthwise ones on AVX2 (one AMD EPYC's
	 * 32-channel 112x112 one: 0.56 ms fused against 0.45 apart, the model
	 * no faster); on a later AMD EPYC (Zen 3, AVX2) efficientnet_b0 runs
	 * 3-5% faster fused at one and two threads, as on an Intel Xeon with
	 * AVX-512 (11.0 -> 10.1 ms at one thread): one pass over the tensor
	 * instead of three.
	 */
	else if (b < 0 && t >= 0 && (b = ho_gated_of(g, t)) >= 0)
		*post = b;
}

bool ho_reads_only_through(const struct ho_node *n, int32_t t, uint32_t inputs)
{
	for (uint32_t k = 0; k < n->n_inputs + n->n_implicit; k++)
		if ((k < n->n_inputs ? n->inputs[k] : n->implicit[k - n->n_inputs]) == t &&
		    !(k < n->n_inputs && k < 32 && (inputs >> k & 1)))
			return false;
	return true;
}

void ho_bn_chain(const struct ho_graph *g, uint32_t bn, int32_t *post)
{
	const struct ho_node *n = &g->nodes[bn];
	int32_t p = n->n_inputs && n->inputs[0] >= 0 ? g->tensors[n->inputs[0]].producer : -1, b, r;

	*post = -1;
	if (!ho_constant_bn(g, (int32_t)bn) || !n->n_outputs || n->outputs[0] < 0)
		return;
	if (p >= 0) { /* in its Conv's chain already */
		ho_conv_chain(g, (uint32_t)p, &b, &r);
		if (b == (int32_t)bn)
			return;
	}
	r = ho_sole_reader(g, n->outputs[0]);
	if (r >= 0 && !strcmp(g->nodes[r].op_type, "Relu") && !*g->nodes[r].domain)
		*post = r;
}

/* How far back from a Conv its residual's writer and readers are looked for: a
 * residual block's nodes, with room (the walk ends after 6 nodes from resnet50's and
 * regnet_x_400mf's last 1x1 convolutions, after 10 from mobilenet_v2's). */
#define HO_RESIDUAL_REACH 256

/*
 * Every node of want[0..n) (n <= 8) is an ancestor of node v, found walking
 * back from v over at most HO_RESIDUAL_REACH nodes; false if not found there.
 */
/* Node u is a Transpose a MatMul may read through (ho_matmul_through): a view then. */
static bool ho_read_through(const struct ho_graph *g, int32_t u)
{
	const struct ho_node *n = &g->nodes[u];
	int32_t t = n->n_outputs ? n->outputs[0] : -1, c;

	if (strcmp(n->op_type, "Transpose") || t < 0 || g->tensors[t].n_consumers != 1)
		return false;
	c = g->tensors[t].consumers[0];
	return ho_matmul_through(g, (uint32_t)c, 0) == u ||
	       ho_matmul_through(g, (uint32_t)c, 1) == u;
}

static bool ho_reaches_back(const struct ho_graph *g, uint32_t v, const int32_t *want, uint32_t n)
{
	int32_t seen[HO_RESIDUAL_REACH];
	uint32_t head = 0, tail = 0, found = 0;
	bool got[8] = {false};

	seen[tail++] = (int32_t)v;
	while (head < tail && found < n) {
		const struct ho_node *nd = &g->nodes[seen[head++]];

		for (uint32_t k = 0; k < nd->n_inputs + nd->n_implicit && found < n; k++) {
			int32_t t =
			    k < nd->n_inputs ? nd->inputs[k] : nd->implicit[k - nd->n_inputs];
			int32_t p = t >= 0 ? g->tensors[t].producer : -1;
			uint32_t s;

			for (s = 0; p >= 0 && s < tail && seen[s] != p; s++)
				;
			if (p < 0 || s < tail)
				continue;
			if (tail == HO_RESIDUAL_REACH)
				return false;
			seen[tail++] = p;
			for (uint32_t j = 0; j < n; j++)
				if (!got[j] && want[j] == p) {
					got[j] = true;
					found++;
				}
		}
	}
	return found == n;
}

int32_t ho_conv_residual(const struct ho_graph *g, uint32_t conv, int32_t bn, int32_t *post)
{
	const struct ho_node *n = &g->nodes[conv], *a;
	int32_t t = bn >= 0 ? g->nodes[bn].outputs[0] : n->n_outputs ? n->outputs[0] : -1, r, b;
	const struct ho_tensor *tt;

	*post = -1;
	if (t < 0)
		return -1;
	tt = &g->tensors[t];
	/* a dense 3x3 keeps Winograd's kernel (its own blocked destination, where no
	 * residual lies): on resnet18 that was worth 10% more than the fused Add.  2-D
	 * only: a 3-D one works in a blocked layout between plain tensors, where filling
	 * its destination with the residual first cost more than the Add (r3d_18 and
	 * r2plus1d_18 1.04-1.07x at one thread) */
	if (strcmp(n->op_type, "Conv") || tt->shape.rank != 4 ||
	    ho_kernel_class(g, n) == HO_KC_CONV_3X3)
		return -1;
	if (tt->n_consumers != 1 || (tt->flags & HO_T_OUTPUT) || tt->dtype != HO_DT_FLOAT)
		return -1;
	a = &g->nodes[tt->consumers[0]];
	if (strcmp(a->op_type, "Add") || a->n_inputs != 2 || !a->n_outputs || a->outputs[0] < 0)
		return -1;
	r = ho_other_input(g, tt->consumers[0], t);
	if (r < 0 || r == t || ho_is_constant(&g->tensors[r]) || g->tensors[r].dtype != tt->dtype ||
	    !ho_shape_same(&g->tensors[r].shape, &tt->shape) ||
	    !ho_shape_same(&g->tensors[a->outputs[0]].shape, &tt->shape))
		return -1;
	/* the kernel writes over r: r is made, and read by all but the Add, before it */
	const struct ho_tensor *rr = &g->tensors[r];
	int32_t want[8];
	uint32_t n_want = 0;

	if (rr->producer < 0 || ho_node_is_view(g, &g->nodes[rr->producer]) ||
	    (rr->flags & HO_T_OUTPUT) || rr->n_consumers > 8)
		return -1;
	want[n_want++] = rr->producer;
	for (uint32_t c = 0; c < rr->n_consumers; c++) {
		int32_t u = rr->consumers[c];
		uint32_t j;

		if (u == tt->consumers[0])
			continue;
		/* its readers see r's bytes too */
		if (ho_node_is_view(g, &g->nodes[u]) || ho_read_through(g, u))
			return -1;
		for (j = 0; j < n_want && want[j] != u; j++)
			;
		if (j == n_want)
			want[n_want++] = u;
	}
	if (!ho_reaches_back(g, conv, want, n_want))
		return -1;
	/* the sum lands in r's bytes: not for a graph output, which the caller's memory holds */
	if (g->tensors[a->outputs[0]].flags & HO_T_OUTPUT)
		return -1;
	b = ho_sole_reader(g, a->outputs[0]);
	if (b >= 0 && ho_post_op(g, b) && g->nodes[b].n_outputs && g->nodes[b].outputs[0] >= 0 &&
	    !(g->tensors[g->nodes[b].outputs[0]].flags & HO_T_OUTPUT))
		*post = b;
	return tt->consumers[0];
}

bool ho_transpose_perm(const struct ho_node *n, int r, int64_t *perm)
{
	unsigned seen = 0;

	if (r < 0 || r > HO_MAX_RANK || !ho_node_attr_ints(n, "perm", perm, (size_t)r, 0))
		return false;
	if (!ho_node_attr(n, "perm"))
		for (int i = 0; i < r; i++)
			perm[i] = r - 1 - i;
	for (int i = 0; i < r; i++) {
		if (perm[i] < 0 || perm[i] >= r || seen >> perm[i] & 1)
			return false;
		seen |= 1u << perm[i];
	}
	return true;
}

void ho_transpose_strides(const struct ho_graph *g, uint32_t tr, int64_t *stride)
{
	const struct ho_node *n = &g->nodes[tr];
	const struct ho_shape *in = &g->tensors[n->inputs[0]].shape;
	int64_t perm[HO_MAX_RANK], s[HO_MAX_RANK], acc = 1;
	int r = in->rank;

	for (int i = r - 1; i >= 0; i--) {
		s[i] = acc;
		acc *= in->dim[i];
	}
	if (!ho_transpose_perm(n, r, perm)) /* ho_matmul_through said it is one */
		return;
	for (int i = 0; i < r; i++)
		stride[i] = s[perm[i]];
}

void ho_transpose_out_strides(const struct ho_graph *g, uint32_t tr, int64_t *stride)
{
	const struct ho_node *n = &g->nodes[tr];
	const struct ho_shape *out = &g->tensors[n->outputs[0]].shape;
	int64_t perm[HO_MAX_RANK], acc = 1;
	int r = out->rank;

	if (!ho_transpose_perm(n, r, perm)) /* ho_matmul_out_through said it is one */
		return;
	for (int i = r - 1; i >= 0; i--) {
		stride[perm[i]] = acc;
		acc *= out->dim[i];
	}
}

/* Node mm is a MatMul of float operands of equal ranks of 3 or more and equal batches. */
static bool ho_batched_matmul(const struct ho_graph *g, const struct ho_node *n)
{
	const struct ho_tensor *a, *b;
	int r;

	if (strcmp(n->op_type, "MatMul") || *n->domain || n->n_inputs != 2 || n->inputs[0] < 0 ||
	    n->inputs[1] < 0 || !n->n_outputs || n->outputs[0] < 0)
		return false;
	a = &g->tensors[n->inputs[0]];
	b = &g->tensors[n->inputs[1]];
	r = a->shape.rank;
	return r >= 3 && b->shape.rank == r && a->dtype == HO_DT_FLOAT && b->dtype == HO_DT_FLOAT &&
	       !memcmp(a->shape.dim, b->shape.dim, (size_t)(r - 2) * sizeof(a->shape.dim[0]));
}

/* Transpose node p of rank r: one input, no other domain, a permutation into perm. */
static bool ho_plain_transpose(const struct ho_graph *g, int32_t p, int r, int64_t *perm)
{
	const struct ho_node *n = &g->nodes[p];

	return !strcmp(n->op_type, "Transpose") && !*n->domain && n->n_inputs == 1 &&
	       n->inputs[0] >= 0 && n->n_outputs && n->outputs[0] >= 0 &&
	       g->tensors[n->inputs[0]].shape.rank == r && ho_transpose_perm(n, r, perm);
}

int32_t ho_matmul_through(const struct ho_graph *g, uint32_t mm, uint32_t k)
{
	const struct ho_node *n = &g->nodes[mm];
	const struct ho_tensor *t;
	int64_t stride[HO_MAX_RANK];
	int32_t p;
	int r;

	if (k > 1 || !ho_batched_matmul(g, n) || n->inputs[0] == n->inputs[1])
		return -1;
	t = &g->tensors[n->inputs[k]];
	r = t->shape.rank;
	if (t->n_consumers != 1 || (t->flags & HO_T_OUTPUT) || (p = t->producer) < 0 ||
	    !ho_plain_transpose(g, p, r, stride))
		return -1;
	ho_transpose_strides(g, (uint32_t)p, stride);
	return stride[r - 1] == 1 || stride[r - 2] == 1 ? p : -1;
}

int32_t ho_matmul_out_through(const struct ho_graph *g, uint32_t mm)
{
	const struct ho_node *n = &g->nodes[mm];
	int64_t perm[HO_MAX_RANK];
	const struct ho_tensor *y;
	int32_t p;
	int r;

	if (!ho_batched_matmul(g, n))
		return -1;
	y = &g->tensors[n->outputs[0]];
	r = y->shape.rank;
	if (y->n_consumers != 1 || (y->flags & HO_T_OUTPUT) ||
	    !ho_plain_transpose(g, p = y->consumers[0], r, perm) || perm[r - 1] != r - 1)
		return -1;
	return p;
}

void ho_chain_links(const struct ho_graph *g, uint32_t head, int32_t link[4])
{
	const char *op = g->nodes[head].op_type;

	link[0] = link[1] = link[2] = link[3] = -1;
	if (!strcmp(op, "MatMul")) {
		ho_matmul_chain(g, head, &link[0], &link[3]);
		if (link[0] < 0 && link[3] < 0)
			link[3] = ho_matmul_out_through(g, head);
	} else if (!strcmp(op, "BatchNormalization")) {
		ho_bn_chain(g, head, &link[3]);
	} else {
		ho_conv_chain(g, head, &link[0], &link[3]);
		/* a swish or HardSwish post-op: its gate is a link of the chain too */
		link[2] = link[3] >= 0 ? ho_gate_of_mul(g, link[3]) : -1;
		if (link[3] < 0)
			link[1] = ho_conv_residual(g, head, link[0], &link[3]);
	}
}
