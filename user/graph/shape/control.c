// SPDX-License-Identifier: MIT
/* Shape rules: Control flow: If, Loop and Scan, their subgraphs inferred with the enclosing
 * graph's tensors bound. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heteroopt/opsem.h"
#include "shape.h"

static void bind_subgraph_outer(struct ho_graph *parent, struct ho_graph *sg)
{
	for (uint32_t i = 0; i < sg->n_tensors; i++) {
		struct ho_tensor *t = &sg->tensors[i];

		if (!(t->flags & HO_T_OUTER))
			continue;
		const struct ho_tensor *pt = &parent->tensors[t->outer];

		/* what is known of it outside is known inside: weights, constants, bound */
		t->flags = (t->flags & ~HO_T_KNOWN) | (pt->flags & HO_T_KNOWN);
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
	/* a condition known before the run (a tail planned for its values) picks one */
	const struct ho_value *cv = in_v(c, 0);
	struct ho_graph *pick = cv && cv->count == 1 ? (vgeti(cv, 0) ? gt : ge) : NULL;

	for (uint32_t k = 0; k < c->nd->n_outputs; k++) {
		const struct ho_tensor *a = &gt->tensors[gt->outputs[k]];
		const struct ho_tensor *b = &ge->tensors[ge->outputs[k]];
		struct ho_shape o = a->shape;

		if (pick) {
			a = b = &pick->tensors[pick->outputs[k]];
			o = a->shape;
		}
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
			/* a value whose shape changes from one iteration to the next has the
			 * body's shape after the first one only: unknown where they differ */
			struct ho_shape o = bt->shape;
			const struct ho_shape *s0 = &body->tensors[body->inputs[k + 2]].shape;

			if (o.rank != s0->rank)
				o.rank = -1;
			for (int i = 0; i < o.rank; i++)
				if (o.dim[i] != s0->dim[i])
					o.dim[i] = HO_DIM_UNKNOWN;
			set_out(c, k, bt->dtype, o.rank >= 0 ? &o : NULL);
		} else {
			struct ho_shape o;

			if (bt->shape.rank + 1 > HO_MAX_RANK || bt->shape.rank < 0) {
				set_out(c, k, bt->dtype, NULL);
				continue;
			}
			o = shape_insert(&bt->shape, 0, trip);
			set_out(c, k, bt->dtype, &o);
		}
	}
	return 0;
}

int ho_infer_scan(struct ho_infer *c)
{
	const struct ho_attr *ba = ho_node_attr(c->nd, "body");
	int in_rank[2 * HO_SCAN_MAX] = {0}, out_rank[2 * HO_SCAN_MAX] = {0};
	struct ho_graph *body;
	struct ho_scan s;
	int64_t len = HO_DIM_UNKNOWN, batch = HO_DIM_UNKNOWN;
	int ret;

	if (!ba || ba->type != HO_ATTR_GRAPH)
		return fail(c, "needs a body graph");
	body = ba->g[0];
	for (uint32_t k = 0; k < 2 * HO_SCAN_MAX; k++) {
		const struct ho_tensor *t = in_t(c, k + (c->nd->opset < 9));

		in_rank[k] = t ? t->shape.rank - (c->nd->opset < 9) : -1;
		out_rank[k] = k < body->n_outputs ? -1 : 0; /* normalised below */
	}
	ret = ho_scan_parse(c->nd, body, in_rank, out_rank, &s, c->err);
	if (ret)
		return ret;
	bind_subgraph_outer(c->g, body);
	for (uint32_t k = 0; k < s.n_state + s.n_in; k++) {
		const struct ho_tensor *x = in_t(c, s.first + k);
		struct ho_tensor *bt = &body->tensors[body->inputs[k]];
		struct ho_shape sh;

		if (!x || x->shape.rank < 1 + s.batched + (k >= s.n_state))
			return fail(c, "input %u needs a %s", s.first + k,
				    k >= s.n_state ? "scan axis" : "batch axis");
		sh = s.batched ? shape_drop(&x->shape, 0) : x->shape;
		if (s.batched)
			batch = x->shape.dim[0];
		if (k >= s.n_state) {
			int64_t a = s.in_axis[k - s.n_state] - s.batched;

			if (len >= 0 && sh.dim[a] >= 0 && sh.dim[a] != len)
				return fail(c, "scan inputs of %lld and %lld steps", (long long)len,
					    (long long)sh.dim[a]);
			if (sh.dim[a] >= 0)
				len = sh.dim[a];
			sh = shape_drop(&sh, a);
		}
		bt->dtype = x->dtype;
		bt->shape = sh;
	}
	ret = ho_infer_graph(body, c->err, c->depth + 1);
	if (ret)
		return ret;
	for (uint32_t k = 0; k < s.n_state + s.n_out; k++)
		out_rank[k] = body->tensors[body->outputs[k]].shape.rank;
	ret = ho_scan_parse(c->nd, body, in_rank, out_rank, &s, c->err);
	if (ret)
		return ret;
	for (uint32_t k = 0; k < s.n_state + s.n_out; k++) {
		const struct ho_tensor *bt = &body->tensors[body->outputs[k]];
		struct ho_shape o = bt->shape;

		if (o.rank < 0 || o.rank + 1 + s.batched > HO_MAX_RANK) {
			set_out(c, k, bt->dtype, NULL);
			continue;
		}
		if (k >= s.n_state)
			o = shape_insert(&o, s.out_axis[k - s.n_state] - s.batched, len);
		if (s.batched)
			o = shape_insert(&o, 0, batch);
		set_out(c, k, bt->dtype, &o);
	}
	return 0;
}
