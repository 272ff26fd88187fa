// SPDX-License-Identifier: MIT
/*
 * Chains: descriptors run in order (a later one sees an earlier one's
 * result), a failing descriptor stops its chain with its status and index
 * while chains around it complete, and WAIT reports engine, bytes and
 * user_data and honours an absolute timeout.
 */
#include <sys/mman.h>

#include "ump_test.h"

/* Errors are summed over both engines: which one runs a chain is the pool's call. */
int main(void)
{
	struct ump_copy_desc d[3];
	uint64_t good1, bad, good2;
	unsigned char *a, *b;
	struct ump_wait w;
	uint32_t ha, hb;
	struct ump u;
	long long errors_before, errors_after;

	t_open(&u);
	T_OK(ump_alloc(&u, UMP_REGION_HOST(0), 1 << 16, &ha));
	T_OK(ump_alloc(&u, UMP_REGION_HOST(t_nr_nodes(&u) - 1), 1 << 16, &hb));
	T_OK(ump_mmap(&u, ha, 1 << 16, (void **)&a));
	T_OK(ump_mmap(&u, hb, 1 << 16, (void **)&b));
	memset(a, 0x11, 4096);
	memset(a + 4096, 0x22, 4096);

	/* In order: a[0..4k) -> b[0..4k) -> a[8k..12k): a sees b's bytes. */
	d[0] = (struct ump_copy_desc){ha, hb, 0, 0, 4096};
	d[1] = (struct ump_copy_desc){hb, ha, 0, 8192, 4096};
	T_OK(ump_submit(&u, d, 2, 42, &good1));
	T_OK(ump_wait(&u, good1, UMP_TIMEOUT_INFINITE, &w));
	if (w.status || w.user_data != 42 || w.bytes != 8192 || w.failed_index != 2 ||
	    w.engine == 0)
		T_FAIL("wait: status %d user_data %llu bytes %llu idx %u", w.status,
		       (unsigned long long)w.user_data, (unsigned long long)w.bytes,
		       w.failed_index);
	if (a[8192] != 0x11 || a[12287] != 0x11)
		T_FAIL("descriptors not run in order");
	/* Reaped: a second wait does not find it. */
	T_EXPECT(ump_wait(&u, good1, UMP_TIMEOUT_INFINITE, &w), -ENOENT);

	errors_before = (t_stat("engine cpu", "errors") + t_stat("engine dma", "errors"));

	/* good, failing (past the end), good: the third must not run. */
	memset(b, 0, 1 << 16);
	d[0] = (struct ump_copy_desc){ha, hb, 4096, 0, 100};
	d[1] = (struct ump_copy_desc){ha, hb, (1 << 16) - 10, 0, 11};
	d[2] = (struct ump_copy_desc){ha, hb, 4096, 200, 100};
	T_OK(ump_submit(&u, d, 1, 1, &good1));
	T_OK(ump_submit(&u, d, 3, 2, &bad));
	T_OK(ump_submit(&u, &d[2], 1, 3, &good2));
	T_OK(ump_wait(&u, bad, UMP_TIMEOUT_INFINITE, &w));
	if (w.status != -ERANGE || w.failed_index != 1 || w.bytes != 100)
		T_FAIL("failing chain: status %d idx %u bytes %llu", w.status, w.failed_index,
		       (unsigned long long)w.bytes);
	T_OK(ump_wait(&u, good1, UMP_TIMEOUT_INFINITE, &w));
	T_EXPECT(w.status, 0);
	T_OK(ump_wait(&u, good2, UMP_TIMEOUT_INFINITE, &w));
	T_EXPECT(w.status, 0);
	if (b[0] != 0x22 || b[99] != 0x22 || b[100] != 0 || b[200] != 0x22)
		T_FAIL("bytes around the failing chain wrong");

	/* Offset + length overflowing 64 bits fails the chain, not the box. */
	d[0] = (struct ump_copy_desc){ha, hb, ~0ull - 5, 0, 100};
	T_EXPECT(ump_copy_sync(&u, d, 1), -ERANGE);
	d[0] = (struct ump_copy_desc){ha, hb, 0, 0, 0};
	T_EXPECT(ump_copy_sync(&u, d, 1), -EINVAL);

	errors_after = (t_stat("engine cpu", "errors") + t_stat("engine dma", "errors"));
	if (errors_after < errors_before + 3)
		T_FAIL("engine errors %lld -> %lld", errors_before, errors_after);

	/* Timeouts are absolute CLOCK_MONOTONIC: a past one polls. */
	d[0] = (struct ump_copy_desc){ha, hb, 0, 0, 1 << 16};
	T_OK(ump_submit(&u, d, 1, 9, &good1));
	T_OK(ump_wait(&u, good1, ump_now_ns() + 5000000000ull, &w));
	T_EXPECT(w.status, 0);
	T_EXPECT(ump_wait(&u, 12345678, 0, &w), -ENOENT);

	/*
	 * Overlap within one buffer, destination above the source, longer
	 * than the engine's 1 MiB slice: must behave as memmove.
	 */
	{
		const uint64_t len = 3u << 20, size = 4u << 20;
		unsigned char *m, *want = malloc(size);
		uint32_t hm;

		T_OK(ump_alloc(&u, UMP_REGION_HOST(0), size, &hm));
		T_OK(ump_mmap(&u, hm, size, (void **)&m));
		t_fill(m, size, 0, size, 1, 77);
		memcpy(want, m, size);
		memmove(want + 4099, want + 3, len);
		d[0] = (struct ump_copy_desc){hm, hm, 3, 4099, len};
		T_OK(ump_copy_sync(&u, d, 1));
		if (memcmp(m, want, size))
			T_FAIL("overlapping copy is not a memmove");
		memmove(want + 5, want + 70001, len);
		d[0] = (struct ump_copy_desc){hm, hm, 70001, 5, len};
		T_OK(ump_copy_sync(&u, d, 1));
		if (memcmp(m, want, size))
			T_FAIL("overlapping copy downwards is not a memmove");
		munmap(m, size);
		free(want);
		T_OK(ump_free(&u, hm));
	}

	munmap(a, 1 << 16);
	munmap(b, 1 << 16);
	ump_close(&u);
	printf("chain: ordered, failing and timed chains ok\n");
	return 0;
}
