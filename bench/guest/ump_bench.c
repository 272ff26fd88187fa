// SPDX-License-Identifier: MIT
/*
 * ump benchmarks, run inside the QEMU guest by bench/run.sh: copy bandwidth
 * by size through ump against memcpy between the same two mappings, and
 * chains per second submitted one ioctl per chain against io_uring batches
 * of 64. Each figure is the median of several runs measured in this run.
 */
#include <sys/mman.h>
#include <ump/libump-uring.h>

#include "ump_test.h"

#define REPS 7

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return v[n / 2];
}

static void bandwidth(struct ump *u, int dst_node)
{
	static const uint64_t sizes[] = {4096, 65536, 1 << 20, 16 << 20};
	const uint64_t total = 64ull << 20; /* bytes moved per measurement */
	unsigned char *ms, *md;
	uint32_t hs, hd;
	size_t i;

	T_OK(ump_alloc(u, UMP_REGION_HOST(0), 16 << 20, &hs));
	T_OK(ump_alloc(u, UMP_REGION_HOST(dst_node), 16 << 20, &hd));
	T_OK(ump_mmap(u, hs, 16 << 20, (void **)&ms));
	T_OK(ump_mmap(u, hd, 16 << 20, (void **)&md));
	memset(ms, 0x5a, 16 << 20);
	memset(md, 0, 16 << 20);
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		uint64_t n = sizes[i], iters = total / n, k;
		/* Many descriptors per chain so the syscall is not what we time. */
		unsigned int per = (unsigned int)(iters < 256 ? iters : 256);
		struct ump_copy_desc d[256];
		double vu[REPS], vm[REPS];
		int r;

		for (k = 0; k < per; k++)
			d[k] = (struct ump_copy_desc){hs, hd, (k * n) % (16 << 20),
						      (k * n) % (16 << 20), n};
		for (r = 0; r < REPS; r++) {
			uint64_t t0 = ump_now_ns();

			for (k = 0; k < iters; k += per)
				T_OK(ump_copy_sync(u, d, per));
			vu[r] = (double)total / (double)(ump_now_ns() - t0);
			t0 = ump_now_ns();
			for (k = 0; k < iters; k++)
				memcpy(md + (k * n) % (16 << 20), ms + (k * n) % (16 << 20), n);
			vm[r] = (double)total / (double)(ump_now_ns() - t0);
		}
		printf("copy host0->host%d %8llu B: ump %6.2f GB/s  memcpy %6.2f GB/s  ratio %.2fx "
		       " [median of %d]\n",
		       dst_node, (unsigned long long)n, median(vu, REPS), median(vm, REPS),
		       median(vu, REPS) / median(vm, REPS), REPS);
	}
	munmap(ms, 16 << 20);
	munmap(md, 16 << 20);
	T_OK(ump_free(u, hs));
	T_OK(ump_free(u, hd));
}

static void chain_rate(struct ump *u)
{
	const int nchains = 20000, batch = 64;
	struct ump_copy_desc d;
	struct io_uring ring;
	double vi[REPS], vr[REPS];
	uint32_t hs, hd;
	int r, i;

	T_OK(ump_alloc(u, UMP_REGION_HOST(0), 4096, &hs));
	T_OK(ump_alloc(u, UMP_REGION_HOST(0), 4096, &hd));
	d = (struct ump_copy_desc){hs, hd, 0, 0, 64};
	T_OK(io_uring_queue_init(batch, &ring, 0));
	for (r = 0; r < REPS; r++) {
		uint64_t t0 = ump_now_ns();

		for (i = 0; i < nchains; i++)
			T_OK(ump_copy_sync(u, &d, 1));
		vi[r] = nchains / ((double)(ump_now_ns() - t0) / 1e9);

		t0 = ump_now_ns();
		for (i = 0; i < nchains; i += batch) {
			struct io_uring_cqe *cqe;
			int k;

			for (k = 0; k < batch; k++)
				ump_prep_submit(io_uring_get_sqe(&ring), u->fd, &d, 1, (uint64_t)k);
			if (io_uring_submit_and_wait(&ring, (unsigned int)batch) < 0)
				T_FAIL("ring");
			for (k = 0; k < batch; k++) {
				if (io_uring_wait_cqe(&ring, &cqe) || cqe->res)
					T_FAIL("cqe");
				io_uring_cqe_seen(&ring, cqe);
			}
		}
		vr[r] = nchains / ((double)(ump_now_ns() - t0) / 1e9);
	}
	printf("chains/s (1 x 64 B): ioctl submit+wait %8.0f  io_uring batches of %d %8.0f  ratio "
	       "%.2fx  [median of %d]\n",
	       median(vi, REPS), batch, median(vr, REPS), median(vr, REPS) / median(vi, REPS),
	       REPS);
	io_uring_queue_exit(&ring);
	T_OK(ump_free(u, hs));
	T_OK(ump_free(u, hd));
}

int main(void)
{
	struct ump u;

	t_open(&u);
	bandwidth(&u, 0);
	if (t_nr_nodes(&u) > 1)
		bandwidth(&u, 1);
	chain_rate(&u);
	ump_close(&u);
	return 0;
}
