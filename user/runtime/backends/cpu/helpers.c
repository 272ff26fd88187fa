// SPDX-License-Identifier: MIT
/* Helpers every CPU kernel uses: attributes, memory descriptors, oneDNN memory and primitives,
 * weight reorders. */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "cpu.h"

const int ho_cpu_nhwc[4] = {0, 2, 3, 1};

int ho_cpu_parts(int64_t n, int64_t grain)
{
	int64_t most = n / grain, t = omp_get_max_threads();

	return (int)(most < 1 ? 1 : most < t ? most : t);
}

int ho_cpu_row_parts(int64_t rows, int64_t per_row, int64_t grain)
{
	int parts = ho_cpu_parts(rows * per_row, grain);

	return parts > rows ? (rows > 0 ? (int)rows : 1) : parts;
}

/*
 * With one part, no parallel region at all: GNU OpenMP's call for a team of one (an
 * if clause that is false) cost shufflenet_v2 4% of its time at one thread, a few
 * microseconds for each of its small Transposes and Slices.
 */
void ho_cpu_for_parts(int parts, int64_t n, void (*fn)(const void *arg, int64_t lo, int64_t hi),
		      const void *arg)
{
	if (parts <= 1) {
		fn(arg, 0, n);
		return;
	}
#pragma omp parallel for num_threads(parts)
	for (int p = 0; p < parts; p++)
		fn(arg, n * p / parts, n * (p + 1) / parts);
}

/* The same for a loop that can fail: fn returns 0 or -errno; the run's is the lowest. */
int ho_cpu_for_parts_err(int parts, int64_t n, int (*fn)(const void *arg, int64_t lo, int64_t hi),
			 const void *arg)
{
	int ret = 0;

	if (parts <= 1)
		return fn(arg, 0, n);
#pragma omp parallel for num_threads(parts) reduction(min : ret)
	for (int p = 0; p < parts; p++) {
		int r = fn(arg, n * p / parts, n * (p + 1) / parts);

		ret = r < ret ? r : ret;
	}
	return ret;
}

/*
 * Rows of a few bytes (a Split or Concat on the last axis of raft_small's [256,7,7,2]
 * coordinates: a float each) as one load and store apiece: memcpy of a length not
 * known when compiled is a call per row, 2.5 ns an element.
 */
void ho_cpu_copy_rows(char *dst, int64_t dst_step, const char *src, int64_t src_step, int64_t rows,
		      int64_t bytes)
{
#define HO_ROWS_OF(n)                                                                              \
	for (int64_t o = 0; o < rows; o++)                                                         \
		memcpy(dst + o * dst_step, src + o * src_step, n);                                 \
	return
	switch (bytes) {
	case 4:
		HO_ROWS_OF(4);
	case 8:
		HO_ROWS_OF(8);
	case 16:
		HO_ROWS_OF(16);
	default:
		HO_ROWS_OF((size_t)bytes);
	}
#undef HO_ROWS_OF
}

void ho_cpu_plain_md(dnnl_memory_desc_t *md, const struct ho_shape *s)
{
	static const dnnl_format_tag_t tags[] = {dnnl_a,      dnnl_a,	    dnnl_ab,
						 dnnl_abc,    dnnl_abcd,    dnnl_abcde,
						 dnnl_abcdef, dnnl_abcdefg, dnnl_abcdefgh};
	dnnl_dims_t d;
	int r = s->rank > 0 ? s->rank : 1;

	for (int i = 0; i < r; i++)
		d[i] = s->rank > 0 ? s->dim[i] : 1;
	dnnl_memory_desc_init_by_tag(md, r, d, dnnl_f32, tags[r]);
}

/* Tensor t's memory: NHWC where the layout plan chose it, else plain row-major. */
void ho_cpu_t_md(const struct ho_backend *c, dnnl_memory_desc_t *md, int32_t t,
		 const struct ho_shape *s)
{
	if (t >= 0 && c->channels_last && c->channels_last[t] && s->rank == 4) {
		dnnl_dims_t d = {s->dim[0], s->dim[1], s->dim[2], s->dim[3]};

		dnnl_memory_desc_init_by_tag(md, 4, d, dnnl_f32, dnnl_acdb);
		return;
	}
	ho_cpu_plain_md(md, s);
}

void ho_cpu_t_md_nhwc(dnnl_memory_desc_t *md, const struct ho_shape *s)
{
	dnnl_dims_t d = {s->dim[0], s->dim[1], s->dim[2], s->dim[3]};

	dnnl_memory_desc_init_by_tag(md, 4, d, dnnl_f32, dnnl_acdb);
}

int ho_cpu_mem(struct ho_backend *c, struct ho_kernel *k, const dnnl_memory_desc_t *md, void *ptr,
	       int arg)
{
	dnnl_memory_t m;

	if (dnnl_memory_create(&m, md, c->eng, ptr ? ptr : DNNL_MEMORY_ALLOCATE) != dnnl_success)
		return -ENOMEM;
	k->owned[k->n_owned++] = m;
	if (!ptr)
		k->held_bytes += dnnl_memory_desc_get_size(md);
	if (arg >= 0)
		k->args[k->nargs++] = (dnnl_exec_arg_t){arg, m};
	return 0;
}

/*
 * The workspace grows to the largest kernel's need as kernels are prepared; every kernel
 * points its temporaries into it at each run (ho_cpu_temps_bind), so a grown-out buffer
 * is no one's and goes at once.  No kernel of this device runs while one is prepared:
 * a plan prepares all before its first run (a tail is a plan of its own, on its own
 * backends).
 */
int ho_cpu_temp_mem(struct ho_backend *c, struct ho_kernel *k, const dnnl_memory_desc_t *md,
		    int arg)
{
	size_t off = (k->temp_bytes + 63) & ~(size_t)63, size = dnnl_memory_desc_get_size(md);
	dnnl_memory_t m;

	if (k->n_temp >= HO_CPU_MAX_ARGS || k->n_owned >= HO_CPU_MAX_ARGS)
		return -ENOMEM;
	if (off + size > c->ws_size) {
		void *buf;

		if (posix_memalign(&buf, 64, off + size))
			return -ENOMEM;
		free(c->ws);
		c->ws = buf;
		c->ws_size = off + size;
	}
	if (dnnl_memory_create(&m, md, c->eng, c->ws) != dnnl_success)
		return -ENOMEM;
	k->owned[k->n_owned++] = m;
	k->temp[k->n_temp] = m;
	k->temp_off[k->n_temp++] = off;
	k->temp_bytes = off + size;
	if (arg >= 0)
		k->args[k->nargs++] = (dnnl_exec_arg_t){arg, m};
	return 0;
}

/* Point k's temporaries into the workspace: before each run of k. */
static int ho_cpu_temps_bind(const struct ho_backend *c, const struct ho_kernel *k)
{
	for (int i = 0; i < k->n_temp; i++)
		if (dnnl_memory_set_data_handle(k->temp[i], (char *)c->ws + k->temp_off[i]) !=
		    dnnl_success)
			return -EIO;
	return 0;
}

int ho_cpu_execute(const struct ho_backend *c, const struct ho_kernel *k)
{
	if (k->int8 && k->int8->observing)
		ho_cpu_int8_observe(k->int8);
	if (ho_cpu_temps_bind(c, k) ||
	    (k->pre && dnnl_primitive_execute(k->pre, c->stream, k->n_pre_args, k->pre_args) !=
			   dnnl_success) ||
	    (k->fill && dnnl_primitive_execute(k->fill, c->stream, k->n_fill_args, k->fill_args) !=
			    dnnl_success) ||
	    dnnl_primitive_execute(k->prim, c->stream, k->nargs, k->args) != dnnl_success ||
	    (k->post && dnnl_primitive_execute(k->post, c->stream, k->n_post_args, k->post_args) !=
			    dnnl_success) ||
	    (k->then &&
	     dnnl_primitive_execute(k->then, c->stream, 3, k->then_args) != dnnl_success) ||
	    dnnl_stream_wait(c->stream) != dnnl_success)
		return -EIO;
	return 0;
}

int ho_cpu_prim(struct ho_backend *c, struct ho_kernel *k, dnnl_primitive_desc_t pd)
{
	const dnnl_memory_desc_t *sp =
	    dnnl_primitive_desc_query_md(pd, dnnl_query_scratchpad_md, 0);

	if (sp && dnnl_memory_desc_get_size(sp) && ho_cpu_temp_mem(c, k, sp, DNNL_ARG_SCRATCHPAD))
		return -ENOMEM;
	return dnnl_primitive_create(&k->prim, pd) == dnnl_success ? 0 : -EINVAL;
}

/* oneDNN chose its reference implementation: correct, and often far slower than a loop. */
bool ho_cpu_is_reference(const_dnnl_primitive_desc_t pd)
{
	const char *impl = NULL;

	return dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl) != dnnl_success ||
	       !impl || !strncmp(impl, "ref", 3);
}

/* ... or its plain gemm-based one ("x64:gemm:jit", not the fast "brgemm" kernels), which for
 * some shapes (depthwise convolutions) is as slow. */
bool ho_cpu_is_slow(const_dnnl_primitive_desc_t pd)
{
	const char *impl = NULL;

	return ho_cpu_is_reference(pd) ||
	       (dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl) == dnnl_success &&
		impl && strstr(impl, "gemm:") && !strstr(impl, "brgemm"));
}

int ho_cpu_unsupported(struct ho_error *err, const struct ho_node *n, const char *why)
{
	return ho_err(err, -EOPNOTSUPP, "node '%s' (%s): the cpu backend %s", n->name, n->op_type,
		      why);
}

/*
 * The kernel of a one-input, one-output node from its operation descriptor
 * (init: how initialising it went): its source, its destination, the
 * primitive; "none" says what oneDNN lacks when it has no kernel for it.
 */
int ho_cpu_src_dst_kernel(struct ho_backend *c, struct ho_kernel *k, dnnl_status_t init,
			  const void *desc, dnnl_primitive_attr_t attr,
			  const dnnl_memory_desc_t *xm, const dnnl_memory_desc_t *ym,
			  void *const *buf, const struct ho_node *n, const char *none,
			  struct ho_error *err)
{
	dnnl_primitive_desc_t pd;
	int ret;

	if (init != dnnl_success || dnnl_primitive_desc_create(&pd, desc, attr ? attr : c->attr,
							       c->eng, NULL) != dnnl_success)
		return ho_cpu_unsupported(err, n, none);
	ret = ho_cpu_mem(c, k, xm, buf[n->inputs[0]], DNNL_ARG_SRC) ||
		      ho_cpu_mem(c, k, ym, buf[n->outputs[0]], DNNL_ARG_DST) ||
		      ho_cpu_prim(c, k, pd)
		  ? ho_err(err, -ENOMEM, "node '%s': oneDNN set-up failed", n->name)
		  : 0;
	dnnl_primitive_desc_destroy(pd);
	return ret;
}

/* A reorder from memory `from` to `to` into slot r (its arguments a, *na), its scratchpad
 * in the workspace; attr (NULL: the device's) may scale it (int8.c). */
static int ho_cpu_reorder(struct ho_backend *c, struct ho_kernel *k,
			  const dnnl_memory_desc_t *from_md, dnnl_memory_t from,
			  const dnnl_memory_desc_t *to_md, dnnl_memory_t to,
			  const_dnnl_primitive_attr_t attr, dnnl_primitive_t *r, dnnl_exec_arg_t *a,
			  int *na)
{
	dnnl_primitive_desc_t rpd = NULL;
	const dnnl_memory_desc_t *sp;
	int ret = 0;

	a[0] = (dnnl_exec_arg_t){DNNL_ARG_FROM, from};
	a[1] = (dnnl_exec_arg_t){DNNL_ARG_TO, to};
	*na = 2;
	if (dnnl_reorder_primitive_desc_create(&rpd, from_md, c->eng, to_md, c->eng,
					       attr ? attr : c->attr) != dnnl_success)
		return -EINVAL;
	sp = dnnl_primitive_desc_query_md(rpd, dnnl_query_scratchpad_md, 0);
	if (sp && dnnl_memory_desc_get_size(sp)) {
		ret = ho_cpu_temp_mem(c, k, sp, -1);
		a[(*na)++] = (dnnl_exec_arg_t){DNNL_ARG_SCRATCHPAD, k->owned[k->n_owned - 1]};
	}
	if (!ret && dnnl_primitive_create(r, rpd) != dnnl_success)
		ret = -EINVAL;
	dnnl_primitive_desc_destroy(rpd);
	return ret;
}

/*
 * The kernel's argument arg in layout kmd, the tensor (at ptr) in layout
 * tmd: the same memory when they agree, else a buffer of the kernel's own
 * and a reorder run before (input) or after (output) the kernel.
 */
int ho_cpu_convert(struct ho_backend *c, struct ho_kernel *k, const dnnl_memory_desc_t *tmd,
		   void *ptr, const dnnl_memory_desc_t *kmd, int arg, bool input)
{
	return ho_cpu_convert_attr(c, k, tmd, ptr, kmd, arg, input, NULL);
}

int ho_cpu_convert_attr(struct ho_backend *c, struct ho_kernel *k, const dnnl_memory_desc_t *tmd,
			void *ptr, const dnnl_memory_desc_t *kmd, int arg, bool input,
			const_dnnl_primitive_attr_t attr)
{
	dnnl_memory_t user, own;

	if (dnnl_memory_desc_equal(tmd, kmd))
		return ho_cpu_mem(c, k, tmd, ptr, arg);
	if (ho_cpu_mem(c, k, tmd, ptr, -1) || ho_cpu_temp_mem(c, k, kmd, arg))
		return -ENOMEM;
	user = k->owned[k->n_owned - 2];
	own = k->owned[k->n_owned - 1];
	return input ? ho_cpu_reorder(c, k, tmd, user, kmd, own, attr, &k->pre, k->pre_args,
				      &k->n_pre_args)
		     : ho_cpu_reorder(c, k, kmd, own, tmd, user, attr, &k->post, k->post_args,
				      &k->n_post_args);
}

/*
 * A destination the kernel adds into (oneDNN's sum post-op) in layout kmd,
 * the tensor (at ptr, what is added to) in layout tmd: as ho_cpu_convert's
 * output, and where they differ the tensor reordered into the kernel's
 * buffer before the kernel too (k->fill): a Conv between NHWC and NCHW
 * (resnet's last blocks, before the pooling), or one in oneDNN's blocked
 * layout between plain tensors (r3d_18's 3-D convolutions, on gemm 1.7x
 * slower without it).
 */
int ho_cpu_convert_sum(struct ho_backend *c, struct ho_kernel *k, const dnnl_memory_desc_t *tmd,
		       void *ptr, const dnnl_memory_desc_t *kmd)
{
	int ret;

	if (dnnl_memory_desc_equal(tmd, kmd))
		return ho_cpu_mem(c, k, tmd, ptr, DNNL_ARG_DST);
	ret = ho_cpu_convert(c, k, tmd, ptr, kmd, DNNL_ARG_DST, false);
	/* the output reorder's two buffers (kernel's, tensor's), the other way round */
	return ret ? ret
		   : ho_cpu_reorder(c, k, tmd, k->post_args[1].memory, kmd, k->post_args[0].memory,
				    NULL, &k->fill, k->fill_args, &k->n_fill_args);
}

/*
 * Tensor t's values are in its buffer when kernels are prepared: a weight, a constant,
 * or a value folded or bound at load, which the plan writes into every replica first.
 * Only such may be reordered once, at prepare (ho_cpu_weights), or folded (a batch
 * norm).  Not a view of one: on another device than its source it is a copy a run
 * makes (the transformer's weights shared through Identity, on the emulator).
 */
bool ho_cpu_known(const struct ho_graph *g, int32_t t)
{
	return t >= 0 && (g->tensors[t].flags & HO_T_KNOWN);
}

/*
 * Weights in the layout pd's kernel wants: reordered once into memory the
 * kernel owns (so only weights ho_cpu_known; a kernel for others is made for
 * their layout), or used in place when the model's layout already is that.
 * Where own (the kernel took them over, ho_cpu_takes_over: the plan keeps no
 * bytes of them it could read), the device's one copy in that layout, which
 * every kernel reading the same constant in that layout shares (packed.c).
 */
int ho_cpu_weights(struct ho_backend *c, struct ho_kernel *k, const_dnnl_primitive_desc_t pd,
		   const dnnl_memory_desc_t *user, void *ptr, bool own)
{
	const dnnl_memory_desc_t *want = dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0);
	void *to;

	if (own) { /* the device's one copy in that layout (packed.c) */
		if (k->weights || !(k->weights = ho_cpu_packed_get(c, user, ptr, want)) ||
		    !(to = ho_cpu_packed_bytes(k->weights)))
			return -ENOMEM;
		return ho_cpu_mem(c, k, want, to, DNNL_ARG_WEIGHTS);
	}
	if (dnnl_memory_desc_equal(want, user))
		return ho_cpu_mem(c, k, user, ptr, DNNL_ARG_WEIGHTS);
	if (ho_cpu_mem(c, k, user, ptr, -1) || ho_cpu_mem(c, k, want, NULL, DNNL_ARG_WEIGHTS))
		return -ENOMEM;
	return ho_cpu_reorder_now(c, user, k->owned[k->n_owned - 2], want, k->owned[k->n_owned - 1],
				  NULL);
}

int ho_cpu_reorder_now(struct ho_backend *c, const dnnl_memory_desc_t *from_md, dnnl_memory_t from,
		       const dnnl_memory_desc_t *to_md, dnnl_memory_t to,
		       const_dnnl_primitive_attr_t attr)
{
	dnnl_primitive_desc_t rpd = NULL;
	dnnl_primitive_t r = NULL;
	int ret = -EINVAL;

	if (dnnl_reorder_primitive_desc_create(&rpd, from_md, c->eng, to_md, c->eng, attr) ==
		dnnl_success &&
	    dnnl_primitive_create(&r, rpd) == dnnl_success &&
	    dnnl_primitive_execute(r, c->stream, 2,
				   (dnnl_exec_arg_t[]){{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}}) ==
		dnnl_success &&
	    dnnl_stream_wait(c->stream) == dnnl_success)
		ret = 0;
	if (r)
		dnnl_primitive_destroy(r);
	if (rpd)
		dnnl_primitive_desc_destroy(rpd);
	return ret;
}

/* A scalar operand (Clip's bounds): its value, or def when omitted. */
float ho_cpu_scalar_input(const struct ho_graph *g, const struct ho_node *n, uint32_t i,
			  void *const *buf, float def)
{
	const struct ho_tensor *t = ho_node_input(g, n, i);

	if (!t || t->dtype != HO_DT_FLOAT)
		return def;
	if (t->value && t->value->f && t->value->count)
		return (float)t->value->f[0];
	return buf[n->inputs[i]] ? *(const float *)buf[n->inputs[i]] : def;
}

/* Input i as up to max integers (a constant: filled at plan time); its count, or -1. */
int ho_cpu_int_input(const struct ho_graph *g, const struct ho_node *n, uint32_t i,
		     void *const *buf, int64_t *v, int max)
{
	const struct ho_tensor *t = ho_node_input(g, n, i);

	if (!t || !(t->flags & HO_T_KNOWN))
		return -1; /* absent, or computed at run time */
	return ho_tensor_ints(t, buf[n->inputs[i]], v, max);
}

int64_t ho_cpu_int(const void *p, int dtype, int64_t i)
{
	switch (dtype) {
	case HO_DT_FLOAT:
		return (int64_t)((const float *)p)[i];
	case HO_DT_DOUBLE:
		return (int64_t)((const double *)p)[i];
	case HO_DT_INT8:
		return ((const int8_t *)p)[i];
	case HO_DT_UINT8:
	case HO_DT_BOOL:
		return ((const uint8_t *)p)[i];
	case HO_DT_INT16:
		return ((const int16_t *)p)[i];
	case HO_DT_UINT16:
		return ((const uint16_t *)p)[i];
	case HO_DT_INT32:
		return ((const int32_t *)p)[i];
	case HO_DT_UINT32:
		return ((const uint32_t *)p)[i];
	case HO_DT_INT64:
	case HO_DT_UINT64:
		return ((const int64_t *)p)[i];
	default:
		return 0;
	}
}

double ho_cpu_real(const void *p, int dtype, int64_t i)
{
	switch (dtype) {
	case HO_DT_FLOAT:
		return ((const float *)p)[i];
	case HO_DT_DOUBLE:
		return ((const double *)p)[i];
	case HO_DT_UINT64:
		return (double)((const uint64_t *)p)[i];
	default:
		return (double)ho_cpu_int(p, dtype, i);
	}
}
