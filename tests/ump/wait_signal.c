// SPDX-License-Identifier: MIT
/*
 * WAIT interrupted by signals: with SA_RESTART the kernel restarts it and
 * the waiter gets the chain's result as if nothing happened; without, WAIT
 * returns EINTR, reaps nothing, and a second WAIT gets the result. Either
 * way the timeout is absolute, so a restart never waits longer.
 */
#include <pthread.h>
#include <signal.h>
#include <sys/ioctl.h>

#include "ump_test.h"

#define T_LEN (16u << 20)
#define T_DESCS 16

static volatile sig_atomic_t hits;
static struct ump u;
static uint64_t chain;

struct waiter {
	int ret;
	volatile int done;
	struct ump_wait w;
};

static void on_signal(int sig)
{
	(void)sig;
	hits++;
}

static void *wait_raw(void *p)
{
	struct waiter *wt = p;

	wt->w = (struct ump_wait){.chain = chain, .timeout_ns = UMP_TIMEOUT_INFINITE};
	wt->ret = ioctl(u.fd, UMP_IOC_WAIT, &wt->w) ? -errno : 0;
	wt->done = 1;
	return NULL;
}

/* One chain, waited for by a thread that is signalled every 5 ms meanwhile. */
static struct waiter run(int flags, uint32_t hs, uint32_t hd)
{
	struct ump_copy_desc d[T_DESCS];
	struct sigaction sa = {.sa_handler = on_signal, .sa_flags = flags};
	struct waiter wt = {0};
	pthread_t th;
	int i;

	sigemptyset(&sa.sa_mask);
	T_REQUIRE(!sigaction(SIGUSR1, &sa, NULL));
	for (i = 0; i < T_DESCS; i++)
		d[i] = (struct ump_copy_desc){hs, hd, 0, 0, T_LEN};
	T_OK(ump_submit(&u, d, T_DESCS, 9, &chain));
	hits = 0;
	T_REQUIRE(!pthread_create(&th, NULL, wait_raw, &wt));
	for (i = 0; i < 2000 && !wt.done; i++) {
		usleep(5000);
		if (!wt.done)
			pthread_kill(th, SIGUSR1);
	}
	T_REQUIRE(!pthread_join(th, NULL));
	return wt;
}

int main(void)
{
	struct waiter wt;
	struct ump_wait w;
	uint32_t hs, hd;

	t_open(&u);
	T_OK(ump_alloc(&u, UMP_REGION_HOST(0), T_LEN, &hs));
	T_OK(ump_alloc(&u, UMP_REGION_HOST(0), T_LEN, &hd));

	wt = run(SA_RESTART, hs, hd);
	printf("wait_signal: SA_RESTART: %d signal(s) during WAIT; it returned %d, status %d, "
	       "%llu bytes\n",
	       (int)hits, wt.ret, wt.w.status, (unsigned long long)wt.w.bytes);
	if (wt.ret || wt.w.status || wt.w.user_data != 9 || wt.w.bytes != (uint64_t)T_DESCS * T_LEN)
		T_FAIL("a restarted WAIT did not report its chain");
	if (!hits)
		T_FAIL("no signal reached the waiter during the chain: nothing was tested");

	wt = run(0, hs, hd);
	printf("wait_signal: no SA_RESTART: WAIT returned %s after %d signal(s)\n",
	       wt.ret == -EINTR ? "EINTR"
	       : wt.ret		? strerror(-wt.ret)
				: "the result",
	       (int)hits);
	if (wt.ret && wt.ret != -EINTR)
		T_FAIL("an interrupted WAIT: %s", strerror(-wt.ret));
	/* Interrupted or not, the chain is still there to reap, once. */
	if (wt.ret == -EINTR) {
		T_OK(ump_wait(&u, chain, UMP_TIMEOUT_INFINITE, &w));
		if (w.status || w.bytes != (uint64_t)T_DESCS * T_LEN)
			T_FAIL("the WAIT after EINTR: status %d", w.status);
	}
	T_EXPECT(ump_wait(&u, chain, UMP_TIMEOUT_INFINITE, &w), -ENOENT);
	ump_close(&u);
	return 0;
}
