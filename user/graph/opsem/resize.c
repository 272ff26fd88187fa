// SPDX-License-Identifier: MIT
/*
 * Resize: where an output index reads on one axis, as ONNX's reference
 * computes it, for every backend's kernel (the cpu backend's loops, the
 * OpenCL backend's tables).  Nearest maps by the rounded output extent, the
 * resampling modes by the unrounded one (in * scale): they differ for
 * align_corners and pytorch_half_pixel when the scale does not divide.
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "common.h"
#include "heteroopt/opsem.h"

double ho_resize_coord(const char *mode, int64_t x, int64_t in, int64_t out, double scale)
{
	if (!strcmp(mode, "half_pixel"))
		return (x + 0.5) / scale - 0.5;
	if (!strcmp(mode, "pytorch_half_pixel"))
		return out > 1 ? (x + 0.5) / scale - 0.5 : 0;
	if (!strcmp(mode, "align_corners"))
		return out > 1 ? (double)x * (in - 1) / (out - 1) : 0;
	if (!strcmp(mode, "tf_half_pixel_for_nn"))
		return (x + 0.5) / scale;
	return x / scale; /* asymmetric */
}

int64_t ho_resize_nearest(const char *mode, double v)
{
	double f = floor(v);

	if (!strcmp(mode, "floor"))
		return (int64_t)f;
	if (!strcmp(mode, "ceil"))
		return (int64_t)ceil(v);
	if (v - f == 0.5)
		return (int64_t)(!strcmp(mode, "round_prefer_ceil") ? f + 1 : f);
	return (int64_t)floor(v + 0.5); /* round_prefer_floor, the default */
}

void ho_resample_coeffs(int n, double r, double a, double *c)
{
	if (n == 1) {
		c[0] = 1;
	} else if (n == 2) {
		c[0] = 1 - r;
		c[1] = r;
	} else {
		double s = 1 - r;

		c[0] = ((a * (r + 1) - 5 * a) * (r + 1) + 8 * a) * (r + 1) - 4 * a;
		c[1] = ((a + 2) * r - (a + 3)) * r * r + 1;
		c[2] = ((a + 2) * s - (a + 3)) * s * s + 1;
		c[3] = ((a * (s + 1) - 5 * a) * (s + 1) + 8 * a) * (s + 1) - 4 * a;
	}
}

double ho_resample_coord(const char *mode, int64_t x, int64_t in, double scale, double roi0,
			 double roi1)
{
	double out = scale * (double)in; /* the reference's output width, unrounded */

	if (!strcmp(mode, "tf_crop_and_resize")) {
		double v = out == 1 ? (roi1 - roi0) * (double)(in - 1) / 2
				    : (double)x * (roi1 - roi0) * (double)(in - 1) / (out - 1);

		v += roi0 * (double)(in - 1);
		return v < 0 || v > (double)(in - 1) ? NAN : v;
	}
	if (!strcmp(mode, "align_corners"))
		return out == 1 ? 0 : (double)x * (double)(in - 1) / (out - 1);
	if (!strcmp(mode, "pytorch_half_pixel"))
		return out == 1 ? -0.5 : ((double)x + 0.5) / scale - 0.5;
	return ho_resize_coord(mode, x, in, (int64_t)out, scale);
}

/* A string attribute of node n, or def. */
static const char *ho_attr_s(const struct ho_node *n, const char *name, const char *def)
{
	const struct ho_attr *a = ho_node_attr(n, name);

	return a && a->type == HO_ATTR_STRING ? a->s : def;
}

int ho_resize_taps2d(const struct ho_node *n, const int64_t in[2], const int64_t out[2],
		     const double scale[2], int *ix, float *wt)
{
	bool old = !strcmp(n->op_type, "Upsample") || n->opset < 11;
	const char *mode = ho_attr_s(n, "mode", "nearest"),
		   *coord = old ? "asymmetric"
				: ho_attr_s(n, "coordinate_transformation_mode", "half_pixel"),
		   *nearest = old ? "floor" : ho_attr_s(n, "nearest_mode", "round_prefer_floor");
	bool linear = !strcmp(mode, "linear");
	int64_t m = out[0] + out[1];

	if ((!linear && strcmp(mode, "nearest")) || !strcmp(coord, "tf_crop_and_resize"))
		return -EOPNOTSUPP;
	for (int k = 0; k < 2; k++) {
		double sc = scale[k] > 0 ? scale[k] : (double)out[k] / (double)in[k];
		int64_t at = k ? out[0] : 0;

		for (int64_t o = 0; o < out[k]; o++) {
			int64_t t0, t1;
			double w = 0;

			if (linear) {
				double v = ho_resample_coord(coord, o, in[k], sc, 0, 1), cf[2];

				t0 = (int64_t)ceil(v) - 1; /* the reference's left tap */
				ho_resample_coeffs(2, v - (double)t0, 0, cf);
				t1 = t0 + 1;
				w = cf[1];
			} else {
				t0 = t1 = ho_resize_nearest(
				    nearest, ho_resize_coord(coord, o, in[k], out[k], sc));
			}
			ix[at + o] = (int)(t0 < 0 ? 0 : t0 >= in[k] ? in[k] - 1 : t0);
			ix[m + at + o] = (int)(t1 < 0 ? 0 : t1 >= in[k] ? in[k] - 1 : t1);
			wt[at + o] = (float)w;
		}
	}
	return 0;
}
