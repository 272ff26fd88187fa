/* SPDX-License-Identifier: MIT */
/* Shared helpers of the list-scheduling baselines. Not installed. */
#ifndef HO_LISTSCHED_H
#define HO_LISTSCHED_H

#include <string.h>

#include "sched_priv.h"

int ho_slots_init(struct ho_slots *s, uint32_t d, uint32_t n);
void ho_slots_free(struct ho_slots *s, uint32_t d);

/* First index of the sorted a[0..n) whose value is above x (n if none). */
static inline uint32_t ho_first_above(const double *a, uint32_t n, double x)
{
	uint32_t lo = 0, hi = n;

	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;

		if (a[mid] <= x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * Earliest start >= ready of a gap of length dur (insertion policy of HEFT),
 * looking at no more than max_scan intervals before settling for the end.
 * Inline: the simulator books a slot for every task of every evaluation.
 */
static inline double ho_slots_earliest_bounded(const struct ho_slots *s, double ready, double dur,
					       uint32_t max_scan)
{
	uint32_t lo;
	double t = ready;

	if (!s->n || ready >= s->e[s->n - 1])
		return ready; /* the common case: after everything booked */
	/* Intervals never overlap, so their ends are sorted too: skip those over by ready. */
	lo = ho_first_above(s->e, s->n, ready);
	if (s->n - lo > max_scan)
		return s->e[s->n - 1] > ready ? s->e[s->n - 1] : ready;
	for (uint32_t i = lo; i < s->n; i++) {
		if (t + dur <= s->s[i])
			return t;
		if (s->e[i] > t)
			t = s->e[i];
	}
	return t;
}

static inline double ho_slots_earliest(const struct ho_slots *s, double ready, double dur)
{
	return ho_slots_earliest_bounded(s, ready, dur, UINT32_MAX);
}

static inline void ho_slots_insert(struct ho_slots *s, double start, double end)
{
	uint32_t i;

	/* Empty intervals occupy nothing, and would break the sorted ends above. */
	if (end <= start)
		return;
	/* After the intervals that start at or before it: at the end (the common
	 * case), else by bisection rather than a walk back over the timeline. */
	i = !s->n || start >= s->s[s->n - 1] ? s->n : ho_first_above(s->s, s->n, start);
	bool left = i > 0 && start - s->e[i - 1] < s->min_gap,
	     right = i < s->n && s->s[i] - end < s->min_gap;

	if (left && right) { /* fills the gap but for slivers: one interval */
		s->e[i - 1] = s->e[i];
		memmove(&s->s[i], &s->s[i + 1], (s->n - i - 1) * sizeof(double));
		memmove(&s->e[i], &s->e[i + 1], (s->n - i - 1) * sizeof(double));
		s->n--;
		return;
	}
	if (left) {
		s->e[i - 1] = end;
		return;
	}
	if (right) {
		s->s[i] = start;
		return;
	}
	if (i < s->n) { /* appending moves nothing */
		memmove(&s->s[i + 1], &s->s[i], (s->n - i) * sizeof(double));
		memmove(&s->e[i + 1], &s->e[i], (s->n - i) * sizeof(double));
	}
	s->s[i] = start;
	s->e[i] = end;
	s->n++;
}

/* Out of line: filling a gap is rare, and inlining it bloats the simulator's loop. */
double ho_slots_book_gap(struct ho_slots *s, double ready, double dur);
/* How much of [from, to) the booked intervals cover. */
double ho_slots_overlap(const struct ho_slots *s, double from, double to);

/* Earliest slot for dur at or after ready, booked; the simulator's per-task step. */
static inline double ho_slots_book(struct ho_slots *s, double ready, double dur)
{
	if (!s->n || ready >= s->e[s->n - 1]) { /* after everything booked: no gap to search */
		ho_slots_insert(s, ready, ready + dur);
		return ready;
	}
	return ho_slots_book_gap(s, ready, dur);
}

double ho_ready_time(const struct ho_problem *p, uint32_t t, int dev, const uint16_t *assign,
		     const double *aft);
int64_t ho_ready_pop(const struct ho_problem *p, const double *rank, uint32_t *missing,
		     uint8_t *taken);
int ho_order_by_start(const struct ho_problem *p, const double *ast, const uint32_t *placed_at,
		      uint32_t *order);
uint32_t *ho_indegrees(const struct ho_problem *p);
/* ho_comm_mean of every item, computed once (malloc'ed; NULL on failure). */
double *ho_comm_means(const struct ho_problem *p);
int ho_list_schedule(const struct ho_problem *p, const double *rank, const double *bias,
		     struct ho_plan *out);

#endif
