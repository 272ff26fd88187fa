// SPDX-License-Identifier: MIT
/*
 * Pieces shared by the list schedulers: plans, insertion into device
 * timelines, and a ready list that picks the highest-ranked ready task.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "listsched.h"

struct ho_plan *ho_plan_new(uint32_t n)
{
	struct ho_plan *pl = calloc(1, sizeof(*pl));

	if (!pl)
		return NULL;
	pl->assign = calloc(n + 1, sizeof(uint16_t));
	pl->order = calloc(n + 1, sizeof(uint32_t));
	if (!pl->assign || !pl->order) {
		ho_plan_free(pl);
		return NULL;
	}
	return pl;
}

void ho_plan_free(struct ho_plan *pl)
{
	if (!pl)
		return;
	free(pl->assign);
	free(pl->order);
	free(pl);
}

int ho_slots_init(struct ho_slots *s, uint32_t d, uint32_t n)
{
	for (uint32_t j = 0; j < d; j++) {
		s[j].n = 0;
		s[j].min_gap = 0;
		s[j].cap = n + 1;
		s[j].s = malloc(s[j].cap * sizeof(double));
		s[j].e = malloc(s[j].cap * sizeof(double));
		if (!s[j].s || !s[j].e)
			return -1;
	}
	return 0;
}

void ho_slots_free(struct ho_slots *s, uint32_t d)
{
	for (uint32_t j = 0; j < d; j++) {
		free(s[j].s);
		free(s[j].e);
	}
}

double ho_slots_book_gap(struct ho_slots *s, double ready, double dur)
{
	double t = ho_slots_earliest(s, ready, dur);

	ho_slots_insert(s, t, t + dur);
	return t;
}

double ho_slots_overlap(const struct ho_slots *s, double from, double to)
{
	double sum = 0;

	/* ends are sorted: start at the first interval that ends after from */
	for (uint32_t i = ho_first_above(s->e, s->n, from); i < s->n && s->s[i] < to; i++)
		sum += (s->e[i] < to ? s->e[i] : to) - (s->s[i] > from ? s->s[i] : from);
	return sum;
}

/* Data-ready time of task t on device dev, given placed predecessors. */
double ho_ready_time(const struct ho_problem *p, uint32_t t, int dev, const uint16_t *assign,
		     const double *aft)
{
	double ready = 0;

	for (uint32_t e = p->in_off[t]; e < p->in_off[t + 1]; e++) {
		uint32_t k = p->in_items[e], prod = p->item_prod[k];
		int src = prod == HO_EXTERNAL ? p->default_device : assign[prod];
		double r = (prod == HO_EXTERNAL ? 0 : aft[prod]) + ho_comm_time(p, k, src, dev);

		if (r > ready)
			ready = r;
	}
	return ready;
}

/* Next ready task with the highest rank (ties: lowest index). */
int64_t ho_ready_pop(const struct ho_problem *p, const double *rank, uint32_t *missing,
		     uint8_t *taken)
{
	int64_t best = -1;

	for (uint32_t t = 0; t < p->n; t++)
		if (!taken[t] && !missing[t] && (best < 0 || rank[t] > rank[best]))
			best = t;
	if (best >= 0) {
		taken[best] = 1;
		for (uint32_t k = p->succ_off[best]; k < p->succ_off[best + 1]; k++)
			missing[p->succ[k]]--;
	}
	return best;
}

/* Order tasks by start time (ties: the order they were placed in). */
static int ho_by_start(const void *a, const void *b)
{
	const double *x = a, *y = b;

	return x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : x[1] < y[1] ? -1 : x[1] > y[1];
}

int ho_order_by_start(const struct ho_problem *p, const double *ast, const uint32_t *placed_at,
		      uint32_t *order)
{
	double *pair = malloc((size_t)p->n * 3 * sizeof(double));

	if (!pair)
		return -1;
	for (uint32_t t = 0; t < p->n; t++) {
		pair[3 * t] = ast[t];
		pair[3 * t + 1] = placed_at[t];
		pair[3 * t + 2] = t;
	}
	qsort(pair, p->n, 3 * sizeof(double), ho_by_start);
	for (uint32_t i = 0; i < p->n; i++)
		order[i] = (uint32_t)pair[3 * i + 2];
	free(pair);
	return 0;
}

double *ho_comm_means(const struct ho_problem *p)
{
	double *mean = malloc((p->m + 1) * sizeof(double));

	if (mean)
		for (uint32_t k = 0; k < p->m; k++)
			mean[k] = ho_comm_mean(p, k);
	return mean;
}

uint32_t *ho_indegrees(const struct ho_problem *p)
{
	uint32_t *m = malloc((p->n + 1) * sizeof(uint32_t));

	if (m)
		for (uint32_t t = 0; t < p->n; t++)
			m[t] = p->pred_off[t + 1] - p->pred_off[t];
	return m;
}

/*
 * The placement phase shared by HEFT and PEFT: take the highest-ranked ready
 * task, put it where insertion gives the lowest EFT + bias (PEFT's bias is
 * the optimistic cost table row, HEFT's none), and return the plan ordered
 * by start time.
 */
int ho_list_schedule(const struct ho_problem *p, const double *rank, const double *bias,
		     struct ho_plan *out)
{
	double *aft = calloc(p->n + 1, sizeof(double)), *ast = calloc(p->n + 1, sizeof(double));
	uint32_t *placed = calloc(p->n + 1, sizeof(uint32_t)), *missing = ho_indegrees(p);
	uint8_t *taken = calloc(p->n + 1, 1);
	struct ho_slots slots[HO_MAX_DEVICES];
	int ret = -ENOMEM;

	memset(slots, 0, sizeof(slots));
	out->makespan = 0;
	if (!aft || !ast || !placed || !missing || !taken || ho_slots_init(slots, p->d, p->n))
		goto out;
	for (uint32_t step = 0; step < p->n; step++) {
		int64_t t = ho_ready_pop(p, rank, missing, taken);
		double best_key = INFINITY, best_est = 0, best_eft = 0;
		int best_dev = -1;

		if (t < 0) {
			ret = -ELOOP;
			goto out;
		}
		for (uint32_t j = 0; j < p->d; j++) {
			double w = p->comp[t * p->d + j], est, key;

			if (!(ho_list_devices(p, t) >> j & 1) || !isfinite(w))
				continue;
			est = ho_slots_earliest(
			    &slots[j], ho_ready_time(p, (uint32_t)t, (int)j, out->assign, aft), w);
			key = est + w + (bias ? bias[t * p->d + j] : 0);
			if (key < best_key) {
				best_key = key;
				best_est = est;
				best_eft = est + w;
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
out:
	ho_slots_free(slots, p->d);
	free(aft);
	free(ast);
	free(placed);
	free(missing);
	free(taken);
	return ret;
}
