// SPDX-License-Identifier: GPL-2.0
/*
 * ump's dmaengine path: chains between host buffers on a DMA_MEMCPY channel.
 *
 * Nothing is mapped for the channel ahead of time. Each descriptor goes in
 * windows of up to UMP_DMA_WINDOW page-sized pieces, each piece mapped for
 * exactly its bytes (source to the device, destination from it) just before
 * it is submitted and unmapped once the window is done, so that a bounce
 * buffer (swiotlb, as SEV and TDX guests force) is synced both ways and
 * held only while a window is in flight. A window ends with an interrupt
 * and its callback; a channel that does not finish one in the timeout, a
 * prep that still fails after the channel drained, or a submit error is
 * terminated and synchronised before any page is unmapped or released, so
 * the engine never writes where a chain's memory used to be.
 */
#include <linux/delay.h>
#include <linux/dma-mapping.h>
#include <linux/dmaengine.h>
#include <linux/jiffies.h>
#include <linux/slab.h>

#include "ump.h"

#define UMP_DMA_WINDOW 64

struct ump_dma_piece {
	dma_addr_t src, dst;
	size_t len;
};

static bool ump_dma_overlaps(const struct ump_copy_desc *d,
			     const struct ump_buf *s, const struct ump_buf *t)
{
	return s == t && d->src_offset < d->dst_offset + d->length &&
	       d->dst_offset < d->src_offset + d->length;
}

/*
 * A chain goes to the channel when it only touches host buffers (pages we
 * can map) and no descriptor overlaps itself (memcpy engines promise no
 * memmove). Everything else stays on the CPU workers.
 */
bool ump_dma_capable(const struct ump_chain *c)
{
	u32 i;

	if (!ump_pool.dma)
		return false;
	for (i = 0; i < c->count; i++)
		if (c->bufs[2 * i]->kind != UMP_BUF_HOST ||
		    c->bufs[2 * i + 1]->kind != UMP_BUF_HOST ||
		    ump_dma_overlaps(&c->descs[i], c->bufs[2 * i],
				     c->bufs[2 * i + 1]))
			return false;
	return true;
}

static void ump_dma_callback(void *param)
{
	complete(param);
}

static void ump_dma_unmap(struct device *dev, struct ump_dma_piece *p, u32 n)
{
	while (n--) {
		dma_unmap_page(dev, p[n].src, p[n].len, DMA_TO_DEVICE);
		dma_unmap_page(dev, p[n].dst, p[n].len, DMA_FROM_DEVICE);
	}
}

/* Wait for cookie without a callback (after a failed prep), sleeping. */
static int ump_dma_poll(struct dma_chan *chan, dma_cookie_t cookie,
			unsigned long deadline)
{
	enum dma_status st;

	while ((st = dma_async_is_tx_complete(chan, cookie, NULL, NULL)) ==
	       DMA_IN_PROGRESS) {
		if (time_after(jiffies, deadline))
			return -ETIMEDOUT;
		usleep_range(50, 200);
	}
	return st == DMA_COMPLETE ? 0 : -EIO;
}

/*
 * Up to UMP_DMA_WINDOW pieces of [*off, len) of descriptor d: mapped,
 * submitted, waited for, unmapped. Advances *off by what was copied.
 */
static int ump_dma_window(struct ump_chain *c, const struct ump_copy_desc *d,
			  const struct ump_buf *src, const struct ump_buf *dst,
			  u64 *off)
{
	struct dma_chan *chan = ump_pool.dma;
	struct device *dev = dmaengine_get_dma_device(chan);
	unsigned long deadline = jiffies + msecs_to_jiffies(ump_dma_timeout_ms);
	struct dma_async_tx_descriptor *tx;
	dma_cookie_t cookie = 0;
	u64 at = *off, moved = 0;
	bool callback = false;
	int ret = 0;
	u32 n = 0;

	reinit_completion(&c->dma_done);
	while (n < UMP_DMA_WINDOW && at < d->length) {
		struct ump_dma_piece *p = &c->pieces[n];
		u64 s = d->src_offset + at, t = d->dst_offset + at;
		size_t len = min3((u64)(d->length - at),
				  (u64)(PAGE_SIZE - offset_in_page(s)),
				  (u64)(PAGE_SIZE - offset_in_page(t)));
		bool last = n + 1 == UMP_DMA_WINDOW || at + len == d->length;

		p->len = len;
		p->src = dma_map_page(dev, src->pages[s >> PAGE_SHIFT],
				      offset_in_page(s), len, DMA_TO_DEVICE);
		if (dma_mapping_error(dev, p->src)) {
			ret = -EIO;
			break;
		}
		p->dst = dma_map_page(dev, dst->pages[t >> PAGE_SHIFT],
				      offset_in_page(t), len, DMA_FROM_DEVICE);
		if (dma_mapping_error(dev, p->dst)) {
			dma_unmap_page(dev, p->src, len, DMA_TO_DEVICE);
			ret = -EIO;
			break;
		}
		tx = dmaengine_prep_dma_memcpy(chan, p->dst, p->src, len,
					       last ? DMA_PREP_INTERRUPT : 0);
		if (!tx) {
			/* Out of descriptors: what went out drains, then retry. */
			dma_unmap_page(dev, p->src, len, DMA_TO_DEVICE);
			dma_unmap_page(dev, p->dst, len, DMA_FROM_DEVICE);
			ret = n ? 0 : -ENOMEM;
			break;
		}
		if (last) {
			tx->callback = ump_dma_callback;
			tx->callback_param = &c->dma_done;
		}
		cookie = dmaengine_submit(tx);
		if (dma_submit_error(cookie)) {
			/* Not queued, its mapping ours to undo; the rest are. */
			dma_unmap_page(dev, p->src, len, DMA_TO_DEVICE);
			dma_unmap_page(dev, p->dst, len, DMA_FROM_DEVICE);
			ret = -EIO;
			break;
		}
		callback = last;
		n++;
		at += len;
		moved += len;
	}
	if (n) {
		/* On an error, ret is set: the pieces in flight are terminated. */
		dma_async_issue_pending(chan);
		if (!ret && callback) {
			if (!wait_for_completion_timeout(
				    &c->dma_done,
				    msecs_to_jiffies(ump_dma_timeout_ms)))
				ret = -ETIMEDOUT;
			else if (dma_async_is_tx_complete(chan, cookie, NULL,
							  NULL) != DMA_COMPLETE)
				ret = -EIO;
		} else if (!ret) {
			ret = ump_dma_poll(chan, cookie, deadline);
		}
		if (ret)
			/* No piece may run, or call back, once we unmap. */
			dmaengine_terminate_sync(chan);
		ump_dma_unmap(dev, c->pieces, n);
	}
	if (!ret) {
		*off = at;
		c->bytes += moved;
	}
	return ret;
}

int ump_dma_copy_one(struct ump_chain *c, const struct ump_copy_desc *d,
		     const struct ump_buf *src, const struct ump_buf *dst)
{
	u64 off = 0;
	int ret = 0;

	if (!c->pieces)
		c->pieces = kmalloc_array(UMP_DMA_WINDOW, sizeof(*c->pieces),
					  GFP_KERNEL);
	if (!c->pieces)
		return -ENOMEM;
	while (!ret && off < d->length) {
		if (off && ump_chain_cancelled(c))
			return -ECANCELED;
		mutex_lock(&ump_pool.dma_lock);
		ret = ump_dma_window(c, d, src, dst, &off);
		mutex_unlock(&ump_pool.dma_lock);
		cond_resched();
	}
	return ret;
}

int ump_dma_init(void)
{
	dma_cap_mask_t mask;
	struct dma_chan *chan;

	mutex_init(&ump_pool.dma_lock);
	if (!ump_dma_enable)
		return 0;
	dma_cap_zero(mask);
	dma_cap_set(DMA_MEMCPY, mask);
	chan = dma_request_chan_by_mask(&mask);
	if (IS_ERR(chan))
		return 0; /* none: the CPU workers copy everything */
	ump_pool.dma = chan;
	pr_info("ump: copies run on DMA channel %s\n", dma_chan_name(chan));
	return 0;
}

/* After the copy workers drained: nothing of ours is on the channel. */
void ump_dma_exit(void)
{
	if (!ump_pool.dma)
		return;
	dmaengine_terminate_sync(ump_pool.dma);
	dma_release_channel(ump_pool.dma);
	ump_pool.dma = NULL;
}
