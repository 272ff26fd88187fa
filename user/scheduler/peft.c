// SPDX-License-Identifier: MIT
/*
 * PEFT (Arabnejad & Barbosa, IEEE TPDS 25(3), 2014): the optimistic cost
 * table OCT(t, p) is the longest path from t to the exit assuming every
 * later task takes its best device; tasks are ranked by mean OCT and placed
 * on the device minimising EFT + OCT, with insertion.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "listsched.h"

int ho_plan_peft(const struct ho_problem *p, struct ho_plan *out, double *oct_out)
{
	uint32_t d = p->d;
	double *oct = calloc((size_t)p->n * d + 1, sizeof(double)), *rank = calloc(p->n + 1, sizeof(double));
	double *aft = calloc(p->n + 1, sizeof(double)), *ast = calloc(p->n + 1, sizeof(double));
	uint32_t *placed = calloc(p->n + 1, sizeof(uint32_t)), *missing = ho_indegrees(p);
	uint8_t *taken = calloc(p->n + 1, 1);
	struct ho_slots slots[HO_MAX_DEVICES];
	int ret = -ENOMEM;

	memset(slots, 0, sizeof(slots));
	out->makespan = 0;
	if (!oct || !rank || !aft || !ast || !placed || !missing || !taken || ho_slots_init(slots, d, p->n))
		goto out;
	for (uint32_t i = p->n; i-- > 0;) {
		uint32_t t = p->topo[i];

		for (uint32_t pj = 0; pj < d; pj++) {
			double worst = 0;

			for (uint32_t s = p->succ_off[t]; s < p->succ_off[t + 1]; s++) {
				uint32_t c = p->succ[s];

				for (uint32_t e = p->in_off[c]; e < p->in_off[c + 1]; e++) {
					uint32_t k = p->in_items[e];
					double best = INFINITY;

					if (p->item_prod[k] != t)
						continue;
					for (uint32_t pk = 0; pk < d; pk++) {
						double w = p->comp[c * d + pk], v;

						if (!(p->allowed[c] >> pk & 1) || !isfinite(w))
							continue;
						v = oct[c * d + pk] + w + (pk != pj ? ho_comm_mean(p, k) : 0);
						if (v < best)
							best = v;
					}
					if (isfinite(best) && best > worst)
						worst = best;
				}
			}
			oct[t * d + pj] = worst;
		}
		for (uint32_t pj = 0; pj < d; pj++)
			rank[t] += oct[t * d + pj];
		rank[t] /= d;
	}
	for (uint32_t step = 0; step < p->n; step++) {
		int64_t t = ho_ready_pop(p, rank, missing, taken);
		double best_o = INFINITY, best_est = 0, best_eft = 0;
		int best_dev = -1;

		if (t < 0) {
			ret = -ELOOP;
			goto out;
		}
		for (uint32_t j = 0; j < d; j++) {
			double w = p->comp[t * d + j], est, eft;

			if (!(p->allowed[t] >> j & 1) || !isfinite(w))
				continue;
			est = ho_slots_earliest(&slots[j], ho_ready_time(p, (uint32_t)t, (int)j, out->assign, aft),
						w);
			eft = est + w;
			if (eft + oct[t * d + j] < best_o) {
				best_o = eft + oct[t * d + j];
				best_est = est;
				best_eft = eft;
				best_dev = (int)j;
			}
		}
		if (best_dev < 0) {
			ret = -EINVAL;
			goto out;
		}
		out->assign[t] = (uint16_t)best_dev;
		ast[t] = best_est;
		aft[t] = best_eft;
		placed[t] = step;
		ho_slots_insert(&slots[best_dev], best_est, best_eft);
		if (best_eft > out->makespan)
			out->makespan = best_eft;
	}
	ret = ho_order_by_start(p, ast, placed, out->order) ? -ENOMEM : 0;
	if (oct_out)
		memcpy(oct_out, oct, (size_t)p->n * d * sizeof(double));
out:
	ho_slots_free(slots, d);
	free(oct);
	free(rank);
	free(aft);
	free(ast);
	free(placed);
	free(missing);
	free(taken);
	return ret;
}
