/* SPDX-License-Identifier: MIT */
/* Tiny helpers shared by the unit test programs (exit 77 = skipped). */
#ifndef HO_TEST_UTIL_H
#define HO_TEST_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define T_SKIP 77

static int t_failures;

#define T_CHECK(cond, ...)                                                                         \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond);   \
			fprintf(stderr, __VA_ARGS__);                                              \
			fputc('\n', stderr);                                                       \
			t_failures++;                                                              \
		}                                                                                  \
	} while (0)

/* A check later steps depend on: report it and stop. */
#define T_REQUIRE(cond)                                                                            \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "%s:%d: required: %s\n", __FILE__, __LINE__, #cond);       \
			exit(1);                                                                   \
		}                                                                                  \
	} while (0)

/* Folder of the generated models (scripts/models.sh). */
static inline const char *t_models_dir(void)
{
	const char *d = getenv("HETEROOPT_MODELS");

	return d && *d ? d : NULL;
}

static inline int t_model_path(char *buf, size_t n, const char *name)
{
	const char *d = t_models_dir();

	if (!d)
		return -1;
	snprintf(buf, n, "%s/%s", d, name);
	return access(buf, R_OK);
}

#endif
