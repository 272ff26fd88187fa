// SPDX-License-Identifier: MIT
/*
 * Signal processing: the Hann, Hamming and Blackman windows, each
 * a0 - a1 cos(2 pi n / N) + a2 cos(4 pi n / N) over n < size, N = size
 * (periodic) or size - 1 (symmetric), as ONNX defines them; DFT and STFT as
 * the direct sum in double (O(n^2) a line: the sizes models use here are
 * small; an FFT is for when one is not); MelWeightMatrix.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cpu.h"

static const struct {
	const char *op;
	double a0, a1, a2;
} ho_windows[] = {
    {"HannWindow", 0.5, 0.5, 0},
    {"HammingWindow", 25.0 / 46.0, 21.0 / 46.0, 0},
    {"BlackmanWindow", 0.42, 0.5, 0.08},
};

static int ho_run_window(const struct ho_kernel *k)
{
	const struct ho_typed *t = &k->typed;
	int64_t size = t->out_shape.dim[0];
	double N = (double)(t->iparam[0] ? size : size - 1), a0 = ho_windows[t->op].a0,
	       a1 = ho_windows[t->op].a1, a2 = ho_windows[t->op].a2;

	for (int64_t i = 0; i < size; i++) {
		double x = 2 * M_PI * (double)i / N,
		       v = N > 0 ? a0 - a1 * cos(x) + a2 * cos(2 * x) : 1; /* size 1: one 1 */

		if (t->out_dt == HO_DT_DOUBLE)
			((double *)t->out)[i] = v;
		else
			((float *)t->out)[i] = (float)v;
	}
	return 0;
}

int ho_cpu_prep_window(const struct ho_graph *g, const struct ho_node *n, void *const *buf,
		       struct ho_kernel *k, struct ho_error *err)
{
	const struct ho_tensor *y = &g->tensors[n->outputs[0]];
	size_t i;

	for (i = 0; i < sizeof(ho_windows) / sizeof(ho_windows[0]); i++)
		if (!strcmp(ho_windows[i].op, n->op_type))
			break;
	if (i == sizeof(ho_windows) / sizeof(ho_windows[0]) || y->shape.rank != 1 ||
	    (y->dtype != HO_DT_FLOAT && y->dtype != HO_DT_DOUBLE))
		return ho_cpu_unsupported(err, n, "makes float32 and float64 windows only");
	k->kind = HO_K_LOOP;
	k->typed.out = buf[n->outputs[0]];
	k->typed.out_dt = y->dtype;
	k->typed.out_shape = y->shape;
	k->typed.iparam[0] = ho_node_attr_i(n, "periodic", 1);
	k->typed.op = (int)i;
	k->typed.run = ho_run_window;
	return 0;
}

/* One line's transform: in[n] (stride is, complex when cplx) n < n_in, zero past it, of
 * length len; out[k] k < n_out, complex, stride os. */
static void dft_line(const float *in, int64_t is, int64_t n_in, bool cplx, const float *win,
		     int64_t len, bool inverse, float *out, int64_t os, int64_t n_out)
{
	double sign = inverse ? 1 : -1;

	for (int64_t k = 0; k < n_out; k++) {
		double re = 0, im = 0;

		for (int64_t n = 0; n < len && n < n_in; n++) {
			double ang = sign * 2 * M_PI * (double)((k * n) % len) / (double)len,
			       w = win ? win[n] : 1, xr = in[n * is] * w,
			       xi = cplx ? in[n * is + 1] * w : 0;

			re += xr * cos(ang) - xi * sin(ang);
			im += xr * sin(ang) + xi * cos(ang);
		}
		if (inverse) {
			re /= (double)len;
			im /= (double)len;
		}
		out[k * os] = (float)re;
		out[k * os + 1] = (float)im;
	}
}

/* DFT: each line along the axis of [outer, n, inner, c]; STFT: each frame of each batch. */
static int ho_run_dft(const struct ho_kernel *k)
{
	const struct ho_typed *t = &k->typed;
	const float *x = t->in[0], *win = t->in[2];
	float *y = t->out;
	int64_t c = t->iparam[1], len = t->iparam[0], n_out = t->axis_dim;

	if (!t->op) { /* DFT */
		int64_t n_in = t->in_shape[0].dim[t->axis];

		for (int64_t o = 0; o < t->outer; o++)
			for (int64_t i = 0; i < t->inner; i++)
				dft_line(x + (o * n_in * t->inner + i) * c, t->inner * c, n_in,
					 c == 2, NULL, len, t->reduction,
					 y + (o * n_out * t->inner + i) * 2, t->inner * 2, n_out);
		return 0;
	}
	int64_t frames = t->out_shape.dim[1], step = t->outer, sig = t->in_shape[0].dim[1];

	for (int64_t b = 0; b < t->in_shape[0].dim[0]; b++)
		for (int64_t f = 0; f < frames; f++)
			dft_line(x + (b * sig + f * step) * c, c, len, c == 2, win, len, false,
				 y + ((b * frames + f) * n_out) * 2, 2, n_out);
	return 0;
}

int ho_cpu_prep_dft(const struct ho_graph *g, const struct ho_node *n, void *const *buf,
		    struct ho_kernel *k, struct ho_error *err)
{
	struct ho_typed *t = &k->typed;
	const struct ho_tensor *x = ho_node_input(g, n, 0), *y = &g->tensors[n->outputs[0]];
	bool stft = !strcmp(n->op_type, "STFT");
	int r = x ? x->shape.rank : 0;

	if (!x || x->dtype != HO_DT_FLOAT || y->dtype != HO_DT_FLOAT || r < 3 ||
	    y->shape.rank != (stft ? 4 : r))
		return ho_cpu_unsupported(err, n, "transforms float32 signals only");
	k->kind = HO_K_LOOP;
	t->in[0] = buf[n->inputs[0]];
	t->in_shape[0] = x->shape;
	t->out = buf[n->outputs[0]];
	t->out_shape = y->shape;
	t->iparam[1] = x->shape.dim[r - 1];
	t->op = stft;
	if (stft) {
		const struct ho_tensor *win = ho_node_input(g, n, 2);
		int64_t step;

		if (ho_cpu_int_input(g, n, 1, buf, &step, 1) != 1 ||
		    (win && (win->dtype != HO_DT_FLOAT || win->shape.rank != 1)))
			return ho_cpu_unsupported(err, n,
						  "needs a constant step, a float32 window");
		t->outer = step;
		t->iparam[0] = win ? win->shape.dim[0] : 0; /* the frame: the window's, or given */
		if (ho_node_input(g, n, 3) && ho_cpu_int_input(g, n, 3, buf, &t->iparam[0], 1) != 1)
			return ho_cpu_unsupported(err, n, "needs a constant frame length");
		if (t->iparam[0] < 1 || (win && win->shape.dim[0] != t->iparam[0]))
			return ho_cpu_unsupported(err, n, "needs a window of the frame's length");
		t->in[2] = win ? buf[n->inputs[2]] : NULL;
		t->axis_dim = y->shape.dim[2];
		t->run = ho_run_dft;
		return 0;
	}
	int64_t axis = ho_node_attr_i(n, "axis", 1);

	axis += axis < 0 ? r : 0;
	if (axis < 1 || axis > r - 2 ||
	    (ho_node_attr_i(n, "inverse", 0) && ho_node_attr_i(n, "onesided", 0)))
		return ho_cpu_unsupported(err, n, "needs a signal axis (not onesided inverse)");
	t->axis = axis;
	t->iparam[0] = x->shape.dim[axis];
	if (ho_node_input(g, n, 1) && ho_cpu_int_input(g, n, 1, buf, &t->iparam[0], 1) != 1)
		return ho_cpu_unsupported(err, n, "needs a constant dft_length");
	t->reduction = (int)ho_node_attr_i(n, "inverse", 0);
	t->axis_dim = y->shape.dim[axis];
	t->outer = t->inner = 1;
	for (int a = 0; a < r - 1; a++)
		if (a < axis)
			t->outer *= x->shape.dim[a];
		else if (a > axis)
			t->inner *= x->shape.dim[a];
	t->run = ho_run_dft;
	return 0;
}

/*
 * MelWeightMatrix: triangular filters between mel-spaced bin edges, as
 * ONNX's reference computes them (the edges' mel values in float32, the rest
 * in double, the bins floored).
 */
static int ho_run_mel(const struct ho_kernel *k)
{
	const struct ho_typed *t = &k->typed;
	int64_t bins = (int64_t)ho_cpu_real(t->in[0], t->in_dt[0], 0),
		len = (int64_t)ho_cpu_real(t->in[1], t->in_dt[1], 0),
		rate = (int64_t)ho_cpu_real(t->in[2], t->in_dt[2], 0), rows = len / 2 + 1,
		edge[4096 + 2];
	float lo = (float)ho_cpu_real(t->in[3], t->in_dt[3], 0),
	      hi = (float)ho_cpu_real(t->in[4], t->in_dt[4], 0),
	      lo_mel = 2595.0f * log10f(1.0f + lo / 700.0f),
	      hi_mel = 2595.0f * log10f(1.0f + hi / 700.0f),
	      step = (hi_mel - lo_mel) / (float)(bins + 2);

	if (bins != t->out_shape.dim[1] || rows != t->out_shape.dim[0])
		return -ERANGE;
	if (rate < 1 || bins > 4096)
		return -EINVAL;
	for (int64_t i = 0; i < bins + 2; i++) {
		double f = 700.0 * (pow(10.0, ((double)i * step + lo_mel) / 2595.0) - 1);

		edge[i] = (int64_t)floor((double)(len + 1) * f / (double)rate);
	}
	double *w = (double *)k->fold;

	memset(w, 0, (size_t)(rows * bins) * sizeof(double));
	for (int64_t i = 0; i < bins; i++) {
		int64_t l = edge[i], c = edge[i + 1], h = edge[i + 2];

		if (l < 0 || h >= rows + 1 || c >= rows)
			return -EINVAL; /* edges past the spectrum: the inputs' values */
		if (c == l)
			w[c * bins + i] = 1;
		else
			for (int64_t j = l; j <= c; j++)
				w[j * bins + i] = (double)(j - l) / (double)(c - l);
		for (int64_t j = c; h > c && j < h; j++)
			w[j * bins + i] = (double)(h - j) / (double)(h - c);
	}
	for (int64_t i = 0; i < rows * bins; i++)
		if (t->out_dt == HO_DT_DOUBLE)
			((double *)t->out)[i] = w[i];
		else
			((float *)t->out)[i] = (float)w[i];
	return 0;
}

int ho_cpu_prep_mel(const struct ho_graph *g, const struct ho_node *n, void *const *buf,
		    struct ho_kernel *k, struct ho_error *err)
{
	struct ho_typed *t = &k->typed;
	const struct ho_tensor *y = &g->tensors[n->outputs[0]];

	for (uint32_t i = 0; i < 5; i++) {
		const struct ho_tensor *in = ho_node_input(g, n, i);

		if (!in || ho_shape_numel(&in->shape) != 1 ||
		    (in->dtype != HO_DT_FLOAT && in->dtype != HO_DT_DOUBLE &&
		     in->dtype != HO_DT_INT32 && in->dtype != HO_DT_INT64))
			return ho_cpu_unsupported(err, n, "needs five numeric scalars");
		t->in[i] = buf[n->inputs[i]];
		t->in_dt[i] = in->dtype;
	}
	if (y->shape.rank != 2 || (y->dtype != HO_DT_FLOAT && y->dtype != HO_DT_DOUBLE))
		return ho_cpu_unsupported(err, n, "writes float32 or float64 only");
	k->kind = HO_K_LOOP;
	t->out = buf[n->outputs[0]];
	t->out_dt = y->dtype;
	t->out_shape = y->shape;
	if (!(k->fold = malloc((size_t)(ho_shape_numel(&y->shape) + 1) * sizeof(double))))
		return ho_err(err, -ENOMEM, "out of memory");
	t->run = ho_run_mel;
	return 0;
}
