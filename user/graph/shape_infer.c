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
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph_priv.h"

struct ho_infer {
	struct ho_graph *g;
	struct ho_arena *a;
	struct ho_error *err;
	struct ho_node *nd;
	int depth;
};

typedef int (*ho_infer_fn)(struct ho_infer *c);

/*
 * Extents are capped well below overflow: 2^40 elements along one axis is
 * beyond any real tensor, and keeps sums and products of two extents exact.
 * Arithmetic on attacker-controlled attributes saturates at HO_DIM_BAD, which
 * the per-node check then reports as "extent too large".
 */
#define HO_DIM_MAX (INT64_C(1) << 40)
#define HO_DIM_BAD INT64_MAX

static int64_t dim_add(int64_t a, int64_t b)
{
	int64_t r;

	return __builtin_add_overflow(a, b, &r) ? HO_DIM_BAD : r;
}

static int64_t dim_mul(int64_t a, int64_t b)
{
	int64_t r;

	return __builtin_mul_overflow(a, b, &r) ? HO_DIM_BAD : r;
}

/* double -> int64 without undefined behaviour for NaN or out-of-range values. */
static int64_t f2i(double f)
{
	if (f != f)
		return 0;
	if (f >= 9.2233720368547758e18)
		return INT64_MAX;
	if (f <= -9.2233720368547758e18)
		return INT64_MIN;
	return (int64_t)f;
}

/* Two's-complement wrapping integer arithmetic, as the runtime's kernels do. */
static int64_t wrap_add(int64_t a, int64_t b)
{
	return (int64_t)((uint64_t)a + (uint64_t)b);
}

static int64_t wrap_sub(int64_t a, int64_t b)
{
	return (int64_t)((uint64_t)a - (uint64_t)b);
}

static int64_t wrap_mul(int64_t a, int64_t b)
{
	return (int64_t)((uint64_t)a * (uint64_t)b);
}

static int ho_infer_graph(struct ho_graph *g, struct ho_error *err, int depth);

static int fail(struct ho_infer *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(struct ho_infer *c, const char *fmt, ...)
{
	char msg[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return ho_err(c->err, -EINVAL, "node '%s' (%s): %s", c->nd->name, c->nd->op_type, msg);
}

static struct ho_tensor *in_t(struct ho_infer *c, uint32_t k)
{
	if (k >= c->nd->n_inputs || c->nd->inputs[k] < 0)
		return NULL;
	return &c->g->tensors[c->nd->inputs[k]];
}

static struct ho_tensor *out_t(struct ho_infer *c, uint32_t k)
{
	if (k >= c->nd->n_outputs || c->nd->outputs[k] < 0)
		return NULL;
	return &c->g->tensors[c->nd->outputs[k]];
}

static const struct ho_value *tensor_value(struct ho_infer *c, struct ho_tensor *t)
{
	if (!t)
		return NULL;
	if (!t->value && t->data) {
		int64_t n = ho_shape_numel(&t->shape);

		if (n >= 0 && n <= HO_FOLD_MAX_ELEMS)
			t->value = ho_value_from_data(c->a, t->dtype, t->data, t->data_len, n);
	}
	return t->value;
}

static const struct ho_value *in_v(struct ho_infer *c, uint32_t k)
{
	return tensor_value(c, in_t(c, k));
}

static int64_t attr_i(struct ho_infer *c, const char *name, int64_t def)
{
	const struct ho_attr *at = ho_node_attr(c->nd, name);

	return at && at->type == HO_ATTR_INT ? at->i : def;
}

static const char *attr_s(struct ho_infer *c, const char *name, const char *def)
{
	const struct ho_attr *at = ho_node_attr(c->nd, name);

	return at && at->type == HO_ATTR_STRING ? at->s : def;
}

static const int64_t *attr_ints(struct ho_infer *c, const char *name, size_t *n)
{
	const struct ho_attr *at = ho_node_attr(c->nd, name);

	if (!at || at->type != HO_ATTR_INTS) {
		*n = 0;
		return NULL;
	}
	*n = at->n;
	return at->ints;
}

static bool known(const struct ho_shape *s)
{
	return ho_shape_numel(s) >= 0;
}

static void set_out(struct ho_infer *c, uint32_t k, int dtype, const struct ho_shape *s)
{
	struct ho_tensor *t = out_t(c, k);

	if (!t)
		return;
	t->dtype = dtype;
	if (s) {
		t->shape = *s;
		for (int i = 0; i < HO_MAX_RANK; i++)
			t->shape.sym[i] = NULL;
	} else {
		t->shape.rank = -1;
	}
}

static struct ho_value *new_value(struct ho_infer *c, int dtype, size_t count)
{
	struct ho_value *v = ho_arena_calloc(c->a, 1, sizeof(*v));

	if (!v)
		return NULL;
	v->dtype = dtype;
	v->count = count;
	if (dtype == HO_DT_FLOAT || dtype == HO_DT_DOUBLE || dtype == HO_DT_FLOAT16 ||
	    dtype == HO_DT_BFLOAT16)
		v->f = ho_arena_calloc(c->a, count ? count : 1, sizeof(double));
	else
		v->i = ho_arena_calloc(c->a, count ? count : 1, sizeof(int64_t));
	return (v->f || v->i) ? v : NULL;
}

static double vget(const struct ho_value *v, size_t k)
{
	return v->f ? v->f[k] : (double)v->i[k];
}

static int64_t vgeti(const struct ho_value *v, size_t k)
{
	return v->i ? v->i[k] : f2i(v->f[k]);
}

static void vset(struct ho_value *v, size_t k, double f, int64_t i, bool is_int)
{
	if (v->f)
		v->f[k] = is_int ? (double)i : f;
	else
		v->i[k] = is_int ? i : f2i(f);
}

/* Attach a folded value to output k, which must already have a known shape. */
static void set_value(struct ho_infer *c, uint32_t k, struct ho_value *v)
{
	struct ho_tensor *t = out_t(c, k);

	if (t && v && (int64_t)v->count == ho_shape_numel(&t->shape)) {
		t->value = v;
		t->flags |= HO_T_FOLDED;
	}
}

static int norm_axis(struct ho_infer *c, int64_t axis, int rank, int *out)
{
	*out = 0;
	if (axis < -rank || axis >= rank)
		return fail(c, "axis %" PRId64 " is out of range for rank %d", axis, rank);
	*out = (int)(axis < 0 ? axis + rank : axis);
	return 0;
}

/* ---- elementwise ---- */

static int broadcast(struct ho_infer *c, const struct ho_shape *pa, const struct ho_shape *pb,
		     struct ho_shape *o)
{
	/* Copies: o may alias an operand. */
	const struct ho_shape sa = *pa, sb = *pb, *a = &sa, *b = &sb;

	if (a->rank < 0 || b->rank < 0) {
		o->rank = -1;
		return 0;
	}
	o->rank = a->rank > b->rank ? a->rank : b->rank;
	for (int i = 0; i < o->rank; i++) {
		int ia = i - (o->rank - a->rank), ib = i - (o->rank - b->rank);
		int64_t da = ia >= 0 ? a->dim[ia] : 1, db = ib >= 0 ? b->dim[ib] : 1;

		if (da == 1)
			o->dim[i] = db;
		else if (db == 1)
			o->dim[i] = da;
		else if (da < 0 || db < 0)
			o->dim[i] = da < 0 ? db : da;
		else if (da == db)
			o->dim[i] = da;
		else
			return fail(c, "cannot broadcast dimension %" PRId64 " against %" PRId64,
				    da, db);
	}
	return 0;
}

/* Flat index into a (broadcast) operand for flat output index k. */
static size_t bcast_index(const struct ho_shape *o, const struct ho_shape *s, size_t k)
{
	size_t idx = 0, stride = 1;

	for (int i = o->rank - 1; i >= 0; i--) {
		size_t coord = k % (size_t)o->dim[i];
		int is = i - (o->rank - s->rank);

		k /= (size_t)o->dim[i];
		if (is >= 0) {
			if (s->dim[is] != 1)
				idx += coord * stride;
			stride *= (size_t)s->dim[is];
		}
	}
	return idx;
}

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

static int infer_binary(struct ho_infer *c)
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
		const struct ho_value *va = in_v(c, 0), *vb = in_v(c, 1);
		int64_t cnt = ho_shape_numel(&o);
		struct ho_value *v;

		if (!va || !vb || cnt > HO_FOLD_MAX_ELEMS)
			return 0;
		v = new_value(c, dtype, (size_t)cnt);
		if (!v)
			return 0;
		bool integer = va->i && vb->i;

		for (int64_t k = 0; k < cnt; k++) {
			size_t ia = bcast_index(&o, &in_t(c, 0)->shape, (size_t)k);
			size_t ib = bcast_index(&o, &in_t(c, 1)->shape, (size_t)k);
			int64_t iv = 0;
			bool ok;
			double f = fold_binary(op, vget(va, ia), vget(vb, ib), vgeti(va, ia),
					       vgeti(vb, ib), integer, &iv, &ok);

			if (!ok)
				return 0;
			vset(v, (size_t)k, f, iv, integer || is_compare(op));
		}
		set_value(c, 0, v);
	}
	return 0;
}

static int infer_where(struct ho_infer *c)
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

static int infer_unary(struct ho_infer *c)
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

	const struct ho_value *vx = in_v(c, 0);
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

static int infer_clip(struct ho_infer *c)
{
	if (!in_t(c, 0))
		return fail(c, "missing input");
	set_out(c, 0, in_t(c, 0)->dtype, &in_t(c, 0)->shape);
	return 0;
}

static int infer_cast(struct ho_infer *c)
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
	const struct ho_value *vx = in_v(c, 0);

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

/* ---- convolution and pooling ---- */

static int conv_pool_dims(struct ho_infer *c, const struct ho_shape *x, const int64_t *kernel,
			  int nsp, bool ceil_mode, struct ho_shape *o)
{
	size_t n_strides, n_dil, n_pads;
	const int64_t *strides = attr_ints(c, "strides", &n_strides);
	const int64_t *dil = attr_ints(c, "dilations", &n_dil);
	const int64_t *pads = attr_ints(c, "pads", &n_pads);
	const char *auto_pad = attr_s(c, "auto_pad", "NOTSET");

	if ((n_strides && n_strides != (size_t)nsp) || (n_dil && n_dil != (size_t)nsp) ||
	    (n_pads && n_pads != (size_t)nsp * 2))
		return fail(c, "strides/dilations/pads do not match %d spatial dims", nsp);
	for (int i = 0; i < nsp; i++) {
		int64_t in = x->dim[2 + i];
		int64_t s = n_strides ? strides[i] : 1, d = n_dil ? dil[i] : 1;
		int64_t ek, total_pad;

		if (s < 1 || d < 1 || kernel[i] < 1 || s > HO_DIM_MAX || d > HO_DIM_MAX ||
		    kernel[i] > HO_DIM_MAX)
			return fail(c, "stride, dilation and kernel must be in 1..2^40");
		ek = dim_add(dim_mul(kernel[i] - 1, d), 1);
		if (in < 0) {
			o->dim[2 + i] = HO_DIM_UNKNOWN;
			continue;
		}
		if (!strcmp(auto_pad, "SAME_UPPER") || !strcmp(auto_pad, "SAME_LOWER")) {
			int64_t r = in % s;

			total_pad = r == 0 ? ek - s : ek - r;
			if (total_pad < 0)
				total_pad = 0;
		} else if (!strcmp(auto_pad, "VALID")) {
			total_pad = 0;
		} else {
			if (n_pads && (pads[i] < 0 || pads[i + nsp] < 0 || pads[i] > HO_DIM_MAX ||
				       pads[i + nsp] > HO_DIM_MAX))
				return fail(c, "padding must be in 0..2^40");
			total_pad = n_pads ? pads[i] + pads[i + nsp] : 0;
		}
		int64_t eff = ek == HO_DIM_BAD ? -1 : in + total_pad - ek;

		if (eff < 0)
			return fail(c,
				    "kernel (%" PRId64 ") larger than padded input (%" PRId64 ")",
				    ek, in + total_pad);
		o->dim[2 + i] = 1 + (ceil_mode ? (eff + s - 1) / s : eff / s);
	}
	return 0;
}

static int infer_conv(struct ho_infer *c)
{
	struct ho_tensor *x = in_t(c, 0), *w = in_t(c, 1);
	int64_t group = attr_i(c, "group", 1);
	int64_t kernel[HO_MAX_RANK];
	struct ho_shape o;
	size_t nk;
	const int64_t *ks = attr_ints(c, "kernel_shape", &nk);
	int nsp;

	if (!x || !w)
		return fail(c, "needs X and W");
	if (x->shape.rank < 0 || w->shape.rank < 0) {
		set_out(c, 0, x->dtype, NULL);
		return 0;
	}
	if (x->shape.rank < 3 || w->shape.rank != x->shape.rank)
		return fail(c, "input '%s' is rank %d but weight '%s' is rank %d", x->name,
			    x->shape.rank, w->name, w->shape.rank);
	nsp = x->shape.rank - 2;
	if (group < 1 || group > HO_DIM_MAX)
		return fail(c, "group must be in 1..2^40");
	if (x->shape.dim[1] >= 0 && w->shape.dim[1] >= 0 &&
	    x->shape.dim[1] != w->shape.dim[1] * group)
		return fail(
		    c, "weight '%s' expects %" PRId64 " input channels, input '%s' has %" PRId64,
		    w->name, w->shape.dim[1] * group, x->name, x->shape.dim[1]);
	if (w->shape.dim[0] >= 0 && w->shape.dim[0] % group)
		return fail(c, "%" PRId64 " output channels do not divide into %" PRId64 " groups",
			    w->shape.dim[0], group);
	if (in_t(c, 2) && in_t(c, 2)->shape.rank == 1 && in_t(c, 2)->shape.dim[0] >= 0 &&
	    w->shape.dim[0] >= 0 && in_t(c, 2)->shape.dim[0] != w->shape.dim[0])
		return fail(c, "bias has %" PRId64 " elements for %" PRId64 " output channels",
			    in_t(c, 2)->shape.dim[0], w->shape.dim[0]);
	for (int i = 0; i < nsp; i++)
		kernel[i] = nk ? ks[i] : w->shape.dim[2 + i];
	if (nk && nk != (size_t)nsp)
		return fail(c, "kernel_shape has %zu dims for %d spatial dims", nk, nsp);
	o.rank = x->shape.rank;
	o.dim[0] = x->shape.dim[0];
	o.dim[1] = w->shape.dim[0];
	int ret = conv_pool_dims(c, &x->shape, kernel, nsp, false, &o);

	if (ret)
		return ret;
	set_out(c, 0, x->dtype, &o);
	return 0;
}

static int infer_conv_transpose(struct ho_infer *c)
{
	struct ho_tensor *x = in_t(c, 0), *w = in_t(c, 1);
	int64_t group = attr_i(c, "group", 1);
	size_t n_strides, n_dil, n_pads, n_op, n_os, nk;
	const int64_t *strides = attr_ints(c, "strides", &n_strides);
	const int64_t *dil = attr_ints(c, "dilations", &n_dil);
	const int64_t *pads = attr_ints(c, "pads", &n_pads);
	const int64_t *opad = attr_ints(c, "output_padding", &n_op);
	const int64_t *oshape = attr_ints(c, "output_shape", &n_os);
	const int64_t *ks = attr_ints(c, "kernel_shape", &nk);
	const char *auto_pad = attr_s(c, "auto_pad", "NOTSET");
	struct ho_shape o;
	int nsp;

	if (!x || !w)
		return fail(c, "needs X and W");
	if (x->shape.rank < 3 || w->shape.rank != x->shape.rank)
		return fail(c, "input is rank %d but weight is rank %d", x->shape.rank,
			    w->shape.rank);
	nsp = x->shape.rank - 2;
	if (x->shape.dim[1] >= 0 && w->shape.dim[0] >= 0 && x->shape.dim[1] != w->shape.dim[0])
		return fail(c, "weight '%s' expects %" PRId64 " input channels, input has %" PRId64,
			    w->name, w->shape.dim[0], x->shape.dim[1]);
	if ((n_strides && n_strides != (size_t)nsp) || (n_pads && n_pads != (size_t)nsp * 2) ||
	    (n_dil && n_dil != (size_t)nsp) || (n_op && n_op != (size_t)nsp))
		return fail(c, "strides/pads/dilations do not match %d spatial dims", nsp);
	o.rank = x->shape.rank;
	o.dim[0] = x->shape.dim[0];
	if (group < 1 || group > HO_DIM_MAX)
		return fail(c, "group must be in 1..2^40");
	o.dim[1] = w->shape.dim[1] >= 0 ? dim_mul(w->shape.dim[1], group) : HO_DIM_UNKNOWN;
	for (int i = 0; i < nsp; i++) {
		int64_t in = x->shape.dim[2 + i], s = n_strides ? strides[i] : 1;
		int64_t d = n_dil ? dil[i] : 1, k = nk ? ks[i] : w->shape.dim[2 + i];

		if (n_os) {
			o.dim[2 + i] = oshape[n_os - nsp + i];
			continue;
		}
		if (in < 0 || k < 0) {
			o.dim[2 + i] = HO_DIM_UNKNOWN;
			continue;
		}
		if (!strcmp(auto_pad, "SAME_UPPER") || !strcmp(auto_pad, "SAME_LOWER")) {
			o.dim[2 + i] = dim_mul(in, s);
			continue;
		}
		int64_t pb = n_pads ? pads[i] : 0, pe = n_pads ? pads[i + nsp] : 0;
		int64_t op = n_op ? opad[i] : 0;

		if (s < 1 || d < 1 || k < 1 || s > HO_DIM_MAX || d > HO_DIM_MAX || k > HO_DIM_MAX ||
		    pb < 0 || pe < 0 || op < 0 || pb > HO_DIM_MAX || pe > HO_DIM_MAX ||
		    op > HO_DIM_MAX)
			return fail(c, "stride, dilation, kernel and padding must be in range");
		o.dim[2 + i] =
		    dim_add(dim_add(dim_mul(s, in - 1), op), dim_add(dim_mul(k - 1, d), 1));
		if (o.dim[2 + i] != HO_DIM_BAD)
			o.dim[2 + i] -= pb + pe;
		if (o.dim[2 + i] < 1)
			return fail(c, "output extent %" PRId64 " is not positive", o.dim[2 + i]);
	}
	set_out(c, 0, x->dtype, &o);
	return 0;
}

static int infer_pool(struct ho_infer *c)
{
	struct ho_tensor *x = in_t(c, 0);
	size_t nk;
	const int64_t *ks = attr_ints(c, "kernel_shape", &nk);
	struct ho_shape o;

	if (!x)
		return fail(c, "missing input");
	if (x->shape.rank < 0) {
		set_out(c, 0, x->dtype, NULL);
		return 0;
	}
	if (x->shape.rank < 3 || nk != (size_t)(x->shape.rank - 2))
		return fail(c, "kernel_shape has %zu dims for input rank %d", nk, x->shape.rank);
	o = x->shape;
	int ret =
	    conv_pool_dims(c, &x->shape, ks, x->shape.rank - 2, attr_i(c, "ceil_mode", 0), &o);

	if (ret)
		return ret;
	set_out(c, 0, x->dtype, &o);
	set_out(c, 1, HO_DT_INT64, &o); /* MaxPool indices */
	return 0;
}

static int infer_global_pool(struct ho_infer *c)
{
	struct ho_tensor *x = in_t(c, 0);
	struct ho_shape o;

	if (!x)
		return fail(c, "missing input");
	o = x->shape;
	if (o.rank >= 0 && o.rank < 3)
		return fail(c, "input must have spatial dims, has rank %d", o.rank);
	for (int i = 2; i < o.rank; i++)
		o.dim[i] = 1;
	set_out(c, 0, x->dtype, &o);
	return 0;
}

/* ---- matrix products ---- */

static int infer_matmul(struct ho_infer *c)
{
	struct ho_tensor *a = in_t(c, 0), *b = in_t(c, 1);
	struct ho_shape sa, sb, batch_a, batch_b, o;
	int ret;

	if (!a || !b)
		return fail(c, "needs two inputs");
	if (a->shape.rank < 0 || b->shape.rank < 0) {
		set_out(c, 0, a->dtype, NULL);
		return 0;
	}
	if (a->shape.rank == 0 || b->shape.rank == 0)
		return fail(c, "inputs must not be scalars");
	sa = a->shape;
	sb = b->shape;
	if (sa.rank == 1) { /* [K] -> [1,K] */
		sa.rank = 2;
		sa.dim[1] = sa.dim[0];
		sa.dim[0] = 1;
	}
	if (sb.rank == 1) { /* [K] -> [K,1] */
		sb.rank = 2;
		sb.dim[1] = 1;
	}
	int64_t ka = sa.dim[sa.rank - 1], kb = sb.dim[sb.rank - 2];

	if (ka >= 0 && kb >= 0 && ka != kb)
		return fail(c, "inner dimensions differ: '%s' has %" PRId64 ", '%s' has %" PRId64,
			    a->name, ka, b->name, kb);
	batch_a = sa;
	batch_a.rank -= 2;
	batch_b = sb;
	batch_b.rank -= 2;
	ret = broadcast(c, &batch_a, &batch_b, &o);
	if (ret)
		return ret;
	if (a->shape.rank != 1)
		o.dim[o.rank++] = sa.dim[sa.rank - 2];
	if (b->shape.rank != 1)
		o.dim[o.rank++] = sb.dim[sb.rank - 1];
	if (o.rank > HO_MAX_RANK)
		return fail(c, "result rank too large");
	set_out(c, 0, a->dtype, &o);
	return 0;
}

static int infer_gemm(struct ho_infer *c)
{
	struct ho_tensor *a = in_t(c, 0), *b = in_t(c, 1), *bias = in_t(c, 2);
	bool ta = attr_i(c, "transA", 0), tb = attr_i(c, "transB", 0);
	struct ho_shape o;

	if (!a || !b)
		return fail(c, "needs A and B");
	if (a->shape.rank != 2 || b->shape.rank != 2)
		return fail(c, "A and B must be matrices (ranks %d and %d)", a->shape.rank,
			    b->shape.rank);
	int64_t m = a->shape.dim[ta ? 1 : 0], ka = a->shape.dim[ta ? 0 : 1];
	int64_t kb = b->shape.dim[tb ? 1 : 0], n = b->shape.dim[tb ? 0 : 1];

	if (ka >= 0 && kb >= 0 && ka != kb)
		return fail(c, "inner dimensions differ: %" PRId64 " vs %" PRId64, ka, kb);
	o.rank = 2;
	o.dim[0] = m;
	o.dim[1] = n;
	if (bias) {
		struct ho_shape tmp;
		int ret = broadcast(c, &o, &bias->shape, &tmp);

		if (ret)
			return ret;
	}
	set_out(c, 0, a->dtype, &o);
	return 0;
}

/* ---- normalisation and reductions ---- */

static int infer_batchnorm(struct ho_infer *c)
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

static int infer_layernorm(struct ho_infer *c)
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

static int infer_softmax(struct ho_infer *c)
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

static int infer_reduce(struct ho_infer *c)
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
	return 0;
}

static int infer_argminmax(struct ho_infer *c)
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

/* ---- shape manipulation (these fold, since shape sub-graphs run through them) ---- */

static int infer_shape_op(struct ho_infer *c)
{
	struct ho_tensor *x = in_t(c, 0);
	struct ho_shape o = {.rank = 1};
	int64_t start, end;

	if (!x)
		return fail(c, "missing input");
	if (x->shape.rank < 0) {
		o.dim[0] = HO_DIM_UNKNOWN;
		set_out(c, 0, HO_DT_INT64, &o);
		return 0;
	}
	start = attr_i(c, "start", 0);
	end = attr_i(c, "end", x->shape.rank);
	if (start < 0)
		start += x->shape.rank;
	if (end < 0)
		end += x->shape.rank;
	start = start < 0 ? 0 : start > x->shape.rank ? x->shape.rank : start;
	end = end < 0 ? 0 : end > x->shape.rank ? x->shape.rank : end;
	o.dim[0] = end > start ? end - start : 0;
	set_out(c, 0, HO_DT_INT64, &o);
	struct ho_value *v = new_value(c, HO_DT_INT64, (size_t)o.dim[0]);

	if (!v)
		return 0;
	for (int64_t i = start; i < end; i++) {
		if (x->shape.dim[i] < 0)
			return 0;
		v->i[i - start] = x->shape.dim[i];
	}
	set_value(c, 0, v);
	return 0;
}

static int infer_size(struct ho_infer *c)
{
	struct ho_shape o = {.rank = 0};
	int64_t n;

	if (!in_t(c, 0))
		return fail(c, "missing input");
	set_out(c, 0, HO_DT_INT64, &o);
	n = ho_shape_numel(&in_t(c, 0)->shape);
	if (n >= 0) {
		struct ho_value *v = new_value(c, HO_DT_INT64, 1);

		if (v) {
			v->i[0] = n;
			set_value(c, 0, v);
		}
	}
	return 0;
}

static int infer_constant(struct ho_infer *c)
{
	struct ho_tensor *t = out_t(c, 0);

	if (!t)
		return fail(c, "has no output");
	/* dtype and shape were filled from the attribute at import. */
	if (t->dtype == HO_DT_UNDEFINED)
		return fail(c, "has no value");
	return 0;
}

static int values_to_dims(const struct ho_value *v, int64_t *dims, int max)
{
	if ((int)v->count > max)
		return -1;
	for (size_t k = 0; k < v->count; k++)
		dims[k] = vgeti(v, k);
	return (int)v->count;
}

static int infer_constant_of_shape(struct ho_infer *c)
{
	const struct ho_value *sv = in_v(c, 0);
	const struct ho_attr *at = ho_node_attr(c->nd, "value");
	int dtype = at && at->type == HO_ATTR_TENSOR ? at->t[0].dtype : HO_DT_FLOAT;
	struct ho_shape o;

	if (!in_t(c, 0))
		return fail(c, "missing shape input");
	if (!sv) {
		o.rank = in_t(c, 0)->shape.rank == 1 ? (int)in_t(c, 0)->shape.dim[0] : -1;
		if (o.rank > HO_MAX_RANK)
			return fail(c, "rank too large");
		for (int i = 0; i < o.rank; i++)
			o.dim[i] = HO_DIM_UNKNOWN;
		set_out(c, 0, dtype, &o);
		return 0;
	}
	o.rank = values_to_dims(sv, o.dim, HO_MAX_RANK);
	if (o.rank < 0)
		return fail(c, "rank %zu too large", sv->count);
	for (int i = 0; i < o.rank; i++)
		if (o.dim[i] < 0)
			return fail(c, "negative dimension %" PRId64, o.dim[i]);
	set_out(c, 0, dtype, &o);
	int64_t n = ho_shape_numel(&o);

	if (n >= 0 && n <= HO_FOLD_MAX_ELEMS) {
		struct ho_value *v = new_value(c, dtype, (size_t)n);
		struct ho_value *fill = NULL;

		if (!v)
			return 0;
		if (at && at->type == HO_ATTR_TENSOR)
			fill = ho_value_from_data(c->a, at->t[0].dtype, at->t[0].data, at->t[0].len,
						  1);
		for (int64_t k = 0; k < n; k++)
			vset(v, (size_t)k, fill ? vget(fill, 0) : 0, fill ? vgeti(fill, 0) : 0,
			     fill && fill->i);
		set_value(c, 0, v);
	}
	return 0;
}

static int infer_reshape(struct ho_infer *c)
{
	struct ho_tensor *x = in_t(c, 0);
	const struct ho_value *sv = in_v(c, 1);
	bool allowzero = attr_i(c, "allowzero", 0);
	struct ho_shape o;
	int infer_at = -1;
	int64_t prod = 1;

	if (!x || !in_t(c, 1))
		return fail(c, "needs data and shape");
	if (!sv) {
		struct ho_tensor *s = in_t(c, 1);

		o.rank = s->shape.rank == 1 ? (int)s->shape.dim[0] : -1;
		if (o.rank > HO_MAX_RANK)
			return fail(c, "rank too large");
		for (int i = 0; i < o.rank; i++)
			o.dim[i] = HO_DIM_UNKNOWN;
		set_out(c, 0, x->dtype, &o);
		return 0;
	}
	o.rank = values_to_dims(sv, o.dim, HO_MAX_RANK);
	if (o.rank < 0)
		return fail(c, "target rank %zu too large", sv->count);
	for (int i = 0; i < o.rank; i++) {
		if (o.dim[i] == 0 && !allowzero) {
			if (x->shape.rank >= 0 && i >= x->shape.rank)
				return fail(c, "dim %d copies a dimension the input does not have",
					    i);
			o.dim[i] = x->shape.rank >= 0 ? x->shape.dim[i] : HO_DIM_UNKNOWN;
		} else if (o.dim[i] == -1) {
			if (infer_at >= 0)
				return fail(c, "more than one -1 in the target shape");
			infer_at = i;
			continue;
		} else if (o.dim[i] < -1) {
			return fail(c, "invalid target dimension %" PRId64, o.dim[i]);
		}
		if (o.dim[i] < 0)
			prod = -1;
		else if (prod >= 0)
			prod = dim_mul(prod, o.dim[i]);
	}
	int64_t n = ho_shape_numel(&x->shape);

	if (infer_at >= 0) {
		if (n < 0 || prod <= 0)
			o.dim[infer_at] = HO_DIM_UNKNOWN;
		else if (n % prod)
			return fail(c,
				    "cannot reshape %" PRId64
				    " elements with -1 and a product of %" PRId64,
				    n, prod);
		else
			o.dim[infer_at] = n / prod;
	} else if (n >= 0 && prod >= 0 && n != prod) {
		return fail(c, "cannot reshape %" PRId64 " elements into %" PRId64, n, prod);
	}
	set_out(c, 0, x->dtype, &o);
	if (in_v(c, 0)) {
		struct ho_value *v = (struct ho_value *)in_v(c, 0);

		set_value(c, 0, v); /* same elements, new shape */
	}
	return 0;
}

static int infer_flatten(struct ho_infer *c)
{
	struct ho_tensor *x = in_t(c, 0);
	struct ho_shape o = {.rank = 2};
	int64_t axis = attr_i(c, "axis", 1);

	if (!x)
		return fail(c, "missing input");
	if (x->shape.rank < 0) {
		set_out(c, 0, x->dtype, NULL);
		return 0;
	}
	if (axis < 0)
		axis += x->shape.rank;
	if (axis < 0 || axis > x->shape.rank)
		return fail(c, "axis out of range");
	o.dim[0] = o.dim[1] = 1;
	for (int i = 0; i < x->shape.rank; i++) {
		int64_t *d = &o.dim[i < axis ? 0 : 1];

		if (x->shape.dim[i] < 0 || *d < 0)
			*d = HO_DIM_UNKNOWN;
		else
			*d = dim_mul(*d, x->shape.dim[i]);
	}
	set_out(c, 0, x->dtype, &o);
	if (in_v(c, 0))
		set_value(c, 0, (struct ho_value *)in_v(c, 0));
	return 0;
}

static int infer_transpose(struct ho_infer *c)
{
	struct ho_tensor *x = in_t(c, 0);
	size_t np;
	const int64_t *perm = attr_ints(c, "perm", &np);
	bool seen[HO_MAX_RANK] = {0};
	struct ho_shape o;

	if (!x)
		return fail(c, "missing input");
	if (x->shape.rank < 0) {
		set_out(c, 0, x->dtype, NULL);
		return 0;
	}
	o.rank = x->shape.rank;
	if (np && np != (size_t)o.rank)
		return fail(c, "perm has %zu entries for rank %d", np, o.rank);
	for (int i = 0; i < o.rank; i++) {
		int64_t p = np ? perm[i] : o.rank - 1 - i;

		if (p < 0 || p >= o.rank || seen[p])
			return fail(c, "perm is not a permutation");
		seen[p] = true;
		o.dim[i] = x->shape.dim[p];
	}
	set_out(c, 0, x->dtype, &o);
	return 0;
}

/* Axes from the attribute (old opsets) or the second input (new ones). */
static int get_axes(struct ho_infer *c, int64_t *axes, size_t *n, bool *known_axes)
{
	size_t na;
	const int64_t *a = attr_ints(c, "axes", &na);

	*known_axes = true;
	if (c->nd->n_inputs >= 2 && in_t(c, 1)) {
		const struct ho_value *v = in_v(c, 1);

		if (!v) {
			*known_axes = false;
			*n = 0;
			return 0;
		}
		if (v->count > HO_MAX_RANK)
			return fail(c, "too many axes");
		for (size_t k = 0; k < v->count; k++)
			axes[k] = vgeti(v, k);
		*n = v->count;
		return 0;
	}
	if (na > HO_MAX_RANK)
		return fail(c, "too many axes");
	if (na)
		memcpy(axes, a, na * sizeof(*a));
	*n = na;
	return 0;
}

static int infer_squeeze(struct ho_infer *c)
{
	struct ho_tensor *x = in_t(c, 0);
	int64_t axes[HO_MAX_RANK];
	bool drop[HO_MAX_RANK] = {0}, ka;
	struct ho_shape o;
	size_t n;
	int ret;

	if (!x)
		return fail(c, "missing input");
	ret = get_axes(c, axes, &n, &ka);
	if (ret)
		return ret;
	if (x->shape.rank < 0 || !ka) {
		set_out(c, 0, x->dtype, NULL);
		return 0;
	}
	for (size_t k = 0; k < n; k++) {
		int ax;

		ret = norm_axis(c, axes[k], x->shape.rank, &ax);
		if (ret)
			return ret;
		if (x->shape.dim[ax] >= 0 && x->shape.dim[ax] != 1)
			return fail(c, "cannot squeeze axis %d of extent %" PRId64, ax,
				    x->shape.dim[ax]);
		drop[ax] = true;
	}
	o.rank = 0;
	for (int i = 0; i < x->shape.rank; i++) {
		if (!n && x->shape.dim[i] < 0) {
			set_out(c, 0, x->dtype, NULL); /* which dims are 1 is unknown */
			return 0;
		}
		if (n ? drop[i] : x->shape.dim[i] == 1)
			continue;
		o.dim[o.rank++] = x->shape.dim[i];
	}
	set_out(c, 0, x->dtype, &o);
	if (in_v(c, 0))
		set_value(c, 0, (struct ho_value *)in_v(c, 0));
	return 0;
}

static int infer_unsqueeze(struct ho_infer *c)
{
	struct ho_tensor *x = in_t(c, 0);
	int64_t axes[HO_MAX_RANK];
	bool ins[HO_MAX_RANK] = {0}, ka;
	struct ho_shape o;
	size_t n;
	int ret;

	if (!x)
		return fail(c, "missing input");
	ret = get_axes(c, axes, &n, &ka);
	if (ret)
		return ret;
	if (x->shape.rank < 0 || !ka) {
		set_out(c, 0, x->dtype, NULL);
		return 0;
	}
	o.rank = x->shape.rank + (int)n;
	if (o.rank > HO_MAX_RANK)
		return fail(c, "result rank %d too large", o.rank);
	for (size_t k = 0; k < n; k++) {
		int ax;

		ret = norm_axis(c, axes[k], o.rank, &ax);
		if (ret)
			return ret;
		if (ins[ax])
			return fail(c, "axis %d repeated", ax);
		ins[ax] = true;
	}
	for (int i = 0, j = 0; i < o.rank; i++)
		o.dim[i] = ins[i] ? 1 : x->shape.dim[j++];
	set_out(c, 0, x->dtype, &o);
	if (in_v(c, 0))
		set_value(c, 0, (struct ho_value *)in_v(c, 0));
	return 0;
}

static int infer_concat(struct ho_infer *c)
{
	struct ho_tensor *first = NULL;
	struct ho_shape o;
	int axis = 0, ret;
	bool all_vals = true;
	size_t total = 0;

	for (uint32_t k = 0; k < c->nd->n_inputs; k++) {
		struct ho_tensor *t = in_t(c, k);

		if (!t)
			continue;
		if (!first) {
			first = t;
			o = t->shape;
			if (o.rank < 0)
				break;
			if (o.rank == 0)
				return fail(c, "cannot concatenate scalars");
			ret = norm_axis(c, attr_i(c, "axis", 0), o.rank, &axis);
			if (ret)
				return ret;
			continue;
		}
		if (t->shape.rank < 0) {
			o.rank = -1;
			break;
		}
		if (t->shape.rank != o.rank)
			return fail(c, "input '%s' has rank %d, '%s' has rank %d", t->name,
				    t->shape.rank, first->name, o.rank);
		for (int i = 0; i < o.rank; i++) {
			if (i == axis) {
				o.dim[i] = o.dim[i] < 0 || t->shape.dim[i] < 0
					       ? HO_DIM_UNKNOWN
					       : dim_add(o.dim[i], t->shape.dim[i]);
			} else if (o.dim[i] < 0) {
				o.dim[i] = t->shape.dim[i];
			} else if (t->shape.dim[i] >= 0 && t->shape.dim[i] != o.dim[i]) {
				return fail(c,
					    "input '%s' has extent %" PRId64
					    " on axis %d, expected %" PRId64,
					    t->name, t->shape.dim[i], i, o.dim[i]);
			}
		}
	}
	if (!first)
		return fail(c, "needs at least one input");
	set_out(c, 0, first->dtype, o.rank >= 0 ? &o : NULL);

	/* Fold 1-D concatenations (shape vectors). */
	if (o.rank != 1)
		return 0;
	for (uint32_t k = 0; k < c->nd->n_inputs; k++) {
		const struct ho_value *v = in_v(c, k);

		if (in_t(c, k) && !v)
			all_vals = false;
		else if (v)
			total += v->count;
	}
	if (!all_vals || (int64_t)total != o.dim[0])
		return 0;
	struct ho_value *v = new_value(c, first->dtype, total);
	size_t p = 0;

	if (!v)
		return 0;
	for (uint32_t k = 0; k < c->nd->n_inputs; k++) {
		const struct ho_value *src = in_v(c, k);

		for (size_t j = 0; src && j < src->count; j++, p++)
			vset(v, p, vget(src, j), vgeti(src, j), src->i != NULL);
	}
	set_value(c, 0, v);
	return 0;
}

static int infer_split(struct ho_infer *c)
{
	struct ho_tensor *x = in_t(c, 0);
	uint32_t nout = c->nd->n_outputs;
	int64_t sizes[64];
	size_t ns = 0;
	int axis, ret;

	if (!x)
		return fail(c, "missing input");
	if (x->shape.rank < 0) {
		for (uint32_t k = 0; k < nout; k++)
			set_out(c, k, x->dtype, NULL);
		return 0;
	}
	ret = norm_axis(c, attr_i(c, "axis", 0), x->shape.rank, &axis);
	if (ret)
		return ret;
	if (nout > 64)
		return fail(c, "too many outputs");
	if (c->nd->n_inputs >= 2 && in_t(c, 1)) {
		const struct ho_value *v = in_v(c, 1);

		if (!v) {
			for (uint32_t k = 0; k < nout; k++) {
				struct ho_shape o = x->shape;

				o.dim[axis] = HO_DIM_UNKNOWN;
				set_out(c, k, x->dtype, &o);
			}
			return 0;
		}
		ns = v->count;
		if (ns != nout)
			return fail(c, "split has %zu sizes for %u outputs", ns, nout);
		for (size_t k = 0; k < ns; k++)
			sizes[k] = vgeti(v, k);
	} else {
		size_t na;
		const int64_t *a = attr_ints(c, "split", &na);

		if (na) {
			if (na != nout)
				return fail(c, "split has %zu sizes for %u outputs", na, nout);
			memcpy(sizes, a, na * sizeof(*a));
			ns = na;
		}
	}
	int64_t d = x->shape.dim[axis];

	if (!ns) {
		int64_t parts = attr_i(c, "num_outputs", nout);

		if (parts < 1 || parts > 64)
			return fail(c, "cannot split into %" PRId64 " parts", parts);
		if (d >= 0) {
			int64_t chunk = (d + parts - 1) / parts;

			if (c->nd->opset < 18 && d % parts)
				return fail(
				    c, "extent %" PRId64 " does not split evenly into %" PRId64, d,
				    parts);
			for (uint32_t k = 0; k < nout; k++) {
				int64_t left = d - chunk * k;

				sizes[k] = left < chunk ? (left > 0 ? left : 0) : chunk;
			}
		} else {
			for (uint32_t k = 0; k < nout; k++)
				sizes[k] = HO_DIM_UNKNOWN;
		}
	} else if (d >= 0) {
		int64_t sum = 0;

		for (size_t k = 0; k < ns; k++) {
			if (sizes[k] < 0)
				return fail(c, "negative split size %" PRId64, sizes[k]);
			sum = dim_add(sum, sizes[k]);
		}
		if (sum != d)
			return fail(c, "split sizes add up to %" PRId64 ", extent is %" PRId64, sum,
				    d);
	}
	for (uint32_t k = 0; k < nout; k++) {
		struct ho_shape o = x->shape;

		o.dim[axis] = sizes[k];
		set_out(c, k, x->dtype, &o);
	}
	return 0;
}

static int64_t clamp64(int64_t v, int64_t lo, int64_t hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

static int infer_slice(struct ho_infer *c)
{
	struct ho_tensor *x = in_t(c, 0);
	int64_t starts[HO_MAX_RANK], ends[HO_MAX_RANK], axes[HO_MAX_RANK], steps[HO_MAX_RANK];
	int64_t first[HO_MAX_RANK] = {0}, step_of[HO_MAX_RANK];
	size_t n;
	struct ho_shape o;

	if (!x)
		return fail(c, "missing input");
	if (c->nd->opset < 10 || c->nd->n_inputs == 1) {
		size_t ns, ne, na;
		const int64_t *s = attr_ints(c, "starts", &ns), *e = attr_ints(c, "ends", &ne);
		const int64_t *a = attr_ints(c, "axes", &na);

		if (ns != ne || (na && na != ns) || ns > HO_MAX_RANK)
			return fail(c, "starts/ends/axes lengths differ");
		n = ns;
		for (size_t k = 0; k < n; k++) {
			starts[k] = s[k];
			ends[k] = e[k];
			axes[k] = na ? a[k] : (int64_t)k;
			steps[k] = 1;
		}
	} else {
		const struct ho_value *vs = in_v(c, 1), *ve = in_v(c, 2);
		const struct ho_value *va = in_t(c, 3) ? in_v(c, 3) : NULL;
		const struct ho_value *vst = in_t(c, 4) ? in_v(c, 4) : NULL;

		if (!vs || !ve || (in_t(c, 3) && !va) || (in_t(c, 4) && !vst) ||
		    x->shape.rank < 0) {
			o = x->shape;
			for (int i = 0; i < o.rank; i++)
				o.dim[i] = HO_DIM_UNKNOWN;
			set_out(c, 0, x->dtype, o.rank >= 0 ? &o : NULL);
			return 0;
		}
		n = vs->count;
		if (ve->count != n || (va && va->count != n) || (vst && vst->count != n) ||
		    n > HO_MAX_RANK)
			return fail(c, "starts/ends/axes/steps lengths differ");
		for (size_t k = 0; k < n; k++) {
			starts[k] = vgeti(vs, k);
			ends[k] = vgeti(ve, k);
			axes[k] = va ? vgeti(va, k) : (int64_t)k;
			steps[k] = vst ? vgeti(vst, k) : 1;
		}
	}
	if (x->shape.rank < 0) {
		set_out(c, 0, x->dtype, NULL);
		return 0;
	}
	o = x->shape;
	for (int i = 0; i < HO_MAX_RANK; i++)
		step_of[i] = 1;
	for (size_t k = 0; k < n; k++) {
		int ax, ret = norm_axis(c, axes[k], o.rank, &ax);
		int64_t d = x->shape.dim[ax], s = starts[k], e = ends[k], st = steps[k];

		if (ret)
			return ret;
		if (st == 0)
			return fail(c, "step is zero");
		if (d < 0) {
			o.dim[ax] = HO_DIM_UNKNOWN;
			continue;
		}
		/* Clamp first: starts/ends like INT64_MAX are common and legal. */
		s = clamp64(s, -HO_DIM_MAX - 1, HO_DIM_MAX + 1);
		e = clamp64(e, -HO_DIM_MAX - 2, HO_DIM_MAX + 1);
		if (st == INT64_MIN)
			st = -INT64_MAX;
		if (s < 0)
			s += d;
		if (e < 0)
			e += d;
		if (st > 0) {
			s = clamp64(s, 0, d);
			e = clamp64(e, 0, d);
			o.dim[ax] = e > s ? (e - s - 1) / st + 1 : 0;
		} else {
			s = clamp64(s, 0, d - 1);
			e = clamp64(e, -1, d - 1);
			o.dim[ax] = s > e ? (s - e - 1) / (-st) + 1 : 0;
		}
		first[ax] = s;
		step_of[ax] = st;
	}
	set_out(c, 0, x->dtype, &o);

	/* Fold 1-D slices of known vectors. */
	const struct ho_value *vx = in_v(c, 0);

	if (vx && o.rank == 1 && o.dim[0] >= 0) {
		struct ho_value *v = new_value(c, x->dtype, (size_t)o.dim[0]);

		if (!v)
			return 0;
		for (int64_t k = 0; k < o.dim[0]; k++) {
			int64_t at = first[0] + k * step_of[0];

			if (at < 0 || (size_t)at >= vx->count)
				return 0;
			size_t idx = (size_t)at;

			vset(v, (size_t)k, vget(vx, idx), vgeti(vx, idx), vx->i != NULL);
		}
		set_value(c, 0, v);
	}
	return 0;
}

static int infer_gather(struct ho_infer *c)
{
	struct ho_tensor *x = in_t(c, 0), *idx = in_t(c, 1);
	struct ho_shape o;
	int axis, ret;

	if (!x || !idx)
		return fail(c, "needs data and indices");
	if (x->shape.rank < 0 || idx->shape.rank < 0) {
		set_out(c, 0, x->dtype, NULL);
		return 0;
	}
	if (x->shape.rank == 0)
		return fail(c, "data must have rank >= 1");
	ret = norm_axis(c, attr_i(c, "axis", 0), x->shape.rank, &axis);
	if (ret)
		return ret;
	o.rank = x->shape.rank - 1 + idx->shape.rank;
	if (o.rank > HO_MAX_RANK)
		return fail(c, "result rank too large");
	int p = 0;

	for (int i = 0; i < axis; i++)
		o.dim[p++] = x->shape.dim[i];
	for (int i = 0; i < idx->shape.rank; i++)
		o.dim[p++] = idx->shape.dim[i];
	for (int i = axis + 1; i < x->shape.rank; i++)
		o.dim[p++] = x->shape.dim[i];
	set_out(c, 0, x->dtype, &o);

	/* Fold gathers from a known 1-D vector (Shape -> Gather). */
	const struct ho_value *vx = in_v(c, 0), *vi = in_v(c, 1);

	if (vx && vi && x->shape.rank == 1) {
		struct ho_value *v = new_value(c, x->dtype, vi->count);
		int64_t d = x->shape.dim[0];

		if (!v)
			return 0;
		for (size_t k = 0; k < vi->count; k++) {
			int64_t j = vgeti(vi, k);

			if (j < 0)
				j += d;
			if (j < 0 || j >= d)
				return fail(c, "index %" PRId64 " out of range for extent %" PRId64,
					    vgeti(vi, k), d);
			vset(v, k, vget(vx, (size_t)j), vgeti(vx, (size_t)j), vx->i != NULL);
		}
		set_value(c, 0, v);
	}
	return 0;
}

static int infer_same_as_input1(struct ho_infer *c)
{
	/* GatherElements: output has the indices' shape. */
	if (!in_t(c, 0) || !in_t(c, 1))
		return fail(c, "needs two inputs");
	set_out(c, 0, in_t(c, 0)->dtype, &in_t(c, 1)->shape);
	return 0;
}

static int infer_expand(struct ho_infer *c)
{
	struct ho_tensor *x = in_t(c, 0);
	const struct ho_value *sv = in_v(c, 1);
	struct ho_shape target, o;
	int ret;

	if (!x || !in_t(c, 1))
		return fail(c, "needs input and shape");
	if (!sv) {
		set_out(c, 0, x->dtype, NULL);
		return 0;
	}
	target.rank = values_to_dims(sv, target.dim, HO_MAX_RANK);
	if (target.rank < 0)
		return fail(c, "target rank too large");
	ret = broadcast(c, &x->shape, &target, &o);
	if (ret)
		return ret;
	set_out(c, 0, x->dtype, &o);
	return 0;
}

static int infer_tile(struct ho_infer *c)
{
	struct ho_tensor *x = in_t(c, 0);
	const struct ho_value *rv = in_v(c, 1);
	struct ho_shape o;

	if (!x || !in_t(c, 1))
		return fail(c, "needs input and repeats");
	o = x->shape;
	if (!rv) {
		for (int i = 0; i < o.rank; i++)
			o.dim[i] = HO_DIM_UNKNOWN;
	} else {
		if ((int)rv->count != o.rank)
			return fail(c, "repeats has %zu entries for rank %d", rv->count, o.rank);
		for (int i = 0; i < o.rank; i++) {
			int64_t r = vgeti(rv, (size_t)i);

			if (r < 0)
				return fail(c, "negative repeat %" PRId64, r);
			o.dim[i] = o.dim[i] < 0 ? HO_DIM_UNKNOWN : dim_mul(o.dim[i], r);
		}
	}
	set_out(c, 0, x->dtype, o.rank >= 0 ? &o : NULL);
	return 0;
}

static int infer_pad(struct ho_infer *c)
{
	struct ho_tensor *x = in_t(c, 0);
	int64_t pads[2 * HO_MAX_RANK];
	struct ho_shape o;
	size_t n;

	if (!x)
		return fail(c, "missing input");
	o = x->shape;
	if (c->nd->n_inputs >= 2 && in_t(c, 1)) {
		const struct ho_value *v = in_v(c, 1);

		if (!v || o.rank < 0 || c->nd->n_inputs >= 4) {
			for (int i = 0; i < o.rank; i++)
				o.dim[i] = HO_DIM_UNKNOWN;
			set_out(c, 0, x->dtype, o.rank >= 0 ? &o : NULL);
			return 0;
		}
		n = v->count;
		if (n > 2 * HO_MAX_RANK)
			return fail(c, "too many pads");
		for (size_t k = 0; k < n; k++)
			pads[k] = vgeti(v, k);
	} else {
		const int64_t *p = attr_ints(c, "pads", &n);

		if (n > 2 * HO_MAX_RANK)
			return fail(c, "too many pads");
		if (n)
			memcpy(pads, p, n * sizeof(*p));
	}
	if (o.rank < 0) {
		set_out(c, 0, x->dtype, NULL);
		return 0;
	}
	if (n != (size_t)o.rank * 2)
		return fail(c, "pads has %zu entries for rank %d", n, o.rank);
	for (int i = 0; i < o.rank; i++) {
		if (o.dim[i] < 0)
			continue;
		o.dim[i] = dim_add(o.dim[i], dim_add(pads[i], pads[i + o.rank]));
		if (o.dim[i] < 0)
			return fail(c, "padding makes axis %d negative", i);
	}
	set_out(c, 0, x->dtype, &o);
	return 0;
}

static int infer_resize(struct ho_infer *c)
{
	struct ho_tensor *x = in_t(c, 0);
	bool upsample = !strcmp(c->nd->op_type, "Upsample");
	const struct ho_value *scales = NULL, *sizes = NULL;
	struct ho_shape o;

	if (!x)
		return fail(c, "missing input");
	if (upsample || c->nd->opset < 11) {
		size_t nsc;
		const struct ho_attr *at = ho_node_attr(c->nd, "scales");

		if (at && at->type == HO_ATTR_FLOATS) {
			struct ho_value *v = new_value(c, HO_DT_FLOAT, at->n);

			if (!v)
				return fail(c, "out of memory");
			for (size_t k = 0; k < at->n; k++)
				v->f[k] = at->floats[k];
			scales = v;
		} else {
			scales = in_v(c, 1);
		}
		(void)nsc;
	} else {
		if (in_t(c, 3))
			sizes = in_v(c, 3);
		if (in_t(c, 2) && !sizes)
			scales = in_v(c, 2);
		/* An empty scales tensor means "use sizes". */
		if (scales && scales->count == 0)
			scales = NULL;
	}
	o = x->shape;
	if (o.rank < 0) {
		set_out(c, 0, x->dtype, NULL);
		return 0;
	}
	if (sizes) {
		if ((int)sizes->count != o.rank)
			return fail(c, "sizes has %zu entries for rank %d", sizes->count, o.rank);
		for (int i = 0; i < o.rank; i++)
			o.dim[i] = vgeti(sizes, (size_t)i);
	} else if (scales) {
		if ((int)scales->count != o.rank)
			return fail(c, "scales has %zu entries for rank %d", scales->count, o.rank);
		for (int i = 0; i < o.rank; i++) {
			if (o.dim[i] < 0)
				continue;
			/* onnx multiplies in float precision, then floors. */
			o.dim[i] = f2i(floorf((float)o.dim[i] * (float)vget(scales, (size_t)i)));
			if (o.dim[i] < 0)
				return fail(c, "scale %g gives a negative extent",
					    vget(scales, (size_t)i));
		}
	} else {
		for (int i = 0; i < o.rank; i++)
			o.dim[i] = HO_DIM_UNKNOWN;
	}
	set_out(c, 0, x->dtype, &o);
	return 0;
}

static int infer_range(struct ho_infer *c)
{
	const struct ho_value *s = in_v(c, 0), *l = in_v(c, 1), *d = in_v(c, 2);
	struct ho_shape o = {.rank = 1};

	if (!in_t(c, 0) || !in_t(c, 1) || !in_t(c, 2))
		return fail(c, "needs start, limit and delta");
	o.dim[0] = HO_DIM_UNKNOWN;
	if (s && l && d && s->count == 1 && l->count == 1 && d->count == 1) {
		double n = ceil((vget(l, 0) - vget(s, 0)) / vget(d, 0));

		if (vget(d, 0) == 0)
			return fail(c, "delta is zero");
		o.dim[0] = n > 0 ? f2i(n) : 0;
	}
	set_out(c, 0, in_t(c, 0)->dtype, &o);
	if (o.dim[0] >= 0 && o.dim[0] <= HO_FOLD_MAX_ELEMS) {
		struct ho_value *v = new_value(c, in_t(c, 0)->dtype, (size_t)o.dim[0]);

		if (v) {
			for (int64_t k = 0; k < o.dim[0]; k++)
				vset(v, (size_t)k, vget(s, 0) + (double)k * vget(d, 0),
				     wrap_add(vgeti(s, 0), wrap_mul(k, vgeti(d, 0))), s->i != NULL);
			set_value(c, 0, v);
		}
	}
	return 0;
}

static int infer_topk(struct ho_infer *c)
{
	struct ho_tensor *x = in_t(c, 0);
	struct ho_shape o;
	int axis, ret;
	int64_t k = attr_i(c, "k", -1);

	if (!x || x->shape.rank < 1)
		return fail(c, "needs an input of rank >= 1");
	ret = norm_axis(c, attr_i(c, "axis", -1), x->shape.rank, &axis);
	if (ret)
		return ret;
	if (in_t(c, 1)) {
		const struct ho_value *v = in_v(c, 1);

		k = v && v->count == 1 ? vgeti(v, 0) : HO_DIM_UNKNOWN;
	}
	if (k < HO_DIM_UNKNOWN)
		return fail(c, "negative k %" PRId64, k);
	o = x->shape;
	o.dim[axis] = k;
	set_out(c, 0, x->dtype, &o);
	set_out(c, 1, HO_DT_INT64, &o);
	return 0;
}

static int infer_nonzero(struct ho_infer *c)
{
	struct ho_shape o = {.rank = 2};

	if (!in_t(c, 0))
		return fail(c, "missing input");
	o.dim[0] = in_t(c, 0)->shape.rank >= 0 ? in_t(c, 0)->shape.rank : HO_DIM_UNKNOWN;
	o.dim[1] = HO_DIM_UNKNOWN; /* data dependent */
	set_out(c, 0, HO_DT_INT64, &o);
	return 0;
}

static int infer_depth_space(struct ho_infer *c)
{
	struct ho_tensor *x = in_t(c, 0);
	int64_t b = attr_i(c, "blocksize", 0);
	bool d2s = !strcmp(c->nd->op_type, "DepthToSpace");
	struct ho_shape o;

	if (!x || x->shape.rank != 4 || b < 1)
		return fail(c, "needs a rank-4 input and a positive blocksize");
	o = x->shape;
	if (d2s) {
		o.dim[1] = o.dim[1] < 0 ? -1 : o.dim[1] / (b * b);
		o.dim[2] = o.dim[2] < 0 ? -1 : o.dim[2] * b;
		o.dim[3] = o.dim[3] < 0 ? -1 : o.dim[3] * b;
	} else {
		o.dim[1] = o.dim[1] < 0 ? -1 : o.dim[1] * b * b;
		o.dim[2] = o.dim[2] < 0 ? -1 : o.dim[2] / b;
		o.dim[3] = o.dim[3] < 0 ? -1 : o.dim[3] / b;
	}
	set_out(c, 0, x->dtype, &o);
	return 0;
}

/* ---- control flow ---- */

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

static int infer_if(struct ho_infer *c)
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

static int infer_loop(struct ho_infer *c)
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

/* ---- dispatch ---- */

static const struct {
	const char *op;
	ho_infer_fn fn;
} ho_rules[] = {
    /* elementwise, one input */
    {"Relu", infer_unary},
    {"Sigmoid", infer_unary},
    {"Tanh", infer_unary},
    {"HardSigmoid", infer_unary},
    {"HardSwish", infer_unary},
    {"LeakyRelu", infer_unary},
    {"Elu", infer_unary},
    {"Selu", infer_unary},
    {"Celu", infer_unary},
    {"Gelu", infer_unary},
    {"Mish", infer_unary},
    {"Softplus", infer_unary},
    {"Softsign", infer_unary},
    {"ThresholdedRelu", infer_unary},
    {"Erf", infer_unary},
    {"Exp", infer_unary},
    {"Log", infer_unary},
    {"Sqrt", infer_unary},
    {"Neg", infer_unary},
    {"Abs", infer_unary},
    {"Reciprocal", infer_unary},
    {"Floor", infer_unary},
    {"Ceil", infer_unary},
    {"Round", infer_unary},
    {"Sign", infer_unary},
    {"Sin", infer_unary},
    {"Cos", infer_unary},
    {"Tan", infer_unary},
    {"Asin", infer_unary},
    {"Acos", infer_unary},
    {"Atan", infer_unary},
    {"Sinh", infer_unary},
    {"Cosh", infer_unary},
    {"Identity", infer_unary},
    {"Not", infer_unary},
    {"IsNaN", infer_unary},
    {"IsInf", infer_unary},
    {"Dropout", infer_unary},
    {"Clip", infer_clip},
    {"InstanceNormalization", infer_unary},
    {"LpNormalization", infer_unary},
    {"LRN", infer_unary},
    {"MeanVarianceNormalization", infer_unary},
    {"Softmax", infer_softmax},
    {"LogSoftmax", infer_softmax},
    {"Hardmax", infer_softmax},
    {"CumSum", infer_unary},
    {"Trilu", infer_unary},
    {"Shrink", infer_unary},
    {"ScatterND", infer_unary},
    {"ScatterElements", infer_unary},
    {"Scatter", infer_unary},
    {"Cast", infer_cast},
    {"CastLike", infer_cast},
    /* elementwise with broadcasting */
    {"Add", infer_binary},
    {"Sub", infer_binary},
    {"Mul", infer_binary},
    {"Div", infer_binary},
    {"Pow", infer_binary},
    {"Mod", infer_binary},
    {"Max", infer_binary},
    {"Min", infer_binary},
    {"Sum", infer_binary},
    {"Mean", infer_binary},
    {"PRelu", infer_binary},
    {"BitShift", infer_binary},
    {"Equal", infer_binary},
    {"Less", infer_binary},
    {"Greater", infer_binary},
    {"LessOrEqual", infer_binary},
    {"GreaterOrEqual", infer_binary},
    {"And", infer_binary},
    {"Or", infer_binary},
    {"Xor", infer_binary},
    {"Where", infer_where},
    /* dense math */
    {"Conv", infer_conv},
    {"ConvTranspose", infer_conv_transpose},
    {"MatMul", infer_matmul},
    {"Gemm", infer_gemm},
    /* pooling and normalisation */
    {"MaxPool", infer_pool},
    {"AveragePool", infer_pool},
    {"LpPool", infer_pool},
    {"GlobalAveragePool", infer_global_pool},
    {"GlobalMaxPool", infer_global_pool},
    {"GlobalLpPool", infer_global_pool},
    {"BatchNormalization", infer_batchnorm},
    {"LayerNormalization", infer_layernorm},
    /* reductions */
    {"ReduceMean", infer_reduce},
    {"ReduceSum", infer_reduce},
    {"ReduceMax", infer_reduce},
    {"ReduceMin", infer_reduce},
    {"ReduceProd", infer_reduce},
    {"ReduceL1", infer_reduce},
    {"ReduceL2", infer_reduce},
    {"ReduceLogSum", infer_reduce},
    {"ReduceLogSumExp", infer_reduce},
    {"ReduceSumSquare", infer_reduce},
    {"ArgMax", infer_argminmax},
    {"ArgMin", infer_argminmax},
    {"TopK", infer_topk},
    /* data movement and shapes */
    {"Shape", infer_shape_op},
    {"Size", infer_size},
    {"Constant", infer_constant},
    {"ConstantOfShape", infer_constant_of_shape},
    {"Reshape", infer_reshape},
    {"Flatten", infer_flatten},
    {"Transpose", infer_transpose},
    {"Squeeze", infer_squeeze},
    {"Unsqueeze", infer_unsqueeze},
    {"Concat", infer_concat},
    {"Split", infer_split},
    {"Slice", infer_slice},
    {"Gather", infer_gather},
    {"GatherElements", infer_same_as_input1},
    {"Expand", infer_expand},
    {"Tile", infer_tile},
    {"Pad", infer_pad},
    {"Resize", infer_resize},
    {"Upsample", infer_resize},
    {"Range", infer_range},
    {"NonZero", infer_nonzero},
    {"DepthToSpace", infer_depth_space},
    {"SpaceToDepth", infer_depth_space},
    /* control flow */
    {"If", infer_if},
    {"Loop", infer_loop},
};

bool ho_op_known(const char *op_type)
{
	for (size_t i = 0; i < sizeof(ho_rules) / sizeof(ho_rules[0]); i++)
		if (!strcmp(ho_rules[i].op, op_type))
			return true;
	return false;
}

static ho_infer_fn ho_rule(const struct ho_node *nd)
{
	if (*nd->domain)
		return NULL;
	for (size_t i = 0; i < sizeof(ho_rules) / sizeof(ho_rules[0]); i++)
		if (!strcmp(ho_rules[i].op, nd->op_type))
			return ho_rules[i].fn;
	return NULL;
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

static int ho_infer_graph(struct ho_graph *g, struct ho_error *err, int depth)
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
			if (t->flags & HO_T_CONSTANT)
				tensor_value(&c, t);
		}
		bool folded = nd->n_outputs > 0;

		for (uint32_t k = 0; k < nd->n_outputs; k++)
			if (out_t(&c, k) && !out_t(&c, k)->value)
				folded = false;
		if (folded)
			nd->flags |= HO_N_FOLDED;
	}
	for (uint32_t i = 0; i < g->n_tensors; i++)
		if (g->tensors[i].producer < 0)
			ho_finish_tensor(&g->tensors[i]);
	return ho_check_declared(g, err);
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
