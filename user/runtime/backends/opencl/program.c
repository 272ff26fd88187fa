// SPDX-License-Identifier: MIT
/*
 * The OpenCL backend's program: built from source.c once per device and its
 * binary kept in $XDG_CACHE_HOME/heteroopt/opencl (~/.cache/...), named by
 * a hash of the platform, device, driver version and source, so that a plan
 * made again skips the compiler (PoCL: a second or more).  A device that
 * cannot compile source (an FPGA through XRT) is given its binary there.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ocl.h"

static uint64_t fnv1a(uint64_t h, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
	return h;
}

/* The cache file's path (created folders included); -1 where there is no home. */
static int ocl_cache_path(struct ho_backend *b, char *path, size_t len)
{
	const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	char info[3][256] = {"", "", ""};
	uint64_t h = 1469598103934665603ull;
	int n;

	clGetPlatformInfo(b->plat, CL_PLATFORM_VERSION, sizeof(info[0]), info[0], NULL);
	clGetDeviceInfo(b->dev, CL_DEVICE_NAME, sizeof(info[1]), info[1], NULL);
	clGetDeviceInfo(b->dev, CL_DRIVER_VERSION, sizeof(info[2]), info[2], NULL);
	for (int i = 0; i < 3; i++)
		h = fnv1a(h, info[i], strlen(info[i]) + 1);
	h = fnv1a(h, ocl_source, strlen(ocl_source));
	if (xdg && *xdg)
		n = snprintf(path, len, "%s/heteroopt", xdg);
	else if (home && *home)
		n = snprintf(path, len, "%s/.cache/heteroopt", home);
	else
		return -1;
	if (n < 0 || (size_t)n >= len)
		return -1;
	mkdir(path, 0755);
	strncat(path, "/opencl", len - strlen(path) - 1);
	mkdir(path, 0755);
	n = snprintf(path + strlen(path), len - strlen(path), "/%016llx.bin",
		     (unsigned long long)h);
	return n > 0 ? 0 : -1;
}

static cl_program ocl_from_cache(struct ho_backend *b, const char *path)
{
	FILE *f = fopen(path, "rb");
	unsigned char *bin = NULL;
	cl_program p = NULL;
	cl_int e = CL_SUCCESS, st = CL_SUCCESS;
	long n;

	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) || (n = ftell(f)) <= 0 || fseek(f, 0, SEEK_SET) ||
	    !(bin = malloc((size_t)n)) || fread(bin, 1, (size_t)n, f) != (size_t)n)
		goto out;
	p = clCreateProgramWithBinary(b->ctx, 1, &b->dev, &(size_t){(size_t)n},
				      (const unsigned char **)&bin, &st, &e);
	if (e != CL_SUCCESS || st != CL_SUCCESS ||
	    clBuildProgram(p, 1, &b->dev, NULL, NULL, NULL) != CL_SUCCESS) {
		if (p)
			clReleaseProgram(p);
		p = NULL; /* stale or foreign: built again from source */
	}
out:
	free(bin);
	fclose(f);
	return p;
}

static void ocl_to_cache(struct ho_backend *b, const char *path)
{
	size_t n = 0;
	unsigned char *bin;
	char tmp[4200];
	FILE *f;

	if (clGetProgramInfo(b->prog, CL_PROGRAM_BINARY_SIZES, sizeof(n), &n, NULL) != CL_SUCCESS ||
	    !n || !(bin = malloc(n)))
		return;
	if (clGetProgramInfo(b->prog, CL_PROGRAM_BINARIES, sizeof(bin), &bin, NULL) == CL_SUCCESS) {
		/* written aside and renamed: a reader never sees half a binary */
		snprintf(tmp, sizeof(tmp), "%s.%d", path, (int)getpid());
		f = fopen(tmp, "wb");
		if (f && fwrite(bin, 1, n, f) == n && !fclose(f))
			rename(tmp, path);
		else {
			if (f)
				fclose(f);
			unlink(tmp);
		}
	}
	free(bin);
}

/* The first line of the build log that says error, else its first line. */
static void ocl_first_error(struct ho_backend *b, cl_program p, char *out, size_t len)
{
	size_t n = 0;
	char *log, *line, *nl;

	*out = 0;
	if (clGetProgramBuildInfo(p, b->dev, CL_PROGRAM_BUILD_LOG, 0, NULL, &n) != CL_SUCCESS ||
	    !n || !(log = calloc(1, n + 1)))
		return;
	clGetProgramBuildInfo(p, b->dev, CL_PROGRAM_BUILD_LOG, n, log, NULL);
	line = strstr(log, "error") ? strstr(log, "error") : log;
	while (line > log && line[-1] != '\n')
		line--;
	if ((nl = strchr(line, '\n')))
		*nl = 0;
	snprintf(out, len, "%s", line);
	free(log);
}

int ocl_build(struct ho_backend *b, struct ho_error *err)
{
	char path[4096], first[512];
	bool cached = !ocl_cache_path(b, path, sizeof(path));
	const char *src = ocl_source;
	cl_int e = CL_SUCCESS;

	if (cached && (b->prog = ocl_from_cache(b, path)))
		return 0;
	b->prog = clCreateProgramWithSource(b->ctx, 1, &src, NULL, &e);
	if (e != CL_SUCCESS)
		return ho_err(err, -ENODEV, "%s: cannot load the kernels' source: %s (%d)", b->name,
			      ocl_strerror(e), e);
	e = clBuildProgram(b->prog, 1, &b->dev, "-cl-std=CL1.2", NULL, NULL);
	if (e != CL_SUCCESS) {
		ocl_first_error(b, b->prog, first, sizeof(first));
		return ho_err(err, -ENOEXEC, "%s: the kernels (opencl/source.c) do not build: %s",
			      b->name, *first ? first : ocl_strerror(e));
	}
	if (cached)
		ocl_to_cache(b, path);
	return 0;
}
