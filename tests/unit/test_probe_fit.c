// SPDX-License-Identifier: MIT
/*
 * The probes' arithmetic: the robust median drops outliers and keeps the
 * spread of the rest; the class fit recovers a known model from points it
 * made, drops a term that would come out negative, and fits no FLOP term
 * for streaming classes, and fits a streaming class past the caches as it is
 * priced there; the run model splits what runs take beyond their
 * kernels into a share of them and a time per node.
 */
#include <math.h>
#include <stdio.h>

#include <jansson.h>

#include "heteroopt/box.h"
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

		pts[i] = (struct ho_fit_point){f, b, noiseless(f, b), 0, 0, 0};
	}
	T_REQUIRE(ho_fit_kernel_model(pts, 8, true, 1, &m) == 0);
	T_CHECK(fabs(m.fixed_s - 3e-6) < 1e-9 && fabs(m.rate / 100e9 - 1) < 1e-6 &&
		    fabs(m.bandwidth / 20e9 - 1) < 1e-6,
		"recovered %g s + flops / %g + bytes / %g", m.fixed_s, m.rate, m.bandwidth);
	T_CHECK(m.fit_error < 1e-9, "fit error %g", m.fit_error);
	T_CHECK(fabs(ho_kernel_model_time(&m, 5e8, 1e6, 0) - noiseless(5e8, 1e6)) < 1e-12,
		"a shape never fitted is predicted by the model");

	/* times that fall as bytes grow: a bandwidth term would be negative */
	for (int i = 0; i < 8; i++)
		pts[i] = (struct ho_fit_point){
		    1e6 * (i + 1), 1e5 * (8 - i), 1e-6 + 1e-5 * (i + 1), 0, 0, 0};
	T_REQUIRE(ho_fit_kernel_model(pts, 8, true, 1, &m) == 0);
	T_CHECK(m.bandwidth == 0 && m.rate > 0 && m.fixed_s >= 0, "negative term dropped: %g %g %g",
		m.fixed_s, m.rate, m.bandwidth);

	/* streaming: no FLOP term even where FLOPs are given */
	for (int i = 0; i < 8; i++)
		pts[i] = (struct ho_fit_point){
		    1e4 * (1 << i), 8e4 * (1 << i), 1e-6 + 8e4 * (1 << i) / 40e9, 0, 0, 0};
	T_REQUIRE(ho_fit_kernel_model(pts, 8, false, 1, &m) == 0);
	T_CHECK(m.rate == 0 && fabs(m.bandwidth / 40e9 - 1) < 1e-6, "streaming: rate %g bw %g",
		m.rate, m.bandwidth);
	T_CHECK(ho_fit_kernel_model(pts, 0, false, 1, &m) < 0, "no points, no model");
}

/*
 * A class past the caches: points made by the model the cost model prices
 * with (its own rate up to the curve's peak, the curve's past it where
 * slower).  The class fit recovers the rate in the caches, with or without a
 * FLOP term; a plain fit of the same points comes out at less than two
 * thirds of it.
 */
static void stream(void)
{
	json_t *curve = json_loads("[{\"bytes\": 8192, \"gbps\": 30},"
				   " {\"bytes\": 524288, \"gbps\": 200},"
				   " {\"bytes\": 2097152, \"gbps\": 120},"
				   " {\"bytes\": 33554432, \"gbps\": 70},"
				   " {\"bytes\": 134217728, \"gbps\": 40}]",
				   0, NULL);
	static const double bytes[] = {8e3, 1.3e5, 5e5, 2e6, 8e6, 1.2e7, 3.3e7, 1.3e8};
	struct ho_fit_point pts[8];
	struct ho_kernel_model m;

	T_REQUIRE(curve != NULL);
	for (int i = 0; i < 8; i++)
		pts[i] = (struct ho_fit_point){
		    0, bytes[i], 0.25e-6 + bytes[i] / ho_profile_stream_bw(curve, bytes[i], 250e9),
		    0, 0,	 0};
	T_REQUIRE(ho_fit_class_model(pts, 8, false, 1, curve, &m) == 0);
	T_CHECK(fabs(m.bandwidth / 250e9 - 1) < 1e-3 && fabs(m.fixed_s / 0.25e-6 - 1) < 1e-2,
		"stream fit: %g s + bytes / %g", m.fixed_s, m.bandwidth);
	T_CHECK(m.fit_error < 1e-3, "stream fit error %g", m.fit_error);
	T_CHECK(pts[7].bytes == 1.3e8, "the points are left as given");
	/* a dense class: FLOPs at 100 GFLOP/s on top */
	for (int i = 0; i < 8; i++) {
		pts[i].flops = 1e5 * (double)(1 << i) * (i % 3 + 1);
		pts[i].seconds += pts[i].flops / 100e9;
	}
	T_REQUIRE(ho_fit_class_model(pts, 8, true, 1, curve, &m) == 0);
	T_CHECK(fabs(m.bandwidth / 250e9 - 1) < 1e-3 && fabs(m.rate / 100e9 - 1) < 1e-3,
		"dense fit: %g s + flops / %g + bytes / %g", m.fixed_s, m.rate, m.bandwidth);
	for (int i = 0; i < 8; i++) {
		pts[i].seconds -= pts[i].flops / 100e9;
		pts[i].flops = 0;
	}
	T_REQUIRE(ho_fit_kernel_model(pts, 8, false, 1, &m) == 0);
	T_CHECK(m.bandwidth < 250e9 * 2 / 3, "a plain fit is pulled down to %g", m.bandwidth);
	json_decref(curve);
}

/*
 * Convolutions whose kernel works on output channels in blocks of 16, as
 * oneDNN's on AVX-512 (measured here: 96 to 24 channels took as long as to
 * 32): the fit finds the block and the rate; with every count a multiple
 * of 16 nothing tells a block, and the plain model (block 1) stays.
 */
static void block(void)
{
	static const double ch[8] = {16, 24, 40, 64, 18, 96, 42, 120};
	struct ho_fit_point pts[8];
	struct ho_kernel_model m;

	for (int i = 0; i < 8; i++) {
		double f = 2e7 * ch[i] * (1 + i % 3), b = 1e5 * (8 - i);

		pts[i] = (struct ho_fit_point){
		    f, b, noiseless(f * ho_channel_pad(ch[i], 16), b), ch[i], 0, 0};
	}
	T_REQUIRE(ho_fit_kernel_model(pts, 8, true, 1, &m) == 0);
	T_CHECK(m.block == 16 && fabs(m.rate / 100e9 - 1) < 1e-6 && m.fit_error < 1e-9,
		"block %u, rate %g, fit error %g", m.block, m.rate, m.fit_error);
	T_CHECK(fabs(ho_kernel_model_time(&m, 4e8, 1e6, 20) - noiseless(4e8 * 32 / 20, 1e6)) <
		    1e-12,
		"20 channels cost 32's");
	for (int i = 0; i < 8; i++) {
		pts[i].channels = 16 * (i + 1);
		pts[i].seconds = noiseless(pts[i].flops, pts[i].bytes);
	}
	T_REQUIRE(ho_fit_kernel_model(pts, 8, true, 1, &m) == 0);
	T_CHECK(m.block == 1 && m.fit_error < 1e-9, "multiples of 16: block %u", m.block);

	/*
	 * Two points (a quick probe's transposed convolutions) cannot tell a block:
	 * the one given holds, and 24 channels cost 32's; without it, 20 cost 20's.
	 */
	for (int i = 0; i < 2; i++) {
		pts[i].channels = 32 * (i + 1);
		pts[i].seconds = noiseless(pts[i].flops, pts[i].bytes);
	}
	T_REQUIRE(ho_fit_kernel_model(pts, 2, true, 16, &m) == 0);
	T_CHECK(m.block == 16 && m.rate > 0, "two points keep the block given: %u", m.block);
	T_CHECK(fabs(ho_kernel_model_time(&m, 3e8, 0, 24) / ho_kernel_model_time(&m, 4e8, 0, 32) -
		     1) < 1e-9,
		"24 channels cost 32's");
	T_REQUIRE(ho_fit_kernel_model(pts, 2, true, 1, &m) == 0);
	T_CHECK(m.block == 1, "no block given: %u", m.block);

	/* transposed convolutions block their input channels too: 24 of them cost 32's */
	static const double in[8] = {24, 64, 40, 16, 8, 48, 24, 72};

	for (int i = 0; i < 8; i++) {
		pts[i].channels = 16 * (i % 3 + 1);
		pts[i].in_channels = in[i];
		pts[i].seconds = noiseless(pts[i].flops * ho_channel_pad(in[i], 16), pts[i].bytes);
	}
	T_REQUIRE(ho_fit_kernel_model(pts, 8, true, 1, &m) == 0);
	T_CHECK(m.block == 16 && fabs(m.rate / 100e9 - 1) < 1e-6 && m.fit_error < 1e-9,
		"input channels: block %u, rate %g, fit error %g", m.block, m.rate, m.fit_error);
}

/* Runs of the nine models probed here: kernels and nodes as measured, the rest made. */
static void run_model(void)
{
	static const double kernels[9] = {18.2e-3, 44.2e-3, 4.68e-3, 8.68e-3, 4.0e-3,
					  6.02e-3, 55.4e-3, 11.9e-3, 0.88e-3};
	static const double nodes[9] = {49, 122, 100, 239, 65, 132, 330, 403, 215};
	struct ho_run_point pts[9];
	struct ho_run_model rm;

	for (int i = 0; i < 9; i++) {
		double beyond = 0.03 * kernels[i] + 0.5e-6 * nodes[i];

		pts[i] = (struct ho_run_point){kernels[i] + beyond, kernels[i], beyond, nodes[i]};
	}
	T_REQUIRE(ho_fit_run_model(pts, 9, &rm) == 0);
	T_CHECK(fabs(rm.share - 0.03) < 1e-9 && fabs(rm.per_node_s - 0.5e-6) < 1e-13,
		"recovered share %g, per node %g s", rm.share, rm.per_node_s);
	T_CHECK(rm.fit_error < 1e-9, "fit error %g", rm.fit_error);

	/* runs no slower than their kernels with many nodes, slower with few: no credit per node */
	for (int i = 0; i < 9; i++) {
		pts[i].beyond = 0.05 * kernels[i] - 1e-6 * nodes[i];
		pts[i].run = kernels[i] + fabs(pts[i].beyond);
	}
	T_REQUIRE(ho_fit_run_model(pts, 9, &rm) == 0);
	T_CHECK(rm.per_node_s == 0 && rm.share > 0, "negative term dropped: %g %g", rm.share,
		rm.per_node_s);

	/* one run: only its share */
	T_REQUIRE(ho_fit_run_model(pts, 1, &rm) == 0);
	T_CHECK(rm.per_node_s == 0 && fabs(rm.share - pts[0].beyond / pts[0].kernels) < 1e-12,
		"one run: share %g", rm.share);
	T_CHECK(ho_fit_run_model(pts, 0, &rm) < 0, "no runs, no model");
}

int main(void)
{
	robust();
	fit();
	stream();
	block();
	run_model();
	return t_failures ? 1 : 0;
}
