// SPDX-License-Identifier: MIT
/*
 * The executor's plan (exec_priv.h), its kernels: each node's kernel prepared
 * by its device's backend over the tensors' memory, which the backend reaches
 * through blocks it wrapped once per region or external span.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "exec_priv.h"
#include "heteroopt/sched.h"

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
	if (dv->info.own_memory &&
	    base != dv->region.ptr) /* its blocks are copies, not the pages */
		return ho_err(err, -EFAULT,
			      "internal: device %s keeps its own memory but is to read another's "
			      "in place",
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

struct ho_dev_block *ho_rt_block_at(const struct ho_rt_dev *dv, const void *p, uint64_t *off)
{
	for (uint32_t i = 0; i < dv->n_blocks; i++) {
		const char *h = dv->blocks[i].host;

		if ((const char *)p >= h && (const char *)p < h + dv->blocks[i].len) {
			*off = (uint64_t)((const char *)p - h);
			return dv->blocks[i].blk;
		}
	}
	return NULL;
}

/* Tensor t as device d's kernel of the node being prepared sees it (p: its bytes). */
static int ho_rt_see(struct ho_rt *rt, uint32_t d, int32_t t, void *p, struct ho_mem *mem,
		     struct ho_error *err)
{
	if (rt->taken[AT(rt, t, d)] && p == rt->g->tensors[t].data) { /* read as it prepares */
		mem[t] = (struct ho_mem){.host = p};
		return 0;
	}
	return ho_rt_mem(rt, d, p, &mem[t], err);
}

/* Node id's first input's calibrated range (int8's), or NULL. */
static const float *ho_rt_range(const struct ho_rt *rt, uint32_t id)
{
	return rt->node_range && !isnan(rt->node_range[2 * id]) ? &rt->node_range[2 * id] : NULL;
}

int ho_rt_observed(const struct ho_rt *rt, uint32_t node, const char *rule, float range[2])
{
	int32_t d = node < rt->g->n_nodes ? rt->node_dev[node] : -1;

	if (d < 0 || !rt->k[node] || !rt->dev[d].ops->observed)
		return -ENOENT;
	return rt->dev[d].ops->observed(rt->k[node], rule, range);
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
	if (rt->sum[id] >= 0 && !ret) { /* the residual Add's operands and output */
		const struct ho_node *a = &g->nodes[rt->sum[id]];

		for (uint32_t k = 0; k < a->n_inputs + 1 && !ret; k++) {
			int32_t t = k < a->n_inputs ? a->inputs[k] : a->outputs[0];

			if (!ho_rt_unwritten(rt, t))
				ret = ho_rt_see(rt, d, t, ho_rt_view(rt, t, d), mem, err);
		}
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
	uint32_t through = 0; /* inputs made by a Transpose folded in (ho_rt_fuse) */

	for (uint32_t k = 0; k < n->n_inputs && k < 32; k++) {
		int32_t p = n->inputs[k] >= 0 ? g->tensors[n->inputs[k]].producer : -1;

		through |= (uint32_t)(p >= 0 && rt->folded[p] == (int32_t)id &&
				      ho_rt_is_alias(rt, (uint32_t)p))
			   << k;
	}
	return rt->dev[d].ops->prepare(rt->dev[d].be, g, id,
				       &(struct ho_fusion){rt->bn[id], rt->post[id], rt->sum[id],
							   through, rt->want_precision[id],
							   ho_rt_range(rt, id)},
				       mem, rt->nhwc, &rt->k[id], err);
}

/* The memory node id's kernel on device d has of its own, into the report: weights in
 * one layout shared by several of d's kernels counted once (seen: the sigs counted). */
static void ho_rt_kernel_memory(struct ho_rt *rt, uint32_t id, uint32_t d, uint64_t *seen,
				uint32_t *n_seen)
{
	struct ho_kernel_memory m = {0};
	bool again = false;

	rt->dev[d].ops->kernel_memory(rt->k[id], &m);
	rt->report.kernel_held_bytes[d] += m.held;
	if (m.scratch > rt->report.workspace_bytes[d])
		rt->report.workspace_bytes[d] = m.scratch;
	for (uint32_t i = 0; i < *n_seen && m.packed && !again; i++)
		again = seen[2 * i] == d && seen[2 * i + 1] == m.packed_sig;
	if (!m.packed || again)
		return;
	rt->report.kernel_held_bytes[d] += m.packed;
	seen[2 * *n_seen] = d;
	seen[2 * (*n_seen)++ + 1] = m.packed_sig;
}

int ho_rt_kernels(struct ho_rt *rt, struct ho_error *err)
{
	const struct ho_graph *g = rt->g;
	struct ho_mem *mem = calloc(g->n_tensors + 1, sizeof(*mem));
	uint64_t *seen = calloc(2 * (size_t)g->n_nodes + 1, sizeof(uint64_t));
	uint32_t n_seen = 0;
	int ret = mem && seen ? 0 : ho_err(err, -ENOMEM, "out of memory");

	for (uint32_t i = 0; i < g->n_nodes && !ret; i++) {
		uint32_t id = (uint32_t)g->topo[i];
		int32_t d = rt->node_dev[id];

		if (d < 0 || rt->folded[id] >= 0 || rt->gathers[id])
			continue;
		ret = ho_rt_kernel(rt, id, (uint32_t)d, mem, err);
		if (!ret && rt->k[id] && rt->dev[d].ops->kernel_memory)
			ho_rt_kernel_memory(rt, id, (uint32_t)d, seen, &n_seen);
		if (!ret && rt->k[id] && rt->dev[d].ops->precision &&
		    (rt->node_precision[id] = rt->dev[d].ops->precision(rt->k[id])))
			rt->report.reduced++;
	}
	free(seen);
	free(mem);
	return ret;
}
