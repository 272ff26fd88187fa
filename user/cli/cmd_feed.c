// SPDX-License-Identifier: MIT
/*
 * heteroopt feed: the producer and consumer ends of a frame pipeline, for
 * `heteroopt serve`.  The producer allocates a ring of frame buffers (a
 * udmabuf, a dma-heap buffer, a pool buffer exported as a dma-buf, or a
 * memfd), writes each frame into one and sends its descriptor; a consumer
 * process maps the outputs' memory the server handed over and checks every
 * answer.  It prints the latency per frame, from the send to the
 * consumer's check, and what the hand-off copied.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/dma-buf.h>
#include <linux/dma-heap.h>
#include <linux/udmabuf.h>
#include <math.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <heteroopt/frames.h>
#include <heteroopt/npy.h>
#include <heteroopt/pool.h>

#include "cli.h"

#define FEED_RING_MAX 16

struct feed_args {
	const char *socket, *from;
	struct cli_list inputs, expect;
	unsigned long long frames, ring;
};

#define FA(field) offsetof(struct feed_args, field)
static const struct cli_opt feed_opts[] = {
    {"--socket", NULL, CLI_TEXT, "PATH",
     "the socket heteroopt serve listens on (waited for up to 10 s)", FA(socket), 0, 0},
    {"--input", NULL, CLI_LIST, "NAME=FILE.npy",
     "a frame for input NAME; several for one input take turns", FA(inputs), 0, 0},
    {"--expect", NULL, CLI_LIST, "NAME=FILE.npy",
     "the answer output NAME must hold (1e-5 of its largest\nmagnitude; integers exactly), in "
     "the same turns as --input",
     FA(expect), 0, 0},
    {"--frames", NULL, CLI_COUNT, "N", "frames to send (default 100)", FA(frames), 1, 1ull << 40},
    {"--from", NULL, CLI_TEXT, "SOURCE",
     "where frames live: memfd (default), pool (the runtime's pool:\na ump.ko dma-buf when "
     "loaded), udmabuf, heap (/dev/dma_heap/system)",
     FA(from), 0, 0},
    {"--ring", NULL, CLI_COUNT, "K", "frame buffers taken in turn (default 4)", FA(ring), 1,
     FEED_RING_MAX},
    {0},
};

static const struct cli_command feed_cmd = {
    .name = "feed",
    .usage = "--socket PATH --input NAME=FILE.npy ... [--expect NAME=FILE.npy ...] [options]",
    .about = "Send frames to heteroopt serve as file descriptors and check every answer in a\n"
	     "consumer process that maps the outputs' memory: the latency per frame, and\n"
	     "the bytes the hand-off copied (none when the server reads frames in place).",
    .opts = feed_opts,
};

/* One frame buffer: its descriptor and the producer's mapping of it. */
struct feed_buf {
	int fd;
	void *map;
	size_t len;
	struct ho_pool_buf pb; /* from the pool */
};

static int feed_memfd(size_t len, struct feed_buf *b, struct ho_pool *pool)
{
	(void)pool;
	b->fd = memfd_create("heteroopt-frame", MFD_CLOEXEC);
	if (b->fd < 0 || ftruncate(b->fd, (off_t)len))
		return -errno;
	b->map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, b->fd, 0);
	return b->map == MAP_FAILED ? -errno : 0;
}

static int feed_pool(size_t len, struct feed_buf *b, struct ho_pool *pool)
{
	int ret = ho_pool_alloc(pool, len, 0, &b->pb);

	if (ret)
		return ret;
	b->map = b->pb.ptr;
	b->fd = ho_pool_share_fd(pool, &b->pb);
	return b->fd < 0 ? b->fd : 0;
}

/* A memfd's pages as a dma-buf (6.x's udmabuf); the producer writes through the memfd. */
static int feed_udmabuf(size_t len, struct feed_buf *b, struct ho_pool *pool)
{
	int mfd = memfd_create("heteroopt-frame", MFD_CLOEXEC | MFD_ALLOW_SEALING), dev, ret = 0;
	struct udmabuf_create c = {.flags = UDMABUF_FLAGS_CLOEXEC, .size = len};

	(void)pool;
	if (mfd < 0)
		return -errno;
	if (ftruncate(mfd, (off_t)len) || fcntl(mfd, F_ADD_SEALS, F_SEAL_SHRINK) ||
	    (dev = open("/dev/udmabuf", O_RDWR | O_CLOEXEC)) < 0) {
		ret = -errno;
		close(mfd);
		return ret;
	}
	c.memfd = (uint32_t)mfd;
	b->fd = ioctl(dev, UDMABUF_CREATE, &c);
	if (b->fd < 0)
		ret = -errno;
	close(dev);
	if (!ret) {
		b->map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, mfd, 0);
		ret = b->map == MAP_FAILED ? -errno : 0;
	}
	close(mfd); /* the udmabuf holds its pages */
	return ret;
}

static int feed_heap(size_t len, struct feed_buf *b, struct ho_pool *pool)
{
	struct dma_heap_allocation_data d = {.len = len, .fd_flags = O_RDWR | O_CLOEXEC};
	int heap = open("/dev/dma_heap/system", O_RDONLY | O_CLOEXEC), ret = 0;

	(void)pool;
	if (heap < 0)
		return -errno;
	if (ioctl(heap, DMA_HEAP_IOCTL_ALLOC, &d))
		ret = -errno;
	close(heap);
	if (ret)
		return ret;
	b->fd = (int)d.fd;
	b->map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, b->fd, 0);
	return b->map == MAP_FAILED ? -errno : 0;
}

static const struct {
	const char *name;
	int (*alloc)(size_t len, struct feed_buf *b, struct ho_pool *pool);
} feed_sources[] = {
    {"memfd", feed_memfd},
    {"pool", feed_pool},
    {"udmabuf", feed_udmabuf},
    {"heap", feed_heap},
};

static void feed_buf_free(struct feed_buf *b, struct ho_pool *pool)
{
	if (b->pb.ptr)
		ho_pool_free(pool, &b->pb);
	else if (b->map && b->map != MAP_FAILED)
		munmap(b->map, b->len);
	if (b->fd >= 0)
		close(b->fd);
}

/* The producer's write of a frame: bracketed as a dma-buf wants (a memfd says ENOTTY). */
static void feed_write(const struct feed_buf *b, const void *data, size_t n)
{
	struct dma_buf_sync s = {DMA_BUF_SYNC_START | DMA_BUF_SYNC_WRITE};

	(void)ioctl(b->fd, DMA_BUF_IOCTL_SYNC, &s);
	memcpy(b->map, data, n);
	s.flags = DMA_BUF_SYNC_END | DMA_BUF_SYNC_WRITE;
	(void)ioctl(b->fd, DMA_BUF_IOCTL_SYNC, &s);
}

static int feed_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* NAME=FILE.npy entries for tensor name: their files read, in the order given. */
static int feed_files(const struct cli_list *l, const char *name, struct ho_npy *out, int max,
		      int *n)
{
	struct ho_error err;

	*n = 0;
	for (int i = 0; i < l->n; i++) {
		const char *eq = strchr(l->v[i], '=');

		if (!eq || (size_t)(eq - l->v[i]) != strlen(name) ||
		    strncmp(l->v[i], name, strlen(name)))
			continue;
		if (*n == max || ho_npy_read(eq + 1, &out[*n], &err)) {
			cli_error("feed: %s",
				  *n == max ? "too many files for one tensor" : err.msg);
			return -EINVAL;
		}
		(*n)++;
	}
	return 0;
}

/* Largest |a - b| over the largest |b|, as doubles; 0 when equal. */
static double feed_diff(const void *a, const struct ho_npy *ref, int dtype)
{
	double diff = 0, mag = 0;

	for (size_t i = 0; i < ref->count; i++) {
		double x, y;

		switch (dtype) {
		case HO_DT_FLOAT:
			x = ((const float *)a)[i], y = ((const float *)ref->data)[i];
			break;
		case HO_DT_INT64:
			x = (double)((const int64_t *)a)[i],
			y = (double)((const int64_t *)ref->data)[i];
			break;
		case HO_DT_INT32:
			x = ((const int32_t *)a)[i], y = ((const int32_t *)ref->data)[i];
			break;
		default: /* bytes */
			x = ((const uint8_t *)a)[i], y = ((const uint8_t *)ref->data)[i];
			break;
		}
		diff = fmax(diff, fabs(x - y));
		mag = fmax(mag, fabs(y));
	}
	return mag > 0 ? diff / mag : diff;
}

/*
 * The consumer process: maps the outputs, and for each frame number the
 * producer sends checks the answer against the expected one of its turn;
 * answers the largest difference (negative: no reference for it).
 */
static int feed_consumer(int ctl, const struct ho_frame_hello *h, const int *out_fds,
			 struct ho_npy (*expect)[FEED_RING_MAX], const int *n_expect)
{
	const void *map[HO_FRAME_MAX_TENSORS];
	uint64_t id;

	for (uint32_t o = 0; o < h->n_outputs; o++) {
		map[o] = mmap(NULL, h->output[o].span, PROT_READ, MAP_SHARED, out_fds[o], 0);
		if (map[o] == MAP_FAILED)
			return 1;
		close(out_fds[o]); /* the mapping is all a consumer needs */
	}
	while (read(ctl, &id, sizeof(id)) == sizeof(id)) {
		double worst = -1;

		for (uint32_t o = 0; o < h->n_outputs; o++) {
			const struct ho_npy *ref;
			double d;

			if (!n_expect[o])
				continue;
			ref = &expect[o][id % (uint64_t)n_expect[o]];
			d = ref->nbytes == h->output[o].bytes
				? feed_diff(map[o], ref, h->output[o].dtype)
				: INFINITY;
			worst = fmax(worst, d);
		}
		if (write(ctl, &worst, sizeof(worst)) != sizeof(worst))
			return 1;
	}
	return 0;
}

static int feed_connect(const char *path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int s, e = 0;

	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	strcpy(sa.sun_path, path);
	s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (s < 0)
		return -errno;
	/* a server started beside the feed may not listen yet: up to 10 s */
	for (int i = 0; i < 100; i++) {
		if (!connect(s, (struct sockaddr *)&sa, sizeof(sa)))
			return s;
		e = -errno;
		if (e != -ENOENT && e != -ECONNREFUSED)
			break;
		usleep(100000);
	}
	close(s);
	return e;
}

int cmd_feed(int argc, char **argv)
{
	struct feed_args a = {.frames = 100, .ring = 4, .from = "memfd"};
	static struct ho_npy in[HO_FRAME_MAX_TENSORS][FEED_RING_MAX],
	    expect[HO_FRAME_MAX_TENSORS][FEED_RING_MAX];
	int n_in[HO_FRAME_MAX_TENSORS] = {0}, n_expect[HO_FRAME_MAX_TENSORS] = {0};
	struct feed_buf ring[FEED_RING_MAX][HO_FRAME_MAX_TENSORS];
	struct ho_frame_hello *h = calloc(1, sizeof(*h));
	int out_fds[HO_FRAME_MAX_TENSORS], ctl[2] = {-1, -1}, sock = -1, rc = 1, src = -1;
	unsigned int n_out = 0;
	struct ho_pool *pool = NULL;
	double *lat = NULL, *run = NULL, worst = 0;
	uint64_t copied = 0, device_copy = 0, checked = 0, sent = 0;
	pid_t child = -1;

	memset(ring, 0, sizeof(ring));
	for (int r = 0; r < FEED_RING_MAX; r++)
		for (int i = 0; i < HO_FRAME_MAX_TENSORS; i++)
			ring[r][i].fd = -1;
	switch (cli_parse(&feed_cmd, argc, argv, &a)) {
	case 1:
		free(h);
		return 0;
	case -1:
		free(h);
		return 2;
	}
	for (size_t s = 0; s < sizeof(feed_sources) / sizeof(feed_sources[0]); s++)
		if (!strcmp(a.from, feed_sources[s].name))
			src = (int)s;
	if (!a.socket || src < 0 || !h) {
		cli_error("feed: %s", !a.socket ? "no --socket given"
				      : !h	? "out of memory"
						: "--from: memfd, pool, udmabuf or heap");
		free(h);
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	sock = feed_connect(a.socket);
	if (sock < 0) {
		cli_error("feed: cannot connect to %s: %s", a.socket, strerror(-sock));
		goto out;
	}
	if (ho_frame_recv(sock, h, sizeof(*h), out_fds, HO_FRAME_MAX_TENSORS, &n_out) !=
		(ssize_t)sizeof(*h) ||
	    h->magic != HO_FRAME_MAGIC || h->version != HO_FRAME_VERSION || n_out != h->n_outputs) {
		cli_error("feed: %s did not say hello in protocol version %u", a.socket,
			  HO_FRAME_VERSION);
		goto out;
	}
	/* each input's frames, each output's answers; the ring's buffers from the source */
	for (uint32_t i = 0; i < h->n_inputs; i++) {
		if (feed_files(&a.inputs, h->input[i].name, in[i], FEED_RING_MAX, &n_in[i]))
			goto out;
		if (!n_in[i]) {
			cli_error("feed: no frame for input '%s' (--input %s=FILE.npy)",
				  h->input[i].name, h->input[i].name);
			goto out;
		}
		for (int k = 0; k < n_in[i]; k++)
			if (in[i][k].nbytes != h->input[i].bytes) {
				cli_error("feed: a frame of %zu bytes for input '%s', which takes "
					  "%llu",
					  in[i][k].nbytes, h->input[i].name,
					  (unsigned long long)h->input[i].bytes);
				goto out;
			}
	}
	for (uint32_t o = 0; o < h->n_outputs; o++)
		if (feed_files(&a.expect, h->output[o].name, expect[o], FEED_RING_MAX,
			       &n_expect[o]))
			goto out;
	if (src == 1 && ho_pool_open(0, &pool)) {
		cli_error("feed: the memory pool does not open");
		goto out;
	}
	for (unsigned long long r = 0; r < a.ring; r++)
		for (uint32_t i = 0; i < h->n_inputs; i++) {
			int ret;

			ring[r][i].len = h->input[i].span;
			ret = feed_sources[src].alloc(h->input[i].span, &ring[r][i], pool);
			if (ret) {
				cli_error("feed: a %llu-byte frame from %s: %s",
					  (unsigned long long)h->input[i].span, a.from,
					  strerror(-ret));
				goto out;
			}
		}
	/* the consumer: the outputs' memory is its own to map; the producer lets it go */
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ctl) || (child = fork()) < 0) {
		cli_error("feed: no consumer process: %s", strerror(errno));
		goto out;
	}
	if (!child) {
		close(ctl[0]);
		close(sock);
		_exit(feed_consumer(ctl[1], h, out_fds, expect, n_expect));
	}
	close(ctl[1]);
	ctl[1] = -1;
	for (unsigned int o = 0; o < n_out; o++)
		close(out_fds[o]);
	n_out = 0;
	lat = calloc(a.frames, sizeof(double));
	run = calloc(a.frames, sizeof(double));
	if (!lat || !run) {
		cli_error("feed: out of memory");
		goto out;
	}
	for (uint64_t f = 0; f < a.frames; f++) {
		struct feed_buf *fb = ring[f % a.ring];
		struct ho_frame_submit s = {.magic = HO_FRAME_MAGIC, .n_fds = h->n_inputs, .id = f};
		struct ho_frame_done d;
		int fds[HO_FRAME_MAX_TENSORS], none[1];
		unsigned int got;
		double t0, diff;

		for (uint32_t i = 0; i < h->n_inputs; i++) {
			const struct ho_npy *x = &in[i][f % (uint64_t)n_in[i]];

			feed_write(&fb[i], x->data, x->nbytes); /* the camera's own write */
			fds[i] = fb[i].fd;
		}
		t0 = cli_clock_s();
		if (ho_frame_send(sock, &s, sizeof(s), fds, h->n_inputs) ||
		    ho_frame_recv(sock, &d, sizeof(d), none, 0, &got) != (ssize_t)sizeof(d) ||
		    d.magic != HO_FRAME_MAGIC || d.id != f) {
			cli_error("feed: frame %llu: the server did not answer",
				  (unsigned long long)f);
			goto out;
		}
		if (d.status) {
			cli_error("feed: frame %llu: %s", (unsigned long long)f, d.error);
			goto out;
		}
		if (write(ctl[0], &f, sizeof(f)) != sizeof(f) ||
		    read(ctl[0], &diff, sizeof(diff)) != sizeof(diff)) {
			cli_error("feed: frame %llu: the consumer is gone", (unsigned long long)f);
			goto out;
		}
		lat[f] = cli_clock_s() - t0;
		run[f] = d.run_s;
		copied += d.copied;
		device_copy += d.device_copy;
		sent++;
		if (diff >= 0) {
			checked++;
			worst = fmax(worst, diff);
		}
		if (diff > 1e-5) {
			cli_error("feed: frame %llu: the answer is off by %.3g of its largest "
				  "magnitude",
				  (unsigned long long)f, diff);
			goto out;
		}
	}
	qsort(lat, sent, sizeof(double), feed_cmp);
	qsort(run, sent, sizeof(double), feed_cmp);
	printf("feed: %llu frames from %s (a ring of %llu): per frame median %.3f ms (P90 %.3f) "
	       "from the send to the consumer's check; the server's bind and run median %.3f "
	       "ms; the hand-off copied %llu bytes in all (%llu moved between devices); ",
	       (unsigned long long)sent, a.from, a.ring, lat[sent / 2] * 1e3,
	       lat[(sent * 9 + 9) / 10 - 1] * 1e3, run[sent / 2] * 1e3, (unsigned long long)copied,
	       (unsigned long long)device_copy);
	if (checked)
		printf("%llu answers checked, the largest difference %.2e of the largest "
		       "magnitude\n",
		       (unsigned long long)checked, worst);
	else
		printf("no answer checked (no --expect)\n");
	rc = 0;
out:
	if (sock >= 0)
		close(sock); /* the server sees the end */
	if (ctl[0] >= 0)
		close(ctl[0]); /* and so does the consumer */
	if (ctl[1] >= 0)
		close(ctl[1]);
	if (child > 0) {
		int st;

		waitpid(child, &st, 0);
		if (!WIFEXITED(st) || WEXITSTATUS(st))
			rc = 1;
	}
	for (unsigned int o = 0; o < n_out; o++)
		close(out_fds[o]);
	for (int r = 0; r < FEED_RING_MAX; r++)
		for (int i = 0; i < HO_FRAME_MAX_TENSORS; i++)
			if (ring[r][i].fd >= 0 || ring[r][i].map)
				feed_buf_free(&ring[r][i], pool);
	ho_pool_close(pool);
	for (int i = 0; i < HO_FRAME_MAX_TENSORS; i++)
		for (int k = 0; k < FEED_RING_MAX; k++) {
			ho_npy_free(&in[i][k]);
			ho_npy_free(&expect[i][k]);
		}
	free(lat);
	free(run);
	free(h);
	return rc;
}
