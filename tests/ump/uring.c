// SPDX-License-Identifier: MIT
/*
 * io_uring submission: the same chains through IORING_OP_URING_CMD and
 * through ioctls leave identical bytes; CQEs carry the chain's status and
 * the SQE's user_data; thousands of chains in flight from one ring.
 */
#include <ump/libump-uring.h>

#include "ump_test.h"

#define NCHAINS 4096
#define DEPTH 256

int main(void)
{
	static struct ump_copy_desc descs[NCHAINS];
	unsigned char *src, *via_ioctl, *via_ring;
	unsigned int submitted = 0, completed = 0, i, errors = 0;
	uint32_t hs, hi, hr;
	struct io_uring ring;
	struct ump u;
	int ret;

	t_open(&u);
	ret = io_uring_queue_init(DEPTH, &ring, 0);
	if (ret)
		T_SKIPPED("io_uring_queue_init: %s", strerror(-ret));
	T_OK(ump_alloc(&u, UMP_REGION_HOST(0), 1 << 20, &hs));
	T_OK(ump_alloc(&u, UMP_REGION_HOST(0), 1 << 20, &hi));
	T_OK(ump_alloc(&u, UMP_REGION_HOST(t_nr_nodes(&u) - 1), 1 << 20, &hr));
	T_OK(ump_mmap(&u, hs, 1 << 20, (void **)&src));
	T_OK(ump_mmap(&u, hi, 1 << 20, (void **)&via_ioctl));
	T_OK(ump_mmap(&u, hr, 1 << 20, (void **)&via_ring));
	t_fill(src, 1 << 20, 0, 1 << 20, 1, 5);

	/* Small scattered chains: offsets and lengths from a fixed LCG. */
	for (i = 0; i < NCHAINS; i++) {
		uint32_t x = i * 2654435761u;
		uint64_t len = 1 + x % 255;

		descs[i] = (struct ump_copy_desc){
		    .src = hs,
		    .dst = hi,
		    .src_offset = (x >> 8) % ((1 << 20) - 256),
		    .dst_offset = (uint64_t)i * 256,
		    .length = len,
		};
		T_OK(ump_copy_sync(&u, &descs[i], 1));
		descs[i].dst = hr;
	}
	/* One deliberately failing chain: its CQE must say so. */
	struct ump_copy_desc badd = {hs, hr, 1 << 20, 0, 1};

	while (completed < NCHAINS + 1) {
		struct io_uring_cqe *cqe;

		while (submitted < NCHAINS + 1 && submitted - completed < DEPTH) {
			struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);

			if (!sqe)
				break;
			if (submitted == NCHAINS)
				ump_prep_submit(sqe, u.fd, &badd, 1, 1u << 31);
			else
				ump_prep_submit(sqe, u.fd, &descs[submitted], 1, submitted);
			submitted++;
		}
		ret = io_uring_submit_and_wait(&ring, 1);
		if (ret < 0)
			T_FAIL("io_uring_submit_and_wait: %s", strerror(-ret));
		while (io_uring_peek_cqe(&ring, &cqe) == 0) {
			uint64_t ud = io_uring_cqe_get_data64(cqe);

			if (ud == 1u << 31) {
				if (cqe->res != -ERANGE)
					T_FAIL("failing chain CQE res %d", cqe->res);
			} else if (cqe->res != 0) {
				errors++;
				printf("chain %llu: %s\n", (unsigned long long)ud,
				       strerror(-cqe->res));
			}
			io_uring_cqe_seen(&ring, cqe);
			completed++;
		}
	}
	if (errors)
		T_FAIL("%u ring chains failed", errors);
	if (memcmp(via_ioctl, via_ring, 1 << 20))
		T_FAIL("ring and ioctl paths disagree");

	/* An unknown cmd_op is refused through the CQE. */
	{
		struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
		struct io_uring_cqe *cqe;

		ump_prep_submit(sqe, u.fd, descs, 1, 7);
		sqe->cmd_op = 0x99;
		io_uring_submit_and_wait(&ring, 1);
		T_OK(io_uring_peek_cqe(&ring, &cqe));
		if (cqe->res != -ENOTTY)
			T_FAIL("unknown cmd_op: res %d", cqe->res);
		io_uring_cqe_seen(&ring, cqe);
	}
	io_uring_queue_exit(&ring);
	ump_close(&u);
	printf("uring: %u chains, ring == ioctl\n", NCHAINS);
	return 0;
}
