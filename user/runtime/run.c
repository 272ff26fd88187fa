// SPDX-License-Identifier: MIT
/*
 * The executor, running (exec_priv.h): one worker per device takes, among
 * its nodes whose producers are done and whose replicas are filled, the one
 * first in the schedule's priority order.  On a device whose launches only
 * queue, it runs ahead: a node is done for the device's later nodes once
 * queued, for everyone else once the device says it is.  Replicas are
 * filled by copies.c.
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

static void *ho_rt_worker(void *arg);

/* Something changed under the lock: wake whoever waits for it. */
void ho_rt_wake(struct ho_rt *rt)
{
	__atomic_add_fetch(&rt->progress, 1, __ATOMIC_RELEASE);
	pthread_cond_broadcast(&rt->cond);
}

/*
 * With the lock held: release it and watch the progress count until it
 * moves, for at most rt->spin_s; true if it moved.  A thread asleep on a
 * condition variable takes about 25 us to wake on the other core of a VM
 * (the wake-up interrupt exits to the hypervisor), longer than many nodes
 * run, and a device often waits out a long node on the other.  So a worker
 * that has a core to itself watches for up to a millisecond before it
 * sleeps: on the transformer split over two CPU devices, medians of 41
 * runs were 3.05-3.66 ms spinning 50 us, 2.78-3.26 ms at 200 us, 2.60-2.86
 * ms at 1 ms and 2.68-2.99 ms at 5 ms.  Where copy threads need cores too,
 * spinning starves them (the transformer on cpu + emulator: 4.8-5.1 ms
 * asleep at once, 5.7-6.0 ms spinning 50 us, 10 ms at 1 ms): none then.
 */
#define HO_RT_SPIN_S 1e-3

static inline void ho_spin_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause(); /* frees the core's other hardware thread a moment */
#endif
}

static bool ho_rt_spin(struct ho_rt *rt)
{
	uint64_t seen = __atomic_load_n(&rt->progress, __ATOMIC_RELAXED);
	double until = ho_clock_s() + rt->spin_s;

	pthread_mutex_unlock(&rt->lock);
	while (__atomic_load_n(&rt->progress, __ATOMIC_ACQUIRE) == seen && ho_clock_s() < until)
		ho_spin_relax();
	/* The change is seen while its maker still holds the lock: a plain lock
	 * would sleep until it lets go, the wake-up this spin is there to save. */
	while (pthread_mutex_trylock(&rt->lock))
		if (ho_clock_s() < until) {
			ho_spin_relax();
		} else {
			pthread_mutex_lock(&rt->lock);
			break;
		}
	return __atomic_load_n(&rt->progress, __ATOMIC_RELAXED) != seen;
}

/* Count the cross-device inputs node id reads in place (memory both devices address). */
static void ho_rt_count_in_place(struct ho_rt *rt, uint32_t id, uint32_t d)
{
	const struct ho_node *n = &rt->g->nodes[id];

	for (uint32_t k = 0; k < n->n_inputs; k++) {
		int32_t t = n->inputs[k], h;

		if (t < 0 || (h = rt->home[t]) < 0 || h == (int32_t)d ||
		    rt->is_copy[AT(rt, t, d)] || rt->copied[AT(rt, t, d)])
			continue;
		rt->copied[AT(rt, t, d)] = 1; /* counted once per run */
		__atomic_add_fetch(&rt->report.zero_copy, 1, __ATOMIC_RELAXED);
	}
}

/* The counter a memory wait's target keeps: a node's, or (from n_nodes up) a copy's. */
uint32_t *ho_rt_wait_count(struct ho_rt *rt, uint32_t target)
{
	return target < rt->g->n_nodes ? &rt->waiting[target]
				       : &rt->copy_waiting[target - rt->g->n_nodes];
}

/* Under lock: src (a node, or a copy from n_nodes up) is done; release what waits on it. */
void ho_rt_release(struct ho_rt *rt, size_t src)
{
	for (uint32_t k = rt->mem_off[src]; k < rt->mem_off[src + 1]; k++)
		(*ho_rt_wait_count(rt, rt->mem_succ[k]))--;
}

/*
 * Under lock: nothing runs, nothing is copied, and nothing can start, yet
 * nodes remain: they wait on each other.  Loaded schedules are checked so
 * that this cannot happen; it is the backstop that turns a bug into an error
 * instead of a hang.
 */
static bool ho_rt_stalled(const struct ho_rt *rt)
{
	const struct ho_graph *g = rt->g;

	if (rt->running || rt->copying || !rt->remaining || rt->run_err)
		return false;
	for (uint32_t i = 0; i < g->n_nodes; i++)
		if (rt->node_dev[i] >= 0 && !rt->done[i] && !rt->waiting[i])
			return false;
	for (uint32_t d = 0; d < rt->n_dev; d++)
		for (uint32_t k = rt->dev[d].cq_head; k < rt->dev[d].cq_tail; k++)
			if (!rt->copy_waiting[AT(rt, rt->dev[d].cq[k], d)])
				return false;
	return true;
}

/* The run fails with ret (the first failure is the one reported); everyone is woken. */
void ho_rt_fail(struct ho_rt *rt, int ret, const struct ho_error *e)
{
	pthread_mutex_lock(&rt->lock);
	if (!rt->run_err) {
		rt->run_err = ret;
		rt->err = *e;
	}
	ho_rt_wake(rt);
	pthread_mutex_unlock(&rt->lock);
}

/* The CPUs the box gives device d; false if it gives none. */
static bool ho_rt_cores(const struct ho_rt *rt, uint32_t d, cpu_set_t *set)
{
	bool any = false;

	CPU_ZERO(set);
	for (int c = 0; c < 64 * HO_RT_CORE_WORDS && c < CPU_SETSIZE; c++)
		if (rt->desc[d].cores[c / 64] >> (c % 64) & 1) {
			CPU_SET(c, set);
			any = true;
		}
	return any;
}

/*
 * A worker's or copy thread's life: sleep until a run starts, do its part,
 * say so; until ho_rt_free sets quit.
 */
static void *ho_rt_thread(void *arg)
{
	struct ho_rt_thread *th = arg;
	struct ho_rt *rt = th->dv->rt;
	uint32_t *busy = th == &th->dv->worker ? &rt->workers_busy : &rt->copiers_busy;

	pthread_mutex_lock(&rt->lock);
	for (;;) {
		while (!rt->quit && th->last_run == rt->run_id)
			pthread_cond_wait(&rt->run_cond, &rt->lock);
		if (rt->quit)
			break;
		th->last_run = rt->run_id;
		pthread_mutex_unlock(&rt->lock);
		th->body(th->dv);
		pthread_mutex_lock(&rt->lock);
		if (--*busy == 0)
			pthread_cond_broadcast(&rt->run_cond);
	}
	pthread_mutex_unlock(&rt->lock);
	return NULL;
}

/* Start th (not yet up) for device dv, on the CPUs in set when given. */
static int ho_rt_thread_start(struct ho_rt_thread *th, struct ho_rt_dev *dv, void *(*body)(void *),
			      const cpu_set_t *set)
{
	pthread_attr_t attr;
	int r = pthread_attr_init(&attr);

	if (r)
		return r;
	if (set)
		r = pthread_attr_setaffinity_np(&attr, sizeof(*set), set);
	th->dv = dv;
	th->body = body;
	th->last_run = dv->rt->run_id;
	if (!r)
		r = pthread_create(&th->tid, &attr, ho_rt_thread, th);
	pthread_attr_destroy(&attr);
	th->up = !r;
	return r;
}

/* Ends every thread started (none is in a run: ho_rt_run waits for them). */
void ho_rt_stop_threads(struct ho_rt *rt)
{
	pthread_mutex_lock(&rt->lock);
	rt->quit = true;
	pthread_cond_broadcast(&rt->run_cond);
	pthread_mutex_unlock(&rt->lock);
	for (uint32_t d = 0; d < rt->n_dev; d++) {
		struct ho_rt_thread *th[2] = {&rt->dev[d].worker, &rt->dev[d].copier};

		for (int k = 0; k < 2; k++)
			if (th[k]->up)
				pthread_join(th[k]->tid, NULL);
		th[0]->up = th[1]->up = false;
	}
	rt->quit = false;
}

/*
 * The device the calling thread runs: of those the plan gives nodes, the one
 * with the most threads.  An OpenMP parallel region started from a thread
 * other than the process's first costs more: 28.5-32.1 us against 18.7-20.3
 * us here for the same two-thread region (libgomp), which made the detector on
 * a two-thread device of a three-device box 43.2-43.6 ms run by a worker
 * thread, 37.6-38.0 ms run by the caller (run --threads 2: 37.2-37.6 ms).
 */
static int ho_rt_lead(const struct ho_rt *rt)
{
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	int lead = -1;
	long most = 0;

	for (uint32_t d = 0; d < rt->n_dev; d++) {
		long t = rt->desc[d].threads > 0 ? rt->desc[d].threads : cores;

		if ((rt->dev[d].n_nodes || rt->n_dev == 1) && t > most) {
			lead = (int)d;
			most = t;
		}
	}
	return lead;
}

/* Device d's nodes, run on the calling thread, pinned to its cores as its worker would be. */
static void ho_rt_on_caller(struct ho_rt *rt, uint32_t d)
{
	cpu_set_t set, was;
	bool pin =
	    ho_rt_cores(rt, d, &set) && !pthread_getaffinity_np(pthread_self(), sizeof(was), &was);

	if (pin && pthread_setaffinity_np(pthread_self(), sizeof(set), &set))
		pin = false;
	ho_rt_worker(&rt->dev[d]);
	if (pin)
		pthread_setaffinity_np(pthread_self(), sizeof(was), &was);
}

/*
 * The threads a run needs and does not have yet (all of them before the
 * first run): a copy thread per device that receives copies, and a worker
 * per device the plan gives nodes, but the lead (ho_rt_lead: the caller).  A
 * worker is created on the cores the box gives it (OpenMP threads it starts
 * inherit them): created anywhere, one was seen queued behind the other
 * device's busy worker for a whole time slice (its first node 1.1 ms late)
 * before it could move itself.
 */
static int ho_rt_start_threads(struct ho_rt *rt, int lead, struct ho_error *err)
{
	for (uint32_t d = 0; d < rt->n_dev; d++) {
		struct ho_rt_dev *dv = &rt->dev[d];
		cpu_set_t set;
		int r;

		if (dv->cq_cap && !dv->copier.up &&
		    ho_rt_thread_start(&dv->copier, dv, ho_rt_copier, NULL)) {
			ho_rt_stop_threads(rt);
			return ho_err(err, -EAGAIN, "cannot start the copy engine of %s",
				      rt->desc[d].name);
		}
		/* a device with no node needs no worker (one asleep there would still
		 * wake at every node's end); the lead runs on the caller */
		if (dv->worker.up || !dv->n_nodes || (int)d == lead)
			continue;
		r = ho_rt_thread_start(&dv->worker, dv, ho_rt_worker,
				       ho_rt_cores(rt, d, &set) ? &set : NULL);
		if (r) {
			ho_rt_stop_threads(rt);
			if (r == EINVAL)
				return ho_err(err, -r,
					      "device %s: cannot run on the cores the box gives "
					      "it: %s",
					      rt->desc[d].name, strerror(r));
			return ho_err(err, -r, "cannot start the worker of %s", rt->desc[d].name);
		}
	}
	return 0;
}

/* Which of a node's successors its end releases (ho_rt_release_node). */
enum ho_rt_rel {
	HO_REL_ALL,   /* it is done for everyone */
	HO_REL_SAME,  /* queued on an in-order device: for that device's later nodes */
	HO_REL_OTHERS /* ... and now done: for the rest, and its copies */
};

static bool ho_rt_rel_wants(const struct ho_rt *rt, uint32_t target, int32_t d, enum ho_rt_rel w)
{
	bool same = target < rt->g->n_nodes && rt->node_dev[target] == d;

	return w == HO_REL_ALL || (w == HO_REL_SAME) == same;
}

/* Whether tensor t has a replica to copy once it is written. */
static bool ho_rt_has_copies(const struct ho_rt *rt, int32_t t)
{
	for (uint32_t d = 0; d < rt->n_dev; d++)
		if (rt->is_copy[AT(rt, t, d)] == 1)
			return true;
	return false;
}

/*
 * Under lock: node id of device d releases its consumers and memory waits, as
 * w says.  The caller wakes the others where it released anything of theirs:
 * what HO_REL_SAME releases only the releasing worker itself takes.  True
 * where it held back something HO_REL_OTHERS will release.
 */
static bool ho_rt_release_node(struct ho_rt *rt, uint32_t id, int32_t d, enum ho_rt_rel w)
{
	const struct ho_graph *g = rt->g;
	bool held = false;

	for (uint32_t k = 0; k < g->nodes[id].n_outputs; k++) {
		int32_t t = g->nodes[id].outputs[k];

		if (t < 0)
			continue;
		if (w != HO_REL_SAME)
			ho_rt_queue_copies(rt, t);
		else
			held |= ho_rt_has_copies(rt, t);
		for (uint32_t c = 0; c < g->tensors[t].n_consumers; c++) {
			uint32_t n = g->tensors[t].consumers[c];

			if (rt->node_dev[n] < 0)
				continue;
			if (ho_rt_rel_wants(rt, n, d, w))
				rt->waiting[n]--;
			else
				held = true;
		}
	}
	for (uint32_t k = rt->mem_off[id]; k < rt->mem_off[id + 1]; k++)
		if (ho_rt_rel_wants(rt, rt->mem_succ[k], d, w))
			(*ho_rt_wait_count(rt, rt->mem_succ[k]))--;
		else
			held = true;
	return held && w == HO_REL_SAME;
}

/* Under lock: node id, which ran on dv, is done; w: which successors it still holds.
 * The caller wakes the others. */
static void ho_rt_node_done(struct ho_rt *rt, struct ho_rt_dev *dv, uint32_t id, enum ho_rt_rel w)
{
	rt->done[id] = 1;
	rt->running--;
	rt->report.nodes_run[dv->idx]++;
	rt->report.busy_s[dv->idx] += rt->end[id] - rt->start[id];
	ho_rt_release_node(rt, id, (int32_t)dv->idx, w);
	rt->remaining--;
	__atomic_add_fetch(&rt->finished, 1, __ATOMIC_RELAXED);
}

void ho_rt_progress(const struct ho_rt *rt, uint32_t *finished, uint32_t *nodes)
{
	*finished = __atomic_load_n(&rt->finished, __ATOMIC_RELAXED);
	*nodes = __atomic_load_n(&rt->to_run, __ATOMIC_RELAXED);
}

/*
 * Unlocked: wait for dv's n oldest nodes in flight and finish them, with the
 * times the device measured.  The newest of them is waited for first: the
 * device runs them in order, so the others are then done, and all n are
 * finished under the lock once.  A failure is the run's.
 */
static int ho_rt_finish(struct ho_rt *rt, struct ho_rt_dev *dv, uint32_t n)
{
	struct ho_error e = {0};
	int ret = 0;

	for (uint32_t i = n; i-- > 0 && !ret;) {
		uint32_t id = dv->inflight[(dv->if_head + i) % HO_RT_INFLIGHT];
		double start = rt->t0 + rt->start[id], end = -1;

		if (!rt->k[id])
			continue;
		ret = dv->ops->wait(dv->be, rt->k[id], &start, &end, &e);
		rt->start[id] = start - rt->t0;
		rt->end[id] = (end >= 0 ? end : ho_clock_s()) - rt->t0;
	}
	if (ret) {
		ho_rt_fail(rt, ret, &e);
		return ret;
	}
	/*
	 * In order: a node starts no earlier than the one before it ended (a
	 * device may stamp a command's start when it is submitted), and one with
	 * nothing to run (a view) takes no time.
	 */
	for (uint32_t i = 0; i < n; i++) {
		uint32_t id = dv->inflight[(dv->if_head + i) % HO_RT_INFLIGHT];

		if (rt->start[id] < dv->last_end)
			rt->start[id] = dv->last_end;
		if (!rt->k[id] || rt->end[id] < rt->start[id])
			rt->end[id] = rt->start[id];
		dv->last_end = rt->end[id];
	}
	pthread_mutex_lock(&rt->lock);
	for (uint32_t i = 0; i < n; i++)
		ho_rt_node_done(rt, dv, dv->inflight[(dv->if_head + i) % HO_RT_INFLIGHT],
				HO_REL_OTHERS);
	ho_rt_wake(rt); /* once for the n */
	pthread_mutex_unlock(&rt->lock);
	for (uint32_t i = 0; i < n; i++)
		dv->if_n_shares -= dv->if_shares[(dv->if_head + i) % HO_RT_INFLIGHT];
	dv->if_head = (dv->if_head + n) % HO_RT_INFLIGHT;
	dv->if_n -= n;
	return 0;
}

/* The run has failed (read without the lock: it is only ever set, under it). */
static int ho_rt_failed(struct ho_rt *rt)
{
	return __atomic_load_n(&rt->run_err, __ATOMIC_ACQUIRE);
}

/* Unlocked: finish every node dv has in flight; after a failure, only wait for them. */
static int ho_rt_drain(struct ho_rt *rt, struct ho_rt_dev *dv)
{
	if (dv->if_n && !ho_rt_failed(rt))
		ho_rt_finish(rt, dv, dv->if_n);
	if (dv->if_n) {
		dv->ops->sync(dv->be); /* the plan's memory is not reused under its kernels */
		dv->if_n = dv->if_n_shares = 0;
	}
	return ho_rt_failed(rt);
}

/*
 * Unlocked: node id was queued on dv, a device that runs its launches in
 * order: its later nodes may follow it now; everyone else when it is done.
 */
static void ho_rt_queued(struct ho_rt *rt, struct ho_rt_dev *dv, uint32_t id)
{
	uint32_t at = (dv->if_head + dv->if_n) % HO_RT_INFLIGHT;

	dv->inflight[at] = id;
	dv->if_n++;
	pthread_mutex_lock(&rt->lock);
	dv->if_shares[at] = ho_rt_release_node(rt, id, (int32_t)dv->idx, HO_REL_SAME);
	pthread_mutex_unlock(&rt->lock);
	dv->if_n_shares += dv->if_shares[at];
}

/*
 * Unlocked: if the oldest node in flight on dv whose end others wait for has
 * ended, finish it and those before it, without blocking: another device
 * takes its output as soon as this worker looks, not when the window fills
 * or this device runs out of work.
 */
static int ho_rt_poll(struct ho_rt *rt, struct ho_rt_dev *dv)
{
	int32_t last = -1; /* the newest node with a kernel, up to the oldest sharing one */
	uint32_t i;

	if (!dv->if_n_shares || !dv->ops->done)
		return 0;
	for (i = 0; i < dv->if_n; i++) {
		uint32_t at = (dv->if_head + i) % HO_RT_INFLIGHT;

		if (rt->k[dv->inflight[at]])
			last = (int32_t)dv->inflight[at];
		if (dv->if_shares[at])
			break;
	}
	if (last >= 0 && !dv->ops->done(dv->be, rt->k[last]))
		return 0;
	return ho_rt_finish(rt, dv, i + 1);
}

/*
 * Under lock: the next node dv may run, first in priority order, or
 * UINT32_MAX when it has none (all taken, an error) or should finish what it
 * has in flight first; sleeps while it has nothing to do.  *next: the nodes
 * before it in dv->nodes are done.
 */
static uint32_t ho_rt_pick(struct ho_rt *rt, struct ho_rt_dev *dv, uint32_t *next)
{
	uint32_t cp;

	for (;;) {
		if (rt->run_err || *next == dv->n_nodes)
			return UINT32_MAX;
		while (*next < dv->n_nodes && rt->done[dv->nodes[*next]])
			(*next)++;
		for (uint32_t i = *next; i < dv->n_nodes; i++)
			if (!rt->done[dv->nodes[i]] && !rt->waiting[dv->nodes[i]])
				return i;
		if (*next == dv->n_nodes || dv->if_n)
			return UINT32_MAX;
		/*
		 * Idle, with a copy into this device nobody has started: make it
		 * here rather than wait for the copy thread to wake and then wake
		 * this one (the two wake-ups took 82 us a copy on this VM).
		 */
		if ((cp = ho_rt_take_copy(rt, dv)) != UINT32_MAX) {
			ho_rt_copy(rt, dv, cp);
			continue;
		}
		/* the stall check walks every node: only before sleeping */
		if (rt->spin_s > 0 && ho_rt_spin(rt))
			continue;
		if (ho_rt_stalled(rt)) {
			rt->run_err = -EDEADLK;
			ho_err(&rt->err, -EDEADLK,
			       "internal: %u nodes wait on each other and can never start",
			       rt->remaining);
			ho_rt_wake(rt);
			return UINT32_MAX;
		}
		pthread_cond_wait(&rt->cond, &rt->lock);
	}
}

/*
 * Run node id on dv, unlocked; emulated devices paced to the schedule.  A
 * kernel on a device whose launches only queue is left in flight (true);
 * a node that runs on the host (control flow, an in-region move) first
 * waits for what the device has in flight.
 */
static int ho_rt_run_node(struct ho_rt *rt, struct ho_rt_dev *dv, uint32_t id, bool *queued,
			  struct ho_error *e)
{
	bool async = dv->ops->wait != NULL, host = rt->ctl[id] || rt->moves[id];
	double t0, start, end = -1;
	int ret;

	*queued = false;
	if (async && host && (ret = ho_rt_drain(rt, dv)))
		return ret;
	/* emu, paced: a node starts no earlier than the schedule says it does. */
	if (rt->pace && dv->info.emulated && rt->pred_start)
		while (ho_clock_s() - rt->t0 < rt->pred_start[id])
			;
	t0 = ho_clock_s();
	rt->start[id] = t0 - rt->t0;
	if (rt->report.cpu_seen[dv->idx] < 0)
		rt->report.cpu_seen[dv->idx] = sched_getcpu();
	ho_rt_count_in_place(rt, id, dv->idx);
	if ((int32_t)id == rt->fail_node) {
		rt->fail_node = -1; /* once: the plan must run again afterwards */
		return ho_err(e, -EIO, "node '%s' on %s: device failure (injected)",
			      rt->g->nodes[id].name, rt->desc[dv->idx].name);
	}
	if (rt->ctl[id]) { /* the executor's, on host pages: a device's own memory synced */
		if (dv->info.own_memory && (ret = ho_rt_host_side(rt, dv->idx, id, true, e)))
			return ret;
		if ((ret = ho_rt_control_run(rt->ctl[id], e)))
			return ret;
		if (dv->info.own_memory && (ret = ho_rt_host_side(rt, dv->idx, id, false, e)))
			return ret;
	}
	if (rt->k[id] && (ret = dv->ops->launch(dv->be, rt->k[id], e)))
		return ret;
	if (async && !host) {
		*queued = true;
		return 0;
	}
	start = t0;
	if (async && rt->k[id] && (ret = dv->ops->wait(dv->be, rt->k[id], &start, &end, e)))
		return ret;
	if (rt->moves[id] && (ret = ho_rt_move(rt, id, dv->idx, e)))
		return ret;
	/* emu: a node lasts at least as long as the schedule predicts. */
	if (rt->pace && dv->info.emulated && rt->pred_end) {
		double want = rt->pred_end[id] - rt->pred_start[id];

		while (ho_clock_s() - t0 < want)
			;
	}
	rt->start[id] = start - rt->t0;
	rt->end[id] = (end >= 0 ? end : ho_clock_s()) - rt->t0;
	return 0;
}

static void *ho_rt_worker(void *arg)
{
	struct ho_rt_dev *dv = arg;
	struct ho_rt *rt = dv->rt;
	uint32_t next = 0; /* nodes before it in dv->nodes are done */

	if (dv->ops->thread_init)
		dv->ops->thread_init(dv->be);
	dv->if_head = dv->if_n = dv->if_n_shares = 0;
	dv->last_end = 0;
	for (;;) {
		struct ho_error e = {0};
		uint32_t pick, id;
		bool queued;
		int ret;

		pthread_mutex_lock(&rt->lock);
		pick = ho_rt_pick(rt, dv, &next);
		if (pick != UINT32_MAX)
			rt->running++;
		pthread_mutex_unlock(&rt->lock);
		if (pick == UINT32_MAX) {
			if (dv->if_n && !ho_rt_failed(rt) && !ho_rt_finish(rt, dv, 1))
				continue;
			ho_rt_drain(rt, dv);
			return NULL;
		}
		/* full: finish the older half, the newer one keeps the device busy */
		if (dv->if_n == HO_RT_INFLIGHT && ho_rt_finish(rt, dv, HO_RT_INFLIGHT / 2)) {
			ho_rt_drain(rt, dv);
			return NULL;
		}
		id = dv->nodes[pick];
		rt->done[id] = 2; /* taken: only this worker looks at its own nodes */
		if ((ret = ho_rt_run_node(rt, dv, id, &queued, &e))) {
			ho_rt_fail(rt, ret, &e);
			ho_rt_drain(rt, dv);
			return NULL;
		}
		if (queued) {
			ho_rt_queued(rt, dv, id);
			if (ho_rt_poll(rt, dv)) {
				ho_rt_drain(rt, dv);
				return NULL;
			}
			continue;
		}
		pthread_mutex_lock(&rt->lock);
		ho_rt_node_done(rt, dv, id, HO_REL_ALL);
		ho_rt_wake(rt);
		pthread_mutex_unlock(&rt->lock);
	}
}

int ho_rt_run(struct ho_rt *rt, struct ho_error *err)
{
	const struct ho_graph *g = rt->g;
	int ret;

	for (uint32_t i = 0; i < g->n_inputs; i++)
		if (!rt->is_set[i])
			return ho_err(err, -EINVAL, "input '%s' was not given",
				      g->tensors[g->inputs[i]].name);
	/* Dependencies, counted exactly as a finishing node releases them. */
	rt->remaining = 0;
	for (uint32_t i = 0; i < g->n_nodes; i++) {
		rt->waiting[i] = 0;
		rt->done[i] = rt->node_dev[i] < 0;
		rt->start[i] = rt->end[i] = -1;
	}
	for (uint32_t i = 0; i < g->n_nodes; i++) {
		const struct ho_node *n = &g->nodes[i];

		if (rt->node_dev[i] < 0)
			continue;
		rt->remaining++;
		for (uint32_t k = 0; k < n->n_outputs; k++) {
			int32_t t = n->outputs[k];

			for (uint32_t c = 0; t >= 0 && c < g->tensors[t].n_consumers; c++)
				if (rt->node_dev[g->tensors[t].consumers[c]] >= 0)
					rt->waiting[g->tensors[t].consumers[c]]++;
		}
	}
	__atomic_store_n(&rt->finished, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&rt->to_run, rt->remaining, __ATOMIC_RELAXED);
	memset(rt->copy_waiting, 0, (size_t)g->n_tensors * rt->n_dev * sizeof(uint32_t));
	for (uint32_t e = 0; e < rt->mem_off[g->n_nodes + g->n_tensors * rt->n_dev]; e++)
		(*ho_rt_wait_count(rt, rt->mem_succ[e]))++;
	for (size_t i = 0; i < (size_t)g->n_tensors * rt->n_dev; i++) {
		rt->copied[i] = 0;
		rt->copy_start[i] = rt->copy_end[i] = -1;
	}
	/* A consumer of a replica also waits for its copy; data with no producer
	 * to run (the graph's inputs) is copied from the start. */
	for (uint32_t d = 0; d < rt->n_dev; d++)
		rt->dev[d].cq_head = rt->dev[d].cq_tail = 0;
	for (uint32_t t = 0; t < g->n_tensors; t++) {
		int32_t p = g->tensors[t].producer;

		for (uint32_t d = 0; d < rt->n_dev; d++) {
			if (rt->is_copy[AT(rt, t, d)] != 1)
				continue;
			for (uint32_t c = 0; c < g->tensors[t].n_consumers; c++)
				if (rt->node_dev[g->tensors[t].consumers[c]] == (int32_t)d)
					rt->waiting[g->tensors[t].consumers[c]]++;
		}
		if (p < 0 || rt->node_dev[p] < 0)
			ho_rt_queue_copies(rt, (int32_t)t);
	}
	memset(rt->report.busy_s, 0, sizeof(rt->report.busy_s));
	for (uint32_t d = 0; d < HO_RT_MAX_DEVICES; d++)
		rt->report.cpu_seen[d] = -1;
	memset(rt->report.nodes_run, 0, sizeof(rt->report.nodes_run));
	rt->report.transfers = rt->report.zero_copy = rt->report.chains = 0;
	rt->report.bound = 0;
	rt->report.bound_bytes = 0;
	for (uint32_t i = 0; i < rt->n_ext; i++)
		if (rt->ext[i].cur >= 0) {
			rt->report.bound++;
			rt->report.bound_bytes += (double)g->tensors[rt->ext[i].t].bytes;
		}
	rt->report.bytes_moved = rt->report.chain_bytes = 0;
	rt->run_err = 0;
	rt->running = rt->copying = 0;
	/* Workers spin only if every thread of the run has a core (ho_rt_spin). */
	long cores = sysconf(_SC_NPROCESSORS_ONLN), threads = 0;

	/* a worker's OpenMP team (0: OpenMP's choice, every core), its copy thread */
	uint32_t working = 0;
	int lead = ho_rt_lead(rt);

	for (uint32_t d = 0; d < rt->n_dev; d++) {
		threads +=
		    (rt->dev[d].n_nodes ? (rt->desc[d].threads > 0 ? rt->desc[d].threads : cores)
					: 0) +
		    (rt->dev[d].cq_cap > 0);
		working += rt->dev[d].n_nodes > 0;
	}
	int r = ho_rt_start_threads(rt, lead, err);
	struct ho_pool_stats before, after;
	bool counted = !ho_pool_stats(rt->pool, &before);

	if (r)
		return r;
	/* before anything starts, so a failure leaves nothing running */
	double put_s = ho_clock_s();

	if ((r = ho_rt_put_inputs(rt, err)))
		return r;
	put_s = ho_clock_s() - put_s;
	pthread_mutex_lock(&rt->lock);
	rt->spin_s = working > 1 && threads <= cores ? HO_RT_SPIN_S : 0;
	rt->workers_busy = rt->copiers_busy = 0;
	for (uint32_t d = 0; d < rt->n_dev; d++) {
		rt->workers_busy += rt->dev[d].worker.up;
		rt->copiers_busy += rt->dev[d].copier.up;
	}
	ho_rt_ext_sync(rt, true);      /* the bound dma-bufs, for the CPU until the run ends */
	rt->t0 = ho_clock_s() - put_s; /* the run began with the inputs' uploads */
	rt->run_id++;
	pthread_cond_broadcast(&rt->run_cond);
	pthread_mutex_unlock(&rt->lock);
	if (lead >= 0)
		ho_rt_on_caller(rt, (uint32_t)lead);
	pthread_mutex_lock(&rt->lock);
	while (rt->workers_busy)
		pthread_cond_wait(&rt->run_cond, &rt->lock);
	ho_rt_wake(rt); /* copy engines: nothing left to wait for */
	while (rt->copiers_busy)
		pthread_cond_wait(&rt->run_cond, &rt->lock);
	pthread_mutex_unlock(&rt->lock);
	if (!rt->run_err && !rt->remaining && (ret = ho_rt_fetch_outputs(rt, &rt->err)))
		rt->run_err = ret;
	rt->report.makespan_s = ho_clock_s() - rt->t0;
	ho_rt_ext_sync(rt, false);
	rt->report.module_chains = rt->report.module_bytes = rt->report.module_staged = -1;
	if (counted && !ho_pool_stats(rt->pool, &after)) {
		rt->report.module_chains = (int64_t)(after.chains[0] + after.chains[1] -
						     before.chains[0] - before.chains[1]);
		rt->report.module_bytes =
		    (int64_t)(after.bytes[0] + after.bytes[1] - before.bytes[0] - before.bytes[1]);
		rt->report.module_staged = (int64_t)(after.staged - before.staged);
	}
	if (rt->run_err) {
		*err = rt->err;
		return rt->run_err;
	}
	if (rt->remaining)
		return ho_err(err, -EDEADLK, "%u nodes never became ready", rt->remaining);
	return rt->tail ? ho_rt_tail_run(rt, err) : 0;
}

const float *ho_rt_output(const struct ho_rt *rt, uint32_t i, const struct ho_tensor **t)
{
	const struct ho_tensor *tt = NULL;
	const void *p = ho_rt_output_data(rt, i, &tt);

	if (t)
		*t = tt;
	return p && tt->dtype == HO_DT_FLOAT ? p : NULL;
}

const void *ho_rt_output_data(const struct ho_rt *rt, uint32_t i, const struct ho_tensor **t)
{
	int32_t id;

	if (i >= rt->g->n_outputs)
		return NULL;
	id = rt->g->outputs[i];
	if (t)
		*t = &rt->g->tensors[id];
	if (rt->is_copy[AT(rt, id, rt->host)]) /* fetched from a device the host cannot read */
		return rt->buf[AT(rt, id, rt->host)];
	if (rt->home[id] < 0 && rt->tail) /* written by the tail */
		return ho_rt_tail_output(rt, id, t);
	return rt->home[id] >= 0 ? rt->buf[AT(rt, id, rt->home[id])] : NULL;
}

const struct ho_rt_report *ho_rt_last_report(const struct ho_rt *rt)
{
	return &rt->report;
}
