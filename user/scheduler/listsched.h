/* SPDX-License-Identifier: MIT */
/* Shared helpers of the list-scheduling baselines. Not installed. */
#ifndef HO_LISTSCHED_H
#define HO_LISTSCHED_H

#include "sched_priv.h"

int ho_slots_init(struct ho_slots *s, uint32_t d, uint32_t n);
void ho_slots_free(struct ho_slots *s, uint32_t d);
double ho_slots_earliest(const struct ho_slots *s, double ready, double dur);
double ho_slots_earliest_bounded(const struct ho_slots *s, double ready, double dur,
				 uint32_t max_scan);
void ho_slots_insert(struct ho_slots *s, double start, double end);
double ho_ready_time(const struct ho_problem *p, uint32_t t, int dev, const uint16_t *assign,
		     const double *aft);
int64_t ho_ready_pop(const struct ho_problem *p, const double *rank, uint32_t *missing,
		     uint8_t *taken);
int ho_order_by_start(const struct ho_problem *p, const double *ast, const uint32_t *placed_at,
		      uint32_t *order);
uint32_t *ho_indegrees(const struct ho_problem *p);
int ho_list_schedule(const struct ho_problem *p, const double *rank, const double *bias,
		     struct ho_plan *out);

#endif
