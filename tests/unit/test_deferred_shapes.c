// SPDX-License-Identifier: MIT
/*
 * Shapes only a run decides (user/runtime/tail.c), on ONNX's own backend
 * tests, nothing bound by value: a Reshape whose shape is an input, a
 * NonZero and a NonMaxSuppression plan, run and give the recorded outputs;
 * the same values again reuse the tail's plan, other values plan it anew
 * (refused where they contradict a shape the model declares); a Loop whose output no value before
 * it decides fails its run with one line naming it.  Priced at their bounds (the scheduler's
 * shapes): NonMaxSuppression's every box, or the user's bound, which a run then keeps to.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heteroopt/graph.h"
#include "heteroopt/runtime.h"
#include "test_util.h"

#define DATA "/usr/share/libonnx-testdata/data/node/"
#define MAX_IO 8

struct case_io {
	struct ho_graph *g;
	struct ho_rt *rt;
	struct ho_const in[MAX_IO], want[MAX_IO];
	char name[MAX_IO][128];
	uint32_t n_in;
};

/* Load test dir's model and first data set, bind the inputs' shapes only, plan. */
static int case_open(struct case_io *c, const char *dir, struct ho_error *err)
{
	struct ho_rt_opts o = {.threads = 1};
	char path[512];
	int ret;

	memset(c, 0, sizeof(*c));
	snprintf(path, sizeof(path), DATA "%s/model.onnx", dir);
	if ((ret = ho_onnx_load(path, NULL, &c->g, err)))
		return ret;
	c->n_in = c->g->n_inputs;
	if (c->n_in > MAX_IO || c->g->n_outputs > MAX_IO)
		return -E2BIG;
	for (uint32_t k = 0; k < c->n_in; k++) {
		snprintf(path, sizeof(path), DATA "%s/test_data_set_0/input_%u.pb", dir, k);
		if ((ret = ho_onnx_tensor_read(path, &c->in[k], NULL, 0, err)))
			return ret;
		snprintf(c->name[k], sizeof(c->name[k]), "%s", c->g->tensors[c->g->inputs[k]].name);
		if ((ret = ho_graph_bind_input(c->g, c->name[k], c->in[k].shape.dim,
					       c->in[k].shape.rank, err)))
			return ret;
	}
	for (uint32_t k = 0; k < c->g->n_outputs; k++) {
		snprintf(path, sizeof(path), DATA "%s/test_data_set_0/output_%u.pb", dir, k);
		if ((ret = ho_onnx_tensor_read(path, &c->want[k], NULL, 0, err)))
			return ret;
	}
	if ((ret = ho_shape_infer(c->g, err)))
		return ret;
	return ho_rt_new(c->g, &o, &c->rt, err);
}

static int case_run(struct case_io *c, struct ho_error *err)
{
	for (uint32_t k = 0; k < c->n_in; k++) {
		int ret =
		    ho_rt_set_input_data(c->rt, c->name[k], c->in[k].dtype, c->in[k].shape.dim,
					 c->in[k].shape.rank, c->in[k].data, err);

		if (ret)
			return ret;
	}
	return ho_rt_run(c->rt, err);
}

/* Output k is the recorded one, shape and bytes. */
static bool case_recorded(const struct case_io *c, uint32_t k)
{
	const struct ho_tensor *t;
	const void *p = ho_rt_output_data(c->rt, k, &t);

	return p && ho_shape_same(&t->shape, &c->want[k].shape) && t->bytes == c->want[k].len &&
	       !memcmp(p, c->want[k].data, c->want[k].len);
}

static void case_close(struct case_io *c)
{
	ho_rt_free(c->rt);
	ho_graph_free(c->g);
	for (uint32_t k = 0; k < MAX_IO; k++) {
		free((void *)c->in[k].data);
		free((void *)c->want[k].data);
	}
}

static void reshape_by_input(void)
{
	struct ho_error err = {0};
	struct case_io c;
	const struct ho_rt_report *r;
	int64_t *shape, saved[3];

	T_REQUIRE(case_open(&c, "test_reshape_reordered_all_dims", &err) == 0);
	r = ho_rt_last_report(c.rt);
	T_CHECK(r->deferred == 1, "%u nodes left to the run, wanted the Reshape", r->deferred);
	T_REQUIRE(case_run(&c, &err) == 0);
	T_CHECK(case_recorded(&c, 0), "the Reshape's output differs from the recorded one");
	T_REQUIRE(case_run(&c, &err) == 0);
	T_CHECK(r->deferred_plans == 1, "the same values planned the tail %u times",
		r->deferred_plans);

	/* the shape reversed: the model declares the output [4, 2, 3]: refused, naming it */
	shape = (int64_t *)c.in[1].data;
	memcpy(saved, shape, sizeof(saved));
	for (int64_t i = 0, n = c.in[1].shape.dim[0]; i < n / 2; i++) {
		int64_t v = shape[i];

		shape[i] = shape[n - 1 - i];
		shape[n - 1 - i] = v;
	}
	T_CHECK(case_run(&c, &err) != 0 && strstr(err.msg, "'reshaped'"),
		"a shape against the model's declaration: %s", err.msg);
	/* the same shape spelt otherwise (-1 for the last extent): planned again */
	memcpy(shape, saved, sizeof(saved));
	shape[2] = -1;
	T_CHECK(case_run(&c, &err) == 0, "the shape with -1: %s", err.msg);
	T_CHECK(r->deferred_plans == 2, "the tail planned %u times, wanted 2", r->deferred_plans);
	T_CHECK(case_recorded(&c, 0), "the Reshape to [4, 2, -1] differs from the recorded one");
	case_close(&c);
}

static void nonzero(void)
{
	struct ho_error err = {0};
	struct case_io c;
	const struct ho_tensor *t;
	const int64_t *y;
	uint8_t *cond;

	T_REQUIRE(case_open(&c, "test_nonzero_example", &err) == 0);
	T_REQUIRE(case_run(&c, &err) == 0);
	T_CHECK(case_recorded(&c, 0), "NonZero's output differs from the recorded one");
	T_REQUIRE(c.in[0].len == 4 && c.in[0].shape.rank == 2);
	/* the model declares [2, 3]: three others true, their indices in row-major order */
	cond = (uint8_t *)c.in[0].data;
	memcpy(cond, (const uint8_t[]){1, 1, 0, 1}, 4);
	T_CHECK(case_run(&c, &err) == 0, "other values: %s", err.msg);
	y = ho_rt_output_data(c.rt, 0, &t);
	T_CHECK(y && t->shape.dim[1] == 3 &&
		    !memcmp(y, (const int64_t[]){0, 0, 1, 0, 1, 1}, 6 * sizeof(int64_t)),
		"NonZero of [[1, 1], [0, 1]] is not [[0, 0, 1], [0, 1, 1]]");
	/* four true: against the declared [2, 3], refused naming the tensor */
	memset(cond, 1, 4);
	T_CHECK(case_run(&c, &err) != 0 && strstr(err.msg, "'result'"),
		"four indices against the declared three: %s", err.msg);
	case_close(&c);
}

static void nms(void)
{
	struct ho_error err = {0};
	struct case_io c;

	T_REQUIRE(case_open(&c, "test_nonmaxsuppression_suppress_by_IOU_and_scores", &err) == 0);
	T_REQUIRE(case_run(&c, &err) == 0);
	T_CHECK(case_recorded(&c, 0), "NonMaxSuppression's output differs from the recorded one");
	case_close(&c);
}

static void bounds(void)
{
	struct ho_extent_bound user = {"selected_indices", 4}, input = {"boxes", 4},
			       one = {"selected_indices", 1};
	struct ho_rt_opts o = {.threads = 1, .bounds = &one, .n_bounds = 1};
	const struct ho_tensor *t;
	struct ho_error err = {0};
	struct case_io c;
	int32_t id;

	/* its limit per class an input: at most every box of every batch and class, 1 x 1 x 6 */
	T_REQUIRE(case_open(&c, "test_nonmaxsuppression_limit_output_size", &err) == 0);
	id = ho_graph_find_tensor(c.g, "selected_indices");
	T_REQUIRE(id >= 0);
	t = &c.g->tensors[id];
	T_CHECK(ho_shape_numel(&t->shape) < 0, "the selection's count known before the run");
	T_CHECK(ho_graph_infer_bounds(c.g, NULL, 0, &err) == 1, "bounds: %s", err.msg);
	T_CHECK(t->shape.rank == 2 && t->shape.dim[0] == 6 && t->shape.dim[1] == 3 &&
		    (t->flags & HO_T_AT_BOUND) && !(t->flags & HO_T_USER_BOUND),
		"NMS over 6 boxes bounded at [%" PRId64 ", %" PRId64 "], not [6, 3]",
		t->shape.dim[0], t->shape.dim[1]);
	T_CHECK(c.g->nodes[t->producer].flags & HO_N_RUN_DECIDES, "the NMS not marked as waiting");
	T_CHECK(ho_graph_infer_bounds(c.g, &user, 1, &err) == 1 && t->shape.dim[0] == 4 &&
		    (t->flags & HO_T_USER_BOUND),
		"the user's bound of 4 gave %" PRId64 ": %s", t->shape.dim[0], err.msg);
	T_CHECK(ho_graph_infer_bounds(c.g, &input, 1, &err) < 0 &&
		    strstr(err.msg, "'boxes'") == NULL &&
		    strstr(err.msg, "boxes: its shape does not wait"),
		"a bound on an input taken: %s", err.msg);
	case_close(&c);
	/* two boxes kept, the bound one: the run fails naming both */
	T_REQUIRE(case_open(&c, "test_nonmaxsuppression_suppress_by_IOU_and_scores", &err) == 0);
	ho_rt_free(c.rt);
	T_REQUIRE(ho_rt_new(c.g, &o, &c.rt, &err) == 0);
	T_CHECK(case_run(&c, &err) != 0 &&
		    strstr(err.msg, "tensor 'selected_indices': 2 along axis 0, past its bound 1"),
		"two kept against a bound of one: %s", err.msg);
	one.max = 2;
	T_CHECK(case_run(&c, &err) == 0 && case_recorded(&c, 0), "within its bound: %s", err.msg);
	case_close(&c);
}

static void undecided(void)
{
	struct ho_error err = {0};
	struct case_io c;

	/* its scan output's length no value before the Loop decides */
	T_REQUIRE(case_open(&c, "test_loop11", &err) == 0);
	T_CHECK(case_run(&c, &err) != 0 && strstr(err.msg, "Loop_0") && !strchr(err.msg, '\n'),
		"the run did not name the Loop: %s", err.msg);
	case_close(&c);
}

int main(void)
{
	if (access(DATA "test_nonzero_example/model.onnx", R_OK)) {
		printf("skipped: no ONNX backend test data (libonnx-testdata)\n");
		return T_SKIP;
	}
	reshape_by_input();
	nonzero();
	nms();
	bounds();
	undecided();
	return t_failures ? 1 : 0;
}
