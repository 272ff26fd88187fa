// SPDX-License-Identifier: MIT
/*
 * The CUDA backend's element-wise operators: activations (also folded after
 * a Conv or MatMul), and two-operand operators with numpy broadcasting.
 */
#include <math.h>
#include <string.h>

#include "cu.h"

int cu_prep_unary(const struct cu_ctx *c)
{
	int32_t y = c->n->outputs[0];
	long n = (long)ho_shape_numel(&c->g->tensors[y].shape);
	struct ho_act_args act;
	struct cu_launch *l;

	if (!ho_act_of(c->g, (int32_t)(c->n - c->g->nodes), &act))
		return cu_refuse(c, "runs this operator with constant bounds only");
	if (!(l = cu_new_launch(c, "unary", n)))
		return cu_launch_done(c, l);
	cu_param_tensor(l, c, y);
	cu_param_tensor(l, c, c->n->inputs[0]);
	cu_param_long(l, n);
	cu_param_act(l, &act);
	return cu_launch_done(c, l);
}

/* y = n(x0, x1), numpy broadcasting; in_place: a post-op on y, its other operand x1. */
int cu_binary_at(const struct cu_ctx *c, const struct ho_node *n, int32_t y, bool in_place)
{
	const struct ho_shape *ys = &c->g->tensors[y].shape;
	struct cu_dims8 d = {{1, 1, 1, 1, 1, 1, 1, 1}}, sa = {{0}}, sb = {{0}};
	int32_t x0 = n->inputs[0], x1 = n->n_inputs > 1 ? n->inputs[1] : -1;
	long count = (long)ho_shape_numel(ys);
	int code = -1, rank;
	struct cu_launch *l;

	code = ho_binary_code(n->op_type);
	if (code < 0 || n->n_inputs != 2 || x0 < 0 || x1 < 0 || ys->rank > 8)
		return cu_refuse(c, "runs two-operand element-wise nodes of rank 8 or less");
	if (in_place && !ho_shape_same(&c->g->tensors[x0].shape, ys))
		return cu_refuse(c, "folds an element-wise node of its own shape only");
	rank = ho_broadcast_walk(ys, in_place ? ys : &c->g->tensors[x0].shape,
				 &c->g->tensors[x1].shape, d.v, sa.v, sb.v);
	if (!(l = cu_new_launch(c, rank == 1 ? "binary_flat" : "binary", count)))
		return cu_launch_done(c, l);
	cu_param_tensor(l, c, y);
	cu_param_tensor(l, c, in_place ? y : x0);
	cu_param_tensor(l, c, x1);
	cu_param_long(l, count);
	if (rank == 1) { /* one walk: same shapes, or one operand a scalar */
		cu_param_int(l, sa.v[0]);
		cu_param_int(l, sb.v[0]);
	} else {
		cu_param_int(l, rank);
		cu_param(l, &d, sizeof(d), 4);
		cu_param(l, &sa, sizeof(sa), 4);
		cu_param(l, &sb, sizeof(sb), 4);
	}
	cu_param_int(l, code);
	return cu_launch_done(c, l);
}

int cu_prep_binary(const struct cu_ctx *c)
{
	return cu_binary_at(c, c->n, c->n->outputs[0], false);
}
