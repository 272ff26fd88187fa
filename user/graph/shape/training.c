// SPDX-License-Identifier: MIT
/*
 * Shape rules: ONNX's training optimisers (ai.onnx.preview.training), one
 * step over n tensors. Inputs are R (the learning rate), T (the step
 * count), then groups of n: X, G and the optimiser's state (Adagrad: H;
 * Momentum: V; Adam: V, H). Outputs are the new X and state, each group of
 * n the shape and type of the inputs it replaces: G has no output.
 */
#include "shape.h"

/* Input groups after R and T: X, G and the state. */
static int ho_optimizer_groups(const char *op)
{
	return !strcmp(op, "Adam") ? 4 : 3;
}

int ho_infer_optimizer(struct ho_infer *c)
{
	const struct ho_node *nd = c->nd;
	int groups = ho_optimizer_groups(nd->op_type);
	struct ho_tensor *r = in_t(c, 0), *t = in_t(c, 1);
	uint32_t n = nd->n_inputs > 2 ? (nd->n_inputs - 2) / (uint32_t)groups : 0;

	if (!r || !t || ho_shape_numel(&r->shape) != 1 || ho_shape_numel(&t->shape) != 1)
		return fail(c, "needs a scalar learning rate R and step count T first");
	if (!n || nd->n_inputs != 2 + n * (uint32_t)groups ||
	    nd->n_outputs != n * (uint32_t)(groups - 1))
		return fail(c,
			    "needs R, T and %d groups of n inputs, giving %d groups of n outputs",
			    groups, groups - 1);
	for (uint32_t j = 0; j < nd->n_outputs; j++) {
		/* output group 0 is X's, the later ones the state's (skipping G) */
		struct ho_tensor *x = in_t(c, 2 + j + (j >= n ? n : 0));

		for (int g = 1; g < groups && x; g++) {
			struct ho_tensor *o = in_t(c, 2 + j % n + (uint32_t)g * n);

			if (!o || o->dtype != x->dtype || !ho_shape_same(&o->shape, &x->shape))
				return fail(c,
					    "input %u: X, G and the state of a tensor differ in "
					    "shape or type",
					    2 + j % n + (uint32_t)g * n);
		}
		if (!x)
			return fail(c, "missing input %u", 2 + j + (j >= n ? n : 0));
		set_out(c, j, x->dtype, &x->shape);
	}
	return 0;
}
