// SPDX-License-Identifier: MIT
/*
 * Processes SIGKILLed mid-flight: children keep big chains in flight through
 * io_uring and ioctls, with exported dma-bufs mapped, and are killed at
 * random moments. Once they are reaped, the pool must be back to exactly
 * where it was: no buffer, chain or context left, no byte still charged.
 */
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <ump/libump-uring.h>

#include "ump_test.h"

static void child(int id)
{
	struct ump_copy_desc d[8];
	struct io_uring ring;
	struct ump u;
	uint32_t h[4];
	void *m;
	int i;

	if (ump_open(&u))
		_exit(2);
	for (i = 0; i < 4; i++)
		if (ump_alloc(&u, UMP_REGION_HOST(i % t_nr_nodes(&u)), 8u << 20, &h[i]))
			_exit(3);
	if (ump_mmap(&u, h[0], 8u << 20, &m))
		_exit(4);
	for (i = 0; i < 8; i++)
		d[i] = (struct ump_copy_desc){h[i % 4], h[(i + 1) % 4], 0, 0, 8u << 20};
	if (io_uring_queue_init(64, &ring, 0))
		_exit(5);
	for (;;) {
		struct io_uring_cqe *cqe;
		uint64_t chain;

		/* Keep the ring full and an ioctl chain unreaped. */
		for (i = 0; i < 16; i++) {
			struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);

			if (!sqe)
				break;
			ump_prep_submit(sqe, u.fd, d, 8, (uint64_t)id);
		}
		io_uring_submit(&ring);
		ump_submit(&u, d, 8, 0, &chain);
		while (io_uring_peek_cqe(&ring, &cqe) == 0)
			io_uring_cqe_seen(&ring, cqe);
	}
}

static void snapshot(long long v[4])
{
	v[0] = t_pool("buffers");
	v[1] = t_pool("chains");
	v[2] = t_pool("contexts");
	v[3] = t_used_total();
}

int main(void)
{
	const char *sc = getenv("UMP_STRESS_SCALE");
	int rounds = (int)(40 * (sc ? atof(sc) : 1.0)), r, i;
	long long before[4], after[4];
	struct ump probe;

	t_open(&probe);
	ump_close(&probe);
	if (rounds < 4)
		rounds = 4;
	snapshot(before);
	srand(1);
	for (r = 0; r < rounds; r++) {
		pid_t pids[4];
		struct timespec ts = {0, (long)(rand() % 200) * 1000000L};

		for (i = 0; i < 4; i++) {
			pids[i] = fork();
			if (pids[i] == 0)
				child(i);
		}
		nanosleep(&ts, NULL);
		for (i = 0; i < 4; i++)
			kill(pids[i], SIGKILL);
		for (i = 0; i < 4; i++)
			waitpid(pids[i], NULL, 0);
	}
	/* Chains the dead left running finish on their own; give them time. */
	for (i = 0; i < 300; i++) {
		snapshot(after);
		if (!memcmp(before, after, sizeof(before)))
			break;
		usleep(100000);
	}
	if (memcmp(before, after, sizeof(before)))
		T_FAIL("after %d kill rounds: buffers %lld->%lld chains %lld->%lld contexts "
		       "%lld->%lld used %lld->%lld",
		       rounds, before[0], after[0], before[1], after[1], before[2], after[2],
		       before[3], after[3]);
	printf("stress_kill: %d rounds of 4 processes killed mid-flight, pool back to its start\n",
	       rounds);
	return 0;
}
