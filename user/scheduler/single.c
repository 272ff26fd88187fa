// SPDX-License-Identifier: MIT
/* Baseline: every task on one device, in topological order. */
#include <errno.h>
#include <string.h>

#include "listsched.h"

int ho_plan_single(const struct ho_problem *p, int dev, struct ho_plan *out)
{
	if (dev < 0 || (uint32_t)dev >= p->d)
		return -EINVAL;
	for (uint32_t t = 0; t < p->n; t++)
		out->assign[t] = (uint16_t)dev;
	memcpy(out->order, p->topo, p->n * sizeof(uint32_t));
	out->makespan = 0;
	return 0;
}

static int ho_single_plan(const struct ho_problem *p, int dev, struct ho_plan *out)
{
	return ho_plan_single(p, dev, out);
}

const struct ho_planner ho_planner_single = {
    .name = "single",
    .label = "%s alone",
    .description = "every task on one device, in topological order",
    .per_device = true,
    .plan = ho_single_plan,
};
