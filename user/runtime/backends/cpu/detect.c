// SPDX-License-Identifier: MIT
/*
 * Detection post-processing: NonMaxSuppression, the selection shared with
 * shape inference (user/common/nms.c), which plans its output's extent from
 * the inputs' values; the data must select as many boxes at run time.
 */
#include <errno.h>
#include <string.h>

#include "cpu.h"

static int ho_run_nms(const struct ho_kernel *k)
{
	const struct ho_typed *t = &k->typed;
	struct ho_nms_args a = {
	    .boxes = t->in[0],
	    .scores = t->in[1],
	    .batches = t->in_shape[0].dim[0],
	    .classes = t->in_shape[1].dim[1],
	    .boxes_per_batch = t->in_shape[0].dim[1],
	    .max_per_class = t->in[2] ? ho_cpu_index(t->in[2], t->in_dt[2], 0) : 0,
	    .iou_threshold = t->in[3] ? *(const float *)t->in[3] : 0,
	    .score_threshold = t->in[4] ? *(const float *)t->in[4] : 0,
	    .has_score_threshold = t->in[4] != NULL,
	    .center_point_box = t->iparam[0],
	};
	int64_t want = t->out_shape.dim[0], got = ho_nms(&a, t->out, want);

	if (got < 0)
		return -ENOMEM;
	return got == want ? 0 : -ERANGE;
}

int ho_cpu_prep_nms(const struct ho_graph *g, const struct ho_node *n, void *const *buf,
		    struct ho_kernel *k, struct ho_error *err)
{
	struct ho_typed *t = &k->typed;
	const struct ho_tensor *y = &g->tensors[n->outputs[0]];

	for (uint32_t i = 0; i < 5; i++) {
		const struct ho_tensor *in = ho_cpu_in_t(g, n, i);
		bool ok = i == 2  ? !in || in->dtype == HO_DT_INT64 || in->dtype == HO_DT_INT32
			  : i < 2 ? in && in->dtype == HO_DT_FLOAT
				  : !in || in->dtype == HO_DT_FLOAT;

		if (!ok || (i >= 2 && in && ho_shape_numel(&in->shape) != 1))
			return ho_cpu_unsupported(err, n,
						  "needs float32 boxes, scores and thresholds, "
						  "an integer limit");
		t->in[i] = in ? buf[n->inputs[i]] : NULL;
		t->in_dt[i] = in ? in->dtype : 0;
		if (in)
			t->in_shape[i] = in->shape;
	}
	if (y->shape.rank != 2 || y->shape.dim[1] != 3 || y->dtype != HO_DT_INT64)
		return ho_cpu_unsupported(err, n, "writes [selected, 3] int64 only");
	k->kind = HO_K_LOOP;
	t->out = buf[n->outputs[0]];
	t->out_shape = y->shape;
	t->iparam[0] = ho_cpu_attr_i(n, "center_point_box", 0);
	t->run = ho_run_nms;
	return 0;
}
