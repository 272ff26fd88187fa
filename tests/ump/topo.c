// SPDX-License-Identifier: MIT
/*
 * Topology: the devices named in UMP_TEST_PCI (the harness passes the
 * guest's NVMe controllers) are federated, report their NUMA node and P2P
 * reachability through the ioctl, /sys/class/ump and /proc/ump/status, and
 * agree across the three and with the PCI core. With UMP_TEST_EXPECT_P2PMEM=1 (debug kernel), the
 * NVMe CMB must be a P2P memory region a buffer can be allocated from.
 */
#include <fcntl.h>

#include <sys/mman.h>

#include "ump_test.h"

static void read_file(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		T_FAIL("open %s: %s", path, strerror(errno));
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		T_FAIL("read %s", path);
	buf[n] = '\0';
}

int main(void)
{
	const char *list = getenv("UMP_TEST_PCI");
	const char *want_p2p = getenv("UMP_TEST_EXPECT_P2PMEM");
	char status[8192], path[256], buf[4096], addr[32];
	struct ump_dev_info di;
	unsigned int i, n = 0, with_p2pmem = 0, on_node1 = 0, with_staging = 0;
	const char *want_node1 = getenv("UMP_TEST_EXPECT_NODE1_DEVICE");
	struct ump u;
	uint32_t idx;
	const char *p;

	if (!list || !*list)
		T_SKIPPED("UMP_TEST_PCI not set: no device to federate");
	t_open(&u);
	for (p = list; *p;) {
		size_t l = strcspn(p, ",");

		snprintf(addr, sizeof(addr), "%.*s", (int)l, p);
		T_OK(ump_dev_add(&u, addr, &idx));
		/* Adding twice gives the same index. */
		uint32_t again;
		T_OK(ump_dev_add(&u, addr, &again));
		T_EXPECT(again, idx);
		n++;
		p += l + (p[l] == ',');
	}
	T_EXPECT(ump_dev_add(&u, "0000:ff:1f.7", &idx), -ENODEV);
	T_EXPECT(ump_dev_add(&u, "nonsense", &idx), -EINVAL);
	T_EXPECT(ump_dev_info(&u, 99, &di), -ENOENT);
	T_OK(ump_read_status(status, sizeof(status)) > 0 ? 0 : -1);

	for (i = 0; i < n; i++) {
		char name[32];
		unsigned int j;
		int node;

		T_OK(ump_dev_info(&u, i, &di));
		t_pci_name(&di, name);
		snprintf(path, sizeof(path), "/sys/class/ump/%s/numa_node", name);
		read_file(path, buf, sizeof(buf));
		node = atoi(buf);
		if (node != di.numa_node)
			T_FAIL("%s: sysfs node %d, ioctl %d", name, node, di.numa_node);
		/* And both agree with the PCI core's own view. */
		snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/numa_node", name);
		read_file(path, buf, sizeof(buf));
		if (atoi(buf) != node)
			T_FAIL("%s: PCI core says node %d, ump %d", name, atoi(buf), node);
		if (node == 1)
			on_node1++;
		/* One value per sysfs attribute, each the ioctl's. */
		snprintf(path, sizeof(path), "/sys/class/ump/%s/p2pmem", name);
		read_file(path, buf, sizeof(buf));
		if (strcmp(buf, di.p2pmem ? "1\n" : "0\n"))
			T_FAIL("%s: sysfs p2pmem '%s', ioctl %u", name, buf, di.p2pmem);
		snprintf(path, sizeof(path), "/sys/class/ump/%s/p2pmem_used", name);
		read_file(path, buf, sizeof(buf));
		if (strtoull(buf, NULL, 10) != di.p2pmem_used || !strchr(buf, '\n') ||
		    strchr(buf, ' '))
			T_FAIL("%s: sysfs p2pmem_used '%s', ioctl %llu", name, buf,
			       (unsigned long long)di.p2pmem_used);
		if (di.p2p_class[i] != UMP_P2P_SELF || di.p2p_distance[i] != 0)
			T_FAIL("%s: self class %u", name, di.p2p_class[i]);
		for (j = 0; j < di.nr_devices; j++)
			if (di.p2p_class[j] > UMP_P2P_NO_KERNEL)
				T_FAIL("class %u", di.p2p_class[j]);
		if (!strstr(status, name))
			T_FAIL("%s missing from /proc/ump/status", name);
		printf("device %u %s node %d ats %u p2pmem %u:", i, name, di.numa_node, di.ats,
		       di.p2pmem);
		for (j = 0; j < di.nr_devices; j++)
			printf(" %d/%u", di.p2p_distance[j], di.p2p_class[j]);
		printf("\n");
		if (di.p2pmem) {
			struct ump_copy_desc d;
			uint32_t hp, hh;
			unsigned char *m, *hm;

			with_p2pmem++;
			T_OK(ump_alloc(&u, UMP_REGION_P2P(i), 1 << 16, &hp));
			T_OK(ump_alloc(&u, UMP_REGION_HOST(0), 1 << 16, &hh));
			T_OK(ump_mmap(&u, hh, 1 << 16, (void **)&hm));
			T_OK(ump_mmap(&u, hp, 1 << 16, (void **)&m));
			memset(hm, 0x5a, 1 << 16);
			d = (struct ump_copy_desc){hh, hp, 0, 0, 1 << 16};
			T_OK(ump_copy_sync(&u, &d, 1));
			if (m[0] != 0x5a || m[(1 << 16) - 1] != 0x5a)
				T_FAIL("P2P memory does not hold the copy");
			munmap(m, 1 << 16);
			munmap(hm, 1 << 16);
			T_OK(ump_free(&u, hp));
			T_OK(ump_free(&u, hh));
		}
	}
	/*
	 * Copies between two devices' P2P memory: direct where the fabric
	 * connects them, staged through host memory (and counted) where not.
	 */
	for (i = 0; i < n; i++) {
		struct ump_dev_info dj;
		unsigned int j;

		T_OK(ump_dev_info(&u, i, &di));
		for (j = 0; j < n && di.p2pmem; j++) {
			struct ump_copy_desc d;
			long long s0, s1;
			uint32_t ha, hb;
			unsigned char *ma, *mb;
			int staged;

			T_OK(ump_dev_info(&u, j, &dj));
			if (j == i || !dj.p2pmem)
				continue;
			staged = di.p2p_class[j] == UMP_P2P_NOT_SUPPORTED ||
				 di.p2p_class[j] == UMP_P2P_NO_KERNEL;
			T_OK(ump_alloc(&u, UMP_REGION_P2P(i), 1 << 16, &ha));
			T_OK(ump_alloc(&u, UMP_REGION_P2P(j), 1 << 16, &hb));
			T_OK(ump_mmap(&u, ha, 1 << 16, (void **)&ma));
			T_OK(ump_mmap(&u, hb, 1 << 16, (void **)&mb));
			t_fill(ma, 1 << 16, 0, 1 << 16, 1, i * 16 + j);
			s0 = t_stat("engine cpu", "staged");
			d = (struct ump_copy_desc){ha, hb, 0, 0, 1 << 16};
			T_OK(ump_copy_sync(&u, &d, 1));
			s1 = t_stat("engine cpu", "staged");
			if (memcmp(ma, mb, 1 << 16))
				T_FAIL("p2p%u -> p2p%u copy wrong", i, j);
			if (s1 - s0 != (staged ? 1 << 16 : 0))
				T_FAIL("p2p%u -> p2p%u (class %u): %lld bytes staged", i, j,
				       di.p2p_class[j], s1 - s0);
			printf("p2p%u -> p2p%u: %s\n", i, j,
			       staged ? "staged through host memory" : "direct");
			with_staging += staged;
			munmap(ma, 1 << 16);
			munmap(mb, 1 << 16);
			T_OK(ump_free(&u, ha));
			T_OK(ump_free(&u, hb));
		}
	}
	ump_close(&u);
	if (want_p2p && atoi(want_p2p) && !with_staging)
		T_FAIL("no device pair that needs staging was exercised");
	if (want_p2p && atoi(want_p2p) && !with_p2pmem)
		T_FAIL("no federated device publishes P2P memory");
	if (want_node1 && atoi(want_node1) && !on_node1)
		T_FAIL("no federated device reports NUMA node 1");
	printf("topo: %u device(s), %u with P2P memory\n", n, with_p2pmem);
	return 0;
}
