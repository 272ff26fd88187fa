// SPDX-License-Identifier: MIT
/*
 * io_uring issues a command inline, under the ring's lock, with
 * IO_URING_F_NONBLOCK: there a file's first chain for a worker (which may
 * make a kernel thread and move it into the submitter's cgroups) answers
 * -EAGAIN, and io_uring issues it again from an io-wq worker, where it may
 * block. Seen from user space: the first chain of a fresh file, submitted
 * without IOSQE_ASYNC, brings up an io-wq thread ("iou-wrk-") and completes;
 * the next ones complete as before. Before, the set-up ran inline and no
 * io-wq thread ever appeared.
 */
#include <dirent.h>
#include <ump/libump-uring.h>

#include "ump_test.h"

static int iowq_threads(void)
{
	char path[300];
	struct dirent *e;
	DIR *d = opendir("/proc/self/task");
	int n = 0;

	T_REQUIRE(d);
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/comm", e->d_name);
		n += t_comm_starts(path, "iou-wrk-");
	}
	closedir(d);
	return n;
}

static int ring_chain(struct io_uring *ring, struct ump *u, struct ump_copy_desc *d)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
	struct io_uring_cqe *cqe;
	int res;

	T_REQUIRE(sqe);
	ump_prep_submit(sqe, u->fd, d, 1, 7);
	T_REQUIRE(io_uring_submit(ring) == 1);
	T_REQUIRE(!io_uring_wait_cqe(ring, &cqe));
	res = cqe->res;
	io_uring_cqe_seen(ring, cqe);
	return res;
}

int main(void)
{
	struct ump_copy_desc d;
	struct io_uring ring;
	uint32_t hs, hd;
	unsigned char *ms, *md;
	struct ump u;
	int ret, before, after, i;

	t_open(&u);
	ret = io_uring_queue_init(8, &ring, 0);
	if (ret)
		T_SKIPPED("io_uring_queue_init: %s", strerror(-ret));
	T_OK(ump_alloc(&u, UMP_REGION_HOST(0), 4096, &hs));
	T_OK(ump_alloc(&u, UMP_REGION_HOST(0), 4096, &hd));
	T_OK(ump_mmap(&u, hs, 4096, (void **)&ms));
	T_OK(ump_mmap(&u, hd, 4096, (void **)&md));
	memset(ms, 0x5a, 4096);
	d = (struct ump_copy_desc){hs, hd, 0, 0, 4096};
	before = iowq_threads();
	T_OK(ring_chain(&ring, &u, &d));
	after = iowq_threads();
	for (i = 0; i < 4; i++)
		T_OK(ring_chain(&ring, &u, &d));
	printf("uring_nonblock: io-wq threads %d before the file's first chain, %d after\n", before,
	       after);
	if (md[0] != 0x5a || md[4095] != 0x5a)
		T_FAIL("the chains did not copy");
	if (after <= before)
		T_FAIL("a file's first chain was set up inline under the ring's lock");
	io_uring_queue_exit(&ring);
	ump_close(&u);
	return 0;
}
