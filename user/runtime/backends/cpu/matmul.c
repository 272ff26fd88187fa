// SPDX-License-Identifier: MIT
/* Matrix products: Gemm and MatMul on dnnl_sgemm, MatMul by known weights (with its bias Add and
 * an element-wise node, where fused) on oneDNN matmul. */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cpu.h"

/* Gemm: Y = alpha * A' B' + beta * C.  MatMul: batched A B, B shared or per batch. */
int ho_cpu_prep_gemm(const struct ho_graph *g, const struct ho_node *n, void *const *buf,
		     struct ho_kernel *k, struct ho_error *err)
{
	const struct ho_tensor *a = ho_node_input(g, n, 0), *b = ho_node_input(g, n, 1),
			       *cc = ho_node_input(g, n, 2), *y = &g->tensors[n->outputs[0]];
	bool gemm = !strcmp(n->op_type, "Gemm");
	int ra, rb;

	if (!a || !b || a->dtype != HO_DT_FLOAT || b->dtype != HO_DT_FLOAT)
		return ho_cpu_unsupported(err, n, "multiplies float32 matrices only");
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
			return ho_cpu_unsupported(err, n, "runs Gemm on 2-D inputs only");
		k->ta = ho_node_attr_i(n, "transA", 0) ? 'T' : 'N';
		k->tb = ho_node_attr_i(n, "transB", 0) ? 'T' : 'N';
		k->alpha = ho_node_attr_f(n, "alpha", 1);
		k->m = y->shape.dim[0];
		k->n = y->shape.dim[1];
		k->k = k->ta == 'T' ? a->shape.dim[0] : a->shape.dim[1];
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
	if (rb == 2) {
		k->m = ho_shape_numel(&a->shape) / k->k;
		return 0;
	}
	if (ra != rb)
		return ho_cpu_unsupported(err, n, "runs batched MatMul with equal ranks only");
	for (int i = 0; i < ra - 2; i++)
		if (a->shape.dim[i] != b->shape.dim[i])
			return ho_cpu_unsupported(err, n,
						  "runs batched MatMul without broadcasting only");
	k->m = a->shape.dim[ra - 2];
	k->batch = ho_shape_numel(&a->shape) / (k->m * k->k);
	k->a_step = k->m * k->k;
	k->b_step = k->k * k->n;
	k->y_step = k->m * k->n;
	return 0;
}

/* A MatMul of float32 [..., K] by [K, N] weights known at load: its weights pack once. */
bool ho_cpu_matmul_packs(const struct ho_graph *g, const struct ho_node *n)
{
	const struct ho_tensor *a = ho_node_input(g, n, 0), *w = ho_node_input(g, n, 1);

	return a && w && a->dtype == HO_DT_FLOAT && w->dtype == HO_DT_FLOAT && a->shape.rank >= 2 &&
	       w->shape.rank == 2 && ho_cpu_known(g, n->inputs[1]);
}

/*
 * MatMul by [K, N] weights, with its bias Add (and an element-wise node) folded
 * in where the fusion found them (add, post; else NULL): one oneDNN matmul, the
 * bias and the post-op applied as it writes.
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
	dnnl_matmul_desc_t d;
	dnnl_primitive_desc_t pd = NULL;
	dnnl_primitive_attr_t attr = NULL;
	dnnl_memory_desc_t am, wm, wany, bm, ym;
	int64_t kk, nn;
	int ret = 0;

	if (!a || !w || a->dtype != HO_DT_FLOAT || a->shape.rank < 2 || w->shape.rank != 2)
		return ho_cpu_unsupported(err, n, "runs float32 [..., K] x [K, N] weights only");
	kk = w->shape.dim[0];
	nn = w->shape.dim[1];
	dnnl_memory_desc_init_by_tag(&am, 2, (dnnl_dims_t){ho_shape_numel(&a->shape) / kk, kk},
				     dnnl_f32, dnnl_ab);
	dnnl_memory_desc_init_by_tag(&wm, 2, (dnnl_dims_t){kk, nn}, dnnl_f32, dnnl_ab);
	dnnl_memory_desc_init_by_tag(&wany, 2, (dnnl_dims_t){kk, nn}, dnnl_f32,
				     dnnl_format_tag_any);
	dnnl_memory_desc_init_by_tag(&bm, 2, (dnnl_dims_t){1, nn}, dnnl_f32, dnnl_ab);
	dnnl_memory_desc_init_by_tag(&ym, 2, (dnnl_dims_t){ho_shape_numel(&a->shape) / kk, nn},
				     dnnl_f32, dnnl_ab);
	if (post && ho_cpu_eltwise_attr(c, g, post, buf, false, &attr))
		return ho_err(err, -ENOMEM, "node '%s': oneDNN post-ops failed", n->name);
	/*
	 * Known weights (all that come here) in the layout the kernel picks, reordered
	 * once here.  Given them plain, oneDNN's brgemm copies them into that layout at
	 * every run: vit_b_16's 768 x 3072 MLP weights, 9.4 MB read and written a run.
	 */
	if (dnnl_matmul_desc_init(&d, &am, ho_cpu_known(g, n->inputs[1]) ? &wany : &wm,
				  add ? &bm : NULL, &ym) != dnnl_success ||
	    dnnl_primitive_desc_create(&pd, &d, attr ? attr : c->attr, c->eng, NULL) !=
		dnnl_success) {
		ret = ho_cpu_unsupported(err, n, "(oneDNN) has no matmul for this");
		goto out;
	}
	if (ho_cpu_mem(c, k, &am, buf[n->inputs[0]], DNNL_ARG_SRC) ||
	    ho_cpu_weights(c, k, pd, &wm, buf[n->inputs[1]]) ||
	    (add && ho_cpu_mem(c, k, &bm, buf[bias], DNNL_ARG_BIAS)) ||
	    ho_cpu_mem(c, k, &ym, buf[y], DNNL_ARG_DST) || ho_cpu_prim(c, k, pd))
		ret = ho_err(err, -ENOMEM, "node '%s': oneDNN set-up failed", n->name);
out:
	if (pd)
		dnnl_primitive_desc_destroy(pd);
	if (attr)
		dnnl_primitive_attr_destroy(attr);
	return ret;
}

int ho_cpu_run_gemm(struct ho_kernel *k)
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
