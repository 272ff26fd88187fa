// SPDX-License-Identifier: MIT
/*
 * Detection: NonMaxSuppression, the selection shared with shape inference
 * (user/graph/opsem/nms.c), which plans its output's extent from the inputs'
 * values (the data must select as many boxes at run time); RoiAlign, in
 * float32 in ONNX Runtime's order of operations.
 */
#include <errno.h>
#include <math.h>
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
static int ho_run_roi_align(const struct ho_kernel *k)
{
	const struct ho_typed *t = &k->typed;
	const float *X = t->in[0], *rois = t->in[1];
	float *Y = t->out;
	int64_t N = t->in_shape[0].dim[0], C = t->in_shape[0].dim[1], H = t->in_shape[0].dim[2],
		W = t->in_shape[0].dim[3], R = t->out_shape.dim[0], ph_n = t->out_shape.dim[2],
		pw_n = t->out_shape.dim[3], ratio = t->iparam[0];
	bool half = t->iparam[1], max = t->op;
	float scale = k->param[0], off = half ? 0.5f : 0.0f;

	for (int64_t r = 0; r < R; r++) {
		int64_t b = ho_cpu_index(t->in[2], t->in_dt[2], r);
		const float *roi = rois + 4 * r;
		float sw = roi[0] * scale - off, sh = roi[1] * scale - off,
		      rw = roi[2] * scale - off - sw, rh = roi[3] * scale - off - sh, bw, bh;
		int64_t gh, gw;

		if (b < 0 || b >= N)
			return -EINVAL; /* an index from the data: checked at run time */
		if (!half) { /* output_half_pixel, the old behaviour: at least one pixel */
			rw = fmaxf(rw, 1.0f);
			rh = fmaxf(rh, 1.0f);
		}
		bh = rh / (float)ph_n;
		bw = rw / (float)pw_n;
		gh = ratio > 0 ? ratio : (int64_t)ceilf(rh / (float)ph_n);
		gw = ratio > 0 ? ratio : (int64_t)ceilf(rw / (float)pw_n);
		for (int64_t ch = 0; ch < C; ch++) {
			const float *img = X + (b * C + ch) * H * W;

			for (int64_t ph = 0; ph < ph_n; ph++)
				for (int64_t pw = 0; pw < pw_n; pw++) {
					float acc = 0;
					bool any = false;

					for (int64_t iy = 0; iy < gh; iy++)
						for (int64_t ix = 0; ix < gw; ix++) {
							float y = sh + (float)ph * bh +
								  ((float)iy + 0.5f) * bh /
								      (float)gh,
							      x = sw + (float)pw * bw +
								  ((float)ix + 0.5f) * bw /
								      (float)gw,
							      v = 0;
							int64_t yl, xl, yh, xh;

							if (!(y < -1.0f || y > (float)H ||
							      x < -1.0f || x > (float)W)) {
								y = y <= 0 ? 0 : y;
								x = x <= 0 ? 0 : x;
								yl = (int64_t)y, xl = (int64_t)x;
								/* at the last row or column: both
								 * taps on it */
								if (yl >= H - 1)
									yl = H - 1, y = (float)yl;
								if (xl >= W - 1)
									xl = W - 1, x = (float)xl;
								yh = yl < H - 1 ? yl + 1 : yl;
								xh = xl < W - 1 ? xl + 1 : xl;
								float ly = y - (float)yl,
								      lx = x - (float)xl,
								      hy = 1 - ly, hx = 1 - lx,
								      p1 = hy * hx *
									   img[yl * W + xl],
								      p2 = hy * lx *
									   img[yl * W + xh],
								      p3 = ly * hx *
									   img[yh * W + xl],
								      p4 = ly * lx *
									   img[yh * W + xh];

								v = max ? fmaxf(fmaxf(fmaxf(p1, p2),
										      p3),
										p4)
									: p1 + p2 + p3 + p4;
							}
							acc = max ? (any ? fmaxf(acc, v) : v)
								  : acc + v;
							any = true;
						}
					Y[((r * C + ch) * ph_n + ph) * pw_n + pw] =
					    max ? acc : acc / (float)(gh * gw > 0 ? gh * gw : 1);
				}
		}
	}
	return 0;
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
