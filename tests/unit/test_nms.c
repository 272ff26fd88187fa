// SPDX-License-Identifier: MIT
/*
 * NonMaxSuppression (user/graph/opsem/nms.c: the shape rule's and the
 * kernel's) against the specification written out the plain way, every
 * candidate against every box kept: random scenes of many classes, boxes
 * offset per class as torchvision's batched NMS does, ties, tall and
 * degenerate boxes, NaN and infinite corners, center-point boxes.  The
 * selections must be the same triples in the same order.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heteroopt/opsem.h"
#include "test_util.h"

static float iou_plain(const float *a, const float *b)
{
	float ih = (a[2] < b[2] ? a[2] : b[2]) - (a[0] > b[0] ? a[0] : b[0]),
	      iw = (a[3] < b[3] ? a[3] : b[3]) - (a[1] > b[1] ? a[1] : b[1]), inter, uni;

	if (ih <= 0 || iw <= 0)
		return 0;
	inter = ih * iw;
	uni = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter;
	return uni > 0 ? inter / uni : 0;
}

/* The spec's corners (min and max as comparisons: a NaN corner stays in place). */
static void corners(const float *p, bool center, float *c)
{
	if (center) {
		c[0] = p[1] - p[3] / 2, c[1] = p[0] - p[2] / 2;
		c[2] = p[1] + p[3] / 2, c[3] = p[0] + p[2] / 2;
		return;
	}
	c[0] = p[0] < p[2] ? p[0] : p[2], c[2] = p[0] < p[2] ? p[2] : p[0];
	c[1] = p[1] < p[3] ? p[1] : p[3], c[3] = p[1] < p[3] ? p[3] : p[1];
}

/* ONNX's NonMaxSuppression, plainly: best first (NaN last, ties by index), all pairs. */
static int64_t nms_plain(const struct ho_nms_args *a, int64_t *out)
{
	int64_t n = a->boxes_per_batch, found = 0;
	int64_t *order = malloc((size_t)n * sizeof(int64_t));
	float *kept = malloc((size_t)n * 4 * sizeof(float));

	for (int64_t b = 0; b < a->batches; b++)
		for (int64_t c = 0; c < a->classes; c++) {
			const float *sc = a->scores + (b * a->classes + c) * n;
			int64_t cand = 0, nk = 0;

			for (int64_t i = 0; i < n; i++)
				if (!a->has_score_threshold || sc[i] > a->score_threshold)
					order[cand++] = i;
			for (int64_t i = 1; i < cand; i++) {
				int64_t v = order[i], j = i;

				for (; j > 0; j--) {
					float p = sc[order[j - 1]], q = sc[v];
					bool after =
					    (p != p && q == q) || (p == p && q == q && p < q);

					if (!after)
						break;
					order[j] = order[j - 1];
				}
				order[j] = v;
			}
			for (int64_t i = 0; i < cand && nk < a->max_per_class; i++) {
				float box[4];
				bool keep = true;

				corners(a->boxes + (b * n + order[i]) * 4, a->center_point_box,
					box);
				for (int64_t j = 0; j < nk && keep; j++)
					keep = iou_plain(box, kept + 4 * j) <= a->iou_threshold;
				if (!keep)
					continue;
				memcpy(kept + 4 * nk++, box, sizeof(box));
				out[3 * found] = b, out[3 * found + 1] = c,
					out[3 * found + 2] = order[i];
				found++;
			}
		}
	free(order);
	free(kept);
	return found;
}

static float uniform(unsigned *s)
{
	*s = *s * 1103515245u + 12345u;
	return (float)((*s >> 8) & 0xffff) / 65536.0f;
}

static void scene(unsigned seed, int64_t n, int64_t classes, bool odd, float *boxes, float *scores)
{
	unsigned s = seed;

	for (int64_t i = 0; i < n; i++) {
		float y = uniform(&s) * 300, x = uniform(&s) * 300;
		float h = uniform(&s) < 0.05f ? 300 : uniform(&s) * 60; /* a few tall ones */
		int64_t cls = (int64_t)(uniform(&s) * 8);

		/* batched NMS: each class's boxes offset apart, one class of all */
		float off = (float)cls * 400;

		boxes[4 * i] = y + off, boxes[4 * i + 1] = x + off;
		boxes[4 * i + 2] = y + h + off, boxes[4 * i + 3] = x + uniform(&s) * 60 + off;
		if (uniform(&s) < 0.1f) /* corners given the other way round */
			boxes[4 * i] = y + h + off, boxes[4 * i + 2] = y + off;
		if (odd && uniform(&s) < 0.02f)
			boxes[4 * i + (int)(uniform(&s) * 4)] = NAN;
		if (odd && uniform(&s) < 0.01f)
			boxes[4 * i + 2] = INFINITY;
		if (uniform(&s) < 0.02f) /* a point */
			boxes[4 * i + 2] = boxes[4 * i], boxes[4 * i + 3] = boxes[4 * i + 1];
	}
	for (int64_t i = 0; i < n * classes; i++) {
		float v = uniform(&s);

		scores[i] = uniform(&s) < 0.2f ? 0.5f : v; /* ties */
		if (odd && uniform(&s) < 0.01f)
			scores[i] = NAN;
	}
}

int main(void)
{
	enum { N = 3000, CLASSES = 3 };
	float *boxes = malloc(N * 4 * sizeof(float)), *scores = malloc(N * CLASSES * sizeof(float));
	int64_t *got = malloc(N * CLASSES * 3 * sizeof(int64_t)),
		*want = malloc(N * CLASSES * 3 * sizeof(int64_t));

	T_REQUIRE(boxes && scores && got && want);
	for (unsigned seed = 1; seed <= 24; seed++) {
		struct ho_nms_args a = {.boxes = boxes,
					.scores = scores,
					.batches = 1,
					.classes = seed % 3 ? CLASSES : 1,
					.boxes_per_batch = seed % 4 ? N : 40,
					.max_per_class = seed % 5 ? N : 7,
					.iou_threshold = seed % 2 ? 0.5f : 0.0f,
					.score_threshold = 0.3f,
					.has_score_threshold = seed % 3 == 1,
					.center_point_box = seed % 7 == 3};
		int64_t n_got, n_want;

		scene(seed, a.boxes_per_batch, a.classes, seed % 2 == 0, boxes, scores);
		n_want = nms_plain(&a, want);
		n_got = ho_nms(&a, got, N * CLASSES);
		T_CHECK(n_got == n_want && !memcmp(got, want, (size_t)n_want * 3 * sizeof(int64_t)),
			"scene %u: %lld selected, the plain way %lld", seed, (long long)n_got,
			(long long)n_want);
		T_CHECK(ho_nms(&a, NULL, 0) == n_want, "scene %u: the count alone differs", seed);
	}
	free(boxes);
	free(scores);
	free(got);
	free(want);
	return t_failures ? 1 : 0;
}
