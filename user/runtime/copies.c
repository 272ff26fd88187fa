// SPDX-License-Identifier: MIT
/*
 * The executor's copies (exec_priv.h): a tensor's replica on a device that
 * cannot read it in place is filled as its producer finishes, from the
 * device's copy queue, by the device's copy thread as chains in flight on its
 * pool queue (io_uring with ump.ko), or by its worker when that has nothing
 * else ready.
 */
#include <errno.h>
#include <pthread.h>
#include <string.h>

#include "common.h"
#include "exec_priv.h"
#include "heteroopt/pool.h"

/* Under lock: queue tensor t's copies into the devices that need one. */
void ho_rt_queue_copies(struct ho_rt *rt, int32_t t)
{
	for (uint32_t d = 0; d < rt->n_dev; d++)
		if (rt->is_copy[AT(rt, t, d)] == 1 && rt->dev[d].cq_tail < rt->dev[d].cq_cap)
			rt->dev[d].cq[rt->dev[d].cq_tail++] = (uint32_t)t;
}

/*
 * Under lock: take the first queued copy into dv whose bytes are free
 * (memory waits), in queue order; UINT32_MAX if there is none.
 */
uint32_t ho_rt_take_copy(struct ho_rt *rt, struct ho_rt_dev *dv)
{
	uint32_t pick = UINT32_MAX, t;

	for (uint32_t i = dv->cq_head; i < dv->cq_tail && pick == UINT32_MAX; i++)
		if (!rt->copy_waiting[AT(rt, dv->cq[i], dv->idx)])
			pick = i;
	if (pick == UINT32_MAX)
		return UINT32_MAX;
	t = dv->cq[pick];
	memmove(&dv->cq[dv->cq_head + 1], &dv->cq[dv->cq_head],
		(pick - dv->cq_head) * sizeof(*dv->cq));
	dv->cq_head++;
	rt->copying++;
	rt->copy_start[AT(rt, t, dv->idx)] = ho_clock_s() - rt->t0;
	return t;
}

/* The pool copy that fills tensor t's replica on device d. */
static struct ho_pool_copy ho_rt_copy_of(const struct ho_rt *rt, uint32_t d, uint32_t t)
{
	int32_t h = rt->home[t];
	struct ho_pool_copy c = {.len = (size_t)rt->g->tensors[t].bytes};

	/* in the device's region, or in pages of its own (and outside memory bound there) */
	c.src = ho_rt_buf_of(rt, (uint32_t)h, rt->buf[AT(rt, t, h)], &c.src_off);
	c.dst = ho_rt_buf_of(rt, d, rt->buf[AT(rt, t, d)], &c.dst_off);
	return c;
}

/* Unlocked: the copy of t into d taken above failed with ret (why: the backend's words). */
static void ho_rt_copy_failed(struct ho_rt *rt, uint32_t d, uint32_t t, int ret, const char *why)
{
	struct ho_error e;

	ho_err(&e, ret, "copying '%s' to %s failed%s%s", rt->g->tensors[t].name, rt->desc[d].name,
	       why ? ": " : "", why ? why : "");
	ho_rt_fail(rt, ret, &e);
}

int ho_rt_copy_between(struct ho_rt *rt, uint32_t s, const void *src, uint32_t d, void *dst,
		       size_t len, struct ho_error *err)
{
	struct ho_rt_dev *from = &rt->dev[s], *to = &rt->dev[d];
	struct ho_dev_block *blk;
	uint64_t off;
	int ret = 0;

	if (from->info.own_memory) {
		if (!(blk = ho_rt_block_at(from, src, &off)))
			return ho_err(err, -EFAULT, "internal: %s holds no block there",
				      rt->desc[s].name);
		ret = from->ops->read(from->be, blk, off, dst, len, err);
	}
	if (!ret && to->info.own_memory) {
		if (!(blk = ho_rt_block_at(to, dst, &off)))
			return ho_err(err, -EFAULT, "internal: %s holds no block there",
				      rt->desc[d].name);
		ret = to->ops->write(to->be, blk, off, from->info.own_memory ? dst : src, len, err);
	}
	return ret;
}

/* Whether the copy of t into d goes through a backend: an end keeps its own memory. */
static bool ho_rt_by_backend(const struct ho_rt *rt, uint32_t d, uint32_t t)
{
	return rt->dev[d].info.own_memory || rt->dev[rt->home[t]].info.own_memory;
}

/* Unlocked: the copy of t into d, through a backend; 0 or the failure, reported. */
static int ho_rt_copy_by_backend(struct ho_rt *rt, uint32_t d, uint32_t t)
{
	int32_t h = rt->home[t];
	struct ho_error e = {0};
	int ret = ho_rt_copy_between(rt, (uint32_t)h, rt->buf[AT(rt, t, h)], d,
				     rt->buf[AT(rt, t, d)], (size_t)rt->g->tensors[t].bytes, &e);

	if (ret)
		ho_rt_copy_failed(rt, d, t, ret, e.msg);
	return ret;
}

/* Under lock: the copy of t into d taken above is done; its consumers may start. */
static void ho_rt_copied(struct ho_rt *rt, uint32_t d, uint32_t t)
{
	const struct ho_graph *g = rt->g;

	rt->copying--;
	rt->copied[AT(rt, t, d)] = 1;
	rt->copy_end[AT(rt, t, d)] = ho_clock_s() - rt->t0;
	ho_rt_release(rt, g->n_nodes + AT(rt, t, d)); /* the bytes it read may be reused */
	rt->report.transfers++;
	rt->report.bytes_moved += (double)g->tensors[t].bytes;
	rt->report.chains++;
	rt->report.chain_bytes += (double)g->tensors[t].bytes;
	for (uint32_t k = 0; k < g->tensors[t].n_consumers; k++)
		if (rt->node_dev[g->tensors[t].consumers[k]] == (int32_t)d)
			rt->waiting[g->tensors[t].consumers[k]]--;
	ho_rt_wake(rt);
}

/* Under lock, released while it copies: fill t's replica on dv, taken above, and wait. */
void ho_rt_copy(struct ho_rt *rt, struct ho_rt_dev *dv, uint32_t t)
{
	struct ho_pool_copy c = ho_rt_copy_of(rt, dv->idx, t);
	int ret;

	if (!c.len) { /* an empty tensor (a detector's level with no boxes): nothing to move */
		ho_rt_copied(rt, dv->idx, t);
		return;
	}
	pthread_mutex_unlock(&rt->lock);
	if (ho_rt_by_backend(rt, dv->idx, t)) {
		ret = ho_rt_copy_by_backend(rt, dv->idx, t);
	} else {
		ret = ho_pool_queue_copy(dv->syncq, &c, 1);
		if (ret)
			ho_rt_copy_failed(rt, dv->idx, t, ret, NULL);
	}
	pthread_mutex_lock(&rt->lock);
	if (ret)
		rt->copying--;
	else
		ho_rt_copied(rt, dv->idx, t);
}

/*
 * Under lock, released while it waits: start every copy into dv whose bytes
 * are free as one batch of chains, then take the completions as they come;
 * false when there is nothing in flight to wait for.
 */
static bool ho_rt_copy_batch(struct ho_rt *rt, struct ho_rt_dev *dv)
{
	struct ho_pool_done done[64];
	uint32_t t;
	int n;

	while (!rt->run_err && ho_pool_queue_in_flight(dv->copyq) < dv->copy_depth &&
	       (t = ho_rt_take_copy(rt, dv)) != UINT32_MAX) {
		struct ho_pool_copy c = ho_rt_copy_of(rt, dv->idx, t);
		int ret;

		if (!c.len) { /* empty: nothing to move */
			ho_rt_copied(rt, dv->idx, t);
			continue;
		}
		if (ho_rt_by_backend(rt, dv->idx, t)) { /* done when it returns */
			pthread_mutex_unlock(&rt->lock);
			ret = ho_rt_copy_by_backend(rt, dv->idx, t);
			pthread_mutex_lock(&rt->lock);
			if (ret)
				rt->copying--;
			else
				ho_rt_copied(rt, dv->idx, t);
			continue;
		}
		ret = ho_pool_submit(dv->copyq, &c, 1, t);
		if (ret) {
			rt->copying--;
			pthread_mutex_unlock(&rt->lock);
			ho_rt_copy_failed(rt, dv->idx, t, ret, NULL);
			pthread_mutex_lock(&rt->lock);
		}
	}
	if (!ho_pool_queue_in_flight(dv->copyq))
		return false;
	pthread_mutex_unlock(&rt->lock);
	n = ho_pool_flush(dv->copyq);
	if (!n)
		n = ho_pool_reap(dv->copyq, done, 64, 1);
	if (n < 0) {
		struct ho_error e;

		/* What is in flight still writes the region: the copier's loop comes
		 * back here to reap it, submitting nothing more once the run failed. */
		ho_err(&e, n, "waiting for the copies into %s failed", rt->desc[dv->idx].name);
		ho_rt_fail(rt, n, &e);
	}
	for (int i = 0; i < n; i++)
		if (done[i].status)
			ho_rt_copy_failed(rt, dv->idx, (uint32_t)done[i].tag, done[i].status, NULL);
	pthread_mutex_lock(&rt->lock);
	for (int i = 0; i < n; i++)
		if (done[i].status)
			rt->copying--;
		else
			ho_rt_copied(rt, dv->idx, (uint32_t)done[i].tag);
	return true;
}

/* A device's copy engine: pool copies into its region, started as producers finish. */
void *ho_rt_copier(void *arg)
{
	struct ho_rt_dev *dv = arg;
	struct ho_rt *rt = dv->rt;

	pthread_mutex_lock(&rt->lock);
	for (;;) {
		if (ho_rt_copy_batch(rt, dv))
			continue;
		if (rt->run_err || (dv->cq_head == dv->cq_tail && !rt->remaining))
			break;
		pthread_cond_wait(&rt->cond, &rt->lock);
	}
	pthread_mutex_unlock(&rt->lock);
	return NULL;
}

/*
 * The graph's inputs (put) or outputs homed on a device that keeps its own
 * memory, moved between it and their host pages: an output the host's
 * copy engine fetched is not.
 */
static int ho_rt_graph_io(struct ho_rt *rt, bool put, struct ho_error *err)
{
	const struct ho_graph *g = rt->g;
	uint32_t n = put ? g->n_inputs : g->n_outputs;

	for (uint32_t i = 0; i < n; i++) {
		int32_t t = put ? g->inputs[i] : g->outputs[i], h = rt->home[t];
		struct ho_rt_dev *dv = h >= 0 ? &rt->dev[h] : NULL;
		void *p = h >= 0 ? rt->buf[AT(rt, t, h)] : NULL;
		size_t len = (size_t)g->tensors[t].bytes;
		struct ho_dev_block *blk;
		uint64_t off;
		int ret;

		if (!p || !dv->info.own_memory || !len ||
		    (!put && rt->is_copy[AT(rt, t, rt->host)]))
			continue;
		if (!(blk = ho_rt_block_at(dv, p, &off)))
			return ho_err(err, -EFAULT, "internal: %s '%s' in no block of %s",
				      put ? "input" : "output", g->tensors[t].name,
				      rt->desc[h].name);
		ret = put ? dv->ops->write(dv->be, blk, off, p, len, err)
			  : dv->ops->read(dv->be, blk, off, p, len, err);
		if (ret)
			return ret;
		rt->report.transfers++;
		rt->report.bytes_moved += (double)len;
	}
	return 0;
}

int ho_rt_put_inputs(struct ho_rt *rt, struct ho_error *err)
{
	return ho_rt_graph_io(rt, true, err);
}

int ho_rt_fetch_outputs(struct ho_rt *rt, struct ho_error *err)
{
	return ho_rt_graph_io(rt, false, err);
}

int ho_rt_host_side(struct ho_rt *rt, uint32_t d, uint32_t id, bool to_host, struct ho_error *err)
{
	const struct ho_node *n = &rt->g->nodes[id];
	struct ho_rt_dev *dv = &rt->dev[d];
	uint32_t cnt = to_host ? n->n_inputs + n->n_implicit : n->n_outputs;

	for (uint32_t k = 0; k < cnt; k++) {
		int32_t t = !to_host	      ? n->outputs[k]
			    : k < n->n_inputs ? n->inputs[k]
					      : n->implicit[k - n->n_inputs];
		void *p = t >= 0 ? ho_rt_view(rt, t, d) : NULL;
		size_t len = t >= 0 ? (size_t)rt->g->tensors[t].bytes : 0;
		struct ho_dev_block *blk;
		uint64_t off;
		int ret;

		if (!p || !len || !(blk = ho_rt_block_at(dv, p, &off)))
			continue; /* not in its memory: pages of the host's */
		ret = to_host ? dv->ops->read(dv->be, blk, off, p, len, err)
			      : dv->ops->write(dv->be, blk, off, p, len, err);
		if (ret)
			return ret;
	}
	return 0;
}
