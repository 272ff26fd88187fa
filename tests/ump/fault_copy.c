// SPDX-License-Identifier: MIT
/*
 * Faults injected into the copy workers (/sys/kernel/debug/ump/fail_copy,
 * the debug kernel's CONFIG_FAULT_INJECTION_DEBUG_FS): a window's mapping or
 * scatterlist not had, a channel out of descriptors, an exporter refusing
 * CPU access. Every chain must end either whole (every byte right) or with
 * -ENOMEM or -EIO at a descriptor: those before it copied, those after it
 * untouched, nothing outside the descriptors written; and the pool must be
 * left as it was. Chains go to the DMA engine (host to host, when the guest
 * has a channel) and to the CPU workers (into an imported dma-buf); a CPU
 * copy between host buffers has nothing that can fail, and must not.
 */
#include <sys/mman.h>

#include "ump_test.h"

#define FAIL_DIR "/sys/kernel/debug/ump/fail_copy/"
#define BSZ (1u << 20)
#define NDESC 8
#define ROUNDS 300

static unsigned char want[BSZ];

int main(void)
{
	const char *sc = getenv("UMP_STRESS_SCALE");
	int rounds = (int)(ROUNDS * (sc ? atof(sc) : 1.0)), r;
	int ok[2] = {0, 0}, failed[2] = {0, 0}, engine_seen[2] = {0, 0};
	unsigned char *ms, *md[2];
	uint32_t hs, hd, hx, hi;
	struct ump u;
	int fd;

	t_open(&u);
	if (access(FAIL_DIR "probability", W_OK))
		T_SKIPPED("no %s (CONFIG_FAULT_INJECTION_DEBUG_FS, debugfs)", FAIL_DIR);
	T_OK(ump_alloc(&u, UMP_REGION_HOST(0), BSZ, &hs));
	T_OK(ump_alloc(&u, UMP_REGION_HOST(t_nr_nodes(&u) - 1), BSZ, &hd));
	/* An import of our own export: a dma-buf the CPU workers must bracket. */
	T_OK(ump_alloc(&u, UMP_REGION_HOST(0), BSZ, &hx));
	fd = ump_export(&u, hx);
	if (fd < 0)
		T_FAIL("export: %d", fd);
	T_OK(ump_import(&u, fd, &hi, NULL));
	close(fd);
	T_OK(ump_mmap(&u, hs, BSZ, (void **)&ms));
	T_OK(ump_mmap(&u, hd, BSZ, (void **)&md[0]));
	T_OK(ump_mmap(&u, hx, BSZ, (void **)&md[1]));

	if (t_write_file(FAIL_DIR "verbose", "0") || t_write_file(FAIL_DIR "interval", "1") ||
	    t_write_file(FAIL_DIR "times", "-1") || t_write_file(FAIL_DIR "probability", "5"))
		T_FAIL("cannot arm %s", FAIL_DIR);

	for (r = 0; r < rounds; r++) {
		int kind = r & 1, k;
		unsigned char *dst = md[kind];
		struct ump_copy_desc d[NDESC];
		struct ump_wait w;
		uint64_t chain;

		for (uint64_t i = 0; i < BSZ; i++)
			ms[i] = T_SRC | t_mark(i, (unsigned int)r);
		memset(dst, 0, BSZ);
		memset(want, 0, BSZ);
		for (k = 0; k < NDESC; k++)
			d[k] = (struct ump_copy_desc){
			    .src = hs,
			    .dst = kind ? hi : hd,
			    .src_offset = (uint64_t)k * 65536 + (unsigned int)r % 13,
			    .dst_offset = (uint64_t)k * 131072 + (unsigned int)r % 5,
			    .length = 40000 + (uint64_t)k * 2777,
			};
		T_OK(ump_submit(&u, d, NDESC, 0, &chain));
		T_OK(ump_wait(&u, chain, UMP_TIMEOUT_INFINITE, &w));
		engine_seen[w.engine == UMP_ENGINE_DMA] = 1;
		if (w.status) {
			if (w.status != -ENOMEM && w.status != -EIO)
				T_FAIL("round %d: status %d", r, w.status);
			if (w.failed_index >= NDESC)
				T_FAIL("round %d: status %d at descriptor %u", r, w.status,
				       w.failed_index);
			failed[kind]++;
		} else {
			if (w.failed_index != NDESC)
				T_FAIL("round %d: done but failed_index %u", r, w.failed_index);
			ok[kind]++;
		}
		for (k = 0; k < (w.status ? (int)w.failed_index : NDESC); k++)
			memcpy(want + d[k].dst_offset, ms + d[k].src_offset, d[k].length);
		for (uint64_t i = 0; i < BSZ; i++) {
			const struct ump_copy_desc *f = &d[w.status ? w.failed_index : 0];
			/* The failing descriptor may have copied part of itself. */
			int in_failed =
			    w.status && i >= f->dst_offset && i < f->dst_offset + f->length;

			if (dst[i] == want[i] ||
			    (in_failed && dst[i] == ms[i - f->dst_offset + f->src_offset]))
				continue;
			T_FAIL("round %d (%s, status %d at %u): byte %llu is %#x, want %#x", r,
			       kind ? "import" : "host", w.status, w.failed_index,
			       (unsigned long long)i, dst[i], want[i]);
		}
	}
	T_OK(t_write_file(FAIL_DIR "probability", "0"));
	printf("fault_copy: host->host (%s) %d whole, %d failed cleanly; into an import (cpu) %d "
	       "whole, %d failed cleanly\n",
	       engine_seen[1] ? "dma" : "cpu", ok[0], failed[0], ok[1], failed[1]);
	/* Both outcomes where a fault can be, or the test proved nothing. */
	if (!ok[0] || !ok[1] || !failed[1] || !failed[0] != !engine_seen[1])
		T_FAIL("injection fired where nothing can fail, or never fired or never "
		       "spared a path");

	/* Disarmed: the same buffers copy cleanly. */
	struct ump_copy_desc one = {hs, hd, 0, 0, BSZ};

	T_OK(ump_copy_sync(&u, &one, 1));
	if (memcmp(ms, md[0], BSZ))
		T_FAIL("copy after disarming wrong");
	munmap(ms, BSZ);
	munmap(md[0], BSZ);
	munmap(md[1], BSZ);
	ump_close(&u);
	T_EXPECT(t_pool("buffers"), 0);
	T_EXPECT(t_pool("chains"), 0);
	return 0;
}
