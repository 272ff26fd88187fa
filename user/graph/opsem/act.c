// SPDX-License-Identifier: MIT
/*
 * Activations and broadcasting as device kernels take them: which unary
 * operator a node is and its two parameters (attributes, or a Clip's
 * constant bounds), one code each that every device backend's kernel
 * source switches on; and numpy broadcasting of two operands as one walk
 * of merged axes.  Worked out here once, so that the OpenCL and CUDA
 * backends read a node the same way.
 */
#include <math.h>
#include <string.h>

#include "common.h"
#include "heteroopt/opsem.h"

/* Unary operators and their codes. */
static const struct {
	const char *op;
	enum ho_act_code act;
} ho_unary_acts[] = {
    {"Relu", HO_ACT_RELU},
    {"Sigmoid", HO_ACT_SIGMOID},
    {"Tanh", HO_ACT_TANH},
    {"Clip", HO_ACT_CLIP},
    {"LeakyRelu", HO_ACT_LEAKY_RELU},
    {"HardSigmoid", HO_ACT_HARD_SIGMOID},
    {"HardSwish", HO_ACT_HARD_SWISH},
    {"Exp", HO_ACT_EXP},
    {"Sqrt", HO_ACT_SQRT},
    {"Neg", HO_ACT_NEG},
    {"Abs", HO_ACT_ABS},
    {"Erf", HO_ACT_ERF},
    {"Reciprocal", HO_ACT_RECIPROCAL},
    {"Gelu", HO_ACT_GELU},
    {"Log", HO_ACT_LOG},
    {"Floor", HO_ACT_FLOOR},
    {"Ceil", HO_ACT_CEIL},
    {"Elu", HO_ACT_ELU},
    {"Softplus", HO_ACT_SOFTPLUS},
    {"Identity", HO_ACT_NONE},
};

/* Two-operand operators, in their codes' order. */
static const char *const ho_binary_ops[] = {"Add", "Sub", "Mul", "Div",
					    "Max", "Min", "Pow", "PRelu"};

int ho_binary_code(const char *op_type)
{
	for (size_t i = 0; i < sizeof(ho_binary_ops) / sizeof(ho_binary_ops[0]); i++)
		if (!strcmp(op_type, ho_binary_ops[i]))
			return (int)i;
	return -1;
}

float ho_const_f(const struct ho_graph *g, int32_t t, int64_t i)
{
	const struct ho_tensor *tt = &g->tensors[t];

	if (tt->data)
		return ((const float *)tt->data)[i];
	if (tt->value && tt->value->f)
		return (float)tt->value->f[i];
	return tt->value && tt->value->i ? (float)tt->value->i[i] : 0.0f;
}

bool ho_is_const_f(const struct ho_graph *g, int32_t t)
{
	const struct ho_tensor *tt = &g->tensors[t];

	return (tt->flags & HO_T_KNOWN) && tt->dtype == HO_DT_FLOAT &&
	       (tt->data || (tt->value && (tt->value->f || tt->value->i)));
}

/* A Clip's bounds: attributes before opset 11, else constant inputs; false: computed at run. */
static bool ho_clip_bounds(const struct ho_graph *g, const struct ho_node *n,
			   struct ho_act_args *out)
{
	out->p = n->opset < 11 ? ho_node_attr_f(n, "min", -INFINITY) : -INFINITY;
	out->q = n->opset < 11 ? ho_node_attr_f(n, "max", INFINITY) : INFINITY;
	for (uint32_t k = 1; k < 3 && n->opset >= 11; k++) {
		int32_t t = k < n->n_inputs ? n->inputs[k] : -1;

		if (t < 0)
			continue;
		if (!ho_is_const_f(g, t))
			return false;
		*(k == 1 ? &out->p : &out->q) = ho_const_f(g, t, 0);
	}
	return true;
}

bool ho_act_op(const char *op_type)
{
	for (size_t u = 0; u < sizeof(ho_unary_acts) / sizeof(ho_unary_acts[0]); u++)
		if (!strcmp(op_type, ho_unary_acts[u].op))
			return true;
	return false;
}

bool ho_act_of(const struct ho_graph *g, int32_t i, struct ho_act_args *out)
{
	const struct ho_node *n = &g->nodes[i];
	const struct ho_attr *approx = ho_node_attr(n, "approximate");

	int32_t gate = ho_gate_of_mul(g, i);

	*out = (struct ho_act_args){HO_ACT_NONE, 0, 0};
	if (gate >= 0) {
		out->act = ho_gate_is_sigmoid(g, gate) ? HO_ACT_SWISH : HO_ACT_HARD_SWISH;
		return true;
	}
	for (size_t u = 0; u < sizeof(ho_unary_acts) / sizeof(ho_unary_acts[0]); u++) {
		if (strcmp(n->op_type, ho_unary_acts[u].op))
			continue;
		out->act = (int)ho_unary_acts[u].act;
		switch (ho_unary_acts[u].act) {
		case HO_ACT_CLIP:
			return ho_clip_bounds(g, n, out);
		case HO_ACT_LEAKY_RELU:
			out->p = ho_node_attr_f(n, "alpha", 0.01f);
			break;
		case HO_ACT_HARD_SIGMOID:
			out->p = ho_node_attr_f(n, "alpha", 0.2f);
			out->q = ho_node_attr_f(n, "beta", 0.5f);
			break;
		case HO_ACT_ELU:
			out->p = ho_node_attr_f(n, "alpha", 1.0f);
			break;
		case HO_ACT_GELU:
			if (approx && approx->s && !strcmp(approx->s, "tanh"))
				out->act = HO_ACT_GELU_TANH;
			return !approx || (approx->s && (!strcmp(approx->s, "none") ||
							 !strcmp(approx->s, "tanh")));
		default:
			break;
		}
		return true;
	}
	return false;
}

/* Row-major strides of s, right-aligned to out's rank, 0 on the axes it broadcasts. */
static void ho_bstrides(const struct ho_shape *s, const struct ho_shape *out, int *st)
{
	int64_t acc = 1;

	for (int k = out->rank - 1, j = s->rank - 1; k >= 0; k--, j--) {
		int64_t d = j >= 0 ? s->dim[j] : 1;

		st[k] = d == 1 && out->dim[k] != 1 ? 0 : (int)acc;
		acc *= d;
	}
}

int ho_walk_merge(int rank, int dims[8], int sa[8], int sb[8])
{
	int r = 0;

	/* unit axes dropped, neighbours along which both step alike merged */
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

int ho_broadcast_walk(const struct ho_shape *out, const struct ho_shape *a,
		      const struct ho_shape *b, int dims[8], int sa[8], int sb[8])
{
	if (out->rank > 8)
		return -1;
	for (int k = 0; k < 8; k++)
		dims[k] = k < out->rank ? (int)out->dim[k] : 1, sa[k] = sb[k] = 0;
	ho_bstrides(a, out, sa);
	ho_bstrides(b, out, sb);
	return ho_walk_merge(out->rank, dims, sa, sb);
}
