// SPDX-License-Identifier: MIT
/*
 * The executor, planning (exec_priv.h): every tensor gets a home on its
 * producer's device (graph inputs and constants: the host), plus a replica
 * on each other device that consumes it unless both devices address host
 * memory; layouts are chosen, nodes folded into kernels, each device's
 * tensors packed into one region of the pool on its NUMA node (memplan.c),
 * and every kernel prepared over those addresses.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common.h"
#include "exec_priv.h"
#include "heteroopt/pool.h"

/* Weights, Constant outputs and folded values: their bytes. */
int ho_rt_fill_constant(const struct ho_tensor *t, void *dst)
{
	int64_t n = ho_shape_numel(&t->shape);

	if (n == 0)
		return 0; /* an empty constant, e.g. Resize's omitted roi */
	if (t->data) {
		memcpy(dst, t->data, t->data_len < t->bytes ? t->data_len : t->bytes);
		return 0;
	}
	if (!t->value || n < 0 || (size_t)n > t->value->count)
		return -EINVAL;
	/* a value folded at load time: integers (and bool) from i, reals from f */
	for (int64_t i = 0; i < n; i++) {
		const struct ho_value *v = t->value;
		int64_t x = v->i ? v->i[i] : 0;
		double f = v->f ? v->f[i] : (double)x;

		switch (t->dtype) {
		case HO_DT_FLOAT:
			((float *)dst)[i] = (float)f;
			break;
		case HO_DT_DOUBLE:
			((double *)dst)[i] = f;
			break;
		case HO_DT_INT64:
		case HO_DT_UINT64:
			if (!v->i)
				return -EINVAL;
			((int64_t *)dst)[i] = x;
			break;
		case HO_DT_INT32:
		case HO_DT_UINT32:
			if (!v->i)
				return -EINVAL;
			((int32_t *)dst)[i] = (int32_t)x;
			break;
		case HO_DT_INT16:
		case HO_DT_UINT16:
			if (!v->i)
				return -EINVAL;
			((int16_t *)dst)[i] = (int16_t)x;
			break;
		case HO_DT_INT8:
		case HO_DT_UINT8:
		case HO_DT_BOOL:
			if (!v->i)
				return -EINVAL;
			((int8_t *)dst)[i] = t->dtype == HO_DT_BOOL ? x != 0 : (int8_t)x;
			break;
		default:
			return -EINVAL;
		}
	}
	return 0;
}

/* Tensor t is read by a node that runs, or is a graph output. */
static bool ho_rt_read_at_run(const struct ho_rt *rt, uint32_t t)
{
	const struct ho_tensor *tt = &rt->g->tensors[t];

	if (tt->flags & HO_T_OUTPUT)
		return true;
	for (uint32_t c = 0; c < tt->n_consumers; c++)
		if (rt->node_dev[tt->consumers[c]] >= 0)
			return true;
	return false;
}

/* Device b reads a's memory in place: the box says so, and the schedule assumed it. */
static bool ho_shares_memory(const struct ho_rt *rt, int a, int b)
{
	return a == b || (rt->in_place[b] >> a & 1);
}

/* Held from before the run: weights, constants, inputs, and a subgraph's outer
 * tensors (known, or fed by the control-flow kernel that runs the subgraph). */
static bool ho_is_data(const struct ho_tensor *t)
{
	return t->flags &
	       (HO_T_INITIALIZER | HO_T_CONSTANT | HO_T_FOLDED | HO_T_INPUT | HO_T_OUTER);
}

/* Fed at each run by the caller: an input not bound by value, an outer tensor not known. */
static bool ho_is_fed(const struct ho_tensor *t)
{
	return (t->flags & (HO_T_INPUT | HO_T_BOUND)) == HO_T_INPUT ||
	       ((t->flags & HO_T_OUTER) && !(t->flags & HO_T_KNOWN));
}

void ho_rt_free(struct ho_rt *rt)
{
	if (!rt)
		return;
	ho_rt_stop_threads(rt); /* asleep between runs: nothing below is in use */
	for (uint32_t i = 0; rt->k && i < rt->g->n_nodes; i++)
		if (rt->k[i])
			rt->dev[rt->node_dev[i]].ops->kernel_free(rt->k[i]);
	for (uint32_t i = 0; rt->ctl && i < rt->g->n_nodes; i++)
		ho_rt_control_free(rt->ctl[i]);
	for (uint32_t d = 0; d < rt->n_dev; d++) {
		/* before the region: closing waits for the chains still in it */
		ho_pool_queue_close(rt->dev[d].copyq);
		ho_pool_queue_close(rt->dev[d].syncq);
		ho_rt_blocks_free(&rt->dev[d]);
		if (rt->dev[d].region.ptr)
			ho_pool_free(rt->pool, &rt->dev[d].region);
		if (rt->dev[d].be)
			rt->dev[d].ops->close(rt->dev[d].be);
		free(rt->dev[d].nodes);
		free(rt->dev[d].cq);
	}
	if (rt->pool)
		ho_rt_ext_free(rt);
	if (rt->pool)
		ho_pool_close(rt->pool);
	pthread_mutex_destroy(&rt->lock);
	pthread_cond_destroy(&rt->cond);
	pthread_cond_destroy(&rt->run_cond);
	free(rt->k);
	free(rt->ctl);
	free(rt->node_dev);
	free(rt->prio);
	free(rt->home);
	free(rt->buf);
	free(rt->is_copy);
	free(rt->offset);
	free(rt->is_set);
	free(rt->nhwc);
	free(rt->post);
	free(rt->bn);
	free(rt->folded);
	free(rt->moves);
	free(rt->waiting);
	free(rt->mem_off);
	free(rt->mem_succ);
	free(rt->copy_waiting);
	free(rt->done);
	free(rt->copied);
	free(rt->start);
	free(rt->end);
	free(rt->copy_start);
	free(rt->copy_end);
	free(rt);
}

/* Devices, node placement and priorities: the schedule's, or all on one CPU. */
static int ho_rt_place(struct ho_rt *rt, const struct ho_rt_opts *o, struct ho_error *err)
{
	const struct ho_graph *g = rt->g;
	const struct ho_rt_placement *pl = o ? o->placement : NULL;

	if (!pl) {
		rt->n_dev = 1;
		snprintf(rt->desc[0].name, sizeof(rt->desc[0].name), "cpu0");
		rt->desc[0].threads = o ? o->threads : 0;
		rt->desc[0].numa_node = -1;
		for (uint32_t i = 0; i < g->n_nodes; i++) {
			rt->node_dev[g->topo[i]] = 0;
			rt->prio[g->topo[i]] = i;
		}
		return 0;
	}
	if (!pl->n_devices || pl->n_devices > HO_RT_MAX_DEVICES)
		return ho_err(err, -EINVAL, "placement: %u devices", pl->n_devices);
	rt->n_dev = pl->n_devices;
	memcpy(rt->desc, pl->dev, sizeof(rt->desc));
	rt->host = pl->host;
	memcpy(rt->in_place, pl->in_place, sizeof(rt->in_place));
	memcpy(rt->pred_peak, pl->pred_peak, sizeof(rt->pred_peak));
	rt->pred_start = pl->pred_start;
	rt->pred_end = pl->pred_end;
	rt->pred_copy_start = pl->pred_copy_start;
	rt->pred_copy_end = pl->pred_copy_end;
	for (uint32_t i = 0; i < g->n_nodes; i++) {
		int32_t d = pl->node_device[i];

		if (d >= (int32_t)rt->n_dev)
			return ho_err(err, -EINVAL, "placement: node '%s' on device %d of %u",
				      g->nodes[i].name, d, rt->n_dev);
		/* Not a task (Constant, folded): nothing to run, its output is data. */
		rt->node_dev[i] = d;
		rt->prio[i] = pl->node_prio[i];
	}
	return 0;
}

/* The tensor an alias output shares bytes with (its first input, through chains of aliases). */
int32_t ho_rt_root(const struct ho_rt *rt, int32_t t)
{
	const struct ho_graph *g = rt->g;

	for (;;) {
		int32_t p = g->tensors[t].producer;

		if (p < 0 || rt->node_dev[p] < 0 || !ho_op_is_view(g->nodes[p].op_type) ||
		    !g->nodes[p].n_inputs || g->nodes[p].inputs[0] < 0 || rt->moves[p] ||
		    g->nodes[p].outputs[0] != t)
			return t;
		t = g->nodes[p].inputs[0];
	}
}

/* A tensor a fused kernel skips: a Conv's output, or its folded batch norm's, when
 * a later folded node writes the result instead. */
static bool ho_rt_unwritten(const struct ho_rt *rt, int32_t t)
{
	int32_t p = rt->g->tensors[t].producer;

	if (p < 0 || rt->g->nodes[p].outputs[0] != t)
		return false;
	if (rt->post[p] >= 0 || rt->bn[p] >= 0)
		return true; /* the Conv's own output */
	/* a folded node's output (a batch norm's, a swish's Sigmoid's) when the chain's last
	 * node writes instead */
	return rt->folded[p] >= 0 && rt->post[rt->folded[p]] >= 0 && rt->post[rt->folded[p]] != p;
}

/* A constant every consumer of which reads its own replica: no home bytes needed. */
static bool ho_rt_home_unread(const struct ho_rt *rt, int32_t t)
{
	const struct ho_tensor *tt = &rt->g->tensors[t];

	if (!ho_is_data(tt) || (tt->flags & (HO_T_INPUT | HO_T_OUTPUT)) || !tt->n_consumers)
		return false;
	for (uint32_t c = 0; c < tt->n_consumers; c++) {
		int32_t d = rt->node_dev[tt->consumers[c]];

		if (d < 0 || d == rt->home[t] || !rt->is_copy[AT(rt, t, d)])
			return false;
	}
	return true;
}

/* The node whose kernel writes t: its producer, or the Conv that folded it in. */
static int32_t ho_rt_writer(const struct ho_rt *rt, int32_t t)
{
	int32_t p = rt->g->tensors[t].producer;

	if (p < 0 || rt->node_dev[p] < 0)
		return -1;
	return rt->folded[p] >= 0 ? rt->folded[p] : p;
}

/* A reuse the timeline allows: its writer waits for the earlier occupant's readers. */
static int ho_rt_memory_waits(const struct ho_rt *rt, uint32_t d, const struct ho_mp_item *items,
			      const struct ho_mp_plan *pl, uint32_t (**edges)[2], uint32_t *n_edges,
			      uint32_t *cap)
{
	for (uint32_t i = 0; i < pl->n_waits; i++) {
		const struct ho_mp_item *x = &items[pl->waits[i].after],
					*y = &items[pl->waits[i].before];

		const uint32_t *rd = pl->waits[i].direct ? y->direct : y->readers;
		uint32_t n_rd = pl->waits[i].direct ? y->n_direct : y->n_readers;

		for (uint32_t k = 0; k <= n_rd; k++) {
			int32_t r = k < n_rd ? (int32_t)rd[k] : y->writer;

			/* nodes that never run (folded shape arithmetic) release nothing */
			if (r < 0 || r == x->writer ||
			    (r < (int32_t)rt->g->n_nodes && rt->node_dev[r] < 0))
				continue;
			if (*n_edges == *cap) {
				uint32_t c = *cap ? 2 * *cap : 256;
				void *p = realloc(*edges, (size_t)c * sizeof(**edges));

				if (!p)
					return -ENOMEM;
				*edges = p;
				*cap = c;
			}
			(*edges)[*n_edges][0] = (uint32_t)r;
			(*edges)[(*n_edges)++][1] =
			    x->copy ? rt->g->n_nodes + (uint32_t)AT(rt, x->tensor, d)
				    : (uint32_t)x->writer;
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

/*
 * Offsets of every home and replica in its device's region (memplan.c):
 * a tensor and the aliases that share its bytes are one item, read by all
 * their consumers; a replica is read by its consumers on that device.
 */
static int ho_rt_memplan(struct ho_rt *rt, uint64_t *need, struct ho_error *err)
{
	const struct ho_graph *g = rt->g;
	size_t n_items = 0, n_refs = 0, n_drefs = 0;
	struct ho_mp_item *items = NULL;
	uint32_t *refs = NULL, *drefs = NULL, words = 0, *item_t = NULL, *item_d = NULL;
	uint64_t *anc = ho_memplan_ancestors(g, &words);
	double *seq = NULL;
	struct ho_mp_order order = {anc,      words,	  rt->pred_start,   rt->pred_end,
				    rt->prio, g->n_nodes, rt->pred_copy_end};
	uint32_t(*edges)[2] = NULL, n_edges = 0, cap_edges = 0;
	/* root[t]: the tensor whose bytes t shares; n_alias[t]: tensors sharing t's */
	int32_t *root = calloc(g->n_tensors + 1, sizeof(int32_t));
	uint32_t *n_alias = calloc(g->n_tensors + 1, sizeof(uint32_t));
	int ret = -ENOMEM;

	if (!root || !n_alias)
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
			/* a graph input's replica is copied in at the start, then free after use */
			it->permanent = it->writer < 0 && !(it->copy && (tt->flags & HO_T_INPUT));
			it->to_end = tt->flags & HO_T_OUTPUT;
			it->readers = &refs[n_refs];
			it->direct = &drefs[n_drefs];
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
				if (g->tensors[a].flags & HO_T_OUTPUT)
					it->to_end = true;
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
static int ho_rt_region_alloc(struct ho_rt *rt, uint32_t d, uint64_t size, struct ho_error *err)
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

static int ho_rt_layout(struct ho_rt *rt, const struct ho_rt_opts *o, struct ho_error *err)
{
	const struct ho_graph *g = rt->g;
	uint64_t need[HO_RT_MAX_DEVICES] = {0};
	int ret;

	for (uint32_t t = 0; t < g->n_tensors; t++) {
		const struct ho_tensor *tt = &g->tensors[t];
		int32_t p = tt->producer;

		rt->home[t] = -1;
		if (ho_is_data(tt))
			rt->home[t] = rt->host;
		else if (p >= 0 && rt->node_dev[p] >= 0)
			rt->home[t] = rt->node_dev[p];
	}
	/* An alias output lives where its source does, if its node can read it there. */
	for (uint32_t i = 0; i < g->n_nodes; i++) {
		uint32_t id = (uint32_t)g->topo[i];
		const struct ho_node *n = &g->nodes[id];
		int32_t d = rt->node_dev[id];

		if (d < 0 || !ho_op_is_view(n->op_type) || !n->n_inputs || n->inputs[0] < 0 ||
		    n->outputs[0] < 0)
			continue;
		if (rt->home[n->inputs[0]] < 0 || ho_shares_memory(rt, rt->home[n->inputs[0]], d))
			rt->home[n->outputs[0]] = rt->home[n->inputs[0]];
		else
			rt->moves[id] = 1;
	}
	/* Replicas where a consumer cannot read the home. */
	for (uint32_t t = 0; t < g->n_tensors; t++) {
		const struct ho_tensor *tt = &g->tensors[t];
		int32_t h = rt->home[t];

		if (h < 0)
			continue;
		if (!tt->bytes && ho_shape_numel(&tt->shape) != 0)
			return ho_err(err, -EINVAL, "tensor '%s': shape not fully known", tt->name);
		for (uint32_t c = 0; c < tt->n_consumers; c++) {
			int32_t d = rt->node_dev[tt->consumers[c]];

			if (d >= 0 && !ho_shares_memory(rt, h, d))
				rt->is_copy[AT(rt, t, d)] = 1;
		}
	}
	ret = ho_rt_ext_plan(rt, o, err);
	if (!ret)
		ret = ho_rt_memplan(rt, need, err);
	if (ret)
		return ret;
	for (uint32_t d = 0; d < rt->n_dev; d++) {
		ret = ho_rt_region_alloc(rt, d, need[d], err);
		if (ret)
			return ret;
		rt->dev[d].region_used = need[d];
		rt->report.region_bytes[d] = need[d];
		/* device memory (node -1) has no node to ask about */
		rt->report.region_node[d] =
		    rt->dev[d].region.node < 0 ? -1 : ho_pool_buf_node(&rt->dev[d].region);
	}
	/* Aliases share their source's bytes: point, do not place. */
	for (uint32_t t = 0; t < g->n_tensors; t++) {
		int32_t h = rt->home[t];

		if (h < 0)
			continue;
		for (uint32_t d = 0; d < rt->n_dev; d++)
			if (((int32_t)d == h && !ho_rt_home_unread(rt, (int32_t)t)) ||
			    rt->is_copy[AT(rt, t, d)])
				rt->buf[AT(rt, t, d)] =
				    (char *)rt->dev[d].region.ptr + rt->offset[AT(rt, t, d)];
	}
	ret = ho_rt_ext_alloc(rt, err); /* pages of their own, outside the regions */
	if (ret)
		return ret;
	for (uint32_t i = 0; i < g->n_nodes; i++) {
		const struct ho_node *n = &g->nodes[g->topo[i]];

		if (rt->node_dev[g->topo[i]] < 0 || !ho_op_is_view(n->op_type) || !n->n_inputs ||
		    n->inputs[0] < 0 || n->outputs[0] < 0 || rt->moves[g->topo[i]])
			continue;
		/* a replica of the alias itself (its source has none there) keeps its own bytes */
		for (uint32_t d = 0; d < rt->n_dev; d++)
			if (!rt->is_copy[AT(rt, n->outputs[0], d)])
				rt->buf[AT(rt, n->outputs[0], d)] =
				    rt->buf[AT(rt, n->inputs[0], d)];
	}
	/* Constants: their bytes at home, and already in every replica. */
	for (uint32_t t = 0; t < g->n_tensors; t++) {
		const struct ho_tensor *tt = &g->tensors[t];

		/* inputs are the caller's, but for those the plan was made for the values of */
		if (!ho_is_data(tt) || ho_is_fed(tt) || rt->home[t] < 0)
			continue;
		for (uint32_t d = 0; d < rt->n_dev; d++) {
			void *p = rt->buf[AT(rt, t, d)];

			/* a folded tensor with no value is one nothing that runs reads */
			if (p && (d == (uint32_t)rt->home[t] || rt->is_copy[AT(rt, t, d)]) &&
			    ho_rt_fill_constant(tt, p) &&
			    (!(tt->flags & HO_T_FOLDED) || tt->value || ho_rt_read_at_run(rt, t)))
				return ho_err(err, -EINVAL,
					      "tensor '%s' (%s): a constant the plan cannot write",
					      tt->name, ho_dtype_name(tt->dtype));
			if (rt->is_copy[AT(rt, t, d)])
				rt->is_copy[AT(rt, t, d)] = 2; /* filled once, at plan time */
		}
	}
	return 0;
}

/* The layout class of node i's kernel on its device's backend. */
static enum ho_be_layout ho_rt_op_layout(const struct ho_rt *rt, int32_t i, bool *binary)
{
	bool bin = false;
	enum ho_be_layout l =
	    rt->node_dev[i] < 0
		? HO_BE_PLAIN
		: rt->dev[rt->node_dev[i]].ops->layout(rt->g->nodes[i].op_type, &bin);

	if (binary)
		*binary = bin;
	return l;
}

/*
 * Channels-last (NHWC) for the 4-D activations that only layout-agnostic
 * kernels touch: convolutions run several times faster on it than on
 * NCHW (mobilenet_v2: 25.7 -> 11.5 ms).  Inputs, outputs, constants and
 * whatever a layout-bound operator (Reshape, Gemm, Transpose, ...) reads or
 * writes stay NCHW; then, until nothing changes, an element-wise, pooling or
 * batch-norm node whose output and full-shape inputs disagree makes them all
 * NCHW.  Convolution and Concat convert between the two as they go.
 */
static void ho_rt_layouts(struct ho_rt *rt)
{
	const struct ho_graph *g = rt->g;
	bool changed = true;

	for (uint32_t t = 0; t < g->n_tensors; t++) {
		const struct ho_tensor *tt = &g->tensors[t];
		int32_t p = tt->producer;
		bool ok = tt->shape.rank == 4 && tt->dtype == HO_DT_FLOAT && p >= 0 &&
			  rt->node_dev[p] >= 0 && !(tt->flags & (HO_T_OUTPUT | HO_T_INPUT)) &&
			  !ho_is_data(tt) && ho_rt_op_layout(rt, p, NULL) != HO_BE_PLAIN;

		for (uint32_t c = 0; ok && c < tt->n_consumers; c++)
			ok = rt->node_dev[tt->consumers[c]] >= 0 &&
			     ho_rt_op_layout(rt, tt->consumers[c], NULL) != HO_BE_PLAIN;
		rt->nhwc[t] = ok;
	}
	while (changed) {
		changed = false;
		for (uint32_t i = 0; i < g->n_nodes; i++) {
			const struct ho_node *n = &g->nodes[i];
			int32_t y = n->n_outputs ? n->outputs[0] : -1;
			bool mismatch = false, binary;

			if (rt->node_dev[i] < 0 || y < 0 ||
			    ho_rt_op_layout(rt, (int32_t)i, &binary) != HO_BE_SAME_LAYOUT)
				continue;
			/* The first input of a unary kernel (pooling, resize, ...) whatever
			 * its shape; of a binary one, the inputs of the output's shape. */
			for (uint32_t k = 0; k < n->n_inputs; k++) {
				int32_t t = n->inputs[k];

				if (t >= 0 && g->tensors[t].shape.rank == 4 &&
				    ((k == 0 && !binary) ||
				     !memcmp(g->tensors[t].shape.dim, g->tensors[y].shape.dim,
					     sizeof(g->tensors[y].shape.dim[0]) * 4)) &&
				    rt->nhwc[t] != rt->nhwc[y])
					mismatch = true;
			}
			if (!mismatch)
				continue;
			rt->nhwc[y] = 0;
			for (uint32_t k = 0; k < n->n_inputs; k++)
				if (n->inputs[k] >= 0)
					rt->nhwc[n->inputs[k]] = 0;
			changed = true;
		}
	}
}

/* Node b, reading t, may run inside node i's kernel: same device, not taken, t's layout. */
static bool ho_rt_can_fold(const struct ho_rt *rt, uint32_t i, int32_t t, int32_t b)
{
	return b >= 0 && rt->node_dev[b] == rt->node_dev[i] && rt->folded[b] < 0 &&
	       rt->nhwc[rt->g->nodes[b].outputs[0]] == rt->nhwc[t];
}

/* ho_matmul_chain's Add, if it folds here (the MatMul's device, no blocked layout); else -1. */
static int32_t ho_rt_matmul_bias(const struct ho_rt *rt, uint32_t i, int32_t *post)
{
	const struct ho_graph *g = rt->g;
	int32_t t = g->nodes[i].outputs[0], b;

	ho_matmul_chain(g, i, &b, post);
	if (b < 0)
		return -1;
	if (rt->node_dev[b] != rt->node_dev[i] || rt->folded[b] >= 0 || rt->nhwc[t] ||
	    rt->nhwc[g->nodes[b].outputs[0]])
		return -1;
	return b;
}

/* Node b runs inside node i's kernel. */
static void ho_rt_fold(struct ho_rt *rt, uint32_t i, int32_t b)
{
	rt->folded[b] = (int32_t)i;
	rt->report.fused++;
}

/*
 * Conv + BatchNormalization + element-wise, and MatMul + bias Add +
 * element-wise, each the only consumer of the one before, on the same
 * device: the batch norm goes into the weights, the bias into the matmul,
 * and the element-wise node runs as a oneDNN post-op, one pass over memory
 * instead of three.  The middle node sits in bn[], the last in post[].  What
 * runs is still the schedule: every node, on the device it chose, in its
 * order.
 */
static void ho_rt_fuse(struct ho_rt *rt)
{
	const struct ho_graph *g = rt->g;

	for (uint32_t i = 0; i < g->n_nodes; i++) {
		const char *op = g->nodes[i].op_type;
		bool matmul = !strcmp(op, "MatMul");
		int32_t mid, b;

		if (rt->node_dev[i] < 0 || !g->nodes[i].n_outputs || g->nodes[i].outputs[0] < 0 ||
		    (!matmul && strcmp(op, "Conv") && strcmp(op, "ConvTranspose")))
			continue;
		if (matmul) {
			/* the matmul kernel folds an element-wise node after a bias only */
			mid = ho_rt_matmul_bias(rt, i, &b);
			if (mid < 0)
				continue;
		} else {
			/* The chain the simulator charges as fused, where it can fold here. */
			ho_conv_chain(g, i, &mid, &b);
			if (mid >= 0 && !ho_rt_can_fold(rt, i, g->nodes[i].outputs[0], mid))
				mid = b = -1; /* an element-wise node reads the batch norm */
		}
		if (mid >= 0) {
			rt->bn[i] = mid;
			ho_rt_fold(rt, i, mid);
		}
		int32_t t = g->nodes[mid >= 0 ? mid : (int32_t)i].outputs[0],
			sig = b >= 0 && !matmul ? ho_swish_sigmoid(g, b) : -1;

		/* a swish: its Sigmoid folds with the Mul, or neither does */
		if (ho_rt_can_fold(rt, i, t, b) && (sig < 0 || ho_rt_can_fold(rt, i, t, sig))) {
			rt->post[i] = b;
			ho_rt_fold(rt, i, b);
			if (sig >= 0)
				ho_rt_fold(rt, i, sig);
		}
	}
}

/* What device d sees of tensor t: its own copy, else the home it shares; NULL if none. */
static void *ho_rt_view(const struct ho_rt *rt, int32_t t, uint32_t d)
{
	if (rt->buf[AT(rt, t, d)])
		return rt->buf[AT(rt, t, d)];
	return rt->home[t] >= 0 ? rt->buf[AT(rt, t, rt->home[t])] : NULL;
}

/* An alias node off its source's device: its source's replica there into its own output. */
int ho_rt_move(struct ho_rt *rt, uint32_t id, uint32_t d, struct ho_error *err)
{
	const struct ho_node *n = &rt->g->nodes[id];
	struct ho_pool_copy c = {.len = (size_t)rt->g->tensors[n->outputs[0]].bytes};
	int ret;

	/* in d's region, or the output in pages of its own (outside memory, bound) */
	c.src = ho_rt_buf_of(rt, d, ho_rt_view(rt, n->inputs[0], d), &c.src_off);
	c.dst = ho_rt_buf_of(rt, d, rt->buf[AT(rt, n->outputs[0], d)], &c.dst_off);
	ret = ho_pool_queue_copy(rt->dev[d].syncq, &c, 1);

	if (ret)
		return ho_err(err, ret, "node '%s' on %s: copying its input failed", n->name,
			      rt->desc[d].name);
	pthread_mutex_lock(&rt->lock);
	rt->report.chains++;
	rt->report.chain_bytes += (double)c.len;
	pthread_mutex_unlock(&rt->lock);
	return 0;
}

/*
 * The copy queues of dv: its copy thread's, deep enough for every copy into
 * it to be in flight at once (up to HO_RT_COPY_DEPTH), and its worker's own, for the
 * copies it waits for (alias moves, and copies it takes when idle).
 */
static int ho_rt_queues(struct ho_rt *rt, struct ho_rt_dev *dv, bool by_ioctl, struct ho_error *err)
{
	unsigned int flags = by_ioctl ? HO_POOL_QUEUE_IOCTL : 0;
	int ret = 0;

	dv->copy_depth = dv->cq_cap < HO_RT_COPY_DEPTH ? dv->cq_cap : HO_RT_COPY_DEPTH;
	if (dv->cq_cap)
		ret = ho_pool_queue_open(rt->pool, dv->copy_depth, flags, &dv->copyq);
	if (!ret)
		ret = ho_pool_queue_open(rt->pool, 1, flags, &dv->syncq);
	if (ret)
		return ho_err(err, ret, "device %s: cannot open a copy queue of the pool",
			      rt->desc[dv->idx].name);
	rt->report.copy_path = ho_pool_queue_path(dv->syncq);
	return 0;
}

void ho_rt_blocks_free(struct ho_rt_dev *dv)
{
	for (uint32_t i = 0; i < dv->n_blocks; i++)
		dv->ops->unwrap(dv->be, dv->blocks[i].blk);
	free(dv->blocks);
	dv->blocks = NULL;
	dv->n_blocks = 0;
}

/*
 * How device d's kernels reach host address p: the block holding it (a
 * device's region, an external tensor's own span), wrapped by d's backend
 * once, and p's offset in it.
 */
static int ho_rt_mem(struct ho_rt *rt, uint32_t d, void *p, struct ho_mem *m, struct ho_error *err)
{
	struct ho_rt_dev *dv = &rt->dev[d];
	char *c = p, *base = NULL;
	size_t len = 0;
	struct ho_rt_block *nb;
	int ret;

	*m = (struct ho_mem){.host = p};
	if (!p || !dv->ops->wrap)
		return 0;
	for (uint32_t i = 0; i < rt->n_dev && !base; i++) {
		char *r = rt->dev[i].region.ptr;

		if (r && c >= r && c < r + rt->dev[i].region.size)
			base = r, len = rt->dev[i].region.size;
	}
	for (uint32_t i = 0; i < rt->n_ext && !base; i++) {
		char *span = rt->ext[i].own.ptr;

		if (span && c >= span && c < span + rt->ext[i].len)
			base = span, len = rt->ext[i].len;
	}
	if (!base)
		return ho_err(err, -EFAULT, "internal: device %s: an address in no block",
			      rt->desc[d].name);
	for (uint32_t i = 0; i < dv->n_blocks; i++)
		if (dv->blocks[i].host == base) {
			m->block = dv->blocks[i].blk;
			m->off = (uint64_t)(c - base);
			return 0;
		}
	nb = realloc(dv->blocks, (dv->n_blocks + 1) * sizeof(*nb));
	if (!nb)
		return ho_err(err, -ENOMEM, "out of memory");
	dv->blocks = nb;
	nb[dv->n_blocks] = (struct ho_rt_block){.host = base, .len = len};
	ret = dv->ops->wrap(dv->be, base, len, &nb[dv->n_blocks].blk, err);
	if (ret)
		return ret;
	m->block = nb[dv->n_blocks++].blk;
	m->off = (uint64_t)(c - base);
	return 0;
}

/* Tensor t as device d's kernel of the node being prepared sees it (p: its bytes). */
static int ho_rt_see(struct ho_rt *rt, uint32_t d, int32_t t, void *p, struct ho_mem *mem,
		     struct ho_error *err)
{
	return ho_rt_mem(rt, d, p, &mem[t], err);
}

/* Node id's kernel on device d: the executor's own for control flow, else d's backend's. */
static int ho_rt_kernel(struct ho_rt *rt, uint32_t id, uint32_t d, struct ho_mem *mem,
			struct ho_error *err)
{
	const struct ho_graph *g = rt->g;
	const struct ho_node *n = &g->nodes[id];
	int ret = 0;

	/* an alias's output lives with its source, maybe in a memory it shares */
	for (uint32_t k = 0; k < n->n_inputs + n->n_outputs && !ret; k++) {
		int32_t t = k < n->n_inputs ? n->inputs[k] : n->outputs[k - n->n_inputs];

		if (t >= 0)
			ret = ho_rt_see(rt, d, t, ho_rt_view(rt, t, d), mem, err);
	}
	for (uint32_t k = 0; k < n->n_implicit && !ret; k++) /* what its subgraphs read */
		ret = ho_rt_see(rt, d, n->implicit[k], ho_rt_view(rt, n->implicit[k], d), mem, err);
	if (rt->bn[id] >= 0) { /* the batch norm's (bias Add's) parameters and output */
		const struct ho_node *bn = &g->nodes[rt->bn[id]];

		for (uint32_t k = 0; k < bn->n_inputs && !ret; k++)
			if (bn->inputs[k] >= 0 && bn->inputs[k] != n->outputs[0])
				ret = ho_rt_see(rt, d, bn->inputs[k],
						ho_rt_view(rt, bn->inputs[k], d), mem, err);
		if (!ret)
			ret = ho_rt_see(rt, d, bn->outputs[0], rt->buf[AT(rt, bn->outputs[0], d)],
					mem, err);
	}
	if (rt->post[id] >= 0 && !ret) { /* the post-op's constant operands and output */
		const struct ho_node *p = &g->nodes[rt->post[id]];
		int32_t y = p->outputs[0];

		for (uint32_t k = 1; k < p->n_inputs && !ret; k++)
			if (p->inputs[k] >= 0)
				ret = ho_rt_see(rt, d, p->inputs[k],
						ho_rt_view(rt, p->inputs[k], d), mem, err);
		if (!ret)
			ret = ho_rt_see(rt, d, y, rt->buf[AT(rt, y, d)], mem, err);
	}
	for (uint32_t k = 0; k < n->n_inputs + n->n_outputs && !ret; k++) {
		int32_t t = k < n->n_inputs ? n->inputs[k] : n->outputs[k - n->n_inputs];

		if (t >= 0 && !mem[t].host && g->tensors[t].bytes && !ho_rt_unwritten(rt, t))
			ret = ho_err(err, -EFAULT,
				     "internal: node '%s' on %s: tensor '%s' has no buffer there",
				     n->name, rt->desc[d].name, g->tensors[t].name);
	}
	if (ret)
		return ret;
	if (ho_rt_is_control(n->op_type))
		return ho_rt_control_prepare(g, n, mem, rt->dev[d].threads, &rt->ctl[id], err);
	return rt->dev[d].ops->prepare(rt->dev[d].be, g, id,
				       &(struct ho_fusion){rt->bn[id], rt->post[id]}, mem, rt->nhwc,
				       &rt->k[id], err);
}

static int ho_rt_kernels(struct ho_rt *rt, struct ho_error *err)
{
	const struct ho_graph *g = rt->g;
	struct ho_mem *mem = calloc(g->n_tensors + 1, sizeof(*mem));
	int ret = mem ? 0 : ho_err(err, -ENOMEM, "out of memory");

	for (uint32_t i = 0; i < g->n_nodes && !ret; i++) {
		uint32_t id = (uint32_t)g->topo[i];
		int32_t d = rt->node_dev[id];

		if (d >= 0 && rt->folded[id] < 0)
			ret = ho_rt_kernel(rt, id, (uint32_t)d, mem, err);
	}
	free(mem);
	return ret;
}

int ho_rt_new(const struct ho_graph *g, const struct ho_rt_opts *o, struct ho_rt **out,
	      struct ho_error *err)
{
	struct ho_rt *rt = calloc(1, sizeof(*rt));
	size_t td;
	int ret = -ENOMEM;

	*out = NULL;
	if (!rt)
		return ho_err(err, -ENOMEM, "out of memory");
	pthread_mutex_init(&rt->lock, NULL);
	pthread_cond_init(&rt->cond, NULL);
	pthread_cond_init(&rt->run_cond, NULL);
	rt->g = g;
	rt->pace = o ? o->pace : 0;
	rt->fail_node = -1;
	for (uint32_t i = 0; o && o->inject_failure && i < g->n_nodes; i++)
		if (!strcmp(g->nodes[i].name, o->inject_failure))
			rt->fail_node = (int32_t)i;
	rt->node_dev = calloc(g->n_nodes + 1, sizeof(int32_t));
	rt->prio = calloc(g->n_nodes + 1, sizeof(uint32_t));
	rt->k = calloc(g->n_nodes + 1, sizeof(*rt->k));
	rt->ctl = calloc(g->n_nodes + 1, sizeof(*rt->ctl));
	rt->waiting = calloc(g->n_nodes + 1, sizeof(uint32_t));
	rt->done = calloc(g->n_nodes + 1, 1);
	rt->start = calloc(g->n_nodes + 1, sizeof(double));
	rt->end = calloc(g->n_nodes + 1, sizeof(double));
	rt->is_set = calloc(g->n_inputs + 1, 1);
	rt->home = calloc(g->n_tensors + 1, sizeof(int32_t));
	rt->nhwc = calloc(g->n_tensors + 1, 1);
	rt->post = calloc(g->n_nodes + 1, sizeof(int32_t));
	rt->bn = calloc(g->n_nodes + 1, sizeof(int32_t));
	rt->folded = calloc(g->n_nodes + 1, sizeof(int32_t));
	rt->moves = calloc(g->n_nodes + 1, 1);
	if (!rt->node_dev || !rt->prio || !rt->k || !rt->ctl || !rt->waiting || !rt->done ||
	    !rt->start || !rt->end || !rt->is_set || !rt->home || !rt->nhwc || !rt->post ||
	    !rt->bn || !rt->folded || !rt->moves)
		goto nomem;
	ret = ho_rt_place(rt, o, err);
	if (ret)
		goto fail;
	td = (size_t)g->n_tensors * rt->n_dev + 1;
	rt->buf = calloc(td, sizeof(void *));
	rt->is_copy = calloc(td, 1);
	rt->copied = calloc(td, 1);
	rt->offset = calloc(td, sizeof(uint64_t));
	rt->copy_start = calloc(td, sizeof(double));
	rt->copy_end = calloc(td, sizeof(double));
	if (!rt->buf || !rt->is_copy || !rt->copied || !rt->offset || !rt->copy_start ||
	    !rt->copy_end)
		goto nomem;
	for (uint32_t i = 0; i < g->n_nodes; i++)
		if (!ho_node_is_task(&g->nodes[i]))
			rt->node_dev[i] = -1;
	ret = ho_pool_open(0, &rt->pool);
	if (ret) {
		ho_err(err, ret, "cannot open the memory pool");
		goto fail;
	}
	rt->report.pool = ho_pool_describe(rt->pool);
	for (uint32_t d = 0; d < rt->n_dev; d++) {
		rt->dev[d].rt = rt;
		rt->dev[d].idx = d;
		rt->dev[d].ops =
		    *rt->desc[d].backend ? ho_backend_find(rt->desc[d].backend) : ho_backend_host();
		if (!rt->dev[d].ops) {
			ret = ho_err(err, -EINVAL, "device %s: no backend named '%s' is built in",
				     rt->desc[d].name, rt->desc[d].backend);
			goto fail;
		}
		/* one device: the caller's choice; several share the cores: at least one each */
		rt->dev[d].threads =
		    rt->n_dev == 1 || rt->desc[d].threads > 0 ? rt->desc[d].threads : 1;
		ret = rt->dev[d].ops->open(&rt->desc[d], rt->dev[d].threads, &rt->dev[d].be, err);
		if (ret)
			goto fail;
		rt->dev[d].ops->query(rt->dev[d].be, &rt->dev[d].info);
		rt->report.backend[d] = rt->dev[d].ops->name;
		rt->report.backend_desc[d] = rt->dev[d].info.name;
		rt->report.emulated |= (uint32_t)rt->dev[d].info.emulated << d;
		for (uint32_t a = 0; a < d; a++)
			if ((rt->in_place[d] >> a & 1) &&
			    !(rt->dev[a].info.host_memory && rt->dev[d].info.host_memory)) {
				ret = ho_err(err, -EINVAL,
					     "the box links %s and %s with shared_memory, but the "
					     "%s backend cannot address host memory",
					     rt->desc[a].name, rt->desc[d].name,
					     rt->dev[a].info.host_memory ? rt->desc[d].name
									 : rt->desc[a].name);
				goto fail;
			}
		rt->dev[d].nodes = calloc(g->n_nodes + 1, sizeof(uint32_t));
		if (!rt->dev[d].nodes)
			goto nomem;
	}
	if (!(o && o->plain_layout))
		ho_rt_layouts(rt);
	for (uint32_t i = 0; i < g->n_nodes; i++)
		rt->post[i] = rt->bn[i] = rt->folded[i] = -1;
	if (!(o && o->no_fusion))
		ho_rt_fuse(rt);
	ret = ho_rt_layout(rt, o, err);
	if (ret)
		goto fail;
	ret = ho_rt_kernels(rt, err);
	if (ret)
		goto fail;
	for (uint32_t d = 0; d < rt->n_dev; d++) {
		for (uint32_t t = 0; t < g->n_tensors; t++)
			rt->dev[d].cq_cap += rt->is_copy[AT(rt, t, d)] == 1;
		if (rt->dev[d].cq_cap &&
		    !(rt->dev[d].cq = calloc(rt->dev[d].cq_cap, sizeof(uint32_t))))
			goto nomem;
		ret = ho_rt_queues(rt, &rt->dev[d], o && o->copy_ioctl, err);
		if (ret)
			goto fail;
	}
	/* Each device's nodes in priority order (insertion sort: plans are made once). */
	for (uint32_t i = 0; i < g->n_nodes; i++) {
		int32_t d = rt->node_dev[g->topo[i]];
		struct ho_rt_dev *dv;
		uint32_t j;

		if (d < 0)
			continue;
		dv = &rt->dev[d];
		j = dv->n_nodes++;
		while (j > 0 && rt->prio[dv->nodes[j - 1]] > rt->prio[g->topo[i]]) {
			dv->nodes[j] = dv->nodes[j - 1];
			j--;
		}
		dv->nodes[j] = (uint32_t)g->topo[i];
	}
	rt->report.start_s = rt->start;
	rt->report.end_s = rt->end;
	rt->report.copy_start_s = rt->copy_start;
	rt->report.copy_end_s = rt->copy_end;
	rt->report.n_devices = rt->n_dev;
	*out = rt;
	return 0;
nomem:
	ret = ho_err(err, -ENOMEM, "out of memory planning the model");
fail:
	ho_rt_free(rt);
	return ret;
}

/* data differs from the values bound input t was planned for (strings: their text). */
static bool ho_rt_other_values(const struct ho_tensor *t, const void *data)
{
	if (t->dtype != HO_DT_STRING)
		return memcmp(t->data, data, t->bytes) != 0;
	for (uint64_t i = 0; i < t->bytes / sizeof(char *); i++)
		if (strcmp(((const char *const *)t->data)[i], ((const char *const *)data)[i]))
			return true;
	return false;
}

void *ho_rt_tensor_data(struct ho_rt *rt, int32_t t)
{
	const struct ho_graph *g = rt->g;

	for (uint32_t i = 0; i < g->n_inputs; i++)
		if (g->inputs[i] == t)
			rt->is_set[i] = 1;
	return rt->home[t] >= 0 ? rt->buf[AT(rt, t, rt->home[t])] : NULL;
}

int ho_rt_set_input(struct ho_rt *rt, const char *name, const int64_t *shape, int rank,
		    const float *data, struct ho_error *err)
{
	return ho_rt_set_input_data(rt, name, HO_DT_FLOAT, shape, rank, data, err);
}

int ho_rt_set_input_data(struct ho_rt *rt, const char *name, int dtype, const int64_t *shape,
			 int rank, const void *data, struct ho_error *err)
{
	const struct ho_graph *g = rt->g;

	for (uint32_t i = 0; i < g->n_inputs; i++) {
		int32_t id = g->inputs[i];
		const struct ho_tensor *t = &g->tensors[id];

		if (strcmp(t->name, name))
			continue;
		if (t->dtype != dtype || !ho_dtype_size(dtype))
			return ho_err(err, -EINVAL, "input '%s' is %s, and %s data was given", name,
				      ho_dtype_name(t->dtype), ho_dtype_name(dtype));
		if (rank != t->shape.rank)
			return ho_err(err, -EINVAL, "input '%s': rank %d given, the model has %d",
				      name, rank, t->shape.rank);
		for (int d = 0; d < rank; d++)
			if (shape[d] != t->shape.dim[d])
				return ho_err(err, -EINVAL,
					      "input '%s': dimension %d is %lld, the plan has %lld",
					      name, d, (long long)shape[d],
					      (long long)t->shape.dim[d]);
		if ((t->flags & HO_T_BOUND) && t->bytes && ho_rt_other_values(t, data))
			return ho_err(err, -EINVAL,
				      "input '%s': the plan was made for other values of it; "
				      "plan again for these",
				      name);
		if (rt->home[id] >= 0 && t->bytes) /* an empty tensor has no data */
			memcpy(rt->buf[AT(rt, id, rt->home[id])], data, t->bytes);
		rt->is_set[i] = 1;
		return 0;
	}
	return ho_err(err, -ENOENT, "the model has no input named '%s'", name);
}
