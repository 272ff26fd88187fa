// SPDX-License-Identifier: MIT
/*
 * ho_pool, both backends that this machine offers: the user-space fallback
 * always, ump when /dev/ump exists (the QEMU guests run this program too).
 * Buffers are zeroed and their pages sit on the node asked for (checked
 * with get_mempolicy, page by page); chains of copies behave as in-order
 * memmoves; a shared fd maps the same memory; bad arguments are refused.
 * Copy queues: every path there is here (the copy thread; io_uring and
 * ioctl with ump) keeps chains in flight up to its depth, hands back each
 * completion once with its tag and status, and counts in ump.ko's figures.
 */
#include <errno.h>
#include <numa.h>
#include <numaif.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <heteroopt/pool.h>

#include "test_util.h"

static void check_pool(struct ho_pool *p)
{
	const size_t size = (1 << 20) + 5;
	struct ho_pool_buf b[2], bad;
	struct ho_pool_copy c[70];
	unsigned char *model;
	int nodes = ho_pool_nodes(p);

	printf("pool: %s\n", ho_pool_describe(p));
	T_REQUIRE(nodes >= 1);
	for (int node = 0; node < nodes; node++) {
		struct ho_pool_buf x;

		T_REQUIRE(ho_pool_alloc(p, size, node, &x) == 0);
		T_REQUIRE(x.size >= size && x.size % 4096 == 0 && x.node == node);
		for (size_t i = 0; i < x.size; i++)
			T_REQUIRE(((unsigned char *)x.ptr)[i] == 0);
		if (numa_available() >= 0) {
			for (size_t off = 0; off < x.size; off += 64 * 4096) {
				int actual = -1;

				T_REQUIRE(get_mempolicy(&actual, NULL, 0, (char *)x.ptr + off,
							MPOL_F_NODE | MPOL_F_ADDR) == 0);
				if (actual != node) {
					fprintf(stderr, "FAIL: page at +%zu on node %d, asked %d\n",
						off, actual, node);
					exit(1);
				}
			}
		}
		ho_pool_free(p, &x);
		printf("node %d: placement verified\n", node);
	}

	T_REQUIRE(ho_pool_alloc(p, 0, 0, &bad) == -EINVAL);
	T_REQUIRE(ho_pool_alloc(p, 4096, -1, &bad) == -EINVAL);
	T_REQUIRE(ho_pool_alloc(p, 4096, nodes, &bad) == -EINVAL);

	/* 70 copies (more than one kernel chain), some overlapping in place. */
	T_REQUIRE(ho_pool_alloc(p, 65536, 0, &b[0]) == 0);
	T_REQUIRE(ho_pool_alloc(p, 65536, nodes - 1, &b[1]) == 0);
	model = malloc(2 * 65536);
	T_REQUIRE(model);
	for (int i = 0; i < 65536; i++)
		((unsigned char *)b[0].ptr)[i] = (unsigned char)(i * 7 + 1);
	memcpy(model, b[0].ptr, 65536);
	memset(model + 65536, 0, 65536);
	srand(3);
	for (int i = 0; i < 70; i++) {
		int s = rand() % 2, d = rand() % 2;
		size_t len = 1 + (size_t)(rand() % 5000);

		c[i] = (struct ho_pool_copy){&b[s], &b[d], (size_t)rand() % (65536 - len),
					     (size_t)rand() % (65536 - len), len};
		memmove(model + d * 65536 + c[i].dst_off, model + s * 65536 + c[i].src_off, len);
	}
	T_REQUIRE(ho_pool_copy(p, c, 70) == 0);
	T_REQUIRE(!memcmp(b[0].ptr, model, 65536));
	T_REQUIRE(!memcmp(b[1].ptr, model + 65536, 65536));

	c[0] = (struct ho_pool_copy){&b[0], &b[1], 65000, 0, 1000};
	T_REQUIRE(ho_pool_copy(p, c, 1) == -ERANGE);
	c[0].len = 0;
	T_REQUIRE(ho_pool_copy(p, c, 1) == -EINVAL);

	/* The shared fd maps the same memory, both ways. */
	{
		int fd = ho_pool_share_fd(p, &b[1]);
		unsigned char *m;

		T_REQUIRE(fd >= 0);
		m = mmap(NULL, 65536, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		T_REQUIRE(m != MAP_FAILED);
		T_REQUIRE(!memcmp(m, b[1].ptr, 65536));
		m[100] ^= 0xff;
		T_REQUIRE(((unsigned char *)b[1].ptr)[100] == m[100]);
		munmap(m, 65536);
		close(fd);
	}
	/* An import of that fd is the same memory, and copies go through it. */
	{
		int fd = ho_pool_share_fd(p, &b[0]), pfd[2];
		struct ho_pool_buf imp;

		T_REQUIRE(fd >= 0);
		T_REQUIRE(ho_pool_import(p, fd, &imp) == 0);
		close(fd); /* the import holds its own reference */
		T_REQUIRE(imp.size >= 65536 && imp.ptr != b[0].ptr);
		T_REQUIRE(!memcmp(imp.ptr, b[0].ptr, 65536));
		((unsigned char *)imp.ptr)[5] ^= 0x5a;
		T_REQUIRE(((unsigned char *)b[0].ptr)[5] == ((unsigned char *)imp.ptr)[5]);
		c[0] = (struct ho_pool_copy){&imp, &b[1], 0, 4096, 4096};
		T_REQUIRE(ho_pool_copy(p, c, 1) == 0);
		T_REQUIRE(!memcmp((unsigned char *)b[1].ptr + 4096, b[0].ptr, 4096));
		ho_pool_free(p, &imp);
		T_REQUIRE(ho_pool_import(p, -1, &imp) == -EBADF);
		T_REQUIRE(pipe(pfd) == 0);
		T_REQUIRE(ho_pool_import(p, pfd[0], &imp) < 0); /* nothing to map */
		close(pfd[0]);
		close(pfd[1]);
	}
	ho_pool_free(p, &b[0]);
	ho_pool_free(p, &b[1]);
	free(model);
}

/* Is every tag 0..n-1 seen once, with status 0 except bad's (-ERANGE)? */
static void check_done(const struct ho_pool_done *d, int n, int bad)
{
	unsigned char seen[64] = {0};

	for (int i = 0; i < n; i++) {
		T_REQUIRE(d[i].tag < 64 && !seen[d[i].tag]);
		seen[d[i].tag] = 1;
		T_REQUIRE(d[i].status == ((int)d[i].tag == bad ? -ERANGE : 0));
	}
}

static void check_queue(struct ho_pool *p, unsigned int flags, const char *path)
{
	const size_t len = 64 * 1024, n = 16;
	struct ho_pool_buf src, dst;
	struct ho_pool_copy c[16];
	struct ho_pool_done d[64];
	struct ho_pool_stats st0, st1;
	struct ho_pool_queue *q;
	bool counted = !ho_pool_stats(p, &st0);
	int got = 0, r;

	T_REQUIRE(counted == ho_pool_is_ump(p));
	T_REQUIRE(ho_pool_queue_open(p, 0, flags, &q) == -EINVAL);
	T_REQUIRE(ho_pool_queue_open(p, HO_POOL_QUEUE_MAX_DEPTH + 1, flags, &q) == -EINVAL);
	T_REQUIRE(ho_pool_queue_open(p, 4, 0x80, &q) == -EINVAL);
	T_REQUIRE(ho_pool_queue_open(p, 8, flags, &q) == 0);
	printf("queue: %s\n", ho_pool_queue_path(q));
	T_REQUIRE(!strcmp(ho_pool_queue_path(q), path));
	T_REQUIRE(ho_pool_alloc(p, n * len, 0, &src) == 0);
	T_REQUIRE(ho_pool_alloc(p, n * len, ho_pool_nodes(p) - 1, &dst) == 0);
	for (size_t i = 0; i < n * len; i++)
		((unsigned char *)src.ptr)[i] = (unsigned char)(i * 13 + i / 4096);
	for (size_t i = 0; i < n; i++)
		c[i] = (struct ho_pool_copy){&src, &dst, i * len, (n - 1 - i) * len, len};

	/* Eight in flight (chain 3 out of range), the ninth refused. */
	c[3].len = n * len;
	for (int i = 0; i < 8; i++)
		T_REQUIRE(ho_pool_submit(q, &c[i], 1, (uint64_t)i) == 0);
	T_REQUIRE(ho_pool_submit(q, &c[8], 1, 8) == -EBUSY);
	T_REQUIRE(ho_pool_queue_in_flight(q) == 8);
	T_REQUIRE(ho_pool_queue_copy(q, &c[8], 1) == -EBUSY);
	T_REQUIRE(ho_pool_flush(q) == 0);
	while (got < 8) {
		r = ho_pool_reap(q, d + got, 3, 1);
		T_REQUIRE(r >= 1 && r <= 3);
		got += r;
	}
	check_done(d, got, 3);
	T_REQUIRE(ho_pool_queue_in_flight(q) == 0 && ho_pool_reap(q, d, 4, 1) == 0);
	c[3].len = len;

	/* Then the other eight, as two chains of four; one synchronous copy. */
	for (int i = 0; i < 2; i++)
		T_REQUIRE(ho_pool_submit(q, &c[8 + 4 * i], 4, (uint64_t)i) == 0);
	for (got = 0; got < 2;) {
		r = ho_pool_reap(q, d + got, 8, 1);
		T_REQUIRE(r >= 1);
		got += r;
	}
	check_done(d, got, -1);
	T_REQUIRE(ho_pool_queue_copy(q, &c[3], 1) == 0);
	for (size_t i = 0; i < n; i++)
		T_REQUIRE(
		    !memcmp((char *)dst.ptr + (n - 1 - i) * len, (char *)src.ptr + i * len, len));
	if (counted) {
		/* 8 + 2 + 1 chains; only this program uses the module here. */
		T_REQUIRE(ho_pool_stats(p, &st1) == 0);
		printf("ump.ko: %llu chains, %llu bytes more\n",
		       (unsigned long long)(st1.chains[0] + st1.chains[1] - st0.chains[0] -
					    st0.chains[1]),
		       (unsigned long long)(st1.bytes[0] + st1.bytes[1] - st0.bytes[0] -
					    st0.bytes[1]));
		T_REQUIRE(st1.chains[0] + st1.chains[1] - st0.chains[0] - st0.chains[1] == 11);
		T_REQUIRE(st1.errors - st0.errors == 1);
	}

	/* Closing with chains in flight waits for them. */
	memset(dst.ptr, 0, n * len);
	for (int i = 0; i < 8; i++)
		T_REQUIRE(ho_pool_submit(q, &c[2 * i], 2, (uint64_t)i) == 0);
	ho_pool_queue_close(q);
	for (size_t i = 0; i < n; i++)
		T_REQUIRE(
		    !memcmp((char *)dst.ptr + (n - 1 - i) * len, (char *)src.ptr + i * len, len));
	ho_pool_free(p, &src);
	ho_pool_free(p, &dst);
}

int main(void)
{
	struct ho_pool *p;

	T_REQUIRE(ho_pool_open(HO_POOL_FALLBACK, &p) == 0);
	T_REQUIRE(!ho_pool_is_ump(p));
	check_pool(p);
	check_queue(p, 0, "copy thread");
	check_queue(p, HO_POOL_QUEUE_IOCTL, "copy thread");
	ho_pool_close(p);

	T_REQUIRE(ho_pool_open(0, &p) == 0);
	if (access("/dev/ump", F_OK) == 0)
		T_REQUIRE(ho_pool_is_ump(p));
	else
		T_REQUIRE(!ho_pool_is_ump(p) && strstr(ho_pool_describe(p), "not present"));
	check_pool(p);
	if (ho_pool_is_ump(p)) {
		check_queue(p, 0, "io_uring");
		check_queue(p, HO_POOL_QUEUE_IOCTL, "ioctl");
	}
	ho_pool_close(p);
	printf("test_pool: ok\n");
	return t_failures ? 1 : 0;
}
