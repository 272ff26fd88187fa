// SPDX-License-Identifier: MIT
/*
 * The float32 element-wise operators oneDNN 2.6 has no algorithm for, as
 * plain loops (the compiler vectorises the simple ones), one line each in
 * the table below with the attributes they take; and Clip whose bounds are
 * computed at run time, which a oneDNN primitive cannot take (its bounds
 * are fixed when it is made).
 */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <string.h>

#include "cpu.h"

typedef float (*ho_unary_fn)(float x, const float *p);

static float u_neg(float x, const float *p)
{
	(void)p;
	return -x;
}
static float u_reciprocal(float x, const float *p)
{
	(void)p;
	return 1.0f / x;
}
static float u_floor(float x, const float *p)
{
	(void)p;
	return floorf(x);
}
static float u_ceil(float x, const float *p)
{
	(void)p;
	return ceilf(x);
}
static float u_round(float x, const float *p)
{
	(void)p;
	return rintf(x); /* halves to even, as ONNX says (the default rounding mode) */
}
static float u_sign(float x, const float *p)
{
	(void)p;
	return x > 0 ? 1.0f : x < 0 ? -1.0f : x; /* 0 and NaN are themselves */
}
static float u_sin(float x, const float *p)
{
	(void)p;
	return sinf(x);
}
static float u_cos(float x, const float *p)
{
	(void)p;
	return cosf(x);
}
static float u_tan(float x, const float *p)
{
	(void)p;
	return tanf(x);
}
static float u_asin(float x, const float *p)
{
	(void)p;
	return asinf(x);
}
static float u_acos(float x, const float *p)
{
	(void)p;
	return acosf(x);
}
static float u_atan(float x, const float *p)
{
	(void)p;
	return atanf(x);
}
static float u_sinh(float x, const float *p)
{
	(void)p;
	return sinhf(x);
}
static float u_cosh(float x, const float *p)
{
	(void)p;
	return coshf(x);
}
static float u_asinh(float x, const float *p)
{
	(void)p;
	return asinhf(x);
}
static float u_acosh(float x, const float *p)
{
	(void)p;
	return acoshf(x);
}
static float u_atanh(float x, const float *p)
{
	(void)p;
	return atanhf(x);
}
static float u_softsign(float x, const float *p)
{
	(void)p;
	return x / (1.0f + fabsf(x));
}
static float u_mish(float x, const float *p)
{
	(void)p;
	return x * tanhf(log1pf(expf(x)));
}
/* p: alpha, gamma */
static float u_selu(float x, const float *p)
{
	return x > 0 ? p[1] * x : p[1] * (p[0] * expf(x) - p[0]);
}
/* p: alpha */
static float u_celu(float x, const float *p)
{
	return fmaxf(0.0f, x) + fminf(0.0f, p[0] * expm1f(x / p[0]));
}
static float u_thresholded_relu(float x, const float *p)
{
	return x > p[0] ? x : 0.0f;
}
/* p: lambd, bias */
static float u_shrink(float x, const float *p)
{
	return x < -p[0] ? x + p[1] : x > p[0] ? x - p[1] : 0.0f;
}
/* p: min, max */
static float u_clip(float x, const float *p)
{
	return fminf(fmaxf(x, p[0]), p[1]);
}

/* p: alpha, beta; sixteen lanes at a time, clamped by masks (cpu.h) that leave a NaN lane be */
HO_VECTOR_CLONES static void u_hard_sigmoid_many(const float *x, float *y, int64_t n,
						 const float *p)
{
	const ho_v16 zero = HO_V16(0.0f), one = HO_V16(1.0f);
	ho_v16 v;
	int64_t i = 0;

	for (; i + 16 <= n; i += 16) {
		ho_i16 under, over;

		memcpy(&v, x + i, sizeof(v));
		v = p[0] * v + p[1];
		under = HO_LESS(v, zero);
		over = HO_LESS(one, v);
		v = (ho_v16)((over & (ho_i16)one) | (~(under | over) & (ho_i16)v));
		memcpy(y + i, &v, sizeof(v));
	}
	for (; i < n; i++) {
		float e = p[0] * x[i] + p[1];

		y[i] = e < 0.0f ? 0.0f : e > 1.0f ? 1.0f : e;
	}
}

struct ho_unary_reg {
	const char *op;
	ho_unary_fn f;
	/* over vectors, in place of f */
	void (*many)(const float *x, float *y, int64_t n, const float *p);
	const char *attr[2]; /* the parameters, from these attributes */
	float def[2];	     /* or these defaults */
};

static const struct ho_unary_reg ho_unary_ops[] = {
    {"Neg", u_neg, NULL, {NULL}, {0}},
    {"Reciprocal", u_reciprocal, NULL, {NULL}, {0}},
    {"Floor", u_floor, NULL, {NULL}, {0}},
    {"Ceil", u_ceil, NULL, {NULL}, {0}},
    {"Round", u_round, NULL, {NULL}, {0}},
    {"Sign", u_sign, NULL, {NULL}, {0}},
    {"Sin", u_sin, NULL, {NULL}, {0}},
    {"Cos", u_cos, NULL, {NULL}, {0}},
    {"Tan", u_tan, NULL, {NULL}, {0}},
    {"Asin", u_asin, NULL, {NULL}, {0}},
    {"Acos", u_acos, NULL, {NULL}, {0}},
    {"Atan", u_atan, NULL, {NULL}, {0}},
    {"Sinh", u_sinh, NULL, {NULL}, {0}},
    {"Cosh", u_cosh, NULL, {NULL}, {0}},
    {"Asinh", u_asinh, NULL, {NULL}, {0}},
    {"Acosh", u_acosh, NULL, {NULL}, {0}},
    {"Atanh", u_atanh, NULL, {NULL}, {0}},
    {"Erf", NULL, ho_cpu_erf_many, {NULL}, {0}},
    {"Softsign", u_softsign, NULL, {NULL}, {0}},
    /* alone; after a kernel, a oneDNN post-op (kernels.c) */
    {"HardSigmoid", NULL, u_hard_sigmoid_many, {"alpha", "beta"}, {0.2f, 0.5f}},
    {"Mish", u_mish, NULL, {NULL}, {0}},
    {"Gelu", NULL, ho_cpu_gelu_many, {NULL}, {0}}, /* approximate="none" */
    {"Selu",
     u_selu,
     NULL,
     {"alpha", "gamma"},
     {1.67326319217681884765625f, 1.05070102214813232421875f}},
    {"Celu", u_celu, NULL, {"alpha", NULL}, {1.0f, 0}},
    {"ThresholdedRelu", u_thresholded_relu, NULL, {"alpha", NULL}, {1.0f, 0}},
    {"Shrink", u_shrink, NULL, {"lambd", "bias"}, {0.5f, 0.0f}},
};

static const struct ho_unary_reg *ho_unary_find(const char *op)
{
	for (size_t i = 0; i < sizeof(ho_unary_ops) / sizeof(ho_unary_ops[0]); i++)
		if (!strcmp(ho_unary_ops[i].op, op))
			return &ho_unary_ops[i];
	return NULL;
}

bool ho_cpu_is_unary(const char *op_type)
{
	return ho_unary_find(op_type) != NULL;
}

int ho_cpu_prep_unary(const struct ho_graph *g, const struct ho_node *n, void *const *buf,
		      struct ho_kernel *k, struct ho_error *err)
{
	const struct ho_tensor *x = ho_node_input(g, n, 0), *y = &g->tensors[n->outputs[0]];
	const struct ho_unary_reg *r = ho_unary_find(n->op_type);
	bool clip = !strcmp(n->op_type, "Clip");

	if (!x || x->dtype != HO_DT_FLOAT || y->dtype != HO_DT_FLOAT || (!r && !clip))
		return ho_cpu_unsupported(err, n, "runs float32 element-wise operators only");
	if (!(ho_shape_numel(&x->shape) == ho_shape_numel(&y->shape)))
		return ho_cpu_unsupported(err, n, "needs an output the size of its input");
	k->kind = HO_K_UNARY;
	k->n_elems = ho_shape_numel(&x->shape);
	k->src = buf[n->inputs[0]];
	k->dst = buf[n->outputs[0]];
	if (clip) {
		/* bounds from their tensors at each run; an absent one is unbounded */
		k->unary = u_clip;
		k->param[0] = -FLT_MAX;
		k->param[1] = FLT_MAX;
		for (uint32_t i = 1; i < 3; i++) {
			const struct ho_tensor *b = ho_node_input(g, n, i);

			if (b && (b->dtype != HO_DT_FLOAT || ho_shape_numel(&b->shape) != 1))
				return ho_cpu_unsupported(err, n, "needs float32 scalar bounds");
			k->param_src[i - 1] = b ? buf[n->inputs[i]] : NULL;
		}
		return 0;
	}
	const struct ho_attr *ap = ho_node_attr(n, "approximate");

	if (ap && ap->type == HO_ATTR_STRING && strcmp(ap->s, "none"))
		return ho_cpu_unsupported(err, n,
					  "runs Gelu exactly or as tanh's approximation only");
	k->unary = r->f;
	k->unary_many = r->many;
	for (int i = 0; i < 2; i++)
		k->param[i] = r->attr[i] ? ho_node_attr_f(n, r->attr[i], r->def[i]) : r->def[i];
	return 0;
}

/* Elements [lo, hi) of k. */
static void ho_unary_range(const struct ho_kernel *k, int64_t lo, int64_t hi)
{
	const float *x = k->src;
	float *y = k->dst;

	if (k->unary_many) {
		k->unary_many(x + lo, y + lo, hi - lo, k->param);
		return;
	}
	for (int64_t i = lo; i < hi; i++)
		y[i] = k->unary(x[i], k->param);
}

/*
 * Split over the device's threads (its worker's OpenMP team) in whole
 * vectors, as oneDNN splits its own kernels: on one thread ConvNeXt-T's
 * Gelus (as Erf) kept two threads no faster than one.  Below the grain a
 * fork costs more than it saves.
 */
void ho_cpu_run_unary(struct ho_kernel *k)
{
	const int64_t n = k->n_elems;
	int parts = ho_cpu_parts(n, 1 << 14);

	for (int i = 0; i < 2; i++)
		if (k->param_src[i])
			k->param[i] = *(const float *)k->param_src[i];
	if (parts == 1) {
		ho_unary_range(k, 0, n);
		return;
	}
#pragma omp parallel for num_threads(parts)
	for (int p = 0; p < parts; p++)
		ho_unary_range(k, (n * p / parts) & ~(int64_t)15,
			       p == parts - 1 ? n : (n * (p + 1) / parts) & ~(int64_t)15);
}

/* Hardmax: 1 at the first largest element along the axis, 0 elsewhere. */
int ho_cpu_prep_hardmax(const struct ho_graph *g, const struct ho_node *n, void *const *buf,
			struct ho_kernel *k, struct ho_error *err)
{
	const struct ho_tensor *x = ho_node_input(g, n, 0);
	struct ho_shape v;
	int axis;

	if (!x || x->dtype != HO_DT_FLOAT || x->shape.rank < 1)
		return ho_cpu_unsupported(err, n, "runs float32 Hardmax only");
	if ((axis = ho_cpu_softmax_view(n, &x->shape, &v)) < 0)
		return ho_cpu_unsupported(err, n, "has an axis outside the input");
	k->kind = HO_K_HARDMAX;
	k->outer = k->inner = 1;
	for (int a = 0; a < v.rank; a++)
		if (a < axis)
			k->outer *= v.dim[a];
		else if (a > axis)
			k->inner *= v.dim[a];
	k->n_idx = v.dim[axis];
	k->src = buf[n->inputs[0]];
	k->dst = buf[n->outputs[0]];
	return 0;
}

void ho_cpu_run_hardmax(const struct ho_kernel *k)
{
	const float *x = k->src;
	float *y = k->dst;

	for (int64_t o = 0; o < k->outer; o++)
		for (int64_t i = 0; i < k->inner; i++) {
			const float *xr = x + o * k->n_idx * k->inner + i;
			float *yr = y + o * k->n_idx * k->inner + i;
			int64_t best = 0;

			for (int64_t j = 1; j < k->n_idx; j++)
				if (xr[j * k->inner] > xr[best * k->inner])
					best = j;
			for (int64_t j = 0; j < k->n_idx; j++)
				yr[j * k->inner] = j == best ? 1.0f : 0.0f;
		}
}

/*
 * Dropout in inference with its mask asked for: every element kept.  Its
 * output stays a view of the input (the executor moves it where it must).
 */
static int ho_run_dropout_mask(const struct ho_kernel *k)
{
	memset(k->dst, 1, (size_t)k->n_elems);
	return 0;
}

int ho_cpu_prep_dropout(const struct ho_graph *g, const struct ho_node *n, void *const *buf,
			struct ho_kernel *k, struct ho_error *err)
{
	const struct ho_tensor *mask =
	    n->n_outputs > 1 && n->outputs[1] >= 0 ? &g->tensors[n->outputs[1]] : NULL;

	if (!mask || mask->dtype != HO_DT_BOOL)
		return ho_cpu_unsupported(err, n, "writes a bool mask only");
	const struct ho_tensor *x = ho_node_input(g, n, 0);

	if (!x || ho_shape_numel(&x->shape) != ho_shape_numel(&mask->shape))
		return ho_cpu_unsupported(err, n, "needs a mask of its input's size");
	k->kind = HO_K_LOOP;
	k->n_elems = ho_shape_numel(&mask->shape);
	k->dst = buf[n->outputs[1]];
	k->typed.run = ho_run_dropout_mask;
	return 0;
}
