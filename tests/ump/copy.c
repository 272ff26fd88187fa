// SPDX-License-Identifier: MIT
/*
 * Copies of every size class and alignment between every pair of regions,
 * each verified byte for byte with dmatest-style marks: destination bytes
 * outside the range untouched, inside equal to the source, source unchanged.
 */
#include "regions.h"

/* The module copies in 1 MiB slices: the last two classes cross slices. */
static const uint64_t sizes[] = {1, 3, 64, 4095, 4096, 4097, 65539, (1 << 20) + 5, 4 << 20};
static const uint64_t aligns[] = {0, 1, 63, 4095};

/*
 * Which alignment pairs a size class tries. Head and tail handling shows in
 * the small classes, which try all sixteen; the large ones cost minutes of
 * byte checks on the debug guest and try fewer: the same alignment on both
 * sides and a shift by one class, then only aligned and most misaligned.
 */
static int t_pair_tried(uint64_t n, size_t sa, size_t da)
{
	if (n < (1 << 20))
		return 1;
	if (n < (4 << 20))
		return da == sa || da == (sa + 1) % 4;
	return (sa == 0 && da == 0) || (sa == 1 && da == 3);
}

int main(void)
{
	struct t_region r[24];
	struct ump u;
	int nr, a, b, copies = 0;
	unsigned int seed = 1;
	size_t si, sa, da;

	t_open(&u);
	nr = t_regions(&u, r, 24);
	int stale = 0;

	for (a = 0; a < nr; a++)
		if (r[a].kind == T_UDMABUF && (stale = t_udmabuf_reads_stale()))
			printf("udmabuf loses CPU writes across its own DMA_BUF_IOCTL_SYNC "
			       "(swiotlb=force?): not used as a source (regions.h)\n");
	printf("regions:");
	for (a = 0; a < nr; a++)
		printf(" %s", r[a].name);
	printf("\n");

	for (si = 0; si < sizeof(sizes) / sizeof(sizes[0]); si++) {
		uint64_t n = sizes[si], bsz = n + 4096 + 4096;

		for (a = 0; a < nr; a++) {
			for (b = 0; b < nr; b++) {
				struct t_buf src, dst;

				if (bsz > r[a].max_size || bsz > r[b].max_size ||
				    (stale && r[a].kind == T_UDMABUF))
					continue;
				t_buf_new(&u, &r[a], bsz, &src);
				t_buf_new(&u, &r[b], bsz, &dst);
				for (sa = 0; sa < 4; sa++) {
					for (da = 0; da < 4; da++) {
						struct ump_copy_desc d = {
						    .src = src.handle,
						    .dst = dst.handle,
						    .src_offset = aligns[sa],
						    .dst_offset = aligns[da],
						    .length = n,
						};
						long long bad;

						if (!t_pair_tried(n, sa, da))
							continue;
						seed++;
						t_fill(src.map, src.size, d.src_offset,
						       d.src_offset + n, 1, seed);
						t_fill(dst.map, dst.size, ~0ull, 0, 0, seed + 7);
						T_OK(ump_copy_sync(&u, &d, 1));
						bad = t_check_dst(dst.map, dst.size, d.dst_offset,
								  d.src_offset, n, seed, seed + 7);
						if (bad >= 0)
							T_FAIL("%s->%s n=%llu soff=%llu doff=%llu: "
							       "dst byte %lld wrong",
							       r[a].name, r[b].name,
							       (unsigned long long)n,
							       (unsigned long long)d.src_offset,
							       (unsigned long long)d.dst_offset,
							       bad);
						bad = t_check_src(src.map, src.size, d.src_offset,
								  n, seed);
						if (bad >= 0)
							T_FAIL("%s->%s: source byte %lld modified",
							       r[a].name, r[b].name, bad);
						copies++;
					}
				}
				t_buf_free(&u, &src);
				t_buf_free(&u, &dst);
			}
		}
	}
	ump_close(&u);
	printf("copy: %d verified copies across %d regions\n", copies, nr);
	return 0;
}
