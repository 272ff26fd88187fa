// SPDX-License-Identifier: MIT
/*
 * One cost model per kernel class, fitted to the sweep: time = fixed +
 * flops / rate + bytes / bandwidth.  It is linear in (fixed, 1/rate,
 * 1/bandwidth), so least squares on each point's relative error (rows
 * divided by the measured time: a 20 us kernel counts as much as a 20 ms
 * one) solves it.  Streaming classes fit no FLOP term: an element-wise
 * op's FLOPs and bytes grow together, and the fit would split the time
 * between them at random.  A term that comes out negative is dropped and the rest
 * refitted, so every term is a time, never a credit.  Dense classes count a
 * convolution's FLOPs over its output channels padded to the block its
 * kernels work in, the one that fits best (fit_at_block).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "heteroopt/box.h"
#include "heteroopt/probe.h"

/* Solve the k x k system a x = b (k <= 3) by Gaussian elimination; -1 if singular. */
static int fit_solve(double a[3][3], double b[3], int k, double x[3])
{
	for (int c = 0; c < k; c++) {
		int piv = c;

		for (int r = c + 1; r < k; r++)
			if (fabs(a[r][c]) > fabs(a[piv][c]))
				piv = r;
		if (fabs(a[piv][c]) < 1e-300)
			return -1;
		for (int j = 0; j < k; j++) {
			double t = a[c][j];

			a[c][j] = a[piv][j];
			a[piv][j] = t;
		}
		double t = b[c];

		b[c] = b[piv];
		b[piv] = t;
		for (int r = c + 1; r < k; r++) {
			double f = a[r][c] / a[c][c];

			for (int j = c; j < k; j++)
				a[r][j] -= f * a[c][j];
			b[r] -= f * b[c];
		}
	}
	for (int c = k - 1; c >= 0; c--) {
		double s = b[c];

		for (int j = c + 1; j < k; j++)
			s -= a[c][j] * x[j];
		x[c] = s / a[c][c];
	}
	return 0;
}

static double fit_feature(const struct ho_fit_point *p, int term, uint32_t block)
{
	return term == 0   ? 1
	       : term == 1 ? p->flops * ho_channel_pad(p->channels, block) *
				 ho_channel_pad(p->in_channels, block)
			   : p->bytes;
}

/*
 * The model at one block: FLOPs as the kernel does them, over output
 * channels padded to it (oneDNN on AVX-512 works in 16: a 3x3 convolution
 * of 96 to 24 channels took as long as to 32, 40 as long as 48).
 */
static int fit_at_block(const struct ho_fit_point *pts, uint32_t n, bool flops_term, uint32_t block,
			struct ho_kernel_model *out);

int ho_fit_kernel_model(const struct ho_fit_point *pts, uint32_t n, bool flops_term, uint32_t block,
			struct ho_kernel_model *out)
{
	static const uint32_t blocks[] = {1, 4, 8, 16, 32};
	struct ho_kernel_model m;
	int ret = fit_at_block(pts, n, flops_term, n >= 5 || !block ? 1 : block, out);

	/*
	 * A wider block must explain the points clearly better (a tenth less
	 * error), and with two points more than the terms it fits: three
	 * depthwise rows chose 32 from noise.  Fewer points keep the block given.
	 */
	for (size_t b = 1; !ret && flops_term && n >= 5 && b < sizeof(blocks) / sizeof(blocks[0]);
	     b++)
		if (!fit_at_block(pts, n, true, blocks[b], &m) &&
		    m.fit_error < 0.9 * out->fit_error)
			*out = m;
	return ret;
}

static int fit_at_block(const struct ho_fit_point *pts, uint32_t n, bool flops_term, uint32_t block,
			struct ho_kernel_model *out)
{
	bool on[3] = {true, false, false};
	double coef[3] = {0};

	memset(out, 0, sizeof(*out));
	if (!n)
		return -EINVAL;
	for (uint32_t i = 0; i < n; i++) {
		on[1] |= flops_term && pts[i].flops > 0;
		on[2] |= pts[i].bytes > 0;
	}
	for (int tries = 0; tries < 3; tries++) {
		double a[3][3] = {{0}}, b[3] = {0}, x[3] = {0};
		int idx[3], k = 0, neg = -1;

		for (int t = 0; t < 3; t++)
			if (on[t])
				idx[k++] = t;
		if (!k)
			return -EINVAL;
		for (uint32_t i = 0; i < n; i++) {
			double w = pts[i].seconds > 0 ? 1 / pts[i].seconds : 0;

			for (int r = 0; r < k; r++) {
				double fr = fit_feature(&pts[i], idx[r], block) * w;

				for (int c = 0; c < k; c++)
					a[r][c] += fr * fit_feature(&pts[i], idx[c], block) * w;
				b[r] += fr * (pts[i].seconds - pts[i].known_s) * w;
			}
		}
		if (fit_solve(a, b, k, x)) {
			/* too few distinct points: drop the last term */
			on[idx[k - 1]] = false;
			continue;
		}
		for (int r = 0; r < k; r++)
			if (x[r] < 0 && (neg < 0 || x[r] < x[neg]))
				neg = r;
		if (neg < 0) {
			memset(coef, 0, sizeof(coef));
			for (int r = 0; r < k; r++)
				coef[idx[r]] = x[r];
			break;
		}
		on[idx[neg]] = false;
	}
	out->fixed_s = coef[0];
	out->rate = coef[1] > 0 ? 1 / coef[1] : 0;
	out->bandwidth = coef[2] > 0 ? 1 / coef[2] : 0;
	out->block = block;
	out->points = n;
	for (uint32_t i = 0; i < n; i++) {
		double t = pts[i].known_s;

		for (int f = 0; f < 3; f++)
			t += coef[f] * fit_feature(&pts[i], f, block);
		out->fit_error += fabs(t - pts[i].seconds) / pts[i].seconds;
	}
	out->fit_error /= n;
	return 0;
}

double ho_kernel_model_time(const struct ho_kernel_model *m, double flops, double bytes,
			    double channels)
{
	return m->fixed_s +
	       (m->rate > 0 ? flops * ho_channel_pad(channels, m->block) / m->rate : 0) +
	       (m->bandwidth > 0 ? bytes / m->bandwidth : 0);
}

/*
 * The fit with the points whose curve rate (rate[i]; INFINITY: in the
 * caches) is below cut taken as known, their bytes at that rate; whether
 * the rate it finds is one at which exactly those points stream slower than
 * the class.
 */
static bool fit_with_known(const struct ho_fit_point *pts, const double *rate, uint32_t n,
			   bool flops_term, uint32_t block, double cut, struct ho_fit_point *v,
			   struct ho_kernel_model *out, int *ret)
{
	double lo = 0, hi = INFINITY;

	for (uint32_t i = 0; i < n; i++) {
		v[i] = pts[i];
		if (rate[i] < cut) {
			v[i].known_s = pts[i].bytes / rate[i];
			v[i].bytes = 0;
			lo = fmax(lo, rate[i]);
		} else {
			hi = fmin(hi, rate[i]);
		}
	}
	if ((*ret = ho_fit_kernel_model(v, n, flops_term, block, out)))
		return false;
	return out->bandwidth > 0 ? out->bandwidth >= lo && out->bandwidth <= hi : !(lo > 0);
}

/*
 * A point whose working set streams slower than the class's own rate (past
 * the caches) takes its bytes' time at the curve's rate: known, not fitted.
 * Which points those are depends on the rate the fit finds: each cut through
 * the points' curve rates is fitted (the first, below them all, is the plain
 * fit), and the best fit whose rate agrees with its cut is kept.  Fitted on
 * raw bytes, the rows past the caches pulled the element-wise rate down to
 * 112 GB/s, while a model's small Muls and Adds, in L2, ran at 200 (a 2-core
 * AMD EPYC), and a classifier of them ran at 0.85 of its prediction.
 */
int ho_fit_class_model(const struct ho_fit_point *pts, uint32_t n, bool flops_term, uint32_t block,
		       const struct json_t *curve, struct ho_kernel_model *out)
{
	struct ho_fit_point *v = malloc((n + 1) * sizeof(*v));
	double *rate = malloc((n + 1) * sizeof(double));
	struct ho_kernel_model m;
	bool found;
	int ret = v && rate ? 0 : -ENOMEM, cut_ret;

	/* no curve: every rate infinite, only the plain fit */
	for (uint32_t i = 0; !ret && i < n; i++)
		rate[i] = ho_profile_stream_bw(curve, pts[i].bytes, INFINITY);
	found = !ret && fit_with_known(pts, rate, n, flops_term, block, 0, v, out, &ret);
	/* a cut that does not fit is not a candidate, not a failure */
	for (uint32_t c = 0; !ret && c < n; c++)
		if (rate[c] < INFINITY &&
		    fit_with_known(pts, rate, n, flops_term, block, rate[c] * (1 + 1e-12), v, &m,
				   &cut_ret) &&
		    (!found || m.fit_error < out->fit_error)) {
			*out = m;
			found = true;
		}
	free(v);
	free(rate);
	return ret;
}

/*
 * beyond = share * kernels + per_node * nodes, rows divided by the run: a
 * model of 200 tiny nodes (much of its time between them) counts as much
 * as one of 50 large ones.  A term that comes out negative is dropped.
 */
int ho_fit_run_model(const struct ho_run_point *pts, uint32_t n, struct ho_run_model *out)
{
	double a[3][3] = {{0}}, b[3] = {0}, x[3] = {0}, kk = 0, ky = 0, mm = 0, my = 0;
	bool both;

	memset(out, 0, sizeof(*out));
	if (!n)
		return -EINVAL;
	for (uint32_t i = 0; i < n; i++) {
		double w = 1 / pts[i].run, k = pts[i].kernels * w, m = pts[i].nodes * w,
		       y = pts[i].beyond * w;

		kk += k * k;
		ky += k * y;
		mm += m * m;
		my += m * y;
		a[0][1] += k * m;
	}
	a[0][0] = kk;
	a[1][0] = a[0][1];
	a[1][1] = mm;
	b[0] = ky;
	b[1] = my;
	both = n >= 2 && !fit_solve(a, b, 2, x);
	if (both && x[0] >= 0 && x[1] >= 0) {
		out->share = x[0];
		out->per_node_s = x[1];
	} else if (!both || x[1] < 0) {
		out->share = kk > 0 ? fmax(0, ky / kk) : 0;
	} else {
		out->per_node_s = mm > 0 ? fmax(0, my / mm) : 0;
	}
	for (uint32_t i = 0; i < n; i++)
		out->fit_error += fabs(out->share * pts[i].kernels +
				       out->per_node_s * pts[i].nodes - pts[i].beyond) /
				  pts[i].run;
	out->fit_error /= n;
	return 0;
}
