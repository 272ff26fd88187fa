// SPDX-License-Identifier: MIT
/* UTF-8, one code point at a time: the .npy string converter and StringNormalizer share it. */
#include "common.h"

long ho_utf8_next(const char **s)
{
	const unsigned char *p = (const unsigned char *)*s;
	int more = p[0] >= 0xf0 ? 3 : p[0] >= 0xe0 ? 2 : p[0] >= 0xc0 ? 1 : 0;
	long c = more ? p[0] & (0x3f >> more) : p[0];

	*s += 1; /* a malformed byte is one byte */
	if (p[0] >= 0x80 && p[0] < 0xc0)
		return -1;
	for (int i = 1; i <= more; i++) {
		if ((p[i] & 0xc0) != 0x80) /* also the terminating NUL */
			return -1;
		c = c << 6 | (p[i] & 0x3f);
	}
	*s += more;
	return c;
}

size_t ho_utf8_put(unsigned long c, char *o)
{
	if (c < 0x80) {
		o[0] = (char)c;
		return 1;
	}
	if (c < 0x800) {
		o[0] = (char)(0xc0 | c >> 6), o[1] = (char)(0x80 | (c & 0x3f));
		return 2;
	}
	if (c < 0x10000) {
		o[0] = (char)(0xe0 | c >> 12), o[1] = (char)(0x80 | (c >> 6 & 0x3f));
		o[2] = (char)(0x80 | (c & 0x3f));
		return 3;
	}
	o[0] = (char)(0xf0 | c >> 18), o[1] = (char)(0x80 | (c >> 12 & 0x3f));
	o[2] = (char)(0x80 | (c >> 6 & 0x3f)), o[3] = (char)(0x80 | (c & 0x3f));
	return 4;
}
