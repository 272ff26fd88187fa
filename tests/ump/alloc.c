// SPDX-License-Identifier: MIT
/*
 * Allocation on every NUMA node: zeroed, rounded to pages, accounted in
 * /proc/ump/status, capped per node (ENOMEM, then usable again), and owned
 * by the file that made it.
 */
#include <sys/mman.h>

#include "ump_test.h"

static long long node_used_bytes(int node)
{
	char prefix[32];

	snprintf(prefix, sizeof(prefix), "region host%d", node);
	return t_stat(prefix, "used");
}

int main(void)
{
	struct ump u, other;
	int node;

	t_open(&u);
	for (node = 0; node < t_nr_nodes(&u); node++) {
		long long before = node_used_bytes(node);
		struct ump_buf_info info;
		uint32_t h, h2;
		unsigned char *p;
		size_t i;

		T_OK(ump_alloc(&u, UMP_REGION_HOST(node), 5000, &h));
		T_OK(ump_buf_info(&u, h, &info));
		if (info.size != 8192 || info.region != UMP_REGION_HOST(node) ||
		    info.numa_node != node)
			T_FAIL("info size %llu region %u node %d", (unsigned long long)info.size,
			       info.region, info.numa_node);
		if (node_used_bytes(node) != before + 8192)
			T_FAIL("node %d used %lld, want %lld", node, node_used_bytes(node),
			       before + 8192);
		T_OK(ump_mmap(&u, h, 8192, (void **)&p));
		for (i = 0; i < 8192; i++)
			if (p[i])
				T_FAIL("byte %zu not zeroed", i);
		memset(p, 0xab, 8192);

		/* Handles mean nothing to another file. */
		T_OK(ump_open(&other));
		T_EXPECT(ump_free(&other, h), -ENOENT);
		T_EXPECT(ump_buf_info(&other, h, &info), -ENOENT);
		ump_close(&other);

		/* The mapping keeps the memory alive after FREE. */
		T_OK(ump_free(&u, h));
		T_EXPECT(ump_free(&u, h), -ENOENT);
		if (p[8191] != 0xab)
			T_FAIL("mapping lost its memory");
		munmap(p, 8192);
		if (node_used_bytes(node) != before)
			T_FAIL("node %d not returned: %lld vs %lld", node, node_used_bytes(node),
			       before);

		/* Over the cap: ENOMEM, and nothing is charged. */
		T_EXPECT(ump_alloc(&u, UMP_REGION_HOST(node), 1ull << 50, &h2), -ENOMEM);
		if (node_used_bytes(node) != before)
			T_FAIL("failed alloc left a charge");
	}
	{
		uint32_t h;

		T_EXPECT(ump_alloc(&u, UMP_REGION_HOST(0), 0, &h), -EINVAL);
		T_EXPECT(ump_alloc(&u, UMP_REGION_HOST(200), 4096, &h), -EINVAL);
		T_EXPECT(ump_alloc(&u, UMP_REGION_P2P(15), 4096, &h), -ENODEV);
		T_EXPECT(ump_alloc(&u, 0x30000, 4096, &h), -EINVAL);
	}
	ump_close(&u);
	printf("alloc: %d node(s) ok\n", node);
	return 0;
}
