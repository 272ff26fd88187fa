// SPDX-License-Identifier: MIT
/*
 * NSGA-II (Deb et al., IEEE TEC 6(2), 2002) over schedules.
 *
 * Chromosome: a device per task and a priority order kept topologically
 * valid.  Crossover: one-point on devices, order crossover (OX) on the order
 * with a Kahn repair that follows the child's priorities.  Mutation: random
 * device, a neighbour's device (saves a transfer), and moving a task inside
 * its dependency window.  Memetic part: many offspring are single small moves
 * of the front's extremes (the fastest schedule's critical path, the least
 * energy, the shortest period), and the moves that improved an extreme are
 * also tried all together; other offspring re-choose the devices of a
 * stretch of the fastest schedule around a critical task.  Seeds and random
 * orders get their devices from a contention-aware EFT decoder
 * (ho_sim_decode); while energy is an objective, decoding at random energy
 * weights aims at the schedules between the extremes.  Constraint
 * domination (Deb 2000) ranks feasible before infeasible and infeasible by
 * total violation.  All randomness comes from one seeded generator in the
 * calling thread; worker threads only evaluate, so a seed reproduces the
 * front bit for bit.
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "listsched.h"

struct ho_ind {
	uint16_t *assign;
	uint32_t *order;
	uint8_t *prec; /* precision genes (ho_task_precision): all 0 without precisions */
	int8_t ext;    /* index of the extreme it is a small move of, -1 none */
	uint8_t order_moved;
	/* Devices to re-choose by contention-aware EFT while evaluating: none if dec.to is 0. */
	struct ho_decode dec;
	struct ho_eval ev;
	uint32_t rank;
	double crowd;
};

struct ho_ga {
	const struct ho_problem *p;
	const struct ho_search_opts *o;
	struct ho_rng rng;
	uint32_t n, k;	       /* tasks, objectives in use */
	bool trade;	       /* energy is an objective: aim at points between extremes */
	int obj[HO_OBJ_COUNT]; /* their enum values */
	uint32_t *group;       /* representative task of each task's chain */
	struct ho_ind *pool;   /* 2 * population: parents then offspring */
	struct ho_ind **sorted;
	struct ho_ind *tmp;
	uint32_t *pos, *heap, *indeg; /* scratch for order operators */
	uint32_t shared_blocks;	      /* tasks whose device follows an identical block's */
	uint64_t evaluations;
	double lo[HO_OBJ_COUNT], hi[HO_OBJ_COUNT];
	const double **hv_pts; /* objectives of the first front */
};

/*
 * Offspring pairs that are small moves of the fastest schedule along its
 * critical path, and of the best in each other objective; the rest come from
 * crossover, and a share of those get their devices from the contention-aware
 * decoder.  Chosen by measuring, on the 1000-task bench graph, which kind of
 * child improved an extreme: the moves most often, decoded children when the
 * decoder sees contention (a contention-blind one never did).
 */
#define HO_CP_SHARE 0.4
#define HO_EXTREME_SHARE 0.25
#define HO_DECODE_SHARE 0.3
/*
 * Of the critical-path offspring, the share that re-decode a stretch of 8 to
 * 127 tasks around a critical task instead, and of those the share that also
 * shuffle its order.  Over 100 random DAGs this took the fastest member's
 * gain over HEFT from 4.0% to 5.1%, and left the bench graph's unchanged.
 */
#define HO_WINDOW_SHARE 0.75
#define HO_WINDOW_SHUFFLE 0.3
#define HO_WINDOW_MIN 8
#define HO_WINDOW_SPREAD 120
/*
 * Half the offspring of the least-energy schedule re-decode a stretch around
 * a random task with energy charged at 4 x the box's idle power (a joule
 * weighs what the idle devices burn in 4 J / idle W).  On the bench graph,
 * means of 4 seeds x 2 sets: least energy 0.1471 -> 0.1405 J and 0.1499 ->
 * 0.1426 J, fastest 1.732 -> 1.701 ms and 1.746 -> 1.713 ms; weights 1, 2, 8
 * and a share of 0.8 did less.
 */
#define HO_ENERGY_WINDOW_SHARE 0.5
#define HO_ENERGY_WINDOW_WEIGHT 4.0
/*
 * The schedules between the extremes, aimed at directly: the decoder charges
 * energy at a weight drawn from [0, 12) (0: fastest), which picks a point of
 * the trade-off.  The seeds' orders so decoded fill the first population up
 * to three quarters, three quarters of the local-search section re-decode a
 * stretch of a random first-front member, and half the decoded crossover
 * children draw a weight.  Only while energy is an objective.  On the bench
 * graph, 48 seeds against the union of twelve 10x fronts: hypervolume 95.4%
 * -> 98.0%, fastest 1.711 -> 1.681 ms, least energy 0.1413 -> 0.1348 J, for
 * 4% more time; against each seed's own 10x run (12 seeds) the median went
 * from 97.0% to 98.2%.
 */
#define HO_TRADE_WEIGHT_MAX 12.0
#define HO_TRADE_FIRST_SHARE 0.75
#define HO_TRADE_LOCAL_SHARE 0.75
#define HO_TRADE_DECODE_SHARE 0.5

static bool feasible(const struct ho_ind *a)
{
	return a->ev.violation <= 0;
}

/* Constraint domination. */
static bool dominates(const struct ho_ga *ga, const struct ho_ind *a, const struct ho_ind *b)
{
	bool better = false;

	if (feasible(a) != feasible(b))
		return feasible(a);
	if (!feasible(a))
		return a->ev.violation < b->ev.violation;
	for (uint32_t i = 0; i < ga->k; i++) {
		double x = a->ev.obj[ga->obj[i]], y = b->ev.obj[ga->obj[i]];

		if (x > y)
			return false;
		if (x < y)
			better = true;
	}
	return better;
}

/* ---- evaluation, spread over threads ---- */

struct ho_eval_job {
	struct ho_ga *ga;
	struct ho_ind *ind;
	uint32_t count;
	struct ho_sim *sim;
	int ret;
};

/* Re-choose every device (or none) while evaluating. */
static struct ho_decode ho_whole_order(const struct ho_ga *ga, bool on)
{
	return (struct ho_decode){0, on ? ga->n : 0, 0};
}

static void *ho_eval_worker(void *arg)
{
	struct ho_eval_job *j = arg;

	for (uint32_t i = 0; i < j->count && !j->ret; i++) {
		struct ho_ind *c = &j->ind[i];

		ho_sim_precision(j->sim, j->ga->p->n_prec > 1 ? c->prec : NULL);
		if (c->dec.to) {
			struct ho_decode how = c->dec;

			c->dec.to = 0;
			j->ret = ho_sim_decode_window(j->sim, c->assign, c->order, &how,
						      &j->ga->o->constraints, &c->ev, NULL);
			continue;
		}
		j->ret = ho_sim_eval(j->sim, j->ind[i].assign, j->ind[i].order,
				     &j->ga->o->constraints, &j->ind[i].ev, NULL);
	}
	return NULL;
}

static int ho_eval_all(struct ho_ga *ga, struct ho_ind *ind, uint32_t count, struct ho_sim **sims,
		       uint32_t threads)
{
	struct ho_eval_job jobs[64];
	pthread_t tid[64];
	uint32_t per = (count + threads - 1) / threads, started = 0;
	int ret = 0;

	for (uint32_t t = 0; t < threads; t++) {
		uint32_t first = t * per,
			 n = first < count ? (count - first < per ? count - first : per) : 0;

		jobs[t] = (struct ho_eval_job){ga, ind + first, n, sims[t], 0};
		if (t == 0 || !n)
			continue;
		if (pthread_create(&tid[t], NULL, ho_eval_worker, &jobs[t]))
			ho_eval_worker(&jobs[t]); /* no thread: do it here */
		else
			started |= 1u << t;
	}
	ho_eval_worker(&jobs[0]);
	for (uint32_t t = 1; t < threads; t++)
		if (started >> t & 1)
			pthread_join(tid[t], NULL);
	for (uint32_t t = 0; t < threads; t++)
		if (jobs[t].ret)
			ret = jobs[t].ret;
	ga->evaluations += count;
	return ret;
}

/* ---- order operators ---- */

/* Kahn's algorithm taking, among ready tasks, the one with the lowest key. */
static void ho_repair(struct ho_ga *ga, const uint32_t *key, uint32_t *out)
{
	const struct ho_problem *p = ga->p;
	uint32_t *heap = ga->heap, hn = 0, w = 0;

	for (uint32_t t = 0; t < p->n; t++) {
		ga->indeg[t] = p->pred_off[t + 1] - p->pred_off[t];
		if (!ga->indeg[t]) {
			uint32_t i = hn++;

			while (i && key[heap[(i - 1) / 2]] > key[t]) {
				heap[i] = heap[(i - 1) / 2];
				i = (i - 1) / 2;
			}
			heap[i] = t;
		}
	}
	while (hn) {
		uint32_t t = heap[0], last = heap[--hn], i = 0;

		for (;;) { /* sift last down from the root */
			uint32_t c = 2 * i + 1;

			if (c >= hn)
				break;
			if (c + 1 < hn && key[heap[c + 1]] < key[heap[c]])
				c++;
			if (key[heap[c]] >= key[last])
				break;
			heap[i] = heap[c];
			i = c;
		}
		if (hn)
			heap[i] = last;
		out[w++] = t;
		for (uint32_t s = p->succ_off[t]; s < p->succ_off[t + 1]; s++) {
			uint32_t v = p->succ[s];

			if (--ga->indeg[v] == 0) {
				uint32_t j = hn++;

				while (j && key[heap[(j - 1) / 2]] > key[v]) {
					heap[j] = heap[(j - 1) / 2];
					j = (j - 1) / 2;
				}
				heap[j] = v;
			}
		}
	}
}

/* OX: a slice of parent a's order, the rest in parent b's sequence, then repair. */
static void ho_order_crossover(struct ho_ga *ga, const uint32_t *a, const uint32_t *b,
			       uint32_t *child)
{
	uint32_t n = ga->n, lo = ho_rng_below(&ga->rng, n), hi = ho_rng_below(&ga->rng, n), w = 0;
	uint32_t *key = ga->pos;
	uint8_t *in_slice;

	if (lo > hi) {
		uint32_t t = lo;

		lo = hi;
		hi = t;
	}
	in_slice = (uint8_t *)child; /* child doubles as a flag array until filled */
	memset(in_slice, 0, n);
	for (uint32_t i = lo; i <= hi; i++)
		in_slice[a[i]] = 1;
	/* Keys: b's order outside the slice, a's slice kept at positions lo..hi. */
	for (uint32_t i = 0; i < n; i++) {
		if (w == lo)
			w = hi + 1;
		if (!in_slice[b[i]])
			key[b[i]] = w++;
	}
	for (uint32_t i = lo; i <= hi; i++)
		key[a[i]] = i;
	ho_repair(ga, key, child);
}

/* Move task t to a random place between its last predecessor and first successor. */
static void ho_order_mutation_task(struct ho_ga *ga, uint32_t *order, uint32_t t)
{
	const struct ho_problem *p = ga->p;
	uint32_t n = ga->n, from, lo = 0, hi, to;

	for (uint32_t i = 0; i < n; i++)
		ga->pos[order[i]] = i;
	from = ga->pos[t];
	hi = n - 1;
	for (uint32_t k = p->pred_off[t]; k < p->pred_off[t + 1]; k++)
		if (ga->pos[p->pred[k]] + 1 > lo)
			lo = ga->pos[p->pred[k]] + 1;
	for (uint32_t k = p->succ_off[t]; k < p->succ_off[t + 1]; k++)
		if (ga->pos[p->succ[k]] - 1 < hi)
			hi = ga->pos[p->succ[k]] - 1;
	if (hi <= lo)
		return;
	to = lo + ho_rng_below(&ga->rng, hi - lo + 1);
	if (to > from)
		memmove(&order[from], &order[from + 1], (to - from) * sizeof(*order));
	else if (to < from)
		memmove(&order[to + 1], &order[to], (from - to) * sizeof(*order));
	order[to] = t;
}

static void ho_order_mutation(struct ho_ga *ga, uint32_t *order)
{
	ho_order_mutation_task(ga, order, ho_rng_below(&ga->rng, ga->n));
}

static uint16_t ho_random_device(struct ho_ga *ga, uint32_t t)
{
	uint64_t mask = ga->p->allowed[t];
	uint32_t n = (uint32_t)__builtin_popcountll(mask), pick = ho_rng_below(&ga->rng, n);

	for (uint32_t j = 0; j < ga->p->d; j++)
		if (mask >> j & 1 && pick-- == 0)
			return (uint16_t)j;
	return 0;
}

static void ho_apply_groups(struct ho_ga *ga, uint16_t *assign)
{
	if (!ga->group)
		return;
	for (uint32_t i = 0; i < ga->n; i++) {
		uint32_t t = ga->p->topo[i];

		if (ga->group[t] != t && (ga->p->allowed[t] >> assign[ga->group[t]] & 1))
			assign[t] = assign[ga->group[t]];
	}
}

static uint32_t ho_degree(const struct ho_problem *p, uint32_t t)
{
	return (p->pred_off[t + 1] - p->pred_off[t]) + (p->succ_off[t + 1] - p->succ_off[t]);
}

/* t takes a random neighbour's device (t has one): removes the copy between them. */
static void ho_follow_neighbour(struct ho_ga *ga, struct ho_ind *c, uint32_t t)
{
	const struct ho_problem *p = ga->p;
	uint32_t k = ho_rng_below(&ga->rng, ho_degree(p, t)),
		 np = p->pred_off[t + 1] - p->pred_off[t];
	uint32_t nb = k < np ? p->pred[p->pred_off[t] + k] : p->succ[p->succ_off[t] + k - np];

	if (p->allowed[t] >> c->assign[nb] & 1)
		c->assign[t] = c->assign[nb];
}

static void ho_mutate(struct ho_ga *ga, struct ho_ind *c)
{
	const struct ho_problem *p = ga->p;
	double rate = ga->o->mutation > 0 ? ga->o->mutation : 1.0 / ga->n;

	for (uint32_t t = 0; t < ga->n; t++) {
		if (ho_rng_unit(&ga->rng) >= rate)
			continue;
		if (ho_degree(p, t) && ho_rng_unit(&ga->rng) < 0.5) {
			ho_follow_neighbour(ga, c, t);
		} else {
			c->assign[t] = ho_random_device(ga, t);
		}
	}
	ho_apply_groups(ga, c->assign);
	ho_precision_mutate(p, &ga->rng, c->prec, rate);
	if (ho_rng_unit(&ga->rng) < 0.5)
		ho_order_mutation(ga, c->order);
}

/* ---- critical-path guided mutation ---- */

static int ho_by_start_dev(const void *a, const void *b, void *arg)
{
	const double *st = arg;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return st[x] < st[y] ? -1 : st[x] > st[y] ? 1 : x < y ? -1 : x > y;
}

/*
 * Walk back from the last task to finish along whatever delayed each task:
 * the task before it on its device, or the input that arrived last.  Moving
 * those tasks is what can shorten the schedule.
 */
static uint32_t ho_critical_path(struct ho_ga *ga, const struct ho_ind *b, struct ho_sim *sim,
				 struct ho_timeline *tl, uint32_t *out, uint32_t max)
{
	const struct ho_problem *p = ga->p;
	uint32_t n = p->n, *byst = ga->heap, *prev = ga->indeg, cnt = 0, v = 0;
	struct ho_eval ev;

	ho_sim_precision(sim, ga->p->n_prec > 1 ? b->prec : NULL);
	if (ho_sim_eval(sim, b->assign, b->order, &ga->o->constraints, &ev, tl))
		return 0;
	for (uint32_t t = 0; t < n; t++) {
		byst[t] = t;
		if (tl->end[t] > tl->end[v])
			v = t;
	}
	qsort_r(byst, n, sizeof(*byst), ho_by_start_dev, tl->start);
	{
		uint32_t last[HO_MAX_DEVICES];

		for (uint32_t j = 0; j < p->d; j++)
			last[j] = UINT32_MAX;
		for (uint32_t i = 0; i < n; i++) {
			uint32_t t = byst[i];

			prev[t] = last[b->assign[t]];
			last[b->assign[t]] = t;
		}
	}
	while (cnt < max) {
		uint32_t next = UINT32_MAX;

		out[cnt++] = v;
		if (tl->start[v] <= 0)
			break;
		for (uint32_t e = p->in_off[v]; e < p->in_off[v + 1] && next == UINT32_MAX; e++) {
			uint32_t k = p->in_items[e], prod = p->item_prod[k];

			if (prod == UINT32_MAX)
				continue;
			if (b->assign[prod] == b->assign[v]
				? tl->end[prod] == tl->start[v]
				: tl->end[prod] < tl->start[v] &&
				      tl->end[prod] >= tl->start[v] * 0.5)
				next = prod;
		}
		if (prev[v] != UINT32_MAX && tl->end[prev[v]] == tl->start[v])
			next = prev[v];
		if (next == UINT32_MAX) {
			/* data-bound through a copy: the latest-finishing producer */
			for (uint32_t e = p->in_off[v]; e < p->in_off[v + 1]; e++) {
				uint32_t prod = p->item_prod[p->in_items[e]];

				if (prod != UINT32_MAX &&
				    (next == UINT32_MAX || tl->end[prod] > tl->end[next]))
					next = prod;
			}
		}
		if (next == UINT32_MAX)
			break;
		v = next;
	}
	return cnt;
}

/* The device where t's inputs (as the best schedule delivers them) let it finish first. */
static uint16_t ho_eft_device(struct ho_ga *ga, const struct ho_ind *b,
			      const struct ho_timeline *tl, uint32_t t)
{
	const struct ho_problem *p = ga->p;
	double best = INFINITY;
	uint16_t dev = b->assign[t];

	for (uint32_t j = 0; j < p->d; j++) {
		double ready, w = ho_task_comp(p, b->prec, t, j);

		if (!(ho_list_devices(p, t) >> j & 1) || !isfinite(w))
			continue;
		ready = ho_ready_time(p, t, (int)j, b->assign, tl->end);
		if (ready + w < best) {
			best = ready + w;
			dev = (uint16_t)j;
		}
	}
	return dev;
}

static void ho_cp_mutant(struct ho_ga *ga, const struct ho_ind *b, const struct ho_timeline *tl,
			 struct ho_ind *c, const uint32_t *cp, uint32_t ncp)
{
	uint32_t moves = 1 + ho_rng_below(&ga->rng, 3);

	memcpy(c->assign, b->assign, ga->n * sizeof(uint16_t));
	memcpy(c->prec, b->prec, ga->n);
	memcpy(c->order, b->order, ga->n * sizeof(uint32_t));
	c->order_moved = 0;
	for (uint32_t m = 0; m < moves; m++) {
		uint32_t t = cp[ho_rng_below(&ga->rng, ncp)];
		double r = ho_rng_unit(&ga->rng);

		if (r < 0.4)
			c->assign[t] = ho_eft_device(ga, b, tl, t);
		else if (r < 0.75)
			c->assign[t] = ho_random_device(ga, t);
		else {
			ho_order_mutation_task(ga, c->order, t);
			c->order_moved = 1;
		}
	}
}

/*
 * An extreme with the devices of a stretch of its order around task t
 * re-chosen by the contention-aware decoder, the rest kept: a coordinated
 * change of tasks that run at about the same time, which single moves reach
 * slowly.  Some also shuffle the stretch's order (repaired).  energy_weight
 * is the decoder's (struct ho_decode): 0 for the fastest schedule.
 */
static void ho_window_mutant(struct ho_ga *ga, const struct ho_ind *b, struct ho_ind *c, uint32_t t,
			     double energy_weight)
{
	uint32_t w = HO_WINDOW_MIN + ho_rng_below(&ga->rng, HO_WINDOW_SPREAD), at = 0;

	w = w < ga->n ? w : ga->n;
	memcpy(c->assign, b->assign, ga->n * sizeof(uint16_t));
	memcpy(c->prec, b->prec, ga->n);
	memcpy(c->order, b->order, ga->n * sizeof(uint32_t));
	while (b->order[at] != t)
		at++;
	at = at > w / 2 ? at - w / 2 : 0;
	c->dec.from = at + w > ga->n ? ga->n - w : at;
	c->dec.to = c->dec.from + w;
	c->dec.energy_weight = energy_weight;
	c->order_moved = 0;
	if (ho_rng_unit(&ga->rng) < HO_WINDOW_SHUFFLE) {
		/* Keys: the position outside the stretch, a random one inside. */
		for (uint32_t i = 0; i < ga->n; i++)
			ga->pos[b->order[i]] = i >= c->dec.from && i < c->dec.to
						   ? c->dec.from + ho_rng_below(&ga->rng, w)
						   : i;
		ho_repair(ga, ga->pos, c->order);
		c->order_moved = 1;
	}
}

/*
 * Small moves around the best schedule in one other objective, aimed at it:
 * energy moves a task to the device that spends least on it, throughput
 * moves a task off the busiest device; either may instead follow a
 * neighbour's device, which removes a copy.
 */
static void ho_extreme_mutant(struct ho_ga *ga, const struct ho_ind *b, int obj, struct ho_ind *c)
{
	const struct ho_problem *p = ga->p;
	uint32_t moves = 1 + ho_rng_below(&ga->rng, 3), hot = 0;

	memcpy(c->assign, b->assign, ga->n * sizeof(uint16_t));
	memcpy(c->prec, b->prec, ga->n);
	memcpy(c->order, b->order, ga->n * sizeof(uint32_t));
	c->order_moved = 0;
	for (uint32_t j = 1; j < p->d; j++)
		if (b->ev.busy[j] > b->ev.busy[hot])
			hot = j;
	for (uint32_t m = 0; m < moves; m++) {
		uint32_t t = ho_rng_below(&ga->rng, ga->n);
		double r = ho_rng_unit(&ga->rng), best = INFINITY;

		if (obj == HO_OBJ_THROUGHPUT)
			for (int tries = 0; tries < 16 && c->assign[t] != hot; tries++)
				t = ho_rng_below(&ga->rng, ga->n);
		if (r < 0.5 && ho_degree(p, t)) {
			ho_follow_neighbour(ga, c, t);
			continue;
		}
		if (obj == HO_OBJ_ENERGY && r < 0.8) {
			for (uint32_t j = 0; j < p->d; j++)
				if ((ho_list_devices(p, t) >> j & 1) &&
				    isfinite(p->comp[t * p->d + j]) &&
				    p->energy[t * p->d + j] < best) {
					best = p->energy[t * p->d + j];
					c->assign[t] = (uint16_t)j;
				}
		} else if (obj == HO_OBJ_THROUGHPUT && r < 0.8) {
			for (uint32_t j = 0; j < p->d; j++)
				if ((ho_list_devices(p, t) >> j & 1) &&
				    isfinite(p->comp[t * p->d + j]) &&
				    b->ev.busy[j] + p->comp[t * p->d + j] < best) {
					best = b->ev.busy[j] + p->comp[t * p->d + j];
					c->assign[t] = (uint16_t)j;
				}
		} else {
			c->assign[t] = ho_random_device(ga, t);
		}
	}
	ho_apply_groups(ga, c->assign);
	if (ho_rng_unit(&ga->rng) < 0.3) {
		ho_order_mutation(ga, c->order);
		c->order_moved = 1;
	}
}

/*
 * The small moves around one extreme that each improved its objective are
 * usually independent (different parts of the graph): apply them all at once.
 * One evaluation then does the work of many generations of single steps.
 */
static bool ho_combine_moves(struct ho_ga *ga, const struct ho_ind *b, int obj, int8_t e,
			     struct ho_ind *from, uint32_t count, struct ho_ind *c)
{
	uint32_t used = 0;

	memcpy(c->assign, b->assign, ga->n * sizeof(uint16_t));
	memcpy(c->prec, b->prec, ga->n);
	memcpy(c->order, b->order, ga->n * sizeof(uint32_t));
	for (uint32_t i = 0; i < count; i++) {
		const struct ho_ind *x = &from[i];

		if (x->ext != e || x->order_moved || !feasible(x) ||
		    x->ev.obj[obj] >= b->ev.obj[obj])
			continue;
		for (uint32_t t = 0; t < ga->n; t++)
			if (x->assign[t] != b->assign[t] || x->prec[t] != b->prec[t]) {
				c->assign[t] = x->assign[t];
				c->prec[t] = x->prec[t];
			}
		used++;
	}
	c->ext = -1;
	c->dec.to = 0;
	return used >= 2;
}

/* A random weight for the decoder: a random point of the energy-time trade-off. */
static double ho_trade_weight(struct ho_ga *ga)
{
	return HO_TRADE_WEIGHT_MAX * ho_rng_unit(&ga->rng);
}

/* ---- sorting and crowding ---- */

static void ho_nondominated_sort(struct ho_ga *ga, struct ho_ind *ind, uint32_t count)
{
	uint32_t *dom_count = (uint32_t *)ga->heap, *next = ga->indeg; /* scratch, >= 2N */
	uint32_t remaining = count, rank = 0;

	for (uint32_t i = 0; i < count; i++) {
		dom_count[i] = 0;
		ind[i].rank = UINT32_MAX;
		for (uint32_t j = 0; j < count; j++)
			if (j != i && dominates(ga, &ind[j], &ind[i]))
				dom_count[i]++;
	}
	while (remaining) {
		uint32_t nf = 0;

		for (uint32_t i = 0; i < count; i++)
			if (ind[i].rank == UINT32_MAX && dom_count[i] == 0)
				next[nf++] = i;
		for (uint32_t f = 0; f < nf; f++)
			ind[next[f]].rank = rank;
		for (uint32_t f = 0; f < nf; f++)
			for (uint32_t j = 0; j < count; j++)
				if (ind[j].rank == UINT32_MAX &&
				    dominates(ga, &ind[next[f]], &ind[j]))
					dom_count[j]--;
		remaining -= nf;
		rank++;
	}
}

static int ho_by_obj(const void *a, const void *b, void *arg)
{
	const struct ho_ind *x = *(struct ho_ind *const *)a, *y = *(struct ho_ind *const *)b;
	int m = *(const int *)arg;
	double u = x->ev.obj[m], v = y->ev.obj[m];

	return u < v ? -1 : u > v ? 1 : x < y ? -1 : x > y;
}

static void ho_crowding(struct ho_ga *ga, struct ho_ind **front, uint32_t nf)
{
	for (uint32_t i = 0; i < nf; i++)
		front[i]->crowd = 0;
	for (uint32_t m = 0; m < ga->k; m++) {
		double span;

		qsort_r(front, nf, sizeof(*front), ho_by_obj, &ga->obj[m]);
		front[0]->crowd = front[nf - 1]->crowd = INFINITY;
		span = front[nf - 1]->ev.obj[ga->obj[m]] - front[0]->ev.obj[ga->obj[m]];
		if (span <= 0)
			continue;
		for (uint32_t i = 1; i + 1 < nf; i++)
			front[i]->crowd +=
			    (front[i + 1]->ev.obj[ga->obj[m]] - front[i - 1]->ev.obj[ga->obj[m]]) /
			    span;
	}
}

static int ho_by_rank_crowd(const void *a, const void *b)
{
	const struct ho_ind *x = *(struct ho_ind *const *)a, *y = *(struct ho_ind *const *)b;

	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	if (x->crowd != y->crowd)
		return x->crowd > y->crowd ? -1 : 1;
	/* Full tie: a fixed order keeps runs reproducible. */
	for (int m = 0; m < HO_OBJ_COUNT; m++)
		if (x->ev.obj[m] != y->ev.obj[m])
			return x->ev.obj[m] < y->ev.obj[m] ? -1 : 1;
	return x < y ? -1 : x > y;
}

/* Rank the whole pool and sort it best first: the survivors are its first N. */
static void ho_environmental_selection(struct ho_ga *ga, uint32_t total)
{
	struct ho_ind **s = ga->sorted;

	ho_nondominated_sort(ga, ga->pool, total);
	for (uint32_t i = 0; i < total; i++)
		s[i] = &ga->pool[i];
	/* Crowding inside each front. */
	for (uint32_t r = 0;; r++) {
		uint32_t nf = 0;

		for (uint32_t i = 0; i < total; i++)
			if (ga->pool[i].rank == r)
				s[nf++] = &ga->pool[i];
		if (!nf)
			break;
		ho_crowding(ga, s, nf);
	}
	for (uint32_t i = 0; i < total; i++)
		s[i] = &ga->pool[i];
	qsort(s, total, sizeof(*s), ho_by_rank_crowd);
	/* Permute the pool into that order; genomes move by pointer. */
	for (uint32_t i = 0; i < total; i++)
		ga->tmp[i] = *s[i];
	memcpy(ga->pool, ga->tmp, total * sizeof(*ga->tmp));
}

static uint32_t ho_tournament(struct ho_ga *ga, uint32_t n)
{
	uint32_t a = ho_rng_below(&ga->rng, n), b = ho_rng_below(&ga->rng, n);
	const struct ho_ind *x = &ga->pool[a], *y = &ga->pool[b];

	if (x->rank != y->rank)
		return x->rank < y->rank ? a : b;
	return x->crowd >= y->crowd ? a : b;
}

/* ---- hypervolume ---- */

/* The first front's hypervolume in the box the initial population spans. */
static double ho_front_hv(struct ho_ga *ga, uint32_t count)
{
	uint32_t np = 0;
	double hv;

	for (uint32_t i = 0; i < count; i++)
		if (ga->pool[i].rank == 0 && feasible(&ga->pool[i]))
			ga->hv_pts[np++] = ga->pool[i].ev.obj;
	if (ho_hypervolume_points(ga->hv_pts, np, ga->obj, ga->k, ga->lo, ga->hi, &hv))
		return -1; /* out of memory: reads as no progress */
	return hv;
}

/* ---- set-up ---- */

static int ho_chain_groups(struct ho_ga *ga)
{
	const struct ho_problem *p = ga->p;

	ga->group = malloc(ga->n * sizeof(uint32_t));
	if (!ga->group)
		return -ENOMEM;
	for (uint32_t i = 0; i < ga->n; i++) {
		uint32_t t = p->topo[i];

		ga->group[t] = t;
		/* One producer with one consumer: the pair is a chain link. */
		if (p->pred_off[t + 1] - p->pred_off[t] == 1) {
			uint32_t pr = p->pred[p->pred_off[t]];

			if (p->succ_off[pr + 1] - p->succ_off[pr] == 1)
				ga->group[t] = ga->group[pr];
		}
	}
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * Repeated identical blocks (transformer layers, the stages of a CNN): tasks
 * whose signature and whose neighbours' signatures, two hops out, coincide
 * share one device gene, the first of them in topological order.
 */
static int ho_block_groups(struct ho_ga *ga)
{
	const struct ho_problem *p = ga->p;
	uint64_t *h = malloc(ga->n * sizeof(uint64_t)), *nh = malloc(ga->n * sizeof(uint64_t));
	uint64_t *nb = malloc((p->pred_off[ga->n] + p->succ_off[ga->n] + 1) * sizeof(uint64_t));
	struct ho_name_index ix;
	struct ho_arena a = {0};
	uint32_t shared = 0;

	if (!h || !nh || !nb || (!ga->group && !(ga->group = malloc(ga->n * sizeof(uint32_t))))) {
		free(h);
		free(nh);
		free(nb);
		return -ENOMEM;
	}
	memcpy(h, p->task_sig, ga->n * sizeof(uint64_t));
	for (int round = 0; round < 2; round++) {
		for (uint32_t t = 0; t < ga->n; t++) {
			uint32_t c = 0;

			for (uint32_t k = p->pred_off[t]; k < p->pred_off[t + 1]; k++)
				nb[c++] = h[p->pred[k]];
			qsort(nb, c, sizeof(*nb), cmp_u64);
			nh[t] = ho_fingerprint_bytes(h[t], nb, c * sizeof(*nb));
			c = 0;
			for (uint32_t k = p->succ_off[t]; k < p->succ_off[t + 1]; k++)
				nb[c++] = h[p->succ[k]];
			qsort(nb, c, sizeof(*nb), cmp_u64);
			nh[t] = ho_fingerprint_bytes(nh[t] ^ 0x9e37u, nb, c * sizeof(*nb));
		}
		memcpy(h, nh, ga->n * sizeof(uint64_t));
	}
	if (ho_index_init(&ix, &a, ga->n)) {
		free(h);
		free(nh);
		free(nb);
		ho_arena_release(&a);
		return -ENOMEM;
	}
	/* The index keys are strings: spell each hash in hex inside the arena. */
	for (uint32_t i = 0; i < ga->n; i++) {
		uint32_t t = p->topo[i];
		char *key = ho_arena_alloc(&a, 17);
		int32_t rep;

		if (!key)
			break;
		snprintf(key, 17, "%016llx", (unsigned long long)h[t]);
		rep = ho_index_put(&ix, key, (int32_t)t);
		if (!ga->o->coarsen_chains || ga->group[t] == t)
			ga->group[t] = rep >= 0 ? (uint32_t)rep : t;
		shared += rep >= 0;
	}
	ga->shared_blocks = shared;
	ho_arena_release(&a);
	free(h);
	free(nh);
	free(nb);
	return 0;
}

static void ho_random_individual(struct ho_ga *ga, struct ho_ind *c, bool balanced)
{
	const struct ho_problem *p = ga->p;
	double load[HO_MAX_DEVICES] = {0};

	for (uint32_t t = 0; t < ga->n; t++)
		ga->pos[t] = (uint32_t)ho_rng_below(&ga->rng, 1u << 30);
	ho_repair(ga, ga->pos, c->order);
	for (uint32_t i = 0; i < ga->n; i++) {
		uint32_t t = c->order[i];

		if (!balanced) {
			c->assign[t] = ho_random_device(ga, t);
			continue;
		}
		/* Least loaded device that can run it, loads in its own time units. */
		double best = INFINITY;

		for (uint32_t j = 0; j < p->d; j++) {
			double w = p->comp[t * p->d + j];

			if ((ho_list_devices(p, t) >> j & 1) && isfinite(w) && load[j] + w < best) {
				best = load[j] + w;
				c->assign[t] = (uint16_t)j;
			}
		}
		load[c->assign[t]] += p->comp[t * p->d + c->assign[t]];
	}
	ho_apply_groups(ga, c->assign);
}

void ho_search_defaults(struct ho_search_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->population = 128;
	o->generations = 200;
	o->seed = 1;
	o->objectives = 1u << HO_OBJ_LATENCY | 1u << HO_OBJ_THROUGHPUT | 1u << HO_OBJ_ENERGY;
	o->crossover = 0.9;
	o->mutation = 0;
	o->stall_window = 40;
}

void ho_front_free(struct ho_front *f)
{
	if (!f)
		return;
	for (uint32_t i = 0; i < f->n; i++) {
		free(f->sol[i].assign);
		free(f->sol[i].order);
		free(f->sol[i].prec);
	}
	free(f->sol);
	free(f);
}

static void ho_ga_free(struct ho_ga *ga, uint32_t total)
{
	for (uint32_t i = 0; ga->pool && i < total; i++) {
		free(ga->pool[i].assign);
		free(ga->pool[i].order);
		free(ga->pool[i].prec);
	}
	free(ga->pool);
	free(ga->sorted);
	free(ga->tmp);
	free(ga->pos);
	free(ga->heap);
	free(ga->indeg);
	free(ga->group);
	free(ga->hv_pts);
}

static int ho_make_front(struct ho_ga *ga, uint32_t count, double hv, uint32_t gens,
			 struct ho_front **out)
{
	struct ho_front *f = calloc(1, sizeof(*f));
	bool any_feasible = false;

	if (!f)
		return -ENOMEM;
	for (uint32_t i = 0; i < count; i++)
		any_feasible |= feasible(&ga->pool[i]);
	f->sol = calloc(count, sizeof(*f->sol));
	if (!f->sol) {
		free(f);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < count; i++) {
		const struct ho_ind *c = &ga->pool[i];
		bool dup = false;

		if (c->rank != 0 || (any_feasible && !feasible(c)))
			continue;
		for (uint32_t j = 0; j < f->n && !dup; j++) {
			dup = true;
			for (uint32_t m = 0; m < ga->k; m++)
				dup &= f->sol[j].ev.obj[ga->obj[m]] == c->ev.obj[ga->obj[m]];
		}
		if (dup)
			continue;
		struct ho_solution *s = &f->sol[f->n];

		s->assign = malloc(ga->n * sizeof(uint16_t));
		s->order = malloc(ga->n * sizeof(uint32_t));
		s->prec = ga->p->n_prec > 1 ? malloc(ga->n + 1) : NULL;
		if (!s->assign || !s->order || (ga->p->n_prec > 1 && !s->prec)) {
			free(s->assign);
			free(s->order);
			free(s->prec);
			ho_front_free(f);
			return -ENOMEM;
		}
		if (s->prec)
			memcpy(s->prec, c->prec, ga->n);
		memcpy(s->assign, c->assign, ga->n * sizeof(uint16_t));
		memcpy(s->order, c->order, ga->n * sizeof(uint32_t));
		s->ev = c->ev;
		f->n++;
	}
	/* Lowest latency first. */
	for (uint32_t i = 1; i < f->n; i++)
		for (uint32_t j = i; j > 0 && f->sol[j].ev.obj[HO_OBJ_LATENCY] <
						  f->sol[j - 1].ev.obj[HO_OBJ_LATENCY];
		     j--) {
			struct ho_solution t = f->sol[j];

			f->sol[j] = f->sol[j - 1];
			f->sol[j - 1] = t;
		}
	f->hypervolume = hv;
	f->generations_run = gens;
	f->evaluations = ga->evaluations;
	*out = f;
	return 0;
}

/*
 * What a generation aims its moves at: the fastest feasible member and its
 * critical path, and the member best at each other objective (energy,
 * throughput) that moves are aimed at.
 */
struct ho_targets {
	struct ho_ind *best;
	uint32_t ncp, cp[256];
	struct ho_ind *ext[HO_OBJ_COUNT];
	int ext_obj[HO_OBJ_COUNT];
	uint32_t n_ext;
};

/* Step 1 of a generation: find the targets in the np members of the population. */
static void ho_find_targets(struct ho_ga *ga, uint32_t np, struct ho_sim *sim,
			    struct ho_timeline *tl, struct ho_targets *tg)
{
	tg->best = NULL;
	tg->ncp = 0;
	tg->n_ext = 0;
	for (uint32_t i = 0; i < np; i++)
		if (feasible(&ga->pool[i]) && (!tg->best || ga->pool[i].ev.obj[HO_OBJ_LATENCY] <
								tg->best->ev.obj[HO_OBJ_LATENCY]))
			tg->best = &ga->pool[i];
	if (tg->best && tl)
		tg->ncp = ho_critical_path(ga, tg->best, sim, tl, tg->cp, 256);
	for (uint32_t m = 0; m < ga->k; m++) {
		int ob = ga->obj[m];
		struct ho_ind *e = NULL;

		if (ob == HO_OBJ_LATENCY || (ob != HO_OBJ_ENERGY && ob != HO_OBJ_THROUGHPUT))
			continue;
		for (uint32_t i = 0; i < np; i++)
			if (feasible(&ga->pool[i]) &&
			    (!e || ga->pool[i].ev.obj[ob] < e->ev.obj[ob]))
				e = &ga->pool[i];
		if (e) {
			tg->ext_obj[tg->n_ext] = ob;
			tg->ext[tg->n_ext++] = e;
		}
	}
}

/*
 * Step 2: np offspring into pool[np, 2 np): moves of the extremes, moves
 * along the critical path, and tournament crossover with mutation.
 */
static void ho_make_offspring(struct ho_ga *ga, uint32_t np, struct ho_timeline *tl,
			      const struct ho_targets *tg)
{
	for (uint32_t i = np; i < 2 * np; i += 2) {
		double u = ho_rng_unit(&ga->rng);

		if (tg->n_ext && u >= HO_CP_SHARE && u < HO_CP_SHARE + HO_EXTREME_SHARE) {
			uint32_t e = ho_rng_below(&ga->rng, tg->n_ext);

			bool window = tg->ext_obj[e] == HO_OBJ_ENERGY &&
				      ho_rng_unit(&ga->rng) < HO_ENERGY_WINDOW_SHARE;

			for (uint32_t k = i; k < i + 2; k++)
				if (window)
					ho_window_mutant(ga, tg->ext[e], &ga->pool[k],
							 ho_rng_below(&ga->rng, ga->p->n),
							 HO_ENERGY_WINDOW_WEIGHT);
				else
					ho_extreme_mutant(ga, tg->ext[e], tg->ext_obj[e],
							  &ga->pool[k]);
			ga->pool[i].ext = ga->pool[i + 1].ext = (int8_t)(e + 1);
			continue;
		}
		if (tg->ncp && u < HO_CP_SHARE) {
			for (uint32_t k = i; k < i + 2; k++)
				if (ho_rng_unit(&ga->rng) < HO_WINDOW_SHARE)
					ho_window_mutant(ga, tg->best, &ga->pool[k],
							 tg->cp[ho_rng_below(&ga->rng, tg->ncp)],
							 0);
				else
					ho_cp_mutant(ga, tg->best, tl, &ga->pool[k], tg->cp,
						     tg->ncp);
			ga->pool[i].ext = ga->pool[i + 1].ext = 0;
			continue;
		}
		struct ho_ind *a = &ga->pool[ho_tournament(ga, np)],
			      *b = &ga->pool[ho_tournament(ga, np)];
		struct ho_ind *c1 = &ga->pool[i], *c2 = &ga->pool[i + 1];

		c1->ext = c2->ext = -1;
		if (ho_rng_unit(&ga->rng) < ga->o->crossover) {
			uint32_t cut = ho_rng_below(&ga->rng, ga->p->n);

			for (uint32_t t = 0; t < ga->p->n; t++) {
				c1->assign[t] = t < cut ? a->assign[t] : b->assign[t];
				c2->assign[t] = t < cut ? b->assign[t] : a->assign[t];
				c1->prec[t] = t < cut ? a->prec[t] : b->prec[t];
				c2->prec[t] = t < cut ? b->prec[t] : a->prec[t];
			}
			ho_order_crossover(ga, a->order, b->order, c1->order);
			ho_order_crossover(ga, b->order, a->order, c2->order);
		} else {
			memcpy(c1->assign, a->assign, ga->p->n * sizeof(uint16_t));
			memcpy(c2->assign, b->assign, ga->p->n * sizeof(uint16_t));
			memcpy(c1->prec, a->prec, ga->p->n);
			memcpy(c2->prec, b->prec, ga->p->n);
			memcpy(c1->order, a->order, ga->p->n * sizeof(uint32_t));
			memcpy(c2->order, b->order, ga->p->n * sizeof(uint32_t));
		}
		ho_mutate(ga, c1);
		ho_mutate(ga, c2);
		/* Some keep only their order: the decoder re-chooses their devices. */
		c1->dec = ho_whole_order(ga, ho_rng_unit(&ga->rng) < HO_DECODE_SHARE);
		c2->dec = ho_whole_order(ga, ho_rng_unit(&ga->rng) < HO_DECODE_SHARE);
		if (ga->trade && c1->dec.to && ho_rng_unit(&ga->rng) < HO_TRADE_DECODE_SHARE)
			c1->dec.energy_weight = ho_trade_weight(ga);
		if (ga->trade && c2->dec.to && ho_rng_unit(&ga->rng) < HO_TRADE_DECODE_SHARE)
			c2->dec.energy_weight = ho_trade_weight(ga);
	}
}

/*
 * Step 3: local search on top of the offspring (half a population more, in
 * pool[2 np, total)): small moves of the extremes, and (while energy is an
 * objective) mostly stretches of first-front members re-decoded at a
 * trade-off weight.  Step 4 evaluates steps 2 and 3 at once.
 */
static void ho_local_search(struct ho_ga *ga, uint32_t np, uint32_t total, struct ho_timeline *tl,
			    const struct ho_targets *tg)
{
	for (uint32_t i = 2 * np; i < total; i++) {
		uint32_t pick = ho_rng_below(&ga->rng, tg->n_ext + 1);

		if (ga->trade && ho_rng_unit(&ga->rng) < HO_TRADE_LOCAL_SHARE) {
			uint32_t a = ho_rng_below(&ga->rng, np);

			for (uint32_t tries = 0; tries < 8 && ga->pool[a].rank; tries++)
				a = ho_rng_below(&ga->rng, np);
			ho_window_mutant(ga, &ga->pool[a], &ga->pool[i],
					 ho_rng_below(&ga->rng, ga->p->n), ho_trade_weight(ga));
			ga->pool[i].ext = -1;
		} else if (pick == tg->n_ext && tg->ncp) {
			ho_cp_mutant(ga, tg->best, tl, &ga->pool[i], tg->cp, tg->ncp);
			ga->pool[i].ext = 0;
		} else if (tg->n_ext) {
			pick %= tg->n_ext;
			ho_extreme_mutant(ga, tg->ext[pick], tg->ext_obj[pick], &ga->pool[i]);
			ga->pool[i].ext = (int8_t)(pick + 1);
		} else {
			struct ho_ind *a = &ga->pool[ho_tournament(ga, np)];

			memcpy(ga->pool[i].assign, a->assign, ga->p->n * sizeof(uint16_t));
			memcpy(ga->pool[i].prec, a->prec, ga->p->n);
			memcpy(ga->pool[i].order, a->order, ga->p->n * sizeof(uint32_t));
			ho_mutate(ga, &ga->pool[i]);
			ga->pool[i].ext = -1;
		}
	}
}

/*
 * Step 5 (after evaluating the offspring): up to one more individual per
 * extreme at pool[total...], its improving moves together; how many.
 */
static uint32_t ho_combine_extremes(struct ho_ga *ga, uint32_t np, uint32_t total,
				    const struct ho_targets *tg)
{
	uint32_t ncomb = 0;

	if (tg->best && ho_combine_moves(ga, tg->best, HO_OBJ_LATENCY, 0, &ga->pool[np], total - np,
					 &ga->pool[total + ncomb]))
		ncomb++;
	for (uint32_t e = 0; e < tg->n_ext; e++)
		if (ho_combine_moves(ga, tg->ext[e], tg->ext_obj[e], (int8_t)(e + 1), &ga->pool[np],
				     total - np, &ga->pool[total + ncomb]))
			ncomb++;
	return ncomb;
}

int ho_search(const struct ho_problem *p, const struct ho_search_opts *o, struct ho_front **out,
	      struct ho_error *err)
{
	struct ho_ga ga = {.p = p, .o = o, .n = p->n};
	uint32_t np = o->population & ~1u, total = 2 * np + np / 2, threads = o->threads, gen = 0,
		 stall = 0;
	struct ho_sim *sims[64] = {0};
	struct ho_timeline *tl = NULL;
	double best_hv = -1, t0 = ho_clock_s();
	struct ho_search_progress sp = {.generations = o->generations};
	bool interrupted = false;
	int ret = -ENOMEM;

	*out = NULL;
	if (np < 4 || np > 100000)
		return ho_err(err, -EINVAL, "population must be an even number in 4..100000");
	if (!threads) {
		long c = sysconf(_SC_NPROCESSORS_ONLN);

		threads = c > 0 ? (uint32_t)c : 1;
	}
	if (threads > 64)
		threads = 64;
	for (int m = 0; m < HO_OBJ_COUNT; m++)
		if (o->objectives >> m & 1)
			ga.obj[ga.k++] = m;
	if (!ga.k)
		return ho_err(err, -EINVAL, "no objective chosen");
	ga.trade = o->objectives >> HO_OBJ_ENERGY & 1;
	ho_rng_seed(&ga.rng, o->seed);
	ga.pool = calloc(total + HO_OBJ_COUNT, sizeof(*ga.pool));
	ga.sorted = calloc(total + HO_OBJ_COUNT, sizeof(*ga.sorted));
	ga.tmp = calloc(total + HO_OBJ_COUNT, sizeof(*ga.tmp));
	ga.pos = calloc(p->n + total + HO_OBJ_COUNT + 1, sizeof(uint32_t));
	ga.heap = calloc(p->n + total + HO_OBJ_COUNT + 1, sizeof(uint32_t));
	ga.indeg = calloc(p->n + total + HO_OBJ_COUNT + 1, sizeof(uint32_t));
	ga.hv_pts = calloc(total + HO_OBJ_COUNT, sizeof(*ga.hv_pts));
	if (!ga.pool || !ga.sorted || !ga.tmp || !ga.pos || !ga.heap || !ga.indeg || !ga.hv_pts)
		goto nomem;
	for (uint32_t i = 0; i < total + HO_OBJ_COUNT; i++) {
		ga.pool[i].assign = calloc(p->n + 1, sizeof(uint16_t));
		ga.pool[i].order = calloc(p->n + 1, sizeof(uint32_t));
		ga.pool[i].prec = calloc(p->n + 1, 1);
		if (!ga.pool[i].assign || !ga.pool[i].order || !ga.pool[i].prec)
			goto nomem;
	}
	for (uint32_t t = 0; t < threads; t++) {
		if (!(sims[t] = ho_sim_new(p)))
			goto nomem;
		ho_sim_lazy_memory(sims[t], !(o->objectives >> HO_OBJ_MEMORY & 1));
	}
	if (o->coarsen_chains && ho_chain_groups(&ga))
		goto nomem;
	if (o->share_blocks && p->task_sig && ho_block_groups(&ga))
		goto nomem;
	tl = ho_timeline_new(p);
	if (!tl)
		goto nomem;

	/* Initial population: seeds, then balanced and random individuals. */
	for (uint32_t i = 0; i < np; i++) {
		struct ho_ind *c = &ga.pool[i];

		if (i < o->n_seeds && i < np / 2) {
			memcpy(c->assign, o->seeds[i]->assign, p->n * sizeof(uint16_t));
			memcpy(c->order, o->seeds[i]->order, p->n * sizeof(uint32_t));
		} else if (o->n_seeds && i < 2 * o->n_seeds && i < np / 2) {
			/* The seeds' orders with devices re-chosen under link contention,
			 * which list schedulers like HEFT do not see. */
			const struct ho_plan *s = o->seeds[i - o->n_seeds];

			memcpy(c->assign, s->assign, p->n * sizeof(uint16_t));
			memcpy(c->order, s->order, p->n * sizeof(uint32_t));
			c->dec = ho_whole_order(&ga, true);
		} else if (o->n_seeds && i < 3 * o->n_seeds && i < np / 2) {
			/* mutated copies of the seeds */
			const struct ho_plan *s = o->seeds[i - 2 * o->n_seeds];

			memcpy(c->assign, s->assign, p->n * sizeof(uint16_t));
			memcpy(c->order, s->order, p->n * sizeof(uint32_t));
			/* with precisions: each seed in one reduced precision wherever it can be,
			 * the single-precision plans a mix must beat */
			if (p->n_prec > 1)
				ho_precision_uniform(p, 1 + (i - 2 * o->n_seeds) % (p->n_prec - 1),
						     c->prec);
			else
				ho_mutate(&ga, c);
		} else if (p->n_prec > 1 && o->constraints.max_error > 0 && o->n_seeds &&
			   i < 4 * o->n_seeds && i < np / 2) {
			/* with precisions: each seed's devices, reduced greedily to the budget */
			const struct ho_plan *s = o->seeds[i - 3 * o->n_seeds];

			memcpy(c->assign, s->assign, p->n * sizeof(uint16_t));
			memcpy(c->order, s->order, p->n * sizeof(uint32_t));
			if (ho_precision_fill(p, c->assign, o->constraints.max_error, c->prec))
				goto nomem;
		} else if (ga.trade && o->n_seeds && i < np * HO_TRADE_FIRST_SHARE) {
			/* the seeds' orders decoded at a point of the trade-off */
			const struct ho_plan *s = o->seeds[i % o->n_seeds];

			memcpy(c->assign, s->assign, p->n * sizeof(uint16_t));
			memcpy(c->order, s->order, p->n * sizeof(uint32_t));
			c->dec = ho_whole_order(&ga, true);
			c->dec.energy_weight = ho_trade_weight(&ga);
		} else {
			/* Random orders: a few keep random devices, most get EFT-decoded ones. */
			ho_random_individual(&ga, c, i % 4 == 0);
			ho_precision_mutate(p, &ga.rng, c->prec, 0.5);
			c->dec = ho_whole_order(&ga, i % 4 != 0 && i % 8 != 1);
		}
	}
	ret = ho_eval_all(&ga, ga.pool, np, sims, threads);
	if (ret) {
		ho_err(err, ret, "a seed schedule's order is not topological");
		goto out;
	}
	/* Normalisation for the hypervolume: the initial population's span. */
	for (uint32_t m = 0; m < ga.k; m++) {
		ga.lo[m] = INFINITY;
		ga.hi[m] = -INFINITY;
		for (uint32_t i = 0; i < np; i++) {
			double v = ga.pool[i].ev.obj[ga.obj[m]];

			ga.lo[m] = v < ga.lo[m] ? v : ga.lo[m];
			ga.hi[m] = v > ga.hi[m] ? v : ga.hi[m];
		}
		ga.hi[m] = ga.lo[m] + (ga.hi[m] - ga.lo[m]) * 1.1 + 1e-12;
		ga.lo[m] = ga.lo[m] * 0.5; /* room for improvement below the start */
	}
	ho_environmental_selection(&ga, np);

	/*
	 * A generation: find the targets, make offspring, the local-search
	 * section, evaluate them, combine the extremes' improving moves,
	 * evaluate those, select, and stop when the hypervolume stalls.
	 */
	for (gen = 0; gen < o->generations; gen++) {
		struct ho_targets tg;

		ho_find_targets(&ga, np, sims[0], tl, &tg);
		ho_make_offspring(&ga, np, tl, &tg);
		ho_local_search(&ga, np, total, tl, &tg);
		ret = ho_eval_all(&ga, &ga.pool[np], total - np, sims, threads);
		if (ret) {
			ho_err(err, ret, "internal error: offspring order not topological");
			goto out;
		}
		uint32_t ncomb = ho_combine_extremes(&ga, np, total, &tg);

		if (ncomb && (ret = ho_eval_all(&ga, &ga.pool[total], ncomb, sims, threads))) {
			ho_err(err, ret, "internal error: offspring order not topological");
			goto out;
		}
		ho_environmental_selection(&ga, total + ncomb);
		double hv = ho_front_hv(&ga, np);

		if (hv > best_hv + 1e-4) {
			best_hv = hv;
			stall = 0;
		} else if (o->stall_window && ++stall >= o->stall_window) {
			gen++;
			break;
		}
		if (o->stop && *o->stop) { /* Ctrl-C: this generation's front is the answer */
			gen++;
			interrupted = true;
			break;
		}
		if (o->progress && (gen % 10 == 0 || gen + 1 == o->generations)) {
			sp.generation = gen + 1;
			sp.hypervolume = hv;
			sp.front_size = 0;
			for (uint32_t i = 0; i < np; i++)
				sp.front_size += ga.pool[i].rank == 0 && feasible(&ga.pool[i]);
			sp.evaluations = ga.evaluations;
			sp.elapsed_s = ho_clock_s() - t0;
			o->progress(&sp, o->progress_arg);
		}
	}
	if (o->progress) {
		sp.generation = gen;
		sp.evaluations = ga.evaluations;
		sp.elapsed_s = ho_clock_s() - t0;
		sp.shared_blocks = ga.shared_blocks;
		sp.done = true;
		o->progress(&sp, o->progress_arg);
	}
	/* Exact peaks for what the user sees. */
	ho_sim_lazy_memory(sims[0], false);
	for (uint32_t i = 0; i < np; i++) {
		if (!ga.pool[i].ev.peak_is_bound)
			continue;
		ho_sim_precision(sims[0], p->n_prec > 1 ? ga.pool[i].prec : NULL);
		ho_sim_eval(sims[0], ga.pool[i].assign, ga.pool[i].order, &o->constraints,
			    &ga.pool[i].ev, NULL);
	}
	ho_nondominated_sort(&ga, ga.pool, np);
	ret = ho_make_front(&ga, np, ho_front_hv(&ga, np), gen, out);
	if (ret)
		goto nomem;
	(*out)->interrupted = interrupted;
	goto out;
nomem:
	ret = ho_err(err, -ENOMEM, "out of memory in the search");
out:
	for (uint32_t t = 0; t < 64; t++)
		ho_sim_free(sims[t]);
	ho_timeline_free(tl);
	ho_ga_free(&ga, total + HO_OBJ_COUNT);
	return ret;
}
