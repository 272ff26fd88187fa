// SPDX-License-Identifier: MIT
/*
 * The sweep: the kernels each device is measured on, one row each, the
 * shapes taken from the layers of the models we run (ResNet, MobileNet,
 * EfficientNet, the PaddleOCR detector and recogniser, a transformer
 * encoder) and spread from small to large, so that the class fits span
 * what a plan asks of them.  Rows marked quick make --quick.
 */
#include <stdio.h>

#include "probe_priv.h"

/*
 * a: n, c_in, c_out, hw, k, stride, group: a Conv + Relu as models fuse
 * them, between two 1x1 convolutions, so that it reads and writes the
 * memory formats it has inside a model (a lone node would convert its input
 * and output); only the middle one, named main, is timed.
 */
static int build_conv(struct ho_pb *pb, const int64_t *a)
{
	int64_t x[4] = {a[0], a[1], a[3], a[3]}, w[4] = {a[2], a[1] / a[6], a[4], a[4]};
	int64_t b[1] = {a[2]}, s[2] = {a[5], a[5]}, p[4] = {a[4] / 2, a[4] / 2, a[4] / 2, a[4] / 2};
	int64_t wi[4] = {a[1], a[1], 1, 1}, wo[4] = {a[2], a[2], 1, 1};
	int n, ret;

	if ((ret = ho_pb_input(pb, "x", 4, x)) || (ret = ho_pb_weight(pb, "w", 4, w)) ||
	    (ret = ho_pb_weight(pb, "b", 1, b)) || (ret = ho_pb_weight(pb, "wi", 4, wi)) ||
	    (ret = ho_pb_weight(pb, "wo", 4, wo)))
		return ret;
	if ((n = ho_pb_node(pb, "Conv", "x,wi", "xi")) < 0)
		return n;
	n = ho_pb_node(pb, "Conv", "xi,w,b", "c");
	if (n < 0 || (ret = ho_pb_attr_ints(pb, n, "strides", 2, s)) ||
	    (ret = ho_pb_attr_ints(pb, n, "pads", 4, p)) ||
	    (ret = ho_pb_attr_int(pb, n, "group", a[6])) || (ret = ho_pb_main(pb, n)))
		return n < 0 ? n : ret;
	/* a[7]: a Swish (x * Sigmoid(x)) after it, fused as the Relu is */
	if (a[7] && ((n = ho_pb_node(pb, "Sigmoid", "c", "s")) < 0 ||
		     (n = ho_pb_node(pb, "Mul", "c,s", "r")) < 0))
		return n;
	if ((!a[7] && (n = ho_pb_node(pb, "Relu", "c", "r")) < 0) ||
	    (n = ho_pb_node(pb, "Conv", "r,wo", "y")) < 0)
		return n;
	return ho_pb_output(pb, "y");
}

/* a: batch, m, k, n, weights (1: constant [k, n] plus a bias Add; 0: two activations) */
static int build_matmul(struct ho_pb *pb, const int64_t *a)
{
	int64_t x[3] = {a[0], a[1], a[2]}, w[3] = {a[0], a[2], a[3]}, b[1] = {a[3]};
	int ret, n;

	if ((ret = ho_pb_input(pb, "x", 3, x)))
		return ret;
	if (a[4]) {
		if ((ret = ho_pb_weight(pb, "w", 2, w + 1)) || (ret = ho_pb_weight(pb, "b", 1, b)))
			return ret;
		if ((n = ho_pb_node(pb, "MatMul", "x,w", "m")) < 0 ||
		    (n = ho_pb_node(pb, "Add", "m,b", "y")) < 0)
			return n;
	} else {
		if ((ret = ho_pb_input(pb, "w", 3, w)))
			return ret;
		if ((n = ho_pb_node(pb, "MatMul", "x,w", "y")) < 0)
			return n;
	}
	return ho_pb_output(pb, "y");
}

static const char *const eltwise_ops[] = {"Relu", "Sigmoid", "Add", "Mul"};

/* a: op (eltwise_ops), elements, channels of a broadcast second input (0: same shape) */
static int build_eltwise(struct ho_pb *pb, const int64_t *a)
{
	int64_t c = a[2] ? a[2] : 1, x[4] = {1, c, a[1] / c, 1}, b[4] = {1, c, 1, 1};
	const char *op = eltwise_ops[a[0]];
	int ret, n;

	if ((ret = ho_pb_input(pb, "x", 4, x)))
		return ret;
	if (a[0] == 2 || a[0] == 3) {
		if ((ret = a[2] ? ho_pb_weight(pb, "z", 4, b) : ho_pb_input(pb, "z", 4, x)))
			return ret;
		n = ho_pb_node(pb, op, "x,z", "y");
	} else {
		n = ho_pb_node(pb, op, "x", "y");
	}
	return n < 0 ? n : ho_pb_output(pb, "y");
}

/*
 * a: kind (0 MaxPool, 1 AveragePool, 2 GlobalAveragePool), c, hw, k, stride;
 * between two 1x1 convolutions, as the convolutions are: alone in plain
 * layout a pool ran 3x slower than the same pool inside a model.
 */
static int build_pool(struct ho_pb *pb, const int64_t *a)
{
	static const char *const ops[] = {"MaxPool", "AveragePool", "GlobalAveragePool"};
	int64_t x[4] = {1, a[1], a[2], a[2]}, k[2] = {a[3], a[3]}, s[2] = {a[4], a[4]};
	int64_t p[4] = {a[3] / 2, a[3] / 2, a[3] / 2, a[3] / 2}, w[4] = {a[1], a[1], 1, 1};
	int ret, n;

	if ((ret = ho_pb_input(pb, "x", 4, x)) || (ret = ho_pb_weight(pb, "wi", 4, w)) ||
	    (ret = ho_pb_weight(pb, "wo", 4, w)))
		return ret;
	if ((n = ho_pb_node(pb, "Conv", "x,wi", "xi")) < 0 ||
	    (n = ho_pb_node(pb, ops[a[0]], "xi", "p")) < 0 || (ret = ho_pb_main(pb, n)))
		return n < 0 ? n : ret;
	if (a[0] < 2 && ((ret = ho_pb_attr_ints(pb, n, "kernel_shape", 2, k)) ||
			 (ret = ho_pb_attr_ints(pb, n, "strides", 2, s)) ||
			 (ret = ho_pb_attr_ints(pb, n, "pads", 4, p))))
		return ret;
	if ((n = ho_pb_node(pb, "Conv", "p,wo", "y")) < 0)
		return n;
	return ho_pb_output(pb, "y");
}

/*
 * a: kind (0 LayerNormalization over the last axis, 1 BatchNormalization),
 * rows, cols.  A BatchNormalization left unfolded sits between convolutions
 * (DenseNet's, a detector's neck), in their memory format, as the pools do:
 * alone on a plain tensor oneDNN ran it 6x slower than inside a model.
 */
static int build_norm(struct ho_pb *pb, const int64_t *a)
{
	int64_t x[4] = {1, a[1], a[2], 1}, w[4] = {a[1], a[1], 1, 1};
	int ret, n;

	if (a[0] == 0) {
		int64_t x3[3] = {1, a[1], a[2]}, s[1] = {a[2]};

		if ((ret = ho_pb_input(pb, "x", 3, x3)) || (ret = ho_pb_weight(pb, "s", 1, s)) ||
		    (ret = ho_pb_weight(pb, "b", 1, s)))
			return ret;
		if ((n = ho_pb_node(pb, "LayerNormalization", "x,s,b", "y")) < 0 ||
		    (ret = ho_pb_attr_int(pb, n, "axis", -1)))
			return n < 0 ? n : ret;
	} else {
		int64_t ch[1] = {a[1]};

		if ((ret = ho_pb_input(pb, "x", 4, x)) || (ret = ho_pb_weight(pb, "s", 1, ch)) ||
		    (ret = ho_pb_weight(pb, "b", 1, ch)) || (ret = ho_pb_weight(pb, "m", 1, ch)) ||
		    (ret = ho_pb_weight(pb, "v", 1, ch)) || (ret = ho_pb_weight(pb, "wi", 4, w)) ||
		    (ret = ho_pb_weight(pb, "wo", 4, w)))
			return ret;
		/* a Relu between the Conv and the BatchNormalization keeps the
		 * normalisation from folding into the Conv's weights */
		if ((n = ho_pb_node(pb, "Conv", "x,wi", "xi")) < 0 ||
		    (n = ho_pb_node(pb, "Relu", "xi", "xr")) < 0 ||
		    (n = ho_pb_node(pb, "BatchNormalization", "xr,s,b,m,v", "bn")) < 0 ||
		    (ret = ho_pb_main(pb, n)))
			return n < 0 ? n : ret;
		if ((n = ho_pb_node(pb, "Conv", "bn,wo", "y")) < 0)
			return n;
	}
	return ho_pb_output(pb, "y");
}

/* a: rows, cols: Softmax over the last axis (attention scores, classifier logits) */
static int build_softmax(struct ho_pb *pb, const int64_t *a)
{
	int64_t x[2] = {a[0], a[1]};
	int ret, n;

	if ((ret = ho_pb_input(pb, "x", 2, x)))
		return ret;
	if ((n = ho_pb_node(pb, "Softmax", "x", "y")) < 0 ||
	    (ret = ho_pb_attr_int(pb, n, "axis", -1)))
		return n < 0 ? n : ret;
	return ho_pb_output(pb, "y");
}

/* a: rows, cols: ReduceMean over the last axis, kept */
static int build_reduce(struct ho_pb *pb, const int64_t *a)
{
	int64_t x[2] = {a[0], a[1]}, axes[1] = {-1};
	int ret, n;

	if ((ret = ho_pb_input(pb, "x", 2, x)))
		return ret;
	if ((n = ho_pb_node(pb, "ReduceMean", "x", "y")) < 0 ||
	    (ret = ho_pb_attr_ints(pb, n, "axes", 1, axes)))
		return n < 0 ? n : ret;
	return ho_pb_output(pb, "y");
}

/*
 * a: kind (0 Transpose 0213, 1 Concat of two on channels, 2 Resize 2x
 * nearest, 3 Transpose 0231: NCHW to channels-last), d1, d2, d3
 */
static int build_movement(struct ho_pb *pb, const int64_t *a)
{
	int64_t x[4] = {1, a[1], a[2], a[3]}, perm[2][4] = {{0, 2, 1, 3}, {0, 2, 3, 1}};
	int ret, n;

	if ((ret = ho_pb_input(pb, "x", 4, x)))
		return ret;
	if (a[0] == 0 || a[0] == 3) {
		if ((n = ho_pb_node(pb, "Transpose", "x", "y")) < 0 ||
		    (ret = ho_pb_attr_ints(pb, n, "perm", 4, perm[a[0] == 3])))
			return n < 0 ? n : ret;
	} else if (a[0] == 1) {
		if ((ret = ho_pb_input(pb, "z", 4, x)))
			return ret;
		if ((n = ho_pb_node(pb, "Concat", "x,z", "y")) < 0 ||
		    (ret = ho_pb_attr_int(pb, n, "axis", 1)))
			return n < 0 ? n : ret;
	} else {
		int64_t sizes[4] = {1, a[1], a[2] * 2, a[3] * 2};

		if ((ret = ho_pb_weight_i64(pb, "sizes", 4, sizes)))
			return ret;
		if ((n = ho_pb_node(pb, "Resize", "x,,,sizes", "y")) < 0)
			return n;
	}
	return ho_pb_output(pb, "y");
}

/* a: elements, step: every step-th float of a row (bandwidth by stride) */
static int build_stride(struct ho_pb *pb, const int64_t *a)
{
	int64_t x[2] = {1, a[0]}, st[1] = {0}, en[1] = {a[0]}, ax[1] = {1}, sp[1] = {a[1]};
	int ret, n;

	if ((ret = ho_pb_input(pb, "x", 2, x)) || (ret = ho_pb_weight_i64(pb, "st", 1, st)) ||
	    (ret = ho_pb_weight_i64(pb, "en", 1, en)) ||
	    (ret = ho_pb_weight_i64(pb, "ax", 1, ax)) || (ret = ho_pb_weight_i64(pb, "sp", 1, sp)))
		return ret;
	if ((n = ho_pb_node(pb, "Slice", "x,st,en,ax,sp", "y")) < 0)
		return n;
	return ho_pb_output(pb, "y");
}

int ho_probe_build_chain(struct ho_pb *pb, uint32_t n, int64_t elems)
{
	int64_t x[1] = {elems};
	char in[16], out[16];
	int ret;

	if ((ret = ho_pb_input(pb, "t0", 1, x)))
		return ret;
	for (uint32_t i = 0; i < n; i++) {
		snprintf(in, sizeof(in), "t%u", i);
		snprintf(out, sizeof(out), "t%u", i + 1);
		if ((ret = ho_pb_node(pb, "Relu", in, out)) < 0)
			return ret;
	}
	return ho_pb_output(pb, out);
}

/*
 * a: n, c_in, c_out, hw (the input's), k, stride: a ConvTranspose upsampling
 * by the stride (pads (k - stride) / 2 a side), between two 1x1 convolutions
 * as build_conv's; no bias and nothing fused, as a decoder's before its
 * batch norm.
 */
static int build_conv_transpose(struct ho_pb *pb, const int64_t *a)
{
	int64_t x[4] = {a[0], a[1], a[3], a[3]}, w[4] = {a[1], a[2], a[4], a[4]};
	int64_t s[2] = {a[5], a[5]}, pad = (a[4] - a[5]) / 2, p[4] = {pad, pad, pad, pad};
	int64_t wi[4] = {a[1], a[1], 1, 1}, wo[4] = {a[2], a[2], 1, 1};
	int n, ret;

	if ((ret = ho_pb_input(pb, "x", 4, x)) || (ret = ho_pb_weight(pb, "w", 4, w)) ||
	    (ret = ho_pb_weight(pb, "wi", 4, wi)) || (ret = ho_pb_weight(pb, "wo", 4, wo)))
		return ret;
	if ((n = ho_pb_node(pb, "Conv", "x,wi", "xi")) < 0)
		return n;
	n = ho_pb_node(pb, "ConvTranspose", "xi,w", "c");
	if (n < 0 || (ret = ho_pb_attr_ints(pb, n, "strides", 2, s)) ||
	    (ret = ho_pb_attr_ints(pb, n, "pads", 4, p)) || (ret = ho_pb_main(pb, n)))
		return n < 0 ? n : ret;
	if ((n = ho_pb_node(pb, "Conv", "c,wo", "y")) < 0)
		return n;
	return ho_pb_output(pb, "y");
}

#define CONV(q, what, n, ci, co, hw, k, s, g)                                                      \
	{                                                                                          \
		what, build_conv, {n, ci, co, hw, k, s, g}, q, 0                                   \
	}
#define MM(q, what, b, m, k, n, w)                                                                 \
	{                                                                                          \
		what, build_matmul, {b, m, k, n, w}, q, 0                                          \
	}
#define ELT(q, role, what, op, n, c)                                                               \
	{                                                                                          \
		what, build_eltwise, {op, n, c}, q, role                                           \
	}

const struct ho_probe_case ho_probe_cases[] = {
    /* convolutions: dense 3x3 from stem to the last stage, 1x1, strided, grouped */
    CONV(1, "conv 3>32 224 k3 s2", 1, 3, 32, 224, 3, 2, 1),
    CONV(0, "conv 16>16 160 k3", 1, 16, 16, 160, 3, 1, 1),
    CONV(1, "conv 64>64 56 k3", 1, 64, 64, 56, 3, 1, 1),
    CONV(0, "conv 128>128 28 k3", 1, 128, 128, 28, 3, 1, 1),
    CONV(1, "conv 256>256 14 k3", 1, 256, 256, 14, 3, 1, 1),
    CONV(0, "conv 512>512 7 k3", 1, 512, 512, 7, 3, 1, 1),
    CONV(0, "conv 64>128 56 k3 s2", 1, 64, 128, 56, 3, 2, 1),
    CONV(1, "conv 64>256 56 k1", 1, 64, 256, 56, 1, 1, 1),
    CONV(0, "conv 256>64 56 k1", 1, 256, 64, 56, 1, 1, 1),
    CONV(1, "conv 16>96 112 k1", 1, 16, 96, 112, 1, 1, 1),
    /* ... with a Swish for its Relu (EfficientNet's): what a fused Swish costs */
    {"conv 16>96 112 k1 +swish", build_conv, {1, 16, 96, 112, 1, 1, 1, 1}, 1, HO_PROBE_SWISH},
    CONV(0, "conv 1024>256 14 k1", 1, 1024, 256, 14, 1, 1, 1),
    CONV(0, "conv 960>160 7 k1", 1, 960, 160, 7, 1, 1, 1),
    CONV(0, "conv 24>24 80 k1", 1, 24, 24, 80, 1, 1, 1),
    CONV(0, "conv 64>64 56 k3 g4", 1, 64, 64, 56, 3, 1, 4),
    /* a squeeze-excite's 1x1 on one pixel: what a call costs with no work in it */
    CONV(1, "conv 96>24 1 k1", 1, 96, 24, 1, 1, 1, 1),
    /* output channels no power of two: what block the kernel pads them to */
    CONV(1, "conv 96>24 80 k3", 1, 96, 24, 80, 3, 1, 1),
    CONV(0, "conv 40>240 28 k1", 1, 40, 240, 28, 1, 1, 1),
    CONV(0, "conv 4x 64>64 56 k3", 4, 64, 64, 56, 3, 1, 1),
    /* depthwise */
    CONV(1, "dw 32 112 k3", 1, 32, 32, 112, 3, 1, 32),
    CONV(0, "dw 96 112 k3 s2", 1, 96, 96, 112, 3, 2, 96),
    CONV(1, "dw 144 56 k3", 1, 144, 144, 56, 3, 1, 144),
    /* a 5x5 (MobileNetV3, EfficientNet, PP-OCR): more work per byte than the 3x3s,
     * without which their fit cannot tell a rate from a bandwidth */
    CONV(1, "dw 240 28 k5", 1, 240, 240, 28, 5, 1, 240),
    CONV(0, "dw 480 14 k3", 1, 480, 480, 14, 3, 1, 480),
    CONV(1, "dw 960 7 k3", 1, 960, 960, 7, 3, 1, 960),
    /* transposed: decoders' and detection heads' upsampling, 2x2 and 4x4 at stride 2,
     * to a single map too */
    {"convT 64>32 40 k2 s2", build_conv_transpose, {1, 64, 32, 40, 2, 2}, 1, 0},
    {"convT 32>16 80 k4 s2", build_conv_transpose, {1, 32, 16, 80, 4, 2}, 1, 0},
    {"convT 128>64 28 k2 s2", build_conv_transpose, {1, 128, 64, 28, 2, 2}, 0, 0},
    {"convT 256>128 14 k4 s2", build_conv_transpose, {1, 256, 128, 14, 4, 2}, 0, 0},
    {"convT 32>1 160 k2 s2", build_conv_transpose, {1, 32, 1, 160, 2, 2}, 0, 0},
    /* matmuls: classifier rows, transformer projections, square, attention */
    MM(1, "matmul 1x512x1000", 1, 1, 512, 1000, 1),
    MM(0, "matmul 32x256x256", 1, 32, 256, 256, 1),
    MM(1, "matmul 32x256x1024", 1, 32, 256, 1024, 1),
    MM(0, "matmul 128x768x768", 1, 128, 768, 768, 1),
    MM(1, "matmul 512x512x512", 1, 512, 512, 512, 1),
    MM(0, "matmul 64x2048x512", 1, 64, 2048, 512, 1),
    MM(1, "attention 8x32x32x32", 8, 32, 32, 32, 0),
    MM(0, "attention 12x128x64x128", 12, 128, 64, 128, 0),
    /* element-wise; Relu by size is also the bandwidth by buffer size */
    ELT(1, HO_PROBE_BANDWIDTH, "relu 1k", 0, 1024, 0),
    ELT(0, HO_PROBE_BANDWIDTH, "relu 4k", 0, 4096, 0),
    ELT(1, HO_PROBE_BANDWIDTH, "relu 16k", 0, 16384, 0),
    ELT(1, HO_PROBE_BANDWIDTH, "relu 64k", 0, 65536, 0),
    ELT(1, HO_PROBE_BANDWIDTH, "relu 256k", 0, 262144, 0),
    ELT(0, HO_PROBE_BANDWIDTH, "relu 1M", 0, 1 << 20, 0),
    ELT(1, HO_PROBE_INTERFERE_MEM, "relu 4M", 0, 4 << 20, 0),
    ELT(1, HO_PROBE_BANDWIDTH, "relu 16M", 0, 16 << 20, 0),
    ELT(1, 0, "sigmoid 1M", 1, 1 << 20, 0),
    ELT(0, 0, "sigmoid 64k", 1, 65536, 0),
    ELT(1, 0, "add 1M", 2, 1 << 20, 0),
    ELT(0, 0, "add 64k", 2, 65536, 0),
    ELT(1, 0, "add 1M bcast 64", 2, 1 << 20, 64),
    ELT(0, 0, "mul 256k bcast 96", 3, 96 * 4096, 96),
    ELT(0, 0, "mul 1M", 3, 1 << 20, 0),
    /* pooling */
    {"maxpool 64 112 k3 s2", build_pool, {0, 64, 112, 3, 2}, 1, 0},
    {"avgpool 256 28 k3 s1", build_pool, {1, 256, 28, 3, 1}, 0, 0},
    {"gap 512 7", build_pool, {2, 512, 7}, 1, 0},
    {"gap 1280 7", build_pool, {2, 1280, 7}, 0, 0},
    {"gap 96 80", build_pool, {2, 96, 80}, 0, 0},
    /* normalisation */
    {"layernorm 32x256", build_norm, {0, 32, 256}, 1, 0},
    {"layernorm 128x768", build_norm, {0, 128, 768}, 0, 0},
    {"batchnorm 64x3136", build_norm, {1, 64, 3136}, 1, 0},
    {"batchnorm 256x196", build_norm, {1, 256, 196}, 0, 0},
    /* softmax and reductions */
    {"softmax 256x32", build_softmax, {256, 32}, 1, 0},
    {"softmax 1536x128", build_softmax, {1536, 128}, 0, 0},
    {"softmax 1x1000", build_softmax, {1, 1000}, 0, 0},
    {"reducemean 32x256", build_reduce, {32, 256}, 1, 0},
    {"reducemean 1024x1024", build_reduce, {1024, 1024}, 0, 0},
    /* data movement */
    {"transpose 32x8x64", build_movement, {0, 32, 8, 64}, 1, 0},
    {"transpose 128x12x64", build_movement, {0, 128, 12, 64}, 0, 0},
    {"concat 2x 64x56x56", build_movement, {1, 64, 56, 56}, 1, 0},
    {"concat 2x 96x40x40", build_movement, {1, 96, 40, 40}, 0, 0},
    {"resize 2x 64x40x40", build_movement, {2, 64, 40, 40}, 1, 0},
    {"resize 2x 24x160x160", build_movement, {2, 24, 160, 160}, 0, 0},
    /* what a tensor crossing to a device of the other layout costs (the detector's neck) */
    {"relayout 96x160x160", build_movement, {3, 96, 160, 160}, 1, HO_PROBE_RELAYOUT},
    /* bandwidth by stride: every step-th float of 4M */
    {"slice 4M step 1", build_stride, {4 << 20, 1}, 1, HO_PROBE_STRIDE},
    {"slice 4M step 2", build_stride, {4 << 20, 2}, 0, HO_PROBE_STRIDE},
    {"slice 4M step 4", build_stride, {4 << 20, 4}, 1, HO_PROBE_STRIDE},
    {"slice 4M step 16", build_stride, {4 << 20, 16}, 0, HO_PROBE_STRIDE},
    {"slice 4M step 64", build_stride, {4 << 20, 64}, 1, HO_PROBE_STRIDE},
    /* what two devices at once are slowed by (with relu 4M above) */
    {"conv 64>64 28 k3", build_conv, {1, 64, 64, 28, 3, 1, 1}, 1, HO_PROBE_INTERFERE_COMPUTE},
    {NULL},
};
