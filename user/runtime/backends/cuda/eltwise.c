// SPDX-License-Identifier: MIT
/*
 * The CUDA backend's element-wise operators: activations (also folded after
 * a Conv or MatMul), and two-operand operators with numpy broadcasting.
 */
#include <math.h>
#include <string.h>

#include "cu.h"

/* Unary operators and their act() codes. */
static const struct {
	const char *op;
	int act;
} cu_unary_ops[] = {
    {"Relu", CU_ACT_RELU},
    {"Sigmoid", CU_ACT_SIGMOID},
    {"Tanh", CU_ACT_TANH},
    {"Clip", CU_ACT_CLIP},
    {"LeakyRelu", CU_ACT_LEAKY_RELU},
    {"HardSigmoid", CU_ACT_HARD_SIGMOID},
    {"HardSwish", CU_ACT_HARD_SWISH},
    {"Exp", CU_ACT_EXP},
    {"Sqrt", CU_ACT_SQRT},
    {"Neg", CU_ACT_NEG},
    {"Abs", CU_ACT_ABS},
    {"Erf", CU_ACT_ERF},
    {"Reciprocal", CU_ACT_RECIPROCAL},
    {"Gelu", CU_ACT_GELU},
    {"Log", CU_ACT_LOG},
    {"Floor", CU_ACT_FLOOR},
    {"Ceil", CU_ACT_CEIL},
    {"Elu", CU_ACT_ELU},
    {"Softplus", CU_ACT_SOFTPLUS},
    {"Identity", CU_ACT_NONE},
};

/* Node i as an activation: a unary operator (Clip's bounds constant), or a swish's Mul. */
bool cu_act_of(const struct cu_ctx *c, int32_t i, struct cu_act_args *out)
{
	const struct ho_node *n = &c->g->nodes[i];
	const struct ho_attr *approx = ho_node_attr(n, "approximate");

	*out = (struct cu_act_args){CU_ACT_NONE, 0, 0};
	if (ho_swish_sigmoid(c->g, i) >= 0) {
		out->act = CU_ACT_SWISH;
		return true;
	}
	for (size_t u = 0; u < sizeof(cu_unary_ops) / sizeof(cu_unary_ops[0]); u++) {
		if (strcmp(n->op_type, cu_unary_ops[u].op))
			continue;
		out->act = cu_unary_ops[u].act;
		if (out->act == CU_ACT_CLIP) {
			out->p = n->opset < 11 ? ho_node_attr_f(n, "min", -INFINITY) : -INFINITY;
			out->q = n->opset < 11 ? ho_node_attr_f(n, "max", INFINITY) : INFINITY;
			for (uint32_t k = 1; k < 3 && n->opset >= 11; k++) {
				int32_t t = k < n->n_inputs ? n->inputs[k] : -1;

				if (t < 0)
					continue;
				if (!cu_is_const(c, t))
					return false; /* bounds computed at run time */
				*(k == 1 ? &out->p : &out->q) = cu_const_f(c, t, 0);
			}
		} else if (out->act == CU_ACT_LEAKY_RELU) {
			out->p = ho_node_attr_f(n, "alpha", 0.01f);
		} else if (out->act == CU_ACT_HARD_SIGMOID) {
			out->p = ho_node_attr_f(n, "alpha", 0.2f);
			out->q = ho_node_attr_f(n, "beta", 0.5f);
		} else if (out->act == CU_ACT_ELU) {
			out->p = ho_node_attr_f(n, "alpha", 1.0f);
		} else if (out->act == CU_ACT_GELU && approx &&
			   (!approx->s || strcmp(approx->s, "none"))) {
			return false; /* tanh's approximation: not this kernel */
		}
		return true;
	}
	return false;
}

int cu_prep_unary(const struct cu_ctx *c)
{
	int32_t y = c->n->outputs[0];
	long n = (long)ho_shape_numel(&c->g->tensors[y].shape);
	struct cu_act_args act;
	struct cu_launch *l;

	if (!cu_act_of(c, (int32_t)(c->n - c->g->nodes), &act))
		return cu_refuse(c, "runs this operator with constant bounds only");
	if (!(l = cu_new_launch(c, "unary", n)))
		return cu_launch_done(c, l);
	cu_param_tensor(l, c, y);
	cu_param_tensor(l, c, c->n->inputs[0]);
	cu_param_long(l, n);
	cu_param_act(l, &act);
	return cu_launch_done(c, l);
}

/* Row-major strides of s, right-aligned to out's rank, 0 on axes it broadcasts. */
static void cu_bstrides(const struct ho_shape *s, const struct ho_shape *out, int *st)
{
	int64_t acc = 1;

	for (int k = out->rank - 1, j = s->rank - 1; k >= 0; k--, j--) {
		int64_t d = j >= 0 ? s->dim[j] : 1;

		st[k] = d == 1 && out->dim[k] != 1 ? 0 : (int)acc;
		acc *= d;
	}
}

/* Neighbouring axes both operands step alike along merged, unit axes dropped: the new rank. */
static int cu_coalesce(int rank, int *dims, int *sa, int *sb)
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
			dims[r] = dims[k], sa[r] = sa[k], sb[r] = sb[k];
			r++;
		}
	}
	for (int k = r; k < 8; k++)
		dims[k] = 1, sa[k] = sb[k] = 0;
	return r ? r : 1;
}

static const char *const cu_binary_ops[] = {"Add", "Sub", "Mul", "Div",
					    "Max", "Min", "Pow", "PRelu"};

/* y = n(x0, x1), numpy broadcasting; in_place: a post-op on y, its other operand x1. */
int cu_binary_at(const struct cu_ctx *c, const struct ho_node *n, int32_t y, bool in_place)
{
	const struct ho_shape *ys = &c->g->tensors[y].shape;
	struct cu_dims8 d = {{1, 1, 1, 1, 1, 1, 1, 1}}, sa = {{0}}, sb = {{0}};
	int32_t x0 = n->inputs[0], x1 = n->n_inputs > 1 ? n->inputs[1] : -1;
	long count = (long)ho_shape_numel(ys);
	int code = -1, rank;
	struct cu_launch *l;

	for (size_t i = 0; i < sizeof(cu_binary_ops) / sizeof(cu_binary_ops[0]); i++)
		if (!strcmp(n->op_type, cu_binary_ops[i]))
			code = (int)i;
	if (code < 0 || n->n_inputs != 2 || x0 < 0 || x1 < 0 || ys->rank > 8)
		return cu_refuse(c, "runs two-operand element-wise nodes of rank 8 or less");
	if (in_place && !ho_shape_same(&c->g->tensors[x0].shape, ys))
		return cu_refuse(c, "folds an element-wise node of its own shape only");
	for (int k = 0; k < ys->rank; k++)
		d.v[k] = (int)ys->dim[k];
	cu_bstrides(in_place ? ys : &c->g->tensors[x0].shape, ys, sa.v);
	cu_bstrides(&c->g->tensors[x1].shape, ys, sb.v);
	rank = cu_coalesce(ys->rank, d.v, sa.v, sb.v);
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
