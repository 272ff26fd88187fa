// SPDX-License-Identifier: MIT
/*
 * The CUDA driver, opened with dlopen: a machine without an NVIDIA GPU
 * builds, links and runs everything else, and a box naming a GPU there is
 * refused at open, saying the driver is missing.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "driver.h"

/* Every entry point, by name and place in struct cu_api (driver.h's one list). */
static const struct {
	const char *name;
	size_t at;
} cu_symbols[] = {
#define CU_SYMBOL(name, ret, args) {#name, offsetof(struct cu_api, name)},
    CU_API(CU_SYMBOL)
#undef CU_SYMBOL
};

void cu_api_unload(struct cu_api *api)
{
	if (api->lib)
		dlclose(api->lib);
	memset(api, 0, sizeof(*api));
}

int cu_api_load(struct cu_api *api, char *why, size_t len)
{
	CUresult r;

	memset(api, 0, sizeof(*api));
	if (!(api->lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL))) {
		snprintf(why, len, "no CUDA driver (%s)", dlerror());
		return -ENODEV;
	}
	for (size_t i = 0; i < sizeof(cu_symbols) / sizeof(cu_symbols[0]); i++) {
		void *f = dlsym(api->lib, cu_symbols[i].name);

		if (!f) {
			snprintf(why, len, "the CUDA driver lacks %s: too old", cu_symbols[i].name);
			cu_api_unload(api);
			return -ENODEV;
		}
		memcpy((char *)api + cu_symbols[i].at, &f, sizeof(f));
	}
	if ((r = api->cuInit(0)) != CUDA_SUCCESS) {
		char b[48];

		snprintf(why, len, "cuInit failed: %s", cu_error_name(api, r, b, sizeof(b)));
		cu_api_unload(api);
		return -ENODEV;
	}
	return 0;
}

const char *cu_error_name(const struct cu_api *api, CUresult r, char *buf, size_t len)
{
	const char *s = NULL;

	if (api->cuGetErrorName && api->cuGetErrorName(r, &s) == CUDA_SUCCESS && s)
		return s;
	snprintf(buf, len, "CUDA error %d", r);
	return buf;
}
