/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ump internals: the pool (one per module), contexts (one per open file),
 * buffers and copy chains. See include/uapi/linux/ump.h for the ABI.
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

#include <linux/ump.h>

/* The engines a chain runs on, indexing ump_pool.engine[]. */
enum ump_engine_id {
	UMP_ENG_CPU,
	UMP_ENG_DMA,
	UMP_NR_ENGINES,
};

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
	u64 p2p_cap; /* bytes the pool may take of it, U64_MAX for all */
};

struct ump_pool {
	struct miscdevice misc;
	struct dma_chan *dma; /* NULL when no memcpy channel */
	/*
	 * One chain's window of descriptors on the channel at a time, so that
	 * terminating the channel after a timeout or a failed prep drops only
	 * that chain's pieces.
	 */
	struct mutex dma_lock;
	/* Imported dma-bufs, each imported once however many handles name it. */
	struct mutex import_lock;
	struct list_head imports;
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
	struct ump_engine_stats engine[UMP_NR_ENGINES];
	/* The copy workers, one per (submitters' cgroup, node) in use. */
	struct mutex workers_lock;
	struct list_head workers;
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
	bool readonly; /* an import of a dma-buf fd opened without write */
	/* host */
	struct page **pages;
	unsigned long nr_pages;
	/* p2p */
	struct ump_dev *dev;
	/* imported */
	struct dma_buf *dmabuf;
	struct iosys_map map;
	struct list_head import_link; /* ump_pool.imports */
	/* exported: the importers' mappings, synced around CPU access */
	struct mutex attach_lock;
	struct list_head attachments; /* struct ump_attachment */
};

struct ump_ctx {
	struct kref ref;
	struct xarray bufs; /* handle -> struct ump_buf * */
	struct xarray chains; /* id -> struct ump_chain *, until reaped */
	/* What the file holds, against the UMP_MAX_* bounds of the uapi. */
	atomic_t nr_handles;
	atomic_t nr_chains; /* submitted and not yet freed */
	atomic_t nr_descs; /* their descriptors */
	atomic64_t queued_bytes; /* the bytes those descriptors name */
	bool closing; /* file released: cancel what has not run */
	/* Its chains' figures, which UMP_IOC_STATS gives the unprivileged. */
	struct ump_engine_stats engine[UMP_NR_ENGINES];
	u32 next_chain;
	/*
	 * The copy workers (ump_worker.c) its chains have run on, each held
	 * until the file is released.
	 */
	struct mutex workers_lock;
	struct list_head workers; /* struct ump_worker_ref */
};

struct ump_chain {
	struct list_head queue_link; /* on its worker's queue until it runs */
	struct ump_worker *worker; /* its submitter's cgroup's, on its node */
	refcount_t users; /* the ctx's xarray, the queue, waiters */
	struct ump_ctx *ctx;
	u32 id; /* 0 for io_uring chains */
	u32 count;
	u64 user_data;
	struct ump_copy_desc *descs;
	struct ump_buf **bufs; /* [2 * i] source, [2 * i + 1] destination */
	struct completion done; /* completed for all waiters at once */
	struct completion dma_done; /* every piece of a DMA window ended */
	atomic_t dma_pending; /* pieces of the window not yet ended */
	int dma_status; /* -EIO once a piece reported a failed transfer */
	int status;
	u32 failed_index;
	u32 engine;
	u64 bytes;
	u64 asked; /* bytes its descriptors name, charged to ctx */
	bool cancel; /* UMP_IOC_CANCEL */
	void *uring_cmd; /* struct io_uring_cmd *, or NULL */
	/*
	 * the submitting thread (a uring_cmd's own, not the io-wq worker's):
	 * its execve, or its process's exit, cancels
	 */
	struct task_struct *task;
	void *bounce; /* staging buffer, allocated on first use */
};

/* ump_buf.c */
int ump_buf_alloc_host(int node, u64 size, struct ump_buf **out);
int ump_buf_alloc_p2p(struct ump_dev *dev, u64 size, struct ump_buf **out);
int ump_buf_import(int fd, struct ump_buf **out);
struct dma_buf *ump_buf_dmabuf(struct ump_buf *buf);
void ump_buf_sync(struct ump_buf *buf, enum dma_data_direction dir, bool end);
void ump_buf_put(struct ump_buf *buf);
static inline struct ump_buf *ump_buf_get(struct ump_buf *buf)
{
	kref_get(&buf->ref);
	return buf;
}

/* ump_chain.c */
int ump_chain_create(struct ump_ctx *ctx, u64 descs, u32 count,
		     struct task_struct *submitter, struct ump_chain **out);
int ump_chain_bind(struct ump_chain *c, bool may_block);
void ump_chain_start(struct ump_chain *c);
void ump_chain_put(struct ump_chain *c);
void ump_chain_run(struct ump_chain *c);
void ump_chain_finish(struct ump_chain *c, int status, u32 failed_index);
void ump_chain_cancel(struct ump_chain *c);
bool ump_chain_checkpoint(struct ump_chain *c);
int ump_chain_wait(struct ump_chain *c, u64 timeout_ns);
bool ump_chain_cancelled(const struct ump_chain *c);
struct ump_chain *ump_ctx_chain_get(struct ump_ctx *ctx, u64 id);
int ump_uring_cmd(struct io_uring_cmd *ioucmd, unsigned int issue_flags);

/* ump_worker.c */
struct ump_worker;
int ump_worker_bind(struct ump_chain *c, int node, bool may_block);
void ump_worker_queue(struct ump_chain *c);
bool ump_worker_dequeue(struct ump_chain *c);
void ump_worker_reap(struct ump_worker *w);
void ump_ctx_workers_put(struct ump_ctx *ctx);

/* ump_dma.c */
bool ump_dma_capable(const struct ump_chain *c);
int ump_dma_copy_one(struct ump_chain *c, const struct ump_copy_desc *d,
		     const struct ump_buf *src, const struct ump_buf *dst);
int ump_dma_init(void);
void ump_dma_exit(void);

/* ump_topo.c */
int ump_topo_init(const char *devices);
void ump_topo_exit(void);
int ump_topo_add(u32 domain, u32 bdf, u32 *index);
struct ump_dev *ump_dev_get(u32 index);
const char *ump_p2p_class_name(u32 cls);
bool ump_dev_ats(const struct ump_dev *dev);
int ump_topo_info(struct ump_dev_info *info);

/* ump_stats.c */
int ump_stats_get(struct ump_ctx *ctx, struct ump_stats *s);
int ump_proc_init(void);
void ump_proc_exit(void);

/* ump_fault.c: a copy worker's error paths, on request */
#ifdef CONFIG_FAULT_INJECTION_DEBUG_FS
bool ump_fault_copy(void);
void ump_fault_init(void);
void ump_fault_exit(void);
#else
static inline bool ump_fault_copy(void)
{
	return false;
}

static inline void ump_fault_init(void)
{
}

static inline void ump_fault_exit(void)
{
}
#endif

/* ump_main.c: the module's parameters, all of them */
extern bool ump_dma_enable;
extern unsigned int ump_dma_timeout_ms;
extern unsigned long ump_p2p_cap_mb;
void ump_ctx_put(struct ump_ctx *ctx);

#endif /* _UMP_H */
