// SPDX-License-Identifier: MIT
/*
 * The OpenCL backend's GEMMs, on CLBlast (a BLAS tuned per device): MatMul
 * and Gemm, and convolution as im2col then one GEMM per image, groups batched.
 * Bias, folded batch norm and activation follow in one element-wise pass
 * (bias_act), a binary post-op in place after it.
 */
#include "ocl.h" /* first: it sets the OpenCL version CLBlast's header then reads */

#include <clblast_c.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* *buf holds at least len bytes: grown (its contents lost) at prepare time. */
int ocl_need(const struct ocl_ctx *c, cl_mem *buf, size_t *have, size_t len)
{
	struct ho_backend *b = c->b;
	cl_int e = CL_SUCCESS;
	cl_mem m;

	if (len <= *have)
		return 0;
	m = clCreateBuffer(b->ctx, CL_MEM_READ_WRITE, len, NULL, &e);
	if (e != CL_SUCCESS)
		return ho_err(
		    c->err, -ENOMEM,
		    "node '%s' (%s): %s cannot allocate the %zu bytes of scratch it needs "
		    "(one buffer of at most %zu): %s (%d)",
		    c->n->name, c->n->op_type, b->name, len, b->max_alloc, ocl_strerror(e), e);
	if (*buf)
		clReleaseMemObject(*buf);
	*buf = m;
	*have = len;
	return 0;
}

static CLBlastTranspose ocl_trans(bool t)
{
	return t ? CLBlastTransposeYes : CLBlastTransposeNo;
}

/* Enqueue m; 0 or CLBlast's status (OpenCL's error codes included). */
int ocl_gemm_enqueue(struct ho_backend *b, const struct ocl_gemm *m, cl_event *ev)
{
	cl_mem bm = m->b ? m->b : b->scratch;

	if (m->batch == 1)
		return CLBlastSgemmWithTempBuffer(CLBlastLayoutRowMajor, ocl_trans(m->ta),
						  ocl_trans(m->tb), m->m, m->n, m->k, m->alpha,
						  m->a, m->ao, m->lda, bm, m->bo, m->ldb, 0.0f,
						  m->c, m->co, m->ldc, &b->q, ev, b->tmp);
	return CLBlastSgemmStridedBatched(CLBlastLayoutRowMajor, ocl_trans(m->ta), ocl_trans(m->tb),
					  m->m, m->n, m->k, m->alpha, m->a, m->ao, m->lda, m->sa,
					  bm, m->bo, m->ldb, m->sb, 0.0f, m->c, m->co, m->ldc,
					  m->sc, m->batch, &b->q, ev);
}

/* A GEMM step; its temporary matrices counted into the device's. */
static int ocl_add_gemm(const struct ocl_ctx *c, const struct ocl_gemm *m)
{
	struct ocl_launch *l = ocl_new_launch(c, NULL);
	size_t tmp = 0;
	int st;

	if (!l)
		return ho_err(c->err, -ENOMEM, "out of memory");
	l->gemm = *m;
	if (m->batch > 1 || !c->b) /* batched: no temporaries; or a check */
		return 0;
	st = CLBlastSGemmTempBufferSize(CLBlastLayoutRowMajor, ocl_trans(m->ta), ocl_trans(m->tb),
					m->m, m->n, m->k, m->ao, m->lda, m->bo, m->ldb, m->co,
					m->ldc, &c->b->q, &tmp);
	if (st != CLBlastSuccess)
		return ho_err(c->err, -EINVAL, "node '%s' (%s): CLBlast refuses its GEMM (%d)",
			      c->n->name, c->n->op_type, st);
	return ocl_need(c, &c->b->tmp, &c->b->tmp_len, tmp * sizeof(float));
}

/*
 * y (rows x cols at offset yo of tensor y) += beta * bias, row r reading row
 * r % rmod of a bias spaced bias_m and bias_n apart; then act.  Nothing to do:
 * no launch.
 */
static int ocl_add_bias_act(const struct ocl_ctx *c, int32_t y, size_t rows, size_t cols,
			    size_t rmod, cl_mem bias, long bo, int bias_m, int bias_n, float beta,
			    const struct ho_act_args *act)
{
	struct ocl_launch *l;
	struct ocl_args a;

	if (!bias && act->act == HO_ACT_NONE)
		return 0;
	if (!(l = ocl_new_launch(c, "bias_act")))
		return ocl_no_kernel(c);
	a = (struct ocl_args){.k = l->k};
	ocl_arg_tensor(&a, c, y);
	ocl_arg_buf(&a, bias);
	ocl_arg_long(&a, bo);
	ocl_arg_int(&a, (int)cols);
	ocl_arg_int(&a, (int)rmod);
	ocl_arg_int(&a, bias_m);
	ocl_arg_int(&a, bias_n);
	ocl_arg_float(&a, beta);
	ocl_arg_act(&a, act);
	l->dims = 1;
	l->global[0] = rows * cols;
	return ocl_args_done(c, &a);
}

/* The im2col of outputs p0 to p0 + np - 1 of image img of x into the scratch. */
static int ocl_add_im2col(const struct ocl_ctx *c, const struct ho_tensor *x,
			  const struct ho_tensor *y, const struct ho_window *win, int64_t img,
			  int64_t p0, int64_t np)
{
	int64_t C = x->shape.dim[1], H = x->shape.dim[2], W = x->shape.dim[3];
	struct ocl_launch *l = ocl_new_launch(c, "im2col");
	struct ocl_args a;

	if (!l)
		return ocl_no_kernel(c);
	a = (struct ocl_args){.k = l->k};
	l->scratch = true;
	l->scratch_at = a.i++; /* col: the scratch, set at launch */
	ocl_arg_buf(&a, ocl_buf(c, c->n->inputs[0]));
	ocl_arg_long(&a, (long)(c->mem[c->n->inputs[0]].off / sizeof(float) + img * C * H * W));
	ocl_arg_int(&a, (int)H);
	ocl_arg_int(&a, (int)W);
	ocl_arg_int(&a, (int)y->shape.dim[2]);
	ocl_arg_int(&a, (int)y->shape.dim[3]);
	ocl_arg_window(&a, win);
	ocl_arg_int(&a, (int)p0);
	ocl_arg_int(&a, (int)np);
	l->dims = 2;
	l->global[0] = (size_t)np;
	l->global[1] = (size_t)(C * win->ks[0] * win->ks[1]);
	return ocl_args_done(c, &a);
}

/*
 * The most bytes of columns one band of outputs takes: an image whose columns
 * would take more (a 11x11 kernel over 64 channels at 540x540: 9 GB, more than
 * PoCL's 8 GiB buffer) is done in bands of outputs, each its im2col and GEMMs.
 */
#define OCL_COLUMNS_MAX ((size_t)256 << 20)

/*
 * Conv as GEMM, per image and band of outputs: y[K, band] = w[K, C KH KW]
 * col[C KH KW, band], a group's rows of each a batch of the GEMM.  A 1x1
 * convolution of stride 1 and no padding reads its input as col, in place.
 */
int ocl_prep_conv_gemm(const struct ocl_ctx *c, const struct ho_window *win)
{
	const struct ho_tensor *x = ho_node_input(c->g, c->n, 0), *w = ho_node_input(c->g, c->n, 1);
	const struct ho_tensor *yt = &c->g->tensors[c->n->outputs[0]];
	int64_t G = ho_node_attr_i(c->n, "group", 1);
	int64_t N = x->shape.dim[0], C = x->shape.dim[1], H = x->shape.dim[2], W = x->shape.dim[3];
	int64_t K = w->shape.dim[0], KK = win->ks[0] * win->ks[1];
	int64_t P = yt->shape.dim[2] * yt->shape.dim[3], R = C / G * KK;
	int32_t y = ocl_fused_out(c);
	struct ho_act_args act;
	cl_mem wm, bm;
	long wo, bo;
	bool act_only, has_bias, direct;
	int ret;

	direct = KK == 1 && win->st[0] == 1 && win->st[1] == 1 && !win->pd[0] && !win->pd[1] &&
		 P == H * W;
	act_only = ocl_post_act(c, &act);
	if ((ret = ocl_conv_weights(c, &wm, &wo, &bm, &bo, &has_bias)))
		return ret;
	size_t col = (size_t)(C * KK) * sizeof(float), most = OCL_COLUMNS_MAX;

	if (c->b && c->b->max_alloc && c->b->max_alloc < most)
		most = c->b->max_alloc;
	int64_t band =
	    direct || (size_t)P * col <= most ? P : (int64_t)(most / col ? most / col : 1);

	if (!direct && c->b &&
	    (ret = ocl_need(c, &c->b->scratch, &c->b->scratch_len, (size_t)band * col)))
		return ret;
	for (int64_t img = 0; img < N; img++)
		for (int64_t p0 = 0; p0 < P; p0 += band) {
			const struct ho_mem *xm = &c->mem[c->n->inputs[0]];
			int64_t np = P - p0 < band ? P - p0 : band;
			struct ocl_gemm m = {
			    .a = wm,
			    .ao = (size_t)wo,
			    .lda = (size_t)R,
			    .sa = (size_t)(K / G * R),
			    .b = direct ? ocl_buf(c, c->n->inputs[0]) : NULL,
			    .bo = direct ? xm->off / sizeof(float) + (size_t)(img * C * P) : 0,
			    .ldb = (size_t)np,
			    .sb = (size_t)(R * np),
			    .c = ocl_buf(c, y),
			    .co = c->mem[y].off / sizeof(float) + (size_t)(img * K * P + p0),
			    .ldc = (size_t)P,
			    .sc = (size_t)(K / G * P),
			    .m = (size_t)(K / G),
			    .n = (size_t)np,
			    .k = (size_t)R,
			    .batch = (size_t)G,
			    .alpha = 1.0f,
			};

			if (!direct && (ret = ocl_add_im2col(c, x, yt, win, img, p0, np)))
				return ret;
			if ((ret = ocl_add_gemm(c, &m)))
				return ret;
		}
	ret = ocl_add_bias_act(c, y, (size_t)(N * K), (size_t)P, (size_t)K, has_bias ? bm : NULL,
			       bo, 1, 0, 1.0f, &act);
	if (ret)
		return ret;
	return act_only ? 0 : ocl_post_binary(c);
}

/* MatMul's and Gemm's shapes: M, N, K, batches and strides, the transposes. */
struct ocl_mm {
	int64_t M, N, K, batch, sa, sb;
	bool ta, tb;
};

static int ocl_mm_shape(const struct ocl_ctx *c, bool gemm, struct ocl_mm *s)
{
	const struct ho_tensor *A = ho_node_input(c->g, c->n, 0), *B = ho_node_input(c->g, c->n, 1);
	int ra, rb;

	if (!A || !B || A->shape.rank < 1 || B->shape.rank < 1)
		return ocl_refuse(c, "needs both operands");
	ra = A->shape.rank, rb = B->shape.rank;
	s->ta = gemm && ho_node_attr_i(c->n, "transA", 0);
	s->tb = gemm && ho_node_attr_i(c->n, "transB", 0);
	s->K = s->ta ? A->shape.dim[ra - 2] : A->shape.dim[ra - 1];
	s->M = ra == 1 ? 1 : s->ta ? A->shape.dim[ra - 1] : A->shape.dim[ra - 2];
	s->N = rb == 1 ? 1 : s->tb ? B->shape.dim[rb - 2] : B->shape.dim[rb - 1];
	s->batch = 1;
	for (int k = 0; k < ra - 2; k++)
		s->batch *= A->shape.dim[k];
	s->sa = ra > 2 ? s->M * s->K : 0;
	s->sb = rb > 2 ? s->K * s->N : 0;
	if (rb > 2) {
		int64_t bb = 1;

		for (int k = 0; k < rb - 2; k++)
			bb *= B->shape.dim[k];
		if (ra > 2 && (bb != s->batch || ra != rb))
			return ocl_refuse(c, "runs MatMul batches of one shape on both sides only");
		s->batch = bb;
	}
	return 0;
}

/* MatMul (a bias Add folded) and Gemm; batches where both or one side is batched. */
int ocl_prep_matmul(const struct ocl_ctx *c)
{
	bool gemm = !strcmp(c->n->op_type, "Gemm"), act_only;
	float beta = gemm ? ho_node_attr_f(c->n, "beta", 1) : 1;
	int32_t ct = -1, y = ocl_fused_out(c);
	int bias_m = 0, bias_n = 0, ret;
	struct ho_act_args act;
	struct ocl_mm s = {0};
	struct ocl_gemm m;

	if ((ret = ocl_mm_shape(c, gemm, &s)))
		return ret;
	if (gemm && c->n->n_inputs > 2 && c->n->inputs[2] >= 0)
		ct = c->n->inputs[2];
	if (!gemm && c->fuse && c->fuse->bn >= 0) { /* the bias Add's other operand */
		const struct ho_node *add = &c->g->nodes[c->fuse->bn];

		ct = add->inputs[0] == c->n->outputs[0] ? add->inputs[1] : add->inputs[0];
	}
	if (ct >= 0) {
		const struct ho_shape *cs = &c->g->tensors[ct].shape;
		int64_t cm = cs->rank >= 2 ? cs->dim[cs->rank - 2] : 1,
			cn = cs->rank >= 1 ? cs->dim[cs->rank - 1] : 1;

		if ((cm != 1 && cm != s.M) || (cn != 1 && cn != s.N) ||
		    ho_shape_numel(cs) != cm * cn)
			return ocl_refuse(c, "adds a bias of [M,N], [N], [M,1] or a scalar only");
		bias_m = cm == 1 ? 0 : (int)cn;
		bias_n = cn == 1 ? 0 : 1;
	}
	act_only = ocl_post_act(c, &act);
	m = (struct ocl_gemm){
	    .a = ocl_buf(c, c->n->inputs[0]),
	    .ao = c->mem[c->n->inputs[0]].off / sizeof(float),
	    .lda = (size_t)(s.ta ? s.M : s.K),
	    .sa = (size_t)s.sa,
	    .b = ocl_buf(c, c->n->inputs[1]),
	    .bo = c->mem[c->n->inputs[1]].off / sizeof(float),
	    .ldb = (size_t)(s.tb ? s.K : s.N),
	    .sb = (size_t)s.sb,
	    .c = ocl_buf(c, y),
	    .co = c->mem[y].off / sizeof(float),
	    .ldc = (size_t)s.N,
	    .sc = (size_t)(s.M * s.N),
	    .m = (size_t)s.M,
	    .n = (size_t)s.N,
	    .k = (size_t)s.K,
	    .batch = (size_t)s.batch,
	    .ta = s.ta,
	    .tb = s.tb,
	    .alpha = gemm ? ho_node_attr_f(c->n, "alpha", 1) : 1,
	};
	/* batches of A against one B: one GEMM of batch * M rows */
	if (!s.sb && !s.ta && s.batch > 1) {
		m.m *= m.batch;
		m.batch = 1;
	}
	if ((ret = ocl_add_gemm(c, &m)))
		return ret;
	ret = ocl_add_bias_act(c, y, (size_t)(s.batch * s.M), (size_t)s.N, (size_t)s.M,
			       ct >= 0 ? ocl_buf(c, ct) : NULL,
			       ct >= 0 ? (long)(c->mem[ct].off / sizeof(float)) : 0, bias_m, bias_n,
			       beta, &act);
	if (ret)
		return ret;
	return act_only ? 0 : ocl_post_binary(c);
}
