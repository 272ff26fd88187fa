// SPDX-License-Identifier: MIT
/*
 * An If whose condition is known before the run is its branch: the part of
 * a model planned once a run has decided its values (user/runtime/tail.c)
 * may hold one (torchvision's batched NMS asks whether any box is left),
 * and a branch whose own shapes a run decides (a NonMaxSuppression inside)
 * can be planned only as nodes of the graph around it.  The branch's nodes
 * join the graph under the If's name, its outer references read the
 * graph's tensors, and an Identity per output writes the If's outputs.
 * A branch node with subgraphs of its own (torchvision's nested "any box
 * left?" If) keeps them, copied with their outer references renumbered.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph_priv.h"

/* The branch an If takes by its condition's value, or NULL: not known, or not inlinable. */
static const struct ho_graph *ho_if_branch(const struct ho_graph *g, const struct ho_node *n)
{
	const struct ho_tensor *c;
	const struct ho_attr *a;
	bool taken;

	if (strcmp(n->op_type, "If") || *n->domain || !n->n_inputs || n->inputs[0] < 0)
		return NULL;
	c = &g->tensors[n->inputs[0]];
	if (ho_shape_numel(&c->shape) != 1)
		return NULL;
	if (c->value && c->value->i)
		taken = c->value->i[0] != 0;
	else if (c->value && c->value->f)
		taken = c->value->f[0] != 0;
	else if (c->data && (c->flags & HO_T_KNOWN) && c->dtype == HO_DT_BOOL)
		taken = *(const uint8_t *)c->data != 0;
	else
		return NULL;
	a = ho_node_attr(n, taken ? "then_branch" : "else_branch");
	return a && a->type == HO_ATTR_GRAPH ? a->g[0] : NULL;
}

struct ho_inline {
	const struct ho_graph *g;
	struct ho_graph *out;
	uint32_t *origin; /* per node of out: the node of g it comes from */
};

static int ho_inline_name(struct ho_graph *out, const char *prefix, const char *name,
			  const char **dst, struct ho_error *err)
{
	size_t len = strlen(prefix) + strlen(name) + 2;
	char *s = ho_arena_alloc(out->priv->arena, len);

	if (!s)
		return ho_err(err, -ENOMEM, "out of memory");
	snprintf(s, len, "%s/%s", prefix, name);
	*dst = s;
	return 0;
}

/*
 * A copy of subgraph sg inside out whose outer references name map[] of
 * theirs: the tensors of the graph the branch joined.  Its own tensors keep
 * their ids, so the subgraphs nested in it stay valid as they are.
 */
static struct ho_graph *ho_inline_rehome(struct ho_inline *x, const struct ho_graph *sg,
					 const int32_t *map, struct ho_error *err)
{
	struct ho_graph *c = ho_graph_new(x->out->priv->arena, sg->n_nodes, sg->n_tensors, err);

	if (!c)
		return NULL;
	for (uint32_t t = 0; t < sg->n_tensors; t++) {
		const char *name;

		if (ho_graph_add_tensor(c, sg->tensors[t].name, err) < 0)
			return NULL;
		name = c->tensors[t].name;
		c->tensors[t] = sg->tensors[t];
		c->tensors[t].name = name;
		if (sg->tensors[t].flags & HO_T_OUTER)
			c->tensors[t].outer = map[sg->tensors[t].outer];
	}
	memcpy(c->nodes, sg->nodes, sg->n_nodes * sizeof(*c->nodes));
	c->n_nodes = sg->n_nodes;
	ho_graph_share_header(c, sg);
	c->topo = sg->topo;
	c->inputs = sg->inputs;
	c->n_inputs = sg->n_inputs;
	c->outputs = sg->outputs;
	c->n_outputs = sg->n_outputs;
	c->parent = x->out;
	return c;
}

/* dst (a copy of a branch node) reads the graph's tensors: implicit ids and subgraphs. */
static int ho_inline_implicit(struct ho_inline *x, struct ho_node *dst, const int32_t *map,
			      struct ho_error *err)
{
	struct ho_arena *a = x->out->priv->arena;
	int32_t *imp = ho_arena_calloc(a, dst->n_implicit + 1, sizeof(int32_t));
	struct ho_attr *attrs = ho_arena_calloc(a, dst->n_attrs + 1, sizeof(*attrs));
	struct ho_graph **subs = ho_arena_calloc(a, dst->n_subgraphs + 1, sizeof(*subs));
	uint32_t n_subs = 0;

	if (!imp || !attrs || !subs)
		return ho_err(err, -ENOMEM, "out of memory");
	for (uint32_t k = 0; k < dst->n_implicit; k++)
		imp[k] = map[dst->implicit[k]];
	dst->implicit = imp;
	memcpy(attrs, dst->attrs, dst->n_attrs * sizeof(*attrs));
	for (uint32_t k = 0; k < dst->n_attrs; k++) {
		struct ho_graph **gs;

		if (attrs[k].type != HO_ATTR_GRAPH && attrs[k].type != HO_ATTR_GRAPHS)
			continue;
		gs = ho_arena_calloc(a, attrs[k].n + 1, sizeof(*gs));
		if (!gs)
			return ho_err(err, -ENOMEM, "out of memory");
		for (size_t j = 0; j < attrs[k].n; j++) {
			if (!(gs[j] = ho_inline_rehome(x, attrs[k].g[j], map, err)))
				return err->code;
			if (n_subs < dst->n_subgraphs) /* in the attributes' order, as imported */
				subs[n_subs++] = gs[j];
		}
		attrs[k].g = gs;
	}
	dst->attrs = attrs;
	dst->subgraphs = subs;
	return 0;
}

/* A node of out copying src, its tensor ids through map (NULL: the same), from node from. */
static int ho_inline_node(struct ho_inline *x, const struct ho_node *src, const int32_t *map,
			  const char *prefix, uint32_t from, struct ho_error *err)
{
	struct ho_arena *a = x->out->priv->arena;
	struct ho_node *dst = &x->out->nodes[x->out->n_nodes];
	int ret;

	*dst = *src;
	memset(&dst->feat, 0, sizeof(dst->feat));
	dst->flags &= ~HO_N_FOLDED;
	if (prefix && (ret = ho_inline_name(x->out, prefix, src->name, &dst->name, err)))
		return ret;
	if (map) {
		dst->inputs = ho_arena_calloc(a, src->n_inputs + 1, sizeof(int32_t));
		dst->outputs = ho_arena_calloc(a, src->n_outputs + 1, sizeof(int32_t));
		if (!dst->inputs || !dst->outputs)
			return ho_err(err, -ENOMEM, "out of memory");
		for (uint32_t k = 0; k < src->n_inputs; k++)
			dst->inputs[k] = src->inputs[k] < 0 ? -1 : map[src->inputs[k]];
		for (uint32_t k = 0; k < src->n_outputs; k++)
			dst->outputs[k] = src->outputs[k] < 0 ? -1 : map[src->outputs[k]];
		if (src->n_implicit && (ret = ho_inline_implicit(x, dst, map, err)))
			return ret;
	}
	for (uint32_t k = 0; k < dst->n_outputs; k++)
		if (dst->outputs[k] >= 0)
			x->out->tensors[dst->outputs[k]].producer = (int32_t)x->out->n_nodes;
	x->origin[x->out->n_nodes++] = from;
	return 0;
}

/* If node id of g replaced by the nodes of branch b. */
static int ho_inline_branch(struct ho_inline *x, uint32_t id, const struct ho_graph *b,
			    struct ho_error *err)
{
	const struct ho_node *n = &x->g->nodes[id];
	int32_t *map = calloc(b->n_tensors + 1, sizeof(int32_t));
	int ret = 0;

	if (!map)
		return ho_err(err, -ENOMEM, "out of memory");
	for (uint32_t i = 0; i < b->n_tensors && !ret; i++) {
		const struct ho_tensor *bt = &b->tensors[i];
		const char *name;
		int32_t t;

		if (bt->flags & HO_T_OUTER) {
			map[i] = bt->outer;
			continue;
		}
		if ((ret = ho_inline_name(x->out, n->name, bt->name, &name, err)))
			break;
		if ((t = ho_graph_add_tensor(x->out, name, err)) < 0) {
			ret = t;
			break;
		}
		map[i] = t;
		x->out->tensors[t].dtype = bt->dtype;
		x->out->tensors[t].decl = bt->decl;
		x->out->tensors[t].flags =
		    bt->flags & (HO_T_INITIALIZER | HO_T_CONSTANT | HO_T_DECLARED);
		if (bt->flags &
		    (HO_T_INITIALIZER | HO_T_CONSTANT)) { /* a Constant's too: set at import */
			x->out->tensors[t].shape = bt->shape;
			x->out->tensors[t].bytes = bt->bytes;
			x->out->tensors[t].data = bt->data;
			x->out->tensors[t].data_len = bt->data_len;
			x->out->tensors[t].value = bt->value;
		}
	}
	for (uint32_t i = 0; i < b->n_nodes && !ret; i++)
		ret = ho_inline_node(x, &b->nodes[b->topo[i]], map, n->name, id, err);
	/* an Identity per output: a branch output may be an outer tensor or an input */
	for (uint32_t k = 0; k < n->n_outputs && !ret; k++) {
		struct ho_node idn = {.op_type = "Identity",
				      .domain = "",
				      .opset = n->opset,
				      .n_inputs = 1,
				      .n_outputs = 1};
		int32_t io[2] = {map[b->outputs[k]], n->outputs[k]};
		char nm[32];

		if (n->outputs[k] < 0)
			continue;
		snprintf(nm, sizeof(nm), "output_%u", k);
		idn.name = nm;
		idn.inputs = ho_arena_alloc(x->out->priv->arena, sizeof(io));
		if (!idn.inputs) {
			ret = ho_err(err, -ENOMEM, "out of memory");
			break;
		}
		memcpy(idn.inputs, io, sizeof(io));
		idn.outputs = idn.inputs + 1;
		ret = ho_inline_node(x, &idn, NULL, n->name, id, err);
	}
	free(map);
	return ret;
}

int ho_graph_inline_ifs(const struct ho_graph *g, struct ho_graph **out, uint32_t **origin,
			struct ho_error *err)
{
	struct ho_inline x = {.g = g};
	uint32_t cap_n = g->n_nodes, cap_t = g->n_tensors;
	int ret;

	*out = NULL;
	*origin = NULL;
	for (uint32_t i = 0; i < g->n_nodes; i++) {
		const struct ho_graph *b = ho_if_branch(g, &g->nodes[i]);

		if (b) {
			cap_n += b->n_nodes + g->nodes[i].n_outputs;
			cap_t += b->n_tensors;
		}
	}
	if (cap_n == g->n_nodes)
		return 0; /* no If to inline */
	x.out = ho_graph_new(NULL, cap_n, cap_t, err);
	x.origin = calloc(cap_n + 1, sizeof(uint32_t));
	if (!x.out || !x.origin) {
		ret = x.out ? ho_err(err, -ENOMEM, "out of memory") : err->code;
		goto fail;
	}
	for (uint32_t t = 0; t < g->n_tensors; t++) {
		struct ho_tensor *d;
		const char *name;

		if ((ret = ho_graph_add_tensor(x.out, g->tensors[t].name, err)) < 0)
			goto fail;
		d = &x.out->tensors[t];
		name = d->name;
		*d = g->tensors[t]; /* same id, shape, flags and values (g's bytes) */
		d->name = name;
		d->producer = -1;
		d->n_consumers = 0;
		d->consumers = NULL;
	}
	ho_graph_share_header(x.out, g);
	x.out->inputs = g->inputs;
	x.out->n_inputs = g->n_inputs;
	x.out->outputs = g->outputs;
	x.out->n_outputs = g->n_outputs;
	for (uint32_t i = 0; i < g->n_nodes; i++) {
		uint32_t id = (uint32_t)g->topo[i];
		const struct ho_graph *b = ho_if_branch(g, &g->nodes[id]);

		ret = b ? ho_inline_branch(&x, id, b, err)
			: ho_inline_node(&x, &g->nodes[id], NULL, NULL, id, err);
		if (ret)
			goto fail;
	}
	if ((ret = ho_graph_validate(x.out, err)))
		goto fail;
	*out = x.out;
	*origin = x.origin;
	return 0;
fail:
	free(x.origin);
	ho_graph_free(x.out);
	return ret;
}
