/* SPDX-License-Identifier: MIT */
/*
 * The cpu backend's internals (user/runtime/backends/cpu), one file per
 * kernel family; backend.c holds the ops table and the kernel table that
 * maps each operator to its family's prepare function.  Not installed.
 */
#ifndef HO_CPU_H
#define HO_CPU_H

#include <stdbool.h>
#include <stdint.h>

#include <dnnl.h>

#include "backends/backend.h"
#include "common.h"
#include "heteroopt/opsem.h"
#define HO_CPU_MAX_ARGS 16

struct ho_cpu_packed;

struct ho_backend {
	struct ho_cpu_packed *packed; /* weights taken over, in a layout, shared (packed.c) */
	dnnl_engine_t eng;
	dnnl_stream_t stream;
	/*
	 * Scratchpads in user mode: the library's shared one is not safe when
	 * devices' workers run primitives at once.  What a kernel needs only while
	 * it runs (scratchpads, copies of its tensors in its own layout) lies in
	 * this device's workspace, which its one worker uses a kernel at a time:
	 * the largest kernel's need, not the sum of all (ho_cpu_temp_mem).
	 */
	dnnl_primitive_attr_t attr;
	void *ws; /* the workspace, ws_size bytes */
	size_t ws_size;
	const uint8_t *channels_last; /* per tensor, from the executor's layout plan */
	bool emulated;		      /* emu: the same kernels, standing in for an accelerator */
	bool bf16;   /* opened for bfloat16 (its kernels' default): the CPU has it natively */
	int threads; /* OpenMP threads its kernels are made for; 0: OpenMP's */
};

enum ho_cpu_kind {
	HO_K_PRIM,
	HO_K_GEMM,
	HO_K_INDEX_MAP,
	HO_K_GATHER,
	HO_K_UNARY,
	HO_K_HARDMAX,
	HO_K_LAYER_NORM,
	HO_K_LOOP
};

/* HO_K_LOOP (typed.c, axis.c): a loop over elements of any numeric type */
#define HO_TYPED_MAX_IN 8
struct ho_kernel;
struct ho_move;
struct ho_rnn;
struct ho_quant;
struct ho_einsum_plan;
struct ho_text;
struct ho_typed {
	int (*run)(const struct ho_kernel *k);
	int op, dom, n_in;
	const void *in[HO_TYPED_MAX_IN];
	int in_dt[HO_TYPED_MAX_IN];
	struct ho_shape in_shape[HO_TYPED_MAX_IN];
	int64_t stride[HO_TYPED_MAX_IN][HO_MAX_RANK]; /* per output axis: 0 where it broadcasts */
	void *out;
	int out_dt;
	struct ho_shape out_shape;
	int64_t outer, inner, axis_dim, axis, iparam[2];
	/* loss.c: the second output (log_prob), how to reduce, the target to ignore */
	void *out2;
	int reduction;
	bool softmax, has_ignore;
	int64_t ignore;
};

struct ho_kernel {
	int kind;
	const char *name, *op;
	const char *precision;	  /* "bf16" where it computes so, else NULL (float32) */
	bool want_bf16;		  /* asked to (ho_fusion.precision): conv.c's, matmul.c's */
	struct ho_cpu_int8 *int8; /* asked int8: its state (int8.c), else NULL */
	dnnl_primitive_t prim;
	float *fold; /* a Conv's weights and bias with its batch norm folded in */
	/* layout conversions around it (a convolution between NCHW and NHWC), and for a
	 * kernel that adds into its destination (a sum post-op) that destination filled
	 * in its layout first */
	dnnl_primitive_t pre, fill, post;
	dnnl_exec_arg_t pre_args[3], fill_args[3], post_args[3];
	int n_pre_args, n_fill_args, n_post_args;
	/* a primitive after those on the output in place (a ConvTranspose's bias) */
	dnnl_primitive_t then;
	dnnl_exec_arg_t then_args[3];
	int nargs;
	dnnl_exec_arg_t args[HO_CPU_MAX_ARGS];
	dnnl_memory_t owned[HO_CPU_MAX_ARGS]; /* memory objects to destroy */
	/* of those, the ones in the device's workspace, at these offsets: bound at each run */
	dnnl_memory_t temp[HO_CPU_MAX_ARGS];
	size_t temp_off[HO_CPU_MAX_ARGS], temp_bytes;
	size_t held_bytes; /* of owned, what the library allocated for it (ho_cpu_mem) */
	struct ho_cpu_packed *weights; /* its weights taken over, shared (packed.c), or NULL */
	int n_temp;
	int n_owned;
	/* HO_K_GEMM: batch x (M x K) . (K x N) (+ bias broadcast); batch b's operands and
	 * output at the sum over batch axes i of index_i(b) * a_bst[i] (b_bst[i], y_bst[i]),
	 * each with its leading dimension */
	char ta, tb;
	int64_t batch, m, n, k, lda, ldb, ldy;
	int n_bdims;
	int64_t bdim[HO_MAX_RANK], a_bst[HO_MAX_RANK], b_bst[HO_MAX_RANK], y_bst[HO_MAX_RANK];
	float alpha, beta;
	const float *a, *b, *bias;
	int64_t bias_rows, bias_cols; /* the bias's extent, each 1 or the full one */
	float *y;
	/*
	 * HO_K_INDEX_MAP (Transpose, Slice, nearest Resize): output dims in dims[],
	 * input dims in in_dims[]; output axis a walks input axis perm[a], and
	 * map[a][x] is the byte offset its index x adds (an index while preparing)
	 */
	int rank;
	int64_t dims[HO_MAX_RANK], perm[HO_MAX_RANK];
	uint32_t elem;
	const void *src;
	void *dst;
	int64_t in_dims[HO_MAX_RANK];
	int64_t *map[HO_MAX_RANK];
	bool rows_contiguous; /* each last-axis row reads consecutive input bytes */
	int64_t repeat; /* each last-axis row takes consecutive elements this many times each (a
			 * nearest Resize by a whole factor); 0 where it does not */
	/* a Resize loop (index_map.c): per output axis, 4 slots a index in map[] and weight
	 * here, taps[] of them used; a first index of -1 is outside the crop */
	double *resample_w[HO_MAX_RANK];
	int taps[HO_MAX_RANK];
	/* HO_K_GATHER: outer x n_idx x inner bytes; the axis has axis_dim entries */
	int64_t outer, n_idx, inner, axis_dim;
	const void *idx;
	bool idx64;
	/* HO_K_UNARY (unary.c): y = unary(x, param) over n_elems floats at src, dst;
	 * a param whose param_src is set is read from there at each run */
	int64_t n_elems;
	float (*unary)(float x, const float *param);
	/* over vectors, in place of unary */
	void (*unary_many)(const float *x, float *y, int64_t n, const float *param);
	float param[2];
	const void *param_src[2];
	/* HO_K_HARDMAX (unary.c): the gather fields outer, n_idx, inner, src, dst */
	/* HO_K_LAYER_NORM (norm.c): outer rows of inner floats, and the statistics */
	const float *ln_scale, *ln_bias;
	float *ln_mean, *ln_inv_std; /* NULL: not asked for */
	float ln_eps;
	struct ho_typed typed;
	struct ho_move *move;	       /* movement.c's plan, freed with the kernel */
	struct ho_rnn *rnn;	       /* recurrent.c's, with its scratch, freed with the kernel */
	struct ho_quant *quant;	       /* quant.c's, freed with the kernel */
	struct ho_attention *attn;     /* attention.c's, freed with the kernel */
	struct ho_rotary *rotary;      /* ... and its RotaryEmbedding's */
	struct ho_einsum_plan *einsum; /* einsum.c's, freed with the kernel */
	struct ho_control *control;    /* HO_K_CONTROL (control.c): its subgraphs' plans */
	struct ho_text *text;	       /* text.c's string kernels: their plan and strings */
};

int ho_cpu_open(const struct ho_rt_device *dev, int threads, struct ho_backend **out,
		struct ho_error *err);
const char *ho_cpu_precision(const struct ho_kernel *k);
void ho_cpu_close(struct ho_backend *c);
void ho_cpu_kernel_memory(const struct ho_kernel *k, struct ho_kernel_memory *m);
/*
 * Weights taken over (ho_cpu_takes_over) in layout want, from the constant at src (in
 * layout user): the device's one copy of them in that layout, made at the first kernel
 * that asks and held while any holds it (a detector's heads read theirs at every pyramid
 * level).  Returns a counted reference, or NULL.  ho_cpu_packed_put drops it.
 */
struct ho_cpu_packed *ho_cpu_packed_get(struct ho_backend *c, const dnnl_memory_desc_t *user,
					const void *src, const dnnl_memory_desc_t *want);
void ho_cpu_packed_put(struct ho_cpu_packed *w);
/* Its bytes (in the library's memory) and the signature of (src, want) the scheduler keys
 * its sharing by. */
void *ho_cpu_packed_bytes(const struct ho_cpu_packed *w);
void ho_cpu_packed_size(const struct ho_cpu_packed *w, uint64_t *size, uint64_t *sig);
void ho_cpu_kernel_free(struct ho_kernel *k);
void ho_cpu_plain_md(dnnl_memory_desc_t *md, const struct ho_shape *s);
void ho_cpu_t_md(const struct ho_backend *c, dnnl_memory_desc_t *md, int32_t t,
		 const struct ho_shape *s);
void ho_cpu_t_md_nhwc(dnnl_memory_desc_t *md, const struct ho_shape *s);
int ho_cpu_mem(struct ho_backend *c, struct ho_kernel *k, const dnnl_memory_desc_t *md, void *ptr,
	       int arg);
/* Memory of layout md that k needs only while it runs, in the device's workspace. */
int ho_cpu_temp_mem(struct ho_backend *c, struct ho_kernel *k, const dnnl_memory_desc_t *md,
		    int arg);
/* Run k's oneDNN primitives (before, main, after, then) on c's stream, its temporaries
 * pointed into the workspace first; 0 or -EIO. */
int ho_cpu_execute(const struct ho_backend *c, const struct ho_kernel *k);
int ho_cpu_prim(struct ho_backend *c, struct ho_kernel *k, dnnl_primitive_desc_t pd);
int ho_cpu_unsupported(struct ho_error *err, const struct ho_node *n, const char *why);
bool ho_cpu_is_reference(const_dnnl_primitive_desc_t pd);
bool ho_cpu_is_slow(const_dnnl_primitive_desc_t pd);
int ho_cpu_src_dst_kernel(struct ho_backend *c, struct ho_kernel *k, dnnl_status_t init,
			  const void *desc, dnnl_primitive_attr_t attr,
			  const dnnl_memory_desc_t *xm, const dnnl_memory_desc_t *ym,
			  void *const *buf, const struct ho_node *n, const char *none,
			  struct ho_error *err);
int ho_cpu_convert(struct ho_backend *c, struct ho_kernel *k, const dnnl_memory_desc_t *tmd,
		   void *ptr, const dnnl_memory_desc_t *kmd, int arg, bool input);
/* ... its reorder made with attr (NULL: the device's): an int8 input's scale */
int ho_cpu_convert_attr(struct ho_backend *c, struct ho_kernel *k, const dnnl_memory_desc_t *tmd,
			void *ptr, const dnnl_memory_desc_t *kmd, int arg, bool input,
			const_dnnl_primitive_attr_t attr);
/* A destination the kernel adds into (a sum post-op): the tensor's bytes are in it first. */
int ho_cpu_convert_sum(struct ho_backend *c, struct ho_kernel *k, const dnnl_memory_desc_t *tmd,
		       void *ptr, const dnnl_memory_desc_t *kmd);
bool ho_cpu_known(const struct ho_graph *g, int32_t t);
int ho_cpu_weights(struct ho_backend *c, struct ho_kernel *k, const_dnnl_primitive_desc_t pd,
		   const dnnl_memory_desc_t *user, void *ptr, bool own);
/* from (layout from_md) reordered into to (to_md) on c's stream, at once, with attr (NULL:
 * none; int8 weights' scales): 0 or -EINVAL. */
int ho_cpu_reorder_now(struct ho_backend *c, const dnnl_memory_desc_t *from_md, dnnl_memory_t from,
		       const dnnl_memory_desc_t *to_md, dnnl_memory_t to,
		       const_dnnl_primitive_attr_t attr);

/*
 * int8 (int8.c): what a kernel asked to quantize its input and weights keeps, its
 * input's calibrated range, or (not calibrated: it computes float32) the range it
 * observes that input take, over n floats at src, at each run.
 */
#define HO_CPU_INT8_BINS 4096 /* |x| by its float bits' top 12: 1/16 of an octave each */
struct ho_cpu_int8 {
	bool calibrated, observing, seen;
	float lo, hi;
	const float *src;
	int64_t n;
	uint64_t *hist; /* observing: HO_CPU_INT8_BINS counts of |x| */
	/* what its prepare made: the bias divided by the output scales, the attributes of
	 * the input's quantizing reorder and of the kernel (output scales, post-ops) */
	float *bias;
	dnnl_primitive_attr_t src_attr, attr;
};
bool ho_cpu_int8_native(dnnl_cpu_isa_t isa);
/* k's int8 state, range its input's calibrated one (NULL: to observe): 0 or -ENOMEM. */
int ho_cpu_int8_new(struct ho_kernel *k, const float *range);
void ho_cpu_int8_free(struct ho_cpu_int8 *q);
/* A kernel asked int8 that computes float32 all the same observes its input (src, n). */
void ho_cpu_int8_observe_at(struct ho_kernel *k, const float *src, int64_t n);
void ho_cpu_int8_observe(const struct ho_cpu_int8 *q);
int ho_cpu_observed(const struct ho_kernel *k, const char *rule, float range[2]);
/*
 * The quantization of a kernel whose float32 weights w are rows (output channels) of
 * per values, row r's i-th at w[r * row_step + i * step]: the input's type from its
 * range (x ~ xs * q), each row's weight scale into ws, the bias (NULL: none) over the
 * output scales xs * ws into q->bias, the kernel's attribute (base's post-ops, those
 * scales over the dst axes out_mask) and the input reorder's into q.  0, or -ENOMEM.
 */
int ho_cpu_int8_scales(struct ho_backend *c, struct ho_cpu_int8 *q, const float *w, int64_t rows,
		       int64_t per, int64_t row_step, int64_t step,
		       const_dnnl_primitive_attr_t base, int out_mask, const float *bias,
		       dnnl_data_type_t *xdt, float *ws);
bool ho_cpu_int8_reorders(struct ho_backend *c, const struct ho_cpu_int8 *q,
			  const dnnl_memory_desc_t *xm, const dnnl_memory_desc_t *wm,
			  const_dnnl_primitive_desc_t pd);
/* Weights w (layout user, float32; rows as ho_cpu_int8_scales's) into pd's int8 weights,
 * each row scaled by 1 / ws[row], in memory the kernel owns. */
int ho_cpu_int8_weights(struct ho_backend *c, struct ho_kernel *k, const_dnnl_primitive_desc_t pd,
			const dnnl_memory_desc_t *user, const float *w, int64_t rows, int64_t per,
			int64_t row_step, int64_t step, const float *ws);

/* The inputs node's kernel takes over (ho_backend_ops.takes_over). */
uint32_t ho_cpu_takes_over(const struct ho_graph *g, uint32_t node);
/* The inputs it reads through a Transpose's strides (ho_backend_ops.folds_transposes). */
uint32_t ho_cpu_folds_transposes(const struct ho_graph *g, uint32_t node);
float ho_cpu_scalar_input(const struct ho_graph *g, const struct ho_node *n, uint32_t i,
			  void *const *buf, float def);
int ho_cpu_eltwise_attr(struct ho_backend *c, const struct ho_graph *g, const struct ho_node *n,
			void *const *buf, bool first, dnnl_primitive_attr_t *attr);
int ho_cpu_prep_conv(struct ho_backend *c, const struct ho_graph *g, const struct ho_node *n,
		     const struct ho_node *bnn, const struct ho_node *sum,
		     const struct ho_node *post, void *const *buf, struct ho_kernel *k,
		     struct ho_error *err);
int ho_cpu_prep_bnorm(struct ho_backend *c, const struct ho_graph *g, const struct ho_node *n,
		      const struct ho_node *relu, void *const *buf, struct ho_kernel *k,
		      struct ho_error *err);
int ho_cpu_prep_pool(struct ho_backend *c, const struct ho_graph *g, const struct ho_node *n,
		     void *const *buf, struct ho_kernel *k, struct ho_error *err);
int ho_cpu_prep_eltwise(struct ho_backend *c, const struct ho_graph *g, const struct ho_node *n,
			void *const *buf, struct ho_kernel *k, struct ho_error *err);
struct ho_shape ho_cpu_lift(const struct ho_shape *s, int r);
/* The NCHW axis at each place of NHWC memory: an NHWC tensor is walked N, H, W, C. */
extern const int ho_cpu_nhwc[4];
/*
 * How many parts a loop over n units splits into across the device's threads
 * (its worker's OpenMP team): at least grain units a part, at least 1.
 */
int ho_cpu_parts(int64_t n, int64_t grain);
/* The same for a loop over rows of per_row units each: no more parts than rows. */
int ho_cpu_row_parts(int64_t rows, int64_t per_row, int64_t grain);
/* fn(arg, lo, hi) over [0, n) cut in parts, one a thread; parts 1: on the caller alone */
void ho_cpu_for_parts(int parts, int64_t n, void (*fn)(const void *arg, int64_t lo, int64_t hi),
		      const void *arg);
/* the same for a loop that can fail: fn returns 0 or -errno; the lowest of them */
int ho_cpu_for_parts_err(int parts, int64_t n, int (*fn)(const void *arg, int64_t lo, int64_t hi),
			 const void *arg);
/* rows runs of bytes each, from src every src_step bytes to dst every dst_step */
void ho_cpu_copy_rows(char *dst, int64_t dst_step, const char *src, int64_t src_step, int64_t rows,
		      int64_t bytes);
int ho_cpu_prep_attention(const struct ho_graph *g, const struct ho_node *n, void *const *buf,
			  struct ho_kernel *k, struct ho_error *err);
int ho_cpu_prep_rotary(const struct ho_graph *g, const struct ho_node *n, void *const *buf,
		       struct ho_kernel *k, struct ho_error *err);
int ho_cpu_prep_binary(struct ho_backend *c, const struct ho_graph *g, const struct ho_node *n,
		       void *const *buf, struct ho_kernel *k, struct ho_error *err);
int ho_cpu_prep_concat(struct ho_backend *c, const struct ho_graph *g, const struct ho_node *n,
		       void *const *buf, struct ho_kernel *k, struct ho_error *err);
int ho_cpu_softmax_view(const struct ho_node *n, const struct ho_shape *x, struct ho_shape *v);
int ho_cpu_prep_softmax(struct ho_backend *c, const struct ho_graph *g, const struct ho_node *n,
			void *const *buf, struct ho_kernel *k, struct ho_error *err);
int ho_cpu_prep_resize(struct ho_backend *c, const struct ho_graph *g, const struct ho_node *n,
		       void *const *buf, struct ho_kernel *k, struct ho_error *err);
void ho_cpu_run_index_map(const struct ho_kernel *k);
/* fuse: the Transposes a MatMul reads through, and writes through (its post), or NULL */
int ho_cpu_prep_gemm(const struct ho_graph *g, const struct ho_node *n,
		     const struct ho_fusion *fuse, void *const *buf, struct ho_kernel *k,
		     struct ho_error *err);
bool ho_cpu_matmul_packs(const struct ho_graph *g, const struct ho_node *n);
bool ho_cpu_gemm_packs(const struct ho_graph *g, const struct ho_node *n);
int ho_cpu_prep_gemm_weights(struct ho_backend *c, const struct ho_graph *g,
			     const struct ho_node *n, void *const *buf, struct ho_kernel *k,
			     struct ho_error *err);
int ho_cpu_prep_matmul_weights(struct ho_backend *c, const struct ho_graph *g,
			       const struct ho_node *n, const struct ho_node *add,
			       const struct ho_node *post, void *const *buf, struct ho_kernel *k,
			       struct ho_error *err);
int ho_cpu_run_gemm(struct ho_kernel *k);
int ho_cpu_prep_transpose(const struct ho_graph *g, const struct ho_node *n, void *const *buf,
			  struct ho_kernel *k, struct ho_error *err);
int ho_cpu_int_input(const struct ho_graph *g, const struct ho_node *n, uint32_t i,
		     void *const *buf, int64_t *v, int max);
int ho_cpu_prep_slice(const struct ho_graph *g, const struct ho_node *n, void *const *buf,
		      struct ho_kernel *k, struct ho_error *err);
int ho_cpu_prep_optimizer(const struct ho_graph *g, const struct ho_node *n, void *const *buf,
			  struct ho_kernel *k, struct ho_error *err);
int ho_cpu_prep_loss(const struct ho_graph *g, const struct ho_node *n, void *const *buf,
		     struct ho_kernel *k, struct ho_error *err);
/* channels_last: the node's input (and so its output) is NHWC (Pad only; the others are plain) */
int ho_cpu_prep_move(const struct ho_graph *g, const struct ho_node *n, void *const *buf,
		     bool channels_last, struct ho_kernel *k, struct ho_error *err);
int ho_cpu_prep_recurrent(const struct ho_graph *g, const struct ho_node *n, void *const *buf,
			  struct ho_kernel *k, struct ho_error *err);
int ho_cpu_prep_einsum(struct ho_backend *c, const struct ho_graph *g, const struct ho_node *n,
		       void *const *buf, struct ho_kernel *k, struct ho_error *err);
int ho_cpu_prep_window(const struct ho_graph *g, const struct ho_node *n, void *const *buf,
		       struct ho_kernel *k, struct ho_error *err);
/* text.c: string tensors (Cast to and from them, StringNormalizer) */
int ho_cpu_prep_string_cast(const struct ho_graph *g, const struct ho_node *n, void *const *buf,
			    struct ho_kernel *k, struct ho_error *err);
int ho_cpu_prep_strnorm(const struct ho_graph *g, const struct ho_node *n, void *const *buf,
			struct ho_kernel *k, struct ho_error *err);
void ho_cpu_text_free(struct ho_text *t);
/* sequence.c: sequences held dense, [members, member shape] */
int ho_cpu_prep_sequence(const struct ho_graph *g, const struct ho_node *n, void *const *buf,
			 struct ho_kernel *k, struct ho_error *err);
int ho_cpu_prep_det(const struct ho_graph *g, const struct ho_node *n, void *const *buf,
		    struct ho_kernel *k, struct ho_error *err);
int ho_cpu_prep_lrn(struct ho_backend *c, const struct ho_graph *g, const struct ho_node *n,
		    void *const *buf, struct ho_kernel *k, struct ho_error *err);
int ho_cpu_prep_dropout(const struct ho_graph *g, const struct ho_node *n, void *const *buf,
			struct ho_kernel *k, struct ho_error *err);
int ho_cpu_prep_grid_sample(const struct ho_graph *g, const struct ho_node *n, void *const *buf,
			    struct ho_kernel *k, struct ho_error *err);
int ho_cpu_prep_nms(const struct ho_graph *g, const struct ho_node *n, void *const *buf,
		    struct ho_kernel *k, struct ho_error *err);
int ho_cpu_prep_dft(const struct ho_graph *g, const struct ho_node *n, void *const *buf,
		    struct ho_kernel *k, struct ho_error *err);
int ho_cpu_prep_roi_align(const struct ho_graph *g, const struct ho_node *n, void *const *buf,
			  struct ho_kernel *k, struct ho_error *err);
int ho_cpu_prep_tfidf(const struct ho_graph *g, const struct ho_node *n, void *const *buf,
		      struct ho_kernel *k, struct ho_error *err);
int ho_cpu_prep_mel(const struct ho_graph *g, const struct ho_node *n, void *const *buf,
		    struct ho_kernel *k, struct ho_error *err);
int ho_cpu_prep_quant(struct ho_backend *c, const struct ho_graph *g, const struct ho_node *n,
		      void *const *buf, struct ho_kernel *k, struct ho_error *err);
int ho_cpu_prep_norm_loop(const struct ho_graph *g, const struct ho_node *n, void *const *buf,
			  struct ho_kernel *k, struct ho_error *err);
/* Element i of an int32 or int64 index tensor. */
static inline int64_t ho_cpu_index(const void *p, int dtype, int64_t i)
{
	return dtype == HO_DT_INT64 ? ((const int64_t *)p)[i] : ((const int32_t *)p)[i];
}
/* Element i of a tensor of any numeric type (not float16/bfloat16): as an integer (floats
 * truncated), as a double. */
int64_t ho_cpu_int(const void *p, int dtype, int64_t i);
double ho_cpu_real(const void *p, int dtype, int64_t i);
/* typed.c: element-wise loops over any numeric type; the inputs and output every loop reads */
bool ho_cpu_is_typed(const char *op_type);
int ho_cpu_prep_typed(const struct ho_graph *g, const struct ho_node *n, void *const *buf,
		      struct ho_kernel *k, struct ho_error *err);
int ho_cpu_prep_typed_io(const struct ho_graph *g, const struct ho_node *n, void *const *buf,
			 struct ho_kernel *k, struct ho_error *err);
int ho_cpu_run_loop(const struct ho_kernel *k);
/* axis.c: along an axis, any numeric type (ArgMax and ArgMin by ho_cpu_prep_arg) */
int ho_cpu_prep_arg(const struct ho_graph *g, const struct ho_node *n, void *const *buf,
		    struct ho_kernel *k, struct ho_error *err);
int ho_cpu_prep_cumsum(const struct ho_graph *g, const struct ho_node *n, void *const *buf,
		       struct ho_kernel *k, struct ho_error *err);
int ho_cpu_prep_topk(const struct ho_graph *g, const struct ho_node *n, void *const *buf,
		     struct ho_kernel *k, struct ho_error *err);
int ho_cpu_prep_trilu(const struct ho_graph *g, const struct ho_node *n, void *const *buf,
		      struct ho_kernel *k, struct ho_error *err);
int ho_cpu_prep_gather_elements(const struct ho_graph *g, const struct ho_node *n, void *const *buf,
				struct ho_kernel *k, struct ho_error *err);
int ho_cpu_prep_nonzero(const struct ho_graph *g, const struct ho_node *n, void *const *buf,
			struct ho_kernel *k, struct ho_error *err);
int ho_cpu_prep_unique(const struct ho_graph *g, const struct ho_node *n, void *const *buf,
		       struct ho_kernel *k, struct ho_error *err);
/* Reduce* as a loop over any numeric type (axis.c); kept: the output's shape with reduced
 * axes kept. */
int ho_cpu_prep_reduce_loop(const struct ho_graph *g, const struct ho_node *n, void *const *buf,
			    struct ho_kernel *k, const struct ho_shape *kept, struct ho_error *err);
/* The kernel family that runs n: its operator's, or the typed loops' for other types. */
const struct ho_cpu_kernel_reg *ho_cpu_kernel_for(const struct ho_graph *g,
						  const struct ho_node *n);
bool ho_cpu_is_unary(const char *op_type);
int ho_cpu_prep_unary(const struct ho_graph *g, const struct ho_node *n, void *const *buf,
		      struct ho_kernel *k, struct ho_error *err);
int ho_cpu_prep_hardmax(const struct ho_graph *g, const struct ho_node *n, void *const *buf,
			struct ho_kernel *k, struct ho_error *err);
void ho_cpu_run_hardmax(const struct ho_kernel *k);
void ho_cpu_run_unary(struct ho_kernel *k);
/*
 * Loops over whole vectors (eltwise.c's per-channel operands, erf.c): sixteen
 * floats in GCC's vector extensions, each such function cloned for AVX-512,
 * AVX2 and the baseline.  Compare no two of these vectors inside a clone: GCC
 * 12 does it lane by lane there (erf.c takes the sign of a difference instead).
 */
typedef float ho_v16 __attribute__((vector_size(64)));
typedef int ho_i16 __attribute__((vector_size(64)));

#define HO_V16(c)                                                                                  \
	{                                                                                          \
		c, c, c, c, c, c, c, c, c, c, c, c, c, c, c, c                                     \
	}

/* All ones in the lanes where a < b, by the signs of the differences; a NaN
 * lane, whose two differences share a sign, is in no mask. */
#define HO_LESS(a, b) (((ho_i16)((a) - (b)) >> 31) & ~((ho_i16)((b) - (a)) >> 31))
#define HO_VECTOR_CLONES                                                                           \
	__attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))

void ho_cpu_erf_many(const float *x, float *y, int64_t n, const float *unused);
void ho_cpu_gelu_many(const float *x, float *y, int64_t n, const float *unused);
int ho_cpu_prep_gather(const struct ho_graph *g, const struct ho_node *n, void *const *buf,
		       struct ho_kernel *k, struct ho_error *err);
int ho_cpu_run_gather(const struct ho_kernel *k);
bool ho_cpu_is_reduce(const char *op_type);
int ho_cpu_prep_reduce(struct ho_backend *c, const struct ho_graph *g, const struct ho_node *n,
		       void *const *buf, struct ho_kernel *k, struct ho_error *err);
void ho_cpu_run_layer_norm(const struct ho_kernel *k);
int ho_cpu_prep_layer_norm(struct ho_backend *c, const struct ho_graph *g, const struct ho_node *n,
			   void *const *buf, struct ho_kernel *k, struct ho_error *err);
/*
 * The kernel table (kernels.c): each operator this backend runs, the
 * prepare function of its kernel family and, for the element-wise ones
 * (every HO_OP_POST operator is one: the scheduler charges their fusion),
 * oneDNN's algorithm.
 */
typedef int (*ho_cpu_prep_fn)(struct ho_backend *c, const struct ho_graph *g,
			      const struct ho_node *n, const struct ho_fusion *fuse,
			      void *const *buf, struct ho_kernel *k, struct ho_error *err);
struct ho_cpu_kernel_reg {
	const char *op;
	ho_cpu_prep_fn prepare;
	dnnl_alg_kind_t eltwise_alg; /* 0 (dnnl_alg_kind_undef): not element-wise */
	uint32_t outputs;	     /* outputs its kernels can write; 0: the first only */
	bool any_type;		     /* moves elements of any fixed size; else float32 out */
	bool strings; /* takes string tensors (moves their pointers, or reads them) */
};
const struct ho_cpu_kernel_reg *ho_cpu_kernel_reg(const char *op_type);

int ho_cpu_prepare(struct ho_backend *c, const struct ho_graph *g, uint32_t node,
		   const struct ho_fusion *fuse, const struct ho_mem *mem,
		   const uint8_t *channels_last, struct ho_kernel **out, struct ho_error *err);
bool ho_cpu_runs(const char *op_type);
enum ho_be_layout ho_cpu_layout(const char *op_type, bool *binary);
void ho_cpu_thread_init(struct ho_backend *c);
int ho_cpu_launch(struct ho_backend *c, struct ho_kernel *k, struct ho_error *err);
void ho_cpu_query(const struct ho_backend *c, struct ho_backend_info *info);
int ho_cpu_sync(struct ho_backend *c);

/* cpu and emu differ only in how they open (emu marks itself emulated). */
#define HO_ONEDNN_OPS(name_str, open_fn)                                                           \
	{                                                                                          \
		.name = name_str, .open = open_fn, .close = ho_cpu_close, .query = ho_cpu_query,   \
		.runs = ho_cpu_runs, .layout = ho_cpu_layout, .prepare = ho_cpu_prepare,           \
		.thread_init = ho_cpu_thread_init, .launch = ho_cpu_launch,                        \
		.kernel_memory = ho_cpu_kernel_memory, .precision = ho_cpu_precision,              \
		.observed = ho_cpu_observed, .takes_over = ho_cpu_takes_over,                      \
		.folds_transposes = ho_cpu_folds_transposes, .kernel_free = ho_cpu_kernel_free,    \
		.sync = ho_cpu_sync,                                                               \
	}

#endif
