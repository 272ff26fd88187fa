// SPDX-License-Identifier: GPL-2.0
/*
 * ump topology: the PCI devices federated into the pool, their NUMA nodes,
 * ATS state and peer-to-peer reachability as the kernel's P2PDMA code judges
 * it, published under /sys/class/ump/<pci address>/.
 */
#include <linux/device.h>
#include <linux/module.h>
#include <linux/nospec.h>
#include <linux/pci-p2pdma.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/sysfs.h>

#include "ump.h"

static bool ump_is_upstream_of(struct pci_dev *bridge, struct pci_dev *dev)
{
	for (dev = pci_upstream_bridge(dev); dev;
	     dev = pci_upstream_bridge(dev))
		if (dev == bridge)
			return true;
	return false;
}

/*
 * pci_p2pdma_distance_many() says whether and how far; the class says why,
 * which is what a user staring at a slow copy wants to know.
 */
static void ump_p2p_pair(struct ump_dev *a, struct ump_dev *b, s32 *dist,
			 u32 *cls)
{
	struct device *client = &b->pdev->dev;
	struct pci_dev *up;

	if (a == b) {
		*dist = 0;
		*cls = UMP_P2P_SELF;
		return;
	}
	*dist = pci_p2pdma_distance_many(a->pdev, &client, 1, false);
	if (!IS_ENABLED(CONFIG_PCI_P2PDMA)) {
		*cls = UMP_P2P_NO_KERNEL;
		return;
	}
	if (*dist < 0) {
		*dist = -1;
		*cls = UMP_P2P_NOT_SUPPORTED;
		return;
	}
	*cls = UMP_P2P_HOST_BRIDGE;
	for (up = pci_upstream_bridge(a->pdev); up;
	     up = pci_upstream_bridge(up))
		if (pci_pcie_type(up) != PCI_EXP_TYPE_ROOT_PORT &&
		    ump_is_upstream_of(up, b->pdev))
			*cls = UMP_P2P_SWITCH;
}

static void ump_p2p_judge(struct ump_dev *a, struct ump_dev *b)
{
	s32 dist;
	u32 cls;

	ump_p2p_pair(a, b, &dist, &cls);
	WRITE_ONCE(ump_pool.p2p_dist[a->index][b->index], dist);
	WRITE_ONCE(ump_pool.p2p_class[a->index][b->index], cls);
}

static const char *const ump_p2p_names[] = {
	[UMP_P2P_SELF] = "self",
	[UMP_P2P_SWITCH] = "switch",
	[UMP_P2P_HOST_BRIDGE] = "host-bridge",
	[UMP_P2P_NOT_SUPPORTED] = "not-supported",
	[UMP_P2P_NO_KERNEL] = "no-p2pdma-in-kernel",
};

bool ump_dev_ats(const struct ump_dev *dev)
{
#ifdef CONFIG_PCI_ATS
	return dev->pdev->ats_enabled;
#else
	return false;
#endif
}

static ssize_t numa_node_show(struct device *d, struct device_attribute *attr,
			      char *buf)
{
	struct ump_dev *dev = dev_get_drvdata(d);

	return sysfs_emit(buf, "%d\n", dev_to_node(&dev->pdev->dev));
}
static DEVICE_ATTR_RO(numa_node);

static ssize_t ats_show(struct device *d, struct device_attribute *attr,
			char *buf)
{
	struct ump_dev *dev = dev_get_drvdata(d);

	return sysfs_emit(buf, "%d\n", ump_dev_ats(dev));
}
static DEVICE_ATTR_RO(ats);

/*
 * One value per attribute (Documentation/filesystems/sysfs.rst). The P2P
 * distances to every other device are a table: UMP_IOC_DEV_INFO has it,
 * and /proc/ump/status shows it to people.
 */
static ssize_t p2pmem_show(struct device *d, struct device_attribute *attr,
			   char *buf)
{
	struct ump_dev *dev = dev_get_drvdata(d);

	return sysfs_emit(buf, "%d\n", pci_has_p2pmem(dev->pdev));
}
static DEVICE_ATTR_RO(p2pmem);

static ssize_t p2pmem_used_show(struct device *d, struct device_attribute *attr,
				char *buf)
{
	struct ump_dev *dev = dev_get_drvdata(d);

	return sysfs_emit(buf, "%lld\n",
			  (long long)atomic64_read(&dev->p2p_used));
}
static DEVICE_ATTR_RO(p2pmem_used);

/*
 * P2P memory is not charged to any memory cgroup, so the pool's share of
 * each device's is capped here instead: bytes, or "max" for none.
 */
static ssize_t p2pmem_cap_show(struct device *d, struct device_attribute *attr,
			       char *buf)
{
	struct ump_dev *dev = dev_get_drvdata(d);
	u64 cap = READ_ONCE(dev->p2p_cap);

	if (cap == U64_MAX)
		return sysfs_emit(buf, "max\n");
	return sysfs_emit(buf, "%llu\n", cap);
}

static ssize_t p2pmem_cap_store(struct device *d, struct device_attribute *attr,
				const char *buf, size_t len)
{
	struct ump_dev *dev = dev_get_drvdata(d);
	u64 cap;

	if (sysfs_streq(buf, "max"))
		cap = U64_MAX;
	else if (kstrtou64(buf, 0, &cap))
		return -EINVAL;
	/* Lowering it below what is in use only stops new allocations. */
	WRITE_ONCE(dev->p2p_cap, cap);
	return len;
}
static DEVICE_ATTR_RW(p2pmem_cap);

static struct attribute *ump_dev_attrs[] = {
	&dev_attr_numa_node.attr,  &dev_attr_ats.attr,
	&dev_attr_p2pmem.attr,	   &dev_attr_p2pmem_used.attr,
	&dev_attr_p2pmem_cap.attr, NULL,
};
ATTRIBUTE_GROUPS(ump_dev);

static struct class ump_class = {
	.name = "ump",
	.dev_groups = ump_dev_groups,
};

int ump_topo_add(u32 domain, u32 bdf, u32 *index)
{
	struct pci_dev *pdev;
	struct ump_dev *dev;
	unsigned int i;
	int ret;

	if (domain > 0xffff || bdf > 0xffff)
		return -EINVAL;
	pdev = pci_get_domain_bus_and_slot(domain, bdf >> 8, bdf & 0xff);
	if (!pdev)
		return -ENODEV;

	mutex_lock(&ump_pool.dev_lock);
	for (i = 0; i < ump_pool.nr_devs; i++) {
		if (ump_pool.devs[i]->pdev == pdev) {
			*index = i;
			ret = -EEXIST;
			goto err_unlock;
		}
	}
	ret = -ENOSPC;
	if (ump_pool.nr_devs == UMP_MAX_DEVICES)
		goto err_unlock;
	ret = -ENOMEM;
	dev = kzalloc(sizeof(*dev), GFP_KERNEL);
	if (!dev)
		goto err_unlock;
	dev->p2p_cap = ump_p2p_cap_mb ? (u64)ump_p2p_cap_mb << 20 : U64_MAX;
	dev->pdev = pdev;
	dev->index = ump_pool.nr_devs;
	dev->sysdev = device_create(&ump_class, &pdev->dev, MKDEV(0, 0), dev,
				    "%s", pci_name(pdev));
	if (IS_ERR(dev->sysdev)) {
		ret = PTR_ERR(dev->sysdev);
		goto err_free;
	}
	ump_pool.devs[ump_pool.nr_devs++] = dev;
	for (i = 0; i < ump_pool.nr_devs; i++) {
		ump_p2p_judge(dev, ump_pool.devs[i]);
		ump_p2p_judge(ump_pool.devs[i], dev);
	}
	mutex_unlock(&ump_pool.dev_lock);
	*index = dev->index;
	return 0;

err_free:
	kfree(dev);
err_unlock:
	mutex_unlock(&ump_pool.dev_lock);
	pci_dev_put(pdev);
	return ret;
}

/* Devices are never removed while the module lives, so no reference. */
struct ump_dev *ump_dev_get(u32 index)
{
	struct ump_dev *dev = NULL;

	mutex_lock(&ump_pool.dev_lock);
	if (index < ump_pool.nr_devs)
		dev = ump_pool.devs[array_index_nospec(index, ump_pool.nr_devs)];
	mutex_unlock(&ump_pool.dev_lock);
	return dev;
}

int ump_topo_info(struct ump_dev_info *info)
{
	struct ump_dev *dev = ump_dev_get(info->index);
	unsigned int i;

	if (!dev)
		return -ENOENT;
	info->pci_domain = pci_domain_nr(dev->pdev->bus);
	info->pci_bdf = PCI_DEVID(dev->pdev->bus->number, dev->pdev->devfn);
	info->numa_node = dev_to_node(&dev->pdev->dev);
	info->ats = ump_dev_ats(dev);
	info->p2pmem = pci_has_p2pmem(dev->pdev);
	info->p2pmem_used = atomic64_read(&dev->p2p_used);
	mutex_lock(&ump_pool.dev_lock);
	info->nr_devices = ump_pool.nr_devs;
	for (i = 0; i < UMP_MAX_DEVICES; i++) {
		info->p2p_distance[i] = -1;
		info->p2p_class[i] = UMP_P2P_NOT_SUPPORTED;
		if (i < ump_pool.nr_devs) {
			info->p2p_distance[i] =
				ump_pool.p2p_dist[dev->index][i];
			info->p2p_class[i] = ump_pool.p2p_class[dev->index][i];
		}
	}
	mutex_unlock(&ump_pool.dev_lock);
	return 0;
}

const char *ump_p2p_class_name(u32 cls)
{
	return cls < ARRAY_SIZE(ump_p2p_names) ? ump_p2p_names[cls] : "?";
}

/*
 * Unbinding the driver that provides a device's P2P memory waits, in the
 * kernel's memunmap_pages(), until every page of it is freed: a pool buffer
 * still held (a handle, an exported fd, a mapping, a chain) holds the
 * unbind there, which is what keeps the BAR from vanishing under it. Say so
 * in the log, naming what is held, so that an administrator whose unbind
 * hangs knows which files to close.
 */
static int ump_topo_notify(struct notifier_block *nb, unsigned long action,
			   void *data)
{
	struct pci_dev *pdev = to_pci_dev(data);
	unsigned int i;

	if (action != BUS_NOTIFY_UNBIND_DRIVER)
		return NOTIFY_DONE;
	mutex_lock(&ump_pool.dev_lock);
	for (i = 0; i < ump_pool.nr_devs; i++) {
		struct ump_dev *dev = ump_pool.devs[i];
		int bufs = atomic_read(&dev->p2p_bufs);

		if (dev->pdev == pdev && bufs)
			pci_warn(
				pdev,
				"ump: unbinding waits until the pool's %d P2P buffer(s), %lld bytes, on it are freed\n",
				bufs, (long long)atomic64_read(&dev->p2p_used));
	}
	mutex_unlock(&ump_pool.dev_lock);
	return NOTIFY_DONE;
}

static struct notifier_block ump_topo_nb = {
	.notifier_call = ump_topo_notify,
};

/* "devices=0000:00:04.0,0000:00:05.0" */
int ump_topo_init(const char *devices)
{
	char *list, *cur, *tok;
	unsigned int dom, bus, slot, fn;
	u32 index;
	int ret;

	mutex_init(&ump_pool.dev_lock);
	ret = class_register(&ump_class);
	if (ret)
		return ret;
	ret = bus_register_notifier(&pci_bus_type, &ump_topo_nb);
	if (ret)
		goto err_class;
	if (!devices || !*devices)
		return 0;
	list = kstrdup(devices, GFP_KERNEL);
	if (!list) {
		ret = -ENOMEM;
		goto err_notifier;
	}
	cur = list;
	while ((tok = strsep(&cur, ",")) != NULL) {
		if (!*tok)
			continue;
		if (sscanf(tok, "%x:%x:%x.%x", &dom, &bus, &slot, &fn) != 4 ||
		    bus > 0xff || slot > 0x1f || fn > 7) {
			pr_err("ump: devices=: '%s' is not a PCI address\n",
			       tok);
			ret = -EINVAL;
			break;
		}
		ret = ump_topo_add(dom, bus << 8 | PCI_DEVFN(slot, fn), &index);
		if (ret) {
			pr_err("ump: devices=: %s: error %d\n", tok, ret);
			break;
		}
	}
	kfree(list);
	if (!ret)
		return 0;
	ump_topo_exit();
	return ret;

err_notifier:
	bus_unregister_notifier(&pci_bus_type, &ump_topo_nb);
err_class:
	class_unregister(&ump_class);
	return ret;
}

void ump_topo_exit(void)
{
	unsigned int i;

	bus_unregister_notifier(&pci_bus_type, &ump_topo_nb);
	for (i = 0; i < ump_pool.nr_devs; i++) {
		device_unregister(ump_pool.devs[i]->sysdev);
		pci_dev_put(ump_pool.devs[i]->pdev);
		kfree(ump_pool.devs[i]);
	}
	ump_pool.nr_devs = 0;
	class_unregister(&ump_class);
}
