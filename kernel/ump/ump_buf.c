// SPDX-License-Identifier: GPL-2.0
/*
 * ump buffers: host pages on a chosen NUMA node, PCI P2P memory, and
 * imported dma-bufs. Every buffer can be exported as a dma-buf, which is how
 * memory is shared zero-copy with other drivers and with user space (mmap).
 */
#include <linux/dma-mapping.h>
#include <linux/dmaengine.h>
#include <linux/highmem.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/nospec.h>
#include <linux/pci-p2pdma.h>
#include <linux/sched/signal.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include "ump.h"
#include "ump_compat.h"

MODULE_IMPORT_NS(DMA_BUF);

static void ump_buf_release(struct kref *ref)
{
	struct ump_buf *buf = container_of(ref, struct ump_buf, ref);
	unsigned long i;

	switch (buf->kind) {
	case UMP_BUF_HOST:
		vunmap(buf->vaddr);
		for (i = 0; i < buf->nr_pages; i++)
			__free_page(buf->pages[i]);
		kvfree(buf->pages);
		atomic64_sub(buf->size, &ump_pool.node_used[buf->node]);
		atomic_dec(&ump_pool.node_bufs[buf->node]);
		break;
	case UMP_BUF_P2P:
		pci_free_p2pmem(buf->dev->pdev, buf->vaddr, buf->size);
		atomic64_sub(buf->size, &buf->dev->p2p_used);
		atomic_dec(&buf->dev->p2p_bufs);
		break;
	case UMP_BUF_IMPORT:
		mutex_lock(&ump_pool.import_lock);
		list_del(&buf->import_link);
		mutex_unlock(&ump_pool.import_lock);
		ump_dma_buf_vunmap(buf->dmabuf, &buf->map);
		dma_buf_put(buf->dmabuf);
		atomic64_sub(buf->size, &ump_pool.import_bytes);
		atomic_dec(&ump_pool.import_bufs);
		break;
	}
	atomic_dec(&ump_pool.live_bufs);
	kfree(buf);
}

void ump_buf_put(struct ump_buf *buf)
{
	kref_put(&buf->ref, ump_buf_release);
}

static struct ump_buf *ump_buf_new(u32 kind, u32 region, int node)
{
	struct ump_buf *buf = kzalloc(sizeof(*buf), GFP_KERNEL_ACCOUNT);

	if (!buf)
		return NULL;
	kref_init(&buf->ref);
	mutex_init(&buf->attach_lock);
	INIT_LIST_HEAD(&buf->attachments);
	buf->kind = kind;
	buf->region = region;
	buf->node = node;
	return buf;
}

/*
 * Host buffers are built of chunks as large as the node gives without
 * reclaim, as system_heap does: 1 MiB and 64 KiB runs match IOMMU page
 * sizes and make long DMA segments, 4 KiB pages fill in. A chunk is split
 * into order-0 pages (split_page()), so that vmap, mmap and freeing see
 * plain pages while the run stays physically contiguous.
 */
static const unsigned int ump_chunk_orders[] = { 8, 4, 0 };

static struct page *ump_alloc_chunk(int node, unsigned long left,
				    unsigned int *order)
{
	/*
	 * Charged to the caller's memory cgroup; over its limit (or when the
	 * node is short) the ALLOC fails with -ENOMEM rather than sending the
	 * OOM killer after a process for asking. Only whole pages may
	 * reclaim: a large run is a bonus, not worth compaction.
	 */
	const gfp_t gfp = GFP_HIGHUSER | __GFP_ZERO | __GFP_THISNODE |
			  __GFP_NOWARN | __GFP_ACCOUNT;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(ump_chunk_orders); i++) {
		unsigned int o = ump_chunk_orders[i];
		gfp_t g = o ? (gfp | __GFP_NORETRY) & ~__GFP_RECLAIM :
			      gfp | __GFP_RETRY_MAYFAIL;
		struct page *page;

		if (left < 1UL << o)
			continue;
		page = alloc_pages_node(node, g, o);
		if (page) {
			*order = o;
			return page;
		}
	}
	return NULL;
}

/*
 * Host buffers are whole pages from one node, never from a fallback node:
 * a tensor the scheduler put next to a device is worthless elsewhere.
 * They are charged against the node's cap before any page is taken, so a
 * request over the cap fails fast and nothing is half-allocated.
 */
int ump_buf_alloc_host(int node, u64 size, struct ump_buf **out)
{
	struct ump_buf *buf;
	unsigned long i, n;
	int ret;

	if (node < 0 || node >= MAX_NUMNODES)
		return -EINVAL;
	/* node indexes the pool's arrays: no speculation past the check. */
	node = array_index_nospec(node, MAX_NUMNODES);
	if (!node_state(node, N_MEMORY))
		return -EINVAL;
	if (!size || size > (u64)ump_pool.node_cap[node])
		return size ? -ENOMEM : -EINVAL;
	size = PAGE_ALIGN(size);
	if (atomic64_add_return(size, &ump_pool.node_used[node]) >
	    ump_pool.node_cap[node]) {
		atomic64_sub(size, &ump_pool.node_used[node]);
		return -ENOMEM;
	}

	ret = -ENOMEM;
	buf = ump_buf_new(UMP_BUF_HOST, UMP_REGION_HOST(node), node);
	if (!buf)
		goto err_uncharge;
	buf->size = size;
	n = size >> PAGE_SHIFT;
	buf->pages = kvmalloc_array(n, sizeof(*buf->pages),
				    GFP_KERNEL | __GFP_ACCOUNT);
	if (!buf->pages)
		goto err_buf;
	while (buf->nr_pages < n) {
		unsigned int order;
		struct page *page;

		if (fatal_signal_pending(current)) {
			ret = -EINTR;
			goto err_pages;
		}
		page = ump_alloc_chunk(node, n - buf->nr_pages, &order);
		if (!page)
			goto err_pages;
		if (order)
			split_page(page, order);
		for (i = 0; i < 1UL << order; i++)
			buf->pages[buf->nr_pages++] = page + i;
		cond_resched();
	}
	/* One linear mapping keeps the CPU copy engine a plain memcpy. */
	buf->vaddr = vmap(buf->pages, buf->nr_pages, VM_MAP, PAGE_KERNEL);
	if (!buf->vaddr)
		goto err_pages;

	atomic_inc(&ump_pool.node_bufs[node]);
	atomic_inc(&ump_pool.live_bufs);
	*out = buf;
	return 0;

err_pages:
	for (i = 0; i < buf->nr_pages; i++)
		__free_page(buf->pages[i]);
	kvfree(buf->pages);
err_buf:
	kfree(buf);
err_uncharge:
	atomic64_sub(size, &ump_pool.node_used[node]);
	return ret;
}

int ump_buf_alloc_p2p(struct ump_dev *dev, u64 size, struct ump_buf **out)
{
	struct ump_buf *buf;
	int ret = -ENOMEM;
	u64 off;

	if (!size || size > SZ_1G * 64ULL)
		return -EINVAL;
	if (!IS_ENABLED(CONFIG_PCI_P2PDMA) || !pci_has_p2pmem(dev->pdev))
		return -ENODEV;
	size = PAGE_ALIGN(size);
	/* Charged first, as host memory is, so racing ALLOCs stay under it. */
	if (atomic64_add_return(size, &dev->p2p_used) > READ_ONCE(dev->p2p_cap))
		goto err_uncharge;
	buf = ump_buf_new(UMP_BUF_P2P, UMP_REGION_P2P(dev->index),
			  NUMA_NO_NODE);
	if (!buf)
		goto err_uncharge;
	buf->vaddr = pci_alloc_p2pmem(dev->pdev, size);
	if (!buf->vaddr)
		goto err_free;
	/*
	 * The provider hands out whatever its BAR held before. Zeroed a slice
	 * at a time: gigabytes of it must neither hold the CPU nor outlive a
	 * kill. (P2PDMA maps the BAR as ZONE_DEVICE pages, memremap_pages(),
	 * which is what lets CPU copies and vmap treat it as memory.)
	 */
	for (off = 0; off < size; off += SZ_1M) {
		if (fatal_signal_pending(current)) {
			pci_free_p2pmem(dev->pdev, buf->vaddr, size);
			ret = -EINTR;
			goto err_free;
		}
		memset(buf->vaddr + off, 0, min_t(u64, size - off, SZ_1M));
		cond_resched();
	}
	buf->size = size;
	buf->dev = dev;
	atomic_inc(&dev->p2p_bufs);
	atomic_inc(&ump_pool.live_bufs);
	*out = buf;
	return 0;

err_free:
	kfree(buf);
err_uncharge:
	atomic64_sub(size, &dev->p2p_used);
	return ret;
}

/* The import of dmabuf already made, with a reference; or NULL. */
static struct ump_buf *ump_import_find(struct dma_buf *dmabuf)
{
	struct ump_buf *buf;

	list_for_each_entry(buf, &ump_pool.imports, import_link)
		if (buf->dmabuf == dmabuf && kref_get_unless_zero(&buf->ref))
			return buf;
	return NULL;
}

/*
 * Import a dma-buf for the CPU engine, which copies through the exporter's
 * vmap. No attachment: we never hand the memory to a device, and an
 * attachment to a non-dynamic exporter maps the whole buffer at attach time
 * (a scatterlist and a DMA mapping, bounce slots under swiotlb, segments
 * that must fit our device) for nothing. One dma-buf is imported once: a
 * second IMPORT of it, from any file, is another handle to the same buffer,
 * so repeated imports cost a handle each and its bytes are counted once.
 * A dma-buf whose file was opened without write stays read-only here.
 */
int ump_buf_import(int fd, struct ump_buf **out)
{
	struct ump_buf *buf, *found;
	struct dma_buf *dmabuf;
	int ret;

	dmabuf = dma_buf_get(fd);
	if (IS_ERR(dmabuf))
		return PTR_ERR(dmabuf);
	mutex_lock(&ump_pool.import_lock);
	found = ump_import_find(dmabuf);
	mutex_unlock(&ump_pool.import_lock);
	if (found)
		goto found;
	/*
	 * The exporter's vmap may sleep for long (or never return, from a
	 * hostile exporter): not under the pool-wide lock. Two imports of one
	 * dma-buf may then race; the second to list its buffer drops it.
	 */
	ret = -ENOMEM;
	buf = ump_buf_new(UMP_BUF_IMPORT, UMP_REGION_IMPORTED, NUMA_NO_NODE);
	if (!buf)
		goto err_put;
	buf->dmabuf = dmabuf;
	buf->size = dmabuf->size;
	buf->readonly = !(dmabuf->file->f_mode & FMODE_WRITE);
	ret = ump_dma_buf_vmap(dmabuf, &buf->map);
	if (ret)
		goto err_free;
	if (buf->map.is_iomem) {
		/* Our copy engine uses memcpy; I/O memory needs memcpy_toio. */
		ret = -EOPNOTSUPP;
		goto err_vunmap;
	}
	buf->vaddr = buf->map.vaddr;
	mutex_lock(&ump_pool.import_lock);
	found = ump_import_find(dmabuf);
	if (!found)
		list_add(&buf->import_link, &ump_pool.imports);
	mutex_unlock(&ump_pool.import_lock);
	if (found) {
		ump_dma_buf_vunmap(dmabuf, &buf->map);
		kfree(buf);
		goto found;
	}
	atomic64_add(buf->size, &ump_pool.import_bytes);
	atomic_inc(&ump_pool.import_bufs);
	atomic_inc(&ump_pool.live_bufs);
	*out = buf;
	return 0;

err_vunmap:
	ump_dma_buf_vunmap(dmabuf, &buf->map);
err_free:
	kfree(buf);
err_put:
	dma_buf_put(dmabuf);
	return ret;

found:
	dma_buf_put(dmabuf);
	*out = found;
	return 0;
}

/* ---- export ---------------------------------------------------------- */

/*
 * An importer's attachment, and its mapping while it has one: host pages
 * mapped for a device may be bounced (swiotlb) or sit behind non-coherent
 * caches, so CPU access through the exporter is bracketed by syncs of every
 * mapping, as system_heap does.
 */
struct ump_attachment {
	struct device *dev;
	struct sg_table *sgt; /* NULL while not mapped */
	struct list_head link; /* ump_buf.attachments */
};

static int ump_dmabuf_attach(struct dma_buf *dmabuf,
			     struct dma_buf_attachment *attach)
{
	struct ump_buf *buf = dmabuf->priv;
	struct ump_attachment *a;

	/*
	 * P2P memory is useless to an importer that cannot reach a BAR, or
	 * cannot reach this device's: ask the PCI topology, as a DMA would.
	 */
	if (buf->kind == UMP_BUF_P2P &&
	    (!attach->peer2peer ||
	     pci_p2pdma_distance(buf->dev->pdev, attach->dev, true) < 0))
		return -EOPNOTSUPP;
	a = kzalloc(sizeof(*a), GFP_KERNEL);
	if (!a)
		return -ENOMEM;
	a->dev = attach->dev;
	attach->priv = a;
	mutex_lock(&buf->attach_lock);
	list_add(&a->link, &buf->attachments);
	mutex_unlock(&buf->attach_lock);
	return 0;
}

static void ump_dmabuf_detach(struct dma_buf *dmabuf,
			      struct dma_buf_attachment *attach)
{
	struct ump_buf *buf = dmabuf->priv;
	struct ump_attachment *a = attach->priv;

	mutex_lock(&buf->attach_lock);
	list_del(&a->link);
	mutex_unlock(&buf->attach_lock);
	kfree(a);
}

/*
 * Before the CPU touches buf (begin) and after (end): every importer's
 * mapping synced. P2P memory is a BAR, never bounced: nothing to sync.
 */
void ump_buf_sync(struct ump_buf *buf, enum dma_data_direction dir, bool end)
{
	struct ump_attachment *a;

	if (buf->kind != UMP_BUF_HOST || list_empty_careful(&buf->attachments))
		return;
	mutex_lock(&buf->attach_lock);
	list_for_each_entry(a, &buf->attachments, link) {
		if (!a->sgt)
			continue;
		if (end)
			dma_sync_sgtable_for_device(a->dev, a->sgt, dir);
		else
			dma_sync_sgtable_for_cpu(a->dev, a->sgt, dir);
	}
	mutex_unlock(&buf->attach_lock);
}

static int ump_dmabuf_begin_cpu(struct dma_buf *dmabuf,
				enum dma_data_direction dir)
{
	ump_buf_sync(dmabuf->priv, dir, false);
	return 0;
}

static int ump_dmabuf_end_cpu(struct dma_buf *dmabuf,
			      enum dma_data_direction dir)
{
	ump_buf_sync(dmabuf->priv, dir, true);
	return 0;
}

/*
 * P2P memory is one contiguous run in the BAR: as segments no longer than
 * the importer takes (an sg entry's length is 32 bits, so a 4 GiB buffer
 * would otherwise wrap).
 */
static int ump_p2p_sgt(struct sg_table *sgt, const struct ump_buf *buf,
		       unsigned int max_seg)
{
	struct scatterlist *sg;
	u64 off = 0;
	unsigned int n;
	int ret;

	max_seg = min_t(unsigned int, rounddown(max_seg, PAGE_SIZE), SZ_1G);
	if (!max_seg)
		max_seg = PAGE_SIZE;
	n = DIV_ROUND_UP_ULL(buf->size, max_seg);
	ret = sg_alloc_table(sgt, n, GFP_KERNEL);
	if (ret)
		return ret;
	for_each_sgtable_sg(sgt, sg, n) {
		unsigned int len = min_t(u64, buf->size - off, max_seg);

		sg_set_page(sg, virt_to_page(buf->vaddr + off), len, 0);
		off += len;
	}
	return 0;
}

static struct sg_table *ump_dmabuf_map(struct dma_buf_attachment *attach,
				       enum dma_data_direction dir)
{
	struct ump_buf *buf = attach->dmabuf->priv;
	struct sg_table *sgt;
	int ret;

	sgt = kzalloc(sizeof(*sgt), GFP_KERNEL);
	if (!sgt)
		return ERR_PTR(-ENOMEM);
	/* Segments merge only as far as the importer's device takes them. */
	if (buf->kind == UMP_BUF_HOST)
		ret = sg_alloc_table_from_pages_segment(
			sgt, buf->pages, buf->nr_pages, 0, buf->size,
			dma_get_max_seg_size(attach->dev), GFP_KERNEL);
	else
		ret = ump_p2p_sgt(sgt, buf, dma_get_max_seg_size(attach->dev));
	if (ret)
		goto err_free;
	ret = dma_map_sgtable(attach->dev, sgt, dir, 0);
	if (ret)
		goto err_table;
	mutex_lock(&buf->attach_lock);
	((struct ump_attachment *)attach->priv)->sgt = sgt;
	mutex_unlock(&buf->attach_lock);
	return sgt;

err_table:
	sg_free_table(sgt);
err_free:
	kfree(sgt);
	return ERR_PTR(ret);
}

static void ump_dmabuf_unmap(struct dma_buf_attachment *attach,
			     struct sg_table *sgt, enum dma_data_direction dir)
{
	struct ump_buf *buf = attach->dmabuf->priv;

	mutex_lock(&buf->attach_lock);
	((struct ump_attachment *)attach->priv)->sgt = NULL;
	mutex_unlock(&buf->attach_lock);
	dma_unmap_sgtable(attach->dev, sgt, dir, 0);
	sg_free_table(sgt);
	kfree(sgt);
}

static int ump_dmabuf_mmap(struct dma_buf *dmabuf, struct vm_area_struct *vma)
{
	struct ump_buf *buf = dmabuf->priv;
	unsigned long len = vma->vm_end - vma->vm_start;

	if (buf->kind == UMP_BUF_HOST)
		return vm_map_pages(vma, buf->pages, buf->nr_pages);
	if (vma->vm_pgoff > buf->size >> PAGE_SHIFT ||
	    len > buf->size - (vma->vm_pgoff << PAGE_SHIFT))
		return -EINVAL;
	return remap_pfn_range(vma, vma->vm_start,
			       page_to_pfn(virt_to_page(buf->vaddr)) +
				       vma->vm_pgoff,
			       len, vma->vm_page_prot);
}

static int ump_dmabuf_vmap(struct dma_buf *dmabuf, struct iosys_map *map)
{
	struct ump_buf *buf = dmabuf->priv;

	iosys_map_set_vaddr(map, buf->vaddr);
	return 0;
}

static void ump_dmabuf_release(struct dma_buf *dmabuf)
{
	ump_buf_put(dmabuf->priv);
}

static const struct dma_buf_ops ump_dmabuf_ops = {
	.attach = ump_dmabuf_attach,
	.detach = ump_dmabuf_detach,
	.map_dma_buf = ump_dmabuf_map,
	.unmap_dma_buf = ump_dmabuf_unmap,
	.mmap = ump_dmabuf_mmap,
	.vmap = ump_dmabuf_vmap,
	.begin_cpu_access = ump_dmabuf_begin_cpu,
	.end_cpu_access = ump_dmabuf_end_cpu,
	.release = ump_dmabuf_release,
};

/* buf as a dma-buf (a new reference), for an fd the caller installs. */
struct dma_buf *ump_buf_dmabuf(struct ump_buf *buf)
{
	DEFINE_DMA_BUF_EXPORT_INFO(info);
	struct dma_buf *dmabuf;

	if (buf->kind == UMP_BUF_IMPORT) {
		/* Hand back the exporter's own dma-buf rather than wrap it. */
		get_dma_buf(buf->dmabuf);
		return buf->dmabuf;
	}
	info.ops = &ump_dmabuf_ops;
	info.size = buf->size;
	info.flags = O_RDWR;
	info.priv = ump_buf_get(buf);
	dmabuf = dma_buf_export(&info);
	if (IS_ERR(dmabuf))
		ump_buf_put(buf);
	return dmabuf;
}
