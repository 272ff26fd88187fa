// SPDX-License-Identifier: MIT
/* Normalisation and reductions: batch norm, softmax, ReduceMean, layer normalisation (oneDNN). */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cpu.h"

/* Inference batch normalization: per-channel mean, variance, scale and shift. */
int ho_cpu_prep_bnorm(struct ho_backend *c, const struct ho_graph *g, const struct ho_node *n,
		      const struct ho_node *relu, void *const *buf, struct ho_kernel *k,
		      struct ho_error *err)
{
	const struct ho_tensor *x = ho_node_input(g, n, 0);
	dnnl_batch_normalization_desc_t d;
	dnnl_primitive_desc_t pd = NULL;
	dnnl_memory_desc_t md, cm;
	static const int arg[4] = {DNNL_ARG_SCALE, DNNL_ARG_SHIFT, DNNL_ARG_MEAN,
				   DNNL_ARG_VARIANCE};
	int ret = 0;

	if (x && x->dtype == HO_DT_FLOAT && ho_node_attr_i(n, "training_mode", 0))
		return ho_cpu_prep_norm_loop(g, n, buf, k, err);
	for (uint32_t o = 1; o < n->n_outputs; o++)
		if (n->outputs[o] >= 0)
			return ho_cpu_unsupported(err, n,
						  "has statistics outputs in training only");
	if (!x || x->dtype != HO_DT_FLOAT || x->shape.rank < 2 || n->n_inputs < 5)
		return ho_cpu_unsupported(err, n, "runs float32 batch normalization only");
	for (uint32_t i = 1; i < 5; i++)
		if (!ho_node_input(g, n, i) ||
		    ho_shape_numel(&ho_node_input(g, n, i)->shape) != x->shape.dim[1])
			return ho_cpu_unsupported(
			    err, n, "needs scale, bias, mean and variance per channel");
	ho_cpu_t_md(c, &md, n->inputs[0], &x->shape);
	{
		dnnl_dims_t cd = {x->shape.dim[1]};

		dnnl_memory_desc_init_by_tag(&cm, 1, cd, dnnl_f32, dnnl_a);
	}
	/* a Relu folded in (ho_bn_chain) is oneDNN's own flag, and writes its output */
	if (dnnl_batch_normalization_forward_desc_init(
		&d, dnnl_forward_inference, &md, ho_node_attr_f(n, "epsilon", 1e-5f),
		dnnl_use_global_stats | dnnl_use_scale | dnnl_use_shift |
		    (relu ? dnnl_fuse_norm_relu : 0)) != dnnl_success ||
	    dnnl_primitive_desc_create(&pd, &d, c->attr, c->eng, NULL) != dnnl_success)
		return ho_cpu_unsupported(err, n, "(oneDNN) has no batch normalization for this");
	ret = ho_cpu_mem(c, k, &md, buf[n->inputs[0]], DNNL_ARG_SRC) ||
	      ho_cpu_mem(c, k, &md, buf[(relu ? relu : n)->outputs[0]], DNNL_ARG_DST);
	for (uint32_t i = 0; i < 4 && !ret; i++)
		ret = ho_cpu_mem(c, k, &cm, buf[n->inputs[1 + i]], arg[i]);
	if (ret || ho_cpu_prim(c, k, pd))
		ret = ho_err(err, -ENOMEM, "node '%s': oneDNN set-up failed", n->name);
	dnnl_primitive_desc_destroy(pd);
	return ret;
}

/*
 * The axis a softmax-like node works along, and the shape to give its kernel:
 * before opset 13 the input is flattened to 2-D at axis (the same bytes).
 */
int ho_cpu_softmax_view(const struct ho_node *n, const struct ho_shape *x, struct ho_shape *v)
{
	int64_t axis = ho_node_attr_i(n, "axis", n->opset >= 13 ? -1 : 1);

	axis += axis < 0 ? x->rank : 0;
	if (axis < 0 || axis >= x->rank)
		return -1;
	*v = *x;
	if (n->opset >= 13)
		return (int)axis;
	v->rank = 2;
	v->dim[0] = v->dim[1] = 1;
	for (int a = 0; a < x->rank; a++)
		v->dim[a < axis ? 0 : 1] *= x->dim[a];
	return 1;
}

/* Softmax and LogSoftmax (oneDNN's). */
int ho_cpu_prep_softmax(struct ho_backend *c, const struct ho_graph *g, const struct ho_node *n,
			void *const *buf, struct ho_kernel *k, struct ho_error *err)
{
	const struct ho_tensor *x = ho_node_input(g, n, 0);
	bool log = !strcmp(n->op_type, "LogSoftmax");
	struct ho_shape v;
	dnnl_softmax_desc_t d;
	dnnl_memory_desc_t md;
	int axis;

	if (!x || x->dtype != HO_DT_FLOAT || x->shape.rank < 1)
		return ho_cpu_unsupported(err, n, "runs float32 softmax only");
	if ((axis = ho_cpu_softmax_view(n, &x->shape, &v)) < 0)
		return ho_cpu_unsupported(err, n, "has an axis outside the input");
	ho_cpu_plain_md(&md, &v);
	return ho_cpu_src_dst_kernel(
	    c, k,
	    log ? dnnl_logsoftmax_forward_desc_init(&d, dnnl_forward_inference, &md, axis)
		: dnnl_softmax_forward_desc_init(&d, dnnl_forward_inference, &md, axis),
	    &d, NULL, &md, &md, buf, n, "(oneDNN) has no softmax for this", err);
}

/*
 * LRN across channels (oneDNN's): x / (bias + alpha / size * sum of squares)^beta.  oneDNN's
 * window is symmetric, ONNX's one longer after the channel for an even size: odd sizes only.
 */
int ho_cpu_prep_lrn(struct ho_backend *c, const struct ho_graph *g, const struct ho_node *n,
		    void *const *buf, struct ho_kernel *k, struct ho_error *err)
{
	const struct ho_tensor *x = ho_node_input(g, n, 0);
	int64_t size = ho_node_attr_i(n, "size", 0);
	dnnl_lrn_desc_t d;
	dnnl_memory_desc_t md;

	if (!x || x->dtype != HO_DT_FLOAT || x->shape.rank < 3 || x->shape.rank > 5)
		return ho_cpu_unsupported(err, n, "normalises float32 [N, C, ...] only");
	if (size < 1 || size % 2 == 0)
		return ho_cpu_unsupported(err, n, "runs LRN of an odd size only");
	ho_cpu_t_md(c, &md, n->inputs[0], &x->shape);
	return ho_cpu_src_dst_kernel(
	    c, k,
	    dnnl_lrn_forward_desc_init(&d, dnnl_forward_inference, dnnl_lrn_across_channels, &md,
				       size, ho_node_attr_f(n, "alpha", 1e-4f),
				       ho_node_attr_f(n, "beta", 0.75f),
				       ho_node_attr_f(n, "bias", 1.0f)),
	    &d, NULL, &md, &md, buf, n, "(oneDNN) has no LRN for this", err);
}

/* The reductions, as oneDNN's algorithm and p; log: the logarithm of the result. */
static const struct ho_reduce_reg {
	const char *op;
	dnnl_alg_kind_t alg;
	float p;
	bool log;
} ho_reduce_ops[] = {
    {"ReduceMean", dnnl_reduction_mean, 0, false},
    {"ReduceSum", dnnl_reduction_sum, 0, false},
    {"ReduceMax", dnnl_reduction_max, 0, false},
    {"ReduceMin", dnnl_reduction_min, 0, false},
    {"ReduceProd", dnnl_reduction_mul, 0, false},
    {"ReduceL1", dnnl_reduction_norm_lp_sum, 1, false},
    {"ReduceL2", dnnl_reduction_norm_lp_sum, 2, false},
    {"ReduceSumSquare", dnnl_reduction_norm_lp_power_p_sum, 2, false},
    {"ReduceLogSum", dnnl_reduction_sum, 0, true},
    {"ReduceLogSumExp", dnnl_alg_kind_undef, 0, false}, /* the loop only */
};

static const struct ho_reduce_reg *ho_reduce_find(const char *op)
{
	for (size_t i = 0; i < sizeof(ho_reduce_ops) / sizeof(ho_reduce_ops[0]); i++)
		if (!strcmp(ho_reduce_ops[i].op, op))
			return &ho_reduce_ops[i];
	return NULL;
}

bool ho_cpu_is_reduce(const char *op_type)
{
	return ho_reduce_find(op_type) != NULL;
}

int ho_cpu_prep_reduce(struct ho_backend *c, const struct ho_graph *g, const struct ho_node *n,
		       void *const *buf, struct ho_kernel *k, struct ho_error *err)
{
	const struct ho_reduce_reg *r = ho_reduce_find(n->op_type);
	dnnl_primitive_attr_t attr = NULL;
	dnnl_post_ops_t po = NULL;
	int ret;
	const struct ho_tensor *x = ho_node_input(g, n, 0);
	int64_t axes[HO_MAX_RANK];
	const struct ho_attr *aa = ho_node_attr(n, "axes");
	struct ho_shape ys;
	dnnl_reduction_desc_t d;
	dnnl_memory_desc_t xm, ym;
	int na = 0;

	if (!x || !r)
		return ho_cpu_unsupported(err, n, "reduces numeric types only");
	if (aa && aa->type == HO_ATTR_INTS && aa->n <= HO_MAX_RANK) {
		na = (int)aa->n;
		memcpy(axes, aa->ints, aa->n * sizeof(int64_t));
	} else if (ho_node_input(g, n, 1) &&
		   (na = ho_cpu_int_input(g, n, 1, buf, axes, HO_MAX_RANK)) < 0) {
		return ho_cpu_unsupported(err, n, "needs constant axes");
	}
	/* The output with kept dims: the same bytes whatever keepdims says. */
	ys = x->shape;
	for (int i = 0; i < na; i++) {
		int64_t a = axes[i] + (axes[i] < 0 ? x->shape.rank : 0);

		if (a < 0 || a >= x->shape.rank)
			return ho_cpu_unsupported(err, n, "has an axis outside the input");
		ys.dim[a] = 1;
	}
	if (!na && !ho_node_attr_i(n, "noop_with_empty_axes", 0))
		for (int a = 0; a < ys.rank; a++)
			ys.dim[a] = 1;
	/* oneDNN reduces float32 by something; other types, no-ops and log-sum-exp loop */
	if (!r->alg || x->dtype != HO_DT_FLOAT || g->tensors[n->outputs[0]].dtype != HO_DT_FLOAT ||
	    !memcmp(ys.dim, x->shape.dim, sizeof(ys.dim[0]) * (size_t)ys.rank))
		return ho_cpu_prep_reduce_loop(g, n, buf, k, &ys, err);
	ho_cpu_plain_md(&xm, &x->shape);
	ho_cpu_plain_md(&ym, &ys);
	if (r->log &&
	    (dnnl_post_ops_create(&po) != dnnl_success ||
	     dnnl_post_ops_append_eltwise(po, 1.0f, dnnl_eltwise_log, 0, 0) != dnnl_success ||
	     dnnl_primitive_attr_clone(&attr, c->attr) != dnnl_success ||
	     dnnl_primitive_attr_set_post_ops(attr, po) != dnnl_success)) {
		ret = ho_err(err, -ENOMEM, "node '%s': oneDNN post-ops failed", n->name);
		goto out;
	}
	ret = ho_cpu_src_dst_kernel(
	    c, k, dnnl_reduction_desc_init(&d, r->alg, &xm, &ym, r->p, 0.0f), &d, attr, &xm, &ym,
	    buf, n, "(oneDNN) has no reduction for this", err);
out:
	if (po)
		dnnl_post_ops_destroy(po);
	if (attr)
		dnnl_primitive_attr_destroy(attr);
	return ret;
}

/* LayerNormalization over the last axis (oneDNN's), scale and optional bias. */
int ho_cpu_prep_layer_norm(struct ho_backend *c, const struct ho_graph *g, const struct ho_node *n,
			   void *const *buf, struct ho_kernel *k, struct ho_error *err)
{
	const struct ho_tensor *x = ho_node_input(g, n, 0), *sc = ho_node_input(g, n, 1),
			       *b = ho_node_input(g, n, 2);
	int64_t axis = ho_node_attr_i(n, "axis", -1);
	unsigned flags = dnnl_use_scale;
	dnnl_layer_normalization_desc_t d;
	dnnl_memory_desc_t md, cm;
	struct ho_shape cs = {.rank = 1};
	int ret;

	struct ho_shape v = {.rank = 2};
	bool stats = false;

	if (!x || x->dtype != HO_DT_FLOAT || x->shape.rank < 1 || !sc || sc->dtype != HO_DT_FLOAT ||
	    (b && b->dtype != HO_DT_FLOAT))
		return ho_cpu_unsupported(err, n, "normalises float32 with a scale only");
	axis += axis < 0 ? x->shape.rank : 0;
	if (axis < 0 || axis >= x->shape.rank)
		return ho_cpu_unsupported(err, n, "has an axis outside the input");
	/* the normalised axes are the trailing ones: the same bytes as [outer, inner] */
	v.dim[0] = v.dim[1] = 1;
	for (int a = 0; a < x->shape.rank; a++)
		v.dim[a < axis ? 0 : 1] *= x->shape.dim[a];
	cs.dim[0] = v.dim[1];
	if (ho_shape_numel(&sc->shape) != cs.dim[0] ||
	    (b && ho_shape_numel(&b->shape) != cs.dim[0]))
		return ho_cpu_unsupported(err, n, "needs a scale and bias per normalised element");
	for (uint32_t o = 1; o < n->n_outputs; o++)
		stats |= n->outputs[o] >= 0;
	if (stats) {
		/* Mean and InvStdDev asked for too: a loop of our own writes all three */
		k->kind = HO_K_LAYER_NORM;
		k->outer = v.dim[0];
		k->inner = v.dim[1];
		k->src = buf[n->inputs[0]];
		k->dst = buf[n->outputs[0]];
		k->ln_scale = buf[n->inputs[1]];
		k->ln_bias = b ? buf[n->inputs[2]] : NULL;
		k->ln_mean = n->n_outputs > 1 && n->outputs[1] >= 0 ? buf[n->outputs[1]] : NULL;
		k->ln_inv_std = n->n_outputs > 2 && n->outputs[2] >= 0 ? buf[n->outputs[2]] : NULL;
		k->ln_eps = ho_node_attr_f(n, "epsilon", 1e-5f);
		return 0;
	}
	flags |= b ? dnnl_use_shift : 0;
	ho_cpu_plain_md(&md, &v);
	ho_cpu_plain_md(&cm, &cs);
	ret = ho_cpu_src_dst_kernel(
	    c, k,
	    dnnl_layer_normalization_forward_desc_init(&d, dnnl_forward_inference, &md, NULL,
						       ho_node_attr_f(n, "epsilon", 1e-5f), flags),
	    &d, NULL, &md, &md, buf, n, "(oneDNN) has no layer normalisation for this", err);
	if (!ret && (ho_cpu_mem(c, k, &cm, buf[n->inputs[1]], DNNL_ARG_SCALE) ||
		     (b && ho_cpu_mem(c, k, &cm, buf[n->inputs[2]], DNNL_ARG_SHIFT))))
		ret = ho_err(err, -ENOMEM, "node '%s': oneDNN set-up failed", n->name);
	return ret;
}

/* A row's mean and 1 / sqrt(variance + eps), in double (two passes: no cancellation). */
static void ho_row_stats(const float *x, int64_t n, double eps, double *mean, double *inv)
{
	double sum = 0, sq = 0;

	for (int64_t i = 0; i < n; i++)
		sum += x[i];
	*mean = sum / (double)n;
	for (int64_t i = 0; i < n; i++)
		sq += (x[i] - *mean) * (x[i] - *mean);
	*inv = 1.0 / sqrt(sq / (double)n + eps);
}

void ho_cpu_run_layer_norm(const struct ho_kernel *k)
{
	const float *x = k->src;
	float *y = k->dst;

	for (int64_t o = 0; o < k->outer; o++) {
		const float *xr = x + o * k->inner;
		float *yr = y + o * k->inner;
		double mean, inv;

		ho_row_stats(xr, k->inner, k->ln_eps, &mean, &inv);
		for (int64_t i = 0; i < k->inner; i++)
			yr[i] = (float)((xr[i] - mean) * inv) * k->ln_scale[i] +
				(k->ln_bias ? k->ln_bias[i] : 0.0f);
		if (k->ln_mean)
			k->ln_mean[o] = (float)mean;
		if (k->ln_inv_std)
			k->ln_inv_std[o] = (float)inv;
	}
}

/*
 * Per group of the elements that share every kept axis' index: the mean and
 * the (population) variance, in double.  yst: each axis' step in the groups
 * (0 where the axis is reduced).
 */
static void ho_group_stats(const float *x, const struct ho_shape *xs, const int64_t *yst,
			   int64_t groups, double *mean, double *var)
{
	int64_t n = ho_shape_numel(xs), c[HO_MAX_RANK] = {0}, per = groups ? n / groups : 0;

	for (int64_t j = 0; j < groups; j++)
		mean[j] = var[j] = 0;
	for (int pass = 0; pass < 2; pass++) {
		memset(c, 0, sizeof(c));
		for (int64_t i = 0, j = 0; i < n; i++) {
			if (pass == 0)
				mean[j] += x[i];
			else
				var[j] += (x[i] - mean[j]) * (x[i] - mean[j]);
			for (int a = xs->rank - 1; a >= 0; a--) {
				j += yst[a];
				if (++c[a] < xs->dim[a])
					break;
				j -= yst[a] * c[a];
				c[a] = 0;
			}
		}
		for (int64_t j = 0; j < groups; j++)
			if (pass == 0)
				mean[j] /= (double)per;
			else
				var[j] /= (double)per;
	}
}

/* The group of element i's coordinates: its index over the kept axes. */
static void ho_group_steps(const struct ho_shape *xs, const bool *reduced, int64_t *yst,
			   int64_t *groups)
{
	int64_t acc = 1;

	for (int a = xs->rank - 1; a >= 0; a--) {
		yst[a] = reduced[a] ? 0 : acc;
		acc *= reduced[a] ? 1 : xs->dim[a];
	}
	*groups = acc;
}

/* MeanVarianceNormalization: (x - mean) / (sqrt(variance) + 1e-9) over the axes. */
static int ho_run_mvn(const struct ho_kernel *k)
{
	const struct ho_typed *t = &k->typed;
	const float *x = t->in[0];
	float *y = t->out;
	double *mean = (double *)k->fold, *var = mean + t->outer;
	int64_t n = ho_shape_numel(&t->in_shape[0]), c[HO_MAX_RANK] = {0};

	ho_group_stats(x, &t->in_shape[0], t->stride[0], t->outer, mean, var);
	for (int64_t i = 0, j = 0; i < n; i++) {
		y[i] = (float)((x[i] - mean[j]) / (sqrt(var[j]) + 1e-9));
		for (int a = t->in_shape[0].rank - 1; a >= 0; a--) {
			j += t->stride[0][a];
			if (++c[a] < t->in_shape[0].dim[a])
				break;
			j -= t->stride[0][a] * c[a];
			c[a] = 0;
		}
	}
	return 0;
}

/* BatchNormalization, training mode: the batch's statistics, and the running ones updated. */
static int ho_run_bn_train(const struct ho_kernel *k)
{
	const struct ho_typed *t = &k->typed;
	const float *x = t->in[0], *sc = t->in[1], *b = t->in[2], *rm = t->in[3], *rv = t->in[4];
	float *y = t->out, *om = t->out2, *ov = (float *)k->dst;
	double *mean = (double *)k->fold, *var = mean + t->outer, mom = k->param[0];
	int64_t n = ho_shape_numel(&t->in_shape[0]), C = t->outer, inner = t->inner;

	ho_group_stats(x, &t->in_shape[0], t->stride[0], C, mean, var);
	for (int64_t i = 0; i < n; i++) {
		int64_t ch = (i / inner) % C;

		y[i] = (float)((x[i] - mean[ch]) / sqrt(var[ch] + k->ln_eps) * sc[ch] + b[ch]);
	}
	for (int64_t ch = 0; ch < C; ch++) {
		if (om)
			om[ch] = (float)(rm[ch] * mom + mean[ch] * (1 - mom));
		if (ov)
			ov[ch] = (float)(rv[ch] * mom + var[ch] * (1 - mom));
	}
	return 0;
}

/*
 * GroupNormalization: each batch's group of channels normalised together, then each
 * channel's (or, before opset 21, each group's) scale and bias.  InstanceNormalization is
 * its case of a group per channel.  Rows over the threads: GroupNorm exported as
 * InstanceNormalization (fcos's heads) took 53 ms a frame on one thread of two.
 */
static void ho_group_norm_rows(const void *arg, int64_t lo, int64_t hi)
{
	const struct ho_kernel *k = arg;
	const struct ho_typed *t = &k->typed;
	const float *x = t->in[0], *sc = t->in[1], *b = t->in[2];
	float *y = t->out;
	int64_t per = t->axis_dim ? t->axis_dim : 1, sp = t->inner / per;

	for (int64_t o = lo; o < hi; o++) {
		const float *xr = x + o * t->inner;
		float *yr = y + o * t->inner;
		int64_t grp = o % t->iparam[0];
		double mean, inv;

		ho_row_stats(xr, t->inner, k->ln_eps, &mean, &inv);
		for (int64_t c = 0; c < per; c++) {
			int64_t p = t->iparam[1] ? grp * per + c : grp;

			for (int64_t i = c * sp; i < (c + 1) * sp; i++)
				yr[i] = (float)((xr[i] - mean) * inv * sc[p] + b[p]);
		}
	}
}

static int ho_run_group_norm(const struct ho_kernel *k)
{
	const struct ho_typed *t = &k->typed;

	ho_cpu_for_parts(ho_cpu_row_parts(t->outer, t->inner, 1 << 14), t->outer,
			 ho_group_norm_rows, k);
	return 0;
}

/* RMSNormalization: each row over its root mean square (in double), times the scale. */
static void ho_rms_norm_rows(const void *arg, int64_t lo, int64_t hi)
{
	const struct ho_kernel *k = arg;
	const struct ho_typed *t = &k->typed;
	const float *x = t->in[0], *sc = t->in[1];
	float *y = t->out;

	for (int64_t o = lo; o < hi; o++) {
		const float *xr = x + o * t->inner;
		float *yr = y + o * t->inner;
		double ss = 0, inv;

		for (int64_t i = 0; i < t->inner; i++)
			ss += (double)xr[i] * xr[i];
		inv = 1.0 / sqrt(ss / (double)(t->inner ? t->inner : 1) + k->ln_eps);
		for (int64_t i = 0; i < t->inner; i++)
			yr[i] = (float)(xr[i] * inv) * sc[t->axis_dim == 1 ? 0 : i];
	}
}

static int ho_run_rms_norm(const struct ho_kernel *k)
{
	const struct ho_typed *t = &k->typed;

	ho_cpu_for_parts(ho_cpu_row_parts(t->outer, t->inner, 1 << 14), t->outer, ho_rms_norm_rows,
			 k);
	return 0;
}

int ho_cpu_prep_norm_loop(const struct ho_graph *g, const struct ho_node *n, void *const *buf,
			  struct ho_kernel *k, struct ho_error *err)
{
	struct ho_typed *t = &k->typed;
	const struct ho_tensor *x = ho_node_input(g, n, 0), *y = &g->tensors[n->outputs[0]];

	if (!x || x->dtype != HO_DT_FLOAT || x->shape.rank < 1)
		return ho_cpu_unsupported(err, n, "runs float32 only");
	k->kind = HO_K_LOOP;
	t->in[0] = buf[n->inputs[0]];
	t->in_shape[0] = x->shape;
	t->out = buf[n->outputs[0]];
	t->out_shape = y->shape;
	if (!strcmp(n->op_type, "InstanceNormalization")) {
		const struct ho_tensor *sc = ho_node_input(g, n, 1), *b = ho_node_input(g, n, 2);

		if (x->shape.rank < 3 || !sc || !b || sc->dtype != HO_DT_FLOAT ||
		    b->dtype != HO_DT_FLOAT || ho_shape_numel(&sc->shape) != x->shape.dim[1] ||
		    ho_shape_numel(&b->shape) != x->shape.dim[1])
			return ho_cpu_unsupported(err, n,
						  "needs [N, C, ...] and a scale and bias per C");
		t->in[1] = buf[n->inputs[1]];
		t->in[2] = buf[n->inputs[2]];
		t->outer = x->shape.dim[0] * x->shape.dim[1];
		t->inner = ho_shape_numel(&x->shape) / (t->outer ? t->outer : 1);
		t->axis_dim = 1;		/* a group per channel */
		t->iparam[0] = x->shape.dim[1]; /* groups */
		t->iparam[1] = 1;		/* a scale and bias per channel */
		k->ln_eps = ho_node_attr_f(n, "epsilon", 1e-5f);
		t->run = ho_run_group_norm;
		return 0;
	}
	if (!strcmp(n->op_type, "GroupNormalization")) {
		const struct ho_tensor *sc = ho_node_input(g, n, 1), *b = ho_node_input(g, n, 2);
		int64_t groups = ho_node_attr_i(n, "num_groups", 0), ch = x->shape.dim[1],
			/* opset 21: a scale and bias per channel; 18: per group */
		    per = n->opset >= 21 ? ch : groups;

		if (x->shape.rank < 2 || groups < 1 || ch % groups || !sc || !b ||
		    sc->dtype != HO_DT_FLOAT || b->dtype != HO_DT_FLOAT ||
		    ho_shape_numel(&sc->shape) != per || ho_shape_numel(&b->shape) != per)
			return ho_cpu_unsupported(
			    err, n,
			    "needs channels in num_groups groups, a float32 "
			    "scale and bias per channel (per group before opset 21)");
		t->in[1] = buf[n->inputs[1]];
		t->in[2] = buf[n->inputs[2]];
		t->outer = x->shape.dim[0] * groups;
		t->inner = ho_shape_numel(&x->shape) / (t->outer ? t->outer : 1);
		t->axis_dim = ch / groups; /* channels a group */
		t->iparam[0] = groups;
		t->iparam[1] = n->opset >= 21;
		k->ln_eps = ho_node_attr_f(n, "epsilon", 1e-5f);
		t->run = ho_run_group_norm;
		return 0;
	}
	if (!strcmp(n->op_type, "RMSNormalization")) {
		const struct ho_tensor *sc = ho_node_input(g, n, 1);
		int axis = (int)ho_node_attr_i(n, "axis", -1);

		axis += axis < 0 ? x->shape.rank : 0;
		if (axis < 0 || axis >= x->shape.rank)
			return ho_cpu_unsupported(err, n, "has its axis outside the input");
		t->outer = 1;
		for (int a = 0; a < axis; a++)
			t->outer *= x->shape.dim[a];
		t->inner = ho_shape_numel(&x->shape) / (t->outer ? t->outer : 1);
		t->axis_dim = sc ? ho_shape_numel(&sc->shape) : 0;
		if (!sc || sc->dtype != HO_DT_FLOAT ||
		    (t->axis_dim != 1 && t->axis_dim != t->inner))
			return ho_cpu_unsupported(err, n,
						  "needs a float32 scale of the normalised extent");
		t->in[1] = buf[n->inputs[1]];
		k->ln_eps = ho_node_attr_f(n, "epsilon", 1e-5f);
		t->run = ho_run_rms_norm;
		return 0;
	}
	bool reduced[HO_MAX_RANK] = {false};

	if (!strcmp(n->op_type, "MeanVarianceNormalization")) {
		int64_t axes[HO_MAX_RANK] = {0, 2, 3};
		const struct ho_attr *aa = ho_node_attr(n, "axes");
		int na = aa ? (int)aa->n : 3;

		if (aa && (aa->type != HO_ATTR_INTS || aa->n > HO_MAX_RANK))
			return ho_cpu_unsupported(err, n, "needs a list of axes");
		if (aa)
			memcpy(axes, aa->ints, aa->n * sizeof(int64_t));
		for (int i = 0; i < na; i++) {
			int64_t a = axes[i] + (axes[i] < 0 ? x->shape.rank : 0);

			if (a < 0 || a >= x->shape.rank)
				return ho_cpu_unsupported(err, n, "has an axis outside the input");
			reduced[a] = true;
		}
		t->run = ho_run_mvn;
	} else if (!strcmp(n->op_type, "BatchNormalization")) {
		for (uint32_t i = 1; i < 5; i++) {
			const struct ho_tensor *p = ho_node_input(g, n, i);

			if (!p || p->dtype != HO_DT_FLOAT || x->shape.rank < 2 ||
			    ho_shape_numel(&p->shape) != x->shape.dim[1])
				return ho_cpu_unsupported(
				    err, n,
				    "needs float32 scale, bias, mean and variance per channel");
			t->in[i] = buf[n->inputs[i]];
		}
		for (int a = 0; a < x->shape.rank; a++)
			reduced[a] = a != 1;
		t->inner = 1;
		for (int a = 2; a < x->shape.rank; a++)
			t->inner *= x->shape.dim[a];
		t->out2 = n->n_outputs > 1 && n->outputs[1] >= 0 ? buf[n->outputs[1]] : NULL;
		k->dst = n->n_outputs > 2 && n->outputs[2] >= 0 ? buf[n->outputs[2]] : NULL;
		k->ln_eps = ho_node_attr_f(n, "epsilon", 1e-5f);
		k->param[0] = ho_node_attr_f(n, "momentum", 0.9f);
		t->run = ho_run_bn_train;
	} else {
		return ho_cpu_unsupported(err, n, "has no loop for this operator");
	}
	ho_group_steps(&x->shape, reduced, t->stride[0], &t->outer);
	if (!(k->fold = malloc(2 * (size_t)(t->outer + 1) * sizeof(double))))
		return ho_err(err, -ENOMEM, "out of memory");
	return 0;
}
