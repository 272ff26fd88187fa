// SPDX-License-Identifier: MIT
/*
 * A copy between the P2P memory of two devices the fabric cannot connect is
 * staged through host memory; cancelling it stops it before its next 1 MiB
 * slice, as every other copy does. Before, one staged descriptor (up to the
 * file's 4 GiB, over uncached BAR reads) ran to its end after a cancel,
 * close or kill. Needs a device pair that stages (the debug kernel's guest).
 */
#include "ump_test.h"

#define T_LEN (48u << 20)

/* A pair of federated devices with P2P memory whose copies stage. */
static int staged_pair(struct ump *u, unsigned int *a, unsigned int *b)
{
	struct ump_dev_info di, dj;
	unsigned int i, j, n = u->version.nr_devices;

	for (i = 0; i < n; i++) {
		T_OK(ump_dev_info(u, i, &di));
		for (j = 0; j < n && di.p2pmem; j++) {
			T_OK(ump_dev_info(u, j, &dj));
			if (j != i && dj.p2pmem && di.p2p_class[j] == UMP_P2P_NOT_SUPPORTED) {
				*a = i;
				*b = j;
				return 1;
			}
		}
	}
	return 0;
}

int main(void)
{
	const char *want_p2p = getenv("UMP_TEST_EXPECT_P2PMEM");
	struct ump_copy_desc d;
	unsigned int a, b;
	uint32_t ha, hb;
	struct ump_wait w;
	struct ump u;
	uint64_t id, t0;
	double full;

	t_open(&u);
	if (!staged_pair(&u, &a, &b)) {
		if (want_p2p && atoi(want_p2p))
			T_FAIL("no pair of devices whose P2P copies stage");
		T_SKIPPED("no pair of devices whose P2P copies stage");
	}
	T_OK(ump_alloc(&u, UMP_REGION_P2P(a), T_LEN, &ha));
	T_OK(ump_alloc(&u, UMP_REGION_P2P(b), T_LEN, &hb));
	d = (struct ump_copy_desc){ha, hb, 0, 0, T_LEN};
	t0 = ump_now_ns();
	T_OK(ump_copy_sync(&u, &d, 1));
	full = (double)(ump_now_ns() - t0) / 1e9;

	/* Cancelled a quarter of the way through its one descriptor. */
	T_OK(ump_submit(&u, &d, 1, 1, &id));
	usleep((useconds_t)(full * 1e6 / 4));
	T_OK(ump_cancel(&u, id));
	T_OK(ump_wait(&u, id, UMP_TIMEOUT_INFINITE, &w));
	printf("cancel_staged: p2p%u -> p2p%u, %u MiB staged in %.3f s; cancelled, it ended with "
	       "status %d after %llu MiB\n",
	       a, b, T_LEN >> 20, full, w.status, (unsigned long long)(w.bytes >> 20));
	if (w.status != -ECANCELED || w.bytes >= T_LEN)
		T_FAIL("a cancelled staged copy ran to its end (status %d, %llu bytes)", w.status,
		       (unsigned long long)w.bytes);
	ump_close(&u);
	return 0;
}
