// SPDX-License-Identifier: MIT
/*
 * The CUDA backend's convolution, pooling, batch norm, MatMul and Gemm, and
 * the nodes the executor folds into a Conv or MatMul: its batch norm into the
 * weights, its post-op into the kernel (an activation) or after it, in place.
 * Weights go to device memory at prepare; a Conv with more than one input
 * channel a group runs as im2col into the device's scratch and a GEMM that
 * writes the output once.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cu.h"
#include "heteroopt/opsem.h"

/* The tensor a fused kernel writes: its post-op's output, else its batch norm's, else its own. */
static int32_t cu_fused_out(const struct cu_ctx *c)
{
	if (c->fuse && c->fuse->post >= 0)
		return c->g->nodes[c->fuse->post].outputs[0];
	if (c->fuse && c->fuse->bn >= 0)
		return c->g->nodes[c->fuse->bn].outputs[0];
	return c->n->outputs[0];
}

/* The folded post-op as an activation in the kernel; false: a binary node to run after it. */
static bool cu_post_act(const struct cu_ctx *c, struct ho_act_args *act)
{
	*act = (struct ho_act_args){HO_ACT_NONE, 0, 0};
	return !c->fuse || c->fuse->post < 0 || ho_act_of(c->g, c->fuse->post, act);
}

static int cu_post(const struct cu_ctx *c, bool act_only)
{
	const struct ho_node *p;

	if (act_only)
		return 0;
	p = &c->g->nodes[c->fuse->post];
	return cu_binary_at(c, p, p->outputs[0], true);
}

/* The graph library's window as the kernels take it; false: an attribute it cannot read. */
static bool cu_window_of(const struct cu_ctx *c, const struct ho_tensor *x,
			 const struct ho_tensor *y, const int64_t *ks, struct cu_window *w)
{
	struct ho_window h;

	if (!ho_window_of(c->n, x, y, ks, &h))
		return false;
	*w = (struct cu_window){(int)h.ks[0], (int)h.ks[1], (int)h.st[0], (int)h.st[1],
				(int)h.pd[0], (int)h.pd[1], (int)h.dl[0], (int)h.dl[1]};
	return true;
}

/* Input i of node n as float32 host memory (a constant, read at prepare); NULL: omitted. */
static const float *cu_host_f(const struct cu_ctx *c, const struct ho_node *n, uint32_t i)
{
	return i < n->n_inputs && n->inputs[i] >= 0 ? c->mem[n->inputs[i]].host : NULL;
}

/*
 * A convolution's weights, rows of per, and bias of nb (a Conv's output
 * channels; a ConvTranspose's weights are rows by input channel) in device
 * memory (owned 0 and 1), a Conv's batch norm folded in (rows = nb then);
 * *has_bias false where there is none.
 */
static int cu_conv_weights(const struct cu_ctx *c, int64_t rows, int64_t per, int64_t nb,
			   bool *has_bias)
{
	const struct ho_node *bn = c->fuse && c->fuse->bn >= 0 ? &c->g->nodes[c->fuse->bn] : NULL;
	const float *w = cu_host_f(c, c->n, 1), *b = cu_host_f(c, c->n, 2);
	size_t nw = (size_t)(rows * per);
	float *fw;
	int ret;

	*has_bias = b || bn;
	if (!c->b)
		return 0;
	if (!w)
		return ho_err(c->err, -EFAULT, "internal: node '%s': its weights are not at hand",
			      c->n->name);
	if (!(fw = malloc((nw + (size_t)nb) * sizeof(float))))
		return ho_err(c->err, -ENOMEM, "out of memory");
	if (bn) {
		ho_bn_fold(bn,
			   (const float *const[4]){cu_host_f(c, bn, 1), cu_host_f(c, bn, 2),
						   cu_host_f(c, bn, 3), cu_host_f(c, bn, 4)},
			   w, b, rows, per, fw, fw + nw);
	} else {
		memcpy(fw, w, nw * sizeof(float));
		if (b)
			memcpy(fw + nw, b, (size_t)nb * sizeof(float));
		else
			memset(fw + nw, 0, (size_t)nb * sizeof(float));
	}
	ret = cu_owned(c, 0, fw, nw * sizeof(float));
	if (!ret)
		ret = cu_owned(c, 1, fw + nw, (size_t)nb * sizeof(float));
	free(fw);
	return ret;
}

/* A GEMM operand: a device address and an offset in floats, or the device's scratch. */
struct cu_operand {
	CUdeviceptr p;
	long off;
	bool scratch;
};

static struct cu_operand cu_op_tensor(const struct cu_ctx *c, int32_t t, long plus)
{
	return (struct cu_operand){c->b ? c->mem[t].block->dptr : 0,
				   c->b ? (long)(c->mem[t].off / sizeof(float)) + plus : 0, false};
}

static struct cu_operand cu_op_owned(const struct cu_ctx *c, int i)
{
	return (struct cu_operand){c->b ? c->k->owned[i] : 0, 0, false};
}

static void cu_param_operand(struct cu_launch *l, struct cu_operand o)
{
	if (o.scratch)
		cu_param_scratch(l);
	else
		cu_param_ptr(l, o.p);
	cu_param_long(l, o.off);
}

/*
 * C = act(alpha A B + beta bias), batch on the grid's third axis.  Where its
 * 64 x 64 tiles are too few to fill the GPU (a batch of one image: 8 to 49
 * tiles in a CNN's layers), K is split over more blocks that add into C,
 * zeroed first, and bias_act finishes it.
 */
static int cu_gemm(const struct cu_ctx *c, struct cu_gemm_shape *s, int batch, struct cu_operand y,
		   struct cu_operand a, struct cu_operand b, struct cu_operand bias,
		   const struct ho_act_args *act)
{
	long tiles = (long)((s->N + 63) / 64) * ((s->M + 63) / 64), n = (long)s->M * s->N;
	int splits = 1, ret;
	struct cu_launch *l;

	if (batch == 1 && s->ldc == s->N)
		while (tiles * splits < 256 && s->K / (splits * 2) >= 128)
			splits *= 2;
	s->splits = splits;
	if (splits > 1) {
		if (!(l = cu_new_launch(c, "fill0", n)))
			return cu_launch_done(c, l);
		cu_param_operand(l, y);
		cu_param_long(l, n);
		if ((ret = cu_launch_done(c, l)))
			return ret;
	}
	if (!(l = cu_new_launch(c, "gemm", 0)))
		return cu_launch_done(c, l);
	l->grid[0] = (unsigned)((s->N + 63) / 64);
	l->grid[1] = (unsigned)((s->M + 63) / 64);
	l->grid[2] = (unsigned)(splits > 1 ? splits : batch);
	cu_param_operand(l, y);
	cu_param_operand(l, a);
	cu_param_operand(l, b);
	cu_param_operand(l, bias);
	cu_param(l, s, sizeof(*s), 8);
	cu_param_act(l, act);
	if ((ret = cu_launch_done(c, l)) || splits == 1)
		return ret;
	if (!(l = cu_new_launch(c, "bias_act", n)))
		return cu_launch_done(c, l);
	cu_param_operand(l, y);
	cu_param_operand(l, bias);
	cu_param(l, s, sizeof(*s), 8);
	cu_param_act(l, act);
	cu_param_long(l, n);
	return cu_launch_done(c, l);
}

/* Conv of one group as im2col and GEMM per image (a pointwise one: GEMM alone). */
static int cu_conv_gemm(const struct cu_ctx *c, const struct cu_window *win, bool has_bias,
			const struct ho_act_args *act)
{
	const struct ho_tensor *x = ho_node_input(c->g, c->n, 0),
			       *yt = &c->g->tensors[c->n->outputs[0]];
	int64_t N = x->shape.dim[0], C = x->shape.dim[1], H = x->shape.dim[2], W = x->shape.dim[3];
	int64_t K = yt->shape.dim[1], OH = yt->shape.dim[2], OW = yt->shape.dim[3];
	int64_t P = OH * OW, R = C * win->kh * win->kw;
	int32_t y = cu_fused_out(c), xt = c->n->inputs[0];
	/* a pointwise convolution's columns are its input as it is */
	bool direct = win->kh == 1 && win->kw == 1 && win->sh == 1 && win->sw == 1 && !win->ph &&
		      !win->pw && P == H * W;
	struct cu_gemm_shape s = {
	    .M = (int)K,
	    .N = (int)P,
	    .K = (int)R,
	    .bm = 1,
	    .has_bias = has_bias,
	    .lda = R,
	    .ldb = P,
	    .ldc = P,
	    .alpha = 1,
	    .beta = 1,
	};
	long n = (long)(R * P);
	struct cu_launch *l;
	int ret;

	if (!direct && (ret = cu_need_scratch(c, (size_t)n * sizeof(float))))
		return ret;
	for (int64_t img = 0; img < N; img++) {
		if (!direct) {
			if (!(l = cu_new_launch(c, "im2col", n)))
				return cu_launch_done(c, l);
			cu_param_scratch(l);
			cu_param_long(l, 0);
			cu_param_tensor_at(l, c, xt, (long)(img * C * H * W));
			cu_param_long(l, n);
			cu_param_int(l, (int)H);
			cu_param_int(l, (int)W);
			cu_param_int(l, (int)OH);
			cu_param_int(l, (int)OW);
			cu_param(l, win, sizeof(*win), 4);
			if ((ret = cu_launch_done(c, l)))
				return ret;
		}
		ret = cu_gemm(c, &s, 1, cu_op_tensor(c, y, (long)(img * K * P)), cu_op_owned(c, 0),
			      direct ? cu_op_tensor(c, xt, (long)(img * C * H * W))
				     : (struct cu_operand){0, 0, true},
			      cu_op_owned(c, 1), act);
		if (ret)
			return ret;
	}
	return 0;
}

/*
 * Conv 2-D (any groups, strides, pads, dilations), constant weights, a batch
 * norm folded in, its post-op.  One group of several input channels runs as
 * im2col and GEMM; grouped and depthwise convolutions run direct.
 */
/*
 * Conv or ConvTranspose 2-D with constant weights, its window and groups read:
 * false where it is not one the kernels take.  A ConvTranspose's weights are
 * [C, K/G, KH, KW], a Conv's [K, C/G, KH, KW].
 */
static bool cu_conv_of(const struct cu_ctx *c, bool transposed, struct cu_window *win)
{
	const struct ho_tensor *x = ho_node_input(c->g, c->n, 0), *w = ho_node_input(c->g, c->n, 1),
			       *b = ho_node_input(c->g, c->n, 2),
			       *yt = &c->g->tensors[c->n->outputs[0]];
	int64_t G = ho_node_attr_i(c->n, "group", 1), C, K;

	if (!x || !w || x->shape.rank != 4 || w->shape.rank != 4 || yt->shape.rank != 4 ||
	    !(w->flags & HO_T_KNOWN) || (b && !(b->flags & HO_T_KNOWN)) || G < 1)
		return false;
	C = x->shape.dim[1], K = yt->shape.dim[1];
	if (C % G || K % G || w->shape.dim[0] != (transposed ? C : K) ||
	    w->shape.dim[1] != (transposed ? K : C) / G)
		return false;
	return cu_window_of(c, x, yt, &w->shape.dim[2], win);
}

/* A direct (transposed) convolution, one output element a thread. */
static int cu_direct_conv(const struct cu_ctx *c, const char *kernel, const struct cu_window *win,
			  bool has_bias, const struct ho_act_args *act)
{
	const struct ho_tensor *x = ho_node_input(c->g, c->n, 0),
			       *yt = &c->g->tensors[c->n->outputs[0]];
	long n = (long)ho_shape_numel(&yt->shape);
	struct cu_launch *l;

	if (!(l = cu_new_launch(c, kernel, n)))
		return cu_launch_done(c, l);
	cu_param_tensor(l, c, cu_fused_out(c));
	cu_param_tensor(l, c, c->n->inputs[0]);
	cu_param_ptr(l, c->b ? c->k->owned[0] : 0);
	cu_param_ptr(l, c->b ? c->k->owned[1] : 0);
	cu_param_int(l, has_bias);
	for (int k = 1; k < 4; k++)
		cu_param_int(l, (int)x->shape.dim[k]);
	for (int k = 1; k < 4; k++)
		cu_param_int(l, (int)yt->shape.dim[k]);
	cu_param(l, win, sizeof(*win), 4);
	cu_param_int(l, (int)ho_node_attr_i(c->n, "group", 1));
	cu_param_long(l, n);
	cu_param_act(l, act);
	return cu_launch_done(c, l);
}

/*
 * Conv 2-D (any groups, strides, pads, dilations), constant weights, a batch
 * norm folded in, its post-op.  One group of several input channels runs as
 * im2col and GEMM; grouped and depthwise convolutions run direct.
 */
int cu_prep_conv(const struct cu_ctx *c)
{
	const struct ho_tensor *x = ho_node_input(c->g, c->n, 0),
			       *yt = &c->g->tensors[c->n->outputs[0]];
	int64_t G = ho_node_attr_i(c->n, "group", 1), C, K;
	struct cu_window win;
	struct ho_act_args act;
	bool act_only = cu_post_act(c, &act), has_bias;
	int ret;

	if (!cu_conv_of(c, false, &win))
		return cu_refuse(c, "runs 2-D convolutions with constant weights and readable "
				    "strides, pads, dilations and groups only");
	C = x->shape.dim[1], K = yt->shape.dim[1];
	if ((ret = cu_conv_weights(c, K, C / G * win.kh * win.kw, K, &has_bias)))
		return ret;
	ret = G == 1 && C > 1 ? cu_conv_gemm(c, &win, has_bias, &act)
			      : cu_direct_conv(c, "conv2d", &win, has_bias, &act);
	return ret ? ret : cu_post(c, act_only);
}

/*
 * ConvTranspose 2-D (groups, strides, pads, dilations; output_padding and
 * output_shape through the output's inferred extent), its bias, a post-op.
 * Explicit pads only: auto_pad would need the output's extents split again.
 */
int cu_prep_conv_transpose(const struct cu_ctx *c)
{
	const struct ho_tensor *x = ho_node_input(c->g, c->n, 0),
			       *yt = &c->g->tensors[c->n->outputs[0]];
	struct cu_window win;
	struct ho_act_args act;
	bool act_only = cu_post_act(c, &act), has_bias;
	int ret;

	if (strcmp(ho_auto_pad(c->n), "NOTSET") || (c->fuse && c->fuse->bn >= 0) ||
	    !cu_conv_of(c, true, &win))
		return cu_refuse(c, "runs 2-D transposed convolutions with constant weights and "
				    "explicit pads only");
	/* [C, K/G, KH, KW] as it is: the kernel indexes it so */
	ret = cu_conv_weights(c, x->shape.dim[1],
			      yt->shape.dim[1] / ho_node_attr_i(c->n, "group", 1) * win.kh * win.kw,
			      yt->shape.dim[1], &has_bias);
	if (!ret)
		ret = cu_direct_conv(c, "conv_transpose2d", &win, has_bias, &act);
	return ret ? ret : cu_post(c, act_only);
}

/* MaxPool, AveragePool 2-D; the output's extent (ceil_mode) from shape inference. */
int cu_prep_pool(const struct cu_ctx *c)
{
	const struct ho_tensor *x = ho_node_input(c->g, c->n, 0),
			       *yt = &c->g->tensors[c->n->outputs[0]];
	bool avg = !strcmp(c->n->op_type, "AveragePool");
	int64_t ks[2];
	struct cu_window win;
	struct cu_launch *l;
	long n;

	if (!x || x->shape.rank != 4 || yt->shape.rank != 4 ||
	    (c->n->n_outputs > 1 && c->n->outputs[1] >= 0))
		return cu_refuse(c, "runs 2-D pooling without indices only");
	if (!ho_node_attr_ints(c->n, "kernel_shape", ks, 2, 1) || !cu_window_of(c, x, yt, ks, &win))
		return cu_refuse(c, "cannot read its kernel shape, strides, pads or dilations");
	n = (long)ho_shape_numel(&yt->shape);
	if (!(l = cu_new_launch(c, "pool2d", n)))
		return cu_launch_done(c, l);
	cu_param_tensor(l, c, c->n->outputs[0]);
	cu_param_tensor(l, c, c->n->inputs[0]);
	cu_param_int(l, (int)x->shape.dim[2]);
	cu_param_int(l, (int)x->shape.dim[3]);
	cu_param_int(l, (int)yt->shape.dim[2]);
	cu_param_int(l, (int)yt->shape.dim[3]);
	cu_param(l, &win, sizeof(win), 4);
	cu_param_int(l, avg ? (ho_node_attr_i(c->n, "count_include_pad", 0) ? 2 : 1) : 0);
	cu_param_long(l, n);
	return cu_launch_done(c, l);
}

/* GlobalAveragePool, GlobalMaxPool: a block reduces each (image, channel). */
int cu_prep_global_pool(const struct cu_ctx *c)
{
	const struct ho_tensor *x = ho_node_input(c->g, c->n, 0);
	int64_t len = 1;
	struct cu_launch *l;

	if (!x || x->shape.rank < 3)
		return cu_refuse(c, "needs a spatial input");
	for (int k = 2; k < x->shape.rank; k++)
		len *= x->shape.dim[k];
	if (!(l = cu_new_launch(c, "row_reduce", 0)))
		return cu_launch_done(c, l);
	l->grid[0] = (unsigned)(x->shape.dim[0] * x->shape.dim[1]);
	cu_param_tensor(l, c, c->n->outputs[0]);
	cu_param_tensor(l, c, c->n->inputs[0]);
	cu_param_long(l, (long)len);
	cu_param_int(l, !strcmp(c->n->op_type, "GlobalAveragePool"));
	return cu_launch_done(c, l);
}

/* Inference BatchNormalization: a scale and shift per channel, computed at prepare. */
int cu_prep_batchnorm(const struct cu_ctx *c)
{
	const struct ho_tensor *x = ho_node_input(c->g, c->n, 0);
	int64_t C, inner = 1;
	struct cu_launch *l;
	float *ss;
	long n;
	int ret = 0;

	if (!x || x->shape.rank < 2 || c->n->n_inputs < 5)
		return cu_refuse(c, "needs an input of at least two axes");
	if (c->fuse && c->fuse->post >= 0) /* ho_bn_chain's Relu: it runs on its own here */
		return cu_refuse(c, "folds no Relu into its kernel");
	if (ho_node_attr_i(c->n, "training_mode", 0) ||
	    (c->n->n_outputs > 1 && c->n->outputs[1] >= 0))
		return cu_refuse(c, "normalises by its running statistics only (no training mode)");
	for (uint32_t k = 1; k < 5; k++)
		if (c->n->inputs[k] < 0 || !(c->g->tensors[c->n->inputs[k]].flags & HO_T_KNOWN))
			return cu_refuse(c, "runs batch norms of constant parameters only");
	C = x->shape.dim[1];
	for (int k = 2; k < x->shape.rank; k++)
		inner *= x->shape.dim[k];
	if (c->b) { /* a weight of 1 a channel, folded: its scale, then its shift */
		if (!(ss = malloc(3 * (size_t)C * sizeof(float))))
			return ho_err(c->err, -ENOMEM, "out of memory");
		for (int64_t k = 0; k < C; k++)
			ss[2 * C + k] = 1.0f;
		ho_bn_fold(c->n,
			   (const float *const[4]){cu_host_f(c, c->n, 1), cu_host_f(c, c->n, 2),
						   cu_host_f(c, c->n, 3), cu_host_f(c, c->n, 4)},
			   ss + 2 * C, NULL, C, 1, ss, ss + C);
		ret = cu_owned(c, 0, ss, 2 * (size_t)C * sizeof(float));
		free(ss);
		if (ret)
			return ret;
	}
	n = (long)ho_shape_numel(&x->shape);
	if (!(l = cu_new_launch(c, "channel_affine", n)))
		return cu_launch_done(c, l);
	cu_param_tensor(l, c, c->n->outputs[0]);
	cu_param_tensor(l, c, c->n->inputs[0]);
	cu_param_ptr(l, c->b ? c->k->owned[0] : 0);
	cu_param_long(l, n);
	cu_param_int(l, (int)C);
	cu_param_int(l, (int)inner);
	return cu_launch_done(c, l);
}

/*
 * MatMul (a bias Add folded) and Gemm: batches where both sides are batched
 * alike, or one B for every batch of A; a bias of [M,N], [N], [M,1] or a scalar.
 */
int cu_prep_matmul(const struct cu_ctx *c)
{
	const struct ho_tensor *A = ho_node_input(c->g, c->n, 0), *B = ho_node_input(c->g, c->n, 1);
	bool gemm = !strcmp(c->n->op_type, "Gemm"), act_only;
	int32_t ct = -1, y = cu_fused_out(c);
	struct cu_gemm_shape s = {.alpha = 1, .beta = 1};
	int64_t batch = 1, M, N, K;
	struct ho_act_args act;
	int ra, rb, ret;

	if (!A || !B || A->shape.rank < 1 || B->shape.rank < 1)
		return cu_refuse(c, "needs both operands");
	ra = A->shape.rank, rb = B->shape.rank;
	s.ta = gemm && ho_node_attr_i(c->n, "transA", 0);
	s.tb = gemm && ho_node_attr_i(c->n, "transB", 0);
	K = s.ta ? A->shape.dim[ra - 2] : A->shape.dim[ra - 1];
	M = ra == 1 ? 1 : s.ta ? A->shape.dim[ra - 1] : A->shape.dim[ra - 2];
	N = rb == 1 ? 1 : s.tb ? B->shape.dim[rb - 2] : B->shape.dim[rb - 1];
	for (int k = 0; k < ra - 2; k++)
		batch *= A->shape.dim[k];
	if (rb > 2) {
		int64_t bb = 1;

		for (int k = 0; k < rb - 2; k++)
			bb *= B->shape.dim[k];
		if (ra > 2 && (bb != batch || ra != rb))
			return cu_refuse(c, "runs MatMul batches of one shape on both sides only");
		batch = bb;
	}
	s.M = (int)M, s.N = (int)N, s.K = (int)K;
	s.lda = s.ta ? M : K, s.ldb = s.tb ? K : N, s.ldc = N;
	s.sa = ra > 2 ? M * K : 0, s.sb = rb > 2 ? K * N : 0, s.sc = M * N;
	if (gemm) {
		s.alpha = ho_node_attr_f(c->n, "alpha", 1);
		s.beta = ho_node_attr_f(c->n, "beta", 1);
		ct = c->n->n_inputs > 2 ? c->n->inputs[2] : -1;
	} else if (c->fuse && c->fuse->bn >= 0) { /* the bias Add's other operand */
		const struct ho_node *add = &c->g->nodes[c->fuse->bn];

		ct = add->inputs[0] == c->n->outputs[0] ? add->inputs[1] : add->inputs[0];
	}
	if (ct >= 0) {
		const struct ho_shape *cs = &c->g->tensors[ct].shape;
		int64_t cm = cs->rank >= 2 ? cs->dim[cs->rank - 2] : 1,
			cn = cs->rank >= 1 ? cs->dim[cs->rank - 1] : 1;

		if ((cm != 1 && cm != M) || (cn != 1 && cn != N) || ho_shape_numel(cs) != cm * cn)
			return cu_refuse(c, "adds a bias of [M,N], [N], [M,1] or a scalar only");
		s.bm = cm == 1 ? 0 : (int)cn;
		s.bn = cn == 1 ? 0 : 1;
		s.has_bias = 1;
	}
	/* batches of A against one B: one GEMM of batch * M rows (bias rows repeat per batch) */
	if (!s.sb && !s.ta && batch > 1 && !s.bm) {
		s.M = (int)(M * batch);
		batch = 1;
	}
	act_only = cu_post_act(c, &act);
	ret = cu_gemm(c, &s, (int)batch, cu_op_tensor(c, y, 0), cu_op_tensor(c, c->n->inputs[0], 0),
		      cu_op_tensor(c, c->n->inputs[1], 0),
		      cu_op_tensor(c, ct >= 0 ? ct : c->n->inputs[0], 0), &act);
	return ret ? ret : cu_post(c, act_only);
}
