// SPDX-License-Identifier: MIT
/*
 * The OpenCL backend (PoCL here) against OpenCL and CLBlast driven directly,
 * in the same run, medians of repeated runs:
 *   dispatch  a chain of tiny nodes wholly on the device: the executor's time
 *             per node against a bare loop enqueueing the same kernels
 *   copy      pool copies between two regions the device wraps, against
 *             clEnqueueCopyBuffer between the same bytes, by size
 *   upload, download  the device keeping its own memory ("memory": "device"):
 *             the executor's copy of a tensor into it (a node on cpu0 feeding
 *             one on the device) and of the graph's output out of it, as the
 *             run record times them, against clEnqueueWriteBuffer and
 *             clEnqueueReadBuffer of the same bytes around the same Relu, by size
 *   matmul    a one-MatMul model run by the executor against CLBlast's SGEMM
 *             on the same shapes and memory
 * usage: bench_opencl MODELS_DIR; exits 77 where there is no OpenCL device.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../probes/probe_priv.h"
#include "../user/runtime/backends/opencl/ocl.h"
#include "bench_util.h"
#include "heteroopt/graph.h"
#include "heteroopt/pool.h"
#include "heteroopt/runtime.h"

#include <clblast_c.h>

#define REPS 9

static const struct ho_backend_ops *ocl_ops;

/* cpu0 (the host, one thread) and ocl0 keeping its tensors where memory says ("": as it offers). */
static void cpu0_and_ocl0(struct ho_rt_placement *pl, const char *memory)
{
	snprintf(pl->dev[0].name, sizeof(pl->dev[0].name), "cpu0");
	snprintf(pl->dev[0].backend, sizeof(pl->dev[0].backend), "cpu");
	snprintf(pl->dev[1].name, sizeof(pl->dev[1].name), "ocl0");
	snprintf(pl->dev[1].backend, sizeof(pl->dev[1].backend), "opencl");
	snprintf(pl->dev[1].memory, sizeof(pl->dev[1].memory), "%s", memory);
	pl->dev[0].numa_node = pl->dev[1].numa_node = -1;
	pl->dev[0].threads = 1;
}

/* A plan placing every node the device runs on ocl0, beside the host cpu0. */
static int plan_on_device(const struct ho_graph *g, struct ho_rt **rt, struct ho_error *err)
{
	struct ho_rt_placement pl = {.n_devices = 2, .host = 0};
	struct ho_rt_opts o = {.placement = &pl};
	int ret;

	cpu0_and_ocl0(&pl, "");
	pl.in_place[0] = 2;
	pl.in_place[1] = 1;
	pl.node_device = calloc(g->n_nodes, sizeof(int32_t));
	pl.node_prio = calloc(g->n_nodes, sizeof(uint32_t));
	if (!pl.node_device || !pl.node_prio) {
		ret = ho_err(err, -ENOMEM, "out of memory");
		goto out;
	}
	for (uint32_t i = 0; i < g->n_nodes; i++) {
		uint32_t id = (uint32_t)g->topo[i];

		pl.node_device[id] = !ho_node_is_task(&g->nodes[id])	   ? -1
				     : ocl_ops->runs(g->nodes[id].op_type) ? 1
									   : 0;
		pl.node_prio[id] = i;
	}
	ret = ho_rt_new(g, &o, rt, err);
out:
	free(pl.node_device);
	free(pl.node_prio);
	return ret;
}

/* The chain's kernels, prepared by the backend over two slots of memory in turn. */
struct bare {
	struct ho_kernel **k;
	struct ho_mem *mem;
	float *host;
	struct ho_dev_block *blk;
};

static int bare_prepare(const struct ho_graph *g, struct ho_backend *b, struct bare *x,
			struct ho_error *err)
{
	x->k = calloc(g->n_nodes, sizeof(*x->k));
	x->mem = calloc(g->n_tensors, sizeof(*x->mem));
	x->host = calloc(2 * 16, sizeof(float));
	if (!x->k || !x->mem || !x->host)
		return ho_err(err, -ENOMEM, "out of memory");
	if (ocl_ops->wrap(b, x->host, 2 * 16 * sizeof(float), &x->blk, err))
		return err->code;
	for (uint32_t i = 0; i < g->n_tensors; i++)
		x->mem[i] =
		    (struct ho_mem){x->blk, (i % 2) * 16 * sizeof(float), x->host + (i % 2) * 16};
	for (uint32_t i = 0; i < g->n_nodes; i++)
		if (ocl_ops->prepare(b, g, i, NULL, x->mem, NULL, &x->k[i], err))
			return err->code;
	return 0;
}

/* The kernels enqueued back to back, one finish: no executor. */
static double bare_run(const struct ho_graph *g, struct ho_backend *b, const struct bare *x)
{
	double t0 = now();

	for (uint32_t i = 0; i < g->n_nodes; i++)
		for (int j = 0; x->k[i] && j < x->k[i]->n; j++) {
			const struct ocl_launch *l = &x->k[i]->l[j];

			clEnqueueNDRangeKernel(b->q, l->k, l->dims, NULL, l->global,
					       l->local[0] ? l->local : NULL, 0, NULL, NULL);
		}
	clFinish(b->q);
	return now() - t0;
}

static void bare_free(const struct ho_graph *g, struct ho_backend *b, struct bare *x)
{
	for (uint32_t i = 0; x->k && i < g->n_nodes; i++)
		ocl_ops->kernel_free(x->k[i]);
	if (x->blk)
		ocl_ops->unwrap(b, x->blk);
	free(x->k);
	free(x->mem);
	free(x->host);
}

/* The executor and the bare loop in turn, a round each per repetition. */
static void bench_dispatch(const char *models, struct ho_backend *b)
{
	char path[4096];
	struct ho_graph *g = NULL;
	struct ho_rt *rt = NULL;
	struct bare x = {0};
	struct ho_error err;
	double te[REPS], tb[REPS];

	snprintf(path, sizeof(path), "%s/chain10000_relu.onnx", models);
	if (ho_onnx_load(path, NULL, &g, &err) || ho_shape_infer(g, &err) ||
	    plan_on_device(g, &rt, &err) ||
	    ho_rt_set_input(rt, "x", (int64_t[]){1, 4}, 2, (float[]){1, -2, 3, -4}, &err) ||
	    bare_prepare(g, b, &x, &err) || ho_rt_run(rt, &err)) {
		printf("dispatch skipped: %s\n", err.msg);
		goto out;
	}
	bare_run(g, b, &x); /* the first compiles each kernel for its work sizes */
	for (int r = 0; r < REPS; r++) {
		double t0 = now();

		ho_rt_run(rt, &err);
		te[r] = (now() - t0) / g->n_nodes;
		tb[r] = bare_run(g, b, &x) / g->n_nodes;
	}
	double me = median(te, REPS), mb = median(tb, REPS);

	printf("dispatch %u Relu nodes on %s: executor %.2f us/node, bare enqueue loop %.2f "
	       "us/node: ratio %.2f   [median of %d, interleaved]\n",
	       g->n_nodes, b->name, me * 1e6, mb * 1e6, me / mb, REPS);
out:
	bare_free(g, b, &x);
	ho_rt_free(rt);
	ho_graph_free(g);
}

static void bench_copy(struct ho_backend *b)
{
	static const size_t sizes[] = {65536, 1 << 20, 16 << 20, 64 << 20};
	struct ho_dev_block *ba = NULL, *bb = NULL;
	struct ho_pool_buf a, c;
	struct ho_error err;
	struct ho_pool *p;

	if (ho_pool_open(0, &p)) {
		printf("copy     no memory pool: skipped\n");
		return;
	}
	if (ho_pool_alloc(p, 64 << 20, 0, &a) || ho_pool_alloc(p, 64 << 20, 0, &c) ||
	    ocl_ops->wrap(b, a.ptr, a.size, &ba, &err) ||
	    ocl_ops->wrap(b, c.ptr, c.size, &bb, &err)) {
		printf("copy     cannot get and wrap 2 x 64 MiB of the pool: skipped\n");
		goto out;
	}
	memset(a.ptr, 1, a.size);
	memset(c.ptr, 2, c.size);
	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		size_t n = sizes[s];
		int iters = (int)((256u << 20) / n) + 1;
		double tp[REPS], tc[REPS];
		struct ho_pool_copy pc = {&a, &c, 0, 0, n};

		for (int r = 0; r < REPS; r++) {
			double t0 = now();

			for (int i = 0; i < iters; i++)
				ho_pool_copy(p, &pc, 1);
			tp[r] = (now() - t0) / iters;
			t0 = now();
			for (int i = 0; i < iters; i++)
				clEnqueueCopyBuffer(b->q, ba->mem, bb->mem, 0, 0, n, 0, NULL, NULL);
			clFinish(b->q);
			tc[r] = (now() - t0) / iters;
		}
		double mp = median(tp, REPS), mc = median(tc, REPS);

		printf("copy     %9zu B: pool %6.2f GB/s, clEnqueueCopyBuffer %6.2f GB/s: ratio "
		       "%.2f   [%s, median of %d]\n",
		       n, n / mp * 1e-9, n / mc * 1e-9, mc / mp, ho_pool_describe(p), REPS);
	}
out:
	if (ba)
		ocl_ops->unwrap(b, ba);
	if (bb)
		ocl_ops->unwrap(b, bb);
	ho_pool_free(p, &a);
	ho_pool_free(p, &c);
	ho_pool_close(p);
}

/* A chain of relus Relus on n bytes, shapes inferred. */
static int relu_chain(uint32_t relus, size_t n, struct ho_graph **g, struct ho_error *err)
{
	struct ho_pb *pb = ho_pb_new(1);
	int ret = pb ? ho_probe_build_chain(pb, relus, (int64_t)(n / 4)) : -ENOMEM;

	if (!ret)
		ret = ho_pb_load(pb, g, err);
	ho_pb_free(pb);
	return ret ? ret : ho_shape_infer(*g, err);
}

/* Two Relus on n bytes, the first on cpu0, the second on an OpenCL device keeping its own memory.
 */
static int exec_copies_new(size_t n, struct ho_graph **g, struct ho_rt **rt, struct ho_error *err)
{
	struct ho_rt_placement pl = {.n_devices = 2, .host = 0};
	struct ho_rt_opts o = {.placement = &pl};
	int32_t node_dev[2], prio[2] = {0, 1};
	int ret = relu_chain(2, n, g, err);

	if (ret)
		return ret;
	cpu0_and_ocl0(&pl, "device");
	node_dev[(*g)->topo[0]] = 0;
	node_dev[(*g)->topo[1]] = 1;
	pl.node_device = node_dev;
	pl.node_prio = (uint32_t *)prio;
	if ((ret = ho_rt_new(*g, &o, rt, err)))
		return ret;
	return ho_probe_set_inputs(*g, *rt, err);
}

/* The run record's copy in (*up) and out (*down) of one run. */
static int exec_copies(const struct ho_graph *g, struct ho_rt *rt, double *up, double *down,
		       struct ho_error *err)
{
	int32_t mid = g->nodes[g->topo[0]].outputs[0], y = g->outputs[0];
	const struct ho_rt_report *rep;
	int ret = ho_rt_run(rt, err);

	if (ret)
		return ret;
	rep = ho_rt_last_report(rt);
	*up = rep->copy_end_s[mid * 2 + 1] - rep->copy_start_s[mid * 2 + 1];
	*down = rep->copy_end_s[y * 2 + 0] - rep->copy_start_s[y * 2 + 0];
	return 0;
}

/* The backend's own Relu on n bytes of blk's device memory, into the n after them. */
static int bare_relu_new(struct ho_backend *b, struct ho_dev_block *blk, size_t n,
			 struct ho_graph **g, struct ho_kernel **k, struct ho_error *err)
{
	struct ho_mem *mem = NULL;
	int ret = relu_chain(1, n, g, err);

	if (ret)
		return ret;
	if (!(mem = calloc((*g)->n_tensors, sizeof(*mem))))
		return ho_err(err, -ENOMEM, "out of memory");
	mem[(*g)->inputs[0]] = (struct ho_mem){blk, 0, NULL};
	mem[(*g)->outputs[0]] = (struct ho_mem){blk, n, NULL};
	ret = ocl_ops->prepare(b, *g, (uint32_t)(*g)->topo[0], NULL, mem, NULL, k, err);
	free(mem);
	return ret;
}

/*
 * The executor's sequence without it: write x, the Relu, read y, the two
 * copies timed (*w, *rd).  The kernel between them leaves the caches as the
 * executor's run does.
 */
static int bare_copies(struct ho_backend *b, struct ho_dev_block *blk, struct ho_kernel *k,
		       float *host, size_t n, double *w, double *rd, struct ho_error *err)
{
	double t0 = now(), s, e;
	int ret;

	clEnqueueWriteBuffer(b->q, blk->mem, CL_TRUE, 0, n, host, 0, NULL, NULL);
	*w = now() - t0;
	if ((ret = ocl_ops->launch(b, k, err)) || (ret = ocl_ops->wait(b, k, &s, &e, err)))
		return ret;
	t0 = now();
	clEnqueueReadBuffer(b->q, blk->mem, CL_TRUE, n, n, host, 0, NULL, NULL);
	*rd = now() - t0;
	return 0;
}

/* The executor and the bare sequence in turn on n bytes, REPS rounds each. */
static int device_copies(struct ho_backend *b, struct ho_dev_block *blk, float *host, size_t n,
			 double t[4][REPS], struct ho_error *err)
{
	struct ho_graph *ge = NULL, *gb = NULL;
	struct ho_kernel *k = NULL;
	struct ho_rt *rt = NULL;
	int ret = exec_copies_new(n, &ge, &rt, err);

	if (!ret)
		ret = bare_relu_new(b, blk, n, &gb, &k, err);
	for (int r = 0; r < REPS && !ret; r++)
		if (!(ret = exec_copies(ge, rt, &t[0][r], &t[1][r], err)))
			ret = bare_copies(b, blk, k, host, n, &t[2][r], &t[3][r], err);
	ocl_ops->kernel_free(k);
	ho_graph_free(gb);
	ho_rt_free(rt);
	ho_graph_free(ge);
	return ret;
}

static void bench_device_memory(void)
{
	static const size_t sizes[] = {65536, 1 << 20, 16 << 20, 64 << 20};
	const size_t most = 64 << 20;
	struct ho_rt_device dev = {.name = "ocl0", .backend = "opencl", .numa_node = -1};
	struct ho_dev_block *blk = NULL;
	struct ho_backend *b = NULL;
	struct ho_error err = {0};
	float *host = malloc(2 * most);

	snprintf(dev.memory, sizeof(dev.memory), "device");
	if (!host || ocl_ops->open(&dev, 0, &b, &err) ||
	    ocl_ops->wrap(b, memset(host, 1, 2 * most), 2 * most, &blk, &err)) {
		printf("upload   no device memory here: skipped\n");
		goto out;
	}
	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		size_t n = sizes[s];
		double t[4][REPS]; /* the executor's up and down, the bare ones */

		if (device_copies(b, blk, host, n, t, &err)) {
			printf("upload   %9zu B: %s\n", n, err.msg);
			break;
		}
		double mu = median(t[0], REPS), md = median(t[1], REPS), mw = median(t[2], REPS),
		       mr = median(t[3], REPS);

		printf(
		    "upload   %9zu B: executor %6.2f GB/s, clEnqueueWriteBuffer %6.2f GB/s: ratio "
		    "%.2f   [median of %d, interleaved]\n",
		    n, n / mu * 1e-9, n / mw * 1e-9, mw / mu, REPS);
		printf(
		    "download %9zu B: executor %6.2f GB/s, clEnqueueReadBuffer  %6.2f GB/s: ratio "
		    "%.2f   [median of %d, interleaved]\n",
		    n, n / md * 1e-9, n / mr * 1e-9, mr / md, REPS);
	}
out:
	if (blk)
		ocl_ops->unwrap(b, blk);
	if (b)
		ocl_ops->close(b);
	free(host);
}

/* A model of one MatMul, input a[M, K] by a weight [K, N]. */
static int matmul_model(int64_t M, int64_t K, int64_t N, struct ho_graph **g, struct ho_error *err)
{
	struct ho_pb *pb = ho_pb_new(1);
	int ret;

	if (!pb)
		return ho_err(err, -ENOMEM, "out of memory");
	ret = ho_pb_input(pb, "a", 2, (int64_t[]){M, K});
	if (!ret)
		ret = ho_pb_weight(pb, "w", 2, (int64_t[]){K, N});
	if (!ret)
		ret = ho_pb_node(pb, "MatMul", "a,w", "y");
	if (!ret)
		ret = ho_pb_output(pb, "y");
	ret = ret ? ho_err(err, ret, "cannot build the model") : ho_pb_load(pb, g, err);
	if (!ret)
		ret = ho_shape_infer(*g, err);
	ho_pb_free(pb);
	return ret;
}

/* CLBlast's SGEMM of a MatMul's shapes over host memory the device wraps. */
struct sgemm {
	int64_t M, K, N;
	float *a, *w, *y;
	cl_mem ma, mw, my;
};

static void sgemm_close(struct sgemm *g)
{
	if (g->ma)
		clReleaseMemObject(g->ma);
	if (g->mw)
		clReleaseMemObject(g->mw);
	if (g->my)
		clReleaseMemObject(g->my);
	free(g->a);
	free(g->w);
	free(g->y);
}

static bool sgemm_open(struct ho_backend *b, struct sgemm *g)
{
	size_t na = (size_t)(g->M * g->K), nw = (size_t)(g->K * g->N), ny = (size_t)(g->M * g->N);

	g->a = calloc(na, 4), g->w = calloc(nw, 4), g->y = calloc(ny, 4);
	if (!g->a || !g->w || !g->y)
		return false;
	g->ma = clCreateBuffer(b->ctx, CL_MEM_USE_HOST_PTR, na * 4, g->a, NULL);
	g->mw = clCreateBuffer(b->ctx, CL_MEM_USE_HOST_PTR, nw * 4, g->w, NULL);
	g->my = clCreateBuffer(b->ctx, CL_MEM_USE_HOST_PTR, ny * 4, g->y, NULL);
	return g->ma && g->mw && g->my;
}

/* One SGEMM to its end: its wall time; NAN if CLBlast refuses it. */
static double sgemm_once(struct ho_backend *b, const struct sgemm *g)
{
	double t0 = now();

	if (CLBlastSgemm(CLBlastLayoutRowMajor, CLBlastTransposeNo, CLBlastTransposeNo,
			 (size_t)g->M, (size_t)g->N, (size_t)g->K, 1.0f, g->ma, 0, (size_t)g->K,
			 g->mw, 0, (size_t)g->N, 0.0f, g->my, 0, (size_t)g->N, &b->q,
			 NULL) != CLBlastSuccess)
		return NAN;
	clFinish(b->q);
	return now() - t0;
}

/* The executor on a one-MatMul model and CLBlast on its shapes, a round each in turn. */
static void bench_matmul(struct ho_backend *b)
{
	/* the transformer encoder's, ViT-B's, a square one */
	static const int64_t shapes[][3] = {{32, 256, 1024}, {197, 768, 768}, {512, 512, 512}};

	for (size_t s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++) {
		struct sgemm sg = {.M = shapes[s][0], .K = shapes[s][1], .N = shapes[s][2]};
		int64_t M = sg.M, K = sg.K, N = sg.N;
		struct ho_graph *g = NULL;
		struct ho_rt *rt = NULL;
		struct ho_error err;
		float *a = calloc((size_t)(M * K), sizeof(float));
		double te[REPS], tc[REPS];

		if (!a || matmul_model(M, K, N, &g, &err) || plan_on_device(g, &rt, &err) ||
		    ho_rt_set_input(rt, "a", (int64_t[]){M, K}, 2, a, &err) ||
		    ho_rt_run(rt, &err) || !sgemm_open(b, &sg) || isnan(sgemm_once(b, &sg))) {
			printf("matmul   %ldx%ldx%ld skipped\n", (long)M, (long)K, (long)N);
			goto next;
		}
		/* a sample is enough runs to last ~20 ms: one short run is all wake-up noise */
		double t1 = now();
		int iters;

		ho_rt_run(rt, &err);
		iters = (int)(0.02 / (now() - t1)) + 1;
		for (int r = 0; r < REPS; r++) {
			double t0 = now();

			for (int i = 0; i < iters; i++)
				ho_rt_run(rt, &err);
			te[r] = (now() - t0) / iters;
			tc[r] = 0;
			for (int i = 0; i < iters; i++)
				tc[r] += sgemm_once(b, &sg) / iters;
		}
		double me = median(te, REPS), mc = median(tc, REPS);

		printf("matmul   %4ldx%4ldx%4ld: executor %7.3f ms (%5.1f GFLOP/s), CLBlast SGEMM "
		       "%7.3f ms: ratio %.2f of CLBlast's rate   [median of %d rounds of %d, "
		       "interleaved]\n",
		       (long)M, (long)K, (long)N, me * 1e3, 2.0 * M * K * N / me * 1e-9, mc * 1e3,
		       mc / me, REPS, iters);
	next:
		sgemm_close(&sg);
		ho_rt_free(rt);
		ho_graph_free(g);
		free(a);
	}
}

int main(int argc, char **argv)
{
	struct ho_rt_device dev = {.name = "ocl0", .backend = "opencl", .numa_node = -1};
	struct ho_backend *b = NULL;
	struct ho_error err;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc < 2) {
		fprintf(stderr, "usage: bench_opencl MODELS_DIR\n");
		return 2;
	}
	ocl_ops = ho_backend_find("opencl");
	if (!ocl_ops || ocl_ops->open(&dev, 0, &b, &err)) {
		printf("opencl: no device: %s\n", ocl_ops ? err.msg : "not built in");
		return 77;
	}
	bench_dispatch(argv[1], b);
	bench_copy(b);
	bench_device_memory();
	bench_matmul(b);
	ocl_ops->close(b);
	return 0;
}
