// SPDX-License-Identifier: MIT
/*
 * ho_pool, both backends that this machine offers: the user-space fallback
 * always, ump when /dev/ump exists (the QEMU guests run this program too).
 * Buffers are zeroed and their pages sit on the node asked for (checked
 * with get_mempolicy, page by page); chains of copies behave as in-order
 * memmoves; a shared fd maps the same memory; bad arguments are refused.
 */
#include <errno.h>
#include <numa.h>
#include <numaif.h>
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

int main(void)
{
	struct ho_pool *p;

	T_REQUIRE(ho_pool_open(HO_POOL_FALLBACK, &p) == 0);
	T_REQUIRE(!ho_pool_is_ump(p));
	check_pool(p);
	ho_pool_close(p);

	T_REQUIRE(ho_pool_open(0, &p) == 0);
	if (access("/dev/ump", F_OK) == 0)
		T_REQUIRE(ho_pool_is_ump(p));
	else
		T_REQUIRE(!ho_pool_is_ump(p) && strstr(ho_pool_describe(p), "not present"));
	check_pool(p);
	ho_pool_close(p);
	printf("test_pool: ok\n");
	return t_failures ? 1 : 0;
}
