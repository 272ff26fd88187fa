// SPDX-License-Identifier: MIT
/*
 * The planners, one file each with its descriptor, listed here once: the
 * CLI's baselines and the search's seeds come from this list, in this order.
 * A new planner is a file and a line below.
 */
#include <stddef.h>

#include "heteroopt/sched.h"

extern const struct ho_planner ho_planner_single, ho_planner_greedy, ho_planner_heft,
    ho_planner_peft;

const struct ho_planner *const ho_planners[] = {
    &ho_planner_single, &ho_planner_greedy, &ho_planner_heft, &ho_planner_peft, NULL,
};

uint32_t ho_planner_plans(const struct ho_problem *p)
{
	uint32_t n = 0;

	for (const struct ho_planner *const *pl = ho_planners; *pl; pl++)
		n += (*pl)->per_device ? p->d : 1;
	return n;
}
