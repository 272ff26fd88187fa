// SPDX-License-Identifier: MIT
/* GridSample: each output pixel sampled from the input where the grid says. */
#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "cpu.h"

/*
 * GridSample (4-D, float32): each output pixel from X at the grid's
 * normalised (x, y), denormalised with or without aligned corners, then
 * nearest, bilinear or bicubic (A = -0.75) over zeros, border or reflection
 * padding; computed in float32 in ONNX Runtime's order, so that the two agree.
 */
enum { GS_ZEROS, GS_BORDER, GS_REFLECT };

static float gs_reflect(float x, float lo, float hi)
{
	float range = hi - lo, d, r;
	int n;

	if (x < lo) {
		d = lo - x;
		n = (int)(d / range);
		r = d - (float)n * range;
		return n % 2 == 0 ? lo + r : hi - r;
	}
	if (x > hi) {
		d = x - hi;
		n = (int)(d / range);
		r = d - (float)n * range;
		return n % 2 == 0 ? hi - r : lo + r;
	}
	return x;
}

static float gs_pixel(const float *img, int64_t r, int64_t c, int64_t H, int64_t W, int pad,
		      const float *border)
{
	if (pad == GS_ZEROS)
		return r >= 0 && r < H && c >= 0 && c < W ? img[r * W + c] : 0.0f;
	if (pad == GS_BORDER) {
		c = c < 0 ? 0 : c >= W ? W - 1 : c;
		r = r < 0 ? 0 : r >= H ? H - 1 : r;
	} else {
		c = (int64_t)gs_reflect((float)c, border[0], border[2]);
		r = (int64_t)gs_reflect((float)r, border[1], border[3]);
		c = c < 0 ? 0 : c >= W ? W - 1 : c; /* a reflection inside: never past the edge */
		r = r < 0 ? 0 : r >= H ? H - 1 : r;
	}
	return img[r * W + c];
}

static void gs_cubic(float t, float *w)
{
	const float A = -0.75f;

	t = fabsf(t);
	w[0] = ((A * (t + 1) - 5 * A) * (t + 1) + 8 * A) * (t + 1) - 4 * A;
	w[1] = ((A + 2) * t - (A + 3)) * t * t + 1;
	w[2] = ((A + 2) * (1 - t) - (A + 3)) * (1 - t) * (1 - t) + 1;
	w[3] = ((A * (2 - t) - 5 * A) * (2 - t) + 8 * A) * (2 - t) - 4 * A;
}

/* GridSample's image n (t->op: padding, iparam: align_corners and the mode) */
static void gs_image(const struct ho_typed *t, int64_t n)
{
	const float *X = t->in[0], *grid = t->in[1];
	float *Y = t->out;
	int64_t C = t->in_shape[0].dim[1], H = t->in_shape[0].dim[2], W = t->in_shape[0].dim[3],
		Ho = t->out_shape.dim[2], Wo = t->out_shape.dim[3];
	bool ac = t->iparam[0];
	int mode = (int)t->iparam[1], pad = t->op;
	float border[4] = {ac ? 0.0f : -0.5f, ac ? 0.0f : -0.5f,
			   ac ? (float)W - 1 : (float)W - 0.5f,
			   ac ? (float)H - 1 : (float)H - 0.5f};

	for (int64_t oy = 0; oy < Ho; oy++)
		for (int64_t ox = 0; ox < Wo; ox++) {
			const float *gp = grid + ((n * Ho + oy) * Wo + ox) * 2;
			float x = ac ? (gp[0] + 1) / 2.0f * (float)(W - 1)
				     : ((gp[0] + 1) * (float)W - 1) / 2.0f,
			      y = ac ? (gp[1] + 1) / 2.0f * (float)(H - 1)
				     : ((gp[1] + 1) * (float)H - 1) / 2.0f;

			if (mode == 0) { /* nearest: rounded half to even */
				x = nearbyintf(x);
				y = nearbyintf(y);
			}
			if (x < border[0] || x > border[2] || y < border[1] || y > border[3]) {
				if (pad == GS_BORDER) {
					x = fminf(fmaxf(x, 0), (float)W - 1);
					y = fminf(fmaxf(y, 0), (float)H - 1);
				} else if (pad == GS_REFLECT) {
					x = gs_reflect(x, border[0], border[2]);
					y = gs_reflect(y, border[1], border[3]);
				}
			}
			for (int64_t ch = 0; ch < C; ch++) {
				const float *img = X + (n * C + ch) * H * W;
				float v;

				if (mode == 0) {
					v = gs_pixel(img, (int64_t)y, (int64_t)x, H, W, pad,
						     border);
				} else if (mode == 1) {
					int64_t x1 = (int64_t)floorf(x), y1 = (int64_t)floorf(y);
					float dx1 = x - (float)x1, dx2 = (float)(x1 + 1) - x,
					      dy1 = y - (float)y1, dy2 = (float)(y1 + 1) - y;

					v = dy2 * (dx2 * gs_pixel(img, y1, x1, H, W, pad, border) +
						   dx1 * gs_pixel(img, y1, x1 + 1, H, W, pad,
								  border)) +
					    dy1 * (dx2 * gs_pixel(img, y1 + 1, x1, H, W, pad,
								  border) +
						   dx1 * gs_pixel(img, y1 + 1, x1 + 1, H, W, pad,
								  border));
				} else {
					int64_t x0 = (int64_t)floorf(x) - 1,
						y0 = (int64_t)floorf(y) - 1;
					float wx[4], wy[4];

					gs_cubic(x - (float)x0 - 1, wx);
					gs_cubic(y - (float)y0 - 1, wy);
					v = 0;
					for (int i = 0; i < 4; i++) {
						float row = 0;

						for (int j = 0; j < 4; j++)
							row += wx[j] * gs_pixel(img, y0 + i, x0 + j,
										H, W, pad, border);
						v += wy[i] * row;
					}
				}
				Y[((n * C + ch) * Ho + oy) * Wo + ox] = v;
			}
		}
}

static void gs_images(const void *arg, int64_t lo, int64_t hi)
{
	for (int64_t n = lo; n < hi; n++)
		gs_image(arg, n);
}

/* Images over the threads: a sample costs about what 64 bytes copied do (raft_small
 * samples 4 x 256 windows of 7 x 7 an iteration, 9 of its 57 ms on one thread). */
static int ho_run_grid_sample(const struct ho_kernel *k)
{
	const struct ho_typed *t = &k->typed;
	int64_t N = t->in_shape[0].dim[0],
		bytes = t->in_shape[0].dim[1] * t->out_shape.dim[2] * t->out_shape.dim[3] * 64;

	ho_cpu_for_parts(ho_cpu_row_parts(N, bytes, 1 << 17), N, gs_images, t);
	return 0;
}

int ho_cpu_prep_grid_sample(const struct ho_graph *g, const struct ho_node *n, void *const *buf,
			    struct ho_kernel *k, struct ho_error *err)
{
	static const char *const modes[] = {"nearest", "bilinear", "bicubic"},
				 *const alt[] = {"nearest", "linear",
						 "cubic"}, /* opset 20's names */
				     *const pads[] = {"zeros", "border", "reflection"};
	const struct ho_tensor *x = ho_node_input(g, n, 0), *grid = ho_node_input(g, n, 1),
			       *y = &g->tensors[n->outputs[0]];
	const struct ho_attr *ma = ho_node_attr(n, "mode"), *pa = ho_node_attr(n, "padding_mode");
	const char *mode = ma && ma->type == HO_ATTR_STRING ? ma->s : "bilinear",
		   *pad = pa && pa->type == HO_ATTR_STRING ? pa->s : "zeros";
	int m = -1, p = -1;

	for (int i = 0; i < 3; i++) {
		m = !strcmp(mode, modes[i]) || !strcmp(mode, alt[i]) ? i : m;
		p = !strcmp(pad, pads[i]) ? i : p;
	}
	if (!x || !grid || x->dtype != HO_DT_FLOAT || grid->dtype != HO_DT_FLOAT ||
	    x->shape.rank != 4 || y->shape.rank != 4 || m < 0 || p < 0)
		return ho_cpu_unsupported(err, n, "samples float32 [N, C, H, W] in its modes only");
	k->kind = HO_K_LOOP;
	k->typed.in[0] = buf[n->inputs[0]];
	k->typed.in[1] = buf[n->inputs[1]];
	k->typed.in_shape[0] = x->shape;
	k->typed.out = buf[n->outputs[0]];
	k->typed.out_shape = y->shape;
	k->typed.iparam[0] = ho_node_attr_i(n, "align_corners", 0);
	k->typed.iparam[1] = m;
	k->typed.op = p;
	k->typed.run = ho_run_grid_sample;
	return 0;
}
