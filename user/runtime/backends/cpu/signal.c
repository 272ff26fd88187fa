// SPDX-License-Identifier: MIT
/*
 * Signal processing: the Hann, Hamming and Blackman windows, each
 * a0 - a1 cos(2 pi n / N) + a2 cos(4 pi n / N) over n < size, N = size
 * (periodic) or size - 1 (symmetric), as ONNX defines them.
 */
#include <math.h>
#include <string.h>

#include "cpu.h"

static const struct {
	const char *op;
	double a0, a1, a2;
} ho_windows[] = {
    {"HannWindow", 0.5, 0.5, 0},
    {"HammingWindow", 25.0 / 46.0, 21.0 / 46.0, 0},
    {"BlackmanWindow", 0.42, 0.5, 0.08},
};

static int ho_run_window(const struct ho_kernel *k)
{
	const struct ho_typed *t = &k->typed;
	int64_t size = t->out_shape.dim[0];
	double N = (double)(t->iparam[0] ? size : size - 1), a0 = ho_windows[t->op].a0,
	       a1 = ho_windows[t->op].a1, a2 = ho_windows[t->op].a2;

	for (int64_t i = 0; i < size; i++) {
		double x = 2 * M_PI * (double)i / N,
		       v = N > 0 ? a0 - a1 * cos(x) + a2 * cos(2 * x) : 1; /* size 1: one 1 */

		if (t->out_dt == HO_DT_DOUBLE)
			((double *)t->out)[i] = v;
		else
			((float *)t->out)[i] = (float)v;
	}
	return 0;
}

int ho_cpu_prep_window(const struct ho_graph *g, const struct ho_node *n, void *const *buf,
		       struct ho_kernel *k, struct ho_error *err)
{
	const struct ho_tensor *y = &g->tensors[n->outputs[0]];
	size_t i;

	for (i = 0; i < sizeof(ho_windows) / sizeof(ho_windows[0]); i++)
		if (!strcmp(ho_windows[i].op, n->op_type))
			break;
	if (i == sizeof(ho_windows) / sizeof(ho_windows[0]) || y->shape.rank != 1 ||
	    (y->dtype != HO_DT_FLOAT && y->dtype != HO_DT_DOUBLE))
		return ho_cpu_unsupported(err, n, "makes float32 and float64 windows only");
	k->kind = HO_K_LOOP;
	k->typed.out = buf[n->outputs[0]];
	k->typed.out_dt = y->dtype;
	k->typed.out_shape = y->shape;
	k->typed.iparam[0] = ho_cpu_attr_i(n, "periodic", 1);
	k->typed.op = (int)i;
	k->typed.run = ho_run_window;
	return 0;
}
