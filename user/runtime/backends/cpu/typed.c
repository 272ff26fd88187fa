// SPDX-License-Identifier: MIT
/*
 * Kernels over every numeric element type, as plain loops: the operators
 * oneDNN has no primitive for at all (comparisons, logic, Mod, BitShift,
 * Where, Cast, ArgMax/ArgMin, Trilu, GatherElements) and the arithmetic
 * ones on types its binary primitive does not take (int64 and the rest).
 *
 * Each element is read as a number of its type's domain (double for the
 * floating types, int64 for the signed ones, uint64 for the unsigned ones
 * and bool), computed on there, and written back in the output's type.
 * Integer division by zero gives 0 rather than a trap.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu.h"

enum ho_domain { HO_DOM_NONE, HO_DOM_F, HO_DOM_S, HO_DOM_U };

struct ho_num {
	double f;
	int64_t s;
	uint64_t u;
};

static enum ho_domain ho_domain_of(int dtype)
{
	switch (dtype) {
	case HO_DT_FLOAT:
	case HO_DT_DOUBLE:
	case HO_DT_FLOAT16:
	case HO_DT_BFLOAT16:
		return HO_DOM_F;
	case HO_DT_INT8:
	case HO_DT_INT16:
	case HO_DT_INT32:
	case HO_DT_INT64:
		return HO_DOM_S;
	case HO_DT_UINT8:
	case HO_DT_UINT16:
	case HO_DT_UINT32:
	case HO_DT_UINT64:
	case HO_DT_BOOL:
		return HO_DOM_U;
	default:
		return HO_DOM_NONE;
	}
}

/* Round to nearest even, as a float32 to float16 conversion does. */
static uint16_t ho_float_to_half(float f)
{
	uint32_t x;
	uint16_t sign;

	memcpy(&x, &f, 4);
	sign = (uint16_t)((x >> 16) & 0x8000);
	x &= 0x7fffffff;
	if (x > 0x7f800000)
		return sign | 0x7e00; /* NaN */
	if (x >= 0x477ff000)
		return sign | 0x7c00; /* overflows to infinity */
	if (x < 0x38800000) {	      /* a subnormal half (or zero) */
		float a;

		memcpy(&a, &x, 4);
		return sign | (uint16_t)lrintf(a * 16777216.0f);
	}
	uint32_t r = x + 0xfff + ((x >> 13) & 1) - 0x38000000;

	return sign | (uint16_t)(r >> 13);
}

static struct ho_num ho_get(int dtype, const void *p, int64_t i)
{
	struct ho_num v = {0};
	uint32_t w;
	float f;

	switch (dtype) {
	case HO_DT_FLOAT:
		v.f = ((const float *)p)[i];
		break;
	case HO_DT_DOUBLE:
		v.f = ((const double *)p)[i];
		break;
	case HO_DT_FLOAT16:
		v.f = ho_half_to_float(((const uint16_t *)p)[i]);
		break;
	case HO_DT_BFLOAT16:
		w = (uint32_t)((const uint16_t *)p)[i] << 16;
		memcpy(&f, &w, 4);
		v.f = f;
		break;
	case HO_DT_INT8:
		v.s = ((const int8_t *)p)[i];
		break;
	case HO_DT_INT16:
		v.s = ((const int16_t *)p)[i];
		break;
	case HO_DT_INT32:
		v.s = ((const int32_t *)p)[i];
		break;
	case HO_DT_INT64:
		v.s = ((const int64_t *)p)[i];
		break;
	case HO_DT_UINT8:
	case HO_DT_BOOL:
		v.u = ((const uint8_t *)p)[i];
		break;
	case HO_DT_UINT16:
		v.u = ((const uint16_t *)p)[i];
		break;
	case HO_DT_UINT32:
		v.u = ((const uint32_t *)p)[i];
		break;
	case HO_DT_UINT64:
		v.u = ((const uint64_t *)p)[i];
		break;
	}
	return v;
}

/* v of domain from as a number of domain to (C's conversions, NaN to 0, clamped). */
static struct ho_num ho_convert(struct ho_num v, enum ho_domain from, enum ho_domain to)
{
	struct ho_num r = {0};

	if (from == to)
		return v;
	if (to == HO_DOM_F)
		r.f = from == HO_DOM_S ? (double)v.s : (double)v.u;
	else if (to == HO_DOM_S)
		r.s = from == HO_DOM_U		      ? (int64_t)v.u
		      : isnan(v.f)		      ? 0
		      : v.f >= 9.2233720368547758e18  ? INT64_MAX
		      : v.f <= -9.2233720368547758e18 ? INT64_MIN
						      : (int64_t)v.f;
	else
		r.u = from == HO_DOM_S		     ? (uint64_t)v.s
		      : isnan(v.f) || v.f <= 0	     ? 0
		      : v.f >= 1.8446744073709552e19 ? UINT64_MAX
						     : (uint64_t)v.f;
	return r;
}

static void ho_set(int dtype, void *p, int64_t i, struct ho_num v)
{
	float f;
	uint32_t w;

	switch (dtype) {
	case HO_DT_FLOAT:
		((float *)p)[i] = (float)v.f;
		break;
	case HO_DT_DOUBLE:
		((double *)p)[i] = v.f;
		break;
	case HO_DT_FLOAT16:
		((uint16_t *)p)[i] = ho_float_to_half((float)v.f);
		break;
	case HO_DT_BFLOAT16:
		f = (float)v.f;
		memcpy(&w, &f, 4);
		((uint16_t *)p)[i] =
		    isnan(f) ? 0x7fc0 : (uint16_t)((w + 0x7fff + ((w >> 16) & 1)) >> 16);
		break;
	case HO_DT_INT8:
		((int8_t *)p)[i] = (int8_t)v.s;
		break;
	case HO_DT_INT16:
		((int16_t *)p)[i] = (int16_t)v.s;
		break;
	case HO_DT_INT32:
		((int32_t *)p)[i] = (int32_t)v.s;
		break;
	case HO_DT_INT64:
		((int64_t *)p)[i] = v.s;
		break;
	case HO_DT_BOOL:
		((uint8_t *)p)[i] = v.u != 0;
		break;
	case HO_DT_UINT8:
		((uint8_t *)p)[i] = (uint8_t)v.u;
		break;
	case HO_DT_UINT16:
		((uint16_t *)p)[i] = (uint16_t)v.u;
		break;
	case HO_DT_UINT32:
		((uint32_t *)p)[i] = (uint32_t)v.u;
		break;
	case HO_DT_UINT64:
		((uint64_t *)p)[i] = v.u;
		break;
	}
}

/* ---- element-wise over broadcast inputs ---- */

enum ho_tw_op {
	TW_ADD,
	TW_SUB,
	TW_MUL,
	TW_DIV,
	TW_MIN,
	TW_MAX,
	TW_MOD,
	TW_FMOD,
	TW_POW,
	TW_EQ,
	TW_LT,
	TW_LE,
	TW_GT,
	TW_GE,
	TW_AND,
	TW_OR,
	TW_XOR,
	TW_SHL,
	TW_SHR,
	TW_BAND, /* the Bitwise operators (opset 18): integers' bits */
	TW_BOR,
	TW_BXOR,
	TW_BNOT,
	TW_WHERE,
	TW_CAST,
	TW_MEAN,
	TW_PRELU,
	TW_NOT,
	TW_ISNAN,
	TW_ISINF,
	TW_CLIP, /* not in the table: Clip is typed only off float32 */
};

static const struct {
	const char *op;
	enum ho_tw_op tw;
} ho_typed_ops[] = {
    {"Add", TW_ADD},	       {"Sub", TW_SUB},		{"Mul", TW_MUL},
    {"Div", TW_DIV},	       {"Min", TW_MIN},		{"Max", TW_MAX},
    {"Mod", TW_MOD},	       {"Pow", TW_POW},		{"Equal", TW_EQ},
    {"Less", TW_LT},	       {"LessOrEqual", TW_LE},	{"Greater", TW_GT},
    {"GreaterOrEqual", TW_GE}, {"And", TW_AND},		{"Or", TW_OR},
    {"Xor", TW_XOR},	       {"BitShift", TW_SHL},	{"Where", TW_WHERE},
    {"Cast", TW_CAST},	       {"CastLike", TW_CAST},	{"Sum", TW_ADD},
    {"Mean", TW_MEAN},	       {"PRelu", TW_PRELU},	{"Not", TW_NOT},
    {"IsNaN", TW_ISNAN},       {"IsInf", TW_ISINF},	{"BitwiseAnd", TW_BAND},
    {"BitwiseOr", TW_BOR},     {"BitwiseXor", TW_BXOR}, {"BitwiseNot", TW_BNOT},
};

static int ho_typed_find(const char *op)
{
	for (size_t i = 0; i < sizeof(ho_typed_ops) / sizeof(ho_typed_ops[0]); i++)
		if (!strcmp(ho_typed_ops[i].op, op))
			return (int)ho_typed_ops[i].tw;
	return -1;
}

static struct ho_num ho_tw_apply(int op, enum ho_domain d, struct ho_num a, struct ho_num b)
{
	struct ho_num r = {0};
	bool c = false;

	switch (op) {
	case TW_ADD:
	case TW_MEAN: /* summed here, divided by the count after */
		r.f = a.f + b.f, r.s = (int64_t)((uint64_t)a.s + (uint64_t)b.s), r.u = a.u + b.u;
		return r;
	case TW_SUB:
		r.f = a.f - b.f, r.s = (int64_t)((uint64_t)a.s - (uint64_t)b.s), r.u = a.u - b.u;
		return r;
	case TW_MUL:
		r.f = a.f * b.f, r.s = (int64_t)((uint64_t)a.s * (uint64_t)b.s), r.u = a.u * b.u;
		return r;
	case TW_DIV:
		r.f = a.f / b.f;
		r.s = b.s == 0 ? 0 : (a.s == INT64_MIN && b.s == -1) ? a.s : a.s / b.s;
		r.u = b.u ? a.u / b.u : 0;
		return r;
	case TW_MIN:
		r.f = fmin(a.f, b.f), r.s = a.s < b.s ? a.s : b.s, r.u = a.u < b.u ? a.u : b.u;
		if (isnan(a.f) || isnan(b.f))
			r.f = NAN;
		return r;
	case TW_MAX:
		r.f = fmax(a.f, b.f), r.s = a.s > b.s ? a.s : b.s, r.u = a.u > b.u ? a.u : b.u;
		if (isnan(a.f) || isnan(b.f))
			r.f = NAN;
		return r;
	case TW_FMOD: /* the remainder with the dividend's sign */
		r.f = fmod(a.f, b.f);
		r.s = b.s == 0 || b.s == -1 ? 0 : a.s % b.s;
		r.u = b.u ? a.u % b.u : 0;
		return r;
	case TW_MOD: /* with the divisor's sign, as Python's % */
		r.f = b.f != 0 ? a.f - floor(a.f / b.f) * b.f : NAN;
		r.s = b.s == 0 || b.s == -1 ? 0 : a.s % b.s;
		if (r.s && ((r.s < 0) != (b.s < 0)))
			r.s += b.s;
		r.u = b.u ? a.u % b.u : 0;
		return r;
	case TW_POW:
		r.f = pow(a.f, b.f);
		r.s = 1;
		r.u = 1;
		if (d == HO_DOM_S && b.s < 0) /* an integer's negative power, truncated */
			r.s = a.s == 1 ? 1 : a.s == -1 ? (b.s & 1 ? -1 : 1) : 0;
		for (int64_t e = b.s; e > 0 && d == HO_DOM_S; e--)
			r.s = (int64_t)((uint64_t)r.s * (uint64_t)a.s);
		for (uint64_t e = b.u; e > 0 && d == HO_DOM_U; e--)
			r.u *= a.u;
		return r;
	case TW_PRELU:
		r.f = a.f < 0 ? a.f * b.f : a.f;
		r.s = a.s < 0 ? (int64_t)((uint64_t)a.s * (uint64_t)b.s) : a.s;
		r.u = a.u;
		return r;
	case TW_SHL:
		r.u = b.u >= 64 ? 0 : a.u << b.u;
		return r;
	case TW_SHR:
		r.u = b.u >= 64 ? 0 : a.u >> b.u;
		return r;
	case TW_BAND:
		r.s = a.s & b.s, r.u = a.u & b.u;
		return r;
	case TW_BOR:
		r.s = a.s | b.s, r.u = a.u | b.u;
		return r;
	case TW_BXOR:
		r.s = a.s ^ b.s, r.u = a.u ^ b.u;
		return r;
	case TW_BNOT:
		r.s = ~a.s, r.u = ~a.u;
		return r;
	case TW_EQ:
		c = d == HO_DOM_F ? a.f == b.f : d == HO_DOM_S ? a.s == b.s : a.u == b.u;
		break;
	case TW_LT:
		c = d == HO_DOM_F ? a.f < b.f : d == HO_DOM_S ? a.s < b.s : a.u < b.u;
		break;
	case TW_LE:
		c = d == HO_DOM_F ? a.f <= b.f : d == HO_DOM_S ? a.s <= b.s : a.u <= b.u;
		break;
	case TW_GT:
		c = d == HO_DOM_F ? a.f > b.f : d == HO_DOM_S ? a.s > b.s : a.u > b.u;
		break;
	case TW_GE:
		c = d == HO_DOM_F ? a.f >= b.f : d == HO_DOM_S ? a.s >= b.s : a.u >= b.u;
		break;
	case TW_AND:
		c = a.u && b.u;
		break;
	case TW_OR:
		c = a.u || b.u;
		break;
	case TW_XOR:
		c = !a.u != !b.u;
		break;
	}
	r.u = c;
	return r;
}

/* The strides of s (lifted to rank r) over an output of that rank: 0 along broadcast axes. */
static void ho_tw_strides(const struct ho_shape *s, const struct ho_shape *y, int64_t *st)
{
	int64_t acc = 1;

	for (int a = y->rank - 1; a >= 0; a--) {
		int sa = a - (y->rank - s->rank);
		int64_t d = sa >= 0 ? s->dim[sa] : 1;

		st[a] = d == 1 ? 0 : acc;
		acc *= d;
	}
}

/*
 * A float32 comparison whose first operand is read in order and whose second is
 * read in order or is one scalar: a loop of its own.  retinanet's class scores
 * against their threshold (8.2 M of them) took 412 ms an element at a time.
 */
static bool ho_run_compare_f32(const struct ho_typed *t, int64_t n)
{
	int r = t->out_shape.rank;
	bool in_order[2] = {true, true}, scalar = true;
	int64_t want = 1;

	if (t->n_in != 2 || t->in_dt[0] != HO_DT_FLOAT || t->in_dt[1] != HO_DT_FLOAT ||
	    t->out_dt != HO_DT_BOOL || t->op < TW_EQ || t->op > TW_GE)
		return false;
	for (int ax = r - 1; ax >= 0; ax--) {
		for (int j = 0; j < 2; j++)
			in_order[j] &= t->out_shape.dim[ax] == 1 || t->stride[j][ax] == want;
		scalar &= t->out_shape.dim[ax] == 1 || t->stride[1][ax] == 0;
		want *= t->out_shape.dim[ax];
	}
	if (!in_order[0] || !(in_order[1] || scalar))
		return false;
	const float *a = t->in[0], *b = t->in[1];
	uint8_t *y = t->out;
	int64_t step = scalar ? 0 : 1;

	for (int64_t i = 0; i < n; i++) {
		float x = a[i], z = b[i * step];

		y[i] = t->op == TW_EQ	? x == z
		       : t->op == TW_LT ? x < z
		       : t->op == TW_LE ? x <= z
		       : t->op == TW_GT ? x > z
					: x >= z;
	}
	return true;
}

/*
 * A Cast between float16 and float32, or from an integer to float32, a loop of its
 * own: through the converters an element costs 21 ns, and a half-precision model
 * computed in single (user/graph/widen.c) casts its input in (150 K elements, 3.2 ms of
 * mobilenet_v3_large's 8), a quantised one its int32 sums out (200 K, 4.4 ms).
 */
static bool ho_run_cast_fast(const struct ho_typed *t, int64_t n)
{
	float *f = t->out;

/* each element of x's type to float32 through conv (as ho_convert: through double) */
#define HO_TO_FLOAT(type, conv)                                                                    \
	do {                                                                                       \
		for (int64_t i = 0; i < n; i++)                                                    \
			f[i] = conv(((const type *)t->in[0])[i]);                                  \
		return true;                                                                       \
	} while (0)
#define HO_VIA_DOUBLE(v) (float)(double)(v)
	if (t->op != TW_CAST)
		return false;
	if (t->out_dt == HO_DT_FLOAT) {
		switch (t->in_dt[0]) {
		case HO_DT_INT32:
			HO_TO_FLOAT(int32_t, HO_VIA_DOUBLE);
		case HO_DT_INT64:
			HO_TO_FLOAT(int64_t, HO_VIA_DOUBLE);
		case HO_DT_UINT8:
			HO_TO_FLOAT(uint8_t, HO_VIA_DOUBLE);
		case HO_DT_INT8:
			HO_TO_FLOAT(int8_t, HO_VIA_DOUBLE);
		case HO_DT_FLOAT16:
			HO_TO_FLOAT(uint16_t, ho_half_to_float);
		default:
			return false;
		}
	}
#undef HO_VIA_DOUBLE
#undef HO_TO_FLOAT
	if (t->in_dt[0] == HO_DT_FLOAT && t->out_dt == HO_DT_FLOAT16) {
		const float *x = t->in[0];
		uint16_t *y = t->out;

		for (int64_t i = 0; i < n; i++)
			y[i] = ho_float_to_half(x[i]);
		return true;
	}
	return false;
}

static int ho_run_typed(const struct ho_kernel *k)
{
	const struct ho_typed *t = &k->typed;
	int64_t idx[HO_MAX_RANK] = {0}, off[HO_TYPED_MAX_IN] = {0},
		n = ho_shape_numel(&t->out_shape);
	int r = t->out_shape.rank;

	/* a Cast to the type it has (fasterrcnn's pooled features, 12.5 M floats: 29 ms an
	 * element at a time) is a copy */
	if (t->op == TW_CAST && t->in_dt[0] == t->out_dt && t->out_dt != HO_DT_BOOL) {
		memcpy(t->out, t->in[0], (size_t)n * (size_t)ho_dtype_size(t->out_dt));
		return 0;
	}
	if (ho_run_compare_f32(t, n) || ho_run_cast_fast(t, n))
		return 0;
	for (int64_t i = 0; i < n; i++) {
		struct ho_num a = ho_get(t->in_dt[0], t->in[0], off[0]), b = {0}, y;

		if (t->n_in > 1 && t->in[1])
			b = ho_get(t->in_dt[1], t->in[1], off[1]);
		if (t->op == TW_CAST && t->out_dt == HO_DT_BOOL) { /* nonzero (NaN too) is true */
			enum ho_domain d = ho_domain_of(t->in_dt[0]);

			y.u = d == HO_DOM_F ? a.f != 0 : d == HO_DOM_S ? a.s != 0 : a.u != 0;
		} else if (t->op == TW_CAST) {
			y = ho_convert(a, ho_domain_of(t->in_dt[0]), ho_domain_of(t->out_dt));
		} else if (t->op >= TW_NOT && t->op <= TW_ISINF) { /* one input, a bool out */
			y.u = t->op == TW_NOT	  ? !a.u
			      : t->op == TW_ISNAN ? isnan(a.f)
						  : isinf(a.f) && ((a.f > 0 && t->iparam[0]) ||
								   (a.f < 0 && t->iparam[1]));
		} else if (t->op == TW_CLIP) {
			y = a;
			if (t->in[1])
				y = ho_tw_apply(TW_MAX, t->dom, y, b);
			if (t->n_in > 2 && t->in[2])
				y = ho_tw_apply(TW_MIN, t->dom, y,
						ho_get(t->in_dt[2], t->in[2], off[2]));
		} else if (t->op == TW_WHERE) {
			struct ho_num c = ho_get(t->in_dt[2], t->in[2], off[2]);

			y = a.u ? b : c;
		} else {
			/* the operands in the domain computed in (Pow's exponent may differ);
			 * Sum, Mean, Max and Min fold over any number of them */
			y = ho_convert(a, ho_domain_of(t->in_dt[0]), t->dom);
			if (t->op == TW_BNOT) /* the one operator of one input here */
				y = ho_tw_apply(TW_BNOT, t->dom, y, y);
			for (int j = 1; j < t->n_in; j++) {
				b = j == 1 ? b : ho_get(t->in_dt[j], t->in[j], off[j]);
				b = ho_convert(b, ho_domain_of(t->in_dt[j]), t->dom);
				y = ho_tw_apply(t->op, t->dom, y, b);
			}
			if (t->op == TW_MEAN)
				y.f /= t->n_in;
			if ((int)ho_domain_of(t->out_dt) != t->dom)
				y = ho_convert(y, t->op >= TW_EQ ? HO_DOM_U : t->dom,
					       ho_domain_of(t->out_dt));
		}
		ho_set(t->out_dt, t->out, i, y);
		for (int ax = r - 1; ax >= 0; ax--) {
			for (int j = 0; j < t->n_in; j++)
				off[j] += t->stride[j][ax];
			if (++idx[ax] < t->out_shape.dim[ax])
				break;
			for (int j = 0; j < t->n_in; j++)
				off[j] -= t->stride[j][ax] * idx[ax];
			idx[ax] = 0;
		}
	}
	return 0;
}

bool ho_cpu_is_typed(const char *op_type)
{
	return ho_typed_find(op_type) >= 0 || !strcmp(op_type, "ArgMax") ||
	       !strcmp(op_type, "NonZero") || !strcmp(op_type, "Unique") ||
	       !strcmp(op_type, "ArgMin") || !strcmp(op_type, "Trilu") ||
	       !strcmp(op_type, "CumSum") || !strcmp(op_type, "GatherElements");
}

/* ---- ArgMax, ArgMin ---- */

static int ho_run_arg(const struct ho_kernel *k)
{
	const struct ho_typed *t = &k->typed;
	enum ho_domain d = ho_domain_of(t->in_dt[0]);
	bool max = t->op == 1, last = t->iparam[0];

	for (int64_t o = 0; o < t->outer; o++)
		for (int64_t i = 0; i < t->inner; i++) {
			int64_t base = o * t->axis_dim * t->inner + i, best = 0;
			struct ho_num bv = ho_get(t->in_dt[0], t->in[0], base);

			for (int64_t j = 1; j < t->axis_dim; j++) {
				struct ho_num v =
				    ho_get(t->in_dt[0], t->in[0], base + j * t->inner);
				int cmp = d == HO_DOM_F	  ? (v.f > bv.f) - (v.f < bv.f)
					  : d == HO_DOM_S ? (v.s > bv.s) - (v.s < bv.s)
							  : (v.u > bv.u) - (v.u < bv.u);

				if (!max)
					cmp = -cmp;
				if (cmp > 0 || (cmp == 0 && last)) {
					best = j;
					bv = v;
				}
			}
			((int64_t *)t->out)[o * t->inner + i] = best;
		}
	return 0;
}

/* ---- CumSum ---- */

/* An axis a run gives (a tensor computed before it): read at each run. */
#define HO_CUMSUM_AXIS_AT_RUN INT64_MIN

/* t's blocks around axis of its input: outer runs of axis_dim blocks of inner elements. */
static int ho_cumsum_axis(struct ho_typed *t, int64_t axis)
{
	const struct ho_shape *x = &t->in_shape[0];

	axis += axis < 0 ? x->rank : 0;
	if (axis < 0 || axis >= x->rank)
		return -EINVAL;
	t->outer = t->inner = 1;
	for (int a = 0; a < x->rank; a++)
		if (a < axis)
			t->outer *= x->dim[a];
		else if (a > axis)
			t->inner *= x->dim[a];
	t->axis_dim = x->dim[axis];
	return 0;
}

static int ho_run_cumsum(const struct ho_kernel *k)
{
	struct ho_typed at_run;
	const struct ho_typed *t = &k->typed;
	enum ho_domain d = ho_domain_of(t->out_dt);

	if (t->axis == HO_CUMSUM_AXIS_AT_RUN) {
		at_run = *t;
		if (ho_cumsum_axis(&at_run, ho_cpu_int(t->in[1], t->in_dt[1], 0)))
			return -EINVAL; /* an axis outside the input */
		t = &at_run;
	}
	bool exclusive = t->iparam[0], reverse = t->iparam[1];

	for (int64_t o = 0; o < t->outer; o++)
		for (int64_t i = 0; i < t->inner; i++) {
			struct ho_num acc = {0};

			for (int64_t j = 0; j < t->axis_dim; j++) {
				int64_t jj = reverse ? t->axis_dim - 1 - j : j,
					at = (o * t->axis_dim + jj) * t->inner + i;
				struct ho_num v = ho_get(t->in_dt[0], t->in[0], at);

				if (exclusive)
					ho_set(t->out_dt, t->out, at, acc);
				acc = ho_tw_apply(TW_ADD, d, acc, v);
				if (!exclusive)
					ho_set(t->out_dt, t->out, at, acc);
			}
		}
	return 0;
}

/* ---- TopK ---- */

struct ho_topk_item {
	struct ho_num v;
	int64_t i;
};

/* a before b in TopK's order: larger (or smaller) first, ties by the lower index */
static bool ho_topk_before(const struct ho_topk_item *a, const struct ho_topk_item *b,
			   enum ho_domain d, bool largest)
{
	int c = d == HO_DOM_F	? (a->v.f > b->v.f) - (a->v.f < b->v.f)
		: d == HO_DOM_S ? (a->v.s > b->v.s) - (a->v.s < b->v.s)
				: (a->v.u > b->v.u) - (a->v.u < b->v.u);

	return largest ? c > 0 || (c == 0 && a->i < b->i) : c < 0 || (c == 0 && a->i < b->i);
}

/* A stable merge sort of n items with tmp of n more (qsort takes no context). */
static void ho_topk_sort(struct ho_topk_item *it, struct ho_topk_item *tmp, int64_t n,
			 enum ho_domain d, bool largest)
{
	for (int64_t w = 1; w < n; w *= 2) {
		for (int64_t lo = 0; lo < n; lo += 2 * w) {
			int64_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
			int64_t i = lo, j = mid, o = lo;

			while (i < mid && j < hi)
				tmp[o++] =
				    ho_topk_before(&it[j], &it[i], d, largest) ? it[j++] : it[i++];
			while (i < mid)
				tmp[o++] = it[i++];
			while (j < hi)
				tmp[o++] = it[j++];
		}
		memcpy(it, tmp, (size_t)n * sizeof(*it));
	}
}

/* Heap of n kept items, the one TopK's order puts last at h[0]: item i sifted down. */
static void ho_topk_sift(struct ho_topk_item *h, int64_t n, int64_t i, enum ho_domain d,
			 bool largest)
{
	for (;;) {
		int64_t w = i, l = 2 * i + 1, r = l + 1;
		struct ho_topk_item x;

		if (l < n && ho_topk_before(&h[w], &h[l], d, largest))
			w = l;
		if (r < n && ho_topk_before(&h[w], &h[r], d, largest))
			w = r;
		if (w == i)
			return;
		x = h[i];
		h[i] = h[w];
		h[w] = x;
		i = w;
	}
}

/*
 * The first kk of a row in TopK's order into it[0..kk), sorted: a heap of the kk best
 * seen, each further item one comparison with the worst of them where it is not better.
 * False where a NaN makes the order partial (the caller sorts the whole row then).
 * retinanet's per-level TopKs (1000 of 8 M scores) took 363 ms of a frame sorting all.
 */
static bool ho_topk_heap(const struct ho_typed *t, int64_t o, int64_t i, int64_t kk,
			 struct ho_topk_item *it)
{
	enum ho_domain d = ho_domain_of(t->in_dt[0]);
	bool largest = t->iparam[1];

	for (int64_t j = 0; j < t->axis_dim; j++) {
		struct ho_topk_item x = {
		    ho_get(t->in_dt[0], t->in[0], (o * t->axis_dim + j) * t->inner + i), j};

		if (d == HO_DOM_F && isnan(x.v.f))
			return false;
		if (j < kk) {
			it[j] = x;
			if (j == kk - 1)
				for (int64_t p = kk / 2 - 1; p >= 0; p--)
					ho_topk_sift(it, kk, p, d, largest);
		} else if (ho_topk_before(&x, &it[0], d, largest)) {
			it[0] = x;
			ho_topk_sift(it, kk, 0, d, largest);
		}
	}
	return true;
}

static int ho_run_topk(const struct ho_kernel *k)
{
	const struct ho_typed *t = &k->typed;
	struct ho_topk_item *it = (struct ho_topk_item *)k->fold, *tmp = it + t->axis_dim;
	int64_t kk = t->iparam[0];

	for (int64_t o = 0; o < t->outer; o++)
		for (int64_t i = 0; i < t->inner; i++) {
			/* a few of many: the heap; else (or with a NaN) the whole row sorted */
			if (kk > 0 && kk * 8 < t->axis_dim && ho_topk_heap(t, o, i, kk, it)) {
				ho_topk_sort(it, tmp, kk, ho_domain_of(t->in_dt[0]), t->iparam[1]);
			} else {
				for (int64_t j = 0; j < t->axis_dim; j++) {
					it[j].v = ho_get(t->in_dt[0], t->in[0],
							 (o * t->axis_dim + j) * t->inner + i);
					it[j].i = j;
				}
				ho_topk_sort(it, tmp, t->axis_dim, ho_domain_of(t->in_dt[0]),
					     t->iparam[1]);
			}
			for (int64_t j = 0; j < kk; j++) {
				int64_t at = (o * kk + j) * t->inner + i;

				ho_set(t->out_dt, t->out, at, it[j].v);
				((int64_t *)t->out2)[at] = it[j].i;
			}
		}
	return 0;
}

/* ---- Trilu ---- */

static int ho_run_trilu(const struct ho_kernel *k)
{
	const struct ho_typed *t = &k->typed;
	int64_t rows = t->out_shape.dim[t->out_shape.rank - 2],
		cols = t->out_shape.dim[t->out_shape.rank - 1], n = ho_shape_numel(&t->out_shape),
		diag = t->in[1] ? (t->in_dt[1] == HO_DT_INT64 ? *(const int64_t *)t->in[1]
							      : *(const int32_t *)t->in[1])
				: 0;
	int es = ho_dtype_size(t->out_dt);

	for (int64_t i = 0; i < n; i++) {
		int64_t c = i % cols, rr = (i / cols) % rows;
		bool keep = t->iparam[0] ? c - rr >= diag : c - rr <= diag;

		if (keep)
			memcpy((char *)t->out + i * es, (const char *)t->in[0] + i * es,
			       (size_t)es);
		else
			memset((char *)t->out + i * es, 0, (size_t)es);
	}
	return 0;
}

/* ---- GatherElements ---- */

static int ho_run_gather_elements(const struct ho_kernel *k)
{
	const struct ho_typed *t = &k->typed;
	const struct ho_shape *ys = &t->out_shape;
	int64_t n = ho_shape_numel(ys), idx[HO_MAX_RANK] = {0}, xst[HO_MAX_RANK], acc = 1;
	int r = ys->rank, es = ho_dtype_size(t->out_dt);

	for (int a = r - 1; a >= 0; a--) {
		xst[a] = acc;
		acc *= t->in_shape[0].dim[a];
	}
	for (int64_t i = 0; i < n; i++) {
		int64_t j = ho_get(t->in_dt[1], t->in[1], i).s, src = 0;

		j += j < 0 ? t->axis_dim : 0;
		if (j < 0 || j >= t->axis_dim)
			return -EINVAL;
		for (int a = 0; a < r; a++)
			src += (a == t->axis ? j : idx[a]) * xst[a];
		memcpy((char *)t->out + i * es, (const char *)t->in[0] + src * es, (size_t)es);
		for (int a = r - 1; a >= 0; a--) {
			if (++idx[a] < ys->dim[a])
				break;
			idx[a] = 0;
		}
	}
	return 0;
}

/* ---- Reduce* over any axes, any numeric type ---- */

enum ho_red { RD_SUM, RD_MEAN, RD_MAX, RD_MIN, RD_PROD, RD_L1, RD_L2, RD_SUMSQ, RD_LOGSUM, RD_LSE };

static const struct {
	const char *op;
	enum ho_red rd;
	bool real; /* computed in double whatever the type (a root, a logarithm, a quotient) */
} ho_reduce_loops[] = {
    {"ReduceSum", RD_SUM, false},      {"ReduceMean", RD_MEAN, true},
    {"ReduceMax", RD_MAX, false},      {"ReduceMin", RD_MIN, false},
    {"ReduceProd", RD_PROD, false},    {"ReduceL1", RD_L1, false},
    {"ReduceL2", RD_L2, true},	       {"ReduceSumSquare", RD_SUMSQ, false},
    {"ReduceLogSum", RD_LOGSUM, true}, {"ReduceLogSumExp", RD_LSE, true},
};

/* The identity of each reduction: what an empty set reduces to. */
static struct ho_num ho_reduce_init(int rd)
{
	struct ho_num v = {0};

	if (rd == RD_PROD)
		v.f = 1, v.s = 1, v.u = 1;
	else if (rd == RD_MAX)
		v.f = -INFINITY, v.s = INT64_MIN, v.u = 0;
	else if (rd == RD_MIN)
		v.f = INFINITY, v.s = INT64_MAX, v.u = UINT64_MAX;
	return v;
}

static struct ho_num ho_abs(struct ho_num v, enum ho_domain d)
{
	if (d == HO_DOM_F)
		v.f = fabs(v.f);
	else if (d == HO_DOM_S && v.s < 0)
		v.s = (int64_t)(0 - (uint64_t)v.s);
	return v;
}

static int ho_run_reduce(const struct ho_kernel *k)
{
	const struct ho_typed *t = &k->typed;
	const struct ho_shape *xs = &t->in_shape[0], *ys = &t->out_shape;
	int64_t n = ho_shape_numel(xs), ny = ho_shape_numel(ys), c[HO_MAX_RANK], yst[HO_MAX_RANK],
		acc = 1;
	struct ho_num *a = (struct ho_num *)k->fold, *m = a + ny;
	enum ho_domain in = ho_domain_of(t->in_dt[0]), d = t->dom;
	int rd = t->op;

	for (int ax = ys->rank - 1; ax >= 0; ax--) {
		yst[ax] = ys->dim[ax] == 1 ? 0 : acc;
		acc *= ys->dim[ax];
	}
	for (int64_t j = 0; j < ny; j++) {
		a[j] = ho_reduce_init(rd);
		m[j] = ho_reduce_init(RD_MAX);
	}
	/* log-sum-exp takes the maxima first, so that no exp overflows */
	for (int pass = rd == RD_LSE ? 0 : 1; pass < 2; pass++) {
		memset(c, 0, sizeof(c));
		for (int64_t i = 0, j = 0; i < n; i++) {
			struct ho_num v = ho_convert(ho_get(t->in_dt[0], t->in[0], i), in, d);

			if (pass == 0)
				m[j] = ho_tw_apply(TW_MAX, d, m[j], v);
			else if (rd == RD_LSE)
				a[j].f += exp(v.f - m[j].f);
			else if (rd == RD_L1)
				a[j] = ho_tw_apply(TW_ADD, d, a[j], ho_abs(v, d));
			else if (rd == RD_L2 || rd == RD_SUMSQ)
				a[j] = ho_tw_apply(TW_ADD, d, a[j], ho_tw_apply(TW_MUL, d, v, v));
			else
				a[j] = ho_tw_apply(rd == RD_PROD  ? TW_MUL
						   : rd == RD_MAX ? TW_MAX
						   : rd == RD_MIN ? TW_MIN
								  : TW_ADD,
						   d, a[j], v);
			for (int ax = xs->rank - 1; ax >= 0; ax--) {
				j += yst[ax];
				if (++c[ax] < xs->dim[ax])
					break;
				j -= yst[ax] * c[ax];
				c[ax] = 0;
			}
		}
	}
	for (int64_t j = 0; j < ny; j++) {
		struct ho_num r = a[j];

		if (rd == RD_MEAN)
			r.f /= (double)(ny ? n / ny : 1);
		else if (rd == RD_L2)
			r.f = sqrt(r.f);
		else if (rd == RD_LOGSUM)
			r.f = log(r.f);
		else if (rd == RD_LSE)
			r.f = isinf(m[j].f) ? m[j].f : log(r.f) + m[j].f;
		ho_set(t->out_dt, t->out, j, ho_convert(r, d, ho_domain_of(t->out_dt)));
	}
	return 0;
}

int ho_cpu_prep_reduce_loop(const struct ho_graph *g, const struct ho_node *n, void *const *buf,
			    struct ho_kernel *k, const struct ho_shape *kept, struct ho_error *err)
{
	struct ho_typed *t = &k->typed;
	const struct ho_tensor *x = ho_node_input(g, n, 0), *y = &g->tensors[n->outputs[0]];
	size_t i;

	for (i = 0; i < sizeof(ho_reduce_loops) / sizeof(ho_reduce_loops[0]); i++)
		if (!strcmp(ho_reduce_loops[i].op, n->op_type))
			break;
	if (i == sizeof(ho_reduce_loops) / sizeof(ho_reduce_loops[0]) || !x ||
	    ho_domain_of(x->dtype) == HO_DOM_NONE || ho_domain_of(y->dtype) == HO_DOM_NONE ||
	    ho_shape_numel(kept) != ho_shape_numel(&y->shape))
		return ho_cpu_unsupported(err, n, "reduces numeric types only");
	k->kind = HO_K_LOOP;
	t->op = ho_reduce_loops[i].rd;
	t->dom = ho_reduce_loops[i].real ? HO_DOM_F : ho_domain_of(x->dtype);
	t->n_in = 1;
	t->in[0] = buf[n->inputs[0]];
	t->in_dt[0] = x->dtype;
	t->in_shape[0] = x->shape;
	t->out = buf[n->outputs[0]];
	t->out_dt = y->dtype;
	t->out_shape = *kept;
	if (!(k->fold = malloc(2 * (size_t)(ho_shape_numel(kept) + 1) * sizeof(struct ho_num))))
		return ho_err(err, -ENOMEM, "out of memory");
	t->run = ho_run_reduce;
	return 0;
}

/* ---- NonZero and Unique: outputs whose extent the data decides (planned from its value) ---- */

static bool ho_nonzero(int dt, const void *p, int64_t i)
{
	struct ho_num v = ho_get(dt, p, i);
	enum ho_domain d = ho_domain_of(dt);

	return d == HO_DOM_F ? v.f != 0 : d == HO_DOM_S ? v.s != 0 : v.u != 0;
}

static int ho_run_nonzero(const struct ho_kernel *k)
{
	const struct ho_typed *t = &k->typed;
	const struct ho_shape *xs = &t->in_shape[0];
	int64_t n = ho_shape_numel(xs), nnz = t->out_shape.dim[1], c[HO_MAX_RANK] = {0}, j = 0;

	for (int64_t i = 0; i < n; i++)
		j += ho_nonzero(t->in_dt[0], t->in[0], i);
	if (j != nnz)
		return -ERANGE;
	j = 0;
	for (int64_t i = 0; i < n; i++) {
		if (ho_nonzero(t->in_dt[0], t->in[0], i)) {
			for (int a = 0; a < xs->rank; a++)
				((int64_t *)t->out)[a * nnz + j] = c[a];
			j++;
		}
		for (int a = xs->rank - 1; a >= 0 && ++c[a] == xs->dim[a]; a--)
			c[a] = 0;
	}
	return 0;
}

/* slice s and slice u (along the axis: outer x slices x inner) compared, as numbers */
static int ho_slice_cmp(const struct ho_typed *t, int64_t s, int64_t u)
{
	enum ho_domain d = ho_domain_of(t->in_dt[0]);

	for (int64_t o = 0; o < t->outer; o++)
		for (int64_t e = 0; e < t->inner; e++) {
			struct ho_num a = ho_get(t->in_dt[0], t->in[0],
						 (o * t->axis_dim + s) * t->inner + e),
				      b = ho_get(t->in_dt[0], t->in[0],
						 (o * t->axis_dim + u) * t->inner + e);
			int c = d == HO_DOM_F	? (a.f > b.f) - (a.f < b.f)
				: d == HO_DOM_S ? (a.s > b.s) - (a.s < b.s)
						: (a.u > b.u) - (a.u < b.u);

			if (c)
				return c;
		}
	return 0;
}

/* Unique: the distinct slices (sorted, or as they first appear), where each first is, which
 * each slice is, how many of each. */
static int ho_run_unique(const struct ho_kernel *k)
{
	const struct ho_typed *t = &k->typed;
	int64_t S = t->axis_dim, U = 0, *first = (int64_t *)k->fold, *count = first + S,
		*idx = t->out2, *inv = k->typed.iparam[1] ? (int64_t *)k->dst : NULL;
	int64_t *cnt = (int64_t *)k->src, want = t->iparam[0];
	int es = ho_dtype_size(t->in_dt[0]);

	for (int64_t s = 0; s < S; s++) { /* distinct slices, in order of first appearance */
		int64_t u = 0;

		while (u < U && ho_slice_cmp(t, first[u], s))
			u++;
		if (u == U) {
			first[U] = s;
			count[U++] = 0;
		}
		count[u]++;
	}
	if (U != want)
		return -ERANGE;
	if (t->op) /* sorted: an insertion sort of the firsts, counts alongside */
		for (int64_t i = 1; i < U; i++)
			for (int64_t j = i; j > 0 && ho_slice_cmp(t, first[j - 1], first[j]) > 0;
			     j--) {
				int64_t f = first[j], c = count[j];

				first[j] = first[j - 1], count[j] = count[j - 1];
				first[j - 1] = f, count[j - 1] = c;
			}
	for (int64_t u = 0; u < U; u++) {
		for (int64_t o = 0; o < t->outer; o++)
			memcpy((char *)t->out + (o * U + u) * t->inner * es,
			       (const char *)t->in[0] + (o * S + first[u]) * t->inner * es,
			       (size_t)(t->inner * es));
		if (idx)
			idx[u] = first[u];
		if (cnt)
			cnt[u] = count[u];
	}
	for (int64_t s = 0; inv && s < S; s++)
		for (int64_t u = 0; u < U; u++)
			if (!ho_slice_cmp(t, first[u], s)) {
				inv[s] = u;
				break;
			}
	return 0;
}

int ho_cpu_prep_typed(const struct ho_graph *g, const struct ho_node *n, void *const *buf,
		      struct ho_kernel *k, struct ho_error *err)
{
	struct ho_typed *t = &k->typed;
	const struct ho_tensor *y = &g->tensors[n->outputs[0]], *x = ho_node_input(g, n, 0);
	int op = ho_typed_find(n->op_type);

	if (!x || !ho_dtype_size(x->dtype) || !ho_dtype_size(y->dtype) ||
	    ho_domain_of(y->dtype) == HO_DOM_NONE || ho_domain_of(x->dtype) == HO_DOM_NONE)
		return ho_cpu_unsupported(err, n, "runs numeric fixed-size types only");
	if (n->n_inputs > HO_TYPED_MAX_IN)
		return ho_cpu_unsupported(err, n, "takes up to eight inputs");
	k->kind = HO_K_LOOP;
	t->out = buf[n->outputs[0]];
	t->out_dt = y->dtype;
	t->out_shape = y->shape;
	t->n_in = 0;
	for (uint32_t i = 0; i < n->n_inputs; i++) {
		const struct ho_tensor *in = ho_node_input(g, n, i);

		t->in[i] = in ? buf[n->inputs[i]] : NULL;
		t->in_dt[i] = in ? in->dtype : 0;
		if (in)
			t->in_shape[i] = in->shape;
		t->n_in = (int)i + 1;
		if (in && ho_domain_of(in->dtype) == HO_DOM_NONE)
			return ho_cpu_unsupported(err, n, "runs numeric fixed-size types only");
	}
	if (!strcmp(n->op_type, "ArgMax") || !strcmp(n->op_type, "ArgMin")) {
		int64_t axis = ho_node_attr_i(n, "axis", 0);

		axis += axis < 0 ? x->shape.rank : 0;
		if (axis < 0 || axis >= x->shape.rank || y->dtype != HO_DT_INT64)
			return ho_cpu_unsupported(err, n, "has an axis outside the input");
		t->op = !strcmp(n->op_type, "ArgMax");
		t->iparam[0] = ho_node_attr_i(n, "select_last_index", 0);
		t->outer = t->inner = 1;
		for (int a = 0; a < x->shape.rank; a++)
			if (a < axis)
				t->outer *= x->shape.dim[a];
			else if (a > axis)
				t->inner *= x->shape.dim[a];
		t->axis_dim = x->shape.dim[axis];
		t->run = ho_run_arg;
		return 0;
	}
	if (!strcmp(n->op_type, "TopK")) {
		int64_t axis = ho_node_attr_i(n, "axis", -1);

		axis += axis < 0 ? x->shape.rank : 0;
		if (axis < 0 || axis >= x->shape.rank || n->n_outputs < 2 || n->outputs[1] < 0 ||
		    g->tensors[n->outputs[1]].dtype != HO_DT_INT64 || x->dtype != y->dtype)
			return ho_cpu_unsupported(err, n, "needs an axis and both outputs");
		t->outer = t->inner = 1;
		for (int a = 0; a < x->shape.rank; a++)
			if (a < axis)
				t->outer *= x->shape.dim[a];
			else if (a > axis)
				t->inner *= x->shape.dim[a];
		t->axis_dim = x->shape.dim[axis];
		t->iparam[0] = y->shape.dim[axis]; /* k, as shape inference found it */
		t->iparam[1] = ho_node_attr_i(n, "largest", 1);
		if (t->iparam[0] > t->axis_dim)
			return ho_cpu_unsupported(err, n, "has k beyond the axis");
		t->out2 = buf[n->outputs[1]];
		if (!(k->fold =
			  malloc(2 * (size_t)(t->axis_dim + 1) * sizeof(struct ho_topk_item))))
			return ho_err(err, -ENOMEM, "out of memory");
		t->n_in = 1;
		t->run = ho_run_topk;
		return 0;
	}
	if (!strcmp(n->op_type, "CumSum")) {
		const struct ho_tensor *at = ho_node_input(g, n, 1);
		int64_t axis;

		if (!at || ho_shape_numel(&at->shape) != 1 || x->dtype != y->dtype ||
		    (at->dtype != HO_DT_INT64 && at->dtype != HO_DT_INT32))
			return ho_cpu_unsupported(err, n, "needs one integer axis");
		if (ho_cpu_int_input(g, n, 1, buf, &axis, 1) != 1) {
			t->axis = HO_CUMSUM_AXIS_AT_RUN; /* computed before it: read as it runs */
		} else if ((t->axis = axis), ho_cumsum_axis(t, axis)) {
			return ho_cpu_unsupported(err, n, "has an axis outside the input");
		}
		t->iparam[0] = ho_node_attr_i(n, "exclusive", 0);
		t->iparam[1] = ho_node_attr_i(n, "reverse", 0);
		t->run = ho_run_cumsum;
		return 0;
	}
	if (!strcmp(n->op_type, "Trilu")) {
		const struct ho_tensor *kt = ho_node_input(g, n, 1);

		if (x->shape.rank < 2 || x->dtype != y->dtype ||
		    (kt && (ho_shape_numel(&kt->shape) != 1 ||
			    (kt->dtype != HO_DT_INT64 && kt->dtype != HO_DT_INT32))))
			return ho_cpu_unsupported(err, n, "needs a matrix and an integer k");
		t->iparam[0] = ho_node_attr_i(n, "upper", 1);
		t->run = ho_run_trilu;
		return 0;
	}
	if (!strcmp(n->op_type, "GatherElements")) {
		const struct ho_tensor *ix = ho_node_input(g, n, 1);
		int64_t axis = ho_node_attr_i(n, "axis", 0);

		axis += axis < 0 ? x->shape.rank : 0;
		if (!ix || (ix->dtype != HO_DT_INT64 && ix->dtype != HO_DT_INT32) ||
		    ix->shape.rank != x->shape.rank || axis < 0 || axis >= x->shape.rank ||
		    x->dtype != y->dtype)
			return ho_cpu_unsupported(err, n, "needs int32/int64 indices of its rank");
		t->axis = axis;
		t->axis_dim = x->shape.dim[axis];
		t->run = ho_run_gather_elements;
		return 0;
	}
	if (!strcmp(n->op_type, "NonZero")) {
		if (y->dtype != HO_DT_INT64 || y->shape.rank != 2)
			return ho_cpu_unsupported(err, n, "writes [rank, count] int64 only");
		t->n_in = 1;
		t->run = ho_run_nonzero;
		return 0;
	}
	if (!strcmp(n->op_type, "Unique")) {
		const struct ho_attr *aa = ho_node_attr(n, "axis");
		int64_t axis = aa ? aa->i : 0;

		axis += axis < 0 ? x->shape.rank : 0;
		if (x->dtype != y->dtype || (aa && (axis < 0 || axis >= x->shape.rank)))
			return ho_cpu_unsupported(err, n, "needs an axis inside its input");
		t->outer = t->inner = 1;
		t->axis_dim = ho_shape_numel(&x->shape);
		if (aa) {
			for (int a = 0; a < x->shape.rank; a++)
				if (a < axis)
					t->outer *= x->shape.dim[a];
				else if (a > axis)
					t->inner *= x->shape.dim[a];
			t->axis_dim = x->shape.dim[axis];
		}
		t->n_in = 1;
		t->iparam[0] = aa ? y->shape.dim[axis] : y->shape.dim[0]; /* as planned */
		t->op = (int)ho_node_attr_i(n, "sorted", 1);
		t->out2 = n->n_outputs > 1 && n->outputs[1] >= 0 ? buf[n->outputs[1]] : NULL;
		k->dst = n->n_outputs > 2 && n->outputs[2] >= 0 ? buf[n->outputs[2]] : NULL;
		t->iparam[1] = k->dst != NULL;
		k->src = n->n_outputs > 3 && n->outputs[3] >= 0 ? buf[n->outputs[3]] : NULL;
		if (!(k->fold = malloc(2 * (size_t)(t->axis_dim + 1) * sizeof(int64_t))))
			return ho_err(err, -ENOMEM, "out of memory");
		t->run = ho_run_unique;
		return 0;
	}
	if (!strcmp(n->op_type, "Clip")) {
		/* Max with the lower bound, then Min with the upper; an absent one is skipped */
		if (x->dtype != y->dtype || n->n_inputs > 3)
			return ho_cpu_unsupported(err, n, "needs bounds of its type");
		for (int i = 1; i < t->n_in; i++)
			if (t->in[i] &&
			    (t->in_dt[i] != x->dtype || ho_shape_numel(&t->in_shape[i]) != 1))
				return ho_cpu_unsupported(err, n,
							  "needs scalar bounds of its type");
		t->op = TW_CLIP;
		t->dom = ho_domain_of(x->dtype);
		for (int i = 0; i < t->n_in; i++)
			if (t->in[i])
				ho_tw_strides(&t->in_shape[i], &y->shape, t->stride[i]);
		t->run = ho_run_typed;
		return 0;
	}
	if (op < 0)
		return ho_cpu_unsupported(err, n, "has no kernel for this operator yet");
	t->op = op;
	t->dom = ho_domain_of(x->dtype);
	/* an integer to a floating power: computed as doubles, then truncated */
	if (op == TW_POW && n->n_inputs == 2 && ho_domain_of(t->in_dt[1]) == HO_DOM_F)
		t->dom = HO_DOM_F;
	if (op == TW_MOD && ho_node_attr_i(n, "fmod", 0))
		t->op = TW_FMOD;
	if (op == TW_SHL) {
		const struct ho_attr *dir = ho_node_attr(n, "direction");

		if (!dir || dir->type != HO_ATTR_STRING ||
		    (strcmp(dir->s, "LEFT") && strcmp(dir->s, "RIGHT")) || t->dom != HO_DOM_U)
			return ho_cpu_unsupported(err, n, "shifts unsigned integers LEFT or RIGHT");
		t->op = !strcmp(dir->s, "LEFT") ? TW_SHL : TW_SHR;
	}
	if (op >= TW_BAND && op <= TW_BNOT && t->dom == HO_DOM_F)
		return ho_cpu_unsupported(err, n, "takes integers only");
	if (op == TW_CAST) {
		t->n_in = 1; /* CastLike's second input gives only the type */
	} else if (op == TW_BNOT) {
		if (n->n_inputs != 1 || y->dtype != x->dtype)
			return ho_cpu_unsupported(err, n, "needs one input of its output's type");
	} else if (op >= TW_NOT) {
		if (n->n_inputs != 1 || y->dtype != HO_DT_BOOL ||
		    (op == TW_NOT && x->dtype != HO_DT_BOOL) ||
		    (op != TW_NOT && t->dom != HO_DOM_F))
			return ho_cpu_unsupported(err, n, "needs one input of the right type");
		t->iparam[0] = ho_node_attr_i(n, "detect_positive", 1);
		t->iparam[1] = ho_node_attr_i(n, "detect_negative", 1);
	} else if (op == TW_WHERE) {
		/* Where(cond, x, y): the condition first, then the two to choose from */
		if (n->n_inputs != 3 || t->in_dt[0] != HO_DT_BOOL || t->in_dt[1] != y->dtype ||
		    t->in_dt[2] != y->dtype)
			return ho_cpu_unsupported(err, n,
						  "needs a bool condition and two of its type");
	} else if (!strcmp(n->op_type, "Sum") || !strcmp(n->op_type, "Mean") ||
		   !strcmp(n->op_type, "Max") || !strcmp(n->op_type, "Min")) {
		for (int i = 1; i < t->n_in; i++)
			if (t->in_dt[i] != t->in_dt[0])
				return ho_cpu_unsupported(err, n, "needs inputs of one type");
		if (op == TW_MEAN && t->dom != HO_DOM_F)
			return ho_cpu_unsupported(err, n, "averages floating types only");
	} else if (n->n_inputs != 2 || !t->in[1] || (op != TW_POW && t->in_dt[1] != t->in_dt[0])) {
		return ho_cpu_unsupported(err, n, "needs two inputs of one type");
	}
	for (int i = 0; i < t->n_in; i++) {
		if (!t->in[i] || t->in_shape[i].rank > y->shape.rank)
			return ho_cpu_unsupported(err, n,
						  "needs inputs that broadcast to its output");
		ho_tw_strides(&t->in_shape[i], &y->shape, t->stride[i]);
	}
	t->run = ho_run_typed;
	return 0;
}

int ho_cpu_run_loop(const struct ho_kernel *k)
{
	return k->typed.run(k);
}
