// SPDX-License-Identifier: MIT
/*
 * Which nodes run as views, their output a run of their input's bytes that the
 * runtime points at instead of copying: the view operators (Reshape, Flatten,
 * Squeeze, Identity, ...), a Dropout that is the identity, a Transpose that moves
 * only axes of extent 1, and a Gather or Slice of constant indices whose output is
 * one contiguous run of its input (swin_t's query, key and value, split by three
 * Gathers on the outer axis of one tensor), at an offset (ho_view_offset).
 */
#include <string.h>

#include "graph_priv.h"
#include "heteroopt/opsem.h"

/* A known scalar's value (a constant's bytes, or a value folded at load); false: not known. */
static bool ho_known_scalar(const struct ho_tensor *t, double *v)
{
	if (!t || ho_shape_numel(&t->shape) != 1)
		return false;
	if (t->value && t->value->count == 1) {
		*v = t->value->f ? t->value->f[0] : (double)t->value->i[0];
		return true;
	}
	if (!t->data || t->data_len < (uint64_t)ho_dtype_size(t->dtype))
		return false;
	switch (t->dtype) {
	case HO_DT_FLOAT:
		*v = *(const float *)t->data;
		return true;
	case HO_DT_DOUBLE:
		*v = *(const double *)t->data;
		return true;
	case HO_DT_BOOL:
		*v = *(const uint8_t *)t->data;
		return true;
	default:
		return false;
	}
}

/*
 * Transpose n keeps its input's bytes in their order: the axes of extent other than 1
 * come out in the order they went in ([1, 197, 768] to [197, 1, 768], twice in each
 * layer of a vision transformer).
 */
static bool ho_transpose_keeps_order(const struct ho_graph *g, const struct ho_node *n)
{
	const struct ho_shape *s;
	int64_t perm[HO_MAX_RANK], last = -1;

	if (n->n_inputs != 1 || n->inputs[0] < 0 || !n->n_outputs || n->outputs[0] < 0)
		return false;
	s = &g->tensors[n->inputs[0]].shape;
	if (s->rank < 1 || !ho_transpose_perm(n, s->rank, perm))
		return false;
	for (int i = 0; i < s->rank; i++) {
		if (s->dim[perm[i]] < 0)
			return false;
		if (s->dim[perm[i]] == 1)
			continue;
		if (perm[i] < last)
			return false;
		last = perm[i];
	}
	return true;
}

/* A Constant's or initializer's bytes, or a value folded at load as int64, for ho_slice_node. */
static const void *ho_known_bytes(const struct ho_tensor *t)
{
	if (!t || !(t->flags & HO_T_KNOWN))
		return NULL;
	if (t->value && t->value->i && t->dtype == HO_DT_INT64)
		return t->value->i;
	return ho_tensor_holds_bytes(t) ? t->data : NULL;
}

/* Tensor t, or one a chain of views makes of it, is an output of the graph. */
static bool ho_shown_as_output(const struct ho_graph *g, int32_t t, int depth)
{
	const struct ho_tensor *tt = &g->tensors[t];

	if ((tt->flags & HO_T_OUTPUT) || depth >= 64) /* deeper than that: assume it is */
		return true;
	for (uint32_t c = 0; c < tt->n_consumers; c++) {
		const struct ho_node *u = &g->nodes[tt->consumers[c]];

		/* any node that may run as a view, without asking where its output goes */
		if ((ho_op_is_view(u->op_type) || !strcmp(u->op_type, "Transpose") ||
		     !strcmp(u->op_type, "Gather") || !strcmp(u->op_type, "Slice")) &&
		    u->n_inputs && u->inputs[0] == t && u->n_outputs && u->outputs[0] >= 0 &&
		    ho_shown_as_output(g, u->outputs[0], depth + 1))
			return true;
	}
	return false;
}

/*
 * Gather or Slice n's output is one contiguous run of its input's bytes, *off bytes in:
 * constant indices, shapes known, every axis before the last one cut kept to one
 * index, that one in steps of 1, the axes after it whole.  Not for an output the
 * graph gives out (or a view of it does): its bytes would be the whole input's.
 */
static bool ho_run_of_input(const struct ho_graph *g, const struct ho_node *n, uint64_t *off)
{
	const struct ho_tensor *x = ho_node_input(g, n, 0);
	int64_t in[HO_MAX_RANK], stride = 1, at = 0, cut = -1, esize;
	struct ho_slice sl;
	struct ho_error e;
	int r;

	if (!x || !n->n_outputs || n->outputs[0] < 0 || x->dtype == HO_DT_STRING ||
	    (esize = ho_dtype_size(x->dtype)) <= 0 || (r = x->shape.rank) < 1 || r > HO_MAX_RANK)
		return false;
	for (int a = 0; a < r; a++)
		if ((in[a] = x->shape.dim[a]) < 0)
			return false;
	if (!strcmp(n->op_type, "Gather")) {
		const struct ho_tensor *ix = ho_node_input(g, n, 1);
		const void *ib = ho_known_bytes(ix);
		int64_t axis = ho_node_attr_i(n, "axis", 0), idx;

		axis += axis < 0 ? r : 0;
		if (!ib || n->n_inputs != 2 || axis < 0 || axis >= r ||
		    ho_shape_numel(&ix->shape) != 1 || ho_tensor_ints(ix, ib, &idx, 1) != 1)
			return false;
		idx += idx < 0 ? in[axis] : 0;
		if (idx < 0 || idx >= in[axis])
			return false;
		for (int a = 0; a < r; a++) {
			sl.first[a] = a == axis ? idx : 0;
			sl.step[a] = 1;
			sl.dim[a] = a == axis ? 1 : in[a];
		}
	} else {
		const void *data[5] = {NULL};

		for (uint32_t i = 1; i < 5 && i < n->n_inputs; i++)
			if (n->inputs[i] >= 0 &&
			    !(data[i] = ho_known_bytes(&g->tensors[n->inputs[i]])))
				return false;
		if (ho_slice_node(g, n, data, &sl, &e))
			return false;
	}
	for (int a = 0; a < r; a++) {
		if (sl.dim[a] <= 0)
			return false; /* nothing to point at */
		if (sl.dim[a] != in[a])
			cut = a;
	}
	for (int a = r - 1; a >= 0; a--) {
		if (a < cut && sl.dim[a] != 1)
			return false;
		if (a == cut && sl.dim[a] > 1 && sl.step[a] != 1)
			return false;
		at += sl.first[a] * stride;
		stride *= in[a];
	}
	if (ho_shown_as_output(g, n->outputs[0], 0))
		return false;
	*off = (uint64_t)(at * esize);
	return true;
}

uint64_t ho_view_offset(const struct ho_graph *g, const struct ho_node *n)
{
	uint64_t off = 0;

	if (!*n->domain && (!strcmp(n->op_type, "Gather") || !strcmp(n->op_type, "Slice")) &&
	    !ho_run_of_input(g, n, &off))
		return 0;
	return off;
}

bool ho_node_is_view(const struct ho_graph *g, const struct ho_node *n)
{
	double training = 0, ratio = 0.5;
	uint64_t off;

	if (!*n->domain && !strcmp(n->op_type, "Transpose"))
		return ho_transpose_keeps_order(g, n);
	if (!*n->domain && (!strcmp(n->op_type, "Gather") || !strcmp(n->op_type, "Slice")))
		return ho_run_of_input(g, n, &off);
	if (!ho_op_is_view(n->op_type))
		return false;
	if (strcmp(n->op_type, "Dropout") || n->n_inputs < 3 || n->inputs[2] < 0)
		return true;
	/* training mode drops elements at random, but for a ratio of 0 (swin_t's) */
	if (!ho_known_scalar(&g->tensors[n->inputs[2]], &training))
		return false;
	if (n->n_inputs > 1 && n->inputs[1] >= 0 &&
	    !ho_known_scalar(&g->tensors[n->inputs[1]], &ratio))
		return !training;
	return !training || ratio == 0;
}

/*
 * Concat in place, the other way round: each input of a Concat written straight into
 * its run of the output, the Concat then running nothing.  Its output's axes before the
 * one it joins on are all of extent 1, so that each input is one run of the output's
 * bytes (a channel Concat of one image, a detector's per-level boxes).  An input is
 * written there by the node that writes it or the tensor it is a view of, whole (a
 * detector head's Transpose before its Reshape), if that node runs and writes bytes of
 * its own: not a
 * constant, a graph input or output (they live in the caller's memory), nor a view's
 * (its bytes are its source's); and if no Conv's chain adds its result over it
 * (ho_conv_residual), which would change the Concat's bytes after it ran.
 */
#define HO_T_HELD                                                                                  \
	(HO_T_INITIALIZER | HO_T_CONSTANT | HO_T_FOLDED | HO_T_KNOWN | HO_T_INPUT | HO_T_OUTER |   \
	 HO_T_OUTPUT)

static bool ho_may_write_into(const struct ho_graph *g, int32_t t)
{
	const struct ho_tensor *tt = &g->tensors[t];
	int32_t p = tt->producer, post;

	if (p < 0 || !tt->bytes || (tt->flags & HO_T_HELD) || !ho_node_is_task(&g->nodes[p]) ||
	    ho_node_is_view(g, &g->nodes[p]) || ho_shown_as_output(g, t, 0))
		return false;
	for (uint32_t c = 0; c < tt->n_consumers; c++) {
		int32_t a = tt->consumers[c], other = ho_other_input(g, a, t), q;

		if (strcmp(g->nodes[a].op_type, "Add") || other < 0 ||
		    (q = g->tensors[other].producer) < 0)
			continue;
		/* the Add reading t is the residual Add of the Conv that made its other operand */
		if (ho_conv_residual(g, (uint32_t)q, -1, &post) == a)
			return false;
		/* a batch norm folded into the Conv before it */
		if (!strcmp(g->nodes[q].op_type, "BatchNormalization") && g->nodes[q].n_inputs &&
		    g->nodes[q].inputs[0] >= 0 &&
		    (p = g->tensors[g->nodes[q].inputs[0]].producer) >= 0 &&
		    ho_conv_residual(g, (uint32_t)p, q, &post) == a)
			return false;
	}
	return true;
}

int32_t ho_written_source(const struct ho_graph *g, int32_t t)
{
	for (int depth = 0; depth < 64; depth++) {
		int32_t p = g->tensors[t].producer;
		const struct ho_node *n = p >= 0 ? &g->nodes[p] : NULL;

		if (!n || !ho_node_is_view(g, n) || !n->n_inputs || n->inputs[0] < 0)
			return t;
		/* a run of part of its source (a Slice's) would put the rest in its neighbours' */
		if (g->tensors[n->inputs[0]].bytes != g->tensors[t].bytes || ho_view_offset(g, n))
			return -1;
		t = n->inputs[0];
	}
	return -1;
}

/* Concat n's inputs are runs of its output: each one's offset into off[] (bytes). */
static bool ho_concat_runs(const struct ho_graph *g, const struct ho_node *n, uint64_t *off)
{
	const struct ho_tensor *y;
	int64_t axis = ho_node_attr_i(n, "axis", 0);
	uint64_t at = 0;

	if (*n->domain || strcmp(n->op_type, "Concat") || n->n_inputs < 2 || n->n_outputs != 1 ||
	    n->outputs[0] < 0 || !ho_node_is_task(n))
		return false;
	y = &g->tensors[n->outputs[0]];
	axis += axis < 0 ? y->shape.rank : 0;
	if (!y->bytes || (y->flags & HO_T_HELD) || axis < 0 || axis >= y->shape.rank ||
	    ho_shown_as_output(g, n->outputs[0], 0))
		return false;
	for (int64_t a = 0; a < axis; a++)
		if (y->shape.dim[a] != 1)
			return false;
	for (uint32_t k = 0; k < n->n_inputs; k++) {
		int32_t t = n->inputs[k], s = t >= 0 ? ho_written_source(g, t) : -1;

		if (s < 0 || g->tensors[t].dtype != y->dtype)
			return false;
		for (uint32_t j = 0; j < k; j++) /* one tensor cannot lie in two places */
			if (ho_written_source(g, n->inputs[j]) == s)
				return false;
		off[k] = at;
		at += g->tensors[t].bytes;
	}
	return at == y->bytes;
}

void ho_concat_in_place(const struct ho_graph *g, int32_t *by, uint64_t *off)
{
	uint64_t at[64];

	for (uint32_t t = 0; t < g->n_tensors; t++) {
		by[t] = -1;
		off[t] = 0;
	}
	/* the last Concat first: an input two Concats read lies in the later one's output
	 * (DenseNet's features, each read by every later layer's Concat) */
	for (uint32_t i = g->n_nodes; i-- > 0;) {
		int32_t id = g->topo[i];
		const struct ho_node *n = &g->nodes[id];
		bool ok = n->n_inputs <= 64 && ho_concat_runs(g, n, at);

		for (uint32_t k = 0; ok && k < n->n_inputs; k++) {
			int32_t s = ho_written_source(g, n->inputs[k]);

			ok = by[s] < 0 && ho_may_write_into(g, s);
		}
		for (uint32_t k = 0; ok && k < n->n_inputs; k++) {
			by[ho_written_source(g, n->inputs[k])] = id;
			off[ho_written_source(g, n->inputs[k])] = at[k];
		}
	}
}
