// SPDX-License-Identifier: GPL-2.0
/*
 * ump: the HeteroOpt unified memory pool. /dev/ump, one context per open
 * file, ioctl dispatch and module parameters.
 */
#include <linux/capability.h>
#include <linux/dma-mapping.h>
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

static void ump_ctx_release(struct kref *ref)
{
	struct ump_ctx *ctx = container_of(ref, struct ump_ctx, ref);

	xa_destroy(&ctx->bufs);
	xa_destroy(&ctx->chains);
	kfree(ctx);
	atomic_dec(&ump_pool.contexts);
}

void ump_ctx_put(struct ump_ctx *ctx)
{
	kref_put(&ctx->ref, ump_ctx_release);
}

static int ump_open(struct inode *inode, struct file *file)
{
	struct ump_ctx *ctx = kzalloc(sizeof(*ctx), GFP_KERNEL_ACCOUNT);

	if (!ctx)
		return -ENOMEM;
	kref_init(&ctx->ref);
	xa_init_flags(&ctx->bufs, XA_FLAGS_ALLOC1);
	xa_init_flags(&ctx->chains, XA_FLAGS_ALLOC1);
	file->private_data = ctx;
	atomic_inc(&ump_pool.contexts);
	return nonseekable_open(inode, file);
}

/*
 * Drop what the file owns. Chains still running keep their buffers and the
 * context alive through their own references and finish on their own, so a
 * process killed mid-copy never leaves a worker writing into freed memory.
 */
static int ump_release(struct inode *inode, struct file *file)
{
	struct ump_ctx *ctx = file->private_data;
	struct ump_chain *c;
	struct ump_buf *buf;
	unsigned long id;

	WRITE_ONCE(ctx->closing, true);
	xa_for_each(&ctx->chains, id, c) {
		xa_erase(&ctx->chains, id);
		ump_chain_put(c);
	}
	xa_for_each(&ctx->bufs, id, buf) {
		xa_erase(&ctx->bufs, id);
		ump_buf_put(buf);
	}
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

static int ump_add_handle(struct ump_ctx *ctx, struct ump_buf *buf, u32 *handle)
{
	int ret = xa_alloc(&ctx->bufs, handle, buf, xa_limit_31b,
			   GFP_KERNEL_ACCOUNT);

	if (ret)
		ump_buf_put(buf);
	return ret;
}

static int ump_do_alloc(struct ump_ctx *ctx, struct ump_alloc *a)
{
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
	return ump_add_handle(ctx, buf, &a->handle);
}

/*
 * One function per ioctl, each given the argument already copied in, behind
 * one table indexed by the ioctl's number (as drm_ioctl.c does).  A command
 * whose number, direction or size is not the table's is -ENOTTY.
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
};

static int ump_ioctl_version(struct ump_ctx *ctx, union ump_ioctl_arg *a)
{
	if (!ump_zero(a->version.reserved, 4))
		return -EINVAL;
	memset(&a->version, 0, sizeof(a->version));
	a->version.abi_major = UMP_ABI_MAJOR;
	a->version.abi_minor = UMP_ABI_MINOR;
	a->version.features = UMP_FEAT_HOST_NODES | UMP_FEAT_DMABUF_EXPORT |
			      UMP_FEAT_DMABUF_IMPORT | UMP_FEAT_URING_CMD;
	if (IS_ENABLED(CONFIG_PCI_P2PDMA))
		a->version.features |= UMP_FEAT_P2PMEM;
	if (ump_pool.dma)
		a->version.features |= UMP_FEAT_DMA_ENGINE;
	a->version.nr_nodes = num_node_state(N_MEMORY);
	a->version.nr_devices = ump_pool.nr_devs;
	return 0;
}

static int ump_ioctl_alloc(struct ump_ctx *ctx, union ump_ioctl_arg *a)
{
	return ump_do_alloc(ctx, &a->alloc);
}

static int ump_ioctl_free(struct ump_ctx *ctx, union ump_ioctl_arg *a)
{
	struct ump_buf *buf;

	if (a->handle.flags || a->handle.reserved)
		return -EINVAL;
	buf = xa_erase(&ctx->bufs, a->handle.handle);
	if (!buf)
		return -ENOENT;
	ump_buf_put(buf);
	return 0;
}

static int ump_ioctl_buf_info(struct ump_ctx *ctx, union ump_ioctl_arg *a)
{
	struct ump_buf *buf;

	if (a->info.flags || !ump_zero(a->info.reserved, 2))
		return -EINVAL;
	buf = ump_ctx_buf_get(ctx, a->info.handle);
	if (!buf)
		return -ENOENT;
	a->info.region = buf->region;
	a->info.size = buf->size;
	a->info.numa_node = buf->node;
	ump_buf_put(buf);
	return 0;
}

static int ump_ioctl_export(struct ump_ctx *ctx, union ump_ioctl_arg *a)
{
	struct ump_buf *buf;
	int ret;

	if (a->exp.flags & ~UMP_EXPORT_CLOEXEC || a->exp.pad ||
	    !ump_zero(a->exp.reserved, 2))
		return -EINVAL;
	buf = ump_ctx_buf_get(ctx, a->exp.handle);
	if (!buf)
		return -ENOENT;
	ret = ump_buf_export(buf, a->exp.flags);
	ump_buf_put(buf);
	if (ret < 0)
		return ret;
	/*
	 * The fd is installed; if user space cannot learn its number we
	 * must not leave it dangling, but close_fd() on a number another
	 * thread may already use would be worse. Report -EFAULT and let
	 * the fd leak into the process, as other drivers do.
	 */
	a->exp.fd = ret;
	return 0;
}

static int ump_ioctl_import(struct ump_ctx *ctx, union ump_ioctl_arg *a)
{
	struct ump_buf *buf;
	int ret;

	if (a->imp.flags || a->imp.pad || !ump_zero(a->imp.reserved, 2))
		return -EINVAL;
	ret = ump_buf_import(a->imp.fd, &buf);
	if (ret)
		return ret;
	a->imp.size = buf->size;
	return ump_add_handle(ctx, buf, &a->imp.handle);
}

static int ump_ioctl_submit_arg(struct ump_ctx *ctx, union ump_ioctl_arg *a)
{
	return ump_ioctl_submit(ctx, &a->submit);
}

static int ump_ioctl_wait_arg(struct ump_ctx *ctx, union ump_ioctl_arg *a)
{
	return ump_ioctl_wait(ctx, &a->wait);
}

static int ump_ioctl_dev_add(struct ump_ctx *ctx, union ump_ioctl_arg *a)
{
	int ret;

	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	if (a->dev_add.flags || !ump_zero(a->dev_add.reserved, 2))
		return -EINVAL;
	ret = ump_dev_add(a->dev_add.pci_domain, a->dev_add.pci_bdf,
			  &a->dev_add.index);
	return ret == -EEXIST ? 0 : ret;
}

static int ump_ioctl_dev_info(struct ump_ctx *ctx, union ump_ioctl_arg *a)
{
	if (a->dev_info.flags || !ump_zero(a->dev_info.reserved, 4))
		return -EINVAL;
	return ump_dev_info(&a->dev_info);
}

struct ump_ioctl_desc {
	unsigned int cmd;
	int (*fn)(struct ump_ctx *ctx, union ump_ioctl_arg *a);
};

#define UMP_IOCTL(ioc, func) \
	[_IOC_NR(UMP_IOC_##ioc)] = { .cmd = UMP_IOC_##ioc, .fn = func }

static const struct ump_ioctl_desc ump_ioctls[] = {
	UMP_IOCTL(VERSION, ump_ioctl_version),
	UMP_IOCTL(ALLOC, ump_ioctl_alloc),
	UMP_IOCTL(FREE, ump_ioctl_free),
	UMP_IOCTL(BUF_INFO, ump_ioctl_buf_info),
	UMP_IOCTL(EXPORT, ump_ioctl_export),
	UMP_IOCTL(IMPORT, ump_ioctl_import),
	UMP_IOCTL(SUBMIT, ump_ioctl_submit_arg),
	UMP_IOCTL(WAIT, ump_ioctl_wait_arg),
	UMP_IOCTL(DEV_ADD, ump_ioctl_dev_add),
	UMP_IOCTL(DEV_INFO, ump_ioctl_dev_info),
};

static long ump_ioctl(struct file *file, unsigned int cmd, unsigned long uarg)
{
	struct ump_ctx *ctx = file->private_data;
	void __user *up = (void __user *)uarg;
	const struct ump_ioctl_desc *d;
	union ump_ioctl_arg a;
	unsigned int nr = _IOC_NR(cmd), size = _IOC_SIZE(cmd);
	int ret;

	if (_IOC_TYPE(cmd) != UMP_IOC_MAGIC || nr >= ARRAY_SIZE(ump_ioctls))
		return -ENOTTY;
	nr = array_index_nospec(nr, ARRAY_SIZE(ump_ioctls));
	d = &ump_ioctls[nr];
	if (!d->fn || d->cmd != cmd || size > sizeof(a))
		return -ENOTTY;
	if (copy_from_user(&a, up, size))
		return -EFAULT;
	ret = d->fn(ctx, &a);
	if (ret)
		return ret;
	if ((_IOC_DIR(cmd) & _IOC_READ) && copy_to_user(up, &a, size))
		return -EFAULT;
	return 0;
}

static const struct file_operations ump_fops = {
	.owner = THIS_MODULE,
	.open = ump_open,
	.release = ump_release,
	.unlocked_ioctl = ump_ioctl,
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

	ump_set_caps();
	ret = ump_engine_init();
	if (ret)
		return ret;
	ret = ump_topo_init(devices);
	if (ret)
		goto err_engine;
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
	/*
	 * Importing a dma-buf from a non-dynamic exporter maps it for the
	 * attaching device at attach time; as udmabuf does, give our device
	 * a DMA mask so that mapping goes through dma-direct/the IOMMU.
	 */
	ret = dma_coerce_mask_and_coherent(ump_pool.misc.this_device,
					   DMA_BIT_MASK(64));
	if (ret)
		goto err_misc;
	pr_info("ump: pool ready, %d node(s), %u device(s)\n",
		num_node_state(N_MEMORY), ump_pool.nr_devs);
	return 0;

err_misc:
	misc_deregister(&ump_pool.misc);
err_proc:
	ump_proc_exit();
err_topo:
	ump_topo_exit();
err_engine:
	ump_engine_exit();
	return ret;
}

static void __exit ump_exit(void)
{
	misc_deregister(&ump_pool.misc);
	ump_proc_exit();
	ump_engine_exit();
	ump_topo_exit();
	/* Every file and exported dma-buf holds a module reference. */
	WARN_ON(atomic_read(&ump_pool.live_bufs));
	WARN_ON(atomic_read(&ump_pool.live_chains));
}

module_init(ump_init);
module_exit(ump_exit);
MODULE_DESCRIPTION("HeteroOpt unified memory pool");
MODULE_LICENSE("GPL");
