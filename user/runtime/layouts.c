// SPDX-License-Identifier: MIT
/*
 * The executor's plan (exec_priv.h), its layouts and folds: which tensors are
 * channels-last (NHWC) between the kernels that take either, and which batch
 * norm, bias and element-wise nodes fold into the Conv or MatMul before them,
 * asking each node's backend how its kernel treats layouts.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "exec_priv.h"

/* The layout class of node i's kernel on node_ops[i], its backend (NULL: plain). */
static enum ho_be_layout ho_op_layout(const struct ho_graph *g,
				      const struct ho_backend_ops *const *node_ops, int32_t i,
				      bool *binary)
{
	bool bin = false;
	enum ho_be_layout l =
	    node_ops[i] ? node_ops[i]->layout(g->nodes[i].op_type, &bin) : HO_BE_PLAIN;

	if (binary)
		*binary = bin;
	return l;
}

/*
 * Channels-last (NHWC) for the 4-D activations that only layout-agnostic
 * kernels touch: convolutions run several times faster on it than on
 * NCHW (mobilenet_v2: 25.7 -> 11.5 ms).  Inputs, outputs, constants and
 * whatever a layout-bound operator (Reshape, Gemm, Transpose, ...) reads or
 * writes stay NCHW, but for maps of 1 x 1, alike in both (a global pool's
 * output before Flatten made regnet_x_400mf's whole last stage NCHW, two
 * conversions a block); then, until nothing changes, an element-wise, pooling or
 * batch-norm node whose output and full-shape inputs disagree makes them all
 * NCHW.  Convolution and Concat convert between the two as they go.
 */
void ho_rt_layouts_over(const struct ho_graph *g, const struct ho_backend_ops *const *node_ops,
			uint8_t *nhwc)
{
	bool changed = true;

	for (uint32_t t = 0; t < g->n_tensors; t++) {
		const struct ho_tensor *tt = &g->tensors[t];
		int32_t p = tt->producer;
		bool ok = tt->shape.rank == 4 && tt->dtype == HO_DT_FLOAT && p >= 0 &&
			  node_ops[p] && !(tt->flags & (HO_T_OUTPUT | HO_T_INPUT)) &&
			  !ho_is_data(tt) && ho_op_layout(g, node_ops, p, NULL) != HO_BE_PLAIN;

		/* a map of 1 x 1 (a global pool's) reads alike either way: no reader decides */
		for (uint32_t c = 0; ok && !ho_shape_layout_free(&tt->shape) && c < tt->n_consumers;
		     c++)
			ok = node_ops[tt->consumers[c]] &&
			     ho_op_layout(g, node_ops, tt->consumers[c], NULL) != HO_BE_PLAIN;
		nhwc[t] = ok;
	}
	while (changed) {
		changed = false;
		for (uint32_t i = 0; i < g->n_nodes; i++) {
			const struct ho_node *n = &g->nodes[i];
			int32_t y = n->n_outputs ? n->outputs[0] : -1;
			bool mismatch = false, binary;

			if (!node_ops[i] || y < 0 ||
			    ho_op_layout(g, node_ops, (int32_t)i, &binary) != HO_BE_SAME_LAYOUT)
				continue;
			/* The first input of a unary kernel (pooling, resize, ...) whatever
			 * its shape; of a binary one, the inputs of the output's shape. */
			for (uint32_t k = 0; k < n->n_inputs; k++) {
				int32_t t = n->inputs[k];

				if (t >= 0 && g->tensors[t].shape.rank == 4 &&
				    ((k == 0 && !binary) ||
				     !memcmp(g->tensors[t].shape.dim, g->tensors[y].shape.dim,
					     sizeof(g->tensors[y].shape.dim[0]) * 4)) &&
				    nhwc[t] != nhwc[y])
					mismatch = true;
			}
			if (!mismatch)
				continue;
			nhwc[y] = 0;
			for (uint32_t k = 0; k < n->n_inputs; k++)
				if (n->inputs[k] >= 0)
					nhwc[n->inputs[k]] = 0;
			changed = true;
		}
	}
}

int ho_rt_layouts(struct ho_rt *rt, struct ho_error *err)
{
	const struct ho_backend_ops **node_ops = calloc(rt->g->n_nodes + 1, sizeof(*node_ops));

	if (!node_ops)
		return ho_err(err, -ENOMEM, "out of memory");
	for (uint32_t i = 0; i < rt->g->n_nodes; i++)
		node_ops[i] = rt->node_dev[i] >= 0 ? rt->dev[rt->node_dev[i]].ops : NULL;
	ho_rt_layouts_over(rt->g, node_ops, rt->nhwc);
	free(node_ops);
	return 0;
}

/* Node b, reading t, may run inside node i's kernel: same device, not taken, t's layout. */
static bool ho_rt_can_fold(const struct ho_rt *rt, uint32_t i, int32_t t, int32_t b)
{
	return b >= 0 && rt->node_dev[b] == rt->node_dev[i] && rt->folded[b] < 0 &&
	       rt->nhwc[rt->g->nodes[b].outputs[0]] == rt->nhwc[t];
}

/* ho_matmul_chain's Add, if it folds here (the MatMul's device, no blocked layout); else -1. */
static int32_t ho_rt_matmul_bias(const struct ho_rt *rt, uint32_t i, int32_t *post)
{
	const struct ho_graph *g = rt->g;
	int32_t t = g->nodes[i].outputs[0], b;

	ho_matmul_chain(g, i, &b, post);
	if (b < 0)
		return -1;
	if (rt->node_dev[b] != rt->node_dev[i] || rt->folded[b] >= 0 || rt->nhwc[t] ||
	    rt->nhwc[g->nodes[b].outputs[0]])
		return -1;
	return b;
}

/* Node b runs inside node i's kernel. */
static void ho_rt_fold(struct ho_rt *rt, uint32_t i, int32_t b)
{
	rt->folded[b] = (int32_t)i;
	rt->report.fused++;
}

/*
 * Conv i's residual Add (ho_conv_residual: r made and read before i by the
 * graph, so on any timeline) and the element-wise node after it fold when
 * the kernel may write the sum into r's bytes where they lie: r is made and
 * read on i's device alone (the simulator's rule too), kept by nobody, in
 * the layout of the chain's output, which is no graph output: it lives in
 * r's bytes (ho_rt_root).  A backend that cannot add into its destination
 * declines in its check, and the Add runs on its own.
 */
static void ho_rt_residual(struct ho_rt *rt, struct ho_scratch_mem *s, uint32_t i, int32_t mid)
{
	const struct ho_graph *g = rt->g;
	int32_t post, a = ho_conv_residual(g, i, mid, &post),
		      t = g->nodes[mid >= 0 ? mid : (int32_t)i].outputs[0], r, y;

	if (a < 0 || !ho_rt_can_fold(rt, i, t, a))
		return;
	if (post >= 0 && !ho_rt_can_fold(rt, i, t, post))
		post = -1;
	r = ho_other_input(g, a, t);
	y = g->nodes[post >= 0 ? post : a].outputs[0];
	if (rt->node_dev[g->tensors[r].producer] != rt->node_dev[i] || rt->nhwc[r] != rt->nhwc[y] ||
	    ((g->tensors[r].flags | g->tensors[y].flags) & HO_T_OUTPUT) ||
	    (rt->keep && (rt->keep[r] || rt->keep[y])))
		return;
	for (uint32_t c = 0; c < g->tensors[r].n_consumers; c++) {
		int32_t u = g->tensors[r].consumers[c];

		if (u != a && rt->node_dev[u] != rt->node_dev[i])
			return;
	}
	if (!ho_rt_takes_fused(rt, s, i, mid, post, a))
		return;
	rt->sum[i] = a;
	ho_rt_fold(rt, i, a);
	if (post >= 0) {
		rt->post[i] = post;
		ho_rt_fold(rt, i, post);
	}
}

/*
 * A batched MatMul reads an operand through the strides of the Transpose that makes
 * it, where both run on one device whose kernel can (ops.folds_transposes): the
 * Transpose runs nothing, its output an alias of its input (ho_rt_is_alias).  Not for
 * a tensor a user keeps, whose bytes must be the transposed ones.
 */
static void ho_rt_through(struct ho_rt *rt, uint32_t i)
{
	const struct ho_graph *g = rt->g;
	const struct ho_backend_ops *ops = rt->dev[rt->node_dev[i]].ops;
	uint32_t can = ops->folds_transposes ? ops->folds_transposes(g, i) : 0;

	for (uint32_t k = 0; k < 2; k++) {
		int32_t tr = can >> k & 1 ? ho_matmul_through(g, i, k) : -1;

		if (tr < 0 || rt->node_dev[tr] != rt->node_dev[i] || rt->folded[tr] >= 0 ||
		    (rt->keep && rt->keep[g->nodes[tr].outputs[0]]))
			continue;
		rt->folded[tr] = (int32_t)i;
		rt->report.through++;
	}
}

/*
 * The same for the Transpose after a batched MatMul (ho_matmul_out_through): the
 * kernel writes its rows where the Transpose would put them, the Transpose folded in as
 * its post-op, the MatMul's own output never written.  Not where a user keeps that one.
 */
static void ho_rt_out_through(struct ho_rt *rt, uint32_t i)
{
	const struct ho_graph *g = rt->g;
	const struct ho_backend_ops *ops = rt->dev[rt->node_dev[i]].ops;
	int32_t tr = ho_matmul_out_through(g, i);

	if (tr < 0 || !ops->folds_transposes ||
	    !(ops->folds_transposes(g, i) & HO_THROUGH_OUTPUT) ||
	    rt->node_dev[tr] != rt->node_dev[i] || rt->folded[tr] >= 0 ||
	    (rt->keep && rt->keep[g->nodes[i].outputs[0]]))
		return;
	rt->post[i] = tr;
	ho_rt_fold(rt, i, tr);
}

/*
 * Conv + BatchNormalization + element-wise, and MatMul + bias Add +
 * element-wise, each the only consumer of the one before, on the same
 * device: the batch norm goes into the weights, the bias into the matmul,
 * and the element-wise node runs as a post-op, one pass over memory instead
 * of three, wherever the device's backend takes the fused kernel.  A batch
 * norm no Conv takes in takes its Relu (ho_bn_chain).  The
 * middle node sits in bn[], the last in post[].  What runs is still the
 * schedule: every node, on the device it chose, in its order.
 */
void ho_rt_fuse(struct ho_rt *rt)
{
	const struct ho_graph *g = rt->g;
	struct ho_scratch_mem s = {0}; /* for backends' checks, made when one asks */

	for (uint32_t i = 0; i < g->n_nodes; i++) {
		const char *op = g->nodes[i].op_type;
		bool matmul = !strcmp(op, "MatMul");
		int32_t mid, b;

		if (rt->node_dev[i] < 0 || !g->nodes[i].n_outputs || g->nodes[i].outputs[0] < 0)
			continue;
		if (!strcmp(op, "BatchNormalization")) { /* its Relu, where no Conv took it */
			ho_bn_chain(g, i, &b);
			if (rt->folded[i] < 0 && ho_rt_can_fold(rt, i, g->nodes[i].outputs[0], b) &&
			    ho_rt_takes_fused(rt, &s, i, -1, b, -1)) {
				rt->post[i] = b;
				ho_rt_fold(rt, i, b);
			}
			continue;
		}
		if (!matmul && strcmp(op, "Conv") && strcmp(op, "ConvTranspose"))
			continue;
		if (matmul) {
			ho_rt_through(rt, i);
			/* the matmul kernel folds an element-wise node after a bias only */
			mid = ho_rt_matmul_bias(rt, i, &b);
			if (mid < 0)
				ho_rt_out_through(rt, i);
			if (mid < 0 || !ho_rt_takes_fused(rt, &s, i, mid, -1, -1))
				continue;
		} else {
			/* The chain the simulator charges as fused, where it can fold here. */
			ho_conv_chain(g, i, &mid, &b);
			if (mid >= 0 && !ho_rt_can_fold(rt, i, g->nodes[i].outputs[0], mid))
				mid = b = -1; /* an element-wise node reads the batch norm */
			if (mid >= 0 && !ho_rt_takes_fused(rt, &s, i, mid, -1, -1))
				mid = b = -1;
		}
		if (mid >= 0) {
			rt->bn[i] = mid;
			ho_rt_fold(rt, i, mid);
		}
		if (!matmul && b < 0) {
			ho_rt_residual(rt, &s, i, mid);
			continue;
		}
		int32_t t = g->nodes[mid >= 0 ? mid : (int32_t)i].outputs[0],
			sig = b >= 0 && !matmul ? ho_gate_of_mul(g, b) : -1;

		/* a swish or HardSwish: its gate folds with the Mul, or neither does */
		if (ho_rt_can_fold(rt, i, t, b) && (sig < 0 || ho_rt_can_fold(rt, i, t, sig)) &&
		    ho_rt_takes_fused(rt, &s, i, mid, b, -1)) {
			rt->post[i] = b;
			ho_rt_fold(rt, i, b);
			if (sig >= 0)
				ho_rt_fold(rt, i, sig);
		}
	}
	if (s.mem)
		ho_scratch_free(&s, g);
}

/* A tensor a fused kernel skips: a Conv's output, or its folded batch norm's, when
 * a later folded node writes the result instead. */
bool ho_rt_unwritten(const struct ho_rt *rt, int32_t t)
{
	int32_t p = rt->g->tensors[t].producer;

	if (p < 0 || rt->g->nodes[p].outputs[0] != t)
		return false;
	if (rt->post[p] >= 0 || rt->bn[p] >= 0 || rt->sum[p] >= 0)
		return true;		     /* the Conv's own output */
	if (ho_rt_is_alias(rt, (uint32_t)p)) /* a Transpose read through: its input's bytes */
		return false;
	/* a folded node's output (a batch norm's, a swish's gate, a residual Add's) when
	 * the chain's last node writes instead */
	int32_t h = rt->folded[p], last = h < 0 ? -1 : ho_rt_chain_end(rt, (uint32_t)h);

	return last >= 0 && last != p;
}

int32_t ho_rt_chain_end(const struct ho_rt *rt, uint32_t h)
{
	return rt->post[h] >= 0 ? rt->post[h] : rt->sum[h];
}
