// SPDX-License-Identifier: MIT
/* Shape rules: Control flow: If and Loop, their subgraphs inferred with the enclosing graph's
 * tensors bound. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shape.h"

static void bind_subgraph_outer(struct ho_graph *parent, struct ho_graph *sg)
{
	for (uint32_t i = 0; i < sg->n_tensors; i++) {
		struct ho_tensor *t = &sg->tensors[i];

		if (!(t->flags & HO_T_OUTER))
			continue;
		const struct ho_tensor *pt = &parent->tensors[t->outer];

		t->dtype = pt->dtype;
		t->shape = pt->shape;
		t->value = pt->value;
		t->data = pt->data;
		t->data_len = pt->data_len;
	}
}

int ho_infer_if(struct ho_infer *c)
{
	const struct ho_attr *th = ho_node_attr(c->nd, "then_branch");
	const struct ho_attr *el = ho_node_attr(c->nd, "else_branch");
	int ret;

	if (!th || !el || th->type != HO_ATTR_GRAPH || el->type != HO_ATTR_GRAPH)
		return fail(c, "needs then_branch and else_branch graphs");
	struct ho_graph *gt = th->g[0], *ge = el->g[0];

	if (gt->n_outputs != c->nd->n_outputs || ge->n_outputs != c->nd->n_outputs)
		return fail(c, "branches have %u and %u outputs for %u node outputs", gt->n_outputs,
			    ge->n_outputs, c->nd->n_outputs);
	bind_subgraph_outer(c->g, gt);
	bind_subgraph_outer(c->g, ge);
	ret = ho_infer_graph(gt, c->err, c->depth + 1);
	if (!ret)
		ret = ho_infer_graph(ge, c->err, c->depth + 1);
	if (ret)
		return ret;
	for (uint32_t k = 0; k < c->nd->n_outputs; k++) {
		const struct ho_tensor *a = &gt->tensors[gt->outputs[k]];
		const struct ho_tensor *b = &ge->tensors[ge->outputs[k]];
		struct ho_shape o = a->shape;

		if (a->dtype != b->dtype)
			return fail(c, "branch output %u is %s in then_branch, %s in else_branch",
				    k, ho_dtype_name(a->dtype), ho_dtype_name(b->dtype));
		if (a->shape.rank != b->shape.rank) {
			o.rank = -1;
		} else {
			for (int i = 0; i < o.rank; i++)
				if (a->shape.dim[i] != b->shape.dim[i])
					o.dim[i] = HO_DIM_UNKNOWN;
		}
		set_out(c, k, a->dtype, o.rank >= 0 ? &o : NULL);
	}
	return 0;
}

int ho_infer_loop(struct ho_infer *c)
{
	const struct ho_attr *ba = ho_node_attr(c->nd, "body");
	struct ho_graph *body;
	uint32_t n_carried;
	int64_t trip = HO_DIM_UNKNOWN;
	int ret;

	if (!ba || ba->type != HO_ATTR_GRAPH)
		return fail(c, "needs a body graph");
	body = ba->g[0];
	if (c->nd->n_inputs < 2 || body->n_inputs != c->nd->n_inputs ||
	    body->n_outputs < body->n_inputs - 1)
		return fail(c, "body has %u inputs and %u outputs for %u node inputs",
			    body->n_inputs, body->n_outputs, c->nd->n_inputs);
	n_carried = c->nd->n_inputs - 2;
	if (in_v(c, 0) && in_v(c, 0)->count == 1)
		trip = vgeti(in_v(c, 0), 0);
	bind_subgraph_outer(c->g, body);
	/* Body inputs: iteration number, condition, then the loop-carried values. */
	for (uint32_t k = 0; k < body->n_inputs; k++) {
		struct ho_tensor *bt = &body->tensors[body->inputs[k]];
		struct ho_tensor *src = k >= 2 ? in_t(c, k) : NULL;

		bt->shape.rank = 0;
		bt->dtype = k == 0   ? HO_DT_INT64
			    : k == 1 ? HO_DT_BOOL
				     : (src ? src->dtype : bt->dtype);
		if (src)
			bt->shape = src->shape;
	}
	ret = ho_infer_graph(body, c->err, c->depth + 1);
	if (ret)
		return ret;
	for (uint32_t k = 0; k < c->nd->n_outputs; k++) {
		uint32_t bo = k + 1; /* skip the condition output */
		const struct ho_tensor *bt;

		if (bo >= body->n_outputs)
			return fail(c, "more node outputs than body outputs");
		bt = &body->tensors[body->outputs[bo]];
		if (k < n_carried) {
			set_out(c, k, bt->dtype, &bt->shape);
		} else {
			struct ho_shape o = {.rank = bt->shape.rank + 1};

			if (o.rank > HO_MAX_RANK || bt->shape.rank < 0) {
				set_out(c, k, bt->dtype, NULL);
				continue;
			}
			o.dim[0] = trip;
			for (int i = 0; i < bt->shape.rank; i++)
				o.dim[i + 1] = bt->shape.dim[i];
			set_out(c, k, bt->dtype, &o);
		}
	}
	return 0;
}
