// SPDX-License-Identifier: MIT
/* Shape rules: Convolution, transposed convolution and pooling: output extents from kernel,
 * strides, dilations and padding. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shape.h"

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

/* A convolution of input xi by weights wi with bias bi; the result of type dtype (-1: X's). */
static int conv_shape(struct ho_infer *c, uint32_t xi, uint32_t wi, uint32_t bi, int dtype)
{
	struct ho_tensor *x = in_t(c, xi), *w = in_t(c, wi);
	int64_t group = attr_i(c, "group", 1);
	int64_t kernel[HO_MAX_RANK];
	struct ho_shape o;
	size_t nk;
	const int64_t *ks = attr_ints(c, "kernel_shape", &nk);
	int nsp;

	if (!x || !w)
		return fail(c, "needs X and W");
	if (dtype < 0)
		dtype = x->dtype;
	if (x->shape.rank < 0 || w->shape.rank < 0) {
		set_out(c, 0, dtype, NULL);
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
	if (in_t(c, bi) && in_t(c, bi)->shape.rank == 1 && in_t(c, bi)->shape.dim[0] >= 0 &&
	    w->shape.dim[0] >= 0 && in_t(c, bi)->shape.dim[0] != w->shape.dim[0])
		return fail(c, "bias has %" PRId64 " elements for %" PRId64 " output channels",
			    in_t(c, bi)->shape.dim[0], w->shape.dim[0]);
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
	set_out(c, 0, dtype, &o);
	return 0;
}

int ho_infer_conv(struct ho_infer *c)
{
	return conv_shape(c, 0, 1, 2, -1);
}

/* ConvInteger: int32; QLinearConv (x, x_scale, x_zp, w, w_scale, w_zp, y_scale, y_zp, B). */
int ho_infer_conv_quant(struct ho_infer *c)
{
	if (!strcmp(c->nd->op_type, "ConvInteger"))
		return conv_shape(c, 0, 1, 99, HO_DT_INT32);
	if (!in_t(c, 7))
		return fail(c, "needs y_zero_point");
	return conv_shape(c, 0, 3, 8, in_t(c, 7)->dtype);
}

int ho_infer_conv_transpose(struct ho_infer *c)
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

int ho_infer_pool(struct ho_infer *c)
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

int ho_infer_global_pool(struct ho_infer *c)
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
