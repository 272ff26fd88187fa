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
	double *oct = calloc((size_t)p->n * d + 1, sizeof(double)),
	       *rank = calloc(p->n + 1, sizeof(double)), *cbar = ho_comm_means(p);
	int ret = -ENOMEM;

	if (!oct || !rank || !cbar)
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

						if (!(ho_list_devices(p, c) >> pk & 1) ||
						    !isfinite(w))
							continue;
						v = oct[c * d + pk] + w + (pk != pj ? cbar[k] : 0);
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
	/* Place by EFT + OCT: look ahead to the cost of what follows on that device. */
	ret = ho_list_schedule(p, rank, oct, out);
	if (!ret && oct_out)
		memcpy(oct_out, oct, (size_t)p->n * d * sizeof(double));
out:
	free(oct);
	free(rank);
	free(cbar);
	return ret;
}

static int ho_peft_plan(const struct ho_problem *p, int dev, struct ho_plan *out)
{
	(void)dev;
	return ho_plan_peft(p, out, NULL);
}

const struct ho_planner ho_planner_peft = {
    .name = "peft",
    .label = "PEFT",
    .description = "optimistic cost table for order and device (Arabnejad and Barbosa 2014)",
    .plan = ho_peft_plan,
};
