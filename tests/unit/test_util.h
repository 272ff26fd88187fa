/* SPDX-License-Identifier: MIT */
/* What the unit test programs share beyond tests/test_helpers.h: the models' folder, a
 * runtime device, a profile from text. */
#ifndef HO_TEST_UTIL_H
#define HO_TEST_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../test_helpers.h"
#include "heteroopt/box.h"
#include "heteroopt/runtime.h"

/* Folder of the generated models (scripts/models.sh). */
static inline const char *t_models_dir(void)
{
	const char *d = getenv("HETEROOPT_MODELS");

	return d && *d ? d : NULL;
}

/* A placement's device: its name and backend, one thread, on NUMA node numa_node. */
static inline void t_rt_device(struct ho_rt_device *d, const char *name, const char *backend,
			       int numa_node)
{
	memset(d, 0, sizeof(*d));
	snprintf(d->name, sizeof(d->name), "%s", name);
	snprintf(d->backend, sizeof(d->backend), "%s", backend);
	d->threads = 1;
	d->numa_node = numa_node;
}

static inline int t_model_path(char *buf, size_t n, const char *name)
{
	const char *d = t_models_dir();

	if (!d)
		return -1;
	snprintf(buf, n, "%s/%s", d, name);
	return access(buf, R_OK);
}

/* Load the profile text given through a file, as a user's would be. */
static inline int t_profile_text(const char *text, const struct ho_box *box, struct ho_profile **pf,
				 struct ho_error *err)
{
	char path[] = "/tmp/ho-profile-XXXXXX";
	int fd = mkstemp(path), ret;

	T_REQUIRE(fd >= 0 && write(fd, text, strlen(text)) == (ssize_t)strlen(text));
	close(fd);
	ret = ho_profile_load(path, box, pf, err);
	unlink(path);
	return ret;
}

#endif
