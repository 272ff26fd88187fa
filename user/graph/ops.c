// SPDX-License-Identifier: MIT
/*
 * The operator table: every ONNX operator HeteroOpt knows, once, with what
 * each part of the project needs of it.  Shape inference takes its rule from
 * here, the cost features its class and FLOPs per element, fusion and the
 * executor whether it is a view or a post-op, the CPU backend how it treats
 * its input's memory layout.  Adding an operator is a line here, a shape
 * rule in shape/, and a kernel in a backend's own table.
 */
#include <string.h>

#include "shape/shape.h"

struct ho_op_entry {
	struct ho_op_info info; /* name, op class, flags, layout, FLOPs per element */
	int (*infer)(struct ho_infer *c);
};

static const struct ho_op_entry ho_ops[] = {
    /* elementwise, one input */
    {{"Relu", HO_OPC_MEMORY, HO_OP_POST, HO_LAYOUT_SAME, 1}, ho_infer_unary},
    {{"Sigmoid", HO_OPC_MEMORY, HO_OP_POST, HO_LAYOUT_SAME, 3}, ho_infer_unary},
    {{"Tanh", HO_OPC_MEMORY, HO_OP_POST, HO_LAYOUT_SAME, 1}, ho_infer_unary},
    {{"HardSigmoid", HO_OPC_MEMORY, HO_OP_POST, HO_LAYOUT_SAME, 3}, ho_infer_unary},
    {{"HardSwish", HO_OPC_MEMORY, HO_OP_POST, HO_LAYOUT_SAME, 4}, ho_infer_unary},
    {{"LeakyRelu", HO_OPC_MEMORY, HO_OP_POST, HO_LAYOUT_SAME, 1}, ho_infer_unary},
    {{"Elu", HO_OPC_MEMORY, HO_OP_POST, HO_LAYOUT_SAME, 1}, ho_infer_unary},
    {{"Selu", HO_OPC_MEMORY, 0, HO_LAYOUT_PLAIN, 1}, ho_infer_unary},
    {{"Celu", HO_OPC_MEMORY, 0, HO_LAYOUT_PLAIN, 1}, ho_infer_unary},
    {{"Gelu", HO_OPC_MEMORY, HO_OP_POST, HO_LAYOUT_SAME, 8}, ho_infer_unary},
    {{"Mish", HO_OPC_MEMORY, 0, HO_LAYOUT_PLAIN, 1}, ho_infer_unary},
    {{"Softplus", HO_OPC_MEMORY, HO_OP_POST, HO_LAYOUT_SAME, 1}, ho_infer_unary},
    {{"Softsign", HO_OPC_MEMORY, 0, HO_LAYOUT_PLAIN, 1}, ho_infer_unary},
    {{"ThresholdedRelu", HO_OPC_MEMORY, 0, HO_LAYOUT_PLAIN, 1}, ho_infer_unary},
    {{"Erf", HO_OPC_MEMORY, 0, HO_LAYOUT_SAME, 8}, ho_infer_unary},
    {{"Exp", HO_OPC_MEMORY, HO_OP_POST, HO_LAYOUT_SAME, 1}, ho_infer_unary},
    {{"Log", HO_OPC_MEMORY, HO_OP_POST, HO_LAYOUT_SAME, 1}, ho_infer_unary},
    {{"Sqrt", HO_OPC_MEMORY, HO_OP_POST, HO_LAYOUT_SAME, 1}, ho_infer_unary},
    {{"Neg", HO_OPC_MEMORY, 0, HO_LAYOUT_PLAIN, 1}, ho_infer_unary},
    {{"Abs", HO_OPC_MEMORY, HO_OP_POST, HO_LAYOUT_SAME, 1}, ho_infer_unary},
    {{"Reciprocal", HO_OPC_MEMORY, 0, HO_LAYOUT_PLAIN, 1}, ho_infer_unary},
    {{"Floor", HO_OPC_MEMORY, 0, HO_LAYOUT_PLAIN, 1}, ho_infer_unary},
    {{"Ceil", HO_OPC_MEMORY, 0, HO_LAYOUT_PLAIN, 1}, ho_infer_unary},
    {{"Round", HO_OPC_MEMORY, 0, HO_LAYOUT_PLAIN, 1}, ho_infer_unary},
    {{"Sign", HO_OPC_MEMORY, 0, HO_LAYOUT_PLAIN, 1}, ho_infer_unary},
    {{"Sin", HO_OPC_MEMORY, 0, HO_LAYOUT_PLAIN, 1}, ho_infer_unary},
    {{"Cos", HO_OPC_MEMORY, 0, HO_LAYOUT_PLAIN, 1}, ho_infer_unary},
    {{"Tan", HO_OPC_MEMORY, 0, HO_LAYOUT_PLAIN, 1}, ho_infer_unary},
    {{"Asin", HO_OPC_MEMORY, 0, HO_LAYOUT_PLAIN, 1}, ho_infer_unary},
    {{"Acos", HO_OPC_MEMORY, 0, HO_LAYOUT_PLAIN, 1}, ho_infer_unary},
    {{"Atan", HO_OPC_MEMORY, 0, HO_LAYOUT_PLAIN, 1}, ho_infer_unary},
    {{"Sinh", HO_OPC_MEMORY, 0, HO_LAYOUT_PLAIN, 1}, ho_infer_unary},
    {{"Cosh", HO_OPC_MEMORY, 0, HO_LAYOUT_PLAIN, 1}, ho_infer_unary},
    {{"Asinh", HO_OPC_MEMORY, 0, HO_LAYOUT_PLAIN, 1}, ho_infer_unary},
    {{"Acosh", HO_OPC_MEMORY, 0, HO_LAYOUT_PLAIN, 1}, ho_infer_unary},
    {{"Atanh", HO_OPC_MEMORY, 0, HO_LAYOUT_PLAIN, 1}, ho_infer_unary},
    {{"Identity", HO_OPC_MOVEMENT, HO_OP_VIEW, HO_LAYOUT_PLAIN, 0}, ho_infer_unary},
    {{"Not", HO_OPC_MEMORY, 0, HO_LAYOUT_PLAIN, 1}, ho_infer_unary},
    {{"IsNaN", HO_OPC_MEMORY, 0, HO_LAYOUT_PLAIN, 1}, ho_infer_unary},
    {{"IsInf", HO_OPC_MEMORY, 0, HO_LAYOUT_PLAIN, 1}, ho_infer_unary},
    {{"Dropout", HO_OPC_MOVEMENT, HO_OP_VIEW, HO_LAYOUT_PLAIN, 0}, ho_infer_unary},
    {{"Clip", HO_OPC_MEMORY, HO_OP_POST, HO_LAYOUT_SAME, 2}, ho_infer_clip},
    {{"InstanceNormalization", HO_OPC_MEMORY, 0, HO_LAYOUT_PLAIN, 5}, ho_infer_unary},
    {{"LpNormalization", HO_OPC_MEMORY, 0, HO_LAYOUT_PLAIN, 3}, ho_infer_unary},
    {{"LRN", HO_OPC_MEMORY, 0, HO_LAYOUT_PLAIN, 1}, ho_infer_unary},
    {{"MeanVarianceNormalization", HO_OPC_MEMORY, 0, HO_LAYOUT_PLAIN, 1}, ho_infer_unary},
    {{"Softmax", HO_OPC_MEMORY, 0, HO_LAYOUT_PLAIN, 3}, ho_infer_softmax},
    {{"LogSoftmax", HO_OPC_MEMORY, 0, HO_LAYOUT_PLAIN, 4}, ho_infer_softmax},
    {{"Hardmax", HO_OPC_MEMORY, 0, HO_LAYOUT_PLAIN, 1}, ho_infer_softmax},
    {{"CumSum", HO_OPC_MEMORY, 0, HO_LAYOUT_PLAIN, 1}, ho_infer_unary},
    {{"Trilu", HO_OPC_MEMORY, 0, HO_LAYOUT_PLAIN, 1}, ho_infer_unary},
    {{"Shrink", HO_OPC_MEMORY, 0, HO_LAYOUT_PLAIN, 1}, ho_infer_unary},
    {{"ScatterND", HO_OPC_MOVEMENT, 0, HO_LAYOUT_PLAIN, 0}, ho_infer_scatter_nd},
    {{"ScatterElements", HO_OPC_MOVEMENT, 0, HO_LAYOUT_PLAIN, 0}, ho_infer_unary},
    {{"Scatter", HO_OPC_MEMORY, 0, HO_LAYOUT_PLAIN, 1}, ho_infer_unary},
    {{"QuantizeLinear", HO_OPC_MEMORY, 0, HO_LAYOUT_PLAIN, 3}, ho_infer_quant},
    {{"DequantizeLinear", HO_OPC_MEMORY, 0, HO_LAYOUT_PLAIN, 2}, ho_infer_quant},
    {{"DynamicQuantizeLinear", HO_OPC_MEMORY, 0, HO_LAYOUT_PLAIN, 5}, ho_infer_quant},
    {{"Cast", HO_OPC_MOVEMENT, 0, HO_LAYOUT_PLAIN, 0}, ho_infer_cast},
    {{"CastLike", HO_OPC_MOVEMENT, 0, HO_LAYOUT_PLAIN, 0}, ho_infer_cast},
    /* elementwise with broadcasting */
    {{"Add", HO_OPC_MEMORY, HO_OP_BINARY, HO_LAYOUT_SAME, 1}, ho_infer_binary},
    {{"Sub", HO_OPC_MEMORY, HO_OP_BINARY, HO_LAYOUT_SAME, 1}, ho_infer_binary},
    {{"Mul", HO_OPC_MEMORY, HO_OP_BINARY, HO_LAYOUT_SAME, 1}, ho_infer_binary},
    {{"Div", HO_OPC_MEMORY, HO_OP_BINARY, HO_LAYOUT_SAME, 1}, ho_infer_binary},
    {{"Pow", HO_OPC_MEMORY, HO_OP_POST, HO_LAYOUT_SAME, 1}, ho_infer_binary},
    {{"Mod", HO_OPC_MEMORY, 0, HO_LAYOUT_PLAIN, 1}, ho_infer_binary},
    {{"Max", HO_OPC_MEMORY, HO_OP_BINARY, HO_LAYOUT_SAME, 1}, ho_infer_binary},
    {{"Min", HO_OPC_MEMORY, HO_OP_BINARY, HO_LAYOUT_SAME, 1}, ho_infer_binary},
    {{"Sum", HO_OPC_MEMORY, 0, HO_LAYOUT_PLAIN, 1}, ho_infer_binary},
    {{"Mean", HO_OPC_MEMORY, 0, HO_LAYOUT_PLAIN, 1}, ho_infer_binary},
    {{"PRelu", HO_OPC_MEMORY, 0, HO_LAYOUT_PLAIN, 1}, ho_infer_binary},
    {{"BitShift", HO_OPC_MEMORY, 0, HO_LAYOUT_PLAIN, 1}, ho_infer_binary},
    {{"BitwiseAnd", HO_OPC_MEMORY, 0, HO_LAYOUT_PLAIN, 1}, ho_infer_binary},
    {{"BitwiseOr", HO_OPC_MEMORY, 0, HO_LAYOUT_PLAIN, 1}, ho_infer_binary},
    {{"BitwiseXor", HO_OPC_MEMORY, 0, HO_LAYOUT_PLAIN, 1}, ho_infer_binary},
    {{"BitwiseNot", HO_OPC_MEMORY, 0, HO_LAYOUT_PLAIN, 1}, ho_infer_unary},
    {{"Equal", HO_OPC_MEMORY, 0, HO_LAYOUT_PLAIN, 1}, ho_infer_binary},
    {{"Less", HO_OPC_MEMORY, 0, HO_LAYOUT_PLAIN, 1}, ho_infer_binary},
    {{"Greater", HO_OPC_MEMORY, 0, HO_LAYOUT_PLAIN, 1}, ho_infer_binary},
    {{"LessOrEqual", HO_OPC_MEMORY, 0, HO_LAYOUT_PLAIN, 1}, ho_infer_binary},
    {{"GreaterOrEqual", HO_OPC_MEMORY, 0, HO_LAYOUT_PLAIN, 1}, ho_infer_binary},
    {{"And", HO_OPC_MEMORY, 0, HO_LAYOUT_PLAIN, 1}, ho_infer_binary},
    {{"Or", HO_OPC_MEMORY, 0, HO_LAYOUT_PLAIN, 1}, ho_infer_binary},
    {{"Xor", HO_OPC_MEMORY, 0, HO_LAYOUT_PLAIN, 1}, ho_infer_binary},
    {{"Where", HO_OPC_MEMORY, 0, HO_LAYOUT_PLAIN, 1}, ho_infer_where},
    /* dense math */
    {{"Conv", HO_OPC_COMPUTE, 0, HO_LAYOUT_ANY, 0}, ho_infer_conv},
    {{"ConvTranspose", HO_OPC_COMPUTE, 0, HO_LAYOUT_ANY, 0}, ho_infer_conv_transpose},
    {{"MatMul", HO_OPC_COMPUTE, 0, HO_LAYOUT_PLAIN, 0}, ho_infer_matmul},
    {{"Attention", HO_OPC_COMPUTE, 0, HO_LAYOUT_PLAIN, 0}, ho_infer_attention},
    {{"RotaryEmbedding", HO_OPC_MEMORY, 0, HO_LAYOUT_PLAIN, 6}, ho_infer_unary},
    {{"Gemm", HO_OPC_COMPUTE, 0, HO_LAYOUT_PLAIN, 0}, ho_infer_gemm},
    {{"Einsum", HO_OPC_COMPUTE, 0, HO_LAYOUT_PLAIN, 0}, ho_infer_einsum},
    {{"MatMulInteger", HO_OPC_COMPUTE, 0, HO_LAYOUT_PLAIN, 0}, ho_infer_matmul_quant},
    {{"QLinearMatMul", HO_OPC_COMPUTE, 0, HO_LAYOUT_PLAIN, 0}, ho_infer_matmul_quant},
    {{"ConvInteger", HO_OPC_COMPUTE, 0, HO_LAYOUT_PLAIN, 0}, ho_infer_conv_quant},
    {{"QLinearConv", HO_OPC_COMPUTE, 0, HO_LAYOUT_PLAIN, 0}, ho_infer_conv_quant},
    {{"RNN", HO_OPC_COMPUTE, 0, HO_LAYOUT_PLAIN, 0}, ho_infer_recurrent},
    {{"GRU", HO_OPC_COMPUTE, 0, HO_LAYOUT_PLAIN, 0}, ho_infer_recurrent},
    {{"LSTM", HO_OPC_COMPUTE, 0, HO_LAYOUT_PLAIN, 0}, ho_infer_recurrent},
    /* pooling and normalisation */
    {{"MaxPool", HO_OPC_MEMORY, 0, HO_LAYOUT_SAME, 1}, ho_infer_pool},
    {{"AveragePool", HO_OPC_MEMORY, 0, HO_LAYOUT_SAME, 1}, ho_infer_pool},
    {{"LpPool", HO_OPC_MEMORY, 0, HO_LAYOUT_PLAIN, 1}, ho_infer_pool},
    {{"GlobalAveragePool", HO_OPC_MEMORY, 0, HO_LAYOUT_SAME, 1}, ho_infer_global_pool},
    {{"GlobalMaxPool", HO_OPC_MEMORY, 0, HO_LAYOUT_SAME, 1}, ho_infer_global_pool},
    {{"GlobalLpPool", HO_OPC_MEMORY, 0, HO_LAYOUT_PLAIN, 1}, ho_infer_global_pool},
    {{"BatchNormalization", HO_OPC_MEMORY, 0, HO_LAYOUT_SAME, 2}, ho_infer_batchnorm},
    {{"LayerNormalization", HO_OPC_MEMORY, 0, HO_LAYOUT_PLAIN, 5}, ho_infer_layernorm},
    {{"RMSNormalization", HO_OPC_MEMORY, 0, HO_LAYOUT_PLAIN, 4}, ho_infer_layernorm},
    {{"GroupNormalization", HO_OPC_MEMORY, 0, HO_LAYOUT_PLAIN, 5}, ho_infer_unary},
    /* reductions */
    {{"ReduceMean", HO_OPC_MEMORY, 0, HO_LAYOUT_PLAIN, 1}, ho_infer_reduce},
    {{"ReduceSum", HO_OPC_MEMORY, 0, HO_LAYOUT_PLAIN, 1}, ho_infer_reduce},
    {{"ReduceMax", HO_OPC_MEMORY, 0, HO_LAYOUT_PLAIN, 1}, ho_infer_reduce},
    {{"ReduceMin", HO_OPC_MEMORY, 0, HO_LAYOUT_PLAIN, 1}, ho_infer_reduce},
    {{"ReduceProd", HO_OPC_MEMORY, 0, HO_LAYOUT_PLAIN, 1}, ho_infer_reduce},
    {{"ReduceL1", HO_OPC_MEMORY, 0, HO_LAYOUT_PLAIN, 1}, ho_infer_reduce},
    {{"ReduceL2", HO_OPC_MEMORY, 0, HO_LAYOUT_PLAIN, 1}, ho_infer_reduce},
    {{"ReduceLogSum", HO_OPC_MEMORY, 0, HO_LAYOUT_PLAIN, 1}, ho_infer_reduce},
    {{"ReduceLogSumExp", HO_OPC_MEMORY, 0, HO_LAYOUT_PLAIN, 1}, ho_infer_reduce},
    {{"ReduceSumSquare", HO_OPC_MEMORY, 0, HO_LAYOUT_PLAIN, 1}, ho_infer_reduce},
    {{"ArgMax", HO_OPC_MEMORY, 0, HO_LAYOUT_PLAIN, 1}, ho_infer_argminmax},
    {{"NegativeLogLikelihoodLoss", HO_OPC_MEMORY, 0, HO_LAYOUT_PLAIN, 2}, ho_infer_loss},
    {{"SoftmaxCrossEntropyLoss", HO_OPC_MEMORY, 0, HO_LAYOUT_PLAIN, 6}, ho_infer_loss},
    {{"ArgMin", HO_OPC_MEMORY, 0, HO_LAYOUT_PLAIN, 1}, ho_infer_argminmax},
    {{"TopK", HO_OPC_MEMORY, 0, HO_LAYOUT_PLAIN, 1}, ho_infer_topk},
    /* data movement and shapes */
    {{"Shape", HO_OPC_CONTROL, 0, HO_LAYOUT_PLAIN, 0}, ho_infer_shape_op},
    {{"Size", HO_OPC_CONTROL, 0, HO_LAYOUT_PLAIN, 0}, ho_infer_size},
    {{"Constant", HO_OPC_CONTROL, 0, HO_LAYOUT_PLAIN, 0}, ho_infer_constant},
    {{"ConstantOfShape", HO_OPC_CONTROL, 0, HO_LAYOUT_PLAIN, 0}, ho_infer_constant_of_shape},
    {{"Reshape", HO_OPC_MOVEMENT, HO_OP_VIEW, HO_LAYOUT_PLAIN, 0}, ho_infer_reshape},
    {{"Flatten", HO_OPC_MOVEMENT, HO_OP_VIEW, HO_LAYOUT_PLAIN, 0}, ho_infer_flatten},
    {{"Transpose", HO_OPC_MOVEMENT, 0, HO_LAYOUT_PLAIN, 0}, ho_infer_transpose},
    {{"Squeeze", HO_OPC_MOVEMENT, HO_OP_VIEW, HO_LAYOUT_PLAIN, 0}, ho_infer_squeeze},
    {{"Unsqueeze", HO_OPC_MOVEMENT, HO_OP_VIEW, HO_LAYOUT_PLAIN, 0}, ho_infer_unsqueeze},
    {{"Concat", HO_OPC_MOVEMENT, 0, HO_LAYOUT_ANY, 0}, ho_infer_concat},
    {{"Split", HO_OPC_MOVEMENT, 0, HO_LAYOUT_PLAIN, 0}, ho_infer_split},
    {{"Slice", HO_OPC_MOVEMENT, 0, HO_LAYOUT_PLAIN, 0}, ho_infer_slice},
    {{"Gather", HO_OPC_MOVEMENT, 0, HO_LAYOUT_PLAIN, 0}, ho_infer_gather},
    {{"GatherElements", HO_OPC_MOVEMENT, 0, HO_LAYOUT_PLAIN, 0}, ho_infer_same_as_input1},
    {{"GatherND", HO_OPC_MOVEMENT, 0, HO_LAYOUT_PLAIN, 0}, ho_infer_gather_nd},
    {{"EyeLike", HO_OPC_MOVEMENT, 0, HO_LAYOUT_PLAIN, 0}, ho_infer_eye_like},
    {{"GridSample", HO_OPC_MEMORY, 0, HO_LAYOUT_PLAIN, 8}, ho_infer_grid_sample},
    {{"OneHot", HO_OPC_MOVEMENT, 0, HO_LAYOUT_PLAIN, 0}, ho_infer_one_hot},
    {{"ReverseSequence", HO_OPC_MOVEMENT, 0, HO_LAYOUT_PLAIN, 0}, ho_infer_unary},
    {{"MaxUnpool", HO_OPC_MOVEMENT, 0, HO_LAYOUT_PLAIN, 0}, ho_infer_max_unpool},
    {{"DFT", HO_OPC_MEMORY, 0, HO_LAYOUT_PLAIN, 8}, ho_infer_dft},
    {{"MelWeightMatrix", HO_OPC_MEMORY, 0, HO_LAYOUT_PLAIN, 8}, ho_infer_mel_weight_matrix},
    {{"STFT", HO_OPC_MEMORY, 0, HO_LAYOUT_PLAIN, 8}, ho_infer_stft},
    {{"HannWindow", HO_OPC_MEMORY, 0, HO_LAYOUT_PLAIN, 3}, ho_infer_window},
    {{"HammingWindow", HO_OPC_MEMORY, 0, HO_LAYOUT_PLAIN, 3}, ho_infer_window},
    {{"BlackmanWindow", HO_OPC_MEMORY, 0, HO_LAYOUT_PLAIN, 5}, ho_infer_window},
    {{"Det", HO_OPC_MEMORY, 0, HO_LAYOUT_PLAIN, 1}, ho_infer_det},
    {{"Expand", HO_OPC_MOVEMENT, 0, HO_LAYOUT_PLAIN, 0}, ho_infer_expand},
    {{"Tile", HO_OPC_MOVEMENT, 0, HO_LAYOUT_PLAIN, 0}, ho_infer_tile},
    {{"Pad", HO_OPC_MOVEMENT, 0, HO_LAYOUT_SAME, 0}, ho_infer_pad},
    {{"Resize", HO_OPC_MEMORY, 0, HO_LAYOUT_SAME, 4}, ho_infer_resize},
    {{"Upsample", HO_OPC_MEMORY, 0, HO_LAYOUT_PLAIN, 4}, ho_infer_resize},
    {{"Range", HO_OPC_CONTROL, 0, HO_LAYOUT_PLAIN, 0}, ho_infer_range},
    {{"NonZero", HO_OPC_MOVEMENT, 0, HO_LAYOUT_PLAIN, 0}, ho_infer_nonzero},
    {{"Compress", HO_OPC_MOVEMENT, 0, HO_LAYOUT_PLAIN, 0}, ho_infer_compress},
    {{"Unique", HO_OPC_MEMORY, 0, HO_LAYOUT_PLAIN, 4}, ho_infer_unique},
    {{"NonMaxSuppression", HO_OPC_MEMORY, 0, HO_LAYOUT_PLAIN, 8}, ho_infer_nms},
    {{"RoiAlign", HO_OPC_MEMORY, 0, HO_LAYOUT_PLAIN, 8}, ho_infer_roi_align},
    {{"TfIdfVectorizer", HO_OPC_MEMORY, 0, HO_LAYOUT_PLAIN, 4}, ho_infer_tfidf},
    {{"StringNormalizer", HO_OPC_MEMORY, 0, HO_LAYOUT_PLAIN, 0}, ho_infer_string_normalizer},
    {{"DepthToSpace", HO_OPC_MOVEMENT, 0, HO_LAYOUT_PLAIN, 0}, ho_infer_depth_space},
    {{"SpaceToDepth", HO_OPC_MOVEMENT, 0, HO_LAYOUT_PLAIN, 0}, ho_infer_depth_space},
    /* sequences, held dense: [members, member shape] (shape/sequence.c) */
    {{"SequenceEmpty", HO_OPC_MOVEMENT, 0, HO_LAYOUT_PLAIN, 0}, ho_infer_sequence},
    {{"SequenceConstruct", HO_OPC_MOVEMENT, 0, HO_LAYOUT_PLAIN, 0}, ho_infer_sequence},
    {{"SequenceInsert", HO_OPC_MOVEMENT, 0, HO_LAYOUT_PLAIN, 0}, ho_infer_sequence},
    {{"SequenceErase", HO_OPC_MOVEMENT, 0, HO_LAYOUT_PLAIN, 0}, ho_infer_sequence},
    {{"SequenceAt", HO_OPC_MOVEMENT, 0, HO_LAYOUT_PLAIN, 0}, ho_infer_sequence},
    {{"SequenceLength", HO_OPC_CONTROL, 0, HO_LAYOUT_PLAIN, 0}, ho_infer_sequence},
    {{"ConcatFromSequence", HO_OPC_MOVEMENT, 0, HO_LAYOUT_PLAIN, 0}, ho_infer_sequence},
    {{"SplitToSequence", HO_OPC_MOVEMENT, 0, HO_LAYOUT_PLAIN, 0}, ho_infer_split_to_sequence},
    /* control flow */
    {{"If", HO_OPC_CONTROL, 0, HO_LAYOUT_PLAIN, 0}, ho_infer_if},
    {{"Loop", HO_OPC_CONTROL, 0, HO_LAYOUT_PLAIN, 0}, ho_infer_loop},
    {{"Scan", HO_OPC_CONTROL, 0, HO_LAYOUT_PLAIN, 0}, ho_infer_scan},
};

/*
 * ai.onnx.preview.training: one optimiser step over n tensors. FLOPs per
 * element of every output: an element of X costs Adagrad 9 (sqrt as one),
 * Momentum 7 (Nesterov's 2 more are left out), Adam 15, spread over X and
 * the state it updates (2, 2 and 3 outputs).
 */
static const struct ho_op_entry ho_training_ops[] = {
    {{"Adagrad", HO_OPC_MEMORY, 0, HO_LAYOUT_PLAIN, 4.5}, ho_infer_optimizer},
    {{"Adam", HO_OPC_MEMORY, 0, HO_LAYOUT_PLAIN, 5}, ho_infer_optimizer},
    {{"Momentum", HO_OPC_MEMORY, 0, HO_LAYOUT_PLAIN, 3.5}, ho_infer_optimizer},
};

/* Each domain's operators; names are unique across them. */
static const struct {
	const char *domain;
	const struct ho_op_entry *ops;
	size_t n;
} ho_domains[] = {
    {"", ho_ops, sizeof(ho_ops) / sizeof(ho_ops[0])},
    {HO_DOMAIN_TRAINING, ho_training_ops, sizeof(ho_training_ops) / sizeof(ho_training_ops[0])},
};

static const char *ho_domain_name(const char *domain)
{
	return !domain || !strcmp(domain, "ai.onnx") ? "" : domain;
}

/* In domain, or in any when domain is NULL. */
static const struct ho_op_entry *ho_op_entry_in(const char *domain, const char *op_type)
{
	for (size_t d = 0; d < sizeof(ho_domains) / sizeof(ho_domains[0]); d++) {
		if (domain && strcmp(ho_domains[d].domain, ho_domain_name(domain)))
			continue;
		for (size_t i = 0; i < ho_domains[d].n; i++)
			if (!strcmp(ho_domains[d].ops[i].info.name, op_type))
				return &ho_domains[d].ops[i];
	}
	return NULL;
}

static const struct ho_op_entry *ho_op_entry(const char *op_type)
{
	return ho_op_entry_in(NULL, op_type);
}

const struct ho_op_info *ho_op_info(const char *op_type)
{
	const struct ho_op_entry *e = ho_op_entry(op_type);

	return e ? &e->info : NULL;
}

const struct ho_op_info *ho_op_info_in(const char *domain, const char *op_type)
{
	const struct ho_op_entry *e = ho_op_entry_in(domain ? domain : "", op_type);

	return e ? &e->info : NULL;
}

int ho_op_optimizer_groups(const char *op_type)
{
	if (!ho_op_entry_in(HO_DOMAIN_TRAINING, op_type))
		return 0;
	return !strcmp(op_type, "Adam") ? 4 : 3;
}

bool ho_op_domain_known(const char *domain)
{
	for (size_t d = 0; d < sizeof(ho_domains) / sizeof(ho_domains[0]); d++)
		if (!strcmp(ho_domains[d].domain, ho_domain_name(domain)))
			return true;
	return false;
}

const char *ho_op_name_at(size_t i)
{
	for (size_t d = 0; d < sizeof(ho_domains) / sizeof(ho_domains[0]); d++) {
		if (i < ho_domains[d].n)
			return ho_domains[d].ops[i].info.name;
		i -= ho_domains[d].n;
	}
	return NULL;
}

bool ho_op_known(const char *op_type)
{
	return ho_op_entry(op_type) != NULL;
}

bool ho_op_is_view(const char *op_type)
{
	const struct ho_op_entry *e = ho_op_entry(op_type);

	return e && (e->info.flags & HO_OP_VIEW);
}

bool ho_op_is_post_op(const char *op_type)
{
	const struct ho_op_entry *e = ho_op_entry(op_type);

	return e && (e->info.flags & HO_OP_POST);
}

ho_infer_fn ho_op_shape_rule(const char *op_type)
{
	const struct ho_op_entry *e = ho_op_entry(op_type);

	return e ? e->infer : NULL;
}
