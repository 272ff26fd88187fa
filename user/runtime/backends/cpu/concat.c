// SPDX-License-Identifier: MIT
/* Concat: oneDNN's (any mix of layouts), or copies for many inputs and other types. */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cpu.h"

/* The loop's plan (in k->fold): per input its buffer and its bytes per outer index; for
 * mixed layouts its extents, channels-last or not, and where it starts along the axis. */
struct ho_concat_part {
	const char *src;
	int64_t bytes;
	int64_t dim[4], base;
	bool cl;
};

/* The byte offset of NCHW coordinates c in a 4-D tensor of extents d, NCHW or NHWC. */
static int64_t concat_at(const int64_t *c, const int64_t *d, bool cl, int64_t es)
{
	return es * (cl ? ((c[0] * d[2] + c[2]) * d[3] + c[3]) * d[1] + c[1]
			: ((c[0] * d[1] + c[1]) * d[2] + c[2]) * d[3] + c[3]);
}

/*
 * One input onto the channels of the output, the input's channels at base
 * in the output's.  In the output's layout that is a slab per image (NCHW)
 * or a run of channels per pixel (NHWC); across layouts a transpose of each
 * image between (C, H*W) and (H*W, C), in 16 x 16 tiles that stay in
 * cache.  Element by element with index arithmetic this ran at 0.5 GB/s,
 * and an input already in the output's layout went the same way: DenseNet
 * mixes one NCHW input (its transition's) with NHWC ones, and its blocks'
 * last concatenations took 1.1 ms for 800 KB.
 */
static void ho_concat_channels(const struct ho_concat_part *p, char *y, const int64_t *yd, bool ycl,
			       int64_t es)
{
	const int64_t tile = 16, hw = p->dim[2] * p->dim[3], ci = p->dim[1], co = yd[1];

	for (int64_t n = 0; n < p->dim[0]; n++) {
		const char *x = p->src + n * ci * hw * es;
		char *o = y + n * co * hw * es;

		if (p->cl == ycl && !ycl) {
			memcpy(o + p->base * hw * es, x, (size_t)(ci * hw * es));
			continue;
		}
		if (p->cl == ycl) {
			for (int64_t s = 0; s < hw; s++)
				memcpy(o + (s * co + p->base) * es, x + s * ci * es,
				       (size_t)(ci * es));
			continue;
		}
		for (int64_t c0 = 0; c0 < ci; c0 += tile)
			for (int64_t s0 = 0; s0 < hw; s0 += tile)
				for (int64_t c = c0; c < c0 + tile && c < ci; c++)
					for (int64_t s = s0; s < s0 + tile && s < hw; s++) {
						int64_t from = p->cl ? s * ci + c : c * hw + s,
							to = ycl ? s * co + p->base + c
								 : (p->base + c) * hw + s;

						memcpy(o + to * es, x + from * es, (size_t)es);
					}
	}
}

/* Mixed layouts (k->n_elems set): element by element, each to its place in the output. */
static int ho_run_concat_mixed(const struct ho_kernel *k)
{
	const struct ho_concat_part *p = (const struct ho_concat_part *)k->fold;
	int64_t es = k->elem, axis = k->axis_dim;

	for (int64_t i = 0; i < k->n_idx; i++) {
		if (axis == 1) {
			ho_concat_channels(&p[i], k->dst, k->dims, k->rows_contiguous, es);
			continue;
		}
		int64_t c[4], n = p[i].dim[0] * p[i].dim[1] * p[i].dim[2] * p[i].dim[3];

		for (int64_t e = 0; e < n; e++) {
			int64_t r = e;

			for (int a = 3; a >= 0; a--) {
				c[a] = r % p[i].dim[a];
				r /= p[i].dim[a];
			}
			int64_t from = concat_at(c, p[i].dim, p[i].cl, es);

			c[axis] += p[i].base;
			memcpy((char *)k->dst + concat_at(c, k->dims, k->rows_contiguous, es),
			       p[i].src + from, (size_t)es);
		}
	}
	return 0;
}

/*
 * Concat as copies: each outer index takes every input's slab in turn, the
 * outer indices split over the device's threads where there is enough to
 * copy (DenseNet's NHWC concatenations: a slab of channels per pixel).
 */
struct ho_concat_job {
	const struct ho_kernel *k;
	int64_t row;
};

/* Output rows lo to hi, input by input over blocks of rows that stay in cache: a slab of
 * a few bytes is then a load and a store, not a call. */
static void ho_concat_rows(const void *arg, int64_t lo, int64_t hi)
{
	const struct ho_concat_job *job = arg;
	const struct ho_kernel *k = job->k;
	const struct ho_concat_part *p = (const struct ho_concat_part *)k->fold;
	int64_t row = job->row;

	for (; lo < hi; lo += 256) {
		int64_t rows = hi - lo < 256 ? hi - lo : 256, at = 0;

		for (int64_t i = 0; i < k->n_idx; i++) {
			ho_cpu_copy_rows((char *)k->dst + lo * row + at, row,
					 p[i].src + lo * p[i].bytes, p[i].bytes, rows, p[i].bytes);
			at += p[i].bytes;
		}
	}
}

static int ho_run_concat(const struct ho_kernel *k)
{
	const struct ho_concat_part *p = (const struct ho_concat_part *)k->fold;
	int64_t row = 0;

	for (int64_t i = 0; i < k->n_idx; i++)
		row += p[i].bytes;
	ho_cpu_for_parts(ho_cpu_row_parts(k->outer, row, 1 << 17), k->outer, ho_concat_rows,
			 &(struct ho_concat_job){k, row});
	return 0;
}

/*
 * Any number of inputs of any type, all in one layout: copies, no oneDNN.
 * In memory order (N, H, W, C for channels-last) everything before the axis
 * is the outer index, each input's slab after it.
 */
static int ho_concat_loop(struct ho_backend *c, const struct ho_graph *g, const struct ho_node *n,
			  int64_t axis, void *const *buf, struct ho_kernel *k, struct ho_error *err)
{
	static const int nhwc_at[4] = {0, 3, 1, 2}; /* an NCHW axis' place in NHWC memory */
	const struct ho_tensor *y = &g->tensors[n->outputs[0]];
	struct ho_concat_part *p;
	int64_t es = ho_dtype_size(y->dtype);
	bool cl = c->channels_last && c->channels_last[n->outputs[0]], mixed = false;
	int at = cl && y->shape.rank == 4 ? nhwc_at[axis] : (int)axis;

	if (!es || (cl && y->shape.rank != 4))
		return ho_cpu_unsupported(err, n, "concatenates fixed-size elements only");
	if (!(p = calloc(n->n_inputs + 1, sizeof(*p))))
		return ho_err(err, -ENOMEM, "out of memory");
	k->fold = (float *)p;
	k->outer = 1;
	for (int a = 0; a < at; a++)
		k->outer *= y->shape.dim[cl ? ho_cpu_nhwc[a] : a];
	for (uint32_t i = 0; i < n->n_inputs; i++) {
		const struct ho_tensor *x = &g->tensors[n->inputs[i]];

		if (x->dtype != y->dtype)
			return ho_cpu_unsupported(err, n, "needs inputs of its type");
		if (cl != (c->channels_last && c->channels_last[n->inputs[i]]))
			mixed = true;
		p[i].src = buf[n->inputs[i]];
		p[i].bytes = k->outer ? ho_shape_numel(&x->shape) / k->outer * es : 0;
	}
	k->n_idx = n->n_inputs;
	k->dst = buf[n->outputs[0]];
	k->kind = HO_K_LOOP;
	k->typed.run = ho_run_concat;
	if (!mixed)
		return 0;
	if (y->shape.rank != 4)
		return ho_cpu_unsupported(err, n, "mixes layouts of 4-D tensors only");
	/* the layout planner mixed NCHW and NHWC here: place each element */
	int64_t base = 0;

	for (uint32_t i = 0; i < n->n_inputs; i++) {
		const struct ho_tensor *x = &g->tensors[n->inputs[i]];

		memcpy(p[i].dim, x->shape.dim, sizeof(p[i].dim));
		p[i].cl = c->channels_last && c->channels_last[n->inputs[i]];
		p[i].base = base;
		base += x->shape.dim[axis];
	}
	memcpy(k->dims, y->shape.dim, 4 * sizeof(int64_t));
	k->rows_contiguous = cl; /* the output's layout */
	k->elem = (uint32_t)es;
	k->axis_dim = axis;
	k->typed.run = ho_run_concat_mixed;
	return 0;
}

/* Whether every input is in the output's layout (NCHW or NHWC). */
static bool ho_concat_one_layout(const struct ho_backend *c, const struct ho_node *n)
{
	bool cl = c->channels_last && c->channels_last[n->outputs[0]];

	for (uint32_t i = 0; i < n->n_inputs; i++)
		if (cl != (c->channels_last && c->channels_last[n->inputs[i]]))
			return false;
	return true;
}

int ho_cpu_prep_concat(struct ho_backend *c, const struct ho_graph *g, const struct ho_node *n,
		       void *const *buf, struct ho_kernel *k, struct ho_error *err)
{
	const struct ho_tensor *y = &g->tensors[n->outputs[0]];
	int64_t axis = ho_node_attr_i(n, "axis", 0);
	dnnl_memory_desc_t md[HO_CPU_MAX_ARGS - 1], ym;
	dnnl_primitive_desc_t pd = NULL;
	int ret = 0;

	if (axis < 0)
		axis += y->shape.rank;
	if (n->n_inputs < 1 || axis < 0 || axis >= y->shape.rank)
		return ho_cpu_unsupported(err, n, "needs inputs and an axis inside them");
	for (uint32_t i = 0; i < n->n_inputs; i++)
		if (n->inputs[i] < 0)
			return ho_cpu_unsupported(err, n, "needs every input present");
	/*
	 * oneDNN takes float32 and a bounded argument list; the rest is copies.
	 * So is every concat in one layout: oneDNN's took 2-4x memcpy's time at
	 * every slab measured, from 4 bytes (columns) through 96 (PP-OCRv4's four
	 * 24-channel NHWC maps: 1.66 ms, copies 0.84) to 800 KB (two plain
	 * 64x56x56 on channels: 680-700 us, copies ~50).  Mixed layouts stay
	 * with oneDNN's reorders.
	 */
	if (n->n_inputs >= HO_CPU_MAX_ARGS - 1 || y->dtype != HO_DT_FLOAT ||
	    ho_concat_one_layout(c, n))
		return ho_concat_loop(c, g, n, axis, buf, k, err);
	for (uint32_t i = 0; i < n->n_inputs; i++) {
		if (n->inputs[i] < 0)
			return ho_cpu_unsupported(err, n, "needs every input present");
		ho_cpu_t_md(c, &md[i], n->inputs[i], &g->tensors[n->inputs[i]].shape);
	}
	ho_cpu_t_md(c, &ym, n->outputs[0], &y->shape);
	if (dnnl_concat_primitive_desc_create(&pd, &ym, (int)n->n_inputs, (int)axis, md, c->attr,
					      c->eng) != dnnl_success)
		return ho_cpu_unsupported(err, n, "(oneDNN) cannot concatenate these shapes");
	for (uint32_t i = 0; i < n->n_inputs && !ret; i++)
		ret = ho_cpu_mem(c, k, &md[i], buf[n->inputs[i]], DNNL_ARG_MULTIPLE_SRC + (int)i);
	if (ret || ho_cpu_mem(c, k, &ym, buf[n->outputs[0]], DNNL_ARG_DST) || ho_cpu_prim(c, k, pd))
		ret = ho_err(err, -ENOMEM, "node '%s': oneDNN set-up failed", n->name);
	dnnl_primitive_desc_destroy(pd);
	return ret;
}
