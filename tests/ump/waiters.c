// SPDX-License-Identifier: MIT
/*
 * Two threads waiting on one chain both wake when it completes, each with
 * its result (or -ENOENT, when the other had already reaped it before this
 * one looked it up). A completion that woke only one waiter left the other
 * asleep until a signal.
 */
#include <pthread.h>
#include <time.h>

#include "ump_test.h"

#define T_LEN (16u << 20)

struct waiter {
	struct ump *u;
	uint64_t chain;
	int ret;
	int status;
	volatile int done;
};

static void *wait_chain(void *arg)
{
	struct waiter *w = arg;
	struct ump_wait r = {0};

	w->ret = ump_wait(w->u, w->chain, UMP_TIMEOUT_INFINITE, &r);
	w->status = r.status;
	w->done = 1;
	return NULL;
}

int main(void)
{
	struct ump_copy_desc d[48];
	struct waiter w[2];
	pthread_t th[2];
	uint32_t hs, hd;
	struct ump u;
	int i, got = 0;

	t_open(&u);
	T_OK(ump_alloc(&u, UMP_REGION_HOST(0), T_LEN, &hs));
	T_OK(ump_alloc(&u, UMP_REGION_HOST(t_nr_nodes(&u) - 1), T_LEN, &hd));
	/* Long enough (768 MiB) that both threads are asleep before it ends. */
	for (i = 0; i < 48; i++)
		d[i] = (struct ump_copy_desc){hs, hd, 0, 0, T_LEN};
	for (int round = 0; round < 3; round++) {
		time_t start = time(NULL);

		T_OK(ump_submit(&u, d, 48, 7, &w[0].chain));
		for (i = 0; i < 2; i++) {
			w[i].u = &u;
			w[i].chain = w[0].chain;
			w[i].done = 0;
			T_REQUIRE(!pthread_create(&th[i], NULL, wait_chain, &w[i]));
		}
		/* Both must return well within the 30 s a chain takes at worst here. */
		while ((!w[0].done || !w[1].done) && time(NULL) - start < 60)
			usleep(10000);
		if (!w[0].done || !w[1].done)
			T_FAIL("round %d: a waiter still asleep 60 s after the chain was submitted "
			       "(waiters done: %d %d)",
			       round, w[0].done, w[1].done);
		for (i = 0; i < 2; i++) {
			pthread_join(th[i], NULL);
			if (w[i].ret == 0 && w[i].status == 0)
				got++;
			else if (w[i].ret != -ENOENT)
				T_FAIL("round %d: waiter %d: ret %d status %d", round, i, w[i].ret,
				       w[i].status);
		}
		/* Reaped: nothing is left to wait on. */
		T_EXPECT(ump_wait(&u, w[0].chain, UMP_TIMEOUT_INFINITE, &(struct ump_wait){0}),
			 -ENOENT);
	}
	if (got < 3)
		T_FAIL("%d results in 3 rounds", got);
	ump_close(&u);
	printf("waiters: two waiters per chain both woke, three rounds\n");
	return 0;
}
