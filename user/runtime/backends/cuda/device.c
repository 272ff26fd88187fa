// SPDX-License-Identifier: MIT
/*
 * The CUDA backend: an NVIDIA GPU through the driver API, opened with
 * dlopen (driver.c), its kernels the PTX of kernels.cu built in.  The GPU
 * keeps its own memory: the plan's region for it is device memory (its host
 * pages a mirror the executor fills constants into, uploaded once), and
 * tensors cross to and from other devices through cu_read and cu_write, on
 * the stream behind the kernels that produce them.  Weights a kernel folds
 * get device memory of their own at prepare.  One in-order stream: a node's
 * successors are queued behind it, the executor waits only where the host or
 * another device reads its outputs.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cu.h"

int cu_failed(const struct ho_backend *b, const char *what, CUresult r, struct ho_error *err)
{
	char buf[48];

	return ho_err(err, r == CUDA_ERROR_OUT_OF_MEMORY ? -ENOMEM : -EIO, "%s on %s: %s", what,
		      b->name, cu_error_name(&b->api, r, buf, sizeof(buf)));
}

/* The context is the calling thread's: every entry from the executor's threads sets it. */
static void cu_enter(struct ho_backend *b)
{
	b->api.cuCtxSetCurrent(b->ctx);
}

static void cu_close(struct ho_backend *b)
{
	if (!b)
		return;
	if (b->ctx) {
		cu_enter(b);
		if (b->stream)
			b->api.cuStreamSynchronize(b->stream);
		if (b->scratch)
			b->api.cuMemFree_v2(b->scratch);
		if (b->origin)
			b->api.cuEventDestroy_v2(b->origin);
		if (b->mod)
			b->api.cuModuleUnload(b->mod);
		if (b->stream)
			b->api.cuStreamDestroy_v2(b->stream);
		b->api.cuDevicePrimaryCtxRelease_v2(b->dev);
	}
	cu_api_unload(&b->api);
	free(b);
}

/* The name of GPU i and its compute capability, "NVIDIA H200" and 90. */
static int cu_device_name(const struct cu_api *api, CUdevice d, char *name, size_t len)
{
	int major = 0, minor = 0;

	if (api->cuDeviceGetName(name, (int)len, d) != CUDA_SUCCESS)
		snprintf(name, len, "GPU %d", d);
	api->cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, d);
	api->cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, d);
	return major * 10 + minor;
}

static int cu_devices(struct ho_rt_found *out, int cap)
{
	struct cu_api api;
	char why[128];
	int n = 0, count = 0;

	if (cu_api_load(&api, why, sizeof(why)))
		return 0;
	api.cuDeviceGetCount(&count);
	for (int i = 0; i < count && n < cap; i++) {
		struct ho_rt_found *f = &out[n];
		CUdevice d;

		if (api.cuDeviceGet(&d, i) != CUDA_SUCCESS)
			continue;
		memset(f, 0, sizeof(*f));
		snprintf(f->backend, sizeof(f->backend), "cuda");
		snprintf(f->platform, sizeof(f->platform), "CUDA");
		cu_device_name(&api, d, f->device, sizeof(f->device));
		snprintf(f->kind, sizeof(f->kind), "gpu");
		f->own_memory = true;
		n++;
	}
	cu_api_unload(&api);
	return n;
}

/* The first GPU whose name holds dev->device (ignoring case; "" the first), named in err if none.
 */
static int cu_find(struct ho_backend *b, const struct ho_rt_device *dev, struct ho_error *err)
{
	char have[256] = "", name[96];
	int count = 0;

	b->api.cuDeviceGetCount(&count);
	for (int i = 0; i < count; i++) {
		CUdevice d;
		int cc;

		if (b->api.cuDeviceGet(&d, i) != CUDA_SUCCESS)
			continue;
		cc = cu_device_name(&b->api, d, name, sizeof(name));
		if (!*dev->device || strcasestr(name, dev->device)) {
			b->dev = d;
			snprintf(b->name, sizeof(b->name), "cuda (%s, sm_%d)", name, cc);
			return 0;
		}
		if (strlen(have) + strlen(name) + 3 < sizeof(have))
			strcat(strcat(have, *have ? ", " : ""), name);
	}
	return ho_err(err, -ENODEV, "device %s: no CUDA GPU named '%s' here (there are: %s)",
		      dev->name, dev->device, *have ? have : "none");
}

/* The kernels' PTX, compiled by the driver for this GPU; its first error named. */
static int cu_load_module(struct ho_backend *b, struct ho_error *err)
{
	char log[1024] = "";
	int opts[2] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
	void *vals[2] = {log, (void *)(size_t)sizeof(log)};
	CUresult r = b->api.cuModuleLoadDataEx(&b->mod, ho_ptx_cuda, 2, opts, vals);
	char buf[48];

	if (r == CUDA_SUCCESS)
		return 0;
	log[strcspn(log, "\n")] = 0;
	return ho_err(err, -EIO, "%s: the driver cannot compile the kernels' PTX: %s: %s", b->name,
		      cu_error_name(&b->api, r, buf, sizeof(buf)), log);
}

static int cu_open(const struct ho_rt_device *dev, int threads, struct ho_backend **out,
		   struct ho_error *err)
{
	struct ho_backend *b = calloc(1, sizeof(*b));
	char why[160];
	int ret;
	CUresult r;

	(void)threads; /* the GPU's own: the driver's choice */
	*out = NULL;
	if (!b)
		return ho_err(err, -ENOMEM, "out of memory");
	if (cu_api_load(&b->api, why, sizeof(why))) {
		free(b);
		return ho_err(err, -ENODEV, "device %s: %s", dev->name, why);
	}
	snprintf(b->name, sizeof(b->name), "cuda");
	if ((ret = cu_find(b, dev, err)))
		goto fail;
	if ((r = b->api.cuDevicePrimaryCtxRetain(&b->ctx, b->dev)) != CUDA_SUCCESS) {
		ret = cu_failed(b, "a context", r, err);
		goto fail;
	}
	cu_enter(b);
	if ((r = b->api.cuStreamCreate(&b->stream, CU_STREAM_NON_BLOCKING)) ||
	    (r = b->api.cuEventCreate(&b->origin, 0)) ||
	    (r = b->api.cuEventRecord(b->origin, b->stream)) ||
	    (r = b->api.cuEventSynchronize(b->origin))) {
		ret = cu_failed(b, "a stream", r, err);
		goto fail;
	}
	b->origin_s = ho_clock_s();
	if ((ret = cu_load_module(b, err)))
		goto fail;
	*out = b;
	return 0;
fail:
	cu_close(b);
	return ret;
}

static void cu_query(const struct ho_backend *b, struct ho_backend_info *info)
{
	info->name = b->name;
	info->emulated = false;
	info->host_memory = false; /* its own: tensors move by cu_read and cu_write */
	info->own_memory = true;
}

/* Row-major only: the executor keeps what this device touches NCHW. */
static enum ho_be_layout cu_layout(const char *op, bool *binary)
{
	(void)op;
	*binary = false;
	return HO_BE_PLAIN;
}

static void cu_thread_init(struct ho_backend *b)
{
	cu_enter(b);
}

/*
 * The device memory standing for len bytes of the plan's region at host,
 * filled from it: the constants the plan wrote there.
 */
static int cu_wrap(struct ho_backend *b, void *host, size_t len, struct ho_dev_block **out,
		   struct ho_error *err)
{
	struct ho_dev_block *blk = calloc(1, sizeof(*blk));
	CUresult r;
	char what[64];

	*out = NULL;
	if (!blk)
		return ho_err(err, -ENOMEM, "out of memory");
	cu_enter(b);
	r = b->api.cuMemAlloc_v2(&blk->dptr, len);
	if (r == CUDA_SUCCESS && (r = b->api.cuMemcpyHtoD_v2(blk->dptr, host, len)))
		b->api.cuMemFree_v2(blk->dptr);
	if (r != CUDA_SUCCESS) {
		free(blk);
		snprintf(what, sizeof(what), "%zu bytes of device memory", len);
		return cu_failed(b, what, r, err);
	}
	*out = blk;
	return 0;
}

static void cu_unwrap(struct ho_backend *b, struct ho_dev_block *blk)
{
	if (!blk)
		return;
	cu_enter(b);
	b->api.cuMemFree_v2(blk->dptr);
	free(blk);
}

/* Copies on the stream, after what was launched before them; done when they return. */
static int cu_read(struct ho_backend *b, struct ho_dev_block *blk, uint64_t off, void *dst,
		   size_t len, struct ho_error *err)
{
	CUresult r;

	cu_enter(b);
	if ((r = b->api.cuMemcpyDtoHAsync_v2(dst, blk->dptr + off, len, b->stream)) ||
	    (r = b->api.cuStreamSynchronize(b->stream)))
		return cu_failed(b, "a copy from the device", r, err);
	return 0;
}

static int cu_write(struct ho_backend *b, struct ho_dev_block *blk, uint64_t off, const void *src,
		    size_t len, struct ho_error *err)
{
	CUresult r;

	cu_enter(b);
	if ((r = b->api.cuMemcpyHtoDAsync_v2(blk->dptr + off, src, len, b->stream)) ||
	    (r = b->api.cuStreamSynchronize(b->stream)))
		return cu_failed(b, "a copy to the device", r, err);
	return 0;
}

static int cu_launch(struct ho_backend *b, struct ho_kernel *k, struct ho_error *err)
{
	cu_enter(b);
	return cu_run(b, k, err);
}

/* The host clock's seconds at event e, from the events' origin. */
static bool cu_host_time(const struct ho_backend *b, CUevent e, double *s)
{
	float ms;

	if (b->api.cuEventElapsedTime(&ms, b->origin, e) != CUDA_SUCCESS)
		return false;
	*s = b->origin_s + (double)ms * 1e-3;
	return true;
}

static int cu_wait(struct ho_backend *b, struct ho_kernel *k, double *start, double *end,
		   struct ho_error *err)
{
	CUresult r;
	char what[160];

	if (!k->launched)
		return 0;
	cu_enter(b);
	k->launched = false;
	if ((r = b->api.cuEventSynchronize(k->ev[1])) != CUDA_SUCCESS) {
		snprintf(what, sizeof(what), "node '%s' (%s)", k->name, k->op);
		return cu_failed(b, what, r, err);
	}
	cu_host_time(b, k->ev[0], start);
	cu_host_time(b, k->ev[1], end);
	return 0;
}

static bool cu_done(struct ho_backend *b, const struct ho_kernel *k)
{
	cu_enter(b);
	return !k->launched || b->api.cuEventQuery(k->ev[1]) != CUDA_ERROR_NOT_READY;
}

static int cu_sync(struct ho_backend *b)
{
	cu_enter(b);
	return b->api.cuStreamSynchronize(b->stream) == CUDA_SUCCESS ? 0 : -EIO;
}

const struct ho_backend_ops ho_backend_cuda = {
    .name = "cuda",
    .open = cu_open,
    .devices = cu_devices,
    .close = cu_close,
    .query = cu_query,
    .runs = cu_runs,
    .check = cu_check,
    .layout = cu_layout,
    .wrap = cu_wrap,
    .unwrap = cu_unwrap,
    .read = cu_read,
    .write = cu_write,
    .prepare = cu_prepare,
    .thread_init = cu_thread_init,
    .launch = cu_launch,
    .wait = cu_wait,
    .done = cu_done,
    .kernel_free = cu_kernel_free,
    .sync = cu_sync,
};
