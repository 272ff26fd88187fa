// SPDX-License-Identifier: GPL-2.0
/*
 * ump_swdma: a software DMA_MEMCPY provider for testing ump.ko's dmaengine
 * path in guests that have no copy engine (QEMU emulates none on x86).
 *
 * It is a real dmaengine driver: a dma_device with one channel, descriptors
 * with cookies, tx_submit / issue_pending / tx_status and completion
 * callbacks, exactly what a client sees from IOAT or PTDMA. Only the data
 * movement is done by a CPU work item instead of hardware. Its platform
 * device sits behind no IOMMU, so DMA addresses are physical addresses.
 * Test infrastructure only: never shipped or installed.
 *
 * A test can make it misbehave as hardware does (module parameters, writable
 * at run time): delay_ms stalls each batch it is issued, fail_prep_after
 * fails every prep after that many more, fail_transfer_after fails one
 * transfer (reported only through callback_result, as IOAT reports a
 * failed write). terminate_all drops what has not run and wakes a stalled
 * worker; synchronize waits for the one running. Like fsldma, it keeps a
 * completed descriptor its client did not ack (the count is in unacked).
 *
 * Its device also imports dma-bufs, as a device driver does
 * (/dev/ump_swdma_importer): attach and map one, then write or read it as
 * the device sees it, through the DMA addresses of the mapping (bounce
 * buffers under swiotlb=force), so a test can tell whether an exporter's
 * begin/end_cpu_access sync what the CPU and the device see.
 */
#include <linux/dma-buf.h>
#include <linux/dma-mapping.h>
#include <linux/dmaengine.h>
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/io.h>
#include <linux/module.h>
#include <linux/platform_device.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/version.h>
#include <linux/wait.h>
#include <linux/workqueue.h>

static unsigned int delay_ms;
module_param(delay_ms, uint, 0644);
MODULE_PARM_DESC(delay_ms, "Stall each issued batch this long (test faults)");

static int fail_prep_after = -1;
module_param(fail_prep_after, int, 0644);
MODULE_PARM_DESC(
	fail_prep_after,
	"Fail every prep after this many more; -1: never (test faults)");

static int fail_transfer_after = -1;
module_param(fail_transfer_after, int, 0644);
MODULE_PARM_DESC(
	fail_transfer_after,
	"Fail the transfer of the descriptor after this many more, reported through callback_result only, its bytes not written; -1: never (test faults)");

/*
 * Like fsldma and xgene, keep a completed descriptor its client has not
 * acked (DMA_CTRL_ACK) until it is; how many are kept, for the tests.
 */
static unsigned long unacked;
module_param(unacked, ulong, 0444);
MODULE_PARM_DESC(unacked, "Completed descriptors kept because not acked");

/* What a client asked of the engine, for the tests to see. */
static unsigned long longest;
module_param(longest, ulong, 0644);
MODULE_PARM_DESC(longest,
		 "Longest memcpy prepared, in bytes (write 0 to reset)");

struct swdma_desc {
	struct dma_async_tx_descriptor tx;
	struct list_head node;
	dma_addr_t src, dst;
	size_t len;
};

struct swdma {
	struct dma_device dd;
	struct dma_chan chan;
	struct platform_device *pdev;
	spinlock_t lock; /* lists and cookies */
	struct list_head submitted;
	struct list_head issued;
	struct list_head kept; /* completed, not acked */
	struct work_struct work;
	wait_queue_head_t stall; /* a stalled worker, woken by terminate_all */
	atomic_t terminations;
	atomic64_t copies;
};

static struct swdma *swdma;

static dma_cookie_t swdma_tx_submit(struct dma_async_tx_descriptor *tx)
{
	struct swdma_desc *d = container_of(tx, struct swdma_desc, tx);
	struct dma_chan *chan = tx->chan;
	dma_cookie_t cookie;
	unsigned long flags;

	spin_lock_irqsave(&swdma->lock, flags);
	cookie = chan->cookie + 1;
	if (cookie < DMA_MIN_COOKIE)
		cookie = DMA_MIN_COOKIE;
	tx->cookie = chan->cookie = cookie;
	list_add_tail(&d->node, &swdma->submitted);
	spin_unlock_irqrestore(&swdma->lock, flags);
	return cookie;
}

static struct dma_async_tx_descriptor *
swdma_prep_memcpy(struct dma_chan *chan, dma_addr_t dst, dma_addr_t src,
		  size_t len, unsigned long flags)
{
	int left = READ_ONCE(fail_prep_after);
	struct swdma_desc *d;

	if (left == 0)
		return NULL;
	if (left > 0)
		WRITE_ONCE(fail_prep_after, left - 1);
	d = kzalloc(sizeof(*d), GFP_NOWAIT);
	if (!d)
		return NULL;
	if (len > READ_ONCE(longest))
		WRITE_ONCE(longest, len);
	dma_async_tx_descriptor_init(&d->tx, chan);
	d->tx.flags = flags;
	d->tx.tx_submit = swdma_tx_submit;
	d->src = src;
	d->dst = dst;
	d->len = len;
	return &d->tx;
}

/* Free the kept descriptors acked since (under the lock). */
static void swdma_reclaim(void)
{
	struct swdma_desc *d, *t;

	list_for_each_entry_safe(d, t, &swdma->kept, node) {
		if (async_tx_test_ack(&d->tx)) {
			list_del(&d->node);
			kfree(d);
			WRITE_ONCE(unacked, unacked - 1);
		}
	}
}

/* One descriptor at a time, yielding between them: a long chain of copies
 * must not hold a CPU for seconds. */
static void swdma_work(struct work_struct *work)
{
	unsigned int stall = READ_ONCE(delay_ms);
	struct swdma_desc *d;
	unsigned long flags;

	if (stall) {
		int seen = atomic_read(&swdma->terminations);

		wait_event_timeout(swdma->stall,
				   atomic_read(&swdma->terminations) != seen,
				   msecs_to_jiffies(stall));
	}
	for (;; cond_resched()) {
		struct dmaengine_result res = { .result = DMA_TRANS_NOERROR };
		int fail;
		dma_async_tx_callback_result cbr;
		dma_async_tx_callback cb;
		void *param;

		spin_lock_irqsave(&swdma->lock, flags);
		d = list_first_entry_or_null(&swdma->issued, struct swdma_desc,
					     node);
		if (d)
			list_del(&d->node);
		spin_unlock_irqrestore(&swdma->lock, flags);
		if (!d)
			return;
		fail = READ_ONCE(fail_transfer_after);
		if (fail > 0)
			WRITE_ONCE(fail_transfer_after, fail - 1);
		if (fail == 0) {
			WRITE_ONCE(fail_transfer_after, -1);
			res.result = DMA_TRANS_WRITE_FAILED;
		} else {
			memcpy(phys_to_virt(d->dst), phys_to_virt(d->src),
			       d->len);
		}
		atomic64_inc(&swdma->copies);
		cb = d->tx.callback;
		cbr = d->tx.callback_result;
		param = d->tx.callback_param;
		spin_lock_irqsave(&swdma->lock, flags);
		swdma->chan.completed_cookie = d->tx.cookie;
		swdma_reclaim();
		if (async_tx_test_ack(&d->tx)) {
			kfree(d);
		} else {
			list_add_tail(&d->node, &swdma->kept);
			WRITE_ONCE(unacked, unacked + 1);
		}
		spin_unlock_irqrestore(&swdma->lock, flags);
		if (cbr)
			cbr(param, &res);
		else if (cb)
			cb(param);
	}
}

static void swdma_issue_pending(struct dma_chan *chan)
{
	unsigned long flags;

	spin_lock_irqsave(&swdma->lock, flags);
	list_splice_tail_init(&swdma->submitted, &swdma->issued);
	spin_unlock_irqrestore(&swdma->lock, flags);
	queue_work(system_unbound_wq, &swdma->work);
}

static enum dma_status swdma_tx_status(struct dma_chan *chan,
				       dma_cookie_t cookie,
				       struct dma_tx_state *state)
{
	dma_cookie_t used = READ_ONCE(chan->cookie);
	dma_cookie_t done = READ_ONCE(chan->completed_cookie);

	if (state) {
		state->last = done;
		state->used = used;
		state->residue = 0;
	}
	return dma_async_is_complete(cookie, done, used);
}

/* Drop every descriptor not yet run; their callbacks never come. */
static int swdma_terminate_all(struct dma_chan *chan)
{
	struct swdma_desc *d, *t;
	unsigned long flags;
	LIST_HEAD(dropped);

	spin_lock_irqsave(&swdma->lock, flags);
	list_splice_tail_init(&swdma->submitted, &dropped);
	list_splice_tail_init(&swdma->issued, &dropped);
	spin_unlock_irqrestore(&swdma->lock, flags);
	atomic_inc(&swdma->terminations);
	wake_up_all(&swdma->stall);
	list_for_each_entry_safe(d, t, &dropped, node)
		kfree(d);
	return 0;
}

/* After this, no descriptor of ours runs or calls back. */
static void swdma_synchronize(struct dma_chan *chan)
{
	flush_work(&swdma->work);
}

static int swdma_alloc_chan(struct dma_chan *chan)
{
	chan->cookie = DMA_MIN_COOKIE;
	chan->completed_cookie = DMA_MIN_COOKIE;
	return 1;
}

static void swdma_free_chan(struct dma_chan *chan)
{
	struct swdma_desc *d, *t;

	flush_work(&swdma->work);
	list_for_each_entry_safe(d, t, &swdma->kept, node)
		kfree(d);
	INIT_LIST_HEAD(&swdma->kept);
	unacked = 0;
}

/* The dma_device is freed when its last user lets go, not at unload. */
static void swdma_release(struct dma_device *dd)
{
	kfree(container_of(dd, struct swdma, dd));
}

/* dmaengine takes the provider's owner from its bound driver. */
static int swdma_probe(struct platform_device *pdev)
{
	int ret;

	swdma = kzalloc(sizeof(*swdma), GFP_KERNEL);
	if (!swdma)
		return -ENOMEM;
	spin_lock_init(&swdma->lock);
	INIT_LIST_HEAD(&swdma->submitted);
	INIT_LIST_HEAD(&swdma->issued);
	INIT_LIST_HEAD(&swdma->kept);
	INIT_WORK(&swdma->work, swdma_work);
	init_waitqueue_head(&swdma->stall);
	swdma->pdev = pdev;
	ret = dma_coerce_mask_and_coherent(&pdev->dev, DMA_BIT_MASK(64));
	if (ret)
		goto err_free;

	dma_cap_set(DMA_MEMCPY, swdma->dd.cap_mask);
	swdma->dd.dev = &pdev->dev;
	swdma->dd.device_prep_dma_memcpy = swdma_prep_memcpy;
	swdma->dd.device_issue_pending = swdma_issue_pending;
	swdma->dd.device_tx_status = swdma_tx_status;
	swdma->dd.device_terminate_all = swdma_terminate_all;
	swdma->dd.device_synchronize = swdma_synchronize;
	swdma->dd.device_alloc_chan_resources = swdma_alloc_chan;
	swdma->dd.device_free_chan_resources = swdma_free_chan;
	swdma->dd.device_release = swdma_release;
	swdma->dd.copy_align = DMAENGINE_ALIGN_1_BYTE;
	INIT_LIST_HEAD(&swdma->dd.channels);
	swdma->chan.device = &swdma->dd;
	list_add_tail(&swdma->chan.device_node, &swdma->dd.channels);
	ret = dma_async_device_register(&swdma->dd);
	if (ret)
		goto err_free;
	pr_info("ump_swdma: software memcpy channel registered (test only)\n");
	return 0;

err_free:
	kfree(swdma);
	swdma = NULL;
	return ret;
}

static void swdma_remove(struct platform_device *pdev)
{
	pr_info("ump_swdma: %lld copies\n",
		(long long)atomic64_read(&swdma->copies));
	dma_async_device_unregister(&swdma->dd);
}

#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 11, 0)
#define SWDMA_REMOVE .remove = swdma_remove
#else
static int swdma_remove_int(struct platform_device *pdev)
{
	swdma_remove(pdev);
	return 0;
}
#define SWDMA_REMOVE .remove = swdma_remove_int
#endif

/* ---- the importer ---------------------------------------------------- */

#define SWDMA_IMPORT _IOW('S', 1, int) /* a dma-buf fd: attach and map */
#define SWDMA_DEV_FILL _IOW('S', 2, int) /* the device writes this byte */
#define SWDMA_DEV_PEEK _IOR('S', 3, int) /* first byte seen, | 256 if bounced */

struct swdma_import {
	struct dma_buf *dmabuf;
	struct dma_buf_attachment *attach;
	struct sg_table *sgt;
};

#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 2, 0)
#define swdma_map dma_buf_map_attachment_unlocked
#define swdma_unmap dma_buf_unmap_attachment_unlocked
#else
#define swdma_map dma_buf_map_attachment
#define swdma_unmap dma_buf_unmap_attachment
#endif

static int swdma_imp_open(struct inode *inode, struct file *file)
{
	file->private_data = kzalloc(sizeof(struct swdma_import), GFP_KERNEL);
	return file->private_data ? 0 : -ENOMEM;
}

static int swdma_imp_release(struct inode *inode, struct file *file)
{
	struct swdma_import *im = file->private_data;

	if (im->sgt)
		swdma_unmap(im->attach, im->sgt, DMA_BIDIRECTIONAL);
	if (im->attach)
		dma_buf_detach(im->dmabuf, im->attach);
	if (im->dmabuf)
		dma_buf_put(im->dmabuf);
	kfree(im);
	return 0;
}

static long swdma_imp_ioctl(struct file *file, unsigned int cmd,
			    unsigned long arg)
{
	struct swdma_import *im = file->private_data;
	struct scatterlist *sg;
	int i, v = 0;
	u8 *p;

	switch (cmd) {
	case SWDMA_IMPORT:
		if (im->dmabuf)
			return -EBUSY;
		im->dmabuf = dma_buf_get((int)arg);
		if (IS_ERR(im->dmabuf)) {
			v = PTR_ERR(im->dmabuf);
			im->dmabuf = NULL;
			return v;
		}
		im->attach = dma_buf_attach(im->dmabuf, &swdma->pdev->dev);
		if (IS_ERR(im->attach)) {
			v = PTR_ERR(im->attach);
			im->attach = NULL;
			return v;
		}
		im->sgt = swdma_map(im->attach, DMA_BIDIRECTIONAL);
		if (IS_ERR(im->sgt)) {
			v = PTR_ERR(im->sgt);
			im->sgt = NULL;
		}
		return v;
	case SWDMA_DEV_FILL:
		if (!im->sgt)
			return -ENXIO;
		for_each_sgtable_dma_sg(im->sgt, sg, i)
			memset(phys_to_virt(sg_dma_address(sg)), (int)arg,
			       sg_dma_len(sg));
		return 0;
	case SWDMA_DEV_PEEK:
		if (!im->sgt)
			return -ENXIO;
		sg = im->sgt->sgl;
		p = phys_to_virt(sg_dma_address(sg));
		v = p[0] | (sg_dma_address(sg) != sg_phys(sg) ? 256 : 0);
		return put_user(v, (int __user *)arg);
	}
	return -ENOTTY;
}

static const struct file_operations swdma_imp_fops = {
	.owner = THIS_MODULE,
	.open = swdma_imp_open,
	.release = swdma_imp_release,
	.unlocked_ioctl = swdma_imp_ioctl,
};

static struct miscdevice swdma_imp_misc = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "ump_swdma_importer",
	.fops = &swdma_imp_fops,
};

static struct platform_driver swdma_driver = {
	.probe = swdma_probe,
	SWDMA_REMOVE,
	.driver = { .name = "ump_swdma" },
};

static struct platform_device *swdma_pdev;

static int __init swdma_init(void)
{
	int ret = platform_driver_register(&swdma_driver);

	if (ret)
		return ret;
	swdma_pdev = platform_device_register_simple("ump_swdma", -1, NULL, 0);
	if (IS_ERR(swdma_pdev)) {
		platform_driver_unregister(&swdma_driver);
		return PTR_ERR(swdma_pdev);
	}
	if (!swdma) {
		platform_device_unregister(swdma_pdev);
		platform_driver_unregister(&swdma_driver);
		return -ENODEV;
	}
	ret = misc_register(&swdma_imp_misc);
	if (ret) {
		platform_device_unregister(swdma_pdev);
		platform_driver_unregister(&swdma_driver);
	}
	return ret;
}

static void __exit swdma_exit(void)
{
	misc_deregister(&swdma_imp_misc);
	platform_device_unregister(swdma_pdev);
	platform_driver_unregister(&swdma_driver);
}

module_init(swdma_init);
module_exit(swdma_exit);
MODULE_DESCRIPTION("Software DMA_MEMCPY channel for ump.ko tests");
MODULE_LICENSE("GPL");
MODULE_IMPORT_NS(DMA_BUF);
