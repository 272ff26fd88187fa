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
		if ((p->allowed[t] >> j & 1) && isfinite(p->comp[t * p->d + j])) {
			sum += p->comp[t * p->d + j];
			n++;
		}
	return n ? sum / n : 0;
}

int ho_plan_heft(const struct ho_problem *p, struct ho_plan *out, double *rank_out)
{
	double *rank = calloc(p->n + 1, sizeof(double)), *aft = calloc(p->n + 1, sizeof(double));
	double *ast = calloc(p->n + 1, sizeof(double));
	uint32_t *placed = calloc(p->n + 1, sizeof(uint32_t)), *missing = ho_indegrees(p);
	uint8_t *taken = calloc(p->n + 1, 1);
	struct ho_slots slots[HO_MAX_DEVICES];
	int ret = -ENOMEM;

	memset(slots, 0, sizeof(slots));
	out->makespan = 0;
	if (!rank || !aft || !ast || !placed || !missing || !taken || ho_slots_init(slots, p->d, p->n))
		goto out;
	/* rank_u(t) = mean w(t) + max over items k of t, consumers c: (mean c(k) + rank_u(c)). */
	for (uint32_t i = p->n; i-- > 0;) {
		uint32_t t = p->topo[i];

		rank[t] = ho_mean_comp(p, t);
	}
	for (uint32_t i = p->n; i-- > 0;) {
		uint32_t t = p->topo[i];
		double best = 0;

		/* Items produced by t are those whose producer is t: scan t's successors' inputs. */
		for (uint32_t s = p->succ_off[t]; s < p->succ_off[t + 1]; s++) {
			uint32_t c = p->succ[s];

			for (uint32_t e = p->in_off[c]; e < p->in_off[c + 1]; e++) {
				uint32_t k = p->in_items[e];

				if (p->item_prod[k] == t && ho_comm_mean(p, k) + rank[c] > best)
					best = ho_comm_mean(p, k) + rank[c];
			}
		}
		rank[t] += best;
	}
	for (uint32_t step = 0; step < p->n; step++) {
		int64_t t = ho_ready_pop(p, rank, missing, taken);
		double best_eft = INFINITY, best_est = 0;
		int best_dev = -1;

		if (t < 0) {
			ret = -ELOOP;
			goto out;
		}
		for (uint32_t j = 0; j < p->d; j++) {
			double w = p->comp[t * p->d + j], est, eft;

			if (!(p->allowed[t] >> j & 1) || !isfinite(w))
				continue;
			est = ho_slots_earliest(&slots[j], ho_ready_time(p, (uint32_t)t, (int)j, out->assign, aft),
						w);
			eft = est + w;
			if (eft < best_eft) {
				best_eft = eft;
				best_est = est;
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
	if (rank_out)
		memcpy(rank_out, rank, p->n * sizeof(double));
out:
	ho_slots_free(slots, p->d);
	free(rank);
	free(aft);
	free(ast);
	free(placed);
	free(missing);
	free(taken);
	return ret;
}
