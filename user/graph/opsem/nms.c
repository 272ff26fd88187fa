// SPDX-License-Identifier: MIT
/*
 * NonMaxSuppression, once, for the shape rule (when the inputs' values are
 * known) and the kernel alike.  Per batch and class: the boxes scoring above
 * the threshold, best first (ties: the lower index), each kept unless it
 * overlaps a kept one by more than the IoU threshold, up to the limit; in
 * the order of batch, class, then selection, as ONNX Runtime gives them.
 */
#include <math.h>
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

/* Best first, ties by the lower index (qsort is not stable: the index makes it so). */
static int nms_by_score(const void *x, const void *y, void *arg)
{
	const float *sc = arg;
	int64_t i = *(const int64_t *)x, j = *(const int64_t *)y;
	bool nan_i = sc[i] != sc[i], nan_j = sc[j] != sc[j]; /* NaN last: an order all the same */

	if (nan_i != nan_j)
		return nan_i ? 1 : -1;
	if (!nan_i && sc[i] != sc[j])
		return sc[i] > sc[j] ? -1 : 1;
	return i < j ? -1 : i > j;
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

/*
 * The boxes kept so far, binned by their top edge: a candidate meets only
 * those whose top lies within the tallest kept box's height above it, or
 * below it up to its bottom (a box further off cannot overlap it).  Each
 * against all took ssdlite320's batched NMS (the classes' boxes offset
 * apart, thousands kept) 80 ms a frame.
 */
#define NMS_BINS 1024

struct nms_kept {
	float *box;    /* 4 per kept box: corners */
	int32_t *next; /* per kept box: the next in its bin, or -1 */
	int32_t head[NMS_BINS];
	float lo, scale; /* bin of top edge y: (y - lo) * scale */
	float tallest;
};

static int nms_bin(const struct nms_kept *k, float y)
{
	float b = (y - k->lo) * k->scale;

	return !(b > 0) ? 0 : b >= NMS_BINS - 1 ? NMS_BINS - 1 : (int)b; /* NaN: bin 0 */
}

/* Whether box c overlaps a kept one by more than iou (a NaN box overlaps none). */
static bool nms_suppressed(const struct nms_kept *k, const float *c, float iou)
{
	int hi = nms_bin(k, c[2]), lo = nms_bin(k, c[0] - k->tallest);

	if (!(k->tallest < INFINITY))
		lo = 0;
	for (int b = lo; b <= hi; b++)
		for (int32_t j = k->head[b]; j >= 0; j = k->next[j])
			if (nms_iou(c, k->box + 4 * j) > iou)
				return true;
	return false;
}

/* The range of the candidates' top edges, for the bins. */
static void nms_range(const struct ho_nms_args *a, const float *bx, const int64_t *order,
		      int64_t cand, struct nms_kept *k)
{
	float lo = INFINITY, hi = -INFINITY;

	for (int64_t i = 0; i < cand; i++) {
		float c[4];

		nms_corners(bx, order[i], a->center_point_box, c);
		lo = c[0] < lo ? c[0] : lo;
		hi = c[0] > hi ? c[0] : hi;
	}
	k->lo = lo;
	k->scale = hi > lo && hi - lo < INFINITY ? (NMS_BINS - 1) / (hi - lo) : 0;
	k->tallest = 0;
	for (int b = 0; b < NMS_BINS; b++)
		k->head[b] = -1;
}

int64_t ho_nms(const struct ho_nms_args *a, int64_t *out, int64_t cap)
{
	int64_t n = a->boxes_per_batch, found = 0;
	int64_t *order = malloc((size_t)(n > 0 ? n : 1) * sizeof(int64_t));
	struct nms_kept *k = malloc(sizeof(*k));
	float *box = malloc((size_t)(n > 0 ? n : 1) * 4 * sizeof(float));
	int32_t *next = malloc((size_t)(n > 0 ? n : 1) * sizeof(int32_t));

	if (!order || !k || !box || !next || n > INT32_MAX) {
		found = -1;
		goto out;
	}
	k->box = box;
	k->next = next;
	for (int64_t b = 0; b < a->batches; b++)
		for (int64_t c = 0; c < a->classes; c++) {
			const float *sc = a->scores + (b * a->classes + c) * n,
				    *bx = a->boxes + b * n * 4;
			int64_t cand = 0, nk = 0;

			for (int64_t i = 0; i < n; i++)
				if (!a->has_score_threshold || sc[i] > a->score_threshold)
					order[cand++] = i;
			/* an insertion sort here took ssdlite320's 27 000 candidates 100 ms */
			qsort_r(order, (size_t)cand, sizeof(*order), nms_by_score, (void *)sc);
			nms_range(a, bx, order, cand, k);
			for (int64_t i = 0; i < cand && nk < a->max_per_class; i++) {
				float *kb = box + 4 * nk;
				int bin;

				nms_corners(bx, order[i], a->center_point_box, kb);
				if (nms_suppressed(k, kb, a->iou_threshold))
					continue;
				bin = nms_bin(k, kb[0]);
				next[nk] = k->head[bin];
				k->head[bin] = (int32_t)nk;
				if (kb[2] - kb[0] > k->tallest || kb[2] - kb[0] != kb[2] - kb[0])
					k->tallest = kb[2] - kb[0] == kb[2] - kb[0] ? kb[2] - kb[0]
										    : INFINITY;
				nk++;
				if (out && found < cap) {
					out[3 * found] = b;
					out[3 * found + 1] = c;
					out[3 * found + 2] = order[i];
				}
				found++;
			}
		}
out:
	free(order);
	free(k);
	free(box);
	free(next);
	return found;
}
