// SPDX-License-Identifier: MIT
/*
 * HEFT (Topcuoglu, Hariri & Wu, IEEE TPDS 13(3), 2002): upward rank with mean
 * computation and mean communication costs, then insertion-based earliest
 * finish time.  The plan's order is the tasks by start time, so the
 * simulator replays the same schedule.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "listsched.h"

static double ho_mean_comp(const struct ho_problem *p, uint32_t t)
{
	double sum = 0;
	uint32_t n = 0;

	for (uint32_t j = 0; j < p->d; j++)
		if ((ho_list_devices(p, t) >> j & 1) && isfinite(p->comp[t * p->d + j])) {
			sum += p->comp[t * p->d + j];
			n++;
		}
	return n ? sum / n : 0;
}

int ho_plan_heft(const struct ho_problem *p, struct ho_plan *out, double *rank_out)
{
	double *rank = calloc(p->n + 1, sizeof(double)), *cbar = ho_comm_means(p);
	int ret;

	if (!rank || !cbar) {
		free(rank);
		free(cbar);
		return -ENOMEM;
	}
	/* rank_u(t) = mean w(t) + max over items k of t, consumers c: (mean c(k) + rank_u(c)). */
	for (uint32_t i = p->n; i-- > 0;) {
		uint32_t t = p->topo[i];
		double best = 0;

		for (uint32_t s = p->succ_off[t]; s < p->succ_off[t + 1]; s++) {
			uint32_t c = p->succ[s];

			for (uint32_t e = p->in_off[c]; e < p->in_off[c + 1]; e++) {
				uint32_t k = p->in_items[e];

				if (p->item_prod[k] == t && cbar[k] + rank[c] > best)
					best = cbar[k] + rank[c];
			}
		}
		rank[t] = ho_mean_comp(p, t) + best;
	}
	ret = ho_list_schedule(p, rank, NULL, out);
	if (!ret && rank_out)
		memcpy(rank_out, rank, p->n * sizeof(double));
	free(rank);
	free(cbar);
	return ret;
}

static int ho_heft_plan(const struct ho_problem *p, int dev, struct ho_plan *out)
{
	(void)dev;
	return ho_plan_heft(p, out, NULL);
}

const struct ho_planner ho_planner_heft = {
    .name = "heft",
    .label = "HEFT",
    .description = "upward rank order, earliest finish with insertion (Topcuoglu et al. 2002)",
    .plan = ho_heft_plan,
};
