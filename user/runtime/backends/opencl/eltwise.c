// SPDX-License-Identifier: MIT
/*
 * The OpenCL backend's element-wise operators: activations (also folded after
 * a Conv or MatMul), and two-operand operators with numpy broadcasting, over
 * row-major or channels-last tensors alike.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ocl.h"

/* Operand t's strides over y's 4-D extents (NCHW order), as it is stored; 0 where it broadcasts. */
static void ocl_strides4(const struct ocl_ctx *c, int32_t t, const struct ho_shape *ys,
			 int64_t st[4])
{
	const struct ho_shape *s = &c->g->tensors[t].shape;
	int64_t d[4];

	for (int k = 0; k < 4; k++)
		d[k] = k < 4 - s->rank ? 1 : s->dim[k - (4 - s->rank)];
	if (ocl_is_nhwc(c, t)) {
		st[1] = 1, st[3] = d[1], st[2] = d[1] * d[3], st[0] = st[2] * d[2];
	} else {
		st[3] = 1, st[2] = d[3], st[1] = d[2] * d[3], st[0] = st[1] * d[1];
	}
	for (int k = 0; k < 4; k++)
		if (d[k] == 1 && ys->dim[k] != 1)
			st[k] = 0;
}

/*
 * The broadcast walk where some 4-D operand is channels-last: y's extents
 * in its storage order, each operand's strides as it is stored, merged as
 * the graph library merges a row-major walk.  Returns the rank.
 */
static int ocl_walk_layouts(const struct ocl_ctx *c, int32_t y, int32_t x0, int32_t x1, int dims[8],
			    int sa[8], int sb[8])
{
	static const int nhwc[4] = {0, 2, 3, 1}, nchw[4] = {0, 1, 2, 3};
	const struct ho_shape *ys = &c->g->tensors[y].shape;
	const int *order = ocl_is_nhwc(c, y) ? nhwc : nchw;
	int64_t a[4], b[4];

	ocl_strides4(c, x0, ys, a);
	ocl_strides4(c, x1, ys, b);
	for (int i = 0; i < 8; i++) {
		dims[i] = i < 4 ? (int)ys->dim[order[i]] : 1;
		sa[i] = i < 4 ? (int)a[order[i]] : 0;
		sb[i] = i < 4 ? (int)b[order[i]] : 0;
	}
	return ho_walk_merge(4, dims, sa, sb);
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

	code = ho_binary_code(n->op_type);
	if (code < 0 || n->n_inputs != 2 || x0 < 0 || x1 < 0 || ys->rank > 8)
		return ocl_refuse(c, "runs two-operand element-wise nodes of rank 8 or less");
	if (in_place && !ho_shape_same(&c->g->tensors[x0].shape, ys))
		return ocl_refuse(c, "folds an element-wise node of its own shape only");
	if (ys->rank == 4 && (ocl_is_nhwc(c, y) || ocl_is_nhwc(c, x0) || ocl_is_nhwc(c, x1)))
		rank = ocl_walk_layouts(c, y, in_place ? y : x0, x1, dims, sa, sb);
	else
		rank = ho_broadcast_walk(ys, in_place ? ys : &c->g->tensors[x0].shape,
					 &c->g->tensors[x1].shape, dims, sa, sb);
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
	struct ho_act_args act;
	struct ocl_launch *l;
	struct ocl_args a;
	int32_t y = c->n->outputs[0];

	if (!ho_act_of(c->g, (int32_t)(c->n - c->g->nodes), &act))
		return ocl_refuse(c, "runs this operator with constant bounds only");
	if (!(l = ocl_launch_yx(c, "unary", y, c->n->inputs[0], &a)))
		return ocl_no_kernel(c);
	ocl_arg_act(&a, &act);
	l->dims = 1;
	l->global[0] = (size_t)ho_shape_numel(&c->g->tensors[y].shape);
	return ocl_args_done(c, &a);
}
