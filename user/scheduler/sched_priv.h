/* SPDX-License-Identifier: MIT */
/* Scheduler internals shared by its files. Not installed. */
#ifndef HO_SCHED_PRIV_H
#define HO_SCHED_PRIV_H

#include <jansson.h>
#include <stddef.h>

#include "common.h"
#include "heteroopt/sched.h"

#define HO_EXTERNAL UINT32_MAX /* item produced outside the graph (a graph input on the host) */

/*
 * The devices a heuristic may put task t on: those it is allowed, less the
 * devices that are others' cores as one (box alternative_to), which only
 * their "alone" baseline and the search's seeds of it use; all it is allowed
 * where that leaves none.
 */
static inline uint64_t ho_list_devices(const struct ho_problem *p, uint32_t t)
{
	uint64_t m = p->allowed[t] & ~p->whole;

	return m ? m : p->allowed[t];
}

struct ho_problem *ho_problem_alloc(uint32_t n, uint32_t d);
int ho_problem_alloc_items(struct ho_problem *p, uint32_t m, bool matrix);
int ho_problem_link(struct ho_problem *p, uint32_t n_edges, const uint32_t *edge_item,
		    const uint32_t *edge_task, struct ho_error *err);

/* The end of every problem builder: hand p out on success, free it on error. */
static inline int ho_problem_publish(struct ho_problem *p, int ret, struct ho_problem **out)
{
	if (ret) {
		ho_problem_free(p);
		return ret;
	}
	*out = p;
	return 0;
}

/* ---- precisions (precision.c) ---- */
/* The precisions task t may be given (float32 first): those some device it is allowed
 * offers for it, where its sensitivity was measured; how many, into q. */
uint32_t ho_precision_choices(const struct ho_problem *p, uint32_t t, uint32_t *q);
/* Each task's gene, at rate, to a random one of its choices. */
void ho_precision_mutate(const struct ho_problem *p, struct ho_rng *rng, uint8_t *prec,
			 double rate);
/* Every task that may be given precision k given it; the others float32. */
void ho_precision_uniform(const struct ho_problem *p, uint32_t k, uint8_t *prec);
/* Tasks on the devices assign gives them, reduced while their errors sum within budget:
 * the (task, precision) that saves the most time per unit of error first, each task at
 * most once (a constructive seed: single mutations reach a budget's worth slowly). */
int ho_precision_fill(const struct ho_problem *p, const uint16_t *assign, double budget,
		      uint8_t *prec);

/* ---- layouts (layouts.c) ---- */
/* Fill p's layout members from the backends' answers (ho_problem_from_graph_on, after
 * ho_problem_link): nothing where no channels-last device has a measured relayout rate. */
int ho_problem_layouts(const struct ho_graph *g, const struct ho_profile *prof,
		       const struct ho_backend_view *bv, const int32_t *task_of,
		       const int32_t *item_of, struct ho_problem *p);
/* nhwc[k] (m): whether item k is channels-last with tasks placed as assign says. */
void ho_layouts_under(const struct ho_problem *p, const uint16_t *assign, uint8_t *nhwc);
/* Seconds task t spends on dev turning its tensors between layouts, given nhwc. */
double ho_relayout_time(const struct ho_problem *p, uint32_t t, int dev, const uint8_t *nhwc);
/* Free p's layout members: no per-plan layouts, every device keeps the ones it keeps alone. */
void ho_layouts_drop(struct ho_problem *p);

/* Uncontended time to move item k from device a to b (0 if a == b). */
double ho_comm_time(const struct ho_problem *p, uint32_t k, int a, int b);
/* Mean of ho_comm_time over ordered device pairs a != b (HEFT's c-bar). */
double ho_comm_mean(const struct ho_problem *p, uint32_t k);

/* Insertion-based earliest start on a device timeline (HEFT/PEFT). */
struct ho_slots {
	uint32_t n, cap;
	double *s, *e; /* sorted busy intervals */
	/*
	 * Gaps shorter than this are booked as busy: no task on the device is that
	 * short, so none could use them, and a timeline full of such slivers made
	 * every insertion scan them.  0 (the default) keeps every gap.
	 */
	double min_gap;
};

#endif
