// SPDX-License-Identifier: MIT
/*
 * The OpenCL backend: a device found through the ICD loader by the box's
 * platform and device names (PoCL here; Intel, Mali and XRT's OpenCL on real
 * boxes).  Devices that share host memory (CL_DEVICE_HOST_UNIFIED_MEMORY)
 * run over the pool's regions wrapped in place with CL_MEM_USE_HOST_PTR:
 * nothing is copied between them and the CPU, as the schedule predicts.
 * A device with memory of its own (a discrete GPU, an FPGA card), or one the
 * box tells to keep its tensors there (backend "memory": "device"), gets
 * buffers of its own standing for the regions, and the executor moves
 * tensors in and out through ocl_read and ocl_write.
 * The program is built once per device and its binary cached on disk,
 * keyed by the device, its driver and the source.
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ocl.h"

const char *ocl_strerror(cl_int e)
{
	switch (e) {
	case CL_OUT_OF_RESOURCES:
	case CL_MEM_OBJECT_ALLOCATION_FAILURE:
		return "out of device memory";
	case CL_OUT_OF_HOST_MEMORY:
		return "out of host memory";
	case CL_DEVICE_NOT_AVAILABLE:
		return "device not available (lost?)";
	case CL_INVALID_BUFFER_SIZE:
		return "invalid buffer size";
	case CL_INVALID_WORK_GROUP_SIZE:
		return "invalid work-group size";
	default:
		return "OpenCL error";
	}
}

static void ocl_close(struct ho_backend *b)
{
	if (!b)
		return;
	if (b->scratch)
		clReleaseMemObject(b->scratch);
	if (b->tmp)
		clReleaseMemObject(b->tmp);
	if (b->prog)
		clReleaseProgram(b->prog);
	if (b->q)
		clReleaseCommandQueue(b->q);
	if (b->ctx)
		clReleaseContext(b->ctx);
	free(b);
}

/* want is "" or a substring of have, ignoring case. */
static bool ocl_match(const char *have, const char *want)
{
	return !*want || strcasestr(have, want);
}

static const char *ocl_type_name(cl_device_type t)
{
	return t & CL_DEVICE_TYPE_GPU		? "gpu"
	       : t & CL_DEVICE_TYPE_ACCELERATOR ? "accelerator"
	       : t & CL_DEVICE_TYPE_CPU		? "cpu"
						: "other";
}

/* Every device this backend runs, as a box names them. */
static int ocl_devices(struct ho_rt_found *out, int cap)
{
	cl_platform_id plats[16];
	cl_uint np = 0;
	int n = 0;

	if (clGetPlatformIDs(16, plats, &np) != CL_SUCCESS)
		return 0;
	for (cl_uint p = 0; p < np && p < 16; p++) {
		cl_device_id devs[16];
		cl_uint nd = 0;

		if (clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, 16, devs, &nd) != CL_SUCCESS)
			continue;
		for (cl_uint d = 0; d < nd && d < 16 && n < cap; d++) {
			cl_bool unified = CL_FALSE;
			cl_device_type type = 0;
			struct ho_rt_found *f = &out[n];

			clGetDeviceInfo(devs[d], CL_DEVICE_HOST_UNIFIED_MEMORY, sizeof(unified),
					&unified, NULL);
			clGetDeviceInfo(devs[d], CL_DEVICE_TYPE, sizeof(type), &type, NULL);
			memset(f, 0, sizeof(*f));
			snprintf(f->backend, sizeof(f->backend), "opencl");
			clGetPlatformInfo(plats[p], CL_PLATFORM_NAME, sizeof(f->platform),
					  f->platform, NULL);
			clGetDeviceInfo(devs[d], CL_DEVICE_NAME, sizeof(f->device), f->device,
					NULL);
			snprintf(f->kind, sizeof(f->kind), "%s",
				 type & CL_DEVICE_TYPE_GPU	     ? "gpu"
				 : type & CL_DEVICE_TYPE_ACCELERATOR ? "fpga"
								     : "cpu");
			f->cpu_cores = (type & CL_DEVICE_TYPE_CPU) != 0;
			f->own_memory = !unified;
			n++;
		}
	}
	return n;
}

/* The first device whose platform and device (name or type) match dev's. */
static int ocl_find(struct ho_backend *b, const struct ho_rt_device *dev, struct ho_error *err)
{
	cl_platform_id plats[16];
	cl_uint np = 0;
	char seen[256] = "";

	if (clGetPlatformIDs(16, plats, &np) != CL_SUCCESS || !np)
		return ho_err(err, -ENODEV,
			      "device %s: no OpenCL platform here (an ICD such as "
			      "pocl-opencl-icd must be installed)",
			      dev->name);
	for (cl_uint p = 0; p < np && p < 16; p++) {
		cl_device_id devs[16];
		cl_uint nd = 0;
		char pname[128] = "";

		clGetPlatformInfo(plats[p], CL_PLATFORM_NAME, sizeof(pname), pname, NULL);
		if (clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, 16, devs, &nd) != CL_SUCCESS)
			continue;
		for (cl_uint d = 0; d < nd && d < 16; d++) {
			char dname[128] = "";
			cl_device_type type = 0;
			size_t used = strlen(seen);

			clGetDeviceInfo(devs[d], CL_DEVICE_NAME, sizeof(dname), dname, NULL);
			clGetDeviceInfo(devs[d], CL_DEVICE_TYPE, sizeof(type), &type, NULL);
			snprintf(seen + used, sizeof(seen) - used, "%s'%s' on '%s'",
				 used ? ", " : "", dname, pname);
			if (!ocl_match(pname, dev->platform) ||
			    (!ocl_match(dname, dev->device) &&
			     strcasecmp(ocl_type_name(type), dev->device)))
				continue;
			b->plat = plats[p];
			b->dev = devs[d];
			snprintf(b->name, sizeof(b->name), "opencl (%s, %s)", pname, dname);
			return 0;
		}
	}
	return ho_err(err, -ENODEV,
		      "device %s: no OpenCL device here matches platform '%s' and device '%s' "
		      "(there are: %s)",
		      dev->name, dev->platform, dev->device, *seen ? seen : "none");
}

/*
 * The offset from the device's profiling clock to the host's: markers'
 * completion times against the host's clock once each is seen complete; the
 * smallest difference is the closest (the wake-up only ever adds to it).
 */
static void ocl_clock(struct ho_backend *b)
{
	b->clock_off = INFINITY;
	for (int i = 0; i < 8; i++) {
		cl_event ev = NULL;
		cl_ulong end = 0;
		double host;

		if (clEnqueueMarkerWithWaitList(b->q, 0, NULL, &ev) != CL_SUCCESS)
			break;
		clWaitForEvents(1, &ev);
		host = ho_clock_s();
		if (clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof(end), &end,
					    NULL) == CL_SUCCESS)
			b->clock_off = fmin(b->clock_off, host - (double)end * 1e-9);
		clReleaseEvent(ev);
	}
	if (isinf(b->clock_off))
		b->clock_off = 0;
}

/* Run the calling thread on dev's cores (the old set in *saved); false: it names none. */
static bool ocl_pin(const struct ho_rt_device *dev, cpu_set_t *saved)
{
	cpu_set_t set;
	bool any = false;

	CPU_ZERO(&set);
	for (int c = 0; c < 64 * HO_RT_CORE_WORDS && c < CPU_SETSIZE; c++)
		if (dev->cores[c / 64] >> (c % 64) & 1) {
			CPU_SET(c, &set);
			any = true;
		}
	if (!any || pthread_getaffinity_np(pthread_self(), sizeof(*saved), saved))
		return false;
	return !pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

/*
 * threads: PoCL's pthread device reads POCL_MAX_PTHREAD_COUNT when the ICD
 * first loads it, so the first device opened in a process sets it (unless
 * the user did); a CPU device beside it keeps the other cores.
 */
static int ocl_open(const struct ho_rt_device *dev, int threads, struct ho_backend **out,
		    struct ho_error *err)
{
	struct ho_backend *b = calloc(1, sizeof(*b));
	cl_bool unified = CL_FALSE;
	cl_int e = CL_SUCCESS;
	cpu_set_t saved;
	bool pinned;
	char n[16];
	int ret;

	*out = NULL;
	if (!b)
		return ho_err(err, -ENOMEM, "out of memory");
	if (threads > 0) {
		snprintf(n, sizeof(n), "%d", threads);
		setenv("POCL_MAX_PTHREAD_COUNT", n, 0);
	}
	/* the driver's threads, started as it first loads, inherit the device's cores */
	pinned = ocl_pin(dev, &saved);
	ret = ocl_find(b, dev, err);
	if (!ret && pinned) { /* a context makes PoCL start its threads */
		cl_context c = clCreateContext(NULL, 1, &b->dev, NULL, NULL, &e);

		if (c)
			clReleaseContext(c);
	}
	if (pinned)
		pthread_setaffinity_np(pthread_self(), sizeof(saved), &saved);
	if (ret)
		goto fail;
	clGetDeviceInfo(b->dev, CL_DEVICE_HOST_UNIFIED_MEMORY, sizeof(unified), &unified, NULL);
	if (!unified && !strcmp(dev->memory, "host")) {
		ret = ho_err(err, -EOPNOTSUPP,
			     "device %s: %s has memory of its own, and cannot keep tensors in "
			     "host memory (backend memory \"host\")",
			     dev->name, b->name);
		goto fail;
	}
	b->own = !unified || !strcmp(dev->memory, "device");
	cl_ulong most = 0;

	if (clGetDeviceInfo(b->dev, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof(most), &most, NULL) ==
	    CL_SUCCESS)
		b->max_alloc = (size_t)most;
	b->ctx = clCreateContext(NULL, 1, &b->dev, NULL, NULL, &e);
	if (e == CL_SUCCESS)
		b->q = clCreateCommandQueue(b->ctx, b->dev, CL_QUEUE_PROFILING_ENABLE, &e);
	if (e != CL_SUCCESS) {
		ret =
		    ho_err(err, -ENODEV, "device %s: %s: cannot make a context and queue: %s (%d)",
			   dev->name, b->name, ocl_strerror(e), e);
		goto fail;
	}
	ret = ocl_build(b, err);
	if (ret)
		goto fail;
	ocl_clock(b);
	*out = b;
	return 0;
fail:
	ocl_close(b);
	return ret;
}

static void ocl_query(const struct ho_backend *b, struct ho_backend_info *info)
{
	info->name = b->name;
	info->emulated = false;
	info->host_memory = !b->own;
	info->own_memory = b->own;
}

static int ocl_wrap(struct ho_backend *b, void *host, size_t len, struct ho_dev_block **out,
		    struct ho_error *err)
{
	struct ho_dev_block *blk = calloc(1, sizeof(*blk));
	cl_int e = CL_SUCCESS;

	*out = NULL;
	if (!blk)
		return ho_err(err, -ENOMEM, "out of memory");
	blk->mem = clCreateBuffer(b->ctx, CL_MEM_READ_WRITE | (b->own ? 0 : CL_MEM_USE_HOST_PTR),
				  len, b->own ? NULL : host, &e);
	/* its own: filled from the region once, the constants the plan wrote there */
	if (e == CL_SUCCESS && b->own &&
	    (e = clEnqueueWriteBuffer(b->q, blk->mem, CL_TRUE, 0, len, host, 0, NULL, NULL)))
		clReleaseMemObject(blk->mem);
	if (e != CL_SUCCESS) {
		free(blk);
		if (b->max_alloc && len > b->max_alloc)
			return ho_err(err, -ENOMEM,
				      "%s: cannot %s %zu bytes: the device's largest buffer is %zu "
				      "bytes (CL_DEVICE_MAX_MEM_ALLOC_SIZE)",
				      b->name, b->own ? "allocate" : "wrap", len, b->max_alloc);
		return ho_err(err, -ENOMEM, "%s: cannot %s %zu bytes: %s (%d)", b->name,
			      b->own ? "allocate" : "wrap", len, ocl_strerror(e), e);
	}
	*out = blk;
	return 0;
}

static void ocl_unwrap(struct ho_backend *b, struct ho_dev_block *blk)
{
	(void)b;
	if (!blk)
		return;
	clReleaseMemObject(blk->mem);
	free(blk);
}

/* Copies on the in-order queue, after what was launched before them; done when they return. */
static int ocl_read(struct ho_backend *b, struct ho_dev_block *blk, uint64_t off, void *dst,
		    size_t len, struct ho_error *err)
{
	cl_int e = clEnqueueReadBuffer(b->q, blk->mem, CL_TRUE, off, len, dst, 0, NULL, NULL);

	if (e != CL_SUCCESS)
		return ho_err(err, -EIO, "%s: a copy of %zu bytes from the device: %s (%d)",
			      b->name, len, ocl_strerror(e), e);
	return 0;
}

static int ocl_write(struct ho_backend *b, struct ho_dev_block *blk, uint64_t off, const void *src,
		     size_t len, struct ho_error *err)
{
	cl_int e = clEnqueueWriteBuffer(b->q, blk->mem, CL_TRUE, off, len, src, 0, NULL, NULL);

	if (e != CL_SUCCESS)
		return ho_err(err, -EIO, "%s: a copy of %zu bytes to the device: %s (%d)", b->name,
			      len, ocl_strerror(e), e);
	return 0;
}

static void ocl_drop_events(struct ho_kernel *k)
{
	for (int i = 0; i < 2; i++)
		if (k->ev[i]) {
			clReleaseEvent(k->ev[i]);
			k->ev[i] = NULL;
		}
}

static int ocl_failed(const struct ho_backend *b, const struct ho_kernel *k, bool gemm, cl_int e,
		      struct ho_error *err)
{
	return ho_err(
	    err, e == CL_OUT_OF_RESOURCES || e == CL_MEM_OBJECT_ALLOCATION_FAILURE ? -ENOMEM : -EIO,
	    "node '%s' (%s) on %s: %s%s (%d)", k->name, k->op, b->name, gemm ? "CLBlast: " : "",
	    ocl_strerror(e), e);
}

/*
 * Queue a node's launches on the in-order queue and return: the executor
 * waits (ocl_wait) only where another device or the host reads its outputs.
 * The first and last launches keep events, for the wait and for its times.
 */
static int ocl_launch(struct ho_backend *b, struct ho_kernel *k, struct ho_error *err)
{
	cl_int e = CL_SUCCESS;

	ocl_drop_events(k);
	for (int i = 0; i < k->n; i++) {
		const struct ocl_launch *l = &k->l[i];
		cl_event ev = NULL, *evp = i == 0 || i == k->n - 1 ? &ev : NULL;

		if (!l->k) {
			e = ocl_gemm_enqueue(b, &l->gemm, evp);
		} else {
			if (l->scratch)
				e = clSetKernelArg(l->k, l->scratch_at, sizeof(cl_mem),
						   &b->scratch);
			if (e == CL_SUCCESS)
				e = clEnqueueNDRangeKernel(b->q, l->k, l->dims, NULL, l->global,
							   l->local[0] ? l->local : NULL, 0, NULL,
							   evp);
		}
		if (e != CL_SUCCESS)
			return ocl_failed(b, k, !l->k, e, err);
		if (i == 0)
			k->ev[0] = ev;
		if (i == k->n - 1 && i > 0)
			k->ev[1] = ev;
	}
	return 0;
}

/* The host clock's seconds at ns, a time of the device's profiling clock. */
static double ocl_host_time(const struct ho_backend *b, cl_ulong ns)
{
	return (double)ns * 1e-9 + b->clock_off;
}

static int ocl_wait(struct ho_backend *b, struct ho_kernel *k, double *start, double *end,
		    struct ho_error *err)
{
	cl_event last = k->ev[1] ? k->ev[1] : k->ev[0];
	cl_int st = CL_COMPLETE, e;
	cl_ulong t[2];

	if (!last)
		return 0;
	e = clWaitForEvents(1, &last);
	if (e == CL_SUCCESS || e == CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST)
		clGetEventInfo(last, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof(st), &st, NULL);
	if (e != CL_SUCCESS || st < 0)
		return ocl_failed(b, k, false, st < 0 ? st : e, err);
	if (clGetEventProfilingInfo(k->ev[0], CL_PROFILING_COMMAND_START, sizeof(t[0]), &t[0],
				    NULL) == CL_SUCCESS &&
	    clGetEventProfilingInfo(last, CL_PROFILING_COMMAND_END, sizeof(t[1]), &t[1], NULL) ==
		CL_SUCCESS) {
		*start = ocl_host_time(b, t[0]);
		*end = ocl_host_time(b, t[1]);
	}
	ocl_drop_events(k);
	return 0;
}

static bool ocl_done(struct ho_backend *b, const struct ho_kernel *k)
{
	cl_event last = k->ev[1] ? k->ev[1] : k->ev[0];
	cl_int st = CL_COMPLETE;

	(void)b;
	return !last ||
	       clGetEventInfo(last, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof(st), &st, NULL) !=
		   CL_SUCCESS ||
	       st <= CL_COMPLETE;
}

static int ocl_sync(struct ho_backend *b)
{
	return clFinish(b->q) == CL_SUCCESS ? 0 : -EIO;
}

const struct ho_backend_ops ho_backend_opencl = {
    .name = "opencl",
    .open = ocl_open,
    .devices = ocl_devices,
    .close = ocl_close,
    .query = ocl_query,
    .runs = ocl_runs,
    .check = ocl_check,
    .layout = ocl_layout,
    .wrap = ocl_wrap,
    .unwrap = ocl_unwrap,
    .read = ocl_read,
    .write = ocl_write,
    .prepare = ocl_prepare,
    .launch = ocl_launch,
    .wait = ocl_wait,
    .done = ocl_done,
    .kernel_free = ocl_kernel_free,
    .sync = ocl_sync,
};
