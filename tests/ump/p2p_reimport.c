// SPDX-License-Identifier: MIT
/*
 * A ump P2P buffer exported as a dma-buf and imported back (by another
 * file, as a second process would): the import reaches the same device
 * memory, so bytes copied into it through the import are read back through
 * the original, and closing every file frees both. Needs a device with P2P
 * memory (the debug kernel's guest).
 */
#include <sys/mman.h>

#include "ump_test.h"

#define T_SZ (1u << 20)

int main(void)
{
	const char *want = getenv("UMP_TEST_EXPECT_P2PMEM");
	struct ump_copy_desc d;
	unsigned char *ms, *md;
	uint32_t hp, hi, hs, hd;
	struct ump u, v;
	struct ump_dev_info di;
	uint64_t size;
	unsigned int i, n;
	long long bufs = t_pool("buffers"), bad;
	int fd = -1;

	t_open(&u);
	T_OK(ump_open(&v));
	n = u.version.nr_devices;
	for (i = 0; i < n; i++) {
		T_OK(ump_dev_info(&u, i, &di));
		if (di.p2pmem)
			break;
	}
	if (i == n) {
		if (want && atoi(want))
			T_FAIL("no device with P2P memory");
		T_SKIPPED("no device with P2P memory");
	}
	T_OK(ump_alloc(&u, UMP_REGION_P2P(i), T_SZ, &hp));
	fd = ump_export(&u, hp);
	T_REQUIRE(fd >= 0);
	T_OK(ump_import(&v, fd, &hi, &size));
	close(fd);
	if (size != T_SZ)
		T_FAIL("the import is %llu bytes, the export %u", (unsigned long long)size, T_SZ);

	/* host -> the import (v), then the original (u) -> host. */
	T_OK(ump_alloc(&v, UMP_REGION_HOST(0), T_SZ, &hs));
	T_OK(ump_alloc(&u, UMP_REGION_HOST(0), T_SZ, &hd));
	T_OK(ump_mmap(&v, hs, T_SZ, (void **)&ms));
	T_OK(ump_mmap(&u, hd, T_SZ, (void **)&md));
	t_fill(ms, T_SZ, 0, T_SZ, 1, 7);
	t_fill(md, T_SZ, 0, 0, 0, 8);
	d = (struct ump_copy_desc){hs, hi, 0, 0, T_SZ};
	T_OK(ump_copy_sync(&v, &d, 1));
	d = (struct ump_copy_desc){hp, hd, 0, 0, T_SZ};
	T_OK(ump_copy_sync(&u, &d, 1));
	bad = t_check_dst(md, T_SZ, 0, 0, T_SZ, 7, 8);
	if (bad >= 0)
		T_FAIL("byte %lld read through the original is not what went in through the import",
		       bad);
	printf("p2p_reimport: p2p%u exported and imported by another file: 1 MiB in through the "
	       "import, the same out through the original\n",
	       i);
	munmap(ms, T_SZ);
	munmap(md, T_SZ);
	ump_close(&u);
	ump_close(&v);
	if (t_pool("buffers") != bufs)
		T_FAIL("%lld buffer(s) left after both files closed", t_pool("buffers") - bufs);
	return 0;
}
