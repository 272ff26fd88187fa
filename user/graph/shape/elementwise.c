// SPDX-License-Identifier: MIT
/* Shape rules: Element-wise operators, one input or broadcasting several, with load-time folding of
 * small values. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shape.h"

static double fold_binary(const char *op, double a, double b, int64_t ia, int64_t ib, bool integer,
			  int64_t *iout, bool *ok)
{
	*ok = true;
	if (!strcmp(op, "Add")) {
		*iout = wrap_add(ia, ib);
		return a + b;
	}
	if (!strcmp(op, "Sub")) {
		*iout = wrap_sub(ia, ib);
		return a - b;
	}
	if (!strcmp(op, "Mul")) {
		*iout = wrap_mul(ia, ib);
		return a * b;
	}
	if (!strcmp(op, "Div")) {
		if (integer) {
			if (ib == 0 || (ia == INT64_MIN && ib == -1)) {
				*ok = false;
				return 0;
			}
			*iout = ia / ib; /* ONNX integer Div truncates */
			return 0;
		}
		return a / b;
	}
	if (!strcmp(op, "Max") || !strcmp(op, "Min")) {
		bool mx = op[1] == 'a';

		*iout = mx ? (ia > ib ? ia : ib) : (ia < ib ? ia : ib);
		return mx ? fmax(a, b) : fmin(a, b);
	}
	if (!strcmp(op, "Pow")) {
		*iout = f2i(pow((double)ia, (double)ib));
		return pow(a, b);
	}
	if (!strcmp(op, "Equal")) {
		*iout = integer ? ia == ib : a == b;
		return (double)*iout;
	}
	if (!strcmp(op, "Less")) {
		*iout = integer ? ia < ib : a < b;
		return (double)*iout;
	}
	if (!strcmp(op, "Greater")) {
		*iout = integer ? ia > ib : a > b;
		return (double)*iout;
	}
	if (!strcmp(op, "LessOrEqual")) {
		*iout = integer ? ia <= ib : a <= b;
		return (double)*iout;
	}
	if (!strcmp(op, "GreaterOrEqual")) {
		*iout = integer ? ia >= ib : a >= b;
		return (double)*iout;
	}
	if (!strcmp(op, "And")) {
		*iout = ia && ib;
		return (double)*iout;
	}
	if (!strcmp(op, "Or")) {
		*iout = ia || ib;
		return (double)*iout;
	}
	if (!strcmp(op, "Fmod")) { /* Mod with fmod=1: the sign of the dividend, as C's % */
		if (ib == 0 || ib == -1) {
			*ok = false;
			return 0;
		}
		*iout = ia % ib;
		return fmod(a, b);
	}
	if (!strcmp(op, "Mod")) {
		if (ib == 0 || ib == -1) {
			*ok = false;
			return 0;
		}
		*iout = ia % ib;
		if (*iout && ((*iout < 0) != (ib < 0)))
			*iout = wrap_add(*iout, ib); /* fmod=0: sign of the divisor */
		return fmod(a, b);
	}
	*ok = false;
	return 0;
}

static bool is_compare(const char *op)
{
	return !strcmp(op, "Equal") || !strcmp(op, "Less") || !strcmp(op, "Greater") ||
	       !strcmp(op, "LessOrEqual") || !strcmp(op, "GreaterOrEqual") || !strcmp(op, "And") ||
	       !strcmp(op, "Or") || !strcmp(op, "Xor");
}

int ho_infer_binary(struct ho_infer *c)
{
	struct ho_shape o = {0};
	const char *op = c->nd->op_type;
	int dtype = HO_DT_UNDEFINED;
	uint32_t n = 0;
	int ret;

	/* Variadic (Sum, Mean, Max, Min) and binary ops share one rule. */
	for (uint32_t k = 0; k < c->nd->n_inputs; k++) {
		struct ho_tensor *t = in_t(c, k);

		if (!t)
			continue;
		if (!n++) {
			o = t->shape;
			dtype = t->dtype;
			continue;
		}
		ret = broadcast(c, &o, &t->shape, &o);
		if (ret)
			return ret;
	}
	if (!n)
		return fail(c, "needs at least one input");
	if (is_compare(op))
		dtype = HO_DT_BOOL;
	set_out(c, 0, dtype, &o);

	/* Fold small constant arithmetic (shape computations). */
	if (n == 2 && c->nd->n_inputs == 2 && known(&o)) {
		/* the second decoded only when the first is known (a large weight beside an
		 * activation stays bytes) */
		const struct ho_value *va = in_v(c, 0), *vb = va ? in_v(c, 1) : NULL;
		int64_t cnt = ho_shape_numel(&o);
		struct ho_value *v;

		if (!va || !vb || cnt > HO_FOLD_MAX_ELEMS)
			return 0;
		v = new_value(c, dtype, (size_t)cnt);
		if (!v)
			return 0;
		bool integer = va->i && vb->i;
		const char *fop =
		    !strcmp(op, "Mod") && ho_node_attr_i(c->nd, "fmod", 0) ? "Fmod" : op;

		for (int64_t k = 0; k < cnt; k++) {
			size_t ia = bcast_index(&o, &in_t(c, 0)->shape, (size_t)k);
			size_t ib = bcast_index(&o, &in_t(c, 1)->shape, (size_t)k);
			int64_t iv = 0;
			bool ok;
			double f = fold_binary(fop, vget(va, ia), vget(vb, ib), vgeti(va, ia),
					       vgeti(vb, ib), integer, &iv, &ok);

			if (!ok)
				return 0;
			vset(v, (size_t)k, f, iv, integer || is_compare(op));
		}
		set_value(c, 0, v);
	}
	return 0;
}

int ho_infer_where(struct ho_infer *c)
{
	struct ho_shape o;
	int ret;

	if (!in_t(c, 0) || !in_t(c, 1) || !in_t(c, 2))
		return fail(c, "needs three inputs");
	ret = broadcast(c, &in_t(c, 0)->shape, &in_t(c, 1)->shape, &o);
	if (!ret)
		ret = broadcast(c, &o, &in_t(c, 2)->shape, &o);
	if (ret)
		return ret;
	set_out(c, 0, in_t(c, 1)->dtype, &o);
	const struct ho_value *vc = in_v(c, 0), *vx = in_v(c, 1), *vy = in_v(c, 2);
	int64_t cnt = ho_shape_numel(&o);

	if (vc && vx && vy && cnt >= 0 && cnt <= HO_FOLD_MAX_ELEMS) {
		struct ho_value *v = new_value(c, in_t(c, 1)->dtype, (size_t)cnt);

		if (!v)
			return 0;
		for (int64_t k = 0; k < cnt; k++) {
			bool take_x = vgeti(vc, bcast_index(&o, &in_t(c, 0)->shape, (size_t)k));
			const struct ho_value *src = take_x ? vx : vy;
			size_t idx = bcast_index(&o, &in_t(c, take_x ? 1 : 2)->shape, (size_t)k);

			vset(v, (size_t)k, vget(src, idx), vgeti(src, idx), src->i != NULL);
		}
		set_value(c, 0, v);
	}
	return 0;
}

int ho_infer_unary(struct ho_infer *c)
{
	struct ho_tensor *x = in_t(c, 0);
	const char *op = c->nd->op_type;

	if (!x)
		return fail(c, "missing input");
	int dtype = x->dtype;

	if (!strcmp(op, "Not") || !strcmp(op, "IsNaN") || !strcmp(op, "IsInf"))
		dtype = HO_DT_BOOL;
	set_out(c, 0, dtype, &x->shape);

	/* Training-mode extras of Dropout and BatchNormalization. */
	if (!strcmp(op, "Dropout"))
		set_out(c, 1, HO_DT_BOOL, &x->shape);

	bool view = !strcmp(op, "Identity") || !strcmp(op, "Dropout");
	const struct ho_value *vx = view ? view_value(c) : in_v(c, 0);
	int64_t cnt = ho_shape_numel(&x->shape);

	if (!vx || cnt < 0 || cnt > HO_FOLD_MAX_ELEMS)
		return 0;
	struct ho_value *v = new_value(c, dtype, (size_t)cnt);

	if (!v)
		return 0;
	for (int64_t k = 0; k < cnt; k++) {
		double f = vget(vx, (size_t)k);
		int64_t i = vgeti(vx, (size_t)k);

		if (!strcmp(op, "Identity") || !strcmp(op, "Dropout"))
			;
		else if (!strcmp(op, "Neg"))
			f = -f, i = wrap_sub(0, i);
		else if (!strcmp(op, "Abs"))
			f = fabs(f), i = i < 0 ? wrap_sub(0, i) : i;
		else if (!strcmp(op, "Sqrt"))
			f = sqrt(f);
		else if (!strcmp(op, "Reciprocal"))
			f = 1.0 / f;
		else if (!strcmp(op, "Floor"))
			f = floor(f);
		else if (!strcmp(op, "Ceil"))
			f = ceil(f);
		else if (!strcmp(op, "Not"))
			i = !i;
		else if (!strcmp(op, "Relu"))
			f = f > 0 ? f : 0, i = i > 0 ? i : 0;
		else
			return 0; /* not folded: value stays unknown */
		vset(v, (size_t)k, f, i, vx->i != NULL);
	}
	set_value(c, 0, v);
	return 0;
}

int ho_infer_clip(struct ho_infer *c)
{
	if (!in_t(c, 0))
		return fail(c, "missing input");
	set_out(c, 0, in_t(c, 0)->dtype, &in_t(c, 0)->shape);
	return 0;
}

int ho_infer_cast(struct ho_infer *c)
{
	struct ho_tensor *x = in_t(c, 0);
	int64_t to;

	if (!x)
		return fail(c, "missing input");
	if (!strcmp(c->nd->op_type, "CastLike")) {
		if (!in_t(c, 1))
			return fail(c, "missing target_type input");
		to = in_t(c, 1)->dtype;
	} else {
		to = attr_i(c, "to", -1);
	}
	if (to <= HO_DT_UNDEFINED || to >= HO_DT_COUNT)
		return fail(c, "invalid target type %" PRId64, to);
	set_out(c, 0, (int)to, &x->shape);
	const struct ho_value *vx = to == HO_DT_STRING ? NULL : in_v(c, 0); /* no string values */

	if (vx) {
		struct ho_value *v = new_value(c, (int)to, vx->count);

		if (!v)
			return 0;
		for (size_t k = 0; k < vx->count; k++) {
			if (to == HO_DT_BOOL)
				v->i[k] = vget(vx, k) != 0;
			else
				vset(v, k, vget(vx, k), vgeti(vx, k), vx->i != NULL);
		}
		set_value(c, 0, v);
	}
	return 0;
}

/*
 * QuantizeLinear: x's shape in y_zero_point's type (output_dtype's, or uint8,
 * without one); DequantizeLinear: x's shape in x_scale's type;
 * DynamicQuantizeLinear: y in uint8, then its scale (float) and zero point
 * (uint8) as scalars.
 */
int ho_infer_quant(struct ho_infer *c)
{
	struct ho_tensor *x = in_t(c, 0);
	const char *op = c->nd->op_type;
	struct ho_shape scalar = {.rank = 0};
	int64_t od = attr_i(c, "output_dtype", 0);

	if (!x)
		return fail(c, "missing input");
	if (!strcmp(op, "DynamicQuantizeLinear")) {
		set_out(c, 0, HO_DT_UINT8, &x->shape);
		set_out(c, 1, HO_DT_FLOAT, &scalar);
		set_out(c, 2, HO_DT_UINT8, &scalar);
		return 0;
	}
	if (!in_t(c, 1))
		return fail(c, "needs a scale");
	if (od < 0 || od >= HO_DT_COUNT)
		return fail(c, "invalid output_dtype %" PRId64, od);
	if (!strcmp(op, "QuantizeLinear"))
		set_out(c, 0,
			in_t(c, 2) ? in_t(c, 2)->dtype
			: od	   ? (int)od
				   : HO_DT_UINT8,
			&x->shape);
	else
		set_out(c, 0, in_t(c, 1)->dtype, x->shape.rank < 0 ? NULL : &x->shape);
	return 0;
}
