// SPDX-License-Identifier: MIT
/*
 * Data movement of any fixed-size element type, as loops over the output:
 * Split (every output), Pad (constant, reflect, edge), Tile, Expand,
 * DepthToSpace, SpaceToDepth, ScatterElements, ScatterND, GatherND, EyeLike, ConstantOfShape,
 * OneHot, ReverseSequence and MaxUnpool.  The output shapes are shape inference's; what decides the
 * movement (pads, repeats, indices) is read from the node's constants at plan time, or from the
 * data where ONNX says so (ScatterElements' indices, checked at run time).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cpu.h"

/* What ho_run_rows or ho_run_map does, decided at plan time (not by the name, per element). */
enum ho_map_kind { MAP_PAD, MAP_TILE, MAP_DEPTH_TO_SPACE, MAP_SPACE_TO_DEPTH };

struct ho_move {
	enum ho_map_kind map;
	int rank, es;
	struct ho_shape in, out;
	int64_t in_stride[HO_MAX_RANK];
	int64_t begin[HO_MAX_RANK]; /* Pad: padding before each axis */
	int mode;		    /* Pad: 0 constant, 1 reflect, 2 edge; DepthToSpace: 1 CRD */
	int64_t block;
	unsigned char fill[16]; /* Pad's constant, in the element type */
	int n_out, axis;
	void *outs[HO_TYPED_MAX_IN];
};

static void ho_strides(const struct ho_shape *s, int64_t *st)
{
	int64_t acc = 1;

	for (int a = s->rank - 1; a >= 0; a--) {
		st[a] = acc;
		acc *= s->dim[a];
	}
}

static int ho_run_split(const struct ho_kernel *k)
{
	const struct ho_move *m = k->move;
	int64_t outer = 1, inner = (int64_t)m->es, at = 0, total = m->in.dim[m->axis];

	for (int a = 0; a < m->in.rank; a++)
		if (a < m->axis)
			outer *= m->in.dim[a];
		else if (a > m->axis)
			inner *= m->in.dim[a];
	for (int j = 0; j < m->n_out; j++) {
		int64_t len = k->typed.in_shape[j].dim[m->axis];

		if (m->outs[j])
			ho_cpu_copy_rows(m->outs[j], len * inner, (const char *)k->src + at * inner,
					 total * inner, outer, len * inner);
		at += len;
	}
	return 0;
}

/* DepthToSpace and SpaceToDepth: each output element from the input's. */
static int ho_run_map(const struct ho_kernel *k)
{
	const struct ho_move *m = k->move;
	int64_t n = ho_shape_numel(&m->out), c[HO_MAX_RANK] = {0};
	const char *x = k->src;
	char *y = k->dst;

	for (int64_t i = 0; i < n; i++) {
		int64_t b = m->block, nb = c[0], ch = c[1], h = c[2], w = c[3], sc, sh, sw, src;

		if (m->map == MAP_DEPTH_TO_SPACE) {
			int64_t cc = m->out.dim[1];

			sc = m->mode ? ch * b * b + (h % b) * b + w % b
				     : ((h % b) * b + w % b) * cc + ch;
			sh = h / b;
			sw = w / b;
		} else {
			int64_t blk = ch / m->in.dim[1];

			sc = ch % m->in.dim[1];
			sh = h * b + blk / b;
			sw = w * b + blk % b;
		}
		src = nb * m->in_stride[0] + sc * m->in_stride[1] + sh * m->in_stride[2] +
		      sw * m->in_stride[3];
		memcpy(y + i * m->es, x + src * m->es, (size_t)m->es);
		for (int a = m->out.rank - 1; a >= 0; a--) {
			if (++c[a] < m->out.dim[a])
				break;
			c[a] = 0;
		}
	}
	return 0;
}

/* Which index of axis a output index o reads for Pad or Tile; -1: Pad's constant. */
static int64_t ho_map_axis(const struct ho_move *m, int a, int64_t o)
{
	int64_t d = m->in.dim[a], s = o - m->begin[a], p;

	if (m->map == MAP_TILE)
		return o % d;
	if (s >= 0 && s < d)
		return s;
	if (m->mode == 0 || d == 0)
		return -1;
	if (m->mode == 2) /* edge */
		return s < 0 ? 0 : d - 1;
	p = 2 * (d - 1); /* reflect, without repeating the edge */
	s = p ? ((s % p) + p) % p : 0;
	return s >= d ? p - s : s;
}

/* n of Pad's constant at y. */
static void ho_fill(const struct ho_move *m, char *y, int64_t n)
{
	for (int64_t i = 0; i < n; i++)
		memcpy(y + i * m->es, m->fill, (size_t)m->es);
}

/*
 * Pad and Tile, a row of the last axis at a time: what maps straight across
 * is one memcpy, Pad's constant one fill, only a reflected or repeated edge
 * goes element by element.  An element at a time took 4 ns (DenseNet-121's
 * three zero Pads: 3.3 ms of its 33).
 */
static int ho_run_rows(const struct ho_kernel *k)
{
	const struct ho_move *m = k->move;
	const int last = m->rank - 1;
	const size_t es = (size_t)m->es;
	int64_t c[HO_MAX_RANK] = {0}, rows = 1, w, d;
	const char *x = k->src;
	char *y = k->dst;

	if (m->rank == 0) {
		memcpy(y, x, es);
		return 0;
	}
	w = m->out.dim[last];
	d = m->in.dim[last];
	for (int a = 0; a < last; a++)
		rows *= m->out.dim[a];
	for (int64_t r = 0; r < rows; r++, y += w * (int64_t)es) {
		int64_t src = 0, s, span;
		bool fill = false;

		for (int a = 0; a < last && !fill; a++) {
			s = ho_map_axis(m, a, c[a]);
			fill = s < 0;
			src += s * m->in_stride[a];
		}
		for (int64_t j = 0; j < w; j += span) {
			s = fill ? -1 : ho_map_axis(m, last, j);
			span = 1;
			if (s < 0) {
				span = fill ? w : (j < m->begin[last] ? m->begin[last] - j : w - j);
				ho_fill(m, y + j * (int64_t)es, span);
			} else if (m->map == MAP_TILE || j - m->begin[last] == s) {
				span = d - s < w - j ? d - s : w - j;
				memcpy(y + j * (int64_t)es, x + (src + s) * (int64_t)es,
				       (size_t)span * es);
			} else {
				memcpy(y + j * (int64_t)es, x + (src + s) * (int64_t)es, es);
			}
		}
		for (int a = last - 1; a >= 0; a--) {
			if (++c[a] < m->out.dim[a])
				break;
			c[a] = 0;
		}
	}
	return 0;
}

/* Expand: each output element from the input's, broadcast from the last axis back. */
/* n elements of es bytes at dst, each the one at src: one copy, then doubling. */
static void ho_fill_from(char *dst, const char *src, int64_t n, int es)
{
	if (n <= 0)
		return;
	memcpy(dst, src, (size_t)es);
	for (int64_t done = 1; done < n; done *= 2)
		memcpy(dst + done * es, dst, (size_t)((done * 2 <= n ? done : n - done) * es));
}

/*
 * Expand, run by run: the output's trailing axes that are all broadcast (or
 * all not) make one run, filled from one element or copied whole, so that
 * the per-element index arithmetic is per run (fasterrcnn expands 150 rois'
 * indices to [150, 256, 7, 7]: 6 ms an element at a time).
 */
static int ho_run_expand(const struct ho_kernel *k)
{
	const struct ho_move *m = k->move;
	int r = m->out.rank, lift = m->out.rank - m->in.rank, p = r, fill = -1;
	int64_t n = ho_shape_numel(&m->out), run = 1, c[HO_MAX_RANK] = {0};

	for (int a = r - 1; a >= 0; a--) {
		int in_dim = a < lift ? 1 : (int)m->in.dim[a - lift];
		int kind = in_dim == 1 && m->out.dim[a] != 1;

		if (m->out.dim[a] != 1 && fill >= 0 && kind != fill)
			break;
		if (m->out.dim[a] != 1)
			fill = kind;
		run *= m->out.dim[a];
		p = a;
	}
	for (int64_t o = 0; run > 0 && o < n / run; o++) {
		int64_t src = 0;

		for (int a = lift > 0 ? lift : 0; a < p; a++)
			src += (m->in.dim[a - lift] == 1 ? 0 : c[a]) * m->in_stride[a - lift];
		if (fill == 1)
			ho_fill_from((char *)k->dst + o * run * m->es,
				     (const char *)k->src + src * m->es, run, m->es);
		else
			memcpy((char *)k->dst + o * run * m->es, (const char *)k->src + src * m->es,
			       (size_t)(run * m->es));
		for (int a = p - 1; a >= 0; a--) {
			if (++c[a] < m->out.dim[a])
				break;
			c[a] = 0;
		}
	}
	return 0;
}

/*
 * Updates along the last axis (when it is not the scatter's) as a run: per index row one
 * offset, then each element its index's row of the output.  Element by element, its
 * position carried over every axis, fasterrcnn's box pooling ([140, 256, 7, 7] rows of one
 * index each) took 5.8 ms.
 */
static int ho_scatter_row(const struct ho_kernel *k, int64_t i0, int64_t run, int64_t base,
			  int64_t step)
{
	const struct ho_move *m = k->move;
	const struct ho_typed *t = &k->typed;
	int64_t d = m->out.dim[m->axis];

	for (int64_t e = 0; e < run; e++) {
		int64_t j = ho_cpu_index(t->in[1], t->in_dt[1], i0 + e), dst;

		j += j < 0 ? d : 0;
		if (j < 0 || j >= d)
			return -EINVAL; /* an index from the data: checked at run time */
		dst = base + j * step + e;
		if (m->mode == 0 && m->es == 4) {
			((uint32_t *)k->dst)[dst] = ((const uint32_t *)t->in[2])[i0 + e];
		} else if (m->mode == 0) {
			memcpy((char *)k->dst + dst * m->es,
			       (const char *)t->in[2] + (i0 + e) * m->es, (size_t)m->es);
		} else if (t->out_dt == HO_DT_FLOAT) { /* add or mul */
			float *yv = (float *)k->dst + dst, u = ((const float *)t->in[2])[i0 + e];

			*yv = m->mode == 1 ? *yv + u : *yv * u;
		}
	}
	return 0;
}

static int ho_run_scatter(const struct ho_kernel *k)
{
	const struct ho_move *m = k->move;
	const struct ho_shape *ix = &k->typed.in_shape[1];
	int r = ix->rank, last = r - 1;
	/* a run: the last axis, unless it is the scatter's (then each element alone) */
	int64_t run = r && m->axis != last ? ix->dim[last] : 1, c[HO_MAX_RANK] = {0},
		ost[HO_MAX_RANK], base = 0; /* the offset of c's position but for the axis */
	int64_t rows = run ? ho_shape_numel(ix) / run : 0;
	int outer = run > 1 ? last : r; /* the axes rows step over */

	memcpy(k->dst, k->src, (size_t)(ho_shape_numel(&m->out) * m->es));
	ho_strides(&m->out, ost);
	for (int64_t row = 0; row < rows; row++) {
		int ret = ho_scatter_row(k, row * run, run, base, ost[m->axis]);

		if (ret)
			return ret;
		/* the next row, its offset kept as it goes (not summed over the axes) */
		for (int a = outer - 1; a >= 0; a--) {
			if (++c[a] < ix->dim[a]) {
				base += a == m->axis ? 0 : ost[a];
				break;
			}
			base -= a == m->axis ? 0 : ost[a] * (ix->dim[a] - 1);
			c[a] = 0;
		}
	}
	return 0;
}

/* The element offset of index tuple i (q indices over m->in's axes from first); -1 out of
 * range. */
static int64_t ho_tuple_offset(const struct ho_move *m, const struct ho_typed *t, int64_t i,
			       int64_t q, int first)
{
	int64_t off = 0;

	for (int64_t j = 0; j < q; j++) {
		int64_t v = ho_cpu_index(t->in[1], t->in_dt[1], i * q + j),
			d = m->in.dim[first + j];

		v += v < 0 ? d : 0;
		if (v < 0 || v >= d)
			return -1;
		off += v * m->in_stride[first + j];
	}
	return off;
}

/* ScatterND: each index tuple names a slice of the output that an update slice replaces. */
static int ho_run_scatter_nd(const struct ho_kernel *k)
{
	const struct ho_move *m = k->move;
	const struct ho_typed *t = &k->typed;
	int64_t q = t->in_shape[1].dim[t->in_shape[1].rank - 1], slice = 1,
		tuples = q ? ho_shape_numel(&t->in_shape[1]) / q : 0;

	for (int a = (int)q; a < m->out.rank; a++)
		slice *= m->out.dim[a];
	memcpy(k->dst, k->src, (size_t)(ho_shape_numel(&m->out) * m->es));
	for (int64_t i = 0; i < tuples; i++) {
		int64_t off = ho_tuple_offset(m, t, i, q, 0);

		if (off < 0)
			return -EINVAL; /* an index from the data: checked at run time */
		for (int64_t e = 0; e < slice; e++) {
			char *y = (char *)k->dst + (off + e) * m->es;
			const char *u = (const char *)t->in[2] + (i * slice + e) * m->es;

			if (m->mode == 0)
				memcpy(y, u, (size_t)m->es);
			else if (m->mode == 1)
				*(float *)y += *(const float *)u;
			else
				*(float *)y *= *(const float *)u;
		}
	}
	return 0;
}

/*
 * GatherND: each index tuple names a slice of the data, copied out in turn;
 * with batch_dims b (m->axis) the tuples of each batch entry index that
 * entry's data only.
 */
static int ho_run_gather_nd(const struct ho_kernel *k)
{
	const struct ho_move *m = k->move;
	const struct ho_typed *t = &k->typed;
	int b = m->axis;
	int64_t q = t->in_shape[1].dim[t->in_shape[1].rank - 1], slice = 1, batches = 1,
		tuples = q ? ho_shape_numel(&t->in_shape[1]) / q : 0, per;

	for (int a = b + (int)q; a < m->in.rank; a++)
		slice *= m->in.dim[a];
	for (int a = 0; a < b; a++)
		batches *= m->in.dim[a];
	per = batches ? tuples / batches : 0;
	for (int64_t i = 0; i < tuples; i++) {
		int64_t off = ho_tuple_offset(m, t, i, q, b);

		if (off >= 0 && b > 0)
			off += (i / (per ? per : 1)) * m->in_stride[b - 1];

		if (off < 0)
			return -EINVAL; /* an index from the data: checked at run time */
		memcpy((char *)k->dst + i * slice * m->es, (const char *)k->src + off * m->es,
		       (size_t)(slice * m->es));
	}
	return 0;
}

/* EyeLike: ones on the diagonal shifted by k, zeros elsewhere, in the output's type. */
static int ho_run_eye_like(const struct ho_kernel *k)
{
	const struct ho_move *m = k->move;
	int64_t rows = m->out.dim[0], cols = m->out.dim[1];

	memset(k->dst, 0, (size_t)(rows * cols * m->es));
	for (int64_t r = 0; r < rows; r++) {
		int64_t c = r + m->block;

		if (c >= 0 && c < cols)
			memcpy((char *)k->dst + (r * cols + c) * m->es, m->fill, (size_t)m->es);
	}
	return 0;
}
/* ConstantOfShape: its value everywhere (a shape too large to fold at load, as
 * detectors' anchor grids are). */
static int ho_run_fill(const struct ho_kernel *k)
{
	const struct ho_move *m = k->move;
	int64_t n = ho_shape_numel(&m->out);
	static const unsigned char zero[16];

	if (n <= 0)
		return 0;
	if (!memcmp(m->fill, zero, (size_t)m->es)) {
		memset(k->dst, 0, (size_t)(n * m->es));
		return 0;
	}
	ho_fill_from(k->dst, (const char *)m->fill, n, m->es);
	return 0;
}

/* OneHot: values[0] everywhere, values[1] where the depth axis' index is the index. */
static int ho_run_one_hot(const struct ho_kernel *k)
{
	const struct ho_move *m = k->move;
	const struct ho_typed *t = &k->typed;
	int64_t depth = m->out.dim[m->axis], outer = 1, inner = 1, n = ho_shape_numel(&m->out);
	const char *vals = t->in[2];
	char *y = k->dst;

	for (int a = 0; a < m->out.rank; a++)
		if (a < m->axis)
			outer *= m->out.dim[a];
		else if (a > m->axis)
			inner *= m->out.dim[a];
	for (int64_t i = 0; i < n; i++)
		memcpy(y + i * m->es, vals, (size_t)m->es);
	for (int64_t o = 0; o < outer; o++)
		for (int64_t e = 0; e < inner; e++) {
			int64_t v = ho_cpu_int(t->in[0], t->in_dt[0], o * inner + e);

			v += v < 0 ? depth : 0;
			if (v >= 0 && v < depth) /* out of range: all off, as ONNX says */
				memcpy(y + ((o * depth + v) * inner + e) * m->es, vals + m->es,
				       (size_t)m->es);
		}
	return 0;
}

/* ReverseSequence: each batch entry's first len steps along the time axis, reversed. */
static int ho_run_reverse_sequence(const struct ho_kernel *k)
{
	const struct ho_move *m = k->move;
	const struct ho_typed *t = &k->typed;
	int64_t n = ho_shape_numel(&m->in), c[HO_MAX_RANK] = {0}, steps = m->in.dim[m->block];

	for (int64_t b = 0; b < m->in.dim[m->axis]; b++) {
		int64_t len = ho_cpu_index(t->in[1], t->in_dt[1], b);

		if (len < 0 || len > steps)
			return -EINVAL; /* a length from the data: checked at run time */
	}
	for (int64_t i = 0; i < n; i++) {
		int64_t len = ho_cpu_index(t->in[1], t->in_dt[1], c[m->axis]), tt = c[m->block],
			src = i + ((tt < len ? len - 1 - tt : tt) - tt) * m->in_stride[m->block];

		memcpy((char *)k->dst + i * m->es, (const char *)k->src + src * m->es,
		       (size_t)m->es);
		for (int a = m->rank - 1; a >= 0 && ++c[a] == m->in.dim[a]; a--)
			c[a] = 0;
	}
	return 0;
}

/*
 * MaxUnpool: zeros, and each input element where its index says.  An index
 * counts over the shape the pooling came from (kernel, strides and pads
 * inferred); a larger output_shape keeps each element's coordinates.
 */
static int ho_run_max_unpool(const struct ho_kernel *k)
{
	const struct ho_move *m = k->move;
	const struct ho_typed *t = &k->typed;
	const struct ho_shape *from = &t->in_shape[2];
	int64_t n = ho_shape_numel(&m->in), ny = ho_shape_numel(&m->out),
		nfrom = ho_shape_numel(from);

	memset(k->dst, 0, (size_t)(ny * m->es));
	for (int64_t i = 0; i < n; i++) {
		int64_t idx = ho_cpu_index(t->in[1], t->in_dt[1], i), at = 0, mul = 1;

		if (idx < 0 || idx >= nfrom)
			return -EINVAL; /* an index from the data: checked at run time */
		for (int a = from->rank - 1; a >= 0; a--) {
			int64_t c = idx % from->dim[a];

			idx /= from->dim[a];
			if (c >= m->out.dim[a])
				return -EINVAL;
			at += c * mul;
			mul *= m->out.dim[a];
		}
		memcpy((char *)k->dst + at * m->es, (const char *)k->src + i * m->es,
		       (size_t)m->es);
	}
	return 0;
}

/* Compress: the slices along the axis (m->axis; -1 the flattened elements) whose condition
 * is true, in order; as many as planned (its value decided the extent). */
static int ho_run_compress(const struct ho_kernel *k)
{
	const struct ho_move *m = k->move;
	const struct ho_typed *t = &k->typed;
	const uint8_t *cond = t->in[1];
	int64_t outer = 1, inner = m->es, len, kept = 0, want, j = 0;

	if (m->axis < 0) {
		len = ho_shape_numel(&m->in);
		want = m->out.dim[0];
	} else {
		for (int a = 0; a < m->in.rank; a++)
			if (a < m->axis)
				outer *= m->in.dim[a];
			else if (a > m->axis)
				inner *= m->in.dim[a];
		len = m->in.dim[m->axis];
		want = m->out.dim[m->axis];
	}
	for (int64_t i = 0; i < len && i < t->axis_dim; i++)
		kept += cond[i] != 0;
	if (kept != want)
		return -ERANGE;
	for (int64_t i = 0; i < len && i < t->axis_dim; i++) {
		if (!cond[i])
			continue;
		for (int64_t o = 0; o < outer; o++)
			memcpy((char *)k->dst + (o * want + j) * inner,
			       (const char *)k->src + (o * len + i) * inner, (size_t)inner);
		j++;
	}
	return 0;
}

int ho_cpu_prep_move(const struct ho_graph *g, const struct ho_node *n, void *const *buf,
		     bool channels_last, struct ho_kernel *k, struct ho_error *err)
{
	const struct ho_tensor *x = ho_node_input(g, n, 0), *y = &g->tensors[n->outputs[0]];
	struct ho_move *m;
	const char *op = n->op_type;

	if (!x || !ho_dtype_size(x->dtype) || x->shape.rank < 0 || ho_dtype_size(x->dtype) > 16 ||
	    !ho_dtype_size(y->dtype) || ho_dtype_size(y->dtype) > 16 ||
	    (x->dtype != y->dtype && strcmp(op, "EyeLike") && strcmp(op, "OneHot") &&
	     strcmp(op, "ConstantOfShape")))
		return ho_cpu_unsupported(err, n, "moves fixed-size elements only");
	if (!(m = calloc(1, sizeof(*m))))
		return ho_err(err, -ENOMEM, "out of memory");
	k->move = m;
	k->kind = HO_K_LOOP;
	k->src = buf[n->inputs[0]];
	k->dst = buf[n->outputs[0]];
	m->es = ho_dtype_size(x->dtype);
	m->rank = x->shape.rank;
	m->in = x->shape;
	m->out = y->shape;
	ho_strides(&x->shape, m->in_stride);
	if (!strcmp(op, "Split")) {
		int64_t axis = ho_node_attr_i(n, "axis", 0);

		axis += axis < 0 ? x->shape.rank : 0;
		if (axis < 0 || axis >= x->shape.rank || n->n_outputs > HO_TYPED_MAX_IN)
			return ho_cpu_unsupported(err, n, "splits into up to eight outputs");
		m->axis = (int)axis;
		m->n_out = (int)n->n_outputs;
		for (uint32_t j = 0; j < n->n_outputs; j++) {
			m->outs[j] = n->outputs[j] >= 0 ? buf[n->outputs[j]] : NULL;
			k->typed.in_shape[j] = n->outputs[j] >= 0 ? g->tensors[n->outputs[j]].shape
								  : (struct ho_shape){0};
			if (n->outputs[j] < 0)
				return ho_cpu_unsupported(err, n, "needs every output");
		}
		k->typed.run = ho_run_split;
		return 0;
	}
	if (!strcmp(op, "Pad")) {
		const struct ho_attr *ma = ho_node_attr(n, "mode");
		const char *mode = ma && ma->type == HO_ATTR_STRING ? ma->s : "constant";
		int64_t pads[2 * HO_MAX_RANK];
		int np;

		if (n->n_inputs > 3 && n->inputs[3] >= 0)
			return ho_cpu_unsupported(err, n, "pads every axis (no axes input)");
		if (n->opset >= 11)
			np = ho_cpu_int_input(g, n, 1, buf, pads, 2 * HO_MAX_RANK);
		else
			np = ho_node_attr_ints(n, "pads", pads, 2 * (size_t)x->shape.rank, 0)
				 ? 2 * x->shape.rank
				 : -1;
		if (np != 2 * x->shape.rank)
			return ho_cpu_unsupported(err, n, "needs constant pads, two per axis");
		for (int a = 0; a < x->shape.rank; a++)
			m->begin[a] = pads[a];
		/*
		 * Each axis is padded on its own, so an NHWC map pads as the same
		 * array in (N, H, W, C) order: the layout planner need not put
		 * DenseNet's transitions (Conv, Pad, AveragePool) through NCHW.
		 */
		if (channels_last && x->shape.rank == 4) {
			for (int a = 0; a < 4; a++) {
				m->in.dim[a] = x->shape.dim[ho_cpu_nhwc[a]];
				m->out.dim[a] = y->shape.dim[ho_cpu_nhwc[a]];
				m->begin[a] = pads[ho_cpu_nhwc[a]];
			}
			ho_strides(&m->in, m->in_stride);
		}
		m->mode = !strcmp(mode, "reflect") ? 1 : !strcmp(mode, "edge") ? 2 : 0;
		if (strcmp(mode, "constant") && !m->mode)
			return ho_cpu_unsupported(err, n, "pads by constant, reflect or edge only");
		const struct ho_tensor *v = ho_node_input(g, n, 2);

		if (n->opset >= 11 && v) {
			if (v->dtype != x->dtype || ho_shape_numel(&v->shape) != 1 ||
			    !(v->flags & HO_T_KNOWN))
				return ho_cpu_unsupported(err, n, "needs a constant pad value");
			memcpy(m->fill, buf[n->inputs[2]], (size_t)m->es);
		} else if (n->opset < 11) {
			float f = ho_node_attr_f(n, "value", 0.0f);

			if (x->dtype != HO_DT_FLOAT)
				return ho_cpu_unsupported(err, n,
							  "pads float32 only before opset 11");
			memcpy(m->fill, &f, 4);
		}
		m->map = MAP_PAD;
		k->typed.run = ho_run_rows;
		return 0;
	}
	if (!strcmp(op, "Expand")) {
		if (x->shape.rank > y->shape.rank)
			return ho_cpu_unsupported(err, n, "expands to no lower rank");
		k->typed.run = ho_run_expand;
		return 0;
	}
	if (!strcmp(op, "Tile")) {
		m->map = MAP_TILE;
		k->typed.run = ho_run_rows;
		return 0;
	}
	if (!strcmp(op, "DepthToSpace") || !strcmp(op, "SpaceToDepth")) {
		const struct ho_attr *ma = ho_node_attr(n, "mode");

		m->block = ho_node_attr_i(n, "blocksize", 0);
		m->mode = ma && ma->type == HO_ATTR_STRING && !strcmp(ma->s, "CRD");
		if (x->shape.rank != 4 || m->block < 1)
			return ho_cpu_unsupported(err, n, "needs a 4-D input and a blocksize");
		m->map = op[0] == 'D' ? MAP_DEPTH_TO_SPACE : MAP_SPACE_TO_DEPTH;
		k->typed.run = ho_run_map;
		return 0;
	}
	if (!strcmp(op, "GatherND")) {
		const struct ho_tensor *ix = ho_node_input(g, n, 1);

		int64_t b = ho_node_attr_i(n, "batch_dims", 0);

		if (!ix || (ix->dtype != HO_DT_INT64 && ix->dtype != HO_DT_INT32) || b < 0 ||
		    b >= ix->shape.rank || b >= x->shape.rank ||
		    b + ix->shape.dim[ix->shape.rank - 1] > x->shape.rank)
			return ho_cpu_unsupported(err, n, "gathers by int index tuples that fit");
		for (int a = 0; a < b; a++)
			if (ix->shape.dim[a] != x->shape.dim[a])
				return ho_cpu_unsupported(err, n, "needs batch axes of one extent");
		m->axis = (int)b;
		k->typed.in[1] = buf[n->inputs[1]];
		k->typed.in_dt[1] = ix->dtype;
		k->typed.in_shape[1] = ix->shape;
		k->typed.run = ho_run_gather_nd;
		return 0;
	}
	if (!strcmp(op, "EyeLike")) {
		int es = ho_dtype_size(y->dtype);
		float f = 1.0f;
		double dd = 1.0;
		int64_t i64 = 1;

		m->es = es;
		m->block = ho_node_attr_i(n, "k", 0);
		if (y->dtype == HO_DT_FLOAT)
			memcpy(m->fill, &f, 4);
		else if (y->dtype == HO_DT_DOUBLE)
			memcpy(m->fill, &dd, 8);
		else if (es >= 1 && es <= 8 && y->dtype != HO_DT_FLOAT16 &&
			 y->dtype != HO_DT_BFLOAT16)
			memcpy(m->fill, &i64, (size_t)es); /* little-endian: 1 in any width */
		else
			return ho_cpu_unsupported(err, n, "makes float, double or integer eyes");
		k->typed.run = ho_run_eye_like;
		return 0;
	}
	if (!strcmp(op, "ConstantOfShape")) {
		const struct ho_attr *v = ho_node_attr(n, "value");

		m->es = ho_dtype_size(y->dtype);
		memset(m->fill, 0, sizeof(m->fill)); /* no value: float32 0 */
		if (v && (v->type != HO_ATTR_TENSOR || !v->t || !v->t->data ||
			  v->t->dtype != y->dtype || v->t->len != (uint64_t)m->es))
			return ho_cpu_unsupported(err, n, "needs one value of its output's type");
		if (v)
			memcpy(m->fill, v->t->data, (size_t)m->es);
		k->typed.run = ho_run_fill;
		return 0;
	}
	if (!strcmp(op, "ScatterND")) {
		const struct ho_tensor *ix = ho_node_input(g, n, 1), *u = ho_node_input(g, n, 2);
		const struct ho_attr *ra = ho_node_attr(n, "reduction");
		const char *red = ra && ra->type == HO_ATTR_STRING ? ra->s : "none";

		if (!ix || !u || (ix->dtype != HO_DT_INT64 && ix->dtype != HO_DT_INT32) ||
		    u->dtype != x->dtype || ix->shape.rank < 1 ||
		    ix->shape.dim[ix->shape.rank - 1] > x->shape.rank)
			return ho_cpu_unsupported(err, n, "needs index tuples and updates");
		int64_t q = ix->shape.dim[ix->shape.rank - 1], want = 1;

		for (int a = 0; a < ix->shape.rank - 1; a++)
			want *= ix->shape.dim[a];
		for (int a = (int)q; a < x->shape.rank; a++)
			want *= x->shape.dim[a];
		if (ho_shape_numel(&u->shape) != want)
			return ho_cpu_unsupported(err, n,
						  "needs updates of the indexed slices' size");
		m->mode = !strcmp(red, "add") ? 1 : !strcmp(red, "mul") ? 2 : 0;
		if ((m->mode && x->dtype != HO_DT_FLOAT) || (!m->mode && strcmp(red, "none")))
			return ho_cpu_unsupported(err, n, "reduces by none, or float32 add or mul");
		k->typed.in[1] = buf[n->inputs[1]];
		k->typed.in[2] = buf[n->inputs[2]];
		k->typed.in_dt[1] = ix->dtype;
		k->typed.in_shape[1] = ix->shape;
		k->typed.run = ho_run_scatter_nd;
		return 0;
	}
	if (!strcmp(op, "ScatterElements") || !strcmp(op, "Scatter")) { /* Scatter: its old name */
		const struct ho_tensor *ix = ho_node_input(g, n, 1), *u = ho_node_input(g, n, 2);
		const struct ho_attr *ra = ho_node_attr(n, "reduction");
		const char *red = ra && ra->type == HO_ATTR_STRING ? ra->s : "none";
		int64_t axis = ho_node_attr_i(n, "axis", 0);

		axis += axis < 0 ? x->shape.rank : 0;
		if (!ix || !u || (ix->dtype != HO_DT_INT64 && ix->dtype != HO_DT_INT32) ||
		    u->dtype != x->dtype || ix->shape.rank != x->shape.rank || axis < 0 ||
		    axis >= x->shape.rank ||
		    ho_shape_numel(&ix->shape) != ho_shape_numel(&u->shape))
			return ho_cpu_unsupported(err, n, "needs indices and updates of one shape");
		m->axis = (int)axis;
		m->mode = !strcmp(red, "add") ? 1 : !strcmp(red, "mul") ? 2 : 0;
		if ((m->mode && x->dtype != HO_DT_FLOAT) || (!m->mode && strcmp(red, "none")))
			return ho_cpu_unsupported(err, n, "reduces by none, or float32 add or mul");
		k->typed.in[1] = buf[n->inputs[1]];
		k->typed.in[2] = buf[n->inputs[2]];
		k->typed.in_dt[1] = ix->dtype;
		k->typed.in_shape[1] = ix->shape;
		k->typed.out_dt = x->dtype;
		k->typed.run = ho_run_scatter;
		return 0;
	}
	if (!strcmp(op, "OneHot")) {
		const struct ho_tensor *v = ho_node_input(g, n, 2);
		int64_t axis = ho_node_attr_i(n, "axis", -1);

		axis += axis < 0 ? y->shape.rank : 0;
		if (!v || v->dtype != y->dtype || ho_shape_numel(&v->shape) != 2 || axis < 0 ||
		    axis >= y->shape.rank || y->shape.rank != x->shape.rank + 1)
			return ho_cpu_unsupported(err, n,
						  "needs two values of its type and an axis");
		m->es = ho_dtype_size(y->dtype);
		m->axis = (int)axis;
		k->typed.in[0] = buf[n->inputs[0]];
		k->typed.in_dt[0] = x->dtype;
		k->typed.in[2] = buf[n->inputs[2]];
		k->typed.run = ho_run_one_hot;
		return 0;
	}
	if (!strcmp(op, "ReverseSequence")) {
		const struct ho_tensor *len = ho_node_input(g, n, 1);
		int64_t ba = ho_node_attr_i(n, "batch_axis", 1),
			ta = ho_node_attr_i(n, "time_axis", 0);

		if (!len || (len->dtype != HO_DT_INT64 && len->dtype != HO_DT_INT32) ||
		    x->shape.rank < 2 || (ba != 0 && ba != 1) || ta != 1 - ba ||
		    ho_shape_numel(&len->shape) != x->shape.dim[ba])
			return ho_cpu_unsupported(
			    err, n, "needs batch and time axes 0 and 1, a length each");
		m->axis = (int)ba;
		m->block = ta;
		k->typed.in[1] = buf[n->inputs[1]];
		k->typed.in_dt[1] = len->dtype;
		k->typed.run = ho_run_reverse_sequence;
		return 0;
	}
	if (!strcmp(op, "Compress")) {
		const struct ho_tensor *cond = ho_node_input(g, n, 1);
		const struct ho_attr *aa = ho_node_attr(n, "axis");
		int64_t axis = aa ? aa->i : -1;

		axis += aa && axis < 0 ? x->shape.rank : 0;
		if (!cond || cond->dtype != HO_DT_BOOL || cond->shape.rank != 1 ||
		    (aa && (axis < 0 || axis >= x->shape.rank)))
			return ho_cpu_unsupported(err, n, "needs a 1-D bool condition and an axis");
		m->axis = (int)axis;
		k->typed.in[1] = buf[n->inputs[1]];
		k->typed.axis_dim = cond->shape.dim[0];
		k->typed.run = ho_run_compress;
		return 0;
	}
	if (!strcmp(op, "MaxUnpool")) {
		const struct ho_tensor *ix = ho_node_input(g, n, 1);

		int64_t ks[HO_MAX_RANK], st[HO_MAX_RANK], pads[2 * HO_MAX_RANK];
		int nsp = x->shape.rank - 2;

		if (!ix || (ix->dtype != HO_DT_INT64 && ix->dtype != HO_DT_INT32) ||
		    ho_shape_numel(&ix->shape) != ho_shape_numel(&x->shape) || nsp < 1 ||
		    y->shape.rank != x->shape.rank ||
		    !ho_node_attr_ints(n, "kernel_shape", ks, (size_t)nsp, 1) ||
		    !ho_node_attr_ints(n, "strides", st, (size_t)nsp, 1) ||
		    !ho_node_attr_ints(n, "pads", pads, 2 * (size_t)nsp, 0))
			return ho_cpu_unsupported(err, n, "needs an index per input element");
		k->typed.in_shape[2] = x->shape; /* the shape the indices count over */
		for (int a = 0; a < nsp; a++) {
			k->typed.in_shape[2].dim[2 + a] =
			    (x->shape.dim[2 + a] - 1) * st[a] - pads[a] - pads[nsp + a] + ks[a];
			if (k->typed.in_shape[2].dim[2 + a] < 1)
				return ho_cpu_unsupported(err, n, "has an empty pooled shape");
		}
		k->typed.in[1] = buf[n->inputs[1]];
		k->typed.in_dt[1] = ix->dtype;
		k->typed.run = ho_run_max_unpool;
		return 0;
	}
	return ho_cpu_unsupported(err, n, "has no kernel for this operator yet");
}
