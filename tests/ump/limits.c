// SPDX-License-Identifier: MIT
/*
 * What one file may queue is bounded (include/uapi/linux/ump.h): unreaped chains,
 * their descriptors, and the bytes they would copy. Past a bound SUBMIT is
 * -EAGAIN until WAIT reaps something; a chain that alone passes the byte
 * bound is -E2BIG. Before the bounds, 65,536 chains of 4,096 descriptors
 * per file pinned about 12 GiB of kernel memory.
 */
#include "ump_test.h"

static struct ump_copy_desc d[UMP_MAX_CHAIN_DESCS];
static uint64_t ids[UMP_MAX_CHAINS_PER_FILE + 1];

int main(void)
{
	unsigned int i, n;
	struct ump_wait w;
	uint32_t hs, hd;
	struct ump u;
	int ret;

	t_open(&u);
	T_OK(ump_alloc(&u, UMP_REGION_HOST(0), 8192, &hs));
	T_OK(ump_alloc(&u, UMP_REGION_HOST(0), 8192, &hd));
	for (i = 0; i < UMP_MAX_CHAIN_DESCS; i++)
		d[i] = (struct ump_copy_desc){hs, hd, 0, 0, 64};

	/* Descriptors: full chains until the bound, then -EAGAIN. */
	for (n = 0; n <= UMP_MAX_QUEUED_DESCS / UMP_MAX_CHAIN_DESCS; n++) {
		ret = ump_submit(&u, d, UMP_MAX_CHAIN_DESCS, n, &ids[n]);
		if (ret)
			break;
	}
	if (ret != -EAGAIN || n != UMP_MAX_QUEUED_DESCS / UMP_MAX_CHAIN_DESCS)
		T_FAIL("chain %u of %u descriptors: %d, want -EAGAIN at chain %u", n,
		       UMP_MAX_CHAIN_DESCS, ret, UMP_MAX_QUEUED_DESCS / UMP_MAX_CHAIN_DESCS);
	/* Reaping one makes room for one. */
	T_OK(ump_wait(&u, ids[0], UMP_TIMEOUT_INFINITE, &w));
	T_OK(ump_submit(&u, d, UMP_MAX_CHAIN_DESCS, 0, &ids[0]));
	T_EXPECT(ump_submit(&u, d, 1, 0, &ids[n]), -EAGAIN);
	for (i = 0; i < n; i++)
		T_OK(ump_wait(&u, ids[i], UMP_TIMEOUT_INFINITE, &w));

	/* Chains: one descriptor each, up to the bound. */
	for (n = 0; n <= UMP_MAX_CHAINS_PER_FILE; n++) {
		ret = ump_submit(&u, d, 1, n, &ids[n]);
		if (ret)
			break;
	}
	if (ret != -EAGAIN || n != UMP_MAX_CHAINS_PER_FILE)
		T_FAIL("chain %u: %d, want -EAGAIN at %u", n, ret, UMP_MAX_CHAINS_PER_FILE);
	for (i = 0; i < n; i++)
		T_OK(ump_wait(&u, ids[i], UMP_TIMEOUT_INFINITE, &w));

	/* Bytes: a chain that alone asks more than the bound never runs. */
	d[0].length = UMP_MAX_QUEUED_BYTES / 2 + 1;
	d[1].length = UMP_MAX_QUEUED_BYTES / 2 + 1;
	T_EXPECT(ump_submit(&u, d, 2, 0, &ids[0]), -E2BIG);
	d[1].length = ~0ull;
	T_EXPECT(ump_submit(&u, d, 2, 0, &ids[0]), -E2BIG);
	/* Below it the same descriptors are accepted, and fail as they run. */
	d[0].length = UMP_MAX_QUEUED_BYTES;
	T_OK(ump_submit(&u, d, 1, 0, &ids[0]));
	T_OK(ump_wait(&u, ids[0], UMP_TIMEOUT_INFINITE, &w));
	T_EXPECT(w.status, -ERANGE);
	ump_close(&u);
	printf("limits: %u descriptors, %u chains and %llu bytes per file\n", UMP_MAX_QUEUED_DESCS,
	       UMP_MAX_CHAINS_PER_FILE, (unsigned long long)UMP_MAX_QUEUED_BYTES);
	return 0;
}
