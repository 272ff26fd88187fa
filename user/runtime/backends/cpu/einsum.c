// SPDX-License-Identifier: MIT
/*
 * Einsum over float32, float64, int32 and int64, as one loop: every output
 * element sums, over the labels the output drops, the product of the
 * inputs at those labels.  A label repeated in one term (a diagonal) walks
 * the sum of its axes' strides; an ellipsis axis of extent 1 broadcasts.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cpu.h"
#include "heteroopt/opsem.h"

struct ho_einsum_plan {
	struct ho_einsum e;
	int dtype;
	const void *in[HO_EINSUM_MAX_IN];
	void *out;
	int n_sum, sum_label[HO_EINSUM_MAX_IN * HO_MAX_RANK];
	int64_t dim[HO_EINSUM_MAX_IN * HO_MAX_RANK + HO_MAX_RANK];
	/* per input, each label's step in elements (0: not in it, or broadcast) */
	int64_t step[HO_EINSUM_MAX_IN][HO_EINSUM_MAX_IN * HO_MAX_RANK + HO_MAX_RANK];
};

static void es_set(int dt, void *p, int64_t i, double v, int64_t iv)
{
	switch (dt) {
	case HO_DT_FLOAT:
		((float *)p)[i] = (float)v;
		break;
	case HO_DT_DOUBLE:
		((double *)p)[i] = v;
		break;
	case HO_DT_INT32:
		((int32_t *)p)[i] = (int32_t)iv;
		break;
	default:
		((int64_t *)p)[i] = iv;
		break;
	}
}

static int ho_run_einsum(const struct ho_kernel *k)
{
	const struct ho_einsum_plan *p = k->einsum;
	const struct ho_einsum *e = &p->e;
	int64_t oi[HO_MAX_RANK] = {0}, n_out = 1, off[HO_EINSUM_MAX_IN] = {0};
	bool ints = p->dtype == HO_DT_INT32 || p->dtype == HO_DT_INT64;

	for (int a = 0; a < e->out_rank; a++)
		n_out *= p->dim[e->out_label[a]];
	for (int64_t o = 0; o < n_out; o++) {
		int64_t si[HO_EINSUM_MAX_IN * HO_MAX_RANK] = {0}, iacc = 0;
		double acc = 0;
		bool empty = false;

		for (int s = 0; s < p->n_sum; s++)
			empty |= p->dim[p->sum_label[s]] == 0;
		for (; !empty;) {
			double prod = 1;
			int64_t iprod = 1;

			for (int i = 0; i < e->n_in; i++) {
				int64_t at = off[i];

				for (int s = 0; s < p->n_sum; s++)
					at += si[s] * p->step[i][p->sum_label[s]];
				if (ints)
					iprod *= ho_cpu_int(p->in[i], p->dtype, at);
				else
					prod *= ho_cpu_real(p->in[i], p->dtype, at);
			}
			acc += prod;
			iacc += iprod;
			int s = p->n_sum - 1;

			for (; s >= 0 && ++si[s] == p->dim[p->sum_label[s]]; s--)
				si[s] = 0;
			if (s < 0)
				break;
		}
		es_set(p->dtype, p->out, o, acc, iacc);
		for (int a = e->out_rank - 1; a >= 0; a--) {
			int l = e->out_label[a];

			for (int i = 0; i < e->n_in; i++)
				off[i] += p->step[i][l];
			if (++oi[a] < p->dim[l])
				break;
			for (int i = 0; i < e->n_in; i++)
				off[i] -= p->step[i][l] * oi[a];
			oi[a] = 0;
		}
	}
	return 0;
}

int ho_cpu_prep_einsum(const struct ho_graph *g, const struct ho_node *n, void *const *buf,
		       struct ho_kernel *k, struct ho_error *err)
{
	const struct ho_attr *eq = ho_node_attr(n, "equation");
	const struct ho_tensor *y = &g->tensors[n->outputs[0]];
	struct ho_einsum_plan *p;
	int ranks[HO_EINSUM_MAX_IN];
	bool in_out[HO_EINSUM_MAX_IN * HO_MAX_RANK + HO_MAX_RANK] = {false};

	if (!eq || eq->type != HO_ATTR_STRING || n->n_inputs < 1 ||
	    n->n_inputs > HO_EINSUM_MAX_IN ||
	    (y->dtype != HO_DT_FLOAT && y->dtype != HO_DT_DOUBLE && y->dtype != HO_DT_INT32 &&
	     y->dtype != HO_DT_INT64))
		return ho_cpu_unsupported(err, n, "runs float32/64 and int32/64 equations only");
	if (!(p = k->einsum = calloc(1, sizeof(*p))))
		return ho_err(err, -ENOMEM, "out of memory");
	for (uint32_t i = 0; i < n->n_inputs; i++) {
		const struct ho_tensor *x = ho_node_input(g, n, i);

		if (!x || x->dtype != y->dtype)
			return ho_cpu_unsupported(err, n, "needs inputs of its output's type");
		ranks[i] = x->shape.rank;
		p->in[i] = buf[n->inputs[i]];
	}
	if (ho_einsum_parse(eq->s, (int)n->n_inputs, ranks, &p->e, err))
		return ho_cpu_unsupported(err, n, "cannot parse its equation");
	p->dtype = y->dtype;
	p->out = buf[n->outputs[0]];
	for (int l = 0; l < p->e.n_labels; l++)
		p->dim[l] = 1;
	for (uint32_t i = 0; i < n->n_inputs; i++) {
		const struct ho_shape *s = &ho_node_input(g, n, i)->shape;
		int64_t st = 1;

		for (int a = s->rank - 1; a >= 0; a--) {
			int l = p->e.in_label[i][a];

			if (s->dim[a] != 1) {
				p->dim[l] = s->dim[a];
				p->step[i][l] += st;
			}
			st *= s->dim[a];
		}
	}
	for (int a = 0; a < p->e.out_rank; a++)
		in_out[p->e.out_label[a]] = true;
	for (int l = 0; l < p->e.n_labels; l++)
		if (!in_out[l])
			p->sum_label[p->n_sum++] = l;
	k->kind = HO_K_LOOP;
	k->typed.run = ho_run_einsum;
	return 0;
}
