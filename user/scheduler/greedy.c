// SPDX-License-Identifier: MIT
/*
 * Baseline: each task on its locally fastest device, ignoring transfers —
 * what the global search has to beat.
 */
#include <math.h>
#include <string.h>

#include "listsched.h"

int ho_plan_greedy(const struct ho_problem *p, struct ho_plan *out)
{
	for (uint32_t t = 0; t < p->n; t++) {
		double best = INFINITY;

		out->assign[t] = 0;
		for (uint32_t j = 0; j < p->d; j++)
			if ((ho_list_devices(p, t) >> j & 1) && p->comp[t * p->d + j] < best) {
				best = p->comp[t * p->d + j];
				out->assign[t] = (uint16_t)j;
			}
	}
	memcpy(out->order, p->topo, p->n * sizeof(uint32_t));
	out->makespan = 0;
	return 0;
}

static int ho_greedy_plan(const struct ho_problem *p, int dev, struct ho_plan *out)
{
	(void)dev;
	return ho_plan_greedy(p, out);
}

const struct ho_planner ho_planner_greedy = {
    .name = "greedy",
    .label = "greedy",
    .description = "each task on its locally fastest device, transfers ignored",
    .plan = ho_greedy_plan,
};
