// SPDX-License-Identifier: MIT
/* Pooling: max, average and their global forms (oneDNN). */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cpu.h"

int ho_cpu_prep_pool(struct ho_backend *c, const struct ho_graph *g, const struct ho_node *n,
		     void *const *buf, struct ho_kernel *k, struct ho_error *err)
{
	const struct ho_tensor *x = ho_cpu_in_t(g, n, 0), *y = &g->tensors[n->outputs[0]];
	bool global = !strncmp(n->op_type, "Global", 6), is_max = strstr(n->op_type, "Max") != NULL;
	int64_t ks[3], st[3], dl[3], pads[6];
	int sp = x ? x->shape.rank - 2 : 0; /* spatial axes: 1, 2 or 3 */
	dnnl_dims_t kernel, strides, dil, pl, pr;
	dnnl_memory_desc_t xm, ym;
	dnnl_pooling_v2_desc_t d;
	dnnl_alg_kind_t alg;
	const char *ap = ho_cpu_auto_pad(n);

	if (!x || sp < 1 || sp > 3 || x->dtype != HO_DT_FLOAT)
		return ho_cpu_unsupported(err, n, "pools float32 1-D, 2-D and 3-D tensors only");
	if (!global && (!ho_cpu_attr_ints(n, "kernel_shape", ks, (size_t)sp, 1) ||
			!ho_cpu_attr_ints(n, "strides", st, (size_t)sp, 1) ||
			!ho_cpu_attr_ints(n, "dilations", dl, (size_t)sp, 1) ||
			!ho_cpu_attr_ints(n, "pads", pads, 2 * (size_t)sp, 0)))
		return ho_cpu_unsupported(err, n,
					  "needs kernel_shape/strides/dilations of one value and "
					  "pads of two per spatial axis");
	for (int i = 0; i < sp; i++) {
		int64_t in = x->shape.dim[2 + i], out = y->shape.dim[2 + i], total;

		if (global) {
			ks[i] = in;
			st[i] = 1;
			dl[i] = 1;
			pads[i] = pads[sp + i] = 0;
		}
		kernel[i] = ks[i];
		strides[i] = st[i];
		dil[i] = dl[i] - 1;
		total = (out - 1) * st[i] + (ks[i] - 1) * dl[i] + 1 - in;
		if (!strcmp(ap, "SAME_UPPER") || !strcmp(ap, "SAME_LOWER")) {
			ho_cpu_same_pads(ap, total, &pl[i], &pr[i]);
			continue;
		}
		pl[i] = strcmp(ap, "VALID") ? pads[i] : 0;
		/* ceil_mode: the right pad that yields the inferred output size. */
		pr[i] = total - pl[i];
		if (pr[i] < 0)
			pr[i] = 0;
	}
	if (is_max)
		alg = dnnl_pooling_max;
	else
		alg = ho_cpu_attr_i(n, "count_include_pad", 0) ? dnnl_pooling_avg_include_padding
							       : dnnl_pooling_avg_exclude_padding;
	ho_cpu_t_md(c, &xm, n->inputs[0], &x->shape);
	/* A global pool's [N, C, 1, 1] is the same bytes in either layout: say the
	 * input's, or oneDNN sees a layout change and takes its reference kernel
	 * (68 ms of the PP-OCR detector's 200). */
	ho_cpu_t_md(c, &ym, global ? n->inputs[0] : n->outputs[0], &y->shape);
	return ho_cpu_src_dst_kernel(
	    c, k,
	    dnnl_pooling_v2_forward_desc_init(&d, dnnl_forward_inference, alg, &xm, &ym, strides,
					      kernel, dil, pl, pr),
	    &d, NULL, &xm, &ym, buf, n, "(oneDNN) has no pooling for these shapes", err);
}
