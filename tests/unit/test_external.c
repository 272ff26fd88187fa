// SPDX-License-Identifier: MIT
/*
 * Tensors in outside memory (ho_rt_bind_fd), on squeezenet1_1: a frame
 * another process wrote into a memfd is read where it is, the answer is
 * written into the consumer's memfd, and both equal a plain run's (which
 * copies the input in); a second frame, bound in its turn, gives its own
 * answer; the output's exported fd shows what the runtime wrote.  On a
 * plan over cpu0 and the emulator the bound input is copied to the emulator
 * from the outside memory itself; on cpu0 and an OpenCL device sharing host
 * memory, the device's kernels map the frame in place, nothing copied.  Bad
 * bindings are refused naming the problem, and leave the plan running as
 * before.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "heteroopt/graph.h"
#include "heteroopt/npy.h"
#include "heteroopt/runtime.h"
#include "test_util.h"

/* A memfd of size bytes (page-rounded by the caller), mapped; its mapping in *map. */
static int frame_fd(size_t size, float **map)
{
	int fd = memfd_create("frame", MFD_CLOEXEC);

	T_REQUIRE(fd >= 0 && ftruncate(fd, (off_t)size) == 0);
	*map = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	T_REQUIRE(*map != MAP_FAILED);
	return fd;
}

static double diff_of(const float *a, const float *b, size_t n)
{
	double d = 0;

	for (size_t i = 0; i < n; i++)
		d = fmax(d, fabs((double)a[i] - b[i]));
	return d;
}

static uint32_t open_fds(void)
{
	uint32_t n = 0;

	for (int fd = 0; fd < 4096; fd++)
		n += fcntl(fd, F_GETFD) >= 0;
	return n;
}

/* The plain run's answer for input x: the reference the bound runs must equal. */
static float *plain(const struct ho_graph *g, const struct ho_rt_opts *o, const struct ho_npy *x)
{
	struct ho_rt *rt = NULL;
	struct ho_error err;
	const struct ho_tensor *yt;
	float *y;

	T_REQUIRE(ho_rt_new(g, o, &rt, &err) == 0);
	T_REQUIRE(ho_rt_set_input(rt, "input", x->shape, x->ndim, x->data, &err) == 0);
	T_REQUIRE(ho_rt_run(rt, &err) == 0);
	const float *out = ho_rt_output(rt, 0, &yt);

	y = malloc(yt->bytes);
	T_REQUIRE(y);
	memcpy(y, out, yt->bytes);
	ho_rt_free(rt);
	return y;
}

static void bound_runs(const struct ho_graph *g, struct ho_rt_opts *o, const struct ho_npy *x,
		       const char *label, bool no_copies)
{
	const char *out_name = g->tensors[g->outputs[0]].name, *ext[] = {"input", out_name};
	size_t page = (size_t)sysconf(_SC_PAGESIZE), in_len = (x->nbytes + page - 1) / page * page,
	       out_len;
	struct ho_rt *rt = NULL;
	struct ho_error err;
	const struct ho_tensor *yt;
	float *f1, *f2, *y_in, *exported, *ref1, *ref2;
	struct ho_npy x2 = *x;
	int fd1, fd2, fy, fe;
	uint32_t fds0 = open_fds();

	/* two frames: the reference's input, and it reversed */
	x2.data = malloc(x->nbytes);
	T_REQUIRE(x2.data);
	for (size_t i = 0; i < x->count; i++)
		((float *)x2.data)[i] = ((const float *)x->data)[x->count - 1 - i];
	ref1 = plain(g, o, x);
	ref2 = plain(g, o, &x2);

	o->external = ext;
	o->n_external = 2;
	T_CHECK(ho_rt_new(g, o, &rt, &err) == 0, "%s: plan with external input and output: %s",
		label, err.msg);
	T_REQUIRE(rt);
	ho_rt_output(rt, 0, &yt);
	out_len = (yt->bytes + page - 1) / page * page;
	fd1 = frame_fd(in_len, &f1);
	fd2 = frame_fd(in_len + page, &f2);
	fy = frame_fd(out_len, &y_in);
	memcpy(f1, x->data, x->nbytes);
	memcpy((char *)f2 + page, x2.data, x->nbytes); /* at an offset of one page */

	/* frame 1 in, the answer into the consumer's memory: no input was set, none copied */
	T_CHECK(ho_rt_bind_fd(rt, "input", fd1, 0, &err) == 0, "bind input: %s", err.msg);
	T_CHECK(ho_rt_bind_fd(rt, out_name, fy, 0, &err) == 0, "bind output: %s", err.msg);
	close(fd1); /* the plan holds its own */
	T_CHECK(ho_rt_run(rt, &err) == 0, "run on frame 1: %s", err.msg);
	const struct ho_rt_report *r = ho_rt_last_report(rt);
	double d1 = diff_of(y_in, ref1, yt->bytes / 4);

	T_CHECK(d1 == 0, "%s: frame 1's answer in the consumer's memory is off by %.2e", label, d1);
	T_CHECK(r->bound == 2 && r->bound_bytes == (double)(x->nbytes + yt->bytes),
		"%s: %u tensors, %.0f bytes bound", label, r->bound, r->bound_bytes);
	T_CHECK(ho_rt_output(rt, 0, NULL) != NULL &&
		    diff_of(ho_rt_output(rt, 0, NULL), ref1, yt->bytes / 4) == 0,
		"%s: ho_rt_output does not show the bound output", label);
	T_CHECK(!no_copies || r->transfers == 0,
		"%s: %u copies (%.0f bytes) where every device maps the frames in place", label,
		r->transfers, r->bytes_moved);
	printf("  %s, frame 1: answer in the consumer's memfd equal to a plain run's; %u copies "
	       "(%.0f bytes), %u tensors (%.0f bytes) where they were bound\n",
	       label, r->transfers, r->bytes_moved, r->bound, r->bound_bytes);

	/* frame 2 in its turn, at an offset; the consumer's memory still bound */
	T_CHECK(ho_rt_bind_fd(rt, "input", fd2, page, &err) == 0, "bind frame 2: %s", err.msg);
	T_CHECK(ho_rt_run(rt, &err) == 0, "run on frame 2: %s", err.msg);
	T_CHECK(diff_of(y_in, ref2, yt->bytes / 4) == 0, "%s: frame 2's answer differs", label);
	/* a frame rewritten in place is read anew: nothing was kept from before */
	memcpy((char *)f2 + page, x->data, x->nbytes);
	T_CHECK(ho_rt_run(rt, &err) == 0 && diff_of(y_in, ref1, yt->bytes / 4) == 0,
		"%s: a frame rewritten in place gave a stale answer", label);

	/* the output back in the runtime's own memory, which another process maps by fd */
	T_CHECK(ho_rt_bind_fd(rt, out_name, -1, 0, &err) == 0, "unbind output: %s", err.msg);
	fe = ho_rt_export_fd(rt, out_name, &err);
	T_CHECK(fe >= 0, "export output: %s", err.msg);
	exported = mmap(NULL, out_len, PROT_READ, MAP_SHARED, fe, 0);
	T_REQUIRE(exported != MAP_FAILED);
	memcpy((char *)f2 + page, x2.data, x->nbytes);
	T_CHECK(ho_rt_run(rt, &err) == 0, "run into its own output: %s", err.msg);
	T_CHECK(diff_of(exported, ref2, yt->bytes / 4) == 0,
		"%s: the exported output does not show the answer", label);
	T_CHECK(diff_of(y_in, ref1, yt->bytes / 4) == 0,
		"%s: the consumer's memory was written after it was let go", label);

	/* refused, naming the problem; the plan runs on as before */
	T_CHECK(ho_rt_bind_fd(rt, "input", fd2, 100, &err) == -EINVAL &&
		    strstr(err.msg, "multiple of the page size"),
		"an unaligned offset: %s", err.msg);
	T_CHECK(ho_rt_bind_fd(rt, "input", fy, 0, &err) == -EINVAL && strstr(err.msg, "holds"),
		"a too small fd: %s", err.msg);
	T_CHECK(ho_rt_bind_fd(rt, "input", 1000, 0, &err) < 0 && strstr(err.msg, "fd 1000"),
		"a closed fd: %s", err.msg);
	T_CHECK(ho_rt_bind_fd(rt, g->nodes[1].name, fd2, 0, &err) == -EINVAL &&
		    strstr(err.msg, "not one the plan was made to hold"),
		"a tensor not external: %s", err.msg);
	T_CHECK(ho_rt_run(rt, &err) == 0 && diff_of(exported, ref2, yt->bytes / 4) == 0,
		"%s: the plan after refused bindings: %s", label, err.msg);
	munmap(exported, out_len);
	close(fe);
	ho_rt_free(rt);
	munmap(f1, in_len);
	munmap(f2, in_len + page);
	munmap(y_in, out_len);
	close(fd2);
	close(fy);
	T_CHECK(open_fds() == fds0, "%s: %u fds open after, %u before", label, open_fds(), fds0);
	free(ref1);
	free(ref2);
	free(x2.data);
	o->external = NULL;
	o->n_external = 0;
}

/*
 * cpu0 and an OpenCL device that shares host memory (PoCL here), every node it
 * takes on it, the first among them: the frame is mapped in place for its
 * kernels (CL_MEM_USE_HOST_PTR over the bound pages), nothing is copied in or
 * out.  Skipped where no such device is found.
 */
static void ocl_runs(const struct ho_graph *g, struct ho_rt_opts *o, struct ho_rt_placement *pl,
		     const struct ho_npy *x)
{
	struct ho_rt_found f[8];
	int n = ho_rt_find_devices(f, 8), k = 0;
	bool *takes = calloc(g->n_nodes, sizeof(bool));
	struct ho_error err;

	while (k < n && strcmp(f[k].backend, "opencl"))
		k++;
	if (k == n) {
		printf("  cpu0 + ocl0: no OpenCL device here, skipped\n");
		free(takes);
		return;
	}
	T_REQUIRE(takes && ho_rt_backend_nodes("opencl", g, takes, NULL, NULL, &err) >= 0);
	t_rt_device(&pl->dev[1], "ocl0", "opencl", 0);
	pl->in_place[0] = 2; /* both address host memory: each reads the other's in place */
	pl->in_place[1] = 1;
	for (uint32_t i = 0; i < g->n_nodes; i++)
		if (pl->node_device[i] >= 0)
			pl->node_device[i] = takes[i];
	for (uint32_t i = 0; i < g->n_nodes; i++) /* the frame's reader: on ocl0 */
		if (g->nodes[i].n_inputs && g->nodes[i].inputs[0] == g->inputs[0])
			T_CHECK(pl->node_device[i] == 1,
				"%s (%s), the frame's reader, is not on ocl0", g->nodes[i].name,
				g->nodes[i].op_type);
	bound_runs(g, o, x, "cpu0 + ocl0", true);
	pl->in_place[0] = pl->in_place[1] = 0;
	free(takes);
}

int main(void)
{
	char model[4096], in_path[4096];
	struct ho_graph *g = NULL;
	struct ho_npy in = {0};
	struct ho_error err;
	struct ho_rt_placement pl = {.n_devices = 2, .host = 0};
	struct ho_rt_opts o = {.threads = 1};
	struct ho_rt *rt = NULL;
	static const char *const not_io[] = {"nope"};

	alarm(120);
	if (t_model_path(model, sizeof(model), "squeezenet1_1.onnx") ||
	    t_model_path(in_path, sizeof(in_path), "squeezenet1_1.ref_in.npy")) {
		t_model_skipped("squeezenet1_1.onnx");
		return T_SKIP;
	}
	T_REQUIRE(ho_onnx_load(model, NULL, &g, &err) == 0);
	T_REQUIRE(ho_npy_read(in_path, &in, &err) == 0);
	T_REQUIRE(ho_graph_bind_input(g, "input", in.shape, in.ndim, &err) == 0);
	T_REQUIRE(ho_shape_infer(g, &err) == 0);

	bound_runs(g, &o, &in, "one CPU device", true);

	/* cpu0 and the emulator, every other node on each: the input is copied from the frame */
	t_rt_device(&pl.dev[0], "cpu0", "cpu", 0);
	t_rt_device(&pl.dev[1], "emu0", "emu", 0);
	pl.node_device = calloc(g->n_nodes, sizeof(int32_t));
	pl.node_prio = calloc(g->n_nodes, sizeof(uint32_t));
	T_REQUIRE(pl.node_device && pl.node_prio);
	for (uint32_t i = 0, k = 0; i < g->n_nodes; i++) {
		uint32_t id = (uint32_t)g->topo[i];
		bool task = ho_node_is_task(&g->nodes[id]);

		pl.node_device[id] = task ? (int32_t)(k++ % 2 == 0) : -1; /* the first on emu0 */
		pl.node_prio[id] = i;
	}
	o.placement = &pl;
	bound_runs(g, &o, &in, "cpu0 + emu0", false);
	ocl_runs(g, &o, &pl, &in);

	o.external = not_io;
	o.n_external = 1;
	T_CHECK(ho_rt_new(g, &o, &rt, &err) == -EINVAL && strstr(err.msg, "'nope'"),
		"an external tensor that is no input or output: %s", err.msg);
	ho_rt_free(rt);
	free(pl.node_device);
	free(pl.node_prio);
	ho_npy_free(&in);
	ho_graph_free(g);
	return t_failures ? 1 : 0;
}
