// SPDX-License-Identifier: MIT
/* Shape rules: Normalisation, softmax, reductions and arg-min/max. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shape.h"

int ho_infer_batchnorm(struct ho_infer *c)
{
	struct ho_tensor *x = in_t(c, 0);
	struct ho_shape ch = {.rank = 1};

	if (!x)
		return fail(c, "missing input");
	for (uint32_t k = 1; k < 5 && k < c->nd->n_inputs; k++) {
		struct ho_tensor *p = in_t(c, k);

		if (p && x->shape.rank >= 2 && p->shape.rank == 1 && p->shape.dim[0] >= 0 &&
		    x->shape.dim[1] >= 0 && p->shape.dim[0] != x->shape.dim[1])
			return fail(
			    c, "parameter '%s' has %" PRId64 " elements for %" PRId64 " channels",
			    p->name, p->shape.dim[0], x->shape.dim[1]);
	}
	set_out(c, 0, x->dtype, &x->shape);
	ch.dim[0] = x->shape.rank >= 2 ? x->shape.dim[1] : HO_DIM_UNKNOWN;
	for (uint32_t k = 1; k < c->nd->n_outputs; k++)
		set_out(c, k, x->dtype, &ch);
	return 0;
}

int ho_infer_layernorm(struct ho_infer *c)
{
	struct ho_tensor *x = in_t(c, 0);
	struct ho_shape stat;
	int axis, ret;

	if (!x)
		return fail(c, "missing input");
	set_out(c, 0, x->dtype, &x->shape);
	if (x->shape.rank < 0)
		return 0;
	ret = norm_axis(c, attr_i(c, "axis", -1), x->shape.rank, &axis);
	if (ret)
		return ret;
	stat = x->shape;
	for (int i = axis; i < stat.rank; i++)
		stat.dim[i] = 1;
	set_out(c, 1, (int)attr_i(c, "stash_type", HO_DT_FLOAT), &stat);
	set_out(c, 2, (int)attr_i(c, "stash_type", HO_DT_FLOAT), &stat);
	return 0;
}

int ho_infer_softmax(struct ho_infer *c)
{
	struct ho_tensor *x = in_t(c, 0);
	int axis;

	if (!x)
		return fail(c, "missing input");
	if (x->shape.rank > 0) {
		int ret = norm_axis(c, attr_i(c, "axis", c->nd->opset >= 13 ? -1 : 1),
				    x->shape.rank, &axis);

		if (ret)
			return ret;
	}
	set_out(c, 0, x->dtype, &x->shape);
	return 0;
}

/*
 * A Reduce{Max,Min,Sum,Prod} over a value known at load, folded: exporters
 * compute a batch's largest image size so (torchvision's detectors pad
 * their input by it), and the shapes after it follow.
 */
static void ho_fold_reduce(struct ho_infer *c, const struct ho_tensor *x, const bool *reduce,
			   const struct ho_shape *o)
{
	static const char *const ops[] = {"ReduceMax", "ReduceMin", "ReduceSum", "ReduceProd"};
	const struct ho_value *v = in_v(c, 0);
	int64_t n_out = ho_shape_numel(o);
	struct ho_value *r;
	int kind = -1;

	for (int k = 0; k < 4; k++)
		kind = !strcmp(c->nd->op_type, ops[k]) ? k : kind;
	if (kind < 0 || !v || !v->count || n_out < 1 || !known(&x->shape) ||
	    (int64_t)v->count != ho_shape_numel(&x->shape) || v->count > HO_FOLD_SMALL_ELEMS ||
	    !(r = new_value(c, x->dtype, (size_t)n_out)))
		return;
	bool *seen = calloc((size_t)n_out, sizeof(bool));

	if (!seen)
		return;
	for (size_t i = 0; i < v->count; i++) {
		int64_t rem = (int64_t)i, at = 0, stride = 1;

		for (int a = x->shape.rank - 1; a >= 0; a--) {
			if (!reduce[a])
				at += rem % x->shape.dim[a] * stride;
			stride *= reduce[a] ? 1 : x->shape.dim[a];
			rem /= x->shape.dim[a];
		}
		double f = vget(v, i), g = seen[at] ? vget(r, (size_t)at) : f;
		int64_t n = vgeti(v, i), m = seen[at] ? vgeti(r, (size_t)at) : n;

		if (seen[at] && kind == 0)
			f = f > g ? f : g, n = n > m ? n : m;
		else if (seen[at] && kind == 1)
			f = f < g ? f : g, n = n < m ? n : m;
		else if (seen[at] && kind == 2) /* integers wrap, as ONNX Runtime's do */
			f += g, n = (int64_t)((uint64_t)n + (uint64_t)m);
		else if (seen[at] && kind == 3)
			f *= g, n = (int64_t)((uint64_t)n * (uint64_t)m);
		vset(r, (size_t)at, f, n, !v->f);
		seen[at] = true;
	}
	free(seen);
	set_value(c, 0, r);
}

int ho_infer_reduce(struct ho_infer *c)
{
	struct ho_tensor *x = in_t(c, 0);
	bool keep = attr_i(c, "keepdims", 1);
	bool noop = attr_i(c, "noop_with_empty_axes", 0);
	bool reduce[HO_MAX_RANK] = {0};
	int64_t axes_buf[HO_MAX_RANK];
	const int64_t *axes;
	size_t n_axes;
	struct ho_shape o;

	if (!x)
		return fail(c, "missing input");
	axes = attr_ints(c, "axes", &n_axes);
	if (c->nd->n_inputs >= 2 && in_t(c, 1)) {
		const struct ho_value *v = in_v(c, 1);

		if (!v) {
			set_out(c, 0, x->dtype, NULL);
			return 0;
		}
		n_axes = v->count > HO_MAX_RANK ? HO_MAX_RANK : v->count;
		for (size_t k = 0; k < n_axes; k++)
			axes_buf[k] = vgeti(v, k);
		axes = axes_buf;
	}
	if (x->shape.rank < 0) {
		set_out(c, 0, x->dtype, NULL);
		return 0;
	}
	if (!n_axes && noop) {
		set_out(c, 0, x->dtype, &x->shape);
		return 0;
	}
	for (int i = 0; i < x->shape.rank; i++)
		reduce[i] = n_axes == 0;
	for (size_t k = 0; k < n_axes; k++) {
		int ax, ret = norm_axis(c, axes[k], x->shape.rank, &ax);

		if (ret)
			return ret;
		reduce[ax] = true;
	}
	o.rank = 0;
	for (int i = 0; i < x->shape.rank; i++) {
		if (!reduce[i])
			o.dim[o.rank++] = x->shape.dim[i];
		else if (keep)
			o.dim[o.rank++] = 1;
	}
	set_out(c, 0, x->dtype, &o);
	ho_fold_reduce(c, x, reduce, &o);
	return 0;
}

int ho_infer_argminmax(struct ho_infer *c)
{
	struct ho_tensor *x = in_t(c, 0);
	struct ho_shape o;
	int axis, ret;

	if (!x || x->shape.rank < 1)
		return fail(c, "needs an input of rank >= 1");
	ret = norm_axis(c, attr_i(c, "axis", 0), x->shape.rank, &axis);
	if (ret)
		return ret;
	o = x->shape;
	if (attr_i(c, "keepdims", 1)) {
		o.dim[axis] = 1;
	} else {
		memmove(&o.dim[axis], &o.dim[axis + 1],
			(size_t)(o.rank - axis - 1) * sizeof(o.dim[0]));
		o.rank--;
	}
	set_out(c, 0, HO_DT_INT64, &o);
	return 0;
}

/* NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss: the loss per target or reduced;
 * SoftmaxCrossEntropyLoss's log_prob is the scores' shape. */
int ho_infer_loss(struct ho_infer *c)
{
	struct ho_tensor *x = in_t(c, 0), *t = in_t(c, 1);
	struct ho_shape scalar = {.rank = 0};

	if (!x || !t || x->shape.rank < 2 || t->shape.rank != x->shape.rank - 1)
		return fail(c, "needs scores [N, C, d...] and targets [N, d...]");
	set_out(c, 0, x->dtype,
		strcmp(attr_s(c, "reduction", "mean"), "none") ? &scalar : &t->shape);
	if (c->nd->n_outputs > 1)
		set_out(c, 1, x->dtype, &x->shape);
	return 0;
}
