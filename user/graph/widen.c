// SPDX-License-Identifier: MIT
/*
 * A model shipped in half precision (its weights float16, as converters
 * write it) computes in single: the runtime's kernels, oneDNN's among them,
 * are float32 ones, and such a model had 270 of its 461 nodes refused.
 * Every float16 tensor inside becomes float32 (weights and constants
 * decoded), Casts and dtype attributes that name float16 name float32; the
 * model's own float16 inputs and outputs stay, a Cast at each converting
 * the values going in and coming out.  The answer is then closer to the
 * exact one than float16 arithmetic gives; a runtime computing in float16
 * differs from it by float16's rounding.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph_priv.h"

/* float16 bytes at *data (len) decoded into float32 ones in a. */
static int ho_widen_bytes(struct ho_arena *a, const void **data, uint64_t *len)
{
	uint64_t n = *len / 2;
	float *f = ho_arena_alloc(a, (n ? n : 1) * sizeof(float));
	const uint8_t *p = *data;

	if (!f)
		return -ENOMEM;
	for (uint64_t k = 0; k < n; k++)
		f[k] = ho_half_to_float((uint16_t)(p[2 * k] | p[2 * k + 1] << 8));
	*data = f;
	*len = n * sizeof(float);
	return 0;
}

static bool ho_has_half_weights(const struct ho_graph *g)
{
	for (uint32_t t = 0; t < g->n_tensors; t++)
		if ((g->tensors[t].flags & HO_T_INITIALIZER) &&
		    g->tensors[t].dtype == HO_DT_FLOAT16)
			return true;
	for (uint32_t i = 0; i < g->n_nodes; i++)
		for (uint32_t s = 0; s < g->nodes[i].n_subgraphs; s++)
			if (ho_has_half_weights(g->nodes[i].subgraphs[s]))
				return true;
	return false;
}

/* Attributes that name or hold float16: Cast's to, a dtype, a Constant's value. */
static int ho_widen_attrs(struct ho_arena *a, struct ho_node *n)
{
	for (uint32_t k = 0; k < n->n_attrs; k++) {
		struct ho_attr *at = &n->attrs[k];

		if (at->type == HO_ATTR_INT && at->i == HO_DT_FLOAT16 &&
		    (!strcmp(at->name, "to") || !strcmp(at->name, "dtype")))
			at->i = HO_DT_FLOAT;
		if (at->type == HO_ATTR_TENSOR && at->t[0].dtype == HO_DT_FLOAT16 &&
		    at->t[0].data) {
			if (ho_widen_bytes(a, &at->t[0].data, &at->t[0].len))
				return -ENOMEM;
			at->t[0].dtype = HO_DT_FLOAT;
		}
	}
	return 0;
}

/* Every float16 tensor of g (and its subgraphs) float32, but for keep's ids (the root's I/O). */
static int ho_widen_graph(struct ho_graph *g, const bool *keep, struct ho_error *err)
{
	struct ho_arena *a = g->priv->arena;

	for (uint32_t t = 0; t < g->n_tensors; t++) {
		struct ho_tensor *x = &g->tensors[t];

		if (x->dtype != HO_DT_FLOAT16 || (keep && keep[t]))
			continue;
		if (x->data && ho_widen_bytes(a, &x->data, &x->data_len))
			return ho_err(err, -ENOMEM, "out of memory");
		x->dtype = HO_DT_FLOAT;
		x->value = NULL; /* decoded again, from the float32 bytes, when asked */
		x->flags |= HO_T_WIDENED;
	}
	for (uint32_t i = 0; i < g->n_nodes; i++) {
		struct ho_node *n = &g->nodes[i];

		if (ho_widen_attrs(a, n))
			return ho_err(err, -ENOMEM, "out of memory");
		for (uint32_t s = 0; s < n->n_subgraphs; s++) {
			int ret = ho_widen_graph(n->subgraphs[s], NULL, err);

			if (ret)
				return ret;
		}
	}
	return 0;
}

/* Room in g for extra more nodes and tensors (its arrays moved within its arena). */
static int ho_widen_room(struct ho_graph *g, uint32_t extra, struct ho_error *err)
{
	struct ho_arena *a = g->priv->arena;
	uint32_t cn = g->n_nodes + extra, ct = g->n_tensors + extra;
	struct ho_node *nodes = ho_arena_calloc(a, cn, sizeof(*nodes));
	struct ho_tensor *tensors = ho_arena_calloc(a, ct, sizeof(*tensors));

	if (!nodes || !tensors)
		return ho_err(err, -ENOMEM, "out of memory");
	memcpy(nodes, g->nodes, g->n_nodes * sizeof(*nodes));
	memcpy(tensors, g->tensors, g->n_tensors * sizeof(*tensors));
	g->nodes = nodes;
	g->tensors = tensors;
	g->priv->cap_nodes = cn;
	g->priv->cap_tensors = ct;
	return 0;
}

/* Every read of tensor from in g's nodes (and its subgraphs' outer references) reads to. */
static void ho_widen_reads(struct ho_graph *g, int32_t from, int32_t to)
{
	for (uint32_t i = 0; i < g->n_nodes; i++) {
		struct ho_node *n = &g->nodes[i];

		for (uint32_t k = 0; k < n->n_inputs; k++)
			if (n->inputs[k] == from)
				n->inputs[k] = to;
		for (uint32_t k = 0; k < n->n_implicit; k++)
			if (n->implicit[k] == from)
				n->implicit[k] = to;
		for (uint32_t s = 0; s < n->n_subgraphs; s++) {
			struct ho_graph *sg = n->subgraphs[s];

			for (uint32_t t = 0; t < sg->n_tensors; t++)
				if ((sg->tensors[t].flags & HO_T_OUTER) &&
				    sg->tensors[t].outer == from)
					sg->tensors[t].outer = to;
		}
	}
}

/* A Cast of src to dtype into a new float tensor named after src; the new tensor's id. */
static int32_t ho_widen_cast(struct ho_graph *g, int32_t src, int32_t dst, int to,
			     struct ho_error *err)
{
	struct ho_arena *a = g->priv->arena;
	struct ho_node *n = &g->nodes[g->n_nodes];
	int32_t *io = ho_arena_alloc(a, 2 * sizeof(int32_t));
	struct ho_attr *at = ho_arena_calloc(a, 1, sizeof(*at));
	char name[512];

	if (!io || !at)
		return ho_err(err, -ENOMEM, "out of memory");
	snprintf(name, sizeof(name), "%s/to_%s", g->tensors[to == HO_DT_FLOAT ? src : dst].name,
		 to == HO_DT_FLOAT ? "float32" : "float16");
	memset(n, 0, sizeof(*n));
	n->name = ho_arena_strdup(a, name);
	n->op_type = "Cast";
	n->domain = "";
	for (uint32_t i = 0; i < g->n_opsets; i++)
		if (!*g->opsets[i].domain)
			n->opset = g->opsets[i].version;
	at->name = "to";
	at->type = HO_ATTR_INT;
	at->i = to;
	io[0] = src;
	io[1] = dst;
	n->inputs = io;
	n->outputs = io + 1;
	n->n_inputs = n->n_outputs = n->n_attrs = 1;
	n->attrs = at;
	g->tensors[dst].producer = (int32_t)g->n_nodes++;
	return n->name ? 0 : ho_err(err, -ENOMEM, "out of memory");
}

/* A float32 tensor standing in for float16 tensor t at the model's boundary. */
static int32_t ho_widen_twin(struct ho_graph *g, int32_t t, struct ho_error *err)
{
	char name[512];
	int32_t id;

	snprintf(name, sizeof(name), "%s/float32", g->tensors[t].name);
	id = ho_graph_add_tensor(g, name, err);
	if (id >= 0) {
		g->tensors[id].dtype = HO_DT_FLOAT;
		g->tensors[id].flags = HO_T_WIDENED;
	}
	return id;
}

int ho_graph_widen_half(struct ho_graph *g, struct ho_error *err)
{
	bool *keep;
	uint32_t extra = 0;
	int ret;

	if (!ho_has_half_weights(g))
		return 0;
	keep = calloc(g->n_tensors + 1, sizeof(bool));
	if (!keep)
		return ho_err(err, -ENOMEM, "out of memory");
	for (uint32_t i = 0; i < g->n_inputs; i++)
		extra += keep[g->inputs[i]] = g->tensors[g->inputs[i]].dtype == HO_DT_FLOAT16;
	for (uint32_t i = 0; i < g->n_outputs; i++)
		extra += keep[g->outputs[i]] = g->tensors[g->outputs[i]].dtype == HO_DT_FLOAT16 &&
					       g->tensors[g->outputs[i]].producer >= 0;
	ret = ho_widen_graph(g, keep, err);
	free(keep);
	if (ret || (ret = ho_widen_room(g, extra, err)))
		return ret;
	for (uint32_t i = 0; i < g->n_inputs; i++) {
		int32_t t = g->inputs[i], w;

		if (g->tensors[t].dtype != HO_DT_FLOAT16)
			continue;
		if ((w = ho_widen_twin(g, t, err)) < 0)
			return w;
		ho_widen_reads(g, t, w);
		if ((ret = ho_widen_cast(g, t, w, HO_DT_FLOAT, err)))
			return ret;
	}
	for (uint32_t i = 0; i < g->n_outputs; i++) {
		int32_t t = g->outputs[i], w, p = g->tensors[t].producer;
		struct ho_node *pn;

		if (g->tensors[t].dtype != HO_DT_FLOAT16 || p < 0)
			continue;
		if ((w = ho_widen_twin(g, t, err)) < 0)
			return w;
		pn = &g->nodes[p];
		for (uint32_t k = 0; k < pn->n_outputs; k++)
			if (pn->outputs[k] == t)
				pn->outputs[k] = w;
		g->tensors[w].producer = p;
		ho_widen_reads(g, t, w);
		if ((ret = ho_widen_cast(g, w, t, HO_DT_FLOAT16, err)))
			return ret;
	}
	return ho_graph_validate(g, err);
}
