// SPDX-License-Identifier: MIT
/* .npy reading and writing: see include/heteroopt/npy.h. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <heteroopt/npy.h>

#include "common.h"

/* numpy's names of the element types, and the ONNX type each is */
static const struct {
	const char *descr;
	uint32_t size;
	int dtype;
} npy_types[] = {
    {"<f4", 4, HO_DT_FLOAT},	 {"<f8", 8, HO_DT_DOUBLE},	 {"<f2", 2, HO_DT_FLOAT16},
    {"<i8", 8, HO_DT_INT64},	 {"<i4", 4, HO_DT_INT32},	 {"<i2", 2, HO_DT_INT16},
    {"|i1", 1, HO_DT_INT8},	 {"<u8", 8, HO_DT_UINT64},	 {"<u4", 4, HO_DT_UINT32},
    {"<u2", 2, HO_DT_UINT16},	 {"|u1", 1, HO_DT_UINT8},	 {"|b1", 1, HO_DT_BOOL},
    {"<c8", 8, HO_DT_COMPLEX64}, {"<c16", 16, HO_DT_COMPLEX128},
};

/*
 * Strings: numpy's '<Un' holds n UTF-32 code points per element, NUL-padded;
 * in memory they are a struct ho_npy's count pointers to UTF-8 (one block,
 * the strings after the pointers), as the runtime's string tensors are.
 */
static uint32_t npy_unicode_width(const char *descr)
{
	char *end;
	long n;

	if (strncmp(descr, "<U", 2) || !descr[2])
		return 0;
	n = strtol(descr + 2, &end, 10);
	return *end || n < 1 || n > 1 << 20 ? 0 : (uint32_t)n;
}

int ho_npy_dtype(const char *descr)
{
	if (npy_unicode_width(descr))
		return HO_DT_STRING;
	for (size_t i = 0; i < sizeof(npy_types) / sizeof(npy_types[0]); i++)
		if (!strcmp(descr, npy_types[i].descr))
			return npy_types[i].dtype;
	return HO_DT_UNDEFINED;
}

const char *ho_npy_descr(int dtype)
{
	if (dtype == HO_DT_STRING)
		return "<U"; /* its width from the longest string, when written */
	for (size_t i = 0; i < sizeof(npy_types) / sizeof(npy_types[0]); i++)
		if (npy_types[i].dtype == dtype)
			return npy_types[i].descr;
	return NULL;
}

static uint32_t npy_type_size(const char *descr)
{
	for (size_t i = 0; i < sizeof(npy_types) / sizeof(npy_types[0]); i++)
		if (!strcmp(descr, npy_types[i].descr))
			return npy_types[i].size;
	return 0;
}

/* The value text after 'key': in a Python dict literal, or NULL. */
static const char *npy_key(const char *h, const char *key)
{
	char pat[32];
	const char *p;

	snprintf(pat, sizeof(pat), "'%s'", key);
	p = strstr(h, pat);
	if (!p)
		return NULL;
	p += strlen(pat);
	while (*p == ' ')
		p++;
	if (*p != ':')
		return NULL;
	p++;
	while (*p == ' ')
		p++;
	return p;
}

int ho_npy_parse_header(const void *buf, size_t len, struct ho_npy *out, struct ho_error *err)
{
	const unsigned char *b = buf;
	char h[4096];
	size_t hlen, off;
	const char *p;
	int major;

	memset(out, 0, sizeof(*out));
	if (len < 10 || memcmp(b, "\x93NUMPY", 6))
		return ho_err(err, -EINVAL, "not a .npy file (no \\x93NUMPY magic)");
	major = b[6];
	if (major == 1) {
		hlen = (size_t)b[8] | (size_t)b[9] << 8;
		off = 10;
	} else if (major == 2 || major == 3) {
		if (len < 12)
			return ho_err(err, -EINVAL, "truncated .npy header");
		hlen = (size_t)b[8] | (size_t)b[9] << 8 | (size_t)b[10] << 16 | (size_t)b[11] << 24;
		off = 12;
	} else {
		return ho_err(err, -EINVAL, ".npy version %d.%d is not supported", major, b[7]);
	}
	if (hlen >= sizeof(h) || off + hlen > len)
		return ho_err(err, -EINVAL, ".npy header length %zu is out of range", hlen);
	memcpy(h, b + off, hlen);
	h[hlen] = '\0';

	p = npy_key(h, "descr");
	if (!p || *p != '\'' || !strchr(p + 1, '\'') || strchr(p + 1, '\'') - (p + 1) >= 8)
		return ho_err(err, -EINVAL, ".npy header has no usable 'descr'");
	memcpy(out->descr, p + 1, (size_t)(strchr(p + 1, '\'') - (p + 1)));
	/* Byte order '=' is native, which is little-endian on every box we run. */
	if (out->descr[0] == '=')
		out->descr[0] = '<';
	out->elem_size = npy_unicode_width(out->descr) * 4;
	if (!out->elem_size)
		out->elem_size = npy_type_size(out->descr);
	if (!out->elem_size)
		return ho_err(err, -EINVAL,
			      ".npy dtype '%s' is not supported (little-endian numbers only)",
			      out->descr);
	p = npy_key(h, "fortran_order");
	if (!p || (strncmp(p, "False", 5) && strncmp(p, "True", 4)))
		return ho_err(err, -EINVAL, ".npy header has no 'fortran_order'");
	if (!strncmp(p, "True", 4))
		return ho_err(err, -EINVAL, ".npy array is in Fortran order; save it C-contiguous");
	p = npy_key(h, "shape");
	if (!p || *p != '(')
		return ho_err(err, -EINVAL, ".npy header has no 'shape'");
	p++;
	out->count = 1;
	for (;;) {
		char *end;
		long long d;

		while (*p == ' ' || *p == ',')
			p++;
		if (*p == ')')
			break;
		d = strtoll(p, &end, 10);
		if (end == p || d < 0)
			return ho_err(err, -EINVAL, ".npy shape is malformed");
		if (out->ndim == HO_NPY_MAX_DIMS)
			return ho_err(err, -EINVAL, ".npy array has more than %d dimensions",
				      HO_NPY_MAX_DIMS);
		out->shape[out->ndim++] = d;
		if (d && out->count > SIZE_MAX / (size_t)d / out->elem_size)
			return ho_err(err, -EOVERFLOW, ".npy shape overflows");
		out->count *= (size_t)d;
		p = end;
	}
	out->nbytes = out->count * out->elem_size;
	return (int)(off + hlen);
}

/* UTF-32 code points (n of them, NUL-padded) to UTF-8 at o; the bytes written, -1: not Unicode. */
static int npy_utf8(const unsigned char *u, uint32_t n, char *o)
{
	int len = 0;

	for (uint32_t i = 0; i < n; i++) {
		uint32_t c = u[4 * i] | u[4 * i + 1] << 8 | u[4 * i + 2] << 16 |
			     (uint32_t)u[4 * i + 3] << 24;

		if (!c)
			break;
		if (c > 0x10ffff || (c >= 0xd800 && c < 0xe000))
			return -1;
		len += (int)ho_utf8_put(c, o + len);
	}
	o[len] = '\0';
	return len;
}

/* The next code point of UTF-8 text at *s (advanced); U+FFFD for a malformed byte. */
static uint32_t npy_next(const char **s)
{
	long c = ho_utf8_next(s);

	return c < 0 ? 0xfffd : (uint32_t)c;
}

/* Replace n's UTF-32 data by pointers to UTF-8 copies, one block. */
static int npy_strings_in(struct ho_npy *n, const char *path, struct ho_error *err)
{
	uint32_t w = n->elem_size / 4;
	size_t each = (size_t)w * 4 + 1; /* at most 4 UTF-8 bytes per code point */
	char **p, *s;

	if (n->count > (SIZE_MAX - 64) / (each + sizeof(char *)))
		return ho_err(err, -EOVERFLOW, "%s: too many strings", path);
	p = malloc(n->count * (sizeof(char *) + each) + 1);
	if (!p)
		return ho_err(err, -ENOMEM, "%s: out of memory", path);
	s = (char *)(p + n->count);
	for (size_t i = 0; i < n->count; i++) {
		int len = npy_utf8((const unsigned char *)n->data + i * n->elem_size, w, s);

		if (len < 0) {
			free(p);
			return ho_err(err, -EINVAL, "%s: string %zu holds an invalid code point",
				      path, i);
		}
		p[i] = s;
		s += len + 1;
	}
	free(n->data);
	n->data = p;
	n->elem_size = sizeof(char *);
	n->nbytes = n->count * sizeof(char *);
	return 0;
}

int ho_npy_read(const char *path, struct ho_npy *out, struct ho_error *err)
{
	unsigned char head[4096 + 16];
	struct stat st;
	size_t got;
	int off, ret;
	FILE *f;

	memset(out, 0, sizeof(*out));
	f = fopen(path, "rb");
	if (!f)
		return ho_err(err, -errno, "%s: %s", path, strerror(errno));
	if (fstat(fileno(f), &st)) {
		ret = ho_err(err, -errno, "%s: %s", path, strerror(errno));
		goto out;
	}
	got = fread(head, 1, sizeof(head), f);
	off = ho_npy_parse_header(head, got, out, err);
	if (off < 0) {
		ret = off;
		if (err) {
			char msg[sizeof(err->msg)];

			snprintf(msg, sizeof(msg), "%.200s: %.300s", path, err->msg);
			memcpy(err->msg, msg, sizeof(msg));
		}
		goto out;
	}
	if ((size_t)st.st_size != (size_t)off + out->nbytes) {
		ret = ho_err(err, -EINVAL, "%s: %lld bytes of data, the header says %zu", path,
			     (long long)st.st_size - off, out->nbytes);
		goto out;
	}
	out->data = aligned_alloc(64, (out->nbytes + 63) / 64 * 64 + 64);
	if (!out->data) {
		ret = ho_err(err, -ENOMEM, "%s: out of memory for %zu bytes", path, out->nbytes);
		goto out;
	}
	if (fseek(f, off, SEEK_SET) || fread(out->data, 1, out->nbytes, f) != out->nbytes) {
		ret = ho_err(err, -EIO, "%s: short read", path);
		goto out;
	}
	ret = npy_unicode_width(out->descr) ? npy_strings_in(out, path, err) : 0;
out:
	fclose(f);
	if (ret)
		ho_npy_free(out);
	return ret;
}

int ho_npy_write(const char *path, const char *descr, int ndim, const int64_t *shape,
		 const void *data, struct ho_error *err)
{
	char dict[1024], shp[600] = "", wide[16];
	size_t count = 1, len, total, pre;
	uint32_t es = npy_type_size(descr);
	bool strings = !strcmp(descr, "<U");
	unsigned char hdr[12];
	int ret = 0;
	FILE *f;

	if (strings) { /* as wide as the longest string's code points */
		uint32_t w = 1;

		for (int i = 0; i < ndim; i++)
			count *= shape[i] > 0 ? (size_t)shape[i] : 0;
		for (size_t i = 0; i < count; i++) {
			const char *s = ((const char *const *)data)[i];
			uint32_t k = 0;

			while (*s && npy_next(&s))
				k++;
			w = k > w ? k : w;
		}
		snprintf(wide, sizeof(wide), "<U%u", w);
		descr = wide;
		es = 4 * w;
		count = 1;
	}
	if (!es)
		return ho_err(err, -EINVAL, "%s: dtype '%s' is not supported", path, descr);
	if (ndim < 0 || ndim > HO_NPY_MAX_DIMS)
		return ho_err(err, -EINVAL, "%s: %d dimensions", path, ndim);
	for (int i = 0; i < ndim; i++) {
		char d[32];

		if (shape[i] < 0)
			return ho_err(err, -EINVAL, "%s: negative extent", path);
		snprintf(d, sizeof(d), "%lld,%s", (long long)shape[i],
			 ndim > 1 && i + 1 < ndim ? " " : "");
		strcat(shp, d);
		count *= (size_t)shape[i];
	}
	if (ndim > 1)
		shp[strlen(shp) - 1] = '\0'; /* "2, 3," -> "2, 3" */
	len = (size_t)snprintf(dict, sizeof(dict),
			       "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }", descr,
			       shp);
	/* Pad with spaces and a newline so the data starts 64-byte aligned. */
	pre = len + 1 + 10 > 65535 ? 12 : 10;
	total = (pre + len + 1 + 63) / 64 * 64;
	f = fopen(path, "wb");
	if (!f)
		return ho_err(err, -errno, "%s: %s", path, strerror(errno));
	memcpy(hdr, "\x93NUMPY", 6);
	hdr[6] = pre == 10 ? 1 : 2;
	hdr[7] = 0;
	{
		size_t h = total - pre;

		hdr[8] = (unsigned char)h;
		hdr[9] = (unsigned char)(h >> 8);
		hdr[10] = (unsigned char)(h >> 16);
		hdr[11] = (unsigned char)(h >> 24);
	}
	if (fwrite(hdr, 1, pre, f) != pre || fwrite(dict, 1, len, f) != len)
		ret = -EIO;
	for (size_t i = pre + len; !ret && i + 1 < total; i++)
		if (fputc(' ', f) == EOF)
			ret = -EIO;
	if (!ret && fputc('\n', f) == EOF)
		ret = -EIO;
	for (size_t i = 0; strings && !ret && i < count; i++) {
		const char *s = ((const char *const *)data)[i];
		uint32_t k = 0;

		for (; *s && !ret; k++) {
			uint32_t c = npy_next(&s);
			unsigned char b[4] = {c & 0xff, c >> 8 & 0xff, c >> 16 & 0xff, c >> 24};

			ret = fwrite(b, 1, 4, f) == 4 ? 0 : -EIO;
		}
		for (; k < es / 4 && !ret; k++)
			ret = fwrite("\0\0\0\0", 1, 4, f) == 4 ? 0 : -EIO;
	}
	if (!strings && !ret && fwrite(data, es, count, f) != count)
		ret = -EIO;
	if (fclose(f) && !ret)
		ret = -EIO;
	return ret ? ho_err(err, ret, "%s: write failed", path) : 0;
}

void ho_npy_free(struct ho_npy *n)
{
	free(n->data);
	n->data = NULL;
}
