// SPDX-License-Identifier: MIT
/*
 * The cpu backend's element-wise loops over whole vectors give what their
 * operator defines on every lane and in the tail: HardSigmoid (alpha 0.3,
 * beta 0.4) over 37 values (two vectors of 16 and 5 more) holding both
 * clamps' edges, infinities and NaNs, alone on cpu0, against the formula.
 */
#include <math.h>
#include <stdio.h>

#include "../probes/probe_priv.h"
#include "heteroopt/graph.h"
#include "heteroopt/runtime.h"
#include "test_util.h"

#define N 37

int main(void)
{
	const float alpha = 0.3f, beta = 0.4f;
	const float edge[] = {-4.0f / 3, -1.0f,	 0.0f,	   2.0f,      7.0f / 3, 3.0f,
			      1e30f,	 -1e30f, INFINITY, -INFINITY, NAN,	-NAN};
	struct ho_pb *pb = ho_pb_new(1);
	struct ho_graph *g = NULL;
	struct ho_rt *rt = NULL;
	struct ho_error err = {0};
	struct ho_rt_opts o = {.threads = 1};
	const struct ho_tensor *yt;
	float x[N];
	const float *y;
	int node;

	for (int i = 0; i < N; i++) /* the edges in the first vector and again in the tail */
		x[i] = i < 12 ? edge[i] : i >= 32 ? edge[(i - 32) * 2 + 1] : (float)(i - 22) * 0.7f;
	x[36] = NAN;
	T_REQUIRE(pb && ho_pb_input(pb, "x", 1, (int64_t[]){N}) == 0);
	T_REQUIRE((node = ho_pb_node(pb, "HardSigmoid", "x", "y")) >= 0);
	T_REQUIRE(ho_pb_attr_float(pb, node, "alpha", alpha) == 0 &&
		  ho_pb_attr_float(pb, node, "beta", beta) == 0 && ho_pb_output(pb, "y") == 0);
	T_REQUIRE(ho_pb_load(pb, &g, &err) == 0 && ho_shape_infer(g, &err) == 0);
	T_REQUIRE(ho_rt_new(g, &o, &rt, &err) == 0);
	T_REQUIRE(ho_rt_set_input(rt, "x", (int64_t[]){N}, 1, x, &err) == 0);
	T_REQUIRE(ho_rt_run(rt, &err) == 0);
	T_REQUIRE((y = ho_rt_output(rt, 0, &yt)) != NULL);
	for (int i = 0; i < N; i++) {
		double want = fmax(0.0, fmin(1.0, (double)alpha * x[i] + beta));

		if (isnan(x[i]))
			T_CHECK(isnan(y[i]), "lane %d: HardSigmoid(NaN) = %g, not NaN", i, y[i]);
		else
			T_CHECK(fabs(y[i] - want) <= 1e-6,
				"lane %d: HardSigmoid(%g) = %.9g, not %.9g", i, x[i], y[i], want);
	}
	ho_rt_free(rt);
	ho_graph_free(g);
	ho_pb_free(pb);
	return t_failures ? 1 : 0;
}
