// SPDX-License-Identifier: MIT
/*
 * The simulator's hand-off between devices that share memory: a consumer
 * on one reads its producer's tensor in place, but only once told the
 * producer is done (the link's latency) and only as fast as its core reads
 * a tensor the other just wrote (the profile's handoff_gbps: 3-8 us a hop
 * at 64-256 KiB measured here).  On a 10,000-Relu chain alternating between
 * two CPU devices every hop must cost exactly latency + bytes / bandwidth,
 * and the chain on one device nothing.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "heteroopt/graph.h"
#include "heteroopt/sched.h"
#include "test_util.h"

/* The chain's latency on box with the profile text given, one device or two. */
static double chain_latency(const struct ho_graph *g, const struct ho_box *box, const char *prof,
			    int alternate)
{
	struct ho_profile *pf = NULL;
	struct ho_problem *p = NULL;
	struct ho_error err = {0};
	double lat;

	T_CHECK(t_profile_text(prof, box, &pf, &err) == 0, "profile: %s", err.msg);
	T_REQUIRE(ho_problem_from_graph(g, box, pf, &p, &err) == 0);
	lat = t_sim_latency(p, alternate);
	ho_problem_free(p);
	ho_profile_free(pf);
	return lat;
}

int main(void)
{
	char model[4096];
	struct ho_graph *g = NULL;
	struct ho_box *box = NULL;
	struct ho_error err = {0};
	static const char none[] =
	    "{\"devices\": {}, \"links\": [{\"a\": \"cpu0\", \"b\": \"cpu1\", \"latency_us\": 3}]}",
			  slow[] = "{\"devices\": {}, \"links\": [{\"a\": \"cpu0\", \"b\": "
				   "\"cpu1\", \"latency_us\": 3, "
				   "\"handoff_gbps\": 0.004}]}",
			  bad[] = "{\"devices\": {}, \"links\": [{\"a\": \"cpu0\", \"b\": "
				  "\"cpu1\", \"handoff_gbps\": 0}]}";
	struct ho_profile *pf = NULL;

	if (t_model_path(model, sizeof(model), "chain10000_relu.onnx")) {
		t_model_skipped("chain10000_relu.onnx");
		return T_SKIP;
	}
	T_REQUIRE(ho_onnx_load(model, NULL, &g, &err) == 0 && ho_shape_infer(g, &err) == 0);
	T_REQUIRE(ho_box_load("boxes/this-machine-2cpu.json", &box, &err) == 0);

	double one = chain_latency(g, box, none, 0), two = chain_latency(g, box, none, 1),
	       one_h = chain_latency(g, box, slow, 0), two_h = chain_latency(g, box, slow, 1);
	/* 9,999 hops of a [1, 4] float tensor: 16 bytes at 4 MB/s is 4 us each */
	double want = 9999 * 16 / 0.004e9;

	T_CHECK(fabs(one_h - one) < 1e-12, "one device: %.9f s with handoff_gbps, %.9f without",
		one_h, one);
	T_CHECK(fabs((two_h - two) - want) < 1e-9 * want,
		"alternating: the hand-offs added %.9f s, bytes / bandwidth say %.9f", two_h - two,
		want);
	T_CHECK(two > one, "alternating with a 3 us hand-off: %.6f s, on one device %.6f s", two,
		one);
	printf("  chain of 10,000 Relus: one device %.3f ms; alternating %.3f ms, %.3f ms with "
	       "the hand-off's bandwidth (+%.3f ms, %u hops of 16 bytes at 4 MB/s)\n",
	       one * 1e3, two * 1e3, two_h * 1e3, (two_h - two) * 1e3, 9999);

	/* a zero bandwidth is refused by name */
	T_CHECK(t_profile_text(bad, box, &pf, &err) != 0 && strstr(err.msg, "handoff_gbps"),
		"handoff_gbps 0 accepted: %s", err.msg);
	ho_profile_free(pf);
	ho_box_free(box);
	ho_graph_free(g);
	return t_failures ? 1 : 0;
}
