// SPDX-License-Identifier: MIT
/*
 * The memory plan: places the tensors of one device's region so that a
 * tensor reuses the bytes of one whose readers have all finished before its
 * writer can start.  "Before" has to hold however the workers interleave, so
 * it is the graph's order, not the schedule's timeline: every reader of the
 * previous occupant must be an ancestor of the new tensor's writer (or the
 * writer itself, for a copy, which starts only once its producer is done).
 * Best fit over the free slots, in the schedule's priority order.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rt_priv.h"

struct ho_mp_slot {
	uint64_t offset, size;
	int32_t last; /* item that occupies it last */
};

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

static bool ho_before(const uint64_t *anc, uint32_t words, int32_t r, int32_t w, bool self_ok)
{
	if (r == w)
		return self_ok;
	return anc[(size_t)w * words + (uint32_t)r / 64] >> ((uint32_t)r % 64) & 1;
}

/* Item x may take a slot last held by y. */
static bool ho_fits_after(const struct ho_mp_item *x, const struct ho_mp_item *y,
			  const uint64_t *anc, uint32_t words)
{
	if (y->permanent || x->writer < 0)
		return false;
	for (uint32_t i = 0; i < y->n_readers; i++)
		if (!ho_before(anc, words, (int32_t)y->readers[i], x->writer, x->copy))
			return false;
	/* the last occupant's own write is done before x's writer starts, too */
	return y->writer < 0 || ho_before(anc, words, y->writer, x->writer, x->copy);
}

static int ho_by_prio(const void *a, const void *b, void *arg)
{
	const struct ho_mp_item *items = arg;
	const struct ho_mp_item *x = &items[*(const uint32_t *)a],
				*y = &items[*(const uint32_t *)b];

	if (x->permanent != y->permanent)
		return x->permanent ? -1 : 1;
	return x->prio < y->prio ? -1 : x->prio > y->prio;
}

int ho_memplan(struct ho_mp_item *items, uint32_t n, const uint64_t *anc, uint32_t words,
	       uint64_t *total)
{
	struct ho_mp_slot *slots = calloc(2 * (size_t)n + 1, sizeof(*slots)); /* splits add one */
	uint32_t *order = calloc(n + 1, sizeof(uint32_t)), n_slots = 0;
	uint64_t top = 0;

	if (!slots || !order) {
		free(slots);
		free(order);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < n; i++)
		order[i] = i;
	qsort_r(order, n, sizeof(*order), ho_by_prio, items);
	for (uint32_t k = 0; k < n; k++) {
		struct ho_mp_item *x = &items[order[k]];
		uint64_t size = (x->size + 63) & ~63ull;
		int32_t best = -1;

		if (!size) {
			x->offset = 0;
			continue;
		}
		for (uint32_t s = 0; anc && s < n_slots; s++)
			if ((slots[s].size >= size ||
			     slots[s].offset + slots[s].size == top) && /* the top one can grow */
			    (best < 0 ||
			     (slots[s].size >= size &&
			      (slots[best].size < size || slots[s].size < slots[best].size))) &&
			    ho_fits_after(x, &items[slots[s].last], anc, words))
				best = (int32_t)s;
		if (best < 0) {
			best = (int32_t)n_slots++;
			slots[best].offset = top;
			slots[best].size = size;
			top += size;
		} else if (slots[best].size < size) {
			top += size - slots[best].size;
			slots[best].size = size;
		} else if (slots[best].size > size) {
			/* the rest stays free, after the same occupant */
			slots[n_slots] = slots[best];
			slots[n_slots].offset += size;
			slots[n_slots].size -= size;
			n_slots++;
			slots[best].size = size;
		}
		slots[best].last = (int32_t)order[k];
		x->offset = slots[best].offset;
	}
	*total = top;
	free(slots);
	free(order);
	return 0;
}
