// SPDX-License-Identifier: MIT
/*
 * The OpenCL backend's reductions: global pooling and ReduceMean, Max, Min and
 * Sum over contiguous axes, each as rows of len elements spaced inner apart
 * (one output element a work-item).
 */
#include <errno.h>
#include <string.h>

#include "ocl.h"

/* reduce_rows' kinds, as source.c numbers them */
enum { OCL_RED_MEAN, OCL_RED_MAX, OCL_RED_SUM, OCL_RED_MIN };

/* y[o, c] = kind over i of x[o, i, c], x viewed as [outer, len, inner]. */
static int ocl_reduce_rows(const struct ocl_ctx *c, int64_t outer, int64_t len, int64_t inner,
			   int kind)
{
	struct ocl_args a;
	struct ocl_launch *l =
	    ocl_launch_yx(c, "reduce_rows", c->n->outputs[0], c->n->inputs[0], &a);

	if (!l)
		return ocl_no_kernel(c);
	ocl_arg_int(&a, (int)len);
	ocl_arg_int(&a, (int)inner);
	ocl_arg_int(&a, kind);
	l->dims = 1;
	l->global[0] = (size_t)(outer * inner);
	return ocl_args_done(c, &a);
}

/* GlobalAveragePool, GlobalMaxPool: rows of the spatial extent, either layout. */
int ocl_prep_global_pool(const struct ocl_ctx *c)
{
	const struct ho_tensor *x = ho_node_input(c->g, c->n, 0);
	int64_t len = 1;

	if (!x || x->shape.rank < 3)
		return ocl_refuse(c, "needs a spatial input");
	int kind = strcmp(c->n->op_type, "GlobalAveragePool") ? OCL_RED_MAX : OCL_RED_MEAN;

	for (int k = 2; k < x->shape.rank; k++)
		len *= x->shape.dim[k];
	/* channels-last: rows of pixels, the channels inner; [N, C, 1, 1] is one memory */
	if (ocl_is_nhwc(c, c->n->inputs[0]))
		return ocl_reduce_rows(c, x->shape.dim[0], len, x->shape.dim[1], kind);
	return ocl_reduce_rows(c, x->shape.dim[0] * x->shape.dim[1], len, 1, kind);
}

/* ReduceMean, Max, Min, Sum: axes from the attribute, or (opset 18, Sum 13) a constant input. */
int ocl_prep_reduce(const struct ocl_ctx *c)
{
	static const char *const ops[] = {"ReduceMean", "ReduceMax", "ReduceSum", "ReduceMin",
					  NULL};
	const struct ho_tensor *x = ho_node_input(c->g, c->n, 0),
			       *ax = ho_node_input(c->g, c->n, 1);
	int64_t axes[HO_MAX_RANK], outer = 1, len = 1, inner = 1;
	unsigned mask = 0;
	int kind = 0, n = 0, r, lo = -1, hi = -1;

	while (ops[kind] && strcmp(ops[kind], c->n->op_type))
		kind++;
	if (!x || (r = x->shape.rank) < 1 || r > HO_MAX_RANK)
		return ocl_refuse(c, "needs an input of rank 1 to 8");
	if (ax) {
		if (!(ax->flags & HO_T_KNOWN) ||
		    (n = ho_tensor_ints(ax, c->mem[c->n->inputs[1]].host, axes, HO_MAX_RANK)) < 0)
			return ocl_refuse(c, "needs constant axes");
	} else if (ho_node_attr(c->n, "axes")) {
		const struct ho_attr *at = ho_node_attr(c->n, "axes");

		if (at->n > HO_MAX_RANK)
			return ocl_refuse(c, "has too many axes");
		n = (int)at->n;
		memcpy(axes, at->ints, at->n * sizeof(int64_t));
	}
	if (!n && ho_node_attr_i(c->n, "noop_with_empty_axes", 0))
		return ocl_refuse(c, "reduces nothing (noop_with_empty_axes)");
	for (int k = 0; k < n; k++) {
		int64_t a = axes[k] < 0 ? axes[k] + r : axes[k];

		if (a < 0 || a >= r)
			return ocl_refuse(c, "has an axis out of range");
		mask |= 1u << a;
	}
	if (!n)
		mask = (1u << r) - 1;
	for (int k = 0; k < r; k++)
		if (mask >> k & 1) {
			lo = lo < 0 ? k : lo;
			hi = k;
		}
	for (int k = 0; k < r; k++) {
		bool in = mask >> k & 1;

		if (!in && k > lo && k < hi)
			return ocl_refuse(c, "reduces contiguous axes only");
		if (in)
			len *= x->shape.dim[k];
		else if (k < lo)
			outer *= x->shape.dim[k];
		else
			inner *= x->shape.dim[k];
	}
	return ocl_reduce_rows(c, outer, len, inner, kind);
}
