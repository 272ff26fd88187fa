/* SPDX-License-Identifier: MIT */
/* Internals of the graph IR: arena, name index, error helper. Not installed. */
#ifndef HO_GRAPH_PRIV_H
#define HO_GRAPH_PRIV_H

#include <stdarg.h>
#include <stdbool.h>

#include "heteroopt/graph.h"

/*
 * Every IR object lives in one arena per top-level graph so that a failed
 * load can unwind with a single free and nothing can leak piecemeal.
 */
struct ho_arena_chunk;
struct ho_arena {
	struct ho_arena_chunk *head;
	size_t total;
};

void *ho_arena_alloc(struct ho_arena *a, size_t size);
void *ho_arena_calloc(struct ho_arena *a, size_t n, size_t size);
char *ho_arena_strndup(struct ho_arena *a, const char *s, size_t n);
char *ho_arena_strdup(struct ho_arena *a, const char *s);
void ho_arena_release(struct ho_arena *a);

/* Open-addressing name -> id index. */
struct ho_name_index {
	uint32_t cap; /* power of two */
	uint32_t used;
	const char **keys;
	int32_t *ids;
};

int ho_index_init(struct ho_name_index *ix, struct ho_arena *a, uint32_t expected);
int32_t ho_index_get(const struct ho_name_index *ix, const char *key);
/* Returns the existing id if present (no insert), else inserts and returns -1. */
int32_t ho_index_put(struct ho_name_index *ix, const char *key, int32_t id);

struct ho_graph_priv {
	struct ho_arena *arena; /* shared with subgraphs; owned by the root */
	struct ho_name_index tensors;
	uint32_t cap_nodes, cap_tensors;
	void *model; /* decoded protobuf kept for weights (root) */
	void (*release_model)(void *model);
	void **external; /* external-data buffers (root) */
	uint32_t n_external, cap_external;
	bool root;
};

int ho_err(struct ho_error *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Allocate a graph inside arena a (a NULL arena creates a root graph). */
struct ho_graph *ho_graph_new(struct ho_arena *a, uint32_t cap_nodes, uint32_t cap_tensors,
			      struct ho_error *err);
int32_t ho_graph_add_tensor(struct ho_graph *g, const char *name, struct ho_error *err);

/* Decode weight bytes into a small value (NULL when too big or not numeric). */
struct ho_value *ho_value_from_data(struct ho_arena *a, int dtype, const void *data, uint64_t len,
				    int64_t count);
#define HO_FOLD_MAX_ELEMS 4096

#endif
