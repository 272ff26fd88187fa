// SPDX-License-Identifier: MIT
/*
 * The OpenCL backend's element-wise operators: activations (also folded after
 * a Conv or MatMul), and two-operand operators with numpy broadcasting.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ocl.h"

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
bool ocl_act_of(const struct ocl_ctx *c, int32_t i, struct ocl_act_args *out)
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
				if (!ocl_is_const(c, t))
					return false; /* bounds computed at run time */
				*(k == 1 ? &out->p : &out->q) = ocl_const_f(c, t, 0);
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
			    (!ho_node_attr(n, "approximate")->s ||
			     strcmp(ho_node_attr(n, "approximate")->s, "none")))
				return false; /* tanh's approximation: not this kernel */
			break;
		}
		return true;
	}
	return false;
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
 * Merge neighbouring axes along which both operands step alike (contiguous
 * together, or both broadcast), unit axes dropped: the kernel walks fewer axes,
 * and same shapes or a scalar operand walk one.  Returns the new rank (>= 1).
 */
static int ocl_coalesce(int rank, int *dims, int *sa, int *sb)
{
	int r = 0;

	for (int k = 0; k < rank; k++) {
		if (dims[k] == 1)
			continue;
		if (r && sa[r - 1] == sa[k] * dims[k] && sb[r - 1] == sb[k] * dims[k]) {
			dims[r - 1] *= dims[k];
			sa[r - 1] = sa[k];
			sb[r - 1] = sb[k];
		} else {
			dims[r] = dims[k];
			sa[r] = sa[k];
			sb[r] = sb[k];
			r++;
		}
	}
	for (int k = r; k < 8; k++)
		dims[k] = 1, sa[k] = sb[k] = 0;
	return r ? r : 1;
}

/*
 * y = n(x0, x1) with numpy broadcasting; in_place: a post-op, the kernel's result
 * y standing for x0 (its other operand is a constant, ho_post_op).
 */
int ocl_binary_at(const struct ocl_ctx *c, const struct ho_node *n, int32_t y, bool in_place)
{
	const struct ho_shape *ys = &c->g->tensors[y].shape;
	int dims[8] = {1, 1, 1, 1, 1, 1, 1, 1}, sa[8] = {0}, sb[8] = {0}, code = -1, rank;
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
	rank = ocl_coalesce(ys->rank, dims, sa, sb);
	if (!(l = ocl_launch_yx(c, rank == 1 ? "binary_flat" : "binary", y, in_place ? y : x0, &a)))
		return ocl_no_kernel(c);
	ocl_arg_tensor(&a, c, x1);
	if (rank == 1) { /* one walk: same shapes, or one operand a scalar */
		ocl_arg_int(&a, sa[0]);
		ocl_arg_int(&a, sb[0]);
	} else {
		ocl_arg_int(&a, rank);
		ocl_arg_int8(&a, dims);
		ocl_arg_int8(&a, sa);
		ocl_arg_int8(&a, sb);
	}
	ocl_arg_int(&a, code);
	l->dims = 1;
	l->global[0] = (size_t)ho_shape_numel(ys);
	return ocl_args_done(c, &a);
}

int ocl_prep_binary(const struct ocl_ctx *c)
{
	return ocl_binary_at(c, c->n, c->n->outputs[0], false);
}

int ocl_prep_unary(const struct ocl_ctx *c)
{
	struct ocl_act_args act;
	struct ocl_launch *l;
	struct ocl_args a;
	int32_t y = c->n->outputs[0];

	if (!ocl_act_of(c, (int32_t)(c->n - c->g->nodes), &act))
		return ocl_refuse(c, "runs this operator with constant bounds only");
	if (!(l = ocl_launch_yx(c, "unary", y, c->n->inputs[0], &a)))
		return ocl_no_kernel(c);
	ocl_arg_act(&a, &act);
	l->dims = 1;
	l->global[0] = (size_t)ho_shape_numel(&c->g->tensors[y].shape);
	return ocl_args_done(c, &a);
}
