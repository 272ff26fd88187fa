// SPDX-License-Identifier: GPL-2.0
/*
 * ump: the HeteroOpt unified memory pool. /dev/ump, one context per open
 * file, ioctl dispatch and module parameters.
 */
#include <linux/capability.h>
#include <linux/dma-mapping.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/nospec.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "ump.h"

struct ump_pool ump_pool;

static char *devices;
module_param(devices, charp, 0444);
MODULE_PARM_DESC(devices,
		 "PCI devices to federate, e.g. 0000:00:04.0,0000:00:05.0");

static unsigned long node_cap_mb;
module_param(node_cap_mb, ulong, 0444);
MODULE_PARM_DESC(
	node_cap_mb,
	"Cap on pool memory per NUMA node in MiB (default: half the node)");

unsigned long ump_p2p_cap_mb;
module_param_named(p2p_cap_mb, ump_p2p_cap_mb, ulong, 0444);
MODULE_PARM_DESC(
	p2p_cap_mb,
	"Cap on each device's P2P memory the pool hands out in MiB, also /sys/class/ump/<dev>/p2pmem_cap (default: none)");

bool ump_dma_enable = true;
module_param_named(dma, ump_dma_enable, bool, 0444);
MODULE_PARM_DESC(
	dma,
	"Run chains on a dmaengine DMA_MEMCPY channel when one exists (default: yes)");

unsigned int ump_dma_timeout_ms = 10000;
module_param_named(dma_timeout_ms, ump_dma_timeout_ms, uint, 0644);
MODULE_PARM_DESC(
	dma_timeout_ms,
	"Give up on a DMA channel that has not finished a window of a chain in this long (default: 10000)");

static void ump_ctx_release(struct kref *ref)
{
	struct ump_ctx *ctx = container_of(ref, struct ump_ctx, ref);

	xa_destroy(&ctx->bufs);
	xa_destroy(&ctx->chains);
	mutex_destroy(&ctx->workers_lock);
	kfree(ctx);
	atomic_dec(&ump_pool.contexts);
}

void ump_ctx_put(struct ump_ctx *ctx)
{
	kref_put(&ctx->ref, ump_ctx_release);
}

static int ump_fop_open(struct inode *inode, struct file *file)
{
	struct ump_ctx *ctx = kzalloc(sizeof(*ctx), GFP_KERNEL_ACCOUNT);

	if (!ctx)
		return -ENOMEM;
	kref_init(&ctx->ref);
	mutex_init(&ctx->workers_lock);
	INIT_LIST_HEAD(&ctx->workers);
	xa_init_flags(&ctx->bufs, XA_FLAGS_ALLOC1);
	xa_init_flags(&ctx->chains, XA_FLAGS_ALLOC1);
	file->private_data = ctx;
	atomic_inc(&ump_pool.contexts);
	return nonseekable_open(inode, file);
}

/*
 * Drop what the file owns. Its queued chains end here with -ECANCELED, a
 * running one stops at its next slice and is waited for, then the file lets
 * go of its workers (the last file of a worker stops its thread); what
 * waiters still hold of a chain keeps the chain's buffers and the context
 * alive through their own references, so a process killed mid-copy never
 * leaves anything pointing at freed memory. (No io_uring chain is left:
 * each holds the file until its CQE.)
 */
static int ump_fop_release(struct inode *inode, struct file *file)
{
	struct ump_ctx *ctx = file->private_data;
	struct ump_chain *c;
	struct ump_buf *buf;
	unsigned long id;

	WRITE_ONCE(ctx->closing, true);
	xa_for_each(&ctx->chains, id, c) {
		ump_chain_cancel(c);
		wait_for_completion(&c->done);
		xa_erase(&ctx->chains, id);
		ump_chain_put(c);
	}
	ump_ctx_workers_put(ctx);
	xa_for_each(&ctx->bufs, id, buf) {
		xa_erase(&ctx->bufs, id);
		ump_buf_put(buf);
	}
	atomic_set(&ctx->nr_handles, 0);
	ump_ctx_put(ctx);
	return 0;
}

static bool ump_zero(const u64 *r, unsigned int n)
{
	while (n--)
		if (r[n])
			return false;
	return true;
}

/* The buffer behind a handle of this file, with a reference; or NULL. */
static struct ump_buf *ump_ctx_buf_get(struct ump_ctx *ctx, u32 handle)
{
	struct ump_buf *buf;

	xa_lock(&ctx->bufs);
	buf = xa_load(&ctx->bufs, handle);
	if (buf)
		ump_buf_get(buf);
	xa_unlock(&ctx->bufs);
	return buf;
}

/*
 * One function per ioctl, each given the argument already copied in, behind
 * one table indexed by the ioctl's number (as drm_ioctl.c does). A command
 * whose number, direction or size is not the table's is -ENOTTY.
 *
 * Nothing an ioctl does may be seen before its result reaches user space:
 * a copy-out that faults must leave no handle, fd or chain behind. So a
 * function only prepares (a handle or chain id is reserved, not filled; an
 * fd is reserved, not installed), and once the copy-out succeeded the
 * table's commit makes it visible, or else its undo takes it back.
 */
union ump_ioctl_arg {
	struct ump_version version;
	struct ump_alloc alloc;
	struct ump_handle_arg handle;
	struct ump_buf_info info;
	struct ump_export exp;
	struct ump_import imp;
	struct ump_submit submit;
	struct ump_wait wait;
	struct ump_dev_add dev_add;
	struct ump_dev_info dev_info;
	struct ump_cancel cancel;
	struct ump_stats stats;
};

struct ump_call {
	union ump_ioctl_arg a; /* the argument, copied in and out */
	struct ump_buf *buf; /* ALLOC, IMPORT: for the reserved handle */
	u32 handle; /* ALLOC, IMPORT: the reserved handle */
	struct dma_buf *dmabuf; /* EXPORT: for the reserved fd */
	struct ump_chain *chain; /* SUBMIT: to start; WAIT: to reap */
};

/* Reserve a handle for buf (its reference passes to the call). */
static int ump_reserve_handle(struct ump_ctx *ctx, struct ump_call *k,
			      struct ump_buf *buf, u32 *handle)
{
	int ret = -EMFILE;

	if (atomic_inc_return(&ctx->nr_handles) <= UMP_MAX_HANDLES_PER_FILE)
		ret = xa_alloc(&ctx->bufs, handle, NULL, xa_limit_31b,
			       GFP_KERNEL_ACCOUNT);
	if (ret) {
		atomic_dec(&ctx->nr_handles);
		ump_buf_put(buf);
		return ret;
	}
	k->buf = buf;
	k->handle = *handle;
	return 0;
}

/*
 * ALLOC's and IMPORT's commit and undo: the handle reserved for k->buf.
 * Nothing else touches a reserved entry (FREE refuses it), so the slot is
 * still there and storing into it allocates nothing: it cannot fail.
 */
static void ump_commit_handle(struct ump_ctx *ctx, struct ump_call *k)
{
	void *old = xa_cmpxchg(&ctx->bufs, k->handle, XA_ZERO_ENTRY, k->buf,
			       GFP_KERNEL);

	WARN_ON_ONCE(old); /* an error, or someone else's buffer */
}

static void ump_undo_handle(struct ump_ctx *ctx, struct ump_call *k)
{
	xa_erase(&ctx->bufs, k->handle);
	atomic_dec(&ctx->nr_handles);
	ump_buf_put(k->buf);
}

static int ump_ioctl_version(struct ump_ctx *ctx, struct ump_call *k)
{
	struct ump_version *v = &k->a.version;

	if (!ump_zero(v->reserved, 4))
		return -EINVAL;
	memset(v, 0, sizeof(*v));
	v->abi_major = UMP_ABI_MAJOR;
	v->abi_minor = UMP_ABI_MINOR;
	v->features = UMP_FEAT_HOST_NODES | UMP_FEAT_DMABUF_EXPORT |
		      UMP_FEAT_DMABUF_IMPORT | UMP_FEAT_URING_CMD |
		      UMP_FEAT_CANCEL | UMP_FEAT_STATS | UMP_FEAT_STATS_SCOPED;
	if (IS_ENABLED(CONFIG_PCI_P2PDMA))
		v->features |= UMP_FEAT_P2PMEM;
	if (ump_pool.dma)
		v->features |= UMP_FEAT_DMA_ENGINE;
	v->nr_nodes = num_node_state(N_MEMORY);
	v->nr_devices = ump_pool.nr_devs;
	return 0;
}

static int ump_ioctl_alloc(struct ump_ctx *ctx, struct ump_call *k)
{
	struct ump_alloc *a = &k->a.alloc;
	struct ump_buf *buf;
	struct ump_dev *dev;
	int ret;

	if (a->flags || a->pad || !ump_zero(a->reserved, 2))
		return -EINVAL;
	if (UMP_REGION_IS_P2P(a->region)) {
		dev = ump_dev_get(a->region & 0xffff);
		if (!dev)
			return -ENODEV;
		ret = ump_buf_alloc_p2p(dev, a->size, &buf);
	} else if (a->region < MAX_NUMNODES) {
		ret = ump_buf_alloc_host(a->region, a->size, &buf);
	} else {
		return -EINVAL;
	}
	if (ret)
		return ret;
	return ump_reserve_handle(ctx, k, buf, &a->handle);
}

static int ump_ioctl_free(struct ump_ctx *ctx, struct ump_call *k)
{
	struct ump_handle_arg *h = &k->a.handle;
	struct ump_buf *buf;

	if (h->flags || h->reserved)
		return -EINVAL;
	/*
	 * A handle an ALLOC or IMPORT has reserved but not yet handed out
	 * loads as NULL: it is not the caller's yet, and erasing it would let
	 * a second ALLOC take the same index.
	 */
	xa_lock(&ctx->bufs);
	buf = xa_load(&ctx->bufs, h->handle);
	if (buf)
		__xa_erase(&ctx->bufs, h->handle);
	xa_unlock(&ctx->bufs);
	if (!buf)
		return -ENOENT;
	atomic_dec(&ctx->nr_handles);
	ump_buf_put(buf);
	return 0;
}

static int ump_ioctl_buf_info(struct ump_ctx *ctx, struct ump_call *k)
{
	struct ump_buf_info *info = &k->a.info;
	struct ump_buf *buf;

	if (info->flags || !ump_zero(info->reserved, 2))
		return -EINVAL;
	buf = ump_ctx_buf_get(ctx, info->handle);
	if (!buf)
		return -ENOENT;
	info->region = buf->region;
	info->size = buf->size;
	info->numa_node = buf->node;
	ump_buf_put(buf);
	return 0;
}

static int ump_ioctl_export(struct ump_ctx *ctx, struct ump_call *k)
{
	struct ump_export *e = &k->a.exp;
	struct ump_buf *buf;
	int fd;

	if (e->flags & ~UMP_EXPORT_CLOEXEC || e->pad ||
	    !ump_zero(e->reserved, 2))
		return -EINVAL;
	buf = ump_ctx_buf_get(ctx, e->handle);
	if (!buf)
		return -ENOENT;
	fd = get_unused_fd_flags((e->flags & UMP_EXPORT_CLOEXEC) ? O_CLOEXEC :
								   0);
	if (fd < 0) {
		ump_buf_put(buf);
		return fd;
	}
	k->dmabuf = ump_buf_dmabuf(buf);
	ump_buf_put(buf);
	if (IS_ERR(k->dmabuf)) {
		put_unused_fd(fd);
		return PTR_ERR(k->dmabuf);
	}
	e->fd = fd;
	return 0;
}

static void ump_commit_export(struct ump_ctx *ctx, struct ump_call *k)
{
	fd_install(k->a.exp.fd, k->dmabuf->file);
}

static void ump_undo_export(struct ump_ctx *ctx, struct ump_call *k)
{
	put_unused_fd(k->a.exp.fd);
	dma_buf_put(k->dmabuf);
}

static int ump_ioctl_import(struct ump_ctx *ctx, struct ump_call *k)
{
	struct ump_import *im = &k->a.imp;
	struct ump_buf *buf;
	int ret;

	if (im->flags || im->pad || !ump_zero(im->reserved, 2))
		return -EINVAL;
	ret = ump_buf_import(im->fd, &buf);
	if (ret)
		return ret;
	im->size = buf->size;
	return ump_reserve_handle(ctx, k, buf, &im->handle);
}

static int ump_ioctl_submit(struct ump_ctx *ctx, struct ump_call *k)
{
	struct ump_submit *sub = &k->a.submit;
	struct ump_chain *c;
	u32 id;
	int ret;

	if (sub->flags || sub->reserved[0] || sub->reserved[1])
		return -EINVAL;
	ret = ump_chain_create(ctx, sub->descs, sub->count, current, &c);
	if (ret)
		return ret;
	ret = ump_chain_bind(c, true);
	if (ret) {
		ump_chain_put(c);
		return ret;
	}
	c->user_data = sub->user_data;
	/* The id is reserved: no WAIT finds the chain before it starts. */
	ret = xa_alloc_cyclic(&ctx->chains, &id, NULL, XA_LIMIT(1, U32_MAX),
			      &ctx->next_chain, GFP_KERNEL);
	if (ret < 0) {
		ump_chain_put(c);
		return ret;
	}
	c->id = id;
	sub->chain = id;
	k->chain = c;
	return 0;
}

static void ump_commit_submit(struct ump_ctx *ctx, struct ump_call *k)
{
	struct ump_chain *c = k->chain;

	/* The xarray keeps the first reference; the worker takes its own. */
	refcount_inc(&c->users);
	/* A reserved slot, which nothing else stores to or erases. */
	WARN_ON_ONCE(
		xa_cmpxchg(&ctx->chains, c->id, XA_ZERO_ENTRY, c, GFP_KERNEL));
	ump_chain_start(c);
}

static void ump_undo_submit(struct ump_ctx *ctx, struct ump_call *k)
{
	xa_erase(&ctx->chains, k->chain->id);
	ump_chain_put(k->chain);
}

/* Fill in the result; the chain is reaped only once the caller has it. */
static int ump_ioctl_wait(struct ump_ctx *ctx, struct ump_call *k)
{
	struct ump_wait *w = &k->a.wait;
	struct ump_chain *c;
	int ret;

	if (w->flags || w->reserved[0] || w->reserved[1] || !w->chain ||
	    w->chain > U32_MAX)
		return -EINVAL;
	c = ump_ctx_chain_get(ctx, w->chain);
	if (!c)
		return -ENOENT;
	ret = ump_chain_wait(c, w->timeout_ns);
	if (ret) {
		ump_chain_put(c);
		return ret;
	}
	w->status = c->status;
	w->engine = c->engine;
	w->user_data = c->user_data;
	w->bytes = c->bytes;
	w->failed_index = c->failed_index;
	k->chain = c;
	return 0;
}

/* Two waiters on one chain: both have the result, one of them reaps it. */
static void ump_commit_wait(struct ump_ctx *ctx, struct ump_call *k)
{
	struct ump_chain *c = k->chain;

	if (xa_cmpxchg(&ctx->chains, c->id, c, NULL, GFP_KERNEL) == c)
		ump_chain_put(c); /* the xarray's reference */
	ump_chain_put(c);
}

static void ump_undo_wait(struct ump_ctx *ctx, struct ump_call *k)
{
	ump_chain_put(k->chain);
}

static int ump_ioctl_cancel(struct ump_ctx *ctx, struct ump_call *k)
{
	struct ump_cancel *cc = &k->a.cancel;
	struct ump_chain *c;

	if (cc->flags || cc->pad || !ump_zero(cc->reserved, 2) || !cc->chain)
		return -EINVAL;
	c = ump_ctx_chain_get(ctx, cc->chain);
	if (!c)
		return -ENOENT;
	ump_chain_cancel(c);
	ump_chain_put(c);
	return 0;
}

static int ump_ioctl_stats(struct ump_ctx *ctx, struct ump_call *k)
{
	return ump_stats_get(ctx, &k->a.stats);
}

static int ump_ioctl_dev_add(struct ump_ctx *ctx, struct ump_call *k)
{
	struct ump_dev_add *d = &k->a.dev_add;
	int ret;

	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	if (d->flags || !ump_zero(d->reserved, 2))
		return -EINVAL;
	ret = ump_topo_add(d->pci_domain, d->pci_bdf, &d->index);
	return ret == -EEXIST ? 0 : ret;
}

static int ump_ioctl_dev_info(struct ump_ctx *ctx, struct ump_call *k)
{
	if (k->a.dev_info.flags || !ump_zero(k->a.dev_info.reserved, 4))
		return -EINVAL;
	return ump_topo_info(&k->a.dev_info);
}

/*
 * The size in a command's number is the caller's struct size. Structs grow
 * only at the end (include/uapi/linux/ump.h): a caller built against a newer
 * header may pass a larger struct, whose bytes past ours must be zero
 * (-E2BIG otherwise); one built against an older header passes a smaller
 * one, down to min_size (the struct as the ioctl first shipped; every
 * struct is still its first size in ABI 1.1), and the fields it lacks read
 * as zero. Both see only their common prefix copied out.
 */
struct ump_ioctl_desc {
	unsigned int cmd;
	unsigned int min_size;
	int (*fn)(struct ump_ctx *ctx, struct ump_call *k);
	/* after a successful copy-out, and after a failed one */
	void (*commit)(struct ump_ctx *ctx, struct ump_call *k);
	void (*undo)(struct ump_ctx *ctx, struct ump_call *k);
};

#define UMP_IOCTL(ioc, func, ...)                                          \
	[_IOC_NR(UMP_IOC_##ioc)] = { .cmd = UMP_IOC_##ioc,                 \
				     .min_size = _IOC_SIZE(UMP_IOC_##ioc), \
				     .fn = func,                           \
				     __VA_ARGS__ }

static const struct ump_ioctl_desc ump_ioctls[] = {
	UMP_IOCTL(VERSION, ump_ioctl_version),
	UMP_IOCTL(ALLOC, ump_ioctl_alloc, ump_commit_handle, ump_undo_handle),
	UMP_IOCTL(FREE, ump_ioctl_free),
	UMP_IOCTL(BUF_INFO, ump_ioctl_buf_info),
	UMP_IOCTL(EXPORT, ump_ioctl_export, ump_commit_export, ump_undo_export),
	UMP_IOCTL(IMPORT, ump_ioctl_import, ump_commit_handle, ump_undo_handle),
	UMP_IOCTL(SUBMIT, ump_ioctl_submit, ump_commit_submit, ump_undo_submit),
	UMP_IOCTL(WAIT, ump_ioctl_wait, ump_commit_wait, ump_undo_wait),
	UMP_IOCTL(DEV_ADD, ump_ioctl_dev_add),
	UMP_IOCTL(DEV_INFO, ump_ioctl_dev_info),
	UMP_IOCTL(CANCEL, ump_ioctl_cancel),
	UMP_IOCTL(STATS, ump_ioctl_stats),
};

static long ump_fop_ioctl(struct file *file, unsigned int cmd,
			  unsigned long uarg)
{
	struct ump_ctx *ctx = file->private_data;
	void __user *up = (void __user *)uarg;
	const struct ump_ioctl_desc *d;
	unsigned int nr = _IOC_NR(cmd), usize = _IOC_SIZE(cmd), size;
	struct ump_call k = {};
	int ret;

	if (_IOC_TYPE(cmd) != UMP_IOC_MAGIC || nr >= ARRAY_SIZE(ump_ioctls))
		return -ENOTTY;
	nr = array_index_nospec(nr, ARRAY_SIZE(ump_ioctls));
	d = &ump_ioctls[nr];
	if (!d->fn || (d->cmd & ~IOCSIZE_MASK) != (cmd & ~IOCSIZE_MASK) ||
	    usize < d->min_size)
		return -ENOTTY;
	size = min(usize, _IOC_SIZE(d->cmd));
	if (copy_from_user(&k.a, up, size))
		return -EFAULT;
	if (usize > size) {
		ret = check_zeroed_user(up + size, usize - size);
		if (ret <= 0)
			return ret ?: -E2BIG;
	}
	ret = d->fn(ctx, &k);
	if (ret)
		return ret;
	if ((_IOC_DIR(cmd) & _IOC_READ) && copy_to_user(up, &k.a, size)) {
		if (d->undo)
			d->undo(ctx, &k);
		return -EFAULT;
	}
	if (d->commit)
		d->commit(ctx, &k);
	return 0;
}

static const struct file_operations ump_fops = {
	.owner = THIS_MODULE,
	.open = ump_fop_open,
	.release = ump_fop_release,
	.unlocked_ioctl = ump_fop_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.uring_cmd = ump_uring_cmd,
};

static void ump_set_caps(void)
{
	int nid;

	for_each_node_state(nid, N_MEMORY) {
		u64 present = (u64)node_present_pages(nid) << PAGE_SHIFT;

		ump_pool.node_cap[nid] = node_cap_mb ? (u64)node_cap_mb << 20 :
						       present / 2;
	}
}

static int __init ump_init(void)
{
	int ret;

	mutex_init(&ump_pool.import_lock);
	mutex_init(&ump_pool.workers_lock);
	INIT_LIST_HEAD(&ump_pool.workers);
	INIT_LIST_HEAD(&ump_pool.imports);
	ump_set_caps();
	ump_fault_init();
	ret = ump_dma_init();
	if (ret)
		goto err_fault;
	ret = ump_topo_init(devices);
	if (ret)
		goto err_dma;
	ret = ump_proc_init();
	if (ret)
		goto err_topo;
	ump_pool.misc.minor = MISC_DYNAMIC_MINOR;
	ump_pool.misc.name = "ump";
	ump_pool.misc.fops = &ump_fops;
	ump_pool.misc.mode = 0660;
	ret = misc_register(&ump_pool.misc);
	if (ret)
		goto err_proc;
	pr_info("ump: pool ready, %d node(s), %u device(s)\n",
		num_node_state(N_MEMORY), ump_pool.nr_devs);
	return 0;

err_proc:
	ump_proc_exit();
err_topo:
	ump_topo_exit();
err_dma:
	ump_dma_exit();
err_fault:
	ump_fault_exit();
	return ret;
}

/*
 * No file is open (each holds a module reference, as does each exported
 * dma-buf), and no chain runs: the last file's release stopped the
 * workers. The channel goes first, then what user space reaches.
 */
static void __exit ump_exit(void)
{
	ump_dma_exit();
	misc_deregister(&ump_pool.misc);
	ump_proc_exit();
	ump_topo_exit();
	ump_fault_exit();
	/* Every file and exported dma-buf holds a module reference. */
	WARN_ON(atomic_read(&ump_pool.live_bufs));
	WARN_ON(atomic_read(&ump_pool.live_chains));
	WARN_ON(!list_empty(&ump_pool.workers));
}

module_init(ump_init);
module_exit(ump_exit);
MODULE_DESCRIPTION("HeteroOpt unified memory pool");
MODULE_LICENSE("GPL");
