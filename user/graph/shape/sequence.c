// SPDX-License-Identifier: MIT
/*
 * Shape rules: sequences, held dense.  A sequence whose members share one
 * element type and shape is the tensor of its members stacked on a new
 * leading axis, [n, member shape...]; the empty sequence is [0], its member
 * shape set by the first insert.  Sequences of members of different shapes
 * (a SplitToSequence into unequal parts, a SequenceConstruct of unlike
 * tensors) are refused: the plan holds one shape per tensor.
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "shape.h"

/* The empty sequence of SequenceEmpty: no member shape yet. */
static bool seq_empty(const struct ho_shape *s)
{
	return s->rank == 1 && s->dim[0] == 0;
}

int ho_infer_sequence(struct ho_infer *c)
{
	const char *op = c->nd->op_type;
	struct ho_tensor *s = in_t(c, 0), *t = in_t(c, 1);
	struct ho_shape o, m;

	if (!strcmp(op, "SequenceEmpty")) {
		o = (struct ho_shape){.rank = 1};
		set_out(c, 0, (int)attr_i(c, "dtype", HO_DT_FLOAT), &o);
		return 0;
	}
	if (!s || !known(&s->shape))
		return fail(c, "needs its first input, of a known shape");
	if (!strcmp(op, "SequenceConstruct")) {
		for (uint32_t k = 1; k < c->nd->n_inputs; k++)
			if (!in_t(c, k) || in_t(c, k)->dtype != s->dtype ||
			    !ho_shape_same(&in_t(c, k)->shape, &s->shape))
				return fail(c,
					    "runs sequences of members of one type and shape only");
		o = shape_insert(&s->shape, 0, c->nd->n_inputs);
		set_out(c, 0, s->dtype, &o);
		return 0;
	}
	if (s->shape.rank < 1)
		return fail(c, "needs a sequence");
	m = shape_drop(&s->shape, 0);
	if (!strcmp(op, "SequenceInsert")) {
		if (!t || !known(&t->shape) ||
		    (!seq_empty(&s->shape) &&
		     (t->dtype != s->dtype || !ho_shape_same(&t->shape, &m))))
			return fail(c, "runs sequences of members of one type and shape only");
		o = shape_insert(&t->shape, 0, s->shape.dim[0] + 1);
		set_out(c, 0, t->dtype, &o);
	} else if (!strcmp(op, "SequenceErase")) {
		if (s->shape.dim[0] < 1)
			return fail(c, "erases from an empty sequence");
		o = seq_empty(&s->shape) ? s->shape : shape_insert(&m, 0, s->shape.dim[0] - 1);
		set_out(c, 0, s->dtype, &o);
	} else if (!strcmp(op, "SequenceAt")) {
		if (seq_empty(&s->shape))
			return fail(c, "reads from an empty sequence");
		set_out(c, 0, s->dtype, &m);
	} else if (!strcmp(op, "SequenceLength")) {
		struct ho_value *v = new_value(c, HO_DT_INT64, 1);

		o = (struct ho_shape){.rank = 0};
		set_out(c, 0, HO_DT_INT64, &o);
		if (v) {
			v->i[0] = s->shape.dim[0];
			set_value(c, 0, v);
		}
	} else { /* ConcatFromSequence */
		int64_t axis = attr_i(c, "axis", 0), na = attr_i(c, "new_axis", 0), r = m.rank;

		if (seq_empty(&s->shape) || axis < -(r + na) || axis >= r + na)
			return fail(c, "needs a member axis, and members");
		axis += axis < 0 ? r + na : 0;
		o = na ? shape_insert(&m, axis, s->shape.dim[0]) : m;
		if (!na)
			o.dim[axis] *= s->shape.dim[0];
		set_out(c, 0, s->dtype, &o);
	}
	return 0;
}

/* SplitToSequence: equal parts along axis, as a sequence [parts, part shape]. */
int ho_infer_split_to_sequence(struct ho_infer *c)
{
	struct ho_tensor *x = in_t(c, 0);
	const struct ho_value *sv = in_v(c, 1);
	int64_t axis = attr_i(c, "axis", 0), keep = attr_i(c, "keepdims", 1), part = 1, d, parts;
	struct ho_shape m, o;

	if (!x || !known(&x->shape) || x->shape.rank < 1 || axis < -x->shape.rank ||
	    axis >= x->shape.rank)
		return fail(c, "needs an input of known shape and an axis of it");
	axis += axis < 0 ? x->shape.rank : 0;
	d = x->shape.dim[axis];
	parts = d;
	if (in_t(c, 1)) {
		if (!sv || !sv->count)
			return fail(c, "needs its split known at plan time");
		part = vgeti(sv, 0);
		for (size_t k = 1; k < sv->count; k++)
			if (vgeti(sv, k) != part || part * (int64_t)sv->count != d)
				return fail(c, "splits into parts of one size only (the sequence "
					       "holds one member shape)");
		keep = 1;
		/* a list of sizes: that many parts (of 0 each, of an empty axis); one size: d / it
		 */
		parts = in_t(c, 1)->shape.rank == 1 ? (int64_t)sv->count : part > 0 ? d / part : -1;
	}
	if (part < 0 || parts < 0 || part * parts != d)
		return fail(c,
			    "splits %" PRId64 " into parts of %" PRId64
			    ": of one size only (the sequence holds one member shape)",
			    d, part);
	m = x->shape;
	m.dim[axis] = part;
	if (!keep) /* parts of 1, the axis dropped */
		m = shape_drop(&m, axis);
	o = shape_insert(&m, 0, parts);
	set_out(c, 0, x->dtype, &o);
	return 0;
}
