// SPDX-License-Identifier: MIT
/*
 * UMP_IOC_CANCEL stops one chain at its next descriptor (or 1 MiB slice):
 * WAIT reports -ECANCELED and where it stopped; chains beside it run on.
 * Cancelling a finished or unknown chain is harmless (-ENOENT when unknown).
 */
#include "ump_test.h"

#define T_LEN (16u << 20)

int main(void)
{
	struct ump_copy_desc d[64];
	uint64_t slow, quick;
	unsigned char *md;
	struct ump_wait w;
	uint32_t hs, hd, hq;
	struct ump u;
	int i;

	t_open(&u);
	T_OK(ump_alloc(&u, UMP_REGION_HOST(0), T_LEN, &hs));
	T_OK(ump_alloc(&u, UMP_REGION_HOST(t_nr_nodes(&u) - 1), T_LEN, &hd));
	T_OK(ump_alloc(&u, UMP_REGION_HOST(0), 4096, &hq));
	T_OK(ump_mmap(&u, hq, 4096, (void **)&md));
	memset(md, 0xee, 4096);
	/* 1 GiB: seconds of copying in the guest. */
	for (i = 0; i < 64; i++)
		d[i] = (struct ump_copy_desc){hs, hd, 0, 0, T_LEN};
	T_OK(ump_submit(&u, d, 64, 1, &slow));
	usleep(20000);
	T_OK(ump_cancel(&u, slow));
	{
		struct ump_copy_desc q = {hs, hq, 0, 0, 4096};

		T_OK(ump_submit(&u, &q, 1, 2, &quick));
	}
	T_OK(ump_wait(&u, slow, UMP_TIMEOUT_INFINITE, &w));
	if (w.status != -ECANCELED || w.failed_index >= 64 || w.bytes >= 64ull * T_LEN)
		T_FAIL("cancelled chain: status %d stopped at %u bytes %llu", w.status,
		       w.failed_index, (unsigned long long)w.bytes);
	printf("cancel: stopped at descriptor %u after %llu bytes\n", w.failed_index,
	       (unsigned long long)w.bytes);
	T_OK(ump_wait(&u, quick, UMP_TIMEOUT_INFINITE, &w));
	if (w.status || md[0] != 0)
		T_FAIL("the chain beside it: status %d", w.status);
	T_EXPECT(ump_cancel(&u, slow), -ENOENT);
	T_EXPECT(ump_cancel(&u, 0), -EINVAL);
	ump_close(&u);
	return 0;
}
