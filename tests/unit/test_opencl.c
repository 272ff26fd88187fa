// SPDX-License-Identifier: MIT
/*
 * The OpenCL backend on a real OpenCL device (PoCL here): torchvision models
 * run wholly on it, and split over cpu0 (oneDNN) and it in blocks of nodes,
 * each held to PyTorch's output within 1e-4 of its largest magnitude.  The
 * device shares host memory, so the split makes no copy: its tensors are
 * the pool's, read in place.  A box naming a device that is not here is
 * refused, naming it.  Models: HO_OPENCL_MODELS (comma-separated), default
 * squeezenet1_1 and mobilenet_v2.  Skipped (77) without an OpenCL platform.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backends/backend.h"
#include "heteroopt/npy.h"
#include "heteroopt/runtime.h"
#include "test_util.h"

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

static void device(struct ho_rt_device *d, const char *name, const char *backend)
{
	memset(d, 0, sizeof(*d));
	snprintf(d->name, sizeof(d->name), "%s", name);
	snprintf(d->backend, sizeof(d->backend), "%s", backend);
	d->threads = 1;
	d->numa_node = -1;
}

/* Run g on placement pl and check its output; block 0: all on ocl0 that it runs. */
static void run_split(struct ho_graph *g, const char *model, const struct ho_npy *in,
		      const struct ho_npy *ref, uint32_t block)
{
	const struct ho_backend_ops *ocl = ho_backend_find("opencl");
	struct ho_rt_placement pl = {.n_devices = 2, .host = 0};
	struct ho_rt_opts o = {.placement = &pl};
	uint32_t on[2] = {0, 0}, k = 0;
	struct ho_error err = {0};
	struct ho_rt *rt = NULL;
	const struct ho_tensor *yt;

	device(&pl.dev[0], "cpu0", "cpu");
	device(&pl.dev[1], "ocl0", "opencl");
	pl.in_place[0] = 2;
	pl.in_place[1] = 1;
	pl.node_device = calloc(g->n_nodes, sizeof(int32_t));
	pl.node_prio = calloc(g->n_nodes, sizeof(uint32_t));
	T_REQUIRE(pl.node_device && pl.node_prio);
	for (uint32_t i = 0; i < g->n_nodes; i++) {
		uint32_t id = (uint32_t)g->topo[i];
		const struct ho_node *n = &g->nodes[id];
		int dev = !block || (k++ / block) % 2 ? 1 : 0;

		if (!ho_node_is_task(n)) {
			pl.node_device[id] = -1;
			continue;
		}
		if (dev && !ocl->runs(n->op_type))
			dev = 0;
		pl.node_device[id] = dev;
		pl.node_prio[id] = i;
		on[dev]++;
	}
	if (ho_rt_new(g, &o, &rt, &err)) {
		T_CHECK(0, "%s: plan over cpu0 + ocl0: %s", model, err.msg);
		goto out;
	}
	T_CHECK(ho_rt_set_input(rt, g->tensors[g->inputs[0]].name, in->shape, in->ndim, in->data,
				&err) == 0,
		"%s: input: %s", model, err.msg);
	/* twice: the first run's launches also compile each kernel for its work sizes */
	T_CHECK(ho_rt_run(rt, &err) == 0 && ho_rt_run(rt, &err) == 0, "%s: run: %s", model,
		err.msg);
	if (!err.code) {
		const float *y = ho_rt_output(rt, 0, &yt);
		const struct ho_rt_report *r = ho_rt_last_report(rt);
		double ratio = max_ratio(y, ref);

		printf("  %-16s %-10s %4u nodes on cpu0, %4u on ocl0 (%s): %u copies, off "
		       "PyTorch by %.2e, %.2f ms\n",
		       model, block ? "split" : "opencl", on[0], on[1], r->backend_desc[1],
		       r->transfers, ratio, r->makespan_s * 1e3);
		T_CHECK(ratio <= 1e-4, "%s: output off PyTorch's by %.2e of its magnitude", model,
			ratio);
		T_CHECK(r->transfers == 0, "%s: %u copies between devices that share memory", model,
			r->transfers);
		T_CHECK(r->nodes_run[1] == on[1], "%s: %u nodes ran on ocl0, not %u", model,
			r->nodes_run[1], on[1]);
		T_CHECK(block || !on[0], "%s: %u nodes the OpenCL backend does not run", model,
			on[0]);
	}
out:
	ho_rt_free(rt);
	free(pl.node_device);
	free(pl.node_prio);
}

static void one_model(const char *model)
{
	char path[4096], in_path[4096], out_path[4096], name[256];
	struct ho_npy in = {0}, ref = {0};
	struct ho_graph *g = NULL;
	struct ho_error err = {0};

	snprintf(name, sizeof(name), "%s.onnx", model);
	if (t_model_path(path, sizeof(path), name))
		return (void)printf("  %s: not in $HETEROOPT_MODELS\n", model);
	snprintf(name, sizeof(name), "%s.ref_in.npy", model);
	T_REQUIRE(!t_model_path(in_path, sizeof(in_path), name));
	snprintf(name, sizeof(name), "%s.ref_out.npy", model);
	T_REQUIRE(!t_model_path(out_path, sizeof(out_path), name));
	T_REQUIRE(ho_onnx_load(path, NULL, &g, &err) == 0);
	T_REQUIRE(ho_npy_read(in_path, &in, &err) == 0 && ho_npy_read(out_path, &ref, &err) == 0);
	T_REQUIRE(ho_graph_bind_input(g, g->tensors[g->inputs[0]].name, in.shape, in.ndim, &err) ==
		  0);
	T_REQUIRE(ho_shape_infer(g, &err) == 0);
	run_split(g, model, &in, &ref, 0);
	run_split(g, model, &in, &ref, 7);
	ho_npy_free(&in);
	ho_npy_free(&ref);
	ho_graph_free(g);
}

/* A device the machine lacks: refused at open, naming it and what there is. */
static void absent_device(void)
{
	const struct ho_backend_ops *ocl = ho_backend_find("opencl");
	struct ho_rt_device d;
	struct ho_backend *b = NULL;
	struct ho_error err = {0};

	device(&d, "gpu7", "opencl");
	snprintf(d.device, sizeof(d.device), "Mali-G610");
	T_CHECK(ocl->open(&d, 1, &b, &err) != 0 && !b && strstr(err.msg, "gpu7") &&
		    strstr(err.msg, "Mali-G610") && strstr(err.msg, "there are"),
		"an absent OpenCL device was not refused by name: %s", err.msg);
	printf("  absent: %s\n", err.msg);
}

int main(void)
{
	const char *list = getenv("HO_OPENCL_MODELS");
	char *models = strdup(list && *list ? list : "squeezenet1_1,mobilenet_v2"), *save = NULL;
	const struct ho_backend_ops *ocl = ho_backend_find("opencl");
	struct ho_rt_device d;
	struct ho_backend *b = NULL;
	struct ho_error err = {0};

	alarm(600); /* a hang is a failure */
	T_REQUIRE(ocl && models);
	device(&d, "ocl0", "opencl");
	if (ocl->open(&d, 1, &b, &err)) {
		printf("skipped: no OpenCL device here: %s\n", err.msg);
		return T_SKIP;
	}
	ocl->close(b);
	absent_device();
	for (char *m = strtok_r(models, ",", &save); m; m = strtok_r(NULL, ",", &save))
		one_model(m);
	free(models);
	return t_failures ? 1 : 0;
}
