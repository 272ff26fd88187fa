// SPDX-License-Identifier: MIT
/*
 * heteroopt serve: the runtime end of a frame pipeline.  It plans a model
 * once, with its inputs and outputs in memory of their own, listens on a
 * Unix socket, and for each frame a producer sends as file descriptors
 * (include/heteroopt/frames.h) binds them in place and runs: the frame is
 * read where the producer wrote it, the answer written where the consumer
 * maps it, nothing copied on the way in or out.  --copy copies each frame
 * in instead, the baseline the hand-off is measured against.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <heteroopt/frames.h>
#include <heteroopt/runtime.h>

#include "cli.h"

struct serve_args {
	const char *model, *socket, *schedule, *box;
	struct cli_list shapes;
	unsigned long long frames, threads, pick;
	bool copy;
};

#define SA(field) offsetof(struct serve_args, field)
static const struct cli_opt serve_opts[] = {
    {"--socket", NULL, CLI_TEXT, "PATH", "the Unix socket to listen on (made afresh)", SA(socket),
     0, 0},
    {"--shape", NULL, CLI_LIST, "NAME=D0xD1...",
     "bind a symbolic input dimension (every frame has this shape)", SA(shapes), 0, 0},
    {"--schedule", NULL, CLI_TEXT, "S.json",
     "run a schedule from heteroopt schedule over its box's devices", SA(schedule), 0, 0},
    {"--box", NULL, CLI_TEXT, "BOX.json", "with --schedule: the box file, when not where it says",
     SA(box), 0, 0},
    {"--pick", NULL, CLI_COUNT, "N", "with --schedule: run front member N", SA(pick), 0, 1000000},
    {"--threads", NULL, CLI_COUNT, "N",
     "without --schedule: oneDNN threads (default: one per core)", SA(threads), 1, 1024},
    {"--frames", NULL, CLI_COUNT, "N", "stop after N frames (default: when the client hangs up)",
     SA(frames), 1, 1ull << 40},
    {"--copy", NULL, CLI_FLAG, NULL,
     "copy each frame into the runtime's own memory instead of\nreading it in place: the "
     "baseline the hand-off is measured\nagainst",
     SA(copy), 0, 0},
    {0},
};

static const struct cli_command serve_cmd = {
    .name = "serve",
    .usage = "MODEL.onnx --socket PATH [--shape NAME=D0xD1...] [--schedule S.json] [options]",
    .about = "Serve one client over a Unix socket: it sends frames as file descriptors (a\n"
	     "dma-buf or a memfd, one per model input), the model runs on each where it\n"
	     "is, and the answer is written into the outputs' memory, which the client got\n"
	     "as descriptors when it connected (include/heteroopt/frames.h).",
    .positional = "model",
    .positional_at = SA(model),
    .opts = serve_opts,
};

static uint32_t serve_open_fds(void)
{
	uint32_t n = 0;

	for (int fd = 0; fd < 4096; fd++)
		n += fcntl(fd, F_GETFD) >= 0;
	return n;
}

static int serve_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void serve_tensor(const struct ho_tensor *t, struct ho_frame_tensor *f)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);

	memset(f, 0, sizeof(*f));
	snprintf(f->name, sizeof(f->name), "%s", t->name);
	f->dtype = t->dtype;
	f->rank = t->shape.rank;
	for (int k = 0; k < t->shape.rank && k < 8; k++)
		f->dims[k] = t->shape.dim[k];
	f->bytes = t->bytes;
	f->span = (t->bytes + page - 1) / page * page;
}

/* --copy: the frame mapped, copied into the runtime's own memory, unmapped. */
static int serve_copy_in(struct ho_rt *rt, const struct ho_tensor *t, int fd, uint64_t off,
			 struct ho_error *err)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), len = (t->bytes + page - 1) / page * page;
	void *p = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, (off_t)off);
	int ret;

	if (p == MAP_FAILED)
		return ho_err(err, -errno, "input '%s': fd cannot be mapped: %s", t->name,
			      strerror(errno));
	ret = ho_rt_set_input_data(rt, t->name, t->dtype, t->shape.dim, t->shape.rank, p, err);
	munmap(p, len);
	return ret;
}

/* One frame: bound (or copied) in, run, answered. */
static int serve_frame(struct ho_rt *rt, const struct ho_graph *g, bool copy, int sock,
		       const struct ho_frame_submit *s, const int *fds, unsigned int n_fds,
		       double *run_s, uint64_t *copied)
{
	struct ho_frame_done d = {.magic = HO_FRAME_MAGIC, .id = s->id};
	struct ho_error err = {0};
	double t0 = cli_clock_s();
	int ret = 0;

	if (s->magic != HO_FRAME_MAGIC || s->n_fds != g->n_inputs || n_fds != g->n_inputs)
		ret = ho_err(&err, -EPROTO, "frame %llu: %u descriptors for %u inputs",
			     (unsigned long long)s->id, n_fds, g->n_inputs);
	for (uint32_t i = 0; !ret && i < g->n_inputs; i++) {
		const struct ho_tensor *t = &g->tensors[g->inputs[i]];

		ret = copy ? serve_copy_in(rt, t, fds[i], s->offset[i], &err)
			   : ho_rt_bind_fd(rt, t->name, fds[i], s->offset[i], &err);
		d.copied += copy && !ret ? t->bytes : 0;
	}
	if (!ret)
		ret = ho_rt_run(rt, &err);
	*run_s = cli_clock_s() - t0;
	d.run_s = *run_s;
	d.status = ret;
	d.device_copy = ret ? 0 : (uint64_t)ho_rt_last_report(rt)->bytes_moved;
	if (ret)
		snprintf(d.error, sizeof(d.error), "%.255s", err.msg);
	*copied += d.copied;
	return ho_frame_send(sock, &d, sizeof(d), NULL, 0) ?: ret;
}

/* The hello, with the outputs' memory as descriptors. */
static int serve_hello(struct ho_rt *rt, const struct ho_graph *g, int sock, struct ho_error *err)
{
	struct ho_frame_hello *h = calloc(1, sizeof(*h));
	int fds[HO_FRAME_MAX_TENSORS], ret = 0;
	uint32_t n = 0;

	if (!h)
		return ho_err(err, -ENOMEM, "out of memory");
	h->magic = HO_FRAME_MAGIC;
	h->version = HO_FRAME_VERSION;
	h->n_inputs = g->n_inputs;
	h->n_outputs = g->n_outputs;
	for (uint32_t i = 0; i < g->n_inputs; i++)
		serve_tensor(&g->tensors[g->inputs[i]], &h->input[i]);
	for (; n < g->n_outputs && !ret; n++) {
		serve_tensor(&g->tensors[g->outputs[n]], &h->output[n]);
		fds[n] = ho_rt_export_fd(rt, g->tensors[g->outputs[n]].name, err);
		if (fds[n] < 0)
			ret = fds[n];
	}
	if (!ret && (ret = ho_frame_send(sock, h, sizeof(*h), fds, n)))
		ho_err(err, ret, "the hello did not go: %s", strerror(-ret));
	for (uint32_t i = 0; i < n; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	free(h);
	return ret;
}

/* Serve one client until it hangs up or max frames are done; the run times in times[]. */
static int serve_client(struct ho_rt *rt, const struct ho_graph *g, const struct serve_args *a,
			int sock, double *times, uint64_t *frames, uint64_t *copied,
			uint32_t *fds_first, uint32_t *fds_last, struct ho_error *err)
{
	int ret = serve_hello(rt, g, sock, err);

	*fds_first = serve_open_fds();
	while (!ret && (!a->frames || *frames < a->frames)) {
		struct ho_frame_submit s;
		int fds[HO_FRAME_MAX_TENSORS];
		unsigned int n = 0;
		ssize_t got = ho_frame_recv(sock, &s, sizeof(s), fds, HO_FRAME_MAX_TENSORS, &n);

		if (got == 0)
			break; /* the client is done */
		if (got != (ssize_t)sizeof(s)) {
			for (unsigned int i = 0; i < n; i++)
				close(fds[i]);
			return ho_err(err, got < 0 ? (int)got : -EPROTO,
				      "a message that is not a frame (%zd bytes)", got);
		}
		/* a bad frame is answered with its error; the next may be fine */
		int r =
		    serve_frame(rt, g, a->copy, sock, &s, fds, n, &times[*frames % 4096], copied);

		for (unsigned int i = 0; i < n; i++)
			close(fds[i]); /* bound frames hold their own reference */
		if (r == -EPIPE || r == -ECONNRESET)
			break;
		(*frames)++;
	}
	/* every frame kept let go: what is open now must be what was before the first */
	for (uint32_t i = 0; !ret && i < g->n_inputs; i++)
		ret = ho_rt_bind_fd(rt, g->tensors[g->inputs[i]].name, -1, 0, err);
	*fds_last = serve_open_fds();
	return ret;
}

static int serve_listen(const char *path, struct ho_error *err)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int s;

	if (strlen(path) >= sizeof(sa.sun_path))
		return ho_err(err, -ENAMETOOLONG, "--socket %s: longer than %zu bytes", path,
			      sizeof(sa.sun_path) - 1);
	strcpy(sa.sun_path, path);
	s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (s < 0)
		return ho_err(err, -errno, "socket: %s", strerror(errno));
	unlink(path);
	if (bind(s, (struct sockaddr *)&sa, sizeof(sa)) || listen(s, 1)) {
		int e = errno;

		close(s);
		return ho_err(err, -e, "--socket %s: %s", path, strerror(e));
	}
	return s;
}

int cmd_serve(int argc, char **argv)
{
	struct serve_args a = {.pick = ~0ull};
	struct ho_rt_opts ro = {0};
	struct ho_rt_placement *pl = NULL;
	struct ho_graph *g = NULL;
	struct ho_rt *rt = NULL;
	struct ho_error err = {0};
	const char *ext[2 * HO_FRAME_MAX_TENSORS];
	double *times = NULL;
	uint64_t frames = 0, copied = 0;
	uint32_t fds_first = 0, fds_last = 0;
	int lsock = -1, sock = -1, rc = 1;

	switch (cli_parse(&serve_cmd, argc, argv, &a)) {
	case 1:
		return 0;
	case -1:
		return 2;
	}
	if (!a.model || !a.socket) {
		cli_error("serve: %s (see heteroopt serve --help)",
			  a.model ? "no --socket given" : "no model given");
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	if (ho_onnx_load(a.model, NULL, &g, &err))
		goto fail;
	for (int i = 0; i < a.shapes.n; i++) {
		char name[256];
		int64_t dims[HO_MAX_RANK];
		int rank;

		if (ho_parse_shape_arg(a.shapes.v[i], name, sizeof(name), dims, &rank, &err) ||
		    ho_graph_bind_input(g, name, dims, rank, &err))
			goto fail;
	}
	if (ho_shape_infer(g, &err))
		goto fail;
	if (g->n_inputs > HO_FRAME_MAX_TENSORS || g->n_outputs > HO_FRAME_MAX_TENSORS) {
		cli_error("serve: %u inputs and %u outputs; a frame carries at most %d of each",
			  g->n_inputs, g->n_outputs, HO_FRAME_MAX_TENSORS);
		goto out;
	}
	for (uint32_t i = 0; i < g->n_inputs; i++)
		ext[ro.n_external++] = g->tensors[g->inputs[i]].name;
	for (uint32_t i = 0; i < g->n_outputs; i++)
		ext[ro.n_external++] = g->tensors[g->outputs[i]].name;
	ro.external = ext;
	ro.threads = (int)a.threads;
	if (a.schedule) {
		if (cli_placement(a.schedule, a.box, a.pick, a.model, g, &pl, &err))
			goto fail;
		ro.placement = pl;
	}
	if (ho_rt_new(g, &ro, &rt, &err))
		goto fail;
	if ((lsock = serve_listen(a.socket, &err)) < 0)
		goto fail;
	printf("serve: %s on %s, frames %s; listening on %s\n", a.model,
	       pl ? "the schedule's devices" : "cpu0 (oneDNN)",
	       a.copy ? "copied in (--copy)" : "read in place", a.socket);
	fflush(stdout);
	sock = accept4(lsock, NULL, NULL, SOCK_CLOEXEC);
	if (sock < 0) {
		ho_err(&err, -errno, "accept: %s", strerror(errno));
		goto fail;
	}
	times = calloc(4096, sizeof(double));
	if (!times) {
		cli_error("serve: out of memory");
		goto out;
	}
	if (serve_client(rt, g, &a, sock, times, &frames, &copied, &fds_first, &fds_last, &err))
		goto fail;
	if (frames) {
		uint32_t n = frames < 4096 ? (uint32_t)frames : 4096;

		qsort(times, n, sizeof(double), serve_cmp);
		printf("serve: %llu frames; bind and run median %.3f ms (P90 %.3f); the hand-off "
		       "copied %llu bytes a frame; open fds %u before the first frame, %u once the "
		       "frames were let go; memory pool: %s\n",
		       (unsigned long long)frames, times[n / 2] * 1e3,
		       times[(n * 9 + 9) / 10 - 1] * 1e3, (unsigned long long)(copied / frames),
		       fds_first, fds_last, ho_rt_last_report(rt)->pool);
	}
	rc = 0;
	goto out;
fail:
	cli_error("serve: %s", err.msg);
out:
	if (sock >= 0)
		close(sock);
	if (lsock >= 0) {
		close(lsock);
		unlink(a.socket);
	}
	free(times);
	ho_rt_free(rt);
	ho_rt_placement_free(pl);
	ho_graph_free(g);
	return rc;
}
