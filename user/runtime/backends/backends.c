// SPDX-License-Identifier: MIT
/*
 * The backends, listed once, by name: a new backend is a folder beside
 * cpu/ and a line here.  The first is the host's: it runs a plan with no
 * schedule, and a box's cpu devices.
 */
#include <string.h>

#include "rt_priv.h"

extern const struct ho_backend_ops ho_backend_cpu, ho_backend_emu, ho_backend_emu_discrete,
    ho_backend_opencl, ho_backend_cuda;

static const struct ho_backend_ops *const ho_backends[] = {
    &ho_backend_cpu,	&ho_backend_emu,  &ho_backend_emu_discrete,
    &ho_backend_opencl, &ho_backend_cuda,
};

/* A device of a kind with no backend named runs on the host's if it is a cpu, else emulated. */
static const char *const ho_emulator = "emu";

const struct ho_backend_ops *ho_backend_find(const char *name)
{
	for (size_t i = 0; i < sizeof(ho_backends) / sizeof(ho_backends[0]); i++)
		if (!strcmp(ho_backends[i]->name, name))
			return ho_backends[i];
	return NULL;
}

const struct ho_backend_ops *ho_backend_host(void)
{
	return ho_backends[0];
}

const char *ho_rt_backend_for(const char *kind, const char *named)
{
	const struct ho_backend_ops *b = named && *named ? ho_backend_find(named) : NULL;

	if (named && *named)
		return b ? b->name : NULL;
	return !strcmp(kind, "cpu") ? ho_backend_host()->name : ho_emulator;
}

int ho_rt_find_devices(struct ho_rt_found *out, int cap)
{
	int n = 0;

	for (size_t i = 0; i < sizeof(ho_backends) / sizeof(ho_backends[0]) && n < cap; i++)
		if (ho_backends[i]->devices)
			n += ho_backends[i]->devices(out + n, cap - n);
	return n;
}

bool ho_rt_backend_runs(const char *backend, const char *op_type)
{
	const struct ho_backend_ops *b = ho_backend_find(backend);

	return b && b->runs(op_type);
}
