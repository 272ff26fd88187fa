// SPDX-License-Identifier: MIT
/*
 * RNN, GRU and LSTM (float32), as ONNX defines them: each step's X_t W^T
 * and H R^T on dnnl_sgemm over the whole batch, the gates as a loop.  Any
 * direction and layout, per-batch sequence lengths (a batch row's steps
 * beyond its length leave its state alone and write zeros to Y), initial
 * states, LSTM's peepholes and coupled input-forget gate, GRU's
 * linear_before_reset, clip, and the activations ONNX lists.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cpu.h"

typedef float (*ho_act_fn)(float x, float alpha, float beta);

static float act_sigmoid(float x, float a, float b)
{
	(void)a, (void)b;
	return 1.0f / (1.0f + expf(-x));
}
static float act_tanh(float x, float a, float b)
{
	(void)a, (void)b;
	return tanhf(x);
}
static float act_relu(float x, float a, float b)
{
	(void)a, (void)b;
	return x > 0 ? x : 0;
}
static float act_leaky_relu(float x, float a, float b)
{
	(void)b;
	return x > 0 ? x : a * x;
}
static float act_thresholded_relu(float x, float a, float b)
{
	(void)b;
	return x > a ? x : 0;
}
static float act_hard_sigmoid(float x, float a, float b)
{
	return fmaxf(0.0f, fminf(1.0f, a * x + b));
}
static float act_affine(float x, float a, float b)
{
	return a * x + b;
}
static float act_scaled_tanh(float x, float a, float b)
{
	return a * tanhf(b * x);
}
static float act_elu(float x, float a, float b)
{
	(void)b;
	return x >= 0 ? x : a * expm1f(x);
}
static float act_softsign(float x, float a, float b)
{
	(void)a, (void)b;
	return x / (1.0f + fabsf(x));
}
static float act_softplus(float x, float a, float b)
{
	(void)a, (void)b;
	return log1pf(expf(x));
}

/* The activations by ONNX's names, how many of alpha and beta each takes, and their defaults. */
static const struct ho_act_reg {
	const char *name;
	ho_act_fn f;
	int n_params;
	float alpha, beta;
} ho_acts[] = {
    {"Sigmoid", act_sigmoid, 0, 0, 0},
    {"Tanh", act_tanh, 0, 0, 0},
    {"Relu", act_relu, 0, 0, 0},
    {"LeakyRelu", act_leaky_relu, 1, 0.01f, 0},
    {"ThresholdedRelu", act_thresholded_relu, 1, 1.0f, 0},
    {"HardSigmoid", act_hard_sigmoid, 2, 0.2f, 0.5f},
    {"Affine", act_affine, 2, 1.0f, 0},
    {"ScaledTanh", act_scaled_tanh, 2, 1.0f, 1.0f},
    {"Elu", act_elu, 1, 1.0f, 0},
    {"Softsign", act_softsign, 0, 0, 0},
    {"Softplus", act_softplus, 0, 0, 0},
};

enum { HO_RNN_MAX_ACTS = 3 };

struct ho_act {
	ho_act_fn f;
	float alpha, beta;
};

struct ho_rnn {
	int gates, dirs, n_acts;
	int64_t seq, batch, input, hidden;
	bool layout, reverse, lbr, input_forget;
	float clip; /* 0: none */
	struct ho_act act[2][HO_RNN_MAX_ACTS];
	const float *x, *w, *r, *b, *h0, *c0, *p;
	const void *lens;
	int lens_dt;
	float *y, *yh, *yc;
	/* scratch: X_t rows, X_t W^T, H R^T, (r . H) Rh^T, and the states */
	float *xt, *xw, *hr, *rh, *h, *c, *hnext;
};

static inline float rnn_clip(const struct ho_rnn *s, float v)
{
	return s->clip > 0 ? fmaxf(-s->clip, fminf(s->clip, v)) : v;
}

static inline float rnn_act(const struct ho_act *a, float v)
{
	return a->f(v, a->alpha, a->beta);
}

/* row-major C[m x n] = A[m x k] B^T (B is n x k) + beta C */
static int rnn_gemm(int64_t m, int64_t n, int64_t k, const float *a, int64_t lda, const float *b,
		    int64_t ldb, float beta, float *c)
{
	return dnnl_sgemm('N', 'T', m, n, k, 1.0f, a, lda, b, ldb, beta, c, n) == dnnl_success
		   ? 0
		   : -EIO;
}

/* One direction over the whole sequence. */
static int rnn_direction(const struct ho_rnn *s, int d)
{
	int64_t H = s->hidden, GH = (int64_t)s->gates * H, B = s->batch, I = s->input;
	const float *w = s->w + d * GH * I, *r = s->r + d * GH * H;
	const float *wb = s->b ? s->b + d * 2 * GH : NULL, *rb = wb ? wb + GH : NULL;
	const float *p = s->p ? s->p + d * 3 * H : NULL;
	const struct ho_act *f = &s->act[d][0], *g = &s->act[d][1], *hf = &s->act[d][2];
	bool rev = s->dirs == 2 ? d == 1 : s->reverse;

	for (int64_t b = 0; b < B; b++)
		for (int64_t j = 0; j < H; j++) {
			int64_t at = s->layout ? (b * s->dirs + d) * H + j : (d * B + b) * H + j;

			s->h[b * H + j] = s->h0 ? s->h0[at] : 0;
			if (s->c)
				s->c[b * H + j] = s->c0 ? s->c0[at] : 0;
		}
	for (int64_t step = 0; step < s->seq; step++) {
		/* each batch row's time at this step (reversed within its own length) */
		for (int64_t b = 0; b < B; b++) {
			int64_t len = s->lens ? ho_cpu_index(s->lens, s->lens_dt, b) : s->seq,
				t = rev ? len - 1 - step : step;

			if (step < len && t >= 0 && t < s->seq)
				memcpy(s->xt + b * I,
				       s->x + (s->layout ? b * s->seq + t : t * B + b) * I,
				       (size_t)I * sizeof(float));
			else
				memset(s->xt + b * I, 0, (size_t)I * sizeof(float));
		}
		if (rnn_gemm(B, GH, I, s->xt, I, w, I, 0.0f, s->xw) ||
		    rnn_gemm(B, GH, H, s->h, H, r, H, 0.0f, s->hr))
			return -EIO;
		if (s->gates == 3 && !s->lbr) {
			/* GRU: the hidden gate sees (r . H) Rh^T, so r comes first */
			for (int64_t b = 0; b < B; b++)
				for (int64_t j = 0; j < H; j++) {
					int64_t q = b * GH + H + j;
					float rr = rnn_act(
					    f, rnn_clip(s, s->xw[q] + s->hr[q] +
							       (wb ? wb[H + j] + rb[H + j] : 0)));

					s->hnext[b * H + j] = rr * s->h[b * H + j];
				}
			if (rnn_gemm(B, H, H, s->hnext, H, r + 2 * H * H, H, 0.0f, s->rh))
				return -EIO;
		}
		for (int64_t b = 0; b < B; b++) {
			int64_t len = s->lens ? ho_cpu_index(s->lens, s->lens_dt, b) : s->seq,
				t = rev ? len - 1 - step : step;
			const float *xw = s->xw + b * GH, *hr = s->hr + b * GH;
			float *h = s->h + b * H, *c = s->c ? s->c + b * H : NULL;

			if (step >= len || t < 0 || t >= s->seq)
				continue; /* past this row's end: its state stays */
			for (int64_t j = 0; j < H; j++) {
#define GATE(k) (xw[(k)*H + j] + hr[(k)*H + j] + (wb ? wb[(k)*H + j] + rb[(k)*H + j] : 0))
				if (s->gates == 1) {
					s->hnext[b * H + j] = rnn_act(f, rnn_clip(s, GATE(0)));
				} else if (s->gates == 3) {
					float z = rnn_act(f, rnn_clip(s, GATE(0))), hh;

					if (s->lbr) {
						float rr = rnn_act(f, rnn_clip(s, GATE(1)));

						hh =
						    xw[2 * H + j] + (wb ? wb[2 * H + j] : 0) +
						    rr * (hr[2 * H + j] + (rb ? rb[2 * H + j] : 0));
					} else {
						hh = xw[2 * H + j] + s->rh[b * H + j] +
						     (wb ? wb[2 * H + j] + rb[2 * H + j] : 0);
					}
					hh = rnn_act(g, rnn_clip(s, hh));
					s->hnext[b * H + j] = (1 - z) * hh + z * h[j];
				} else { /* LSTM: gates i, o, f, c; peepholes i, o, f */
					float gi = GATE(0), go = GATE(1), gf = GATE(2),
					      gc = GATE(3);
					float it, ft, ct, ot;

					if (p) {
						gi += p[j] * c[j];
						gf += p[2 * H + j] * c[j];
					}
					it = rnn_act(f, rnn_clip(s, gi));
					ft = s->input_forget ? 1 - it : rnn_act(f, rnn_clip(s, gf));
					ct = rnn_act(g, rnn_clip(s, gc));
					c[j] = ft * c[j] + it * ct;
					if (p)
						go += p[H + j] * c[j];
					ot = rnn_act(f, rnn_clip(s, go));
					s->hnext[b * H + j] = ot * rnn_act(hf, c[j]);
				}
#undef GATE
			}
			memcpy(h, s->hnext + b * H, (size_t)H * sizeof(float));
			if (s->y)
				memcpy(s->y + (s->layout ? ((b * s->seq + t) * s->dirs + d) * H
							 : ((t * s->dirs + d) * B + b) * H),
				       h, (size_t)H * sizeof(float));
		}
	}
	for (int64_t b = 0; b < B; b++) {
		int64_t at = s->layout ? (b * s->dirs + d) * H : (d * B + b) * H;

		if (s->yh)
			memcpy(s->yh + at, s->h + b * H, (size_t)H * sizeof(float));
		if (s->yc)
			memcpy(s->yc + at, s->c + b * H, (size_t)H * sizeof(float));
	}
	return 0;
}

static int ho_run_recurrent(const struct ho_kernel *k)
{
	const struct ho_rnn *s = k->rnn;

	if (s->y) /* steps past a row's length stay zero */
		memset(s->y, 0, (size_t)(s->seq * s->dirs * s->batch * s->hidden) * sizeof(float));
	for (int64_t b = 0; s->lens && b < s->batch; b++) {
		int64_t len = ho_cpu_index(s->lens, s->lens_dt, b);

		if (len < 0 || len > s->seq)
			return -EINVAL; /* a length from the data: checked at run time */
	}
	for (int d = 0; d < s->dirs; d++)
		if (rnn_direction(s, d))
			return -EIO;
	return 0;
}

/* The activations of each direction: the node's list, or the operator's defaults. */
static int rnn_activations(const struct ho_node *n, struct ho_rnn *s, struct ho_error *err)
{
	static const char *const defaults[3][3] = {
	    {"Tanh"}, {"Sigmoid", "Tanh"}, {"Sigmoid", "Tanh", "Tanh"}};
	const struct ho_attr *names = ho_node_attr(n, "activations"),
			     *al = ho_node_attr(n, "activation_alpha"),
			     *be = ho_node_attr(n, "activation_beta");
	size_t ai = 0, bi = 0;

	if (names && (names->type != HO_ATTR_STRINGS ||
		      (names->n != (size_t)s->n_acts && names->n != (size_t)(s->n_acts * s->dirs))))
		return ho_cpu_unsupported(err, n, "needs one activation list per direction");
	for (int d = 0; d < s->dirs; d++)
		for (int i = 0; i < s->n_acts; i++) {
			const char *name =
			    names
				? names->strings[names->n == (size_t)s->n_acts ? i
									       : d * s->n_acts + i]
				: defaults[s->n_acts - 1][i];
			const struct ho_act_reg *reg = NULL;

			for (size_t a = 0; a < sizeof(ho_acts) / sizeof(ho_acts[0]); a++)
				if (!strcasecmp(ho_acts[a].name, name))
					reg = &ho_acts[a];
			if (!reg)
				return ho_cpu_unsupported(err, n, "has an unknown activation");
			s->act[d][i].f = reg->f;
			s->act[d][i].alpha = reg->alpha;
			s->act[d][i].beta = reg->beta;
			/* alphas and betas go, in order, to the activations that take them */
			if (reg->n_params >= 1 && al && al->type == HO_ATTR_FLOATS && ai < al->n)
				s->act[d][i].alpha = al->floats[ai++];
			if (reg->n_params >= 2 && be && be->type == HO_ATTR_FLOATS && bi < be->n)
				s->act[d][i].beta = be->floats[bi++];
		}
	return 0;
}

int ho_cpu_prep_recurrent(const struct ho_graph *g, const struct ho_node *n, void *const *buf,
			  struct ho_kernel *k, struct ho_error *err)
{
	const struct ho_tensor *x = ho_node_input(g, n, 0), *w = ho_node_input(g, n, 1),
			       *r = ho_node_input(g, n, 2), *b = ho_node_input(g, n, 3),
			       *lens = ho_node_input(g, n, 4), *h0 = ho_node_input(g, n, 5),
			       *c0 = ho_node_input(g, n, 6), *p = ho_node_input(g, n, 7);
	const struct ho_attr *dir = ho_node_attr(n, "direction");
	int gates = !strcmp(n->op_type, "LSTM") ? 4 : !strcmp(n->op_type, "GRU") ? 3 : 1;
	bool lstm = gates == 4;
	struct ho_rnn s = {.gates = gates, .n_acts = gates == 4 ? 3 : gates == 3 ? 2 : 1};
	int64_t GH, scratch;
	int ret;

	if (!x || !w || !r || x->dtype != HO_DT_FLOAT || w->dtype != HO_DT_FLOAT ||
	    r->dtype != HO_DT_FLOAT || x->shape.rank != 3 || w->shape.rank != 3 ||
	    r->shape.rank != 3)
		return ho_cpu_unsupported(err, n, "runs float32 X, W and R of rank 3 only");
	s.layout = ho_node_attr_i(n, "layout", 0);
	s.dirs = dir && dir->type == HO_ATTR_STRING && !strcmp(dir->s, "bidirectional") ? 2 : 1;
	s.reverse = dir && dir->type == HO_ATTR_STRING && !strcmp(dir->s, "reverse");
	s.seq = x->shape.dim[s.layout ? 1 : 0];
	s.batch = x->shape.dim[s.layout ? 0 : 1];
	s.input = x->shape.dim[2];
	s.hidden = r->shape.dim[2];
	s.lbr = ho_node_attr_i(n, "linear_before_reset", 0);
	s.input_forget = ho_node_attr_i(n, "input_forget", 0);
	s.clip = ho_node_attr(n, "clip") ? ho_node_attr_f(n, "clip", 0) : 0;
	GH = gates * s.hidden;
	if (w->shape.dim[0] != s.dirs || w->shape.dim[1] != GH || w->shape.dim[2] != s.input ||
	    r->shape.dim[0] != s.dirs || r->shape.dim[1] != GH)
		return ho_cpu_unsupported(err, n, "needs W and R of its directions and gates");
	if ((b && (b->dtype != HO_DT_FLOAT || ho_shape_numel(&b->shape) != s.dirs * 2 * GH)) ||
	    (lens && ((lens->dtype != HO_DT_INT32 && lens->dtype != HO_DT_INT64) ||
		      ho_shape_numel(&lens->shape) != s.batch)) ||
	    (h0 && (h0->dtype != HO_DT_FLOAT ||
		    ho_shape_numel(&h0->shape) != s.dirs * s.batch * s.hidden)) ||
	    (lstm && c0 &&
	     (c0->dtype != HO_DT_FLOAT ||
	      ho_shape_numel(&c0->shape) != s.dirs * s.batch * s.hidden)) ||
	    (lstm && p &&
	     (p->dtype != HO_DT_FLOAT || ho_shape_numel(&p->shape) != s.dirs * 3 * s.hidden)))
		return ho_cpu_unsupported(err, n, "has an input of the wrong type or size");
	if ((ret = rnn_activations(n, &s, err)))
		return ret;
	s.x = buf[n->inputs[0]];
	s.w = buf[n->inputs[1]];
	s.r = buf[n->inputs[2]];
	s.b = b ? buf[n->inputs[3]] : NULL;
	s.lens = lens ? buf[n->inputs[4]] : NULL;
	s.lens_dt = lens ? lens->dtype : 0;
	s.h0 = h0 ? buf[n->inputs[5]] : NULL;
	s.c0 = lstm && c0 ? buf[n->inputs[6]] : NULL;
	s.p = lstm && p ? buf[n->inputs[7]] : NULL;
	for (uint32_t o = 0; o < n->n_outputs && o < 3; o++) {
		const struct ho_tensor *t = n->outputs[o] >= 0 ? &g->tensors[n->outputs[o]] : NULL;
		float *out =
		    t && (t->n_consumers || (t->flags & HO_T_OUTPUT)) ? buf[n->outputs[o]] : NULL;

		*(o == 0 ? &s.y : o == 1 ? &s.yh : &s.yc) = out;
	}
	if (!lstm)
		s.yc = NULL;
	/* one block after the plan: X_t, X_t W^T, H R^T, (r . H) Rh^T, H, C, the next H */
	scratch = s.batch * (s.input + 2 * GH + 4 * s.hidden);
	k->rnn = malloc(sizeof(s) + (size_t)(scratch > 0 ? scratch : 1) * sizeof(float));
	if (!k->rnn)
		return ho_err(err, -ENOMEM, "out of memory");
	s.xt = (float *)(k->rnn + 1);
	s.xw = s.xt + s.batch * s.input;
	s.hr = s.xw + s.batch * GH;
	s.rh = s.hr + s.batch * GH;
	s.h = s.rh + s.batch * s.hidden;
	s.c = lstm ? s.h + s.batch * s.hidden : NULL;
	s.hnext = s.h + 2 * s.batch * s.hidden;
	*k->rnn = s;
	k->kind = HO_K_LOOP;
	k->typed.run = ho_run_recurrent;
	return 0;
}
