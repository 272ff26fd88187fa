// SPDX-License-Identifier: MIT
/* Index maps: Transpose, Slice, nearest Resize and Gather as byte-offset tables walked at run time;
 * linear Resize on oneDNN, and every other Resize as ONNX's reference loop (GridSample:
 * grid_sample.c). */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cpu.h"
#include "heteroopt/opsem.h"

/*
 * Rows that follow one another in the input as they do in the output make one
 * longer row, until an outer axis steps otherwise: a channel shuffle's
 * [2, 58, 28, 28] to [58, 2, 28, 28] copies 784-float blocks, not 28-float
 * rows, and a Slice of whole channels one block.  The merged axis keeps its
 * first offset only, all that a contiguous row reads.
 */
static void ho_map_merge_rows(struct ho_kernel *k)
{
	while (k->rows_contiguous && k->rank > 1) {
		int l = k->rank - 1;
		int64_t row = k->dims[l] * (int64_t)k->elem;
		const int64_t *outer = k->map[l - 1];

		for (int64_t x = 1; x < k->dims[l - 1]; x++)
			if (outer[x] != outer[x - 1] + row)
				return;
		k->map[l - 1][0] += k->map[l][0];
		free(k->map[l]);
		k->map[l] = NULL;
		k->dims[l - 1] *= k->dims[l];
		k->rank--;
	}
}

/*
 * The maps' input indices to byte offsets, axis a's scaled by the stride of
 * the input axis it walks (perm[a]).  Rows that read consecutive bytes are
 * then copied whole.
 */
static void ho_map_to_bytes(struct ho_kernel *k)
{
	int64_t stride[HO_MAX_RANK], s = k->elem;
	int last = k->rank - 1;

	for (int i = last; i >= 0; i--) {
		stride[i] = s;
		s *= k->in_dims[i];
	}
	for (int a = 0; a <= last; a++)
		for (int64_t x = 0; x < k->dims[a]; x++)
			k->map[a][x] *= stride[k->perm[a]];
	k->rows_contiguous = last >= 0;
	for (int64_t x = 1; last >= 0 && x < k->dims[last]; x++)
		k->rows_contiguous &= k->map[last][x] == k->map[last][x - 1] + k->elem;
	k->repeat = 0;
	ho_map_merge_rows(k);
	if (last < 0 || k->rows_contiguous || k->dims[last] < 2)
		return;
	/* a row that takes each element r times in turn: runs of stores, no offsets read */
	int64_t r = 1, n = k->dims[last];
	const int64_t *in = k->map[last];

	while (r < n && in[r] == in[0])
		r++;
	if (r < 2 || n % r)
		return;
	for (int64_t x = 0; x < n; x++)
		if (in[x] != in[0] + x / r * (int64_t)k->elem)
			return;
	k->repeat = r;
}

/* Each of n / r elements of size es at src r times in a row at dst. */
static void ho_index_map_repeat(char *dst, const char *src, int64_t n, int64_t r, uint32_t es)
{
	if (es == 4) {
		const uint32_t *s = (const uint32_t *)(const void *)src;
		uint32_t *d = (uint32_t *)(void *)dst;

		if (r == 2)
			for (int64_t i = 0; i < n / 2; i++)
				d[2 * i] = d[2 * i + 1] = s[i];
		else
			for (int64_t i = 0; i < n / r; i++)
				for (int64_t j = 0; j < r; j++)
					d[i * r + j] = s[i];
		return;
	}
	for (int64_t i = 0; i < n / r; i++, src += es)
		for (int64_t j = 0; j < r; j++, dst += es)
			memcpy(dst, src, es);
}

/*
 * Linear and cubic Resize in any coordinate mode, and tf_crop_and_resize,
 * as ONNX's reference computes them: per output axis, each index's source
 * taps (2 or 4, clamped to the edge) and their weights; an output element is
 * the tensor product of its axes' taps.  An axis whose every index falls on
 * one source element keeps one tap, so unresized axes cost nothing.
 */
struct ho_resample_axis {
	double scale, roi0, roi1;
};

static int resample_axis(struct ho_kernel *k, int a, const char *mode, const char *coord,
			 const char *nearest, const struct ho_resample_axis *ax, double cubic_a,
			 bool exclude, struct ho_error *err)
{
	int64_t in = k->in_dims[a], out = k->dims[a];
	int n = !strcmp(mode, "cubic") ? 4 : !strcmp(mode, "linear") ? 2 : 1;
	bool single = true;
	double *w;
	int64_t *ix;

	ix = malloc((size_t)(out > 0 ? out : 1) * 4 * sizeof(int64_t));
	w = malloc((size_t)(out > 0 ? out : 1) * 4 * sizeof(double));
	k->map[a] = ix;
	k->resample_w[a] = w;
	if (!ix || !w)
		return ho_err(err, -ENOMEM, "out of memory");
	for (int64_t o = 0; o < out; o++) {
		double x = ho_resample_coord(coord, o, in, ax->scale, ax->roi0, ax->roi1), c[4],
		       sum = 0;
		/* ratio in (0, 1]: the reference prefers the element left of x */
		int64_t base = (int64_t)ceil(x) - 1;

		if (isnan(x)) { /* outside the crop: the extrapolation value */
			ix[4 * o] = -1;
			continue;
		}
		if (n == 1)
			base = ho_resize_nearest(nearest, x);
		ho_resample_coeffs(n, x - (double)base, cubic_a, c);
		base -= n == 4 ? 1 : 0;
		for (int t = 0; t < n; t++) {
			int64_t s = base + t;

			if (exclude && (s < 0 || s >= in))
				c[t] = 0;
			sum += c[t];
			ix[4 * o + t] = s < 0 ? 0 : s >= in ? in - 1 : s;
		}
		for (int t = 0; t < n; t++)
			w[4 * o + t] = exclude ? c[t] / sum : c[t];
	}
	/* one tap when every index takes one element whole (an axis not resized) */
	for (int64_t o = 0; o < out && n > 1; o++) {
		int ones = 0, zeros = 0;

		for (int t = 0; t < n && ix[4 * o] >= 0; t++)
			ones += w[4 * o + t] == 1, zeros += w[4 * o + t] == 0;
		single &= ix[4 * o] < 0 || (ones == 1 && zeros == n - 1);
	}
	k->taps[a] = single ? 1 : n;
	for (int64_t o = 0; o < out && single && n > 1; o++)
		for (int t = 0; t < n && ix[4 * o] >= 0; t++)
			if (w[4 * o + t] == 1) {
				ix[4 * o] = ix[4 * o + t];
				w[4 * o] = 1;
			}
	return 0;
}

static int ho_run_resample(const struct ho_kernel *k)
{
	const float *x = k->src;
	float *y = k->dst;
	int r = k->rank;
	int64_t n = 1, idx[HO_MAX_RANK] = {0}, xst[HO_MAX_RANK], acc = 1;

	for (int a = r - 1; a >= 0; a--) {
		xst[a] = acc;
		acc *= k->in_dims[a];
		n *= k->dims[a];
	}
	for (int64_t i = 0; i < n; i++) {
		int t[HO_MAX_RANK] = {0};
		double v = 0;
		bool outside = false;

		for (int a = 0; a < r; a++)
			outside |= k->map[a][4 * idx[a]] < 0;
		if (outside) {
			y[i] = k->param[0];
		} else {
			/* every combination of the axes' taps */
			for (;;) {
				double wt = 1;
				int64_t off = 0;
				int a;

				for (a = 0; a < r; a++) {
					wt *= k->resample_w[a][4 * idx[a] + t[a]];
					off += k->map[a][4 * idx[a] + t[a]] * xst[a];
				}
				v += wt * x[off];
				for (a = r - 1; a >= 0 && ++t[a] == k->taps[a]; a--)
					t[a] = 0;
				if (a < 0)
					break;
			}
			y[i] = (float)v;
		}
		for (int a = r - 1; a >= 0 && ++idx[a] == k->dims[a]; a--)
			idx[a] = 0;
	}
	return 0;
}

static int ho_resample_prep(const struct ho_graph *g, const struct ho_node *n, void *const *buf,
			    struct ho_kernel *k, const char *mode, const char *coord,
			    const char *nearest, struct ho_error *err)
{
	const struct ho_tensor *x = ho_node_input(g, n, 0), *y = &g->tensors[n->outputs[0]];
	const struct ho_tensor *sc = ho_node_input(g, n, n->opset >= 11 ? 2 : 1),
			       *roi = n->opset >= 11 ? ho_node_input(g, n, 1) : NULL;
	const struct ho_attr *kar = ho_node_attr(n, "keep_aspect_ratio_policy");
	bool crop = !strcmp(coord, "tf_crop_and_resize");
	int r = x->shape.rank;

	if (strcmp(mode, "linear") && strcmp(mode, "cubic") && !crop)
		return ho_cpu_unsupported(err, n, "has an unknown mode");
	if (ho_node_attr(n, "axes") || ho_node_attr_i(n, "antialias", 0) ||
	    (kar && kar->type == HO_ATTR_STRING && strcmp(kar->s, "stretch")))
		return ho_cpu_unsupported(err, n,
					  "resizes without axes, antialias or an aspect "
					  "ratio policy only");
	if (sc && ho_shape_numel(&sc->shape) > 0 &&
	    (!sc->value || !sc->value->f || sc->value->count != (size_t)r))
		return ho_cpu_unsupported(err, n, "needs constant scales");
	if (crop && (!roi || !roi->value || !roi->value->f || roi->value->count != 2 * (size_t)r))
		return ho_cpu_unsupported(err, n, "needs a constant roi to crop and resize");
	k->kind = HO_K_LOOP;
	k->typed.run = ho_run_resample;
	k->rank = r;
	k->src = buf[n->inputs[0]];
	k->dst = buf[n->outputs[0]];
	k->param[0] = ho_node_attr_f(n, "extrapolation_value", 0.0f);
	for (int a = 0; a < r; a++) {
		struct ho_resample_axis ax = {0};
		int ret;

		k->in_dims[a] = x->shape.dim[a];
		k->dims[a] = y->shape.dim[a];
		ax.scale = sc && ho_shape_numel(&sc->shape) > 0
			       ? sc->value->f[a]
			       : (double)y->shape.dim[a] / (double)x->shape.dim[a];
		if (crop) {
			ax.roi0 = roi->value->f[a];
			ax.roi1 = roi->value->f[r + a];
		}
		ret = resample_axis(k, a, mode, coord, nearest, &ax,
				    ho_node_attr_f(n, "cubic_coeff_a", -0.75f),
				    ho_node_attr_i(n, "exclude_outside", 0), err);
		if (ret)
			return ret;
	}
	return 0;
}

/*
 * Resize / Upsample.  Nearest is data movement: a reference loop over
 * precomputed source indices, exact for every coordinate and rounding mode.
 * Linear with half-pixel centres on the last two axes is oneDNN's resampling.
 */
int ho_cpu_prep_resize(struct ho_backend *c, const struct ho_graph *g, const struct ho_node *n,
		       void *const *buf, struct ho_kernel *k, struct ho_error *err)
{
	const struct ho_tensor *x = ho_node_input(g, n, 0), *y = &g->tensors[n->outputs[0]];
	const struct ho_tensor *sc = ho_node_input(g, n, n->opset >= 11 ? 2 : 1);
	const struct ho_attr *ma = ho_node_attr(n, "mode"),
			     *ca = ho_node_attr(n, "coordinate_transformation_mode"),
			     *na = ho_node_attr(n, "nearest_mode");
	const char *mode = ma && ma->type == HO_ATTR_STRING ? ma->s : "nearest",
		   *coord = ca && ca->type == HO_ATTR_STRING ? ca->s : "half_pixel",
		   *nearest = na && na->type == HO_ATTR_STRING ? na->s : "round_prefer_floor";
	int r;

	if (!x || x->dtype != HO_DT_FLOAT || x->shape.rank != y->shape.rank || x->shape.rank < 1)
		return ho_cpu_unsupported(err, n, "resizes float32 tensors only");
	r = x->shape.rank;
	if (n->opset < 11) { /* Upsample and Resize-10: x / scale, rounded down */
		coord = "asymmetric";
		nearest = "floor";
	}
	if (!strcmp(mode, "nearest") && strcmp(coord, "tf_crop_and_resize")) {
		k->kind = HO_K_INDEX_MAP;
		k->elem = sizeof(float);
		k->rank = r;
		k->src = buf[n->inputs[0]];
		k->dst = buf[n->outputs[0]];
		/* Axes in memory order: an NHWC tensor is walked N, H, W, C. */
		bool cl = r == 4 && c->channels_last && c->channels_last[n->inputs[0]];

		for (int p = 0; p < r; p++) {
			int a = cl ? ho_cpu_nhwc[p] : p;
			int64_t in = x->shape.dim[a], out = y->shape.dim[a];
			double scale = (double)out / (double)in;

			if (sc && sc->value && sc->value->f && sc->value->count == (size_t)r)
				scale = sc->value->f[a];
			k->dims[p] = out;
			k->in_dims[p] = in;
			k->map[p] = malloc((size_t)(out > 0 ? out : 1) * sizeof(int64_t));
			if (!k->map[p])
				return ho_err(err, -ENOMEM, "out of memory");
			for (int64_t o = 0; o < out; o++) {
				int64_t v = ho_resize_nearest(
				    nearest, ho_resize_coord(coord, o, in, out, scale));

				k->map[p][o] = v < 0 ? 0 : v >= in ? in - 1 : v;
			}
			k->perm[p] = p;
		}
		ho_map_to_bytes(k);
		return 0;
	}
	/* oneDNN: linear with half-pixel centres over the spatial axes, mapping coordinates by
	 * out / in (the same as ONNX only where the scale given is that, and, for
	 * pytorch_half_pixel, no axis shrinks to one element); the rest is the reference loop */
	bool onednn = !strcmp(mode, "linear") && r >= 3 &&
		      (!strcmp(coord, "half_pixel") || !strcmp(coord, "pytorch_half_pixel")) &&
		      x->shape.dim[0] == y->shape.dim[0] && x->shape.dim[1] == y->shape.dim[1] &&
		      !ho_node_attr(n, "axes") && !ho_node_attr_i(n, "antialias", 0);

	for (int a = 2; a < r && onednn; a++) {
		double f = (double)y->shape.dim[a] / (double)x->shape.dim[a];

		if (sc && ho_shape_numel(&sc->shape) > 0 &&
		    (!sc->value || !sc->value->f || sc->value->count != (size_t)r ||
		     fabs(sc->value->f[a] - f) > 1e-6 * f))
			onednn = false;
		if (!strcmp(coord, "pytorch_half_pixel") && y->shape.dim[a] == 1)
			onednn = false;
	}
	if (!onednn)
		return ho_resample_prep(g, n, buf, k, mode, coord, nearest, err);
	{
		float factors[HO_MAX_RANK];
		dnnl_resampling_desc_t d;
		dnnl_memory_desc_t xm, ym;
		int ret;

		for (int a = 2; a < r; a++)
			factors[a - 2] = (float)y->shape.dim[a] / (float)x->shape.dim[a];
		ho_cpu_t_md(c, &xm, n->inputs[0], &x->shape);
		ho_cpu_t_md(c, &ym, n->outputs[0], &y->shape);
		ret = ho_cpu_src_dst_kernel(
		    c, k,
		    dnnl_resampling_forward_desc_init(&d, dnnl_forward_inference,
						      dnnl_resampling_linear, factors, &xm, &ym),
		    &d, NULL, &xm, &ym, buf, n, "(oneDNN) has no resampling for this", err);
		return ret;
	}
}

/* One row of the last output axis from the outer axes' source offset src. */
static void ho_index_map_row(const struct ho_kernel *k, char *dst, const char *src)
{
	int64_t n = k->dims[k->rank - 1];
	const int64_t *in = k->map[k->rank - 1];

	if (k->rows_contiguous)
		memcpy(dst, src + in[0], (size_t)n * k->elem);
	else if (k->repeat)
		ho_index_map_repeat(dst, src + in[0], n, k->repeat, k->elem);
	else if (k->elem == 4)
		for (int64_t x = 0; x < n; x++)
			memcpy(dst + 4 * x, src + in[x], 4);
	else if (k->elem == 8)
		for (int64_t x = 0; x < n; x++)
			memcpy(dst + 8 * x, src + in[x], 8);
	else
		for (int64_t x = 0; x < n; x++)
			memcpy(dst + x * k->elem, src + in[x], k->elem);
}

/* The next index after axis a's; the axis that moved without wrapping, -1 at the end. */
static int ho_index_map_next(const struct ho_kernel *k, int64_t *idx, int a)
{
	for (; a >= 0 && ++idx[a] == k->dims[a]; a--)
		idx[a] = 0;
	return a;
}

/*
 * Rows r0 to r1 of the output, row by row over the last output axis: the outer
 * axes' offsets summed once a row, then one memcpy, runs of one element, or a
 * gather with a fixed element size.  Where an outer axis' index takes the same
 * source as the index before it (a nearest Resize's repeated rows and pixels),
 * the block under it repeats the block just written: one memcpy, where both
 * blocks are these rows'.  Gathered, PP-OCRv4's upsampling by 2 of 96x80x80
 * took 1.56 ms on one core; copied, 0.41.
 */
struct ho_map_job {
	const struct ho_kernel *k;
	const int64_t *block;
	size_t row;
};

static void ho_index_map_rows(const void *arg, int64_t r0, int64_t r1)
{
	const struct ho_map_job *job = arg;
	const struct ho_kernel *k = job->k;
	const int64_t *block = job->block;
	size_t row = job->row;
	int last = k->rank - 1, moved = -1;
	int64_t idx[HO_MAX_RANK] = {0};
	char *begin = (char *)k->dst + (size_t)r0 * row, *dst = begin,
	     *end = (char *)k->dst + (size_t)r1 * row;

	if (r0 >= r1) /* no rows: an extent may be 0, which no index divides by */
		return;
	for (int i = 0; i < last; i++)
		idx[i] = r0 / block[i] % k->dims[i];
	while (dst < end) {
		if (moved >= 0 && k->map[moved][idx[moved]] == k->map[moved][idx[moved] - 1]) {
			size_t bytes = (size_t)block[moved] * row;

			if ((size_t)(dst - begin) >= bytes && (size_t)(end - dst) >= bytes) {
				memcpy(dst, dst - bytes, bytes);
				dst += bytes;
				moved = ho_index_map_next(k, idx, moved);
				continue;
			}
		}
		const char *src = k->src;

		for (int i = 0; i < last; i++)
			src += k->map[i][idx[i]];
		ho_index_map_row(k, dst, src);
		dst += row;
		moved = ho_index_map_next(k, idx, last - 1);
	}
}

/*
 * The rows split over the device's threads: on one, swin_t's and convnext_tiny's
 * Transposes took twice as long at two threads as at one (the next kernel, on two,
 * read half of what one core had written from the other's cache).
 */
void ho_cpu_run_index_map(const struct ho_kernel *k)
{
	int last = k->rank - 1;
	int64_t block[HO_MAX_RANK], rows = 1;
	size_t row;
	struct ho_map_job job = {k, block, 0};

	if (k->rank == 0) {
		memcpy(k->dst, k->src, k->elem);
		return;
	}
	row = (size_t)(k->dims[last] > 0 ? k->dims[last] : 0) * k->elem;
	for (int i = last - 1; i >= 0; i--) { /* rows under one index of axis i */
		block[i] = rows;
		rows *= k->dims[i];
	}
	if (!row)
		return;
	job.row = row;
	ho_cpu_for_parts(ho_cpu_row_parts(rows, (int64_t)row, 1 << 17), rows, ho_index_map_rows,
			 &job);
}

/*
 * A batched 2-D transpose of 4-byte elements, out[b][j][i] = in[b][i][j]
 * (typed.iparam: m rows, n columns; typed.outer batches), in tiles that stay
 * in cache: each output row of a tile written whole.  Input rows far apart
 * (NCHW to NHWC: a channel is a whole map) fall into the same cache sets,
 * so such tiles take fewer of them.  96 x 160 x 160 floats here, one core:
 * NCHW to NHWC 4.46 ms as an index map (a gather a channel apart for every
 * element), NHWC to NCHW 1.82; in tiles 1.02-1.06 and 1.07-1.18 (registers'
 * 4 x 4 shuffles were no faster: it is the memory's pattern).
 */
/* Output rows a strip holds: a tile's width, the unit split over the threads. */
#define HO_T2D_STRIP 64

/* Strips lo to hi of HO_T2D_STRIP output rows each (a batch's strips one after another). */
static void ho_transpose_2d_strips(const void *arg, int64_t lo, int64_t hi)
{
	const struct ho_typed *t = arg;
	int64_t m = t->iparam[0], n = t->iparam[1], ti = n >= m ? 8 : 16, tj = HO_T2D_STRIP,
		strips = (n + tj - 1) / tj;

	for (int64_t task = lo; task < hi; task++) {
		int64_t b = task / strips, j0 = task % strips * tj, je = j0 + tj < n ? j0 + tj : n;
		const uint32_t *x = (const uint32_t *)t->in[0] + b * m * n;
		uint32_t *y = (uint32_t *)t->out + b * m * n;

		for (int64_t i0 = 0; i0 < m; i0 += ti) {
			int64_t ie = i0 + ti < m ? i0 + ti : m;

			for (int64_t j = j0; j < je; j++)
				for (int64_t i = i0; i < ie; i++)
					y[j * m + i] = x[i * n + j];
		}
	}
}

static int ho_run_transpose_2d(const struct ho_kernel *k)
{
	const struct ho_typed *t = &k->typed;
	int64_t m = t->iparam[0],
		tasks = t->outer * ((t->iparam[1] + HO_T2D_STRIP - 1) / HO_T2D_STRIP);

	ho_cpu_for_parts(ho_cpu_row_parts(tasks, HO_T2D_STRIP * m * 4, 1 << 17), tasks,
			 ho_transpose_2d_strips, t);
	return 0;
}

/*
 * Whether perm over dims is a batched 2-D transpose once axes of extent 1 are
 * dropped and input axes that stay neighbours are merged: [B, M, N] to
 * [B, N, M] (NCHW to NHWC: [N, C, HW] to [N, HW, C]).  *b, *m, *n its extents.
 */
static bool ho_transpose_is_2d(const int64_t *dims, const int64_t *perm, int r, int64_t *b,
			       int64_t *m, int64_t *n)
{
	int64_t p[HO_MAX_RANK], ext[HO_MAX_RANK], g[3] = {1, 1, 1};
	int q = 0, first[HO_MAX_RANK], groups = 0;

	for (int a = 0; a < r; a++) /* the output's axes, those of extent 1 dropped */
		if (dims[perm[a]] != 1)
			p[q++] = perm[a];
	for (int a = 0; a < q; a++) {
		/* a new group unless it is the input axis after the previous one, extent 1 apart */
		bool next = a > 0;

		for (int64_t x = p[a - (a > 0)] + 1; next && x < p[a]; x++)
			next = dims[x] == 1;
		if (!next || p[a] <= p[a - 1]) {
			if (groups == 3)
				return false;
			first[groups] = (int)p[a];
			ext[groups++] = 1;
		}
		ext[groups - 1] *= dims[p[a]];
	}
	if (groups == 2 && first[0] > first[1]) /* [M, N] to [N, M] */
		g[1] = ext[1], g[2] = ext[0];
	else if (groups == 3 && first[0] < first[2] && first[2] < first[1])
		g[0] = ext[0], g[1] = ext[2], g[2] = ext[1];
	else
		return false;
	*b = g[0], *m = g[1], *n = g[2];
	return true;
}

/* An index map whose output axis a walks input axis perm[a] in order. */
int ho_cpu_prep_transpose(const struct ho_graph *g, const struct ho_node *n, void *const *buf,
			  struct ho_kernel *k, struct ho_error *err)
{
	const struct ho_tensor *x = ho_node_input(g, n, 0);
	int r;

	if (!x || !ho_dtype_size(x->dtype))
		return ho_cpu_unsupported(err, n, "transposes fixed-size elements only");
	r = x->shape.rank;
	if (!ho_transpose_perm(n, r, k->perm))
		return ho_cpu_unsupported(err, n,
					  "needs a perm that is a permutation of the input's axes");
	if (ho_dtype_size(x->dtype) == 4 &&
	    ho_transpose_is_2d(x->shape.dim, k->perm, r, &k->typed.outer, &k->typed.iparam[0],
			       &k->typed.iparam[1])) {
		k->kind = HO_K_LOOP;
		k->typed.in[0] = buf[n->inputs[0]];
		k->typed.out = buf[n->outputs[0]];
		k->typed.run = ho_run_transpose_2d;
		return 0;
	}
	k->kind = HO_K_INDEX_MAP;
	k->rank = r;
	k->elem = (uint32_t)ho_dtype_size(x->dtype);
	k->src = buf[n->inputs[0]];
	k->dst = buf[n->outputs[0]];
	memcpy(k->in_dims, x->shape.dim, (size_t)r * sizeof(int64_t));
	for (int a = 0; a < r; a++) {
		k->dims[a] = x->shape.dim[k->perm[a]];
		k->map[a] = malloc((size_t)(k->dims[a] > 0 ? k->dims[a] : 1) * sizeof(int64_t));
		if (!k->map[a])
			return ho_err(err, -ENOMEM, "out of memory");
		for (int64_t o = 0; o < k->dims[a]; o++)
			k->map[a][o] = o;
	}
	ho_map_to_bytes(k);
	return 0;
}

/* Slice: the first index and the step on each axis (ho_slice_resolve, as shape inference). */
int ho_cpu_prep_slice(const struct ho_graph *g, const struct ho_node *n, void *const *buf,
		      struct ho_kernel *k, struct ho_error *err)
{
	const struct ho_tensor *x = ho_node_input(g, n, 0), *y = &g->tensors[n->outputs[0]];
	const void *data[5] = {NULL};
	struct ho_slice sl;
	struct ho_error e;
	int r;

	if (!x || !ho_dtype_size(x->dtype))
		return ho_cpu_unsupported(err, n, "slices fixed-size elements only");
	r = x->shape.rank;
	for (uint32_t i = 1; i < 5 && i < n->n_inputs; i++)
		data[i] = n->inputs[i] >= 0 ? buf[n->inputs[i]] : NULL;
	if (ho_slice_node(g, n, data, &sl, &e))
		return ho_cpu_unsupported(err, n, e.msg);
	k->kind = HO_K_INDEX_MAP;
	k->rank = r;
	k->elem = (uint32_t)ho_dtype_size(x->dtype);
	k->src = buf[n->inputs[0]];
	k->dst = buf[n->outputs[0]];
	for (int a = 0; a < r; a++) {
		k->in_dims[a] = x->shape.dim[a];
		k->dims[a] = y->shape.dim[a];
		k->map[a] = malloc((size_t)(k->dims[a] > 0 ? k->dims[a] : 1) * sizeof(int64_t));
		if (!k->map[a])
			return ho_err(err, -ENOMEM, "out of memory");
		for (int64_t o = 0; o < k->dims[a]; o++)
			k->map[a][o] = sl.first[a] + o * sl.step[a];
		k->perm[a] = a;
	}
	ho_map_to_bytes(k);
	return 0;
}

int ho_cpu_prep_gather(const struct ho_graph *g, const struct ho_node *n, void *const *buf,
		       struct ho_kernel *k, struct ho_error *err)
{
	const struct ho_tensor *x = ho_node_input(g, n, 0), *ix = ho_node_input(g, n, 1);
	int64_t axis = ho_node_attr_i(n, "axis", 0);

	if (!x || !ix || !ho_dtype_size(x->dtype) ||
	    (ix->dtype != HO_DT_INT64 && ix->dtype != HO_DT_INT32))
		return ho_cpu_unsupported(
		    err, n, "gathers fixed-size elements by int32/int64 indices only");
	axis += axis < 0 ? x->shape.rank : 0;
	if (axis < 0 || axis >= x->shape.rank)
		return ho_cpu_unsupported(err, n, "has an axis outside the input");
	k->kind = HO_K_GATHER;
	k->outer = 1;
	k->inner = (int64_t)ho_dtype_size(x->dtype);
	for (int a = 0; a < x->shape.rank; a++)
		if (a < axis)
			k->outer *= x->shape.dim[a];
		else if (a > axis)
			k->inner *= x->shape.dim[a];
	k->axis_dim = x->shape.dim[axis];
	k->n_idx = ho_shape_numel(&ix->shape);
	k->idx = buf[n->inputs[1]];
	k->idx64 = ix->dtype == HO_DT_INT64;
	k->src = buf[n->inputs[0]];
	k->dst = buf[n->outputs[0]];
	return 0;
}

int ho_cpu_run_gather(const struct ho_kernel *k)
{
	const char *src = k->src;
	char *dst = k->dst;

	for (int64_t j = 0; j < k->n_idx; j++) {
		int64_t i = ho_cpu_index(k->idx, k->idx64 ? HO_DT_INT64 : HO_DT_INT32, j);

		i += i < 0 ? k->axis_dim : 0;
		if (i < 0 || i >= k->axis_dim)
			return -EINVAL; /* an index from the data: checked at run time */
		for (int64_t o = 0; o < k->outer; o++)
			memcpy(dst + (o * k->n_idx + j) * k->inner,
			       src + (o * k->axis_dim + i) * k->inner, (size_t)k->inner);
	}
	return 0;
}
