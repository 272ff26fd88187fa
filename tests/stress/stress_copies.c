// SPDX-License-Identifier: MIT
/*
 * The hardware-lab copy stress: 8 processes at once copy between every pair
 * of regions (host nodes, P2P memory, udmabuf, dma-heap) with sizes from
 * 1 byte to 16 MiB, in chains of up to 64 descriptors submitted alternately
 * through ioctls and io_uring, until together they have done at least
 * 1,000,000 copies and 10 GiB (times UMP_STRESS_COPIES_SCALE where set, else
 * UMP_STRESS_SCALE).
 *
 * Every buffer starts with dmatest-style position marks and has a shadow in
 * ordinary memory to which each chain is applied with memmove in the same
 * order. After each chain the touched destination ranges are compared with
 * the shadow, and every 128 chains (and at the end) every buffer is compared
 * whole: an uncopied, over-copied, displaced byte or a modified source
 * anywhere shows up as a mismatch.
 */
#include <signal.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <ump/libump-uring.h>

#include "regions.h"

#define NPROC 8
#define CHAIN_MAX 64
#define BIG (16u << 20)

struct totals {
	_Atomic unsigned long long copies, bytes, chains, ring_chains;
	_Atomic int stop;
};

struct rbuf {
	struct t_buf b;
	unsigned char *shadow;
	uint64_t max_copy;
	const char *name;
};

static uint64_t rng_state;
static uint64_t rnd(void)
{
	uint64_t x = rng_state;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return rng_state = x;
}

/* Log-uniform in [1, max]: every size class gets its share. */
static uint64_t rnd_size(uint64_t max)
{
	unsigned int bits = 0;
	uint64_t lo, hi;

	while ((1ull << bits) < max)
		bits++;
	bits = (unsigned int)(rnd() % (bits + 1));
	lo = bits ? 1ull << (bits - 1) : 1;
	hi = 1ull << bits;
	if (hi > max)
		hi = max;
	return lo + rnd() % (hi - lo + 1);
}

static int worker(int id, struct totals *tot, uint64_t want_copies, uint64_t want_bytes)
{
	struct t_region r[24];
	struct rbuf rb[24];
	struct ump_copy_desc d[CHAIN_MAX];
	struct io_uring ring;
	struct ump u;
	int nr, i, have_ring;
	unsigned long long chains = 0;

	rng_state = 0x9e3779b97f4a7c15ull * (uint64_t)(id + 1);
	t_open(&u);
	have_ring = io_uring_queue_init(8, &ring, 0) == 0;
	nr = t_regions(&u, r, 24);
	for (i = 0; i < nr; i++) {
		/* P2P memory is a small BAR shared by all workers, and slow. */
		uint64_t size = r[i].kind == T_P2P ? (2u << 20) : BIG + 65536;

		t_buf_new(&u, &r[i], size, &rb[i].b);
		rb[i].name = r[i].name;
		rb[i].max_copy = r[i].kind == T_P2P ? 65536 : BIG;
		rb[i].shadow = malloc(rb[i].b.size);
		if (!rb[i].shadow)
			T_FAIL("malloc shadow");
		t_fill(rb[i].b.map, rb[i].b.size, 0, rb[i].b.size, 1, (unsigned int)(id * 64 + i));
		memcpy(rb[i].shadow, rb[i].b.map, rb[i].b.size);
	}

	while (!atomic_load(&tot->stop)) {
		unsigned int n = 1 + (unsigned int)(rnd() % CHAIN_MAX), k;
		int si[CHAIN_MAX], di[CHAIN_MAX];
		unsigned long long bytes = 0;
		/* Big copies when the byte total lags the copy count. */
		int behind = (double)atomic_load(&tot->bytes) / (double)want_bytes <
			     (double)atomic_load(&tot->copies) / (double)want_copies;

		for (k = 0; k < n; k++) {
			struct rbuf *s, *t;
			uint64_t len, max;

			si[k] = (int)(rnd() % (uint64_t)nr);
			di[k] = (int)(rnd() % (uint64_t)nr);
			s = &rb[si[k]];
			t = &rb[di[k]];
			max = s->max_copy < t->max_copy ? s->max_copy : t->max_copy;
			len = behind && k == 0 ? max / 2 + rnd() % (max / 2) + 1
					       : rnd_size(max < 65536 ? max : 65536);
			if (len > max)
				len = max;
			d[k] = (struct ump_copy_desc){
			    .src = s->b.handle,
			    .dst = t->b.handle,
			    .src_offset = rnd() % (s->b.size - len + 1),
			    .dst_offset = rnd() % (t->b.size - len + 1),
			    .length = len,
			};
			bytes += len;
		}
		if (have_ring && (chains & 1)) {
			struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
			struct io_uring_cqe *cqe;

			ump_prep_submit(sqe, u.fd, d, n, chains);
			if (io_uring_submit_and_wait(&ring, 1) < 0 ||
			    io_uring_peek_cqe(&ring, &cqe))
				T_FAIL("ring submit");
			if (cqe->res)
				T_FAIL("ring chain: %s", strerror(-cqe->res));
			io_uring_cqe_seen(&ring, cqe);
			atomic_fetch_add(&tot->ring_chains, 1);
		} else {
			T_OK(ump_copy_sync(&u, d, n));
		}
		for (k = 0; k < n; k++)
			memmove(rb[di[k]].shadow + d[k].dst_offset,
				rb[si[k]].shadow + d[k].src_offset, d[k].length);
		for (k = 0; k < n; k++) {
			struct rbuf *t = &rb[di[k]];

			if (memcmp(t->b.map + d[k].dst_offset, t->shadow + d[k].dst_offset,
				   d[k].length))
				T_FAIL("worker %d chain %llu desc %u: %s->%s len %llu wrong", id,
				       chains, k, rb[si[k]].name, t->name,
				       (unsigned long long)d[k].length);
		}
		if (++chains % 128 == 0 || atomic_load(&tot->stop))
			for (i = 0; i < nr; i++)
				if (memcmp(rb[i].b.map, rb[i].shadow, rb[i].b.size))
					T_FAIL("worker %d: %s differs from its shadow", id,
					       rb[i].name);
		atomic_fetch_add(&tot->copies, n);
		atomic_fetch_add(&tot->bytes, bytes);
		atomic_fetch_add(&tot->chains, 1);
		if (atomic_load(&tot->copies) >= want_copies &&
		    atomic_load(&tot->bytes) >= want_bytes)
			atomic_store(&tot->stop, 1);
	}
	for (i = 0; i < nr; i++) {
		if (memcmp(rb[i].b.map, rb[i].shadow, rb[i].b.size))
			T_FAIL("worker %d: %s differs at the end", id, rb[i].name);
		t_buf_free(&u, &rb[i].b);
		free(rb[i].shadow);
	}
	if (have_ring)
		io_uring_queue_exit(&ring);
	ump_close(&u);
	return 0;
}

int main(void)
{
	const char *sc = getenv("UMP_STRESS_COPIES_SCALE");
	double scale;
	uint64_t want_copies, want_bytes;
	struct totals *tot;
	uint64_t t0 = ump_now_ns();
	int i, status, failed = 0;
	pid_t pids[NPROC];

	if (!sc || !*sc)
		sc = getenv("UMP_STRESS_SCALE");
	scale = sc && *sc ? atof(sc) : 1.0;
	want_copies = (uint64_t)(1000000 * scale);
	want_bytes = (uint64_t)(10.0 * (1ull << 30) * scale);
	struct ump probe;

	t_open(&probe);
	ump_close(&probe);
	tot = mmap(NULL, sizeof(*tot), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (tot == MAP_FAILED)
		T_FAIL("mmap");
	memset(tot, 0, sizeof(*tot));
	for (i = 0; i < NPROC; i++) {
		pids[i] = fork();
		if (pids[i] == 0)
			_exit(worker(i, tot, want_copies, want_bytes));
	}
	for (i = 0; i < NPROC; i++) {
		waitpid(pids[i], &status, 0);
		if (!WIFEXITED(status) || WEXITSTATUS(status)) {
			failed++;
			atomic_store(&tot->stop, 1);
		}
	}
	printf("stress_copies: %d processes, %llu copies, %.2f GiB in %llu chains (%llu via "
	       "io_uring), %.1f s\n",
	       NPROC, (unsigned long long)tot->copies, (double)tot->bytes / (1ull << 30),
	       (unsigned long long)tot->chains, (unsigned long long)tot->ring_chains,
	       (double)(ump_now_ns() - t0) / 1e9);
	if (failed)
		T_FAIL("%d worker(s) failed", failed);
	if (tot->copies < want_copies || tot->bytes < want_bytes)
		T_FAIL("stopped short of the targets");
	return 0;
}
