// SPDX-License-Identifier: MIT
/*
 * npy_close A.npy B.npy [TOL]: in the QEMU guest, which has no Python, is B
 * A within TOL (default 1e-5) of A's largest magnitude, element by element?
 * Prints the largest difference; exit 0 if so, 1 if not, 2 if unreadable.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <heteroopt/npy.h>

#include "common.h"

int main(int argc, char **argv)
{
	struct ho_npy a = {0}, b = {0};
	struct ho_error err;
	double tol = argc > 3 ? atof(argv[3]) : 1e-5, big = 0, diff = 0;
	size_t n;

	if (argc < 3) {
		fprintf(stderr, "usage: npy_close A.npy B.npy [TOL]\n");
		return 2;
	}
	if (ho_npy_read(argv[1], &a, &err) || ho_npy_read(argv[2], &b, &err)) {
		fprintf(stderr, "npy_close: %s\n", err.msg);
		return 2;
	}
	if (strcmp(a.descr, "<f4") || strcmp(b.descr, "<f4") || a.nbytes != b.nbytes ||
	    a.ndim != b.ndim || memcmp(a.shape, b.shape, (size_t)a.ndim * sizeof(a.shape[0]))) {
		fprintf(stderr, "npy_close: %s and %s differ in type or shape\n", argv[1], argv[2]);
		return 1;
	}
	n = a.nbytes / sizeof(float);
	for (size_t i = 0; i < n; i++) {
		double x = ((const float *)a.data)[i], y = ((const float *)b.data)[i];

		big = fmax(big, fabs(x));
		diff = fmax(diff, isnan(y) ? INFINITY : fabs(x - y));
	}
	printf("npy_close: %zu values, largest |a| %.6g, largest difference %.3g (%.3g of it)\n", n,
	       big, diff, big > 0 ? diff / big : diff);
	ho_npy_free(&a);
	ho_npy_free(&b);
	return diff <= tol * big ? 0 : 1;
}
