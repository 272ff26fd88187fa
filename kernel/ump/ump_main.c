// SPDX-License-Identifier: GPL-2.0
/*
 * ump: the HeteroOpt unified memory pool.
 *
 * Skeleton: registers the /dev/ump misc device with no operations beyond
 * open/release, so that packaging (Kbuild, DKMS, udev) can be exercised.
 * Buffers, dma-buf sharing, copy chains and /proc/ump/status arrive with
 * the pool itself.
 */
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/module.h>

static int ump_open(struct inode *inode, struct file *file)
{
	return nonseekable_open(inode, file);
}

static int ump_release(struct inode *inode, struct file *file)
{
	return 0;
}

static const struct file_operations ump_fops = {
	.owner = THIS_MODULE,
	.open = ump_open,
	.release = ump_release,
	.llseek = no_llseek,
};

static struct miscdevice ump_misc = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "ump",
	.fops = &ump_fops,
	.mode = 0660,
};

static int __init ump_init(void)
{
	return misc_register(&ump_misc);
}

static void __exit ump_exit(void)
{
	misc_deregister(&ump_misc);
}

module_init(ump_init);
module_exit(ump_exit);
MODULE_DESCRIPTION("HeteroOpt unified memory pool");
MODULE_LICENSE("GPL");
