// SPDX-License-Identifier: MIT
/*
 * Convolution's and pooling's window and auto_pad: how SAME_UPPER and
 * SAME_LOWER split the padding an axis needs, once for every backend's kernels.
 */
#include <string.h>

#include "common.h"
#include "heteroopt/opsem.h"

const char *ho_auto_pad(const struct ho_node *n)
{
	const struct ho_attr *a = ho_node_attr(n, "auto_pad");

	return a && a->type == HO_ATTR_STRING ? a->s : "NOTSET";
}

void ho_same_pads(const char *auto_pad, int64_t total, int64_t *pl, int64_t *pr)
{
	total = total > 0 ? total : 0;
	*pl = !strcmp(auto_pad, "SAME_UPPER") ? total / 2 : total - total / 2;
	*pr = total - *pl;
}

bool ho_window_of(const struct ho_node *n, const struct ho_tensor *x, const struct ho_tensor *y,
		  const int64_t *ks, struct ho_window *w)
{
	const char *ap = ho_auto_pad(n);

	if (!ho_node_attr_ints(n, "strides", w->st, 2, 1) ||
	    !ho_node_attr_ints(n, "pads", w->pd, 4, 0) ||
	    !ho_node_attr_ints(n, "dilations", w->dl, 2, 1))
		return false;
	for (int k = 0; k < 2; k++) {
		w->ks[k] = ks[k];
		if (!strcmp(ap, "SAME_UPPER") || !strcmp(ap, "SAME_LOWER"))
			ho_same_pads(ap,
				     (y->shape.dim[2 + k] - 1) * w->st[k] + (ks[k] - 1) * w->dl[k] +
					 1 - x->shape.dim[2 + k],
				     &w->pd[k], &w->pd[2 + k]);
	}
	return true;
}
