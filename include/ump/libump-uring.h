/* SPDX-License-Identifier: MIT */
/*
 * libump's io_uring path: prepare an SQE that submits a copy chain to
 * /dev/ump. The CQE comes when the chain completes; cqe->res is 0 or the
 * failing descriptor's -errno. The descriptors must stay valid until the SQE
 * has been submitted (the kernel copies them at submission).
 */
#ifndef LIBUMP_URING_H
#define LIBUMP_URING_H

#include <string.h>

#include <liburing.h>

#include <ump/libump.h>

static inline void ump_prep_submit(struct io_uring_sqe *sqe, int ump_fd,
				   const struct ump_copy_desc *descs, unsigned int count,
				   uint64_t user_data)
{
	struct ump_uring_submit cmd = {
	    .descs = (uint64_t)(uintptr_t)descs,
	    .count = count,
	};

	io_uring_prep_rw(IORING_OP_URING_CMD, sqe, ump_fd, NULL, 0, 0);
	sqe->cmd_op = UMP_URING_SUBMIT;
	memcpy(sqe->cmd, &cmd, sizeof(cmd));
	io_uring_sqe_set_data64(sqe, user_data);
}

#endif
