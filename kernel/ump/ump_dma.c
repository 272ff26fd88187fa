// SPDX-License-Identifier: GPL-2.0
/*
 * ump's dmaengine path: chains between host buffers on a DMA_MEMCPY channel.
 *
 * Nothing is mapped for the channel ahead of time. Each descriptor goes in
 * windows of up to UMP_DMA_WINDOW bytes: the window's source and destination
 * pages become two scatterlists (contiguous pages merge: host buffers are
 * built of high-order chunks), each mapped with dma_map_sgtable() for exactly
 * those bytes (source to the device, destination from it) just before it is
 * submitted and unmapped once the window is done. So a bounce buffer
 * (swiotlb, as SEV and TDX guests force) is synced both ways and held only
 * while a window is in flight, an IOMMU may merge a window into one run, and
 * the engine gets descriptors as long as both mapped runs allow. Each piece
 * is acked at prep and reports its end (and a failed transfer) through its
 * callback_result; a channel that does not finish a window in the timeout,
 * a prep that still fails after the channel drained, or a submit error is
 * terminated and synchronised before anything is unmapped or released, so
 * the engine never writes where a chain's memory used to be.
 */
#include <linux/dma-mapping.h>
#include <linux/dmaengine.h>
#include <linux/jiffies.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>

#include "ump.h"

#define UMP_DMA_WINDOW SZ_1M

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

/*
 * Every piece reports its own end, as dmatest's do: an engine may fail one
 * piece of a window (callback_result), and the window then fails rather
 * than "succeed" with that piece's bytes never written. The window holds
 * one count of its own while it submits.
 */
static void ump_dma_piece_done(void *param,
			       const struct dmaengine_result *result)
{
	struct ump_chain *c = param;

	if (result && result->result != DMA_TRANS_NOERROR)
		WRITE_ONCE(c->dma_status, -EIO);
	if (atomic_dec_and_test(&c->dma_pending))
		complete(&c->dma_done);
}

/*
 * len bytes of buf from off, mapped for dev in dir. Entries stay within
 * what one mapping may hold (swiotlb's slot run) and one segment may be.
 */
static int ump_dma_map_range(struct device *dev, const struct ump_buf *buf,
			     u64 off, size_t len, enum dma_data_direction dir,
			     struct sg_table *sgt)
{
	unsigned long first = off >> PAGE_SHIFT;
	unsigned int max_seg = min_t(size_t, dma_max_mapping_size(dev),
				     dma_get_max_seg_size(dev)) &
			       PAGE_MASK;
	int ret;

	if (ump_fault_copy())
		return -ENOMEM;
	ret = sg_alloc_table_from_pages_segment(
		sgt, buf->pages + first, PFN_UP(offset_in_page(off) + len),
		offset_in_page(off), len, max_seg ? max_seg : PAGE_SIZE,
		GFP_KERNEL);
	if (ret)
		return ret;
	ret = dma_map_sgtable(dev, sgt, dir, 0);
	if (ret) {
		sg_free_table(sgt);
		return ret == -ENOMEM ? -ENOMEM : -EIO;
	}
	return 0;
}

static void ump_dma_unmap_range(struct device *dev, struct sg_table *sgt,
				enum dma_data_direction dir)
{
	dma_unmap_sgtable(dev, sgt, dir, 0);
	sg_free_table(sgt);
}

/*
 * One window of descriptor d from *off: mapped, submitted as pieces that
 * each end where a source or destination DMA segment ends, waited for,
 * unmapped. Advances *off by what was copied.
 */
static int ump_dma_window(struct ump_chain *c, const struct ump_copy_desc *d,
			  const struct ump_buf *src, const struct ump_buf *dst,
			  u64 *off)
{
	struct dma_chan *chan = ump_pool.dma;
	struct device *dev = dmaengine_get_dma_device(chan);
	size_t win = min_t(u64, d->length - *off, UMP_DMA_WINDOW);
	struct scatterlist *ss, *ds;
	struct dma_async_tx_descriptor *tx;
	struct sg_table st, dt;
	size_t sdone = 0, ddone = 0, moved = 0;
	dma_cookie_t cookie = 0;
	u32 n = 0;
	int ret;

	ret = ump_dma_map_range(dev, src, d->src_offset + *off, win,
				DMA_TO_DEVICE, &st);
	if (ret)
		return ret;
	ret = ump_dma_map_range(dev, dst, d->dst_offset + *off, win,
				DMA_FROM_DEVICE, &dt);
	if (ret)
		goto out_src;

	reinit_completion(&c->dma_done);
	atomic_set(&c->dma_pending, 1);
	c->dma_status = 0;
	ss = st.sgl;
	ds = dt.sgl;
	while (moved < win) {
		size_t len =
			min(sg_dma_len(ss) - sdone, sg_dma_len(ds) - ddone);
		bool last = moved + len == win;

		/*
		 * Acked at prep: we never chain a descriptor to another, so
		 * engines that keep unacked ones (fsldma, xgene) free each as
		 * it completes instead of at the channel's release.
		 */
		tx = ump_fault_copy() ?
			     NULL :
			     dmaengine_prep_dma_memcpy(
				     chan, sg_dma_address(ds) + ddone,
				     sg_dma_address(ss) + sdone, len,
				     DMA_CTRL_ACK | DMA_PREP_INTERRUPT);
		if (!tx) {
			/* Out of descriptors: what went out drains, then retry. */
			ret = n ? 0 : -ENOMEM;
			break;
		}
		tx->callback_result = ump_dma_piece_done;
		tx->callback_param = c;
		atomic_inc(&c->dma_pending);
		cookie = dmaengine_submit(tx);
		if (dma_submit_error(cookie)) {
			atomic_dec(&c->dma_pending); /* never runs */
			ret = -EIO;
			break;
		}
		n++;
		moved += len;
		sdone += len;
		ddone += len;
		if (sdone == sg_dma_len(ss) && !last) {
			ss = sg_next(ss);
			sdone = 0;
		}
		if (ddone == sg_dma_len(ds) && !last) {
			ds = sg_next(ds);
			ddone = 0;
		}
	}
	if (n) {
		/* On an error, ret is set: the pieces in flight are terminated. */
		dma_async_issue_pending(chan);
		if (!ret) {
			/* The window's own count: the pieces end it. */
			ump_dma_piece_done(c, NULL);
			if (!wait_for_completion_timeout(
				    &c->dma_done,
				    msecs_to_jiffies(ump_dma_timeout_ms)))
				ret = -ETIMEDOUT;
			else if (READ_ONCE(c->dma_status))
				ret = c->dma_status;
			else if (dma_async_is_tx_complete(chan, cookie, NULL,
							  NULL) != DMA_COMPLETE)
				ret = -EIO;
		}
		if (ret)
			/* No piece may run, or call back, once we unmap. */
			dmaengine_terminate_sync(chan);
	}
	if (!ret) {
		*off += moved;
		c->bytes += moved;
	}
	ump_dma_unmap_range(dev, &dt, DMA_FROM_DEVICE);
out_src:
	ump_dma_unmap_range(dev, &st, DMA_TO_DEVICE);
	return ret;
}

int ump_dma_copy_one(struct ump_chain *c, const struct ump_copy_desc *d,
		     const struct ump_buf *src, const struct ump_buf *dst)
{
	u64 off = 0;
	int ret = 0;

	while (!ret && off < d->length) {
		if (off && ump_chain_checkpoint(c))
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
