// SPDX-License-Identifier: MIT
/*
 * Allocation until ENOMEM and back, on every node: the cap stops it with
 * -ENOMEM (never the OOM killer), accounting never exceeds the cap, and
 * after freeing everything the same amount can be allocated again.
 */
#include "ump_test.h"

#define CHUNK (32u << 20)
#define MAXBUF 4096

static long long node_field(int node, const char *field)
{
	char prefix[32];

	snprintf(prefix, sizeof(prefix), "region host%d", node);
	return t_stat(prefix, field);
}

int main(void)
{
	static uint32_t h[MAXBUF];
	struct ump u;
	int node, round;

	t_open(&u);
	for (node = 0; node < t_nr_nodes(&u); node++) {
		long long cap = node_field(node, "capacity");
		long long base = node_field(node, "used");
		int first = -1;

		for (round = 0; round < 3; round++) {
			int n = 0, ret = 0;

			while (n < MAXBUF &&
			       !(ret = ump_alloc(&u, UMP_REGION_HOST(node), CHUNK, &h[n])))
				n++;
			if (ret != -ENOMEM)
				T_FAIL("node %d: allocation stopped with %d", node, ret);
			if (node_field(node, "used") > cap)
				T_FAIL("node %d: used above the cap", node);
			/* Smaller pieces still fit into what is left. */
			while (n < MAXBUF && !ump_alloc(&u, UMP_REGION_HOST(node), 1 << 20, &h[n]))
				n++;
			if (first < 0)
				first = n;
			else if (n != first)
				T_FAIL("node %d round %d: %d buffers, first round %d", node, round,
				       n, first);
			while (n--)
				T_OK(ump_free(&u, h[n]));
			if (node_field(node, "used") != base)
				T_FAIL("node %d: used %lld after freeing, was %lld", node,
				       node_field(node, "used"), base);
		}
		printf("node %d: %d buffers up to the %lld MiB cap, three times\n", node, first,
		       cap >> 20);
	}
	ump_close(&u);
	return 0;
}
