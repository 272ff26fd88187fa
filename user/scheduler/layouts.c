// SPDX-License-Identifier: MIT
/*
 * The layouts a placement gives its tensors, and what turning them between
 * layouts costs.  A channels-last device (the CPU backend: oneDNN's
 * convolutions run several times faster on NHWC) keeps an activation
 * channels-last only where every kernel that touches it takes that layout,
 * and an element-wise or resize kernel keeps its output in its inputs'
 * layout.  A node placed on a plain device (PoCL's convolutions read NCHW)
 * so makes tensors plain far from itself: along the PP-OCRv4 detector's
 * neck, Adds and Resizes carried it to cpu0's convolutions, which then spent
 * 3 ms of a 42 ms run in oneDNN reorders that no node's measured time held.
 * The rule is the executor's (user/runtime/layouts.c), over the problem's
 * tasks and items as the backends answered for each device.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "heteroopt/box.h"
#include "heteroopt/graph.h"
#include "sched_priv.h"

void ho_layouts_under(const struct ho_problem *p, const uint16_t *assign, uint8_t *nhwc)
{
	const uint8_t *cls = p->task_layout;
	uint32_t d = p->d;
	bool changed = true;

	/* channels-last where the writer and every reader take it */
	for (uint32_t k = 0; k < p->m; k++) {
		uint32_t prod = p->item_prod[k];
		bool ok = (p->item_layout[k] & HO_ITEM_MAY_NHWC) && prod != HO_EXTERNAL &&
			  cls[prod * d + assign[prod]] != HO_LAYOUT_PLAIN;

		for (uint32_t c = p->cons_off[k];
		     ok && !(p->item_layout[k] & HO_ITEM_LAYOUT_FREE) && c < p->cons_off[k + 1];
		     c++)
			ok = cls[p->cons[c] * d + assign[p->cons[c]]] != HO_LAYOUT_PLAIN;
		nhwc[k] = ok;
	}
	/* a kernel that keeps its inputs' layout, given inputs and output that disagree,
	 * makes them all plain */
	while (changed) {
		changed = false;
		for (uint32_t t = 0; t < p->n; t++) {
			uint32_t y = p->task_out[t];
			bool mismatch = false;

			if (y == HO_NO_ITEM || cls[t * d + assign[t]] != HO_LAYOUT_SAME)
				continue;
			for (uint32_t e = p->in_off[t]; e < p->in_off[t + 1] && !mismatch; e++)
				mismatch = p->in_tied[e] && nhwc[p->in_items[e]] != nhwc[y];
			if (!mismatch)
				continue;
			nhwc[y] = 0;
			for (uint32_t e = p->in_off[t]; e < p->in_off[t + 1]; e++)
				nhwc[p->in_items[e]] = 0;
			changed = true;
		}
	}
}

/*
 * A convolution or concatenation on a channels-last device works in NHWC
 * when any of its 4-D tensors is, and turns each one that is plain.
 */
double ho_relayout_time(const struct ho_problem *p, uint32_t t, int dev, const uint8_t *nhwc)
{
	uint32_t d = p->d, y = p->task_out[t];
	bool nhwc_work = y != HO_NO_ITEM && nhwc[y];
	double s = 0;

	if (!(p->channels_last >> dev & 1) ||
	    p->task_layout[t * d + (uint32_t)dev] != HO_LAYOUT_ANY)
		return 0;
	for (uint32_t e = p->in_off[t]; e < p->in_off[t + 1]; e++)
		nhwc_work |= (p->item_layout[p->in_items[e]] & HO_ITEM_4D) && nhwc[p->in_items[e]];
	if (!nhwc_work)
		return 0;
	if (y != HO_NO_ITEM && (p->item_layout[y] & HO_ITEM_4D) && !nhwc[y])
		s += p->relayout[(size_t)y * d + (uint32_t)dev];
	for (uint32_t e = p->in_off[t]; e < p->in_off[t + 1]; e++) {
		uint32_t k = p->in_items[e];

		if ((p->item_layout[k] & HO_ITEM_4D) && !nhwc[k])
			s += p->relayout[(size_t)k * d + (uint32_t)dev];
	}
	return s;
}

/* What each task pays on channels-last device j with every task there (the host where
 * j has no kernel for it), as the probe measured models. */
static int ho_relayout_alone(struct ho_problem *p, uint32_t j)
{
	uint16_t *all = malloc((p->n + 1) * sizeof(uint16_t));
	uint8_t *nhwc = malloc(p->m + 1);

	if (!all || !nhwc) {
		free(all);
		free(nhwc);
		return -ENOMEM;
	}
	for (uint32_t t = 0; t < p->n; t++)
		all[t] = (uint16_t)(p->allowed[t] >> j & 1 ? j : (uint32_t)p->default_device);
	ho_layouts_under(p, all, nhwc);
	for (uint32_t t = 0; t < p->n; t++)
		p->relayout_alone[t * p->d + j] = ho_relayout_time(p, t, (int)j, nhwc);
	free(all);
	free(nhwc);
	return 0;
}

/*
 * What a node turns with every node on its device is in its measured time
 * where the probe ran it in a model, and in no class model: the sweep's rows
 * keep their tensors channels-last.  So a node priced without a measurement
 * of its own pays it on top: the PP-OCRv4 detector's stem at 1280x736 turned
 * its 11 MB input for 0.68 ms of its 2.6.
 */
static void ho_charge_alone(const struct ho_graph *g, const struct ho_profile *prof,
			    const int32_t *task_of, struct ho_problem *p)
{
	uint32_t d = p->d;

	for (uint32_t i = 0; i < g->n_nodes; i++) {
		int32_t t = task_of[i];

		for (uint32_t j = 0; t >= 0 && j < d; j++) {
			double *c = &p->comp[(size_t)t * d + j];

			if ((p->channels_last >> j & 1) && isfinite(*c) &&
			    !ho_profile_node_measured(prof, g, &g->nodes[i], (int)j))
				*c += p->relayout_alone[(size_t)t * d + j];
		}
	}
}

void ho_layouts_drop(struct ho_problem *p)
{
	free(p->task_layout);
	free(p->item_layout);
	free(p->in_tied);
	free(p->task_out);
	free(p->relayout);
	free(p->relayout_alone);
	p->task_layout = p->item_layout = p->in_tied = NULL;
	p->task_out = NULL;
	p->relayout = p->relayout_alone = NULL;
	p->channels_last = 0;
}

/* Whether tensor tt, read by node nd, must share nd's output layout (ho_rt_layouts). */
static bool ho_tied(const struct ho_graph *g, const struct ho_node *nd, int32_t tt)
{
	const struct ho_op_info *oi = ho_op_info(nd->op_type);
	const struct ho_tensor *x = &g->tensors[tt], *y;

	if (x->shape.rank != 4 || !nd->n_outputs || nd->outputs[0] < 0)
		return false;
	y = &g->tensors[nd->outputs[0]];
	if (nd->n_inputs && nd->inputs[0] == tt && !(oi && (oi->flags & HO_OP_BINARY)))
		return true;
	return y->shape.rank == 4 &&
	       !memcmp(x->shape.dim, y->shape.dim, 4 * sizeof(x->shape.dim[0]));
}

int ho_problem_layouts(const struct ho_graph *g, const struct ho_profile *prof,
		       const struct ho_backend_view *bv, const int32_t *task_of,
		       const int32_t *item_of, struct ho_problem *p)
{
	uint32_t d = p->d, n = p->n, m = p->m, ne = p->in_off[n];
	uint64_t all = d >= 64 ? ~0ull : (1ull << d) - 1;
	int32_t *tensor_of = NULL;
	bool measured = false;

	for (uint32_t j = 0; j < d; j++)
		measured |=
		    (bv->channels_last >> j & 1) && ho_profile_relayout_bw(prof, (int)j) > 0;
	/* unmeasured, turning costs nothing, but which tensors are channels-last still
	 * decides which Concats take their inputs in place */
	if (!(bv->channels_last & all))
		return 0;
	p->channels_last = bv->channels_last;
	p->task_layout = malloc((size_t)n * d + 1);
	p->item_layout = calloc(m + 1, 1);
	p->in_tied = calloc(ne + 1, 1);
	p->task_out = malloc((n + 1) * sizeof(uint32_t));
	p->relayout = calloc((size_t)m * d + 1, sizeof(double));
	p->relayout_alone = calloc((size_t)n * d + 1, sizeof(double));
	tensor_of = malloc((m + 1) * sizeof(int32_t));
	if (!p->task_layout || !p->item_layout || !p->in_tied || !p->task_out || !p->relayout ||
	    !p->relayout_alone || !tensor_of)
		goto nomem;
	for (uint32_t i = 0; i < g->n_tensors; i++)
		if (item_of[i] >= 0)
			tensor_of[item_of[i]] = (int32_t)i;
	for (uint32_t k = 0; k < m; k++) {
		const struct ho_tensor *t = &g->tensors[tensor_of[k]];

		if (t->shape.rank != 4 || t->dtype != HO_DT_FLOAT)
			continue;
		p->item_layout[k] = HO_ITEM_4D;
		if (!(t->flags & (HO_T_INPUT | HO_T_OUTPUT)))
			p->item_layout[k] |= HO_ITEM_MAY_NHWC;
		if (ho_shape_layout_free(&t->shape))
			p->item_layout[k] |= HO_ITEM_LAYOUT_FREE;
		for (uint32_t j = 0; j < d; j++) {
			double bw = ho_profile_relayout_bw(prof, (int)j);

			if ((p->channels_last >> j & 1) && bw > 0)
				p->relayout[(size_t)k * d + j] = (double)t->bytes / bw;
		}
	}
	for (uint32_t i = 0; i < g->n_nodes; i++) {
		const struct ho_node *nd = &g->nodes[i];
		int32_t t = task_of[i];

		if (t < 0)
			continue;
		memcpy(p->task_layout + (size_t)t * d, bv->layout + (size_t)i * d, d);
		p->task_out[t] =
		    nd->n_outputs && nd->outputs[0] >= 0 && item_of[nd->outputs[0]] >= 0
			? (uint32_t)item_of[nd->outputs[0]]
			: HO_NO_ITEM;
		for (uint32_t e = p->in_off[t]; e < p->in_off[t + 1]; e++)
			p->in_tied[e] = ho_tied(g, nd, tensor_of[p->in_items[e]]);
	}
	for (uint32_t j = 0; j < d; j++)
		if ((p->channels_last >> j & 1) && ho_relayout_alone(p, j))
			goto nomem;
	if (measured)
		ho_charge_alone(g, prof, task_of, p);
	/* every device channels-last (the two-CPU box): a plan keeps the layouts each
	 * device alone keeps, and the simulator has nothing to work out per plan */
	if ((bv->channels_last & all) == all) {
		uint16_t *first = calloc(n + 1, sizeof(uint16_t));

		if (!first || !(p->item_nhwc = calloc(m + 1, 1))) {
			free(first);
			goto nomem;
		}
		ho_layouts_under(p, first, p->item_nhwc);
		free(first);
		ho_layouts_drop(p);
	}
	free(tensor_of);
	return 0;
nomem:
	free(tensor_of);
	return -ENOMEM;
}
