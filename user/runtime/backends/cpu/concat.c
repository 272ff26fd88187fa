// SPDX-License-Identifier: MIT
/* Concat (oneDNN), any mix of layouts. */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cpu.h"

int ho_cpu_prep_concat(struct ho_backend *c, const struct ho_graph *g, const struct ho_node *n,
		       void *const *buf, struct ho_kernel *k, struct ho_error *err)
{
	const struct ho_tensor *y = &g->tensors[n->outputs[0]];
	int64_t axis = ho_cpu_attr_i(n, "axis", 0);
	dnnl_memory_desc_t md[HO_CPU_MAX_ARGS - 1], ym;
	dnnl_primitive_desc_t pd = NULL;
	int ret = 0;

	if (axis < 0)
		axis += y->shape.rank;
	if (n->n_inputs < 1 || n->n_inputs >= HO_CPU_MAX_ARGS - 1 || y->dtype != HO_DT_FLOAT)
		return ho_cpu_unsupported(err, n, "concatenates 1 to 14 float32 inputs");
	for (uint32_t i = 0; i < n->n_inputs; i++) {
		if (n->inputs[i] < 0)
			return ho_cpu_unsupported(err, n, "needs every input present");
		ho_cpu_t_md(c, &md[i], n->inputs[i], &g->tensors[n->inputs[i]].shape);
	}
	ho_cpu_t_md(c, &ym, n->outputs[0], &y->shape);
	if (dnnl_concat_primitive_desc_create(&pd, &ym, (int)n->n_inputs, (int)axis, md, c->attr,
					      c->eng) != dnnl_success)
		return ho_cpu_unsupported(err, n, "(oneDNN) cannot concatenate these shapes");
	for (uint32_t i = 0; i < n->n_inputs && !ret; i++)
		ret = ho_cpu_mem(c, k, &md[i], buf[n->inputs[i]], DNNL_ARG_MULTIPLE_SRC + (int)i);
	if (ret || ho_cpu_mem(c, k, &ym, buf[n->outputs[0]], DNNL_ARG_DST) || ho_cpu_prim(c, k, pd))
		ret = ho_err(err, -ENOMEM, "node '%s': oneDNN set-up failed", n->name);
	dnnl_primitive_desc_destroy(pd);
	return ret;
}
