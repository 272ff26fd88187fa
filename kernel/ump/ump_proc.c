// SPDX-License-Identifier: GPL-2.0
/*
 * /proc/ump/status: what an operator in a hardware lab looks at first. One
 * "key: value" or "kind name key value ..." line per fact, stable enough to
 * grep and for the tests to parse.
 */
#include <linux/pci-p2pdma.h>
#include <linux/proc_fs.h>
#include <linux/seq_file.h>

#include "ump.h"

static int ump_status_show(struct seq_file *m, void *v)
{
	static const char *const engines[UMP_NR_ENGINES] = {
		[UMP_ENG_CPU] = "cpu",
		[UMP_ENG_DMA] = "dma",
	};
	unsigned int i, j;
	int nid;

	seq_puts(m, "ump_status: active\n");
	seq_printf(m, "abi: %u.%u\n", UMP_ABI_MAJOR, UMP_ABI_MINOR);
	seq_printf(m, "contexts: %d\n", atomic_read(&ump_pool.contexts));
	seq_printf(m, "buffers: %d\n", atomic_read(&ump_pool.live_bufs));
	seq_printf(m, "chains: %d\n", atomic_read(&ump_pool.live_chains));
	for_each_node_state(nid, N_MEMORY)
		seq_printf(m,
			   "region host%d capacity %llu used %lld buffers %d\n",
			   nid, ump_pool.node_cap[nid],
			   (long long)atomic64_read(&ump_pool.node_used[nid]),
			   atomic_read(&ump_pool.node_bufs[nid]));
	seq_printf(m, "region imported used %lld buffers %d\n",
		   (long long)atomic64_read(&ump_pool.import_bytes),
		   atomic_read(&ump_pool.import_bufs));

	mutex_lock(&ump_pool.dev_lock);
	for (i = 0; i < ump_pool.nr_devs; i++) {
		struct ump_dev *d = ump_pool.devs[i];

		seq_printf(
			m,
			"region p2p%u device %s p2pmem %d used %lld buffers %d\n",
			i, pci_name(d->pdev), pci_has_p2pmem(d->pdev),
			(long long)atomic64_read(&d->p2p_used),
			atomic_read(&d->p2p_bufs));
	}
	for (i = 0; i < ump_pool.nr_devs; i++) {
		struct ump_dev *d = ump_pool.devs[i];

		seq_printf(m, "device %u %s numa_node %d ats %u p2p", i,
			   pci_name(d->pdev), dev_to_node(&d->pdev->dev),
			   ump_dev_ats(d));
		for (j = 0; j < ump_pool.nr_devs; j++)
			seq_printf(
				m, " %d:%s", ump_pool.p2p_dist[i][j],
				ump_p2p_class_name(ump_pool.p2p_class[i][j]));
		seq_putc(m, '\n');
	}
	mutex_unlock(&ump_pool.dev_lock);

	for (i = 0; i < ARRAY_SIZE(engines); i++)
		seq_printf(
			m,
			"engine %s chains %lld bytes %lld errors %lld staged %lld%s\n",
			engines[i],
			(long long)atomic64_read(&ump_pool.engine[i].chains),
			(long long)atomic64_read(&ump_pool.engine[i].bytes),
			(long long)atomic64_read(&ump_pool.engine[i].errors),
			(long long)atomic64_read(&ump_pool.engine[i].staged),
			i == UMP_ENG_DMA && !ump_pool.dma ?
				" (no memcpy channel)" :
				"");
	return 0;
}

int ump_proc_init(void)
{
	ump_pool.proc_dir = proc_mkdir("ump", NULL);
	if (!ump_pool.proc_dir)
		return -ENOMEM;
	if (!proc_create_single("status", 0444, ump_pool.proc_dir,
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
