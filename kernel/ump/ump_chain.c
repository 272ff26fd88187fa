// SPDX-License-Identifier: GPL-2.0
/*
 * ump copy chains: submission (ioctl or io_uring), execution on the file's
 * copy workers, completion and reaping.
 *
 * A chain's handles are resolved when it is submitted, and it holds a
 * reference on every buffer it touches and on its context, so neither a FREE
 * nor the owner closing the file (or being killed) can pull memory from under
 * a running copy. Ranges are checked per descriptor as it runs: a bad one
 * stops its chain with an error status, and nothing else.
 */
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/overflow.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "ump.h"
#include "ump_compat.h"

/* Copy in slices so a 16 MiB chain does not hog a CPU between reschedules. */
#define UMP_COPY_SLICE SZ_1M

/*
 * Run the chain on the worker of its submitter's cgroup for the node that
 * holds its first destination (the submitter's node for P2P and imported
 * ones). Chains on one worker run one after another.
 */
int ump_chain_bind(struct ump_chain *c, bool may_block)
{
	int node = c->bufs[1]->node;

	if (node == NUMA_NO_NODE)
		node = numa_node_id();
	return ump_worker_bind(c, node, may_block);
}

void ump_chain_start(struct ump_chain *c)
{
	ump_worker_queue(c);
}

static void ump_chain_free(struct ump_chain *c)
{
	u32 i;

	for (i = 0; i < 2 * c->count; i++)
		if (c->bufs[i])
			ump_buf_put(c->bufs[i]);
	atomic_dec(&c->ctx->nr_chains);
	atomic_sub(c->count, &c->ctx->nr_descs);
	atomic64_sub(c->asked, &c->ctx->queued_bytes);
	atomic_dec(&ump_pool.live_chains);
	put_task_struct(c->task);
	kfree(c->bounce);
	ump_ctx_put(c->ctx);
	kvfree(c->bufs);
	kvfree(c->descs);
	kfree(c);
}

void ump_chain_put(struct ump_chain *c)
{
	if (refcount_dec_and_test(&c->users))
		ump_chain_free(c);
}

int ump_chain_create(struct ump_ctx *ctx, u64 udescs, u32 count,
		     struct task_struct *submitter, struct ump_chain **out)
{
	struct ump_chain *c;
	struct ump_buf *b;
	u32 i;
	int ret;

	u64 asked = 0;

	if (!count || count > UMP_MAX_CHAIN_DESCS)
		return -EINVAL;
	/*
	 * Bound what a file can pin and queue (an unreaped chain holds memory,
	 * an unrun one CPU or engine time): charged here, released when the
	 * chain is freed.
	 */
	if (atomic_inc_return(&ctx->nr_chains) > UMP_MAX_CHAINS_PER_FILE) {
		ret = -EAGAIN;
		goto err_chains;
	}
	if (atomic_add_return(count, &ctx->nr_descs) > UMP_MAX_QUEUED_DESCS) {
		ret = -EAGAIN;
		goto err_descs;
	}
	ret = -ENOMEM;
	c = kzalloc(sizeof(*c), GFP_KERNEL_ACCOUNT);
	if (!c)
		goto err_descs;
	c->descs = kvmalloc_array(count, sizeof(*c->descs), GFP_KERNEL_ACCOUNT);
	c->bufs = kvcalloc(2 * count, sizeof(*c->bufs), GFP_KERNEL_ACCOUNT);
	if (!c->descs || !c->bufs)
		goto err_free;
	if (copy_from_user(c->descs, u64_to_user_ptr(udescs),
			   array_size(count, sizeof(*c->descs)))) {
		ret = -EFAULT;
		goto err_free;
	}
	c->count = count;
	c->ctx = ctx;
	c->task = get_task_struct(submitter);
	kref_get(&ctx->ref);
	atomic_inc(&ump_pool.live_chains);
	init_completion(&c->done);
	init_completion(&c->dma_done);
	INIT_LIST_HEAD(&c->queue_link);
	refcount_set(&c->users, 1);

	/* From here ump_chain_free() undoes everything. */
	ret = 0;
	xa_lock(&ctx->bufs);
	for (i = 0; i < count && !ret; i++) {
		b = xa_load(&ctx->bufs, c->descs[i].src);
		c->bufs[2 * i] = b ? ump_buf_get(b) : NULL;
		b = xa_load(&ctx->bufs, c->descs[i].dst);
		c->bufs[2 * i + 1] = b ? ump_buf_get(b) : NULL;
		if (!c->bufs[2 * i] || !c->bufs[2 * i + 1])
			ret = -ENOENT;
		else if (c->bufs[2 * i + 1]->readonly)
			ret = -EACCES; /* a dma-buf fd opened read-only */
		else if (check_add_overflow(asked, c->descs[i].length,
					    &asked) ||
			 asked > UMP_MAX_QUEUED_BYTES)
			ret = -E2BIG;
	}
	xa_unlock(&ctx->bufs);
	if (!ret && atomic64_add_return(asked, &ctx->queued_bytes) >
			    UMP_MAX_QUEUED_BYTES) {
		atomic64_sub(asked, &ctx->queued_bytes);
		ret = -EAGAIN;
	}
	if (!ret)
		c->asked = asked;
	if (ret) {
		ump_chain_put(c);
		return ret;
	}
	*out = c;
	return 0;

err_free:
	kvfree(c->bufs);
	kvfree(c->descs);
	kfree(c);
err_descs:
	atomic_sub(count, &ctx->nr_descs);
err_chains:
	atomic_dec(&ctx->nr_chains);
	return ret;
}

/*
 * Nobody is left to see the result of a chain whose file was closed or
 * whose process is exiting (killed, typically), and UMP_IOC_CANCEL asks to
 * stop: do not spend seconds of copying on it. Checked between descriptors
 * and slices. The process, not the submitting thread: a thread may submit
 * and exit, and through io_uring the submitter may be an io-wq or SQPOLL
 * thread; all of them share the signal struct. A group exit (exit_group
 * with other threads, a fatal signal) flags it at once; a single thread's
 * exit leaves no live thread. On kernels without cancelable uring_cmds, an
 * io_uring chain also stops when its ring closes or its submitter execs.
 */
bool ump_chain_cancelled(const struct ump_chain *c)
{
	const struct signal_struct *sig = c->task->signal;

	return READ_ONCE(c->cancel) || READ_ONCE(c->ctx->closing) ||
	       (READ_ONCE(sig->flags) & SIGNAL_GROUP_EXIT) ||
	       !atomic_read(&sig->live) ||
	       (c->uring_cmd && ump_uring_orphaned(c->uring_cmd, c->task));
}

/*
 * Between slices: whether to stop, and, on kernels that never call us for
 * a dying ring, the queue behind us reaped. Elsewhere every way a queued
 * chain is cancelled takes it off the queue itself, and the copy path does
 * not walk the queue.
 */
bool ump_chain_checkpoint(struct ump_chain *c)
{
	if (UMP_URING_REAP_QUEUED)
		ump_worker_reap(c->worker);
	return ump_chain_cancelled(c);
}

static int ump_check_range(const struct ump_copy_desc *d,
			   const struct ump_buf *src, const struct ump_buf *dst)
{
	u64 end;

	if (!d->length)
		return -EINVAL;
	if (check_add_overflow(d->src_offset, d->length, &end) ||
	    end > src->size)
		return -ERANGE;
	if (check_add_overflow(d->dst_offset, d->length, &end) ||
	    end > dst->size)
		return -ERANGE;
	return 0;
}

/*
 * Between the P2P memory of two devices the fabric cannot connect, the data
 * has to cross host memory: copy it in two hops through a bounce buffer, as
 * a copy engine on either device would have to, and count it so the cost
 * shows up in /proc/ump/status rather than as a mysteriously slow copy.
 */
static bool ump_must_stage(const struct ump_buf *src, const struct ump_buf *dst)
{
	u32 cls;

	if (src->kind != UMP_BUF_P2P || dst->kind != UMP_BUF_P2P ||
	    src->dev == dst->dev)
		return false;
	cls = READ_ONCE(ump_pool.p2p_class[src->dev->index][dst->dev->index]);
	return cls != UMP_P2P_SWITCH && cls != UMP_P2P_HOST_BRIDGE;
}

#define UMP_BOUNCE_SIZE SZ_64K

/* One bounce buffer per chain, however many of its descriptors stage. */
static int ump_copy_staged(struct ump_chain *c, void *to, const void *from,
			   u64 len)
{
	u64 off, n;

	if (!c->bounce && !ump_fault_copy())
		c->bounce = kmalloc(UMP_BOUNCE_SIZE, GFP_KERNEL);
	if (!c->bounce)
		return -ENOMEM;
	for (off = 0; off < len; off += n) {
		/* Stopped as a direct copy is, before its next slice. */
		if (off && !(off % UMP_COPY_SLICE) && ump_chain_checkpoint(c))
			break;
		n = min_t(u64, len - off, UMP_BOUNCE_SIZE);
		memcpy(c->bounce, from + off, n);
		memcpy(to + off, c->bounce, n);
		c->bytes += n;
		cond_resched();
	}
	atomic64_add(off, &ump_pool.engine[UMP_ENG_CPU].staged);
	atomic64_add(off, &c->ctx->engine[UMP_ENG_CPU].staged);
	return off < len ? -ECANCELED : 0;
}

/*
 * The CPU reads an imported source and writes an imported destination
 * through the exporter's vmap: bracket that with begin/end_cpu_access, which
 * waits for the device work fenced on the buffer and lets the exporter sync
 * its caches, as any CPU access to a dma-buf must. Our own buffers that we
 * exported are synced for their importers' mappings the same way.
 */
static int ump_cpu_access(struct ump_buf *src, struct ump_buf *dst, bool end)
{
	enum dma_data_direction sdir = DMA_FROM_DEVICE, ddir = DMA_TO_DEVICE;
	int ret = 0;

	if (src == dst)
		sdir = ddir = DMA_BIDIRECTIONAL;
	/* Our own buffers, where an importer has them mapped. */
	ump_buf_sync(src, sdir, end);
	if (dst != src)
		ump_buf_sync(dst, ddir, end);
	if (!end &&
	    (src->kind == UMP_BUF_IMPORT || dst->kind == UMP_BUF_IMPORT) &&
	    ump_fault_copy())
		return -EIO;
	if (src->kind == UMP_BUF_IMPORT)
		ret = end ? dma_buf_end_cpu_access(src->dmabuf, sdir) :
			    dma_buf_begin_cpu_access(src->dmabuf, sdir);
	if (ret || src == dst || dst->kind != UMP_BUF_IMPORT)
		return ret;
	ret = end ? dma_buf_end_cpu_access(dst->dmabuf, ddir) :
		    dma_buf_begin_cpu_access(dst->dmabuf, ddir);
	if (ret && !end && src->kind == UMP_BUF_IMPORT)
		dma_buf_end_cpu_access(src->dmabuf, sdir);
	return ret;
}

static int ump_copy_one(struct ump_chain *c, const struct ump_copy_desc *d,
			struct ump_buf *src, struct ump_buf *dst)
{
	void *from, *to;
	bool backward;
	u64 off;

	from = src->vaddr + d->src_offset;
	to = dst->vaddr + d->dst_offset;
	/* Different devices: never overlapping. */
	if (ump_must_stage(src, dst))
		return ump_copy_staged(c, to, from, d->length);
	/*
	 * A descriptor may copy within one buffer, and slices must then keep
	 * memmove semantics: when the destination overlaps the source from
	 * above, copy the slices last to first.
	 */
	backward = to > from && to < from + d->length;
	for (off = 0; off < d->length;) {
		u64 n = min_t(u64, d->length - off, UMP_COPY_SLICE);
		u64 at = backward ? d->length - off - n : off;

		if (off && ump_chain_checkpoint(c))
			return -ECANCELED;
		memmove(to + at, from + at, n);
		off += n;
		c->bytes += n;
		cond_resched();
	}
	return 0;
}

static int ump_cpu_copy(struct ump_chain *c, const struct ump_copy_desc *d,
			struct ump_buf *src, struct ump_buf *dst)
{
	int ret = ump_cpu_access(src, dst, false), end;

	if (ret)
		return ret;
	ret = ump_copy_one(c, d, src, dst);
	end = ump_cpu_access(src, dst, true);
	return ret ?: end;
}

static void ump_uring_complete(struct io_uring_cmd *ioucmd,
			       unsigned int issue_flags)
{
	struct ump_chain *c = *(struct ump_chain **)ioucmd->pdu;
	int status = c->status;

	/* Done first: it takes the command off the ring's cancel list. */
	io_uring_cmd_done(ioucmd, status, 0, issue_flags);
	ump_chain_put(c);
}

/*
 * Report c's end: the waiters are woken or the CQE posted, and the
 * reference its queueing took is dropped. Also for a chain cancelled before
 * it started.
 */
void ump_chain_finish(struct ump_chain *c, int status, u32 failed_index)
{
	c->status = status;
	c->failed_index = failed_index;
	if (c->uring_cmd) {
		io_uring_cmd_complete_in_task(c->uring_cmd, ump_uring_complete);
	} else {
		complete_all(&c->done); /* every waiter, not just one */
		ump_chain_put(c);
	}
}

/* The pool's and the file's figures (UMP_IOC_STATS) of a chain that ran. */
static void ump_engine_count(struct ump_engine_stats *st,
			     const struct ump_chain *c, int ret)
{
	atomic64_inc(&st->chains);
	atomic64_add(c->bytes, &st->bytes);
	if (ret)
		atomic64_inc(&st->errors);
}

/* On its worker, once taken off the queue. */
void ump_chain_run(struct ump_chain *c)
{
	bool dma = ump_dma_capable(c);
	enum ump_engine_id eng = dma ? UMP_ENG_DMA : UMP_ENG_CPU;
	u32 i;
	int ret = 0;

	c->engine = dma ? UMP_ENGINE_DMA : UMP_ENGINE_CPU;
	for (i = 0; i < c->count; i++) {
		if (ump_chain_checkpoint(c)) {
			ret = -ECANCELED;
			break;
		}
		ret = ump_check_range(&c->descs[i], c->bufs[2 * i],
				      c->bufs[2 * i + 1]);
		if (ret)
			break;
		if (dma)
			ret = ump_dma_copy_one(c, &c->descs[i], c->bufs[2 * i],
					       c->bufs[2 * i + 1]);
		else
			ret = ump_cpu_copy(c, &c->descs[i], c->bufs[2 * i],
					   c->bufs[2 * i + 1]);
		if (ret)
			break;
	}
	ump_engine_count(&ump_pool.engine[eng], c, ret);
	ump_engine_count(&c->ctx->engine[eng], c, ret);
	ump_chain_finish(c, ret, ret ? i : c->count);
}

/*
 * Stop c: at once if it has not started (-ECANCELED, whatever runs ahead
 * of it on its worker), else at its next slice.
 */
void ump_chain_cancel(struct ump_chain *c)
{
	WRITE_ONCE(c->cancel, true);
	if (ump_worker_dequeue(c))
		ump_chain_finish(c, -ECANCELED, 0);
}

/* The chain id names in this file, with a reference; or NULL. */
struct ump_chain *ump_ctx_chain_get(struct ump_ctx *ctx, u64 id)
{
	struct ump_chain *c;

	if (!id || id > U32_MAX)
		return NULL;
	xa_lock(&ctx->chains);
	c = xa_load(&ctx->chains, id);
	if (c)
		refcount_inc(&c->users);
	xa_unlock(&ctx->chains);
	return c;
}

/* Sleep until c completes or timeout_ns (absolute, or infinite) passes. */
int ump_chain_wait(struct ump_chain *c, u64 timeout_ns)
{
	s64 rel;
	long left;

	if (timeout_ns == UMP_TIMEOUT_INFINITE)
		return wait_for_completion_interruptible(&c->done) ?
			       -ERESTARTSYS :
			       0;
	rel = (s64)(timeout_ns - ktime_get_ns());
	if (rel <= 0)
		return completion_done(&c->done) ? 0 : -ETIME;
	left = wait_for_completion_interruptible_timeout(
		&c->done, nsecs_to_jiffies(rel) + 1);
	if (left < 0)
		return -ERESTARTSYS;
	return left ? 0 : -ETIME;
}

int ump_uring_cmd(struct io_uring_cmd *ioucmd, unsigned int issue_flags)
{
	struct ump_ctx *ctx = ioucmd->file->private_data;
	const struct ump_uring_submit *p;
	struct ump_uring_submit sub;
	struct ump_chain *c;
	int ret;

	if (ump_uring_cancel_call(issue_flags)) {
		/*
		 * The ring is closing or its task exits or execs: the command
		 * is not done yet (the ring's lock orders this against
		 * io_uring_cmd_done()), so its chain is alive. Stop it at the
		 * next slice; it completes as usual.
		 */
		c = *(struct ump_chain **)ioucmd->pdu;
		ump_chain_cancel(c);
		return 0;
	}
	if (ioucmd->cmd_op != UMP_URING_SUBMIT)
		return -ENOTTY;
	/* No registered buffers here: descs is a plain user pointer. */
	if (ioucmd->flags & IORING_URING_CMD_FIXED ||
	    !ump_uring_sqe_unused_zero(ioucmd))
		return -EINVAL;
	p = ump_uring_payload(ioucmd);
	/* The SQE is shared with user space: read it once. */
	memcpy(&sub, p, sizeof(sub));
	if (sub.flags)
		return -EINVAL;
	/* A 128-byte SQE's longer command area: the rest must be zero. */
	if (issue_flags & IO_URING_F_SQE128 &&
	    memchr_inv((const u8 *)p + sizeof(sub), 0,
		       UMP_SQE128_CMD_BYTES - sizeof(sub)))
		return -EINVAL;
	ret = ump_chain_create(ctx, sub.descs, sub.count,
			       ump_uring_task(ioucmd), &c);
	if (ret)
		/* -EAGAIN would make io_uring retry at once, in a loop. */
		return ret == -EAGAIN ? -EBUSY : ret;
	/*
	 * Issued inline under the ring's lock, a file's first chain for a
	 * worker must not make a kernel thread or move it between cgroups:
	 * -EAGAIN has io_uring issue it again from io-wq, where it may block.
	 */
	ret = ump_chain_bind(c, !(issue_flags & IO_URING_F_NONBLOCK));
	if (ret) {
		ump_chain_put(c);
		return ret;
	}
	c->uring_cmd = ioucmd;
	*(struct ump_chain **)ioucmd->pdu = c;
	ump_uring_mark_cancelable(ioucmd, issue_flags);
	ump_chain_start(c);
	return -EIOCBQUEUED;
}
