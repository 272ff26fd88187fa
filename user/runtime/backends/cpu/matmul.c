// SPDX-License-Identifier: MIT
/* Matrix products: Gemm and MatMul on dnnl_sgemm, MatMul by known weights (with its bias Add and
 * an element-wise node, where fused) on oneDNN matmul. */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "cpu.h"

/* The rows of [..., K]: every extent but the last (so K may be 0). */
static int64_t ho_matmul_rows(const struct ho_tensor *a)
{
	int64_t rows = 1;

	for (int i = 0; i < a->shape.rank - 1; i++)
		rows *= a->shape.dim[i];
	return rows;
}

/* A leading dimension sgemm takes: at least 1, even for an extent of 0. */
#define HO_LD(x) ((x) > 0 ? (x) : 1)

/*
 * An operand of rows x cols whose row and column strides are sr and sc (in elements),
 * one of them 1, as sgemm reads it: row-major ('N') or its transpose ('T'), and the
 * leading dimension.  A stride next to an extent of 1 is any: it never steps.
 */
static bool ho_gemm_operand(int64_t rows, int64_t cols, int64_t sr, int64_t sc, char *trans,
			    int64_t *ld)
{
	bool empty = !rows || !cols;

	if (sc == 1 || cols <= 1) {
		*trans = 'N';
		*ld = rows <= 1 || empty ? HO_LD(cols) : sr;
		return *ld >= HO_LD(cols);
	}
	if (sr == 1 || rows <= 1) {
		*trans = 'T';
		*ld = cols <= 1 || empty ? HO_LD(rows) : sc;
		return *ld >= HO_LD(rows);
	}
	return false;
}

/* A tensor of shape s's row-major element strides. */
static void ho_row_major(const struct ho_shape *s, int64_t *st)
{
	int64_t acc = 1;

	for (int d = s->rank - 1; d >= 0; d--) {
		st[d] = acc;
		acc *= s->dim[d];
	}
}

/*
 * Gemm: Y = alpha * A' B' + beta * C.  MatMul: batched A B, B shared or per batch; an
 * operand through a Transpose (fuse's through, bit i: input i) read where the
 * Transpose's input lies, with its strides, and the output through the Transpose
 * after it (fuse's post) written where that one would put it, so that neither
 * Transpose has anything to do.
 */
int ho_cpu_prep_gemm(const struct ho_graph *g, const struct ho_node *n,
		     const struct ho_fusion *fuse, void *const *buf, struct ho_kernel *k,
		     struct ho_error *err)
{
	const struct ho_tensor *a = ho_node_input(g, n, 0), *b = ho_node_input(g, n, 1),
			       *cc = ho_node_input(g, n, 2), *y = &g->tensors[n->outputs[0]];
	bool gemm = !strcmp(n->op_type, "Gemm");
	uint32_t through = fuse ? fuse->through : 0;
	int32_t out = fuse ? fuse->post : -1; /* the Transpose it writes through */
	int64_t sa[HO_MAX_RANK], sb[HO_MAX_RANK], sy[HO_MAX_RANK];
	int ra, rb;

	if (!a || !b || a->dtype != HO_DT_FLOAT || b->dtype != HO_DT_FLOAT)
		return ho_cpu_unsupported(err, n, "multiplies float32 matrices only");
	ra = a->shape.rank;
	rb = b->shape.rank;
	k->kind = HO_K_GEMM;
	k->a = buf[n->inputs[0]];
	k->b = buf[n->inputs[1]];
	k->y = buf[out >= 0 ? g->nodes[out].outputs[0] : n->outputs[0]];
	k->alpha = 1;
	k->beta = 0;
	k->ta = k->tb = 'N';
	k->batch = 1;
	k->n_bdims = 0;
	if (gemm) {
		if (ra != 2 || rb != 2)
			return ho_cpu_unsupported(err, n, "runs Gemm on 2-D inputs only");
		k->ta = ho_node_attr_i(n, "transA", 0) ? 'T' : 'N';
		k->tb = ho_node_attr_i(n, "transB", 0) ? 'T' : 'N';
		k->alpha = ho_node_attr_f(n, "alpha", 1);
		k->m = y->shape.dim[0];
		k->n = y->shape.dim[1];
		k->k = k->ta == 'T' ? a->shape.dim[0] : a->shape.dim[1];
		k->lda = k->ta == 'T' ? HO_LD(k->m) : k->k;
		k->ldb = k->tb == 'T' ? k->k : HO_LD(k->n);
		k->ldy = HO_LD(k->n);
		if (cc) {
			struct ho_shape s = ho_cpu_lift(&cc->shape, 2);

			if (cc->dtype != HO_DT_FLOAT || (s.dim[0] != 1 && s.dim[0] != k->m) ||
			    (s.dim[1] != 1 && s.dim[1] != k->n))
				return ho_cpu_unsupported(err, n, "needs C broadcastable to M x N");
			k->bias = buf[n->inputs[2]];
			k->bias_rows = s.dim[0];
			k->bias_cols = s.dim[1];
			k->beta = ho_node_attr_f(n, "beta", 1);
		}
		return 0;
	}
	/* MatMul: [..., M, K] x [K, N] folds the batch into M; equal batches loop. */
	if (ra < 2 || rb < 2)
		return ho_cpu_unsupported(err, n, "runs MatMul on inputs of rank 2 or more only");
	k->k = a->shape.dim[ra - 1];
	k->n = b->shape.dim[rb - 1];
	k->ldb = k->ldy = HO_LD(k->n);
	if (rb == 2 && !through && out < 0) {
		k->m = ho_matmul_rows(a);
		k->lda = k->k;
		return 0;
	}
	if (ra != rb)
		return ho_cpu_unsupported(err, n, "runs batched MatMul with equal ranks only");
	for (int i = 0; i < ra - 2; i++)
		if (a->shape.dim[i] != b->shape.dim[i])
			return ho_cpu_unsupported(err, n,
						  "runs batched MatMul without broadcasting only");
	k->m = a->shape.dim[ra - 2];
	k->batch = k->m ? ho_matmul_rows(a) / k->m : 0; /* no extent divides: any may be 0 */
	/* each operand where the Transpose making it reads, its output where the one after
	 * it writes: strides of the bytes they lie in */
	if (through & 1)
		ho_transpose_strides(g, (uint32_t)a->producer, sa);
	else
		ho_row_major(&a->shape, sa);
	if (through & 2)
		ho_transpose_strides(g, (uint32_t)b->producer, sb);
	else
		ho_row_major(&b->shape, sb);
	if (out >= 0)
		ho_transpose_out_strides(g, (uint32_t)out, sy);
	else
		ho_row_major(&y->shape, sy);
	if (!ho_gemm_operand(k->m, k->k, sa[ra - 2], sa[ra - 1], &k->ta, &k->lda) ||
	    !ho_gemm_operand(k->k, k->n, sb[rb - 2], sb[rb - 1], &k->tb, &k->ldb) ||
	    (k->n > 1 && sy[ra - 1] != 1))
		return ho_cpu_unsupported(err, n,
					  "reads or writes a Transpose with no axis of stride 1");
	k->ldy = k->m > 1 && k->n ? sy[ra - 2] : HO_LD(k->n);
	k->n_bdims = ra - 2;
	for (int i = 0; i < ra - 2; i++) {
		k->bdim[i] = a->shape.dim[i];
		k->a_bst[i] = sa[i];
		k->b_bst[i] = sb[i];
		k->y_bst[i] = sy[i];
	}
	return 0;
}

/*
 * A MatMul of float32 [..., K] by [K, N] weights known at load, more than one row of
 * them: its weights pack once.  One row reads each weight once, which sgemm does at the
 * memory's speed: one row by 9216 x 4096 weights (alexnet's first classifier layer, alone
 * in a model) took 6.5 ms there, 9.6 on oneDNN's matmul, packed or not (and packed weights
 * are a second copy).
 */
bool ho_cpu_matmul_packs(const struct ho_graph *g, const struct ho_node *n)
{
	const struct ho_tensor *a = ho_node_input(g, n, 0), *w = ho_node_input(g, n, 1);

	return a && w && a->dtype == HO_DT_FLOAT && w->dtype == HO_DT_FLOAT && a->shape.rank >= 2 &&
	       w->shape.rank == 2 && ho_cpu_known(g, n->inputs[1]) && w->shape.dim[0] > 0 &&
	       ho_matmul_rows(a) > 1;
}

/* A Gemm that is such a MatMul (A not transposed, alpha 1, more than one row) with, if any, a
 * bias of [N] or [1, N] added once (beta 1): a Linear layer as PyTorch exports it for 2-D
 * inputs.  On sgemm the transposed weights took 36 ms for 16 rows of 9216 x 4096, 13 here. */
bool ho_cpu_gemm_packs(const struct ho_graph *g, const struct ho_node *n)
{
	const struct ho_tensor *a = ho_node_input(g, n, 0), *w = ho_node_input(g, n, 1),
			       *cc = ho_node_input(g, n, 2);
	int64_t nn;

	if (!a || !w || a->dtype != HO_DT_FLOAT || w->dtype != HO_DT_FLOAT || a->shape.rank != 2 ||
	    w->shape.rank != 2 || !ho_cpu_known(g, n->inputs[1]) || a->shape.dim[0] < 2 ||
	    !ho_shape_numel(&w->shape) || ho_node_attr_i(n, "transA", 0) ||
	    ho_node_attr_f(n, "alpha", 1) != 1)
		return false;
	nn = w->shape.dim[ho_node_attr_i(n, "transB", 0) ? 0 : 1];
	return !cc || (cc->dtype == HO_DT_FLOAT && ho_node_attr_f(n, "beta", 1) == 1 &&
		       cc->shape.rank >= 1 && cc->shape.rank <= 2 &&
		       ho_shape_numel(&cc->shape) == nn && cc->shape.dim[cc->shape.rank - 1] == nn);
}

/*
 * int8 (asked of the node, with its input's range: int8.c), as conv.c's: the input
 * quantized on the way in, the known weights once per output column, the bias divided
 * by the output scales.  Into *pd, ak, wany; false where oneDNN has no fast kernel.
 */
static bool matmul_int8(struct ho_backend *c, struct ho_cpu_int8 *q,
			const_dnnl_primitive_attr_t attr, int64_t rows, int64_t kk, int64_t nn,
			bool trans_b, const float *w, const float *bias,
			const dnnl_memory_desc_t *bm, const dnnl_memory_desc_t *ym,
			const dnnl_memory_desc_t *am, const dnnl_memory_desc_t *wm,
			dnnl_memory_desc_t *ak, dnnl_memory_desc_t *wany, dnnl_primitive_desc_t *pd,
			float **ws)
{
	dnnl_matmul_desc_t d;
	dnnl_data_type_t xdt;

	if (!(*ws = malloc(sizeof(float) * (size_t)nn)) ||
	    ho_cpu_int8_scales(c, q, w, nn, kk, trans_b ? kk : 1, trans_b ? 1 : nn, attr, 1 << 1,
			       bias, &xdt, *ws))
		return false;
	dnnl_memory_desc_init_by_tag(ak, 2, (dnnl_dims_t){rows, kk}, xdt, dnnl_ab);
	dnnl_memory_desc_init_by_tag(wany, 2, (dnnl_dims_t){kk, nn}, dnnl_s8, dnnl_format_tag_any);
	if (dnnl_matmul_desc_init(&d, ak, wany, bias ? bm : NULL, ym) != dnnl_success ||
	    dnnl_primitive_desc_create(pd, &d, q->attr, c->eng, NULL) != dnnl_success) {
		*pd = NULL;
		return false;
	}
	if (ho_cpu_is_slow(*pd) || !ho_cpu_int8_reorders(c, q, am, wm, *pd)) {
		dnnl_primitive_desc_destroy(*pd);
		*pd = NULL;
		return false;
	}
	return true;
}

/*
 * rows x kk by kk x nn weights (stored transposed, [nn, kk], for trans_b) on one oneDNN
 * matmul, its bias (NULL: none) and post-ops (attr) applied as it writes.  Known weights
 * (all that come here but a MatMul's fused through a view) in the layout the kernel picks
 * (BA16a64b for brgemm on AVX-512), reordered once here: read plain, vit_b_16 took 4% longer
 * at one thread and at two.
 */
static int ho_matmul_packed(struct ho_backend *c, struct ho_kernel *k,
			    const_dnnl_primitive_attr_t attr, int64_t rows, int64_t kk, int64_t nn,
			    bool trans_b, bool known, bool own, void *a, void *w, void *bias,
			    void *y)
{
	dnnl_matmul_desc_t d;
	dnnl_primitive_desc_t pd = NULL;
	dnnl_memory_desc_t am, ak, wm, wany, bm, ym;
	struct ho_cpu_int8 *q = k->int8;
	float *ws = NULL;
	int ret = -EINVAL;

	dnnl_memory_desc_init_by_tag(&am, 2, (dnnl_dims_t){rows, kk}, dnnl_f32, dnnl_ab);
	dnnl_memory_desc_init_by_tag(&wm, 2, (dnnl_dims_t){kk, nn}, dnnl_f32,
				     trans_b ? dnnl_ba : dnnl_ab);
	dnnl_memory_desc_init_by_tag(&bm, 2, (dnnl_dims_t){1, nn}, dnnl_f32, dnnl_ab);
	dnnl_memory_desc_init_by_tag(&ym, 2, (dnnl_dims_t){rows, nn}, dnnl_f32, dnnl_ab);
	bool int8 = q && q->calibrated && known &&
		    matmul_int8(c, q, attr, rows, kk, nn, trans_b, w, bias, &bm, &ym, &am, &wm, &ak,
				&wany, &pd, &ws);

	if (int8)
		k->precision = "int8";
	else /* asked int8, not calibrated: observe the input's range */
		ho_cpu_int8_observe_at(k, a, rows * kk);
	/* bf16 (asked of the node, as conv.c's): its input converted on the way in, the
	 * weights once, float32 sums and output; float32 where that has no fast kernel */
	for (int bf16 = k->want_bf16 && known; bf16 >= 0 && !pd; bf16--) {
		dnnl_data_type_t t = bf16 ? dnnl_bf16 : dnnl_f32;

		dnnl_memory_desc_init_by_tag(&ak, 2, (dnnl_dims_t){rows, kk}, t, dnnl_ab);
		dnnl_memory_desc_init_by_tag(&wany, 2, (dnnl_dims_t){kk, nn}, t,
					     dnnl_format_tag_any);
		if (dnnl_matmul_desc_init(&d, &ak, known ? &wany : &wm, bias ? &bm : NULL, &ym) !=
			dnnl_success ||
		    dnnl_primitive_desc_create(&pd, &d, attr, c->eng, NULL) != dnnl_success)
			pd = NULL;
		else if (bf16 && ho_cpu_is_slow(pd)) {
			dnnl_primitive_desc_destroy(pd);
			pd = NULL;
		}
		k->precision = pd && bf16 ? "bf16" : NULL;
	}
	if (!pd) {
		free(ws);
		return -EOPNOTSUPP;
	}
	if (!ho_cpu_convert_attr(c, k, &am, a, &ak, DNNL_ARG_SRC, true,
				 int8 ? q->src_attr : NULL) &&
	    !(int8 ? ho_cpu_int8_weights(c, k, pd, &wm, w, nn, kk, trans_b ? kk : 1,
					 trans_b ? 1 : nn, ws)
		   : ho_cpu_weights(c, k, pd, &wm, w, own)) &&
	    !(bias && ho_cpu_mem(c, k, &bm, int8 && q->bias ? q->bias : bias, DNNL_ARG_BIAS)) &&
	    !ho_cpu_mem(c, k, &ym, y, DNNL_ARG_DST) && !ho_cpu_prim(c, k, pd))
		ret = 0;
	free(ws);
	dnnl_primitive_desc_destroy(pd);
	return ret;
}

/* The result of ho_matmul_packed as the node's error. */
static int ho_matmul_packed_err(int ret, const struct ho_node *n, struct ho_error *err)
{
	if (ret == -EOPNOTSUPP)
		return ho_cpu_unsupported(err, n, "(oneDNN) has no matmul for this");
	return ret ? ho_err(err, -ENOMEM, "node '%s': oneDNN set-up failed", n->name) : 0;
}

/*
 * MatMul by [K, N] weights, with its bias Add (and an element-wise node) folded
 * in where the fusion found them (add, post; else NULL).
 */
int ho_cpu_prep_matmul_weights(struct ho_backend *c, const struct ho_graph *g,
			       const struct ho_node *n, const struct ho_node *add,
			       const struct ho_node *post, void *const *buf, struct ho_kernel *k,
			       struct ho_error *err)
{
	const struct ho_tensor *a = ho_node_input(g, n, 0), *w = ho_node_input(g, n, 1);
	int32_t bias = !add				 ? -1
		       : add->inputs[0] == n->outputs[0] ? add->inputs[1]
							 : add->inputs[0];
	int32_t y = post ? post->outputs[0] : add ? add->outputs[0] : n->outputs[0];
	dnnl_primitive_attr_t attr = NULL;
	int64_t kk;
	int ret;

	if (!a || !w || a->dtype != HO_DT_FLOAT || a->shape.rank < 2 || w->shape.rank != 2)
		return ho_cpu_unsupported(err, n, "runs float32 [..., K] x [K, N] weights only");
	kk = w->shape.dim[0];
	/* oneDNN 2.6's brgemm matmul divides by M at creation: an empty product has no work to do
	 * (a detector's box head with no box left), and sgemm does none */
	if (!ho_matmul_rows(a) || !w->shape.dim[1])
		return ho_cpu_prep_gemm(g, n, NULL, buf, k, err);
	if (!kk) /* the fusion leaves such a MatMul alone, and ho_cpu_matmul_packs too */
		return ho_cpu_unsupported(err, n, "multiplies by weights of no rows");
	if (post && ho_cpu_eltwise_attr(c, g, post, buf, false, &attr))
		return ho_err(err, -ENOMEM, "node '%s': oneDNN post-ops failed", n->name);
	ret = ho_matmul_packed(
	    c, k, attr ? attr : c->attr, ho_matmul_rows(a), kk, w->shape.dim[1], false,
	    ho_cpu_known(g, n->inputs[1]), ho_cpu_takes_over(g, (uint32_t)(n - g->nodes)) != 0,
	    buf[n->inputs[0]], buf[n->inputs[1]], add ? buf[bias] : NULL, buf[y]);
	if (attr)
		dnnl_primitive_attr_destroy(attr);
	return ho_matmul_packed_err(ret, n, err);
}

/* A Gemm ho_cpu_gemm_packs takes: Y = A B' + C on oneDNN matmul, B' packed once. */
int ho_cpu_prep_gemm_weights(struct ho_backend *c, const struct ho_graph *g,
			     const struct ho_node *n, void *const *buf, struct ho_kernel *k,
			     struct ho_error *err)
{
	const struct ho_tensor *a = ho_node_input(g, n, 0), *w = ho_node_input(g, n, 1);
	bool tb = ho_node_attr_i(n, "transB", 0) != 0;
	int ret = ho_matmul_packed(
	    c, k, c->attr, a->shape.dim[0], a->shape.dim[1], w->shape.dim[tb ? 0 : 1], tb, true,
	    ho_cpu_takes_over(g, (uint32_t)(n - g->nodes)) != 0, buf[n->inputs[0]],
	    buf[n->inputs[1]], ho_node_input(g, n, 2) ? buf[n->inputs[2]] : NULL,
	    buf[n->outputs[0]]);

	return ho_matmul_packed_err(ret, n, err);
}

/* Batches [lo, hi) of k's product, each on sgemm. */
static int ho_gemm_batches(const void *arg, int64_t lo, int64_t hi)
{
	const struct ho_kernel *k = arg;

	for (int64_t bt = lo; bt < hi; bt++) {
		int64_t at = 0, bo = 0, yo = 0, rest = bt;

		for (int i = k->n_bdims - 1; i >= 0; i--) {
			at += rest % k->bdim[i] * k->a_bst[i];
			bo += rest % k->bdim[i] * k->b_bst[i];
			yo += rest % k->bdim[i] * k->y_bst[i];
			rest /= k->bdim[i];
		}
		float *y = k->y + yo;

		if (k->bias)
			for (int64_t i = 0; i < k->m; i++)
				for (int64_t j = 0; j < k->n; j++)
					y[i * k->ldy + j] =
					    k->bias[(k->bias_rows == 1 ? 0 : i) * k->bias_cols +
						    (k->bias_cols == 1 ? 0 : j)];
		if (!k->k) { /* a sum of nothing (sgemm refuses a leading dimension of 0) */
			for (int64_t i = 0; i < k->m; i++)
				for (int64_t j = 0; j < k->n; j++)
					y[i * k->ldy + j] =
					    k->bias ? k->beta * y[i * k->ldy + j] : 0.0f;
			continue;
		}
		if (dnnl_sgemm(k->ta, k->tb, k->m, k->n, k->k, k->alpha, k->a + at, k->lda,
			       k->b + bo, k->ldb, k->bias ? k->beta : 0.0f, y,
			       k->ldy) != dnnl_success)
			return -EIO;
	}
	return 0;
}

/*
 * As many batches as threads or more (attention's heads): a thread a run of whole batches,
 * each sgemm on its thread (oneDNN runs it alone inside a parallel region).  Split inside
 * each product instead, every batch's output was half the other core's, and the Softmax
 * after it, splitting rows by batch, read them there: vit_b_16's took 1.0 ms at two
 * threads, 0.28 at one.
 */
int ho_cpu_run_gemm(struct ho_kernel *k)
{
	int t = omp_get_max_threads(),
	    parts = k->batch >= t ? ho_cpu_row_parts(k->batch, k->m * k->n * k->k, 1 << 16) : 1;

	return ho_cpu_for_parts_err(parts, k->batch, ho_gemm_batches, k);
}

/* Det: each matrix's determinant by LU with partial pivoting, in double. */
static int ho_run_det(const struct ho_kernel *k)
{
	const struct ho_typed *t = &k->typed;
	int64_t m = t->inner;
	double *a = (double *)k->fold;
	bool dbl = t->out_dt == HO_DT_DOUBLE;

	for (int64_t b = 0; b < t->outer; b++) {
		double det = 1;

		for (int64_t i = 0; i < m * m; i++)
			a[i] = dbl ? ((const double *)t->in[0])[b * m * m + i]
				   : ((const float *)t->in[0])[b * m * m + i];
		for (int64_t c = 0; c < m && det != 0; c++) {
			int64_t p = c;

			for (int64_t r = c + 1; r < m; r++)
				if (fabs(a[r * m + c]) > fabs(a[p * m + c]))
					p = r;
			if (a[p * m + c] == 0) {
				det = 0;
				break;
			}
			if (p != c) { /* a row swap flips the sign */
				for (int64_t j = 0; j < m; j++) {
					double tmp = a[c * m + j];

					a[c * m + j] = a[p * m + j];
					a[p * m + j] = tmp;
				}
				det = -det;
			}
			det *= a[c * m + c];
			for (int64_t r = c + 1; r < m; r++) {
				double f = a[r * m + c] / a[c * m + c];

				for (int64_t j = c; j < m; j++)
					a[r * m + j] -= f * a[c * m + j];
			}
		}
		if (dbl)
			((double *)t->out)[b] = det;
		else
			((float *)t->out)[b] = (float)det;
	}
	return 0;
}

int ho_cpu_prep_det(const struct ho_graph *g, const struct ho_node *n, void *const *buf,
		    struct ho_kernel *k, struct ho_error *err)
{
	const struct ho_tensor *x = ho_node_input(g, n, 0), *y = &g->tensors[n->outputs[0]];
	int64_t m;

	if (!x || x->shape.rank < 2 || x->dtype != y->dtype ||
	    (x->dtype != HO_DT_FLOAT && x->dtype != HO_DT_DOUBLE))
		return ho_cpu_unsupported(err, n, "takes float32 and float64 matrices only");
	m = x->shape.dim[x->shape.rank - 1];
	k->kind = HO_K_LOOP;
	k->typed.in[0] = buf[n->inputs[0]];
	k->typed.out = buf[n->outputs[0]];
	k->typed.out_dt = y->dtype;
	k->typed.inner = m;
	k->typed.outer = m ? ho_shape_numel(&x->shape) / (m * m) : 0;
	if (!(k->fold = malloc((size_t)(m * m > 0 ? m * m : 1) * sizeof(double))))
		return ho_err(err, -ENOMEM, "out of memory");
	k->typed.run = ho_run_det;
	return 0;
}
