// SPDX-License-Identifier: MIT
/*
 * Kernel classes and families: what a measurement of one node says about
 * another.  A class (convolution, depthwise convolution, matmul, ...) is what
 * the probes fit one cost model to; a family is a kernel with everything but
 * its extent fixed (a Conv's channels, kernel, stride, group and the chain it
 * fuses; an element-wise op and its type), whose time grows with its work.
 * A family measured at 640x640 then predicts the same layer at 320x320.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "graph_priv.h"
#include "heteroopt/opsem.h"

static const char *const ho_kernel_class_names[HO_KC_COUNT] = {
    [HO_KC_CONV] = "conv",
    [HO_KC_CONV_DW] = "conv_depthwise",
    [HO_KC_CONV_TRANSPOSE] = "conv_transpose",
    [HO_KC_CONV_3X3] = "conv3x3",
    [HO_KC_MATMUL] = "matmul",
    [HO_KC_ELTWISE] = "eltwise",
    [HO_KC_POOL] = "pool",
    [HO_KC_NORM] = "norm",
    [HO_KC_SOFTMAX] = "softmax",
    [HO_KC_REDUCE] = "reduce",
    [HO_KC_MOVEMENT] = "movement",
    [HO_KC_OTHER] = "other",
};

const char *ho_kernel_class_name(int kc)
{
	return kc >= 0 && kc < HO_KC_COUNT ? ho_kernel_class_names[kc] : "?";
}

bool ho_kernel_class_convolves(int kc)
{
	return kc == HO_KC_CONV || kc == HO_KC_CONV_DW || kc == HO_KC_CONV_TRANSPOSE ||
	       kc == HO_KC_CONV_3X3;
}

/*
 * A ConvTranspose runs other kernels than a Conv of its FLOPs (oneDNN's
 * backward-data ones): the detector's 2x2 upsampling at 320x184 took 2.6 ms
 * on one core, priced at 1.7 as a convolution.  A dense 3x3 stride-1 one runs
 * on a Winograd kernel where the device has one (the cpu backend's oneDNN on
 * AVX-512): half the time of a convolution of its FLOPs.  Where a profile has no
 * model of its own for either, the convolutions' is the nearest.
 */
int ho_kernel_class_fallback(int kc)
{
	return kc == HO_KC_CONV_TRANSPOSE || kc == HO_KC_CONV_3X3 ? HO_KC_CONV : kc;
}

int ho_kernel_class_find(const char *name)
{
	for (int k = 0; k < HO_KC_COUNT; k++)
		if (!strcmp(ho_kernel_class_names[k], name))
			return k;
	return -1;
}

static const struct ho_tensor *ho_fam_in(const struct ho_graph *g, const struct ho_node *n,
					 uint32_t k)
{
	return k < n->n_inputs && n->inputs[k] >= 0 ? &g->tensors[n->inputs[k]] : NULL;
}

static bool ho_is_depthwise(const struct ho_graph *g, const struct ho_node *n)
{
	const struct ho_attr *group = ho_node_attr(n, "group");
	const struct ho_tensor *x = ho_fam_in(g, n, 0);

	return group && group->i > 1 && x && x->shape.rank >= 2 && x->shape.dim[1] == group->i;
}

/*
 * The convolutions the cpu backend tries on Winograd kernels: dense 3x3 stride 1 over
 * eight channels or more, to a map of 14x14 or more.  Below that its tiles waste what
 * they save: squeezenet's 64>256 3x3s at 13x13 took 265-274 us against 219-245 direct,
 * the whole model 4.9 ms against 4.4 (one core of a 2-core AMD EPYC).
 */
static bool ho_is_dense_3x3(const struct ho_graph *g, const struct ho_node *n)
{
	const struct ho_tensor *w = ho_fam_in(g, n, 1),
			       *y = n->n_outputs ? &g->tensors[n->outputs[0]] : NULL;
	int64_t st[2], dl[2];

	return w && y && y->shape.rank == 4 && y->shape.dim[2] * y->shape.dim[3] >= 14 * 14 &&
	       w->shape.rank == 4 && w->shape.dim[0] >= 8 && w->shape.dim[1] >= 8 &&
	       w->shape.dim[2] == 3 && w->shape.dim[3] == 3 && ho_node_attr_i(n, "group", 1) == 1 &&
	       ho_node_attr_ints(n, "strides", st, 2, 1) && st[0] == 1 && st[1] == 1 &&
	       ho_node_attr_ints(n, "dilations", dl, 2, 1) && dl[0] == 1 && dl[1] == 1;
}

int ho_kernel_class(const struct ho_graph *g, const struct ho_node *n)
{
	const char *op = n->op_type;
	const struct ho_op_info *info = ho_op_info(op);

	if (!strcmp(op, "ConvTranspose"))
		return HO_KC_CONV_TRANSPOSE;
	if (!strcmp(op, "Conv"))
		return ho_is_depthwise(g, n)   ? HO_KC_CONV_DW
		       : ho_is_dense_3x3(g, n) ? HO_KC_CONV_3X3
					       : HO_KC_CONV;
	if (!strcmp(op, "MatMul") || !strcmp(op, "Gemm"))
		return HO_KC_MATMUL;
	if (strstr(op, "Pool"))
		return HO_KC_POOL;
	if (strstr(op, "Normalization"))
		return HO_KC_NORM;
	if (strstr(op, "Softmax"))
		return HO_KC_SOFTMAX;
	if (!strncmp(op, "Reduce", 6) || !strcmp(op, "ArgMax") || !strcmp(op, "ArgMin"))
		return HO_KC_REDUCE;
	if (!info)
		return HO_KC_OTHER;
	switch (info->op_class) {
	case HO_OPC_MEMORY:
		return HO_KC_ELTWISE;
	case HO_OPC_MOVEMENT:
		return HO_KC_MOVEMENT;
	default:
		return HO_KC_OTHER;
	}
}

/* Append to the key; a key cut at len still names a family (a longer one). */
static void __attribute__((format(printf, 3, 4)))
ho_fam_put(char *buf, size_t len, const char *fmt, ...)
{
	size_t at = strlen(buf);
	va_list ap;

	if (at + 1 >= len)
		return;
	va_start(ap, fmt);
	vsnprintf(buf + at, len - at, fmt, ap);
	va_end(ap);
}

/* " name=v0xv1..." of an INTS attribute, or nothing. */
static void ho_fam_ints(char *buf, size_t len, const struct ho_node *n, const char *name)
{
	const struct ho_attr *a = ho_node_attr(n, name);

	if (!a || a->type != HO_ATTR_INTS)
		return;
	ho_fam_put(buf, len, " %s", name);
	for (size_t i = 0; i < a->n; i++)
		ho_fam_put(buf, len, "%s%lld", i ? "x" : "=", (long long)a->ints[i]);
}

/*
 * A convolution's walk attribute, its default written out where the node
 * leaves it to the default (n values of def): exporters differ in which they
 * spell (PyTorch writes dilations=1x1, the probe's sweep does not), and one
 * kernel must name one family.  auto_pad's pads are named by the mode.
 */
static void ho_fam_walk(char *buf, size_t len, const struct ho_node *n, const char *name,
			int64_t def, int n_def)
{
	const struct ho_attr *pad = ho_node_attr(n, "auto_pad");

	if (ho_node_attr(n, name) || n_def <= 0) {
		ho_fam_ints(buf, len, n, name);
		return;
	}
	if (!strcmp(name, "pads") && pad && pad->type == HO_ATTR_STRING && pad->s &&
	    strcmp(pad->s, "NOTSET")) {
		ho_fam_put(buf, len, " auto_pad=%s", pad->s);
		return;
	}
	ho_fam_put(buf, len, " %s", name);
	for (int i = 0; i < n_def; i++)
		ho_fam_put(buf, len, "%s%lld", i ? "x" : "=", (long long)def);
}

int ho_node_family(const struct ho_graph *g, uint32_t id, char *buf, size_t len)
{
	const struct ho_node *n = &g->nodes[id];
	const struct ho_tensor *x = ho_fam_in(g, n, 0), *w = ho_fam_in(g, n, 1);
	const struct ho_tensor *y =
	    n->n_outputs && n->outputs[0] >= 0 ? &g->tensors[n->outputs[0]] : NULL;
	int kc = ho_kernel_class(g, n);
	int32_t a = -1, b = -1;

	if (!len)
		return kc;
	buf[0] = '\0';
	ho_fam_put(buf, len, "%s %s", n->op_type, y ? ho_dtype_name(y->dtype) : "?");
	if (ho_kernel_class_convolves(kc)) {
		/* the weights fix channels and kernel, the attributes the walk over them */
		for (int i = 0; w && i < w->shape.rank; i++)
			ho_fam_put(buf, len, "%s%lld", i ? "x" : " w=", (long long)w->shape.dim[i]);
		int sp = w ? w->shape.rank - 2 : 0;

		ho_fam_walk(buf, len, n, "strides", 1, sp);
		ho_fam_walk(buf, len, n, "dilations", 1, sp);
		ho_fam_walk(buf, len, n, "pads", 0, 2 * sp);
		ho_fam_put(buf, len, " group=%lld",
			   ho_node_attr(n, "group") ? (long long)ho_node_attr(n, "group")->i : 1);
		/* a constant BatchNormalization is folded into the weights: the same kernel */
		int32_t bn;

		ho_conv_chain(g, id, &bn, &b);
	} else if (kc == HO_KC_MATMUL) {
		/* K and N; the rows (batch, sequence) are the extent */
		if (w && w->shape.rank >= 2)
			ho_fam_put(buf, len, " k=%lld n=%lld %s",
				   (long long)w->shape.dim[w->shape.rank - 2],
				   (long long)w->shape.dim[w->shape.rank - 1],
				   w->data ? "const" : "act");
		if (!strcmp(n->op_type, "MatMul"))
			ho_matmul_chain(g, id, &a, &b);
	} else if (kc == HO_KC_POOL) {
		if (x && x->shape.rank >= 2)
			ho_fam_put(buf, len, " c=%lld", (long long)x->shape.dim[1]);
		ho_fam_ints(buf, len, n, "kernel_shape");
		ho_fam_ints(buf, len, n, "strides");
	} else if (x) {
		/*
		 * The rank, the channels (a model's stages differ in them, and a
		 * kernel's cache behaviour with them; the extent is the rest), and
		 * whether a second input broadcasts.  Channels: dimension 1 of an
		 * image, the last of a sequence or a matrix.
		 */
		int r = x->shape.rank;

		ho_fam_put(buf, len, " rank=%d", r);
		if (r >= 2)
			ho_fam_put(buf, len, " c=%lld",
				   (long long)x->shape.dim[r >= 4 ? 1 : r - 1]);
		if (w && y && ho_shape_numel(&w->shape) != ho_shape_numel(&y->shape))
			ho_fam_put(buf, len, " bcast");
	}
	if (a >= 0)
		ho_fam_put(buf, len, " +%s", g->nodes[a].op_type);
	if (b >= 0) {
		int32_t gate = ho_gate_of_mul(g, b);

		ho_fam_put(buf, len, " +%s",
			   gate < 0			 ? g->nodes[b].op_type
			   : ho_gate_is_sigmoid(g, gate) ? "Swish"
							 : "HardSwish");
	}
	return kc;
}

double ho_node_work(const struct ho_node *n)
{
	return n->feat.flops > 0 ? n->feat.flops
				 : (double)(n->feat.bytes_read + n->feat.bytes_written);
}

/*
 * oneDNN blocks a grouped convolution's channels group by group: RegNet's
 * groups of 8 pad to 16 and run at half the dense rate (its 48x8x3x3 in 6
 * groups: 0.109 ms priced on its total 48, 0.227 measured).  A depthwise one
 * is a class of its own, fitted as it runs.
 */
double ho_node_block_channels(const struct ho_graph *g, const struct ho_node *n)
{
	const struct ho_tensor *w = ho_fam_in(g, n, 1);
	const struct ho_attr *group = ho_node_attr(n, "group");
	double groups = group && group->i > 1 && !ho_is_depthwise(g, n) ? (double)group->i : 1;

	if (!w || w->shape.rank < 2)
		return 0;
	if (!strcmp(n->op_type, "Conv"))
		return w->shape.dim[0] > 0 ? (double)w->shape.dim[0] / groups : 0;
	/* ConvTranspose's weights are [in, out / group, ...] */
	if (!strcmp(n->op_type, "ConvTranspose") && w->shape.dim[1] > 0)
		return (double)w->shape.dim[1] * (group && group->i > 0 ? (double)group->i : 1) /
		       groups;
	return 0;
}

/*
 * The PP-OCRv4 detector's 24>24 ConvTranspose took as long as a 32>32 one
 * would (2.3-2.7 ms on one core at 320x184, 245 GFLOP/s counted so), its
 * 24>1 as long as a 32>16.  A grouped one blocks within its groups, a
 * depthwise one not at all.
 */
double ho_node_block_in_channels(const struct ho_graph *g, const struct ho_node *n)
{
	const struct ho_tensor *w = ho_fam_in(g, n, 1);
	const struct ho_attr *group = ho_node_attr(n, "group");

	if (strcmp(n->op_type, "ConvTranspose") || !w || w->shape.rank < 2 ||
	    w->shape.dim[0] <= 0 || (group && group->i > 1))
		return 0;
	return (double)w->shape.dim[0];
}

/* Of outputs 0..out-1 at stride st, how many read input row o * st + off inside 0..in-1. */
static int64_t ho_rows_inside(int64_t out, int64_t st, int64_t off, int64_t in)
{
	/* o * st >= -off and o * st <= in - 1 - off */
	int64_t lo = -off > 0 ? (-off + st - 1) / st : 0;
	int64_t hi = in - 1 - off < 0 ? -1 : (in - 1 - off) / st;

	hi = hi < out - 1 ? hi : out - 1;
	return hi >= lo ? hi - lo + 1 : 0;
}

/*
 * The share of a 2-D convolution's kernel taps that some output reads inside
 * its input: a tap that falls in the padding for every output is never
 * computed.  DeepLabV3's atrous convolutions at dilations 24 and 36 over a
 * 14x14 map read their centre tap alone: priced at every tap 3.1 ms each on
 * one core, they took 0.53.  A tap read by some outputs is counted in full:
 * counted output by output, the edges of every 3x3 at padding 1 lowered
 * resnet18's price (measured/predicted 1.089 by the median of three rounds,
 * 1.024 before).  1 for any other node.
 */
double ho_node_tap_share(const struct ho_graph *g, const struct ho_node *n)
{
	const struct ho_tensor *x = ho_fam_in(g, n, 0), *w = ho_fam_in(g, n, 1);
	const struct ho_tensor *y =
	    n->n_outputs && n->outputs[0] >= 0 ? &g->tensors[n->outputs[0]] : NULL;
	struct ho_window win;
	double share = 1;

	if (strcmp(n->op_type, "Conv") || !x || !w || !y || x->shape.rank != 4 ||
	    w->shape.rank != 4 || y->shape.rank != 4 ||
	    !ho_window_of(n, x, y, w->shape.dim + 2, &win))
		return 1;
	for (int a = 0; a < 2; a++) {
		int64_t in = x->shape.dim[2 + a], out = y->shape.dim[2 + a], inside = 0;

		if (in <= 0 || out <= 0 || win.ks[a] <= 0 || win.st[a] <= 0)
			return 1;
		for (int64_t k = 0; k < win.ks[a]; k++)
			inside += ho_rows_inside(out, win.st[a], k * win.dl[a] - win.pd[a], in) > 0;
		share *= (double)inside / (double)win.ks[a];
	}
	return share;
}

double ho_channel_pad(double channels, uint32_t block)
{
	if (block <= 1 || !(channels > 0))
		return 1;
	return ceil(channels / block) * block / channels;
}
