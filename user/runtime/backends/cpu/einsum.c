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

/*
 * A two-input float32 equation that is a batched matrix product, each label
 * once per term (attention's "BGHID,BGHJD->BGHIJ" and "BGHIJ,BGHJD->BGHID"):
 * labels in both inputs and the output are batch axes, one only in the
 * first and the output is M, one only in the second and the output N, one
 * in both inputs only K.  One oneDNN matmul over the operands' own strides,
 * nothing transposed by a copy: the loop took maxvit_t's 44 such Einsums
 * 714 ms of its 802 ms run at one thread.  1: not such an equation (or no
 * fast oneDNN kernel for it), for the loop.
 */
static int ho_einsum_matmul(struct ho_backend *c, const struct ho_graph *g, const struct ho_node *n,
			    const struct ho_einsum *e, void *const *buf, struct ho_kernel *k)
{
	enum { IN_A = 1, IN_B = 2, IN_OUT = 4 };
	const struct ho_tensor *in0 = ho_node_input(g, n, 0), *in1 = ho_node_input(g, n, 1);
	const struct ho_shape *sh[3] = {in0 ? &in0->shape : NULL, in1 ? &in1->shape : NULL,
					&g->tensors[n->outputs[0]].shape};
	const int *lab[3] = {e->in_label[0], e->in_label[1], e->out_label};
	int64_t st[3][HO_EINSUM_MAX_IN * HO_MAX_RANK + HO_MAX_RANK] = {{0}},
						       ext[HO_EINSUM_MAX_IN * HO_MAX_RANK +
							   HO_MAX_RANK];
	unsigned where[HO_EINSUM_MAX_IN * HO_MAX_RANK + HO_MAX_RANK] = {0};
	int mkn[3] = {-1, -1, -1}, nb = 0; /* the M, K and N labels */
	dnnl_dims_t dims[3], strides[3];
	dnnl_memory_desc_t md[3];
	dnnl_matmul_desc_t d;
	dnnl_primitive_desc_t pd = NULL;

	if (e->n_in != 2 || !in0 || !in1 || g->tensors[n->outputs[0]].dtype != HO_DT_FLOAT)
		return 1;
	for (int l = 0; l < e->n_labels; l++)
		ext[l] = -1;
	for (int t = 0; t < 3; t++) {
		int64_t stride = 1;

		for (int a = sh[t]->rank - 1; a >= 0; a--) {
			int l = lab[t][a];

			if ((where[l] & (1u << t)) || (ext[l] >= 0 && ext[l] != sh[t]->dim[a]))
				return 1; /* a diagonal, or a broadcast axis */
			where[l] |= 1u << t;
			ext[l] = sh[t]->dim[a];
			st[t][l] = stride;
			stride *= sh[t]->dim[a];
		}
	}
	for (int l = 0; l < e->n_labels; l++) {
		int *slot = where[l] == (IN_A | IN_OUT)	  ? &mkn[0]
			    : where[l] == (IN_A | IN_B)	  ? &mkn[1]
			    : where[l] == (IN_B | IN_OUT) ? &mkn[2]
							  : NULL;

		if (where[l] == (IN_A | IN_B | IN_OUT))
			continue;
		if (!where[l])
			continue;
		if (!slot || *slot >= 0)
			return 1; /* summed in one input alone, or two labels for one of M, K, N */
		*slot = l;
	}
	/* batch axes in the output's order, then each operand's two matrix axes */
	for (int a = 0; a < e->out_rank; a++) {
		int l = e->out_label[a];

		if (where[l] != (IN_A | IN_B | IN_OUT))
			continue;
		if (nb + 2 > DNNL_MAX_NDIMS)
			return 1;
		for (int t = 0; t < 3; t++) {
			dims[t][nb] = ext[l];
			strides[t][nb] = st[t][l];
		}
		nb++;
	}
	static const int rows[3] = {0, 1, 0},
			 cols[3] = {1, 2, 2}; /* A: M x K, B: K x N, Y: M x N */

	for (int t = 0; t < 3; t++) {
		int r = mkn[rows[t]], q = mkn[cols[t]];

		dims[t][nb] = r >= 0 ? ext[r] : 1;
		strides[t][nb] = r >= 0 ? st[t][r] : 1;
		dims[t][nb + 1] = q >= 0 ? ext[q] : 1;
		strides[t][nb + 1] = q >= 0 ? st[t][q] : 1;
		if (dnnl_memory_desc_init_by_strides(&md[t], nb + 2, dims[t], dnnl_f32,
						     strides[t]) != dnnl_success)
			return 1;
	}
	if (dnnl_matmul_desc_init(&d, &md[0], &md[1], NULL, &md[2]) != dnnl_success ||
	    dnnl_primitive_desc_create(&pd, &d, c->attr, c->eng, NULL) != dnnl_success)
		return 1;
	if (ho_cpu_is_slow(pd)) {
		dnnl_primitive_desc_destroy(pd);
		return 1;
	}
	int ret = ho_cpu_mem(c, k, &md[0], buf[n->inputs[0]], DNNL_ARG_SRC) ||
			  ho_cpu_mem(c, k, &md[1], buf[n->inputs[1]], DNNL_ARG_WEIGHTS) ||
			  ho_cpu_mem(c, k, &md[2], buf[n->outputs[0]], DNNL_ARG_DST) ||
			  ho_cpu_prim(c, k, pd)
		      ? -ENOMEM
		      : 0;

	dnnl_primitive_desc_destroy(pd);
	return ret;
}

int ho_cpu_prep_einsum(struct ho_backend *c, const struct ho_graph *g, const struct ho_node *n,
		       void *const *buf, struct ho_kernel *k, struct ho_error *err)
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
	switch (ho_einsum_matmul(c, g, n, &p->e, buf, k)) {
	case 0:
		free(k->einsum);
		k->einsum = NULL;
		return 0;
	case 1:
		break;
	default:
		return ho_err(err, -ENOMEM, "node '%s': oneDNN set-up failed", n->name);
	}
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
