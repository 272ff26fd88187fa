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
 * they stay where they are for the plan's life).  *out is NULL for a node
 * with nothing to do at run time (an alias, a folded constant).
 */
int ho_cpu_prepare(struct ho_cpu *c, const struct ho_graph *g, uint32_t node, void *const *buf,
		   struct ho_cpu_kernel **out, struct ho_error *err);
int ho_cpu_launch(struct ho_cpu *c, struct ho_cpu_kernel *k, struct ho_error *err);
void ho_cpu_kernel_free(struct ho_cpu_kernel *k);
/* Operators whose output is their first input's buffer, unchanged (Reshape, Flatten, ...). */
bool ho_cpu_op_is_alias(const char *op_type);

#endif
