// SPDX-License-Identifier: MIT
/*
 * The dmaengine path: with a DMA_MEMCPY channel present (the guest loads
 * tests/kmod/ump_swdma.ko before ump.ko), host-to-host chains run on it
 * (ump_wait.engine, /proc/ump/status), copy every size and alignment
 * correctly across nodes, stop at a failing descriptor, complete through
 * io_uring; a chain that overlaps itself falls back to the CPU. Host
 * buffers are built of high-order runs, so the engine gets descriptors
 * longer than a page (the provider records the longest it was given).
 */
#include <sys/mman.h>
#include <ump/libump-uring.h>

#include "ump_test.h"

#define LONGEST "/sys/module/ump_swdma/parameters/longest"

int main(void)
{
	static const uint64_t sizes[] = {1, 7, 4095, 4096, 4097, 65539, (1 << 20) + 3};
	static const uint64_t aligns[] = {0, 1, 4095};
	const uint64_t bsz = (2 << 20) + 8192;
	unsigned char *ms, *md;
	struct ump_copy_desc d[3];
	struct ump_wait w;
	uint32_t hs, hd;
	uint64_t chain;
	long long before;
	struct ump u;
	size_t i, a, b;
	int copies = 0;
	unsigned int seed = 100;

	t_open(&u);
	if (!(u.version.features & UMP_FEAT_DMA_ENGINE))
		T_SKIPPED("no DMA_MEMCPY channel in this guest");
	before = t_stat("engine dma", "chains");
	if (t_write_file(LONGEST, "0"))
		T_FAIL("cannot reset %s", LONGEST);
	T_OK(ump_alloc(&u, UMP_REGION_HOST(0), bsz, &hs));
	T_OK(ump_alloc(&u, UMP_REGION_HOST(t_nr_nodes(&u) - 1), bsz, &hd));
	T_OK(ump_mmap(&u, hs, bsz, (void **)&ms));
	T_OK(ump_mmap(&u, hd, bsz, (void **)&md));

	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		for (a = 0; a < 3; a++)
			for (b = 0; b < 3; b++) {
				long long bad;

				d[0] =
				    (struct ump_copy_desc){hs, hd, aligns[a], aligns[b], sizes[i]};
				seed++;
				t_fill(ms, bsz, aligns[a], aligns[a] + sizes[i], 1, seed);
				t_fill(md, bsz, ~0ull, 0, 0, seed + 3);
				T_OK(ump_submit(&u, d, 1, 0, &chain));
				T_OK(ump_wait(&u, chain, UMP_TIMEOUT_INFINITE, &w));
				if (w.status || w.engine != UMP_ENGINE_DMA)
					T_FAIL("status %d engine %u", w.status, w.engine);
				bad = t_check_dst(md, bsz, aligns[b], aligns[a], sizes[i], seed,
						  seed + 3);
				if (bad >= 0)
					T_FAIL("n=%llu soff=%llu doff=%llu: byte %lld",
					       (unsigned long long)sizes[i],
					       (unsigned long long)aligns[a],
					       (unsigned long long)aligns[b], bad);
				if (t_check_src(ms, bsz, aligns[a], sizes[i], seed) >= 0)
					T_FAIL("source modified");
				copies++;
			}

	/* A failing descriptor stops the chain on this engine too. */
	memset(md, 0, bsz);
	d[0] = (struct ump_copy_desc){hs, hd, 0, 0, 100};
	d[1] = (struct ump_copy_desc){hs, hd, bsz - 1, 0, 2};
	d[2] = (struct ump_copy_desc){hs, hd, 0, 200, 100};
	T_OK(ump_submit(&u, d, 3, 0, &chain));
	T_OK(ump_wait(&u, chain, UMP_TIMEOUT_INFINITE, &w));
	if (w.status != -ERANGE || w.failed_index != 1 || w.engine != UMP_ENGINE_DMA ||
	    md[200] != 0)
		T_FAIL("failing chain: status %d index %u engine %u", w.status, w.failed_index,
		       w.engine);

	/* io_uring completions from the DMA callback path. */
	{
		struct io_uring ring;
		struct io_uring_cqe *cqe;
		int k;

		T_OK(io_uring_queue_init(32, &ring, 0));
		d[0] = (struct ump_copy_desc){hs, hd, 0, 0, 1 << 20};
		for (k = 0; k < 32; k++)
			ump_prep_submit(io_uring_get_sqe(&ring), u.fd, d, 1, (uint64_t)k);
		io_uring_submit_and_wait(&ring, 32);
		for (k = 0; k < 32; k++) {
			T_OK(io_uring_wait_cqe(&ring, &cqe));
			if (cqe->res)
				T_FAIL("ring chain: %d", cqe->res);
			io_uring_cqe_seen(&ring, cqe);
		}
		io_uring_queue_exit(&ring);
		if (memcmp(ms, md, 1 << 20))
			T_FAIL("ring copies wrong");
	}

	/* Overlapping within one buffer: memmove semantics, so the CPU runs it. */
	d[0] = (struct ump_copy_desc){hs, hs, 0, 100, 4096};
	T_OK(ump_submit(&u, d, 1, 0, &chain));
	T_OK(ump_wait(&u, chain, UMP_TIMEOUT_INFINITE, &w));
	if (w.status || w.engine != UMP_ENGINE_CPU)
		T_FAIL("overlapping chain: status %d engine %u", w.status, w.engine);

	FILE *f = fopen(LONGEST, "r");
	unsigned long longest = 0;

	if (!f || fscanf(f, "%lu", &longest) != 1)
		T_FAIL("cannot read %s", LONGEST);
	fclose(f);
	/* 64 KiB is the provider's segment limit (its dma_parms default). */
	if (longest < 32768)
		T_FAIL("longest descriptor %lu bytes: pages are not merged", longest);
	printf("dma: longest descriptor %lu bytes\n", longest);
	if (t_stat("engine dma", "chains") < before + copies + 33)
		T_FAIL("engine dma chains %lld, want >= %lld", t_stat("engine dma", "chains"),
		       before + copies + 33);
	munmap(ms, bsz);
	munmap(md, bsz);
	ump_close(&u);
	printf("dma: %d verified copies on the DMA channel, failing chain and ring ok\n", copies);
	return 0;
}
