/* SPDX-License-Identifier: MIT */
/* The OpenCL backend's insides, shared by its files. Not installed. */
#ifndef HO_OCL_H
#define HO_OCL_H

#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <stdbool.h>

#include "backends/backend.h"
#include "common.h"

struct ho_backend {
	cl_platform_id plat;
	cl_device_id dev;
	cl_context ctx;
	cl_command_queue q; /* in order: a node's launches run one after another */
	cl_program prog;
	char name[192]; /* "opencl (Portable Computing Language, pthread-...)" */
};

/* A block of host memory as the device sees it: a buffer over it, CL_MEM_USE_HOST_PTR. */
struct ho_dev_block {
	cl_mem mem;
};

/* Activations folded after a kernel: the act() codes of source.c. */
enum ocl_act {
	OCL_NONE,
	OCL_RELU,
	OCL_SIGMOID,
	OCL_TANH,
	OCL_CLIP,
	OCL_LEAKY_RELU,
	OCL_HARD_SIGMOID,
	OCL_HARD_SWISH,
	OCL_SWISH,
	OCL_EXP,
	OCL_SQRT,
	OCL_NEG,
	OCL_ABS,
	OCL_ERF,
	OCL_RECIPROCAL,
	OCL_GELU,
	OCL_LOG,
	OCL_FLOOR,
	OCL_CEIL,
	OCL_ELU,
	OCL_SOFTPLUS
};

struct ocl_act_args {
	int act;
	float p, q;
};

/* One enqueue of a node's kernel: its work sizes (local all 0: the driver's choice). */
struct ocl_launch {
	cl_kernel k;
	cl_uint dims;
	size_t global[3], local[3];
};

struct ho_kernel {
	const char *name, *op;
	struct ocl_launch *l;
	int n, cap;
	cl_mem owned[2]; /* weights it folded, parameters it computed */
};

extern const char ocl_source[];

/* device.c: the program, built or read back from the disk cache */
int ocl_build(struct ho_backend *b, struct ho_error *err);
const char *ocl_strerror(cl_int e);

/* ops.c: the operator table */
bool ocl_runs(const char *op_type);
int ocl_prepare(struct ho_backend *b, const struct ho_graph *g, uint32_t node,
		const struct ho_fusion *fuse, const struct ho_mem *mem,
		const uint8_t *channels_last, struct ho_kernel **out, struct ho_error *err);
void ocl_kernel_free(struct ho_kernel *k);

#endif
