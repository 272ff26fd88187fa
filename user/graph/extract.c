// SPDX-License-Identifier: MIT
/*
 * A graph of some of another's nodes: the part of a model that must wait
 * for a run to know its shapes (user/runtime/tail.c) is planned as a graph
 * of its own, made from the model's.  Tensors the part reads and does not
 * write become its inputs: a value known before a run (a weight, a
 * constant, a folded or bound value) a constant of it with the same bytes,
 * anything else an input fed at each run, of the shape it has in g.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "graph_priv.h"

struct ho_extract {
	const struct ho_graph *g;
	struct ho_graph *sub;
	const bool *take; /* per node of g */
	bool *used;	  /* per tensor: one of sub's */
};

static bool ho_written_inside(const struct ho_extract *x, int32_t t)
{
	int32_t p = x->g->tensors[t].producer;

	return p >= 0 && x->take[p];
}

/* Tensor t of g (-1: none) made one of sub's, on first use. */
static void ho_extract_tensor(struct ho_extract *x, int32_t t)
{
	const struct ho_tensor *src;
	struct ho_tensor *dst;

	if (t < 0 || x->used[t])
		return;
	x->used[t] = true;
	src = &x->g->tensors[t];
	dst = &x->sub->tensors[t];
	dst->dtype = src->dtype;
	dst->decl = src->decl;
	dst->flags = src->flags & HO_T_DECLARED;
	if (ho_written_inside(x, t))
		return; /* inference gives it a shape */
	dst->shape = src->shape;
	dst->bytes = src->bytes;
	if ((src->flags & HO_T_KNOWN) && (src->data || src->value || !src->bytes)) {
		/* a bound value keeps its larger limit for folding (graph_priv.h) */
		dst->flags |= HO_T_CONSTANT | (src->flags & (HO_T_FOLDED | HO_T_BOUND));
		dst->data = src->data;
		dst->data_len = src->data_len;
		dst->value = src->value;
	} else {
		dst->flags |= HO_T_INPUT;
		x->sub->inputs[x->sub->n_inputs++] = t;
	}
}

static void ho_extract_node(struct ho_extract *x, uint32_t n)
{
	const struct ho_node *src = &x->g->nodes[n];
	struct ho_node *dst = &x->sub->nodes[x->sub->n_nodes];

	*dst = *src; /* inputs, outputs and implicit keep their ids: the same as g's */
	memset(&dst->feat, 0, sizeof(dst->feat));
	dst->flags &= ~HO_N_FOLDED;
	for (uint32_t k = 0; k < src->n_inputs; k++)
		ho_extract_tensor(x, src->inputs[k]);
	for (uint32_t k = 0; k < src->n_implicit; k++)
		ho_extract_tensor(x, src->implicit[k]);
	for (uint32_t k = 0; k < src->n_outputs; k++) {
		ho_extract_tensor(x, src->outputs[k]);
		if (src->outputs[k] >= 0)
			x->sub->tensors[src->outputs[k]].producer = (int32_t)x->sub->n_nodes;
	}
	x->sub->n_nodes++;
}

static bool ho_unknown(const struct ho_graph *g, int32_t t)
{
	return t >= 0 && ho_shape_numel(&g->tensors[t].shape) < 0;
}

uint32_t ho_graph_run_decides(const struct ho_graph *g, bool *take_out)
{
	bool *take = take_out ? take_out : calloc(g->n_nodes + 1, sizeof(bool));
	uint32_t n_taken = 0;

	if (!take)
		return 0;

	for (uint32_t i = 0; i < g->n_nodes; i++) {
		uint32_t id = (uint32_t)g->topo[i];
		const struct ho_node *n = &g->nodes[id];
		bool tail = false;

		take[id] = false;
		if (!ho_node_is_task(n))
			continue;
		for (uint32_t k = 0; k < n->n_inputs + n->n_implicit && !tail; k++) {
			int32_t t = k < n->n_inputs ? n->inputs[k] : n->implicit[k - n->n_inputs];

			tail = ho_unknown(g, t) || (t >= 0 && g->tensors[t].producer >= 0 &&
						    take[g->tensors[t].producer]);
		}
		for (uint32_t k = 0; k < n->n_outputs && !tail; k++)
			tail = ho_unknown(g, n->outputs[k]);
		take[id] = tail;
		n_taken += tail;
	}
	if (!take_out)
		free(take);
	return n_taken;
}

int ho_graph_extract(const struct ho_graph *g, const bool *take, struct ho_graph **out,
		     struct ho_error *err)
{
	struct ho_extract x = {.g = g, .take = take};
	uint32_t n_nodes = 0;
	struct ho_arena *a;
	int ret = -ENOMEM;

	*out = NULL;
	for (uint32_t i = 0; i < g->n_nodes; i++)
		n_nodes += take[i];
	x.sub = ho_graph_new(NULL, n_nodes, g->n_tensors, err);
	if (!x.sub)
		return err->code;
	a = x.sub->priv->arena;
	x.used = calloc(g->n_tensors + 1, sizeof(bool));
	x.sub->inputs = ho_arena_calloc(a, g->n_tensors + 1, sizeof(int32_t));
	x.sub->outputs = ho_arena_calloc(a, g->n_tensors + 1, sizeof(int32_t));
	if (!x.used || !x.sub->inputs || !x.sub->outputs) {
		ho_err(err, -ENOMEM, "out of memory");
		goto fail;
	}
	/* every tensor of g, at its id, so that subgraphs' outer ids hold; unused, a name */
	for (uint32_t t = 0; t < g->n_tensors; t++)
		if ((ret = ho_graph_add_tensor(x.sub, g->tensors[t].name, err)) < 0)
			goto fail;
	ho_graph_share_header(x.sub, g);
	for (uint32_t i = 0; i < g->n_nodes; i++) {
		uint32_t n = (uint32_t)g->topo[i];

		if (take[n])
			ho_extract_node(&x, n);
	}
	/* its outputs: g's, and whatever a node outside it reads */
	for (uint32_t t = 0; t < g->n_tensors; t++) {
		const struct ho_tensor *gt = &g->tensors[t];
		bool read_outside = gt->flags & HO_T_OUTPUT;

		for (uint32_t c = 0; c < gt->n_consumers && !read_outside; c++)
			read_outside = !take[gt->consumers[c]];
		if (x.used[t] && read_outside && ho_written_inside(&x, (int32_t)t)) {
			x.sub->tensors[t].flags |= HO_T_OUTPUT;
			x.sub->outputs[x.sub->n_outputs++] = (int32_t)t;
		}
	}
	ret = ho_graph_validate(x.sub, err);
	if (ret)
		goto fail;
	free(x.used);
	*out = x.sub;
	return 0;
fail:
	free(x.used);
	ho_graph_free(x.sub);
	return ret;
}
