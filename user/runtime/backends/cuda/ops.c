// SPDX-License-Identifier: MIT
/*
 * The CUDA backend's operators: one prepare per operator family, listed
 * once in cu_ops[] (this file: normalisation and movement; conv.c and
 * eltwise.c the others).  A prepare checks what its kernel runs (float32,
 * the ranks and attributes it handles), packs the kernels' parameters over
 * the tensors' device addresses once, and leaves launching to launch.c.
 * Anything else is refused with the node's name and what is missing, and
 * the scheduler, asking the same code (cu_check), places it elsewhere.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cu.h"
#include "heteroopt/opsem.h"

static int cu_prep_softmax(const struct cu_ctx *c)
{
	const struct ho_tensor *x = ho_node_input(c->g, c->n, 0);
	int64_t axis = ho_node_attr_i(c->n, "axis", c->n->opset < 13 ? 1 : -1), len = 1, inner = 1;
	struct cu_launch *l;
	long rows;

	if (!x || !x->shape.rank)
		return cu_refuse(c, "needs an input of one axis or more");
	if (axis < 0)
		axis += x->shape.rank;
	if (axis < 0 || axis >= x->shape.rank)
		return cu_refuse(c, "has an axis out of range");
	/* before opset 13 the input is flattened to 2-D at axis */
	for (int k = (int)axis; k < x->shape.rank; k++)
		if (k == axis || c->n->opset < 13)
			len *= x->shape.dim[k];
		else
			inner *= x->shape.dim[k];
	rows = (long)(ho_shape_numel(&x->shape) / len);
	if (!(l = cu_new_launch(c, "softmax", rows)))
		return cu_launch_done(c, l);
	cu_param_tensor(l, c, c->n->outputs[0]);
	cu_param_tensor(l, c, c->n->inputs[0]);
	cu_param_long(l, rows);
	cu_param_int(l, (int)len);
	cu_param_int(l, (int)inner);
	cu_param_int(l, !strcmp(c->n->op_type, "LogSoftmax"));
	return cu_launch_done(c, l);
}

static int cu_prep_layer_norm(const struct cu_ctx *c)
{
	const struct ho_tensor *x = ho_node_input(c->g, c->n, 0);
	int64_t axis = ho_node_attr_i(c->n, "axis", -1), len = 1;
	bool has_b = c->n->n_inputs > 2 && c->n->inputs[2] >= 0;
	struct cu_launch *l;
	long rows;

	if (!x || !x->shape.rank || c->n->n_inputs < 2 || c->n->inputs[1] < 0)
		return cu_refuse(c, "needs an input and a scale");
	for (uint32_t o = 1; o < c->n->n_outputs; o++)
		if (c->n->outputs[o] >= 0)
			return cu_refuse(c, "computes no Mean or InvStdDev outputs");
	if (axis < 0)
		axis += x->shape.rank;
	for (int k = (int)axis; k < x->shape.rank; k++)
		len *= x->shape.dim[k];
	if (ho_shape_numel(&c->g->tensors[c->n->inputs[1]].shape) != len ||
	    (has_b && ho_shape_numel(&c->g->tensors[c->n->inputs[2]].shape) != len))
		return cu_refuse(c, "takes a scale and bias of the normalised extent only");
	rows = (long)(ho_shape_numel(&x->shape) / len);
	if (!(l = cu_new_launch(c, "layer_norm", rows)))
		return cu_launch_done(c, l);
	cu_param_tensor(l, c, c->n->outputs[0]);
	cu_param_tensor(l, c, c->n->inputs[0]);
	cu_param_tensor(l, c, c->n->inputs[1]);
	cu_param_tensor(l, c, has_b ? c->n->inputs[2] : c->n->inputs[1]);
	cu_param_int(l, has_b);
	cu_param_long(l, rows);
	cu_param_int(l, (int)len);
	cu_param_float(l, ho_node_attr_f(c->n, "epsilon", 1e-5f));
	return cu_launch_done(c, l);
}

/* Concat: each input's rows placed in the output's, one launch an input. */
static int cu_prep_concat(const struct cu_ctx *c)
{
	const struct ho_tensor *yt = &c->g->tensors[c->n->outputs[0]];
	int64_t axis = ho_node_attr_i(c->n, "axis", 0), outer = 1, after = 1, col = 0;
	int ret;

	if (axis < 0)
		axis += yt->shape.rank;
	if (axis < 0 || axis >= yt->shape.rank)
		return cu_refuse(c, "has an axis out of range");
	for (int k = 0; k < axis; k++)
		outer *= yt->shape.dim[k];
	for (int k = (int)axis + 1; k < yt->shape.rank; k++)
		after *= yt->shape.dim[k];
	for (uint32_t i = 0; i < c->n->n_inputs; i++) {
		const struct ho_tensor *x = ho_node_input(c->g, c->n, i);
		int64_t inner = x ? x->shape.dim[axis] * after : 0;
		struct cu_launch *l;

		if (!inner)
			continue;
		if (!(l = cu_new_launch(c, "place", (long)(outer * inner))))
			return cu_launch_done(c, l);
		cu_param_tensor(l, c, c->n->outputs[0]);
		cu_param_tensor(l, c, c->n->inputs[i]);
		cu_param_long(l, (long)(outer * inner));
		cu_param_int(l, (int)inner);
		cu_param_int(l, (int)(yt->shape.dim[axis] * after));
		cu_param_int(l, (int)col);
		if ((ret = cu_launch_done(c, l)))
			return ret;
		col += inner;
	}
	return 0;
}

/* Each output element from its source: base plus its index by strides s, extents d. */
static int cu_gather(const struct cu_ctx *c, int r, const struct cu_dims8 *d,
		     const struct cu_dims8 *s, int64_t base)
{
	long n = (long)ho_shape_numel(&c->g->tensors[c->n->outputs[0]].shape);
	struct cu_launch *l;

	if (!(l = cu_new_launch(c, "gather_nd", n)))
		return cu_launch_done(c, l);
	cu_param_tensor(l, c, c->n->outputs[0]);
	cu_param_tensor_at(l, c, c->n->inputs[0], (long)base);
	cu_param_long(l, n);
	cu_param_int(l, r);
	cu_param(l, d, sizeof(*d), 4);
	cu_param(l, s, sizeof(*s), 4);
	return cu_launch_done(c, l);
}

/* Transpose: by the permuted strides. */
static int cu_prep_transpose(const struct cu_ctx *c)
{
	const struct ho_tensor *x = ho_node_input(c->g, c->n, 0),
			       *yt = &c->g->tensors[c->n->outputs[0]];
	struct cu_dims8 d = {{0}}, s = {{0}};
	int64_t perm[8], stride[8], acc = 1;
	int r = x ? x->shape.rank : 0;

	if (!x || r < 1 || r > 8)
		return cu_refuse(c, "transposes ranks 1 to 8 only");
	for (int k = 0; k < r; k++)
		perm[k] = r - 1 - k;
	if (ho_node_attr(c->n, "perm") && !ho_node_attr_ints(c->n, "perm", perm, r, 0))
		return cu_refuse(c, "cannot read its perm");
	for (int k = r - 1; k >= 0; k--) {
		stride[k] = acc;
		acc *= x->shape.dim[k];
	}
	for (int k = 0; k < r; k++) {
		if (perm[k] < 0 || perm[k] >= r)
			return cu_refuse(c, "has a perm out of range");
		d.v[k] = (int)yt->shape.dim[k];
		s.v[k] = (int)stride[perm[k]];
	}
	return cu_gather(c, r, &d, &s, 0);
}

/* Slice: its first element and steps, resolved by the graph library at prepare. */
static int cu_prep_slice(const struct cu_ctx *c)
{
	const struct ho_tensor *x = ho_node_input(c->g, c->n, 0),
			       *yt = &c->g->tensors[c->n->outputs[0]];
	struct cu_dims8 d = {{1, 1, 1, 1, 1, 1, 1, 1}}, s = {{0}};
	const void *data[5] = {NULL};
	int64_t st = 1, base = 0;
	struct ho_slice sl;
	struct ho_error e;
	int r;

	if (!x || (r = x->shape.rank) > 8 || r < 1)
		return cu_refuse(c, "slices ranks 1 to 8 only");
	for (uint32_t i = 1; i < 5 && i < c->n->n_inputs; i++)
		data[i] = c->n->inputs[i] >= 0 ? c->mem[c->n->inputs[i]].host : NULL;
	if (ho_slice_node(c->g, c->n, data, &sl, &e))
		return cu_refuse(c, "cannot read its starts, ends, axes and steps");
	for (int k = r - 1; k >= 0; k--) {
		d.v[k] = (int)yt->shape.dim[k];
		s.v[k] = (int)(st * sl.step[k]);
		base += sl.first[k] * st;
		st *= x->shape.dim[k];
	}
	return cu_gather(c, r, &d, &s, base);
}

/*
 * Resize and Upsample of the last two axes, nearest or linear: each output
 * row's and column's taps worked out at prepare by the graph library
 * (ho_resize_taps2d); the kernel only blends.
 */
static int cu_prep_resize(const struct cu_ctx *c)
{
	const struct ho_tensor *x = ho_node_input(c->g, c->n, 0),
			       *yt = &c->g->tensors[c->n->outputs[0]];
	bool old = !strcmp(c->n->op_type, "Upsample") || c->n->opset < 11;
	int32_t sc = c->n->n_inputs > (old ? 1u : 2u) ? c->n->inputs[old ? 1 : 2] : -1;
	const struct ho_attr *kar = ho_node_attr(c->n, "keep_aspect_ratio_policy");
	int64_t in[2], out[2], m;
	double scale[2] = {0, 0};
	struct cu_launch *l;
	int *ix = NULL;
	float *wt = NULL;
	long n;
	int ret;

	if (!x || x->shape.rank != 4 || ho_node_attr(c->n, "axes") ||
	    ho_node_attr_i(c->n, "antialias", 0) || (kar && kar->s && strcmp(kar->s, "stretch")) ||
	    x->shape.dim[0] != yt->shape.dim[0] || x->shape.dim[1] != yt->shape.dim[1])
		return cu_refuse(c, "resizes the last two axes of 4-D tensors only");
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
		ret = cu_refuse(c, "resizes nearest or linear only");
		goto out;
	}
	if ((ret = cu_owned(c, 0, ix, (size_t)(2 * m) * sizeof(int))) ||
	    (ret = cu_owned(c, 1, wt, (size_t)m * sizeof(float))))
		goto out;
	n = (long)ho_shape_numel(&yt->shape);
	if (!(l = cu_new_launch(c, "resize2d", n))) {
		ret = cu_launch_done(c, l);
		goto out;
	}
	cu_param_tensor(l, c, c->n->outputs[0]);
	cu_param_tensor(l, c, c->n->inputs[0]);
	for (int k = 0; k < 2; k++)
		cu_param_int(l, (int)in[k]);
	for (int k = 0; k < 2; k++)
		cu_param_int(l, (int)out[k]);
	cu_param_ptr(l, c->b ? c->k->owned[0] : 0);
	cu_param_ptr(l, c->b ? c->k->owned[1] : 0);
	cu_param_long(l, n);
	ret = cu_launch_done(c, l);
out:
	free(ix);
	free(wt);
	return ret;
}

/*
 * Every operator this backend runs, its prepare, and how many leading inputs
 * are float32 data its kernels read (0: all); the others are parameters its
 * prepare reads (a Slice's starts).
 */
static const struct cu_op {
	const char *op;
	int (*prepare)(const struct cu_ctx *c);
	uint32_t data_inputs;
} cu_ops[] = {
    {"Conv", cu_prep_conv, 0},
    {"ConvTranspose", cu_prep_conv_transpose, 0},
    {"MatMul", cu_prep_matmul, 0},
    {"Gemm", cu_prep_matmul, 0},
    {"MaxPool", cu_prep_pool, 0},
    {"AveragePool", cu_prep_pool, 0},
    {"GlobalAveragePool", cu_prep_global_pool, 0},
    {"GlobalMaxPool", cu_prep_global_pool, 0},
    {"BatchNormalization", cu_prep_batchnorm, 0},
    {"Concat", cu_prep_concat, 0},
    {"Softmax", cu_prep_softmax, 0},
    {"LogSoftmax", cu_prep_softmax, 0},
    {"Transpose", cu_prep_transpose, 0},
    {"Slice", cu_prep_slice, 1},
    {"Resize", cu_prep_resize, 1},
    {"Upsample", cu_prep_resize, 1},
    {"LayerNormalization", cu_prep_layer_norm, 0},
};

/* The element-wise operators, whose list is the graph library's (opsem.h). */
static const struct cu_op cu_unary = {"(unary)", cu_prep_unary, 0},
			  cu_binary = {"(binary)", cu_prep_binary, 0};

static const struct cu_op *cu_op_of(const char *op)
{
	for (size_t i = 0; i < sizeof(cu_ops) / sizeof(cu_ops[0]); i++)
		if (!strcmp(cu_ops[i].op, op))
			return &cu_ops[i];
	if (ho_act_op(op))
		return &cu_unary;
	return ho_binary_code(op) >= 0 ? &cu_binary : NULL;
}

bool cu_runs(const char *op)
{
	return !strcmp(op, "Constant") || ho_op_is_view(op) || cu_op_of(op);
}

void cu_kernel_free(struct ho_kernel *k)
{
	if (!k)
		return;
	if (k->b) {
		const struct cu_api *api = &k->b->api;

		api->cuCtxSetCurrent(k->b->ctx);
		for (int i = 0; i < 2; i++) {
			if (k->ev[i])
				api->cuEventDestroy_v2(k->ev[i]);
			if (k->owned[i])
				api->cuMemFree_v2(k->owned[i]);
		}
	}
	free(k->l);
	free(k);
}

int cu_prepare(struct ho_backend *b, const struct ho_graph *g, uint32_t node,
	       const struct ho_fusion *fuse, const struct ho_mem *mem, const uint8_t *channels_last,
	       struct ho_kernel **out, struct ho_error *err)
{
	const struct ho_node *n = &g->nodes[node];
	struct cu_ctx c = {b, g, n, fuse, mem, NULL, err};
	const struct cu_op *op = cu_op_of(n->op_type);
	bool more = false;
	int ret;

	*out = NULL;
	if (*n->domain)
		return cu_refuse(&c, "runs the default ONNX domain only");
	if (fuse && fuse->sum >= 0) /* the executor runs the Add on its own then */
		return cu_refuse(&c, "adds no residual into its output");
	if (!strcmp(n->op_type, "Constant"))
		return 0;
	for (uint32_t o = 1; o < n->n_outputs; o++)
		more |= n->outputs[o] >= 0;
	if (ho_node_is_view(g, n) && !more)
		return 0; /* the executor gives its output its input's bytes */
	if (!op)
		return cu_refuse(&c, "has no kernel for this operator yet");
	if (!n->n_outputs || n->outputs[0] < 0)
		return cu_refuse(&c, "needs the first output");
	for (uint32_t i = 0; i < n->n_inputs + n->n_outputs; i++) {
		int32_t t = i < n->n_inputs ? n->inputs[i] : n->outputs[i - n->n_inputs];

		if (t < 0 || (op->data_inputs && i >= op->data_inputs && i < n->n_inputs))
			continue;
		if (g->tensors[t].dtype != HO_DT_FLOAT)
			return cu_refuse(&c, "computes on float32 tensors only");
		if (channels_last && channels_last[t] &&
		    !ho_shape_layout_free(&g->tensors[t].shape)) /* 1 x 1: the same bytes */
			return cu_refuse(&c, "reads and writes row-major (NCHW) tensors only");
		if (b && g->tensors[t].bytes && mem[t].host && !mem[t].block)
			return ho_err(err, -EFAULT, "internal: node '%s': tensor '%s' has no block",
				      n->name, g->tensors[t].name);
	}
	if (!(c.k = calloc(1, sizeof(*c.k))))
		return ho_err(err, -ENOMEM, "out of memory");
	c.k->name = n->name;
	c.k->op = n->op_type;
	if (b) {
		CUresult r;

		c.k->b = b;
		b->api.cuCtxSetCurrent(b->ctx);
		if ((r = b->api.cuEventCreate(&c.k->ev[0], 0)) ||
		    (r = b->api.cuEventCreate(&c.k->ev[1], 0))) {
			cu_kernel_free(c.k);
			return cu_failed(b, "an event", r, err);
		}
	}
	ret = op->prepare(&c);
	if (ret) {
		cu_kernel_free(c.k);
		return ret;
	}
	*out = c.k;
	return 0;
}

/* prepare, building nothing: the same checks over the same code. */
int cu_check(const struct ho_graph *g, uint32_t node, const struct ho_fusion *fuse,
	     const struct ho_mem *mem, struct ho_error *err)
{
	struct ho_kernel *k = NULL;
	int ret = cu_prepare(NULL, g, node, fuse, mem, NULL, &k, err);

	cu_kernel_free(k);
	return ret;
}
