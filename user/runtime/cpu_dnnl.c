// SPDX-License-Identifier: MIT
/*
 * The cpu backend: ONNX operators on oneDNN's C API (Debian's libdnnl, 2.x).
 *
 * Activations stay in plain row-major layout (NCHW), so every kernel reads
 * what the previous one wrote with no reorder between them; convolution
 * weights are reordered once, at plan time, into the layout oneDNN's kernel
 * asks for.  Gemm and MatMul go through dnnl_sgemm.  Operators that only
 * relabel a buffer (Reshape, Flatten, ...) cost nothing: the executor gives
 * their output the input's buffer.
 */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include <dnnl.h>

#include "common.h"
#include "heteroopt/pool.h"
#include "rt_priv.h"

#define HO_CPU_MAX_ARGS 16

struct ho_backend {
	dnnl_engine_t eng;
	dnnl_stream_t stream;
	/*
	 * Every primitive gets its own scratchpad (user mode): the library's
	 * shared one is not safe when devices' workers run primitives at once.
	 */
	dnnl_primitive_attr_t attr;
	const uint8_t *channels_last; /* per tensor, from the executor's layout plan */
	bool emulated;		      /* emu: the same kernels, standing in for an accelerator */
};

enum ho_cpu_kind { HO_K_PRIM, HO_K_GEMM, HO_K_INDEX_MAP, HO_K_GATHER };

struct ho_kernel {
	int kind;
	const char *name, *op;
	dnnl_primitive_t prim;
	float *fold; /* a Conv's weights and bias with its batch norm folded in */
	/* layout conversions around it (a convolution between NCHW and NHWC) */
	dnnl_primitive_t pre, post;
	dnnl_exec_arg_t pre_args[3], post_args[3];
	int n_pre_args, n_post_args;
	int nargs;
	dnnl_exec_arg_t args[HO_CPU_MAX_ARGS];
	dnnl_memory_t owned[HO_CPU_MAX_ARGS]; /* memory objects to destroy */
	int n_owned;
	/* HO_K_GEMM: batch x (M x K) . (K x N) (+ bias broadcast) */
	char ta, tb;
	int64_t batch, m, n, k, a_step, b_step, y_step;
	float alpha, beta;
	const float *a, *b, *bias;
	int64_t bias_rows, bias_cols; /* the bias's extent, each 1 or the full one */
	float *y;
	/*
	 * HO_K_INDEX_MAP (Transpose, Slice, nearest Resize): output dims in dims[],
	 * input dims in in_dims[]; output axis a walks input axis perm[a], and
	 * map[a][x] is the byte offset its index x adds (an index while preparing)
	 */
	int rank;
	int64_t dims[HO_MAX_RANK], perm[HO_MAX_RANK];
	uint32_t elem;
	const void *src;
	void *dst;
	int64_t in_dims[HO_MAX_RANK];
	int64_t *map[HO_MAX_RANK];
	bool rows_contiguous; /* each last-axis row reads consecutive input bytes */
	/* HO_K_GATHER: outer x n_idx x inner bytes; the axis has axis_dim entries */
	int64_t outer, n_idx, inner, axis_dim;
	const void *idx;
	bool idx64;
};

/* How the CPU backend treats layouts is the operator table's layout class. */
bool ho_cpu_op_same_layout(const char *op)
{
	const struct ho_op_info *oi = ho_op_info(op);

	return oi && oi->layout == HO_LAYOUT_SAME;
}

bool ho_cpu_op_binary(const char *op)
{
	const struct ho_op_info *oi = ho_op_info(op);

	return oi && (oi->flags & HO_OP_BINARY);
}

bool ho_cpu_op_any_layout(const char *op)
{
	const struct ho_op_info *oi = ho_op_info(op);

	return oi && oi->layout != HO_LAYOUT_PLAIN;
}

static void cpu_close(struct ho_backend *c);

static int cpu_open(int threads, struct ho_backend **out, struct ho_error *err)
{
	struct ho_backend *c = calloc(1, sizeof(*c));

	*out = NULL;
	if (!c)
		return ho_err(err, -ENOMEM, "out of memory");
	if (threads > 0)
		omp_set_num_threads(threads);
	if (dnnl_engine_create(&c->eng, dnnl_cpu, 0) != dnnl_success ||
	    dnnl_stream_create(&c->stream, c->eng, dnnl_stream_default_flags) != dnnl_success ||
	    dnnl_primitive_attr_create(&c->attr) != dnnl_success ||
	    dnnl_primitive_attr_set_scratchpad_mode(c->attr, dnnl_scratchpad_mode_user) !=
		dnnl_success) {
		cpu_close(c);
		return ho_err(err, -ENODEV, "oneDNN: cannot create a CPU engine");
	}
	*out = c;
	return 0;
}

static void cpu_close(struct ho_backend *c)
{
	if (!c)
		return;
	if (c->attr)
		dnnl_primitive_attr_destroy(c->attr);
	if (c->stream)
		dnnl_stream_destroy(c->stream);
	if (c->eng)
		dnnl_engine_destroy(c->eng);
	free(c);
}

static void cpu_kernel_free(struct ho_kernel *k)
{
	if (!k)
		return;
	if (k->prim)
		dnnl_primitive_destroy(k->prim);
	free(k->fold);
	if (k->pre)
		dnnl_primitive_destroy(k->pre);
	if (k->post)
		dnnl_primitive_destroy(k->post);
	for (int i = 0; i < k->n_owned; i++)
		dnnl_memory_destroy(k->owned[i]);
	for (int i = 0; i < HO_MAX_RANK; i++)
		free(k->map[i]);
	free(k);
}

/* ---- helpers ---- */

static const struct ho_tensor *in_t(const struct ho_graph *g, const struct ho_node *n, uint32_t i)
{
	return i < n->n_inputs && n->inputs[i] >= 0 ? &g->tensors[n->inputs[i]] : NULL;
}

static int64_t attr_i(const struct ho_node *n, const char *name, int64_t def)
{
	const struct ho_attr *a = ho_node_attr(n, name);

	return a && a->type == HO_ATTR_INT ? a->i : def;
}

static float attr_f(const struct ho_node *n, const char *name, float def)
{
	const struct ho_attr *a = ho_node_attr(n, name);

	return a && a->type == HO_ATTR_FLOAT ? (float)a->f : def;
}

/* INTS attribute into v[0..want-1]; def where absent. false if present with another length. */
static bool attr_ints(const struct ho_node *n, const char *name, int64_t *v, size_t want,
		      int64_t def)
{
	const struct ho_attr *a = ho_node_attr(n, name);

	for (size_t i = 0; i < want; i++)
		v[i] = def;
	if (!a)
		return true;
	if (a->type != HO_ATTR_INTS || a->n != want)
		return false;
	memcpy(v, a->ints, want * sizeof(int64_t));
	return true;
}

static void plain_md(dnnl_memory_desc_t *md, const struct ho_shape *s)
{
	static const dnnl_format_tag_t tags[] = {dnnl_a,      dnnl_a,	    dnnl_ab,
						 dnnl_abc,    dnnl_abcd,    dnnl_abcde,
						 dnnl_abcdef, dnnl_abcdefg, dnnl_abcdefgh};
	dnnl_dims_t d;
	int r = s->rank > 0 ? s->rank : 1;

	for (int i = 0; i < r; i++)
		d[i] = s->rank > 0 ? s->dim[i] : 1;
	dnnl_memory_desc_init_by_tag(md, r, d, dnnl_f32, tags[r]);
}

/* Tensor t's memory: NHWC where the layout plan chose it, else plain row-major. */
static void t_md(const struct ho_backend *c, dnnl_memory_desc_t *md, int32_t t,
		 const struct ho_shape *s)
{
	if (t >= 0 && c->channels_last && c->channels_last[t] && s->rank == 4) {
		dnnl_dims_t d = {s->dim[0], s->dim[1], s->dim[2], s->dim[3]};

		dnnl_memory_desc_init_by_tag(md, 4, d, dnnl_f32, dnnl_acdb);
		return;
	}
	plain_md(md, s);
}

static void t_md_nhwc(dnnl_memory_desc_t *md, const struct ho_shape *s)
{
	dnnl_dims_t d = {s->dim[0], s->dim[1], s->dim[2], s->dim[3]};

	dnnl_memory_desc_init_by_tag(md, 4, d, dnnl_f32, dnnl_acdb);
}

static int ho_mem(struct ho_backend *c, struct ho_kernel *k, const dnnl_memory_desc_t *md,
		  void *ptr, int arg)
{
	dnnl_memory_t m;

	if (dnnl_memory_create(&m, md, c->eng, ptr ? ptr : DNNL_MEMORY_ALLOCATE) != dnnl_success)
		return -ENOMEM;
	k->owned[k->n_owned++] = m;
	if (arg >= 0)
		k->args[k->nargs++] = (dnnl_exec_arg_t){arg, m};
	return 0;
}

static int ho_prim(struct ho_backend *c, struct ho_kernel *k, dnnl_primitive_desc_t pd)
{
	const dnnl_memory_desc_t *sp =
	    dnnl_primitive_desc_query_md(pd, dnnl_query_scratchpad_md, 0);

	if (sp && dnnl_memory_desc_get_size(sp) && ho_mem(c, k, sp, NULL, DNNL_ARG_SCRATCHPAD))
		return -ENOMEM;
	return dnnl_primitive_create(&k->prim, pd) == dnnl_success ? 0 : -EINVAL;
}

static int unsupported(struct ho_error *err, const struct ho_node *n, const char *why)
{
	return ho_err(err, -EOPNOTSUPP, "node '%s' (%s): the cpu backend %s", n->name, n->op_type,
		      why);
}

/*
 * The kernel of a one-input, one-output node from its operation descriptor
 * (init: how initialising it went): its source, its destination, the
 * primitive; "none" says what oneDNN lacks when it has no kernel for it.
 */
static int ho_src_dst_kernel(struct ho_backend *c, struct ho_kernel *k, dnnl_status_t init,
			     const void *desc, dnnl_primitive_attr_t attr,
			     const dnnl_memory_desc_t *xm, const dnnl_memory_desc_t *ym,
			     void *const *buf, const struct ho_node *n, const char *none,
			     struct ho_error *err)
{
	dnnl_primitive_desc_t pd;
	int ret;

	if (init != dnnl_success || dnnl_primitive_desc_create(&pd, desc, attr ? attr : c->attr,
							       c->eng, NULL) != dnnl_success)
		return unsupported(err, n, none);
	ret = ho_mem(c, k, xm, buf[n->inputs[0]], DNNL_ARG_SRC) ||
		      ho_mem(c, k, ym, buf[n->outputs[0]], DNNL_ARG_DST) || ho_prim(c, k, pd)
		  ? ho_err(err, -ENOMEM, "node '%s': oneDNN set-up failed", n->name)
		  : 0;
	dnnl_primitive_desc_destroy(pd);
	return ret;
}

/*
 * The kernel's argument arg in layout kmd, the tensor (at ptr) in layout
 * tmd: the same memory when they agree, else a buffer of the kernel's own
 * and a reorder run before (input) or after (output) the kernel.
 */
static int ho_convert(struct ho_backend *c, struct ho_kernel *k, const dnnl_memory_desc_t *tmd,
		      void *ptr, const dnnl_memory_desc_t *kmd, int arg, bool input)
{
	dnnl_primitive_desc_t rpd = NULL;
	dnnl_primitive_t *r = input ? &k->pre : &k->post;
	dnnl_exec_arg_t *a = input ? k->pre_args : k->post_args;
	int *na = input ? &k->n_pre_args : &k->n_post_args;
	dnnl_memory_t user, own;
	int ret = -EINVAL;

	if (dnnl_memory_desc_equal(tmd, kmd))
		return ho_mem(c, k, tmd, ptr, arg);
	if (ho_mem(c, k, tmd, ptr, -1) || ho_mem(c, k, kmd, NULL, arg))
		return -ENOMEM;
	user = k->owned[k->n_owned - 2];
	own = k->owned[k->n_owned - 1];
	a[0] = (dnnl_exec_arg_t){DNNL_ARG_FROM, input ? user : own};
	a[1] = (dnnl_exec_arg_t){DNNL_ARG_TO, input ? own : user};
	*na = 2;
	if (dnnl_reorder_primitive_desc_create(&rpd, input ? tmd : kmd, c->eng, input ? kmd : tmd,
					       c->eng, c->attr) == dnnl_success) {
		const dnnl_memory_desc_t *sp =
		    dnnl_primitive_desc_query_md(rpd, dnnl_query_scratchpad_md, 0);

		ret = 0;
		if (sp && dnnl_memory_desc_get_size(sp)) {
			ret = ho_mem(c, k, sp, NULL, -1);
			a[(*na)++] =
			    (dnnl_exec_arg_t){DNNL_ARG_SCRATCHPAD, k->owned[k->n_owned - 1]};
		}
		if (!ret && dnnl_primitive_create(r, rpd) != dnnl_success)
			ret = -EINVAL;
		dnnl_primitive_desc_destroy(rpd);
	}
	return ret;
}

/*
 * Weights in the layout pd's kernel wants: used in place when the model's
 * layout already is that, else reordered once into memory the kernel owns.
 */
static int ho_weights(struct ho_backend *c, struct ho_kernel *k, const_dnnl_primitive_desc_t pd,
		      const dnnl_memory_desc_t *user, void *ptr)
{
	const dnnl_memory_desc_t *want = dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0);
	dnnl_primitive_desc_t rpd = NULL;
	dnnl_primitive_t r = NULL;
	dnnl_exec_arg_t ra[2];
	int ret = -EINVAL;

	if (dnnl_memory_desc_equal(want, user))
		return ho_mem(c, k, user, ptr, DNNL_ARG_WEIGHTS);
	if (ho_mem(c, k, user, ptr, -1) || ho_mem(c, k, want, NULL, DNNL_ARG_WEIGHTS))
		return -ENOMEM;
	ra[0] = (dnnl_exec_arg_t){DNNL_ARG_FROM, k->owned[k->n_owned - 2]};
	ra[1] = (dnnl_exec_arg_t){DNNL_ARG_TO, k->owned[k->n_owned - 1]};
	if (dnnl_reorder_primitive_desc_create(&rpd, user, c->eng, want, c->eng, NULL) ==
		dnnl_success &&
	    dnnl_primitive_create(&r, rpd) == dnnl_success &&
	    dnnl_primitive_execute(r, c->stream, 2, ra) == dnnl_success &&
	    dnnl_stream_wait(c->stream) == dnnl_success)
		ret = 0;
	if (r)
		dnnl_primitive_destroy(r);
	if (rpd)
		dnnl_primitive_desc_destroy(rpd);
	return ret;
}

/* ---- operators ---- */

/* A scalar operand (Clip's bounds): its value, or def when omitted. */
static float scalar_input(const struct ho_graph *g, const struct ho_node *n, uint32_t i,
			  void *const *buf, float def)
{
	const struct ho_tensor *t = in_t(g, n, i);

	if (!t || t->dtype != HO_DT_FLOAT)
		return def;
	if (t->value && t->value->f && t->value->count)
		return (float)t->value->f[0];
	return buf[n->inputs[i]] ? *(const float *)buf[n->inputs[i]] : def;
}

/* Every op of ho_op_is_post_op (the fusions the scheduler charges) is here. */
static const struct {
	const char *op;
	dnnl_alg_kind_t alg;
} ho_eltwise_map[] = {
    {"Relu", dnnl_eltwise_relu},
    {"LeakyRelu", dnnl_eltwise_relu},
    {"Sigmoid", dnnl_eltwise_logistic},
    {"Tanh", dnnl_eltwise_tanh},
    {"Exp", dnnl_eltwise_exp},
    {"Log", dnnl_eltwise_log},
    {"Sqrt", dnnl_eltwise_sqrt},
    {"Abs", dnnl_eltwise_abs},
    {"Elu", dnnl_eltwise_elu},
    {"Softplus", dnnl_eltwise_soft_relu},
    {"Clip", dnnl_eltwise_clip_v2},
    {"HardSigmoid", dnnl_eltwise_linear}, /* then clipped to [0, 1] by a post-op */
    {"Pow", dnnl_eltwise_pow},		  /* by a constant scalar exponent */
};

/* An element-wise node as oneDNN's algorithm and parameters; false if it is not one. */
static bool eltwise_params(const struct ho_graph *g, const struct ho_node *n, void *const *buf,
			   dnnl_alg_kind_t *alg, float *alpha, float *beta)
{
	size_t i;

	for (i = 0; i < sizeof(ho_eltwise_map) / sizeof(ho_eltwise_map[0]); i++)
		if (!strcmp(ho_eltwise_map[i].op, n->op_type))
			break;
	if (i == sizeof(ho_eltwise_map) / sizeof(ho_eltwise_map[0]))
		return false;
	*alg = ho_eltwise_map[i].alg;
	*alpha = *beta = 0;
	if (!strcmp(n->op_type, "HardSigmoid")) {
		*alpha = attr_f(n, "alpha", 0.2f);
		*beta = attr_f(n, "beta", 0.5f);
	} else if (!strcmp(n->op_type, "LeakyRelu")) {
		*alpha = attr_f(n, "alpha", 0.01f);
	} else if (!strcmp(n->op_type, "Elu")) {
		*alpha = attr_f(n, "alpha", 1.0f);
	} else if (!strcmp(n->op_type, "Pow")) {
		const struct ho_tensor *e = in_t(g, n, 1);

		if (!e || ho_shape_numel(&e->shape) != 1 ||
		    !(e->flags & (HO_T_INITIALIZER | HO_T_CONSTANT | HO_T_FOLDED)))
			return false; /* an exponent per element, or computed: not element-wise */
		*alpha = 1.0f;
		*beta = scalar_input(g, n, 1, buf, 1.0f);
	} else if (!strcmp(n->op_type, "Clip")) {
		/* opset 11+: bounds are inputs; before: attributes */
		*alpha = scalar_input(g, n, 1, buf, attr_f(n, "min", -FLT_MAX));
		*beta = scalar_input(g, n, 2, buf, attr_f(n, "max", FLT_MAX));
	}
	return true;
}

/*
 * An attribute with n (an element-wise node) as post-ops: after a kernel's
 * own work, or alone (first = true: n's first step is the kernel itself).
 */
static int eltwise_attr(struct ho_backend *c, const struct ho_graph *g, const struct ho_node *n,
			void *const *buf, bool first, dnnl_primitive_attr_t *attr)
{
	dnnl_post_ops_t po = NULL;
	dnnl_alg_kind_t alg;
	float alpha, beta;
	int ret = -ENOMEM;

	*attr = NULL;
	if (!eltwise_params(g, n, buf, &alg, &alpha, &beta))
		return -EINVAL;
	if (first && strcmp(n->op_type, "HardSigmoid"))
		return 0; /* nothing after the kernel */
	if (dnnl_post_ops_create(&po) != dnnl_success)
		return -ENOMEM;
	if ((first || dnnl_post_ops_append_eltwise(po, 1.0f, alg, alpha, beta) == dnnl_success) &&
	    (strcmp(n->op_type, "HardSigmoid") ||
	     dnnl_post_ops_append_eltwise(po, 1.0f, dnnl_eltwise_clip_v2, 0.0f, 1.0f) ==
		 dnnl_success) &&
	    dnnl_primitive_attr_clone(attr, c->attr) == dnnl_success &&
	    dnnl_primitive_attr_set_post_ops(*attr, po) == dnnl_success)
		ret = 0;
	dnnl_post_ops_destroy(po);
	return ret;
}

/*
 * Conv then BatchNormalization, folded: y = gamma * (W x + b - mean) /
 * sqrt(var + eps) + beta is a convolution with each output channel's weights
 * scaled and a new bias.  Computed once, into memory the kernel owns.
 */
static int ho_fold_bn(struct ho_kernel *k, const struct ho_graph *g, const struct ho_node *n,
		      const struct ho_node *bn, void *const *buf, const float **w_out,
		      const float **b_out)
{
	const struct ho_tensor *w = in_t(g, n, 1);
	int64_t oc = w->shape.dim[0], per = ho_shape_numel(&w->shape) / oc;
	const float *wv = buf[n->inputs[1]], *bv = in_t(g, n, 2) ? buf[n->inputs[2]] : NULL;
	const float *gamma = buf[bn->inputs[1]], *beta = buf[bn->inputs[2]],
		    *mean = buf[bn->inputs[3]], *var = buf[bn->inputs[4]];
	float eps = attr_f(bn, "epsilon", 1e-5f), *fw, *fb;

	k->fold = aligned_alloc(64, (size_t)((oc * per + oc) * 4 + 63) & ~(size_t)63);
	if (!k->fold)
		return -ENOMEM;
	fw = k->fold;
	fb = fw + oc * per;
	for (int64_t o = 0; o < oc; o++) {
		float scale = gamma[o] / sqrtf(var[o] + eps);

		for (int64_t j = 0; j < per; j++)
			fw[o * per + j] = wv[o * per + j] * scale;
		fb[o] = ((bv ? bv[o] : 0.0f) - mean[o]) * scale + beta[o];
	}
	*w_out = fw;
	*b_out = fb;
	return 0;
}

/* Conv and ConvTranspose (oneDNN's deconvolution), 2-D, any group count. */
static int prep_conv(struct ho_backend *c, const struct ho_graph *g, const struct ho_node *n,
		     const struct ho_node *bnn, const struct ho_node *post, void *const *buf,
		     struct ho_kernel *k, struct ho_error *err)
{
	/* bnn, post: nodes folded in (see ho_fusion); the last one's output is written */
	int32_t yid = post ? post->outputs[0] : bnn ? bnn->outputs[0] : n->outputs[0];
	const void *wptr = buf[n->inputs[1]],
		   *bptr = n->n_inputs > 2 && n->inputs[2] >= 0 ? buf[n->inputs[2]] : NULL;
	const struct ho_tensor *x = in_t(g, n, 0), *w = in_t(g, n, 1), *y = &g->tensors[yid];
	dnnl_primitive_attr_t attr = NULL;

	if (bnn) {
		const float *fw, *fb;

		if (!w || w->shape.rank != 4 || ho_fold_bn(k, g, n, bnn, buf, &fw, &fb))
			return ho_err(err, -ENOMEM, "node '%s': cannot fold its batch norm",
				      n->name);
		wptr = fw;
		bptr = fb; /* the folded bias, whether or not the Conv had one */
	}
	bool deconv = !strcmp(n->op_type, "ConvTranspose");
	int64_t group = attr_i(n, "group", 1), st[2], dl[2], pads[4], oc, ic;
	dnnl_memory_desc_t xm, wm, bm, ym, wuser, conv_in, conv_out;
	dnnl_dims_t strides, dil, pl, pr, wd;
	union {
		dnnl_convolution_desc_t conv;
		dnnl_deconvolution_desc_t deconv;
	} d;
	dnnl_primitive_desc_t pd = NULL;
	const struct ho_attr *apa = ho_node_attr(n, "auto_pad");
	const char *ap = apa && apa->type == HO_ATTR_STRING ? apa->s : "NOTSET";
	dnnl_status_t st_init;
	int ret = -ENOMEM;

	if (!x || !w || x->shape.rank != 4 || w->shape.rank != 4 || x->dtype != HO_DT_FLOAT)
		return unsupported(err, n, "runs float32 2-D convolutions (rank-4 tensors) only");
	if (!attr_ints(n, "strides", st, 2, 1) || !attr_ints(n, "dilations", dl, 2, 1) ||
	    !attr_ints(n, "pads", pads, 4, 0))
		return unsupported(err, n, "needs strides/dilations of 2 and pads of 4 values");
	if (group < 1 || x->shape.dim[1] % group)
		return unsupported(err, n, "needs a group count that divides the channels");
	for (int i = 0; i < 2; i++) {
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
			total = total > 0 ? total : 0;
			pl[i] = !strcmp(ap, "SAME_UPPER") ? total / 2 : total - total / 2;
			pr[i] = total - pl[i];
		} else if (!strcmp(ap, "VALID")) {
			pl[i] = 0;
			pr[i] = total > 0 ? total : 0;
		} else {
			pl[i] = pads[i];
			pr[i] = pads[2 + i];
		}
	}
	t_md(c, &xm, n->inputs[0], &x->shape);
	t_md(c, &ym, yid, &y->shape);
	if (post && eltwise_attr(c, g, post, buf, false, &attr))
		return ho_err(err, -ENOMEM, "node '%s': oneDNN post-ops failed", n->name);
	/*
	 * oneDNN has fast kernels for NCHW -> NCHW and NHWC -> NHWC only: the other
	 * way round a mixed pair falls to its reference kernel (resnet18's first
	 * conv: 1.6 s).  Convert the odd side on the way in or out instead.
	 */
	conv_in = xm;
	conv_out = ym;
	if (c->channels_last && (c->channels_last[n->inputs[0]] || c->channels_last[yid])) {
		t_md_nhwc(&conv_in, &x->shape);
		t_md_nhwc(&conv_out, &y->shape);
	}
	/* ONNX weights: Conv [OC, IC/g, kh, kw], ConvTranspose [IC, OC/g, kh, kw]. */
	oc = y->shape.dim[1];
	ic = x->shape.dim[1];
	if (group == 1) {
		wd[0] = oc;
		wd[1] = ic;
		wd[2] = w->shape.dim[2];
		wd[3] = w->shape.dim[3];
		dnnl_memory_desc_init_by_tag(&wuser, 4, wd, dnnl_f32,
					     deconv ? dnnl_iohw : dnnl_oihw);
		dnnl_memory_desc_init_by_tag(&wm, 4, wd, dnnl_f32, dnnl_format_tag_any);
	} else {
		wd[0] = group;
		wd[1] = oc / group;
		wd[2] = ic / group;
		wd[3] = w->shape.dim[2];
		wd[4] = w->shape.dim[3];
		dnnl_memory_desc_init_by_tag(&wuser, 5, wd, dnnl_f32,
					     deconv ? dnnl_giohw : dnnl_goihw);
		dnnl_memory_desc_init_by_tag(&wm, 5, wd, dnnl_f32, dnnl_format_tag_any);
	}
	if (bptr) {
		dnnl_dims_t bd = {oc};

		dnnl_memory_desc_init_by_tag(&bm, 1, bd, dnnl_f32, dnnl_a);
	}
	if (deconv)
		st_init = dnnl_dilated_deconvolution_forward_desc_init(
		    &d.deconv, dnnl_forward_inference, dnnl_deconvolution_direct, &conv_in, &wm,
		    bptr ? &bm : NULL, &conv_out, strides, dil, pl, pr);
	else
		st_init = dnnl_dilated_convolution_forward_desc_init(
		    &d.conv, dnnl_forward_inference, dnnl_convolution_direct, &conv_in, &wm,
		    bptr ? &bm : NULL, &conv_out, strides, dil, pl, pr);
	if (st_init != dnnl_success || dnnl_primitive_desc_create(&pd, &d, attr ? attr : c->attr,
								  c->eng, NULL) != dnnl_success) {
		if (attr)
			dnnl_primitive_attr_destroy(attr);
		return unsupported(err, n, "(oneDNN) has no kernel for these shapes");
	}
	if (ho_convert(c, k, &xm, buf[n->inputs[0]], &conv_in, DNNL_ARG_SRC, true) ||
	    ho_convert(c, k, &ym, buf[yid], &conv_out, DNNL_ARG_DST, false) ||
	    (bptr && ho_mem(c, k, &bm, (void *)bptr, DNNL_ARG_BIAS)))
		goto out;
	ret = ho_weights(c, k, pd, &wuser, (void *)wptr);
	if (ret)
		goto out;
	ret = ho_prim(c, k, pd);
out:
	dnnl_primitive_desc_destroy(pd);
	if (attr)
		dnnl_primitive_attr_destroy(attr);
	return ret ? ho_err(err, ret, "node '%s' (%s): oneDNN set-up failed", n->name, n->op_type)
		   : 0;
}

/* Inference batch normalization: per-channel mean, variance, scale and shift. */
static int prep_bnorm(struct ho_backend *c, const struct ho_graph *g, const struct ho_node *n,
		      void *const *buf, struct ho_kernel *k, struct ho_error *err)
{
	const struct ho_tensor *x = in_t(g, n, 0);
	dnnl_batch_normalization_desc_t d;
	dnnl_primitive_desc_t pd = NULL;
	dnnl_memory_desc_t md, cm;
	static const int arg[4] = {DNNL_ARG_SCALE, DNNL_ARG_SHIFT, DNNL_ARG_MEAN,
				   DNNL_ARG_VARIANCE};
	int ret = 0;

	if (!x || x->dtype != HO_DT_FLOAT || x->shape.rank < 2 || n->n_inputs < 5)
		return unsupported(err, n, "runs float32 inference batch normalization only");
	for (uint32_t i = 1; i < 5; i++)
		if (!in_t(g, n, i) || ho_shape_numel(&in_t(g, n, i)->shape) != x->shape.dim[1])
			return unsupported(err, n,
					   "needs scale, bias, mean and variance per channel");
	t_md(c, &md, n->inputs[0], &x->shape);
	{
		dnnl_dims_t cd = {x->shape.dim[1]};

		dnnl_memory_desc_init_by_tag(&cm, 1, cd, dnnl_f32, dnnl_a);
	}
	if (dnnl_batch_normalization_forward_desc_init(
		&d, dnnl_forward_inference, &md, attr_f(n, "epsilon", 1e-5f),
		dnnl_use_global_stats | dnnl_use_scale | dnnl_use_shift) != dnnl_success ||
	    dnnl_primitive_desc_create(&pd, &d, c->attr, c->eng, NULL) != dnnl_success)
		return unsupported(err, n, "(oneDNN) has no batch normalization for this");
	ret = ho_mem(c, k, &md, buf[n->inputs[0]], DNNL_ARG_SRC) ||
	      ho_mem(c, k, &md, buf[n->outputs[0]], DNNL_ARG_DST);
	for (uint32_t i = 0; i < 4 && !ret; i++)
		ret = ho_mem(c, k, &cm, buf[n->inputs[1 + i]], arg[i]);
	if (ret || ho_prim(c, k, pd))
		ret = ho_err(err, -ENOMEM, "node '%s': oneDNN set-up failed", n->name);
	dnnl_primitive_desc_destroy(pd);
	return ret;
}

static int prep_pool(struct ho_backend *c, const struct ho_graph *g, const struct ho_node *n,
		     void *const *buf, struct ho_kernel *k, struct ho_error *err)
{
	const struct ho_tensor *x = in_t(g, n, 0), *y = &g->tensors[n->outputs[0]];
	bool global = !strncmp(n->op_type, "Global", 6), is_max = strstr(n->op_type, "Max") != NULL;
	int64_t ks[2], st[2], dl[2], pads[4];
	dnnl_dims_t kernel, strides, dil, pl, pr;
	dnnl_memory_desc_t xm, ym;
	dnnl_pooling_v2_desc_t d;
	dnnl_alg_kind_t alg;

	if (!x || x->shape.rank != 4)
		return unsupported(err, n, "pools rank-4 (NCHW) tensors only");
	if (!global &&
	    (!attr_ints(n, "kernel_shape", ks, 2, 1) || !attr_ints(n, "strides", st, 2, 1) ||
	     !attr_ints(n, "dilations", dl, 2, 1) || !attr_ints(n, "pads", pads, 4, 0)))
		return unsupported(err, n, "needs 2-D kernel_shape/strides/dilations and 4 pads");
	for (int i = 0; i < 2; i++) {
		int64_t in = x->shape.dim[2 + i], out = y->shape.dim[2 + i];

		if (global) {
			ks[i] = in;
			st[i] = 1;
			dl[i] = 1;
			pads[i] = pads[2 + i] = 0;
		}
		kernel[i] = ks[i];
		strides[i] = st[i];
		dil[i] = dl[i] - 1;
		pl[i] = pads[i];
		/* ceil_mode: the right pad that yields the inferred output size. */
		pr[i] = (out - 1) * st[i] + (ks[i] - 1) * dl[i] + 1 - in - pl[i];
		if (pr[i] < 0)
			pr[i] = 0;
	}
	if (is_max)
		alg = dnnl_pooling_max;
	else
		alg = attr_i(n, "count_include_pad", 0) ? dnnl_pooling_avg_include_padding
							: dnnl_pooling_avg_exclude_padding;
	t_md(c, &xm, n->inputs[0], &x->shape);
	/* A global pool's [N, C, 1, 1] is the same bytes in either layout: say the
	 * input's, or oneDNN sees a layout change and takes its reference kernel
	 * (68 ms of the PP-OCR detector's 200). */
	t_md(c, &ym, global ? n->inputs[0] : n->outputs[0], &y->shape);
	return ho_src_dst_kernel(
	    c, k,
	    dnnl_pooling_v2_forward_desc_init(&d, dnnl_forward_inference, alg, &xm, &ym, strides,
					      kernel, dil, pl, pr),
	    &d, NULL, &xm, &ym, buf, n, "(oneDNN) has no pooling for these shapes", err);
}

static int prep_eltwise(struct ho_backend *c, const struct ho_graph *g, const struct ho_node *n,
			void *const *buf, struct ho_kernel *k, struct ho_error *err)
{
	const struct ho_tensor *x = in_t(g, n, 0);
	dnnl_eltwise_desc_t d;
	dnnl_primitive_attr_t attr = NULL;
	dnnl_memory_desc_t md;
	dnnl_alg_kind_t alg;
	float alpha, beta;
	int ret;

	if (!x || x->dtype != HO_DT_FLOAT || !eltwise_params(g, n, buf, &alg, &alpha, &beta))
		return unsupported(err, n, "runs float32 element-wise operators only");
	if (eltwise_attr(c, g, n, buf, true, &attr))
		return ho_err(err, -ENOMEM, "node '%s': oneDNN post-ops failed", n->name);
	t_md(c, &md, n->inputs[0], &x->shape);
	ret = ho_src_dst_kernel(
	    c, k, dnnl_eltwise_forward_desc_init(&d, dnnl_forward_inference, alg, &md, alpha, beta),
	    &d, attr, &md, &md, buf, n, "(oneDNN) has no element-wise kernel for this", err);
	if (attr)
		dnnl_primitive_attr_destroy(attr);
	return ret;
}

/* s with leading 1s up to rank r (numpy broadcasting aligns the last axes). */
static struct ho_shape ho_lift(const struct ho_shape *s, int r)
{
	struct ho_shape o = {.rank = r};
	int sr = s->rank > 0 ? s->rank : 0;

	for (int i = 0; i < r; i++)
		o.dim[i] = i < r - sr ? 1 : s->dim[i - (r - sr)];
	return o;
}

static int prep_binary(struct ho_backend *c, const struct ho_graph *g, const struct ho_node *n,
		       void *const *buf, struct ho_kernel *k, struct ho_error *err)
{
	static const struct {
		const char *op;
		dnnl_alg_kind_t alg;
		bool commutes;
	} map[] = {
	    {"Add", dnnl_binary_add, true},  {"Mul", dnnl_binary_mul, true},
	    {"Sub", dnnl_binary_sub, false}, {"Div", dnnl_binary_div, false},
	    {"Max", dnnl_binary_max, true},  {"Min", dnnl_binary_min, true},
	};
	const struct ho_tensor *a = in_t(g, n, 0), *b = in_t(g, n, 1),
			       *y = &g->tensors[n->outputs[0]];
	int r = y->shape.rank > 0 ? y->shape.rank : 1;
	struct ho_shape sa, sb, sy = ho_lift(&y->shape, r);
	dnnl_memory_desc_t ma, mb, my;
	dnnl_binary_desc_t d;
	dnnl_primitive_desc_t pd = NULL;
	int32_t ia, ib;
	size_t i;
	int ret;

	for (i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (!strcmp(map[i].op, n->op_type))
			break;
	if (!a || !b || n->n_inputs != 2 || a->dtype != HO_DT_FLOAT || b->dtype != HO_DT_FLOAT)
		return unsupported(err, n, "runs two-input float32 binary operators only");
	sa = ho_lift(&a->shape, r);
	sb = ho_lift(&b->shape, r);
	ia = n->inputs[0];
	ib = n->inputs[1];
	/* oneDNN broadcasts its second source only: swap when the first is smaller. */
	if (memcmp(sa.dim, sy.dim, (size_t)r * sizeof(int64_t))) {
		struct ho_shape t = sa;

		if (!map[i].commutes || memcmp(sb.dim, sy.dim, (size_t)r * sizeof(int64_t)))
			return unsupported(err, n,
					   "broadcasts the second input only (or both, for a "
					   "commutative operator)");
		sa = sb;
		sb = t;
		ia = n->inputs[1];
		ib = n->inputs[0];
	}
	t_md(c, &ma, g->tensors[ia].shape.rank == r ? ia : -1, &sa);
	t_md(c, &mb, g->tensors[ib].shape.rank == r ? ib : -1, &sb);
	t_md(c, &my, n->outputs[0], &sy);
	if (dnnl_binary_desc_init(&d, map[i].alg, &ma, &mb, &my) != dnnl_success ||
	    dnnl_primitive_desc_create(&pd, &d, c->attr, c->eng, NULL) != dnnl_success)
		return unsupported(err, n, "(oneDNN) has no binary kernel for these shapes");
	ret = ho_mem(c, k, &ma, buf[ia], DNNL_ARG_SRC_0) ||
		      ho_mem(c, k, &mb, buf[ib], DNNL_ARG_SRC_1) ||
		      ho_mem(c, k, &my, buf[n->outputs[0]], DNNL_ARG_DST) || ho_prim(c, k, pd)
		  ? ho_err(err, -ENOMEM, "node '%s': oneDNN set-up failed", n->name)
		  : 0;
	dnnl_primitive_desc_destroy(pd);
	return ret;
}

static int prep_concat(struct ho_backend *c, const struct ho_graph *g, const struct ho_node *n,
		       void *const *buf, struct ho_kernel *k, struct ho_error *err)
{
	const struct ho_tensor *y = &g->tensors[n->outputs[0]];
	int64_t axis = attr_i(n, "axis", 0);
	dnnl_memory_desc_t md[HO_CPU_MAX_ARGS - 1], ym;
	dnnl_primitive_desc_t pd = NULL;
	int ret = 0;

	if (axis < 0)
		axis += y->shape.rank;
	if (n->n_inputs < 1 || n->n_inputs >= HO_CPU_MAX_ARGS - 1 || y->dtype != HO_DT_FLOAT)
		return unsupported(err, n, "concatenates 1 to 14 float32 inputs");
	for (uint32_t i = 0; i < n->n_inputs; i++) {
		if (n->inputs[i] < 0)
			return unsupported(err, n, "needs every input present");
		t_md(c, &md[i], n->inputs[i], &g->tensors[n->inputs[i]].shape);
	}
	t_md(c, &ym, n->outputs[0], &y->shape);
	if (dnnl_concat_primitive_desc_create(&pd, &ym, (int)n->n_inputs, (int)axis, md, c->attr,
					      c->eng) != dnnl_success)
		return unsupported(err, n, "(oneDNN) cannot concatenate these shapes");
	for (uint32_t i = 0; i < n->n_inputs && !ret; i++)
		ret = ho_mem(c, k, &md[i], buf[n->inputs[i]], DNNL_ARG_MULTIPLE_SRC + (int)i);
	if (ret || ho_mem(c, k, &ym, buf[n->outputs[0]], DNNL_ARG_DST) || ho_prim(c, k, pd))
		ret = ho_err(err, -ENOMEM, "node '%s': oneDNN set-up failed", n->name);
	dnnl_primitive_desc_destroy(pd);
	return ret;
}

static int prep_softmax(struct ho_backend *c, const struct ho_graph *g, const struct ho_node *n,
			void *const *buf, struct ho_kernel *k, struct ho_error *err)
{
	const struct ho_tensor *x = in_t(g, n, 0);
	int64_t axis = attr_i(n, "axis", n->opset >= 13 ? -1 : 1);
	dnnl_softmax_desc_t d;
	dnnl_memory_desc_t md;

	if (!x || x->dtype != HO_DT_FLOAT || x->shape.rank < 1)
		return unsupported(err, n, "runs float32 softmax only");
	if (axis < 0)
		axis += x->shape.rank;
	/* Before opset 13 the input is flattened at axis: the same only on the last one. */
	if (n->opset < 13 && axis != x->shape.rank - 1)
		return unsupported(err, n, "runs pre-13 softmax on the last axis only");
	plain_md(&md, &x->shape);
	return ho_src_dst_kernel(
	    c, k, dnnl_softmax_forward_desc_init(&d, dnnl_forward_inference, &md, (int)axis), &d,
	    NULL, &md, &md, buf, n, "(oneDNN) has no softmax for this", err);
}

/*
 * The maps' input indices to byte offsets, axis a's scaled by the stride of
 * the input axis it walks (perm[a]).  Rows that read consecutive bytes are
 * then copied whole.
 */
static void ho_map_to_bytes(struct ho_kernel *k)
{
	int64_t stride[HO_MAX_RANK], s = k->elem;
	int last = k->rank - 1;

	for (int i = last; i >= 0; i--) {
		stride[i] = s;
		s *= k->in_dims[i];
	}
	for (int a = 0; a <= last; a++)
		for (int64_t x = 0; x < k->dims[a]; x++)
			k->map[a][x] *= stride[k->perm[a]];
	k->rows_contiguous = last >= 0;
	for (int64_t x = 1; last >= 0 && x < k->dims[last]; x++)
		k->rows_contiguous &= k->map[last][x] == k->map[last][x - 1] + k->elem;
}

/* Resize's source coordinate of output index x on an axis (ONNX's formulas). */
static double resize_coord(const char *mode, int64_t x, int64_t in, int64_t out, double scale)
{
	if (!strcmp(mode, "half_pixel"))
		return (x + 0.5) / scale - 0.5;
	if (!strcmp(mode, "pytorch_half_pixel"))
		return out > 1 ? (x + 0.5) / scale - 0.5 : 0;
	if (!strcmp(mode, "align_corners"))
		return out > 1 ? (double)x * (in - 1) / (out - 1) : 0;
	if (!strcmp(mode, "tf_half_pixel_for_nn"))
		return (x + 0.5) / scale;
	return x / scale; /* asymmetric */
}

static int64_t resize_nearest(const char *mode, double v)
{
	double f = floor(v);

	if (!strcmp(mode, "floor"))
		return (int64_t)f;
	if (!strcmp(mode, "ceil"))
		return (int64_t)ceil(v);
	if (v - f == 0.5)
		return (int64_t)(!strcmp(mode, "round_prefer_ceil") ? f + 1 : f);
	return (int64_t)floor(v + 0.5); /* round_prefer_floor, the default */
}

/*
 * Resize / Upsample.  Nearest is data movement: a reference loop over
 * precomputed source indices, exact for every coordinate and rounding mode.
 * Linear with half-pixel centres on the last two axes is oneDNN's resampling.
 */
static int prep_resize(struct ho_backend *c, const struct ho_graph *g, const struct ho_node *n,
		       void *const *buf, struct ho_kernel *k, struct ho_error *err)
{
	const struct ho_tensor *x = in_t(g, n, 0), *y = &g->tensors[n->outputs[0]];
	const struct ho_tensor *sc = in_t(g, n, n->opset >= 11 ? 2 : 1);
	const struct ho_attr *ma = ho_node_attr(n, "mode"),
			     *ca = ho_node_attr(n, "coordinate_transformation_mode"),
			     *na = ho_node_attr(n, "nearest_mode");
	const char *mode = ma && ma->type == HO_ATTR_STRING ? ma->s : "nearest",
		   *coord = ca && ca->type == HO_ATTR_STRING ? ca->s : "half_pixel",
		   *nearest = na && na->type == HO_ATTR_STRING ? na->s : "round_prefer_floor";
	int r;

	if (!x || x->dtype != HO_DT_FLOAT || x->shape.rank != y->shape.rank || x->shape.rank < 1)
		return unsupported(err, n, "resizes float32 tensors only");
	r = x->shape.rank;
	if (n->opset < 11)
		coord = "asymmetric"; /* Upsample and Resize-10 */
	if (!strcmp(mode, "nearest")) {
		k->kind = HO_K_INDEX_MAP;
		k->elem = sizeof(float);
		k->rank = r;
		k->src = buf[n->inputs[0]];
		k->dst = buf[n->outputs[0]];
		/* Axes in memory order: an NHWC tensor is walked N, H, W, C. */
		static const int nhwc[4] = {0, 2, 3, 1};
		bool cl = r == 4 && c->channels_last && c->channels_last[n->inputs[0]];

		for (int p = 0; p < r; p++) {
			int a = cl ? nhwc[p] : p;
			int64_t in = x->shape.dim[a], out = y->shape.dim[a];
			double scale = (double)out / (double)in;

			if (sc && sc->value && sc->value->f && sc->value->count == (size_t)r)
				scale = sc->value->f[a];
			k->dims[p] = out;
			k->in_dims[p] = in;
			k->map[p] = malloc((size_t)(out > 0 ? out : 1) * sizeof(int64_t));
			if (!k->map[p])
				return ho_err(err, -ENOMEM, "out of memory");
			for (int64_t o = 0; o < out; o++) {
				int64_t v =
				    resize_nearest(nearest, resize_coord(coord, o, in, out, scale));

				k->map[p][o] = v < 0 ? 0 : v >= in ? in - 1 : v;
			}
			k->perm[p] = p;
		}
		ho_map_to_bytes(k);
		return 0;
	}
	if (strcmp(mode, "linear") || r < 3 ||
	    (strcmp(coord, "half_pixel") && strcmp(coord, "pytorch_half_pixel")))
		return unsupported(err, n, "resizes linearly only with half-pixel centres");
	for (int a = 0; a < 2; a++)
		if (x->shape.dim[a] != y->shape.dim[a])
			return unsupported(err, n, "resizes the spatial axes only");
	{
		float factors[HO_MAX_RANK];
		dnnl_resampling_desc_t d;
		dnnl_memory_desc_t xm, ym;
		int ret;

		for (int a = 2; a < r; a++)
			factors[a - 2] = (float)y->shape.dim[a] / (float)x->shape.dim[a];
		t_md(c, &xm, n->inputs[0], &x->shape);
		t_md(c, &ym, n->outputs[0], &y->shape);
		ret = ho_src_dst_kernel(
		    c, k,
		    dnnl_resampling_forward_desc_init(&d, dnnl_forward_inference,
						      dnnl_resampling_linear, factors, &xm, &ym),
		    &d, NULL, &xm, &ym, buf, n, "(oneDNN) has no resampling for this", err);
		return ret;
	}
}

/*
 * Row by row over the last output axis: the outer axes' offsets summed once
 * a row, then one memcpy or a gather with a fixed element size.
 */
static void run_index_map(const struct ho_kernel *k)
{
	int last = k->rank - 1;
	int64_t idx[HO_MAX_RANK] = {0}, rows = 1, n;
	const int64_t *in;
	char *dst = k->dst;
	size_t row;

	if (k->rank == 0) {
		memcpy(dst, k->src, k->elem);
		return;
	}
	n = k->dims[last];
	in = k->map[last];
	row = (size_t)(n > 0 ? n : 0) * k->elem;
	for (int i = 0; i < last; i++)
		rows *= k->dims[i];
	for (int64_t r = 0; r < rows && n > 0; r++, dst += row) {
		const char *src = k->src;

		for (int i = 0; i < last; i++)
			src += k->map[i][idx[i]];
		if (k->rows_contiguous)
			memcpy(dst, src + in[0], row);
		else if (k->elem == 4)
			for (int64_t x = 0; x < n; x++)
				memcpy(dst + 4 * x, src + in[x], 4);
		else if (k->elem == 8)
			for (int64_t x = 0; x < n; x++)
				memcpy(dst + 8 * x, src + in[x], 8);
		else
			for (int64_t x = 0; x < n; x++)
				memcpy(dst + x * k->elem, src + in[x], k->elem);
		for (int i = last - 1; i >= 0 && ++idx[i] == k->dims[i]; i--)
			idx[i] = 0;
	}
}

/* Gemm: Y = alpha * A' B' + beta * C.  MatMul: batched A B, B shared or per batch. */
static int prep_gemm(const struct ho_graph *g, const struct ho_node *n, void *const *buf,
		     struct ho_kernel *k, struct ho_error *err)
{
	const struct ho_tensor *a = in_t(g, n, 0), *b = in_t(g, n, 1), *cc = in_t(g, n, 2),
			       *y = &g->tensors[n->outputs[0]];
	bool gemm = !strcmp(n->op_type, "Gemm");
	int ra, rb;

	if (!a || !b || a->dtype != HO_DT_FLOAT || b->dtype != HO_DT_FLOAT)
		return unsupported(err, n, "multiplies float32 matrices only");
	ra = a->shape.rank;
	rb = b->shape.rank;
	k->kind = HO_K_GEMM;
	k->a = buf[n->inputs[0]];
	k->b = buf[n->inputs[1]];
	k->y = buf[n->outputs[0]];
	k->alpha = 1;
	k->beta = 0;
	k->ta = k->tb = 'N';
	k->batch = 1;
	if (gemm) {
		if (ra != 2 || rb != 2)
			return unsupported(err, n, "runs Gemm on 2-D inputs only");
		k->ta = attr_i(n, "transA", 0) ? 'T' : 'N';
		k->tb = attr_i(n, "transB", 0) ? 'T' : 'N';
		k->alpha = attr_f(n, "alpha", 1);
		k->m = y->shape.dim[0];
		k->n = y->shape.dim[1];
		k->k = k->ta == 'T' ? a->shape.dim[0] : a->shape.dim[1];
		if (cc) {
			struct ho_shape s = ho_lift(&cc->shape, 2);

			if (cc->dtype != HO_DT_FLOAT || (s.dim[0] != 1 && s.dim[0] != k->m) ||
			    (s.dim[1] != 1 && s.dim[1] != k->n))
				return unsupported(err, n, "needs C broadcastable to M x N");
			k->bias = buf[n->inputs[2]];
			k->bias_rows = s.dim[0];
			k->bias_cols = s.dim[1];
			k->beta = attr_f(n, "beta", 1);
		}
		return 0;
	}
	/* MatMul: [..., M, K] x [K, N] folds the batch into M; equal batches loop. */
	if (ra < 2 || rb < 2)
		return unsupported(err, n, "runs MatMul on inputs of rank 2 or more only");
	k->k = a->shape.dim[ra - 1];
	k->n = b->shape.dim[rb - 1];
	if (rb == 2) {
		k->m = ho_shape_numel(&a->shape) / k->k;
		return 0;
	}
	if (ra != rb)
		return unsupported(err, n, "runs batched MatMul with equal ranks only");
	for (int i = 0; i < ra - 2; i++)
		if (a->shape.dim[i] != b->shape.dim[i])
			return unsupported(err, n, "runs batched MatMul without broadcasting only");
	k->m = a->shape.dim[ra - 2];
	k->batch = ho_shape_numel(&a->shape) / (k->m * k->k);
	k->a_step = k->m * k->k;
	k->b_step = k->k * k->n;
	k->y_step = k->m * k->n;
	return 0;
}

/*
 * MatMul by [K, N] weights with its bias Add (and an element-wise node) folded
 * in: one oneDNN matmul, the bias and the post-op applied as it writes.
 */
static int prep_matmul_bias(struct ho_backend *c, const struct ho_graph *g, const struct ho_node *n,
			    const struct ho_node *add, const struct ho_node *post, void *const *buf,
			    struct ho_kernel *k, struct ho_error *err)
{
	const struct ho_tensor *a = in_t(g, n, 0), *w = in_t(g, n, 1);
	int32_t bias = add->inputs[0] == n->outputs[0] ? add->inputs[1] : add->inputs[0];
	int32_t y = post ? post->outputs[0] : add->outputs[0];
	dnnl_matmul_desc_t d;
	dnnl_primitive_desc_t pd = NULL;
	dnnl_primitive_attr_t attr = NULL;
	dnnl_memory_desc_t am, wm, bm, ym;
	int64_t kk, nn;
	int ret = 0;

	if (!a || !w || a->dtype != HO_DT_FLOAT || a->shape.rank < 2 || w->shape.rank != 2)
		return unsupported(err, n, "folds a bias into float32 [..., K] x [K, N] only");
	kk = w->shape.dim[0];
	nn = w->shape.dim[1];
	dnnl_memory_desc_init_by_tag(&am, 2, (dnnl_dims_t){ho_shape_numel(&a->shape) / kk, kk},
				     dnnl_f32, dnnl_ab);
	dnnl_memory_desc_init_by_tag(&wm, 2, (dnnl_dims_t){kk, nn}, dnnl_f32, dnnl_ab);
	dnnl_memory_desc_init_by_tag(&bm, 2, (dnnl_dims_t){1, nn}, dnnl_f32, dnnl_ab);
	dnnl_memory_desc_init_by_tag(&ym, 2, (dnnl_dims_t){ho_shape_numel(&a->shape) / kk, nn},
				     dnnl_f32, dnnl_ab);
	if (post && eltwise_attr(c, g, post, buf, false, &attr))
		return ho_err(err, -ENOMEM, "node '%s': oneDNN post-ops failed", n->name);
	if (dnnl_matmul_desc_init(&d, &am, &wm, &bm, &ym) != dnnl_success ||
	    dnnl_primitive_desc_create(&pd, &d, attr ? attr : c->attr, c->eng, NULL) !=
		dnnl_success) {
		ret = unsupported(err, n, "(oneDNN) has no matmul for this");
		goto out;
	}
	if (ho_mem(c, k, &am, buf[n->inputs[0]], DNNL_ARG_SRC) ||
	    ho_mem(c, k, &wm, buf[n->inputs[1]], DNNL_ARG_WEIGHTS) ||
	    ho_mem(c, k, &bm, buf[bias], DNNL_ARG_BIAS) ||
	    ho_mem(c, k, &ym, buf[y], DNNL_ARG_DST) || ho_prim(c, k, pd))
		ret = ho_err(err, -ENOMEM, "node '%s': oneDNN set-up failed", n->name);
out:
	if (pd)
		dnnl_primitive_desc_destroy(pd);
	if (attr)
		dnnl_primitive_attr_destroy(attr);
	return ret;
}

static int run_gemm(struct ho_kernel *k)
{
	for (int64_t bt = 0; bt < k->batch; bt++) {
		float *y = k->y + bt * k->y_step;

		if (k->bias)
			for (int64_t i = 0; i < k->m; i++)
				for (int64_t j = 0; j < k->n; j++)
					y[i * k->n + j] =
					    k->bias[(k->bias_rows == 1 ? 0 : i) * k->bias_cols +
						    (k->bias_cols == 1 ? 0 : j)];
		if (dnnl_sgemm(k->ta, k->tb, k->m, k->n, k->k, k->alpha, k->a + bt * k->a_step,
			       k->ta == 'T' ? k->m : k->k, k->b + bt * k->b_step,
			       k->tb == 'T' ? k->k : k->n, k->bias ? k->beta : 0.0f, y,
			       k->n) != dnnl_success)
			return -EIO;
	}
	return 0;
}

/* An index map whose output axis a walks input axis perm[a] in order. */
static int prep_transpose(const struct ho_graph *g, const struct ho_node *n, void *const *buf,
			  struct ho_kernel *k, struct ho_error *err)
{
	const struct ho_tensor *x = in_t(g, n, 0);
	unsigned seen = 0;
	int r;

	if (!x || !ho_dtype_size(x->dtype))
		return unsupported(err, n, "transposes fixed-size elements only");
	r = x->shape.rank;
	if (!attr_ints(n, "perm", k->perm, (size_t)r, 0))
		return unsupported(err, n, "needs a perm of the input's rank");
	if (!ho_node_attr(n, "perm"))
		for (int i = 0; i < r; i++)
			k->perm[i] = r - 1 - i;
	for (int i = 0; i < r; i++) {
		if (k->perm[i] < 0 || k->perm[i] >= r || seen >> k->perm[i] & 1)
			return unsupported(err, n, "needs a perm that is a permutation");
		seen |= 1u << k->perm[i];
	}
	k->kind = HO_K_INDEX_MAP;
	k->rank = r;
	k->elem = (uint32_t)ho_dtype_size(x->dtype);
	k->src = buf[n->inputs[0]];
	k->dst = buf[n->outputs[0]];
	memcpy(k->in_dims, x->shape.dim, (size_t)r * sizeof(int64_t));
	for (int a = 0; a < r; a++) {
		k->dims[a] = x->shape.dim[k->perm[a]];
		k->map[a] = malloc((size_t)(k->dims[a] > 0 ? k->dims[a] : 1) * sizeof(int64_t));
		if (!k->map[a])
			return ho_err(err, -ENOMEM, "out of memory");
		for (int64_t o = 0; o < k->dims[a]; o++)
			k->map[a][o] = o;
	}
	ho_map_to_bytes(k);
	return 0;
}

/* Input i as up to max integers (a constant: filled at plan time); its count, or -1. */
static int int_input(const struct ho_graph *g, const struct ho_node *n, uint32_t i,
		     void *const *buf, int64_t *v, int max)
{
	const struct ho_tensor *t = in_t(g, n, i);
	int64_t cnt;

	if (!t || !(t->flags & (HO_T_INITIALIZER | HO_T_CONSTANT | HO_T_FOLDED)))
		return -1; /* absent, or computed at run time */
	cnt = ho_shape_numel(&t->shape);
	if (cnt < 0 || cnt > max || !buf[n->inputs[i]])
		return -1;
	for (int64_t k = 0; k < cnt; k++)
		if (t->dtype == HO_DT_INT64)
			v[k] = ((const int64_t *)buf[n->inputs[i]])[k];
		else if (t->dtype == HO_DT_INT32)
			v[k] = ((const int32_t *)buf[n->inputs[i]])[k];
		else
			return -1;
	return (int)cnt;
}

/* Slice: the first index and the step on each axis; the output's dims are inferred. */
static int prep_slice(const struct ho_graph *g, const struct ho_node *n, void *const *buf,
		      struct ho_kernel *k, struct ho_error *err)
{
	const struct ho_tensor *x = in_t(g, n, 0), *y = &g->tensors[n->outputs[0]];
	int64_t starts[HO_MAX_RANK], axes[HO_MAX_RANK], steps[HO_MAX_RANK];
	int ns, na, r;
	bool has_axes, has_steps;

	if (!x || !ho_dtype_size(x->dtype))
		return unsupported(err, n, "slices fixed-size elements only");
	r = x->shape.rank;
	if (n->opset < 10) { /* starts, ends and axes were attributes */
		const struct ho_attr *sa = ho_node_attr(n, "starts"), *aa = ho_node_attr(n, "axes");

		if (!sa || sa->type != HO_ATTR_INTS || sa->n > HO_MAX_RANK ||
		    (aa && (aa->type != HO_ATTR_INTS || aa->n != sa->n)))
			return unsupported(err, n, "needs starts (and axes) of one length");
		ns = na = (int)sa->n;
		memcpy(starts, sa->ints, sa->n * sizeof(int64_t));
		if (aa)
			memcpy(axes, aa->ints, aa->n * sizeof(int64_t));
		has_axes = aa != NULL;
		has_steps = false;
	} else {
		has_axes = in_t(g, n, 3) != NULL;
		has_steps = in_t(g, n, 4) != NULL;
		ns = int_input(g, n, 1, buf, starts, HO_MAX_RANK);
		na = has_axes ? int_input(g, n, 3, buf, axes, HO_MAX_RANK) : ns;
		if (ns < 0 || na != ns ||
		    (has_steps && int_input(g, n, 4, buf, steps, HO_MAX_RANK) != ns))
			return unsupported(err, n, "needs constant starts, axes and steps");
	}
	int64_t first[HO_MAX_RANK] = {0}, step[HO_MAX_RANK];

	for (int a = 0; a < r; a++)
		step[a] = 1;
	for (int i = 0; i < ns; i++) {
		int64_t a = has_axes ? axes[i] : i, dim, s, st, hi;

		a += a < 0 ? r : 0;
		if (a < 0 || a >= r)
			return unsupported(err, n, "has an axis outside the input");
		dim = x->shape.dim[a];
		st = has_steps ? steps[i] : 1;
		if (st == 0)
			return unsupported(err, n, "has a step of 0");
		s = starts[i] + (starts[i] < 0 ? dim : 0);
		hi = st > 0 ? dim
			    : dim - 1; /* ONNX clamps to [0, dim], or [0, dim - 1] going back */
		first[a] = s < 0 ? 0 : s > hi ? hi : s;
		step[a] = st;
	}
	k->kind = HO_K_INDEX_MAP;
	k->rank = r;
	k->elem = (uint32_t)ho_dtype_size(x->dtype);
	k->src = buf[n->inputs[0]];
	k->dst = buf[n->outputs[0]];
	for (int a = 0; a < r; a++) {
		k->in_dims[a] = x->shape.dim[a];
		k->dims[a] = y->shape.dim[a];
		k->map[a] = malloc((size_t)(k->dims[a] > 0 ? k->dims[a] : 1) * sizeof(int64_t));
		if (!k->map[a])
			return ho_err(err, -ENOMEM, "out of memory");
		for (int64_t o = 0; o < k->dims[a]; o++)
			k->map[a][o] = first[a] + o * step[a];
		k->perm[a] = a;
	}
	ho_map_to_bytes(k);
	return 0;
}

static int prep_gather(const struct ho_graph *g, const struct ho_node *n, void *const *buf,
		       struct ho_kernel *k, struct ho_error *err)
{
	const struct ho_tensor *x = in_t(g, n, 0), *ix = in_t(g, n, 1);
	int64_t axis = attr_i(n, "axis", 0);

	if (!x || !ix || !ho_dtype_size(x->dtype) ||
	    (ix->dtype != HO_DT_INT64 && ix->dtype != HO_DT_INT32))
		return unsupported(err, n,
				   "gathers fixed-size elements by int32/int64 indices only");
	axis += axis < 0 ? x->shape.rank : 0;
	if (axis < 0 || axis >= x->shape.rank)
		return unsupported(err, n, "has an axis outside the input");
	k->kind = HO_K_GATHER;
	k->outer = 1;
	k->inner = (int64_t)ho_dtype_size(x->dtype);
	for (int a = 0; a < x->shape.rank; a++)
		if (a < axis)
			k->outer *= x->shape.dim[a];
		else if (a > axis)
			k->inner *= x->shape.dim[a];
	k->axis_dim = x->shape.dim[axis];
	k->n_idx = ho_shape_numel(&ix->shape);
	k->idx = buf[n->inputs[1]];
	k->idx64 = ix->dtype == HO_DT_INT64;
	k->src = buf[n->inputs[0]];
	k->dst = buf[n->outputs[0]];
	return 0;
}

static int run_gather(const struct ho_kernel *k)
{
	const char *src = k->src;
	char *dst = k->dst;

	for (int64_t j = 0; j < k->n_idx; j++) {
		int64_t i = k->idx64 ? ((const int64_t *)k->idx)[j] : ((const int32_t *)k->idx)[j];

		i += i < 0 ? k->axis_dim : 0;
		if (i < 0 || i >= k->axis_dim)
			return -EINVAL; /* an index from the data: checked at run time */
		for (int64_t o = 0; o < k->outer; o++)
			memcpy(dst + (o * k->n_idx + j) * k->inner,
			       src + (o * k->axis_dim + i) * k->inner, (size_t)k->inner);
	}
	return 0;
}

static int prep_reduce_mean(struct ho_backend *c, const struct ho_graph *g, const struct ho_node *n,
			    void *const *buf, struct ho_kernel *k, struct ho_error *err)
{
	const struct ho_tensor *x = in_t(g, n, 0);
	int64_t axes[HO_MAX_RANK];
	const struct ho_attr *aa = ho_node_attr(n, "axes");
	struct ho_shape ys;
	dnnl_reduction_desc_t d;
	dnnl_memory_desc_t xm, ym;
	int na = 0;

	if (!x || x->dtype != HO_DT_FLOAT || x->shape.rank < 1)
		return unsupported(err, n, "reduces float32 only");
	if (aa && aa->type == HO_ATTR_INTS && aa->n <= HO_MAX_RANK) {
		na = (int)aa->n;
		memcpy(axes, aa->ints, aa->n * sizeof(int64_t));
	} else if (in_t(g, n, 1) && (na = int_input(g, n, 1, buf, axes, HO_MAX_RANK)) < 0) {
		return unsupported(err, n, "needs constant axes");
	}
	/* The output with kept dims: the same bytes whatever keepdims says. */
	ys = x->shape;
	for (int i = 0; i < na; i++) {
		int64_t a = axes[i] + (axes[i] < 0 ? x->shape.rank : 0);

		if (a < 0 || a >= x->shape.rank)
			return unsupported(err, n, "has an axis outside the input");
		ys.dim[a] = 1;
	}
	if (!na && !attr_i(n, "noop_with_empty_axes", 0))
		for (int a = 0; a < ys.rank; a++)
			ys.dim[a] = 1;
	plain_md(&xm, &x->shape);
	plain_md(&ym, &ys);
	return ho_src_dst_kernel(
	    c, k, dnnl_reduction_desc_init(&d, dnnl_reduction_mean, &xm, &ym, 0.0f, 0.0f), &d, NULL,
	    &xm, &ym, buf, n, "(oneDNN) has no reduction for this", err);
}

/* LayerNormalization over the last axis (oneDNN's), scale and optional bias. */
static int prep_layer_norm(struct ho_backend *c, const struct ho_graph *g, const struct ho_node *n,
			   void *const *buf, struct ho_kernel *k, struct ho_error *err)
{
	const struct ho_tensor *x = in_t(g, n, 0), *sc = in_t(g, n, 1), *b = in_t(g, n, 2);
	int64_t axis = attr_i(n, "axis", -1);
	unsigned flags = dnnl_use_scale;
	dnnl_layer_normalization_desc_t d;
	dnnl_memory_desc_t md, cm;
	struct ho_shape cs = {.rank = 1};
	int ret;

	if (!x || x->dtype != HO_DT_FLOAT || x->shape.rank < 1 || !sc || sc->dtype != HO_DT_FLOAT ||
	    (b && b->dtype != HO_DT_FLOAT))
		return unsupported(err, n, "normalises float32 with a scale only");
	axis += axis < 0 ? x->shape.rank : 0;
	if (axis != x->shape.rank - 1)
		return unsupported(err, n, "normalises over the last axis only");
	for (uint32_t o = 1; o < n->n_outputs; o++)
		if (n->outputs[o] >= 0 && g->tensors[n->outputs[o]].n_consumers)
			return unsupported(err, n, "does not output the mean and deviation");
	cs.dim[0] = x->shape.dim[axis];
	if (ho_shape_numel(&sc->shape) != cs.dim[0] ||
	    (b && ho_shape_numel(&b->shape) != cs.dim[0]))
		return unsupported(err, n, "needs a scale and bias per normalised element");
	flags |= b ? dnnl_use_shift : 0;
	plain_md(&md, &x->shape);
	plain_md(&cm, &cs);
	ret = ho_src_dst_kernel(
	    c, k,
	    dnnl_layer_normalization_forward_desc_init(&d, dnnl_forward_inference, &md, NULL,
						       attr_f(n, "epsilon", 1e-5f), flags),
	    &d, NULL, &md, &md, buf, n, "(oneDNN) has no layer normalisation for this", err);
	if (!ret && (ho_mem(c, k, &cm, buf[n->inputs[1]], DNNL_ARG_SCALE) ||
		     (b && ho_mem(c, k, &cm, buf[n->inputs[2]], DNNL_ARG_SHIFT))))
		ret = ho_err(err, -ENOMEM, "node '%s': oneDNN set-up failed", n->name);
	return ret;
}

static int cpu_prepare(struct ho_backend *c, const struct ho_graph *g, uint32_t node,
		       const struct ho_fusion *fuse, void *const *buf, const uint8_t *channels_last,
		       struct ho_kernel **out, struct ho_error *err)
{
	const struct ho_node *n = &g->nodes[node];
	const char *op = n->op_type;
	struct ho_kernel *k;
	int ret;

	*out = NULL;
	c->channels_last = channels_last;
	if (*n->domain)
		return unsupported(err, n, "runs the default ONNX domain only");
	if (ho_op_is_view(op) || !strcmp(op, "Constant"))
		return 0;
	if (n->n_outputs < 1 || n->outputs[0] < 0)
		return unsupported(err, n, "needs the first output");
	k = calloc(1, sizeof(*k));
	if (!k)
		return ho_err(err, -ENOMEM, "out of memory");
	k->name = n->name;
	k->op = op;
	if (!strcmp(op, "Conv") || !strcmp(op, "ConvTranspose"))
		ret =
		    prep_conv(c, g, n, fuse && fuse->bn >= 0 ? &g->nodes[fuse->bn] : NULL,
			      fuse && fuse->post >= 0 ? &g->nodes[fuse->post] : NULL, buf, k, err);
	else if (!strcmp(op, "BatchNormalization"))
		ret = prep_bnorm(c, g, n, buf, k, err);
	else if (!strcmp(op, "Resize") || !strcmp(op, "Upsample"))
		ret = prep_resize(c, g, n, buf, k, err);
	else if (!strcmp(op, "MaxPool") || !strcmp(op, "AveragePool") ||
		 !strcmp(op, "GlobalAveragePool") || !strcmp(op, "GlobalMaxPool"))
		ret = prep_pool(c, g, n, buf, k, err);
	else if (!strcmp(op, "Relu") || !strcmp(op, "LeakyRelu") || !strcmp(op, "Sigmoid") ||
		 !strcmp(op, "Tanh") || !strcmp(op, "Exp") || !strcmp(op, "Log") ||
		 !strcmp(op, "Sqrt") || !strcmp(op, "Abs") || !strcmp(op, "Elu") ||
		 !strcmp(op, "Softplus") || !strcmp(op, "Clip") || !strcmp(op, "HardSigmoid") ||
		 !strcmp(op, "Pow"))
		ret = prep_eltwise(c, g, n, buf, k, err);
	else if (!strcmp(op, "Add") || !strcmp(op, "Mul") || !strcmp(op, "Sub") ||
		 !strcmp(op, "Div") || !strcmp(op, "Max") || !strcmp(op, "Min"))
		ret = prep_binary(c, g, n, buf, k, err);
	else if (!strcmp(op, "Concat"))
		ret = prep_concat(c, g, n, buf, k, err);
	else if (!strcmp(op, "Softmax"))
		ret = prep_softmax(c, g, n, buf, k, err);
	else if (!strcmp(op, "MatMul") && fuse && fuse->bn >= 0)
		ret = prep_matmul_bias(c, g, n, &g->nodes[fuse->bn],
				       fuse->post >= 0 ? &g->nodes[fuse->post] : NULL, buf, k, err);
	else if (!strcmp(op, "Gemm") || !strcmp(op, "MatMul"))
		ret = prep_gemm(g, n, buf, k, err);
	else if (!strcmp(op, "Transpose"))
		ret = prep_transpose(g, n, buf, k, err);
	else if (!strcmp(op, "Slice"))
		ret = prep_slice(g, n, buf, k, err);
	else if (!strcmp(op, "Gather"))
		ret = prep_gather(g, n, buf, k, err);
	else if (!strcmp(op, "ReduceMean"))
		ret = prep_reduce_mean(c, g, n, buf, k, err);
	else if (!strcmp(op, "LayerNormalization"))
		ret = prep_layer_norm(c, g, n, buf, k, err);
	else
		ret = unsupported(err, n, "has no kernel for this operator yet");
	if (ret) {
		cpu_kernel_free(k);
		return ret;
	}
	*out = k;
	return 0;
}

static int cpu_launch(struct ho_backend *c, struct ho_kernel *k, struct ho_error *err)
{
	switch (k->kind) {
	case HO_K_GEMM:
		if (run_gemm(k))
			return ho_err(err, -EIO, "node '%s' (%s): dnnl_sgemm failed", k->name,
				      k->op);
		return 0;
	case HO_K_INDEX_MAP:
		run_index_map(k);
		return 0;
	case HO_K_GATHER:
		if (run_gather(k))
			return ho_err(err, -EINVAL, "node '%s' (Gather): an index is out of range",
				      k->name);
		return 0;
	default:
		if ((k->pre && dnnl_primitive_execute(k->pre, c->stream, k->n_pre_args,
						      k->pre_args) != dnnl_success) ||
		    dnnl_primitive_execute(k->prim, c->stream, k->nargs, k->args) != dnnl_success ||
		    (k->post && dnnl_primitive_execute(k->post, c->stream, k->n_post_args,
						       k->post_args) != dnnl_success) ||
		    dnnl_stream_wait(c->stream) != dnnl_success)
			return ho_err(err, -EIO, "node '%s' (%s): oneDNN execution failed", k->name,
				      k->op);
		return 0;
	}
}

/* ---- the backend interface ---- */

static int cpu_open_dev(const struct ho_rt_device *dev, int threads, struct ho_backend **out,
			struct ho_error *err)
{
	(void)dev;
	return cpu_open(threads, out, err);
}

static int emu_open_dev(const struct ho_rt_device *dev, int threads, struct ho_backend **out,
			struct ho_error *err)
{
	int ret = cpu_open(threads, out, err);

	if (!ret)
		(*out)->emulated = true;
	(void)dev;
	return ret;
}

static void cpu_query(const struct ho_backend *c, struct ho_backend_info *info)
{
	info->name = c->emulated ? "emu (emulated, oneDNN)" : "cpu (oneDNN)";
	info->emulated = c->emulated;
	/* An emulated accelerator owns its memory: nothing of it is read in place. */
	info->host_memory = !c->emulated;
}

/* Tensor memory: a region of the pool on the device's node, mapped for the kernels. */
static int cpu_alloc(struct ho_backend *c, struct ho_pool *pool, size_t bytes, int node,
		     struct ho_pool_buf *out)
{
	(void)c;
	return ho_pool_alloc(pool, bytes, node, out);
}

static void cpu_free(struct ho_backend *c, struct ho_pool *pool, struct ho_pool_buf *buf)
{
	(void)c;
	ho_pool_free(pool, buf);
}

static int cpu_export_fd(struct ho_backend *c, struct ho_pool *pool, const struct ho_pool_buf *buf)
{
	(void)c;
	return ho_pool_share_fd(pool, buf);
}

/* The CPU addresses any mappable memory: the pool maps it (and ump can copy through it). */
static int cpu_import_fd(struct ho_backend *c, struct ho_pool *pool, int fd,
			 struct ho_pool_buf *out)
{
	(void)c;
	return ho_pool_import(pool, fd, out);
}

/* Copies into this device: the pool's (ump.ko's copy engines, or memmove). */
static int cpu_copy(struct ho_backend *c, struct ho_pool *pool, const struct ho_pool_copy *cp)
{
	(void)c;
	return ho_pool_copy(pool, cp, 1);
}

static int cpu_sync(struct ho_backend *c)
{
	return dnnl_stream_wait(c->stream) == dnnl_success ? 0 : -EIO;
}

/* cpu and emu differ only in how they open (emu marks itself emulated). */
#define HO_ONEDNN_OPS(open_fn)                                                                     \
	{                                                                                          \
		.open = open_fn, .close = cpu_close, .query = cpu_query, .alloc = cpu_alloc,       \
		.free = cpu_free, .export_fd = cpu_export_fd, .import_fd = cpu_import_fd,          \
		.prepare = cpu_prepare, .launch = cpu_launch, .kernel_free = cpu_kernel_free,      \
		.copy = cpu_copy, .sync = cpu_sync,                                                \
	}

const struct ho_backend_ops ho_backend_cpu = HO_ONEDNN_OPS(cpu_open_dev);
const struct ho_backend_ops ho_backend_emu = HO_ONEDNN_OPS(emu_open_dev);
