// SPDX-License-Identifier: MIT
/*
 * The probes' arithmetic: the robust median drops outliers and keeps the
 * spread of the rest; the class fit recovers a known model from points it
 * made, drops a term that would come out negative, and fits no FLOP term
 * for streaming classes.
 */
#include <math.h>
#include <stdio.h>

#include "heteroopt/probe.h"
#include "test_util.h"

static void robust(void)
{
	/* a 190 us history with two spikes of 70 and 100 ms (StarPU's issue 50) */
	double v[12] = {190e-6, 191e-6, 189e-6, 70e-3,	192e-6, 190e-6,
			188e-6, 100e-3, 191e-6, 190e-6, 189e-6, 190e-6};
	struct ho_probe_stat st;

	ho_probe_robust(v, 12, &st);
	T_CHECK(st.dropped == 2 && st.kept == 10, "dropped %u kept %u", st.dropped, st.kept);
	T_CHECK(fabs(st.median - 190e-6) < 0.6e-6, "median %g", st.median);
	T_CHECK(st.max < 200e-6 && st.spread < 0.02, "max %g spread %g", st.max, st.spread);
}

static double noiseless(double f, double b)
{
	return 3e-6 + f / 100e9 + b / 20e9;
}

static void fit(void)
{
	struct ho_fit_point pts[8];
	struct ho_kernel_model m;

	for (int i = 0; i < 8; i++) {
		double f = 1e6 * (1 << i) * (i % 3 + 1), b = 4e4 * (1 << (7 - i));

		pts[i] = (struct ho_fit_point){f, b, noiseless(f, b)};
	}
	T_REQUIRE(ho_fit_kernel_model(pts, 8, true, &m) == 0);
	T_CHECK(fabs(m.fixed_s - 3e-6) < 1e-9 && fabs(m.rate / 100e9 - 1) < 1e-6 &&
		    fabs(m.bandwidth / 20e9 - 1) < 1e-6,
		"recovered %g s + flops / %g + bytes / %g", m.fixed_s, m.rate, m.bandwidth);
	T_CHECK(m.fit_error < 1e-9, "fit error %g", m.fit_error);
	T_CHECK(fabs(ho_kernel_model_time(&m, 5e8, 1e6) - noiseless(5e8, 1e6)) < 1e-12,
		"a shape never fitted is predicted by the model");

	/* times that fall as bytes grow: a bandwidth term would be negative */
	for (int i = 0; i < 8; i++)
		pts[i] = (struct ho_fit_point){1e6 * (i + 1), 1e5 * (8 - i), 1e-6 + 1e-5 * (i + 1)};
	T_REQUIRE(ho_fit_kernel_model(pts, 8, true, &m) == 0);
	T_CHECK(m.bandwidth == 0 && m.rate > 0 && m.fixed_s >= 0, "negative term dropped: %g %g %g",
		m.fixed_s, m.rate, m.bandwidth);

	/* streaming: no FLOP term even where FLOPs are given */
	for (int i = 0; i < 8; i++)
		pts[i] = (struct ho_fit_point){1e4 * (1 << i), 8e4 * (1 << i),
					       1e-6 + 8e4 * (1 << i) / 40e9};
	T_REQUIRE(ho_fit_kernel_model(pts, 8, false, &m) == 0);
	T_CHECK(m.rate == 0 && fabs(m.bandwidth / 40e9 - 1) < 1e-6, "streaming: rate %g bw %g",
		m.rate, m.bandwidth);
	T_CHECK(ho_fit_kernel_model(pts, 0, false, &m) < 0, "no points, no model");
}

int main(void)
{
	robust();
	fit();
	return t_failures ? 1 : 0;
}
