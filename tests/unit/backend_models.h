/* SPDX-License-Identifier: MIT */
/*
 * A device backend on its real device: torchvision models run wholly on it,
 * and split over cpu0 (oneDNN) and it in blocks of nodes, each held to
 * PyTorch's output within 1e-4 of its largest magnitude.  A device that
 * reads the pool's memory in place (PoCL, unless told otherwise) makes no
 * copy in the split; one that keeps its own (a GPU, emu-discrete, PoCL told
 * "memory": "device") copies, wholly on it only the input in and the output
 * out.  Its launches only queue, and a node failing with others in flight
 * fails the run by name, the next run right.  A box naming a device
 * that is not here is refused, naming it.  Models: the target's env_models
 * (comma-separated), default squeezenet1_1 and mobilenet_v2, wholly on the
 * device; env_partial, models some of whose operators it does not run (left
 * on cpu0, and named); an entry NAME:INPUT=DIMS has no PyTorch reference
 * (the PaddleOCR models, whose batch norms are not folded into their
 * convolutions): its reference is the cpu backend's output on a fixed input.
 * Skipped (77) without the device.  One test program per backend includes it.
 */
#ifndef HO_TEST_BACKEND_MODELS_H
#define HO_TEST_BACKEND_MODELS_H

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backends/backend.h"
#include "heteroopt/npy.h"
#include "heteroopt/runtime.h"
#include "test_util.h"

/* The backend under test, its device's name, and a device no machine here has (NULL: an
 * emulator, which opens anywhere); where it keeps tensors (ho_rt_device.memory), and the
 * models run without env_models (NULL: squeezenet1_1 and mobilenet_v2). */
struct bm_target {
	const char *backend, *dev, *env_models, *env_partial, *absent;
	const char *memory, *models;
};

static const struct bm_target *bm;
static bool bm_shares; /* the device addresses host memory: the split copies nothing */

static void bm_device(struct ho_rt_device *d, const char *name)
{
	t_rt_device(d, name, bm->backend, -1);
	snprintf(d->memory, sizeof(d->memory), "%s", bm->memory ? bm->memory : "");
}

static double max_ratio(const float *y, const struct ho_npy *ref)
{
	const float *r = ref->data;
	size_t n = ref->nbytes / sizeof(float);
	double worst = 0, mag = 0;

	for (size_t i = 0; i < n; i++) {
		mag = fmax(mag, fabs(r[i]));
		worst = fmax(worst, fabs((double)y[i] - r[i]));
		if (isnan(y[i]))
			return INFINITY;
	}
	return worst / (mag > 0 ? mag : 1);
}

/* run_split's block: the device runs the element-wise nodes that take either layout (the
 * channels-last tensors between cpu0's convolutions come to it as they are), cpu0 the rest */
#define BM_EITHER_LAYOUT UINT32_MAX

/*
 * Run g over cpu0 and the device and check its output: block 0, every node the device runs there
 * (all of them, wholly); BM_EITHER_LAYOUT, above; else blocks of that many nodes on each in
 * turn.  alone: on the device as the only one (its inputs and outputs in its memory where it
 * keeps its own).
 */
static void run_split(struct ho_graph *g, const char *model, const struct ho_npy *in,
		      const struct ho_npy *ref, uint32_t block, bool wholly, bool alone)
{
	const struct ho_backend_ops *ocl = ho_backend_find(bm->backend);
	struct ho_rt_placement pl = {.n_devices = alone ? 1 : 2, .host = 0};
	struct ho_rt_opts o = {.placement = &pl};
	uint32_t on[2] = {0, 0}, k = 0, di = alone ? 0 : 1, on_cpu;
	int32_t fail = -1;   /* split: a device node late in the graph fails in the first run */
	char left[256] = ""; /* the operators the device does not run */
	struct ho_error err = {0};
	struct ho_rt *rt = NULL;
	const struct ho_tensor *yt;

	t_rt_device(&pl.dev[0], "cpu0", "cpu", -1);
	bm_device(&pl.dev[alone ? 0 : 1], bm->dev);
	pl.in_place[0] = bm_shares && !alone ? 2 : 0;
	pl.in_place[1] = bm_shares && !alone ? 1 : 0;
	pl.node_device = calloc(g->n_nodes, sizeof(int32_t));
	pl.node_prio = calloc(g->n_nodes, sizeof(uint32_t));
	T_REQUIRE(pl.node_device && pl.node_prio);
	for (uint32_t i = 0; i < g->n_nodes; i++) {
		uint32_t id = (uint32_t)g->topo[i];
		const struct ho_node *n = &g->nodes[id];
		bool binary;
		int dev = alone ? 0
			  : block == BM_EITHER_LAYOUT
			      ? ocl->layout(n->op_type, &binary) == HO_BE_SAME_LAYOUT
			  : !block || (k++ / block) % 2 ? 1
							: 0;

		if (!ho_node_is_task(n)) {
			pl.node_device[id] = -1;
			continue;
		}
		if (alone && !ocl->runs(n->op_type))
			goto out; /* not a model it runs wholly */
		if (dev && !ocl->runs(n->op_type)) {
			dev = 0;
			if (!block && !strstr(left, n->op_type) &&
			    strlen(left) + strlen(n->op_type) + 2 < sizeof(left))
				strcat(strcat(left, " "), n->op_type);
		}
		pl.node_device[id] = dev;
		pl.node_prio[id] = i;
		if (block && block != BM_EITHER_LAYOUT && dev && fail < 0 &&
		    i >= g->n_nodes * 3 / 4)
			fail = (int32_t)id;
		on[dev]++;
	}
	if (!on[1] && !alone)
		goto out; /* nothing of it there */
	o.inject_failure = fail >= 0 ? g->nodes[fail].name : NULL;
	if (ho_rt_new(g, &o, &rt, &err)) {
		T_CHECK(0, "%s: plan over cpu0 + %s: %s", model, bm->dev, err.msg);
		goto out;
	}
	T_CHECK(ho_rt_set_input(rt, g->tensors[g->inputs[0]].name, in->shape, in->ndim, in->data,
				&err) == 0,
		"%s: input: %s", model, err.msg);
	/*
	 * A node failing with earlier ones still in flight on the device: the run
	 * fails naming it, and the next runs, on the same plan, are right.
	 */
	if (fail >= 0) {
		T_CHECK(ho_rt_run(rt, &err) == -EIO && strstr(err.msg, g->nodes[fail].name),
			"%s: the failure of node '%s' was not reported: %s", model,
			g->nodes[fail].name, err.msg);
		printf("  %-16s %s\n", model, err.msg);
		err = (struct ho_error){0};
	}
	/* twice: the first run's launches also compile each kernel for its work sizes */
	T_CHECK(ho_rt_run(rt, &err) == 0 && ho_rt_run(rt, &err) == 0, "%s: run: %s", model,
		err.msg);
	on_cpu = alone ? 0 : on[0];
	if (!err.code) {
		const float *y = ho_rt_output(rt, 0, &yt);
		const struct ho_rt_report *r = ho_rt_last_report(rt);
		double ratio = max_ratio(y, ref);

		printf("  %-16s %-10s %4u nodes on cpu0, %4u on %s (%s): %u copies, off "
		       "its reference by %.2e, %.2f ms\n",
		       model,
		       alone			   ? "alone"
		       : block == BM_EITHER_LAYOUT ? "eltwise"
		       : block			   ? "split"
						   : "wholly",
		       on_cpu, on[di], bm->dev, r->backend_desc[di], r->transfers, ratio,
		       r->makespan_s * 1e3);
		T_CHECK(ratio <= 1e-4, "%s: output off its reference by %.2e of its magnitude",
			model, ratio);
		T_CHECK(bm_shares ? r->transfers == 0 : r->transfers > 0,
			"%s: %u copies between devices that %s memory", model, r->transfers,
			bm_shares ? "share" : "do not share");
		T_CHECK(bm_shares || block || on_cpu || r->transfers == g->n_inputs + g->n_outputs,
			"%s: wholly on %s: %u copies, not its %u inputs in and %u outputs out",
			model, bm->dev, r->transfers, g->n_inputs, g->n_outputs);
		T_CHECK(r->nodes_run[di] == on[di], "%s: %u nodes ran on %s, not %u", model,
			r->nodes_run[di], bm->dev, on[di]);
		T_CHECK(block || !wholly || !on_cpu, "%s: %u nodes the %s backend does not run:%s",
			model, on_cpu, bm->backend, left);
		if (!block && on_cpu)
			printf("  %-16s left on cpu0:%s\n", model, left);
	}
out:
	ho_rt_free(rt);
	free(pl.node_device);
	free(pl.node_prio);
}

/* The cpu backend's output 0 for input in: the reference of a model PyTorch did not export. */
static int cpu_reference(const struct ho_graph *g, const struct ho_npy *in, struct ho_npy *ref,
			 struct ho_error *err)
{
	struct ho_rt_opts o = {.threads = 1};
	const struct ho_tensor *yt;
	struct ho_rt *rt = NULL;
	int ret = ho_rt_new(g, &o, &rt, err);

	if (!ret)
		ret = ho_rt_set_input(rt, g->tensors[g->inputs[0]].name, in->shape, in->ndim,
				      in->data, err);
	if (!ret)
		ret = ho_rt_run(rt, err);
	if (!ret) {
		const float *y = ho_rt_output(rt, 0, &yt);

		ref->nbytes = yt->bytes;
		ref->data = malloc(yt->bytes);
		if (ref->data)
			memcpy(ref->data, y, yt->bytes);
		ret = ref->data ? 0 : -ENOMEM;
	}
	ho_rt_free(rt);
	return ret;
}

/* spec: a model with PyTorch's reference input and output beside it, or NAME:INPUT=DIMS. */
static void one_model(const char *spec, bool wholly)
{
	char path[4096], in_path[4096], out_path[4096], name[256], model[128], input[128];
	const char *colon = strchr(spec, ':');
	struct ho_npy in = {0}, ref = {0};
	struct ho_graph *g = NULL;
	struct ho_error err = {0};

	snprintf(model, sizeof(model), "%.*s", colon ? (int)(colon - spec) : (int)strlen(spec),
		 spec);
	snprintf(name, sizeof(name), "%s.onnx", model);
	if (t_model_path(path, sizeof(path), name)) {
		t_model_skipped(name);
		return;
	}
	T_REQUIRE(ho_onnx_load(path, NULL, &g, &err) == 0);
	if (colon) {
		T_REQUIRE(ho_parse_shape_arg(colon + 1, input, sizeof(input), in.shape, &in.ndim,
					     &err) == 0);
		T_REQUIRE(ho_graph_bind_input(g, input, in.shape, in.ndim, &err) == 0);
		T_REQUIRE(ho_shape_infer(g, &err) == 0);
		in.count = (size_t)ho_shape_numel(&g->tensors[g->inputs[0]].shape);
		in.nbytes = in.count * sizeof(float);
		T_REQUIRE((in.data = malloc(in.nbytes)) != NULL);
		for (size_t k = 0; k < in.count; k++) /* a fixed pattern in [-0.5, 0.5) */
			((float *)in.data)[k] = (float)((k * 2654435761u) % 1000) * 1e-3f - 0.5f;
		T_REQUIRE(cpu_reference(g, &in, &ref, &err) == 0);
	} else {
		snprintf(name, sizeof(name), "%s.ref_in.npy", model);
		T_REQUIRE(!t_model_path(in_path, sizeof(in_path), name));
		snprintf(name, sizeof(name), "%s.ref_out.npy", model);
		T_REQUIRE(!t_model_path(out_path, sizeof(out_path), name));
		T_REQUIRE(ho_npy_read(in_path, &in, &err) == 0 &&
			  ho_npy_read(out_path, &ref, &err) == 0);
		T_REQUIRE(ho_graph_bind_input(g, g->tensors[g->inputs[0]].name, in.shape, in.ndim,
					      &err) == 0);
		T_REQUIRE(ho_shape_infer(g, &err) == 0);
	}
	run_split(g, model, &in, &ref, 0, wholly, false);
	run_split(g, model, &in, &ref, 7, wholly, false);
	run_split(g, model, &in, &ref, BM_EITHER_LAYOUT, wholly, false);
	run_split(g, model, &in, &ref, 0, wholly, true);
	ho_npy_free(&in);
	ho_npy_free(&ref);
	ho_graph_free(g);
}

/* A device the machine lacks: refused at open, naming it and what there is. */
static void absent_device(void)
{
	const struct ho_backend_ops *ocl = ho_backend_find(bm->backend);
	struct ho_rt_device d;
	struct ho_backend *b = NULL;
	struct ho_error err = {0};

	bm_device(&d, "gpu7");
	snprintf(d.device, sizeof(d.device), "%s", bm->absent);
	T_CHECK(ocl->open(&d, 1, &b, &err) != 0 && !b && strstr(err.msg, "gpu7") &&
		    strstr(err.msg, bm->absent) && strstr(err.msg, "there are"),
		"an absent %s device was not refused by name: %s", bm->backend, err.msg);
	printf("  absent: %s\n", err.msg);
}

static int backend_models_main(const struct bm_target *target)
{
	const char *list = getenv(target->env_models), *partial = getenv(target->env_partial);
	const char *fallback = target->models ? target->models : "squeezenet1_1,mobilenet_v2";
	char *models = strdup(list && *list ? list : fallback), *save = NULL;
	char *some = strdup(partial ? partial : "");
	const struct ho_backend_ops *ocl = ho_backend_find(target->backend);
	struct ho_backend_info info;
	struct ho_rt_device d;
	struct ho_backend *b = NULL;
	struct ho_error err = {0};

	bm = target;
	alarm(600); /* a hang is a failure */
	T_REQUIRE(ocl && models && some);
	bm_device(&d, bm->dev);
	if (ocl->open(&d, 1, &b, &err)) {
		printf("skipped: no %s device here: %s\n", bm->backend, err.msg);
		free(models);
		free(some);
		return T_SKIP;
	}
	ocl->query(b, &info);
	bm_shares = info.host_memory;
	ocl->close(b);
	if (bm->absent)
		absent_device();
	for (char *m = strtok_r(models, ",", &save); m; m = strtok_r(NULL, ",", &save))
		one_model(m, true);
	for (char *m = strtok_r(some, ",", &save); m; m = strtok_r(NULL, ",", &save))
		one_model(m, false);
	free(models);
	free(some);
	return t_failures ? 1 : 0;
}

#endif
