// SPDX-License-Identifier: MIT
/*
 * Slice: which elements each axis keeps, worked out once for shape inference
 * and the kernels (ONNX's clamping: starts and ends past either end, INT64_MAX
 * among them, are legal, and going back clamps to [0, dim - 1]).
 */
#include <errno.h>
#include <string.h>

#include "common.h"
#include "heteroopt/opsem.h"

/* Larger than any extent: clamping to it first keeps the arithmetic in range. */
#define HO_SLICE_FAR (INT64_C(1) << 40)

static int64_t clamp64(int64_t v, int64_t lo, int64_t hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

int ho_slice_resolve(int rank, const int64_t *dim, size_t n, const int64_t *starts,
		     const int64_t *ends, const int64_t *axes, const int64_t *steps,
		     struct ho_slice *out, struct ho_error *err)
{
	for (int a = 0; a < rank; a++) {
		out->first[a] = 0;
		out->step[a] = 1;
		out->dim[a] = dim[a];
	}
	for (size_t k = 0; k < n; k++) {
		int64_t ax = axes ? axes[k] : (int64_t)k, st = steps ? steps[k] : 1, d, s, e;

		ax += ax < 0 ? rank : 0;
		if (ax < 0 || ax >= rank)
			return ho_err(err, -EINVAL, "axis %lld is outside rank %d",
				      (long long)(axes ? axes[k] : (int64_t)k), rank);
		if (st == 0)
			return ho_err(err, -EINVAL, "step is zero");
		d = dim[ax];
		out->step[ax] = st == INT64_MIN ? -INT64_MAX : st;
		if (d < 0) {
			out->dim[ax] = HO_DIM_UNKNOWN;
			continue;
		}
		s = clamp64(starts[k], -HO_SLICE_FAR - 1, HO_SLICE_FAR + 1);
		e = clamp64(ends[k], -HO_SLICE_FAR - 2, HO_SLICE_FAR + 1);
		s += s < 0 ? d : 0;
		e += e < 0 ? d : 0;
		st = out->step[ax];
		if (st > 0) {
			s = clamp64(s, 0, d);
			e = clamp64(e, 0, d);
			out->dim[ax] = e > s ? (e - s - 1) / st + 1 : 0;
		} else {
			s = clamp64(s, 0, d - 1);
			e = clamp64(e, -1, d - 1);
			out->dim[ax] = s > e ? (s - e - 1) / (-st) + 1 : 0;
		}
		out->first[ax] = s;
	}
	return 0;
}

int ho_slice_node(const struct ho_graph *g, const struct ho_node *n, const void *const data[5],
		  struct ho_slice *out, struct ho_error *err)
{
	static const char *const names[3] = {"starts", "ends", "axes"};
	const struct ho_tensor *x = ho_node_input(g, n, 0);
	int64_t v[4][HO_MAX_RANK]; /* starts, ends, axes, steps */
	int cnt[4] = {0, 0, -1, -1};

	if (!x || x->shape.rank < 0 || x->shape.rank > HO_MAX_RANK)
		return ho_err(err, -EINVAL, "needs an input of known rank");
	if (n->opset < 10 || n->n_inputs == 1) { /* starts, ends and axes were attributes */
		for (int i = 0; i < 3; i++) {
			const struct ho_attr *at = ho_node_attr(n, names[i]);

			if (!at)
				continue;
			if (at->type != HO_ATTR_INTS || at->n > HO_MAX_RANK)
				return ho_err(err, -EINVAL, "%s must be at most %d integers",
					      names[i], HO_MAX_RANK);
			cnt[i] = (int)at->n;
			memcpy(v[i], at->ints, at->n * sizeof(int64_t));
		}
	} else {
		for (uint32_t i = 0; i < 4; i++) {
			const struct ho_tensor *t = ho_node_input(g, n, i + 1);

			if (i >= 2 && !t)
				continue;
			if (!t || !(t->flags & HO_T_KNOWN) ||
			    (cnt[i] = ho_tensor_ints(t, data[i + 1], v[i], HO_MAX_RANK)) < 0)
				return ho_err(err, -EINVAL,
					      "needs constant starts, ends, axes and steps");
		}
	}
	if (cnt[1] != cnt[0] || (cnt[2] >= 0 && cnt[2] != cnt[0]) ||
	    (cnt[3] >= 0 && cnt[3] != cnt[0]))
		return ho_err(err, -EINVAL, "needs starts, ends, axes and steps of one length");
	return ho_slice_resolve(x->shape.rank, x->shape.dim, (size_t)cnt[0], v[0], v[1],
				cnt[2] >= 0 ? v[2] : NULL, cnt[3] >= 0 ? v[3] : NULL, out, err);
}
