// SPDX-License-Identifier: MIT
/*
 * Per-node cost features: FLOPs (a multiply-accumulate counts as 2), bytes
 * moved, weight bytes, arithmetic intensity and an operator class.  These are
 * what the roofline cost model consumes; they need inferred shapes.
 *
 * Conventions (documented in Documentation/graph-ir.md):
 *   Conv/ConvTranspose/MatMul/Gemm: 2 * MACs, plus one add per output for a bias;
 *   RNN/GRU/LSTM: 2 * the MACs of X_t W^T and H R^T over every step (not the gates);
 *   Einsum: 2 * (inputs - 1) multiplies per combination of its labels' indices;
 *   elementwise and activations: one FLOP per output element (per input of
 *   variadic ops); normalisation: a few per element; pooling: one per window
 *   element; data movement and shape ops: zero.
 */
#include <string.h>

#include "graph_priv.h"
#include "heteroopt/opsem.h"

const char *ho_op_class_name(int op_class)
{
	static const char *const names[] = {"compute", "memory", "movement", "control"};

	return op_class >= 0 && op_class < 4 ? names[op_class] : "?";
}

static double numel(const struct ho_tensor *t)
{
	int64_t n = t ? ho_shape_numel(&t->shape) : -1;

	return n > 0 ? (double)n : 0;
}

static const struct ho_tensor *tin(const struct ho_graph *g, const struct ho_node *nd, uint32_t k)
{
	return k < nd->n_inputs && nd->inputs[k] >= 0 ? &g->tensors[nd->inputs[k]] : NULL;
}

static const struct ho_tensor *tout(const struct ho_graph *g, const struct ho_node *nd, uint32_t k)
{
	return k < nd->n_outputs && nd->outputs[k] >= 0 ? &g->tensors[nd->outputs[k]] : NULL;
}

static double ho_macs(const struct ho_graph *g, const struct ho_node *nd)
{
	const struct ho_tensor *x = tin(g, nd, 0), *w = tin(g, nd, 1), *y = tout(g, nd, 0);
	const char *op = nd->op_type;

	if (!x || !w || !y || y->shape.rank < 0 || w->shape.rank < 0)
		return 0;
	if (!strcmp(op, "QLinearConv") || !strcmp(op, "QLinearMatMul"))
		w = tin(g, nd, 3); /* after x, its scale and zero point */
	if (!w || w->shape.rank < 0)
		return 0;
	if (!strcmp(op, "Conv") || !strcmp(op, "ConvInteger") || !strcmp(op, "QLinearConv")) {
		/* Each output element: (C_in / group) * prod(kernel) MACs. */
		double per = 1;

		for (int i = 1; i < w->shape.rank; i++)
			per *= (double)(w->shape.dim[i] > 0 ? w->shape.dim[i] : 0);
		return numel(y) * per;
	}
	if (!strcmp(op, "ConvTranspose")) {
		/* Each input element scatters into (C_out / group) * prod(kernel). */
		double per = 1;

		for (int i = 1; i < w->shape.rank; i++)
			per *= (double)(w->shape.dim[i] > 0 ? w->shape.dim[i] : 0);
		return numel(x) * per;
	}
	if (!strcmp(op, "MatMul") || !strcmp(op, "MatMulInteger") || !strcmp(op, "QLinearMatMul")) {
		int64_t k = x->shape.rank >= 1 ? x->shape.dim[x->shape.rank - 1] : 0;

		return numel(y) * (double)(k > 0 ? k : 0);
	}
	if (!strcmp(op, "Attention")) {
		/* per query row (of every head) and key: Q K^T over the head size, then V's */
		const struct ho_tensor *v = tin(g, nd, 2), *pk = tin(g, nd, 4);
		int r = x->shape.rank;
		double qh = r == 3 ? (double)ho_node_attr_i(nd, "q_num_heads", 1) : 1,
		       kvh = r == 3 ? (double)ho_node_attr_i(nd, "kv_num_heads", 1) : 1;

		if ((r != 3 && r != 4) || w->shape.rank != r || !v || v->shape.rank != r ||
		    qh < 1 || kvh < 1)
			return 0;
		double hq = (double)x->shape.dim[r - 1] / qh,
		       hk = (double)w->shape.dim[r - 1] / kvh,
		       hv = (double)v->shape.dim[r - 1] / kvh,
		       keys = (double)w->shape.dim[r - 2] +
			      (pk && pk->shape.rank == 4 ? (double)pk->shape.dim[2] : 0);

		return hq > 0 ? numel(x) / hq * keys * (hk + hv) : 0;
	}
	if (!strcmp(op, "RNN") || !strcmp(op, "GRU") || !strcmp(op, "LSTM")) {
		/* every step: X_t W^T and H R^T, gates * hidden columns over batch rows */
		const struct ho_tensor *r = tin(g, nd, 2);
		double steps = (double)x->shape.dim[0] * (double)x->shape.dim[1];

		if (!r || r->shape.rank != 3 || w->shape.rank != 3 || x->shape.rank != 3)
			return 0;
		return steps * (double)w->shape.dim[0] * (double)w->shape.dim[1] *
		       (double)(w->shape.dim[2] + r->shape.dim[2]);
	}
	if (!strcmp(op, "Einsum")) {
		/* every combination of the labels' indices: one multiply per further input */
		const struct ho_attr *eq = ho_node_attr(nd, "equation");
		int ranks[HO_EINSUM_MAX_IN];
		int64_t dim[HO_EINSUM_MAX_IN * HO_MAX_RANK + HO_MAX_RANK];
		struct ho_einsum e;
		double all = 1;

		for (uint32_t i = 0; i < nd->n_inputs && i < HO_EINSUM_MAX_IN; i++)
			ranks[i] = tin(g, nd, i) ? tin(g, nd, i)->shape.rank : -1;
		if (!eq || eq->type != HO_ATTR_STRING || nd->n_inputs < 2 ||
		    ho_einsum_parse(eq->s, (int)nd->n_inputs, ranks, &e, NULL))
			return 0;
		for (int l = 0; l < e.n_labels; l++)
			dim[l] = 1;
		for (int i = 0; i < e.n_in; i++)
			for (int a = 0; a < e.in_rank[i]; a++)
				if (tin(g, nd, (uint32_t)i)->shape.dim[a] > 1)
					dim[e.in_label[i][a]] =
					    tin(g, nd, (uint32_t)i)->shape.dim[a];
		for (int l = 0; l < e.n_labels; l++)
			all *= (double)dim[l];
		return all * (double)(e.n_in - 1);
	}
	if (!strcmp(op, "Gemm")) {
		const struct ho_attr *ta = ho_node_attr(nd, "transA");
		int64_t k = x->shape.rank == 2 ? x->shape.dim[ta && ta->i ? 0 : 1] : 0;

		return numel(y) * (double)(k > 0 ? k : 0);
	}
	return 0;
}

/* Subgraph cost: If takes the costlier branch, Loop its body times the trip count. */
static void ho_composite(const struct ho_graph *g, struct ho_node *nd)
{
	double best = 0, best_macs = 0;
	double trips = 1;

	if (!strcmp(nd->op_type, "Loop")) {
		const struct ho_tensor *m = tin(g, nd, 0);

		if (m && m->value && m->value->count == 1)
			trips = m->value->i ? (double)m->value->i[0] : m->value->f[0];
		if (trips < 1)
			trips = 1;
	} else if (!strcmp(nd->op_type, "Scan") && nd->n_outputs && nd->outputs[0] >= 0) {
		/* its steps: the scan axis of its last input (the batch too at opset 8) */
		const struct ho_tensor *x = tin(g, nd, nd->n_inputs - 1);
		const struct ho_attr *ax = ho_node_attr(nd, "scan_input_axes");
		int64_t a = nd->opset < 9 ? 1 : ax && ax->n ? ax->ints[ax->n - 1] : 0;

		if (x && x->shape.rank > 0) {
			a = a < 0 ? a + x->shape.rank : a;
			if (a >= 0 && a < x->shape.rank && x->shape.dim[a] > 0)
				trips = (double)x->shape.dim[a];
			if (nd->opset < 9 && x->shape.dim[0] > 0)
				trips *= (double)x->shape.dim[0];
		}
	}
	for (uint32_t s = 0; s < nd->n_subgraphs; s++) {
		const struct ho_graph *sg = nd->subgraphs[s];
		double f = 0, m = 0;

		for (uint32_t i = 0; i < sg->n_nodes; i++) {
			f += sg->nodes[i].feat.flops;
			m += sg->nodes[i].feat.macs;
		}
		if (!strcmp(nd->op_type, "If")) {
			if (f > best) {
				best = f;
				best_macs = m;
			}
		} else {
			best += f;
			best_macs += m;
		}
	}
	nd->feat.flops += best * trips;
	nd->feat.macs += best_macs * trips;
}

static void ho_node_features(const struct ho_graph *g, struct ho_node *nd)
{
	const struct ho_op_info *rule = ho_op_info(nd->op_type);
	struct ho_features *f = &nd->feat;
	double out_elems = 0;

	memset(f, 0, sizeof(*f));
	f->op_class = rule ? rule->op_class : HO_OPC_MEMORY;
	for (uint32_t k = 0; k < nd->n_inputs; k++) {
		const struct ho_tensor *t = tin(g, nd, k);

		if (!t)
			continue;
		f->bytes_read += t->bytes;
		if (t->flags & (HO_T_INITIALIZER | HO_T_CONSTANT))
			f->param_bytes += t->bytes;
	}
	for (uint32_t k = 0; k < nd->n_outputs; k++) {
		const struct ho_tensor *t = tout(g, nd, k);

		if (t) {
			f->bytes_written += t->bytes;
			out_elems += numel(t);
		}
	}
	if (nd->flags & HO_N_FOLDED) {
		/* Computed at load time: nothing left to run. */
		f->op_class = HO_OPC_CONTROL;
		f->bytes_read = f->bytes_written = 0;
		return;
	}
	switch (f->op_class) {
	case HO_OPC_COMPUTE: {
		const struct ho_tensor *bias = NULL;

		f->macs = ho_macs(g, nd);
		f->flops = 2 * f->macs;
		if (!strcmp(nd->op_type, "Conv") || !strcmp(nd->op_type, "ConvTranspose") ||
		    !strcmp(nd->op_type, "Gemm"))
			bias = tin(g, nd, 2);
		if (bias)
			f->flops += numel(tout(g, nd, 0));
		break;
	}
	case HO_OPC_MEMORY: {
		const char *op = nd->op_type;

		if (!strncmp(op, "Reduce", 6) || !strncmp(op, "Global", 6) ||
		    !strcmp(op, "ArgMax") || !strcmp(op, "ArgMin")) {
			f->flops = numel(tin(g, nd, 0));
		} else if (strstr(op, "Pool")) {
			const struct ho_attr *ks = ho_node_attr(nd, "kernel_shape");
			double win = 1;

			for (size_t i = 0; ks && i < ks->n; i++)
				win *= (double)ks->ints[i];
			f->flops = numel(tout(g, nd, 0)) * win;
		} else if (!strcmp(op, "Sum") || !strcmp(op, "Mean") || !strcmp(op, "Max") ||
			   !strcmp(op, "Min")) {
			f->flops = out_elems * (nd->n_inputs > 1 ? nd->n_inputs - 1 : 1);
		} else if (ho_op_info_in(HO_DOMAIN_TRAINING, op)) {
			f->flops = out_elems * rule->flops_per_elem; /* every tensor stepped */
		} else {
			f->flops = numel(tout(g, nd, 0)) * (rule ? rule->flops_per_elem : 1);
		}
		break;
	}
	default:
		break;
	}
	if (nd->flags & HO_N_COMPOSITE)
		ho_composite(g, nd);
	if (f->bytes_read + f->bytes_written)
		f->intensity = f->flops / (double)(f->bytes_read + f->bytes_written);
}

static void ho_graph_features(struct ho_graph *g)
{
	for (uint32_t i = 0; i < g->n_nodes; i++) {
		struct ho_node *nd = &g->nodes[g->topo[i]];

		for (uint32_t s = 0; s < nd->n_subgraphs; s++)
			ho_graph_features(nd->subgraphs[s]);
		ho_node_features(g, nd);
	}
}

void ho_features_compute(struct ho_graph *g)
{
	ho_graph_features(g);
}
