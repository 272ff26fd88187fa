/* SPDX-License-Identifier: MIT */
/* Internals of the graph IR shared by its files. Not installed. */
#ifndef HO_GRAPH_PRIV_H
#define HO_GRAPH_PRIV_H

#include <stdarg.h>
#include <stdbool.h>

#include "common.h"
#include "heteroopt/graph.h"

struct ho_graph_priv {
	struct ho_arena *arena; /* shared with subgraphs; owned by the root */
	struct ho_name_index tensors;
	uint32_t cap_nodes, cap_tensors;
	void *model; /* decoded protobuf kept for weights (root) */
	void (*release_model)(void *model);
	void **external; /* external-data buffers (root) */
	uint32_t n_external, cap_external;
	bool root;
	/* while ho_graph_infer_bounds infers (root graph): extents a run decides at their bound */
	bool at_bounds;
	const struct ho_extent_bound *bounds;
	uint32_t n_bounds;
};

/* Allocate a graph inside arena a (a NULL arena creates a root graph). */
struct ho_graph *ho_graph_new(struct ho_arena *a, uint32_t cap_nodes, uint32_t cap_tensors,
			      struct ho_error *err);
int32_t ho_graph_add_tensor(struct ho_graph *g, const char *name, struct ho_error *err);
/* dst names src's graph, producer, IR version and opsets (shared, src's): a graph made from it */
void ho_graph_share_header(struct ho_graph *dst, const struct ho_graph *src);

/* A model whose weights are float16 computed in float32, its float16 inputs and outputs
 * kept behind Casts (widen.c); nothing done to any other model. */
int ho_graph_widen_half(struct ho_graph *g, struct ho_error *err);
/* Operators the model spells out in pieces made whole again (patterns.c): Gelu, LayerNorm. */
int ho_graph_fold_patterns(struct ho_graph *g, struct ho_error *err);
/* A Conv's scale and shift by constants after it folded into its weights (conv_affine.c):
 * each link taken marked in gone, each Conv that took some counted in *folded. */
int ho_graph_fold_conv_affine(struct ho_graph *g, bool *gone, uint32_t *folded,
			      struct ho_error *err);

/* Decode weight bytes into a small value (NULL when too big or not numeric). */
struct ho_value *ho_value_from_data(struct ho_arena *a, int dtype, const void *data, uint64_t len,
				    int64_t count);
/*
 * The most elements a value folded at load may have: shape arithmetic, and
 * the masks and index tables models compute from constants (swin_t's
 * shifted-window mask, [64, 49, 49] from a [56, 56] table: computed again
 * every run, a third of its time, until folded).  A value is 8 bytes an
 * element in the graph's arena.
 */
#define HO_FOLD_MAX_ELEMS (1 << 18)
/* ... and of a value the caller bound (a run's, for what follows it: a NonZero over a
 * detector's 1.7 M class scores is counted so) */
#define HO_FOLD_BOUND_MAX_ELEMS (1 << 24)
/* Up to this many, a constant's value is decoded as it is read in (a Constant node's
 * output), and a view carries a weight's value on; a larger weight stays bytes that the
 * runtime reads in place, decoded only for a fold that asks. */
#define HO_FOLD_SMALL_ELEMS 4096

/* A quantized model's scales that it holds, each finite and not 0 (quant_scales.c):
 * else -EINVAL naming the node and scale.  At load. */
int ho_check_quant_scales(const struct ho_graph *g, struct ho_error *err);

#endif
