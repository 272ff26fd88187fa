// SPDX-License-Identifier: MIT
/*
 * .npy against numpy itself (Debian's /usr/bin/python3): files numpy writes
 * are read with the right dtype, shape and bytes; files we write numpy loads
 * back equal; what we do not support (Fortran order, big-endian, objects)
 * and broken files are refused with a message, never misread.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <heteroopt/npy.h>

#include "test_util.h"

static char dir[] = "/tmp/ho-npy-XXXXXX";

static void py(const char *code)
{
	char cmd[4096];

	snprintf(cmd, sizeof(cmd), "cd %s && /usr/bin/python3 -c \"import numpy as np\n%s\"", dir,
		 code);
	T_REQUIRE(system(cmd) == 0);
}

static void path(char *buf, const char *name)
{
	snprintf(buf, 256, "%s/%s", dir, name);
}

static void expect_refused(const char *name, const char *needle)
{
	struct ho_error err = {0};
	struct ho_npy n;
	char p[256];

	path(p, name);
	T_REQUIRE(ho_npy_read(p, &n, &err) < 0);
	if (!strstr(err.msg, needle)) {
		fprintf(stderr, "FAIL: %s: message '%s' lacks '%s'\n", name, err.msg, needle);
		exit(1);
	}
	T_REQUIRE(n.data == NULL);
	printf("refused %-12s %s\n", name, err.msg);
}

int main(void)
{
	struct ho_error err = {0};
	struct ho_npy n;
	char p[256];

	if (access("/usr/bin/python3", X_OK) ||
	    system("/usr/bin/python3 -c 'import numpy' 2>/dev/null"))
		return printf("skipped: numpy for /usr/bin/python3 not installed\n"), T_SKIP;
	T_REQUIRE(mkdtemp(dir));
	py("x = np.arange(2*3*4*5, dtype=np.float32).reshape(2, 3, 4, 5) / 7\n"
	   "np.save('f4.npy', x)\n"
	   "np.save('i8.npy', np.array([[-1, 2**40], [3, -4]], dtype=np.int64))\n"
	   "np.save('u1.npy', np.arange(10, dtype=np.uint8))\n"
	   "np.save('b1.npy', np.array([True, False, True]))\n"
	   "np.save('scalar.npy', np.float64(2.5))\n"
	   "np.save('empty.npy', np.zeros((0, 3), np.float32))\n"
	   "np.save('fortran.npy', np.asfortranarray(np.ones((2, 3), np.float32)))\n"
	   "np.save('bigend.npy', np.ones(3, dtype='>f4'))\n"
	   "np.save('object.npy', np.array([1, 'a'], dtype=object), allow_pickle=True)\n"
	   "open('trunc.npy', 'wb').write(open('f4.npy', 'rb').read()[:200])\n"
	   "open('magic.npy', 'wb').write(b'PK' + b'0' * 100)\n"
	   "d = open('f4.npy', 'rb').read(); open('hlen.npy', 'wb').write(d[:8] + bytes([255, "
	   "255]) + d[10:])\n"
	   "open('extra.npy', 'wb').write(open('u1.npy', 'rb').read() + b'x')\n"
	   "np.save('c8.npy', np.array([1 + 2j, -3.5j], np.complex64))\n"
	   "np.save('str.npy', np.array([['ab', ''], ['\u00e9t\u00e9', '\U0001f600z']]))\n"
	   "d = bytearray(open('str.npy', 'rb').read()); d[-4:] = b'\\x00\\xd8\\x00\\x00'\n"
	   "open('surrogate.npy', 'wb').write(d)\n");

	path(p, "f4.npy");
	T_REQUIRE(ho_npy_read(p, &n, &err) == 0);
	T_REQUIRE(!strcmp(n.descr, "<f4") && n.ndim == 4 && n.shape[0] == 2 && n.shape[3] == 5 &&
		  n.count == 120 && n.nbytes == 480);
	for (int i = 0; i < 120; i++)
		T_REQUIRE(((float *)n.data)[i] == (float)i / 7);
	/* Written back, numpy must see the same array. */
	path(p, "ours_f4.npy");
	T_REQUIRE(ho_npy_write(p, n.descr, n.ndim, n.shape, n.data, &err) == 0);
	ho_npy_free(&n);
	py("a = np.load('f4.npy'); b = np.load('ours_f4.npy')\n"
	   "assert a.dtype == b.dtype and a.shape == b.shape and (a == b).all()");

	path(p, "i8.npy");
	T_REQUIRE(ho_npy_read(p, &n, &err) == 0);
	T_REQUIRE(n.ndim == 2 && ((int64_t *)n.data)[1] == 1ll << 40 &&
		  ((int64_t *)n.data)[3] == -4);
	ho_npy_free(&n);
	path(p, "b1.npy");
	T_REQUIRE(ho_npy_read(p, &n, &err) == 0);
	T_REQUIRE(!strcmp(n.descr, "|b1") && n.count == 3 && ((unsigned char *)n.data)[1] == 0);
	ho_npy_free(&n);
	path(p, "scalar.npy");
	T_REQUIRE(ho_npy_read(p, &n, &err) == 0);
	T_REQUIRE(n.ndim == 0 && n.count == 1 && *(double *)n.data == 2.5);
	path(p, "ours_scalar.npy");
	T_REQUIRE(ho_npy_write(p, n.descr, 0, n.shape, n.data, &err) == 0);
	ho_npy_free(&n);
	path(p, "empty.npy");
	T_REQUIRE(ho_npy_read(p, &n, &err) == 0);
	T_REQUIRE(n.ndim == 2 && n.count == 0);
	ho_npy_free(&n);
	{
		uint8_t v[10];
		int64_t shape[1] = {10};

		for (int i = 0; i < 10; i++)
			v[i] = (uint8_t)(i * 3);
		path(p, "ours_u1.npy");
		T_REQUIRE(ho_npy_write(p, "|u1", 1, shape, v, &err) == 0);
	}
	py("assert np.load('ours_scalar.npy') == 2.5 and np.load('ours_scalar.npy').shape == ()\n"
	   "u = np.load('ours_u1.npy'); assert u.shape == (10,) and list(u) == [i * 3 for i in "
	   "range(10)]");

	path(p, "c8.npy");
	T_REQUIRE(ho_npy_read(p, &n, &err) == 0);
	T_REQUIRE(ho_npy_dtype(n.descr) == HO_DT_COMPLEX64 && n.count == 2 &&
		  ((float *)n.data)[1] == 2 && ((float *)n.data)[3] == -3.5f);
	ho_npy_free(&n);
	/* Strings: UTF-32 on disk, pointers to UTF-8 in memory; written back, numpy's again. */
	path(p, "str.npy");
	T_REQUIRE(ho_npy_read(p, &n, &err) == 0);
	T_REQUIRE(ho_npy_dtype(n.descr) == HO_DT_STRING && n.count == 4 &&
		  n.nbytes == 4 * sizeof(char *));
	T_REQUIRE(!strcmp(((char **)n.data)[0], "ab") && !strcmp(((char **)n.data)[1], "") &&
		  !strcmp(((char **)n.data)[2], "\xc3\xa9t\xc3\xa9") &&
		  !strcmp(((char **)n.data)[3], "\xf0\x9f\x98\x80z"));
	path(p, "ours_str.npy");
	T_REQUIRE(ho_npy_write(p, ho_npy_descr(HO_DT_STRING), n.ndim, n.shape, n.data, &err) == 0);
	ho_npy_free(&n);
	py("a = np.load('str.npy'); b = np.load('ours_str.npy')\n"
	   "assert a.dtype == b.dtype and a.shape == b.shape and (a == b).all(), (a, b)");
	expect_refused("surrogate.npy", "invalid code point");
	expect_refused("fortran.npy", "Fortran order");
	expect_refused("bigend.npy", "not supported");
	expect_refused("object.npy", "not supported");
	expect_refused("trunc.npy", "bytes of data");
	expect_refused("magic.npy", "not a .npy file");
	expect_refused("hlen.npy", "header length");
	expect_refused("extra.npy", "bytes of data");
	expect_refused("missing.npy", "No such file");
	{
		int64_t shape[1] = {1};

		path(p, "bad.npy");
		T_REQUIRE(ho_npy_write(p, ">f4", 1, shape, "", &err) == -EINVAL);
	}
	{
		char cmd[300];

		snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
		T_REQUIRE(system(cmd) == 0);
	}
	printf("test_npy: ok\n");
	return t_failures ? 1 : 0;
}
