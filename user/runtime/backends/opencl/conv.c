// SPDX-License-Identifier: MIT
/*
 * The OpenCL backend's convolution, pooling and batch-norm operators, and
 * the nodes the executor folds into a Conv or MatMul: its batch norm into the
 * weights, its post-op into the kernel.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heteroopt/opsem.h"
#include "ocl.h"

int32_t ocl_fused_out(const struct ocl_ctx *c)
{
	if (c->fuse && c->fuse->post >= 0)
		return c->g->nodes[c->fuse->post].outputs[0];
	if (c->fuse && c->fuse->bn >= 0)
		return c->g->nodes[c->fuse->bn].outputs[0];
	return c->n->outputs[0];
}

/* One work-item per output element of an NCHW tensor y: (x, y, n * c). */
static void ocl_grid_nchw(struct ocl_launch *l, const struct ho_tensor *y)
{
	l->dims = 3;
	l->global[0] = (size_t)y->shape.dim[3];
	l->global[1] = (size_t)y->shape.dim[2];
	l->global[2] = (size_t)(y->shape.dim[0] * y->shape.dim[1]);
}

/* A launch of a spatial kernel: output y, input x, then x's and y's height and width. */
struct ocl_launch *ocl_spatial(const struct ocl_ctx *c, const char *name, const struct ho_tensor *x,
			       const struct ho_tensor *y, struct ocl_args *a)
{
	struct ocl_launch *l = ocl_launch_yx(c, name, c->n->outputs[0], c->n->inputs[0], a);

	if (!l)
		return NULL;
	ocl_arg_int(a, (int)x->shape.dim[2]);
	ocl_arg_int(a, (int)x->shape.dim[3]);
	ocl_arg_int(a, (int)y->shape.dim[2]);
	ocl_arg_int(a, (int)y->shape.dim[3]);
	ocl_grid_nchw(l, y);
	return l;
}

/*
 * A Conv's or MatMul's folded post-op: an activation run inside its kernel (act),
 * or, where it is none (false), a binary node by a constant run in place after it.
 */
bool ocl_post_act(const struct ocl_ctx *c, struct ho_act_args *act)
{
	*act = (struct ho_act_args){HO_ACT_NONE, 0, 0};
	return !c->fuse || c->fuse->post < 0 || ho_act_of(c->g, c->fuse->post, act);
}

/* The post-op ocl_post_act left out, after the kernel, on its output in place. */
int ocl_post_binary(const struct ocl_ctx *c)
{
	const struct ho_node *p = &c->g->nodes[c->fuse->post];

	return ocl_binary_at(c, p, p->outputs[0], true);
}

/* Input i of node n as float32 host memory (a constant, read at prepare time); NULL: omitted. */
static const float *ocl_host_f(const struct ocl_ctx *c, const struct ho_node *n, uint32_t i)
{
	return i < n->n_inputs && n->inputs[i] >= 0 ? c->mem[n->inputs[i]].host : NULL;
}

/* A batch norm's gamma, beta, mean and var, for ho_bn_fold. */
#define BN_PARAMS(c, bn)                                                                           \
	ocl_host_f(c, bn, 1), ocl_host_f(c, bn, 2), ocl_host_f(c, bn, 3), ocl_host_f(c, bn, 4)

/* A direct convolution's geometry, as conv2d and conv_transpose2d take it: C, H, W of x,
 * K, OH, OW of y, the window, the groups. */
static void ocl_arg_conv(struct ocl_args *a, const struct ho_tensor *x, const struct ho_tensor *y,
			 const struct ho_window *win, int64_t G)
{
	for (int k = 1; k < 4; k++)
		ocl_arg_int(a, (int)x->shape.dim[k]);
	for (int k = 1; k < 4; k++)
		ocl_arg_int(a, (int)y->shape.dim[k]);
	ocl_arg_window(a, win);
	ocl_arg_int(a, (int)G);
}

int ocl_conv_weights(const struct ocl_ctx *c, cl_mem *wm, long *wo, cl_mem *bm, long *bo,
		     bool *has_bias)
{
	const struct ho_tensor *x = ho_node_input(c->g, c->n, 0), *w = ho_node_input(c->g, c->n, 1);
	int64_t K = w->shape.dim[0], G = ho_node_attr_i(c->n, "group", 1);
	int64_t per = x->shape.dim[1] / G * w->shape.dim[2] * w->shape.dim[3];
	const struct ho_node *bn;
	float *fw;
	int ret;

	*has_bias = ho_node_input(c->g, c->n, 2) != NULL;
	if (!c->fuse || c->fuse->bn < 0) {
		*wm = ocl_buf(c, c->n->inputs[1]);
		*wo = (long)(c->mem[c->n->inputs[1]].off / sizeof(float));
		*bm = *has_bias ? ocl_buf(c, c->n->inputs[2]) : *wm;
		*bo = *has_bias ? (long)(c->mem[c->n->inputs[2]].off / sizeof(float)) : 0;
		return 0;
	}
	bn = &c->g->nodes[c->fuse->bn];
	if (!(fw = malloc((size_t)(K * per + K) * sizeof(float))))
		return ho_err(c->err, -ENOMEM, "out of memory");
	ho_bn_fold(bn, (const float *const[4]){BN_PARAMS(c, bn)}, ocl_host_f(c, c->n, 1),
		   ocl_host_f(c, c->n, 2), K, per, fw, fw + K * per);
	ret = ocl_owned(c, 0, fw, (size_t)(K * per) * sizeof(float));
	if (!ret)
		ret = ocl_owned(c, 1, fw + K * per, (size_t)K * sizeof(float));
	free(fw);
	*wm = c->k->owned[0];
	*bm = c->k->owned[1];
	*wo = *bo = 0;
	*has_bias = true;
	return ret;
}

/*
 * A direct convolution, one output element a work-item (conv2d,
 * conv_transpose2d): weights (a batch norm folded in), bias, the window, the
 * groups, its post-op in the kernel or in place after it.
 */
static int ocl_direct_conv(const struct ocl_ctx *c, const char *kernel, const struct ho_window *win)
{
	const struct ho_tensor *x = ho_node_input(c->g, c->n, 0),
			       *yt = &c->g->tensors[c->n->outputs[0]];
	struct ho_act_args act;
	struct ocl_launch *l;
	struct ocl_args a;
	cl_mem wm, bm;
	long wo, bo;
	bool act_only = ocl_post_act(c, &act), has_bias;
	int ret;

	if ((ret = ocl_conv_weights(c, &wm, &wo, &bm, &bo, &has_bias)))
		return ret;
	if (!(l = ocl_launch_yx(c, kernel, ocl_fused_out(c), c->n->inputs[0], &a)))
		return ocl_no_kernel(c);
	ocl_arg_buf(&a, wm);
	ocl_arg_long(&a, wo);
	ocl_arg_buf(&a, bm);
	ocl_arg_long(&a, bo);
	ocl_arg_int(&a, has_bias);
	ocl_arg_conv(&a, x, yt, win, ho_node_attr_i(c->n, "group", 1));
	ocl_arg_act(&a, &act);
	ocl_grid_nchw(l, yt);
	if (ocl_args_done(c, &a))
		return c->err->code;
	return act_only ? 0 : ocl_post_binary(c);
}

/*
 * Conv or ConvTranspose 2-D with constant weights, its window and groups read:
 * false where it is not one the kernels take.  A ConvTranspose's weights are
 * [C, K/G, KH, KW], a Conv's [K, C/G, KH, KW].
 */
static bool ocl_conv_of(const struct ocl_ctx *c, bool transposed, struct ho_window *win)
{
	const struct ho_tensor *x = ho_node_input(c->g, c->n, 0), *w = ho_node_input(c->g, c->n, 1),
			       *b = ho_node_input(c->g, c->n, 2);
	const struct ho_tensor *yt = &c->g->tensors[c->n->outputs[0]];
	int64_t G = ho_node_attr_i(c->n, "group", 1), C, K;

	if (!x || !w || x->shape.rank != 4 || w->shape.rank != 4 || yt->shape.rank != 4 ||
	    !(w->flags & HO_T_KNOWN) || (b && !(b->flags & HO_T_KNOWN)) || G < 1)
		return false;
	C = x->shape.dim[1], K = yt->shape.dim[1];
	if (C % G || K % G || w->shape.dim[0] != (transposed ? C : K) ||
	    w->shape.dim[1] != (transposed ? K : C) / G)
		return false;
	return ho_window_of(c->n, x, yt, &w->shape.dim[2], win);
}

/*
 * Conv 2-D (any groups, strides, padding, dilation), a batch norm folded into
 * its weights, its post-op in the kernel.  Depthwise convolutions run direct;
 * the others as im2col and GEMM (gemm.c).
 */
int ocl_prep_conv(const struct ocl_ctx *c)
{
	const struct ho_tensor *w = ho_node_input(c->g, c->n, 1);
	struct ho_window win;

	if (!ocl_conv_of(c, false, &win))
		return ocl_refuse(c, "runs 2-D convolutions with constant weights and readable "
				     "strides, pads, dilations and groups only");
	return w->shape.dim[1] > 1 ? ocl_prep_conv_gemm(c, &win)
				   : ocl_direct_conv(c, "conv2d", &win);
}

/*
 * ConvTranspose 2-D (groups, strides, pads, dilations; output_padding and
 * output_shape through the output's inferred extent), its bias, a post-op.
 * Explicit pads only: auto_pad would need the output's extents split again.
 */
int ocl_prep_conv_transpose(const struct ocl_ctx *c)
{
	struct ho_window win;

	if (strcmp(ho_auto_pad(c->n), "NOTSET") || (c->fuse && c->fuse->bn >= 0) ||
	    !ocl_conv_of(c, true, &win))
		return ocl_refuse(c, "runs 2-D transposed convolutions with constant weights and "
				     "explicit pads only");
	return ocl_direct_conv(c, "conv_transpose2d", &win);
}

/* MaxPool, AveragePool 2-D; the output's extent (ceil_mode) from shape inference. */
int ocl_prep_pool(const struct ocl_ctx *c)
{
	const struct ho_tensor *x = ho_node_input(c->g, c->n, 0),
			       *yt = &c->g->tensors[c->n->outputs[0]];
	bool avg = !strcmp(c->n->op_type, "AveragePool");
	int64_t ks[2];
	struct ho_window win;
	struct ocl_launch *l;
	struct ocl_args a;

	if (!x || x->shape.rank != 4 || yt->shape.rank != 4 ||
	    (c->n->n_outputs > 1 && c->n->outputs[1] >= 0))
		return ocl_refuse(c, "runs 2-D pooling without indices only");
	if (!ho_node_attr_ints(c->n, "kernel_shape", ks, 2, 1) ||
	    !ho_window_of(c->n, x, yt, ks, &win))
		return ocl_refuse(c, "cannot read its kernel shape, strides, pads or dilations");
	if (!(l = ocl_spatial(c, "pool2d", x, yt, &a)))
		return ocl_no_kernel(c);
	ocl_arg_window(&a, &win);
	ocl_arg_int(&a, avg ? (ho_node_attr_i(c->n, "count_include_pad", 0) ? 2 : 1) : 0);
	return ocl_args_done(c, &a);
}

/* Inference BatchNormalization: an affine map per channel computed at prepare. */
int ocl_prep_batchnorm(const struct ocl_ctx *c)
{
	const struct ho_tensor *x = ho_node_input(c->g, c->n, 0);
	int64_t C, inner = 1;
	float *ss;
	struct ocl_launch *l;
	struct ocl_args a;
	int ret;

	if (!x || x->shape.rank < 2 || c->n->n_inputs < 5)
		return ocl_refuse(c, "needs an input of at least two axes");
	if (c->fuse && c->fuse->post >= 0) /* ho_bn_chain's Relu: it runs on its own here */
		return ocl_refuse(c, "folds no Relu into its kernel");
	if (ho_node_attr_i(c->n, "training_mode", 0) ||
	    (c->n->n_outputs > 1 && c->n->outputs[1] >= 0))
		return ocl_refuse(c,
				  "normalises by its running statistics only (no training mode)");
	for (uint32_t k = 1; k < 5; k++)
		if (c->n->inputs[k] < 0 || !(c->g->tensors[c->n->inputs[k]].flags & HO_T_KNOWN))
			return ocl_refuse(c, "runs batch norms of constant parameters only");
	C = x->shape.dim[1];
	for (int k = 2; k < x->shape.rank; k++)
		inner *= x->shape.dim[k];
	/* the batch norm folded into a weight of 1 per channel: its scale, then its shift */
	if (!(ss = malloc(3 * (size_t)C * sizeof(float))))
		return ho_err(c->err, -ENOMEM, "out of memory");
	for (int64_t k = 0; k < C; k++)
		ss[2 * C + k] = 1.0f;
	ho_bn_fold(c->n, (const float *const[4]){BN_PARAMS(c, c->n)}, ss + 2 * C, NULL, C, 1, ss,
		   ss + C);
	ret = ocl_owned(c, 0, ss, 2 * (size_t)C * sizeof(float));
	free(ss);
	if (ret)
		return ret;
	if (!(l = ocl_launch_yx(c, "channel_affine", c->n->outputs[0], c->n->inputs[0], &a)))
		return ocl_no_kernel(c);
	ocl_arg_buf(&a, c->k->owned[0]);
	ocl_arg_int(&a, (int)C);
	ocl_arg_int(&a, (int)inner);
	l->dims = 1;
	l->global[0] = (size_t)ho_shape_numel(&x->shape);
	return ocl_args_done(c, &a);
}
