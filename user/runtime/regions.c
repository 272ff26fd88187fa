// SPDX-License-Identifier: MIT
/*
 * The executor's plan (exec_priv.h), its memory: each device's tensors packed
 * by the memory planner (memplan.c) over their lifetimes on the schedule's
 * timeline, the waits that let one tensor reuse another's bytes, and the
 * device's region from the pool.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "exec_priv.h"

/* A constant every consumer of which reads its own replica, or took it over (its
 * kernel's own layout): no home bytes needed. */
bool ho_rt_home_unread(const struct ho_rt *rt, int32_t t)
{
	const struct ho_tensor *tt = &rt->g->tensors[t];

	if (!ho_is_data(tt) || (tt->flags & (HO_T_INPUT | HO_T_OUTPUT)) || !tt->n_consumers)
		return false;
	for (uint32_t c = 0; c < tt->n_consumers; c++) {
		int32_t d = rt->node_dev[tt->consumers[c]];

		if (d >= 0 && rt->taken[AT(rt, t, d)])
			continue;
		if (d < 0 || d == rt->home[t] || !rt->is_copy[AT(rt, t, d)])
			return false;
	}
	return true;
}

/* The node whose kernel writes t: its producer, or the Conv that folded it in; none for a
 * Concat that takes its inputs in place. */
static int32_t ho_rt_writer(const struct ho_rt *rt, int32_t t)
{
	int32_t p = rt->g->tensors[t].producer;

	if (p < 0 || rt->node_dev[p] < 0 || rt->gathers[p])
		return -1;
	/* a Transpose read through writes its output only where it moves it */
	return rt->folded[p] >= 0 && !ho_rt_is_alias(rt, (uint32_t)p) ? rt->folded[p] : p;
}

/* Edge r -> w (w a node, or from n_nodes up a copy): w waits for r. */
static int ho_rt_add_edge(uint32_t (**edges)[2], uint32_t *n_edges, uint32_t *cap, uint32_t r,
			  uint32_t w)
{
	if (*n_edges == *cap) {
		uint32_t c = *cap ? 2 * *cap : 256;
		void *p = realloc(*edges, (size_t)c * sizeof(**edges));

		if (!p)
			return -ENOMEM;
		*edges = p;
		*cap = c;
	}
	(*edges)[*n_edges][0] = r;
	(*edges)[(*n_edges)++][1] = w;
	return 0;
}

/* A reuse the timeline allows: x's writers wait for the earlier occupant's readers and
 * writers. */
static int ho_rt_memory_waits(const struct ho_rt *rt, uint32_t d, const struct ho_mp_item *items,
			      const struct ho_mp_plan *pl, uint32_t (**edges)[2], uint32_t *n_edges,
			      uint32_t *cap)
{
	for (uint32_t i = 0; i < pl->n_waits; i++) {
		const struct ho_mp_item *x = &items[pl->waits[i].after],
					*y = &items[pl->waits[i].before];

		const uint32_t *rd = pl->waits[i].direct ? y->direct : y->readers;
		uint32_t n_rd = pl->waits[i].direct ? y->n_direct : y->n_readers;

		for (uint32_t k = 0; k <= n_rd + y->n_also; k++) {
			int32_t r = k < n_rd	? (int32_t)rd[k]
				    : k == n_rd ? y->writer
						: y->also[k - n_rd - 1];

			/* nodes that never run (folded shape arithmetic) release nothing */
			if (r < 0 || (r < (int32_t)rt->g->n_nodes && rt->node_dev[r] < 0))
				continue;
			for (uint32_t j = 0; j <= x->n_also; j++) {
				int32_t w = j ? x->also[j - 1] : x->writer;

				if (r != w &&
				    ho_rt_add_edge(edges, n_edges, cap, (uint32_t)r,
						   x->copy ? rt->g->n_nodes +
								 (uint32_t)AT(rt, x->tensor, d)
							   : (uint32_t)w))
					return -ENOMEM;
			}
		}
	}
	return 0;
}

/* The waits as lists per releasing node (CSR). */
static int ho_rt_memory_waits_index(struct ho_rt *rt, uint32_t (*edges)[2], uint32_t n)
{
	uint32_t nn = rt->g->n_nodes + rt->g->n_tensors * rt->n_dev; /* nodes, then copies */

	rt->mem_off = calloc(nn + 2, sizeof(uint32_t));
	rt->mem_succ = calloc(n + 1, sizeof(uint32_t));
	rt->copy_waiting = calloc((size_t)rt->g->n_tensors * rt->n_dev + 1, sizeof(uint32_t));
	if (!rt->mem_off || !rt->mem_succ || !rt->copy_waiting)
		return -ENOMEM;
	for (uint32_t e = 0; e < n; e++)
		rt->mem_off[edges[e][0] + 2]++;
	for (uint32_t i = 0; i < nn; i++)
		rt->mem_off[i + 2] += rt->mem_off[i + 1];
	for (uint32_t e = 0; e < n; e++)
		rt->mem_succ[rt->mem_off[edges[e][0] + 1]++] = edges[e][1];
	rt->report.memory_waits = n;
	return 0;
}

/* An item several nodes write (a Concat's output its inputs are written into): written
 * first by the one the schedule runs first, and no longer held from before the run. */
static void ho_rt_first_writer(const struct ho_rt *rt, struct ho_mp_item *it)
{
	int32_t *also = (int32_t *)it->also;

	if (it->writer < 0)
		return;
	for (uint32_t k = 0; k < it->n_also; k++)
		if (rt->prio[also[k]] < rt->prio[it->writer]) {
			int32_t w = it->writer;

			it->writer = also[k];
			also[k] = w;
		}
	it->prio = rt->prio[it->writer];
	it->permanent = false;
}

/*
 * Offsets of every home and replica in its device's region (memplan.c):
 * a tensor and the aliases that share its bytes are one item, read by all
 * their consumers; a replica is read by its consumers on that device.
 */
int ho_rt_memplan(struct ho_rt *rt, uint64_t *need, struct ho_error *err)
{
	const struct ho_graph *g = rt->g;
	size_t n_items = 0, n_refs = 0, n_drefs = 0;
	struct ho_mp_item *items = NULL;
	uint32_t *refs = NULL, *drefs = NULL, words = 0, *item_t = NULL, *item_d = NULL,
		 n_wrefs = 0;
	int32_t *wrefs = calloc(g->n_tensors + 1, sizeof(int32_t)); /* items' other writers */
	uint64_t *anc = ho_memplan_ancestors(g, &words);
	double *seq = NULL;
	struct ho_mp_order order = {anc,      words,	  rt->pred_start,   rt->pred_end,
				    rt->prio, g->n_nodes, rt->pred_copy_end};
	uint32_t(*edges)[2] = NULL, n_edges = 0, cap_edges = 0;
	/* root[t]: the tensor whose bytes t shares; n_alias[t]: tensors sharing t's */
	int32_t *root = calloc(g->n_tensors + 1, sizeof(int32_t));
	uint32_t *n_alias = calloc(g->n_tensors + 1, sizeof(uint32_t));
	int ret = -ENOMEM;

	if (!root || !n_alias || !wrefs)
		goto out;
	for (uint32_t t = 0; t < g->n_tensors; t++) {
		root[t] = ho_rt_root(rt, (int32_t)t);
		n_alias[root[t]] += root[t] != (int32_t)t;
		/* every consumer edge is read through at most one home and one replica per device
		 */
		n_refs += (size_t)(rt->n_dev + 1) * g->tensors[t].n_consumers;
		for (uint32_t d = 0; d < rt->n_dev; d++)
			n_items += rt->home[t] == (int32_t)d || rt->is_copy[AT(rt, t, d)];
	}
	items = calloc(n_items + 1, sizeof(*items));
	refs = calloc(n_refs + 1, sizeof(uint32_t));
	/* direct readers: a home's consumers, and a copy per replica of it and its aliases */
	drefs = calloc(n_refs + (size_t)g->n_tensors * rt->n_dev + 1, sizeof(uint32_t));
	item_t = calloc(n_items + 1, sizeof(uint32_t));
	item_d = calloc(n_items + 1, sizeof(uint32_t));
	if (!items || !refs || !drefs || !item_t || !item_d)
		goto out;
	n_items = n_refs = 0;
	for (uint32_t t = 0; t < g->n_tensors; t++) {
		const struct ho_tensor *tt = &g->tensors[t];

		for (uint32_t d = 0; d < rt->n_dev; d++) {
			bool home = rt->home[t] == (int32_t)d && root[t] == (int32_t)t;
			struct ho_mp_item *it = &items[n_items];

			if (!home && !rt->is_copy[AT(rt, t, d)])
				continue;
			it->size = tt->bytes;
			it->tensor = t;
			it->writer = ho_rt_writer(rt, (int32_t)t);
			/* a Conv's output that its folded post-op replaces is never written, a
			 * constant only accelerators read is filled into their replicas only */
			if (home && (ho_rt_unwritten(rt, (int32_t)t) ||
				     ho_rt_home_unread(rt, (int32_t)t) || rt->ext_of[t] >= 0))
				it->size = 0;
			it->copy = !home;
			it->copy_start = it->copy && rt->pred_copy_start
					     ? rt->pred_copy_start[AT(rt, t, d)]
					     : -1;
			it->prio = it->writer >= 0 ? rt->prio[it->writer] : 0;
			/* a graph input's replica is copied in at the start, then free after use;
			 * one bound by value is filled once, at plan time, and kept */
			it->permanent =
			    it->writer < 0 &&
			    !(it->copy && (tt->flags & (HO_T_INPUT | HO_T_BOUND)) == HO_T_INPUT);
			it->to_end = ho_rt_kept(rt, (int32_t)t);
			it->readers = &refs[n_refs];
			it->direct = &drefs[n_drefs];
			it->also = &wrefs[n_wrefs];
			/*
			 * readers: t's consumers (on d, for a replica), and for a home the
			 * consumers of every alias of t, anywhere.  A home's direct readers
			 * are those that read it where it is, and for each replica (of t or
			 * an alias) the copy that fills it instead of that replica's readers.
			 */
			uint32_t a_end = home && n_alias[t] ? g->n_tensors : t + 1;

			for (uint32_t a = home && n_alias[t] ? 0 : t; a < a_end; a++) {
				if (a != t && root[a] != (int32_t)t)
					continue;
				if (ho_rt_kept(rt, (int32_t)a))
					it->to_end = true;
				/* a Concat's input written in place: its writer writes here too */
				int32_t w =
				    a != t && rt->into[a] >= 0 ? ho_rt_writer(rt, (int32_t)a) : -1;

				if (w >= 0 && it->writer < 0)
					it->writer = w;
				else if (w >= 0)
					wrefs[n_wrefs + it->n_also++] = w;
				for (uint32_t e = 0; home && e < rt->n_dev; e++)
					if (rt->is_copy[AT(rt, a, e)])
						drefs[n_drefs + it->n_direct++] =
						    g->n_nodes + (uint32_t)AT(rt, a, e);
				for (uint32_t c = 0; c < g->tensors[a].n_consumers; c++) {
					int32_t cn = g->tensors[a].consumers[c],
						cd = rt->node_dev[cn];

					if (home || cd == (int32_t)d)
						refs[n_refs + it->n_readers++] = (uint32_t)cn;
					if (home && cd >= 0 && !rt->is_copy[AT(rt, a, cd)])
						drefs[n_drefs + it->n_direct++] = (uint32_t)cn;
				}
			}
			n_refs += it->n_readers;
			n_drefs += it->n_direct;
			ho_rt_first_writer(rt, it);
			n_wrefs += it->n_also;
			if (!home || !rt->pred_copy_end) { /* no copy ends to go by */
				it->direct = it->readers;
				it->n_direct = it->n_readers;
			}
			item_t[n_items] = t;
			item_d[n_items] = d;
			n_items++;
		}
	}
	/* One device runs its nodes one after another in priority order: that is its timeline. */
	if (!order.start && rt->n_dev == 1) {
		if (!(seq = calloc(2 * (size_t)g->n_nodes + 1, sizeof(double))))
			goto out;
		for (uint32_t i = 0; i < g->n_nodes; i++) {
			seq[i] = rt->prio[i];
			seq[g->n_nodes + i] = rt->prio[i] + 1.0;
		}
		order.start = seq;
		order.end = seq + g->n_nodes;
	}
	for (uint32_t d = 0; d < rt->n_dev; d++) {
		struct ho_mp_item *mine = calloc(n_items + 1, sizeof(*mine));
		uint32_t m = 0;

		if (!mine)
			goto out;
		for (size_t i = 0; i < n_items; i++)
			if (item_d[i] == d)
				mine[m++] = items[i];
		/*
		 * The graph's order alone needs no waits; the timeline's is what the
		 * predicted peak assumes, and is used when the graph's alone does not
		 * fit in it.
		 */
		struct ho_mp_order graph_only = {anc,	   words,      NULL, NULL,
						 rt->prio, g->n_nodes, NULL};
		struct ho_mp_plan mp = {0};

		ret = ho_memplan(mine, m, rt->n_dev == 1 ? &order : &graph_only, &mp);
		if (!ret && rt->n_dev > 1 && order.start && mp.total > rt->pred_peak[d]) {
			mp.n_waits = 0;
			ret = ho_memplan(mine, m, &order, &mp);
		}
		/* one device alone runs in priority order: its waits hold already */
		if (!ret && !seq)
			ret = ho_rt_memory_waits(rt, d, mine, &mp, &edges, &n_edges, &cap_edges);
		need[d] = mp.total;
		free(mp.waits);
		for (size_t i = 0, j = 0; !ret && i < n_items; i++)
			if (item_d[i] == d)
				rt->offset[AT(rt, item_t[i], d)] = mine[j++].offset;
		for (size_t i = 0; i < n_items; i++)
			if (item_d[i] == d)
				rt->report.unshared_bytes[d] += (items[i].size + 63) & ~63ull;
		free(mine);
		if (ret)
			goto out;
	}
	ret = ho_rt_memory_waits_index(rt, edges, n_edges);
out:
	free(edges);
	free(seq);
	free(root);
	free(n_alias);
	free(wrefs);
	free(anc);
	free(items);
	free(refs);
	free(drefs);
	free(item_t);
	free(item_d);
	return ret ? ho_err(err, ret, "out of memory planning tensor memory") : 0;
}

/* Where every tensor lives and which devices need a replica; then the regions. */
/*
 * Device d's region of size bytes: in the P2P memory of the PCI device its
 * box names, else from the pool on its NUMA node.
 */
int ho_rt_region_alloc(struct ho_rt *rt, uint32_t d, uint64_t size, struct ho_error *err)
{
	const struct ho_rt_device *dd = &rt->desc[d];
	int ret;

	if (*dd->p2p_pci) {
		ret =
		    ho_pool_alloc_p2p(rt->pool, size ? size : 64, dd->p2p_pci, &rt->dev[d].region);
		return ret ? ho_err(err, ret,
				    "device %s: cannot get %llu bytes of PCI %s's P2P memory: %s",
				    dd->name, (unsigned long long)size, dd->p2p_pci,
				    ret == -EOPNOTSUPP ? "it needs ump.ko, which is not loaded"
				    : ret == -ENODEV
					? "it publishes none here (or the kernel has no "
					  "CONFIG_PCI_P2PDMA)"
					: strerror(-ret))
			   : 0;
	}
	ret = ho_pool_alloc(
	    rt->pool, size ? size : 64,
	    dd->numa_node >= 0 && dd->numa_node < ho_pool_nodes(rt->pool) ? dd->numa_node : 0,
	    &rt->dev[d].region);
	return ret ? ho_err(err, ret, "device %s: cannot get %llu bytes from the pool", dd->name,
			    (unsigned long long)size)
		   : 0;
}
