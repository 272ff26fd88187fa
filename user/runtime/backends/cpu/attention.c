// SPDX-License-Identifier: MIT
/*
 * Attention (opset 23), as ONNX's reference computes it: per batch and query
 * head, S = scale * Q K^T (dnnl_sgemm), capped (softcap * tanh(S / softcap))
 * before the mask, plus the mask (a float one added, a boolean one -inf where
 * false, padded with -inf past its last extent) and, with is_causal, -inf
 * past the diagonal shifted by the past's length; softmax along the keys;
 * Y = S V.  Query heads share key and value heads in groups (GQA: head h
 * reads h / (q heads / kv heads)).  Rank-3 inputs are read in place through
 * the GEMMs' leading dimensions.  past_key and past_value come before K and
 * V in present_key and present_value (or a copy of its own).  Float32.
 * And RotaryEmbedding (below), the position rotation such models apply first.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cpu.h"

struct ho_attention {
	const float *q, *k, *v, *pk, *pv, *mask_f;
	const uint8_t *mask_b;
	float *y, *qk, *keys, *vals, *scores; /* keys, vals: present's, or kept here */
	int rank, mode;
	int64_t b, qh, kvh, qs, kvs, past, total, hs, vhs;
	int64_t mstride[4], mlast; /* the mask over [B, qh, qs, keys]; keys it has */
	float scale, softcap;
	bool causal;
};

/* K or V ([B, kvh, kvs, d], or [B, kvs, kvh * d]) after past ([B, kvh, past, d]) into dst. */
static void ho_attention_join(const struct ho_attention *a, const float *past, const float *x,
			      int64_t d, float *dst)
{
	for (int64_t b = 0; b < a->b; b++)
		for (int64_t h = 0; h < a->kvh; h++) {
			float *o = dst + (b * a->kvh + h) * a->total * d;

			if (a->past)
				memcpy(o, past + (b * a->kvh + h) * a->past * d,
				       (size_t)(a->past * d) * sizeof(float));
			for (int64_t s = 0; s < a->kvs; s++)
				memcpy(o + (a->past + s) * d,
				       a->rank == 4 ? x + ((b * a->kvh + h) * a->kvs + s) * d
						    : x + (b * a->kvs + s) * a->kvh * d + h * d,
				       (size_t)d * sizeof(float));
		}
}

/* Row i of head (b, h)'s scores: capped, masked, then (qk mode 2 kept) its softmax. */
static void ho_attention_row(const struct ho_attention *a, int64_t b, int64_t h, int64_t i,
			     float *s, float *qk)
{
	const int64_t *ms = a->mstride;
	int64_t m0 = b * ms[0] + h * ms[1] + i * ms[2];
	float hi = -INFINITY, sum = 0;

	for (int64_t j = 0; j < a->total; j++) {
		float v = s[j];

		if (a->softcap > 0)
			v = a->softcap * tanhf(v / a->softcap);
		if (qk && a->mode <= 1)
			qk[j] = v;
		if (a->mask_f || a->mask_b) {
			if (j >= a->mlast)
				v = -INFINITY;
			else if (a->mask_f)
				v += a->mask_f[m0 + j * ms[3]];
			else if (!a->mask_b[m0 + j * ms[3]])
				v = -INFINITY;
		}
		if (a->causal && j > i + a->past)
			v = -INFINITY;
		if (qk && a->mode == 2)
			qk[j] = v;
		s[j] = v;
		hi = v > hi ? v : hi;
	}
	/* all masked: numpy's softmax gives NaN (exp(-inf - -inf)), as here */
	for (int64_t j = 0; j < a->total; j++) {
		s[j] = expf(s[j] - hi);
		sum += s[j];
	}
	for (int64_t j = 0; j < a->total; j++) {
		s[j] /= sum;
		if (qk && a->mode == 3)
			qk[j] = s[j];
	}
}

static int ho_attention_heads(const void *arg, int64_t lo, int64_t hi)
{
	const struct ho_attention *a = arg;
	int64_t per = a->qh / a->kvh;
	int64_t ldq = a->rank == 4 ? a->hs : a->qh * a->hs,
		ldy = a->rank == 4 ? a->vhs : a->qh * a->vhs;

	for (int64_t bh = lo; bh < hi; bh++) {
		int64_t b = bh / a->qh, h = bh % a->qh, kh = b * a->kvh + h / per;
		const float *q =
		    a->rank == 4 ? a->q + bh * a->qs * a->hs : a->q + b * a->qs * ldq + h * a->hs;
		float *y =
		    a->rank == 4 ? a->y + bh * a->qs * a->vhs : a->y + b * a->qs * ldy + h * a->vhs;
		float *s = a->scores + bh * a->qs * a->total;

		if (dnnl_sgemm('N', 'T', a->qs, a->total, a->hs, a->scale, q, ldq,
			       a->keys + kh * a->total * a->hs, a->hs, 0, s,
			       a->total) != dnnl_success)
			return -EIO;
		for (int64_t i = 0; i < a->qs; i++)
			ho_attention_row(a, b, h, i, s + i * a->total,
					 a->qk ? a->qk + (bh * a->qs + i) * a->total : NULL);
		if (dnnl_sgemm('N', 'N', a->qs, a->vhs, a->total, 1, s, a->total,
			       a->vals + kh * a->total * a->vhs, a->vhs, 0, y, ldy) != dnnl_success)
			return -EIO;
	}
	return 0;
}

static int ho_run_attention(const struct ho_kernel *k)
{
	const struct ho_attention *a = k->attn;
	int64_t heads = a->b * a->qh;

	ho_attention_join(a, a->pk, a->k, a->hs, a->keys);
	ho_attention_join(a, a->pv, a->v, a->vhs, a->vals);
	return ho_cpu_for_parts_err(
	    ho_cpu_row_parts(heads, a->qs * a->total * (a->hs + a->vhs), 1 << 16), heads,
	    ho_attention_heads, a);
}

/* The mask's steps over [B, qh, qs, keys] (0 where it broadcasts), or a refusal. */
static int ho_attention_mask(struct ho_attention *a, const struct ho_tensor *m,
			     const struct ho_node *n, struct ho_error *err)
{
	const int64_t want[4] = {a->b, a->qh, a->qs, -1};
	int r = m->shape.rank;
	int64_t step = 1;

	if (r < 1 || r > 4 || (m->dtype != HO_DT_FLOAT && m->dtype != HO_DT_BOOL))
		return ho_cpu_unsupported(err, n,
					  "needs a float32 or bool attn_mask of rank 1 to 4");
	a->mlast = m->shape.dim[r - 1];
	if (a->mlast > a->total)
		return ho_cpu_unsupported(err, n, "has an attn_mask longer than the keys");
	for (int d = 3; d >= 0; d--) {
		int md = d - (4 - r);
		int64_t e = md >= 0 ? m->shape.dim[md] : 1;

		if (d < 3 && e != 1 && e != want[d])
			return ho_cpu_unsupported(err, n,
						  "has an attn_mask that does not broadcast");
		a->mstride[d] = e == 1 && d < 3 ? 0 : step;
		step *= e;
	}
	return 0;
}

int ho_cpu_prep_attention(const struct ho_graph *g, const struct ho_node *n, void *const *buf,
			  struct ho_kernel *k, struct ho_error *err)
{
	const struct ho_tensor *q = ho_node_input(g, n, 0), *kt = ho_node_input(g, n, 1),
			       *v = ho_node_input(g, n, 2), *m = ho_node_input(g, n, 3),
			       *pk = ho_node_input(g, n, 4), *pv = ho_node_input(g, n, 5);
	const struct ho_tensor *qk =
	    n->n_outputs > 3 && n->outputs[3] >= 0 ? &g->tensors[n->outputs[3]] : NULL;
	struct ho_attention *a;
	int r;

	if (!q || !kt || !v || q->dtype != HO_DT_FLOAT || kt->dtype != HO_DT_FLOAT ||
	    v->dtype != HO_DT_FLOAT || (pk && pk->dtype != HO_DT_FLOAT) ||
	    (pv && pv->dtype != HO_DT_FLOAT))
		return ho_cpu_unsupported(err, n, "runs float32 Q, K, V and past only");
	if (ho_node_input(g, n, 6))
		return ho_cpu_unsupported(err, n, "has no kernel for nonpad_kv_seqlen (opset 24)");
	if (!!pk != !!pv || (pk && (pk->shape.rank != 4 || pv->shape.rank != 4)))
		return ho_cpu_unsupported(err, n, "needs past_key and past_value both, of rank 4");
	r = q->shape.rank;
	if (!(a = k->attn = calloc(1, sizeof(*a))))
		return ho_err(err, -ENOMEM, "out of memory");
	a->rank = r;
	a->b = q->shape.dim[0];
	a->qs = q->shape.dim[r - 2];
	a->kvs = kt->shape.dim[r - 2];
	a->qh = r == 4 ? q->shape.dim[1] : ho_node_attr_i(n, "q_num_heads", 0);
	a->kvh = r == 4 ? kt->shape.dim[1] : ho_node_attr_i(n, "kv_num_heads", 0);
	if (a->qh < 1 || a->kvh < 1 || a->qh % a->kvh)
		return ho_cpu_unsupported(err, n, "needs query heads a multiple of key heads");
	a->hs = r == 4 ? kt->shape.dim[3] : kt->shape.dim[2] / a->kvh;
	a->vhs = r == 4 ? v->shape.dim[3] : v->shape.dim[2] / a->kvh;
	if ((r == 4 ? q->shape.dim[3] : q->shape.dim[2] / a->qh) != a->hs ||
	    (r == 3 && (q->shape.dim[2] % a->qh || kt->shape.dim[2] % a->kvh)))
		return ho_cpu_unsupported(err, n, "needs Q's and K's head sizes equal");
	a->past = pk ? pk->shape.dim[2] : 0;
	a->total = a->past + a->kvs;
	a->mode = (int)ho_node_attr_i(n, "qk_matmul_output_mode", 0);
	a->causal = ho_node_attr_i(n, "is_causal", 0) != 0;
	a->softcap = ho_node_attr_f(n, "softcap", 0);
	a->scale = ho_node_attr_f(n, "scale", 1.0f / sqrtf((float)a->hs));
	if (qk && (a->mode < 0 || a->mode > 3))
		return ho_cpu_unsupported(err, n, "has a qk_matmul_output_mode past 3");
	if (m) {
		int ret = ho_attention_mask(a, m, n, err);

		if (ret)
			return ret;
		if (m->dtype == HO_DT_FLOAT)
			a->mask_f = buf[n->inputs[3]];
		else
			a->mask_b = buf[n->inputs[3]];
	}
	a->q = buf[n->inputs[0]];
	a->k = buf[n->inputs[1]];
	a->v = buf[n->inputs[2]];
	a->pk = pk ? buf[n->inputs[4]] : NULL;
	a->pv = pv ? buf[n->inputs[5]] : NULL;
	a->y = buf[n->outputs[0]];
	a->qk = qk ? buf[n->outputs[3]] : NULL;
	/* scores for every head at once, and the keys and values joined where none is asked */
	int64_t nk = a->b * a->kvh * a->total, sc = a->b * a->qh * a->qs * a->total;
	bool own_k = n->n_outputs < 2 || n->outputs[1] < 0,
	     own_v = n->n_outputs < 3 || n->outputs[2] < 0;

	k->fold = malloc((size_t)(sc + (own_k ? nk * a->hs : 0) + (own_v ? nk * a->vhs : 0) + 1) *
			 sizeof(float));
	if (!k->fold)
		return ho_err(err, -ENOMEM, "out of memory");
	a->scores = k->fold;
	a->keys = own_k ? a->scores + sc : buf[n->outputs[1]];
	a->vals = own_v ? a->scores + sc + (own_k ? nk * a->hs : 0) : buf[n->outputs[2]];
	k->kind = HO_K_LOOP;
	k->typed.run = ho_run_attention;
	return 0;
}

/*
 * RotaryEmbedding (opset 23): the first rotary_embedding_dim of each head's
 * elements turned in pairs (halves, or neighbours when interleaved) by the
 * cos and sin of its position: the cache's row at position_ids, or the row of
 * its batch and sequence index.  X [B, heads, seq, head] or [B, seq, heads *
 * head] (num_heads); the rest of each head passes through.  Float32.
 */
struct ho_rotary {
	const float *x, *cos, *sin;
	const int64_t *pos;
	float *y;
	int rank;
	bool interleaved;
	int64_t b, s, h, d, rd, rows; /* rows: the caches' positions */
};

static int ho_run_rotary(const struct ho_kernel *k)
{
	const struct ho_rotary *r = k->rotary;
	int64_t half = r->rd / 2, bad = 0;

	for (int64_t b = 0; b < r->b; b++)
		for (int64_t s = 0; s < r->s; s++) {
			int64_t p = r->pos ? r->pos[b * r->s + s] : b * r->s + s;
			const float *c, *sn;

			if (p < 0 || p >= r->rows) {
				bad = 1;
				continue;
			}
			c = r->cos + p * half;
			sn = r->sin + p * half;
			for (int64_t h = 0; h < r->h; h++) {
				int64_t off = r->rank == 4
						  ? ((b * r->h + h) * r->s + s) * r->d
						  : (b * r->s + s) * r->h * r->d + h * r->d;
				const float *x = r->x + off;
				float *y = r->y + off;

				for (int64_t i = 0; i < half; i++) {
					int64_t i1 = r->interleaved ? 2 * i : i,
						i2 = r->interleaved ? 2 * i + 1 : i + half;
					float x1 = x[i1], x2 = x[i2];

					y[i1] = c[i] * x1 - sn[i] * x2;
					y[i2] = sn[i] * x1 + c[i] * x2;
				}
				if (y != x)
					memcpy(y + r->rd, x + r->rd,
					       (size_t)(r->d - r->rd) * sizeof(float));
			}
		}
	return bad ? -EINVAL : 0; /* a position past the caches: "an index is out of range" */
}

int ho_cpu_prep_rotary(const struct ho_graph *g, const struct ho_node *n, void *const *buf,
		       struct ho_kernel *k, struct ho_error *err)
{
	const struct ho_tensor *x = ho_node_input(g, n, 0), *c = ho_node_input(g, n, 1),
			       *sn = ho_node_input(g, n, 2), *pos = ho_node_input(g, n, 3);
	struct ho_rotary *r;
	int64_t heads = ho_node_attr_i(n, "num_heads", 0);

	if (!x || !c || !sn || x->dtype != HO_DT_FLOAT || c->dtype != HO_DT_FLOAT ||
	    sn->dtype != HO_DT_FLOAT || (pos && pos->dtype != HO_DT_INT64))
		return ho_cpu_unsupported(err, n, "runs float32 input and caches, int64 positions");
	if ((x->shape.rank != 3 && x->shape.rank != 4) || (x->shape.rank == 3 && heads < 1))
		return ho_cpu_unsupported(err, n,
					  "needs [B, heads, seq, head] or [B, seq, hidden] "
					  "with num_heads");
	if (!(r = k->rotary = calloc(1, sizeof(*r))))
		return ho_err(err, -ENOMEM, "out of memory");
	r->rank = x->shape.rank;
	r->b = x->shape.dim[0];
	r->s = x->shape.dim[r->rank == 4 ? 2 : 1];
	r->h = r->rank == 4 ? x->shape.dim[1] : heads;
	r->d = r->rank == 4 ? x->shape.dim[3] : x->shape.dim[2] / heads;
	r->rd = ho_node_attr_i(n, "rotary_embedding_dim", 0);
	r->rd = r->rd > 0 ? r->rd : r->d;
	r->interleaved = ho_node_attr_i(n, "interleaved", 0) != 0;
	r->rows =
	    c->shape.rank >= 2 ? ho_shape_numel(&c->shape) / c->shape.dim[c->shape.rank - 1] : 0;
	if (r->rd > r->d || r->rd % 2 || (r->rank == 3 && x->shape.dim[2] % heads) ||
	    c->shape.rank < 2 || c->shape.dim[c->shape.rank - 1] != r->rd / 2 ||
	    ho_shape_numel(&sn->shape) != ho_shape_numel(&c->shape) ||
	    (!pos && r->rows != r->b * r->s) || (pos && ho_shape_numel(&pos->shape) != r->b * r->s))
		return ho_cpu_unsupported(err, n,
					  "needs caches of [positions, rotary dim / 2] "
					  "(or [B, seq, ...] without position_ids)");
	r->x = buf[n->inputs[0]];
	r->cos = buf[n->inputs[1]];
	r->sin = buf[n->inputs[2]];
	r->pos = pos ? buf[n->inputs[3]] : NULL;
	r->y = buf[n->outputs[0]];
	k->kind = HO_K_LOOP;
	k->typed.run = ho_run_rotary;
	return 0;
}
