// SPDX-License-Identifier: MIT
/* Picking one schedule from the front: weighted sum, TOPSIS, constraint-first. */
#include <math.h>

#include "heteroopt/sched.h"

int ho_pick(const struct ho_front *f, enum ho_pick how, uint32_t objectives, const double *weights,
	    const double *base)
{
	double wsum = 0, w[HO_OBJ_COUNT];
	int best = -1;

	if (!f->n)
		return -1;
	for (int m = 0; m < HO_OBJ_COUNT; m++) {
		w[m] = objectives >> m & 1 ? (weights ? weights[m] : 1) : 0;
		wsum += w[m];
	}
	if (wsum <= 0)
		return 0;
	if (how == HO_PICK_CONSTRAINT) {
		/* The front already honours the hard constraints: take the fastest. */
		for (uint32_t i = 0; i < f->n; i++)
			if (best < 0 ||
			    f->sol[i].ev.obj[HO_OBJ_LATENCY] < f->sol[best].ev.obj[HO_OBJ_LATENCY])
				best = (int)i;
		return best;
	}
	if (how == HO_PICK_WEIGHTED) {
		double best_score = INFINITY;

		/* Each objective relative to the all-on-default-device schedule. */
		for (uint32_t i = 0; i < f->n; i++) {
			double score = 0;

			for (int m = 0; m < HO_OBJ_COUNT; m++)
				if (w[m] > 0)
					score += w[m] / wsum * f->sol[i].ev.obj[m] /
						 (base && base[m] > 0 ? base[m] : 1);
			if (score < best_score) {
				best_score = score;
				best = (int)i;
			}
		}
		return best;
	}
	/* TOPSIS (Hwang & Yoon 1981): closeness to the ideal, distance from the anti-ideal. */
	double norm[HO_OBJ_COUNT] = {0}, lo[HO_OBJ_COUNT], hi[HO_OBJ_COUNT], best_c = -1;

	for (int m = 0; m < HO_OBJ_COUNT; m++) {
		for (uint32_t i = 0; i < f->n; i++)
			norm[m] += f->sol[i].ev.obj[m] * f->sol[i].ev.obj[m];
		norm[m] = norm[m] > 0 ? sqrt(norm[m]) : 1;
		lo[m] = INFINITY;
		hi[m] = -INFINITY;
		for (uint32_t i = 0; i < f->n; i++) {
			double v = w[m] / wsum * f->sol[i].ev.obj[m] / norm[m];

			lo[m] = v < lo[m] ? v : lo[m];
			hi[m] = v > hi[m] ? v : hi[m];
		}
	}
	for (uint32_t i = 0; i < f->n; i++) {
		double dp = 0, dn = 0, c;

		for (int m = 0; m < HO_OBJ_COUNT; m++) {
			double v = w[m] / wsum * f->sol[i].ev.obj[m] / norm[m];

			dp += (v - lo[m]) * (v - lo[m]);
			dn += (v - hi[m]) * (v - hi[m]);
		}
		c = dp + dn > 0 ? sqrt(dn) / (sqrt(dp) + sqrt(dn)) : 1;
		if (c > best_c) {
			best_c = c;
			best = (int)i;
		}
	}
	return best;
}
