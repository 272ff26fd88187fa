/* SPDX-License-Identifier: MIT */
/* Between the runtime's executor and its backends. Not installed. */
#ifndef HO_RT_PRIV_H
#define HO_RT_PRIV_H

#include <stdbool.h>

#include "heteroopt/runtime.h"

/* The cpu backend (cpu_dnnl.c): one oneDNN engine and stream. */
struct ho_cpu;
struct ho_cpu_kernel;

int ho_cpu_open(int threads, struct ho_cpu **out, struct ho_error *err);
void ho_cpu_close(struct ho_cpu *c);
/*
 * Build node's kernel over the tensors' buffers (buf, indexed by tensor id;
 * they stay where they are for the plan's life).  post_node >= 0: a Conv's
 * single element-wise consumer, folded in as a oneDNN post-op (it then
 * writes post_node's output; post_node itself needs no kernel).  *out is NULL for a node
 * with nothing to do at run time (an alias, a folded constant).
 */
int ho_cpu_prepare(struct ho_cpu *c, const struct ho_graph *g, uint32_t node, int32_t post_node,
		   void *const *buf, struct ho_cpu_kernel **out, struct ho_error *err);
/* post_node of ho_cpu_prepare: an element-wise node a convolution can end with. */
bool ho_cpu_op_fusable_post(const char *op_type);
int ho_cpu_launch(struct ho_cpu *c, struct ho_cpu_kernel *k, struct ho_error *err);
void ho_cpu_kernel_free(struct ho_cpu_kernel *k);
/* Which tensors are stored channels-last (NHWC); NULL: none.  Set before preparing. */
void ho_cpu_set_layouts(struct ho_cpu *c, const uint8_t *channels_last);
/*
 * Layout classes: kernels that work on NHWC as well as NCHW and may mix
 * them (Conv, Concat), and among those the ones whose output must share the
 * layout of its full-shape inputs (element-wise, pooling, batch norm).
 */
bool ho_cpu_op_any_layout(const char *op_type);
bool ho_cpu_op_same_layout(const char *op_type);
bool ho_cpu_op_binary(const char *op_type);
/* Operators whose output is their first input's buffer, unchanged (Reshape, Flatten, ...). */
bool ho_cpu_op_is_alias(const char *op_type);

/* The memory plan (memplan.c): offsets in one device's region, reusing bytes. */
struct ho_mp_item {
	uint64_t size;
	int32_t writer;		 /* node that writes it (-1: written before the run) */
	bool copy;		 /* written by a copy that starts once writer is done */
	bool permanent;		 /* inputs, constants, outputs: never shared */
	uint32_t prio;		 /* the writer's place in the schedule's order */
	const uint32_t *readers; /* nodes that read it */
	uint32_t n_readers;
	uint64_t offset; /* out */
};
/* Each node's ancestors as bitsets of words 64-bit words; NULL if too large. */
uint64_t *ho_memplan_ancestors(const struct ho_graph *g, uint32_t *words);
int ho_memplan(struct ho_mp_item *items, uint32_t n, const uint64_t *anc, uint32_t words,
	       uint64_t *total);

#endif
