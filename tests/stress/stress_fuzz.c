// SPDX-License-Identifier: MIT
/*
 * 100,000 randomly generated ioctl and uring_cmd arguments (times
 * UMP_STRESS_SCALE). Arguments are random bytes, biased towards values that
 * get past the first checks (live handles, small sizes, zero reserved
 * fields, pointers to real descriptor arrays), so the deeper paths see
 * garbage too. The only acceptable outcomes are success or an errno from the
 * documented set; afterwards the pool must hold nothing.
 */
#include <sys/ioctl.h>
#include <ump/libump-uring.h>

#include "ump_test.h"

static uint64_t s = 88172645463325252ull;
static uint64_t rnd(void)
{
	s ^= s << 13;
	s ^= s >> 7;
	s ^= s << 17;
	return s;
}

static const unsigned long cmds[] = {
    UMP_IOC_VERSION, UMP_IOC_ALLOC,    UMP_IOC_FREE,   UMP_IOC_BUF_INFO,
    UMP_IOC_EXPORT,  UMP_IOC_IMPORT,   UMP_IOC_SUBMIT, UMP_IOC_WAIT,
    UMP_IOC_DEV_ADD, UMP_IOC_DEV_INFO, UMP_IOC_CANCEL, UMP_IOC_STATS,
};

static int allowed(int err)
{
	switch (err) {
	case 0:
	case EINVAL:
	case ENOENT:
	case ENOMEM:
	case EFAULT:
	case ENOTTY:
	case EBADF:
	case ENODEV:
	case ERANGE:
	case EAGAIN:
	case ETIME:
	case EEXIST:
	case ENOSPC:
	case EOPNOTSUPP:
	case EPERM:
	case E2BIG:  /* a chain naming more than a file may queue; a struct's tail not zero */
	case EMFILE: /* handles per file */
	case EBUSY:  /* io_uring: the file's chains are at their bound */
	case EACCES: /* a read-only import as a destination */
		return 1;
	}
	return 0;
}

/* A small value most of the time, anything some of the time. */
static uint64_t pick(uint32_t live)
{
	switch (rnd() % 8) {
	case 0:
		return rnd();
	case 1:
		return 0;
	case 2:
		return live;
	case 3:
		return rnd() % 16;
	case 4:
		return 1ull << (rnd() % 64);
	case 5:
		return (1ull << (rnd() % 64)) - 1;
	default:
		return rnd() % 70000;
	}
}

int main(void)
{
	const char *sc = getenv("UMP_STRESS_SCALE");
	long n = (long)(100000 * (sc ? atof(sc) : 1.0)), i, ok = 0, ring_calls = 0;
	static struct ump_copy_desc descs[64];
	long long bufs, chains;
	struct io_uring ring;
	struct ump u;
	uint32_t live = 1;

	t_open(&u);
	T_OK(io_uring_queue_init(64, &ring, 0));
	for (i = 0; i < n; i++) {
		uint64_t arg[32]; /* room for the largest struct (ump_dev_info, 200 bytes) */
		unsigned int k;
		int ret, e;

		for (k = 0; k < 64; k++)
			descs[k] =
			    (struct ump_copy_desc){(uint32_t)pick(live), (uint32_t)pick(live),
						   pick(live), pick(live), pick(live)};
		if (rnd() % 4 == 0) {
			/* io_uring: random command area, mostly our opcode. */
			struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
			struct io_uring_cqe *cqe;

			ump_prep_submit(sqe, u.fd, descs, (unsigned int)(rnd() % 70), i);
			if (rnd() % 8 == 0)
				sqe->cmd_op = (uint32_t)rnd();
			if (rnd() % 8 == 0) {
				uint64_t junk[2] = {rnd(), rnd()};

				memcpy(sqe->cmd, junk, 16);
			}
			io_uring_submit_and_wait(&ring, 1);
			if (io_uring_peek_cqe(&ring, &cqe))
				T_FAIL("no CQE");
			e = cqe->res < 0 ? -cqe->res : 0;
			io_uring_cqe_seen(&ring, cqe);
			ring_calls++;
		} else {
			unsigned long cmd = cmds[rnd() % (sizeof(cmds) / sizeof(cmds[0]))];

			memset(arg, 0, sizeof(arg));
			for (k = 0; k < 16; k++)
				arg[k] = rnd() % 3 ? pick(live) : 0;
			if (rnd() % 16 == 0)
				cmd = (unsigned long)rnd(); /* any number at all */
			if (cmd == UMP_IOC_SUBMIT && rnd() % 2)
				arg[0] = (uintptr_t)descs;
			if (cmd == UMP_IOC_ALLOC && rnd() % 2)
				arg[0] = rnd() % (1 << 22);
			if (cmd == UMP_IOC_WAIT && rnd() % 2)
				arg[1] = 0; /* poll, never block */
			if (cmd == UMP_IOC_WAIT)
				arg[1] = arg[1] == ~0ull ? 0 : arg[1] % 1000000;
			ret = ioctl(u.fd, cmd, rnd() % 64 ? (void *)arg : (void *)(uintptr_t)rnd());
			e = ret < 0 ? errno : 0;
			if (!e && cmd == UMP_IOC_ALLOC)
				live = (uint32_t)arg[2];
			if (!e && cmd == UMP_IOC_EXPORT)
				close((int)(arg[1] & 0xffffffff));
		}
		if (!allowed(e))
			T_FAIL("call %ld: unexpected errno %d (%s)", i, e, strerror(e));
		ok += !e;
	}
	io_uring_queue_exit(&ring);
	ump_close(&u);
	/* Chains submitted by the fuzzer are freed with the file. */
	for (i = 0; i < 100; i++) {
		bufs = t_pool("buffers");
		chains = t_pool("chains");
		if (!bufs && !chains)
			break;
		usleep(100000);
	}
	if (bufs || chains)
		T_FAIL("%lld buffers and %lld chains left after the fuzzer closed", bufs, chains);
	printf("stress_fuzz: %ld calls (%ld through io_uring), %ld succeeded, all others a "
	       "documented errno\n",
	       n, ring_calls, ok);
	return 0;
}
