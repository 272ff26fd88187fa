/* SPDX-License-Identifier: MIT */
/*
 * Operator semantics that shape inference and the backends' kernels share
 * (user/graph/opsem): what an Einsum equation, a Scan's slicing, a
 * StringNormalizer's mapping, NonMaxSuppression's selection and a Slice mean, worked
 * out once so that the shapes the graph infers are the ones the kernels write.
 */
#ifndef HETEROOPT_OPSEM_H
#define HETEROOPT_OPSEM_H

#include <locale.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "heteroopt/graph.h"

#ifdef __cplusplus
extern "C" {
#endif

/* einsum.c: an Einsum equation as label ids per axis (shape inference and kernels share it). */
#define HO_EINSUM_MAX_IN 8
struct ho_einsum {
	int n_in, n_labels, n_ell; /* labels 0..n_ell-1 are the ellipsis' axes */
	int in_rank[HO_EINSUM_MAX_IN], in_label[HO_EINSUM_MAX_IN][HO_MAX_RANK];
	int out_rank, out_label[HO_MAX_RANK];
};
int ho_einsum_parse(const char *eq, int n_in, const int *ranks, struct ho_einsum *e,
		    struct ho_error *err);

/* scan.c: how Scan slices its inputs and stacks its outputs (shape inference and kernels
 * share it). */
#define HO_SCAN_MAX 16
struct ho_scan {
	uint32_t first;		       /* the node input of the first state value */
	uint32_t n_state, n_in, n_out; /* state values, scan inputs, scan outputs */
	bool batched;		       /* opset 8: axis 0 is a batch, each entry run apart */
	int64_t in_axis[HO_SCAN_MAX];  /* per scan input, >= 0 where its rank is known */
	int64_t out_axis[HO_SCAN_MAX]; /* per scan output, into the stacked rank */
	bool in_reverse[HO_SCAN_MAX], out_reverse[HO_SCAN_MAX];
};
/* in_rank: per state and scan input; out_rank: per body output (-1 unknown); each
 * read up to 2 * HO_SCAN_MAX entries, beyond which the node is refused. */
int ho_scan_parse(const struct ho_node *n, const struct ho_graph *body, const int *in_rank,
		  const int *out_rank, struct ho_scan *s, struct ho_error *err);

/* strnorm.c: StringNormalizer's stopwords and case mapping (shape rule and kernel share it). */
struct ho_strnorm {
	int change; /* 0 NONE, 1 LOWER, 2 UPPER */
	bool case_sensitive;
	const char *const *stop;
	size_t n_stop;
	locale_t loc; /* C.UTF-8's case mapping; (locale_t)0: ASCII's */
};
int ho_strnorm_parse(const struct ho_node *n, struct ho_strnorm *s, struct ho_error *err);
void ho_strnorm_free(struct ho_strnorm *s);
/* 1: x stays, 0: a stopword, -ENOMEM. */
int ho_strnorm_kept(const struct ho_strnorm *s, const char *x);
/* x in case change (0 none, 1 lower, 2 upper) into out (4 * strlen(x) + 1 bytes); its length. */
size_t ho_strnorm_case(const struct ho_strnorm *s, const char *x, int change, char *out);

/* nms.c: NonMaxSuppression's selection (shape inference and kernels share it). */
struct ho_nms_args {
	const float *boxes, *scores; /* [batches, n, 4], [batches, classes, n] */
	int64_t batches, classes, boxes_per_batch, max_per_class;
	float iou_threshold, score_threshold;
	bool has_score_threshold, center_point_box;
};
/* The boxes selected, as (batch, class, box) triples into out (up to cap); -1: no memory. */
int64_t ho_nms(const struct ho_nms_args *a, int64_t *out, int64_t cap);

/* slice.c: what Slice keeps of each axis: its first index, its step and the output's
 * extent (HO_DIM_UNKNOWN where the input's is). */
struct ho_slice {
	int64_t first[HO_MAX_RANK], step[HO_MAX_RANK], dim[HO_MAX_RANK];
};
/* From n starts and ends on axes (NULL: 0..n-1) by steps (NULL: 1) of an input of rank
 * extents dim; -EINVAL naming an axis out of range or a zero step. */
int ho_slice_resolve(int rank, const int64_t *dim, size_t n, const int64_t *starts,
		     const int64_t *ends, const int64_t *axes, const int64_t *steps,
		     struct ho_slice *out, struct ho_error *err);
/* The same for Slice node n: its attributes (before opset 10) or its constant inputs,
 * input i's bytes at data[i] (1 to 4; where the caller's kernels will read them). */
int ho_slice_node(const struct ho_graph *g, const struct ho_node *n, const void *const data[5],
		  struct ho_slice *out, struct ho_error *err);

/* window.c: a Conv's or pool's auto_pad ("NOTSET" where absent); for SAME_UPPER and
 * SAME_LOWER, the padding total an axis needs (<= 0: none) split into its leading pl
 * and trailing pr, the odd one at the end (upper) or the start (lower). */
const char *ho_auto_pad(const struct ho_node *n);
void ho_same_pads(const char *auto_pad, int64_t total, int64_t *pl, int64_t *pr);
/* A 2-D sliding window: kernel extents, strides, pads (leading first), dilations, (y, x) each. */
struct ho_window {
	int64_t ks[2], st[2], pd[4], dl[2];
};
/* Node n's window of extents ks over 4-D x into y, auto_pad resolved; false: an attribute
 * it cannot read. */
bool ho_window_of(const struct ho_node *n, const struct ho_tensor *x, const struct ho_tensor *y,
		  const int64_t *ks, struct ho_window *w);

/* resize.c: Resize's source coordinate of output index x on an axis of in elements
 * resized to out at scale (coordinate_transformation_mode mode), for nearest; its
 * rounding (nearest_mode mode); the same coordinate for linear and cubic, from the
 * unrounded extent in * scale (NAN outside a tf_crop_and_resize crop of roi0..roi1);
 * and the n (1, 2, 4) taps' weights at ratio r in (0, 1] (cubic: coefficient a). */
double ho_resize_coord(const char *mode, int64_t x, int64_t in, int64_t out, double scale);
int64_t ho_resize_nearest(const char *mode, double v);
double ho_resample_coord(const char *mode, int64_t x, int64_t in, double scale, double roi0,
			 double roi1);
void ho_resample_coeffs(int n, double r, double a, double *c);
/*
 * A Resize's or Upsample's 2-D taps, nearest or linear, as device kernels blend
 * them: each output row's, then column's, two source indices (first taps in
 * ix[0, m), second in ix[m, 2m), m = out[0] + out[1]) and the second's weight
 * wt[0, m), from the input's and output's last two extents and scales (0: out
 * over in).  -EOPNOTSUPP: another mode, or tf_crop_and_resize.
 */
int ho_resize_taps2d(const struct ho_node *n, const int64_t in[2], const int64_t out[2],
		     const double scale[2], int *ix, float *wt);

/*
 * act.c: activations as device kernels fold them after a kernel or run them
 * alone, one code each (their kernel sources switch on these numbers).
 */
enum ho_act_code {
	HO_ACT_NONE,
	HO_ACT_RELU,
	HO_ACT_SIGMOID,
	HO_ACT_TANH,
	HO_ACT_CLIP,
	HO_ACT_LEAKY_RELU,
	HO_ACT_HARD_SIGMOID,
	HO_ACT_HARD_SWISH,
	HO_ACT_SWISH,
	HO_ACT_EXP,
	HO_ACT_SQRT,
	HO_ACT_NEG,
	HO_ACT_ABS,
	HO_ACT_ERF,
	HO_ACT_RECIPROCAL,
	HO_ACT_GELU,
	HO_ACT_LOG,
	HO_ACT_FLOOR,
	HO_ACT_CEIL,
	HO_ACT_ELU,
	HO_ACT_SOFTPLUS,
	HO_ACT_GELU_TANH /* Gelu, approximate="tanh" */
};
struct ho_act_args {
	int act; /* enum ho_act_code */
	float p, q;
};
/* Node i as an activation: a unary operator (a Clip's bounds constant), or the Mul
 * of a swish whose Sigmoid is folded; false: not one this code runs. */
bool ho_act_of(const struct ho_graph *g, int32_t i, struct ho_act_args *out);
/* Whether op_type is one of those unary operators (a node may still not be: a Clip's
 * bounds computed at run time, Gelu's tanh approximation). */
bool ho_act_op(const char *op_type);
/* Two-operand element-wise operators as device kernels switch on them; -1: not one. */
enum ho_bin_code {
	HO_BIN_ADD,
	HO_BIN_SUB,
	HO_BIN_MUL,
	HO_BIN_DIV,
	HO_BIN_MAX,
	HO_BIN_MIN,
	HO_BIN_POW,
	HO_BIN_PRELU
};
int ho_binary_code(const char *op_type);
/* Float element i of tensor t known at plan time (its data or folded value), and whether
 * it is one. */
float ho_const_f(const struct ho_graph *g, int32_t t, int64_t i);
bool ho_is_const_f(const struct ho_graph *g, int32_t t);
/* A walk of rank axes (extents dims, operands' strides sa and sb, outermost first) with unit
 * axes dropped and neighbours both step alike along merged; its rank (1 at least). */
int ho_walk_merge(int rank, int dims[8], int sa[8], int sb[8]);
/* Numpy broadcasting of a and b to out as one walk: per axis the extent and each
 * operand's stride (0 where it broadcasts), unit axes dropped and axes both step alike
 * along merged (same shapes and scalars walk one); the walk's rank, -1 over 8. */
int ho_broadcast_walk(const struct ho_shape *out, const struct ho_shape *a,
		      const struct ho_shape *b, int dims[8], int sa[8], int sb[8]);

#ifdef __cplusplus
}
#endif

#endif
