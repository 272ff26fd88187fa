// SPDX-License-Identifier: MIT
/*
 * The OpenCL backend's operators: one prepare per operator family, listed
 * once in ocl_ops[].  A prepare checks what it runs (float32, the ranks and
 * attributes its kernel handles), sets its kernels' arguments over the
 * tensors' (buffer, offset) handles once, and leaves launching to device.c.
 * Anything else is refused with the node's name and what is missing.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ocl.h"

struct ocl_ctx {
	struct ho_backend *b;
	const struct ho_graph *g;
	const struct ho_node *n;
	const struct ho_fusion *fuse;
	const struct ho_mem *mem;
	struct ho_kernel *k;
	struct ho_error *err;
};

static int ocl_refuse(const struct ocl_ctx *c, const char *why)
{
	return ho_err(c->err, -EOPNOTSUPP, "node '%s' (%s): the OpenCL backend %s", c->n->name,
		      c->n->op_type, why);
}

/* A float constant's value i, from the graph: weights, Constant outputs, folded values. */
static float const_f(const struct ocl_ctx *c, int32_t t, int64_t i)
{
	const struct ho_tensor *tt = &c->g->tensors[t];

	if (tt->data)
		return ((const float *)tt->data)[i];
	if (tt->value && tt->value->f)
		return (float)tt->value->f[i];
	return tt->value && tt->value->i ? (float)tt->value->i[i] : 0.0f;
}

/* t holds a value known at plan time that const_f reads. */
static bool is_const(const struct ocl_ctx *c, int32_t t)
{
	const struct ho_tensor *tt = &c->g->tensors[t];

	return (tt->flags & HO_T_KNOWN) && tt->dtype == HO_DT_FLOAT &&
	       (tt->data || (tt->value && (tt->value->f || tt->value->i)));
}

/* A new launch of kernel name; its arguments set by the caller. */
static struct ocl_launch *ocl_new_launch(const struct ocl_ctx *c, const char *name)
{
	struct ho_kernel *k = c->k;
	cl_int e = CL_SUCCESS;

	if (k->n == k->cap) {
		int cap = k->cap ? 2 * k->cap : 4;
		struct ocl_launch *l = realloc(k->l, (size_t)cap * sizeof(*l));

		if (!l)
			return NULL;
		k->l = l;
		k->cap = cap;
	}
	memset(&k->l[k->n], 0, sizeof(k->l[0]));
	k->l[k->n].k = clCreateKernel(c->b->prog, name, &e);
	if (e != CL_SUCCESS)
		return NULL;
	return &k->l[k->n++];
}

/* Kernel arguments, in order, through one cursor. */
struct ocl_args {
	cl_kernel k;
	cl_uint i;
	cl_int e;
};

static void a_raw(struct ocl_args *a, size_t len, const void *v)
{
	if (a->e == CL_SUCCESS)
		a->e = clSetKernelArg(a->k, a->i, len, v);
	a->i++;
}

static void a_int(struct ocl_args *a, int v)
{
	a_raw(a, sizeof(v), &v);
}

static void a_long(struct ocl_args *a, long v)
{
	cl_long l = v;

	a_raw(a, sizeof(l), &l);
}

static void a_float(struct ocl_args *a, float v)
{
	a_raw(a, sizeof(v), &v);
}

static void a_buf(struct ocl_args *a, cl_mem m)
{
	a_raw(a, sizeof(m), &m);
}

/* A tensor: its block's buffer and its offset in floats. */
static void a_tensor(struct ocl_args *a, const struct ocl_ctx *c, int32_t t)
{
	a_buf(a, c->mem[t].block->mem);
	a_long(a, (long)(c->mem[t].off / sizeof(float)));
}

static void a_act(struct ocl_args *a, const struct ocl_act_args *act)
{
	a_int(a, act->act);
	a_float(a, act->p);
	a_float(a, act->q);
}

static void a_int8(struct ocl_args *a, const int *v)
{
	cl_int8 x;

	memcpy(&x, v, sizeof(x));
	a_raw(a, sizeof(x), &x);
}

static int ocl_args_done(const struct ocl_ctx *c, const struct ocl_args *a)
{
	if (a->e != CL_SUCCESS)
		return ho_err(c->err, -EINVAL, "node '%s' (%s): OpenCL kernel arguments: %s (%d)",
			      c->n->name, c->n->op_type, ocl_strerror(a->e), a->e);
	return 0;
}

static struct ocl_args ocl_start(struct ocl_launch *l)
{
	return (struct ocl_args){.k = l->k};
}

static int ocl_no_kernel(const struct ocl_ctx *c)
{
	return ho_err(c->err, -ENOMEM, "node '%s' (%s): cannot create its OpenCL kernel",
		      c->n->name, c->n->op_type);
}

/* Unary operators and their act() codes. */
static const struct {
	const char *op;
	int act;
} ocl_unary_ops[] = {
    {"Relu", OCL_RELU},
    {"Sigmoid", OCL_SIGMOID},
    {"Tanh", OCL_TANH},
    {"Clip", OCL_CLIP},
    {"LeakyRelu", OCL_LEAKY_RELU},
    {"HardSigmoid", OCL_HARD_SIGMOID},
    {"HardSwish", OCL_HARD_SWISH},
    {"Exp", OCL_EXP},
    {"Sqrt", OCL_SQRT},
    {"Neg", OCL_NEG},
    {"Abs", OCL_ABS},
    {"Erf", OCL_ERF},
    {"Reciprocal", OCL_RECIPROCAL},
    {"Gelu", OCL_GELU},
    {"Log", OCL_LOG},
    {"Floor", OCL_FLOOR},
    {"Ceil", OCL_CEIL},
    {"Elu", OCL_ELU},
    {"Softplus", OCL_SOFTPLUS},
    {"Identity", OCL_NONE},
};

/*
 * Node i as an activation: a unary operator (Clip's bounds constant), or the
 * Mul of a swish whose Sigmoid was folded.  false: not one.
 */
static bool ocl_act_of(const struct ocl_ctx *c, int32_t i, struct ocl_act_args *out)
{
	const struct ho_node *n = &c->g->nodes[i];

	*out = (struct ocl_act_args){OCL_NONE, 0, 0};
	if (ho_swish_sigmoid(c->g, i) >= 0) {
		out->act = OCL_SWISH;
		return true;
	}
	for (size_t u = 0; u < sizeof(ocl_unary_ops) / sizeof(ocl_unary_ops[0]); u++) {
		if (strcmp(n->op_type, ocl_unary_ops[u].op))
			continue;
		out->act = ocl_unary_ops[u].act;
		switch (out->act) {
		case OCL_CLIP:
			out->p = n->opset < 11 ? ho_node_attr_f(n, "min", -INFINITY) : -INFINITY;
			out->q = n->opset < 11 ? ho_node_attr_f(n, "max", INFINITY) : INFINITY;
			for (uint32_t k = 1; k < 3 && n->opset >= 11; k++) {
				int32_t t = k < n->n_inputs ? n->inputs[k] : -1;

				if (t < 0)
					continue;
				if (!is_const(c, t))
					return false; /* bounds computed at run time */
				*(k == 1 ? &out->p : &out->q) = const_f(c, t, 0);
			}
			break;
		case OCL_LEAKY_RELU:
			out->p = ho_node_attr_f(n, "alpha", 0.01f);
			break;
		case OCL_HARD_SIGMOID:
			out->p = ho_node_attr_f(n, "alpha", 0.2f);
			out->q = ho_node_attr_f(n, "beta", 0.5f);
			break;
		case OCL_ELU:
			out->p = ho_node_attr_f(n, "alpha", 1.0f);
			break;
		case OCL_GELU:
			if (ho_node_attr(n, "approximate") &&
			    strcmp(ho_node_attr(n, "approximate")->s, "none"))
				return false;
			break;
		}
		return true;
	}
	return false;
}

/* Where a fused kernel writes: its post-op's output, else its batch norm's, else its own. */
static int32_t ocl_out(const struct ocl_ctx *c)
{
	if (c->fuse && c->fuse->post >= 0)
		return c->g->nodes[c->fuse->post].outputs[0];
	if (c->fuse && c->fuse->bn >= 0)
		return c->g->nodes[c->fuse->bn].outputs[0];
	return c->n->outputs[0];
}

/*
 * auto_pad SAME_UPPER or SAME_LOWER: the leading pads (pd[0], pd[1]) that give x's
 * spatial axes y's extents under kernel extents ks, strides st and dilations dl.
 */
static void ocl_same_pads(const struct ho_node *n, const struct ho_tensor *x,
			  const struct ho_tensor *y, const int64_t *ks, const int64_t *st,
			  const int64_t *dl, int64_t *pd)
{
	const struct ho_attr *ap = ho_node_attr(n, "auto_pad");
	bool upper = ap && ap->s && !strcmp(ap->s, "SAME_UPPER");

	if (!upper && !(ap && ap->s && !strcmp(ap->s, "SAME_LOWER")))
		return;
	for (int k = 0; k < 2; k++) {
		int64_t tot = (y->shape.dim[2 + k] - 1) * st[k] + (ks[k] - 1) * dl[k] + 1 -
			      x->shape.dim[2 + k];

		tot = tot > 0 ? tot : 0;
		pd[k] = upper ? tot / 2 : tot - tot / 2;
	}
}

/* One work-item per output element of an NCHW tensor y: (x, y, n * c). */
static void ocl_grid_nchw(struct ocl_launch *l, const struct ho_tensor *y)
{
	l->dims = 3;
	l->global[0] = (size_t)y->shape.dim[3];
	l->global[1] = (size_t)y->shape.dim[2];
	l->global[2] = (size_t)(y->shape.dim[0] * y->shape.dim[1]);
}

/* A launch of a spatial kernel: output y, input x, then x's and y's height and width. */
static struct ocl_launch *ocl_spatial(const struct ocl_ctx *c, const char *name,
				      const struct ho_tensor *x, const struct ho_tensor *y,
				      struct ocl_args *a)
{
	struct ocl_launch *l = ocl_new_launch(c, name);

	if (!l)
		return NULL;
	*a = ocl_start(l);
	a_tensor(a, c, c->n->outputs[0]);
	a_tensor(a, c, c->n->inputs[0]);
	a_int(a, (int)x->shape.dim[2]);
	a_int(a, (int)x->shape.dim[3]);
	a_int(a, (int)y->shape.dim[2]);
	a_int(a, (int)y->shape.dim[3]);
	ocl_grid_nchw(l, y);
	return l;
}

/* Row-major strides of s, right-aligned to rank r, 0 on broadcast axes of out. */
static void ocl_bstrides(const struct ho_shape *s, const struct ho_shape *out, int *st)
{
	int64_t acc = 1;

	for (int k = out->rank - 1, j = s->rank - 1; k >= 0; k--, j--) {
		int64_t d = j >= 0 ? s->dim[j] : 1;

		st[k] = d == 1 && out->dim[k] != 1 ? 0 : (int)acc;
		acc *= d;
	}
}

static const struct {
	const char *op;
	int code;
} ocl_binary_ops[] = {
    {"Add", 0}, {"Sub", 1}, {"Mul", 2}, {"Div", 3},
    {"Max", 4}, {"Min", 5}, {"Pow", 6}, {"PRelu", 7},
};

/*
 * y = n(x0, x1) with numpy broadcasting; in_place: a post-op, the kernel's result
 * y standing for x0 (its other operand is a constant, ho_post_op).
 */
static int prep_binary_at(const struct ocl_ctx *c, const struct ho_node *n, int32_t y,
			  bool in_place)
{
	const struct ho_shape *ys = &c->g->tensors[y].shape;
	int dims[8] = {1, 1, 1, 1, 1, 1, 1, 1}, sa[8] = {0}, sb[8] = {0}, code = -1;
	int32_t x0 = n->inputs[0], x1 = n->inputs[1];
	struct ocl_launch *l;
	struct ocl_args a;

	for (size_t i = 0; i < sizeof(ocl_binary_ops) / sizeof(ocl_binary_ops[0]); i++)
		if (!strcmp(n->op_type, ocl_binary_ops[i].op))
			code = ocl_binary_ops[i].code;
	if (code < 0 || n->n_inputs != 2 || x0 < 0 || x1 < 0 || ys->rank > 8)
		return ocl_refuse(c, "runs two-operand element-wise nodes of rank 8 or less");
	if (in_place && !ho_shape_same(&c->g->tensors[x0].shape, ys))
		return ocl_refuse(c, "folds an element-wise node of its own shape only");
	for (int k = 0; k < ys->rank; k++)
		dims[k] = (int)ys->dim[k];
	ocl_bstrides(in_place ? ys : &c->g->tensors[x0].shape, ys, sa);
	ocl_bstrides(&c->g->tensors[x1].shape, ys, sb);
	if (!(l = ocl_new_launch(c, "binary")))
		return ocl_no_kernel(c);
	a = ocl_start(l);
	a_tensor(&a, c, y);
	a_tensor(&a, c, in_place ? y : x0);
	a_tensor(&a, c, x1);
	a_int(&a, ys->rank);
	a_int8(&a, dims);
	a_int8(&a, sa);
	a_int8(&a, sb);
	a_int(&a, code);
	l->dims = 1;
	l->global[0] = (size_t)ho_shape_numel(ys);
	return ocl_args_done(c, &a);
}

static int prep_binary(const struct ocl_ctx *c)
{
	return prep_binary_at(c, c->n, c->n->outputs[0], false);
}

/*
 * A Conv's or MatMul's folded post-op: an activation run inside its kernel (act),
 * or, where it is none (false), a binary node by a constant run in place after it.
 */
static bool ocl_post_act(const struct ocl_ctx *c, struct ocl_act_args *act)
{
	*act = (struct ocl_act_args){OCL_NONE, 0, 0};
	return !c->fuse || c->fuse->post < 0 || ocl_act_of(c, c->fuse->post, act);
}

/* The post-op ocl_post_act left out, after the kernel, on its output in place. */
static int ocl_post_binary(const struct ocl_ctx *c)
{
	const struct ho_node *p = &c->g->nodes[c->fuse->post];

	return prep_binary_at(c, p, p->outputs[0], true);
}

static int prep_unary(const struct ocl_ctx *c)
{
	struct ocl_act_args act;
	struct ocl_launch *l;
	struct ocl_args a;
	int32_t y = c->n->outputs[0];

	if (!ocl_act_of(c, (int32_t)(c->n - c->g->nodes), &act))
		return ocl_refuse(c, "runs this operator with constant bounds only");
	if (!(l = ocl_new_launch(c, "unary")))
		return ocl_no_kernel(c);
	a = ocl_start(l);
	a_tensor(&a, c, y);
	a_tensor(&a, c, c->n->inputs[0]);
	a_act(&a, &act);
	l->dims = 1;
	l->global[0] = (size_t)ho_shape_numel(&c->g->tensors[y].shape);
	return ocl_args_done(c, &a);
}

/* Input i of node n as float32 host memory (a constant, read at prepare time); NULL: omitted. */
static const float *ocl_host_f(const struct ocl_ctx *c, const struct ho_node *n, uint32_t i)
{
	return i < n->n_inputs && n->inputs[i] >= 0 ? c->mem[n->inputs[i]].host : NULL;
}

/* A batch norm's gamma, beta, mean and var, for ho_bn_fold. */
#define BN_PARAMS(c, bn)                                                                           \
	ocl_host_f(c, bn, 1), ocl_host_f(c, bn, 2), ocl_host_f(c, bn, 3), ocl_host_f(c, bn, 4)

/* Buffer owned[i] of the kernel: a copy of len bytes the kernel computed at prepare time. */
static int ocl_owned(const struct ocl_ctx *c, int i, const void *data, size_t len)
{
	cl_int e = CL_SUCCESS;

	c->k->owned[i] = clCreateBuffer(c->b->ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, len,
					(void *)data, &e);
	if (e != CL_SUCCESS)
		return ho_err(c->err, -ENOMEM, "node '%s': %s (%d)", c->n->name, ocl_strerror(e),
			      e);
	return 0;
}

/* Conv 2-D (any groups, strides, padding, dilation), a batch norm folded into its
 * weights, its post-op in the kernel. */
static int prep_conv(const struct ocl_ctx *c)
{
	const struct ho_tensor *x = ho_node_input(c->g, c->n, 0), *w = ho_node_input(c->g, c->n, 1),
			       *b = ho_node_input(c->g, c->n, 2);
	const struct ho_tensor *yt = &c->g->tensors[c->n->outputs[0]];
	int64_t st[2], pd[4], dl[2], K, C, KH, KW, G = ho_node_attr_i(c->n, "group", 1);
	int32_t y = ocl_out(c);
	struct ocl_act_args act;
	struct ocl_launch *l;
	struct ocl_args a;
	cl_mem wm = NULL, bm = NULL;
	long wo = 0, bo = 0;
	bool act_only;

	if (!x || !w || x->shape.rank != 4 || w->shape.rank != 4 || yt->shape.rank != 4 ||
	    !(w->flags & HO_T_KNOWN) || (b && !(b->flags & HO_T_KNOWN)))
		return ocl_refuse(c, "runs 2-D convolutions with constant weights only");
	K = w->shape.dim[0], C = x->shape.dim[1], KH = w->shape.dim[2], KW = w->shape.dim[3];
	if (!ho_node_attr_ints(c->n, "strides", st, 2, 1) ||
	    !ho_node_attr_ints(c->n, "pads", pd, 4, 0) ||
	    !ho_node_attr_ints(c->n, "dilations", dl, 2, 1) || G < 1 || C % G || K % G)
		return ocl_refuse(c, "cannot read its strides, pads, dilations or groups");
	ocl_same_pads(c->n, x, yt, &w->shape.dim[2], st, dl, pd);
	act_only = ocl_post_act(c, &act);
	if (c->fuse && c->fuse->bn >= 0) {
		const struct ho_node *bn = &c->g->nodes[c->fuse->bn];
		int64_t per = C / G * KH * KW;
		float *fw = malloc((size_t)(K * per + K) * sizeof(float));
		int ret;

		if (!fw)
			return ho_err(c->err, -ENOMEM, "out of memory");
		ho_bn_fold(bn, (const float *const[4]){BN_PARAMS(c, bn)}, ocl_host_f(c, c->n, 1),
			   ocl_host_f(c, c->n, 2), K, per, fw, fw + K * per);
		ret = ocl_owned(c, 0, fw, (size_t)(K * per) * sizeof(float));
		if (!ret)
			ret = ocl_owned(c, 1, fw + K * per, (size_t)K * sizeof(float));
		free(fw);
		if (ret)
			return ret;
		wm = c->k->owned[0];
		bm = c->k->owned[1];
	} else {
		wm = c->mem[c->n->inputs[1]].block->mem;
		wo = (long)(c->mem[c->n->inputs[1]].off / sizeof(float));
		bm = b ? c->mem[c->n->inputs[2]].block->mem : wm;
		bo = b ? (long)(c->mem[c->n->inputs[2]].off / sizeof(float)) : 0;
	}
	if (!(l = ocl_new_launch(c, "conv2d")))
		return ocl_no_kernel(c);
	a = ocl_start(l);
	a_tensor(&a, c, y);
	a_tensor(&a, c, c->n->inputs[0]);
	a_buf(&a, wm);
	a_long(&a, wo);
	a_buf(&a, bm);
	a_long(&a, bo);
	a_int(&a, b || (c->fuse && c->fuse->bn >= 0));
	a_int(&a, (int)C);
	a_int(&a, (int)x->shape.dim[2]);
	a_int(&a, (int)x->shape.dim[3]);
	a_int(&a, (int)K);
	a_int(&a, (int)yt->shape.dim[2]);
	a_int(&a, (int)yt->shape.dim[3]);
	a_int(&a, (int)KH);
	a_int(&a, (int)KW);
	for (int k = 0; k < 2; k++)
		a_int(&a, (int)st[k]);
	for (int k = 0; k < 2; k++)
		a_int(&a, (int)pd[k]);
	for (int k = 0; k < 2; k++)
		a_int(&a, (int)dl[k]);
	a_int(&a, (int)G);
	a_act(&a, &act);
	ocl_grid_nchw(l, yt);
	if (ocl_args_done(c, &a))
		return c->err->code;
	return act_only ? 0 : ocl_post_binary(c);
}

/* MatMul (a bias Add folded) and Gemm: batches where both or one side is batched. */
static int prep_matmul(const struct ocl_ctx *c)
{
	bool gemm = !strcmp(c->n->op_type, "Gemm"), act_only;
	const struct ho_tensor *A = ho_node_input(c->g, c->n, 0), *B = ho_node_input(c->g, c->n, 1),
			       *C = NULL;
	const struct ho_tensor *yt = &c->g->tensors[c->n->outputs[0]];
	int ta = gemm ? (int)ho_node_attr_i(c->n, "transA", 0) : 0,
	    tb = gemm ? (int)ho_node_attr_i(c->n, "transB", 0) : 0;
	float alpha = gemm ? ho_node_attr_f(c->n, "alpha", 1) : 1,
	      beta = gemm ? ho_node_attr_f(c->n, "beta", 1) : 1;
	int64_t M, N, K, batch = 1, sa, sb;
	int32_t ct = -1, y = ocl_out(c);
	int bias_m = 0, bias_n = 0;
	struct ocl_act_args act;
	struct ocl_launch *l;
	struct ocl_args a;

	if (!A || !B || A->shape.rank < 1 || B->shape.rank < 1 || yt->shape.rank < 1)
		return ocl_refuse(c, "needs both operands");
	K = ta ? A->shape.dim[A->shape.rank - 2] : A->shape.dim[A->shape.rank - 1];
	M = A->shape.rank == 1 ? 1
	    : ta	       ? A->shape.dim[A->shape.rank - 1]
			       : A->shape.dim[A->shape.rank - 2];
	N = B->shape.rank == 1 ? 1
	    : tb	       ? B->shape.dim[B->shape.rank - 2]
			       : B->shape.dim[B->shape.rank - 1];
	for (int k = 0; k < A->shape.rank - 2; k++)
		batch *= A->shape.dim[k];
	sa = A->shape.rank > 2 ? M * K : 0;
	sb = B->shape.rank > 2 ? K * N : 0;
	if (B->shape.rank > 2) {
		int64_t bb = 1;

		for (int k = 0; k < B->shape.rank - 2; k++)
			bb *= B->shape.dim[k];
		if (A->shape.rank > 2 && (bb != batch || A->shape.rank != B->shape.rank))
			return ocl_refuse(c, "runs MatMul batches of one shape on both sides only");
		batch = bb;
	}
	if (gemm && c->n->n_inputs > 2 && c->n->inputs[2] >= 0)
		ct = c->n->inputs[2];
	if (!gemm && c->fuse && c->fuse->bn >= 0) { /* the bias Add's other operand */
		const struct ho_node *add = &c->g->nodes[c->fuse->bn];

		ct = add->inputs[0] == c->n->outputs[0] ? add->inputs[1] : add->inputs[0];
	}
	if (ct >= 0) {
		const struct ho_shape *cs = &c->g->tensors[ct].shape;
		int64_t cm = cs->rank >= 2 ? cs->dim[cs->rank - 2] : 1,
			cn = cs->rank >= 1 ? cs->dim[cs->rank - 1] : 1;

		C = &c->g->tensors[ct];
		if ((cm != 1 && cm != M) || (cn != 1 && cn != N) || ho_shape_numel(cs) != cm * cn)
			return ocl_refuse(c, "adds a bias of [M,N], [N], [M,1] or a scalar only");
		bias_m = cm == 1 ? 0 : (int)cn;
		bias_n = cn == 1 ? 0 : 1;
	}
	act_only = ocl_post_act(c, &act);
	if (!(l = ocl_new_launch(c, "matmul")))
		return ocl_no_kernel(c);
	a = ocl_start(l);
	a_tensor(&a, c, y);
	a_tensor(&a, c, c->n->inputs[0]);
	a_tensor(&a, c, c->n->inputs[1]);
	if (C) {
		a_tensor(&a, c, ct);
	} else {
		a_buf(&a, NULL);
		a_long(&a, 0);
	}
	a_int(&a, (int)M);
	a_int(&a, (int)N);
	a_int(&a, (int)K);
	a_long(&a, (long)sa);
	a_long(&a, (long)sb);
	a_int(&a, ta);
	a_int(&a, tb);
	a_float(&a, alpha);
	a_float(&a, beta);
	a_int(&a, bias_m);
	a_int(&a, bias_n);
	a_act(&a, &act);
	l->dims = 3;
	l->global[0] = (size_t)((N + 15) / 16 * 16);
	l->global[1] = (size_t)((M + 15) / 16 * 16);
	l->global[2] = (size_t)batch;
	l->local[0] = l->local[1] = 16;
	l->local[2] = 1;
	if (ocl_args_done(c, &a))
		return c->err->code;
	return act_only ? 0 : ocl_post_binary(c);
}

/* MaxPool, AveragePool 2-D; the output's extent (ceil_mode) from shape inference. */
static int prep_pool(const struct ocl_ctx *c)
{
	const struct ho_tensor *x = ho_node_input(c->g, c->n, 0),
			       *yt = &c->g->tensors[c->n->outputs[0]];
	bool avg = !strcmp(c->n->op_type, "AveragePool");
	int64_t ks[2], st[2], pd[4], dl[2];
	struct ocl_launch *l;
	struct ocl_args a;

	if (!x || x->shape.rank != 4 || yt->shape.rank != 4 ||
	    (c->n->n_outputs > 1 && c->n->outputs[1] >= 0))
		return ocl_refuse(c, "runs 2-D pooling without indices only");
	if (!ho_node_attr_ints(c->n, "kernel_shape", ks, 2, 1) ||
	    !ho_node_attr_ints(c->n, "strides", st, 2, 1) ||
	    !ho_node_attr_ints(c->n, "pads", pd, 4, 0) ||
	    !ho_node_attr_ints(c->n, "dilations", dl, 2, 1))
		return ocl_refuse(c, "cannot read its kernel shape, strides, pads or dilations");
	ocl_same_pads(c->n, x, yt, ks, st, dl, pd);
	if (!(l = ocl_spatial(c, "pool2d", x, yt, &a)))
		return ocl_no_kernel(c);
	for (int k = 0; k < 2; k++)
		a_int(&a, (int)ks[k]);
	for (int k = 0; k < 2; k++)
		a_int(&a, (int)st[k]);
	for (int k = 0; k < 2; k++)
		a_int(&a, (int)pd[k]);
	for (int k = 0; k < 2; k++)
		a_int(&a, (int)dl[k]);
	a_int(&a, avg ? (ho_node_attr_i(c->n, "count_include_pad", 0) ? 2 : 1) : 0);
	return ocl_args_done(c, &a);
}

/* GlobalAveragePool, GlobalMaxPool: rows of the spatial extent. */
static int prep_global_pool(const struct ocl_ctx *c)
{
	const struct ho_tensor *x = ho_node_input(c->g, c->n, 0);
	int64_t len = 1;
	struct ocl_launch *l;
	struct ocl_args a;

	if (!x || x->shape.rank < 3)
		return ocl_refuse(c, "needs a spatial input");
	for (int k = 2; k < x->shape.rank; k++)
		len *= x->shape.dim[k];
	if (!(l = ocl_new_launch(c, "reduce_rows")))
		return ocl_no_kernel(c);
	a = ocl_start(l);
	a_tensor(&a, c, c->n->outputs[0]);
	a_tensor(&a, c, c->n->inputs[0]);
	a_int(&a, (int)len);
	a_int(&a, 1);
	a_int(&a, strcmp(c->n->op_type, "GlobalAveragePool") ? 1 : 0);
	l->dims = 1;
	l->global[0] = (size_t)(x->shape.dim[0] * x->shape.dim[1]);
	return ocl_args_done(c, &a);
}

/* Inference BatchNormalization: an affine map per channel computed at prepare. */
static int prep_batchnorm(const struct ocl_ctx *c)
{
	const struct ho_tensor *x = ho_node_input(c->g, c->n, 0);
	int64_t C, inner = 1;
	float *ss;
	struct ocl_launch *l;
	struct ocl_args a;
	int ret;

	if (!x || x->shape.rank < 2 || c->n->n_inputs < 5)
		return ocl_refuse(c, "needs an input of at least two axes");
	for (uint32_t k = 1; k < 5; k++)
		if (c->n->inputs[k] < 0 || !(c->g->tensors[c->n->inputs[k]].flags & HO_T_KNOWN))
			return ocl_refuse(c, "runs batch norms of constant parameters only");
	C = x->shape.dim[1];
	for (int k = 2; k < x->shape.rank; k++)
		inner *= x->shape.dim[k];
	/* the batch norm folded into a weight of 1 per channel: its scale, then its shift */
	if (!(ss = malloc(3 * (size_t)C * sizeof(float))))
		return ho_err(c->err, -ENOMEM, "out of memory");
	for (int64_t k = 0; k < C; k++)
		ss[2 * C + k] = 1.0f;
	ho_bn_fold(c->n, (const float *const[4]){BN_PARAMS(c, c->n)}, ss + 2 * C, NULL, C, 1, ss,
		   ss + C);
	ret = ocl_owned(c, 0, ss, 2 * (size_t)C * sizeof(float));
	free(ss);
	if (ret)
		return ret;
	if (!(l = ocl_new_launch(c, "channel_affine")))
		return ocl_no_kernel(c);
	a = ocl_start(l);
	a_tensor(&a, c, c->n->outputs[0]);
	a_tensor(&a, c, c->n->inputs[0]);
	a_buf(&a, c->k->owned[0]);
	a_int(&a, (int)C);
	a_int(&a, (int)inner);
	l->dims = 1;
	l->global[0] = (size_t)ho_shape_numel(&x->shape);
	return ocl_args_done(c, &a);
}

static int prep_concat(const struct ocl_ctx *c)
{
	const struct ho_tensor *yt = &c->g->tensors[c->n->outputs[0]];
	int64_t axis = ho_node_attr_i(c->n, "axis", 0), out_inner = 1, col = 0;

	if (axis < 0)
		axis += yt->shape.rank;
	if (axis < 0 || axis >= yt->shape.rank)
		return ocl_refuse(c, "has an axis out of range");
	for (int k = (int)axis; k < yt->shape.rank; k++)
		out_inner *= yt->shape.dim[k];
	for (uint32_t i = 0; i < c->n->n_inputs; i++) {
		const struct ho_tensor *x = ho_node_input(c->g, c->n, i);
		int64_t inner = 1, n;
		struct ocl_launch *l;
		struct ocl_args a;

		if (!x || !(n = ho_shape_numel(&x->shape)))
			continue;
		for (int k = (int)axis; k < x->shape.rank; k++)
			inner *= x->shape.dim[k];
		if (!(l = ocl_new_launch(c, "place")))
			return ocl_no_kernel(c);
		a = ocl_start(l);
		a_tensor(&a, c, c->n->outputs[0]);
		a_tensor(&a, c, c->n->inputs[i]);
		a_int(&a, (int)inner);
		a_int(&a, (int)out_inner);
		a_int(&a, (int)col);
		l->dims = 1;
		l->global[0] = (size_t)n;
		if (ocl_args_done(c, &a))
			return c->err->code;
		col += inner;
	}
	return 0;
}

static int prep_softmax(const struct ocl_ctx *c)
{
	const struct ho_tensor *x = ho_node_input(c->g, c->n, 0);
	int64_t axis = ho_node_attr_i(c->n, "axis", c->n->opset < 13 ? 1 : -1), len = 1, inner = 1;
	struct ocl_launch *l;
	struct ocl_args a;

	if (!x || !x->shape.rank)
		return ocl_refuse(c, "needs an input of one axis or more");
	if (axis < 0)
		axis += x->shape.rank;
	if (axis < 0 || axis >= x->shape.rank)
		return ocl_refuse(c, "has an axis out of range");
	/* before opset 13 the input is flattened to 2-D at axis */
	for (int k = (int)axis; k < x->shape.rank; k++)
		if (k == axis || c->n->opset < 13)
			len *= x->shape.dim[k];
		else
			inner *= x->shape.dim[k];
	if (!(l = ocl_new_launch(c, "softmax")))
		return ocl_no_kernel(c);
	a = ocl_start(l);
	a_tensor(&a, c, c->n->outputs[0]);
	a_tensor(&a, c, c->n->inputs[0]);
	a_int(&a, (int)len);
	a_int(&a, (int)inner);
	a_int(&a, !strcmp(c->n->op_type, "LogSoftmax"));
	l->dims = 1;
	l->global[0] = (size_t)(ho_shape_numel(&x->shape) / len);
	return ocl_args_done(c, &a);
}

static int prep_transpose(const struct ocl_ctx *c)
{
	const struct ho_tensor *x = ho_node_input(c->g, c->n, 0),
			       *yt = &c->g->tensors[c->n->outputs[0]];
	int dims[8] = {1, 1, 1, 1, 1, 1, 1, 1}, sx[8] = {0};
	int64_t perm[8], in_st[8], acc = 1;
	struct ocl_launch *l;
	struct ocl_args a;
	int r;

	if (!x || (r = x->shape.rank) > 8 || !r)
		return ocl_refuse(c, "transposes ranks 1 to 8 only");
	for (int k = 0; k < r; k++)
		perm[k] = r - 1 - k; /* the default: axes reversed */
	if (ho_node_attr(c->n, "perm") && !ho_node_attr_ints(c->n, "perm", perm, (size_t)r, 0))
		return ocl_refuse(c, "has a perm of another rank");
	for (int k = r - 1; k >= 0; k--) {
		in_st[k] = acc;
		acc *= x->shape.dim[k];
	}
	for (int k = 0; k < r; k++) {
		if (perm[k] < 0 || perm[k] >= r)
			return ocl_refuse(c, "has a perm out of range");
		dims[k] = (int)yt->shape.dim[k];
		sx[k] = (int)in_st[perm[k]];
	}
	if (!(l = ocl_new_launch(c, "gather_nd")))
		return ocl_no_kernel(c);
	a = ocl_start(l);
	a_tensor(&a, c, c->n->outputs[0]);
	a_tensor(&a, c, c->n->inputs[0]);
	a_int(&a, r);
	a_int8(&a, dims);
	a_int8(&a, sx);
	l->dims = 1;
	l->global[0] = (size_t)ho_shape_numel(&yt->shape);
	return ocl_args_done(c, &a);
}

static int prep_layer_norm(const struct ocl_ctx *c)
{
	const struct ho_tensor *x = ho_node_input(c->g, c->n, 0);
	int64_t axis = ho_node_attr_i(c->n, "axis", -1), len = 1;
	struct ocl_launch *l;
	struct ocl_args a;
	bool has_b = c->n->n_inputs > 2 && c->n->inputs[2] >= 0;

	if (!x || !x->shape.rank || c->n->n_inputs < 2 || c->n->inputs[1] < 0)
		return ocl_refuse(c, "needs an input and a scale");
	for (uint32_t o = 1; o < c->n->n_outputs; o++)
		if (c->n->outputs[o] >= 0)
			return ocl_refuse(c, "computes no Mean or InvStdDev outputs");
	if (axis < 0)
		axis += x->shape.rank;
	for (int k = (int)axis; k < x->shape.rank; k++)
		len *= x->shape.dim[k];
	if (ho_shape_numel(&c->g->tensors[c->n->inputs[1]].shape) != len ||
	    (has_b && ho_shape_numel(&c->g->tensors[c->n->inputs[2]].shape) != len))
		return ocl_refuse(c, "takes a scale and bias of the normalised extent only");
	if (!(l = ocl_new_launch(c, "layer_norm")))
		return ocl_no_kernel(c);
	a = ocl_start(l);
	a_tensor(&a, c, c->n->outputs[0]);
	a_tensor(&a, c, c->n->inputs[0]);
	a_tensor(&a, c, c->n->inputs[1]);
	a_tensor(&a, c, has_b ? c->n->inputs[2] : c->n->inputs[1]);
	a_int(&a, has_b);
	a_int(&a, (int)len);
	a_float(&a, ho_node_attr_f(c->n, "epsilon", 1e-5f));
	l->dims = 1;
	l->global[0] = (size_t)(ho_shape_numel(&x->shape) / len);
	return ocl_args_done(c, &a);
}

/* Index of name in list (NULL-terminated), or -1. */
static int ocl_pick(const char *name, const char *const *list)
{
	for (int i = 0; list[i]; i++)
		if (name && !strcmp(name, list[i]))
			return i;
	return -1;
}

static int prep_resize(const struct ocl_ctx *c)
{
	static const char *const modes[] = {"nearest", "linear", NULL};
	static const char *const cts[] = {"half_pixel", "asymmetric", "align_corners",
					  "pytorch_half_pixel", NULL};
	static const char *const nms[] = {"round_prefer_floor", "floor", "round_prefer_ceil",
					  "ceil", NULL};
	const struct ho_tensor *x = ho_node_input(c->g, c->n, 0),
			       *yt = &c->g->tensors[c->n->outputs[0]];
	const struct ho_attr *m = ho_node_attr(c->n, "mode"),
			     *ct = ho_node_attr(c->n, "coordinate_transformation_mode"),
			     *nm = ho_node_attr(c->n, "nearest_mode");
	bool upsample = !strcmp(c->n->op_type, "Upsample") || c->n->opset < 11;
	int mode = ocl_pick(m ? m->s : "nearest", modes),
	    ctm = upsample ? 1 : ocl_pick(ct ? ct->s : "half_pixel", cts),
	    nmode = upsample ? 1 : ocl_pick(nm ? nm->s : "round_prefer_floor", nms);
	int32_t sc = c->n->n_inputs > (upsample ? 1u : 2u) ? c->n->inputs[upsample ? 1 : 2] : -1;
	float scale[2];
	struct ocl_launch *l;
	struct ocl_args a;

	if (!x || x->shape.rank != 4 || mode < 0 || ctm < 0 || nmode < 0 ||
	    x->shape.dim[0] != yt->shape.dim[0] || x->shape.dim[1] != yt->shape.dim[1] ||
	    (!strcmp(c->n->op_type, "Resize") && c->n->opset >= 18 && ho_node_attr(c->n, "axes")))
		return ocl_refuse(c, "resizes the last two axes of 4-D tensors, nearest or linear, "
				     "only");
	for (int k = 0; k < 2; k++) {
		scale[k] = (float)yt->shape.dim[2 + k] / (float)x->shape.dim[2 + k];
		if (sc >= 0 && ho_shape_numel(&c->g->tensors[sc].shape) == 4 && is_const(c, sc))
			scale[k] = const_f(c, sc, 2 + k);
	}
	if (!(l = ocl_spatial(c, "resize2d", x, yt, &a)))
		return ocl_no_kernel(c);
	a_float(&a, scale[0]);
	a_float(&a, scale[1]);
	a_int(&a, mode);
	a_int(&a, ctm);
	a_int(&a, nmode);
	return ocl_args_done(c, &a);
}

/* The operator table: every operator this backend runs, and its prepare. */
static const struct {
	const char *op;
	int (*prepare)(const struct ocl_ctx *c);
} ocl_ops[] = {
    {"Conv", prep_conv},
    {"MatMul", prep_matmul},
    {"Gemm", prep_matmul},
    {"MaxPool", prep_pool},
    {"AveragePool", prep_pool},
    {"GlobalAveragePool", prep_global_pool},
    {"GlobalMaxPool", prep_global_pool},
    {"BatchNormalization", prep_batchnorm},
    {"Concat", prep_concat},
    {"Softmax", prep_softmax},
    {"LogSoftmax", prep_softmax},
    {"Transpose", prep_transpose},
    {"LayerNormalization", prep_layer_norm},
    {"Resize", prep_resize},
    {"Upsample", prep_resize},
    {"Add", prep_binary},
    {"Sub", prep_binary},
    {"Mul", prep_binary},
    {"Div", prep_binary},
    {"Max", prep_binary},
    {"Min", prep_binary},
    {"Pow", prep_binary},
    {"PRelu", prep_binary},
    {"Relu", prep_unary},
    {"Sigmoid", prep_unary},
    {"Tanh", prep_unary},
    {"Clip", prep_unary},
    {"LeakyRelu", prep_unary},
    {"HardSigmoid", prep_unary},
    {"HardSwish", prep_unary},
    {"Exp", prep_unary},
    {"Sqrt", prep_unary},
    {"Neg", prep_unary},
    {"Abs", prep_unary},
    {"Erf", prep_unary},
    {"Reciprocal", prep_unary},
    {"Gelu", prep_unary},
    {"Log", prep_unary},
    {"Floor", prep_unary},
    {"Ceil", prep_unary},
    {"Elu", prep_unary},
    {"Softplus", prep_unary},
};

static int (*ocl_prep_of(const char *op))(const struct ocl_ctx *c)
{
	for (size_t i = 0; i < sizeof(ocl_ops) / sizeof(ocl_ops[0]); i++)
		if (!strcmp(ocl_ops[i].op, op))
			return ocl_ops[i].prepare;
	return NULL;
}

bool ocl_runs(const char *op)
{
	return !strcmp(op, "Constant") || ho_op_is_view(op) || ocl_prep_of(op);
}

void ocl_kernel_free(struct ho_kernel *k)
{
	if (!k)
		return;
	for (int i = 0; i < k->n; i++)
		clReleaseKernel(k->l[i].k);
	for (int i = 0; i < 2; i++)
		if (k->owned[i])
			clReleaseMemObject(k->owned[i]);
	free(k->l);
	free(k);
}

int ocl_prepare(struct ho_backend *b, const struct ho_graph *g, uint32_t node,
		const struct ho_fusion *fuse, const struct ho_mem *mem,
		const uint8_t *channels_last, struct ho_kernel **out, struct ho_error *err)
{
	const struct ho_node *n = &g->nodes[node];
	struct ocl_ctx c = {b, g, n, fuse, mem, NULL, err};
	int (*prep)(const struct ocl_ctx *c) = ocl_prep_of(n->op_type);
	bool more = false;
	int ret;

	*out = NULL;
	if (*n->domain)
		return ocl_refuse(&c, "runs the default ONNX domain only");
	if (!strcmp(n->op_type, "Constant"))
		return 0;
	for (uint32_t o = 1; o < n->n_outputs; o++)
		more |= n->outputs[o] >= 0;
	if (ho_op_is_view(n->op_type) && !more)
		return 0; /* the executor gives its output its input's bytes */
	if (!prep)
		return ocl_refuse(&c, "has no kernel for this operator yet");
	if (!n->n_outputs || n->outputs[0] < 0)
		return ocl_refuse(&c, "needs the first output");
	for (uint32_t i = 0; i < n->n_inputs + n->n_outputs; i++) {
		int32_t t = i < n->n_inputs ? n->inputs[i] : n->outputs[i - n->n_inputs];
		/* Resize's roi, scales and sizes are read at prepare time */
		bool param = i > 0 && i < n->n_inputs &&
			     (!strcmp(n->op_type, "Resize") || !strcmp(n->op_type, "Upsample"));

		if (t < 0 || param)
			continue;
		if (g->tensors[t].dtype != HO_DT_FLOAT)
			return ocl_refuse(&c, "computes on float32 tensors only");
		if (channels_last && channels_last[t])
			return ocl_refuse(&c, "reads and writes row-major (NCHW) tensors only");
		if (g->tensors[t].bytes && mem[t].host && !mem[t].block)
			return ho_err(err, -EFAULT, "internal: node '%s': tensor '%s' has no block",
				      n->name, g->tensors[t].name);
	}
	if (!(c.k = calloc(1, sizeof(*c.k))))
		return ho_err(err, -ENOMEM, "out of memory");
	c.k->name = n->name;
	c.k->op = n->op_type;
	ret = prep(&c);
	if (ret) {
		ocl_kernel_free(c.k);
		return ret;
	}
	*out = c.k;
	return 0;
}
