// SPDX-License-Identifier: GPL-2.0
/*
 * ump copy workers: the kernel threads chains run on.
 *
 * A kernel thread's CPU time is nobody's, so each worker joins the cgroups
 * of a submitter (cpu, cpuset, memory, pids, ...) and its copies count
 * against that cgroup's cpu.max and cpu.stat as the submitter's own work
 * would, the way vhost's workers are charged. Workers are keyed by the
 * submitter's cgroup (of the default hierarchy) and the NUMA node a chain
 * writes to, and shared by every file whose submitters sit there:
 *  - a process opening files makes no more threads (a worker per file and
 *    node made 64 threads for 64 files in a cgroup with pids.max 20);
 *  - a file passed or inherited into a cgroup held to 10% of a CPU copies
 *    at 10% there, not in the worker of the cgroup that opened it.
 * A file holds a reference on each worker it has used until it is
 * released; the last file's release stops the thread.
 *
 * Each worker keeps its own queue, so a chain that has not started can be
 * taken off it and completed with -ECANCELED at once, whatever runs ahead
 * of it (a chain throttled to 1% by cpu.max, say), and the running chain
 * reaps cancelled chains queued behind it between its slices.
 */
#include <linux/cgroup.h>
#include <linux/cpumask.h>
#include <linux/kthread.h>
#include <linux/sched.h>
#include <linux/slab.h>

#include "ump.h"

struct ump_worker {
	struct list_head link; /* ump_pool.workers */
	unsigned int files; /* files holding it, under ump_pool.workers_lock */
	u64 cgroup; /* id of the submitters' cgroup */
	int node;
	struct task_struct *task;
	spinlock_t lock; /* queue and each chain's queue_link */
	struct list_head queue; /* chains not yet started, in order */
};

/* A file's reference on a worker (struct ump_ctx.workers). */
struct ump_worker_ref {
	struct list_head link;
	struct ump_worker *w;
};

static u64 ump_current_cgroup(void)
{
	u64 id = 0;

#ifdef CONFIG_CGROUPS
	rcu_read_lock();
	id = cgroup_id(task_dfl_cgroup(current));
	rcu_read_unlock();
#endif
	return id;
}

static int ump_worker_fn(void *data)
{
	struct ump_worker *w = data;
	struct ump_chain *c;

	for (;;) {
		set_current_state(TASK_IDLE);
		if (kthread_should_stop())
			break;
		spin_lock(&w->lock);
		c = list_first_entry_or_null(&w->queue, struct ump_chain,
					     queue_link);
		if (c)
			list_del_init(&c->queue_link);
		spin_unlock(&w->lock);
		if (!c) {
			schedule();
			continue;
		}
		__set_current_state(TASK_RUNNING);
		ump_chain_run(c);
		cond_resched();
	}
	__set_current_state(TASK_RUNNING);
	return 0;
}

/* The worker of (cgroup, node) with a file's reference, made if none. */
static struct ump_worker *ump_worker_get(u64 cgroup, int node)
{
	struct task_struct *task;
	struct ump_worker *w;
	int ret;

	mutex_lock(&ump_pool.workers_lock);
	list_for_each_entry(w, &ump_pool.workers, link) {
		if (w->cgroup == cgroup && w->node == node) {
			w->files++;
			goto out;
		}
	}
	w = kzalloc(sizeof(*w), GFP_KERNEL);
	if (!w) {
		w = ERR_PTR(-ENOMEM);
		goto out;
	}
	spin_lock_init(&w->lock);
	INIT_LIST_HEAD(&w->queue);
	w->cgroup = cgroup;
	w->node = node;
	task = kthread_create_on_node(ump_worker_fn, w, node, "ump/%llu/%d",
				      cgroup, node);
	if (IS_ERR(task)) {
		kfree(w);
		w = ERR_CAST(task);
		goto out;
	}
	ret = cgroup_attach_task_all(current, task);
	if (ret) {
		kthread_stop(task);
		kfree(w);
		w = ERR_PTR(ret);
		goto out;
	}
	/*
	 * After the attach, which resets it to the cpuset's; fails only
	 * where the cpuset has none of the node's CPUs.
	 */
	if (node_state(node, N_CPU))
		set_cpus_allowed_ptr(task, cpumask_of_node(node));
	w->task = task;
	w->files = 1;
	list_add(&w->link, &ump_pool.workers);
	wake_up_process(task);
out:
	mutex_unlock(&ump_pool.workers_lock);
	return w;
}

/* Nothing is queued: every file that queued here has waited for its chains. */
static void ump_worker_put(struct ump_worker *w)
{
	mutex_lock(&ump_pool.workers_lock);
	if (--w->files) {
		mutex_unlock(&ump_pool.workers_lock);
		return;
	}
	list_del(&w->link);
	mutex_unlock(&ump_pool.workers_lock);
	WARN_ON_ONCE(!list_empty(&w->queue));
	kthread_stop(w->task);
	kfree(w);
}

/*
 * Choose the worker a chain will run on: the submitter's cgroup's, for the
 * node of the chain's first destination. Fails before anything is queued;
 * -EAGAIN where the file has not used that worker yet and may not block.
 */
int ump_worker_bind(struct ump_chain *c, int node, bool may_block)
{
	struct ump_ctx *ctx = c->ctx;
	u64 cgroup = ump_current_cgroup();
	struct ump_worker_ref *r;
	struct ump_worker *w;
	int ret = 0;

	mutex_lock(&ctx->workers_lock);
	list_for_each_entry(r, &ctx->workers, link) {
		if (r->w->cgroup == cgroup && r->w->node == node) {
			c->worker = r->w;
			goto out;
		}
	}
	if (!may_block) {
		ret = -EAGAIN;
		goto out;
	}
	r = kmalloc(sizeof(*r), GFP_KERNEL_ACCOUNT);
	if (!r) {
		ret = -ENOMEM;
		goto out;
	}
	w = ump_worker_get(cgroup, node);
	if (IS_ERR(w)) {
		kfree(r);
		ret = PTR_ERR(w);
		goto out;
	}
	r->w = w;
	list_add(&r->link, &ctx->workers);
	c->worker = w;
out:
	mutex_unlock(&ctx->workers_lock);
	return ret;
}

void ump_worker_queue(struct ump_chain *c)
{
	struct ump_worker *w = c->worker;

	spin_lock(&w->lock);
	list_add_tail(&c->queue_link, &w->queue);
	spin_unlock(&w->lock);
	wake_up_process(w->task);
}

/* Take c off its queue if it has not started; true if it was taken. */
bool ump_worker_dequeue(struct ump_chain *c)
{
	struct ump_worker *w = c->worker;
	bool queued;

	spin_lock(&w->lock);
	queued = !list_empty(&c->queue_link);
	if (queued)
		list_del_init(&c->queue_link);
	spin_unlock(&w->lock);
	return queued;
}

/*
 * Called by the running chain between slices on kernels without cancelable
 * uring_cmds: complete the queued chains whose ring died or whose submitter
 * execs or was killed, which nobody tells us of there.
 */
void ump_worker_reap(struct ump_worker *w)
{
	struct ump_chain *c;

	while (!list_empty_careful(&w->queue)) {
		/* One at a time: a cancel may take any other off meanwhile. */
		spin_lock(&w->lock);
		list_for_each_entry(c, &w->queue, queue_link) {
			if (ump_chain_cancelled(c)) {
				list_del_init(&c->queue_link);
				goto found;
			}
		}
		spin_unlock(&w->lock);
		return;
found:
		spin_unlock(&w->lock);
		ump_chain_finish(c, -ECANCELED, 0);
	}
}

/* On the file's release, once none of its chains is queued or running. */
void ump_ctx_workers_put(struct ump_ctx *ctx)
{
	struct ump_worker_ref *r, *next;

	list_for_each_entry_safe(r, next, &ctx->workers, link) {
		list_del(&r->link);
		ump_worker_put(r->w);
		kfree(r);
	}
}
