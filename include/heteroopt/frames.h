/* SPDX-License-Identifier: MIT */
/*
 * The frame protocol between a producer (a camera, a decoder: `heteroopt
 * feed`) and the runtime (`heteroopt serve`), over one Unix SOCK_SEQPACKET
 * connection.  Frames travel as file descriptors (a dma-buf from udmabuf, a
 * dma-heap or the pool; or a memfd), and the runtime reads each where it is
 * (ho_rt_bind_fd): nothing is copied in.  Three messages, one datagram each,
 * descriptors in SCM_RIGHTS:
 *
 *   hello  server -> client, once: the model's inputs and outputs, with one
 *          fd per output: the runtime's own memory of it, where the answer
 *          to every frame is written, for a consumer to map;
 *   frame  client -> server: a frame's id and, per input, where in its fd
 *          the tensor starts (page-aligned), with one fd per input;
 *   done   server -> client: that frame's status, run time and the bytes
 *          its hand-off copied (0 unless the server was told to copy).
 *
 * The answer stays in the output memory until the next frame is sent.
 * Fixed-size structs in the host's byte order: both ends are on one box.
 */
#ifndef HETEROOPT_FRAMES_H
#define HETEROOPT_FRAMES_H

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#define HO_FRAME_MAGIC 0x52464f48u /* "HOFR" */
#define HO_FRAME_VERSION 1u
#define HO_FRAME_MAX_TENSORS 8 /* inputs, and outputs, of a model served */

struct ho_frame_tensor {
	char name[128];
	int32_t dtype; /* HO_DT_* */
	int32_t rank;
	int64_t dims[8];
	uint64_t bytes; /* the tensor's */
	uint64_t span;	/* bytes rounded up to pages: what an fd must hold from its offset */
};

struct ho_frame_hello {
	uint32_t magic, version;
	uint32_t n_inputs, n_outputs;
	struct ho_frame_tensor input[HO_FRAME_MAX_TENSORS], output[HO_FRAME_MAX_TENSORS];
};

struct ho_frame_submit {
	uint32_t magic, n_fds; /* one fd per input, in the hello's order */
	uint64_t id;
	uint64_t offset[HO_FRAME_MAX_TENSORS];
};

struct ho_frame_done {
	uint32_t magic;
	int32_t status; /* 0, or -errno with error saying why */
	uint64_t id;
	double run_s;	      /* binding and running this frame */
	uint64_t copied;      /* bytes the hand-off copied: 0 when bound in place */
	uint64_t device_copy; /* bytes the schedule moved between devices */
	char error[256];
};

/* Send len bytes of msg with n fds: 0 or -errno. */
static inline int ho_frame_send(int sock, const void *msg, size_t len, const int *fds,
				unsigned int n)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int) * HO_FRAME_MAX_TENSORS)];
	} ctl;
	struct iovec iov = {(void *)msg, len};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};

	if (n > HO_FRAME_MAX_TENSORS)
		return -EINVAL;
	if (n) {
		memset(&ctl, 0, sizeof(ctl));
		mh.msg_control = ctl.buf;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * n);
		ctl.h.cmsg_level = SOL_SOCKET;
		ctl.h.cmsg_type = SCM_RIGHTS;
		ctl.h.cmsg_len = CMSG_LEN(sizeof(int) * n);
		memcpy(CMSG_DATA(&ctl.h), fds, sizeof(int) * n);
	}
	return sendmsg(sock, &mh, MSG_NOSIGNAL) == (ssize_t)len ? 0 : -errno;
}

/*
 * One message into msg (len bytes at most) and up to max fds (*n of them,
 * close-on-exec, the caller's to close whatever it returns): its length, 0
 * when the peer hung up, or -errno.
 */
static inline ssize_t ho_frame_recv(int sock, void *msg, size_t len, int *fds, unsigned int max,
				    unsigned int *n)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int) * HO_FRAME_MAX_TENSORS)];
	} ctl;
	struct iovec iov = {msg, len};
	struct msghdr mh = {.msg_iov = &iov,
			    .msg_iovlen = 1,
			    .msg_control = ctl.buf,
			    .msg_controllen = sizeof(ctl.buf)};
	ssize_t got = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);

	*n = 0;
	if (got < 0)
		return -errno;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c))
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
			unsigned int k = (unsigned int)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));

			for (unsigned int i = 0; i < k; i++) {
				int fd;

				memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
				if (*n < max)
					fds[(*n)++] = fd;
				else
					close(fd); /* more than asked for: not ours to keep */
			}
		}
	if (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC))
		return -EMSGSIZE;
	return got;
}

#endif
