// SPDX-License-Identifier: MIT
/*
 * Hypervolume: the share of the box [lo, ref] that a set of points
 * dominates.  Exact for up to three objectives by slicing (While et al.,
 * IEEE TEC 10(1), 2006): sort on the last objective, and each slab between
 * consecutive points is the hypervolume of the points below it in one
 * dimension less.  That is O(n^2 log n) for three objectives, cheap enough to
 * judge every generation.  Four and five objectives would cost n^3 and n^4:
 * there a seeded Monte Carlo estimate stands in, the same samples each call
 * so that two fronts are compared on equal terms.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sched_priv.h"

#define HO_HV_EXACT_MAX 3
#define HO_HV_SAMPLES 8192

struct ho_hv_pt {
	double x[HO_OBJ_COUNT];
};

static int ho_hv_by_col(const void *a, const void *b, void *arg)
{
	uint32_t c = *(const uint32_t *)arg;
	double x = ((const struct ho_hv_pt *)a)->x[c], y = ((const struct ho_hv_pt *)b)->x[c];

	return x < y ? -1 : x > y;
}

/* Points normalised into [0, 1)^k, reference point 1; scratch holds n more per level. */
static double ho_hv_slice(struct ho_hv_pt *pt, uint32_t n, uint32_t k, struct ho_hv_pt *scratch)
{
	uint32_t last = k - 1;
	double hv = 0;

	if (k == 1) {
		double best = 1;

		for (uint32_t i = 0; i < n; i++)
			best = fmin(best, pt[i].x[0]);
		return 1 - best;
	}
	qsort_r(pt, n, sizeof(*pt), ho_hv_by_col, &last);
	if (k == 2) {
		double low = 1;

		for (uint32_t i = 0; i < n; i++) {
			double next = i + 1 < n ? pt[i + 1].x[1] : 1;

			low = fmin(low, pt[i].x[0]);
			hv += (next - pt[i].x[1]) * (1 - low);
		}
		return hv;
	}
	for (uint32_t i = 0; i < n; i++) {
		double depth = (i + 1 < n ? pt[i + 1].x[last] : 1) - pt[i].x[last];

		if (depth <= 0)
			continue;
		memcpy(scratch, pt, (i + 1) * sizeof(*pt));
		hv += depth * ho_hv_slice(scratch, i + 1, k - 1, scratch + n);
	}
	return hv;
}

static double ho_hv_sampled(const struct ho_hv_pt *pt, uint32_t n, uint32_t k)
{
	struct ho_rng r;
	uint32_t hit = 0;

	ho_rng_seed(&r, 0x6876);
	for (uint32_t s = 0; s < HO_HV_SAMPLES; s++) {
		double x[HO_OBJ_COUNT];

		for (uint32_t m = 0; m < k; m++)
			x[m] = ho_rng_unit(&r);
		for (uint32_t i = 0; i < n; i++) {
			bool dom = true;

			for (uint32_t m = 0; m < k && dom; m++)
				dom = pt[i].x[m] <= x[m];
			if (dom) {
				hit++;
				break;
			}
		}
	}
	return (double)hit / HO_HV_SAMPLES;
}

int ho_hypervolume_points(const double *const *pts, uint32_t n, const int *obj, uint32_t k,
			  const double *lo, const double *ref, double *out)
{
	struct ho_hv_pt *pt;
	uint32_t in = 0;

	*out = 0;
	if (!k || k > HO_OBJ_COUNT)
		return -EINVAL;
	pt = malloc((size_t)n * (k > HO_HV_EXACT_MAX ? 1 : k) * sizeof(*pt) + sizeof(*pt));
	if (!pt)
		return -ENOMEM;
	/* Normalise into the box; a point on or past ref in any objective adds nothing. */
	for (uint32_t i = 0; i < n; i++) {
		bool inside = true;

		for (uint32_t m = 0; m < k; m++) {
			double span = ref[m] - lo[m], v = pts[i][obj[m]];

			pt[in].x[m] = span > 0 ? fmax(0, (v - lo[m]) / span) : 0;
			inside &= span > 0 && v < ref[m];
		}
		in += inside;
	}
	*out = !in		     ? 0
	       : k > HO_HV_EXACT_MAX ? ho_hv_sampled(pt, in, k)
				     : ho_hv_slice(pt, in, k, pt + n);
	free(pt);
	return 0;
}

int ho_hypervolume(const struct ho_front *f, uint32_t objectives, const double *lo,
		   const double *ref, double *out)
{
	const double **pts = malloc((f->n + 1) * sizeof(*pts));
	double l[HO_OBJ_COUNT], r[HO_OBJ_COUNT];
	int obj[HO_OBJ_COUNT], ret;
	uint32_t k = 0;

	if (!pts)
		return -ENOMEM;
	for (int m = 0; m < HO_OBJ_COUNT; m++)
		if (objectives >> m & 1) {
			l[k] = lo[m];
			r[k] = ref[m];
			obj[k++] = m;
		}
	for (uint32_t i = 0; i < f->n; i++)
		pts[i] = f->sol[i].ev.obj;
	ret = ho_hypervolume_points(pts, f->n, obj, k, l, r, out);
	free(pts);
	return ret;
}
