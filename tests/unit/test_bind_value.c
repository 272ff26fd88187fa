// SPDX-License-Identifier: MIT
/*
 * A plan made for an input's values (ho_graph_bind_value): the ONNX test of
 * a Reshape whose shape is an input plans the Reshape itself, nothing left
 * for the run to decide, gives the recorded output, and refuses a run with
 * other values for it.  (Unbound, the run decides it: test_deferred_shapes.)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heteroopt/graph.h"
#include "heteroopt/runtime.h"
#include "test_util.h"

#define DIR "/usr/share/libonnx-testdata/data/node/test_reshape_reordered_all_dims"

int main(void)
{
	struct ho_const data, shape, want;
	struct ho_graph *g = NULL;
	struct ho_rt *rt = NULL;
	struct ho_error err = {0};
	struct ho_rt_opts o = {.threads = 1};
	const struct ho_tensor *yt;
	const float *y;

	if (access(DIR "/model.onnx", R_OK)) {
		printf("skipped: no ONNX backend test data (libonnx-testdata)\n");
		return T_SKIP;
	}
	T_REQUIRE(ho_onnx_tensor_read(DIR "/test_data_set_0/input_0.pb", &data, NULL, 0, &err) ==
		  0);
	T_REQUIRE(ho_onnx_tensor_read(DIR "/test_data_set_0/input_1.pb", &shape, NULL, 0, &err) ==
		  0);
	T_REQUIRE(ho_onnx_tensor_read(DIR "/test_data_set_0/output_0.pb", &want, NULL, 0, &err) ==
		  0);

	/* bound by value: it plans, runs and gives the recorded output */
	T_REQUIRE(ho_onnx_load(DIR "/model.onnx", NULL, &g, &err) == 0);
	T_REQUIRE(ho_graph_bind_input(g, "data", data.shape.dim, data.shape.rank, &err) == 0);
	T_CHECK(ho_graph_bind_value(g, "shape", HO_DT_FLOAT, shape.shape.dim, shape.shape.rank,
				    shape.data, shape.len, &err) != 0 &&
		    strstr(err.msg, "int64"),
		"values of another type were bound: %s", err.msg);
	T_REQUIRE(ho_graph_bind_value(g, "shape", shape.dtype, shape.shape.dim, shape.shape.rank,
				      shape.data, shape.len, &err) == 0);
	T_REQUIRE(ho_shape_infer(g, &err) == 0);
	T_REQUIRE(ho_rt_new(g, &o, &rt, &err) == 0);
	T_CHECK(ho_rt_last_report(rt)->deferred == 0, "%u nodes left to the run",
		ho_rt_last_report(rt)->deferred);
	T_REQUIRE(ho_rt_set_input(rt, "data", data.shape.dim, data.shape.rank, data.data, &err) ==
		  0);
	T_REQUIRE(ho_rt_set_input_data(rt, "shape", shape.dtype, shape.shape.dim, shape.shape.rank,
				       shape.data, &err) == 0);
	T_REQUIRE(ho_rt_run(rt, &err) == 0);
	y = ho_rt_output(rt, 0, &yt);
	T_REQUIRE(y && yt->shape.rank == want.shape.rank);
	T_CHECK(!memcmp(y, want.data, want.len), "the output differs from the recorded one");

	/* other values for it: refused, the plan was made for these */
	((int64_t *)shape.data)[0] ^= 1;
	T_CHECK(ho_rt_set_input_data(rt, "shape", shape.dtype, shape.shape.dim, shape.shape.rank,
				     shape.data, &err) != 0 &&
		    strstr(err.msg, "plan again"),
		"other values accepted: %s", err.msg);
	ho_rt_free(rt);
	ho_graph_free(g);
	free((void *)data.data);
	free((void *)shape.data);
	free((void *)want.data);
	return t_failures ? 1 : 0;
}
