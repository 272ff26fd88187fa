// SPDX-License-Identifier: MIT
/*
 * Runtime benchmarks; every figure against a baseline measured in the same
 * run, medians of repeated runs.
 *   dispatch  a 10,000-node chain of tiny ops: the executor's time per node
 *             against launching the same oneDNN kernels in a bare loop, and
 *             StarPU running a chain of 10,000 dependent empty tasks
 *   handoff   a chain whose every edge crosses between two CPU devices (cores 0
 *             and 1) against the same chain on one of them, and two threads on
 *             those cores passing a turn over a condition variable
 *   copy      pool copies between two regions against memcpy, by size
 * usage: bench_runtime MODELS_DIR
 */
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <starpu.h>

#include "../user/runtime/rt_priv.h"
#include "bench_util.h"
#include "heteroopt/graph.h"
#include "heteroopt/pool.h"
#include "heteroopt/runtime.h"

#define REPS 9

/* The executor over a chain with input x[1x4], per node; NAN if it cannot run. */
static double chain_per_node(const struct ho_graph *g, const struct ho_rt_opts *o)
{
	struct ho_rt *rt = NULL;
	struct ho_error err;
	float x[4] = {1, -2, 3, -4};
	int64_t shape[2] = {1, 4};
	double t[REPS], res = NAN;

	if (ho_rt_new(g, o, &rt, &err) || ho_rt_set_input(rt, "x", shape, 2, x, &err) ||
	    ho_rt_run(rt, &err)) {
		fprintf(stderr, "bench_runtime: %s\n", err.msg);
		goto out;
	}
	for (int r = 0; r < REPS; r++) {
		double t0 = now();

		ho_rt_run(rt, &err);
		t[r] = (now() - t0) / g->n_nodes;
	}
	res = median(t, REPS);
out:
	ho_rt_free(rt);
	return res;
}

/* The chain at path on one CPU device, one thread, per node; the graph is kept in *gout. */
static double executor_per_node(const char *path, struct ho_graph **gout)
{
	struct ho_rt_opts o = {.threads = 1};
	struct ho_error err;

	if (ho_onnx_load(path, NULL, gout, &err) || ho_shape_infer(*gout, &err)) {
		fprintf(stderr, "bench_runtime: %s\n", err.msg);
		ho_graph_free(*gout);
		*gout = NULL;
		return NAN;
	}
	return chain_per_node(*gout, &o);
}

/* The same oneDNN kernels, one per node, launched back to back with no executor. */
static double bare_kernels_per_node(const struct ho_graph *g)
{
	const struct ho_backend_ops *ops = ho_backend_host();
	struct ho_rt_device dev = {.name = "cpu0", .threads = 1, .numa_node = -1};
	struct ho_backend *c = NULL;
	struct ho_kernel **k = calloc(g->n_nodes, sizeof(*k));
	struct ho_mem *buf = calloc(g->n_tensors, sizeof(*buf));
	float *mem = calloc((size_t)g->n_tensors * 4 + 4, sizeof(float));
	struct ho_error err;
	double t[REPS], res = NAN;

	if (!k || !buf || !mem || ops->open(&dev, 1, &c, &err))
		goto out;
	for (uint32_t i = 0; i < g->n_tensors; i++)
		buf[i].host = mem + (size_t)i * 4;
	for (uint32_t i = 0; i < g->n_nodes; i++)
		if (ops->prepare(c, g, i, NULL, buf, NULL, &k[i], &err))
			goto out;
	for (int r = 0; r < REPS; r++) {
		double t0 = now();

		for (uint32_t i = 0; i < g->n_nodes; i++)
			if (k[i])
				ops->launch(c, k[i], &err);
		t[r] = (now() - t0) / g->n_nodes;
	}
	res = median(t, REPS);
out:
	for (uint32_t i = 0; k && i < g->n_nodes; i++)
		if (k[i])
			ops->kernel_free(k[i]);
	if (c)
		ops->close(c);
	free(k);
	free(buf);
	free(mem);
	return res;
}

static void nop_task(void *buffers[], void *arg)
{
	(void)buffers;
	(void)arg;
}

/* StarPU: n empty tasks, each reading and writing one handle, so each waits for the last. */
static double starpu_per_task(unsigned n)
{
	static struct starpu_codelet cl = {
	    .cpu_funcs = {nop_task}, .nbuffers = 1, .modes = {STARPU_RW}, .name = "nop"};
	struct starpu_conf conf;
	starpu_data_handle_t h;
	float v[4] = {0};
	double t[REPS];

	starpu_conf_init(&conf);
	conf.ncpus = 1;
	conf.ncuda = 0;
	conf.nopencl = 0;
	if (starpu_init(&conf)) {
		fprintf(stderr, "bench_runtime: StarPU would not start\n");
		return NAN;
	}
	starpu_vector_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)v, 4, sizeof(float));
	for (int r = 0; r < REPS; r++) {
		double t0 = now();

		for (unsigned i = 0; i < n; i++)
			starpu_task_insert(&cl, STARPU_RW, h, 0);
		starpu_task_wait_for_all();
		t[r] = (now() - t0) / n;
	}
	starpu_data_unregister(h);
	starpu_shutdown();
	return median(t, REPS);
}

static void bench_dispatch(const char *models)
{
	char path[4096];
	struct ho_graph *g = NULL;
	double exec_relu, exec_id, bare, sp;

	snprintf(path, sizeof(path), "%s/chain10000_identity.onnx", models);
	exec_id = executor_per_node(path, &g);
	ho_graph_free(g);
	g = NULL;
	snprintf(path, sizeof(path), "%s/chain10000_relu.onnx", models);
	exec_relu = executor_per_node(path, &g);
	bare = g ? bare_kernels_per_node(g) : NAN;
	ho_graph_free(g);
	sp = starpu_per_task(10000);
	printf("dispatch 10,000-node chains, 1 thread: Relu nodes %.2f us each through the "
	       "executor, %.2f us as bare oneDNN launches: executor overhead %.2f us per node; "
	       "Identity nodes (no kernel) %.2f us; StarPU empty dependent tasks %.2f us: "
	       "ratio executor/StarPU %.2fx   [median of %d]\n",
	       exec_relu * 1e6, bare * 1e6, (exec_relu - bare) * 1e6, exec_id * 1e6, sp * 1e6,
	       exec_relu / sp, REPS);
}

/* The chain on two CPU devices pinned to cores 0 and 1: each node on cpu(i % 2), or all on cpu0. */
static double chain_on_two_cpus(const struct ho_graph *g, bool alternate)
{
	struct ho_rt_placement pl = {.n_devices = 2, .host = 0, .in_place = {2, 1}};
	struct ho_rt_opts o = {.placement = &pl};
	double res = NAN;

	for (int d = 0; d < 2; d++) {
		snprintf(pl.dev[d].name, sizeof(pl.dev[d].name), "cpu%d", d);
		snprintf(pl.dev[d].backend, sizeof(pl.dev[d].backend), "cpu");
		pl.dev[d].threads = 1;
		pl.dev[d].numa_node = -1;
		pl.dev[d].cores[0] = 1ull << d;
	}
	pl.node_device = calloc(g->n_nodes, sizeof(int32_t));
	pl.node_prio = calloc(g->n_nodes, sizeof(uint32_t));
	if (pl.node_device && pl.node_prio) {
		for (uint32_t i = 0; i < g->n_nodes; i++) {
			pl.node_device[g->topo[i]] = alternate ? (int32_t)(i % 2) : 0;
			pl.node_prio[g->topo[i]] = i;
		}
		res = chain_per_node(g, &o);
	}
	free(pl.node_device);
	free(pl.node_prio);
	return res;
}

struct pingpong {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int turn, rounds;
};

struct pingpong_side {
	struct pingpong *pp;
	int me;
};

static void *pingpong_side(void *arg)
{
	struct pingpong_side *s = arg;
	struct pingpong *pp = s->pp;
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(s->me, &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	pthread_mutex_lock(&pp->lock);
	for (int i = 0; i < pp->rounds; i++) {
		while (pp->turn != s->me)
			pthread_cond_wait(&pp->cond, &pp->lock);
		pp->turn = !s->me;
		pthread_cond_broadcast(&pp->cond);
	}
	pthread_mutex_unlock(&pp->lock);
	return NULL;
}

/* One way, the turn passed between threads on cores 0 and 1 that sleep while they wait. */
static double condvar_handoff(void)
{
	struct pingpong pp = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 2000};
	struct pingpong_side side[2] = {{&pp, 0}, {&pp, 1}};
	pthread_t tid[2];
	double t[REPS];

	for (int r = 0; r < REPS; r++) {
		double t0 = now();

		pp.turn = 0;
		for (int i = 0; i < 2; i++)
			if (pthread_create(&tid[i], NULL, pingpong_side, &side[i]))
				return NAN;
		for (int i = 0; i < 2; i++)
			pthread_join(tid[i], NULL);
		t[r] = (now() - t0) / (2.0 * pp.rounds);
	}
	return median(t, REPS);
}

static void bench_handoff(const char *models)
{
	char path[4096];
	struct ho_graph *g = NULL;
	struct ho_error err;
	double one, two, cv;

	if (sysconf(_SC_NPROCESSORS_ONLN) < 2) {
		printf("handoff  needs two cores: skipped\n");
		return;
	}
	snprintf(path, sizeof(path), "%s/chain10000_relu.onnx", models);
	if (ho_onnx_load(path, NULL, &g, &err) || ho_shape_infer(g, &err)) {
		fprintf(stderr, "bench_runtime: %s\n", err.msg);
		ho_graph_free(g);
		return;
	}
	one = chain_on_two_cpus(g, false);
	two = chain_on_two_cpus(g, true);
	cv = condvar_handoff();
	printf("handoff  10,000-node Relu chain over cpu0/cpu1 (cores 0, 1): %.2f us per node "
	       "alternating, %.2f us all on cpu0: %.2f us per hand-off; two threads there "
	       "passing a turn over a condition variable: %.2f us one way: ratio %.2f   "
	       "[median of %d]\n",
	       two * 1e6, one * 1e6, (two - one) * 1e6, cv * 1e6, (two - one) / cv, REPS);
	ho_graph_free(g);
}

static void bench_copy(void)
{
	static const size_t sizes[] = {4096, 65536, 1 << 20, 16 << 20, 64 << 20};
	struct ho_pool *p;
	struct ho_pool_buf a, b;

	if (ho_pool_open(0, &p)) {
		printf("copy     no memory pool: skipped\n");
		return;
	}
	if (ho_pool_alloc(p, 64 << 20, 0, &a) || ho_pool_alloc(p, 64 << 20, 0, &b)) {
		printf("copy     cannot get 2 x 64 MiB from the pool: skipped\n");
		ho_pool_close(p);
		return;
	}
	memset(a.ptr, 1, a.size);
	memset(b.ptr, 2, b.size);
	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		size_t n = sizes[s];
		int iters = (int)((256u << 20) / n) + 1;
		double tp[REPS], tm[REPS];
		struct ho_pool_copy c = {&a, &b, 0, 0, n};

		for (int r = 0; r < REPS; r++) {
			double t0 = now();

			for (int i = 0; i < iters; i++)
				ho_pool_copy(p, &c, 1);
			tp[r] = (now() - t0) / iters;
			t0 = now();
			for (int i = 0; i < iters; i++) {
				memcpy(b.ptr, a.ptr, n);
				__asm__ volatile("" ::: "memory"); /* keep every copy */
			}
			tm[r] = (now() - t0) / iters;
		}
		double mp = median(tp, REPS), mm = median(tm, REPS);

		printf("copy     %9zu B: pool %6.2f GB/s, memcpy %6.2f GB/s: ratio %.2f   [%s, "
		       "median of %d]\n",
		       n, n / mp * 1e-9, n / mm * 1e-9, mm / mp, ho_pool_describe(p), REPS);
	}
	ho_pool_free(p, &a);
	ho_pool_free(p, &b);
	ho_pool_close(p);
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc < 2) {
		fprintf(stderr, "usage: bench_runtime MODELS_DIR\n");
		return 2;
	}
	bench_dispatch(argv[1]);
	bench_handoff(argv[1]);
	bench_copy();
	return 0;
}
