/* SPDX-License-Identifier: MIT */
/*
 * NumPy .npy files, the runtime's input and output format (what numpy and
 * PyTorch users already have). Versions 1.0-3.0, little-endian or
 * byte-order-free dtypes, C order. Anything else is refused with a message
 * naming the file and the problem.
 *
 * Owns: the data of a struct ho_npy it filled (ho_npy_free releases it).
 */
#ifndef HETEROOPT_NPY_H
#define HETEROOPT_NPY_H

#include <stddef.h>
#include <stdint.h>

#include <heteroopt/graph.h>

#ifdef __cplusplus
extern "C" {
#endif

#define HO_NPY_MAX_DIMS 16

struct ho_npy {
	char descr[8]; /* numpy dtype string, e.g. "<f4", "|u1" */
	uint32_t elem_size;
	int ndim;
	int64_t shape[HO_NPY_MAX_DIMS];
	size_t count;  /* elements */
	size_t nbytes; /* count * elem_size */
	void *data;
};

/* Read a whole file; the data is malloc'd and 64-byte aligned. */
int ho_npy_read(const char *path, struct ho_npy *out, struct ho_error *err);
/* Parse a header in memory; returns the data offset (> 0) or -errno. */
int ho_npy_parse_header(const void *buf, size_t len, struct ho_npy *out, struct ho_error *err);
/* Write data as a version 1.0 file (2.0 if the header needs it). */
int ho_npy_write(const char *path, const char *descr, int ndim, const int64_t *shape,
		 const void *data, struct ho_error *err);
void ho_npy_free(struct ho_npy *n);
/* The ONNX element type of a numpy dtype string (HO_DT_UNDEFINED: none), and back (NULL). */
int ho_npy_dtype(const char *descr);
const char *ho_npy_descr(int dtype);

#ifdef __cplusplus
}
#endif
#endif
