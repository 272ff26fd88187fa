/* SPDX-License-Identifier: MIT */
/*
 * The part of the CUDA driver API this backend calls, declared from its
 * stable ABI (the _v2 entry points, CUDA 4.0 on) so that the backend builds
 * without a CUDA toolkit and loads libcuda.so.1 only when a box names a GPU.
 * One table lists every entry point once (CU_API); the loader fills
 * struct cu_api from it.  Not installed.
 */
#ifndef HO_CU_DRIVER_H
#define HO_CU_DRIVER_H

#include <stddef.h>

typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUstream_st *CUstream;
typedef struct CUevent_st *CUevent;

enum {
	CUDA_SUCCESS = 0,
	CUDA_ERROR_OUT_OF_MEMORY = 2,
	CUDA_ERROR_NOT_READY = 600,
	CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
	CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
	CU_JIT_ERROR_LOG_BUFFER = 5,
	CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6,
	CU_STREAM_NON_BLOCKING = 1,
};

/* X(name in the library, return, parameters) */
#define CU_API(X)                                                                                  \
	X(cuInit, CUresult, (unsigned flags))                                                      \
	X(cuGetErrorName, CUresult, (CUresult r, const char **s))                                  \
	X(cuDeviceGetCount, CUresult, (int *n))                                                    \
	X(cuDeviceGet, CUresult, (CUdevice * d, int ordinal))                                      \
	X(cuDeviceGetName, CUresult, (char *name, int len, CUdevice d))                            \
	X(cuDeviceGetAttribute, CUresult, (int *v, int attr, CUdevice d))                          \
	X(cuDevicePrimaryCtxRetain, CUresult, (CUcontext * c, CUdevice d))                         \
	X(cuDevicePrimaryCtxRelease_v2, CUresult, (CUdevice d))                                    \
	X(cuCtxSetCurrent, CUresult, (CUcontext c))                                                \
	X(cuModuleLoadDataEx, CUresult,                                                            \
	  (CUmodule * m, const void *image, unsigned n, int *opts, void **vals))                   \
	X(cuModuleUnload, CUresult, (CUmodule m))                                                  \
	X(cuModuleGetFunction, CUresult, (CUfunction * f, CUmodule m, const char *name))           \
	X(cuMemAlloc_v2, CUresult, (CUdeviceptr * p, size_t len))                                  \
	X(cuMemFree_v2, CUresult, (CUdeviceptr p))                                                 \
	X(cuMemcpyHtoD_v2, CUresult, (CUdeviceptr dst, const void *src, size_t len))               \
	X(cuMemcpyHtoDAsync_v2, CUresult,                                                          \
	  (CUdeviceptr dst, const void *src, size_t len, CUstream s))                              \
	X(cuMemcpyDtoHAsync_v2, CUresult, (void *dst, CUdeviceptr src, size_t len, CUstream s))    \
	X(cuStreamCreate, CUresult, (CUstream * s, unsigned flags))                                \
	X(cuStreamDestroy_v2, CUresult, (CUstream s))                                              \
	X(cuStreamSynchronize, CUresult, (CUstream s))                                             \
	X(cuEventCreate, CUresult, (CUevent * e, unsigned flags))                                  \
	X(cuEventDestroy_v2, CUresult, (CUevent e))                                                \
	X(cuEventRecord, CUresult, (CUevent e, CUstream s))                                        \
	X(cuEventSynchronize, CUresult, (CUevent e))                                               \
	X(cuEventQuery, CUresult, (CUevent e))                                                     \
	X(cuEventElapsedTime, CUresult, (float *ms, CUevent a, CUevent b))                         \
	X(cuLaunchKernel, CUresult,                                                                \
	  (CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,          \
	   unsigned bz, unsigned shared, CUstream s, void **params, void **extra))

#define CU_FIELD(name, ret, args) ret(*name) args;
struct cu_api {
	void *lib; /* dlopen's handle on libcuda.so.1 */
	CU_API(CU_FIELD)
};
#undef CU_FIELD

/* Load the driver and cuInit it: 0, or -ENODEV with why in why (len bytes). */
int cu_api_load(struct cu_api *api, char *why, size_t len);
void cu_api_unload(struct cu_api *api);
/* "CUDA_ERROR_OUT_OF_MEMORY", or the number where the driver has no name for it. */
const char *cu_error_name(const struct cu_api *api, CUresult r, char *buf, size_t len);

#endif
