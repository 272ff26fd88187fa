// SPDX-License-Identifier: MIT
/*
 * A chain queued behind another on its worker ends at once when it is
 * cancelled, whatever runs ahead of it: the worker is held to 1% of a CPU
 * by cpu.max and busy with a long chain, and a chain queued behind it is
 * cancelled by UMP_IOC_CANCEL, then one submitted through io_uring has its
 * ring closed. Each ends with -ECANCELED at once (6.1: at the long chain's
 * next slice). Before,
 * cancelling only set a flag the chain read when it ran, so both waited for
 * the long chain (a closed ring warned in io_ring_exit_work after 297 s).
 */
#include <sys/stat.h>
#include <sys/wait.h>
#include <ump/libump-uring.h>

#include "ump_test.h"

#define CG "/sys/fs/cgroup"
#define T_CG CG "/ump-queue-test"
#define T_LEN (16u << 20)
#define T_DESCS 64 /* 1 GiB: minutes at 1% of a CPU */
#define T_BOUND_S 5.0
/*
 * 6.1 has no cancel call for uring_cmds: the running chain reaps a dead
 * ring's chains between its 1 MiB slices, each seconds apart at 1% of a CPU.
 */
#define T_RING_BOUND_S 20.0

struct result {
	int err;
	int ioctl_status;
	double ioctl_s, ring_s;
	int long_status;
};

static double now_s(void)
{
	return (double)ump_now_ns() / 1e9;
}

static void child(int out)
{
	static struct ump_copy_desc d[T_DESCS];
	struct ump_copy_desc q;
	struct result r = {0};
	uint64_t slow, queued;
	struct io_uring ring;
	struct io_uring_sqe *sqe;
	uint32_t hs, hd, hq;
	struct ump_wait w;
	struct ump u;
	long long live;
	char pid[32];
	double t;

	if (ump_open(&u) || ump_alloc(&u, UMP_REGION_HOST(0), T_LEN, &hs) ||
	    ump_alloc(&u, UMP_REGION_HOST(0), T_LEN, &hd) ||
	    ump_alloc(&u, UMP_REGION_HOST(0), 4096, &hq) || io_uring_queue_init(8, &ring, 0)) {
		r.err = 1;
		goto done;
	}
	for (int i = 0; i < T_DESCS; i++)
		d[i] = (struct ump_copy_desc){hs, hd, 0, 0, T_LEN};
	q = (struct ump_copy_desc){hs, hq, 0, 0, 4096};
	/* All three from the throttled cgroup: they share its worker. */
	sqe = io_uring_get_sqe(&ring);
	ump_prep_submit(sqe, u.fd, &q, 1, 3);
	if (ump_submit(&u, d, T_DESCS, 1, &slow) || ump_submit(&u, &q, 1, 2, &queued) ||
	    io_uring_submit(&ring) != 1) {
		r.err = 2;
		goto done;
	}
	usleep(50000);
	/* Out of it, so that what is timed below is the module, not our own throttling. */
	snprintf(pid, sizeof(pid), "%d", getpid());
	if (t_write_file(CG "/cgroup.procs", pid)) {
		r.err = 3;
		goto done;
	}

	/* The queued chain, cancelled. */
	t = now_s();
	if (ump_cancel(&u, queued)) {
		r.err = 4;
		goto done;
	}
	r.ioctl_status = ump_wait(&u, queued, ump_now_ns() + (uint64_t)(T_BOUND_S * 1e9), &w);
	if (!r.ioctl_status)
		r.ioctl_status = w.status;
	r.ioctl_s = now_s() - t;

	/* The one through the ring, its ring closed. */
	live = t_pool("chains");
	t = now_s();
	io_uring_queue_exit(&ring);
	while (t_pool("chains") >= live && now_s() - t < T_RING_BOUND_S)
		usleep(5000);
	r.ring_s = now_s() - t;

	if (ump_cancel(&u, slow) || ump_wait(&u, slow, UMP_TIMEOUT_INFINITE, &w))
		r.err = 5;
	r.long_status = w.status;
	ump_close(&u);
done:
	if (write(out, &r, sizeof(r)) != sizeof(r))
		_exit(2);
}

int main(void)
{
	struct result r;

	t_cgroup_limited(T_CG, "cpu", "cpu.max", "1000 100000");
	t_run_in_cgroup(T_CG, child, &r, sizeof(r));
	t_write_file(T_CG "/cpu.max", "max 100000");
	if (r.err)
		T_FAIL("the process in the cgroup failed at step %d", r.err);
	printf("cancel_queued: behind a chain held to 1%% of a CPU, a cancelled chain ended in "
	       "%.3f s (status %d), a closed ring's in %.3f s; the long one then ended with %d\n",
	       r.ioctl_s, r.ioctl_status, r.ring_s, r.long_status);
	if (r.ioctl_status != -ECANCELED)
		T_FAIL("the cancelled queued chain: %d (%s) after %.3f s, not -ECANCELED at once",
		       r.ioctl_status, strerror(-r.ioctl_status), r.ioctl_s);
	if (r.ring_s >= T_RING_BOUND_S)
		T_FAIL("a closed ring's queued chain was still live after %.1f s", r.ring_s);
	if (r.long_status != -ECANCELED)
		T_FAIL("the long chain, cancelled: %d", r.long_status);
	t_cgroup_remove(T_CG);
	return 0;
}
