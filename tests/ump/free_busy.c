// SPDX-License-Identifier: MIT
/*
 * FREE of buffers that chains still use, while those chains are queued and
 * while they run (on whichever engine the guest gives them: the CPU
 * workers, or the DMA channel in the @dma run): every chain completes, its
 * bytes land (seen through mappings made before the FREE), and once the
 * mappings go the buffers are gone.
 */
#include <sys/mman.h>

#include "ump_test.h"

#define T_LEN (8u << 20)
#define T_CHAINS 6
#define T_DESCS 8

int main(void)
{
	struct ump_copy_desc d[T_DESCS];
	unsigned char *ms, *md[T_CHAINS];
	uint64_t chain[T_CHAINS];
	uint32_t hs, hd[T_CHAINS];
	struct ump_wait w;
	long long base;
	struct ump u;
	int c, i, dma = 0;

	t_open(&u);
	base = t_pool("buffers");
	T_OK(ump_alloc(&u, UMP_REGION_HOST(0), T_LEN, &hs));
	T_OK(ump_mmap(&u, hs, T_LEN, (void **)&ms));
	t_fill(ms, T_LEN, 0, T_LEN, 1, 77);
	for (c = 0; c < T_CHAINS; c++) {
		T_OK(ump_alloc(&u, UMP_REGION_HOST(t_nr_nodes(&u) - 1), T_LEN, &hd[c]));
		T_OK(ump_mmap(&u, hd[c], T_LEN, (void **)&md[c]));
	}
	/* All submitted at once: some run while the others wait their turn. */
	for (c = 0; c < T_CHAINS; c++) {
		for (i = 0; i < T_DESCS; i++)
			d[i] = (struct ump_copy_desc){hs, hd[c], 0, 0, T_LEN};
		T_OK(ump_submit(&u, d, T_DESCS, (uint64_t)c, &chain[c]));
	}
	T_OK(ump_free(&u, hs));
	for (c = 0; c < T_CHAINS; c++)
		T_OK(ump_free(&u, hd[c]));
	/* The handles are gone at once; the chains hold the memory. */
	T_EXPECT(ump_free(&u, hs), -ENOENT);
	for (c = 0; c < T_CHAINS; c++) {
		long long bad;

		T_OK(ump_wait(&u, chain[c], UMP_TIMEOUT_INFINITE, &w));
		if (w.status || w.failed_index != T_DESCS || w.user_data != (uint64_t)c)
			T_FAIL("chain %d over freed buffers: status %d at %u", c, w.status,
			       w.failed_index);
		dma += w.engine == UMP_ENGINE_DMA;
		bad = t_check_dst(md[c], T_LEN, 0, 0, T_LEN, 77, 0);
		if (bad >= 0)
			T_FAIL("chain %d: byte %lld wrong after its buffers were freed", c, bad);
	}
	munmap(ms, T_LEN);
	for (c = 0; c < T_CHAINS; c++)
		munmap(md[c], T_LEN);
	for (i = 0; i < 50 && t_pool("buffers") != base; i++)
		usleep(100000);
	if (t_pool("buffers") != base)
		T_FAIL("%lld buffers left, %lld before", t_pool("buffers"), base);
	ump_close(&u);
	printf("free_busy: %d chains (%d on the DMA channel) completed over freed buffers\n",
	       T_CHAINS, dma);
	return 0;
}
