// SPDX-License-Identifier: MIT
/*
 * Shape rules: ONNX's training optimisers (ai.onnx.preview.training), one
 * step over n tensors. Inputs are R (the learning rate), T (the step
 * count), then groups of n: X, G and the optimiser's state (Adagrad: H;
 * Momentum: V; Adam: V, H). Outputs are the new X and state, each group of
 * n the shape and type of the inputs it replaces: G has no output.
 */
#include "shape.h"

int ho_infer_optimizer(struct ho_infer *c)
{
	const struct ho_node *nd = c->nd;
	int groups = ho_op_optimizer_groups(nd->op_type);
	struct ho_tensor *r = in_t(c, 0), *t = in_t(c, 1);
	uint32_t n = nd->n_inputs > 2 ? (nd->n_inputs - 2) / (uint32_t)groups : 0;

	if (!r || !t || ho_shape_numel(&r->shape) != 1 || ho_shape_numel(&t->shape) != 1)
		return fail(c, "needs a scalar learning rate R and step count T first");
	if (!n || nd->n_inputs != 2 + n * (uint32_t)groups ||
	    nd->n_outputs != n * (uint32_t)(groups - 1))
		return fail(c,
			    "needs R, T and %d groups of n inputs, giving %d groups of n outputs",
			    groups, groups - 1);
	for (uint32_t i = 0; i < n; i++) {
		struct ho_tensor *x = in_t(c, 2 + i);

		if (!x)
			return fail(c, "missing input %u", 2 + i);
		for (uint32_t g = 1; g < (uint32_t)groups; g++) {
			struct ho_tensor *o = in_t(c, 2 + g * n + i);

			if (!o || o->dtype != x->dtype || !ho_shape_same(&o->shape, &x->shape))
				return fail(c,
					    "input %u: X, G and the state of a tensor differ in "
					    "shape or type",
					    2 + g * n + i);
		}
		/* every group but G's (group 1) has an output: X, then the state */
		for (uint32_t g = 0; g < (uint32_t)groups - 1; g++)
			set_out(c, g * n + i, x->dtype, &x->shape);
	}
	return 0;
}
