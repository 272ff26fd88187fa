// SPDX-License-Identifier: MIT
/* Convolution and transposed convolution (oneDNN), a following batch norm folded into the weights,
 * an element-wise node as a post-op. */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cpu.h"

/*
 * Conv then BatchNormalization, folded: y = gamma * (W x + b - mean) /
 * sqrt(var + eps) + beta is a convolution with each output channel's weights
 * scaled and a new bias.  Computed once, into memory the kernel owns.
 */
static int ho_fold_bn(struct ho_kernel *k, const struct ho_graph *g, const struct ho_node *n,
		      const struct ho_node *bn, void *const *buf, const float **w_out,
		      const float **b_out)
{
	const struct ho_tensor *w = ho_node_input(g, n, 1);
	int64_t oc = w->shape.dim[0], per = ho_shape_numel(&w->shape) / oc;
	const float *bv = ho_node_input(g, n, 2) ? buf[n->inputs[2]] : NULL;
	const float *p[4] = {buf[bn->inputs[1]], buf[bn->inputs[2]], buf[bn->inputs[3]],
			     buf[bn->inputs[4]]};
	float *fw, *fb;

	k->fold = aligned_alloc(64, (size_t)((oc * per + oc) * 4 + 63) & ~(size_t)63);
	if (!k->fold)
		return -ENOMEM;
	fw = k->fold;
	fb = fw + oc * per;
	ho_bn_fold(bn, p, buf[n->inputs[1]], bv, oc, per, fw, fb);
	*w_out = fw;
	*b_out = fb;
	return 0;
}

union conv_desc {
	dnnl_convolution_desc_t conv;
	dnnl_deconvolution_desc_t deconv;
};

static dnnl_status_t conv_desc(union conv_desc *d, bool deconv, const dnnl_memory_desc_t *x,
			       const dnnl_memory_desc_t *w, const dnnl_memory_desc_t *b,
			       const dnnl_memory_desc_t *y, const dnnl_dim_t *strides,
			       const dnnl_dim_t *dil, const dnnl_dim_t *pl, const dnnl_dim_t *pr)
{
	if (deconv)
		return dnnl_dilated_deconvolution_forward_desc_init(
		    &d->deconv, dnnl_forward_inference, dnnl_deconvolution_direct, x, w, b, y,
		    strides, dil, pl, pr);
	return dnnl_dilated_convolution_forward_desc_init(&d->conv, dnnl_forward_inference,
							  dnnl_convolution_direct, x, w, b, y,
							  strides, dil, pl, pr);
}

/*
 * oneDNN 2.6 runs what follows a deconvolution's kernel in loops of its own:
 * a bias took 2.1 ms of 3.0 for a 24>24 2x2 ConvTranspose to 320x184 on one
 * core, a fused Relu 28 ms, and a bias as a binary post-op sent the whole
 * deconvolution to its reference kernel (15x).  So the kernel runs bare, and
 * a binary Add over channels follows on the output in place (0.1 ms there),
 * attr's post-ops fused into it: of the bias, or without one of a zero.
 */
static int deconv_then(struct ho_backend *c, struct ho_kernel *k, const dnnl_memory_desc_t *ym,
		       void *y, void *bias, int64_t oc, const_dnnl_primitive_attr_t attr)
{
	dnnl_dims_t bd = {1, bias ? oc : 1, 1, 1, 1};
	dnnl_memory_desc_t bm;
	dnnl_binary_desc_t d;
	dnnl_primitive_desc_t pd = NULL;
	int rank = ym->ndims, ret = -ENOMEM;
	void *zero = NULL;

	dnnl_memory_desc_init_by_tag(&bm, rank, bd, dnnl_f32,
				     rank == 3	 ? dnnl_abc
				     : rank == 4 ? dnnl_abcd
						 : dnnl_abcde);
	if (dnnl_binary_desc_init(&d, dnnl_binary_add, ym, &bm, ym) != dnnl_success ||
	    dnnl_primitive_desc_create(&pd, &d, attr, c->eng, NULL) != dnnl_success)
		return -EINVAL;
	if (ho_cpu_mem(c, k, ym, y, -1) || ho_cpu_mem(c, k, &bm, bias, -1))
		goto out;
	if (!bias) {
		if (dnnl_memory_get_data_handle(k->owned[k->n_owned - 1], &zero) != dnnl_success)
			goto out;
		*(float *)zero = 0;
	}
	k->then_args[0] = (dnnl_exec_arg_t){DNNL_ARG_SRC_0, k->owned[k->n_owned - 2]};
	k->then_args[1] = (dnnl_exec_arg_t){DNNL_ARG_SRC_1, k->owned[k->n_owned - 1]};
	k->then_args[2] = (dnnl_exec_arg_t){DNNL_ARG_DST, k->owned[k->n_owned - 2]};
	ret = dnnl_primitive_create(&k->then, pd) == dnnl_success ? 0 : -EINVAL;
out:
	dnnl_primitive_desc_destroy(pd);
	return ret;
}

/*
 * A 3x3 stride-1 convolution on oneDNN's Winograd kernel where it has one (F(2x2,3x3)
 * and F(4x4,3x3) on AVX-512): fewer multiplications for the same answer within
 * rounding.  On one core of a 2-core AMD EPYC, 256>256 at 100x100 took 29 ms against
 * the direct kernel's 63, 64>64 at 56x56 0.74 against 1.33, 512>512 at 7x7 0.98 against
 * 1.13.  Its rounding is a little larger: resnet18's largest difference to PyTorch went
 * from 7.2e-6 to 7.6e-6 of 8.5.  oneDNN's own choice (convolution_auto) keeps the direct
 * kernel; ONNX Runtime has no Winograd kernel on the CPU.  Which convolutions try it is
 * their kernel class's test (graph/family.c), so that the cost model prices what runs.
 */
static void conv_winograd(struct ho_backend *c, const dnnl_memory_desc_t *wm,
			  const dnnl_memory_desc_t *kbias, const dnnl_dim_t *strides,
			  const dnnl_dim_t *dil, const dnnl_dim_t *pl, const dnnl_dim_t *pr,
			  const_dnnl_primitive_attr_t kattr, dnnl_memory_desc_t *conv_in,
			  dnnl_memory_desc_t *conv_out, dnnl_primitive_desc_t *pd)
{
	dnnl_memory_desc_t any_in, any_out;
	dnnl_convolution_desc_t d;
	dnnl_primitive_desc_t wino = NULL;

	dnnl_memory_desc_init_by_tag(&any_in, 4, conv_in->dims, dnnl_f32, dnnl_format_tag_any);
	dnnl_memory_desc_init_by_tag(&any_out, 4, conv_out->dims, dnnl_f32, dnnl_format_tag_any);
	if (dnnl_dilated_convolution_forward_desc_init(
		&d, dnnl_forward_inference, dnnl_convolution_winograd, &any_in, wm, kbias, &any_out,
		strides, dil, pl, pr) != dnnl_success ||
	    dnnl_primitive_desc_create(&wino, &d, kattr, c->eng, NULL) != dnnl_success)
		return; /* no Winograd kernel here, or not with these post-ops */
	dnnl_primitive_desc_destroy(*pd);
	*pd = wino;
	*conv_in = *dnnl_primitive_desc_query_md(wino, dnnl_query_src_md, 0);
	*conv_out = *dnnl_primitive_desc_query_md(wino, dnnl_query_dst_md, 0);
}

/*
 * bf16 (asked of the node: ho_fusion.precision): the kernel reads its input and
 * weights rounded to bfloat16, its input converted on the way in (1-2% of its time),
 * and accumulates and writes float32, post-ops included: oneDNN's brgconv runs twice as fast on
 * AVX512-BF16 (64>64 3x3 at 56x56 on one core: 0.98 against 1.99 ms).  oneDNN 2.6's
 * fpmath_mode does not do it: its float32 kernels stay.  Its input keeps its layout
 * (channels-last, or the blocked one picked above); where oneDNN has no fast bf16
 * kernel for the shapes the float32 one stays (*pd untouched, false).
 */
static bool conv_bf16(struct ho_backend *c, const dnnl_memory_desc_t *kbias,
		      const dnnl_dim_t *strides, const dnnl_dim_t *dil, const dnnl_dim_t *pl,
		      const dnnl_dim_t *pr, const_dnnl_primitive_attr_t kattr,
		      dnnl_memory_desc_t *conv_in, const dnnl_memory_desc_t *conv_out,
		      dnnl_memory_desc_t *wm, dnnl_primitive_desc_t *pd)
{
	dnnl_memory_desc_t in = *conv_in, w;
	union conv_desc d;
	dnnl_primitive_desc_t b = NULL;

	in.data_type = dnnl_bf16;
	dnnl_memory_desc_init_by_tag(&w, wm->ndims, wm->dims, dnnl_bf16, dnnl_format_tag_any);
	if (conv_desc(&d, false, &in, &w, kbias, conv_out, strides, dil, pl, pr) != dnnl_success ||
	    dnnl_primitive_desc_create(&b, &d, kattr, c->eng, NULL) != dnnl_success)
		return false;
	if (ho_cpu_is_slow(b)) {
		dnnl_primitive_desc_destroy(b);
		return false;
	}
	dnnl_primitive_desc_destroy(*pd);
	*pd = b;
	*conv_in = in;
	*wm = w;
	return true;
}

/*
 * int8 (ho_fusion.precision "int8", the input's range calibrated: int8.c): oneDNN's int8
 * convolution, its input quantized on the way in (in the layout the kernel picks), its
 * weights (w: rows of per floats, one per output channel) once, and the bias divided by
 * the output scales, which oneDNN 2.x adds to the int32 sums before scaling them.  On
 * one core of a 2-core AMD EPYC (AVX512-VNNI), 64>64 3x3 at 56x56 took 0.49 ms against
 * bf16's 0.97 and float32's 1.94.  Where oneDNN has no fast int8 kernel, float32 stays
 * (*pd untouched, false).  The weight scales go to *ws (the caller frees it).
 */
static bool conv_int8(struct ho_backend *c, struct ho_cpu_int8 *q, const float *w, const float *b,
		      int64_t rows, int64_t per, const dnnl_memory_desc_t *kbias,
		      const dnnl_dim_t *strides, const dnnl_dim_t *dil, const dnnl_dim_t *pl,
		      const dnnl_dim_t *pr, const_dnnl_primitive_attr_t kattr,
		      const dnnl_memory_desc_t *xm, const dnnl_memory_desc_t *wuser,
		      dnnl_memory_desc_t *conv_in, dnnl_memory_desc_t *conv_out,
		      dnnl_memory_desc_t *wm, dnnl_primitive_desc_t *pd, float **ws)
{
	dnnl_memory_desc_t in, wq, out = *conv_out;
	dnnl_data_type_t xdt;
	union conv_desc d;
	dnnl_primitive_desc_t p = NULL;

	if (!(*ws = malloc(sizeof(float) * (size_t)rows)) ||
	    ho_cpu_int8_scales(c, q, w, rows, per, per, 1, kattr, 1 << 1, b, &xdt, *ws))
		return false;
	dnnl_memory_desc_init_by_tag(&in, conv_in->ndims, conv_in->dims, xdt, dnnl_format_tag_any);
	dnnl_memory_desc_init_by_tag(&wq, wm->ndims, wm->dims, dnnl_s8, dnnl_format_tag_any);
	/* its destination as the float32 kernel's, else where oneDNN wants it */
	for (int any = 0; any < 2 && !p; any++) {
		if (any)
			dnnl_memory_desc_init_by_tag(&out, conv_out->ndims, conv_out->dims,
						     dnnl_f32, dnnl_format_tag_any);
		if (conv_desc(&d, false, &in, &wq, kbias, &out, strides, dil, pl, pr) !=
			dnnl_success ||
		    dnnl_primitive_desc_create(&p, &d, q->attr, c->eng, NULL) != dnnl_success)
			p = NULL;
		else if (ho_cpu_is_slow(p) || !ho_cpu_int8_reorders(c, q, xm, wuser, p)) {
			dnnl_primitive_desc_destroy(p);
			p = NULL;
		}
	}
	if (!p)
		return false;
	dnnl_primitive_desc_destroy(*pd);
	*pd = p;
	*conv_in = *dnnl_primitive_desc_query_md(p, dnnl_query_src_md, 0);
	*conv_out = *dnnl_primitive_desc_query_md(p, dnnl_query_dst_md, 0);
	*wm = wq;
	return true;
}

/*
 * The post-ops of a kernel that adds its result into its destination (a
 * residual there already: oneDNN's sum), then post's (NULL: none).  The sum
 * keeps brgconv; a binary Add of the residual as a second source sent it to
 * the older jit kernels, 12-16% slower on ResNet's 1x1 and 3x3 shapes.
 */
static int conv_sum_attr(struct ho_backend *c, const struct ho_graph *g, const struct ho_node *post,
			 void *const *buf, dnnl_primitive_attr_t *attr)
{
	dnnl_primitive_attr_t ea = NULL;
	const_dnnl_post_ops_t epo = NULL;
	dnnl_post_ops_t po = NULL;
	int ret = -ENOMEM;

	*attr = NULL;
	if (post && ho_cpu_eltwise_attr(c, g, post, buf, false, &ea))
		return -ENOMEM;
	if (dnnl_post_ops_create(&po) != dnnl_success ||
	    dnnl_post_ops_append_sum(po, 1.0f) != dnnl_success ||
	    (ea && dnnl_primitive_attr_get_post_ops(ea, &epo) != dnnl_success))
		goto out;
	for (int i = 0; epo && i < dnnl_post_ops_len(epo); i++) {
		dnnl_alg_kind_t alg;
		float scale, alpha, beta;

		if (dnnl_post_ops_get_params_eltwise(epo, i, &scale, &alg, &alpha, &beta) !=
			dnnl_success ||
		    dnnl_post_ops_append_eltwise(po, scale, alg, alpha, beta) != dnnl_success)
			goto out;
	}
	if (dnnl_primitive_attr_clone(attr, c->attr) == dnnl_success &&
	    dnnl_primitive_attr_set_post_ops(*attr, po) == dnnl_success)
		ret = 0;
out:
	if (ea)
		dnnl_primitive_attr_destroy(ea);
	if (po)
		dnnl_post_ops_destroy(po);
	return ret;
}

/* Conv and ConvTranspose (oneDNN's deconvolution), 1-D to 3-D, any group count. */
int ho_cpu_prep_conv(struct ho_backend *c, const struct ho_graph *g, const struct ho_node *n,
		     const struct ho_node *bnn, const struct ho_node *sum,
		     const struct ho_node *post, void *const *buf, struct ho_kernel *k,
		     struct ho_error *err)
{
	/* bnn, sum, post: nodes folded in (see ho_fusion); the last one's output is
	 * written, for a sum over the residual already there (the executor put both
	 * in one place) */
	int32_t yid = post  ? post->outputs[0]
		      : sum ? sum->outputs[0]
		      : bnn ? bnn->outputs[0]
			    : n->outputs[0];
	const void *wptr = buf[n->inputs[1]],
		   *bptr = n->n_inputs > 2 && n->inputs[2] >= 0 ? buf[n->inputs[2]] : NULL;
	const struct ho_tensor *x = ho_node_input(g, n, 0), *w = ho_node_input(g, n, 1),
			       *y = &g->tensors[yid];
	dnnl_primitive_attr_t attr = NULL;

	if (bnn) {
		const float *fw, *fb;

		if (!w || w->shape.rank < 3 || ho_fold_bn(k, g, n, bnn, buf, &fw, &fb))
			return ho_err(err, -ENOMEM, "node '%s': cannot fold its batch norm",
				      n->name);
		wptr = fw;
		bptr = fb; /* the folded bias, whether or not the Conv had one */
	}
	bool deconv = !strcmp(n->op_type, "ConvTranspose");
	int64_t group = ho_node_attr_i(n, "group", 1), st[3], dl[3], pads[6], oc, ic;
	int sp = x ? x->shape.rank - 2 : 0; /* spatial axes: 1, 2 or 3 */
	dnnl_memory_desc_t xm, wm, bm, ym, wuser, conv_in, conv_out;
	dnnl_dims_t strides, dil, pl, pr, wd;
	union conv_desc d;
	dnnl_primitive_desc_t pd = NULL;
	const char *ap = ho_auto_pad(n);
	int ret = -ENOMEM;

	if (!x || !w || sp < 1 || sp > 3 || w->shape.rank != x->shape.rank ||
	    x->dtype != HO_DT_FLOAT)
		return ho_cpu_unsupported(err, n,
					  "runs float32 1-D, 2-D and 3-D convolutions only");
	if (!ho_node_attr_ints(n, "strides", st, (size_t)sp, 1) ||
	    !ho_node_attr_ints(n, "dilations", dl, (size_t)sp, 1) ||
	    !ho_node_attr_ints(n, "pads", pads, 2 * (size_t)sp, 0))
		return ho_cpu_unsupported(
		    err, n,
		    "needs strides/dilations of one value and pads of two per "
		    "spatial axis");
	if (group < 1 || x->shape.dim[1] % group)
		return ho_cpu_unsupported(err, n, "needs a group count that divides the channels");
	for (int i = 0; i < sp; i++) {
		int64_t in = x->shape.dim[2 + i], out = y->shape.dim[2 + i],
			kk = w->shape.dim[2 + i], span = (kk - 1) * dl[i] + 1, total;

		strides[i] = st[i];
		dil[i] = dl[i] - 1; /* oneDNN counts the gaps */
		if (deconv) {
			/* The right pad (with output_padding) that gives the inferred size. */
			pl[i] = strcmp(ap, "NOTSET") ? 0 : pads[i];
			pr[i] = (in - 1) * st[i] + span - pl[i] - out;
			continue;
		}
		total = (out - 1) * st[i] + span - in;
		if (!strcmp(ap, "SAME_UPPER") || !strcmp(ap, "SAME_LOWER")) {
			ho_same_pads(ap, total, &pl[i], &pr[i]);
		} else if (!strcmp(ap, "VALID")) {
			pl[i] = 0;
			pr[i] = total > 0 ? total : 0;
		} else {
			pl[i] = pads[i];
			pr[i] = pads[sp + i];
		}
	}
	ho_cpu_t_md(c, &xm, n->inputs[0], &x->shape);
	ho_cpu_t_md(c, &ym, yid, &y->shape);
	if ((sum && conv_sum_attr(c, g, post, buf, &attr)) ||
	    (!sum && post && ho_cpu_eltwise_attr(c, g, post, buf, false, &attr)))
		return ho_err(err, -ENOMEM, "node '%s': oneDNN post-ops failed", n->name);
	/*
	 * oneDNN has fast kernels for NCHW -> NCHW and NHWC -> NHWC only: the other
	 * way round a mixed pair falls to its reference kernel (resnet18's first
	 * conv: 1.6 s).  Convert the odd side on the way in or out instead.
	 */
	conv_in = xm;
	conv_out = ym;
	if (sp == 2 && c->channels_last &&
	    (c->channels_last[n->inputs[0]] || c->channels_last[yid])) {
		ho_cpu_t_md_nhwc(&conv_in, &x->shape);
		ho_cpu_t_md_nhwc(&conv_out, &y->shape);
	}
	/* ONNX weights: Conv [OC, IC/g, k...], ConvTranspose [IC, OC/g, k...]; oneDNN's
	 * tags by spatial rank: oiw/oihw/oidhw, iow..., goiw..., giow... */
	static const dnnl_format_tag_t wtag[2][2][3] = {
	    {{dnnl_abc, dnnl_abcd, dnnl_abcde}, {dnnl_bac, dnnl_bacd, dnnl_bacde}},
	    {{dnnl_abcd, dnnl_abcde, dnnl_abcdef}, {dnnl_acbd, dnnl_acbde, dnnl_acbdef}}};
	int g1 = group == 1 ? 0 : 1, wr = 2 + sp + g1;

	oc = y->shape.dim[1];
	ic = x->shape.dim[1];
	if (g1) {
		wd[0] = group;
		wd[1] = oc / group;
		wd[2] = ic / group;
	} else {
		wd[0] = oc;
		wd[1] = ic;
	}
	for (int i = 0; i < sp; i++)
		wd[2 + g1 + i] = w->shape.dim[2 + i];
	dnnl_memory_desc_init_by_tag(&wuser, wr, wd, dnnl_f32, wtag[g1][deconv][sp - 1]);
	/* weights a run computes are read as they are: no reorder at prepare could see them */
	if (bnn || ho_cpu_known(g, n->inputs[1]))
		dnnl_memory_desc_init_by_tag(&wm, wr, wd, dnnl_f32, dnnl_format_tag_any);
	else
		wm = wuser;
	if (bptr) {
		dnnl_dims_t bd = {oc};

		dnnl_memory_desc_init_by_tag(&bm, 1, bd, dnnl_f32, dnnl_a);
	}
	/* the kernel's bias and post-ops: a deconvolution's follow it (deconv_then) */
	bool then = deconv && (bptr || attr);
	const dnnl_memory_desc_t *kbias = bptr && !then ? &bm : NULL;
	const_dnnl_primitive_attr_t kattr = attr && !then ? attr : c->attr;

	if (conv_desc(&d, deconv, &conv_in, &wm, kbias, &conv_out, strides, dil, pl, pr) !=
		dnnl_success ||
	    dnnl_primitive_desc_create(&pd, &d, kattr, c->eng, NULL) != dnnl_success) {
		if (attr)
			dnnl_primitive_attr_destroy(attr);
		return ho_cpu_unsupported(err, n, "(oneDNN) has no kernel for these shapes");
	}
	/*
	 * A convolution between plain NCHW tensors gets oneDNN's gemm kernel:
	 * convnext_tiny's 7x7 depthwise on 96x56x56 took 9 ms; the PP-OCRv4
	 * detector's 96>24 3x3 at 80x80 beside an OpenCL device (which reads
	 * NCHW) 2.7 ms, 1.95 blocked.
	 * In the layout oneDNN picks for it (blocked channels), with the tensors
	 * reordered on the way in and out, it is a direct kernel.  Not for a
	 * handful of channels, where the two layouts are nearly one and oneDNN's
	 * brgconv on them wrote zeros (ONNX's 1>1 conformance convolutions).
	 */
	if ((group > 1 || (ic >= 8 && oc >= 8)) && ho_cpu_is_slow(pd)) {
		dnnl_memory_desc_t any_in, any_out;
		dnnl_primitive_desc_t fast = NULL;

		dnnl_memory_desc_init_by_tag(&any_in, x->shape.rank, conv_in.dims, dnnl_f32,
					     dnnl_format_tag_any);
		dnnl_memory_desc_init_by_tag(&any_out, y->shape.rank, conv_out.dims, dnnl_f32,
					     dnnl_format_tag_any);
		if (conv_desc(&d, deconv, &any_in, &wm, kbias, &any_out, strides, dil, pl, pr) ==
			dnnl_success &&
		    dnnl_primitive_desc_create(&fast, &d, kattr, c->eng, NULL) == dnnl_success &&
		    !ho_cpu_is_slow(fast)) {
			dnnl_primitive_desc_destroy(pd);
			pd = fast;
			conv_in = *dnnl_primitive_desc_query_md(pd, dnnl_query_src_md, 0);
			conv_out = *dnnl_primitive_desc_query_md(pd, dnnl_query_dst_md, 0);
		} else if (fast) {
			dnnl_primitive_desc_destroy(fast);
		}
	}
	/*
	 * bf16 and int8 where they can gain: not for weights a run computes (read as they
	 * come), nor a depthwise convolution (one input channel per group), nine products
	 * per input value, bound by memory, which the conversion on the way in only adds to:
	 * mnasnet0_5's on one core took 0.033-0.051 ms in float32, 0.044-0.058 in bf16,
	 * 0.057-0.086 in int8.
	 */
	bool reducible =
	    !deconv && wm.format_kind == dnnl_format_kind_any && !(group > 1 && ic == group);
	bool bf16 = k->want_bf16 && reducible &&
		    conv_bf16(c, kbias, strides, dil, pl, pr, kattr, &conv_in, &conv_out, &wm, &pd);
	struct ho_cpu_int8 *q8 = k->int8;
	int64_t wn = 1;
	float *ws = NULL;

	for (int i = 0; i < wr; i++)
		wn *= wd[i];
	bool int8 = !bf16 && q8 && q8->calibrated && reducible &&
		    conv_int8(c, q8, wptr, bptr, oc, wn / oc, kbias, strides, dil, pl, pr, kattr,
			      &xm, &wuser, &conv_in, &conv_out, &wm, &pd, &ws);

	if (reducible && !int8) /* asked int8, not calibrated: observe the input's range */
		ho_cpu_int8_observe_at(k, buf[n->inputs[0]], ho_shape_numel(&x->shape));
	if (!deconv && !sum && !bf16 && !int8 &&
	    ho_kernel_class(g, n) == HO_KC_CONV_3X3) /* the class the cost model prices */
		conv_winograd(c, &wm, kbias, strides, dil, pl, pr, kattr, &conv_in, &conv_out, &pd);
	if (ho_cpu_convert_attr(c, k, &xm, buf[n->inputs[0]], &conv_in, DNNL_ARG_SRC, true,
				int8 ? q8->src_attr : NULL) ||
	    (sum ? ho_cpu_convert_sum(c, k, &ym, buf[yid], &conv_out)
		 : ho_cpu_convert(c, k, &ym, buf[yid], &conv_out, DNNL_ARG_DST, false)) ||
	    (kbias && ho_cpu_mem(c, k, &bm, int8 && bptr ? q8->bias : (void *)bptr, DNNL_ARG_BIAS)))
		goto out;
	/* folded, they are the kernel's already */
	ret = int8 ? ho_cpu_int8_weights(c, k, pd, &wuser, wptr, oc, wn / oc, wn / oc, 1, ws)
		   : ho_cpu_weights(c, k, pd, &wuser, (void *)wptr,
				    !bnn && ho_cpu_takes_over(g, (uint32_t)(n - g->nodes)));
	if (!ret)
		ret = ho_cpu_prim(c, k, pd);
	k->precision = bf16 ? "bf16" : int8 ? "int8" : NULL;
	if (!ret && then)
		ret = deconv_then(c, k, &ym, buf[yid], (void *)bptr, oc, attr ? attr : c->attr);
out:
	free(ws);
	dnnl_primitive_desc_destroy(pd);
	if (attr)
		dnnl_primitive_attr_destroy(attr);
	return ret ? ho_err(err, ret, "node '%s' (%s): oneDNN set-up failed", n->name, n->op_type)
		   : 0;
}
