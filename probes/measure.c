// SPDX-License-Identifier: MIT
/*
 * The probes' method: warm-up runs, then repeats; the median of what is left
 * after dropping samples beyond 3 median absolute deviations, and the spread
 * of those kept.  A measurement whose spread is wider than allowed is made
 * again, and the narrowest round kept; one that stays wide is flagged, not
 * trusted silently (a few 70-100 ms spikes in a 190 us history are enough
 * to move a plan).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "probe_priv.h"

static int probe_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double probe_quantile(const double *sorted, uint32_t n, double q)
{
	double at = q * (n - 1);
	uint32_t lo = (uint32_t)at;

	if (lo + 1 >= n)
		return sorted[n - 1];
	return sorted[lo] + (at - lo) * (sorted[lo + 1] - sorted[lo]);
}

double ho_probe_quantile(double *v, uint32_t n, double q)
{
	qsort(v, n, sizeof(*v), probe_cmp);
	return n ? probe_quantile(v, n, q) : 0;
}

void ho_probe_robust(double *v, uint32_t n, struct ho_probe_stat *out)
{
	double med, *dev;
	uint32_t kept = 0;

	memset(out, 0, sizeof(*out));
	if (!n)
		return;
	qsort(v, n, sizeof(*v), probe_cmp);
	med = probe_quantile(v, n, 0.5);
	dev = malloc(n * sizeof(*dev));
	if (dev) {
		double mad;

		for (uint32_t i = 0; i < n; i++)
			dev[i] = fabs(v[i] - med);
		qsort(dev, n, sizeof(*dev), probe_cmp);
		/* 1.4826 MAD estimates a normal sigma; a floor keeps identical samples */
		mad = fmax(1.4826 * probe_quantile(dev, n, 0.5), 1e-3 * med);
		free(dev);
		for (uint32_t i = 0; i < n; i++)
			if (fabs(v[i] - med) <= 3 * mad)
				v[kept++] = v[i];
	}
	if (!kept) /* out of memory: keep all */
		kept = n;
	out->kept = kept;
	out->dropped = n - kept;
	out->median = probe_quantile(v, kept, 0.5);
	out->min = v[0];
	out->max = v[kept - 1];
	out->spread =
	    out->median > 0
		? (probe_quantile(v, kept, 0.75) - probe_quantile(v, kept, 0.25)) / out->median
		: 0;
}

int ho_probe_measure(double (*once)(void *arg), void *arg, const struct ho_probe_method *m,
		     volatile sig_atomic_t *stop, struct ho_probe_stat *out)
{
	uint32_t cap = m->repeats * 64 + 1, rounds = m->rounds ? m->rounds : 1;
	double *v = malloc(cap * sizeof(*v));
	struct ho_probe_stat best = {0}, st;
	int ret = 0;

	if (!v)
		return -ENOMEM;
	for (uint32_t i = 0; i < m->warmup; i++)
		if (once(arg) < 0) {
			ret = -EIO;
			goto out;
		}
	for (uint32_t r = 0; r < rounds; r++) {
		double total = 0;
		uint32_t n = 0;

		/* at least repeats samples, more for short ones until min_seconds pass */
		while (n < m->repeats || (total < m->min_seconds && n < cap)) {
			double t;

			if (stop && *stop) {
				ret = -EINTR;
				goto out;
			}
			t = once(arg);
			if (t < 0) {
				ret = -EIO;
				goto out;
			}
			v[n++] = t;
			total += t;
		}
		ho_probe_robust(v, n, &st);
		st.rounds = r + 1;
		if (!r || st.spread < best.spread)
			best = st;
		best.rounds = r + 1;
		if (best.spread <= m->max_spread)
			break;
	}
	best.flagged = best.spread > m->max_spread;
	*out = best;
out:
	free(v);
	return ret;
}
