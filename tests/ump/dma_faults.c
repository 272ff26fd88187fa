// SPDX-License-Identifier: MIT
/*
 * The dmaengine path when the engine misbehaves, with the test provider
 * (tests/kmod/ump_swdma.ko) told to stall or to fail: a chain that times out
 * reports -ETIMEDOUT and the engine never touches its memory afterwards (not
 * the destination, not pages freed and reused), a chain whose descriptors
 * cannot be prepared reports -ENOMEM, one whose engine fails a piece's
 * transfer reports -EIO, and the channel works again after each.
 */
#include <fcntl.h>

#include "ump_test.h"

/* Several of the channel's 64 KiB segments, so a window has many pieces. */
#define T_SZ (1u << 20)

static int write_param(const char *path, long v)
{
	char s[32];

	snprintf(s, sizeof(s), "%ld\n", v);
	return t_write_file(path, s);
}

#define SWDMA "/sys/module/ump_swdma/parameters/"
#define UMPP "/sys/module/ump/parameters/"

static long long first_not(const unsigned char *p, size_t n, unsigned char v)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != v)
			return (long long)i;
	return -1;
}

int main(void)
{
	struct ump_copy_desc d;
	unsigned char *ms, *ma, *fresh[16];
	uint32_t hs, ha, hb, hf[16];
	struct ump_wait w;
	uint64_t chain;
	long timeout_ms = 10000;
	long long kept;
	struct ump u;
	int i;

	t_open(&u);
	if (!(u.version.features & UMP_FEAT_DMA_ENGINE))
		T_SKIPPED("no DMA_MEMCPY channel in this guest");
	if (access(SWDMA "delay_ms", W_OK))
		T_SKIPPED("the DMA channel is not ump_swdma: cannot make it stall");
	/* A module that lets us shorten its timeout keeps this test short. */
	if (!write_param(UMPP "dma_timeout_ms", 300))
		timeout_ms = 300;
	T_OK(ump_alloc(&u, UMP_REGION_HOST(0), T_SZ, &hs));
	T_OK(ump_alloc(&u, UMP_REGION_HOST(0), T_SZ, &ha));
	T_OK(ump_alloc(&u, UMP_REGION_HOST(0), T_SZ, &hb));
	T_OK(ump_mmap(&u, hs, T_SZ, (void **)&ms));
	T_OK(ump_mmap(&u, ha, T_SZ, (void **)&ma));
	memset(ms, 0x11, T_SZ);
	memset(ma, 0xee, T_SZ);

	/* Stalled past the timeout: the chain fails, and its copy must never land. */
	T_OK(write_param(SWDMA "delay_ms", timeout_ms + 1500));
	d = (struct ump_copy_desc){hs, ha, 0, 0, T_SZ};
	T_OK(ump_submit(&u, &d, 1, 0, &chain));
	T_OK(ump_wait(&u, chain, UMP_TIMEOUT_INFINITE, &w));
	if (w.status != -ETIMEDOUT || w.engine != UMP_ENGINE_DMA)
		T_FAIL("stalled engine: status %d engine %u, want -ETIMEDOUT on dma", w.status,
		       w.engine);
	d = (struct ump_copy_desc){hs, hb, 0, 0, T_SZ};
	T_OK(ump_submit(&u, &d, 1, 0, &chain));
	T_OK(ump_wait(&u, chain, UMP_TIMEOUT_INFINITE, &w));
	T_EXPECT(w.status, -ETIMEDOUT);
	/* hb's pages go back to the allocator; fresh buffers may get them. */
	T_OK(ump_free(&u, hb));
	for (i = 0; i < 16; i++) {
		T_OK(ump_alloc(&u, UMP_REGION_HOST(0), T_SZ, &hf[i]));
		T_OK(ump_mmap(&u, hf[i], T_SZ, (void **)&fresh[i]));
	}
	sleep(3);
	{
		long long bad = first_not(ma, T_SZ, 0xee);

		if (bad >= 0)
			T_FAIL("the engine wrote byte %lld of a destination after its chain "
			       "had failed with -ETIMEDOUT",
			       bad);
	}
	for (i = 0; i < 16; i++)
		if (first_not(fresh[i], T_SZ, 0) >= 0)
			T_FAIL("a freshly allocated buffer changed: the engine wrote into "
			       "pages freed after a timed-out chain");

	/* The channel works again. */
	T_OK(write_param(SWDMA "delay_ms", 0));
	d = (struct ump_copy_desc){hs, ha, 0, 0, T_SZ};
	T_OK(ump_submit(&u, &d, 1, 0, &chain));
	T_OK(ump_wait(&u, chain, UMP_TIMEOUT_INFINITE, &w));
	if (w.status || w.engine != UMP_ENGINE_DMA || first_not(ma, T_SZ, 0x11) >= 0)
		T_FAIL("after a timeout: status %d engine %u", w.status, w.engine);

	/* Out of descriptors for good, with some already in flight. */
	memset(ma, 0xee, T_SZ);
	T_OK(write_param(SWDMA "delay_ms", 200));
	T_OK(write_param(SWDMA "fail_prep_after", 3));
	T_OK(ump_submit(&u, &d, 1, 0, &chain));
	T_OK(ump_wait(&u, chain, UMP_TIMEOUT_INFINITE, &w));
	T_OK(write_param(SWDMA "fail_prep_after", -1));
	T_OK(write_param(SWDMA "delay_ms", 0));
	if (w.status != -ENOMEM || w.failed_index != 0)
		T_FAIL("failing prep: status %d index %u, want -ENOMEM at 0", w.status,
		       w.failed_index);
	T_OK(ump_submit(&u, &d, 1, 0, &chain));
	T_OK(ump_wait(&u, chain, UMP_TIMEOUT_INFINITE, &w));
	if (w.status || first_not(ma, T_SZ, 0x11) >= 0)
		T_FAIL("after failed preps: status %d", w.status);

	/*
	 * One piece of a window fails its transfer, reported through
	 * callback_result alone (the third of the window's 64 KiB pieces):
	 * the chain fails rather than succeed with those bytes unwritten. And
	 * every descriptor was acked at prep, so an engine that keeps unacked
	 * ones until release (as fsldma) kept none.
	 */
	memset(ma, 0xee, T_SZ);
	T_OK(write_param(SWDMA "fail_transfer_after", 2));
	T_OK(ump_submit(&u, &d, 1, 0, &chain));
	T_OK(ump_wait(&u, chain, UMP_TIMEOUT_INFINITE, &w));
	T_OK(write_param(SWDMA "fail_transfer_after", -1));
	kept = t_read_number(SWDMA "unacked");
	printf("dma_faults: a failed transfer: status %d, destination %s; %lld completed "
	       "descriptors kept unacked by the engine\n",
	       w.status, first_not(ma, T_SZ, 0x11) >= 0 ? "partly unwritten" : "whole", kept);
	if (w.status != -EIO)
		T_FAIL("a piece's failed transfer was reported as status %d, not -EIO", w.status);
	if (kept)
		T_FAIL("%lld descriptors were prepared without DMA_CTRL_ACK", kept);
	T_OK(ump_submit(&u, &d, 1, 0, &chain));
	T_OK(ump_wait(&u, chain, UMP_TIMEOUT_INFINITE, &w));
	if (w.status || first_not(ma, T_SZ, 0x11) >= 0)
		T_FAIL("after a failed transfer: status %d", w.status);
	write_param(UMPP "dma_timeout_ms", 10000);
	ump_close(&u);
	printf("dma_faults: timeout (%ld ms), failed preps and a failed transfer leave no late "
	       "writes and no wrong answer\n",
	       timeout_ms);
	return 0;
}
