// SPDX-License-Identifier: MIT
/*
 * Shape inference and load-time constant folding over the graph IR.
 *
 * Nodes are visited in topological order; each operator's rule fills in its
 * outputs' element type and shape.  Small integer and float tensors (shape
 * arithmetic: Shape -> Gather -> Concat -> Reshape, the scale of attention)
 * are evaluated on the way, so that exported models with dynamic axes get
 * fully concrete shapes once the caller binds the inputs.  Rules follow the
 * ONNX operator specification (and onnx.shape_inference where it is stricter).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "shape.h"

static ho_infer_fn ho_rule(const struct ho_node *nd)
{
	return ho_op_info_in(nd->domain, nd->op_type) ? ho_op_shape_rule(nd->op_type) : NULL;
}

static void ho_finish_tensor(struct ho_tensor *t)
{
	int64_t n = ho_shape_numel(&t->shape);
	int es = ho_dtype_size(t->dtype);

	t->bytes = n >= 0 && es ? (uint64_t)n * (uint64_t)es : 0;
}

static int ho_check_declared(struct ho_graph *g, struct ho_error *err)
{
	for (uint32_t i = 0; i < g->n_tensors; i++) {
		const struct ho_tensor *t = &g->tensors[i];
		bool bad = false;

		if (!(t->flags & HO_T_DECLARED) || (t->flags & HO_T_INPUT) || t->decl.rank < 0 ||
		    t->shape.rank < 0)
			continue;
		if (t->decl.rank != t->shape.rank)
			bad = true;
		for (int d = 0; d < t->shape.rank && !bad; d++)
			bad = t->decl.dim[d] >= 0 && t->shape.dim[d] >= 0 &&
			      t->decl.dim[d] != t->shape.dim[d];
		if (bad) {
			const struct ho_node *p = t->producer >= 0 ? &g->nodes[t->producer] : NULL;

			return ho_err(
			    err, -EINVAL,
			    "tensor '%s'%s%s%s: the model declares rank %d with other extents than "
			    "the inferred rank %d",
			    t->name, p ? " (from node '" : "", p ? p->name : "", p ? "')" : "",
			    t->decl.rank, t->shape.rank);
		}
	}
	return 0;
}

int ho_infer_graph(struct ho_graph *g, struct ho_error *err, int depth)
{
	struct ho_infer c = {.g = g, .a = g->priv->arena, .err = err, .depth = depth};

	if (depth > 32)
		return ho_err(err, -ELOOP, "subgraphs nested too deeply");
	for (uint32_t i = 0; i < g->n_nodes; i++) {
		struct ho_node *nd = &g->nodes[g->topo[i]];
		ho_infer_fn fn = ho_rule(nd);
		int ret;

		c.nd = nd;
		if (!fn)
			return ho_err(err, -ENOTSUP,
				      "node '%s': unknown operator '%s%s%s' (opset %" PRId64
				      "): cannot infer its shapes",
				      nd->name, nd->domain, *nd->domain ? "." : "", nd->op_type,
				      nd->opset);
		for (uint32_t k = 0; k < nd->n_inputs; k++) {
			const struct ho_tensor *t = in_t(&c, k);

			if (t && t->dtype == HO_DT_UNDEFINED && t->shape.rank < 0 &&
			    !(t->flags & (HO_T_INPUT | HO_T_OUTER)))
				return ho_err(err, -EINVAL,
					      "node '%s' (%s): input '%s' has no known type",
					      nd->name, nd->op_type, t->name);
		}
		ret = fn(&c);
		if (ret)
			return ret;
		for (uint32_t k = 0; k < nd->n_outputs; k++) {
			struct ho_tensor *t = out_t(&c, k);

			if (!t)
				continue;
			if (t->shape.rank > HO_MAX_RANK)
				return fail(&c, "output rank %d exceeds %d", t->shape.rank,
					    HO_MAX_RANK);
			for (int d = 0; d < t->shape.rank; d++) {
				if (t->shape.dim[d] < HO_DIM_UNKNOWN)
					return fail(&c, "output '%s' gets negative extent %" PRId64,
						    t->name, t->shape.dim[d]);
				if (t->shape.dim[d] > HO_DIM_MAX)
					return fail(
					    &c, "output '%s' gets extent %" PRId64 " (too large)",
					    t->name, t->shape.dim[d]);
			}
			ho_finish_tensor(t);
			if ((t->flags & HO_T_CONSTANT) && ho_shape_numel(&t->shape) >= 0 &&
			    ho_shape_numel(&t->shape) <= HO_FOLD_SMALL_ELEMS)
				tensor_value(&c, t);
		}
		bool folded = nd->n_outputs > 0;

		for (uint32_t k = 0; k < nd->n_outputs; k++)
			if (out_t(&c, k) && !out_t(&c, k)->value)
				folded = false;
		/* a value computed from bounds is no value: the node still runs (a Shape of a
		 * NonZero's output), its output's value kept only for the shapes after it */
		if ((nd->flags & HO_N_RUN_DECIDES) && ho_infer_at_bounds(g)) {
			for (uint32_t k = 0; k < nd->n_outputs; k++)
				if (out_t(&c, k))
					out_t(&c, k)->flags &= ~HO_T_FOLDED;
			folded = false;
		}
		if (folded)
			nd->flags |= HO_N_FOLDED;
	}
	for (uint32_t i = 0; i < g->n_tensors; i++)
		if (g->tensors[i].producer < 0)
			ho_finish_tensor(&g->tensors[i]);
	/* at their bounds, extents a run decides may pass what the model declares */
	return ho_infer_at_bounds(g) ? 0 : ho_check_declared(g, err);
}

int ho_shape_infer(struct ho_graph *g, struct ho_error *err)
{
	/* Every input extent must be known: the user binds the symbolic ones. */
	for (uint32_t i = 0; i < g->n_inputs; i++) {
		const struct ho_tensor *t = &g->tensors[g->inputs[i]];

		if (t->shape.rank < 0)
			return ho_err(
			    err, -EINVAL,
			    "input '%s' has no declared shape: bind it with --shape %s=D0xD1x...",
			    t->name, t->name);
		for (int d = 0; d < t->shape.rank; d++)
			if (t->shape.dim[d] < 0)
				return ho_err(
				    err, -EINVAL,
				    "input '%s' has unbound dimension %d ('%s'): bind it with "
				    "--shape %s=D0xD1x...",
				    t->name, d, t->shape.sym[d] ? t->shape.sym[d] : "?", t->name);
	}
	int ret = ho_infer_graph(g, err, 0);

	/* Costs follow from shapes: a caller that skipped them got 14x optimistic plans. */
	if (!ret)
		ho_features_compute(g);
	return ret;
}
