// SPDX-License-Identifier: MIT
/*
 * int8 kernels (conv.c's, matmul.c's): post-training static quantization on oneDNN's
 * int8 convolution and matmul (VNNI's vpdpbusd, AMX's tiles).  The input is quantized
 * on the way in by the range calibration found it to take: u8 where it never goes below
 * zero (a Relu's output), else s8 about zero; the weights once at prepare, s8 per output
 * channel.  The kernel scales its int32 sums back to float32 itself (output scales),
 * bias and post-ops after, so tensors between kernels stay float32 and any kernel can
 * be int8 or not on its own.  A kernel asked int8 before calibration computes float32
 * and records the range its input takes: those are the calibration runs.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cpu.h"

/* VNNI (AVX512 or AVX2) or AMX, as oneDNN finds it: elsewhere its int8 kernels are
 * no faster than float32's. */
bool ho_cpu_int8_native(dnnl_cpu_isa_t isa)
{
	return isa == dnnl_cpu_isa_avx512_core_vnni || isa == dnnl_cpu_isa_avx512_core_bf16 ||
	       isa == dnnl_cpu_isa_avx512_core_amx || isa == dnnl_cpu_isa_avx2_vnni;
}

int ho_cpu_int8_new(struct ho_kernel *k, const float *range)
{
	struct ho_cpu_int8 *q = calloc(1, sizeof(*q));

	if (!q)
		return -ENOMEM;
	if (range && isfinite(range[0]) && isfinite(range[1]) && range[0] <= range[1]) {
		q->calibrated = true;
		q->lo = range[0];
		q->hi = range[1];
	}
	k->int8 = q;
	return 0;
}

void ho_cpu_int8_free(struct ho_cpu_int8 *q)
{
	if (!q)
		return;
	if (q->src_attr)
		dnnl_primitive_attr_destroy(q->src_attr);
	if (q->attr)
		dnnl_primitive_attr_destroy(q->attr);
	free(q->bias);
	free(q->hist);
	free(q);
}

void ho_cpu_int8_observe_at(struct ho_kernel *k, const float *src, int64_t n)
{
	struct ho_cpu_int8 *q = k->int8;

	if (!q || q->calibrated || !src || n <= 0 ||
	    !(q->hist = calloc(HO_CPU_INT8_BINS, sizeof(*q->hist))))
		return;
	q->observing = true;
	q->src = src;
	q->n = n;
}

/* The bin of |x|: its float bits' exponent and first 4 mantissa bits (NaN's last). */
static uint32_t int8_bin(float x)
{
	uint32_t b;

	memcpy(&b, &x, sizeof(b));
	return (b & 0x7fffffffu) >> 19;
}

/* A bin's upper edge. */
static float int8_edge(uint32_t bin)
{
	uint32_t b = ((bin + 1) << 19) - 1;
	float x;

	memcpy(&x, &b, sizeof(x));
	return x;
}

/* At each run, before the kernel: the const kernel's state is its own allocation. */
void ho_cpu_int8_observe(const struct ho_cpu_int8 *q)
{
	struct ho_cpu_int8 *m = (struct ho_cpu_int8 *)q;
	float lo = q->seen ? q->lo : INFINITY, hi = q->seen ? q->hi : -INFINITY;
	uint64_t *h = q->hist;

#pragma omp parallel for reduction(min : lo) reduction(max : hi) reduction(+ : h[:HO_CPU_INT8_BINS])
	for (int64_t i = 0; i < q->n; i++) {
		float x = q->src[i];

		lo = fminf(lo, x);
		hi = fmaxf(hi, x);
		h[int8_bin(x)]++;
	}
	m->lo = lo;
	m->hi = hi;
	m->seen = true;
}

/* Of the values' magnitudes (histogram h, at most top), the clip c whose int8 values err
 * least in squares: rounding (step c / levels, its square / 12) below c, clipping above. */
static float int8_mse_clip(const uint64_t *h, float top, float levels)
{
	uint32_t used[HO_CPU_INT8_BINS], n = 0;
	float best = top;
	double least = INFINITY;

	for (uint32_t b = 0; b < HO_CPU_INT8_BINS; b++)
		if (h[b])
			used[n++] = b;
	for (uint32_t i = 0; i < n; i++) {
		double c = fmin(int8_edge(used[i]), top), step = c / levels, e = 0;

		for (uint32_t j = 0; j < n; j++) {
			double v = fmin(
			    0.5 * (int8_edge(used[j]) + (used[j] ? int8_edge(used[j] - 1) : 0)),
			    top);

			e += (double)h[used[j]] * (v <= c ? step * step / 12 : (v - c) * (v - c));
		}
		if (e < least) {
			least = e;
			best = (float)c;
		}
	}
	return best;
}

/* Of the same, the magnitude below which the fraction p of the values lie. */
static float int8_percentile(const uint64_t *h, float top, double p)
{
	uint64_t total = 0, below = 0;

	for (uint32_t b = 0; b < HO_CPU_INT8_BINS; b++)
		total += h[b];
	for (uint32_t b = 0; b < HO_CPU_INT8_BINS; b++) {
		below += h[b];
		if ((double)below >= p * (double)total)
			return fminf(int8_edge(b), top);
	}
	return top;
}

int ho_cpu_observed(const struct ho_kernel *k, const char *rule, float range[2])
{
	const struct ho_cpu_int8 *q = k->int8;
	char *end;
	float top, c;

	if (!q || !q->observing || !q->seen)
		return -ENOENT;
	top = fmaxf(-q->lo, q->hi);
	if (!strcmp(rule, "max")) {
		c = top;
	} else if (!strcmp(rule, "mse")) {
		c = int8_mse_clip(q->hist, top, q->lo >= 0 ? 255.f : 127.f);
	} else if (rule[0] == 'p') {
		double p = strtod(rule + 1, &end);

		if (end == rule + 1 || *end || !(p > 0 && p <= 100))
			return -EINVAL;
		c = int8_percentile(q->hist, top, p / 100);
	} else {
		return -EINVAL;
	}
	range[0] = fmaxf(q->lo, -c);
	range[1] = fminf(q->hi, c);
	return 0;
}

/* A copy of base (the device's, or one with post-ops) with output scales. */
static int int8_attr(const_dnnl_primitive_attr_t base, int64_t count, int mask, const float *scales,
		     dnnl_primitive_attr_t *out)
{
	if (dnnl_primitive_attr_clone(out, base) != dnnl_success)
		return -ENOMEM;
	if (dnnl_primitive_attr_set_output_scales(*out, count, mask, scales) != dnnl_success) {
		dnnl_primitive_attr_destroy(*out);
		*out = NULL;
		return -EINVAL;
	}
	return 0;
}

int ho_cpu_int8_scales(struct ho_backend *c, struct ho_cpu_int8 *q, const float *w, int64_t rows,
		       int64_t per, int64_t row_step, int64_t step,
		       const_dnnl_primitive_attr_t base, int out_mask, const float *bias,
		       dnnl_data_type_t *xdt, float *ws)
{
	/* u8 spends all 256 steps on [0, hi]; s8 is symmetric about zero (oneDNN's int8
	 * convolutions take no input zero point on every kernel) */
	bool u8 = q->lo >= 0;
	float top = u8 ? q->hi : fmaxf(-q->lo, q->hi),
	      xs = top > 0 ? top / (u8 ? 255.f : 127.f) : 1;
	float inv = 1 / xs, *os = malloc(sizeof(float) * (size_t)(rows ? rows : 1));
	int ret;

	if (!os || (bias && !(q->bias = malloc(sizeof(float) * (size_t)rows)))) {
		free(os);
		return -ENOMEM;
	}
	for (int64_t r = 0; r < rows; r++) {
		float m = 0;

		for (int64_t i = 0; i < per; i++)
			m = fmaxf(m, fabsf(w[r * row_step + i * step]));
		ws[r] = m > 0 ? m / 127.f : 1;
		os[r] = xs * ws[r];
		if (bias) /* oneDNN 2.x adds it to the int32 sums before scaling them */
			q->bias[r] = bias[r] / os[r];
	}
	*xdt = u8 ? dnnl_u8 : dnnl_s8;
	ret = int8_attr(base, rows, out_mask, os, &q->attr);
	if (!ret)
		ret = int8_attr(c->attr, 1, 0, &inv, &q->src_attr);
	free(os);
	return ret;
}

/* Whether oneDNN has the two reorders an int8 kernel pd needs: its input x (layout xm)
 * quantized into pd's, and its weights (float32 layout wm, rounded to s8 first) into
 * pd's.  Asked before the kernel takes any memory, so that without them it stays
 * float32 rather than failing. */
bool ho_cpu_int8_reorders(struct ho_backend *c, const struct ho_cpu_int8 *q,
			  const dnnl_memory_desc_t *xm, const dnnl_memory_desc_t *wm,
			  const_dnnl_primitive_desc_t pd)
{
	dnnl_memory_desc_t s8 = *wm;
	dnnl_primitive_desc_t r = NULL;
	bool ok;

	s8.data_type = dnnl_s8;
	ok = dnnl_reorder_primitive_desc_create(
		 &r, xm, c->eng, dnnl_primitive_desc_query_md(pd, dnnl_query_src_md, 0), c->eng,
		 q->src_attr) == dnnl_success;
	if (r)
		dnnl_primitive_desc_destroy(r);
	r = NULL;
	ok = ok && dnnl_reorder_primitive_desc_create(
		       &r, &s8, c->eng, dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0),
		       c->eng, NULL) == dnnl_success;
	if (r)
		dnnl_primitive_desc_destroy(r);
	return ok;
}

int ho_cpu_int8_weights(struct ho_backend *c, struct ho_kernel *k, const_dnnl_primitive_desc_t pd,
			const dnnl_memory_desc_t *user, const float *w, int64_t rows, int64_t per,
			int64_t row_step, int64_t step, const float *ws)
{
	dnnl_memory_desc_t s8 = *user;
	int8_t *q;

	/* s8 in the model's layout first, rounded to nearest even as oneDNN's reorders
	 * round; then into the kernel's (which with an s8 input adds the compensation for
	 * oneDNN's shift of it to u8: a reorder oneDNN 2.6 has from s8, not from f32
	 * with scales, for a matmul's weights) */
	s8.data_type = dnnl_s8;
	if (ho_cpu_mem(c, k, &s8, NULL, -1) ||
	    dnnl_memory_get_data_handle(k->owned[k->n_owned - 1], (void **)&q) != dnnl_success)
		return -ENOMEM;
	for (int64_t r = 0; r < rows; r++) {
		float inv = 1 / ws[r];

		for (int64_t i = 0; i < per; i++) {
			int64_t at = r * row_step + i * step;

			q[at] = (int8_t)fminf(fmaxf(nearbyintf(w[at] * inv), -128.f), 127.f);
		}
	}
	return ho_cpu_weights(c, k, pd, &s8, q, false);
}
