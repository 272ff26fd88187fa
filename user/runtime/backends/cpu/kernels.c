// SPDX-License-Identifier: MIT
/*
 * The cpu backend's kernel table: one line per operator it runs, naming the
 * prepare function of its kernel family (one file each beside this one).
 * Adding a kernel is a line here and a function in its family's file.
 */
#include <stdint.h>
#include <string.h>

#include "cpu.h"

#define HO_FUSED(fuse, which) ((fuse) && (fuse)->which >= 0 ? &g->nodes[(fuse)->which] : NULL)

static int k_conv(struct ho_backend *c, const struct ho_graph *g, const struct ho_node *n,
		  const struct ho_fusion *fuse, void *const *buf, struct ho_kernel *k,
		  struct ho_error *err)
{
	return ho_cpu_prep_conv(c, g, n, HO_FUSED(fuse, bn), HO_FUSED(fuse, sum),
				HO_FUSED(fuse, post), buf, k, err);
}

/*
 * MatMul by known weights runs on oneDNN matmul, its weights packed once (and its bias Add
 * folded in, where fused; the fusion asks for known weights), any other on sgemm.
 */
static int k_matmul(struct ho_backend *c, const struct ho_graph *g, const struct ho_node *n,
		    const struct ho_fusion *fuse, void *const *buf, struct ho_kernel *k,
		    struct ho_error *err)
{
	if ((fuse && fuse->bn >= 0) || ho_cpu_matmul_packs(g, n))
		return ho_cpu_prep_matmul_weights(c, g, n, HO_FUSED(fuse, bn), HO_FUSED(fuse, post),
						  buf, k, err);
	return ho_cpu_prep_gemm(g, n, fuse, buf, k, err);
}

/* Gemm as a MatMul by known weights and a bias where it is one (a Linear), else on sgemm. */
static int k_gemm(struct ho_backend *c, const struct ho_graph *g, const struct ho_node *n,
		  const struct ho_fusion *fuse, void *const *buf, struct ho_kernel *k,
		  struct ho_error *err)
{
	(void)fuse;
	if (ho_cpu_gemm_packs(g, n))
		return ho_cpu_prep_gemm_weights(c, g, n, buf, k, err);
	return ho_cpu_prep_gemm(g, n, NULL, buf, k, err);
}

/* A weight the graph holds the bytes of, which a kernel may take over at prepare. */
static bool ho_weight_in_graph(const struct ho_graph *g, int32_t t)
{
	const struct ho_tensor *w = t >= 0 ? &g->tensors[t] : NULL;

	return w && ho_cpu_known(g, t) && w->bytes && ho_tensor_holds_bytes(w);
}

/*
 * The weights a kernel reorders or packs once into its own layout and never reads again:
 * a float Conv's (copied even where oneDNN wants the model's layout), a MatMul's and a
 * Linear Gemm's that are packed.  Their bytes are then the kernel's alone.
 */
uint32_t ho_cpu_takes_over(const struct ho_graph *g, uint32_t node)
{
	const struct ho_node *n = &g->nodes[node];
	const struct ho_tensor *x = ho_node_input(g, n, 0);
	const char *op = n->op_type;

	if (*n->domain || n->n_inputs < 2 || !x || !ho_weight_in_graph(g, n->inputs[1]))
		return 0;
	if ((!strcmp(op, "Conv") || !strcmp(op, "ConvTranspose")) && x->dtype == HO_DT_FLOAT)
		return 1u << 1;
	if ((!strcmp(op, "MatMul") && ho_cpu_matmul_packs(g, n)) ||
	    (!strcmp(op, "Gemm") && ho_cpu_gemm_packs(g, n)))
		return 1u << 1;
	return 0;
}

/* A batched MatMul on sgemm reads either operand through a Transpose's strides, and
 * writes its output where the Transpose after it would put it. */
uint32_t ho_cpu_folds_transposes(const struct ho_graph *g, uint32_t node)
{
	if (strcmp(g->nodes[node].op_type, "MatMul") || ho_cpu_matmul_packs(g, &g->nodes[node]))
		return 0;
	return (uint32_t)(ho_matmul_through(g, node, 0) >= 0) |
	       (uint32_t)(ho_matmul_through(g, node, 1) >= 0) << 1 |
	       (ho_matmul_out_through(g, node) >= 0 ? HO_THROUGH_OUTPUT : 0);
}

/* BatchNormalization, with the Relu after it where the fusion found one (ho_bn_chain). */
static int k_bnorm(struct ho_backend *c, const struct ho_graph *g, const struct ho_node *n,
		   const struct ho_fusion *fuse, void *const *buf, struct ho_kernel *k,
		   struct ho_error *err)
{
	return ho_cpu_prep_bnorm(c, g, n, HO_FUSED(fuse, post), buf, k, err);
}

/* The families whose prepare takes neither fused nodes nor (some) the backend. */
#define HO_PLAIN(name, call)                                                                       \
	static int name(struct ho_backend *c, const struct ho_graph *g, const struct ho_node *n,   \
			const struct ho_fusion *fuse, void *const *buf, struct ho_kernel *k,       \
			struct ho_error *err)                                                      \
	{                                                                                          \
		(void)c;                                                                           \
		(void)fuse;                                                                        \
		return call;                                                                       \
	}
HO_PLAIN(k_lrn, ho_cpu_prep_lrn(c, g, n, buf, k, err))
HO_PLAIN(k_resize, ho_cpu_prep_resize(c, g, n, buf, k, err))
HO_PLAIN(k_pool, ho_cpu_prep_pool(c, g, n, buf, k, err))
HO_PLAIN(k_eltwise, ho_cpu_prep_eltwise(c, g, n, buf, k, err))
HO_PLAIN(k_binary, ho_cpu_prep_binary(c, g, n, buf, k, err))
HO_PLAIN(k_concat, ho_cpu_prep_concat(c, g, n, buf, k, err))
HO_PLAIN(k_softmax, ho_cpu_prep_softmax(c, g, n, buf, k, err))
HO_PLAIN(k_transpose, ho_cpu_prep_transpose(g, n, buf, k, err))
HO_PLAIN(k_slice, ho_cpu_prep_slice(g, n, buf, k, err))
HO_PLAIN(k_gather, ho_cpu_prep_gather(g, n, buf, k, err))
HO_PLAIN(k_reduce, ho_cpu_prep_reduce(c, g, n, buf, k, err))
HO_PLAIN(k_layer_norm, ho_cpu_prep_layer_norm(c, g, n, buf, k, err))
HO_PLAIN(k_unary, ho_cpu_prep_unary(g, n, buf, k, err))
HO_PLAIN(k_hardmax, ho_cpu_prep_hardmax(g, n, buf, k, err))
HO_PLAIN(k_typed, ho_cpu_prep_typed(g, n, buf, k, err))
HO_PLAIN(k_arg, ho_cpu_prep_arg(g, n, buf, k, err))
HO_PLAIN(k_cumsum, ho_cpu_prep_cumsum(g, n, buf, k, err))
HO_PLAIN(k_topk, ho_cpu_prep_topk(g, n, buf, k, err))
HO_PLAIN(k_trilu, ho_cpu_prep_trilu(g, n, buf, k, err))
HO_PLAIN(k_gather_elements, ho_cpu_prep_gather_elements(g, n, buf, k, err))
HO_PLAIN(k_nonzero, ho_cpu_prep_nonzero(g, n, buf, k, err))
HO_PLAIN(k_unique, ho_cpu_prep_unique(g, n, buf, k, err))
HO_PLAIN(k_loss, ho_cpu_prep_loss(g, n, buf, k, err))
HO_PLAIN(k_optimizer, ho_cpu_prep_optimizer(g, n, buf, k, err))
HO_PLAIN(k_move,
	 ho_cpu_prep_move(g, n, buf, c->channels_last && c->channels_last[n->inputs[0]], k, err))
HO_PLAIN(k_norm_loop, ho_cpu_prep_norm_loop(g, n, buf, k, err))
HO_PLAIN(k_recurrent, ho_cpu_prep_recurrent(g, n, buf, k, err))
HO_PLAIN(k_quant, ho_cpu_prep_quant(c, g, n, buf, k, err))
HO_PLAIN(k_einsum, ho_cpu_prep_einsum(c, g, n, buf, k, err))
HO_PLAIN(k_window, ho_cpu_prep_window(g, n, buf, k, err))
HO_PLAIN(k_det, ho_cpu_prep_det(g, n, buf, k, err))
HO_PLAIN(k_dropout, ho_cpu_prep_dropout(g, n, buf, k, err))
HO_PLAIN(k_grid_sample, ho_cpu_prep_grid_sample(g, n, buf, k, err))
HO_PLAIN(k_nms, ho_cpu_prep_nms(g, n, buf, k, err))
HO_PLAIN(k_dft, ho_cpu_prep_dft(g, n, buf, k, err))
HO_PLAIN(k_roi_align, ho_cpu_prep_roi_align(g, n, buf, k, err))
HO_PLAIN(k_tfidf, ho_cpu_prep_tfidf(g, n, buf, k, err))
HO_PLAIN(k_mel, ho_cpu_prep_mel(g, n, buf, k, err))
HO_PLAIN(k_string_cast, ho_cpu_prep_string_cast(g, n, buf, k, err))
HO_PLAIN(k_strnorm, ho_cpu_prep_strnorm(g, n, buf, k, err))
HO_PLAIN(k_sequence, ho_cpu_prep_sequence(g, n, buf, k, err))
HO_PLAIN(k_attention, ho_cpu_prep_attention(g, n, buf, k, err))
HO_PLAIN(k_rotary, ho_cpu_prep_rotary(g, n, buf, k, err))

static const struct ho_cpu_kernel_reg ho_cpu_kernels[] = {
    /* convolution (conv.c) */
    {"Conv", k_conv, 0, 0, false, false},
    {"ConvTranspose", k_conv, 0, 0, false, false},
    /* normalisation and reductions (norm.c) */
    {"BatchNormalization", k_bnorm, 0, 3, false, false}, /* training: and the running statistics */
    {"LRN", k_lrn, 0, 0, false, false},
    {"MeanVarianceNormalization", k_norm_loop, 0, 0, false, false}, /* a loop (norm.c) */
    {"Softmax", k_softmax, 0, 0, false, false},
    {"LogSoftmax", k_softmax, 0, 0, false, false},
    {"Dropout", k_dropout, 0, 2, true, false},	/* a view; its mask, when asked for (unary.c) */
    {"Hardmax", k_hardmax, 0, 0, false, false}, /* a loop (unary.c) */
    {"LayerNormalization", k_layer_norm, 0, 3, false, false},	/* with Mean and InvStdDev */
    {"InstanceNormalization", k_norm_loop, 0, 0, false, false}, /* a loop (norm.c) */
    {"RMSNormalization", k_norm_loop, 0, 0, false, false},	/* a loop (norm.c) */
    {"GroupNormalization", k_norm_loop, 0, 0, false, false},	/* a loop (norm.c) */
    /* Attention (attention.c): Y, present_key, present_value, qk_matmul_output */
    {"Attention", k_attention, 0, UINT32_MAX, false, false},
    {"RotaryEmbedding", k_rotary, 0, 0, false, false},
    /* along an axis, any numeric type (axis.c) */
    {"TopK", k_topk, 0, 2, true, false},     /* values and indices */
    {"Unique", k_unique, 0, 4, true, false}, /* Y, indices, inverse_indices, counts */
    {"NonZero", k_nonzero, 0, 0, true, false},
    {"ArgMax", k_arg, 0, 0, true, false},
    {"ArgMin", k_arg, 0, 0, true, false},
    {"CumSum", k_cumsum, 0, 0, true, false},
    {"Trilu", k_trilu, 0, 0, true, false},
    {"GatherElements", k_gather_elements, 0, 0, true, false},
    {"NonMaxSuppression", k_nms, 0, 0, true, false}, /* detect.c */
    {"RoiAlign", k_roi_align, 0, 0, false, false},
    /* text (text.c) */
    {"TfIdfVectorizer", k_tfidf, 0, 0, false, false},
    /* losses (loss.c) */
    {"NegativeLogLikelihoodLoss", k_loss, 0, 1, false, false},
    {"SoftmaxCrossEntropyLoss", k_loss, 0, 2, false, false}, /* and its log_prob */
    /* training optimisers (train.c): every output */
    {"Adagrad", k_optimizer, 0, UINT32_MAX, false, false},
    {"Adam", k_optimizer, 0, UINT32_MAX, false, false},
    {"Momentum", k_optimizer, 0, UINT32_MAX, false, false},
    /* pooling (pool.c) */
    {"MaxPool", k_pool, 0, 2, true, false}, /* and its Indices, as a loop (pool.c checks types) */
    {"AveragePool", k_pool, 0, 0, false, false},
    {"GlobalAveragePool", k_pool, 0, 0, false, false},
    {"GlobalMaxPool", k_pool, 0, 0, false, false},
    /* element-wise, one input (eltwise.c): also post-ops of a Conv or MatMul */
    {"Relu", k_eltwise, dnnl_eltwise_relu, 0, false, false},
    {"LeakyRelu", k_eltwise, dnnl_eltwise_relu, 0, false, false},
    {"Sigmoid", k_eltwise, dnnl_eltwise_logistic, 0, false, false},
    {"Tanh", k_eltwise, dnnl_eltwise_tanh, 0, false, false},
    {"Exp", k_eltwise, dnnl_eltwise_exp, 0, false, false},
    {"Log", k_eltwise, dnnl_eltwise_log, 0, false, false},
    {"Sqrt", k_eltwise, dnnl_eltwise_sqrt, 0, false, false},
    {"Abs", k_eltwise, dnnl_eltwise_abs, 0, false, false},
    {"Elu", k_eltwise, dnnl_eltwise_elu, 0, false, false},
    {"Softplus", k_eltwise, dnnl_eltwise_soft_relu, 0, false, false},
    {"Clip", k_eltwise, dnnl_eltwise_clip_v2, 0, false, false},
    {"HardSigmoid", k_eltwise, dnnl_eltwise_linear, 0, false,
     false},						   /* then clipped to [0, 1] by a post-op */
    {"Pow", k_eltwise, dnnl_eltwise_pow, 0, false, false}, /* by a constant scalar exponent */
    {"Gelu", k_eltwise, dnnl_eltwise_gelu_tanh, 0, false, false}, /* "none": gelu_erf (eltwise.c) */
    {"HardSwish", k_eltwise, dnnl_eltwise_hardswish, 0, false, false},
    /* element-wise, two inputs with broadcasting (eltwise.c) */
    {"Add", k_binary, 0, 0, false, false},
    {"Sub", k_binary, 0, 0, false, false},
    {"Mul", k_binary, 0, 0, false, false},
    {"Div", k_binary, 0, 0, false, false},
    {"Max", k_binary, 0, 0, false, false},
    {"Min", k_binary, 0, 0, false, false},
    /* matrix products (matmul.c) */
    {"MatMul", k_matmul, 0, 0, false, false},
    {"Gemm", k_gemm, 0, 0, false, false},
    {"Einsum", k_einsum, 0, 0, true,
     false},			       /* a batched product on oneDNN, else a loop (einsum.c) */
    {"Det", k_det, 0, 0, true, false}, /* a loop (matmul.c): float32 and float64 */
    /* quantized (quant.c): integer loops */
    {"QuantizeLinear", k_quant, 0, 0, true, false},
    {"DequantizeLinear", k_quant, 0, 0, true, false},
    {"DynamicQuantizeLinear", k_quant, 0, 3, true, false}, /* y, its scale and zero point */
    {"MatMulInteger", k_quant, 0, 0, true, false},
    {"QLinearMatMul", k_quant, 0, 0, true, false},
    {"ConvInteger", k_quant, 0, 0, true, false},
    {"QLinearConv", k_quant, 0, 0, true, false},
    /* recurrent (recurrent.c): Y, Y_h and (LSTM) Y_c */
    {"RNN", k_recurrent, 0, 2, false, false},
    {"GRU", k_recurrent, 0, 2, false, false},
    {"LSTM", k_recurrent, 0, 3, false, false},
    /* concatenation (concat.c) */
    {"Concat", k_concat, 0, 0, true, true}, /* any type: copies where oneDNN cannot */
    /* index maps (index_map.c) */
    {"Transpose", k_transpose, 0, 0, true, true},
    {"Slice", k_slice, 0, 0, true, true},
    {"Gather", k_gather, 0, 0, true, true},
    /* data movement of any type (movement.c) */
    {"Split", k_move, 0, HO_TYPED_MAX_IN, true, true},
    {"Pad", k_move, 0, 0, true, false},
    {"Tile", k_move, 0, 0, true, true},
    {"Expand", k_move, 0, 0, true, true},
    {"DepthToSpace", k_move, 0, 0, true, false},
    {"SpaceToDepth", k_move, 0, 0, true, false},
    {"ScatterElements", k_move, 0, 0, true, false},
    {"Scatter", k_move, 0, 0, true, false},
    {"ScatterND", k_move, 0, 0, true, false},
    {"GatherND", k_move, 0, 0, true, false},
    {"EyeLike", k_move, 0, 0, true, false},
    {"ConstantOfShape", k_move, 0, 0, true, false},
    {"OneHot", k_move, 0, 0, true, false},
    {"ReverseSequence", k_move, 0, 0, true, false},
    {"MaxUnpool", k_move, 0, 0, true, false},
    {"Compress", k_move, 0, 0, true, false},
    /* signal processing (signal.c) */
    {"HannWindow", k_window, 0, 0, true, false},
    {"HammingWindow", k_window, 0, 0, true, false},
    {"BlackmanWindow", k_window, 0, 0, true, false},
    {"DFT", k_dft, 0, 0, false, false},
    {"STFT", k_dft, 0, 0, false, false},
    {"MelWeightMatrix", k_mel, 0, 0, true, false},
    {"Resize", k_resize, 0, 0, false, false},
    {"Upsample", k_resize, 0, 0, false, false},
    {"GridSample", k_grid_sample, 0, 0, false, false}, /* a loop (index_map.c) */
    /* sequences, held dense (sequence.c): block copies of whole members */
    {"SequenceEmpty", k_sequence, 0, 0, true, true},
    {"SequenceConstruct", k_sequence, 0, 0, true, true},
    {"SequenceInsert", k_sequence, 0, 0, true, true},
    {"SequenceErase", k_sequence, 0, 0, true, true},
    {"SequenceAt", k_sequence, 0, 0, true, true},
    {"SequenceLength", k_sequence, 0, 0, true, true},
    {"ConcatFromSequence", k_sequence, 0, 0, true, true},
    {"SplitToSequence", k_sequence, 0, 0, true, true},
    /* strings (text.c) */
    {"StringNormalizer", k_strnorm, 0, 0, true, true},
};

const struct ho_cpu_kernel_reg *ho_cpu_kernel_reg(const char *op_type)
{
	/* families that list their operators once, in their own table */
	static const struct ho_cpu_kernel_reg unary = {"(unary.c)", k_unary, 0, 0, false, false},
					      reduce = {"(norm.c)", k_reduce, 0, 0, true, false};

	for (size_t i = 0; i < sizeof(ho_cpu_kernels) / sizeof(ho_cpu_kernels[0]); i++)
		if (!strcmp(ho_cpu_kernels[i].op, op_type))
			return &ho_cpu_kernels[i];
	return ho_cpu_is_unary(op_type) ? &unary : ho_cpu_is_reduce(op_type) ? &reduce : NULL;
}

const struct ho_cpu_kernel_reg *ho_cpu_kernel_for(const struct ho_graph *g, const struct ho_node *n)
{
	/* the typed loops check every type themselves */
	static const struct ho_cpu_kernel_reg typed = {"(typed.c)", k_typed, 0, 0, true, false};
	const struct ho_cpu_kernel_reg *reg = ho_cpu_kernel_reg(n->op_type);
	const struct ho_tensor *x = ho_node_input(g, n, 0), *e = ho_node_input(g, n, 1);
	/* oneDNN's Pow takes one constant float32 exponent */
	bool pow_tensor =
	    !strcmp(n->op_type, "Pow") && e &&
	    (e->dtype != HO_DT_FLOAT || ho_shape_numel(&e->shape) != 1 || !(e->flags & HO_T_KNOWN));

	static const struct ho_cpu_kernel_reg string_cast = {"(text.c)", k_string_cast, 0,
							     0,		 true,		true};

	if ((!strcmp(n->op_type, "Cast") || !strcmp(n->op_type, "CastLike")) && x &&
	    (x->dtype == HO_DT_STRING || g->tensors[n->outputs[0]].dtype == HO_DT_STRING))
		return &string_cast;
	if (!strcmp(n->op_type, "Clip") && x && x->dtype != HO_DT_FLOAT)
		return &typed;
	if (ho_cpu_is_typed(n->op_type) &&
	    (!reg || pow_tensor || n->n_inputs != 2 ||
	     g->tensors[n->outputs[0]].dtype != HO_DT_FLOAT || (x && x->dtype != HO_DT_FLOAT)))
		return &typed;
	return reg;
}
