/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ump internals: the pool (one per module), contexts (one per open file),
 * buffers and copy chains. See include/uapi/ump.h for the ABI.
 */
#ifndef _UMP_H
#define _UMP_H

#include <linux/atomic.h>
#include <linux/completion.h>
#include <linux/dma-buf.h>
#include <linux/iosys-map.h>
#include <linux/kref.h>
#include <linux/miscdevice.h>
#include <linux/mutex.h>
#include <linux/nodemask.h>
#include <linux/pci.h>
#include <linux/refcount.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>

#include <uapi/ump.h>

#define UMP_MAX_CHAINS_PER_CTX 65536

struct ump_engine_stats {
	atomic64_t chains;
	atomic64_t bytes;
	atomic64_t errors;
	atomic64_t staged; /* bytes bounced through host memory */
};

/* A PCI device federated into the pool. */
struct ump_dev {
	struct pci_dev *pdev;
	unsigned int index;
	struct device *sysdev; /* /sys/class/ump/<pci address> */
	atomic64_t p2p_used;
	atomic_t p2p_bufs;
};

struct ump_pool {
	struct miscdevice misc;
	struct workqueue_struct *copy_wq; /* unbound: one worker pool per node */
	struct dma_chan *dma; /* NULL when no memcpy channel */
	struct proc_dir_entry *proc_dir;

	struct mutex dev_lock; /* devs[], nr_devs */
	struct ump_dev *devs[UMP_MAX_DEVICES];
	unsigned int nr_devs;
	/*
	 * Distance and UMP_P2P_* class of every federated pair, judged once as
	 * a device joins (the PCI topology does not change under us), so the
	 * copy path, the ioctl, sysfs and /proc only read them.
	 */
	s32 p2p_dist[UMP_MAX_DEVICES][UMP_MAX_DEVICES];
	u8 p2p_class[UMP_MAX_DEVICES][UMP_MAX_DEVICES];

	u64 node_cap[MAX_NUMNODES];
	atomic64_t node_used[MAX_NUMNODES];
	atomic_t node_bufs[MAX_NUMNODES];
	atomic64_t import_bytes;
	atomic_t import_bufs;
	atomic_t contexts;
	atomic_t live_bufs; /* every kind; must reach 0 */
	atomic_t live_chains;
	struct ump_engine_stats engine[2]; /* [0] cpu, [1] dma */
};

extern struct ump_pool ump_pool;

#define UMP_BUF_HOST 0
#define UMP_BUF_P2P 1
#define UMP_BUF_IMPORT 2

struct ump_buf {
	struct kref ref;
	u32 kind;
	u32 region;
	int node; /* host NUMA node, NUMA_NO_NODE otherwise */
	size_t size;
	void *vaddr; /* kernel mapping the CPU engine copies through */
	/* host */
	struct page **pages;
	unsigned long nr_pages;
	dma_addr_t *dma; /* per page, for the DMA channel; or NULL */
	/* p2p */
	struct ump_dev *dev;
	/* imported */
	struct dma_buf *dmabuf;
	struct dma_buf_attachment *attach;
	struct iosys_map map;
};

struct ump_ctx {
	struct kref ref;
	struct xarray bufs; /* handle -> struct ump_buf * */
	struct xarray chains; /* id -> struct ump_chain *, until reaped */
	atomic_t nr_chains; /* submitted and not yet freed */
	bool closing; /* file released: cancel what has not run */
	u32 next_chain;
};

struct ump_chain {
	struct work_struct work;
	refcount_t users; /* the ctx's xarray, the worker, waiters */
	struct ump_ctx *ctx;
	u32 id; /* 0 for io_uring chains */
	u32 count;
	u64 user_data;
	struct ump_copy_desc *descs;
	struct ump_buf **bufs; /* [2 * i] source, [2 * i + 1] destination */
	struct completion done;
	struct completion dma_done; /* the DMA engine's last descriptor */
	int status;
	u32 failed_index;
	u32 engine;
	u64 bytes;
	void *uring_cmd; /* struct io_uring_cmd *, or NULL */
	struct task_struct *task; /* submitter: its exit cancels the chain */
	void *bounce; /* staging buffer, allocated on first use */
};

/* ump_buf.c */
int ump_buf_alloc_host(int node, u64 size, struct ump_buf **out);
int ump_buf_alloc_p2p(struct ump_dev *dev, u64 size, struct ump_buf **out);
int ump_buf_import(int fd, struct ump_buf **out);
int ump_buf_export(struct ump_buf *buf, u32 flags);
void ump_buf_put(struct ump_buf *buf);
static inline struct ump_buf *ump_buf_get(struct ump_buf *buf)
{
	kref_get(&buf->ref);
	return buf;
}

/* ump_chain.c */
int ump_chain_create(struct ump_ctx *ctx, u64 descs, u32 count,
		     struct ump_chain **out);
void ump_chain_start(struct ump_chain *c);
void ump_chain_put(struct ump_chain *c);
int ump_ioctl_submit(struct ump_ctx *ctx, struct ump_submit *arg);
int ump_ioctl_wait(struct ump_ctx *ctx, struct ump_wait *arg);
int ump_uring_cmd(struct io_uring_cmd *ioucmd, unsigned int issue_flags);
int ump_engine_init(void);
void ump_engine_exit(void);

/* ump_topo.c */
int ump_topo_init(const char *devices);
void ump_topo_exit(void);
int ump_dev_add(u32 domain, u32 bdf, u32 *index);
struct ump_dev *ump_dev_get(u32 index);
const char *ump_p2p_class_name(u32 cls);
bool ump_dev_ats(const struct ump_dev *dev);
int ump_dev_info(struct ump_dev_info *info);

/* ump_proc.c */
int ump_proc_init(void);
void ump_proc_exit(void);

/* ump_main.c */
void ump_ctx_put(struct ump_ctx *ctx);

#endif /* _UMP_H */
