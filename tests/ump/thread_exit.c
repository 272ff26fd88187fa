// SPDX-License-Identifier: MIT
/*
 * A chain belongs to its file and its process, not to the thread that
 * submitted it: a thread that submits and exits leaves the chain running to
 * completion for the thread that waits. (A killed process, and a closed
 * file, still cancel it: stress_kill and chain cover those.)
 */
#include <pthread.h>

#include "ump_test.h"

#define T_LEN (16u << 20)
#define T_DESCS 32

struct submitter {
	struct ump *u;
	struct ump_copy_desc *d;
	uint64_t chain;
	int ret;
};

static void *submit_and_exit(void *arg)
{
	struct submitter *s = arg;

	s->ret = ump_submit(s->u, s->d, T_DESCS, 5, &s->chain);
	return NULL;
}

int main(void)
{
	struct ump_copy_desc d[T_DESCS];
	struct submitter s;
	unsigned char *md;
	struct ump_wait w;
	uint32_t hs, hd;
	pthread_t th;
	struct ump u;
	int i;

	t_open(&u);
	T_OK(ump_alloc(&u, UMP_REGION_HOST(0), T_LEN, &hs));
	T_OK(ump_alloc(&u, UMP_REGION_HOST(t_nr_nodes(&u) - 1), T_DESCS * 4096, &hd));
	T_OK(ump_mmap(&u, hd, T_DESCS * 4096, (void **)&md));
	/* Each descriptor first copies 16 MiB within the source, then one page out. */
	for (i = 0; i < T_DESCS; i += 2) {
		d[i] = (struct ump_copy_desc){hs, hs, 0, 0, T_LEN};
		d[i + 1] = (struct ump_copy_desc){hs, hd, 0, (uint64_t)i * 4096, 4096};
	}
	for (int round = 0; round < 3; round++) {
		memset(md, 0xee, T_DESCS * 4096);
		s = (struct submitter){&u, d, 0, 0};
		T_REQUIRE(!pthread_create(&th, NULL, submit_and_exit, &s));
		pthread_join(th, NULL);
		T_OK(s.ret);
		T_OK(ump_wait(&u, s.chain, UMP_TIMEOUT_INFINITE, &w));
		if (w.status || w.failed_index != T_DESCS)
			T_FAIL("round %d: the submitting thread exited and the chain stopped: "
			       "status %d at descriptor %u of %d",
			       round, w.status, w.failed_index, T_DESCS);
		for (i = 0; i < T_DESCS; i += 2)
			if (md[i * 4096] != 0)
				T_FAIL("round %d: descriptor %d did not copy", round, i + 1);
	}
	ump_close(&u);
	printf("thread_exit: chains outlive the thread that submitted them\n");
	return 0;
}
