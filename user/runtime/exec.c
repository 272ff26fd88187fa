// SPDX-License-Identifier: MIT
/*
 * The executor: one buffer per tensor (aliases share their source's), every
 * node's kernel built once, then runs in topological order.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "graph_priv.h"
#include "rt_priv.h"

struct ho_rt {
	const struct ho_graph *g;
	void **buf;	 /* per tensor: where its data is */
	void **owned;	 /* per tensor: the allocation this plan frees, or NULL */
	uint8_t *is_set; /* per graph input: fed since the plan was made */
	struct ho_cpu *cpu;
	struct ho_cpu_kernel **k; /* per node, NULL when there is nothing to run */
};

static void *ho_rt_alloc(uint64_t bytes)
{
	/* 64 bytes: a cache line, and what oneDNN's kernels prefer. */
	size_t n = (size_t)((bytes + 63) & ~63ull);
	void *p = aligned_alloc(64, n ? n : 64);

	if (p)
		memset(p, 0, n ? n : 64);
	return p;
}

/* Weights, Constant outputs and folded values: their bytes, in an aligned buffer. */
static int ho_rt_fill_constant(const struct ho_tensor *t, void *dst)
{
	int64_t n = ho_shape_numel(&t->shape);

	if (n == 0)
		return 0; /* an empty constant, e.g. Resize's omitted roi */
	if (t->data) {
		memcpy(dst, t->data, t->data_len < t->bytes ? t->data_len : t->bytes);
		return 0;
	}
	if (!t->value || n < 0 || (size_t)n > t->value->count)
		return -EINVAL;
	for (int64_t i = 0; i < n; i++) {
		if (t->dtype == HO_DT_FLOAT && t->value->f)
			((float *)dst)[i] = (float)t->value->f[i];
		else if (t->dtype == HO_DT_INT64 && t->value->i)
			((int64_t *)dst)[i] = t->value->i[i];
		else
			return -EINVAL;
	}
	return 0;
}

void ho_rt_free(struct ho_rt *rt)
{
	if (!rt)
		return;
	for (uint32_t i = 0; rt->k && i < rt->g->n_nodes; i++)
		ho_cpu_kernel_free(rt->k[i]);
	for (uint32_t t = 0; rt->owned && t < rt->g->n_tensors; t++)
		free(rt->owned[t]);
	ho_cpu_close(rt->cpu);
	free(rt->k);
	free(rt->buf);
	free(rt->owned);
	free(rt->is_set);
	free(rt);
}

int ho_rt_new(const struct ho_graph *g, const struct ho_rt_opts *o, struct ho_rt **out,
	      struct ho_error *err)
{
	struct ho_rt *rt = calloc(1, sizeof(*rt));
	int ret = -ENOMEM;

	*out = NULL;
	if (!rt)
		return ho_err(err, -ENOMEM, "out of memory");
	rt->g = g;
	rt->buf = calloc(g->n_tensors + 1, sizeof(void *));
	rt->owned = calloc(g->n_tensors + 1, sizeof(void *));
	rt->is_set = calloc(g->n_inputs + 1, 1);
	rt->k = calloc(g->n_nodes + 1, sizeof(*rt->k));
	if (!rt->buf || !rt->owned || !rt->is_set || !rt->k)
		goto nomem;
	ret = ho_cpu_open(o ? o->threads : 0, &rt->cpu, err);
	if (ret)
		goto fail;

	/* Storage: constants and every tensor a node produces; aliases share. */
	for (uint32_t t = 0; t < g->n_tensors; t++) {
		const struct ho_tensor *tt = &g->tensors[t];

		if (!(tt->flags & (HO_T_INITIALIZER | HO_T_CONSTANT | HO_T_FOLDED | HO_T_INPUT)))
			continue;
		if (!tt->bytes && ho_shape_numel(&tt->shape) != 0) {
			ret = ho_err(err, -EINVAL, "tensor '%s': shape not fully known", tt->name);
			goto fail;
		}
		if (!(rt->buf[t] = rt->owned[t] = ho_rt_alloc(tt->bytes)))
			goto nomem;
		if (!(tt->flags & HO_T_INPUT) && ho_rt_fill_constant(tt, rt->buf[t]) &&
		    !(tt->flags & HO_T_FOLDED)) {
			ret = ho_err(err, -EINVAL, "tensor '%s': constant without data", tt->name);
			goto fail;
		}
	}
	for (uint32_t i = 0; i < g->n_nodes; i++) {
		const struct ho_node *n = &g->nodes[g->topo[i]];

		if (n->flags & HO_N_FOLDED)
			continue;
		for (uint32_t k = 0; k < n->n_outputs; k++) {
			int32_t t = n->outputs[k];
			const struct ho_tensor *tt;

			if (t < 0 || rt->buf[t])
				continue;
			tt = &g->tensors[t];
			if (!tt->bytes && ho_shape_numel(&tt->shape) != 0) {
				ret = ho_err(err, -EINVAL,
					     "node '%s' (%s): output '%s' has no known shape",
					     n->name, n->op_type, tt->name);
				goto fail;
			}
			if (k == 0 && n->n_inputs && n->inputs[0] >= 0 &&
			    ho_cpu_op_is_alias(n->op_type)) {
				rt->buf[t] = rt->buf[n->inputs[0]];
				continue;
			}
			if (!(rt->buf[t] = rt->owned[t] = ho_rt_alloc(tt->bytes)))
				goto nomem;
		}
	}
	for (uint32_t i = 0; i < g->n_nodes; i++) {
		uint32_t id = (uint32_t)g->topo[i];

		if (g->nodes[id].flags & HO_N_FOLDED)
			continue;
		ret = ho_cpu_prepare(rt->cpu, g, id, rt->buf, &rt->k[id], err);
		if (ret)
			goto fail;
	}
	*out = rt;
	return 0;
nomem:
	ret = ho_err(err, -ENOMEM, "out of memory planning the model");
fail:
	ho_rt_free(rt);
	return ret;
}

int ho_rt_set_input(struct ho_rt *rt, const char *name, const int64_t *shape, int rank,
		    const float *data, struct ho_error *err)
{
	const struct ho_graph *g = rt->g;

	for (uint32_t i = 0; i < g->n_inputs; i++) {
		const struct ho_tensor *t = &g->tensors[g->inputs[i]];

		if (strcmp(t->name, name))
			continue;
		if (t->dtype != HO_DT_FLOAT)
			return ho_err(err, -EINVAL, "input '%s' is %s; only float32 inputs are fed",
				      name, ho_dtype_name(t->dtype));
		if (rank != t->shape.rank)
			return ho_err(err, -EINVAL, "input '%s': rank %d given, the model has %d",
				      name, rank, t->shape.rank);
		for (int d = 0; d < rank; d++)
			if (shape[d] != t->shape.dim[d])
				return ho_err(err, -EINVAL,
					      "input '%s': dimension %d is %lld, the plan has %lld",
					      name, d, (long long)shape[d],
					      (long long)t->shape.dim[d]);
		memcpy(rt->buf[g->inputs[i]], data, t->bytes);
		rt->is_set[i] = 1;
		return 0;
	}
	return ho_err(err, -ENOENT, "the model has no input named '%s'", name);
}

int ho_rt_run(struct ho_rt *rt, struct ho_error *err)
{
	const struct ho_graph *g = rt->g;

	for (uint32_t i = 0; i < g->n_inputs; i++)
		if (!rt->is_set[i])
			return ho_err(err, -EINVAL, "input '%s' was not given",
				      g->tensors[g->inputs[i]].name);
	for (uint32_t i = 0; i < g->n_nodes; i++) {
		struct ho_cpu_kernel *k = rt->k[g->topo[i]];
		int ret;

		if (k && (ret = ho_cpu_launch(rt->cpu, k, err)))
			return ret;
	}
	return 0;
}

const float *ho_rt_output(const struct ho_rt *rt, uint32_t i, const struct ho_tensor **t)
{
	if (i >= rt->g->n_outputs)
		return NULL;
	if (t)
		*t = &rt->g->tensors[rt->g->outputs[i]];
	return rt->buf[rt->g->outputs[i]];
}
