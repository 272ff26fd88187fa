// SPDX-License-Identifier: GPL-2.0
/*
 * Fault injection into the copy workers, with CONFIG_FAULT_INJECTION_DEBUG_FS:
 * /sys/kernel/debug/ump/fail_copy/ is a standard fault_attr
 * (Documentation/fault-injection/fault-injection.rst: probability, interval,
 * times, verbose). Where it fires, a worker takes the path the allocator,
 * the DMA API, the channel or an exporter would send it down: a window's
 * scatterlist or mapping not had, a channel out of descriptors, a staging
 * buffer not allocated, an exporter refusing CPU access. failslab reaches
 * only allocations, and its task filter needs the worker's pid; this
 * reaches the DMA API, the channel and the exporter too, in any worker.
 */
#include <linux/debugfs.h>
#include <linux/fault-inject.h>

#include "ump.h"

#ifdef CONFIG_FAULT_INJECTION_DEBUG_FS
static DECLARE_FAULT_ATTR(ump_fail_copy);
static struct dentry *ump_debugfs;

bool ump_fault_copy(void)
{
	return should_fail(&ump_fail_copy, 1);
}

void ump_fault_init(void)
{
	struct dentry *dir;

	/* Debugging aid only: the module works the same without it. */
	ump_debugfs = debugfs_create_dir("ump", NULL);
	if (IS_ERR(ump_debugfs))
		return;
	dir = fault_create_debugfs_attr("fail_copy", ump_debugfs,
					&ump_fail_copy);
	if (IS_ERR(dir))
		pr_warn("ump: no fail_copy fault injection (%ld)\n",
			PTR_ERR(dir));
}

void ump_fault_exit(void)
{
	debugfs_remove_recursive(ump_debugfs);
}
#endif
