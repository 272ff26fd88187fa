/* SPDX-License-Identifier: MIT */
/*
 * HeteroOpt graph IR: the operator graph shared by the ONNX front end, the
 * scheduler and the runtime.
 *
 * Ownership: a struct ho_graph owns every node, tensor, attribute, string and
 * weight buffer reachable from it (weights may point into the decoded model
 * the graph keeps alive).  ho_graph_free() releases all of it.  Nothing here
 * uses global mutable state; errors are returned as -errno and described in a
 * caller-provided struct ho_error.
 */
#ifndef HETEROOPT_GRAPH_H
#define HETEROOPT_GRAPH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "heteroopt/error.h"

#ifdef __cplusplus
extern "C" {
#endif

#define HO_MAX_RANK 8
#define HO_DIM_UNKNOWN (-1)

/* Element types use ONNX's TensorProto.DataType numbering. */
enum ho_dtype {
	HO_DT_UNDEFINED = 0,
	HO_DT_FLOAT = 1,
	HO_DT_UINT8 = 2,
	HO_DT_INT8 = 3,
	HO_DT_UINT16 = 4,
	HO_DT_INT16 = 5,
	HO_DT_INT32 = 6,
	HO_DT_INT64 = 7,
	HO_DT_STRING = 8,
	HO_DT_BOOL = 9,
	HO_DT_FLOAT16 = 10,
	HO_DT_DOUBLE = 11,
	HO_DT_UINT32 = 12,
	HO_DT_UINT64 = 13,
	HO_DT_COMPLEX64 = 14,
	HO_DT_COMPLEX128 = 15,
	HO_DT_BFLOAT16 = 16,
	HO_DT_COUNT
};

/*
 * A shape.  rank < 0: rank unknown.  dim[i] == HO_DIM_UNKNOWN: that extent is
 * unknown; sym[i] then names it when the model did (e.g. "batch").
 */
struct ho_shape {
	int rank;
	int64_t dim[HO_MAX_RANK];
	const char *sym[HO_MAX_RANK];
};

/*
 * A small constant known at load time (initializer, Constant node, or folded
 * shape arithmetic).  Integer and bool values live in i, floating ones in f.
 */
struct ho_value {
	int dtype;
	size_t count;
	int64_t *i;
	double *f;
};

/* Attribute kinds use ONNX's AttributeProto.AttributeType numbering. */
enum ho_attr_type {
	HO_ATTR_UNDEFINED = 0,
	HO_ATTR_FLOAT = 1,
	HO_ATTR_INT = 2,
	HO_ATTR_STRING = 3,
	HO_ATTR_TENSOR = 4,
	HO_ATTR_GRAPH = 5,
	HO_ATTR_FLOATS = 6,
	HO_ATTR_INTS = 7,
	HO_ATTR_STRINGS = 8,
	HO_ATTR_TENSORS = 9,
	HO_ATTR_GRAPHS = 10,
	HO_ATTR_SPARSE_TENSOR = 11,
	HO_ATTR_SPARSE_TENSORS = 12,
	HO_ATTR_TYPE_PROTO = 13,
	HO_ATTR_TYPE_PROTOS = 14,
};

/* Dense constant data: a tensor attribute or a weight. */
struct ho_const {
	int dtype;
	struct ho_shape shape;
	const void *data; /* little-endian elements, NULL for strings */
	uint64_t len;	  /* bytes at data */
};

struct ho_graph;

struct ho_attr {
	const char *name;
	int type;      /* enum ho_attr_type */
	int64_t i;     /* INT */
	double f;      /* FLOAT */
	const char *s; /* STRING (NUL-terminated copy) */
	size_t s_len;
	size_t n;	      /* element count of the list kinds below */
	int64_t *ints;	      /* INTS */
	double *floats;	      /* FLOATS */
	const char **strings; /* STRINGS */
	struct ho_const *t;   /* TENSOR (n = 1) or TENSORS */
	struct ho_graph **g;  /* GRAPH (n = 1) or GRAPHS */
};

/* Tensor flags. */
#define HO_T_INITIALIZER 0x01u /* weight stored in the model */
#define HO_T_CONSTANT 0x02u    /* output of a Constant node */
#define HO_T_INPUT 0x04u       /* graph input fed by the caller */
#define HO_T_OUTPUT 0x08u      /* graph output */
#define HO_T_OUTER 0x10u       /* subgraph reference to an enclosing graph's tensor */
#define HO_T_FOLDED 0x20u      /* value computed at load time (shape arithmetic) */
#define HO_T_DECLARED 0x40u    /* the model declared a shape for it (decl) */
#define HO_T_BOUND 0x80u       /* an input the plan is made for the values of (bind_value) */
#define HO_T_AT_BOUND                                                                              \
	0x100u /* extents a run decides, priced at their bound (ho_graph_infer_bounds) */
#define HO_T_USER_BOUND 0x200u /* ... the user's (struct ho_extent_bound) */
#define HO_T_WIDENED 0x400u    /* float16 in the model, computed in float32 (user/graph/widen.c) */
/* Its values are known before a run: a weight, a constant, folded, or a bound input. */
#define HO_T_KNOWN (HO_T_INITIALIZER | HO_T_CONSTANT | HO_T_FOLDED | HO_T_BOUND)

struct ho_tensor {
	const char *name;
	int dtype;
	struct ho_shape shape; /* inferred (inputs: declared, then bound) */
	struct ho_shape decl;  /* declared in value_info/outputs, if HO_T_DECLARED */
	uint64_t bytes;	       /* 0 until the shape is fully known */
	uint32_t flags;
	int32_t producer; /* node id, -1 for inputs, weights, outer refs */
	uint32_t n_consumers;
	int32_t *consumers; /* node ids, in topological order */
	int32_t outer;	    /* HO_T_OUTER: tensor id in the parent graph */
	const void *data;   /* weights: little-endian elements, else NULL */
	uint64_t data_len;
	struct ho_value *value; /* small constant value, when known */
};

/* Operator classes for the cost model. */
enum ho_op_class {
	HO_OPC_COMPUTE = 0,  /* dense math: Conv, MatMul, Gemm */
	HO_OPC_MEMORY = 1,   /* streaming: elementwise, normalisation, pooling */
	HO_OPC_MOVEMENT = 2, /* data movement: reshape, transpose, concat, gather */
	HO_OPC_CONTROL = 3,  /* control and shape bookkeeping: If, Loop, Shape */
};

struct ho_features {
	double flops;		/* floating-point operations, a MAC counted as 2 */
	double macs;		/* multiply-accumulates of Conv/MatMul/Gemm */
	uint64_t bytes_read;	/* all inputs, weights included */
	uint64_t bytes_written; /* all outputs */
	uint64_t param_bytes;	/* inputs that are weights */
	double intensity;	/* flops / (bytes_read + bytes_written) */
	int op_class;		/* enum ho_op_class */
};

/* Node flags. */
#define HO_N_FOLDED 0x01u    /* every output was computed at load time */
#define HO_N_COMPOSITE 0x02u /* carries subgraphs (If, Loop, Scan) */
/* its shapes a run decides: priced at their bounds (ho_graph_infer_bounds), checked and
 * planned by the runtime once a run has decided them */
#define HO_N_RUN_DECIDES 0x04u

struct ho_node {
	const char *name;
	const char *op_type;
	const char *domain; /* "" for the default ONNX domain */
	int64_t opset;	    /* opset version imported for that domain */
	uint32_t n_inputs, n_outputs, n_attrs, n_subgraphs, n_implicit;
	int32_t *inputs;   /* tensor ids, -1 for an omitted optional input */
	int32_t *outputs;  /* tensor ids, -1 for an omitted optional output */
	int32_t *implicit; /* outer tensors that the subgraphs read */
	struct ho_attr *attrs;
	struct ho_graph **subgraphs;
	uint32_t flags;
	struct ho_features feat;
	/* the outputs of the model's nodes folded into this one at load (a Gelu or
	 * LayerNormalization it spelled out in pieces: user/graph/patterns.c) */
	const char **absorbed;
	uint32_t n_absorbed;
};

struct ho_opset {
	const char *domain;
	int64_t version;
};

struct ho_graph_priv;

struct ho_graph {
	const char *name;
	uint32_t n_nodes, n_tensors, n_inputs, n_outputs, n_opsets;
	struct ho_node *nodes;
	struct ho_tensor *tensors;
	int32_t *inputs; /* graph inputs the caller feeds (not weights) */
	int32_t *outputs;
	int32_t *topo; /* n_nodes node ids in a topological order */
	struct ho_opset *opsets;
	int64_t ir_version;
	const char *producer;
	struct ho_graph *parent; /* enclosing graph of a subgraph */
	struct ho_graph_priv *priv;
};

/* Loading (user/graph/onnx_import.c). */
struct ho_load_opts {
	/*
	 * Folder that external-data locations are relative to; NULL: the
	 * model file's folder (ho_onnx_load) or refuse external data
	 * (ho_onnx_load_buffer).
	 */
	const char *base_dir;
};

int ho_onnx_load(const char *path, const struct ho_load_opts *opts, struct ho_graph **out,
		 struct ho_error *err);
int ho_onnx_load_buffer(const void *buf, size_t len, const struct ho_load_opts *opts,
			struct ho_graph **out, struct ho_error *err);
void ho_graph_free(struct ho_graph *g);
/*
 * A TensorProto on its own in a file, as the ONNX backend tests keep their
 * inputs and outputs: its type, shape and data, the data malloc'd (free()
 * out->data; NULL for an empty tensor).  The name, if any, in name[len].
 */
int ho_onnx_tensor_read(const char *path, struct ho_const *out, char *name, size_t len,
			struct ho_error *err);

/* Graph queries and checks (user/graph/graph.c). */
int32_t ho_graph_find_tensor(const struct ho_graph *g, const char *name);
/* Two-input node n's input other than tensor t; -1 if t is not one of them. */
int32_t ho_other_input(const struct ho_graph *g, int32_t n, int32_t t);
/* A node that runs: not folded at load time, not a Constant (the scheduler's tasks). */
bool ho_node_is_task(const struct ho_node *n);
int ho_graph_validate(struct ho_graph *g, struct ho_error *err);
/*
 * The nodes of g (shapes inferred) whose shapes only a run decides: every
 * node that runs and reads or writes a tensor of unknown shape, and every
 * one after such a node (take[] per node; NULL: only counted).  How many.
 */
uint32_t ho_graph_run_decides(const struct ho_graph *g, bool *take);
/* A user's bound on a tensor whose extents a run decides: each at most max. */
struct ho_extent_bound {
	const char *tensor;
	int64_t max;
};
/*
 * The shapes a run decides, at their largest (user/graph/shape/bounds.c): shape
 * inference again, each output whose extents its inputs' values decide at the
 * most they can be (a NonZero's every element of its input, a
 * NonMaxSuppression's every box up to its limit per class, a TopK's whole
 * axis, ...) or the user's bound on it where one is given; those outputs get
 * HO_T_AT_BOUND (and HO_T_USER_BOUND), what follows them its shapes from
 * theirs, and features for the cost model.  For pricing and memory: the run
 * still plans on the real extents.  A bound naming no such tensor is an
 * error; so is one a tensor never needs.  The number of tensors bounded.
 */
int ho_graph_infer_bounds(struct ho_graph *g, const struct ho_extent_bound *bounds, uint32_t n,
			  struct ho_error *err);
/* Parse "NAME=N" (--bound) into b; b->tensor is malloc'ed, the caller frees it. */
int ho_parse_bound_arg(const char *arg, struct ho_extent_bound *b, struct ho_error *err);
/* How tensor t (HO_T_AT_BOUND) is bounded, in words. */
const char *ho_bound_how(const struct ho_graph *g, const struct ho_tensor *t);
/* Whether g or a subgraph of it has a tensor of that name. */
bool ho_graph_names_tensor(const struct ho_graph *g, const char *name);
/* The extents of tensor id that g leaves to the run (unknown; id < 0: every one),
 * against the shape s a run gave it: 0, or an error naming the tensor and bound b. */
int ho_extent_check(const struct ho_graph *g, int32_t id, const struct ho_shape *s,
		    const struct ho_extent_bound *b, struct ho_error *err);
/*
 * A graph of the nodes of g (shapes inferred) that take marks, in g's order
 * (user/graph/extract.c): the tensors they read and none of them writes are
 * its inputs (fed at each run, of g's shapes) or, where g knows their
 * values, constants of it; those they write that g outputs or another node
 * reads, its outputs.  Its tensors keep g's ids (and names), so that the
 * outer references of subgraphs hold.  It shares g's attributes, subgraphs
 * and weights: free it before g.
 */
int ho_graph_extract(const struct ho_graph *g, const bool *take, struct ho_graph **out,
		     struct ho_error *err);
/*
 * g (shapes inferred) with each If whose condition is known replaced by its
 * branch's nodes (user/graph/inline.c), or *out NULL where there is none.
 * Tensors keep g's ids, the branches' come after; (*origin)[i] (malloc'ed)
 * is the node of g node i of *out comes from.  It shares g's attributes,
 * names and bytes: free it before g.  Infer its shapes again.
 */
int ho_graph_inline_ifs(const struct ho_graph *g, struct ho_graph **out, uint32_t **origin,
			struct ho_error *err);
const char *ho_dtype_name(int dtype);
/* Bytes per element, 0 if none.  A string element is a pointer to NUL-terminated UTF-8 bytes
 * (held by whoever made the tensor: the graph, a kernel of the plan, the caller's input). */
int ho_dtype_size(int dtype);
/* n strings and their bytes in one malloc'd block (pointers first): free() releases all. */
const char **ho_strings_copy(const char *const *s, size_t n, size_t *bytes);
int64_t ho_shape_numel(const struct ho_shape *s); /* -1 if not fully known */
/* a and b are one fully known shape. */
bool ho_shape_same(const struct ho_shape *a, const struct ho_shape *b);
/* A 4-D shape whose NCHW and NHWC orders are the same bytes: H and W of 1. */
bool ho_shape_layout_free(const struct ho_shape *s);
const struct ho_attr *ho_node_attr(const struct ho_node *n, const char *name);
/* Attribute name of its type, or def where absent (or of another type). */
int64_t ho_node_attr_i(const struct ho_node *n, const char *name, int64_t def);
float ho_node_attr_f(const struct ho_node *n, const char *name, float def);
/* INTS attribute into v[0..want-1], def where absent; false if present with another length. */
bool ho_node_attr_ints(const struct ho_node *n, const char *name, int64_t *v, size_t want,
		       int64_t def);
/* Tensor t's integers (int64 or int32) at data, up to max of them into v: their count, or
 * -1 where it holds more, another type, or no bytes. */
int ho_tensor_ints(const struct ho_tensor *t, const void *data, int64_t *v, int max);
/* Input i of n, or NULL where it is omitted. */
const struct ho_tensor *ho_node_input(const struct ho_graph *g, const struct ho_node *n,
				      uint32_t i);

/*
 * Bind a graph input's shape, e.g. from "--shape input=1x3x224x224".  The
 * dims must agree with the declared ones wherever those are fixed.
 */
int ho_graph_bind_input(struct ho_graph *g, const char *name, const int64_t *dims, int rank,
			struct ho_error *err);
/*
 * Bind a graph input's shape and its values (len bytes of dtype, the
 * model's type): shape inference then folds what they decide (a Reshape's
 * shape, a Resize's scales), and a plan is made for them; a run given other
 * values for it is refused.  For inputs that decide shapes.
 */
int ho_graph_bind_value(struct ho_graph *g, const char *name, int dtype, const int64_t *dims,
			int rank, const void *data, size_t len, struct ho_error *err);
/* Parse "NAME=D0xD1x..." into name (malloc'ed by the caller's buffer) and dims. */
int ho_parse_shape_arg(const char *arg, char *name, size_t name_len, int64_t *dims, int *rank,
		       struct ho_error *err);

/*
 * Shape inference and constant folding (user/graph/shape/); on
 * success it also computes every node's cost features.
 */
int ho_shape_infer(struct ho_graph *g, struct ho_error *err);

/* Per-node cost features (user/graph/features.c), again: after shapes were changed by hand. */
void ho_features_compute(struct ho_graph *g);
const char *ho_op_class_name(int op_class);
/*
 * Ops whose output is their first input's bytes under another shape: the
 * runtime points at the source instead of running them, wherever the device
 * can read the source.
 */
bool ho_op_is_view(const char *op_type);
/* Whether node n of g runs as a view (graph/views.c): a view operator, a Dropout only
 * where it is the identity (in inference, or in training at a known ratio of 0), a
 * Transpose that moves only axes of extent 1, whose bytes stay in their order, and a
 * Gather or Slice whose output is one run of its input's bytes (not a graph output). */
bool ho_node_is_view(const struct ho_graph *g, const struct ho_node *n);
/* Where view n's output starts in its input's bytes: 0 but for a Gather's or a Slice's. */
uint64_t ho_view_offset(const struct ho_graph *g, const struct ho_node *n);
/*
 * Concat in place (graph/views.c): per tensor, the Concat whose output it may be written
 * straight into (its run of the output starting off[t] bytes in), or -1: each input's
 * ho_written_source, for every input of such a Concat, which runs nothing where the
 * executor takes them all in place.
 */
void ho_concat_in_place(const struct ho_graph *g, int32_t *by, uint64_t *off);
/* The tensor a node writes whose bytes t is: t, or the source of the views t is of all of
 * (a Reshape's); -1 where t is part of it (a Slice's run). */
int32_t ho_written_source(const struct ho_graph *g, int32_t t);

/* What the operator table (user/graph/ops.c) knows of one operator. */
#define HO_OP_VIEW 0x1u	  /* output: the first input's bytes under another shape */
#define HO_OP_POST 0x2u	  /* element-wise, taken into a Conv or MatMul kernel after it */
#define HO_OP_BINARY 0x4u /* element-wise with two broadcast inputs */
enum ho_layout_class {
	HO_LAYOUT_PLAIN, /* reads and writes plain (row-major) tensors */
	HO_LAYOUT_SAME,	 /* works in any memory format, its output in its input's */
	HO_LAYOUT_ANY,	 /* reads any memory format (Conv, Concat), writes its own */
};
struct ho_op_info {
	const char *name;
	int op_class;	       /* enum ho_op_class */
	unsigned flags;	       /* HO_OP_* */
	int layout;	       /* enum ho_layout_class */
	double flops_per_elem; /* per output element, for the streaming classes */
};
/* The one other domain whose operators run: ONNX's training optimisers. */
#define HO_DOMAIN_TRAINING "ai.onnx.preview.training"
/* The operator's entry; NULL when HeteroOpt does not know it. */
const struct ho_op_info *ho_op_info(const char *op_type);
/* The same, only where its domain is domain ("" or "ai.onnx": the default). */
const struct ho_op_info *ho_op_info_in(const char *domain, const char *op_type);
/*
 * A training optimiser's groups of n inputs after R and T: X, G and its
 * state (Adagrad H, Momentum V: 3; Adam V and H: 4); its outputs are the
 * groups but G. 0 for any other operator.
 */
int ho_op_optimizer_groups(const char *op_type);
/* Whether any operator HeteroOpt knows is in domain. */
bool ho_op_domain_known(const char *domain);
bool ho_op_known(const char *op_type);
/* The i-th operator HeteroOpt knows (every domain), NULL past the last: to list them. */
const char *ho_op_name_at(size_t i);

/*
 * Kernel classes and families (user/graph/family.c), what the probes measure
 * and the cost model predicts from.  A class gets one fitted cost model; a
 * family is one kernel with all but its extent fixed (a Conv's weights,
 * strides, pads, group and fused chain), whose time grows with its work.
 */
enum ho_kernel_class {
	HO_KC_CONV,
	HO_KC_CONV_DW,	      /* group == input channels */
	HO_KC_CONV_TRANSPOSE, /* ConvTranspose */
	HO_KC_CONV_3X3,	      /* dense 3x3 stride 1: the shape Winograd kernels take */
	HO_KC_MATMUL,	      /* MatMul, Gemm */
	HO_KC_ELTWISE,
	HO_KC_POOL,
	HO_KC_NORM,
	HO_KC_SOFTMAX,
	HO_KC_REDUCE,
	HO_KC_MOVEMENT,
	HO_KC_OTHER,
	HO_KC_COUNT
};
int ho_kernel_class(const struct ho_graph *g, const struct ho_node *n);
const char *ho_kernel_class_name(int kc);
int ho_kernel_class_find(const char *name); /* -1 if none */
/* A convolution's class: its family is keyed by its weights, its time by their FLOPs. */
bool ho_kernel_class_convolves(int kc);
/* The class whose model prices kc where a profile fitted none for kc itself (older
 * profiles have no conv_transpose): kc, or the class it is a kind of. */
int ho_kernel_class_fallback(int kc);
/* The family key of node id ("Conv float32 w=64x64x3x3 strides=1x1 ... +Relu"); returns its class.
 */
int ho_node_family(const struct ho_graph *g, uint32_t id, char *buf, size_t len);
/* A node's work for scaling within a family: its FLOPs, or its bytes where it has none. */
double ho_node_work(const struct ho_node *n);
/* The output channels a Conv's or ConvTranspose's kernel computes in blocks (from its weights):
 * all of them, or one group's of a grouped (not depthwise) one; 0 for any other node. */
double ho_node_block_channels(const struct ho_graph *g, const struct ho_node *n);
/* The input channels its kernel blocks as well: a dense ConvTranspose's (oneDNN runs it on
 * backward-data kernels, blocked on both sides); 0 for any other node. */
double ho_node_block_in_channels(const struct ho_graph *g, const struct ho_node *n);
/* The share of a 2-D Conv's kernel taps some output reads inside its input (one in the padding
 * for all is never computed); 1 for any other node.  Its FLOPs, priced, are its MACs' so many. */
double ho_node_tap_share(const struct ho_graph *g, const struct ho_node *n);
/* How much more work channels take done in blocks of block: ceil(c / b) * b / c (1: none). */
double ho_channel_pad(double channels, uint32_t block);

/* Kernel fusion told from the graph alone (user/graph/fusion.c). */
/* Element-wise ops a Conv or MatMul kernel applies as it writes. */
bool ho_op_is_post_op(const char *op_type);
/* The only reader of tensor t, reading it as its first input; -1 if none or t is an output. */
int32_t ho_sole_reader(const struct ho_graph *g, int32_t t);
/*
 * What a Conv's kernel can take in: a constant BatchNormalization (bn; not
 * after a ConvTranspose), then an element-wise node (post), each the sole
 * reader of the one before; -1 where there is none.  post may also be the
 * Mul of x by a gate of x (x * Sigmoid(x), a swish; x * HardSigmoid(x), a
 * HardSwish) whose x the Conv (or its batch norm) writes: that gate
 * (ho_gate_of_mul) is part of the chain too.  The chain fuses where all of
 * it runs on one device.
 */
void ho_conv_chain(const struct ho_graph *g, uint32_t conv, int32_t *bn, int32_t *post);
/*
 * An inference BatchNormalization no Conv's chain takes in (a pre-activation
 * block's, after a Concat: densenet121's 62) and the Relu that is the sole reader
 * of its output (post), or -1: the two one kernel, one pass over memory.
 */
void ho_bn_chain(const struct ho_graph *g, uint32_t bn, int32_t *post);
/*
 * Where ho_conv_chain finds no post: a residual connection, the Add of the
 * Conv's (or its batch norm's) output and another tensor of its shape that
 * is not a constant, the Add the sole reader of that output; and after it
 * an element-wise node (*post; -1 if none).  The Add; else -1.  A kernel
 * takes it in by adding its result to the other tensor where it lies, so
 * that tensor's bytes become the Add's output.  So the other tensor is made,
 * and read by every reader but the Add, before the Conv by the graph (an
 * identity shortcut; a projection's convolution runs beside the block), by
 * no view and through none.  2-D only, and not for a dense 3x3
 * (HO_KC_CONV_3X3), whose Winograd kernel is worth more.
 */
int32_t ho_conv_residual(const struct ho_graph *g, uint32_t conv, int32_t bn, int32_t *post);
/*
 * A Conv's weights w ([oc, per]) and bias b (NULL: none) with the constant batch
 * norm bn after it folded in, into fw and fb: each output channel scaled by
 * gamma / sqrt(var + eps), its bias moved.  p: bn's gamma, beta, mean and var.
 */
void ho_bn_fold(const struct ho_node *bn, const float *const p[4], const float *w, const float *b,
		int64_t oc, int64_t per, float *fw, float *fb);
/*
 * m is the Mul of x by a gate of x read by nothing else: Sigmoid(x) (a
 * swish) or HardSigmoid(x) with alpha 1/6 and beta 1/2 (a HardSwish).  The
 * gate; else -1.
 */
int32_t ho_gate_of_mul(const struct ho_graph *g, int32_t m);
/* That gate is a Sigmoid (the Mul is a swish), not a HardSigmoid (a HardSwish). */
bool ho_gate_is_sigmoid(const struct ho_graph *g, int32_t gate);
/*
 * The same for a MatMul by constant [K, N] weights: the Add of a constant
 * [N] bias (add), then an element-wise node (post).  Weights and bias may
 * come through views (which the kernel reads as they are placed).
 */
void ho_matmul_chain(const struct ho_graph *g, uint32_t mm, int32_t *add, int32_t *post);
/*
 * The Transpose whose output is input k (0 or 1) of batched MatMul mm, read by
 * nothing else, that a matrix product can read where the Transpose's input lies:
 * its last two axes, there, have one of stride 1 (ho_transpose_strides).  Equal
 * ranks of 3 or more, equal batch extents, float.  A kernel that reads it so
 * (ho_backend_ops.folds_transposes) leaves the Transpose nothing to do: -1 if none.
 */
int32_t ho_matmul_through(const struct ho_graph *g, uint32_t mm, uint32_t k);
/*
 * The Transpose that alone reads the output of batched MatMul mm (as ho_matmul_through)
 * and keeps its last axis last: the product can write its rows where the Transpose
 * would put them (ho_transpose_out_strides), and the Transpose has nothing to do: -1 if
 * none.  HO_THROUGH_OUTPUT marks it among the inputs' bits of folds_transposes.
 */
int32_t ho_matmul_out_through(const struct ho_graph *g, uint32_t mm);
#define HO_THROUGH_OUTPUT (1u << 31)
/* Transpose n's perm over r axes (ONNX's default: reversed): false where it is no
 * permutation of 0..r-1. */
bool ho_transpose_perm(const struct ho_node *n, int r, int64_t *perm);
/* The element strides of Transpose tr's output axes in its input's bytes. */
void ho_transpose_strides(const struct ho_graph *g, uint32_t tr, int64_t *stride);
/* The element strides of Transpose tr's input axes in its output's bytes. */
void ho_transpose_out_strides(const struct ho_graph *g, uint32_t tr, int64_t *stride);
/*
 * The nodes the kernel of head (a Conv, ConvTranspose, MatMul or lone BatchNormalization)
 * may take in, each the only reader of the one before: link[0] its batch norm or bias
 * Add, link[1] a residual Add (ho_conv_residual), link[2] a swish's gate, link[3] its
 * element-wise node, or the Transpose after a batched MatMul (ho_matmul_out_through);
 * -1 where none.  The one list the simulator charges as one kernel and the backends are
 * asked about.
 */
void ho_chain_links(const struct ho_graph *g, uint32_t head, int32_t link[4]);
/* t's bytes are in the graph (an initializer's, a Constant's), all of them. */
static inline bool ho_tensor_holds_bytes(const struct ho_tensor *t)
{
	return t->data && t->data_len >= t->bytes;
}
/*
 * Node n reads tensor t only through inputs whose bit is set in inputs (bit k: input k),
 * never through an implicit input (a subgraph's): what a kernel that takes those inputs
 * over (ho_backend_ops.takes_over) leaves to read of t.
 */
bool ho_reads_only_through(const struct ho_node *n, int32_t t, uint32_t inputs);
/* The tensor t shows through views (ho_op_is_view) run at run time; t if none. */
int32_t ho_view_root(const struct ho_graph *g, int32_t t);

#ifdef __cplusplus
}
#endif
#endif /* HETEROOPT_GRAPH_H */
