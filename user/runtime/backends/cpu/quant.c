// SPDX-License-Identifier: MIT
/*
 * Quantized operators as exact integer loops: QuantizeLinear,
 * DequantizeLinear and DynamicQuantizeLinear (per tensor or per axis),
 * MatMulInteger and QLinearMatMul, ConvInteger and QLinearConv (any group,
 * stride, dilation and padding, 1-D to 3-D).  Products accumulate in int32
 * exactly, as the operators define; requantising rounds half to even and
 * saturates, as ONNX's reference and ONNX Runtime do.
 *
 * A convolution or matmul with signed weights whose zero points are all 0
 * (symmetric weights, what quantization tools write), or constant unsigned
 * ones whose zero points are all 128 (taken less 128), and one zero point
 * for x runs its products on oneDNN's int8 primitives into int32, the same
 * sums exactly;
 * the requantisation stays this file's, because oneDNN adds the output zero
 * point before rounding and ONNX Runtime after (they differ at odd zero
 * points on ties).  oneDNN's int8 primitives take no unsigned weights and no
 * weight zero points, and are exact only with VNNI (below).  A convolution's
 * other constant weight zero points (asymmetric uint8 weights, as dynamic
 * quantisation writes them) are made good after it: sum (x - xz)(w - wz_m)
 * is oneDNN's sum (x - xz) w less wz_m times the window's sum of x - xz
 * over m's group, a sum per group and position, not per channel.
 *
 * Elsewhere, with constant weights whose every sum stays below 2^24 in
 * magnitude, the products run on oneDNN's float32 primitive over x and w
 * less their zero points: each product and partial sum is then an integer a
 * float32 holds exactly, in any order of summation.  Other nodes stay loops.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cpu.h"

enum { Q_QUANT, Q_DEQUANT, Q_DYNAMIC, Q_MATMUL, Q_CONV };

struct ho_quant {
	int kind;
	bool requant; /* the QLinear forms: a float32 scale to a quantized y */
	/* element types of x, w (or b), y and the zero points */
	int x_dt, w_dt, y_dt, xz_dt, wz_dt, yz_dt;
	const void *x, *w, *xz, *wz, *yz, *bias;
	const float *xs, *ws, *ys;
	void *y;
	float *y_scale_out;
	void *y_zp_out;
	int64_t n;			/* elements (quantize) */
	int64_t outer, axis_dim, inner; /* per-axis scales: outer x axis_dim x inner */
	int64_t n_xs, n_ws, n_xz, n_wz; /* entries of each scale and zero point */
	/* matmul: batch x (M x K) . (K x N); B's batch step 0 when it is a matrix */
	int64_t batch, m, k, nn, b_step;
	/* conv: N x C x D x H x W (missing spatial axes are 1), M output channels */
	int64_t cn, cc, cm, group, in_sp[3], out_sp[3], ker[3], stride[3], dil[3], pad[3];
	/* conv on oneDNN (the kernel's prim): its int32 sums (y itself for ConvInteger), x's
	 * zero point, the stream it runs on; in float32, x less its zero point and the sums */
	int32_t *acc, xz32;
	float *xf, *yf;
	const struct ho_backend *be; /* its stream and workspace */
	/* conv on oneDNN with weight zero points it cannot take: each channel's (less 128 for
	 * unsigned weights), a plane of x's group sums and their window sums, its own */
	int32_t *wzc, *plane, *wsum;
};

static bool q_int_type(int dt)
{
	return dt == HO_DT_INT8 || dt == HO_DT_UINT8 || dt == HO_DT_INT16 || dt == HO_DT_UINT16 ||
	       dt == HO_DT_INT32;
}

/* v rounded half to even, plus zp, saturated to type dt, stored at y[i]. */
static void q_put(int dt, void *y, int64_t i, double v)
{
	double lo = dt == HO_DT_INT8	? -128
		    : dt == HO_DT_INT16 ? -32768
					: 0,
	       hi = dt == HO_DT_INT8	 ? 127
		    : dt == HO_DT_INT16	 ? 32767
		    : dt == HO_DT_UINT16 ? 65535
					 : 255;

	v = nearbyint(v);
	v = v < lo ? lo : v > hi ? hi : v;
	switch (dt) {
	case HO_DT_INT8:
		((int8_t *)y)[i] = (int8_t)v;
		break;
	case HO_DT_INT16:
		((int16_t *)y)[i] = (int16_t)v;
		break;
	case HO_DT_UINT16:
		((uint16_t *)y)[i] = (uint16_t)v;
		break;
	default:
		((uint8_t *)y)[i] = (uint8_t)v;
		break;
	}
}

/* Entry j of a scale or zero point with n entries: the one, or the j-th of a per-axis list. */
#define Q_AT(n, j) ((n) > 1 ? (j) : 0)

static void q_run_quantize(const struct ho_quant *q)
{
	for (int64_t o = 0, i = 0; o < q->outer; o++)
		for (int64_t a = 0; a < q->axis_dim; a++) {
			double s = q->xs[Q_AT(q->n_xs, a)];
			int64_t zp = q->xz ? ho_cpu_int(q->xz, q->xz_dt, Q_AT(q->n_xz, a)) : 0;

			for (int64_t e = 0; e < q->inner; e++, i++) {
				if (q->kind == Q_QUANT) /* x / s (in float32) rounded, then zp */
					q_put(q->y_dt, q->y, i,
					      nearbyintf(((const float *)q->x)[i] / (float)s) +
						  (double)zp);
				else
					((float *)q->y)[i] =
					    (float)(ho_cpu_int(q->x, q->x_dt, i) - zp) * (float)s;
			}
		}
}

static void q_run_dynamic(const struct ho_quant *q)
{
	const float *x = q->x;
	float lo = 0, hi = 0, s;
	double zp;

	for (int64_t i = 0; i < q->n; i++) { /* NaN is passed over, as fminf and fmaxf do */
		lo = x[i] < lo ? x[i] : lo;
		hi = x[i] > hi ? x[i] : hi;
	}
	s = (hi - lo) / 255.0f;
	zp = s != 0 ? nearbyint(0 - lo / s) : 0;
	zp = zp < 0 ? 0 : zp > 255 ? 255 : zp;
	/* q_put's rounding and saturation, without its per-element switch (8 ns an element) */
	uint8_t *y = q->y;
	float zf = (float)zp;

	for (int64_t i = 0; i < q->n; i++) {
		float v = s != 0 ? x[i] / s : 0;

		/* half to even as nearbyintf rounds, inline: 1.5 * 2^23 added and taken away
		 * (exact below 2^22 in magnitude; past 1e6 it saturates anyway) */
		v = v > 1e6f ? 1e6f : v < -1e6f ? -1e6f : v;
		v = (v + 12582912.0f) - 12582912.0f + zf;
		y[i] = v >= 255.0f ? 255 : v > 0.0f ? (uint8_t)v : 0; /* NaN: 0 */
	}
	*q->y_scale_out = s;
	*(uint8_t *)q->y_zp_out = (uint8_t)zp;
}

/* The accumulator of output channel or column j as y: requantised, or as int32. */
static void q_store(const struct ho_quant *q, int64_t i, int64_t j, int64_t acc)
{
	if (!q->requant) {
		((int32_t *)q->y)[i] = (int32_t)acc;
		return;
	}
	/* in float32, as the reference and ONNX Runtime scale: a double can round differently */
	float s = q->xs[0] * q->ws[Q_AT(q->n_ws, j)] / q->ys[0];

	q_put(q->y_dt, q->y, i,
	      nearbyintf((float)acc * s) + (double)ho_cpu_int(q->yz, q->yz_dt, 0));
}

static void q_run_matmul(const struct ho_quant *q)
{
	for (int64_t bt = 0; bt < q->batch; bt++)
		for (int64_t r = 0; r < q->m; r++)
			for (int64_t c = 0; c < q->nn; c++) {
				int64_t acc = 0,
					az = q->xz ? ho_cpu_int(q->xz, q->xz_dt, Q_AT(q->n_xz, r))
						   : 0,
					bz = q->wz ? ho_cpu_int(q->wz, q->wz_dt, Q_AT(q->n_wz, c))
						   : 0;

				for (int64_t kk = 0; kk < q->k; kk++)
					acc += (ho_cpu_int(q->x, q->x_dt,
							   (bt * q->m + r) * q->k + kk) -
						az) *
					       (ho_cpu_int(q->w, q->w_dt,
							   bt * q->b_step + kk * q->nn + c) -
						bz);
				q_store(q, (bt * q->m + r) * q->nn + c, c, acc);
			}
}

/*
 * One output element's sum: the window at output (od, oh, ow) over channel
 * group g's inputs.  Padding reads as the zero point, so it adds nothing.
 */
static int64_t q_conv_at(const struct ho_quant *q, int64_t n, int64_t m, int64_t g,
			 const int64_t *o, int64_t xz, int64_t wz)
{
	int64_t cpg = q->cc / q->group, acc = 0, k[3], at[3];

	for (int64_t c = 0; c < cpg; c++)
		for (k[0] = 0; k[0] < q->ker[0]; k[0]++)
			for (k[1] = 0; k[1] < q->ker[1]; k[1]++)
				for (k[2] = 0; k[2] < q->ker[2]; k[2]++) {
					int64_t xv = xz, wi = (m * cpg + c) * q->ker[0] + k[0];
					bool inside = true;

					wi = (wi * q->ker[1] + k[1]) * q->ker[2] + k[2];
					for (int a = 0; a < 3; a++) {
						at[a] = o[a] * q->stride[a] - q->pad[a] +
							k[a] * q->dil[a];
						inside &= at[a] >= 0 && at[a] < q->in_sp[a];
					}
					if (inside)
						xv = ho_cpu_int(
						    q->x, q->x_dt,
						    (((n * q->cc + g * cpg + c) * q->in_sp[0] +
						      at[0]) *
							 q->in_sp[1] +
						     at[1]) *
							    q->in_sp[2] +
							at[2]);
					acc += (xv - xz) * (ho_cpu_int(q->w, q->w_dt, wi) - wz);
				}
	return acc;
}

static void q_run_conv(const struct ho_quant *q)
{
	int64_t mpg = q->cm / q->group, i = 0, o[3];
	int64_t xz = q->xz ? ho_cpu_int(q->xz, q->xz_dt, 0) : 0;

	for (int64_t n = 0; n < q->cn; n++)
		for (int64_t m = 0; m < q->cm; m++) {
			int64_t wz = q->wz ? ho_cpu_int(q->wz, q->wz_dt, Q_AT(q->n_wz, m)) : 0,
				b = q->bias ? ((const int32_t *)q->bias)[m] : 0;

			for (o[0] = 0; o[0] < q->out_sp[0]; o[0]++)
				for (o[1] = 0; o[1] < q->out_sp[1]; o[1]++)
					for (o[2] = 0; o[2] < q->out_sp[2]; o[2]++, i++)
						q_store(q, i, m,
							b + q_conv_at(q, n, m, m / mpg, o, xz, wz));
		}
}

/* oneDNN's sums (x into its layout, the sums out of it), each then requantised as the loop
 * does, with its channel's bias. */
/* acc less each channel's weight zero point times its window's sum of x - xz (q->wzc). */
static void q_conv_wz_fix(const struct ho_quant *q)
{
	int64_t in_sp = q->in_sp[0] * q->in_sp[1] * q->in_sp[2],
		out_sp = q->out_sp[0] * q->out_sp[1] * q->out_sp[2], cg = q->cc / q->group,
		mg = q->cm / q->group;

	for (int64_t n = 0; n < q->cn; n++)
		for (int64_t g = 0; g < q->group; g++) {
			int64_t c0 = n * q->cc + g * cg, p = 0;

			for (int64_t i = 0; i < in_sp; i++)
				q->plane[i] = 0;
			for (int64_t c = 0; c < cg; c++)
				for (int64_t i = 0; i < in_sp; i++)
					q->plane[i] += (int32_t)ho_cpu_int(q->x, q->x_dt,
									   (c0 + c) * in_sp + i) -
						       q->xz32;
			/* padding reads as the zero point: it adds nothing */
			for (int64_t o0 = 0; o0 < q->out_sp[0]; o0++)
				for (int64_t o1 = 0; o1 < q->out_sp[1]; o1++)
					for (int64_t o2 = 0; o2 < q->out_sp[2]; o2++, p++) {
						int64_t sum = 0;

						for (int64_t k0 = 0; k0 < q->ker[0]; k0++) {
							int64_t i0 = o0 * q->stride[0] - q->pad[0] +
								     k0 * q->dil[0];

							if (i0 < 0 || i0 >= q->in_sp[0])
								continue;
							for (int64_t k1 = 0; k1 < q->ker[1]; k1++) {
								int64_t i1 = o1 * q->stride[1] -
									     q->pad[1] +
									     k1 * q->dil[1];

								if (i1 < 0 || i1 >= q->in_sp[1])
									continue;
								for (int64_t k2 = 0; k2 < q->ker[2];
								     k2++) {
									int64_t i2 =
									    o2 * q->stride[2] -
									    q->pad[2] +
									    k2 * q->dil[2];

									if (i2 >= 0 &&
									    i2 < q->in_sp[2])
										sum +=
										    q->plane
											[(i0 *
											      q->in_sp
												  [1] +
											  i1) *
											     q->in_sp
												 [2] +
											 i2];
								}
							}
						}
						q->wsum[p] = (int32_t)sum;
					}
			for (int64_t m = g * mg; m < (g + 1) * mg; m++) {
				int32_t *a = q->acc + (n * q->cm + m) * out_sp;

				for (int64_t i = 0; i < out_sp; i++) /* wraps as int32 sums do */
					a[i] = (int32_t)((uint32_t)a[i] - (uint32_t)q->wzc[m] *
									      (uint32_t)q->wsum[i]);
			}
		}
}

static int q_run_dnnl(const struct ho_kernel *k, struct ho_quant *q)
{
	bool conv = q->kind == Q_CONV;
	int64_t sp = q->out_sp[0] * q->out_sp[1] * q->out_sp[2],
		total = conv ? q->cn * q->cm * sp : q->batch * q->m * q->nn;

	q->xz32 = q->xz ? (int32_t)ho_cpu_int(q->xz, q->xz_dt, 0) : 0;
	for (int64_t i = 0, n = conv ? q->cn * q->cc * q->in_sp[0] * q->in_sp[1] * q->in_sp[2]
				     : q->batch * q->m * q->k;
	     q->xf && i < n; i++)
		q->xf[i] = (float)(ho_cpu_int(q->x, q->x_dt, i) - q->xz32);
	if (ho_cpu_execute(q->be, k))
		return -EIO;
	if (q->wzc)
		q_conv_wz_fix(q);
	for (int64_t i = 0; (q->requant || q->yf) && i < total; i++) {
		int64_t m = conv ? i / sp % q->cm : i % q->nn; /* the channel (column) */

		q_store(q, i, m,
			(q->yf ? (int64_t)q->yf[i] : (int64_t)q->acc[i]) +
			    (q->bias ? ((const int32_t *)q->bias)[m] : 0));
	}
	return 0;
}

static int ho_run_quant(const struct ho_kernel *k)
{
	struct ho_quant *q = k->quant;

	if (k->prim)
		return q_run_dnnl(k, q);

	if (q->kind == Q_QUANT || q->kind == Q_DEQUANT)
		q_run_quantize(q);
	else if (q->kind == Q_DYNAMIC)
		q_run_dynamic(q);
	else if (q->kind == Q_MATMUL)
		q_run_matmul(q);
	else
		q_run_conv(q);
	return 0;
}

/* Input i's buffer and type, or NULL where the node leaves it out. */
static const void *q_in(const struct ho_graph *g, const struct ho_node *n, void *const *buf,
			uint32_t i, int *dt, int64_t *count)
{
	const struct ho_tensor *t = ho_node_input(g, n, i);

	*dt = t ? t->dtype : 0;
	if (count)
		*count = t ? ho_shape_numel(&t->shape) : 0;
	return t ? buf[n->inputs[i]] : NULL;
}

static int q_prep_conv(const struct ho_graph *g, const struct ho_node *n, struct ho_quant *q,
		       uint32_t wi, struct ho_error *err)
{
	const struct ho_tensor *x = ho_node_input(g, n, 0), *w = ho_node_input(g, n, wi),
			       *y = &g->tensors[n->outputs[0]];
	int nsp = x->shape.rank - 2;
	int64_t strides[3], dil[3], pads[6];
	const char *auto_pad = ho_auto_pad(n);

	if (nsp < 1 || nsp > 3 || w->shape.rank != x->shape.rank || y->shape.rank != x->shape.rank)
		return ho_cpu_unsupported(err, n, "convolves 1-D to 3-D only");
	if (!ho_node_attr_ints(n, "strides", strides, (size_t)nsp, 1) ||
	    !ho_node_attr_ints(n, "dilations", dil, (size_t)nsp, 1) ||
	    !ho_node_attr_ints(n, "pads", pads, 2 * (size_t)nsp, 0))
		return ho_cpu_unsupported(err, n, "needs strides, dilations and pads of its rank");
	q->kind = Q_CONV;
	q->group = ho_node_attr_i(n, "group", 1);
	q->cn = x->shape.dim[0];
	q->cc = x->shape.dim[1];
	q->cm = w->shape.dim[0];
	if (q->group < 1 || q->cc % q->group || q->cm % q->group ||
	    w->shape.dim[1] != q->cc / q->group)
		return ho_cpu_unsupported(err, n, "needs channels that divide into its groups");
	for (int a = 0; a < 3; a++) {
		int s = a - (3 - nsp); /* the spatial axis, right-aligned: missing ones are 1 */

		q->in_sp[a] = s >= 0 ? x->shape.dim[2 + s] : 1;
		q->out_sp[a] = s >= 0 ? y->shape.dim[2 + s] : 1;
		q->ker[a] = s >= 0 ? w->shape.dim[2 + s] : 1;
		q->stride[a] = s >= 0 ? strides[s] : 1;
		q->dil[a] = s >= 0 ? dil[s] : 1;
		/* explicit pads unless auto_pad says otherwise: it is "NOTSET" when absent, and
		 * taking every value for SAME shifted asymmetric pads ([1, 0, 1, 2]) by one */
		q->pad[a] = s >= 0 && !strcmp(auto_pad, "NOTSET") ? pads[s] : 0;
		if (s >= 0 && !strncmp(auto_pad, "SAME_", 5)) {
			int64_t total = (q->out_sp[a] - 1) * q->stride[a] +
					(q->ker[a] - 1) * q->dil[a] + 1 - q->in_sp[a];
			dnnl_dim_t pl, pr;

			ho_same_pads(auto_pad, total > 0 ? total : 0, &pl, &pr);
			q->pad[a] = pl;
		}
	}
	return 0;
}

/*
 * Weights oneDNN can take as signed without zero points: int8 whose zero points are all 0,
 * or constant uint8 whose zero points are all 128 (w - 128 is then the same int8 product);
 * and an 8-bit x with one zero point.  Only where oneDNN's int8 kernels have VNNI: without
 * it they multiply with vpmaddubsw, which saturates each pair's sum at 16 bits (oneDNN's
 * "int8 computation nuances"), and on an AMD EPYC with AVX2 alone int8_cnn's sums came out
 * 15% off ONNX Runtime's; our loops sum in 32 bits everywhere.
 */
static bool q_dnnl_fits(const struct ho_graph *g, const struct ho_node *n, const struct ho_quant *q)
{
	const struct ho_tensor *w = ho_node_input(g, n, q->requant ? 3 : 1),
			       *wz = ho_node_input(g, n, q->requant ? 5 : 3);
	int64_t want = q->w_dt == HO_DT_UINT8 ? 128 : 0;

	if ((dnnl_get_effective_cpu_isa() & dnnl_cpu_isa_avx512_core_vnni) !=
	    dnnl_cpu_isa_avx512_core_vnni)
		return false;
	if ((q->w_dt == HO_DT_UINT8 && (!(w->flags & HO_T_KNOWN) || !q->wz)) ||
	    (wz && !(wz->flags & HO_T_KNOWN)) || (q->xz && q->n_xz != 1))
		return false;
	if (q->kind == Q_CONV) /* any other weight zero points made good after it */
		return true;
	for (int64_t i = 0; q->wz && i < q->n_wz; i++)
		if (ho_cpu_int(q->wz, q->wz_dt, i) != want)
			return false;
	return true;
}

/*
 * Constant weights, and zero points known, whose products oneDNN's float32 kernel sums
 * exactly: for every output channel (column) m, 255 * sum |w - wz_m| below 2^24, so that no
 * partial sum leaves the integers a float32 holds (|x - xz| is at most 255 for 8-bit x).
 */
static bool q_f32_exact(const struct ho_graph *g, const struct ho_node *n, const struct ho_quant *q)
{
	const struct ho_tensor *w = ho_node_input(g, n, q->requant ? 3 : 1),
			       *wz = ho_node_input(g, n, q->requant ? 5 : 3);
	int64_t cols = q->kind == Q_CONV ? q->cm : q->nn, total = ho_shape_numel(&w->shape);
	double *sum;
	bool ok = true;

	if (!(w->flags & HO_T_KNOWN) || (wz && !(wz->flags & HO_T_KNOWN)) || q->n_xz > 1 || !cols ||
	    !(sum = calloc((size_t)cols, sizeof(*sum))))
		return false;
	for (int64_t i = 0; i < total; i++) {
		/* conv weights [M, C/group, k...]; matmul B [batch..., K, N] */
		int64_t m = q->kind == Q_CONV ? i / (total / cols) : i % cols;

		sum[m] +=
		    fabs((double)(ho_cpu_int(q->w, q->w_dt, i) -
				  (q->wz ? ho_cpu_int(q->wz, q->wz_dt, Q_AT(q->n_wz, m)) : 0)));
	}
	/* a batch of matrices sums each column over one matrix: the whole is a bound */
	for (int64_t m = 0; m < cols && ok; m++)
		ok = 255 * sum[m] < 16777216.0;
	free(sum);
	return ok;
}

/* k's weights less their zero points as float32 (plain, md user) in memory it owns. */
static void *q_float_weights(struct ho_backend *c, struct ho_kernel *k,
			     const dnnl_memory_desc_t *user)
{
	const struct ho_quant *q = k->quant;
	int64_t n = (int64_t)(dnnl_memory_desc_get_size(user) / sizeof(float)),
		cols = q->kind == Q_CONV ? q->cm : q->nn;
	float *p = NULL;

	if (ho_cpu_mem(c, k, user, NULL, -1) ||
	    dnnl_memory_get_data_handle(k->owned[k->n_owned - 1], (void **)&p) != dnnl_success ||
	    !p)
		return NULL;
	for (int64_t i = 0; i < n; i++) {
		int64_t m = q->kind == Q_CONV ? i / (n / cols) : i % cols;

		p[i] = (float)(ho_cpu_int(q->w, q->w_dt, i) -
			       (q->wz ? ho_cpu_int(q->wz, q->wz_dt, Q_AT(q->n_wz, m)) : 0));
	}
	return p;
}

/* k's weights as int8 (plain, md user): q's own, or unsigned ones less 128 in a copy it owns. */
static void *q_signed_weights(struct ho_backend *c, struct ho_kernel *k,
			      const dnnl_memory_desc_t *user)
{
	const struct ho_quant *q = k->quant;
	void *p = NULL;
	size_t n = dnnl_memory_desc_get_size(user);

	if (q->w_dt == HO_DT_INT8)
		return (void *)q->w;
	if (ho_cpu_mem(c, k, user, NULL, -1) ||
	    dnnl_memory_get_data_handle(k->owned[k->n_owned - 1], &p) != dnnl_success || !p)
		return NULL;
	for (size_t i = 0; i < n; i++)
		((int8_t *)p)[i] = (int8_t)(((const uint8_t *)q->w)[i] ^ 0x80);
	return p;
}

static dnnl_data_type_t q_dnnl_type(int dt)
{
	return dt == HO_DT_INT8 ? dnnl_s8 : dt == HO_DT_UINT8 ? dnnl_u8 : dnnl_s32;
}

/*
 * Where k's n int32 sums go: y itself (ConvInteger, MatMulInteger), or n of its own; in
 * float32, n float sums and x's n_x elements less its zero point, both its own.
 */
static int q_dnnl_sums(struct ho_backend *c, struct ho_kernel *k, int64_t n, int64_t n_x, bool f32)
{
	struct ho_quant *q = k->quant;
	dnnl_memory_desc_t md;
	dnnl_dims_t d = {n};

	if (f32) {
		dnnl_memory_desc_init_by_tag(&md, 1, d, dnnl_f32, dnnl_a);
		if (ho_cpu_mem(c, k, &md, NULL, -1) ||
		    dnnl_memory_get_data_handle(k->owned[k->n_owned - 1], (void **)&q->yf) !=
			dnnl_success)
			return -ENOMEM;
		d[0] = n_x;
		dnnl_memory_desc_init_by_tag(&md, 1, d, dnnl_f32, dnnl_a);
		if (ho_cpu_mem(c, k, &md, NULL, -1) ||
		    dnnl_memory_get_data_handle(k->owned[k->n_owned - 1], (void **)&q->xf) !=
			dnnl_success)
			return -ENOMEM;
		return 0;
	}
	q->acc = q->requant ? malloc((size_t)n * 4 + 4) : q->y;
	if (q->requant)
		k->fold = (float *)q->acc; /* freed with the kernel */
	return q->acc ? 0 : -ENOMEM;
}

/* oneDNN's kernel for operation desc with x's zero point at run time; NULL: none but its
 * reference one. */
static dnnl_primitive_desc_t q_dnnl_pd(struct ho_backend *c, const struct ho_quant *q,
				       const void *desc)
{
	int32_t runtime = DNNL_RUNTIME_S32_VAL;
	dnnl_primitive_attr_t attr = NULL;
	dnnl_primitive_desc_t pd = NULL;
	bool ok = dnnl_primitive_attr_clone(&attr, c->attr) == dnnl_success &&
		  (!q->xz || q->xf ||
		   dnnl_primitive_attr_set_zero_points(attr, DNNL_ARG_SRC, 1, 0, &runtime) ==
		       dnnl_success) &&
		  dnnl_primitive_desc_create(&pd, desc, attr, c->eng, NULL) == dnnl_success;

	if (attr)
		dnnl_primitive_attr_destroy(attr);
	if (ok && !ho_cpu_is_reference(pd))
		return pd;
	if (pd)
		dnnl_primitive_desc_destroy(pd);
	return NULL;
}

/* The kernel made over its memory (ok: so far; x's zero point still to bind), pd released. */
static int q_dnnl_finish(struct ho_backend *c, struct ho_kernel *k, dnnl_primitive_desc_t pd,
			 bool ok, const struct ho_node *n, struct ho_error *err)
{
	struct ho_quant *q = k->quant;
	dnnl_dims_t one = {1};
	dnnl_memory_desc_t zm;

	dnnl_memory_desc_init_by_tag(&zm, 1, one, dnnl_s32, dnnl_a);
	ok = ok &&
	     (!q->xz || q->xf ||
	      !ho_cpu_mem(c, k, &zm, &q->xz32, DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_SRC)) &&
	     !ho_cpu_prim(c, k, pd);
	dnnl_primitive_desc_destroy(pd);
	if (!ok)
		return ho_err(err, -ENOMEM, "node '%s' (%s): cannot make its oneDNN kernel",
			      n->name, n->op_type);
	q->be = c;
	return 0;
}

/* n int32s of k's own (oneDNN memory, freed with it) at *p. */
static int q_own_s32(struct ho_backend *c, struct ho_kernel *k, int64_t n, int32_t **p)
{
	dnnl_memory_desc_t md;
	dnnl_dims_t d = {n ? n : 1};

	dnnl_memory_desc_init_by_tag(&md, 1, d, dnnl_s32, dnnl_a);
	if (ho_cpu_mem(c, k, &md, NULL, -1) ||
	    dnnl_memory_get_data_handle(k->owned[k->n_owned - 1], (void **)p) != dnnl_success)
		return -ENOMEM;
	return 0;
}

/* Each channel's weight zero point as the int8 weights see it, and room to make it good;
 * nothing where every one is 0. */
static int q_wz_fix_prep(struct ho_backend *c, struct ho_kernel *k)
{
	struct ho_quant *q = k->quant;
	int64_t shift = q->w_dt == HO_DT_UINT8 ? 128 : 0;
	bool any = false;
	int32_t *z;

	if (!q->wz)
		return 0;
	for (int64_t m = 0; m < q->cm; m++)
		any |= ho_cpu_int(q->wz, q->wz_dt, Q_AT(q->n_wz, m)) != shift;
	if (!any)
		return 0;
	if (q_own_s32(c, k, q->cm, &z) ||
	    q_own_s32(c, k, q->in_sp[0] * q->in_sp[1] * q->in_sp[2], &q->plane) ||
	    q_own_s32(c, k, q->out_sp[0] * q->out_sp[1] * q->out_sp[2], &q->wsum))
		return -ENOMEM;
	for (int64_t m = 0; m < q->cm; m++)
		z[m] = (int32_t)(ho_cpu_int(q->wz, q->wz_dt, Q_AT(q->n_wz, m)) - shift);
	q->wzc = z;
	return 0;
}

/*
 * The int32 sums of k's convolution on oneDNN, in the layouts its int8 kernels
 * take (x and the sums reordered around it, the weights once here): on plain
 * NCHW it would pick its reference kernel, 3.7 ms for int8_cnn's first
 * convolution.  Where oneDNN has no kernel, or only that one, the loop stays.
 */
static int q_prep_conv_dnnl(struct ho_backend *c, const struct ho_graph *g, const struct ho_node *n,
			    struct ho_kernel *k, bool f32, struct ho_error *err)
{
	static const dnnl_format_tag_t tags[] = {dnnl_abc, dnnl_abcd, dnnl_abcde, dnnl_abcdef};
	struct ho_quant *q = k->quant;
	const struct ho_tensor *x = ho_node_input(g, n, 0);
	int r = x->shape.rank, nsp = r - 2, wr = r + (q->group > 1);
	dnnl_dims_t xd, wd, yd, st, dl, pl, pr;
	dnnl_memory_desc_t xm, wm, ym, xa, wa, ya;
	void *sw = NULL;
	dnnl_convolution_desc_t d;
	dnnl_primitive_desc_t pd = NULL;
	bool ok;

	xd[0] = yd[0] = q->cn;
	xd[1] = q->cc;
	yd[1] = q->cm;
	wd[0] = q->group;
	wd[q->group > 1] = q->cm / q->group;
	wd[1 + (q->group > 1)] = q->cc / q->group;
	for (int s = 0; s < nsp; s++) {
		int a = s + 3 - nsp; /* q's spatial arrays are right-aligned */

		xd[2 + s] = q->in_sp[a];
		yd[2 + s] = q->out_sp[a];
		wd[wr - nsp + s] = q->ker[a];
		st[s] = q->stride[a];
		dl[s] = q->dil[a] - 1;
		pl[s] = q->pad[a];
		pr[s] = (q->out_sp[a] - 1) * q->stride[a] + (q->ker[a] - 1) * q->dil[a] + 1 -
			q->in_sp[a] - q->pad[a];
	}
	dnnl_data_type_t xt = f32 ? dnnl_f32 : q_dnnl_type(q->x_dt), wt = f32 ? dnnl_f32 : dnnl_s8,
			 yt = f32 ? dnnl_f32 : dnnl_s32;

	if (q_dnnl_sums(c, k, q->cn * q->cm * q->out_sp[0] * q->out_sp[1] * q->out_sp[2],
			q->cn * q->cc * q->in_sp[0] * q->in_sp[1] * q->in_sp[2], f32) ||
	    (!f32 && q_wz_fix_prep(c, k)))
		return ho_err(err, -ENOMEM, "out of memory");
	dnnl_memory_desc_init_by_tag(&xm, r, xd, xt, tags[r - 3]);
	dnnl_memory_desc_init_by_tag(&wm, wr, wd, wt, tags[wr - 3]);
	dnnl_memory_desc_init_by_tag(&ym, r, yd, yt, tags[r - 3]);
	dnnl_memory_desc_init_by_tag(&xa, r, xd, xt, dnnl_format_tag_any);
	dnnl_memory_desc_init_by_tag(&wa, wr, wd, wt, dnnl_format_tag_any);
	dnnl_memory_desc_init_by_tag(&ya, r, yd, yt, dnnl_format_tag_any);
	if (dnnl_dilated_convolution_forward_desc_init(&d, dnnl_forward_inference,
						       dnnl_convolution_direct, &xa, &wa, NULL, &ya,
						       st, dl, pl, pr) != dnnl_success ||
	    !(pd = q_dnnl_pd(c, q, &d)))
		return 0; /* no fast int8 kernel: the loop's */
	ok = !ho_cpu_convert(c, k, &xm, f32 ? (void *)q->xf : (void *)q->x,
			     dnnl_primitive_desc_query_md(pd, dnnl_query_src_md, 0), DNNL_ARG_SRC,
			     true) &&
	     (sw = f32 ? q_float_weights(c, k, &wm) : q_signed_weights(c, k, &wm)) &&
	     !ho_cpu_weights(c, k, pd, &wm, sw, false) &&
	     !ho_cpu_convert(c, k, &ym, f32 ? (void *)q->yf : (void *)q->acc,
			     dnnl_primitive_desc_query_md(pd, dnnl_query_dst_md, 0), DNNL_ARG_DST,
			     false);
	return q_dnnl_finish(c, k, pd, ok, n, err);
}

/* The same for a matmul: batch x (M x K) . (K x N), B a matrix or of A's batch. */
static int q_prep_matmul_dnnl(struct ho_backend *c, const struct ho_node *n, struct ho_kernel *k,
			      bool f32, struct ho_error *err)
{
	struct ho_quant *q = k->quant;
	dnnl_dims_t ad = {q->batch, q->m, q->k}, bd = {q->b_step ? q->batch : 1, q->k, q->nn},
		    yd = {q->batch, q->m, q->nn};
	dnnl_memory_desc_t am, bm, ym, ba;
	dnnl_matmul_desc_t d;
	dnnl_primitive_desc_t pd = NULL;
	void *sw = NULL;
	bool ok;

	dnnl_data_type_t wt = f32 ? dnnl_f32 : dnnl_s8;

	if (q_dnnl_sums(c, k, q->batch * q->m * q->nn, q->batch * q->m * q->k, f32))
		return ho_err(err, -ENOMEM, "out of memory");
	dnnl_memory_desc_init_by_tag(&am, 3, ad, f32 ? dnnl_f32 : q_dnnl_type(q->x_dt), dnnl_abc);
	dnnl_memory_desc_init_by_tag(&bm, 3, bd, wt, dnnl_abc);
	dnnl_memory_desc_init_by_tag(&ba, 3, bd, wt, dnnl_format_tag_any);
	dnnl_memory_desc_init_by_tag(&ym, 3, yd, f32 ? dnnl_f32 : dnnl_s32, dnnl_abc);
	if (dnnl_matmul_desc_init(&d, &am, &ba, NULL, &ym) != dnnl_success ||
	    !(pd = q_dnnl_pd(c, q, &d)))
		return 0; /* no fast int8 kernel: the loop's */
	ok = !ho_cpu_mem(c, k, &am, f32 ? (void *)q->xf : (void *)q->x, DNNL_ARG_SRC) &&
	     (sw = f32 ? q_float_weights(c, k, &bm) : q_signed_weights(c, k, &bm)) &&
	     !ho_cpu_weights(c, k, pd, &bm, sw, false) &&
	     !ho_cpu_mem(c, k, &ym, f32 ? (void *)q->yf : (void *)q->acc, DNNL_ARG_DST);
	return q_dnnl_finish(c, k, pd, ok, n, err);
}

int ho_cpu_prep_quant(struct ho_backend *c, const struct ho_graph *g, const struct ho_node *n,
		      void *const *buf, struct ho_kernel *k, struct ho_error *err)
{
	const struct ho_tensor *x = ho_node_input(g, n, 0), *y = &g->tensors[n->outputs[0]];
	const char *op = n->op_type;
	struct ho_quant q = {0};
	int dt = 0;
	int64_t cnt;

	if (!x)
		return ho_cpu_unsupported(err, n, "needs its input");
	q.x = buf[n->inputs[0]];
	q.x_dt = x->dtype;
	q.y = buf[n->outputs[0]];
	q.y_dt = y->dtype;
	if (!strcmp(op, "QuantizeLinear") || !strcmp(op, "DequantizeLinear")) {
		bool quant = op[0] == 'Q';
		int64_t axis = ho_node_attr_i(n, "axis", 1), r = x->shape.rank;

		q.kind = quant ? Q_QUANT : Q_DEQUANT;
		q.xs = q_in(g, n, buf, 1, &dt, &q.n_xs);
		if (dt != HO_DT_FLOAT ||
		    (quant ? x->dtype != HO_DT_FLOAT : !q_int_type(x->dtype)) ||
		    (quant ? !q_int_type(y->dtype) || y->dtype == HO_DT_INT32
			   : y->dtype != HO_DT_FLOAT) ||
		    ho_node_attr_i(n, "block_size", 0))
			return ho_cpu_unsupported(
			    err, n, "quantizes float32 to 8- and 16-bit integers only");
		q.xz = q_in(g, n, buf, 2, &q.xz_dt, &q.n_xz);
		if (q.xz && q.xz_dt != (quant ? y->dtype : x->dtype))
			return ho_cpu_unsupported(err, n, "needs a zero point of the integer type");
		axis += axis < 0 ? r : 0;
		q.outer = q.inner = 1;
		q.axis_dim = 1;
		if (q.n_xs > 1 || q.n_xz > 1) { /* per axis */
			if (axis < 0 || axis >= r || q.n_xs != x->shape.dim[axis] ||
			    (q.xz && q.n_xz != q.n_xs))
				return ho_cpu_unsupported(err, n,
							  "needs a scale per element of its axis");
			for (int a = 0; a < r; a++)
				if (a < axis)
					q.outer *= x->shape.dim[a];
				else if (a > axis)
					q.inner *= x->shape.dim[a];
			q.axis_dim = x->shape.dim[axis];
		} else {
			q.inner = ho_shape_numel(&x->shape);
		}
	} else if (!strcmp(op, "DynamicQuantizeLinear")) {
		if (x->dtype != HO_DT_FLOAT || n->n_outputs < 3 || n->outputs[1] < 0 ||
		    n->outputs[2] < 0)
			return ho_cpu_unsupported(err, n,
						  "quantizes float32 with all three outputs");
		q.kind = Q_DYNAMIC;
		q.n = ho_shape_numel(&x->shape);
		q.y_scale_out = buf[n->outputs[1]];
		q.y_zp_out = buf[n->outputs[2]];
	} else {
		bool qlinear = op[0] == 'Q', conv = strstr(op, "Conv") != NULL;
		uint32_t wi = qlinear ? 3 : 1;
		const struct ho_tensor *w = ho_node_input(g, n, wi);

		if (!w || (x->dtype != HO_DT_INT8 && x->dtype != HO_DT_UINT8) ||
		    (w->dtype != HO_DT_INT8 && w->dtype != HO_DT_UINT8))
			return ho_cpu_unsupported(err, n, "multiplies 8-bit integers only");
		q.requant = qlinear;
		q.w = buf[n->inputs[wi]];
		q.w_dt = w->dtype;
		if (qlinear) {
			int sdt[3];

			q.xs = q_in(g, n, buf, 1, &sdt[0], &q.n_xs);
			q.xz = q_in(g, n, buf, 2, &q.xz_dt, &q.n_xz);
			q.ws = q_in(g, n, buf, 4, &sdt[1], &q.n_ws);
			q.wz = q_in(g, n, buf, 5, &q.wz_dt, &q.n_wz);
			q.ys = q_in(g, n, buf, 6, &sdt[2], &cnt);
			q.yz = q_in(g, n, buf, 7, &q.yz_dt, NULL);
			if (!q.xs || !q.ws || !q.ys || !q.yz || sdt[0] != HO_DT_FLOAT ||
			    sdt[1] != HO_DT_FLOAT || sdt[2] != HO_DT_FLOAT || q.n_xs != 1 ||
			    cnt != 1 || (q.xz && q.n_xz != 1) || q.yz_dt != y->dtype)
				return ho_cpu_unsupported(
				    err, n, "needs float32 scales, scalar but for w's");
			if (conv)
				q.bias = q_in(g, n, buf, 8, &dt, &cnt);
			if (q.bias && (dt != HO_DT_INT32 || cnt != w->shape.dim[0]))
				return ho_cpu_unsupported(err, n,
							  "needs an int32 bias per channel");
		} else {
			q.xz = q_in(g, n, buf, 2, &q.xz_dt, &q.n_xz);
			q.wz = q_in(g, n, buf, 3, &q.wz_dt, &q.n_wz);
			if (y->dtype != HO_DT_INT32)
				return ho_cpu_unsupported(err, n, "writes int32 only");
		}
		if ((q.xz && q.xz_dt != x->dtype) || (q.wz && q.wz_dt != w->dtype))
			return ho_cpu_unsupported(err, n, "needs zero points of its inputs' types");
		if (conv) {
			int ret = q_prep_conv(g, n, &q, wi, err);

			if (ret)
				return ret;
			if ((q.xz && q.n_xz != 1) || (q.n_ws > 1 && q.n_ws != q.cm) ||
			    (q.n_wz > 1 && q.n_wz != q.cm))
				return ho_cpu_unsupported(err, n, "needs w's scales per channel");
		} else {
			int ra = x->shape.rank, rb = w->shape.rank;

			if (ra < 2 || rb < 2 || y->shape.rank != (ra > rb ? ra : rb))
				return ho_cpu_unsupported(err, n,
							  "multiplies matrices (rank 2 up)");
			q.m = x->shape.dim[ra - 2];
			q.k = x->shape.dim[ra - 1];
			q.nn = w->shape.dim[rb - 1];
			q.batch = q.m > 0 && q.k > 0 ? ho_shape_numel(&x->shape) / (q.m * q.k) : 0;
			q.b_step = rb == 2 ? 0 : q.k * q.nn;
			if (w->shape.dim[rb - 2] != q.k ||
			    (rb > 2 && ho_shape_numel(&w->shape) != q.batch * q.k * q.nn) ||
			    (q.n_xz > 1 && q.n_xz != q.m) || (q.n_wz > 1 && q.n_wz != q.nn) ||
			    (q.n_ws > 1 && q.n_ws != q.nn))
				return ho_cpu_unsupported(
				    err, n,
				    "needs B a matrix or of A's batch, zero points per row/column");
			q.kind = Q_MATMUL;
		}
	}
	if (!(k->quant = malloc(sizeof(q))))
		return ho_err(err, -ENOMEM, "out of memory");
	*k->quant = q;
	k->kind = HO_K_LOOP;
	k->typed.run = ho_run_quant;
	if (q.kind != Q_CONV && q.kind != Q_MATMUL)
		return 0;
	/* oneDNN's int8 kernels where they are exact, else its float32 ones where they are */
	bool f32 = !q_dnnl_fits(g, n, &q);

	if (f32 && !q_f32_exact(g, n, &q))
		return 0;
	return q.kind == Q_CONV ? q_prep_conv_dnnl(c, g, n, k, f32, err)
				: q_prep_matmul_dnnl(c, n, k, f32, err);
}
