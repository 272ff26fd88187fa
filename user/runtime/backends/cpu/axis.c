// SPDX-License-Identifier: MIT
/*
 * Kernels along an axis over every numeric element type, as plain loops:
 * ArgMax/ArgMin, CumSum, TopK, Trilu, GatherElements, Reduce* off float32,
 * and NonZero and Unique, whose output's extent the data decides.  Elements are
 * read and written as number.h's numbers, as typed.c's element-wise loops do.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu.h"
#include "number.h"

/*
 * t's blocks around axis (negative from the end) of its first input: outer runs of
 * axis_dim blocks of inner elements; -EINVAL for an axis outside it.
 */
static int ho_axis_blocks(struct ho_typed *t, int64_t axis)
{
	const struct ho_shape *x = &t->in_shape[0];

	axis += axis < 0 ? x->rank : 0;
	if (axis < 0 || axis >= x->rank)
		return -EINVAL;
	t->outer = t->inner = 1;
	for (int a = 0; a < x->rank; a++)
		if (a < axis)
			t->outer *= x->dim[a];
		else if (a > axis)
			t->inner *= x->dim[a];
	t->axis_dim = x->dim[axis];
	return 0;
}

/* ---- ArgMax, ArgMin ---- */

static int ho_run_arg(const struct ho_kernel *k)
{
	const struct ho_typed *t = &k->typed;
	enum ho_domain d = ho_domain_of(t->in_dt[0]);
	bool max = t->op == 1, last = t->iparam[0];

	for (int64_t o = 0; o < t->outer; o++)
		for (int64_t i = 0; i < t->inner; i++) {
			int64_t base = o * t->axis_dim * t->inner + i, best = 0;
			struct ho_num bv = ho_get(t->in_dt[0], t->in[0], base);

			for (int64_t j = 1; j < t->axis_dim; j++) {
				struct ho_num v =
				    ho_get(t->in_dt[0], t->in[0], base + j * t->inner);
				int cmp = d == HO_DOM_F	  ? (v.f > bv.f) - (v.f < bv.f)
					  : d == HO_DOM_S ? (v.s > bv.s) - (v.s < bv.s)
							  : (v.u > bv.u) - (v.u < bv.u);

				if (!max)
					cmp = -cmp;
				if (cmp > 0 || (cmp == 0 && last)) {
					best = j;
					bv = v;
				}
			}
			((int64_t *)t->out)[o * t->inner + i] = best;
		}
	return 0;
}

int ho_cpu_prep_arg(const struct ho_graph *g, const struct ho_node *n, void *const *buf,
		    struct ho_kernel *k, struct ho_error *err)
{
	struct ho_typed *t = &k->typed;
	const struct ho_tensor *y = &g->tensors[n->outputs[0]];
	int64_t axis = ho_node_attr_i(n, "axis", 0);
	int ret = ho_cpu_prep_typed_io(g, n, buf, k, err);

	if (ret)
		return ret;
	if (ho_axis_blocks(t, axis) || y->dtype != HO_DT_INT64)
		return ho_cpu_unsupported(err, n, "has an axis outside the input");
	t->op = !strcmp(n->op_type, "ArgMax");
	t->iparam[0] = ho_node_attr_i(n, "select_last_index", 0);
	t->run = ho_run_arg;
	return 0;
}

/* ---- CumSum ---- */

/* An axis a run gives (a tensor computed before it): read at each run. */
#define HO_CUMSUM_AXIS_AT_RUN INT64_MIN

static int ho_run_cumsum(const struct ho_kernel *k)
{
	struct ho_typed at_run;
	const struct ho_typed *t = &k->typed;
	enum ho_domain d = ho_domain_of(t->out_dt);

	if (t->axis == HO_CUMSUM_AXIS_AT_RUN) {
		at_run = *t;
		if (ho_axis_blocks(&at_run, ho_cpu_int(t->in[1], t->in_dt[1], 0)))
			return -EINVAL; /* an axis outside the input */
		t = &at_run;
	}
	bool exclusive = t->iparam[0], reverse = t->iparam[1];

	for (int64_t o = 0; o < t->outer; o++)
		for (int64_t i = 0; i < t->inner; i++) {
			struct ho_num acc = {0};

			for (int64_t j = 0; j < t->axis_dim; j++) {
				int64_t jj = reverse ? t->axis_dim - 1 - j : j,
					at = (o * t->axis_dim + jj) * t->inner + i;
				struct ho_num v = ho_get(t->in_dt[0], t->in[0], at);

				if (exclusive)
					ho_set(t->out_dt, t->out, at, acc);
				acc = ho_tw_apply(TW_ADD, d, acc, v);
				if (!exclusive)
					ho_set(t->out_dt, t->out, at, acc);
			}
		}
	return 0;
}

int ho_cpu_prep_cumsum(const struct ho_graph *g, const struct ho_node *n, void *const *buf,
		       struct ho_kernel *k, struct ho_error *err)
{
	struct ho_typed *t = &k->typed;
	const struct ho_tensor *y = &g->tensors[n->outputs[0]], *x = ho_node_input(g, n, 0);
	const struct ho_tensor *at = ho_node_input(g, n, 1);
	int64_t axis;
	int ret = ho_cpu_prep_typed_io(g, n, buf, k, err);

	if (ret)
		return ret;
	if (!at || ho_shape_numel(&at->shape) != 1 || x->dtype != y->dtype ||
	    (at->dtype != HO_DT_INT64 && at->dtype != HO_DT_INT32))
		return ho_cpu_unsupported(err, n, "needs one integer axis");
	if (ho_cpu_int_input(g, n, 1, buf, &axis, 1) != 1) {
		t->axis = HO_CUMSUM_AXIS_AT_RUN; /* computed before it: read as it runs */
	} else if ((t->axis = axis), ho_axis_blocks(t, axis)) {
		return ho_cpu_unsupported(err, n, "has an axis outside the input");
	}
	t->iparam[0] = ho_node_attr_i(n, "exclusive", 0);
	t->iparam[1] = ho_node_attr_i(n, "reverse", 0);
	t->run = ho_run_cumsum;
	return 0;
}

/* ---- TopK ---- */

struct ho_topk_item {
	struct ho_num v;
	int64_t i;
};

/* a before b in TopK's order: larger (or smaller) first, ties by the lower index */
static bool ho_topk_before(const struct ho_topk_item *a, const struct ho_topk_item *b,
			   enum ho_domain d, bool largest)
{
	int c = d == HO_DOM_F	? (a->v.f > b->v.f) - (a->v.f < b->v.f)
		: d == HO_DOM_S ? (a->v.s > b->v.s) - (a->v.s < b->v.s)
				: (a->v.u > b->v.u) - (a->v.u < b->v.u);

	return largest ? c > 0 || (c == 0 && a->i < b->i) : c < 0 || (c == 0 && a->i < b->i);
}

/* A stable merge sort of n items with tmp of n more (qsort takes no context). */
static void ho_topk_sort(struct ho_topk_item *it, struct ho_topk_item *tmp, int64_t n,
			 enum ho_domain d, bool largest)
{
	for (int64_t w = 1; w < n; w *= 2) {
		for (int64_t lo = 0; lo < n; lo += 2 * w) {
			int64_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
			int64_t i = lo, j = mid, o = lo;

			while (i < mid && j < hi)
				tmp[o++] =
				    ho_topk_before(&it[j], &it[i], d, largest) ? it[j++] : it[i++];
			while (i < mid)
				tmp[o++] = it[i++];
			while (j < hi)
				tmp[o++] = it[j++];
		}
		memcpy(it, tmp, (size_t)n * sizeof(*it));
	}
}

/* Heap of n kept items, the one TopK's order puts last at h[0]: item i sifted down. */
static void ho_topk_sift(struct ho_topk_item *h, int64_t n, int64_t i, enum ho_domain d,
			 bool largest)
{
	for (;;) {
		int64_t w = i, l = 2 * i + 1, r = l + 1;
		struct ho_topk_item x;

		if (l < n && ho_topk_before(&h[w], &h[l], d, largest))
			w = l;
		if (r < n && ho_topk_before(&h[w], &h[r], d, largest))
			w = r;
		if (w == i)
			return;
		x = h[i];
		h[i] = h[w];
		h[w] = x;
		i = w;
	}
}

/*
 * The first kk of a row in TopK's order into it[0..kk), sorted: a heap of the kk best
 * seen, each further item one comparison with the worst of them where it is not better.
 * False where a NaN makes the order partial (the caller sorts the whole row then).
 * retinanet's per-level TopKs (1000 of 8 M scores) took 363 ms of a frame sorting all.
 */
static bool ho_topk_heap(const struct ho_typed *t, int64_t o, int64_t i, int64_t kk,
			 struct ho_topk_item *it)
{
	enum ho_domain d = ho_domain_of(t->in_dt[0]);
	bool largest = t->iparam[1];

	for (int64_t j = 0; j < t->axis_dim; j++) {
		struct ho_topk_item x = {
		    ho_get(t->in_dt[0], t->in[0], (o * t->axis_dim + j) * t->inner + i), j};

		if (d == HO_DOM_F && isnan(x.v.f))
			return false;
		if (j < kk) {
			it[j] = x;
			if (j == kk - 1)
				for (int64_t p = kk / 2 - 1; p >= 0; p--)
					ho_topk_sift(it, kk, p, d, largest);
		} else if (ho_topk_before(&x, &it[0], d, largest)) {
			it[0] = x;
			ho_topk_sift(it, kk, 0, d, largest);
		}
	}
	return true;
}

static int ho_run_topk(const struct ho_kernel *k)
{
	const struct ho_typed *t = &k->typed;
	struct ho_topk_item *it = (struct ho_topk_item *)k->fold, *tmp = it + t->axis_dim;
	int64_t kk = t->iparam[0];

	for (int64_t o = 0; o < t->outer; o++)
		for (int64_t i = 0; i < t->inner; i++) {
			/* a few of many: the heap; else (or with a NaN) the whole row sorted */
			if (kk > 0 && kk * 8 < t->axis_dim && ho_topk_heap(t, o, i, kk, it)) {
				ho_topk_sort(it, tmp, kk, ho_domain_of(t->in_dt[0]), t->iparam[1]);
			} else {
				for (int64_t j = 0; j < t->axis_dim; j++) {
					it[j].v = ho_get(t->in_dt[0], t->in[0],
							 (o * t->axis_dim + j) * t->inner + i);
					it[j].i = j;
				}
				ho_topk_sort(it, tmp, t->axis_dim, ho_domain_of(t->in_dt[0]),
					     t->iparam[1]);
			}
			for (int64_t j = 0; j < kk; j++) {
				int64_t at = (o * kk + j) * t->inner + i;

				ho_set(t->out_dt, t->out, at, it[j].v);
				((int64_t *)t->out2)[at] = it[j].i;
			}
		}
	return 0;
}

int ho_cpu_prep_topk(const struct ho_graph *g, const struct ho_node *n, void *const *buf,
		     struct ho_kernel *k, struct ho_error *err)
{
	struct ho_typed *t = &k->typed;
	const struct ho_tensor *y = &g->tensors[n->outputs[0]], *x = ho_node_input(g, n, 0);
	int64_t axis = ho_node_attr_i(n, "axis", -1);
	int ret = ho_cpu_prep_typed_io(g, n, buf, k, err);

	if (ret)
		return ret;
	axis += axis < 0 ? x->shape.rank : 0;
	if (ho_axis_blocks(t, axis) || n->n_outputs < 2 || n->outputs[1] < 0 ||
	    g->tensors[n->outputs[1]].dtype != HO_DT_INT64 || x->dtype != y->dtype)
		return ho_cpu_unsupported(err, n, "needs an axis and both outputs");
	t->iparam[0] = y->shape.dim[axis]; /* k, as shape inference found it */
	t->iparam[1] = ho_node_attr_i(n, "largest", 1);
	if (t->iparam[0] > t->axis_dim)
		return ho_cpu_unsupported(err, n, "has k beyond the axis");
	t->out2 = buf[n->outputs[1]];
	if (!(k->fold = malloc(2 * (size_t)(t->axis_dim + 1) * sizeof(struct ho_topk_item))))
		return ho_err(err, -ENOMEM, "out of memory");
	t->n_in = 1;
	t->run = ho_run_topk;
	return 0;
}

/* ---- Trilu ---- */

static int ho_run_trilu(const struct ho_kernel *k)
{
	const struct ho_typed *t = &k->typed;
	int64_t rows = t->out_shape.dim[t->out_shape.rank - 2],
		cols = t->out_shape.dim[t->out_shape.rank - 1], n = ho_shape_numel(&t->out_shape),
		diag = t->in[1] ? (t->in_dt[1] == HO_DT_INT64 ? *(const int64_t *)t->in[1]
							      : *(const int32_t *)t->in[1])
				: 0;
	int es = ho_dtype_size(t->out_dt);

	for (int64_t i = 0; i < n; i++) {
		int64_t c = i % cols, rr = (i / cols) % rows;
		bool keep = t->iparam[0] ? c - rr >= diag : c - rr <= diag;

		if (keep)
			memcpy((char *)t->out + i * es, (const char *)t->in[0] + i * es,
			       (size_t)es);
		else
			memset((char *)t->out + i * es, 0, (size_t)es);
	}
	return 0;
}

int ho_cpu_prep_trilu(const struct ho_graph *g, const struct ho_node *n, void *const *buf,
		      struct ho_kernel *k, struct ho_error *err)
{
	struct ho_typed *t = &k->typed;
	const struct ho_tensor *y = &g->tensors[n->outputs[0]], *x = ho_node_input(g, n, 0);
	const struct ho_tensor *kt = ho_node_input(g, n, 1);
	int ret = ho_cpu_prep_typed_io(g, n, buf, k, err);

	if (ret)
		return ret;
	if (x->shape.rank < 2 || x->dtype != y->dtype ||
	    (kt && (ho_shape_numel(&kt->shape) != 1 ||
		    (kt->dtype != HO_DT_INT64 && kt->dtype != HO_DT_INT32))))
		return ho_cpu_unsupported(err, n, "needs a matrix and an integer k");
	t->iparam[0] = ho_node_attr_i(n, "upper", 1);
	t->run = ho_run_trilu;
	return 0;
}

/* ---- GatherElements ---- */

static int ho_run_gather_elements(const struct ho_kernel *k)
{
	const struct ho_typed *t = &k->typed;
	const struct ho_shape *ys = &t->out_shape;
	int64_t n = ho_shape_numel(ys), idx[HO_MAX_RANK] = {0}, xst[HO_MAX_RANK], acc = 1;
	int r = ys->rank, es = ho_dtype_size(t->out_dt);

	for (int a = r - 1; a >= 0; a--) {
		xst[a] = acc;
		acc *= t->in_shape[0].dim[a];
	}
	for (int64_t i = 0; i < n; i++) {
		int64_t j = ho_get(t->in_dt[1], t->in[1], i).s, src = 0;

		j += j < 0 ? t->axis_dim : 0;
		if (j < 0 || j >= t->axis_dim)
			return -EINVAL;
		for (int a = 0; a < r; a++)
			src += (a == t->axis ? j : idx[a]) * xst[a];
		memcpy((char *)t->out + i * es, (const char *)t->in[0] + src * es, (size_t)es);
		for (int a = r - 1; a >= 0; a--) {
			if (++idx[a] < ys->dim[a])
				break;
			idx[a] = 0;
		}
	}
	return 0;
}

int ho_cpu_prep_gather_elements(const struct ho_graph *g, const struct ho_node *n, void *const *buf,
				struct ho_kernel *k, struct ho_error *err)
{
	struct ho_typed *t = &k->typed;
	const struct ho_tensor *y = &g->tensors[n->outputs[0]], *x = ho_node_input(g, n, 0);
	const struct ho_tensor *ix = ho_node_input(g, n, 1);
	int64_t axis = ho_node_attr_i(n, "axis", 0);
	int ret = ho_cpu_prep_typed_io(g, n, buf, k, err);

	if (ret)
		return ret;
	axis += axis < 0 ? x->shape.rank : 0;
	if (!ix || (ix->dtype != HO_DT_INT64 && ix->dtype != HO_DT_INT32) ||
	    ix->shape.rank != x->shape.rank || axis < 0 || axis >= x->shape.rank ||
	    x->dtype != y->dtype)
		return ho_cpu_unsupported(err, n, "needs int32/int64 indices of its rank");
	t->axis = axis;
	t->axis_dim = x->shape.dim[axis];
	t->run = ho_run_gather_elements;
	return 0;
}

/* ---- Reduce* over any axes, any numeric type ---- */

enum ho_red { RD_SUM, RD_MEAN, RD_MAX, RD_MIN, RD_PROD, RD_L1, RD_L2, RD_SUMSQ, RD_LOGSUM, RD_LSE };

static const struct {
	const char *op;
	enum ho_red rd;
	bool real; /* computed in double whatever the type (a root, a logarithm, a quotient) */
} ho_reduce_loops[] = {
    {"ReduceSum", RD_SUM, false},      {"ReduceMean", RD_MEAN, true},
    {"ReduceMax", RD_MAX, false},      {"ReduceMin", RD_MIN, false},
    {"ReduceProd", RD_PROD, false},    {"ReduceL1", RD_L1, false},
    {"ReduceL2", RD_L2, true},	       {"ReduceSumSquare", RD_SUMSQ, false},
    {"ReduceLogSum", RD_LOGSUM, true}, {"ReduceLogSumExp", RD_LSE, true},
};

/* The identity of each reduction: what an empty set reduces to. */
static struct ho_num ho_reduce_init(int rd)
{
	struct ho_num v = {0};

	if (rd == RD_PROD)
		v.f = 1, v.s = 1, v.u = 1;
	else if (rd == RD_MAX)
		v.f = -INFINITY, v.s = INT64_MIN, v.u = 0;
	else if (rd == RD_MIN)
		v.f = INFINITY, v.s = INT64_MAX, v.u = UINT64_MAX;
	return v;
}

static struct ho_num ho_abs(struct ho_num v, enum ho_domain d)
{
	if (d == HO_DOM_F)
		v.f = fabs(v.f);
	else if (d == HO_DOM_S && v.s < 0)
		v.s = (int64_t)(0 - (uint64_t)v.s);
	return v;
}

static int ho_run_reduce(const struct ho_kernel *k)
{
	const struct ho_typed *t = &k->typed;
	const struct ho_shape *xs = &t->in_shape[0], *ys = &t->out_shape;
	int64_t n = ho_shape_numel(xs), ny = ho_shape_numel(ys), c[HO_MAX_RANK], yst[HO_MAX_RANK],
		acc = 1;
	struct ho_num *a = (struct ho_num *)k->fold, *m = a + ny;
	enum ho_domain in = ho_domain_of(t->in_dt[0]), d = t->dom;
	int rd = t->op;

	for (int ax = ys->rank - 1; ax >= 0; ax--) {
		yst[ax] = ys->dim[ax] == 1 ? 0 : acc;
		acc *= ys->dim[ax];
	}
	for (int64_t j = 0; j < ny; j++) {
		a[j] = ho_reduce_init(rd);
		m[j] = ho_reduce_init(RD_MAX);
	}
	/* log-sum-exp takes the maxima first, so that no exp overflows */
	for (int pass = rd == RD_LSE ? 0 : 1; pass < 2; pass++) {
		memset(c, 0, sizeof(c));
		for (int64_t i = 0, j = 0; i < n; i++) {
			struct ho_num v = ho_convert(ho_get(t->in_dt[0], t->in[0], i), in, d);

			if (pass == 0)
				m[j] = ho_tw_apply(TW_MAX, d, m[j], v);
			else if (rd == RD_LSE)
				a[j].f += exp(v.f - m[j].f);
			else if (rd == RD_L1)
				a[j] = ho_tw_apply(TW_ADD, d, a[j], ho_abs(v, d));
			else if (rd == RD_L2 || rd == RD_SUMSQ)
				a[j] = ho_tw_apply(TW_ADD, d, a[j], ho_tw_apply(TW_MUL, d, v, v));
			else
				a[j] = ho_tw_apply(rd == RD_PROD  ? TW_MUL
						   : rd == RD_MAX ? TW_MAX
						   : rd == RD_MIN ? TW_MIN
								  : TW_ADD,
						   d, a[j], v);
			for (int ax = xs->rank - 1; ax >= 0; ax--) {
				j += yst[ax];
				if (++c[ax] < xs->dim[ax])
					break;
				j -= yst[ax] * c[ax];
				c[ax] = 0;
			}
		}
	}
	for (int64_t j = 0; j < ny; j++) {
		struct ho_num r = a[j];

		if (rd == RD_MEAN)
			r.f /= (double)(ny ? n / ny : 1);
		else if (rd == RD_L2)
			r.f = sqrt(r.f);
		else if (rd == RD_LOGSUM)
			r.f = log(r.f);
		else if (rd == RD_LSE)
			r.f = isinf(m[j].f) ? m[j].f : log(r.f) + m[j].f;
		ho_set(t->out_dt, t->out, j, ho_convert(r, d, ho_domain_of(t->out_dt)));
	}
	return 0;
}

int ho_cpu_prep_reduce_loop(const struct ho_graph *g, const struct ho_node *n, void *const *buf,
			    struct ho_kernel *k, const struct ho_shape *kept, struct ho_error *err)
{
	struct ho_typed *t = &k->typed;
	const struct ho_tensor *x = ho_node_input(g, n, 0), *y = &g->tensors[n->outputs[0]];
	size_t i;

	for (i = 0; i < sizeof(ho_reduce_loops) / sizeof(ho_reduce_loops[0]); i++)
		if (!strcmp(ho_reduce_loops[i].op, n->op_type))
			break;
	if (i == sizeof(ho_reduce_loops) / sizeof(ho_reduce_loops[0]) || !x ||
	    ho_domain_of(x->dtype) == HO_DOM_NONE || ho_domain_of(y->dtype) == HO_DOM_NONE ||
	    ho_shape_numel(kept) != ho_shape_numel(&y->shape))
		return ho_cpu_unsupported(err, n, "reduces numeric types only");
	k->kind = HO_K_LOOP;
	t->op = ho_reduce_loops[i].rd;
	t->dom = ho_reduce_loops[i].real ? HO_DOM_F : ho_domain_of(x->dtype);
	t->n_in = 1;
	t->in[0] = buf[n->inputs[0]];
	t->in_dt[0] = x->dtype;
	t->in_shape[0] = x->shape;
	t->out = buf[n->outputs[0]];
	t->out_dt = y->dtype;
	t->out_shape = *kept;
	if (!(k->fold = malloc(2 * (size_t)(ho_shape_numel(kept) + 1) * sizeof(struct ho_num))))
		return ho_err(err, -ENOMEM, "out of memory");
	t->run = ho_run_reduce;
	return 0;
}

/* ---- NonZero and Unique: outputs whose extent the data decides (planned from its value) ---- */

static bool ho_nonzero(int dt, const void *p, int64_t i)
{
	struct ho_num v = ho_get(dt, p, i);
	enum ho_domain d = ho_domain_of(dt);

	return d == HO_DOM_F ? v.f != 0 : d == HO_DOM_S ? v.s != 0 : v.u != 0;
}

/* The coordinates of flat index i of a tensor of shape xs. */
static void ho_nonzero_coords(const struct ho_shape *xs, int64_t i, int64_t *c)
{
	for (int a = xs->rank - 1; a >= 0; a--) {
		c[a] = i % xs->dim[a];
		i /= xs->dim[a];
	}
}

/* The coordinates c moved on by k elements. */
static inline void ho_nonzero_step(const struct ho_shape *xs, int64_t *c, int64_t k)
{
	int a = xs->rank - 1;

	if (a < 0)
		return;
	c[a] += k;
	for (; a > 0 && c[a] >= xs->dim[a]; a--) {
		c[a - 1] += c[a] / xs->dim[a];
		c[a] %= xs->dim[a];
	}
}

/* c as column j of out's nnz columns, one row per axis. */
static inline void ho_nonzero_put(const struct ho_shape *xs, const int64_t *c, int64_t *out,
				  int64_t nnz, int64_t j)
{
	for (int a = 0; a < xs->rank; a++)
		out[a * nnz + j] = c[a];
}

/*
 * The non-zero elements of [lo, hi) of t's input: counted, and with out given written
 * from column j on, their coordinates followed as the scan goes.  Bytes (a comparison's
 * bool) are passed eight zeros at a time: retinanet's four NonZeros over 8 M scores
 * took 100 ms a frame element by element through the typed reader.
 */
static int64_t ho_nonzero_scan(const struct ho_typed *t, int64_t lo, int64_t hi, int64_t *out,
			       int64_t j)
{
	const struct ho_shape *xs = &t->in_shape[0];
	int64_t nnz = t->out_shape.dim[1], n = 0, c[HO_MAX_RANK] = {0};
	int dt = t->in_dt[0];

	if (!out) { /* counted alone: no coordinates to follow */
		const uint8_t *b = t->in[0];
		const float *x = t->in[0];

		if (ho_dtype_size(dt) == 1)
			for (int64_t i = lo; i < hi; i++)
				n += b[i] != 0;
		else if (dt == HO_DT_FLOAT)
			for (int64_t i = lo; i < hi; i++)
				n += x[i] != 0;
		else
			for (int64_t i = lo; i < hi; i++)
				n += ho_nonzero(dt, t->in[0], i);
		return n;
	}
	ho_nonzero_coords(xs, lo, c);
	for (int64_t i = lo; i < hi; i++) {
		bool nz;

		if (ho_dtype_size(dt) == 1) {
			const uint8_t *b = t->in[0];
			uint64_t w;

			if (!(i & 7) && i + 8 <= hi && (memcpy(&w, b + i, 8), !w)) {
				ho_nonzero_step(xs, c, 8);
				i += 7;
				continue;
			}
			nz = b[i] != 0;
		} else {
			nz = dt == HO_DT_FLOAT ? ((const float *)t->in[0])[i] != 0
					       : ho_nonzero(dt, t->in[0], i);
		}
		if (nz)
			ho_nonzero_put(xs, c, out, nnz, j + n);
		n += nz;
		ho_nonzero_step(xs, c, 1);
	}
	return n;
}

#define HO_NONZERO_MAX_PARTS 64

/* Parts [lo, hi) of n's elements (parts in all): counted (at NULL), else written from count. */
struct ho_nonzero_parts {
	const struct ho_typed *t;
	int64_t n, *count;
	int parts;
	bool write;
};

static void ho_nonzero_parts(const void *arg, int64_t lo, int64_t hi)
{
	const struct ho_nonzero_parts *z = arg;

	for (int64_t p = lo; p < hi; p++) {
		int64_t from = z->n * p / z->parts, to = z->n * (p + 1) / z->parts;

		if (z->write)
			ho_nonzero_scan(z->t, from, to, z->t->out, z->count[p]);
		else
			z->count[p] = ho_nonzero_scan(z->t, from, to, NULL, 0);
	}
}

/* Counted in parts over the threads, then each part writes from its count's prefix. */
static int ho_run_nonzero(const struct ho_kernel *k)
{
	const struct ho_typed *t = &k->typed;
	int64_t count[HO_NONZERO_MAX_PARTS], at = 0;
	struct ho_nonzero_parts z = {t, ho_shape_numel(&t->in_shape[0]), count, 1, false};

	z.parts = ho_cpu_parts(z.n, 1 << 16);
	z.parts = z.parts > HO_NONZERO_MAX_PARTS ? HO_NONZERO_MAX_PARTS : z.parts;
	ho_cpu_for_parts(z.parts, z.parts, ho_nonzero_parts, &z);
	for (int p = 0; p < z.parts; p++) {
		int64_t c = count[p];

		count[p] = at;
		at += c;
	}
	if (at != t->out_shape.dim[1])
		return -ERANGE;
	z.write = true;
	ho_cpu_for_parts(z.parts, z.parts, ho_nonzero_parts, &z);
	return 0;
}

int ho_cpu_prep_nonzero(const struct ho_graph *g, const struct ho_node *n, void *const *buf,
			struct ho_kernel *k, struct ho_error *err)
{
	struct ho_typed *t = &k->typed;
	const struct ho_tensor *y = &g->tensors[n->outputs[0]];
	int ret = ho_cpu_prep_typed_io(g, n, buf, k, err);

	if (ret)
		return ret;
	if (y->dtype != HO_DT_INT64 || y->shape.rank != 2)
		return ho_cpu_unsupported(err, n, "writes [rank, count] int64 only");
	t->n_in = 1;
	t->run = ho_run_nonzero;
	return 0;
}

/* slice s and slice u (along the axis: outer x slices x inner) compared, as numbers */
static int ho_slice_cmp(const struct ho_typed *t, int64_t s, int64_t u)
{
	enum ho_domain d = ho_domain_of(t->in_dt[0]);

	for (int64_t o = 0; o < t->outer; o++)
		for (int64_t e = 0; e < t->inner; e++) {
			struct ho_num a = ho_get(t->in_dt[0], t->in[0],
						 (o * t->axis_dim + s) * t->inner + e),
				      b = ho_get(t->in_dt[0], t->in[0],
						 (o * t->axis_dim + u) * t->inner + e);
			int c = d == HO_DOM_F	? (a.f > b.f) - (a.f < b.f)
				: d == HO_DOM_S ? (a.s > b.s) - (a.s < b.s)
						: (a.u > b.u) - (a.u < b.u);

			if (c)
				return c;
		}
	return 0;
}

/* Unique: the distinct slices (sorted, or as they first appear), where each first is, which
 * each slice is, how many of each. */
static int ho_run_unique(const struct ho_kernel *k)
{
	const struct ho_typed *t = &k->typed;
	int64_t S = t->axis_dim, U = 0, *first = (int64_t *)k->fold, *count = first + S,
		*idx = t->out2, *inv = k->typed.iparam[1] ? (int64_t *)k->dst : NULL;
	int64_t *cnt = (int64_t *)k->src, want = t->iparam[0];
	int es = ho_dtype_size(t->in_dt[0]);

	for (int64_t s = 0; s < S; s++) { /* distinct slices, in order of first appearance */
		int64_t u = 0;

		while (u < U && ho_slice_cmp(t, first[u], s))
			u++;
		if (u == U) {
			first[U] = s;
			count[U++] = 0;
		}
		count[u]++;
	}
	if (U != want)
		return -ERANGE;
	if (t->op) /* sorted: an insertion sort of the firsts, counts alongside */
		for (int64_t i = 1; i < U; i++)
			for (int64_t j = i; j > 0 && ho_slice_cmp(t, first[j - 1], first[j]) > 0;
			     j--) {
				int64_t f = first[j], c = count[j];

				first[j] = first[j - 1], count[j] = count[j - 1];
				first[j - 1] = f, count[j - 1] = c;
			}
	for (int64_t u = 0; u < U; u++) {
		for (int64_t o = 0; o < t->outer; o++)
			memcpy((char *)t->out + (o * U + u) * t->inner * es,
			       (const char *)t->in[0] + (o * S + first[u]) * t->inner * es,
			       (size_t)(t->inner * es));
		if (idx)
			idx[u] = first[u];
		if (cnt)
			cnt[u] = count[u];
	}
	for (int64_t s = 0; inv && s < S; s++)
		for (int64_t u = 0; u < U; u++)
			if (!ho_slice_cmp(t, first[u], s)) {
				inv[s] = u;
				break;
			}
	return 0;
}

int ho_cpu_prep_unique(const struct ho_graph *g, const struct ho_node *n, void *const *buf,
		       struct ho_kernel *k, struct ho_error *err)
{
	struct ho_typed *t = &k->typed;
	const struct ho_tensor *y = &g->tensors[n->outputs[0]], *x = ho_node_input(g, n, 0);
	const struct ho_attr *aa = ho_node_attr(n, "axis");
	int64_t axis = aa ? aa->i : 0;
	int ret = ho_cpu_prep_typed_io(g, n, buf, k, err);

	if (ret)
		return ret;
	axis += axis < 0 ? x->shape.rank : 0;
	if (x->dtype != y->dtype || (aa && (axis < 0 || axis >= x->shape.rank)))
		return ho_cpu_unsupported(err, n, "needs an axis inside its input");
	t->outer = t->inner = 1;
	t->axis_dim = ho_shape_numel(&x->shape);
	if (aa)
		ho_axis_blocks(t, axis);
	t->n_in = 1;
	t->iparam[0] = aa ? y->shape.dim[axis] : y->shape.dim[0]; /* as planned */
	t->op = (int)ho_node_attr_i(n, "sorted", 1);
	t->out2 = n->n_outputs > 1 && n->outputs[1] >= 0 ? buf[n->outputs[1]] : NULL;
	k->dst = n->n_outputs > 2 && n->outputs[2] >= 0 ? buf[n->outputs[2]] : NULL;
	t->iparam[1] = k->dst != NULL;
	k->src = n->n_outputs > 3 && n->outputs[3] >= 0 ? buf[n->outputs[3]] : NULL;
	if (!(k->fold = malloc(2 * (size_t)(t->axis_dim + 1) * sizeof(int64_t))))
		return ho_err(err, -ENOMEM, "out of memory");
	t->run = ho_run_unique;
	return 0;
}
