// SPDX-License-Identifier: MIT
/* Pooling: max, average and their global forms (oneDNN); max with indices or on other types as a
 * loop. */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cpu.h"

/*
 * MaxPool as a loop, for what oneDNN's does not give: 8-bit and float64
 * elements, and the Indices output (each maximum's flat index in the
 * input, column-major over H and W with storage_order 1).  The window
 * per axis: typed.stride[0] kernel, [1] stride, [2] dilation, [3] left pad.
 */
static int ho_run_max_pool(const struct ho_kernel *k)
{
	const struct ho_typed *t = &k->typed;
	const struct ho_shape *xs = &t->in_shape[0], *ys = &t->out_shape;
	int sp = xs->rank - 2;
	int64_t in[3] = {1, 1, 1}, out[3] = {1, 1, 1}, ks[3] = {1, 1, 1}, st[3] = {1, 1, 1},
		dl[3] = {1, 1, 1}, pl[3] = {0, 0, 0}, i = 0;

	for (int a = 0; a < sp; a++) { /* right-aligned: missing spatial axes are 1 */
		int b = a + 3 - sp;

		in[b] = xs->dim[2 + a], out[b] = ys->dim[2 + a];
		ks[b] = t->stride[0][a], st[b] = t->stride[1][a], dl[b] = t->stride[2][a];
		pl[b] = t->stride[3][a];
	}
	for (int64_t nc = 0; nc < xs->dim[0] * xs->dim[1]; nc++)
		for (int64_t od = 0; od < out[0]; od++)
			for (int64_t oh = 0; oh < out[1]; oh++)
				for (int64_t ow = 0; ow < out[2]; ow++, i++) {
					double best = -INFINITY;
					int64_t at = -1;

					for (int64_t kd = 0; kd < ks[0]; kd++)
						for (int64_t kh = 0; kh < ks[1]; kh++)
							for (int64_t kw = 0; kw < ks[2]; kw++) {
								int64_t d = od * st[0] - pl[0] +
									    kd * dl[0],
									h = oh * st[1] - pl[1] +
									    kh * dl[1],
									w = ow * st[2] - pl[2] +
									    kw * dl[2],
									e;
								double v;

								if (d < 0 || d >= in[0] || h < 0 ||
								    h >= in[1] || w < 0 ||
								    w >= in[2])
									continue; /* padding: never
										     the max */
								e = ((nc * in[0] + d) * in[1] + h) *
									in[2] +
								    w;
								v = ho_cpu_real(t->in[0],
										t->in_dt[0], e);
								if (at < 0 || v > best) {
									best = v;
									at = t->iparam[0]
										 ? nc * in[0] *
											   in[1] *
											   in[2] +
										       (d * in[2] +
											w) *
											   in[1] +
										       h
										 : e;
								}
							}
					if (t->out_dt == HO_DT_FLOAT)
						((float *)t->out)[i] = (float)best;
					else if (t->out_dt == HO_DT_DOUBLE)
						((double *)t->out)[i] = best;
					else if (t->out_dt == HO_DT_INT8)
						((int8_t *)t->out)[i] = (int8_t)best;
					else
						((uint8_t *)t->out)[i] = (uint8_t)best;
					if (t->out2)
						((int64_t *)t->out2)[i] = at;
				}
	return 0;
}

/* The sum of p[0..len): four vectors of partial sums, so that adds overlap. */
static HO_VECTOR_CLONES float ho_row_sum(const float *p, int64_t len)
{
	ho_v16 v[4] = {{0}}, x;
	float lane[16], acc = 0;
	int64_t i = 0;

	for (; i + 64 <= len; i += 64)
		for (int u = 0; u < 4; u++) {
			memcpy(&x, p + i + 16 * u, sizeof(x));
			v[u] += x;
		}
	for (; i + 16 <= len; i += 16) {
		memcpy(&x, p + i, sizeof(x));
		v[0] += x;
	}
	v[0] += v[1] + v[2] + v[3];
	memcpy(lane, &v[0], sizeof(lane));
	for (int j = 0; j < 16; j++)
		acc += lane[j];
	for (; i < len; i++)
		acc += p[i];
	return acc;
}

/* The largest of p[0..len) (a NaN is passed over, as by fmaxf). */
static HO_VECTOR_CLONES float ho_row_max(const float *p, int64_t len)
{
	float lane[16], acc = -INFINITY;
	int64_t i = 0;

	for (int j = 0; j < 16; j++)
		lane[j] = -INFINITY;
	for (; i + 16 <= len; i += 16)
		for (int j = 0; j < 16; j++)
			lane[j] = fmaxf(lane[j], p[i + j]);
	for (int j = 0; j < 16; j++)
		acc = fmaxf(acc, lane[j]);
	for (; i < len; i++)
		acc = fmaxf(acc, p[i]);
	return acc;
}

/*
 * A global pool of float32 NCHW rows, each channel's spatial run contiguous.
 * oneDNN's NCHW global pooling read 96 x 160 x 160 floats in 1.24 ms here
 * (8 GB/s), eight times its NHWC one, and a split over two devices makes such
 * tensors NCHW (the PP-OCRv4 detector's SE blocks beside PoCL).
 */
static int ho_run_global_pool(const struct ho_kernel *k)
{
	const struct ho_typed *t = &k->typed;
	const struct ho_shape *xs = &t->in_shape[0];
	int64_t rows = xs->dim[0] * xs->dim[1], len = ho_shape_numel(xs) / (rows ? rows : 1);
	float *y = t->out;

	for (int64_t r = 0; r < rows; r++) {
		const float *p = (const float *)t->in[0] + r * len;

		y[r] = t->iparam[0] ? ho_row_max(p, len) : ho_row_sum(p, len) / (float)len;
	}
	return 0;
}

int ho_cpu_prep_pool(struct ho_backend *c, const struct ho_graph *g, const struct ho_node *n,
		     void *const *buf, struct ho_kernel *k, struct ho_error *err)
{
	const struct ho_tensor *x = ho_node_input(g, n, 0), *y = &g->tensors[n->outputs[0]];
	bool global = !strncmp(n->op_type, "Global", 6), is_max = strstr(n->op_type, "Max") != NULL;
	int64_t ks[3], st[3], dl[3], pads[6];
	int sp = x ? x->shape.rank - 2 : 0; /* spatial axes: 1, 2 or 3 */
	dnnl_dims_t kernel, strides, dil, pl, pr;
	dnnl_memory_desc_t xm, ym;
	dnnl_pooling_v2_desc_t d;
	dnnl_alg_kind_t alg;
	const char *ap = ho_auto_pad(n);

	bool indices = n->n_outputs > 1 && n->outputs[1] >= 0, loop;

	if (!x || sp < 1 || sp > 3 || x->dtype != y->dtype)
		return ho_cpu_unsupported(err, n, "pools 1-D, 2-D and 3-D tensors only");
	loop = is_max && !global && (x->dtype != HO_DT_FLOAT || indices);
	if (!loop && (x->dtype != HO_DT_FLOAT || indices))
		return ho_cpu_unsupported(err, n, "pools float32 (max: 8-bit, float64) only");
	if (loop && x->dtype != HO_DT_FLOAT && x->dtype != HO_DT_DOUBLE && x->dtype != HO_DT_INT8 &&
	    x->dtype != HO_DT_UINT8)
		return ho_cpu_unsupported(err, n, "max-pools float32/64 and 8-bit integers only");
	if (!global && (!ho_node_attr_ints(n, "kernel_shape", ks, (size_t)sp, 1) ||
			!ho_node_attr_ints(n, "strides", st, (size_t)sp, 1) ||
			!ho_node_attr_ints(n, "dilations", dl, (size_t)sp, 1) ||
			!ho_node_attr_ints(n, "pads", pads, 2 * (size_t)sp, 0)))
		return ho_cpu_unsupported(err, n,
					  "needs kernel_shape/strides/dilations of one value and "
					  "pads of two per spatial axis");
	for (int i = 0; i < sp; i++) {
		int64_t in = x->shape.dim[2 + i], out = y->shape.dim[2 + i], total;

		if (global) {
			ks[i] = in;
			st[i] = 1;
			dl[i] = 1;
			pads[i] = pads[sp + i] = 0;
		}
		kernel[i] = ks[i];
		strides[i] = st[i];
		dil[i] = dl[i] - 1;
		total = (out - 1) * st[i] + (ks[i] - 1) * dl[i] + 1 - in;
		if (!strcmp(ap, "SAME_UPPER") || !strcmp(ap, "SAME_LOWER")) {
			ho_same_pads(ap, total, &pl[i], &pr[i]);
			continue;
		}
		pl[i] = strcmp(ap, "VALID") ? pads[i] : 0;
		/* ceil_mode: the right pad that yields the inferred output size. */
		pr[i] = total - pl[i];
		if (pr[i] < 0)
			pr[i] = 0;
	}
	if (loop) {
		struct ho_typed *t = &k->typed;

		k->kind = HO_K_LOOP;
		t->in[0] = buf[n->inputs[0]];
		t->in_dt[0] = x->dtype;
		t->in_shape[0] = x->shape;
		t->out = buf[n->outputs[0]];
		t->out_dt = y->dtype;
		t->out_shape = y->shape;
		t->out2 = indices ? buf[n->outputs[1]] : NULL;
		t->iparam[0] = ho_node_attr_i(n, "storage_order", 0);
		if (indices && g->tensors[n->outputs[1]].dtype != HO_DT_INT64)
			return ho_cpu_unsupported(err, n, "writes int64 indices only");
		for (int i = 0; i < sp; i++) {
			t->stride[0][i] = ks[i];
			t->stride[1][i] = st[i];
			t->stride[2][i] = dl[i];
			t->stride[3][i] = pl[i];
		}
		t->run = ho_run_max_pool;
		return 0;
	}
	if (global && x->dtype == HO_DT_FLOAT &&
	    !(c->channels_last && c->channels_last[n->inputs[0]])) {
		k->kind = HO_K_LOOP;
		k->typed.in[0] = buf[n->inputs[0]];
		k->typed.in_shape[0] = x->shape;
		k->typed.out = buf[n->outputs[0]];
		k->typed.iparam[0] = is_max;
		k->typed.run = ho_run_global_pool;
		return 0;
	}
	if (is_max)
		alg = dnnl_pooling_max;
	else
		alg = ho_node_attr_i(n, "count_include_pad", 0) ? dnnl_pooling_avg_include_padding
								: dnnl_pooling_avg_exclude_padding;
	ho_cpu_t_md(c, &xm, n->inputs[0], &x->shape);
	/* A global pool's [N, C, 1, 1] is the same bytes in either layout: say the
	 * input's, or oneDNN sees a layout change and takes its reference kernel
	 * (68 ms of the PP-OCR detector's 200). */
	ho_cpu_t_md(c, &ym, global ? n->inputs[0] : n->outputs[0], &y->shape);
	return ho_cpu_src_dst_kernel(
	    c, k,
	    dnnl_pooling_v2_forward_desc_init(&d, dnnl_forward_inference, alg, &xm, &ym, strides,
					      kernel, dil, pl, pr),
	    &d, NULL, &xm, &ym, buf, n, "(oneDNN) has no pooling for these shapes", err);
}
