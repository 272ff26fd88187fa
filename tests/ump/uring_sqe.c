// SPDX-License-Identifier: MIT
/*
 * The fields of a uring_cmd SQE that ump does not use must be zero, as the
 * ioctls' reserved fields are: registered buffers (IORING_URING_CMD_FIXED)
 * and the tail of a 128-byte SQE's command area on every kernel; addr, len,
 * buf_index and file_index where the kernel shows the driver the whole SQE
 * (6.6 and later). A chain refused this way never ran: its destination is
 * untouched.
 */
#include <sys/mman.h>
#include <sys/utsname.h>

#include <ump/libump-uring.h>

#include "ump_test.h"

/* One SQE on ring, changed by how; the CQE's res. */
static int submit_one(struct io_uring *ring, int fd, const struct ump_copy_desc *d, int how)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
	struct io_uring_cqe *cqe;
	int res;

	if (!sqe)
		T_FAIL("no SQE");
	ump_prep_submit(sqe, fd, d, 1, how);
	switch (how) {
	case 1:
		sqe->uring_cmd_flags = IORING_URING_CMD_FIXED;
		break;
	case 2:
		sqe->cmd[40] = 1; /* 128-byte SQE: past the payload */
		break;
	case 3:
		sqe->addr = 4096;
		break;
	case 4:
		sqe->len = 1;
		break;
	case 5:
		sqe->buf_index = 1;
		break;
	case 6:
		sqe->file_index = 1;
		break;
	}
	if (io_uring_submit_and_wait(ring, 1) != 1 || io_uring_wait_cqe(ring, &cqe))
		T_FAIL("submit %d", how);
	if (io_uring_cqe_get_data64(cqe) != (uint64_t)how)
		T_FAIL("user_data %llu for %d", (unsigned long long)cqe->user_data, how);
	res = cqe->res;
	io_uring_cqe_seen(ring, cqe);
	return res;
}

int main(void)
{
	static const char *const what[] = {
	    "a plain SQE",
	    "IORING_URING_CMD_FIXED",
	    "a byte past the payload",
	    "addr",
	    "len",
	    "buf_index",
	    "file_index",
	};
	unsigned int maj = 0, min = 0;
	unsigned char *dst;
	struct io_uring ring;
	struct utsname un;
	uint32_t hs, hd;
	struct ump u;
	int ret, how;

	t_open(&u);
	/* 128-byte SQEs, so that the command area has a tail to check. */
	ret = io_uring_queue_init(8, &ring, IORING_SETUP_SQE128);
	if (ret)
		T_SKIPPED("io_uring_queue_init(SQE128): %s", strerror(-ret));
	uname(&un);
	sscanf(un.release, "%u.%u", &maj, &min);
	T_OK(ump_alloc(&u, UMP_REGION_HOST(0), 4096, &hs));
	T_OK(ump_alloc(&u, UMP_REGION_HOST(0), 4096, &hd));
	T_OK(ump_mmap(&u, hd, 4096, (void **)&dst));
	/* A registered buffer, so io_uring itself lets a FIXED command through. */
	struct iovec iov = {
	    mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), 4096};

	if (iov.iov_base == MAP_FAILED)
		T_FAIL("mmap: %s", strerror(errno));

	T_OK(io_uring_register_buffers(&ring, &iov, 1));
	/* The source is zero: a copy that ran turns the 0xa5 back into 0. */
	memset(dst, 0xa5, 4096);

	for (how = 0; how < (int)(sizeof(what) / sizeof(what[0])); how++) {
		struct ump_copy_desc d = {hs, hd, 0, (uint64_t)how * 8, 8};
		/* 6.1 shows the driver only the command area. */
		int checked = how < 3 || maj > 6 || (maj == 6 && min >= 6);

		ret = submit_one(&ring, u.fd, &d, how);
		if (how == 0 && ret)
			T_FAIL("%s: %d", what[how], ret);
		if (how && checked && ret != -EINVAL)
			T_FAIL("%s set: res %d, expected -EINVAL", what[how], ret);
		if (dst[how * 8] != (ret ? 0xa5 : 0))
			T_FAIL("%s: res %d but destination byte %#x", what[how], ret, dst[how * 8]);
		printf("%s: %s\n", what[how], ret ? strerror(-ret) : "copied");
	}
	io_uring_queue_exit(&ring);
	ump_close(&u);
	return 0;
}
