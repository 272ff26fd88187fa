/* SPDX-License-Identifier: MIT */
/* The executor's own helpers, shared by its files (the backends see backends/backend.h
 * only). Not installed. */
#ifndef HO_RT_PRIV_H
#define HO_RT_PRIV_H

#include <stdbool.h>

#include "backends/backend.h"
#include "heteroopt/runtime.h"

/* A constant tensor's bytes (weights, Constant outputs, folded values) into dst. */
int ho_rt_fill_constant(const struct ho_tensor *t, void *dst);
/*
 * Tensor t's bytes at its home in plan rt, for a control-flow kernel that
 * feeds its subgraph's plan (inputs, outer tensors) and reads its outputs in
 * place; an input asked for counts as given.  NULL: nothing reads it.
 */
void *ho_rt_tensor_data(struct ho_rt *rt, int32_t t);

/* The memory plan (memplan.c): offsets in one device's region, reusing bytes. */
struct ho_mp_item {
	uint64_t size;
	int32_t writer;		 /* node that writes it (-1: written before the run) */
	const int32_t *also;	 /* other nodes that write parts of it (a Concat's inputs */
	uint32_t n_also;	 /* written in its output), none for a copy */
	bool copy;		 /* written by a copy that starts once writer is done */
	double copy_start;	 /* a copy: when the schedule starts it (s), or -1 */
	bool permanent;		 /* inputs, constants: held from before the run, never shared */
	bool to_end;		 /* outputs: from their write to the end of the run */
	uint32_t prio;		 /* the writer's place in the schedule's order */
	const uint32_t *readers; /* nodes that read it */
	uint32_t n_readers;
	/* What reads these very bytes: a home's readers through a replica are
	 * replaced by the copy (n_nodes + tensor x device) that fills it. */
	const uint32_t *direct;
	uint32_t n_direct;
	uint32_t tensor; /* the executor's: whose bytes these are */
	uint64_t offset; /* out */
};
/* What orders two nodes' runs. */
struct ho_mp_order {
	const uint64_t *anc; /* per node, its graph ancestors: words 64-bit words; NULL: no reuse */
	uint32_t words;
	const double *start, *end; /* per node, the timeline the executor enforces; NULL: none */
	const uint32_t *prio;	   /* per node: the schedule's order, tie-breaker of start */
	uint32_t n_nodes;	   /* readers from n_nodes up are copies, */
	const double *copy_end;	   /* their predicted completion (-1: unknown), or NULL */
};
/* Each node's ancestors as bitsets of words 64-bit words; NULL if too large. */
uint64_t *ho_memplan_ancestors(const struct ho_graph *g, uint32_t *words);
/* The plan: the region's size, and the reuses only the timeline orders. */
struct ho_mp_plan {
	uint64_t total;
	struct ho_mp_wait {
		uint32_t before, after; /* items: after's writer waits for before's readers */
		bool direct;		/* ... its direct readers (copies included) */
	} * waits;
	uint32_t n_waits, cap_waits;
};
int ho_memplan(struct ho_mp_item *items, uint32_t n, const struct ho_mp_order *o,
	       struct ho_mp_plan *pl);

#endif
