// SPDX-License-Identifier: MIT
/*
 * A quantized model's scales, checked at load: x = scale * (q - zero point), so a scale
 * of 0 maps every value to the zero point and a NaN or infinite one poisons every output
 * after it.  Such a model is refused naming the node and the scale, before any plan.
 * Only scales the model holds (initializers, Constants): one a run computes is the
 * run's (DynamicQuantizeLinear's).
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "graph_priv.h"

/* The operators with scales, and which of their inputs those are. */
static const struct {
	const char *op;
	uint8_t n, scale[3];
} quant_ops[] = {
    {"QuantizeLinear", 1, {1}},
    {"DequantizeLinear", 1, {1}},
    {"QLinearConv", 3, {1, 4, 6}},
    {"QLinearMatMul", 3, {1, 4, 6}},
    {"QLinearAdd", 3, {1, 4, 6}},
    {"QLinearMul", 3, {1, 4, 6}},
    {"QLinearGlobalAveragePool", 2, {1, 3}},
    {"QLinearSigmoid", 2, {1, 3}},
    {"QLinearLeakyRelu", 2, {1, 3}},
};

/* Element i of t's held bytes as a double (float32, float16, double). */
static double scale_at(const struct ho_tensor *t, uint64_t i)
{
	const uint8_t *p = t->data;
	float f;
	double d;
	uint16_t h;

	switch (t->dtype) {
	case HO_DT_FLOAT:
		memcpy(&f, p + 4 * i, 4);
		return f;
	case HO_DT_DOUBLE:
		memcpy(&d, p + 8 * i, 8);
		return d;
	default: /* float16: only whether it is 0, NaN or infinite matters */
		memcpy(&h, p + 2 * i, 2);
		return (h & 0x7fffu) == 0 ? 0 : (h & 0x7c00u) == 0x7c00u ? NAN : 1;
	}
}

/* t's first scale that is 0, NaN or infinite, into *bad: true where there is one. */
static bool scale_bad(const struct ho_tensor *t, double *bad)
{
	uint32_t size = t->dtype == HO_DT_FLOAT16 ? 2 : t->dtype == HO_DT_DOUBLE ? 8 : 4;
	uint64_t n;

	if (t->value && t->value->f) {
		for (size_t i = 0; i < t->value->count; i++)
			if (!isfinite(t->value->f[i]) || t->value->f[i] == 0) {
				*bad = t->value->f[i];
				return true;
			}
		return false;
	}
	if (!t->data ||
	    (t->dtype != HO_DT_FLOAT && t->dtype != HO_DT_FLOAT16 && t->dtype != HO_DT_DOUBLE))
		return false;
	n = t->data_len / size;
	for (uint64_t i = 0; i < n; i++) {
		double v = scale_at(t, i);

		if (!isfinite(v) || v == 0) {
			*bad = v;
			return true;
		}
	}
	return false;
}

int ho_check_quant_scales(const struct ho_graph *g, struct ho_error *err)
{
	for (uint32_t n = 0; n < g->n_nodes; n++) {
		const struct ho_node *nd = &g->nodes[n];

		for (size_t q = 0; q < sizeof(quant_ops) / sizeof(quant_ops[0]); q++) {
			if (strcmp(nd->op_type, quant_ops[q].op))
				continue;
			for (uint32_t k = 0; k < quant_ops[q].n; k++) {
				uint32_t in = quant_ops[q].scale[k];
				double bad;

				if (in < nd->n_inputs && nd->inputs[in] >= 0 &&
				    scale_bad(&g->tensors[nd->inputs[in]], &bad))
					return ho_err(err, -EINVAL,
						      "node '%s' (%s): scale '%s' is %g: a "
						      "quantization scale must be a finite "
						      "number other than 0",
						      nd->name, nd->op_type,
						      g->tensors[nd->inputs[in]].name, bad);
			}
		}
	}
	return 0;
}
