// SPDX-License-Identifier: MIT
/* FNV-1a 64 of bytes and of files: what a schedule records of its model and box. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "common.h"
#include "heteroopt/fingerprint.h"

uint64_t ho_fingerprint_bytes(uint64_t h, const void *data, size_t len)
{
	const unsigned char *p = data;

	for (size_t i = 0; i < len; i++)
		h = (h ^ p[i]) * 0x100000001b3ull;
	return h;
}

int ho_fingerprint_file(const char *path, uint64_t *out, struct ho_error *err)
{
	FILE *f = fopen(path, "rb");
	unsigned char buf[1 << 16];
	uint64_t h = 0xcbf29ce484222325ull;
	size_t r;

	if (!f)
		return ho_err(err, -errno, "%s: %s", path, strerror(errno));
	while ((r = fread(buf, 1, sizeof(buf), f)) > 0)
		h = ho_fingerprint_bytes(h, buf, r);
	fclose(f);
	*out = h;
	return 0;
}
