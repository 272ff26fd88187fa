// SPDX-License-Identifier: MIT
/* Element-wise kernels, one input (oneDNN eltwise, also as post-ops of a Conv or MatMul) and two
 * with broadcasting (oneDNN binary). */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cpu.h"

/* Gelu's tanh form (opset 20), which oneDNN computes. */
static bool ho_cpu_gelu_tanh(const struct ho_node *n)
{
	const struct ho_attr *a = ho_node_attr(n, "approximate");

	return a && a->type == HO_ATTR_STRING && !strcmp(a->s, "tanh");
}

/* An element-wise node as oneDNN's algorithm and parameters; false if it is not one. */
static bool eltwise_params(const struct ho_graph *g, const struct ho_node *n, void *const *buf,
			   dnnl_alg_kind_t *alg, float *alpha, float *beta)
{
	const struct ho_cpu_kernel_reg *reg = ho_cpu_kernel_reg(n->op_type);

	int32_t gate = ho_gate_of_mul(g, (int32_t)(n - g->nodes));

	if (gate >= 0) { /* x * sigmoid(x), x * hardsigmoid(x) */
		*alg = ho_gate_is_sigmoid(g, gate) ? dnnl_eltwise_swish : dnnl_eltwise_hardswish;
		*alpha = ho_gate_is_sigmoid(g, gate) ? 1.0f : 0;
		*beta = 0;
		return true;
	}
	if (!reg || !reg->eltwise_alg)
		return false;
	*alg = reg->eltwise_alg;
	*alpha = *beta = 0;
	if (!strcmp(n->op_type, "Gelu") && !ho_cpu_gelu_tanh(n)) {
		const struct ho_attr *a = ho_node_attr(n, "approximate");

		if (a && (a->type != HO_ATTR_STRING || strcmp(a->s, "none")))
			return false;
		/* the exact form: a post-op on oneDNN's; alone, unary.c's loop (prep_eltwise) */
		*alg = dnnl_eltwise_gelu_erf;
	} else if (!strcmp(n->op_type, "HardSigmoid")) {
		*alpha = ho_node_attr_f(n, "alpha", 0.2f);
		*beta = ho_node_attr_f(n, "beta", 0.5f);
	} else if (!strcmp(n->op_type, "LeakyRelu")) {
		*alpha = ho_node_attr_f(n, "alpha", 0.01f);
	} else if (!strcmp(n->op_type, "Elu")) {
		*alpha = ho_node_attr_f(n, "alpha", 1.0f);
	} else if (!strcmp(n->op_type, "Pow")) {
		const struct ho_tensor *e = ho_node_input(g, n, 1);

		if (!e || ho_shape_numel(&e->shape) != 1 || e->dtype != HO_DT_FLOAT ||
		    !(e->flags & HO_T_KNOWN))
			return false; /* an exponent per element, or computed: not element-wise */
		*alpha = 1.0f;
		*beta = ho_cpu_scalar_input(g, n, 1, buf, 1.0f);
	} else if (!strcmp(n->op_type, "Clip")) {
		/* opset 11+: bounds are inputs; before: attributes.  A primitive's
		 * bounds are fixed when it is made: a bound computed at run time is
		 * not known then. */
		for (uint32_t i = 1; i < 3; i++) {
			const struct ho_tensor *b = ho_node_input(g, n, i);

			if (b && !(b->flags & HO_T_KNOWN))
				return false;
		}
		*alpha = ho_cpu_scalar_input(g, n, 1, buf, ho_node_attr_f(n, "min", -FLT_MAX));
		*beta = ho_cpu_scalar_input(g, n, 2, buf, ho_node_attr_f(n, "max", FLT_MAX));
	}
	return true;
}

/*
 * An attribute with n (an element-wise node) as post-ops: after a kernel's
 * own work, or alone (first = true: n's first step is the kernel itself).
 */
int ho_cpu_eltwise_attr(struct ho_backend *c, const struct ho_graph *g, const struct ho_node *n,
			void *const *buf, bool first, dnnl_primitive_attr_t *attr)
{
	dnnl_post_ops_t po = NULL;
	dnnl_alg_kind_t alg;
	float alpha, beta;
	int ret = -ENOMEM;

	*attr = NULL;
	if (!eltwise_params(g, n, buf, &alg, &alpha, &beta))
		return -EINVAL;
	if (first && strcmp(n->op_type, "HardSigmoid"))
		return 0; /* nothing after the kernel */
	if (dnnl_post_ops_create(&po) != dnnl_success)
		return -ENOMEM;
	if ((first || dnnl_post_ops_append_eltwise(po, 1.0f, alg, alpha, beta) == dnnl_success) &&
	    (strcmp(n->op_type, "HardSigmoid") ||
	     dnnl_post_ops_append_eltwise(po, 1.0f, dnnl_eltwise_clip_v2, 0.0f, 1.0f) ==
		 dnnl_success) &&
	    dnnl_primitive_attr_clone(attr, c->attr) == dnnl_success &&
	    dnnl_primitive_attr_set_post_ops(*attr, po) == dnnl_success)
		ret = 0;
	dnnl_post_ops_destroy(po);
	return ret;
}

int ho_cpu_prep_eltwise(struct ho_backend *c, const struct ho_graph *g, const struct ho_node *n,
			void *const *buf, struct ho_kernel *k, struct ho_error *err)
{
	const struct ho_tensor *x = ho_node_input(g, n, 0);
	dnnl_eltwise_desc_t d;
	dnnl_primitive_attr_t attr = NULL;
	dnnl_memory_desc_t md;
	dnnl_alg_kind_t alg;
	float alpha, beta;
	int ret;

	if (!strcmp(n->op_type, "Clip") && !eltwise_params(g, n, buf, &alg, &alpha, &beta))
		return ho_cpu_prep_unary(g, n, buf, k, err); /* bounds computed at run time */
	/* oneDNN 2.6 runs an element-wise primitive with a post-op (HardSigmoid's
	 * clip) on its reference path: 7.5 ns an element here, 3 ms for
	 * MobileNetV3's first 112x112x16, where the loop takes 20 us */
	if (!strcmp(n->op_type, "HardSigmoid") ||
	    (!strcmp(n->op_type, "Gelu") && !ho_cpu_gelu_tanh(n)))
		return ho_cpu_prep_unary(g, n, buf, k, err);
	if (!x || x->dtype != HO_DT_FLOAT || !eltwise_params(g, n, buf, &alg, &alpha, &beta))
		return ho_cpu_unsupported(err, n, "runs float32 element-wise operators only");
	if (ho_cpu_eltwise_attr(c, g, n, buf, true, &attr))
		return ho_err(err, -ENOMEM, "node '%s': oneDNN post-ops failed", n->name);
	/* oneDNN 2.6's reference eltwise applies no post-op to a 1-D tensor (HardSigmoid
	 * came out 0): the same bytes as 1 x n */
	struct ho_shape xs = x->shape.rank == 1 ? ho_cpu_lift(&x->shape, 2) : x->shape;

	ho_cpu_t_md(c, &md, n->inputs[0], &xs);
	ret = ho_cpu_src_dst_kernel(
	    c, k, dnnl_eltwise_forward_desc_init(&d, dnnl_forward_inference, alg, &md, alpha, beta),
	    &d, attr, &md, &md, buf, n, "(oneDNN) has no element-wise kernel for this", err);
	if (attr)
		dnnl_primitive_attr_destroy(attr);
	return ret;
}

/* s with leading 1s up to rank r (numpy broadcasting aligns the last axes). */
struct ho_shape ho_cpu_lift(const struct ho_shape *s, int r)
{
	struct ho_shape o = {.rank = r};
	int sr = s->rank > 0 ? s->rank : 0;

	for (int i = 0; i < r; i++)
		o.dim[i] = i < r - sr ? 1 : s->dim[i - (r - sr)];
	return o;
}

/* A loop kernel over n's two inputs: which says which one is broadcast over the other. */
static void binary_loop(struct ho_kernel *k, const struct ho_node *n, void *const *buf,
			int (*run)(const struct ho_kernel *k), int op, int which, int64_t outer,
			int64_t inner)
{
	k->kind = HO_K_LOOP;
	k->typed.run = run;
	k->typed.op = op;
	k->typed.iparam[0] = which;
	k->typed.in[0] = buf[n->inputs[0]];
	k->typed.in[1] = buf[n->inputs[1]];
	k->typed.out = buf[n->outputs[0]];
	k->typed.outer = outer;
	k->typed.inner = inner;
}

/*
 * One operand per channel of a channels-last tensor: y[p][c] = a[p][c] op
 * b[c], or b[c] op a[p][c] (iparam[0]: b is the first), for Add, Mul, Sub
 * and Div.  oneDNN walks such a tensor pixel by pixel, a masked tail
 * wherever the channels are no multiple of 16: PP-OCRv4's 24-channel
 * 320x320 map plus a bias took 0.82 ms on one core.  Here the channels
 * are tiled 16 times over in k->fold, so every stretch of 16 * C elements
 * is one loop over whole vectors (fewer where C has factors of 2).
 */
struct ho_channels_job {
	const struct ho_kernel *k;
	int64_t span, n;
};

/* Spans lo to hi of the tiled channels (the last one maybe short). */
HO_VECTOR_CLONES static void ho_channels_spans(const void *arg, int64_t lo, int64_t hi)
{
	const struct ho_channels_job *job = arg;
	const struct ho_typed *t = &job->k->typed;
	const float *x = t->in[t->iparam[0] ? 1 : 0], *tile = job->k->fold;
	float *y = t->out;
	int64_t span = job->span, n = job->n;

	for (int64_t i = lo * span; i < n && i < hi * span; i += span) {
		int64_t m = n - i < span ? n - i : span, j = 0;
		const float *a = x + i;
		float *o = y + i;
		ho_v16 va = {0}, vt = {0};

		/* whole vectors, loaded before stored (y may be x), then the tail in a part
		 * of one (a memcpy of a length not fixed at compile time is a call: keep it
		 * out of the loop) */
#define HO_TILE(expr)                                                                              \
	for (; j + 16 <= m; j += 16) {                                                             \
		memcpy(&va, a + j, sizeof(va));                                                    \
		memcpy(&vt, tile + j, sizeof(vt));                                                 \
		va = expr;                                                                         \
		memcpy(o + j, &va, sizeof(va));                                                    \
	}                                                                                          \
	if (j < m) {                                                                               \
		memcpy(&va, a + j, (size_t)(m - j) * sizeof(float));                               \
		memcpy(&vt, tile + j, (size_t)(m - j) * sizeof(float));                            \
		va = expr;                                                                         \
		memcpy(o + j, &va, (size_t)(m - j) * sizeof(float));                               \
	}                                                                                          \
	break
		switch (t->op * 2 + (int)t->iparam[0]) { /* op: ho_cpu_prep_binary's map */
		case 0:
		case 1:
			HO_TILE(va + vt);
		case 2:
		case 3:
			HO_TILE(va * vt);
		case 4:
			HO_TILE(va - vt);
		case 5:
			HO_TILE(vt - va);
		case 6:
			HO_TILE(va / vt);
		default:
			HO_TILE(vt / va);
		}
#undef HO_TILE
	}
}

static int ho_run_channels(const struct ho_kernel *k)
{
	const struct ho_typed *t = &k->typed;
	const float *ch = t->in[t->iparam[0] ? 0 : 1];
	int64_t c = t->inner, reps = 16, n = t->outer * c, span, spans;

	/*
	 * The fewest copies of the channels that end on a whole vector: one where
	 * C is a multiple of 16 (16 built with a division per element took 35 us
	 * of EfficientNet's 1152 x 7 x 7 excitation, 2 us in all now).
	 */
	while (reps > 1 && (c * (reps / 2)) % 16 == 0)
		reps /= 2;
	span = reps * c;
	for (int64_t r = 0; r < reps; r++)
		memcpy(k->fold + r * c, ch, (size_t)c * sizeof(float));
	/* over the threads that wrote x: read on one core, EfficientNet's excitations ran
	 * 4x slower at two threads than at one (0.86 against 0.20 ms a run) */
	spans = (n + span - 1) / span;
	ho_cpu_for_parts(ho_cpu_row_parts(spans, span * (int64_t)sizeof(float), 1 << 17), spans,
			 ho_channels_spans, &(struct ho_channels_job){k, span, n});
	return 0;
}

/* Whether any of n's tensors is stored channels-last (of any rank: the flag is the plan's). */
static bool binary_any_cl(const struct ho_backend *c, const struct ho_node *n)
{
	return c->channels_last &&
	       (c->channels_last[n->inputs[0]] || c->channels_last[n->inputs[1]] ||
		c->channels_last[n->outputs[0]]);
}

/* Whether tensor t is stored channels-last. */
static bool binary_cl(const struct ho_backend *c, const struct ho_graph *g, int32_t t)
{
	return c->channels_last && c->channels_last[t] && g->tensors[t].shape.rank == 4;
}

/*
 * Element by element over memory where the layout cannot matter: the first
 * source and the output alike in shape and layout, the second one element
 * or their twin.  oneDNN's kernel for an NHWC tensor walks it pixel by
 * pixel, a masked tail wherever the channels are no multiple of 16:
 * PP-OCRv4's 24-channel maps ran at 24 GB/s where the same bytes flat run
 * at 70.
 */
static void binary_flat(const struct ho_backend *c, const struct ho_graph *g,
			const struct ho_node *n, int32_t ia, int32_t ib, dnnl_memory_desc_t *ma,
			dnnl_memory_desc_t *mb, dnnl_memory_desc_t *my)
{
	const struct ho_tensor *a = &g->tensors[ia], *b = &g->tensors[ib];
	int32_t out = n->outputs[0];
	int64_t na = ho_shape_numel(&a->shape), nb = ho_shape_numel(&b->shape);
	struct ho_shape flat = {.rank = 1, .dim = {na}}, one = {.rank = 1, .dim = {1}};
	bool cl = binary_cl(c, g, ia);

	if (cl != binary_cl(c, g, out) || a->shape.rank != g->tensors[out].shape.rank)
		return;
	if (nb != 1 && (nb != na || b->shape.rank != a->shape.rank || cl != binary_cl(c, g, ib)))
		return;
	ho_cpu_plain_md(ma, &flat);
	ho_cpu_plain_md(my, &flat);
	ho_cpu_plain_md(mb, nb == 1 ? &one : &flat);
}

/* The channel kernel, where one input is y's channels-last twin and the other one per channel. */
static bool channels_kernel(struct ho_backend *c, const struct ho_graph *g, const struct ho_node *n,
			    int op, void *const *buf, struct ho_kernel *k)
{
	const struct ho_tensor *y = &g->tensors[n->outputs[0]];

	if (!binary_cl(c, g, n->outputs[0]) || y->shape.dim[1] < 2)
		return false;
	for (int which = 0; which < 2; which++) {
		int32_t f = n->inputs[which ? 1 : 0];
		const struct ho_tensor *b = ho_node_input(g, n, which ? 0 : 1);
		struct ho_shape sb = ho_cpu_lift(&b->shape, 4);

		if (!binary_cl(c, g, f) || memcmp(g->tensors[f].shape.dim, y->shape.dim, 4 * 8) ||
		    b->shape.rank > 4 || sb.dim[0] != 1 || sb.dim[1] != y->shape.dim[1] ||
		    sb.dim[2] != 1 || sb.dim[3] != 1)
			continue;
		if (!(k->fold = malloc((size_t)(16 * sb.dim[1]) * sizeof(float))))
			return false;
		binary_loop(k, n, buf, ho_run_channels, op, which,
			    ho_shape_numel(&y->shape) / y->shape.dim[1], y->shape.dim[1]);
		return true;
	}
	return false;
}

int ho_cpu_prep_binary(struct ho_backend *c, const struct ho_graph *g, const struct ho_node *n,
		       void *const *buf, struct ho_kernel *k, struct ho_error *err)
{
	static const struct {
		const char *op;
		dnnl_alg_kind_t alg;
		bool commutes;
	} map[] = {
	    {"Add", dnnl_binary_add, true},  {"Mul", dnnl_binary_mul, true},
	    {"Sub", dnnl_binary_sub, false}, {"Div", dnnl_binary_div, false},
	    {"Max", dnnl_binary_max, true},  {"Min", dnnl_binary_min, true},
	};
	const struct ho_tensor *a = ho_node_input(g, n, 0), *b = ho_node_input(g, n, 1),
			       *y = &g->tensors[n->outputs[0]];
	int r = y->shape.rank > 0 ? y->shape.rank : 1;
	struct ho_shape sa, sb, sy = ho_cpu_lift(&y->shape, r);
	dnnl_memory_desc_t ma, mb, my;
	dnnl_binary_desc_t d;
	dnnl_primitive_desc_t pd = NULL;
	int32_t ia, ib;
	size_t i;
	int ret;

	for (i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (!strcmp(map[i].op, n->op_type))
			break;
	if (!a || !b || n->n_inputs != 2 || a->dtype != HO_DT_FLOAT || b->dtype != HO_DT_FLOAT)
		return ho_cpu_unsupported(err, n, "runs two-input float32 binary operators only");
	if (i < 4 && y->shape.rank == 4 && channels_kernel(c, g, n, (int)i, buf, k))
		return 0;
	sa = ho_cpu_lift(&a->shape, r);
	sb = ho_cpu_lift(&b->shape, r);
	ia = n->inputs[0];
	ib = n->inputs[1];
	/* oneDNN broadcasts its second source only: swap when the first is smaller. */
	if (memcmp(sa.dim, sy.dim, (size_t)r * sizeof(int64_t))) {
		struct ho_shape t = sa;

		/* oneDNN broadcasts one source only: both, or a first one, take a loop */
		if (!map[i].commutes || memcmp(sb.dim, sy.dim, (size_t)r * sizeof(int64_t)))
			return ho_cpu_prep_typed(g, n, buf, k, err);
		sa = sb;
		sb = t;
		ia = n->inputs[1];
		ib = n->inputs[0];
	}
	ho_cpu_t_md(c, &ma, g->tensors[ia].shape.rank == r ? ia : -1, &sa);
	ho_cpu_t_md(c, &mb, g->tensors[ib].shape.rank == r ? ib : -1, &sb);
	ho_cpu_t_md(c, &my, n->outputs[0], &sy);
	binary_flat(c, g, n, ia, ib, &ma, &mb, &my);
	if (dnnl_binary_desc_init(&d, map[i].alg, &ma, &mb, &my) != dnnl_success ||
	    dnnl_primitive_desc_create(&pd, &d, c->attr, c->eng, NULL) != dnnl_success)
		return ho_cpu_unsupported(err, n, "(oneDNN) has no binary kernel for these shapes");
	/*
	 * oneDNN 2.6's reference kernel only (one operand per row of the other, or repeated
	 * over a middle axis: convnext_tiny's [1,56,56,96] - [1,56,56,1] took 18 ms, swin_t's
	 * window mask 18 of its 130): typed.c's strided loop (Add, Sub, Mul, Div), which walks
	 * row-major tensors, so not where one is channels-last.
	 */
	if (i < 4 && ho_cpu_is_reference(pd) && !binary_any_cl(c, n)) {
		dnnl_primitive_desc_destroy(pd);
		return ho_cpu_prep_typed(g, n, buf, k, err);
	}

	ret = ho_cpu_mem(c, k, &ma, buf[ia], DNNL_ARG_SRC_0) ||
		      ho_cpu_mem(c, k, &mb, buf[ib], DNNL_ARG_SRC_1) ||
		      ho_cpu_mem(c, k, &my, buf[n->outputs[0]], DNNL_ARG_DST) ||
		      ho_cpu_prim(c, k, pd)
		  ? ho_err(err, -ENOMEM, "node '%s': oneDNN set-up failed", n->name)
		  : 0;
	dnnl_primitive_desc_destroy(pd);
	return ret;
}
