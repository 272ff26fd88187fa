// SPDX-License-Identifier: GPL-2.0
/*
 * The pool's figures, gathered in one place for both of their readers:
 * UMP_IOC_STATS, which programs use, and /proc/ump/status, the view an
 * operator in a hardware lab looks at first (one "key: value" or "kind name
 * key value ..." line per fact; not an interface, and readable by root only,
 * since it shows every user's use of the pool).
 */
#include <linux/capability.h>
#include <linux/pci-p2pdma.h>
#include <linux/proc_fs.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/user_namespace.h>

#include "ump.h"

static const char *const ump_engine_names[UMP_NR_ENGINES] = {
	[UMP_ENG_CPU] = "cpu",
	[UMP_ENG_DMA] = "dma",
};

/*
 * Every region (host nodes, imported, each device's P2P memory) in order,
 * up to max of them into r; returns how many there are.
 */
static u32 ump_stats_regions(struct ump_stats_region *r, u32 max)
{
	u32 n = 0, i;
	int nid;

	for_each_node_state(nid, N_MEMORY) {
		if (n < max)
			r[n] = (struct ump_stats_region){
				.region = UMP_REGION_HOST(nid),
				.buffers =
					atomic_read(&ump_pool.node_bufs[nid]),
				.capacity = ump_pool.node_cap[nid],
				.used = atomic64_read(&ump_pool.node_used[nid]),
			};
		n++;
	}
	if (n < max)
		r[n] = (struct ump_stats_region){
			.region = UMP_REGION_IMPORTED,
			.buffers = atomic_read(&ump_pool.import_bufs),
			.used = atomic64_read(&ump_pool.import_bytes),
		};
	n++;
	mutex_lock(&ump_pool.dev_lock);
	for (i = 0; i < ump_pool.nr_devs; i++, n++) {
		struct ump_dev *d = ump_pool.devs[i];
		u64 cap = READ_ONCE(d->p2p_cap); /* sysfs may change it */

		if (n < max)
			r[n] = (struct ump_stats_region){
				.region = UMP_REGION_P2P(i),
				.buffers = atomic_read(&d->p2p_bufs),
				.capacity = cap == U64_MAX ? 0 : cap,
				.used = atomic64_read(&d->p2p_used),
			};
	}
	mutex_unlock(&ump_pool.dev_lock);
	return n;
}

/*
 * No more regions than this can exist: nodes with memory never come and go
 * under a loaded module here, devices only join.
 */
static u32 ump_stats_max_regions(void)
{
	return num_node_state(N_MEMORY) + 1 + UMP_MAX_DEVICES;
}

static void ump_stats_engine(struct ump_stats_engine *e,
			     const struct ump_engine_stats *st)
{
	e->chains = atomic64_read(&st->chains);
	e->bytes = atomic64_read(&st->bytes);
	e->errors = atomic64_read(&st->errors);
	e->staged = atomic64_read(&st->staged);
}

/* Where in r[n] (as ump_stats_regions() ordered it) buf's region is. */
static struct ump_stats_region *ump_stats_region_of(struct ump_stats_region *r,
						    u32 n,
						    const struct ump_buf *buf)
{
	u32 i;

	for (i = 0; i < n; i++)
		if (r[i].region == buf->region)
			return &r[i];
	return NULL;
}

/*
 * The calling file's figures in place of the pool's: its buffers and the
 * bytes they hold per region, its chains, its engines. The xarray's lock
 * keeps each buffer alive while it is read (FREE erases under it).
 */
static void ump_stats_file(struct ump_ctx *ctx, struct ump_stats *s,
			   struct ump_stats_region *r, u32 n)
{
	struct ump_stats_region *at;
	struct ump_buf *buf;
	unsigned long id;
	unsigned int i;

	for (i = 0; i < n; i++)
		r[i].used = r[i].buffers = 0;
	s->buffers = 0;
	xa_lock(&ctx->bufs);
	xa_for_each(&ctx->bufs, id, buf) {
		s->buffers++;
		at = ump_stats_region_of(r, n, buf);
		if (at) {
			at->used += buf->size;
			at->buffers++;
		}
	}
	xa_unlock(&ctx->bufs);
	s->contexts = 1;
	s->chains = atomic_read(&ctx->nr_chains);
	for (i = 0; i < UMP_NR_ENGINES; i++)
		ump_stats_engine(&s->engine[i], &ctx->engine[i]);
}

int ump_stats_get(struct ump_ctx *ctx, struct ump_stats *s)
{
	/* Which figures, not a permission: no audit record for a no. */
	bool pool = ns_capable_noaudit(&init_user_ns, CAP_SYS_ADMIN);
	struct ump_stats_region *r = NULL;
	u32 want = s->nr_regions, n;
	unsigned int i;
	int ret = 0;

	BUILD_BUG_ON(UMP_ENGINE_CPU - 1 != UMP_ENG_CPU ||
		     UMP_ENGINE_DMA - 1 != UMP_ENG_DMA ||
		     ARRAY_SIZE(s->engine) != UMP_NR_ENGINES);
	if (s->flags || s->pad || s->reserved[0] || s->reserved[1] ||
	    s->reserved[2] || s->reserved[3] || (want && !s->regions))
		return -EINVAL;
	want = min(want, ump_stats_max_regions());
	if (want) {
		r = kcalloc(want, sizeof(*r), GFP_KERNEL);
		if (!r)
			return -ENOMEM;
	}
	n = ump_stats_regions(r, want);
	s->flags = pool ? UMP_STATS_POOL : 0;
	s->contexts = atomic_read(&ump_pool.contexts);
	s->buffers = atomic_read(&ump_pool.live_bufs);
	s->chains = atomic_read(&ump_pool.live_chains);
	for (i = 0; i < UMP_NR_ENGINES; i++)
		ump_stats_engine(&s->engine[i], &ump_pool.engine[i]);
	if (!pool)
		ump_stats_file(ctx, s, r, min(n, want));
	if (want && copy_to_user(u64_to_user_ptr(s->regions), r,
				 array_size(min(n, want), sizeof(*r))))
		ret = -EFAULT;
	kfree(r);
	s->nr_regions = n;
	return ret;
}

static int ump_status_show(struct seq_file *m, void *v)
{
	u32 max = ump_stats_max_regions(), n;
	struct ump_stats_region *r;
	struct ump_stats_engine e;
	unsigned int i, j;

	r = kcalloc(max, sizeof(*r), GFP_KERNEL);
	if (!r)
		return -ENOMEM;
	n = min(ump_stats_regions(r, max), max);
	seq_puts(m, "ump_status: active\n");
	seq_printf(m, "abi: %u.%u\n", UMP_ABI_MAJOR, UMP_ABI_MINOR);
	seq_printf(m, "contexts: %d\n", atomic_read(&ump_pool.contexts));
	seq_printf(m, "buffers: %d\n", atomic_read(&ump_pool.live_bufs));
	seq_printf(m, "chains: %d\n", atomic_read(&ump_pool.live_chains));
	for (i = 0; i < n; i++) {
		u32 reg = r[i].region;

		if (reg == UMP_REGION_IMPORTED)
			seq_puts(m, "region imported");
		else if (UMP_REGION_IS_P2P(reg))
			seq_printf(m, "region p2p%u", reg & 0xffff);
		else
			seq_printf(m, "region host%u capacity %llu", reg,
				   r[i].capacity);
		seq_printf(m, " used %llu buffers %u\n", r[i].used,
			   r[i].buffers);
	}
	kfree(r);
	mutex_lock(&ump_pool.dev_lock);
	for (i = 0; i < ump_pool.nr_devs; i++) {
		struct ump_dev *d = ump_pool.devs[i];

		seq_printf(m, "device %u %s numa_node %d ats %u p2pmem %d p2p",
			   i, pci_name(d->pdev), dev_to_node(&d->pdev->dev),
			   ump_dev_ats(d), pci_has_p2pmem(d->pdev));
		for (j = 0; j < ump_pool.nr_devs; j++)
			seq_printf(
				m, " %d:%s", ump_pool.p2p_dist[i][j],
				ump_p2p_class_name(ump_pool.p2p_class[i][j]));
		seq_putc(m, '\n');
	}
	mutex_unlock(&ump_pool.dev_lock);
	for (i = 0; i < UMP_NR_ENGINES; i++) {
		ump_stats_engine(&e, &ump_pool.engine[i]);
		seq_printf(
			m,
			"engine %s chains %llu bytes %llu errors %llu staged %llu%s\n",
			ump_engine_names[i], e.chains, e.bytes, e.errors,
			e.staged,
			i == UMP_ENG_DMA && !ump_pool.dma ?
				" (no memcpy channel)" :
				"");
	}
	return 0;
}

int ump_proc_init(void)
{
	ump_pool.proc_dir = proc_mkdir("ump", NULL);
	if (!ump_pool.proc_dir)
		return -ENOMEM;
	if (!proc_create_single("status", 0400, ump_pool.proc_dir,
				ump_status_show)) {
		proc_remove(ump_pool.proc_dir);
		return -ENOMEM;
	}
	return 0;
}

void ump_proc_exit(void)
{
	proc_remove(ump_pool.proc_dir);
}
