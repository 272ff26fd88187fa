// SPDX-License-Identifier: MIT
/*
 * The backends, listed once: which ops table runs a device of each enum
 * ho_rt_backend, and which backend a box's device kind gets.  CUDA and XRT
 * backends are a folder beside cpu/ and emu/ and a line in each table.
 */
#include <string.h>

#include "rt_priv.h"

static const struct ho_backend_ops *const ho_backends[] = {
    [HO_RT_CPU] = &ho_backend_cpu,
    [HO_RT_EMU] = &ho_backend_emu,
};

/* Device kinds with a backend of their own; any other kind is emulated. */
static const struct {
	const char *kind;
	enum ho_rt_backend backend;
} ho_kind_backends[] = {
    {"cpu", HO_RT_CPU},
};

const struct ho_backend_ops *ho_backend_ops_of(int backend)
{
	if (backend < 0 || (size_t)backend >= sizeof(ho_backends) / sizeof(ho_backends[0]))
		return NULL;
	return ho_backends[backend];
}

int ho_backend_for_kind(const char *kind)
{
	for (size_t i = 0; i < sizeof(ho_kind_backends) / sizeof(ho_kind_backends[0]); i++)
		if (!strcmp(ho_kind_backends[i].kind, kind))
			return ho_kind_backends[i].backend;
	return HO_RT_EMU;
}
