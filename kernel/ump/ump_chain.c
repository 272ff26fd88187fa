// SPDX-License-Identifier: GPL-2.0
/*
 * ump copy chains: submission (ioctl or io_uring), execution on the CPU copy
 * workers, completion and reaping.
 *
 * A chain's handles are resolved when it is submitted, and it holds a
 * reference on every buffer it touches and on its context, so neither a FREE
 * nor the owner closing the file (or being killed) can pull memory from under
 * a running copy. Ranges are checked per descriptor as it runs: a bad one
 * stops its chain with an error status, and nothing else.
 */
#include <linux/dmaengine.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/overflow.h>
#include <linux/sched.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "ump.h"
#include "ump_compat.h"

/* Copy in slices so a 16 MiB chain does not hog a CPU between reschedules. */
#define UMP_COPY_SLICE SZ_1M

static void ump_chain_free(struct ump_chain *c)
{
	u32 i;

	for (i = 0; i < 2 * c->count; i++)
		if (c->bufs[i])
			ump_buf_put(c->bufs[i]);
	atomic_dec(&c->ctx->nr_chains);
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
		     struct ump_chain **out)
{
	struct ump_chain *c;
	struct ump_buf *b;
	u32 i;
	int ret;

	if (!count || count > UMP_MAX_CHAIN_DESCS)
		return -EINVAL;
	/* Bounds what a context can pin: an unreaped chain holds memory. */
	if (atomic_inc_return(&ctx->nr_chains) > UMP_MAX_CHAINS_PER_CTX) {
		atomic_dec(&ctx->nr_chains);
		return -EAGAIN;
	}
	ret = -ENOMEM;
	c = kzalloc(sizeof(*c), GFP_KERNEL_ACCOUNT);
	if (!c)
		goto err_count;
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
	c->task = get_task_struct(current);
	kref_get(&ctx->ref);
	atomic_inc(&ump_pool.live_chains);
	init_completion(&c->done);
	init_completion(&c->dma_done);
	refcount_set(&c->users, 1);

	/* From here ump_chain_free() undoes everything. */
	xa_lock(&ctx->bufs);
	for (i = 0; i < count; i++) {
		b = xa_load(&ctx->bufs, c->descs[i].src);
		c->bufs[2 * i] = b ? ump_buf_get(b) : NULL;
		b = xa_load(&ctx->bufs, c->descs[i].dst);
		c->bufs[2 * i + 1] = b ? ump_buf_get(b) : NULL;
		if (!c->bufs[2 * i] || !c->bufs[2 * i + 1]) {
			xa_unlock(&ctx->bufs);
			ump_chain_put(c);
			return -ENOENT;
		}
	}
	xa_unlock(&ctx->bufs);
	*out = c;
	return 0;

err_free:
	kvfree(c->bufs);
	kvfree(c->descs);
	kfree(c);
err_count:
	atomic_dec(&ctx->nr_chains);
	return ret;
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

	if (!c->bounce)
		c->bounce = kmalloc(UMP_BOUNCE_SIZE, GFP_KERNEL);
	if (!c->bounce)
		return -ENOMEM;
	for (off = 0; off < len; off += n) {
		n = min_t(u64, len - off, UMP_BOUNCE_SIZE);
		memcpy(c->bounce, from + off, n);
		memcpy(to + off, c->bounce, n);
		c->bytes += n;
		cond_resched();
	}
	atomic64_add(len, &ump_pool.engine[0].staged);
	return 0;
}

static int ump_copy_one(struct ump_chain *c, const struct ump_copy_desc *d,
			struct ump_buf *src, struct ump_buf *dst)
{
	void *from, *to;
	bool backward;
	u64 off;
	int ret = ump_check_range(d, src, dst);

	if (ret)
		return ret;
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

		memmove(to + at, from + at, n);
		off += n;
		c->bytes += n;
		cond_resched();
	}
	return 0;
}

/*
 * Nobody is left to see the result of a chain whose file was closed or
 * whose submitter is exiting (killed, typically): do not spend seconds of
 * copying on it. Checked between descriptors, so a running one finishes.
 */
static bool ump_chain_cancelled(const struct ump_chain *c)
{
	return READ_ONCE(c->ctx->closing) || (c->task->flags & PF_EXITING);
}

/* ---- DMA engine ---------------------------------------------------------- */

static bool ump_dma_enable = true;
module_param_named(dma, ump_dma_enable, bool, 0444);
MODULE_PARM_DESC(
	dma,
	"Run chains on a dmaengine DMA_MEMCPY channel when one exists (default: yes)");

/* Give up on a channel that has not finished one descriptor in this long. */
#define UMP_DMA_TIMEOUT (10 * HZ)

static bool ump_overlaps(const struct ump_copy_desc *d, const struct ump_buf *s,
			 const struct ump_buf *t)
{
	return s == t && d->src_offset < d->dst_offset + d->length &&
	       d->dst_offset < d->src_offset + d->length;
}

/*
 * A chain goes to the DMA channel when every buffer it touches is mapped for
 * the channel and no descriptor overlaps itself (memcpy engines promise no
 * memmove). Everything else stays on the CPU workers.
 */
static bool ump_chain_dma_capable(const struct ump_chain *c)
{
	u32 i;

	if (!ump_pool.dma)
		return false;
	for (i = 0; i < c->count; i++)
		if (!c->bufs[2 * i]->dma || !c->bufs[2 * i + 1]->dma ||
		    ump_overlaps(&c->descs[i], c->bufs[2 * i],
				 c->bufs[2 * i + 1]))
			return false;
	return true;
}

static void ump_dma_callback(void *param)
{
	complete(param);
}

/*
 * One descriptor: page-sized pieces (host buffers are mapped page by page),
 * the last one with an interrupt, then wait for it; a memcpy channel
 * completes in order, so the last piece done means all are.
 */
static int ump_dma_copy_one(struct ump_chain *c, const struct ump_copy_desc *d,
			    const struct ump_buf *src,
			    const struct ump_buf *dst)
{
	struct dma_chan *chan = ump_pool.dma;
	struct dma_async_tx_descriptor *tx = NULL;
	dma_cookie_t cookie = 0;
	u64 off = 0;
	int ret = ump_check_range(d, src, dst);

	if (ret)
		return ret;
	reinit_completion(&c->dma_done);
	while (off < d->length) {
		u64 s = d->src_offset + off, t = d->dst_offset + off;
		size_t n = min3((u64)(d->length - off),
				(u64)(PAGE_SIZE - offset_in_page(s)),
				(u64)(PAGE_SIZE - offset_in_page(t)));
		bool last = off + n == d->length;

		tx = dmaengine_prep_dma_memcpy(
			chan, dst->dma[t >> PAGE_SHIFT] + offset_in_page(t),
			src->dma[s >> PAGE_SHIFT] + offset_in_page(s), n,
			last ? DMA_PREP_INTERRUPT : 0);
		if (!tx) {
			/* Out of descriptors: let the channel drain, once. */
			dma_async_issue_pending(chan);
			if (cookie)
				dma_sync_wait(chan, cookie);
			tx = dmaengine_prep_dma_memcpy(
				chan,
				dst->dma[t >> PAGE_SHIFT] + offset_in_page(t),
				src->dma[s >> PAGE_SHIFT] + offset_in_page(s),
				n, last ? DMA_PREP_INTERRUPT : 0);
			if (!tx)
				return -ENOMEM;
		}
		if (last) {
			tx->callback = ump_dma_callback;
			tx->callback_param = &c->dma_done;
		}
		cookie = dmaengine_submit(tx);
		if (dma_submit_error(cookie))
			return -EIO;
		off += n;
	}
	dma_async_issue_pending(chan);
	if (!wait_for_completion_timeout(&c->dma_done, UMP_DMA_TIMEOUT))
		return -ETIMEDOUT;
	if (dma_async_is_tx_complete(chan, cookie, NULL, NULL) != DMA_COMPLETE)
		return -EIO;
	c->bytes += d->length;
	return 0;
}

static void ump_uring_complete(struct io_uring_cmd *ioucmd,
			       unsigned int issue_flags)
{
	struct ump_chain *c = *(struct ump_chain **)ioucmd->pdu;
	int status = c->status;

	ump_chain_put(c);
	io_uring_cmd_done(ioucmd, status, 0, issue_flags);
}

static void ump_chain_work(struct work_struct *work)
{
	struct ump_chain *c = container_of(work, struct ump_chain, work);
	bool dma = ump_chain_dma_capable(c);
	struct ump_engine_stats *st = &ump_pool.engine[dma];
	u32 i;
	int ret = 0;

	c->engine = dma ? UMP_ENGINE_DMA : UMP_ENGINE_CPU;
	for (i = 0; i < c->count; i++) {
		if (ump_chain_cancelled(c)) {
			ret = -ECANCELED;
			break;
		}
		if (dma)
			ret = ump_dma_copy_one(c, &c->descs[i], c->bufs[2 * i],
					       c->bufs[2 * i + 1]);
		else
			ret = ump_copy_one(c, &c->descs[i], c->bufs[2 * i],
					   c->bufs[2 * i + 1]);
		if (ret)
			break;
	}
	c->status = ret;
	c->failed_index = ret ? i : c->count;
	atomic64_inc(&st->chains);
	atomic64_add(c->bytes, &st->bytes);
	if (ret)
		atomic64_inc(&st->errors);

	if (c->uring_cmd) {
		io_uring_cmd_complete_in_task(c->uring_cmd, ump_uring_complete);
	} else {
		complete(&c->done);
		ump_chain_put(c);
	}
}

/* Run the chain on a worker of the node that holds its first destination. */
void ump_chain_start(struct ump_chain *c)
{
	int node = c->bufs[1]->node;

	INIT_WORK(&c->work, ump_chain_work);
	if (node == NUMA_NO_NODE)
		queue_work(ump_pool.copy_wq, &c->work);
	else
		queue_work_node(node, ump_pool.copy_wq, &c->work);
}

int ump_ioctl_submit(struct ump_ctx *ctx, struct ump_submit *arg)
{
	struct ump_chain *c;
	u32 id;
	int ret;

	if (arg->flags || arg->reserved[0] || arg->reserved[1])
		return -EINVAL;
	ret = ump_chain_create(ctx, arg->descs, arg->count, &c);
	if (ret)
		return ret;
	c->user_data = arg->user_data;
	ret = xa_alloc_cyclic(&ctx->chains, &id, c, XA_LIMIT(1, U32_MAX),
			      &ctx->next_chain, GFP_KERNEL);
	if (ret < 0) {
		ump_chain_put(c);
		return ret;
	}
	c->id = id;
	arg->chain = id;
	/* The xarray keeps the first reference; the worker takes its own. */
	refcount_inc(&c->users);
	ump_chain_start(c);
	return 0;
}

int ump_ioctl_wait(struct ump_ctx *ctx, struct ump_wait *arg)
{
	struct ump_chain *c;
	long left;
	int ret;

	if (arg->flags || arg->reserved[0] || arg->reserved[1] || !arg->chain ||
	    arg->chain > U32_MAX)
		return -EINVAL;
	xa_lock(&ctx->chains);
	c = xa_load(&ctx->chains, arg->chain);
	if (c)
		refcount_inc(&c->users);
	xa_unlock(&ctx->chains);
	if (!c)
		return -ENOENT;

	ret = 0;
	if (arg->timeout_ns == UMP_TIMEOUT_INFINITE) {
		if (wait_for_completion_interruptible(&c->done))
			ret = -ERESTARTSYS;
	} else {
		s64 rel = (s64)(arg->timeout_ns - ktime_get_ns());

		if (rel <= 0) {
			if (!completion_done(&c->done))
				ret = -ETIME;
		} else {
			left = wait_for_completion_interruptible_timeout(
				&c->done, nsecs_to_jiffies(rel) + 1);
			if (left < 0)
				ret = -ERESTARTSYS;
			else if (!left)
				ret = -ETIME;
		}
	}
	if (ret)
		goto out;
	/* Two waiters on one chain: only the one that erases it reaps it. */
	if (xa_cmpxchg(&ctx->chains, arg->chain, c, NULL, GFP_KERNEL) != c) {
		ret = -ENOENT;
		goto out;
	}
	ump_chain_put(c); /* the xarray's reference */
	arg->status = c->status;
	arg->engine = c->engine;
	arg->user_data = c->user_data;
	arg->bytes = c->bytes;
	arg->failed_index = c->failed_index;
out:
	ump_chain_put(c);
	return ret;
}

int ump_uring_cmd(struct io_uring_cmd *ioucmd, unsigned int issue_flags)
{
	struct ump_ctx *ctx = ioucmd->file->private_data;
	const struct ump_uring_submit *p;
	struct ump_uring_submit sub;
	struct ump_chain *c;
	int ret;

	if (ioucmd->cmd_op != UMP_URING_SUBMIT)
		return -ENOTTY;
	p = ump_uring_payload(ioucmd);
	/* The SQE is shared with user space: read it once. */
	memcpy(&sub, p, sizeof(sub));
	if (sub.flags)
		return -EINVAL;
	ret = ump_chain_create(ctx, sub.descs, sub.count, &c);
	if (ret)
		return ret;
	c->uring_cmd = ioucmd;
	*(struct ump_chain **)ioucmd->pdu = c;
	ump_chain_start(c);
	return -EIOCBQUEUED;
}

int ump_engine_init(void)
{
	/*
	 * WQ_UNBOUND workers are pooled per NUMA node, which gives each node
	 * its own CPU copy workers; queue_work_node() picks the node.
	 */
	ump_pool.copy_wq = alloc_workqueue("ump_copy", WQ_UNBOUND, 0);
	if (!ump_pool.copy_wq)
		return -ENOMEM;
	if (ump_dma_enable) {
		dma_cap_mask_t mask;
		struct dma_chan *chan;

		dma_cap_zero(mask);
		dma_cap_set(DMA_MEMCPY, mask);
		chan = dma_request_chan_by_mask(&mask);
		if (!IS_ERR(chan)) {
			ump_pool.dma = chan;
			pr_info("ump: copies run on DMA channel %s\n",
				dma_chan_name(chan));
		}
	}
	return 0;
}

void ump_engine_exit(void)
{
	destroy_workqueue(ump_pool.copy_wq);
	if (ump_pool.dma)
		dma_release_channel(ump_pool.dma);
	ump_pool.dma = NULL;
}
