// SPDX-License-Identifier: MIT
/*
 * The OpenCL backend's operators: one prepare per operator family, listed
 * once in ocl_ops[] (this file: normalisation and Resize; movement.c,
 * reduce.c, gemm.c, conv.c and eltwise.c the others).  A prepare checks what it runs (float32, the
 * ranks and attributes its kernel handles), sets its kernels' arguments over the tensors' (buffer,
 * offset) handles once, and leaves launching to device.c. Anything else is refused with the node's
 * name and what is missing.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heteroopt/opsem.h"
#include "ocl.h"

static int ocl_prep_softmax(const struct ocl_ctx *c)
{
	const struct ho_tensor *x = ho_node_input(c->g, c->n, 0);
	int64_t axis = ho_node_attr_i(c->n, "axis", c->n->opset < 13 ? 1 : -1), len = 1, inner = 1;
	struct ocl_launch *l;
	struct ocl_args a;

	if (!x || !x->shape.rank)
		return ocl_refuse(c, "needs an input of one axis or more");
	if (axis < 0)
		axis += x->shape.rank;
	if (axis < 0 || axis >= x->shape.rank)
		return ocl_refuse(c, "has an axis out of range");
	/* before opset 13 the input is flattened to 2-D at axis */
	for (int k = (int)axis; k < x->shape.rank; k++)
		if (k == axis || c->n->opset < 13)
			len *= x->shape.dim[k];
		else
			inner *= x->shape.dim[k];
	if (!(l = ocl_launch_yx(c, "softmax", c->n->outputs[0], c->n->inputs[0], &a)))
		return ocl_no_kernel(c);
	ocl_arg_int(&a, (int)len);
	ocl_arg_int(&a, (int)inner);
	ocl_arg_int(&a, !strcmp(c->n->op_type, "LogSoftmax"));
	l->dims = 1;
	l->global[0] = (size_t)(ho_shape_numel(&x->shape) / len);
	return ocl_args_done(c, &a);
}

static int ocl_prep_layer_norm(const struct ocl_ctx *c)
{
	const struct ho_tensor *x = ho_node_input(c->g, c->n, 0);
	int64_t axis = ho_node_attr_i(c->n, "axis", -1), len = 1;
	struct ocl_launch *l;
	struct ocl_args a;
	bool has_b = c->n->n_inputs > 2 && c->n->inputs[2] >= 0;

	if (!x || !x->shape.rank || c->n->n_inputs < 2 || c->n->inputs[1] < 0)
		return ocl_refuse(c, "needs an input and a scale");
	for (uint32_t o = 1; o < c->n->n_outputs; o++)
		if (c->n->outputs[o] >= 0)
			return ocl_refuse(c, "computes no Mean or InvStdDev outputs");
	if (axis < 0)
		axis += x->shape.rank;
	for (int k = (int)axis; k < x->shape.rank; k++)
		len *= x->shape.dim[k];
	if (ho_shape_numel(&c->g->tensors[c->n->inputs[1]].shape) != len ||
	    (has_b && ho_shape_numel(&c->g->tensors[c->n->inputs[2]].shape) != len))
		return ocl_refuse(c, "takes a scale and bias of the normalised extent only");
	if (!(l = ocl_launch_yx(c, "layer_norm", c->n->outputs[0], c->n->inputs[0], &a)))
		return ocl_no_kernel(c);
	ocl_arg_tensor(&a, c, c->n->inputs[1]);
	ocl_arg_tensor(&a, c, has_b ? c->n->inputs[2] : c->n->inputs[1]);
	ocl_arg_int(&a, has_b);
	ocl_arg_int(&a, (int)len);
	ocl_arg_float(&a, ho_node_attr_f(c->n, "epsilon", 1e-5f));
	l->dims = 1;
	l->global[0] = (size_t)(ho_shape_numel(&x->shape) / len);
	return ocl_args_done(c, &a);
}

/*
 * Resize and Upsample of the last two axes, nearest or linear: each output
 * row's and column's two source taps and the second's weight, worked out at
 * prepare by the graph library (ho_resize_taps2d, the cpu backend's
 * semantics); the kernel only blends, over NCHW or channels-last tensors.
 */
static int ocl_prep_resize(const struct ocl_ctx *c)
{
	const struct ho_tensor *x = ho_node_input(c->g, c->n, 0),
			       *yt = &c->g->tensors[c->n->outputs[0]];
	bool old = !strcmp(c->n->op_type, "Upsample") || c->n->opset < 11;
	int32_t sc = c->n->n_inputs > (old ? 1u : 2u) ? c->n->inputs[old ? 1 : 2] : -1;
	const struct ho_attr *kar = ho_node_attr(c->n, "keep_aspect_ratio_policy");
	int64_t in[2], out[2], m;
	double scale[2] = {0, 0};
	int *ix = NULL;
	float *wt = NULL;
	struct ocl_launch *l;
	struct ocl_args a;
	int ret;

	if (!x || x->shape.rank != 4 || ho_node_attr(c->n, "axes") ||
	    ho_node_attr_i(c->n, "antialias", 0) || (kar && kar->s && strcmp(kar->s, "stretch")) ||
	    x->shape.dim[0] != yt->shape.dim[0] || x->shape.dim[1] != yt->shape.dim[1])
		return ocl_refuse(c, "resizes the last two axes of 4-D tensors, nearest or linear, "
				     "only");
	in[0] = x->shape.dim[2], in[1] = x->shape.dim[3];
	out[0] = yt->shape.dim[2], out[1] = yt->shape.dim[3];
	m = out[0] + out[1];
	if (sc >= 0 && ho_shape_numel(&c->g->tensors[sc].shape) == 4 && ho_is_const_f(c->g, sc))
		scale[0] = ho_const_f(c->g, sc, 2), scale[1] = ho_const_f(c->g, sc, 3);
	ix = malloc((size_t)(2 * m + 1) * sizeof(int));
	wt = malloc((size_t)(m + 1) * sizeof(float));
	if (!ix || !wt) {
		ret = ho_err(c->err, -ENOMEM, "out of memory");
		goto out;
	}
	if (ho_resize_taps2d(c->n, in, out, scale, ix, wt)) {
		ret = ocl_refuse(c, "resizes the last two axes of 4-D tensors, nearest or linear, "
				    "only");
		goto out;
	}
	if ((ret = ocl_owned(c, 0, ix, (size_t)(2 * m) * sizeof(int))) ||
	    (ret = ocl_owned(c, 1, wt, (size_t)m * sizeof(float))))
		goto out;
	if (ocl_is_nhwc(c, c->n->inputs[0])) {
		if (!(l = ocl_launch_yx(c, "resize2d_nhwc", c->n->outputs[0], c->n->inputs[0],
					&a))) {
			ret = ocl_no_kernel(c);
			goto out;
		}
		ocl_arg_int(&a, (int)in[0]);
		ocl_arg_int(&a, (int)in[1]);
		ocl_arg_int(&a, (int)out[0]);
		ocl_arg_int(&a, (int)out[1]);
		ocl_arg_int(&a, (int)x->shape.dim[1]);
		l->dims = 3;
		l->global[0] = (size_t)x->shape.dim[1];
		l->global[1] = (size_t)out[1];
		l->global[2] = (size_t)(x->shape.dim[0] * out[0]);
	} else if (!(l = ocl_spatial(c, "resize2d", x, yt, &a))) {
		ret = ocl_no_kernel(c);
		goto out;
	}
	ocl_arg_buf(&a, c->k->owned[0]);
	ocl_arg_buf(&a, c->k->owned[1]);
	ret = ocl_args_done(c, &a);
out:
	free(ix);
	free(wt);
	return ret;
}

/*
 * The operator table: every operator this backend runs, its prepare, and
 * how many leading inputs are float32 data its kernels read (0: all); the
 * others are parameters its prepare reads (a Slice's starts, a Pad's pads).
 * Their kernels read and write row-major tensors; HO_BE_SAME_LAYOUT ones
 * (Resize and the element-wise ones below) channels-last tensors too, and
 * global pooling either into its [N, C, 1, 1], one memory in both layouts.
 */
struct ocl_op {
	const char *op;
	int (*prepare)(const struct ocl_ctx *c);
	uint32_t data_inputs;
	enum ho_be_layout layout;
};

static const struct ocl_op ocl_ops[] = {
    {"Conv", ocl_prep_conv, 0, HO_BE_PLAIN},
    {"ConvTranspose", ocl_prep_conv_transpose, 0, HO_BE_PLAIN},
    {"MatMul", ocl_prep_matmul, 0, HO_BE_PLAIN},
    {"Gemm", ocl_prep_matmul, 0, HO_BE_PLAIN},
    {"MaxPool", ocl_prep_pool, 0, HO_BE_PLAIN},
    {"AveragePool", ocl_prep_pool, 0, HO_BE_PLAIN},
    {"GlobalAveragePool", ocl_prep_global_pool, 0, HO_BE_ANY_LAYOUT},
    {"GlobalMaxPool", ocl_prep_global_pool, 0, HO_BE_ANY_LAYOUT},
    {"ReduceMean", ocl_prep_reduce, 1, HO_BE_PLAIN},
    {"ReduceMax", ocl_prep_reduce, 1, HO_BE_PLAIN},
    {"ReduceMin", ocl_prep_reduce, 1, HO_BE_PLAIN},
    {"ReduceSum", ocl_prep_reduce, 1, HO_BE_PLAIN},
    {"BatchNormalization", ocl_prep_batchnorm, 0, HO_BE_PLAIN},
    {"Concat", ocl_prep_concat, 0, HO_BE_PLAIN},
    {"Softmax", ocl_prep_softmax, 0, HO_BE_PLAIN},
    {"LogSoftmax", ocl_prep_softmax, 0, HO_BE_PLAIN},
    {"Transpose", ocl_prep_transpose, 0, HO_BE_PLAIN},
    {"Slice", ocl_prep_slice, 1, HO_BE_PLAIN},
    {"Pad", ocl_prep_pad, 1, HO_BE_PLAIN},
    {"LayerNormalization", ocl_prep_layer_norm, 0, HO_BE_PLAIN},
    {"Resize", ocl_prep_resize, 1, HO_BE_SAME_LAYOUT},
    {"Upsample", ocl_prep_resize, 1, HO_BE_SAME_LAYOUT},
};

/*
 * The element-wise operators, whose list is the graph library's (opsem.h):
 * either layout, their output's as their inputs' (a channels-last tensor
 * between two cpu0 convolutions stays so when one of its readers is here).
 */
static const struct ocl_op ocl_unary = {"(unary)", ocl_prep_unary, 0, HO_BE_SAME_LAYOUT},
			   ocl_binary = {"(binary)", ocl_prep_binary, 0, HO_BE_SAME_LAYOUT};

static const struct ocl_op *ocl_op_of(const char *op)
{
	for (size_t i = 0; i < sizeof(ocl_ops) / sizeof(ocl_ops[0]); i++)
		if (!strcmp(ocl_ops[i].op, op))
			return &ocl_ops[i];
	if (ho_act_op(op))
		return &ocl_unary;
	return ho_binary_code(op) >= 0 ? &ocl_binary : NULL;
}

bool ocl_runs(const char *op)
{
	return !strcmp(op, "Constant") || ho_op_is_view(op) || ocl_op_of(op);
}

enum ho_be_layout ocl_layout(const char *op, bool *binary)
{
	const struct ocl_op *o = ocl_op_of(op);

	*binary = o == &ocl_binary;
	return o ? o->layout : HO_BE_PLAIN;
}

void ocl_kernel_free(struct ho_kernel *k)
{
	if (!k)
		return;
	for (int i = 0; i < k->n; i++)
		if (k->l[i].k)
			clReleaseKernel(k->l[i].k);
	for (int i = 0; i < 2; i++) {
		if (k->ev[i])
			clReleaseEvent(k->ev[i]);
		if (k->owned[i])
			clReleaseMemObject(k->owned[i]);
	}
	free(k->l);
	free(k);
}

int ocl_prepare(struct ho_backend *b, const struct ho_graph *g, uint32_t node,
		const struct ho_fusion *fuse, const struct ho_mem *mem,
		const uint8_t *channels_last, struct ho_kernel **out, struct ho_error *err)
{
	const struct ho_node *n = &g->nodes[node];
	struct ocl_ctx c = {b, g, n, fuse, mem, channels_last, NULL, err};
	const struct ocl_op *op = ocl_op_of(n->op_type);
	bool more = false;
	int ret;

	*out = NULL;
	if (*n->domain)
		return ocl_refuse(&c, "runs the default ONNX domain only");
	if (fuse && fuse->sum >= 0) /* the executor runs the Add on its own then */
		return ocl_refuse(&c, "adds no residual into its output");
	if (!strcmp(n->op_type, "Constant"))
		return 0;
	for (uint32_t o = 1; o < n->n_outputs; o++)
		more |= n->outputs[o] >= 0;
	if (ho_node_is_view(g, n) && !more)
		return 0; /* the executor gives its output its input's bytes */
	if (!op)
		return ocl_refuse(&c, "has no kernel for this operator yet");
	if (!n->n_outputs || n->outputs[0] < 0)
		return ocl_refuse(&c, "needs the first output");
	for (uint32_t i = 0; i < n->n_inputs + n->n_outputs; i++) {
		int32_t t = i < n->n_inputs ? n->inputs[i] : n->outputs[i - n->n_inputs];
		bool param = op->data_inputs && i >= op->data_inputs && i < n->n_inputs;

		if (t < 0 || param)
			continue;
		if (g->tensors[t].dtype != HO_DT_FLOAT)
			return ocl_refuse(&c, "computes on float32 tensors only");
		if (ocl_is_nhwc(&c, t) && op->layout == HO_BE_PLAIN)
			return ocl_refuse(&c, "reads and writes row-major (NCHW) tensors only");
		if (b && g->tensors[t].bytes && mem[t].host && !mem[t].block)
			return ho_err(err, -EFAULT, "internal: node '%s': tensor '%s' has no block",
				      n->name, g->tensors[t].name);
	}
	if (!(c.k = calloc(1, sizeof(*c.k))))
		return ho_err(err, -ENOMEM, "out of memory");
	c.k->name = n->name;
	c.k->op = n->op_type;
	ret = op->prepare(&c);
	if (ret) {
		ocl_kernel_free(c.k);
		return ret;
	}
	*out = c.k;
	return 0;
}

/* prepare, building nothing: the same checks over the same code. */
int ocl_check(const struct ho_graph *g, uint32_t node, const struct ho_fusion *fuse,
	      const struct ho_mem *mem, struct ho_error *err)
{
	struct ho_kernel *k = NULL;
	int ret = ocl_prepare(NULL, g, node, fuse, mem, NULL, &k, err);

	ocl_kernel_free(k);
	return ret;
}
