/* SPDX-License-Identifier: MIT */
/*
 * Helpers shared by the /dev/ump tests. Each test is one program per
 * feature, run inside a QEMU guest by scripts/qemu/run-tests.sh; exit 0 is
 * pass, 1 fail, 77 skipped (with the reason on stdout).
 */
#ifndef UMP_TEST_H
#define UMP_TEST_H

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <ump/libump.h>

#include "../test_helpers.h"

static inline void t_open(struct ump *u)
{
	int ret = ump_open(u);

	if (ret == -ENOENT)
		T_SKIPPED("/dev/ump missing: module not loaded");
	if (ret)
		T_FAIL("ump_open: %s", strerror(-ret));
}

/*
 * dmatest-style marks. Source bytes have bit 7 set, destination bytes clear;
 * bytes inside the copied range also carry bit 6. The low six bits hash the
 * position, so an uncopied, over-copied or displaced byte, and a modified
 * source, all show up as a mismatch.
 */
#define T_SRC 0x80u
#define T_IN 0x40u

static inline unsigned char t_mark(uint64_t pos, unsigned int seed)
{
	uint64_t x = pos * 0x9e3779b97f4a7c15ull + seed;

	return (unsigned char)((x >> 29) & 0x3f);
}

static inline void t_fill(unsigned char *p, uint64_t len, uint64_t lo, uint64_t hi, int src,
			  unsigned int seed)
{
	uint64_t i;

	for (i = 0; i < len; i++)
		p[i] = (unsigned char)((src ? T_SRC : 0) | (i >= lo && i < hi ? T_IN : 0) |
				       t_mark(i, seed));
}

/* Returns the first bad offset, or -1. */
static inline long long t_check_dst(const unsigned char *dst, uint64_t len, uint64_t doff,
				    uint64_t soff, uint64_t n, unsigned int sseed,
				    unsigned int dseed)
{
	uint64_t i;

	for (i = 0; i < len; i++) {
		unsigned char want;

		if (i >= doff && i < doff + n)
			want = (unsigned char)(T_SRC | T_IN | t_mark(i - doff + soff, sseed));
		else
			want = t_mark(i, dseed);
		if (dst[i] != want)
			return (long long)i;
	}
	return -1;
}

static inline long long t_check_src(const unsigned char *src, uint64_t len, uint64_t soff,
				    uint64_t n, unsigned int seed)
{
	uint64_t i;

	for (i = 0; i < len; i++) {
		unsigned char want =
		    (unsigned char)(T_SRC | (i >= soff && i < soff + n ? T_IN : 0) |
				    t_mark(i, seed));
		if (src[i] != want)
			return (long long)i;
	}
	return -1;
}

/*
 * The number after " field " on the /proc/ump/status line that starts with
 * prefix, e.g. t_status_field("region host1", "used"). Fails the test when
 * the line or field is missing.
 */
static inline long long t_status_field(const char *prefix, const char *field)
{
	char status[8192], pat[64], *line, *end, *f;

	if (ump_read_status(status, sizeof(status)) < 0)
		T_FAIL("cannot read %s", UMP_STATUS_PATH);
	snprintf(pat, sizeof(pat), " %s ", field);
	for (line = status; line && *line; line = end ? end + 1 : NULL) {
		end = strchr(line, '\n');
		if (end)
			*end = '\0';
		if (!strncmp(line, prefix, strlen(prefix)) && line[strlen(prefix)] == ' ' &&
		    (f = strstr(line, pat)))
			return atoll(f + strlen(pat));
	}
	T_FAIL("no '%s ... %s' in %s", prefix, field, UMP_STATUS_PATH);
}

static inline int t_nr_nodes(const struct ump *u)
{
	return (int)u->version.nr_nodes;
}

#endif
