// SPDX-License-Identifier: MIT
/*
 * Detection: NonMaxSuppression, the selection shared with shape inference
 * (user/graph/opsem/nms.c), which plans its output's extent from the inputs'
 * values (the data must select as many boxes at run time); RoiAlign, in
 * float32 in ONNX Runtime's order of operations.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cpu.h"
#include "heteroopt/opsem.h"

static int ho_run_nms(const struct ho_kernel *k)
{
	const struct ho_typed *t = &k->typed;
	struct ho_nms_args a = {
	    .boxes = t->in[0],
	    .scores = t->in[1],
	    .batches = t->in_shape[0].dim[0],
	    .classes = t->in_shape[1].dim[1],
	    .boxes_per_batch = t->in_shape[0].dim[1],
	    .max_per_class = t->in[2] ? ho_cpu_index(t->in[2], t->in_dt[2], 0) : 0,
	    .iou_threshold = t->in[3] ? *(const float *)t->in[3] : 0,
	    .score_threshold = t->in[4] ? *(const float *)t->in[4] : 0,
	    .has_score_threshold = t->in[4] != NULL,
	    .center_point_box = t->iparam[0],
	};
	int64_t want = t->out_shape.dim[0], got = ho_nms(&a, t->out, want);

	if (got < 0)
		return -ENOMEM;
	return got == want ? 0 : -ERANGE;
}

int ho_cpu_prep_nms(const struct ho_graph *g, const struct ho_node *n, void *const *buf,
		    struct ho_kernel *k, struct ho_error *err)
{
	struct ho_typed *t = &k->typed;
	const struct ho_tensor *y = &g->tensors[n->outputs[0]];

	for (uint32_t i = 0; i < 5; i++) {
		const struct ho_tensor *in = ho_node_input(g, n, i);
		bool ok = i == 2  ? !in || in->dtype == HO_DT_INT64 || in->dtype == HO_DT_INT32
			  : i < 2 ? in && in->dtype == HO_DT_FLOAT
				  : !in || in->dtype == HO_DT_FLOAT;

		if (!ok || (i >= 2 && in && ho_shape_numel(&in->shape) != 1))
			return ho_cpu_unsupported(err, n,
						  "needs float32 boxes, scores and thresholds, "
						  "an integer limit");
		t->in[i] = in ? buf[n->inputs[i]] : NULL;
		t->in_dt[i] = in ? in->dtype : 0;
		if (in)
			t->in_shape[i] = in->shape;
	}
	if (y->shape.rank != 2 || y->shape.dim[1] != 3 || y->dtype != HO_DT_INT64)
		return ho_cpu_unsupported(err, n, "writes [selected, 3] int64 only");
	k->kind = HO_K_LOOP;
	t->out = buf[n->outputs[0]];
	t->out_shape = y->shape;
	t->iparam[0] = ho_node_attr_i(n, "center_point_box", 0);
	t->run = ho_run_nms;
	return 0;
}

/* RoiAlign: each bin the average (or maximum) of its sampling grid's bilinear samples. */
/* One bilinear sample of a RoiAlign bin: its four taps' offsets and weights (none: 0). */
struct ho_roi_tap {
	int64_t at[4];
	float w[4];
	bool in;
};

/* Where roi r's bins start and how large they are, and its samples per bin. */
struct ho_roi_geo {
	float sw, sh, bw, bh;
	int64_t gh, gw;
};

static struct ho_roi_geo ho_roi_geo(const struct ho_typed *t, const float *roi, float scale)
{
	int64_t ph_n = t->out_shape.dim[2], pw_n = t->out_shape.dim[3], ratio = t->iparam[0];
	bool half = t->iparam[1];
	float off = half ? 0.5f : 0.0f, rw, rh;
	struct ho_roi_geo g = {.sw = roi[0] * scale - off, .sh = roi[1] * scale - off};

	rw = roi[2] * scale - off - g.sw;
	rh = roi[3] * scale - off - g.sh;
	if (!half) { /* output_half_pixel, the old behaviour: at least one pixel */
		rw = fmaxf(rw, 1.0f);
		rh = fmaxf(rh, 1.0f);
	}
	g.bh = rh / (float)ph_n;
	g.bw = rw / (float)pw_n;
	g.gh = ratio > 0 ? ratio : (int64_t)ceilf(rh / (float)ph_n);
	g.gw = ratio > 0 ? ratio : (int64_t)ceilf(rw / (float)pw_n);
	return g;
}

/*
 * The taps of every sample of a roi, bin by bin (ph, pw, then iy, ix), as ONNX
 * places them: computed once per roi, not once per channel (256 channels of
 * fasterrcnn's 1000 rois recomputed them 256 times, a third of its frame).
 */
static void ho_roi_taps(const struct ho_typed *t, const struct ho_roi_geo *g,
			struct ho_roi_tap *tap)
{
	int64_t H = t->in_shape[0].dim[2], W = t->in_shape[0].dim[3], ph_n = t->out_shape.dim[2],
		pw_n = t->out_shape.dim[3], gh = g->gh, gw = g->gw;
	float sh = g->sh, sw = g->sw, bh = g->bh, bw = g->bw;

	for (int64_t ph = 0; ph < ph_n; ph++)
		for (int64_t pw = 0; pw < pw_n; pw++)
			for (int64_t iy = 0; iy < gh; iy++)
				for (int64_t ix = 0; ix < gw; ix++, tap++) {
					float y = sh + (float)ph * bh +
						  ((float)iy + 0.5f) * bh / (float)gh,
					      x = sw + (float)pw * bw +
						  ((float)ix + 0.5f) * bw / (float)gw;
					int64_t yl, xl, yh, xh;

					tap->in = !(y < -1.0f || y > (float)H || x < -1.0f ||
						    x > (float)W);
					if (!tap->in)
						continue;
					y = y <= 0 ? 0 : y;
					x = x <= 0 ? 0 : x;
					yl = (int64_t)y, xl = (int64_t)x;
					/* at the last row or column: both taps on it */
					if (yl >= H - 1)
						yl = H - 1, y = (float)yl;
					if (xl >= W - 1)
						xl = W - 1, x = (float)xl;
					yh = yl < H - 1 ? yl + 1 : yl;
					xh = xl < W - 1 ? xl + 1 : xl;
					float ly = y - (float)yl, lx = x - (float)xl, hy = 1 - ly,
					      hx = 1 - lx;

					tap->at[0] = yl * W + xl, tap->w[0] = hy * hx;
					tap->at[1] = yl * W + xh, tap->w[1] = hy * lx;
					tap->at[2] = yh * W + xl, tap->w[2] = ly * hx;
					tap->at[3] = yh * W + xh, tap->w[3] = ly * lx;
				}
}

/* Roi r of the output, every channel, from its taps. */
static void ho_roi_pool(const struct ho_typed *t, int64_t r, int64_t b, int64_t gh, int64_t gw,
			const struct ho_roi_tap *taps)
{
	int64_t C = t->in_shape[0].dim[1], HW = t->in_shape[0].dim[2] * t->in_shape[0].dim[3],
		bins = t->out_shape.dim[2] * t->out_shape.dim[3], n = gh * gw;
	bool max = t->op;

	for (int64_t ch = 0; ch < C; ch++) {
		const float *img = (const float *)t->in[0] + (b * C + ch) * HW;
		float *y = (float *)t->out + (r * C + ch) * bins;

		for (int64_t bin = 0; bin < bins; bin++) {
			const struct ho_roi_tap *tap = taps + bin * n;
			float acc = 0;

			for (int64_t s = 0; s < n; s++) {
				const struct ho_roi_tap *p = &tap[s];
				float v = 0;

				if (p->in) {
					float p1 = p->w[0] * img[p->at[0]],
					      p2 = p->w[1] * img[p->at[1]],
					      p3 = p->w[2] * img[p->at[2]],
					      p4 = p->w[3] * img[p->at[3]];

					v = max ? fmaxf(fmaxf(fmaxf(p1, p2), p3), p4)
						: p1 + p2 + p3 + p4;
				}
				acc = max ? (s ? fmaxf(acc, v) : v) : acc + v;
			}
			y[bin] = max ? acc : acc / (float)(n > 0 ? n : 1);
		}
	}
}

static int ho_run_roi_align(const struct ho_kernel *k)
{
	const struct ho_typed *t = &k->typed;
	const float *rois = t->in[1];
	int64_t N = t->in_shape[0].dim[0], R = t->out_shape.dim[0], ph_n = t->out_shape.dim[2],
		pw_n = t->out_shape.dim[3];
	float scale = k->param[0];
	int parts = ho_cpu_parts(R * t->in_shape[0].dim[1] * ph_n * pw_n, 1 << 12), ret = 0;

	(void)parts; /* built without OpenMP (the fuzzers), the pragma is all that reads it */
	for (int64_t r = 0; r < R; r++) { /* indices from the data: checked before any write */
		int64_t b = ho_cpu_index(t->in[2], t->in_dt[2], r);

		if (b < 0 || b >= N)
			return -EINVAL;
	}
#pragma omp parallel num_threads(parts) if (parts > 1)
	{
		struct ho_roi_tap *taps = NULL;
		int64_t cap = 0;

#pragma omp for schedule(dynamic, 4)
		for (int64_t r = 0; r < R; r++) {
			struct ho_roi_geo g = ho_roi_geo(t, rois + 4 * r, scale);
			int64_t need = ph_n * pw_n * (g.gh > 0 ? g.gh : 0) * (g.gw > 0 ? g.gw : 0);

			if (need > cap) {
				struct ho_roi_tap *more =
				    realloc(taps, (size_t)need * sizeof(*taps));

				if (!more) {
#pragma omp atomic write
					ret = -ENOMEM;
					continue;
				}
				taps = more, cap = need;
			}
			ho_roi_taps(t, &g, taps);
			ho_roi_pool(t, r, ho_cpu_index(t->in[2], t->in_dt[2], r), g.gh, g.gw, taps);
		}
		free(taps);
	}
	return ret;
}

int ho_cpu_prep_roi_align(const struct ho_graph *g, const struct ho_node *n, void *const *buf,
			  struct ho_kernel *k, struct ho_error *err)
{
	struct ho_typed *t = &k->typed;
	const struct ho_tensor *x = ho_node_input(g, n, 0), *rois = ho_node_input(g, n, 1),
			       *bi = ho_node_input(g, n, 2), *y = &g->tensors[n->outputs[0]];
	const struct ho_attr *ma = ho_node_attr(n, "mode"),
			     *ca = ho_node_attr(n, "coordinate_transformation_mode");
	const char *mode = ma && ma->type == HO_ATTR_STRING ? ma->s : "avg",
		   *coord = ca && ca->type == HO_ATTR_STRING ? ca->s : "half_pixel";

	if (!x || !rois || !bi || x->dtype != HO_DT_FLOAT || rois->dtype != HO_DT_FLOAT ||
	    (bi->dtype != HO_DT_INT64 && bi->dtype != HO_DT_INT32) || x->shape.rank != 4 ||
	    ho_shape_numel(&bi->shape) != rois->shape.dim[0] || y->shape.rank != 4 ||
	    (strcmp(mode, "avg") && strcmp(mode, "max")) ||
	    (strcmp(coord, "half_pixel") && strcmp(coord, "output_half_pixel")))
		return ho_cpu_unsupported(err, n, "aligns float32 [N, C, H, W] by its modes only");
	k->kind = HO_K_LOOP;
	t->in[0] = buf[n->inputs[0]];
	t->in[1] = buf[n->inputs[1]];
	t->in[2] = buf[n->inputs[2]];
	t->in_dt[2] = bi->dtype;
	t->in_shape[0] = x->shape;
	t->out = buf[n->outputs[0]];
	t->out_shape = y->shape;
	t->iparam[0] = ho_node_attr_i(n, "sampling_ratio", 0);
	/* opset 16 made half_pixel the default; before, only the old behaviour existed */
	t->iparam[1] = n->opset >= 16 && !strcmp(coord, "half_pixel");
	t->op = !strcmp(mode, "max");
	k->param[0] = ho_node_attr_f(n, "spatial_scale", 1.0f);
	t->run = ho_run_roi_align;
	return 0;
}
