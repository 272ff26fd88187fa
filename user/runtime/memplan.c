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
 * leave, which lands close to the peak of live bytes; where it does not, perturbed orders
 * get it there (ho_improve).
 */
#include <errno.h>
#include <math.h>
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

		for (uint32_t k = 0; k < n->n_inputs + n->n_implicit; k++) {
			int32_t t = k < n->n_inputs ? n->inputs[k] : n->implicit[k - n->n_inputs];
			int32_t p = t >= 0 ? g->tensors[t].producer : -1;

			/* a producer that does not run (folded, Constant) orders nothing: the
			 * executor waits only on tasks, so nor may the reuse rules */
			if (p < 0 || !ho_node_is_task(&g->nodes[p]))
				continue;
			for (uint32_t j = 0; j < w; j++)
				anc[(size_t)v * w + j] |= anc[(size_t)p * w + j];
			anc[(size_t)v * w + (uint32_t)p / 64] |= 1ull << ((uint32_t)p % 64);
		}
	}
	return anc;
}

/* When x's bytes are written, by the timeline: its writer's start, or for a copy the
 * schedule's transfer start (never before its producer is done). */
static double ho_written_at(const struct ho_mp_item *x, const struct ho_mp_order *o)
{
	double at;

	if (x->copy)
		return x->copy_start > o->end[x->writer] ? x->copy_start : o->end[x->writer];
	at = o->start[x->writer];
	for (uint32_t i = 0; i < x->n_also; i++) /* a Concat's inputs written in place */
		if (o->start[x->also[i]] < at)
			at = o->start[x->also[i]];
	return at;
}

/*
 * Reader r (a node, or from n_nodes up a copy out of these bytes) is done
 * before w writes x: by the graph (*wait untouched) or by the timeline.
 */
static bool ho_before_writer(const struct ho_mp_order *o, int32_t r, int32_t w,
			     const struct ho_mp_item *x, bool *wait)
{
	bool copy_reader = r >= (int32_t)o->n_nodes;
	double r_end;

	if (!copy_reader) {
		if (r == w)
			return x->copy; /* a copy starts once its producer is done */
		if (o->anc[(size_t)w * o->words + (uint32_t)r / 64] >> ((uint32_t)r % 64) & 1)
			return true;
	}
	if (!o->start)
		return false;
	r_end = !copy_reader ? o->end[r] : o->copy_end ? o->copy_end[r - (int32_t)o->n_nodes] : -1;
	if (r_end < 0 || r_end > ho_written_at(x, o))
		return false; /* unknown, or later */
	/*
	 * A tie is an order only where it cannot hide a dependency: copies take
	 * time, so a copy's end and a copy's start never meet through one; two
	 * nodes starting together are ordered by the schedule's priority.
	 */
	if (!copy_reader && !x->copy && o->start[r] == o->start[w] && o->prio[r] >= o->prio[w])
		return false;
	*wait = true;
	return true;
}

/* ... before every node that writes x. */
static bool ho_before(const struct ho_mp_order *o, int32_t r, const struct ho_mp_item *x,
		      bool *wait)
{
	if (!ho_before_writer(o, r, x->writer, x, wait))
		return false;
	for (uint32_t i = 0; i < x->n_also; i++)
		if (!ho_before_writer(o, r, x->also[i], x, wait))
			return false;
	return true;
}

static bool ho_list_before(const uint32_t *r, uint32_t n, const struct ho_mp_item *y,
			   const struct ho_mp_item *x, const struct ho_mp_order *o, bool *wait)
{
	*wait = false;
	for (uint32_t i = 0; i < n; i++)
		if (!ho_before(o, (int32_t)r[i], x, wait))
			return false;
	/* no writer: a graph input's replica, copied in before its readers run */
	if (y->writer < 0)
		return true;
	for (uint32_t i = 0; i < y->n_also; i++)
		if (!ho_before(o, y->also[i], x, wait))
			return false;
	return ho_before(o, y->writer, x, wait);
}

/*
 * Every use of y (its write, its reads) is done before x is written: 0 no;
 * 1 through its readers; 2 through its direct readers, where a copy out of y
 * counts instead of the nodes that read the replica (with the timeline).
 */
static int ho_all_before(const struct ho_mp_item *y, const struct ho_mp_item *x,
			 const struct ho_mp_order *o, bool *wait)
{
	*wait = false;
	if (y->permanent || y->to_end || x->permanent || x->writer < 0)
		return 0;
	if (ho_list_before(y->readers, y->n_readers, y, x, o, wait))
		return 1;
	if (o->start && y->direct && y->direct != y->readers &&
	    ho_list_before(y->direct, y->n_direct, y, x, o, wait))
		return 2;
	return 0;
}

/* Orders to place in: each lands differently in the gaps; the smallest wins. */
struct ho_mp_key {
	const struct ho_mp_item *items;
	const double *born, *span; /* per item */
	int by;			   /* 0: size, 1: birth, 2: size x lifetime */
};

static int ho_by_key(const void *a, const void *b, void *arg)
{
	const struct ho_mp_key *k = arg;
	uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
	const struct ho_mp_item *x = &k->items[i], *y = &k->items[j];
	double kx = (double)x->size, ky = (double)y->size;

	if (k->by == 1 && k->born[i] != k->born[j])
		return k->born[i] < k->born[j] ? -1 : 1;
	if (k->by == 2) {
		kx *= k->span[i];
		ky *= k->span[j];
	}
	if (kx != ky)
		return kx > ky ? -1 : 1;
	return x->prio < y->prio ? -1 : x->prio > y->prio;
}

/* x and y may not share bytes; from the table when there is one. */
static bool ho_conflict(const struct ho_mp_item *items, uint32_t n, const uint8_t *table,
			uint32_t a, uint32_t b, const struct ho_mp_order *o)
{
	bool wait;

	if (table)
		return table[(size_t)a * n + b];
	return !o->anc || (!ho_all_before(&items[a], &items[b], o, &wait) &&
			   !ho_all_before(&items[b], &items[a], o, &wait));
}

/*
 * Each item in order into the smallest gap its placed conflicts leave; the size of it all.
 * The placed items are kept in offset order (by_off, n_by_off of them), so that each
 * item walks its conflicts in that order without sorting them: sorting each item's
 * conflicts (a qsort per item) took a detector's 5 000-item tail 4 s to plan.
 */
static uint64_t ho_place(const struct ho_mp_item *items, uint32_t n, const uint32_t *order,
			 const uint8_t *table, const struct ho_mp_order *o, uint64_t *off,
			 uint32_t *by_off)
{
	uint64_t total = 0;
	uint32_t n_by_off = 0;

	for (uint32_t k = 0; k < n; k++) {
		uint32_t xi = order[k], lo = 0, hi;
		uint64_t size = (items[xi].size + 63) & ~63ull, at = 0, best = UINT64_MAX,
			 prev_end = 0;

		off[xi] = 0;
		if (!size)
			continue;
		for (uint32_t s = 0; s < n_by_off; s++) {
			uint32_t y = by_off[s];
			uint64_t y_off = off[y], y_end = y_off + ((items[y].size + 63) & ~63ull);

			if (!ho_conflict(items, n, table, y, xi, o))
				continue;
			if (y_off > prev_end && y_off - prev_end >= size &&
			    y_off - prev_end < best) {
				best = y_off - prev_end;
				at = prev_end;
			}
			if (y_end > prev_end)
				prev_end = y_end;
		}
		off[xi] = best == UINT64_MAX ? prev_end : at;
		if (off[xi] + size > total)
			total = off[xi] + size;
		/* into the offset order, after those at the same offset */
		for (hi = n_by_off; lo < hi;) {
			uint32_t mid = lo + (hi - lo) / 2;

			if (off[by_off[mid]] <= off[xi])
				lo = mid + 1;
			else
				hi = mid;
		}
		memmove(by_off + lo + 1, by_off + lo, (n_by_off - lo) * sizeof(*by_off));
		by_off[lo] = xi;
		n_by_off++;
	}
	return total;
}

/* When an item's bytes are first and last needed, by the timeline (or the order). */
static void ho_lifetime(const struct ho_mp_item *x, const struct ho_mp_order *o, double *born,
			double *dies)
{
	if (x->permanent || x->writer < 0 || !o->start) {
		*born = x->permanent || x->writer < 0 ? -1.0 : (double)x->prio;
		*dies = 1e300;
		return;
	}
	*born = ho_written_at(x, o);
	*dies = x->to_end ? 1e300 : o->end[x->writer];
	for (uint32_t k = 0; k < x->n_also; k++)
		if (o->end[x->also[k]] > *dies)
			*dies = o->end[x->also[k]];
	for (uint32_t k = 0; k < x->n_direct && !x->to_end; k++) {
		uint32_t r = x->direct[k];
		double e = r >= o->n_nodes ? (o->copy_end ? o->copy_end[r - o->n_nodes] : 1e300)
					   : o->end[r];

		if (e > *dies)
			*dies = e;
	}
}

static int ho_add_wait(struct ho_mp_plan *pl, uint32_t before, uint32_t after, bool direct)
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
	pl->waits[pl->n_waits].direct = direct;
	pl->waits[pl->n_waits++].after = after;
	return 0;
}

/* Tables of conflicts up to this many items (n^2 bytes); beyond, one order. */
#define HO_MP_TABLE_MAX 4096

/*
 * The most bytes live at once by the timeline: the simulator's peak, and what
 * a placement cannot go under unless the graph's order lets two tensors the
 * timeline overlaps share bytes.
 */
static uint64_t ho_live_peak(const struct ho_mp_item *items, uint32_t n, const double *born,
			     const double *span)
{
	uint64_t peak = 0;

	for (uint32_t i = 0; i < n; i++) {
		uint64_t live = 0;

		for (uint32_t j = 0; j < n; j++)
			if (born[j] <= born[i] && born[i] < born[j] + span[j])
				live += (items[j].size + 63) & ~63ull;
		if (live > peak)
			peak = live;
	}
	return peak;
}

/*
 * Greedy orders can miss that peak by a tensor's size (the PP-OCRv4
 * detector's cpu0 with its Convs on the emulator: 39.32 MB placed, 36.87 MB
 * live at most).  Swap n / 8 random pairs of the best order, keep what packs
 * tighter, until the peak is reached or the budget spent: n^2 work a try,
 * 2 x 10^8 in all, 256 tries at most.  Six other seeds reached the peak
 * there after 5 to 53 tries, this one after 171.  A fixed seed keeps plans
 * reproducible.
 */
static void ho_improve(const struct ho_mp_item *items, uint32_t n, const uint8_t *table,
		       const struct ho_mp_order *o, uint64_t peak, uint32_t *best_order,
		       uint64_t *best_off, uint64_t *total, uint32_t *order, uint64_t *off,
		       uint32_t *by_off)
{
	uint64_t rng = 0x9e3779b97f4a7c15ull;
	uint32_t tries = n ? (uint32_t)fmin(256, 2e8 / ((double)n * n)) : 0;

	for (uint32_t t = 0; t < tries; t++) {
		uint64_t placed_total;

		if (*total <= peak)
			break;
		memcpy(order, best_order, n * sizeof(*order));
		for (uint32_t k = 0; k < n / 8 + 1; k++) {
			uint32_t i, j, x;

			rng ^= rng << 13;
			rng ^= rng >> 7;
			rng ^= rng << 17;
			i = (uint32_t)(rng % n);
			j = (uint32_t)((rng >> 32) % n);
			x = order[i];
			order[i] = order[j];
			order[j] = x;
		}
		placed_total = ho_place(items, n, order, table, o, off, by_off);
		if (placed_total < *total) {
			*total = placed_total;
			memcpy(best_off, off, n * sizeof(*off));
			memcpy(best_order, order, n * sizeof(*order));
		}
	}
}

int ho_memplan(struct ho_mp_item *items, uint32_t n, const struct ho_mp_order *o,
	       struct ho_mp_plan *pl)
{
	uint32_t *order = calloc(n + 1, sizeof(uint32_t)),
		 *by_off = calloc(n + 1, sizeof(uint32_t)),
		 *best_order = calloc(n + 1, sizeof(uint32_t));
	uint64_t *off = calloc(n + 1, sizeof(uint64_t)),
		 *best_off = calloc(n + 1, sizeof(uint64_t));
	double *born = calloc(n + 1, sizeof(double)), *span = calloc(n + 1, sizeof(double));
	uint8_t *table = NULL;
	struct ho_mp_key key = {items, born, span, 0};
	int ret = -ENOMEM, n_orders = 1;

	pl->total = UINT64_MAX;
	if (!order || !by_off || !off || !best_off || !born || !span || !best_order)
		goto out;
	for (uint32_t i = 0; i < n; i++) {
		double dies;

		ho_lifetime(&items[i], o, &born[i], &dies);
		span[i] = dies - born[i];
	}
	if (n <= HO_MP_TABLE_MAX && o->anc && (table = malloc((size_t)n * n + 1))) {
		for (uint32_t a = 0; a < n; a++)
			for (uint32_t b = a; b < n; b++)
				table[(size_t)a * n + b] = table[(size_t)b * n + a] =
				    a != b && ho_conflict(items, n, NULL, a, b, o);
		n_orders = o->start ? 3 : 2;
	}
	for (key.by = 0; key.by < n_orders; key.by++) {
		uint64_t total;

		for (uint32_t i = 0; i < n; i++)
			order[i] = i;
		qsort_r(order, n, sizeof(*order), ho_by_key, &key);
		total = ho_place(items, n, order, table, o, off, by_off);
		if (total < pl->total) {
			pl->total = total;
			memcpy(best_off, off, n * sizeof(*off));
			memcpy(best_order, order, n * sizeof(*order));
		}
	}
	if (table && o->start)
		ho_improve(items, n, table, o, ho_live_peak(items, n, born, span), best_order,
			   best_off, &pl->total, order, off, by_off);
	if (!n)
		pl->total = 0;
	for (uint32_t i = 0; i < n; i++)
		items[i].offset = best_off[i];
	/* Items sharing bytes by the timeline alone (only it makes waits): the later one's
	 * writer waits. */
	for (uint32_t i = 0; o->anc && o->start && i < n; i++)
		for (uint32_t j = 0; j < n; j++) {
			const struct ho_mp_item *x = &items[i], *y = &items[j];
			uint64_t xs = (x->size + 63) & ~63ull, ys = (y->size + 63) & ~63ull;
			bool wait;
			int how;

			if (i == j || !xs || !ys || x->offset >= y->offset + ys ||
			    y->offset >= x->offset + xs)
				continue;
			how = ho_all_before(y, x, o, &wait);
			if (how && wait && ho_add_wait(pl, j, i, how == 2))
				goto out;
		}
	ret = 0;
out:
	free(order);
	free(best_order);
	free(by_off);
	free(off);
	free(best_off);
	free(born);
	free(span);
	free(table);
	return ret;
}
