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
    {"<f4", 4, HO_DT_FLOAT},  {"<f8", 8, HO_DT_DOUBLE}, {"<f2", 2, HO_DT_FLOAT16},
    {"<i8", 8, HO_DT_INT64},  {"<i4", 4, HO_DT_INT32},	{"<i2", 2, HO_DT_INT16},
    {"|i1", 1, HO_DT_INT8},   {"<u8", 8, HO_DT_UINT64}, {"<u4", 4, HO_DT_UINT32},
    {"<u2", 2, HO_DT_UINT16}, {"|u1", 1, HO_DT_UINT8},	{"|b1", 1, HO_DT_BOOL},
};

int ho_npy_dtype(const char *descr)
{
	for (size_t i = 0; i < sizeof(npy_types) / sizeof(npy_types[0]); i++)
		if (!strcmp(descr, npy_types[i].descr))
			return npy_types[i].dtype;
	return HO_DT_UNDEFINED;
}

const char *ho_npy_descr(int dtype)
{
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
	ret = 0;
out:
	fclose(f);
	if (ret)
		ho_npy_free(out);
	return ret;
}

int ho_npy_write(const char *path, const char *descr, int ndim, const int64_t *shape,
		 const void *data, struct ho_error *err)
{
	char dict[1024], shp[600] = "";
	size_t count = 1, len, total, pre;
	uint32_t es = npy_type_size(descr);
	unsigned char hdr[12];
	int ret = 0;
	FILE *f;

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
	if (!ret && (fputc('\n', f) == EOF || fwrite(data, es, count, f) != count))
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
