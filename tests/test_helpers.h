/* SPDX-License-Identifier: MIT */
/*
 * The checks every test program shares: the unit tests on this machine and
 * the /dev/ump tests and stress programs in the QEMU guests.  One program per
 * feature; exit 0 passes, 1 fails, 77 skips (the reason on the last line).
 *   T_CHECK(cond, fmt, ...)  count a failure and go on (return t_failures ? 1 : 0)
 *   T_REQUIRE(cond)          a check later steps depend on: stop
 *   T_FAIL / T_SKIPPED       stop now, failed or skipped, saying why
 *   T_EXPECT(call, want)     a call returning 0 / -errno gives exactly want
 */
#ifndef HO_TEST_HELPERS_H
#define HO_TEST_HELPERS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define T_SKIP 77

static int t_failures __attribute__((unused));

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

#define T_FAIL(...)                                                                                \
	do {                                                                                       \
		printf("FAIL %s:%d: ", __FILE__, __LINE__);                                        \
		printf(__VA_ARGS__);                                                               \
		printf("\n");                                                                      \
		exit(1);                                                                           \
	} while (0)

#define T_SKIPPED(...)                                                                             \
	do {                                                                                       \
		printf("SKIP: ");                                                                  \
		printf(__VA_ARGS__);                                                               \
		printf("\n");                                                                      \
		exit(T_SKIP);                                                                      \
	} while (0)

/* Expect a call returning 0 / -errno to give exactly want. */
#define T_EXPECT(call, want)                                                                       \
	do {                                                                                       \
		long t_got_ = (long)(call);                                                        \
		if (t_got_ != (long)(want))                                                        \
			T_FAIL("%s = %ld (%s), want %ld", #call, t_got_,                           \
			       t_got_ < 0 ? strerror((int)-t_got_) : "ok", (long)(want));          \
	} while (0)

#define T_OK(call) T_EXPECT(call, 0)

#endif
