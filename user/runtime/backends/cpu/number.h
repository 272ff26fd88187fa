// SPDX-License-Identifier: MIT
/*
 * A number of any ONNX numeric type, as typed.c's and axis.c's loops read and
 * write it: double for the floating types, int64 for the signed ones, uint64
 * for the unsigned ones and bool.  Inline: the loops call these per element.
 */
#ifndef HO_CPU_NUMBER_H
#define HO_CPU_NUMBER_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "cpu.h"

enum ho_domain { HO_DOM_NONE, HO_DOM_F, HO_DOM_S, HO_DOM_U };

struct ho_num {
	double f;
	int64_t s;
	uint64_t u;
};

static inline enum ho_domain ho_domain_of(int dtype)
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
static inline uint16_t ho_float_to_half(float f)
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

static inline struct ho_num ho_get(int dtype, const void *p, int64_t i)
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
static inline struct ho_num ho_convert(struct ho_num v, enum ho_domain from, enum ho_domain to)
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

static inline void ho_set(int dtype, void *p, int64_t i, struct ho_num v)
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

/* The arithmetic and logic the loops apply to two numbers of one domain. */
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

static inline struct ho_num ho_tw_apply(int op, enum ho_domain d, struct ho_num a, struct ho_num b)
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

#endif
