// SPDX-License-Identifier: MIT
/*
 * rmmod with an io_uring chain in flight: the request holds /dev/ump's file,
 * so rmmod is refused even after the process closed its own fd; once the
 * ring closes the chain is cancelled, its CQE posted, and the module
 * unloads cleanly. Run in the unload stage: it leaves the module unloaded.
 */
#include <sys/syscall.h>
#include <ump/libump-uring.h>

#include "ump_test.h"

#define T_LEN (16u << 20)
#define T_DESCS 64 /* 1 GiB: seconds of copying in the guest */

static struct ump_copy_desc d[T_DESCS];

static int unload(void)
{
	return syscall(SYS_delete_module, "ump", O_NONBLOCK) ? -errno : 0;
}

int main(void)
{
	struct io_uring_sqe *sqe;
	struct io_uring ring;
	uint32_t hs, hd;
	struct ump u;
	uint64_t t0;
	int ret, i;

	t_open(&u);
	ret = io_uring_queue_init(8, &ring, 0);
	if (ret)
		T_SKIPPED("io_uring_queue_init: %s", strerror(-ret));
	T_OK(ump_alloc(&u, UMP_REGION_HOST(0), T_LEN, &hs));
	T_OK(ump_alloc(&u, UMP_REGION_HOST(0), T_LEN, &hd));
	for (i = 0; i < T_DESCS; i++)
		d[i] = (struct ump_copy_desc){hs, hd, 0, 0, T_LEN};
	sqe = io_uring_get_sqe(&ring);
	T_REQUIRE(sqe);
	ump_prep_submit(sqe, u.fd, d, T_DESCS, 1);
	T_REQUIRE(io_uring_submit(&ring) == 1);
	usleep(20000);
	ump_close(&u);

	ret = unload();
	if (ret != -EWOULDBLOCK && ret != -EBUSY)
		T_FAIL("rmmod with an io_uring chain in flight: %d, want refused", ret);
	t0 = ump_now_ns();
	io_uring_queue_exit(&ring);
	/* The ring's teardown is asynchronous: the file goes with it. */
	for (i = 0; i < 30000 && (ret = unload()); i++)
		usleep(1000);
	if (ret)
		T_FAIL("rmmod after the ring closed: %s", strerror(-ret));
	printf("unload_uring: refused with a chain in flight; unloaded %.3f s after the ring "
	       "closed\n",
	       (double)(ump_now_ns() - t0) / 1e9);
	return 0;
}
