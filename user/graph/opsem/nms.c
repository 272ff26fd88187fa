// SPDX-License-Identifier: MIT
/*
 * NonMaxSuppression, once, for the shape rule (when the inputs' values are
 * known) and the kernel alike.  Per batch and class: the boxes scoring above
 * the threshold, best first (ties: the lower index), each kept unless it
 * overlaps a kept one by more than the IoU threshold, up to the limit; in
 * the order of batch, class, then selection, as ONNX Runtime gives them.
 */
#include <stdlib.h>

#include "common.h"
#include "heteroopt/opsem.h"

/* box i of batch b as y1, x1, y2, x2 with y1 <= y2, x1 <= x2 */
static void nms_corners(const float *boxes, int64_t i, bool center, float *c)
{
	const float *p = boxes + 4 * i;

	if (center) { /* x_center, y_center, width, height */
		c[0] = p[1] - p[3] / 2, c[1] = p[0] - p[2] / 2;
		c[2] = p[1] + p[3] / 2, c[3] = p[0] + p[2] / 2;
		return;
	}
	c[0] = p[0] < p[2] ? p[0] : p[2], c[2] = p[0] < p[2] ? p[2] : p[0];
	c[1] = p[1] < p[3] ? p[1] : p[3], c[3] = p[1] < p[3] ? p[3] : p[1];
}

static float nms_iou(const float *a, const float *b)
{
	float ih = (a[2] < b[2] ? a[2] : b[2]) - (a[0] > b[0] ? a[0] : b[0]),
	      iw = (a[3] < b[3] ? a[3] : b[3]) - (a[1] > b[1] ? a[1] : b[1]), inter, uni;

	if (ih <= 0 || iw <= 0)
		return 0;
	inter = ih * iw;
	uni = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter;
	return uni > 0 ? inter / uni : 0;
}

int64_t ho_nms(const struct ho_nms_args *a, int64_t *out, int64_t cap)
{
	int64_t n = a->boxes_per_batch, found = 0;
	int64_t *order = malloc((size_t)(n > 0 ? n : 1) * sizeof(int64_t));
	float *kept = malloc((size_t)(n > 0 ? n : 1) * 4 * sizeof(float));

	if (!order || !kept) {
		free(order);
		free(kept);
		return -1;
	}
	for (int64_t b = 0; b < a->batches; b++)
		for (int64_t c = 0; c < a->classes; c++) {
			const float *sc = a->scores + (b * a->classes + c) * n,
				    *bx = a->boxes + b * n * 4;
			int64_t cand = 0, nk = 0;

			for (int64_t i = 0; i < n; i++)
				if (!a->has_score_threshold || sc[i] > a->score_threshold)
					order[cand++] = i;
			/* best first, ties by index: an insertion sort, stable */
			for (int64_t i = 1; i < cand; i++) {
				int64_t v = order[i], j = i;

				for (; j > 0 && sc[order[j - 1]] < sc[v]; j--)
					order[j] = order[j - 1];
				order[j] = v;
			}
			for (int64_t i = 0; i < cand && nk < a->max_per_class; i++) {
				float box[4];
				bool keep = true;

				nms_corners(bx, order[i], a->center_point_box, box);
				for (int64_t j = 0; j < nk && keep; j++)
					keep = nms_iou(box, kept + 4 * j) <= a->iou_threshold;
				if (!keep)
					continue;
				for (int q = 0; q < 4; q++)
					kept[4 * nk + q] = box[q];
				nk++;
				if (out && found < cap) {
					out[3 * found] = b;
					out[3 * found + 1] = c;
					out[3 * found + 2] = order[i];
				}
				found++;
			}
		}
	free(order);
	free(kept);
	return found;
}
