/* SPDX-License-Identifier: MIT */
/* The OpenCL backend's insides, shared by its files. Not installed. */
#ifndef HO_OCL_H
#define HO_OCL_H

#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <stdbool.h>

#include "backends/backend.h"
#include "common.h"
#include "heteroopt/opsem.h"

struct ho_backend {
	cl_platform_id plat;
	cl_device_id dev;
	cl_context ctx;
	cl_command_queue q; /* in order, profiled: launches run one after another */
	double clock_off;   /* ho_clock_s() - the device's profiling clock, in seconds */
	bool own;	    /* tensors in buffers of its own, moved by ocl_read/ocl_write */
	cl_program prog;
	/*
	 * Scratch shared by every kernel of the device, which its in-order queue
	 * runs one at a time: an im2col's columns, CLBlast's temporary matrices.
	 * Sized at prepare time to the largest a kernel needs.
	 */
	cl_mem scratch, tmp;
	size_t scratch_len, tmp_len;
	size_t
	    max_alloc; /* the most one buffer may hold (CL_DEVICE_MAX_MEM_ALLOC_SIZE); 0: unknown */
	char name[192]; /* "opencl (Portable Computing Language, pthread-...)" */
};

/* A block of the plan's memory as the device sees it: a buffer over the host's pages
 * (CL_MEM_USE_HOST_PTR), or one of its own standing for them (b->own). */
struct ho_dev_block {
	cl_mem mem;
};

/*
 * A GEMM on CLBlast, row-major: c = alpha op(a) op(b), batch times at strides
 * sa, sb, sc; offsets, leading dimensions and strides in floats.  b NULL: the
 * device's scratch (an im2col's columns).
 */
struct ocl_gemm {
	cl_mem a, b, c;
	size_t ao, bo, co, lda, ldb, ldc, sa, sb, sc;
	size_t m, n, k, batch;
	bool ta, tb;
	float alpha;
};

/*
 * One step of a node's work: a kernel enqueued over its work sizes (local all
 * 0: the driver's choice), or, where k is NULL, a GEMM.  scratch: argument
 * scratch_at is the device's scratch, set at launch since it may have grown.
 */
struct ocl_launch {
	cl_kernel k;
	cl_uint dims;
	size_t global[3], local[3];
	bool scratch;
	cl_uint scratch_at;
	struct ocl_gemm gemm;
};

struct ho_kernel {
	const char *name, *op;
	struct ocl_launch *l;
	int n, cap;
	cl_event ev[2];	 /* its last launch's first and last enqueue: their start and end */
	cl_mem owned[2]; /* weights it folded, parameters it computed */
};

extern const char ocl_source[];

/* device.c: the program, built or read back from the disk cache */
int ocl_build(struct ho_backend *b, struct ho_error *err);
const char *ocl_strerror(cl_int e);

/* A node being prepared: what every operator's prepare reads and fills. */
struct ocl_ctx {
	struct ho_backend *b; /* NULL: a check, nothing built (no kernels, buffers, arguments) */
	const struct ho_graph *g;
	const struct ho_node *n;
	const struct ho_fusion *fuse;
	const struct ho_mem *mem;
	const uint8_t *channels_last; /* NULL: every tensor row-major */
	struct ho_kernel *k;
	struct ho_error *err;
};

/* Kernel arguments, in order, through one cursor. */
struct ocl_args {
	cl_kernel k;
	cl_uint i;
	cl_int e;
};

/* args.c: launches and their arguments */
bool ocl_is_nhwc(const struct ocl_ctx *c, int32_t t); /* tensor t stored channels-last */
int ocl_refuse(const struct ocl_ctx *c, const char *why);
int ocl_no_kernel(const struct ocl_ctx *c);
struct ocl_launch *ocl_new_launch(const struct ocl_ctx *c, const char *name);
/* A launch of kernel name whose first arguments are tensors y and x. */
struct ocl_launch *ocl_launch_yx(const struct ocl_ctx *c, const char *name, int32_t y, int32_t x,
				 struct ocl_args *a);
void ocl_arg_int(struct ocl_args *a, int v);
void ocl_arg_long(struct ocl_args *a, long v);
void ocl_arg_float(struct ocl_args *a, float v);
void ocl_arg_buf(struct ocl_args *a, cl_mem m);
void ocl_arg_tensor(struct ocl_args *a, const struct ocl_ctx *c, int32_t t);
/* The buffer tensor t lies in (NULL in a check). */
cl_mem ocl_buf(const struct ocl_ctx *c, int32_t t);
void ocl_arg_act(struct ocl_args *a, const struct ho_act_args *act);
/* Its kernel extents, strides, leading pads and dilations, as every spatial kernel takes them. */
void ocl_arg_window(struct ocl_args *a, const struct ho_window *w);
void ocl_arg_int8(struct ocl_args *a, const int *v);
int ocl_args_done(const struct ocl_ctx *c, const struct ocl_args *a);
/* Buffer owned[i] of the kernel: a copy of len bytes the kernel computed at prepare time. */
int ocl_owned(const struct ocl_ctx *c, int i, const void *data, size_t len);

/* gemm.c: convolution as im2col and GEMM, MatMul and Gemm, on CLBlast */
/* The device's *buf holds at least len bytes for node c's kernels (grown at prepare time). */
int ocl_need(const struct ocl_ctx *c, cl_mem *buf, size_t *have, size_t len);
int ocl_gemm_enqueue(struct ho_backend *b, const struct ocl_gemm *m, cl_event *ev);
int ocl_prep_conv_gemm(const struct ocl_ctx *c, const struct ho_window *win);
int ocl_prep_matmul(const struct ocl_ctx *c);

/* eltwise.c */
int ocl_binary_at(const struct ocl_ctx *c, const struct ho_node *n, int32_t y, bool in_place);
int ocl_prep_unary(const struct ocl_ctx *c);
int ocl_prep_binary(const struct ocl_ctx *c);

/* conv.c */
struct ocl_launch *ocl_spatial(const struct ocl_ctx *c, const char *name, const struct ho_tensor *x,
			       const struct ho_tensor *y, struct ocl_args *a);
/* The tensor a fused kernel writes: its post-op's output, else its batch norm's, else its own. */
int32_t ocl_fused_out(const struct ocl_ctx *c);
bool ocl_post_act(const struct ocl_ctx *c, struct ho_act_args *act);
int ocl_post_binary(const struct ocl_ctx *c);
/* A Conv's weights and bias, its batch norm folded in: buffers and offsets in floats;
 * *has_bias false where there is none (*bm then names the weights). */
int ocl_conv_weights(const struct ocl_ctx *c, cl_mem *wm, long *wo, cl_mem *bm, long *bo,
		     bool *has_bias);
int ocl_prep_conv(const struct ocl_ctx *c);
int ocl_prep_conv_transpose(const struct ocl_ctx *c);
int ocl_prep_pool(const struct ocl_ctx *c);
int ocl_prep_batchnorm(const struct ocl_ctx *c);

/* movement.c */
int ocl_prep_concat(const struct ocl_ctx *c);
int ocl_prep_transpose(const struct ocl_ctx *c);
int ocl_prep_slice(const struct ocl_ctx *c);
int ocl_prep_pad(const struct ocl_ctx *c);

/* reduce.c */
int ocl_prep_global_pool(const struct ocl_ctx *c);
int ocl_prep_reduce(const struct ocl_ctx *c);

/* ops.c: the operator table */
bool ocl_runs(const char *op_type);
enum ho_be_layout ocl_layout(const char *op_type, bool *binary);
int ocl_prepare(struct ho_backend *b, const struct ho_graph *g, uint32_t node,
		const struct ho_fusion *fuse, const struct ho_mem *mem,
		const uint8_t *channels_last, struct ho_kernel **out, struct ho_error *err);
int ocl_check(const struct ho_graph *g, uint32_t node, const struct ho_fusion *fuse,
	      const struct ho_mem *mem, struct ho_error *err);
void ocl_kernel_free(struct ho_kernel *k);

#endif
