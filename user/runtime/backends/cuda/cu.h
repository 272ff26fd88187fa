/* SPDX-License-Identifier: MIT */
/* The CUDA backend's insides, shared by its files. Not installed. */
#ifndef HO_CU_H
#define HO_CU_H

#include <stdbool.h>
#include <stddef.h>

#include "backends/backend.h"
#include "common.h"
#include "driver.h"
#include "heteroopt/opsem.h"

struct ho_backend {
	struct cu_api api; /* the driver's entry points, loaded at open */
	CUdevice dev;
	CUcontext ctx;	 /* the device's primary context */
	CUstream stream; /* in order: launches run one after another */
	CUmodule mod;
	CUevent origin; /* recorded at open, at host time origin_s: the events' zero */
	double origin_s;
	/*
	 * Device memory shared by every kernel of the device, which its stream
	 * runs one at a time: an im2col's columns.  Kernels take its address,
	 * read at launch, since it grows at prepare time to the largest need.
	 */
	CUdeviceptr scratch;
	size_t scratch_len;
	int pageable;	/* it reads pageable host memory (HMM, ATS): mapping may fail harmlessly */
	char name[160]; /* "cuda (NVIDIA H200, sm_90)" */
};

/* A region of the plan in device memory. */
struct ho_dev_block {
	CUdeviceptr dptr;
};

/* Kernel parameters as kernels.cu declares them. */
struct cu_dims8 {
	int v[8];
};
struct cu_window {
	int kh, kw, sh, sw, ph, pw, dh, dw;
};
struct cu_gemm_shape {
	int M, N, K, ta, tb, bm, bn, has_bias, splits, pad_;
	long lda, ldb, ldc, sa, sb, sc;
	float alpha, beta;
};

#define CU_MAX_PARAMS 24
#define CU_PARAM_BYTES 256

/*
 * One launch of a node's work: a kernel over a grid, its parameters packed
 * in bytes at offsets at[]; the parameter scratch_at (if scratch) is the
 * device's scratch pointer, read at launch.
 */
struct cu_launch {
	CUfunction f;
	unsigned grid[3], block;
	int n_params;
	unsigned short at[CU_MAX_PARAMS], used;
	unsigned char bytes[CU_PARAM_BYTES];
	int scratch_at; /* -1: none */
	bool overflow;	/* more parameters than fit: a bug, refused at prepare */
};

struct ho_kernel {
	const char *name, *op;
	struct cu_launch *l;
	int n, cap;
	CUevent ev[2];	      /* its launches' start and end */
	CUdeviceptr owned[2]; /* device copies it made: folded weights, bias, parameters */
	struct ho_backend *b;
	bool launched;
};

/* The PTX of kernels.cu, made at build time. */
extern const char ho_ptx_cuda[];

/* A node being prepared: what every operator's prepare reads and fills. */
struct cu_ctx {
	struct ho_backend *b; /* NULL: a check, nothing built */
	const struct ho_graph *g;
	const struct ho_node *n;
	const struct ho_fusion *fuse;
	const struct ho_mem *mem;
	struct ho_kernel *k;
	struct ho_error *err;
};

/* launch.c: launches and their parameters */
int cu_refuse(const struct cu_ctx *c, const char *why);
int cu_failed(const struct ho_backend *b, const char *what, CUresult r, struct ho_error *err);
/* A launch of kernel name over n threads (blocks of 256), its parameters to follow. */
struct cu_launch *cu_new_launch(const struct cu_ctx *c, const char *name, long n);
void cu_param(struct cu_launch *l, const void *v, size_t len, size_t align);
void cu_param_int(struct cu_launch *l, int v);
void cu_param_long(struct cu_launch *l, long v);
void cu_param_float(struct cu_launch *l, float v);
void cu_param_ptr(struct cu_launch *l, CUdeviceptr p);
/* Tensor t: its block's device address and its offset in floats (0 0 in a check). */
void cu_param_tensor(struct cu_launch *l, const struct cu_ctx *c, int32_t t);
/* The same, plus elements into it (an image of a batch). */
void cu_param_tensor_at(struct cu_launch *l, const struct cu_ctx *c, int32_t t, long plus);
void cu_param_act(struct cu_launch *l, const struct ho_act_args *a);
/* The device's scratch, as a pointer parameter read at launch. */
void cu_param_scratch(struct cu_launch *l);
int cu_launch_done(const struct cu_ctx *c, const struct cu_launch *l);
/* Device memory owned[i] holding a copy of len bytes of host data. */
int cu_owned(const struct cu_ctx *c, int i, const void *data, size_t len);
/* The device's scratch holds at least len bytes (grown at prepare time). */
int cu_need_scratch(const struct cu_ctx *c, size_t len);
int cu_run(struct ho_backend *b, struct ho_kernel *k, struct ho_error *err);

/* eltwise.c */
int cu_binary_at(const struct cu_ctx *c, const struct ho_node *n, int32_t y, bool in_place);
int cu_prep_unary(const struct cu_ctx *c);
int cu_prep_binary(const struct cu_ctx *c);

/* conv.c: convolution, pooling, batch norm, MatMul and Gemm */
int cu_prep_conv(const struct cu_ctx *c);
int cu_prep_conv_transpose(const struct cu_ctx *c);
int cu_prep_pool(const struct cu_ctx *c);
int cu_prep_global_pool(const struct cu_ctx *c);
int cu_prep_batchnorm(const struct cu_ctx *c);
int cu_prep_matmul(const struct cu_ctx *c);

/* ops.c: the operator table */
bool cu_runs(const char *op_type);
int cu_prepare(struct ho_backend *b, const struct ho_graph *g, uint32_t node,
	       const struct ho_fusion *fuse, const struct ho_mem *mem, const uint8_t *channels_last,
	       struct ho_kernel **out, struct ho_error *err);
int cu_check(const struct ho_graph *g, uint32_t node, const struct ho_fusion *fuse,
	     const struct ho_mem *mem, struct ho_error *err);
void cu_kernel_free(struct ho_kernel *k);

#endif
