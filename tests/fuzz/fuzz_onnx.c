// SPDX-License-Identifier: MIT
/*
 * libFuzzer target for the ONNX front end: decode, bind every input (unknown
 * extents set to small values), infer shapes, compute features, free.  Any
 * crash, sanitizer report, leak or hang is a bug; error returns are fine.
 */
#include <stddef.h>
#include <stdint.h>

#include "heteroopt/graph.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ho_graph *g = NULL;
	struct ho_error err;

	if (ho_onnx_load_buffer(data, size, NULL, &g, &err))
		return 0;
	for (uint32_t i = 0; i < g->n_inputs; i++) {
		struct ho_tensor *t = &g->tensors[g->inputs[i]];
		int64_t dims[HO_MAX_RANK];
		int rank = t->shape.rank < 0 ? 1 : t->shape.rank;

		for (int d = 0; d < rank; d++)
			dims[d] = t->shape.rank >= 0 && t->shape.dim[d] >= 0 ? t->shape.dim[d] : 2;
		ho_graph_bind_input(g, t->name, dims, rank, &err);
	}
	if (!ho_shape_infer(g, &err))
		ho_features_compute(g);
	ho_graph_free(g);
	return 0;
}
