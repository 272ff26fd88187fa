// SPDX-License-Identifier: MIT
/* Shape rules: Matrix products: MatMul with batch broadcasting, Gemm. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heteroopt/opsem.h"
#include "shape.h"

/* A matrix product of inputs ai and bi, with numpy's broadcasting; the result of type dtype
 * (-1: A's). */
static int matmul_shape(struct ho_infer *c, uint32_t ai, uint32_t bi, int dtype)
{
	struct ho_tensor *a = in_t(c, ai), *b = in_t(c, bi);
	struct ho_shape sa, sb, batch_a, batch_b, o;
	int ret;

	if (!a || !b)
		return fail(c, "needs two inputs");
	if (dtype < 0)
		dtype = a->dtype;
	if (a->shape.rank < 0 || b->shape.rank < 0) {
		set_out(c, 0, dtype, NULL);
		return 0;
	}
	if (a->shape.rank == 0 || b->shape.rank == 0)
		return fail(c, "inputs must not be scalars");
	sa = a->shape;
	sb = b->shape;
	if (sa.rank == 1) { /* [K] -> [1,K] */
		sa.rank = 2;
		sa.dim[1] = sa.dim[0];
		sa.dim[0] = 1;
	}
	if (sb.rank == 1) { /* [K] -> [K,1] */
		sb.rank = 2;
		sb.dim[1] = 1;
	}
	int64_t ka = sa.dim[sa.rank - 1], kb = sb.dim[sb.rank - 2];

	if (ka >= 0 && kb >= 0 && ka != kb)
		return fail(c, "inner dimensions differ: '%s' has %" PRId64 ", '%s' has %" PRId64,
			    a->name, ka, b->name, kb);
	batch_a = sa;
	batch_a.rank -= 2;
	batch_b = sb;
	batch_b.rank -= 2;
	ret = broadcast(c, &batch_a, &batch_b, &o);
	if (ret)
		return ret;
	if (a->shape.rank != 1)
		o.dim[o.rank++] = sa.dim[sa.rank - 2];
	if (b->shape.rank != 1)
		o.dim[o.rank++] = sb.dim[sb.rank - 1];
	if (o.rank > HO_MAX_RANK)
		return fail(c, "result rank too large");
	set_out(c, 0, dtype, &o);
	return 0;
}

int ho_infer_matmul(struct ho_infer *c)
{
	return matmul_shape(c, 0, 1, -1);
}

/* MatMulInteger: int32; QLinearMatMul (a, a_scale, a_zp, b, ...): y_zero_point's type. */
int ho_infer_matmul_quant(struct ho_infer *c)
{
	if (!strcmp(c->nd->op_type, "MatMulInteger"))
		return matmul_shape(c, 0, 1, HO_DT_INT32);
	if (!in_t(c, 7))
		return fail(c, "needs y_zero_point");
	return matmul_shape(c, 0, 3, in_t(c, 7)->dtype);
}

int ho_infer_gemm(struct ho_infer *c)
{
	struct ho_tensor *a = in_t(c, 0), *b = in_t(c, 1), *bias = in_t(c, 2);
	bool ta = attr_i(c, "transA", 0), tb = attr_i(c, "transB", 0);
	struct ho_shape o;

	if (!a || !b)
		return fail(c, "needs A and B");
	if (a->shape.rank != 2 || b->shape.rank != 2)
		return fail(c, "A and B must be matrices (ranks %d and %d)", a->shape.rank,
			    b->shape.rank);
	int64_t m = a->shape.dim[ta ? 1 : 0], ka = a->shape.dim[ta ? 0 : 1];
	int64_t kb = b->shape.dim[tb ? 1 : 0], n = b->shape.dim[tb ? 0 : 1];

	if (ka >= 0 && kb >= 0 && ka != kb)
		return fail(c, "inner dimensions differ: %" PRId64 " vs %" PRId64, ka, kb);
	o.rank = 2;
	o.dim[0] = m;
	o.dim[1] = n;
	if (bias) {
		struct ho_shape tmp;
		int ret = broadcast(c, &o, &bias->shape, &tmp);

		if (ret)
			return ret;
	}
	set_out(c, 0, a->dtype, &o);
	return 0;
}

/*
 * RNN, GRU and LSTM: X [seq, batch, input] (layout 1: [batch, seq, input]),
 * W [dirs, gates * hidden, input]; Y [seq, dirs, batch, hidden] (layout 1:
 * [batch, seq, dirs, hidden]), Y_h and Y_c [dirs, batch, hidden] (layout 1:
 * [batch, dirs, hidden]).
 */
int ho_infer_recurrent(struct ho_infer *c)
{
	struct ho_tensor *x = in_t(c, 0), *w = in_t(c, 1), *r = in_t(c, 2);
	const char *op = c->nd->op_type, *dir = attr_s(c, "direction", "forward");
	int gates = !strcmp(op, "LSTM") ? 4 : !strcmp(op, "GRU") ? 3 : 1;
	int64_t layout = attr_i(c, "layout", 0), hidden = attr_i(c, "hidden_size", -1), dirs, seq,
		batch;
	struct ho_shape y = {.rank = 4}, h = {.rank = 3};

	if (!x || !w || !r)
		return fail(c, "needs X, W and R");
	if (x->shape.rank != 3 || w->shape.rank != 3 || r->shape.rank != 3)
		return fail(c, "X, W and R must have rank 3 (ranks %d, %d, %d)", x->shape.rank,
			    w->shape.rank, r->shape.rank);
	if (strcmp(dir, "forward") && strcmp(dir, "reverse") && strcmp(dir, "bidirectional"))
		return fail(c, "unknown direction '%s'", dir);
	dirs = !strcmp(dir, "bidirectional") ? 2 : 1;
	if (hidden < 0)
		hidden = r->shape.dim[2];
	if (w->shape.dim[0] >= 0 && w->shape.dim[0] != dirs)
		return fail(c, "W has %" PRId64 " directions, direction '%s' needs %" PRId64,
			    w->shape.dim[0], dir, dirs);
	if (hidden >= 0 && w->shape.dim[1] >= 0 && w->shape.dim[1] != gates * hidden)
		return fail(c, "W has %" PRId64 " rows, %d gates of %" PRId64 " need %" PRId64,
			    w->shape.dim[1], gates, hidden, gates * hidden);
	seq = x->shape.dim[layout ? 1 : 0];
	batch = x->shape.dim[layout ? 0 : 1];
	if (layout) {
		y.dim[0] = batch, y.dim[1] = seq, y.dim[2] = dirs, y.dim[3] = hidden;
		h.dim[0] = batch, h.dim[1] = dirs, h.dim[2] = hidden;
	} else {
		y.dim[0] = seq, y.dim[1] = dirs, y.dim[2] = batch, y.dim[3] = hidden;
		h.dim[0] = dirs, h.dim[1] = batch, h.dim[2] = hidden;
	}
	set_out(c, 0, x->dtype, &y);
	set_out(c, 1, x->dtype, &h);
	set_out(c, 2, x->dtype, &h);
	return 0;
}

/* Einsum: each label's extent from the inputs (an ellipsis axis of 1 broadcasts). */
int ho_infer_einsum(struct ho_infer *c)
{
	const char *eq = attr_s(c, "equation", NULL);
	int ranks[HO_EINSUM_MAX_IN], n = (int)c->nd->n_inputs;
	struct ho_error perr = {0};
	int64_t dim[HO_EINSUM_MAX_IN * HO_MAX_RANK + HO_MAX_RANK];
	struct ho_einsum e;
	struct ho_shape o = {0};

	if (!eq)
		return fail(c, "needs an equation");
	for (int i = 0; i < n && i < HO_EINSUM_MAX_IN; i++) {
		if (!in_t(c, (uint32_t)i))
			return fail(c, "input %d is missing", i);
		if (in_t(c, (uint32_t)i)->shape.rank < 0) {
			set_out(c, 0, in_t(c, 0)->dtype, NULL);
			return 0;
		}
		ranks[i] = in_t(c, (uint32_t)i)->shape.rank;
	}
	if (ho_einsum_parse(eq, n, ranks, &e, &perr))
		return fail(c, "%s", perr.msg);
	for (int l = 0; l < e.n_labels; l++)
		dim[l] = -2; /* not seen yet */
	for (int i = 0; i < n; i++)
		for (int a = 0; a < e.in_rank[i]; a++) {
			int l = e.in_label[i][a];
			int64_t d = in_t(c, (uint32_t)i)->shape.dim[a];

			if (dim[l] == -2 || (l < e.n_ell && dim[l] == 1))
				dim[l] = d;
			else if (d >= 0 && dim[l] >= 0 && d != dim[l] && !(l < e.n_ell && d == 1))
				return fail(c, "equation '%s': a label is %" PRId64 " and %" PRId64,
					    eq, dim[l], d);
		}
	o.rank = e.out_rank;
	for (int a = 0; a < o.rank; a++)
		o.dim[a] = dim[e.out_label[a]];
	set_out(c, 0, in_t(c, 0)->dtype, &o);
	return 0;
}

/*
 * Attention (opset 23): Q, K, V of rank 4 [B, heads, seq, head size], or of rank 3
 * [B, seq, heads * head size] with q_num_heads and kv_num_heads; past_key and past_value
 * [B, kv heads, past, ...] come before K and V.  Y as Q is laid out; present_key and
 * present_value [B, kv heads, past + kv seq, ...]; qk_matmul_output [B, q heads, q seq,
 * past + kv seq].
 */
int ho_infer_attention(struct ho_infer *c)
{
	struct ho_tensor *q = in_t(c, 0), *k = in_t(c, 1), *v = in_t(c, 2), *pk = in_t(c, 4);
	int64_t qh = attr_i(c, "q_num_heads", 0), kvh = attr_i(c, "kv_num_heads", 0);
	struct ho_shape y, pres_k = {.rank = 4}, pres_v = {.rank = 4}, qk = {.rank = 4};
	int r;

	if (!q || !k || !v)
		return fail(c, "needs Q, K and V");
	r = q->shape.rank;
	if (r < 0 || k->shape.rank < 0 || v->shape.rank < 0) {
		for (uint32_t i = 0; i < 4; i++)
			set_out(c, i, q->dtype, NULL);
		return 0;
	}
	if ((r != 3 && r != 4) || k->shape.rank != r || v->shape.rank != r)
		return fail(c, "needs Q, K and V all of rank 3 or all of rank 4");
	if (r == 3 && (qh < 1 || kvh < 1))
		return fail(c, "needs q_num_heads and kv_num_heads with inputs of rank 3");
	int64_t b = q->shape.dim[0], qs = q->shape.dim[r - 2], kvs = k->shape.dim[r - 2];
	int64_t hs = r == 4 ? k->shape.dim[3] : k->shape.dim[2] < 0 ? -1 : k->shape.dim[2] / kvh;
	int64_t vhs = r == 4 ? v->shape.dim[3] : v->shape.dim[2] < 0 ? -1 : v->shape.dim[2] / kvh;
	int64_t past = pk && pk->shape.rank == 4 ? pk->shape.dim[2] : 0;

	if (r == 4) {
		qh = q->shape.dim[1];
		kvh = k->shape.dim[1];
	}
	if (qh > 0 && kvh > 0 && qh % kvh)
		return fail(c,
			    "has %" PRId64 " query heads, not a multiple of its %" PRId64
			    " key and value heads",
			    qh, kvh);
	y = q->shape;
	if (r == 4)
		y.dim[3] = vhs;
	else
		y.dim[2] = vhs < 0 ? -1 : qh * vhs;
	pres_k.dim[0] = pres_v.dim[0] = qk.dim[0] = b;
	pres_k.dim[1] = pres_v.dim[1] = kvh;
	pres_k.dim[2] = pres_v.dim[2] = qk.dim[3] = kvs < 0 || past < 0 ? -1 : past + kvs;
	pres_k.dim[3] = hs;
	pres_v.dim[3] = vhs;
	qk.dim[1] = qh;
	qk.dim[2] = qs;
	set_out(c, 0, q->dtype, &y);
	set_out(c, 1, q->dtype, &pres_k);
	set_out(c, 2, q->dtype, &pres_v);
	set_out(c, 3, q->dtype, &qk);
	return 0;
}
