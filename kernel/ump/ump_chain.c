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
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/overflow.h>
#include <linux/sched.h>
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
	kref_get(&ctx->ref);
	atomic_inc(&ump_pool.live_chains);
	init_completion(&c->done);
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

static int ump_copy_one(const struct ump_copy_desc *d, struct ump_buf *src,
			struct ump_buf *dst, u64 *copied)
{
	u64 end, off = 0;

	if (!d->length)
		return -EINVAL;
	if (check_add_overflow(d->src_offset, d->length, &end) ||
	    end > src->size)
		return -ERANGE;
	if (check_add_overflow(d->dst_offset, d->length, &end) ||
	    end > dst->size)
		return -ERANGE;
	while (off < d->length) {
		u64 n = min_t(u64, d->length - off, UMP_COPY_SLICE);

		/* memmove: a descriptor may copy within one buffer. */
		memmove(dst->vaddr + d->dst_offset + off,
			src->vaddr + d->src_offset + off, n);
		off += n;
		*copied += n;
		cond_resched();
	}
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
	struct ump_engine_stats *st = &ump_pool.engine[0];
	u32 i;
	int ret = 0;

	c->engine = UMP_ENGINE_CPU;
	for (i = 0; i < c->count; i++) {
		ret = ump_copy_one(&c->descs[i], c->bufs[2 * i],
				   c->bufs[2 * i + 1], &c->bytes);
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

	if (arg->flags || arg->reserved[0] || arg->reserved[1] ||
	    !arg->chain || arg->chain > U32_MAX)
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
	ump_chain_put(c);	/* the xarray's reference */
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
	return ump_pool.copy_wq ? 0 : -ENOMEM;
}

void ump_engine_exit(void)
{
	destroy_workqueue(ump_pool.copy_wq);
}
