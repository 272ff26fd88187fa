// SPDX-License-Identifier: MIT
/*
 * The memory plan: places the tensors of one device's region so that a
 * tensor reuses the bytes of one whose readers have all finished before its
 * writer starts.  "Before" is the graph's order where it decides (a reader
 * that is an ancestor of the writer, or the writer itself for a copy, which
 * starts only once its producer is done), else the schedule's timeline: a
 * reader predicted to end before the writer is predicted to start.  The
 * timeline is what the simulator's memory peak assumes, but workers on two
 * devices do not follow it by themselves, so such a reuse comes back as a
 * wait: the executor makes the writer (for a copy, the copy engine) wait
 * for the previous occupant's readers.  Those waits only ever point forward
 * in predicted time, so they cannot close a cycle.  Placement is greedy by size (as TensorFlow
 * Lite's arena planner): largest first, each into the smallest gap its conflicting neighbours
 * leave, which lands close to the peak of live bytes.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rt_priv.h"

uint64_t *ho_memplan_ancestors(const struct ho_graph *g, uint32_t *words)
{
	uint32_t w = (g->n_nodes + 63) / 64;
	uint64_t *anc;

	*words = w;
	if ((uint64_t)g->n_nodes * w > ((uint64_t)64 << 20) / 8)
		return NULL; /* over 64 MiB of bits: plan without reuse */
	anc = calloc((size_t)g->n_nodes * w + 1, sizeof(uint64_t));
	if (!anc)
		return NULL;
	for (uint32_t i = 0; i < g->n_nodes; i++) {
		uint32_t v = (uint32_t)g->topo[i];
		const struct ho_node *n = &g->nodes[v];

		for (uint32_t k = 0; k < n->n_inputs; k++) {
			int32_t t = n->inputs[k], p = t >= 0 ? g->tensors[t].producer : -1;

			if (p < 0)
				continue;
			for (uint32_t j = 0; j < w; j++)
				anc[(size_t)v * w + j] |= anc[(size_t)p * w + j];
			anc[(size_t)v * w + (uint32_t)p / 64] |= 1ull << ((uint32_t)p % 64);
		}
	}
	return anc;
}

/* Node r is done before x is written, by the graph (*wait untouched) or by the timeline. */
static bool ho_before(const struct ho_mp_order *o, int32_t r, const struct ho_mp_item *x,
		      bool *wait)
{
	int32_t w = x->writer;

	if (r == w)
		return x->copy; /* a copy starts once its producer is done */
	if (o->anc[(size_t)w * o->words + (uint32_t)r / 64] >> ((uint32_t)r % 64) & 1)
		return true;
	if (!o->start)
		return false;
	if (x->copy) {
		/* the copy engine writes it when the schedule's transfer starts, or after w */
		double at = x->copy_start > o->end[w] ? x->copy_start : o->end[w];

		if (!(o->end[r] < at))
			return false;
	} else if (o->end[r] > o->start[w] ||
		   (o->start[r] == o->start[w] && o->prio[r] >= o->prio[w])) {
		return false;
	}
	*wait = true;
	return true;
}

/* Every use of y (its write, its reads) is done before x's writer starts. */
static bool ho_all_before(const struct ho_mp_item *y, const struct ho_mp_item *x,
			  const struct ho_mp_order *o, bool *wait)
{
	*wait = false;
	if (y->permanent || y->to_end || x->permanent || x->writer < 0)
		return false;
	for (uint32_t i = 0; i < y->n_readers; i++)
		if (!ho_before(o, (int32_t)y->readers[i], x, wait))
			return false;
	/* no writer: a graph input's replica, copied in before its readers run */
	return y->writer < 0 || ho_before(o, y->writer, x, wait);
}

static int ho_by_size(const void *a, const void *b, void *arg)
{
	const struct ho_mp_item *items = arg;
	const struct ho_mp_item *x = &items[*(const uint32_t *)a],
				*y = &items[*(const uint32_t *)b];

	if (x->size != y->size)
		return x->size > y->size ? -1 : 1;
	return x->prio < y->prio ? -1 : x->prio > y->prio;
}

static int ho_by_offset(const void *a, const void *b, void *arg)
{
	const struct ho_mp_item *items = arg;
	uint64_t x = items[*(const uint32_t *)a].offset, y = items[*(const uint32_t *)b].offset;

	return x < y ? -1 : x > y;
}

static int ho_add_wait(struct ho_mp_plan *pl, uint32_t before, uint32_t after)
{
	if (pl->n_waits == pl->cap_waits) {
		uint32_t c = pl->cap_waits ? 2 * pl->cap_waits : 64;
		void *p = realloc(pl->waits, (size_t)c * sizeof(*pl->waits));

		if (!p)
			return -ENOMEM;
		pl->waits = p;
		pl->cap_waits = c;
	}
	pl->waits[pl->n_waits].before = before;
	pl->waits[pl->n_waits++].after = after;
	return 0;
}

int ho_memplan(struct ho_mp_item *items, uint32_t n, const struct ho_mp_order *o,
	       struct ho_mp_plan *pl)
{
	uint32_t *order = calloc(n + 1, sizeof(uint32_t)), *near = calloc(n + 1, sizeof(uint32_t));
	uint8_t *placed = calloc(n + 1, 1);
	int ret = -ENOMEM;

	pl->total = 0;
	if (!order || !near || !placed)
		goto out;
	for (uint32_t i = 0; i < n; i++)
		order[i] = i;
	qsort_r(order, n, sizeof(*order), ho_by_size, items);
	for (uint32_t k = 0; k < n; k++) {
		struct ho_mp_item *x = &items[order[k]];
		uint64_t size = (x->size + 63) & ~63ull, at = 0, best = UINT64_MAX, prev_end = 0;
		uint32_t n_near = 0;
		bool wait;

		x->offset = 0;
		if (!size)
			continue;
		/* The placed items x cannot share bytes with, by offset. */
		for (uint32_t i = 0; i < n; i++)
			if (placed[i] && (!o->anc || (!ho_all_before(&items[i], x, o, &wait) &&
						      !ho_all_before(x, &items[i], o, &wait))))
				near[n_near++] = i;
		qsort_r(near, n_near, sizeof(*near), ho_by_offset, items);
		/* The smallest gap between them that fits, else above them all. */
		for (uint32_t i = 0; i < n_near; i++) {
			const struct ho_mp_item *y = &items[near[i]];
			uint64_t y_end = y->offset + ((y->size + 63) & ~63ull);

			if (y->offset > prev_end && y->offset - prev_end >= size &&
			    y->offset - prev_end < best) {
				best = y->offset - prev_end;
				at = prev_end;
			}
			if (y_end > prev_end)
				prev_end = y_end;
		}
		if (best == UINT64_MAX)
			at = prev_end;
		x->offset = at;
		placed[order[k]] = 1;
		if (at + size > pl->total)
			pl->total = at + size;
	}
	/* Items sharing bytes by the timeline alone: the later one's writer waits. */
	for (uint32_t i = 0; o->anc && i < n; i++)
		for (uint32_t j = 0; j < n; j++) {
			const struct ho_mp_item *x = &items[i], *y = &items[j];
			uint64_t xs = (x->size + 63) & ~63ull, ys = (y->size + 63) & ~63ull;
			bool wait;

			if (i == j || !xs || !ys || x->offset >= y->offset + ys ||
			    y->offset >= x->offset + xs)
				continue;
			if (ho_all_before(y, x, o, &wait) && wait && ho_add_wait(pl, j, i))
				goto out;
		}
	ret = 0;
out:
	free(order);
	free(near);
	free(placed);
	return ret;
}
