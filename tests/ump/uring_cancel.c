// SPDX-License-Identifier: MIT
/*
 * io_uring chains when their ring or task goes away mid-copy: closing the
 * ring while the process lives, execve(), and SIGKILL: the chain stops at
 * once in all three, through cancelable uring_cmds on 6.7 and later, and on
 * 6.1 by the chain seeing its ring dying or its submitter in execve().
 * Before, a ring closed under a long chain left it running
 * (io_ring_exit_work warned after 300 s) and execve() blocked for the whole
 * chain; on 6.1 both then waited for the chain to end. A chain submitted
 * with IOSQE_ASYNC is set up by an io-wq worker, not the submitter: on 6.1
 * execve() still waited for it (6.7 s in the review) while the chain
 * looked for an execve() of the worker.
 */
#include <sys/utsname.h>
#include <sys/wait.h>
#include <ump/libump-uring.h>

#include "ump_test.h"

#define T_LEN (16u << 20)
#define T_DESCS 192 /* 3 GiB: seconds of copying in the guest */

static struct ump_copy_desc d[T_DESCS];

static long long live_chains(void)
{
	return t_pool("chains");
}

static double now_s(void)
{
	return (double)ump_now_ns() / 1e9;
}

static void uring_submit(struct ump *u, struct io_uring *ring, unsigned int sqe_flags)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);

	T_REQUIRE(sqe);
	ump_prep_submit(sqe, u->fd, d, T_DESCS, 1);
	sqe->flags |= sqe_flags;
	T_REQUIRE(io_uring_submit(ring) == 1);
}

/* Seconds until no chain is live, at most limit. */
static double drain(double limit)
{
	double t0 = now_s();

	while (live_chains() && now_s() - t0 < limit)
		usleep(5000);
	return now_s() - t0;
}

static int kernel_cancels(void)
{
	struct utsname un;
	int major = 0, minor = 0;

	uname(&un);
	sscanf(un.release, "%d.%d", &major, &minor);
	return major > 6 || (major == 6 && minor >= 7);
}

int main(void)
{
	struct io_uring ring;
	double full, t, bound;
	uint32_t hs, hd;
	struct ump u;
	int i, ret, st;
	int cancels = kernel_cancels();

	t_open(&u);
	ret = io_uring_queue_init(8, &ring, 0);
	if (ret)
		T_SKIPPED("io_uring_queue_init: %s", strerror(-ret));
	T_OK(ump_alloc(&u, UMP_REGION_HOST(0), T_LEN, &hs));
	T_OK(ump_alloc(&u, UMP_REGION_HOST(t_nr_nodes(&u) - 1), T_LEN, &hd));
	for (i = 0; i < T_DESCS; i++)
		d[i] = (struct ump_copy_desc){hs, hd, 0, 0, T_LEN};
	t = now_s();
	T_OK(ump_copy_sync(&u, d, T_DESCS));
	full = now_s() - t;
	/* Stopped at once: well under the whole chain's time. */
	bound = full / 3;
	printf("uring_cancel: the whole chain takes %.2f s; kernel %s cancelable uring_cmds\n",
	       full, cancels ? "has" : "lacks");

	/* The ring closed while the process lives. */
	uring_submit(&u, &ring, 0);
	usleep(20000);
	io_uring_queue_exit(&ring);
	t = drain(60);
	printf("uring_cancel: ring closed: chain gone after %.2f s\n", t);
	if (t > bound)
		T_FAIL("ring closed mid-chain: the chain ran on for %.2f s (bound %.2f)", t, bound);

	/* execve() (set up inline and by io-wq) and SIGKILL with a chain in flight. */
	for (int step = 0; step < 3; step++) {
		static const char *const what[] = {"execve", "execve (IOSQE_ASYNC)", "SIGKILL"};
		unsigned int sqe_flags = step == 1 ? IOSQE_ASYNC : 0;
		int kill_it = step == 2;
		int p[2];
		char c;
		pid_t pid;

		T_REQUIRE(!pipe(p));
		pid = fork();
		T_REQUIRE(pid >= 0);
		if (!pid) {
			struct io_uring r;

			if (io_uring_queue_init(8, &r, 0))
				_exit(2);
			uring_submit(&u, &r, sqe_flags);
			if (write(p[1], "s", 1) != 1)
				_exit(2);
			usleep(20000);
			if (!kill_it)
				execl("/bin/true", "true", (char *)NULL);
			for (;;)
				pause();
		}
		T_REQUIRE(read(p[0], &c, 1) == 1);
		close(p[0]);
		close(p[1]);
		t = now_s();
		if (kill_it) {
			usleep(20000);
			kill(pid, SIGKILL);
		}
		T_REQUIRE(waitpid(pid, &st, 0) == pid);
		t = now_s() - t;
		t += drain(60);
		printf("uring_cancel: %s: child gone and chain drained after %.2f s\n", what[step],
		       t);
		if (t > bound)
			T_FAIL("%s mid-chain: %.2f s until the chain stopped", what[step], t);
	}
	ump_close(&u);
	return 0;
}
