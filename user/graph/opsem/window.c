// SPDX-License-Identifier: MIT
/*
 * Convolution's and pooling's auto_pad: how SAME_UPPER and SAME_LOWER split
 * the padding an axis needs, once for every backend's kernels.
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
