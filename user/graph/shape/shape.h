/* SPDX-License-Identifier: MIT */
/*
 * Shape inference's internals (user/graph/shape): the per-node context, the
 * helpers every rule uses, and the rules, one file per operator family.
 * Which rule an operator takes is its entry in the operator table (ops.c).
 * Not installed.
 */
#ifndef HO_SHAPE_H
#define HO_SHAPE_H

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph_priv.h"

struct ho_infer {
	struct ho_graph *g;
	struct ho_arena *a;
	struct ho_error *err;
	struct ho_node *nd;
	int depth;
};

typedef int (*ho_infer_fn)(struct ho_infer *c);

/*
 * Extents are capped well below overflow: 2^40 elements along one axis is
 * beyond any real tensor, and keeps sums and products of two extents exact.
 * Arithmetic on attacker-controlled attributes saturates at HO_DIM_BAD, which
 * the per-node check then reports as "extent too large".
 */
#define HO_DIM_MAX (INT64_C(1) << 40)
#define HO_DIM_BAD INT64_MAX

static inline int64_t dim_add(int64_t a, int64_t b)
{
	int64_t r;

	return __builtin_add_overflow(a, b, &r) ? HO_DIM_BAD : r;
}

static inline int64_t dim_mul(int64_t a, int64_t b)
{
	int64_t r;

	return __builtin_mul_overflow(a, b, &r) ? HO_DIM_BAD : r;
}

/* double -> int64 without undefined behaviour for NaN or out-of-range values. */
static inline int64_t f2i(double f)
{
	if (f != f)
		return 0;
	if (f >= 9.2233720368547758e18)
		return INT64_MAX;
	if (f <= -9.2233720368547758e18)
		return INT64_MIN;
	return (int64_t)f;
}

/* Two's-complement wrapping integer arithmetic, as the runtime's kernels do. */
static inline int64_t wrap_add(int64_t a, int64_t b)
{
	return (int64_t)((uint64_t)a + (uint64_t)b);
}

static inline int64_t wrap_sub(int64_t a, int64_t b)
{
	return (int64_t)((uint64_t)a - (uint64_t)b);
}

static inline int64_t wrap_mul(int64_t a, int64_t b)
{
	return (int64_t)((uint64_t)a * (uint64_t)b);
}

/* Infer g (a subgraph at depth > 0); the core of ho_shape_infer (infer.c). */
int ho_infer_graph(struct ho_graph *g, struct ho_error *err, int depth);
/* bounds.c: whether g's root is being inferred at its bounds (ho_graph_infer_bounds) */
bool ho_infer_at_bounds(const struct ho_graph *g);

static inline int fail(struct ho_infer *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static inline int fail(struct ho_infer *c, const char *fmt, ...)
{
	char msg[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return ho_err(c->err, -EINVAL, "node '%s' (%s): %s", c->nd->name, c->nd->op_type, msg);
}

static inline struct ho_tensor *in_t(struct ho_infer *c, uint32_t k)
{
	if (k >= c->nd->n_inputs || c->nd->inputs[k] < 0)
		return NULL;
	return &c->g->tensors[c->nd->inputs[k]];
}

static inline struct ho_tensor *out_t(struct ho_infer *c, uint32_t k)
{
	if (k >= c->nd->n_outputs || c->nd->outputs[k] < 0)
		return NULL;
	return &c->g->tensors[c->nd->outputs[k]];
}

static inline const struct ho_value *tensor_value(struct ho_infer *c, struct ho_tensor *t)
{
	if (!t)
		return NULL;
	if (!t->value && t->data) {
		int64_t n = ho_shape_numel(&t->shape);

		if (n >= 0 &&
		    n <= ((t->flags & HO_T_BOUND) ? HO_FOLD_BOUND_MAX_ELEMS : HO_FOLD_MAX_ELEMS))
			t->value = ho_value_from_data(c->a, t->dtype, t->data, t->data_len, n);
	}
	return t->value;
}

static inline const struct ho_value *in_v(struct ho_infer *c, uint32_t k)
{
	return tensor_value(c, in_t(c, k));
}

/*
 * The value a view (Identity, Reshape, Squeeze, ...) carries on from its first
 * input: one computed at load, or a small one.  A large weight stays bytes
 * that the runtime reads in place: carried on, it would be a second copy.
 */
static inline const struct ho_value *view_value(struct ho_infer *c)
{
	struct ho_tensor *x = in_t(c, 0);
	int64_t n = x ? ho_shape_numel(&x->shape) : -1;

	return x && ((x->flags & HO_T_FOLDED) || (n >= 0 && n <= HO_FOLD_SMALL_ELEMS)) ? in_v(c, 0)
										       : NULL;
}

static inline int64_t attr_i(struct ho_infer *c, const char *name, int64_t def)
{
	const struct ho_attr *at = ho_node_attr(c->nd, name);

	return at && at->type == HO_ATTR_INT ? at->i : def;
}

static inline const char *attr_s(struct ho_infer *c, const char *name, const char *def)
{
	const struct ho_attr *at = ho_node_attr(c->nd, name);

	return at && at->type == HO_ATTR_STRING ? at->s : def;
}

static inline const int64_t *attr_ints(struct ho_infer *c, const char *name, size_t *n)
{
	const struct ho_attr *at = ho_node_attr(c->nd, name);

	if (!at || at->type != HO_ATTR_INTS) {
		*n = 0;
		return NULL;
	}
	*n = at->n;
	return at->ints;
}

/* Extents a and b may be one: equal, or one of them not known before a run. */
static inline bool ho_dims_agree(int64_t a, int64_t b)
{
	return a < 0 || b < 0 || a == b;
}

static inline bool known(const struct ho_shape *s)
{
	return ho_shape_numel(s) >= 0;
}

/* s without axis a (a scan axis, a sequence's member axis). */
static inline struct ho_shape shape_drop(const struct ho_shape *s, int64_t a)
{
	struct ho_shape o = {.rank = s->rank - 1};

	for (int i = 0, j = 0; i < s->rank; i++)
		if (i != a)
			o.dim[j++] = s->dim[i];
	return o;
}

/* s with extent e inserted at axis a (stacked scan outputs, sequences). */
static inline struct ho_shape shape_insert(const struct ho_shape *s, int64_t a, int64_t e)
{
	struct ho_shape o = {.rank = s->rank + 1};

	for (int i = 0, j = 0; i < o.rank; i++)
		o.dim[i] = i == a ? e : s->dim[j++];
	return o;
}

static inline void set_out(struct ho_infer *c, uint32_t k, int dtype, const struct ho_shape *s)
{
	struct ho_tensor *t = out_t(c, k);

	if (!t)
		return;
	t->dtype = dtype;
	if (s) {
		t->shape = *s;
		for (int i = 0; i < HO_MAX_RANK; i++)
			t->shape.sym[i] = NULL;
	} else {
		t->shape.rank = -1;
	}
}

/*
 * An extent of output k that its inputs' values decide (bounds.c): unknown, or,
 * while ho_graph_infer_bounds prices a run's shapes, most (< 0: no bound known)
 * or the user's bound on that output where smaller; the output is then marked.
 */
int64_t run_decided(struct ho_infer *c, uint32_t k, int64_t most);

/* Folded values live in the graph's arena: past this a model's remaining constants stay
 * unfolded, computed at run time, rather than a hostile chain of them exhausting memory. */
#define HO_FOLD_BUDGET_BYTES ((size_t)512 << 20)
static inline struct ho_value *new_value(struct ho_infer *c, int dtype, size_t count)
{
	struct ho_value *v = c->a->total + count * sizeof(double) <= HO_FOLD_BUDGET_BYTES
				 ? ho_arena_calloc(c->a, 1, sizeof(*v))
				 : NULL;

	if (!v)
		return NULL;
	v->dtype = dtype;
	v->count = count;
	if (dtype == HO_DT_FLOAT || dtype == HO_DT_DOUBLE || dtype == HO_DT_FLOAT16 ||
	    dtype == HO_DT_BFLOAT16)
		v->f = ho_arena_calloc(c->a, count ? count : 1, sizeof(double));
	else
		v->i = ho_arena_calloc(c->a, count ? count : 1, sizeof(int64_t));
	return (v->f || v->i) ? v : NULL;
}

static inline double vget(const struct ho_value *v, size_t k)
{
	return v->f ? v->f[k] : (double)v->i[k];
}

static inline int64_t vgeti(const struct ho_value *v, size_t k)
{
	return v->i ? v->i[k] : f2i(v->f[k]);
}

static inline void vset(struct ho_value *v, size_t k, double f, int64_t i, bool is_int)
{
	if (v->f)
		v->f[k] = is_int ? (double)i : f;
	else
		v->i[k] = is_int ? i : f2i(f);
}

/* Attach a folded value to output k, which must already have a known shape. */
static inline void set_value(struct ho_infer *c, uint32_t k, struct ho_value *v)
{
	struct ho_tensor *t = out_t(c, k);

	if (t && v && (int64_t)v->count == ho_shape_numel(&t->shape)) {
		t->value = v;
		t->flags |= HO_T_FOLDED;
	}
}

static inline int norm_axis(struct ho_infer *c, int64_t axis, int rank, int *out)
{
	*out = 0;
	if (axis < -rank || axis >= rank)
		return fail(c, "axis %" PRId64 " is out of range for rank %d", axis, rank);
	*out = (int)(axis < 0 ? axis + rank : axis);
	return 0;
}

static inline int broadcast(struct ho_infer *c, const struct ho_shape *pa,
			    const struct ho_shape *pb, struct ho_shape *o)
{
	/* Copies: o may alias an operand. */
	const struct ho_shape sa = *pa, sb = *pb, *a = &sa, *b = &sb;

	if (a->rank < 0 || b->rank < 0) {
		o->rank = -1;
		return 0;
	}
	o->rank = a->rank > b->rank ? a->rank : b->rank;
	for (int i = 0; i < o->rank; i++) {
		int ia = i - (o->rank - a->rank), ib = i - (o->rank - b->rank);
		int64_t da = ia >= 0 ? a->dim[ia] : 1, db = ib >= 0 ? b->dim[ib] : 1;

		if (da == 1)
			o->dim[i] = db;
		else if (db == 1)
			o->dim[i] = da;
		else if (da < 0 || db < 0)
			o->dim[i] = da < 0 ? db : da;
		else if (da == db)
			o->dim[i] = da;
		else
			return fail(c, "cannot broadcast dimension %" PRId64 " against %" PRId64,
				    da, db);
	}
	return 0;
}

/* Flat index into a (broadcast) operand for flat output index k. */
static inline size_t bcast_index(const struct ho_shape *o, const struct ho_shape *s, size_t k)
{
	size_t idx = 0, stride = 1;

	for (int i = o->rank - 1; i >= 0; i--) {
		size_t coord = k % (size_t)o->dim[i];
		int is = i - (o->rank - s->rank);

		k /= (size_t)o->dim[i];
		if (is >= 0) {
			if (s->dim[is] != 1)
				idx += coord * stride;
			stride *= (size_t)s->dim[is];
		}
	}
	return idx;
}

/* The shape rule of an operator (its entry in ops.c); NULL if none. */
ho_infer_fn ho_op_shape_rule(const char *op_type);

/* The rules: each fills the outputs of c->nd, or fails naming the node. */
int ho_infer_binary(struct ho_infer *c);
int ho_infer_where(struct ho_infer *c);
int ho_infer_unary(struct ho_infer *c);
int ho_infer_clip(struct ho_infer *c);
int ho_infer_cast(struct ho_infer *c);
int ho_infer_conv(struct ho_infer *c);
int ho_infer_conv_transpose(struct ho_infer *c);
int ho_infer_pool(struct ho_infer *c);
int ho_infer_global_pool(struct ho_infer *c);
int ho_infer_matmul(struct ho_infer *c);
int ho_infer_attention(struct ho_infer *c);
int ho_infer_gemm(struct ho_infer *c);
int ho_infer_mel_weight_matrix(struct ho_infer *c);
int ho_infer_tfidf(struct ho_infer *c);
int ho_infer_roi_align(struct ho_infer *c);
int ho_infer_dft(struct ho_infer *c);
int ho_infer_stft(struct ho_infer *c);
int ho_infer_compress(struct ho_infer *c);
int ho_infer_unique(struct ho_infer *c);
int ho_infer_nms(struct ho_infer *c);
int ho_infer_grid_sample(struct ho_infer *c);
int ho_infer_one_hot(struct ho_infer *c);
int ho_infer_window(struct ho_infer *c);
int ho_infer_max_unpool(struct ho_infer *c);
int ho_infer_det(struct ho_infer *c);
int ho_infer_einsum(struct ho_infer *c);
int ho_infer_matmul_quant(struct ho_infer *c);
int ho_infer_conv_quant(struct ho_infer *c);
int ho_infer_quant(struct ho_infer *c);
int ho_infer_recurrent(struct ho_infer *c);
int ho_infer_batchnorm(struct ho_infer *c);
int ho_infer_layernorm(struct ho_infer *c);
int ho_infer_softmax(struct ho_infer *c);
int ho_infer_reduce(struct ho_infer *c);
int ho_infer_argminmax(struct ho_infer *c);
int ho_infer_loss(struct ho_infer *c);
/* training.c */
int ho_infer_optimizer(struct ho_infer *c);
int ho_infer_gather_nd(struct ho_infer *c);
int ho_infer_eye_like(struct ho_infer *c);
int ho_infer_shape_op(struct ho_infer *c);
int ho_infer_size(struct ho_infer *c);
int ho_infer_constant(struct ho_infer *c);
int ho_infer_constant_of_shape(struct ho_infer *c);
int ho_infer_reshape(struct ho_infer *c);
int ho_infer_flatten(struct ho_infer *c);
int ho_infer_transpose(struct ho_infer *c);
int ho_infer_squeeze(struct ho_infer *c);
int ho_infer_unsqueeze(struct ho_infer *c);
int ho_infer_concat(struct ho_infer *c);
int ho_infer_split(struct ho_infer *c);
int ho_infer_slice(struct ho_infer *c);
int ho_infer_scatter_nd(struct ho_infer *c);
int ho_infer_gather(struct ho_infer *c);
int ho_infer_same_as_input1(struct ho_infer *c);
int ho_infer_expand(struct ho_infer *c);
int ho_infer_tile(struct ho_infer *c);
int ho_infer_pad(struct ho_infer *c);
int ho_infer_resize(struct ho_infer *c);
int ho_infer_range(struct ho_infer *c);
int ho_infer_topk(struct ho_infer *c);
int ho_infer_nonzero(struct ho_infer *c);
int ho_infer_depth_space(struct ho_infer *c);
int ho_infer_if(struct ho_infer *c);
int ho_infer_loop(struct ho_infer *c);
int ho_infer_scan(struct ho_infer *c);
int ho_infer_string_normalizer(struct ho_infer *c);
int ho_infer_sequence(struct ho_infer *c);
int ho_infer_split_to_sequence(struct ho_infer *c);

#endif
