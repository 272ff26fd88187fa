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
	free(rt->taken);
	free(rt->offset);
	free(rt->is_set);
	free(rt->nhwc);
	free(rt->post);
	free(rt->sum);
	free(rt->bn);
	free(rt->folded);
	free(rt->moves);
	free(rt->view_off);
	free(rt->into);
	free(rt->into_off);
	free(rt->gathers);
	free(rt->node_precision);
	free(rt->want_precision);
	free(rt->node_range);
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
	ho_rt_tail_free(rt->tail);
	free(rt->keep);
	free(rt);
}

const char *const ho_rt_precisions[] = {"fp32", "bf16", "int8", NULL};

/* prec is one of ho_rt_precisions (or "": float32). */
static int ho_rt_precision_known(const char *prec, struct ho_error *err)
{
	char known[64] = "";

	for (uint32_t i = 0; *prec && ho_rt_precisions[i]; i++)
		if (!strcmp(prec, ho_rt_precisions[i]))
			return 0;
	if (!*prec)
		return 0;
	for (uint32_t i = 0; ho_rt_precisions[i]; i++)
		snprintf(known + strlen(known), sizeof(known) - strlen(known), "%s%s",
			 i ? ", " : "", ho_rt_precisions[i]);
	return ho_err(err, -EINVAL, "precision '%s': not one of %s", prec, known);
}

/* What each node's kernel is asked to compute in: the node's own, else the schedule's for
 * it, else its device's; and the ranges its int8 kernel quantizes to, the options' else the
 * schedule's. */
static int ho_rt_want_precision(struct ho_rt *rt, const struct ho_rt_opts *o, struct ho_error *err)
{
	const struct ho_rt_placement *pl = o ? o->placement : NULL;
	const float *range = o && o->node_range ? o->node_range : pl ? pl->node_range : NULL;

	for (uint32_t i = 0; i < rt->g->n_nodes; i++) {
		const char *p = o && o->node_precision && o->node_precision[i]
				    ? o->node_precision[i]
				: pl && pl->node_precision && pl->node_precision[i]
				    ? ho_rt_precisions[pl->node_precision[i]]
				: rt->node_dev[i] >= 0 ? rt->desc[rt->node_dev[i]].precision
						       : "";

		if (ho_rt_precision_known(p, err))
			return -EINVAL;
		rt->want_precision[i] = *p && strcmp(p, ho_rt_precisions[0]) ? p : NULL;
	}
	if (range) {
		size_t bytes = 2 * sizeof(float) * rt->g->n_nodes;

		if (!(rt->node_range = malloc(bytes + 1)))
			return ho_err(err, -ENOMEM, "out of memory");
		memcpy(rt->node_range, range, bytes);
	}
	return 0;
}

/* Devices, node placement and priorities: the schedule's, or all on one CPU. */
static int ho_rt_place(struct ho_rt *rt, const struct ho_rt_opts *o, struct ho_error *err)
{
	const struct ho_graph *g = rt->g;
	const struct ho_rt_placement *pl = o ? o->placement : NULL;
	const char *prec = o && o->precision ? o->precision : "";

	if (ho_rt_precision_known(prec, err))
		return -EINVAL;
	if (*prec && pl)
		return ho_err(err, -EINVAL,
			      "precision '%s': a schedule's devices compute as it planned them",
			      prec);
	if (!pl) {
		rt->n_dev = 1;
		snprintf(rt->desc[0].name, sizeof(rt->desc[0].name), "cpu0");
		snprintf(rt->desc[0].precision, sizeof(rt->desc[0].precision), "%s", prec);
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
	/* the memory plan's target: the peak less what the kernels hold beside the region */
	for (uint32_t d = 0; d < HO_RT_MAX_DEVICES; d++)
		rt->pred_peak[d] = pl->pred_peak[d] - pl->pred_kernel_mem[d];
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

/* The residual a Conv's chain adds its result into, if t is that chain's output; else -1. */
static int32_t ho_rt_summed_into(const struct ho_rt *rt, int32_t t)
{
	const struct ho_graph *g = rt->g;
	int32_t p = g->tensors[t].producer, h = p >= 0 ? rt->folded[p] : -1;

	if (h < 0 || rt->sum[h] < 0 || g->nodes[ho_rt_chain_end(rt, (uint32_t)h)].outputs[0] != t)
		return -1;
	/* the Add's operand other than the chain's own (the Conv's or its batch norm's) */
	return ho_other_input(g, rt->sum[h], g->nodes[rt->bn[h] >= 0 ? rt->bn[h] : h].outputs[0]);
}

bool ho_rt_is_alias(const struct ho_rt *rt, uint32_t i)
{
	const struct ho_node *n = &rt->g->nodes[i];

	/* a Transpose folded into the MatMul after it; into the one before, it is written */
	return ho_node_is_view(rt->g, n) ||
	       (rt->folded[i] >= 0 && !strcmp(n->op_type, "Transpose") &&
		rt->post[rt->folded[i]] != (int32_t)i);
}

/* The tensor an alias output shares bytes with (its first input, through chains of
 * aliases), a Conv's chain that adds into a residual, that residual's, and a Concat's
 * input written in place, the Concat's output's. */
int32_t ho_rt_root(const struct ho_rt *rt, int32_t t)
{
	const struct ho_graph *g = rt->g;

	for (;;) {
		int32_t p = g->tensors[t].producer, r = ho_rt_summed_into(rt, t);

		if (rt->into[t] >= 0) { /* written into a Concat's output */
			t = rt->into[t];
			continue;
		}
		if (r >= 0) {
			t = r;
			continue;
		}

		if (p < 0 || rt->node_dev[p] < 0 || !ho_rt_is_alias(rt, (uint32_t)p) ||
		    !g->nodes[p].n_inputs || g->nodes[p].inputs[0] < 0 || rt->moves[p] ||
		    g->nodes[p].outputs[0] != t)
			return t;
		t = g->nodes[p].inputs[0];
	}
}

/*
 * The graph's outputs end in the host's memory: a replica there of each
 * one the host cannot read where it is, filled by the host's copy engine
 * once its writer is done, as the schedule predicts.  An output bound to
 * outside memory (ho_rt_bind_fd) stays where its device writes it, and a
 * host with memory of its own (a device running a graph alone) has its
 * outputs read back after the run (ho_rt_fetch_outputs).
 */
static void ho_rt_output_copies(struct ho_rt *rt)
{
	const struct ho_graph *g = rt->g;

	for (uint32_t i = 0; i < g->n_outputs + g->n_tensors && !rt->dev[rt->host].info.own_memory;
	     i++) {
		int32_t t = i < g->n_outputs ? g->outputs[i] : (int32_t)(i - g->n_outputs),
			h = t >= 0 ? rt->home[t] : -1;

		if (i >= g->n_outputs && !(rt->keep && rt->keep[t]))
			continue;
		if (h < 0 || ho_shares_memory(rt, h, rt->host) || !g->tensors[t].bytes ||
		    rt->ext_of[ho_rt_root(rt, t)] >= 0)
			continue;
		rt->is_copy[AT(rt, t, rt->host)] = 1;
	}
}

/*
 * Constant t is read on device d by kernels alone, each of which takes it over at prepare
 * (ops.takes_over: weights reordered into its own layout): d then holds no bytes of it,
 * and they prepare from the graph's.  The scheduler counts the same (ho_kernel_memory).
 */
static bool ho_rt_all_take(const struct ho_rt *rt, int32_t t, uint32_t d)
{
	const struct ho_graph *g = rt->g;
	const struct ho_tensor *tt = &g->tensors[t];
	uint32_t (*takes_over)(const struct ho_graph *, uint32_t) = rt->dev[d].ops->takes_over;
	uint32_t readers = 0;

	if (!takes_over || !ho_is_data(tt) || (tt->flags & (HO_T_INPUT | HO_T_OUTPUT)) ||
	    !ho_tensor_holds_bytes(tt))
		return false;
	for (uint32_t c = 0; c < tt->n_consumers; c++) {
		int32_t id = tt->consumers[c];

		if (rt->node_dev[id] != (int32_t)d)
			continue;
		/* a folded node's inputs are read by the kernel it is in, as it prepares */
		if (rt->folded[id] >= 0 ||
		    !ho_reads_only_through(&g->nodes[id], t, takes_over(g, (uint32_t)id)))
			return false;
		readers++;
	}
	return readers > 0;
}

/* Concat input t on device d: the tensor its writer writes (t, or the source of the views
 * t is of, all on d: ho_written_source), where that writer writes it on d, plainly, into
 * bytes of its own; else -1. */
static int32_t ho_rt_gather_source(const struct ho_rt *rt, int32_t t, int32_t d)
{
	const struct ho_graph *g = rt->g;
	int32_t p, h;

	for (int depth = 0;; depth++) {
		p = g->tensors[t].producer;
		if (depth == 64 || rt->nhwc[t] || rt->home[t] != d || p < 0 ||
		    rt->node_dev[p] != d || rt->moves[p])
			return -1;
		if (!ho_node_is_view(g, &g->nodes[p]))
			break;
		t = g->nodes[p].inputs[0];
	}
	h = rt->folded[p] >= 0 ? rt->folded[p] : p;
	if (rt->node_dev[h] != d || ho_rt_is_alias(rt, (uint32_t)p) ||
	    ho_rt_summed_into(rt, t) >= 0 || ho_rt_unwritten(rt, t))
		return -1;
	return t;
}

/*
 * The Concats whose inputs are written straight into their output, of those the graph
 * allows (ho_concat_in_place): where every input's writer runs on the Concat's device,
 * into bytes of its own, and all are plain (a channels-last input's channels are no run
 * of the output).  The simulator decides alike (sim.c, ho_gathers).
 */
static int ho_rt_gather(struct ho_rt *rt)
{
	const struct ho_graph *g = rt->g;
	int32_t *by = malloc((g->n_tensors + 1) * sizeof(int32_t));

	if (!by)
		return -ENOMEM;
	ho_concat_in_place(g, by, rt->into_off);
	for (uint32_t t = 0; t < g->n_tensors; t++)
		rt->into[t] = -1;
	for (uint32_t id = 0; id < g->n_nodes; id++) {
		const struct ho_node *n = &g->nodes[id];
		int32_t d = rt->node_dev[id];
		bool ok = !strcmp(n->op_type, "Concat") && d >= 0 && n->n_outputs == 1 &&
			  n->outputs[0] >= 0 && !rt->nhwc[n->outputs[0]];

		for (uint32_t k = 0; ok && k < n->n_inputs; k++) {
			int32_t s = ho_rt_gather_source(rt, n->inputs[k], d);

			ok = s >= 0 && by[s] == (int32_t)id;
		}
		for (uint32_t k = 0; ok && k < n->n_inputs; k++)
			rt->into[ho_rt_gather_source(rt, n->inputs[k], d)] = n->outputs[0];
		rt->gathers[id] = ok;
		rt->report.gathered += ok;
	}
	free(by);
	return 0;
}

/* Where a Concat's input written in place lies on d: its run of the output. */
static char *ho_rt_into_buf(const struct ho_rt *rt, int32_t t, uint32_t d)
{
	if (rt->into[t] < 0)
		return rt->buf[AT(rt, t, d)];
	return ho_rt_into_buf(rt, rt->into[t], d) + rt->into_off[t];
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

		if (d < 0 || !ho_rt_is_alias(rt, id) || !n->n_inputs || n->inputs[0] < 0 ||
		    n->outputs[0] < 0)
			continue;
		rt->view_off[id] = ho_view_offset(g, n);
		if (rt->home[n->inputs[0]] < 0 || ho_shares_memory(rt, rt->home[n->inputs[0]], d))
			rt->home[n->outputs[0]] = rt->home[n->inputs[0]];
		else
			rt->moves[id] = 1;
	}
	if (ho_rt_gather(rt))
		return ho_err(err, -ENOMEM, "out of memory");
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
		for (uint32_t d = 0; d < rt->n_dev; d++)
			if (ho_rt_all_take(rt, (int32_t)t, d)) {
				rt->taken[AT(rt, t, d)] = 1;
				rt->is_copy[AT(rt, t, d)] = 0;
			}
	}
	ret = ho_rt_ext_plan(rt, o, err);
	if (!ret)
		ho_rt_output_copies(rt);
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
	/* taken over with no bytes here (a home others read in place has them): the graph's */
	for (size_t i = 0; i < (size_t)g->n_tensors * rt->n_dev; i++)
		if (rt->taken[i] && !rt->buf[i])
			rt->buf[i] = (void *)g->tensors[i / rt->n_dev].data;
	/* A Concat's inputs written in place: in their runs of its output. */
	for (uint32_t t = 0; t < g->n_tensors; t++)
		if (rt->into[t] >= 0)
			rt->buf[AT(rt, t, rt->home[t])] =
			    ho_rt_into_buf(rt, (int32_t)t, (uint32_t)rt->home[t]);
	/* A chain that adds into a residual writes its result in the residual's bytes. */
	for (uint32_t i = 0; i < g->n_nodes; i++) {
		int32_t h = g->topo[i], y;

		if (rt->sum[h] < 0)
			continue;
		y = g->nodes[ho_rt_chain_end(rt, (uint32_t)h)].outputs[0];
		rt->buf[AT(rt, y, rt->node_dev[h])] =
		    rt->buf[AT(rt, ho_rt_summed_into(rt, y), rt->node_dev[h])];
	}
	for (uint32_t i = 0; i < g->n_nodes; i++) {
		const struct ho_node *n = &g->nodes[g->topo[i]];

		if (rt->node_dev[g->topo[i]] < 0 || !ho_rt_is_alias(rt, (uint32_t)g->topo[i]) ||
		    !n->n_inputs || n->inputs[0] < 0 || n->outputs[0] < 0 || rt->moves[g->topo[i]])
			continue;
		/* a replica of the alias itself (its source has none there) keeps its own
		 * bytes; a Gather's or Slice's run starts view_off bytes into its source's */
		uint64_t off = rt->view_off[g->topo[i]];

		for (uint32_t d = 0; d < rt->n_dev; d++)
			if (!rt->is_copy[AT(rt, n->outputs[0], d)] &&
			    rt->buf[AT(rt, n->inputs[0], d)])
				rt->buf[AT(rt, n->outputs[0], d)] =
				    (char *)rt->buf[AT(rt, n->inputs[0], d)] + off;
	}
	/* Constants: their bytes at home, and already in every replica. */
	for (uint32_t t = 0; t < g->n_tensors; t++) {
		const struct ho_tensor *tt = &g->tensors[t];

		/* inputs are the caller's, but for those the plan was made for the values of */
		if (!ho_is_data(tt) || ho_is_fed(tt) || rt->home[t] < 0)
			continue;
		for (uint32_t d = 0; d < rt->n_dev; d++) {
			void *p = rt->buf[AT(rt, t, d)] != tt->data ? rt->buf[AT(rt, t, d)] : NULL;

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

/* What device d sees of tensor t: its own copy, else the home it shares; NULL if none. */
void *ho_rt_view(const struct ho_rt *rt, int32_t t, uint32_t d)
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
	char *src = (char *)ho_rt_view(rt, n->inputs[0], d) + rt->view_off[id];
	int ret;

	if (!c.len) /* empty: nothing to move */
		return 0;
	if (rt->dev[d].info.own_memory)
		return ho_rt_copy_between(rt, d, src, d, rt->buf[AT(rt, n->outputs[0], d)], c.len,
					  err);
	/* in d's region, or the output in pages of its own (outside memory, bound) */
	c.src = ho_rt_buf_of(rt, d, src, &c.src_off);
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

int ho_rt_new(const struct ho_graph *g, const struct ho_rt_opts *o, struct ho_rt **out,
	      struct ho_error *err)
{
	return ho_rt_plan(g, o, 0, out, err);
}

int ho_rt_plan(const struct ho_graph *g, const struct ho_rt_opts *o, int depth, struct ho_rt **out,
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
	rt->depth = depth;
	rt->pace = o ? o->pace : 0;
	rt->bounds = o ? o->bounds : NULL;
	rt->n_bounds = o ? o->n_bounds : 0;
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
	rt->sum = calloc(g->n_nodes + 1, sizeof(int32_t));
	rt->bn = calloc(g->n_nodes + 1, sizeof(int32_t));
	rt->folded = calloc(g->n_nodes + 1, sizeof(int32_t));
	rt->moves = calloc(g->n_nodes + 1, 1);
	rt->view_off = calloc(g->n_nodes + 1, sizeof(uint64_t));
	rt->into = calloc(g->n_tensors + 1, sizeof(int32_t));
	rt->into_off = calloc(g->n_tensors + 1, sizeof(uint64_t));
	rt->gathers = calloc(g->n_nodes + 1, 1);
	rt->node_precision = calloc(g->n_nodes + 1, sizeof(*rt->node_precision));
	rt->want_precision = calloc(g->n_nodes + 1, sizeof(*rt->want_precision));
	if (!rt->node_dev || !rt->prio || !rt->k || !rt->ctl || !rt->waiting || !rt->done ||
	    !rt->start || !rt->end || !rt->is_set || !rt->home || !rt->nhwc || !rt->post ||
	    !rt->sum || !rt->bn || !rt->folded || !rt->moves || !rt->view_off || !rt->into ||
	    !rt->into_off || !rt->gathers || !rt->node_precision || !rt->want_precision)
		goto nomem;
	ret = ho_rt_place(rt, o, err);
	if (!ret)
		ret = ho_rt_want_precision(rt, o, err);
	if (ret)
		goto fail;
	td = (size_t)g->n_tensors * rt->n_dev + 1;
	rt->buf = calloc(td, sizeof(void *));
	rt->is_copy = calloc(td, 1);
	rt->taken = calloc(td, 1);
	rt->copied = calloc(td, 1);
	rt->offset = calloc(td, sizeof(uint64_t));
	rt->copy_start = calloc(td, sizeof(double));
	rt->copy_end = calloc(td, sizeof(double));
	if (!rt->buf || !rt->is_copy || !rt->taken || !rt->copied || !rt->offset ||
	    !rt->copy_start || !rt->copy_end)
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
		if (rt->dev[d].info.own_memory &&
		    (!rt->dev[d].ops->read || !rt->dev[d].ops->write)) {
			ret = ho_err(err, -EINVAL,
				     "internal: backend %s keeps its own memory and cannot move "
				     "tensors in and out of it",
				     rt->dev[d].ops->name);
			goto fail;
		}
		rt->report.backend[d] = rt->dev[d].ops->name;
		rt->report.backend_desc[d] = rt->dev[d].info.name;
		rt->report.emulated |= (uint32_t)rt->dev[d].info.emulated << d;
		rt->report.own_memory |= (uint32_t)rt->dev[d].info.own_memory << d;
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
	ret = ho_rt_tail_split(rt, depth, err);
	if (ret)
		goto fail;
	if (!(o && o->plain_layout) && (ret = ho_rt_layouts(rt, err)))
		goto fail;
	for (uint32_t i = 0; i < g->n_nodes; i++)
		rt->post[i] = rt->sum[i] = rt->bn[i] = rt->folded[i] = -1;
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
	rt->report.node_precision = rt->node_precision;
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
