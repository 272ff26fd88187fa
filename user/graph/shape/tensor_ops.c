// SPDX-License-Identifier: MIT
/* Shape rules: Shapes and data movement: Shape, Reshape, Transpose, Concat, Slice, Gather, Pad,
 * Resize and the rest, folding shape arithmetic on the way. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heteroopt/opsem.h"
#include "shape.h"

int ho_infer_shape_op(struct ho_infer *c)
{
	struct ho_tensor *x = in_t(c, 0);
	struct ho_shape o = {.rank = 1};
	int64_t start, end;

	if (!x)
		return fail(c, "missing input");
	if (x->shape.rank < 0) {
		o.dim[0] = HO_DIM_UNKNOWN;
		set_out(c, 0, HO_DT_INT64, &o);
		return 0;
	}
	start = attr_i(c, "start", 0);
	end = attr_i(c, "end", x->shape.rank);
	if (start < 0)
		start += x->shape.rank;
	if (end < 0)
		end += x->shape.rank;
	start = start < 0 ? 0 : start > x->shape.rank ? x->shape.rank : start;
	end = end < 0 ? 0 : end > x->shape.rank ? x->shape.rank : end;
	o.dim[0] = end > start ? end - start : 0;
	set_out(c, 0, HO_DT_INT64, &o);
	struct ho_value *v = new_value(c, HO_DT_INT64, (size_t)o.dim[0]);

	if (!v)
		return 0;
	for (int64_t i = start; i < end; i++) {
		if (x->shape.dim[i] < 0)
			return 0;
		v->i[i - start] = x->shape.dim[i];
	}
	set_value(c, 0, v);
	return 0;
}

int ho_infer_size(struct ho_infer *c)
{
	struct ho_shape o = {.rank = 0};
	int64_t n;

	if (!in_t(c, 0))
		return fail(c, "missing input");
	set_out(c, 0, HO_DT_INT64, &o);
	n = ho_shape_numel(&in_t(c, 0)->shape);
	if (n >= 0) {
		struct ho_value *v = new_value(c, HO_DT_INT64, 1);

		if (v) {
			v->i[0] = n;
			set_value(c, 0, v);
		}
	}
	return 0;
}

int ho_infer_constant(struct ho_infer *c)
{
	struct ho_tensor *t = out_t(c, 0);

	if (!t)
		return fail(c, "has no output");
	/* dtype and shape were filled from the attribute at import. */
	if (t->dtype == HO_DT_UNDEFINED)
		return fail(c, "has no value");
	return 0;
}

static int values_to_dims(const struct ho_value *v, int64_t *dims, int max)
{
	if ((int)v->count > max)
		return -1;
	for (size_t k = 0; k < v->count; k++)
		dims[k] = vgeti(v, k);
	return (int)v->count;
}

int ho_infer_constant_of_shape(struct ho_infer *c)
{
	const struct ho_value *sv = in_v(c, 0);
	const struct ho_attr *at = ho_node_attr(c->nd, "value");
	int dtype = at && at->type == HO_ATTR_TENSOR ? at->t[0].dtype : HO_DT_FLOAT;
	struct ho_shape o;

	if (!in_t(c, 0))
		return fail(c, "missing shape input");
	if (!sv) {
		o.rank = in_t(c, 0)->shape.rank == 1 ? (int)in_t(c, 0)->shape.dim[0] : -1;
		if (o.rank > HO_MAX_RANK)
			return fail(c, "rank too large");
		for (int i = 0; i < o.rank; i++)
			o.dim[i] = HO_DIM_UNKNOWN;
		set_out(c, 0, dtype, &o);
		return 0;
	}
	o.rank = values_to_dims(sv, o.dim, HO_MAX_RANK);
	if (o.rank < 0)
		return fail(c, "rank %zu too large", sv->count);
	for (int i = 0; i < o.rank; i++)
		if (o.dim[i] < 0)
			return fail(c, "negative dimension %" PRId64, o.dim[i]);
	set_out(c, 0, dtype, &o);
	int64_t n = ho_shape_numel(&o);

	if (n >= 0 && n <= HO_FOLD_MAX_ELEMS) {
		struct ho_value *v = new_value(c, dtype, (size_t)n);
		struct ho_value *fill = NULL;

		if (!v)
			return 0;
		if (at && at->type == HO_ATTR_TENSOR)
			fill = ho_value_from_data(c->a, at->t[0].dtype, at->t[0].data, at->t[0].len,
						  1);
		for (int64_t k = 0; k < n; k++)
			vset(v, (size_t)k, fill ? vget(fill, 0) : 0, fill ? vgeti(fill, 0) : 0,
			     fill && fill->i);
		set_value(c, 0, v);
	}
	return 0;
}

int ho_infer_reshape(struct ho_infer *c)
{
	struct ho_tensor *x = in_t(c, 0);
	const struct ho_value *sv = in_v(c, 1);
	bool allowzero = attr_i(c, "allowzero", 0);
	struct ho_shape o;
	int infer_at = -1;
	int64_t prod = 1;

	if (!x || !in_t(c, 1))
		return fail(c, "needs data and shape");
	if (!sv) {
		struct ho_tensor *s = in_t(c, 1);

		o.rank = s->shape.rank == 1 ? (int)s->shape.dim[0] : -1;
		if (o.rank > HO_MAX_RANK)
			return fail(c, "rank too large");
		for (int i = 0; i < o.rank; i++)
			o.dim[i] = HO_DIM_UNKNOWN;
		set_out(c, 0, x->dtype, &o);
		return 0;
	}
	o.rank = values_to_dims(sv, o.dim, HO_MAX_RANK);
	if (o.rank < 0)
		return fail(c, "target rank %zu too large", sv->count);
	for (int i = 0; i < o.rank; i++) {
		if (o.dim[i] == 0 && !allowzero) {
			if (x->shape.rank >= 0 && i >= x->shape.rank)
				return fail(c, "dim %d copies a dimension the input does not have",
					    i);
			o.dim[i] = x->shape.rank >= 0 ? x->shape.dim[i] : HO_DIM_UNKNOWN;
		} else if (o.dim[i] == -1) {
			if (infer_at >= 0)
				return fail(c, "more than one -1 in the target shape");
			infer_at = i;
			continue;
		} else if (o.dim[i] < -1) {
			return fail(c, "invalid target dimension %" PRId64, o.dim[i]);
		}
		if (o.dim[i] < 0)
			prod = -1;
		else if (prod >= 0)
			prod = dim_mul(prod, o.dim[i]);
	}
	int64_t n = ho_shape_numel(&x->shape);

	if (infer_at >= 0) {
		if (n < 0 || prod <= 0)
			o.dim[infer_at] = HO_DIM_UNKNOWN;
		else if (n % prod)
			return fail(c,
				    "cannot reshape %" PRId64
				    " elements with -1 and a product of %" PRId64,
				    n, prod);
		else
			o.dim[infer_at] = n / prod;
	} else if (n >= 0 && prod >= 0 && n != prod) {
		return fail(c, "cannot reshape %" PRId64 " elements into %" PRId64, n, prod);
	}
	set_out(c, 0, x->dtype, &o);
	if (view_value(c))
		set_value(c, 0, (struct ho_value *)view_value(c)); /* same elements, new shape */
	return 0;
}

int ho_infer_flatten(struct ho_infer *c)
{
	struct ho_tensor *x = in_t(c, 0);
	struct ho_shape o = {.rank = 2};
	int64_t axis = attr_i(c, "axis", 1);

	if (!x)
		return fail(c, "missing input");
	if (x->shape.rank < 0) {
		set_out(c, 0, x->dtype, NULL);
		return 0;
	}
	if (axis < 0)
		axis += x->shape.rank;
	if (axis < 0 || axis > x->shape.rank)
		return fail(c, "axis out of range");
	o.dim[0] = o.dim[1] = 1;
	for (int i = 0; i < x->shape.rank; i++) {
		int64_t *d = &o.dim[i < axis ? 0 : 1];

		if (x->shape.dim[i] < 0 || *d < 0)
			*d = HO_DIM_UNKNOWN;
		else
			*d = dim_mul(*d, x->shape.dim[i]);
	}
	set_out(c, 0, x->dtype, &o);
	if (view_value(c))
		set_value(c, 0, (struct ho_value *)view_value(c));
	return 0;
}

/*
 * Fold a known value vx of shape x into output o whose axis a walks input
 * axis src[a] from first[a] in steps of step[a] (a Slice, a Transpose): the
 * shape arithmetic feeding a Pad (swin_t reverses a [4, 2] pads table
 * with a Slice of step -1, then transposes it).
 */
static void fold_strided(struct ho_infer *c, const struct ho_shape *x, const struct ho_value *vx,
			 const struct ho_shape *o, const int *src, const int64_t *first,
			 const int64_t *step, int dtype)
{
	int64_t n = ho_shape_numel(o), stride[HO_MAX_RANK], idx[HO_MAX_RANK] = {0}, in = 1;
	struct ho_value *v;

	if (n < 0 || n > HO_FOLD_MAX_ELEMS || (size_t)ho_shape_numel(x) != vx->count)
		return;
	for (int a = x->rank - 1; a >= 0; a--) {
		stride[a] = in;
		in *= x->dim[a];
	}
	if (!(v = new_value(c, dtype, (size_t)n)))
		return;
	for (int64_t k = 0; k < n; k++) {
		int64_t at = 0;

		for (int a = 0; a < o->rank; a++)
			at += (first[a] + idx[a] * step[a]) * stride[src[a]];
		if (at < 0 || (size_t)at >= vx->count)
			return;
		vset(v, (size_t)k, vget(vx, (size_t)at), vgeti(vx, (size_t)at), vx->i != NULL);
		for (int a = o->rank - 1; a >= 0 && ++idx[a] == o->dim[a]; a--)
			idx[a] = 0;
	}
	set_value(c, 0, v);
}

int ho_infer_transpose(struct ho_infer *c)
{
	struct ho_tensor *x = in_t(c, 0);
	size_t np;
	const int64_t *perm = attr_ints(c, "perm", &np);
	bool seen[HO_MAX_RANK] = {0};
	int src[HO_MAX_RANK];
	int64_t first[HO_MAX_RANK] = {0}, step[HO_MAX_RANK];
	struct ho_shape o;

	if (!x)
		return fail(c, "missing input");
	if (x->shape.rank < 0) {
		set_out(c, 0, x->dtype, NULL);
		return 0;
	}
	o.rank = x->shape.rank;
	if (np && np != (size_t)o.rank)
		return fail(c, "perm has %zu entries for rank %d", np, o.rank);
	for (int i = 0; i < o.rank; i++) {
		int64_t p = np ? perm[i] : o.rank - 1 - i;

		if (p < 0 || p >= o.rank || seen[p])
			return fail(c, "perm is not a permutation");
		seen[p] = true;
		o.dim[i] = x->shape.dim[p];
		src[i] = (int)p;
		step[i] = 1;
	}
	set_out(c, 0, x->dtype, &o);
	if (in_v(c, 0))
		fold_strided(c, &x->shape, in_v(c, 0), &o, src, first, step, x->dtype);
	return 0;
}

/* Axes from the attribute (old opsets) or the second input (new ones). */
static int get_axes(struct ho_infer *c, int64_t *axes, size_t *n, bool *known_axes)
{
	size_t na;
	const int64_t *a = attr_ints(c, "axes", &na);

	*known_axes = true;
	if (c->nd->n_inputs >= 2 && in_t(c, 1)) {
		const struct ho_value *v = in_v(c, 1);

		if (!v) {
			*known_axes = false;
			*n = 0;
			return 0;
		}
		if (v->count > HO_MAX_RANK)
			return fail(c, "too many axes");
		for (size_t k = 0; k < v->count; k++)
			axes[k] = vgeti(v, k);
		*n = v->count;
		return 0;
	}
	if (na > HO_MAX_RANK)
		return fail(c, "too many axes");
	if (na)
		memcpy(axes, a, na * sizeof(*a));
	*n = na;
	return 0;
}

int ho_infer_squeeze(struct ho_infer *c)
{
	struct ho_tensor *x = in_t(c, 0);
	int64_t axes[HO_MAX_RANK];
	bool drop[HO_MAX_RANK] = {0}, ka;
	struct ho_shape o;
	size_t n;
	int ret;

	if (!x)
		return fail(c, "missing input");
	ret = get_axes(c, axes, &n, &ka);
	if (ret)
		return ret;
	if (x->shape.rank < 0 || !ka) {
		set_out(c, 0, x->dtype, NULL);
		return 0;
	}
	for (size_t k = 0; k < n; k++) {
		int ax;

		ret = norm_axis(c, axes[k], x->shape.rank, &ax);
		if (ret)
			return ret;
		if (x->shape.dim[ax] >= 0 && x->shape.dim[ax] != 1)
			return fail(c, "cannot squeeze axis %d of extent %" PRId64, ax,
				    x->shape.dim[ax]);
		drop[ax] = true;
	}
	o.rank = 0;
	for (int i = 0; i < x->shape.rank; i++) {
		if (!n && x->shape.dim[i] < 0) {
			set_out(c, 0, x->dtype, NULL); /* which dims are 1 is unknown */
			return 0;
		}
		if (n ? drop[i] : x->shape.dim[i] == 1)
			continue;
		o.dim[o.rank++] = x->shape.dim[i];
	}
	set_out(c, 0, x->dtype, &o);
	if (view_value(c))
		set_value(c, 0, (struct ho_value *)view_value(c));
	return 0;
}

int ho_infer_unsqueeze(struct ho_infer *c)
{
	struct ho_tensor *x = in_t(c, 0);
	int64_t axes[HO_MAX_RANK];
	bool ins[HO_MAX_RANK] = {0}, ka;
	struct ho_shape o;
	size_t n;
	int ret;

	if (!x)
		return fail(c, "missing input");
	ret = get_axes(c, axes, &n, &ka);
	if (ret)
		return ret;
	if (x->shape.rank < 0 || !ka) {
		set_out(c, 0, x->dtype, NULL);
		return 0;
	}
	o.rank = x->shape.rank + (int)n;
	if (o.rank > HO_MAX_RANK)
		return fail(c, "result rank %d too large", o.rank);
	for (size_t k = 0; k < n; k++) {
		int ax;

		ret = norm_axis(c, axes[k], o.rank, &ax);
		if (ret)
			return ret;
		if (ins[ax])
			return fail(c, "axis %d repeated", ax);
		ins[ax] = true;
	}
	for (int i = 0, j = 0; i < o.rank; i++)
		o.dim[i] = ins[i] ? 1 : x->shape.dim[j++];
	set_out(c, 0, x->dtype, &o);
	if (view_value(c))
		set_value(c, 0, (struct ho_value *)view_value(c));
	return 0;
}

int ho_infer_concat(struct ho_infer *c)
{
	struct ho_tensor *first = NULL;
	struct ho_shape o;
	int axis = 0, ret;
	bool all_vals = true;
	size_t total = 0;

	for (uint32_t k = 0; k < c->nd->n_inputs; k++) {
		struct ho_tensor *t = in_t(c, k);

		if (!t)
			continue;
		if (!first) {
			first = t;
			o = t->shape;
			if (o.rank < 0)
				break;
			if (o.rank == 0)
				return fail(c, "cannot concatenate scalars");
			ret = norm_axis(c, attr_i(c, "axis", 0), o.rank, &axis);
			if (ret)
				return ret;
			continue;
		}
		if (t->shape.rank < 0) {
			o.rank = -1;
			break;
		}
		if (t->shape.rank != o.rank)
			return fail(c, "input '%s' has rank %d, '%s' has rank %d", t->name,
				    t->shape.rank, first->name, o.rank);
		for (int i = 0; i < o.rank; i++) {
			if (i == axis) {
				o.dim[i] = o.dim[i] < 0 || t->shape.dim[i] < 0
					       ? HO_DIM_UNKNOWN
					       : dim_add(o.dim[i], t->shape.dim[i]);
			} else if (o.dim[i] < 0) {
				o.dim[i] = t->shape.dim[i];
			} else if (t->shape.dim[i] >= 0 && t->shape.dim[i] != o.dim[i]) {
				return fail(c,
					    "input '%s' has extent %" PRId64
					    " on axis %d, expected %" PRId64,
					    t->name, t->shape.dim[i], i, o.dim[i]);
			}
		}
	}
	if (!first)
		return fail(c, "needs at least one input");
	set_out(c, 0, first->dtype, o.rank >= 0 ? &o : NULL);

	/* Fold concatenations of known values (shape vectors, index tables): per run of the axes
	 * before it, each input's block in turn. */
	if (o.rank < 1 || ho_shape_numel(&o) < 0 || ho_shape_numel(&o) > HO_FOLD_MAX_ELEMS)
		return 0;
	for (uint32_t k = 0; k < c->nd->n_inputs; k++) {
		const struct ho_value *v = in_v(c, k);

		if (in_t(c, k) && !v)
			all_vals = false;
		else if (v)
			total += v->count;
	}
	if (!all_vals || (int64_t)total != ho_shape_numel(&o))
		return 0;
	struct ho_value *v = new_value(c, first->dtype, total);
	int64_t outer = 1, inner = 1;
	size_t p = 0;

	if (!v)
		return 0;
	for (int i = 0; i < o.rank; i++)
		*(i < axis ? &outer : &inner) *= i == axis ? 1 : o.dim[i];
	for (int64_t r = 0; r < outer; r++)
		for (uint32_t k = 0; k < c->nd->n_inputs; k++) {
			const struct ho_value *src = in_v(c, k);
			int64_t block = src ? in_t(c, k)->shape.dim[axis] * inner : 0;

			for (int64_t j = r * block; j < (r + 1) * block; j++, p++)
				vset(v, p, vget(src, (size_t)j), vgeti(src, (size_t)j),
				     src->i != NULL);
		}
	set_value(c, 0, v);
	return 0;
}

int ho_infer_split(struct ho_infer *c)
{
	struct ho_tensor *x = in_t(c, 0);
	uint32_t nout = c->nd->n_outputs;
	int64_t sizes[64];
	size_t ns = 0;
	int axis, ret;

	if (!x)
		return fail(c, "missing input");
	if (x->shape.rank < 0) {
		for (uint32_t k = 0; k < nout; k++)
			set_out(c, k, x->dtype, NULL);
		return 0;
	}
	ret = norm_axis(c, attr_i(c, "axis", 0), x->shape.rank, &axis);
	if (ret)
		return ret;
	if (nout > 64)
		return fail(c, "too many outputs");
	if (c->nd->n_inputs >= 2 && in_t(c, 1)) {
		const struct ho_value *v = in_v(c, 1);

		if (!v) {
			for (uint32_t k = 0; k < nout; k++) {
				struct ho_shape o = x->shape;

				o.dim[axis] = HO_DIM_UNKNOWN;
				set_out(c, k, x->dtype, &o);
			}
			return 0;
		}
		ns = v->count;
		if (ns != nout)
			return fail(c, "split has %zu sizes for %u outputs", ns, nout);
		for (size_t k = 0; k < ns; k++)
			sizes[k] = vgeti(v, k);
	} else {
		size_t na;
		const int64_t *a = attr_ints(c, "split", &na);

		if (na) {
			if (na != nout)
				return fail(c, "split has %zu sizes for %u outputs", na, nout);
			memcpy(sizes, a, na * sizeof(*a));
			ns = na;
		}
	}
	int64_t d = x->shape.dim[axis];

	if (!ns) {
		int64_t parts = attr_i(c, "num_outputs", nout);

		if (parts < 1 || parts > 64)
			return fail(c, "cannot split into %" PRId64 " parts", parts);
		if (d >= 0) {
			int64_t chunk = (d + parts - 1) / parts;

			if (c->nd->opset < 18 && d % parts)
				return fail(
				    c, "extent %" PRId64 " does not split evenly into %" PRId64, d,
				    parts);
			for (uint32_t k = 0; k < nout; k++) {
				int64_t left = d - chunk * k;

				sizes[k] = left < chunk ? (left > 0 ? left : 0) : chunk;
			}
		} else {
			for (uint32_t k = 0; k < nout; k++)
				sizes[k] = HO_DIM_UNKNOWN;
		}
	} else if (d >= 0) {
		int64_t sum = 0;

		for (size_t k = 0; k < ns; k++) {
			if (sizes[k] < 0)
				return fail(c, "negative split size %" PRId64, sizes[k]);
			sum = dim_add(sum, sizes[k]);
		}
		if (sum != d)
			return fail(c, "split sizes add up to %" PRId64 ", extent is %" PRId64, sum,
				    d);
	}
	for (uint32_t k = 0; k < nout; k++) {
		struct ho_shape o = x->shape;

		o.dim[axis] = sizes[k];
		set_out(c, k, x->dtype, &o);
	}
	return 0;
}

int ho_infer_slice(struct ho_infer *c)
{
	struct ho_tensor *x = in_t(c, 0);
	int64_t starts[HO_MAX_RANK], ends[HO_MAX_RANK], axes[HO_MAX_RANK], steps[HO_MAX_RANK];
	size_t n;
	struct ho_shape o;

	if (!x)
		return fail(c, "missing input");
	if (c->nd->opset < 10 || c->nd->n_inputs == 1) {
		size_t ns, ne, na;
		const int64_t *s = attr_ints(c, "starts", &ns), *e = attr_ints(c, "ends", &ne);
		const int64_t *a = attr_ints(c, "axes", &na);

		if (ns != ne || (na && na != ns) || ns > HO_MAX_RANK)
			return fail(c, "starts/ends/axes lengths differ");
		n = ns;
		for (size_t k = 0; k < n; k++) {
			starts[k] = s[k];
			ends[k] = e[k];
			axes[k] = na ? a[k] : (int64_t)k;
			steps[k] = 1;
		}
	} else {
		const struct ho_value *vs = in_v(c, 1), *ve = in_v(c, 2);
		const struct ho_value *va = in_t(c, 3) ? in_v(c, 3) : NULL;
		const struct ho_value *vst = in_t(c, 4) ? in_v(c, 4) : NULL;

		if (!vs || !ve || (in_t(c, 3) && !va) || (in_t(c, 4) && !vst) ||
		    x->shape.rank < 0) {
			o = x->shape;
			for (int i = 0; i < o.rank; i++)
				o.dim[i] = HO_DIM_UNKNOWN;
			set_out(c, 0, x->dtype, o.rank >= 0 ? &o : NULL);
			return 0;
		}
		n = vs->count;
		if (ve->count != n || (va && va->count != n) || (vst && vst->count != n) ||
		    n > HO_MAX_RANK)
			return fail(c, "starts/ends/axes/steps lengths differ");
		for (size_t k = 0; k < n; k++) {
			starts[k] = vgeti(vs, k);
			ends[k] = vgeti(ve, k);
			axes[k] = va ? vgeti(va, k) : (int64_t)k;
			steps[k] = vst ? vgeti(vst, k) : 1;
		}
	}
	if (x->shape.rank < 0) {
		set_out(c, 0, x->dtype, NULL);
		return 0;
	}
	struct ho_slice sl;
	struct ho_error e;

	if (ho_slice_resolve(x->shape.rank, x->shape.dim, n, starts, ends, axes, steps, &sl, &e))
		return fail(c, "%s", e.msg);
	o = x->shape;
	for (int i = 0; i < o.rank; i++)
		o.dim[i] = sl.dim[i];
	set_out(c, 0, x->dtype, &o);

	if (in_v(c, 0)) {
		int src[HO_MAX_RANK];

		for (int a = 0; a < o.rank; a++)
			src[a] = a;
		fold_strided(c, &x->shape, in_v(c, 0), &o, src, sl.first, sl.step, x->dtype);
	}
	return 0;
}

int ho_infer_gather(struct ho_infer *c)
{
	struct ho_tensor *x = in_t(c, 0), *idx = in_t(c, 1);
	struct ho_shape o;
	int axis, ret;

	if (!x || !idx)
		return fail(c, "needs data and indices");
	if (x->shape.rank < 0 || idx->shape.rank < 0) {
		set_out(c, 0, x->dtype, NULL);
		return 0;
	}
	if (x->shape.rank == 0)
		return fail(c, "data must have rank >= 1");
	ret = norm_axis(c, attr_i(c, "axis", 0), x->shape.rank, &axis);
	if (ret)
		return ret;
	o.rank = x->shape.rank - 1 + idx->shape.rank;
	if (o.rank > HO_MAX_RANK)
		return fail(c, "result rank too large");
	int p = 0;

	for (int i = 0; i < axis; i++)
		o.dim[p++] = x->shape.dim[i];
	for (int i = 0; i < idx->shape.rank; i++)
		o.dim[p++] = idx->shape.dim[i];
	for (int i = axis + 1; i < x->shape.rank; i++)
		o.dim[p++] = x->shape.dim[i];
	set_out(c, 0, x->dtype, &o);

	/* Fold gathers from a known 1-D vector (Shape -> Gather). */
	const struct ho_value *vx = in_v(c, 0), *vi = in_v(c, 1);

	if (vx && vi && x->shape.rank == 1) {
		struct ho_value *v = new_value(c, x->dtype, vi->count);
		int64_t d = x->shape.dim[0];

		if (!v)
			return 0;
		for (size_t k = 0; k < vi->count; k++) {
			int64_t j = vgeti(vi, k);

			if (j < 0)
				j += d;
			if (j < 0 || j >= d)
				return fail(c, "index %" PRId64 " out of range for extent %" PRId64,
					    vgeti(vi, k), d);
			vset(v, k, vget(vx, (size_t)j), vgeti(vx, (size_t)j), vx->i != NULL);
		}
		set_value(c, 0, v);
	}
	return 0;
}

int ho_infer_same_as_input1(struct ho_infer *c)
{
	/* GatherElements: output has the indices' shape. */
	if (!in_t(c, 0) || !in_t(c, 1))
		return fail(c, "needs two inputs");
	set_out(c, 0, in_t(c, 0)->dtype, &in_t(c, 1)->shape);
	return 0;
}

int ho_infer_expand(struct ho_infer *c)
{
	struct ho_tensor *x = in_t(c, 0);
	const struct ho_value *sv = in_v(c, 1);
	struct ho_shape target, o;
	int ret;

	if (!x || !in_t(c, 1))
		return fail(c, "needs input and shape");
	if (!sv) {
		set_out(c, 0, x->dtype, NULL);
		return 0;
	}
	target.rank = values_to_dims(sv, target.dim, HO_MAX_RANK);
	if (target.rank < 0)
		return fail(c, "target rank too large");
	ret = broadcast(c, &x->shape, &target, &o);
	if (ret)
		return ret;
	set_out(c, 0, x->dtype, &o);

	const struct ho_value *vx = in_v(c, 0);
	int64_t n = ho_shape_numel(&o);
	struct ho_value *v;

	if (!vx || n < 0 || n > HO_FOLD_MAX_ELEMS || !(v = new_value(c, x->dtype, (size_t)n)))
		return 0;
	for (int64_t k = 0; k < n; k++) {
		size_t at = bcast_index(&o, &x->shape, (size_t)k);

		vset(v, (size_t)k, vget(vx, at), vgeti(vx, at), vx->i != NULL);
	}
	set_value(c, 0, v);
	return 0;
}

/*
 * ScatterND without a reduction: data with each index tuple's slice
 * replaced by its update; folded where all three are known (swin_t paints
 * its shifted-window mask so, nine slices of a [56, 56] table).
 */
int ho_infer_scatter_nd(struct ho_infer *c)
{
	struct ho_tensor *x = in_t(c, 0), *ix = in_t(c, 1), *up = in_t(c, 2);
	const struct ho_value *vx, *vi, *vu;
	int64_t n, q, slice = 1, tuples;
	struct ho_value *v;

	if (!x || !ix || !up)
		return fail(c, "needs data, indices and updates");
	set_out(c, 0, x->dtype, x->shape.rank >= 0 ? &x->shape : NULL);
	n = ho_shape_numel(&x->shape);
	if (n < 0 || n > HO_FOLD_MAX_ELEMS || ix->shape.rank < 1 ||
	    ho_shape_numel(&ix->shape) < 0 || strcmp(attr_s(c, "reduction", "none"), "none"))
		return 0;
	q = ix->shape.dim[ix->shape.rank - 1];
	if (q < 1 || q > x->shape.rank)
		return 0;
	for (int a = (int)q; a < x->shape.rank; a++)
		slice *= x->shape.dim[a];
	tuples = ho_shape_numel(&ix->shape) / q;
	if (!(vx = in_v(c, 0)) || !(vi = in_v(c, 1)) || !(vu = in_v(c, 2)) || !vi->i ||
	    (int64_t)vu->count != tuples * slice || !(v = new_value(c, x->dtype, (size_t)n)))
		return 0;
	for (int64_t k = 0; k < n; k++)
		vset(v, (size_t)k, vget(vx, (size_t)k), vgeti(vx, (size_t)k), vx->i != NULL);
	for (int64_t t = 0; t < tuples; t++) {
		int64_t at = 0;

		for (int64_t m = 0; m < q; m++) {
			int64_t d = x->shape.dim[m], i = vi->i[t * q + m];

			if (i < -d || i >= d)
				return 0; /* out of range: the kernel reports it */
			at = at * d + (i < 0 ? i + d : i);
		}
		for (int64_t j = 0; j < slice; j++)
			vset(v, (size_t)(at * slice + j), vget(vu, (size_t)(t * slice + j)),
			     vgeti(vu, (size_t)(t * slice + j)), vu->i != NULL);
	}
	set_value(c, 0, v);
	return 0;
}

int ho_infer_tile(struct ho_infer *c)
{
	struct ho_tensor *x = in_t(c, 0);
	const struct ho_value *rv = in_v(c, 1);
	struct ho_shape o;

	if (!x || !in_t(c, 1))
		return fail(c, "needs input and repeats");
	o = x->shape;
	if (!rv) {
		for (int i = 0; i < o.rank; i++)
			o.dim[i] = HO_DIM_UNKNOWN;
	} else {
		if ((int)rv->count != o.rank)
			return fail(c, "repeats has %zu entries for rank %d", rv->count, o.rank);
		for (int i = 0; i < o.rank; i++) {
			int64_t r = vgeti(rv, (size_t)i);

			if (r < 0)
				return fail(c, "negative repeat %" PRId64, r);
			o.dim[i] = o.dim[i] < 0 ? HO_DIM_UNKNOWN : dim_mul(o.dim[i], r);
		}
	}
	set_out(c, 0, x->dtype, o.rank >= 0 ? &o : NULL);
	return 0;
}

int ho_infer_pad(struct ho_infer *c)
{
	struct ho_tensor *x = in_t(c, 0);
	int64_t pads[2 * HO_MAX_RANK];
	struct ho_shape o;
	size_t n;

	if (!x)
		return fail(c, "missing input");
	o = x->shape;
	if (c->nd->n_inputs >= 2 && in_t(c, 1)) {
		const struct ho_value *v = in_v(c, 1);

		if (!v || o.rank < 0 || c->nd->n_inputs >= 4) {
			for (int i = 0; i < o.rank; i++)
				o.dim[i] = HO_DIM_UNKNOWN;
			set_out(c, 0, x->dtype, o.rank >= 0 ? &o : NULL);
			return 0;
		}
		n = v->count;
		if (n > 2 * HO_MAX_RANK)
			return fail(c, "too many pads");
		for (size_t k = 0; k < n; k++)
			pads[k] = vgeti(v, k);
	} else {
		const int64_t *p = attr_ints(c, "pads", &n);

		if (n > 2 * HO_MAX_RANK)
			return fail(c, "too many pads");
		if (n)
			memcpy(pads, p, n * sizeof(*p));
	}
	if (o.rank < 0) {
		set_out(c, 0, x->dtype, NULL);
		return 0;
	}
	if (n != (size_t)o.rank * 2)
		return fail(c, "pads has %zu entries for rank %d", n, o.rank);
	for (int i = 0; i < o.rank; i++) {
		if (o.dim[i] < 0)
			continue;
		o.dim[i] = dim_add(o.dim[i], dim_add(pads[i], pads[i + o.rank]));
		if (o.dim[i] < 0)
			return fail(c, "padding makes axis %d negative", i);
	}
	set_out(c, 0, x->dtype, &o);
	return 0;
}

int ho_infer_resize(struct ho_infer *c)
{
	struct ho_tensor *x = in_t(c, 0);
	bool upsample = !strcmp(c->nd->op_type, "Upsample");
	const struct ho_value *scales = NULL, *sizes = NULL;
	struct ho_shape o;

	if (!x)
		return fail(c, "missing input");
	if (upsample || c->nd->opset < 11) {
		size_t nsc;
		const struct ho_attr *at = ho_node_attr(c->nd, "scales");

		if (at && at->type == HO_ATTR_FLOATS) {
			struct ho_value *v = new_value(c, HO_DT_FLOAT, at->n);

			if (!v)
				return fail(c, "out of memory");
			for (size_t k = 0; k < at->n; k++)
				v->f[k] = at->floats[k];
			scales = v;
		} else {
			scales = in_v(c, 1);
		}
		(void)nsc;
	} else {
		(void)in_v(c, 1); /* the roi's value, for a kernel to crop by */
		if (in_t(c, 3))
			sizes = in_v(c, 3);
		if (in_t(c, 2) && !sizes)
			scales = in_v(c, 2);
		/* An empty scales tensor means "use sizes". */
		if (scales && scales->count == 0)
			scales = NULL;
	}
	o = x->shape;
	if (o.rank < 0) {
		set_out(c, 0, x->dtype, NULL);
		return 0;
	}
	if (sizes) {
		if ((int)sizes->count != o.rank)
			return fail(c, "sizes has %zu entries for rank %d", sizes->count, o.rank);
		for (int i = 0; i < o.rank; i++)
			o.dim[i] = vgeti(sizes, (size_t)i);
	} else if (scales) {
		if ((int)scales->count != o.rank)
			return fail(c, "scales has %zu entries for rank %d", scales->count, o.rank);
		for (int i = 0; i < o.rank; i++) {
			if (o.dim[i] < 0)
				continue;
			/* onnx multiplies in float precision, then floors. */
			o.dim[i] = f2i(floorf((float)o.dim[i] * (float)vget(scales, (size_t)i)));
			if (o.dim[i] < 0)
				return fail(c, "scale %g gives a negative extent",
					    vget(scales, (size_t)i));
		}
	} else {
		for (int i = 0; i < o.rank; i++)
			o.dim[i] = HO_DIM_UNKNOWN;
	}
	set_out(c, 0, x->dtype, &o);
	return 0;
}

int ho_infer_range(struct ho_infer *c)
{
	const struct ho_value *s = in_v(c, 0), *l = in_v(c, 1), *d = in_v(c, 2);
	struct ho_shape o = {.rank = 1};

	if (!in_t(c, 0) || !in_t(c, 1) || !in_t(c, 2))
		return fail(c, "needs start, limit and delta");
	o.dim[0] = HO_DIM_UNKNOWN;
	if (s && l && d && s->count == 1 && l->count == 1 && d->count == 1) {
		double n = ceil((vget(l, 0) - vget(s, 0)) / vget(d, 0));

		if (vget(d, 0) == 0)
			return fail(c, "delta is zero");
		o.dim[0] = n > 0 ? f2i(n) : 0;
	}
	set_out(c, 0, in_t(c, 0)->dtype, &o);
	if (o.dim[0] >= 0 && o.dim[0] <= HO_FOLD_MAX_ELEMS) {
		struct ho_value *v = new_value(c, in_t(c, 0)->dtype, (size_t)o.dim[0]);

		if (v) {
			for (int64_t k = 0; k < o.dim[0]; k++)
				vset(v, (size_t)k, vget(s, 0) + (double)k * vget(d, 0),
				     wrap_add(vgeti(s, 0), wrap_mul(k, vgeti(d, 0))), s->i != NULL);
			set_value(c, 0, v);
		}
	}
	return 0;
}

int ho_infer_topk(struct ho_infer *c)
{
	struct ho_tensor *x = in_t(c, 0);
	struct ho_shape o;
	int axis, ret;
	int64_t k = attr_i(c, "k", -1);

	if (!x || x->shape.rank < 1)
		return fail(c, "needs an input of rank >= 1");
	ret = norm_axis(c, attr_i(c, "axis", -1), x->shape.rank, &axis);
	if (ret)
		return ret;
	if (in_t(c, 1)) {
		const struct ho_value *v = in_v(c, 1);

		k = v && v->count == 1 ? vgeti(v, 0) : run_decided(c, 0, x->shape.dim[axis]);
	}
	if (k < HO_DIM_UNKNOWN)
		return fail(c, "negative k %" PRId64, k);
	o = x->shape;
	o.dim[axis] = k;
	set_out(c, 0, x->dtype, &o);
	set_out(c, 1, HO_DT_INT64, &o);
	return 0;
}

int ho_infer_nonzero(struct ho_infer *c)
{
	struct ho_shape o = {.rank = 2};

	if (!in_t(c, 0))
		return fail(c, "missing input");
	o.dim[0] = in_t(c, 0)->shape.rank >= 0 ? in_t(c, 0)->shape.rank : HO_DIM_UNKNOWN;
	/* data dependent: known only from a known input */
	o.dim[1] = run_decided(c, 0, ho_shape_numel(&in_t(c, 0)->shape));
	const struct ho_value *v = in_v(c, 0);

	if (v) {
		o.dim[1] = 0;
		for (size_t k = 0; k < v->count; k++)
			o.dim[1] += v->i ? v->i[k] != 0 : v->f[k] != 0;
	}
	set_out(c, 0, HO_DT_INT64, &o);
	return 0;
}

/* Compress: the slices along axis (or the flattened elements) whose condition is true. */
int ho_infer_compress(struct ho_infer *c)
{
	struct ho_tensor *x = in_t(c, 0);
	const struct ho_value *cond = in_v(c, 1);
	const struct ho_attr *aa = ho_node_attr(c->nd, "axis");
	struct ho_shape o;
	int64_t len, kept = 0;
	int a = 0;

	if (!x || !in_t(c, 1))
		return fail(c, "needs input and condition");
	if (x->shape.rank < 0) {
		set_out(c, 0, x->dtype, NULL);
		return 0;
	}
	if (aa) {
		int ret = norm_axis(c, aa->i, x->shape.rank, &a);

		if (ret)
			return ret;
		o = x->shape;
		len = o.dim[a];
	} else {
		o.rank = 1;
		len = ho_shape_numel(&x->shape);
	}
	if (!cond) {
		int64_t nc = ho_shape_numel(&in_t(c, 1)->shape);

		kept = run_decided(c, 0, len >= 0 && nc >= 0 ? (nc < len ? nc : len) : -1);
		if (kept < 0) {
			set_out(c, 0, x->dtype, NULL);
			return 0;
		}
	}
	for (size_t k = 0; cond && k < cond->count && (int64_t)k < len; k++)
		kept += vgeti(cond, k) != 0;
	o.dim[aa ? a : 0] = kept;
	set_out(c, 0, x->dtype, &o);
	return 0;
}

/* Unique: Y, indices, inverse_indices and counts; their extent from a known input. */
int ho_infer_unique(struct ho_infer *c)
{
	struct ho_tensor *x = in_t(c, 0);
	const struct ho_value *v = in_v(c, 0);
	const struct ho_attr *aa = ho_node_attr(c->nd, "axis");
	struct ho_shape y, u = {.rank = 1}, inv = {.rank = 1};
	int64_t n, slices, per, uniq = 0;
	int a = 0;

	if (!x)
		return fail(c, "missing input");
	if (x->shape.rank < 0) {
		for (uint32_t k = 0; k < 4; k++)
			set_out(c, k, k ? HO_DT_INT64 : x->dtype, NULL);
		return 0;
	}
	if (aa) {
		int ret = norm_axis(c, aa->i, x->shape.rank, &a);

		if (ret)
			return ret;
	}
	if (!v) { /* at most every slice distinct, when its bound is asked for */
		slices = aa ? x->shape.dim[a] : ho_shape_numel(&x->shape);
		uniq = run_decided(c, 0, slices);
		if (uniq >= 0) /* indices and counts: one per unique slice too */
			uniq = run_decided(c, 3, run_decided(c, 1, uniq));
		if (uniq < 0 || slices < 0) {
			for (uint32_t k = 0; k < 4; k++)
				set_out(c, k, k ? HO_DT_INT64 : x->dtype, NULL);
			return 0;
		}
		goto shapes;
	}
	n = (int64_t)v->count;
	slices = aa ? x->shape.dim[a] : n;
	per = slices ? n / slices : 0;
	/* slice s along the axis: outer x [axis] x inner, compared element by element */
	int64_t inner = 1;

	for (int i = a + 1; aa && i < x->shape.rank; i++)
		inner *= x->shape.dim[i];
	for (int64_t s = 0; s < slices; s++) {
		bool seen = false;

		for (int64_t t = 0; t < s && !seen; t++) {
			bool same = true;

			for (int64_t e = 0; e < per && same; e++) {
				int64_t o = aa ? e / inner : 0, in = aa ? e % inner : 0;
				size_t i = (size_t)(aa ? (o * slices + s) * inner + in : s),
				       j = (size_t)(aa ? (o * slices + t) * inner + in : t);

				same = v->i ? v->i[i] == v->i[j] : v->f[i] == v->f[j];
			}
			seen = same;
		}
		uniq += !seen;
	}
shapes:
	if (aa) {
		y = x->shape;
		y.dim[a] = uniq;
	} else {
		y.rank = 1;
		y.dim[0] = uniq;
	}
	u.dim[0] = uniq;
	inv.dim[0] = slices;
	set_out(c, 0, x->dtype, &y);
	set_out(c, 1, HO_DT_INT64, &u);
	set_out(c, 2, HO_DT_INT64, &inv);
	set_out(c, 3, HO_DT_INT64, &u);
	return 0;
}

/* NonMaxSuppression: [selected, 3] (batch, class, box), the count from known inputs. */
int ho_infer_nms(struct ho_infer *c)
{
	struct ho_tensor *bt = in_t(c, 0), *st = in_t(c, 1);
	const struct ho_value *bv = in_v(c, 0), *sv = in_v(c, 1), *mo = in_v(c, 2),
			      *iou = in_v(c, 3), *thr = in_v(c, 4);
	struct ho_shape o = {.rank = 2, .dim = {HO_DIM_UNKNOWN, 3}};
	struct ho_nms_args a = {0};
	float *fb, *fs;

	if (!bt || !st)
		return fail(c, "needs boxes and scores");
	/* extents a run decides (boxes kept by a threshold) agree with any */
	if (bt->shape.rank < 0 || st->shape.rank < 0) { /* a rank a run decides */
		set_out(c, 0, HO_DT_INT64, &o);
		return 0;
	}
	if (bt->shape.rank != 3 || st->shape.rank != 3 || !ho_dims_agree(bt->shape.dim[2], 4) ||
	    !ho_dims_agree(bt->shape.dim[0], st->shape.dim[0]) ||
	    !ho_dims_agree(bt->shape.dim[1], st->shape.dim[2]))
		return fail(c, "needs boxes [B, N, 4] and scores [B, C, N]");
	/* every input that decides the selection known: count it */
	if (bv && sv && known(&bt->shape) && known(&st->shape) && (!in_t(c, 2) || mo) &&
	    (!in_t(c, 3) || iou) && (!in_t(c, 4) || thr) && bv->f && sv->f) {
		fb = ho_arena_alloc(c->a, (bv->count + 1) * sizeof(float));
		fs = ho_arena_alloc(c->a, (sv->count + 1) * sizeof(float));
		if (!fb || !fs)
			return fail(c, "out of memory");
		for (size_t k = 0; k < bv->count; k++)
			fb[k] = (float)bv->f[k];
		for (size_t k = 0; k < sv->count; k++)
			fs[k] = (float)sv->f[k];
		a.boxes = fb;
		a.scores = fs;
		a.batches = bt->shape.dim[0];
		a.classes = st->shape.dim[1];
		a.boxes_per_batch = bt->shape.dim[1];
		a.max_per_class = mo ? vgeti(mo, 0) : 0;
		a.iou_threshold = iou ? (float)vget(iou, 0) : 0;
		a.has_score_threshold = thr != NULL;
		a.score_threshold = thr ? (float)vget(thr, 0) : 0;
		a.center_point_box = attr_i(c, "center_point_box", 0);
		o.dim[0] = ho_nms(&a, NULL, 0);
		if (o.dim[0] < 0)
			return fail(c, "out of memory");
	} else if (known(&bt->shape) && known(&st->shape)) {
		/* at most every box of every batch and class, up to the limit per class */
		int64_t per = bt->shape.dim[1], lim = mo ? vgeti(mo, 0) : -1;

		if (in_t(c, 2) && !mo) /* a limit the run decides: no more than every box */
			lim = per;
		per = lim >= 0 && lim < per ? lim : per;
		o.dim[0] =
		    run_decided(c, 0, dim_mul(dim_mul(st->shape.dim[0], st->shape.dim[1]), per));
	}
	set_out(c, 0, HO_DT_INT64, &o);
	return 0;
}

int ho_infer_depth_space(struct ho_infer *c)
{
	struct ho_tensor *x = in_t(c, 0);
	int64_t b = attr_i(c, "blocksize", 0);
	bool d2s = !strcmp(c->nd->op_type, "DepthToSpace");
	struct ho_shape o;

	if (!x || x->shape.rank != 4 || b < 1)
		return fail(c, "needs a rank-4 input and a positive blocksize");
	o = x->shape;
	if (d2s) {
		o.dim[1] = o.dim[1] < 0 ? -1 : o.dim[1] / (b * b);
		o.dim[2] = o.dim[2] < 0 ? -1 : o.dim[2] * b;
		o.dim[3] = o.dim[3] < 0 ? -1 : o.dim[3] * b;
	} else {
		o.dim[1] = o.dim[1] < 0 ? -1 : o.dim[1] * b * b;
		o.dim[2] = o.dim[2] < 0 ? -1 : o.dim[2] / b;
		o.dim[3] = o.dim[3] < 0 ? -1 : o.dim[3] / b;
	}
	set_out(c, 0, x->dtype, &o);
	return 0;
}

/* GatherND: data[:b] + indices[b:-1] + data[b + q:], q the indices' last extent. */
int ho_infer_gather_nd(struct ho_infer *c)
{
	struct ho_tensor *x = in_t(c, 0), *ix = in_t(c, 1);
	int64_t b = attr_i(c, "batch_dims", 0), q;
	struct ho_shape o = {.rank = 0};

	if (!x || !ix || ix->shape.rank < 1 || x->shape.rank < 1)
		return fail(c, "needs data and indices");
	q = ix->shape.dim[ix->shape.rank - 1];
	if (q < 0)
		return fail(c, "needs the indices' last extent");
	if (b < 0 || b >= ix->shape.rank || b + q > x->shape.rank)
		return fail(c, "batch_dims %" PRId64 " and %" PRId64 "-tuples do not fit rank %d",
			    b, q, x->shape.rank);
	for (int a = 0; a < b; a++)
		o.dim[o.rank++] = x->shape.dim[a];
	for (int a = (int)b; a < ix->shape.rank - 1; a++)
		o.dim[o.rank++] = ix->shape.dim[a];
	for (int a = (int)(b + q); a < x->shape.rank && o.rank < HO_MAX_RANK; a++)
		o.dim[o.rank++] = x->shape.dim[a];
	set_out(c, 0, x->dtype, &o);
	return 0;
}

/* EyeLike: the input's shape, of the dtype attribute's type or else the input's. */
int ho_infer_eye_like(struct ho_infer *c)
{
	struct ho_tensor *x = in_t(c, 0);

	if (!x || x->shape.rank != 2)
		return fail(c, "needs a 2-D input");
	set_out(c, 0, (int)attr_i(c, "dtype", x->dtype), &x->shape);
	return 0;
}

/* OneHot: the indices' shape with depth (a known scalar) inserted at axis; values' type. */
int ho_infer_one_hot(struct ho_infer *c)
{
	struct ho_tensor *ix = in_t(c, 0), *vals = in_t(c, 2);
	const struct ho_value *depth = in_v(c, 1);
	int64_t axis = attr_i(c, "axis", -1);
	struct ho_shape o;
	int r, a;

	if (!ix || !in_t(c, 1) || !vals)
		return fail(c, "needs indices, depth and values");
	if (ix->shape.rank < 0 || !depth) {
		set_out(c, 0, vals->dtype, NULL);
		return 0;
	}
	r = ix->shape.rank;
	if (r + 1 > HO_MAX_RANK || depth->count != 1 || vget(depth, 0) < 1)
		return fail(c, "needs a scalar depth of at least 1");
	a = (int)(axis < 0 ? axis + r + 1 : axis);
	if (a < 0 || a > r)
		return fail(c, "axis %" PRId64 " is outside rank %d", axis, r + 1);
	o.rank = r + 1;
	for (int i = 0, j = 0; i < o.rank; i++)
		o.dim[i] = i == a ? (int64_t)vget(depth, 0) : ix->shape.dim[j++];
	set_out(c, 0, vals->dtype, &o);
	return 0;
}

/* Hann, Hamming and Blackman windows: [size] of output_datatype (a known scalar size). */
int ho_infer_window(struct ho_infer *c)
{
	const struct ho_value *size = in_v(c, 0);
	int64_t dt = attr_i(c, "output_datatype", HO_DT_FLOAT);
	struct ho_shape o = {.rank = 1};

	if (!in_t(c, 0))
		return fail(c, "needs a size");
	if (dt <= HO_DT_UNDEFINED || dt >= HO_DT_COUNT)
		return fail(c, "invalid output_datatype %" PRId64, dt);
	if (!size) {
		set_out(c, 0, (int)dt, NULL);
		return 0;
	}
	if (size->count != 1 || vgeti(size, 0) < 0)
		return fail(c, "needs a scalar size of at least 0");
	o.dim[0] = vgeti(size, 0);
	set_out(c, 0, (int)dt, &o);
	return 0;
}

/* MaxUnpool: output_shape's value, or (in - 1) * stride - pads + kernel per spatial axis. */
int ho_infer_max_unpool(struct ho_infer *c)
{
	struct ho_tensor *x = in_t(c, 0);
	const struct ho_value *os = in_v(c, 2);
	size_t nk, ns, np;
	const int64_t *ks = attr_ints(c, "kernel_shape", &nk), *st = attr_ints(c, "strides", &ns),
		      *pads = attr_ints(c, "pads", &np);
	struct ho_shape o;
	int nsp;

	if (!x || !in_t(c, 1))
		return fail(c, "needs X and I");
	if (x->shape.rank < 0 || (in_t(c, 2) && !os)) {
		set_out(c, 0, x->dtype, NULL);
		return 0;
	}
	nsp = x->shape.rank - 2;
	o = x->shape;
	if (os) {
		if ((int)os->count != x->shape.rank)
			return fail(c, "output_shape has %zu entries for rank %d", os->count,
				    x->shape.rank);
		for (int i = 0; i < o.rank; i++)
			o.dim[i] = vgeti(os, (size_t)i);
	} else {
		if (nsp < 1 || !ks || nk != (size_t)nsp || (st && ns != (size_t)nsp) ||
		    (pads && np != 2 * (size_t)nsp))
			return fail(c, "needs kernel_shape (and strides, pads) of its rank");
		for (int i = 0; i < nsp; i++)
			o.dim[2 + i] = x->shape.dim[2 + i] < 0
					   ? HO_DIM_UNKNOWN
					   : (x->shape.dim[2 + i] - 1) * (st ? st[i] : 1) -
						 (pads ? pads[i] + pads[nsp + i] : 0) + ks[i];
	}
	set_out(c, 0, x->dtype, &o);
	return 0;
}

/* Det: [..., M, M] to [...]. */
int ho_infer_det(struct ho_infer *c)
{
	struct ho_tensor *x = in_t(c, 0);
	struct ho_shape o;

	if (!x)
		return fail(c, "missing input");
	if (x->shape.rank < 0) {
		set_out(c, 0, x->dtype, NULL);
		return 0;
	}
	if (x->shape.rank < 2)
		return fail(c, "needs square matrices, got rank %d", x->shape.rank);
	if (x->shape.dim[x->shape.rank - 1] >= 0 && x->shape.dim[x->shape.rank - 2] >= 0 &&
	    x->shape.dim[x->shape.rank - 1] != x->shape.dim[x->shape.rank - 2])
		return fail(c, "matrices are %" PRId64 " x %" PRId64 ", not square",
			    x->shape.dim[x->shape.rank - 2], x->shape.dim[x->shape.rank - 1]);
	o = x->shape;
	o.rank -= 2;
	set_out(c, 0, x->dtype, &o);
	return 0;
}

/* GridSample: X [N, C, H, W] sampled at grid [N, Ho, Wo, 2]: [N, C, Ho, Wo]. */
int ho_infer_grid_sample(struct ho_infer *c)
{
	struct ho_tensor *x = in_t(c, 0), *grid = in_t(c, 1);
	struct ho_shape o = {.rank = 4};

	if (!x || !grid)
		return fail(c, "needs X and grid");
	if (x->shape.rank < 0 || grid->shape.rank < 0) {
		set_out(c, 0, x->dtype, NULL);
		return 0;
	}
	if (x->shape.rank != 4 || grid->shape.rank != 4 ||
	    (grid->shape.dim[3] >= 0 && grid->shape.dim[3] != 2))
		return fail(c, "samples [N, C, H, W] at a [N, Ho, Wo, 2] grid only");
	o.dim[0] = x->shape.dim[0];
	o.dim[1] = x->shape.dim[1];
	o.dim[2] = grid->shape.dim[1];
	o.dim[3] = grid->shape.dim[2];
	set_out(c, 0, x->dtype, &o);
	return 0;
}

/* DFT (opset 17): [batch, ..., 1 or 2] to the same with the axis dft_length long (or its
 * onesided half + 1) and a complex last axis. */
int ho_infer_dft(struct ho_infer *c)
{
	struct ho_tensor *x = in_t(c, 0);
	const struct ho_value *lv = in_v(c, 1);
	int64_t axis = attr_i(c, "axis", 1), len;
	bool onesided = attr_i(c, "onesided", 0);
	struct ho_shape o;
	int a;

	if (!x)
		return fail(c, "missing input");
	if (x->shape.rank < 0 || (in_t(c, 1) && !lv)) {
		set_out(c, 0, x->dtype, NULL);
		return 0;
	}
	if (x->shape.rank < 3 ||
	    (x->shape.dim[x->shape.rank - 1] != 1 && x->shape.dim[x->shape.rank - 1] != 2))
		return fail(c, "needs [batch, ..., 1 or 2], got rank %d", x->shape.rank);
	a = (int)(axis < 0 ? axis + x->shape.rank : axis);
	if (a < 1 || a > x->shape.rank - 2)
		return fail(c, "axis %" PRId64 " is not a signal axis", axis);
	len = lv ? vgeti(lv, 0) : x->shape.dim[a];
	if (lv && len < 1)
		return fail(c, "dft_length %" PRId64 " is not positive", len);
	o = x->shape;
	o.dim[a] = len < 0 ? HO_DIM_UNKNOWN : onesided ? len / 2 + 1 : len;
	o.dim[o.rank - 1] = 2;
	set_out(c, 0, x->dtype, &o);
	return 0;
}

/* STFT: signal [batch, length, 1 or 2] to [batch, frames, bins, 2]. */
int ho_infer_stft(struct ho_infer *c)
{
	struct ho_tensor *x = in_t(c, 0), *win = in_t(c, 2);
	const struct ho_value *step = in_v(c, 1), *flen = in_v(c, 3);
	bool onesided = attr_i(c, "onesided", 1);
	struct ho_shape o = {.rank = 4};
	int64_t fl;

	if (!x || !in_t(c, 1))
		return fail(c, "needs a signal and a frame step");
	if (x->shape.rank != 3 || (x->shape.dim[2] != 1 && x->shape.dim[2] != 2))
		return fail(c, "needs a signal [batch, length, 1 or 2]");
	fl = flen ? vgeti(flen, 0) : win && win->shape.rank == 1 ? win->shape.dim[0] : -1;
	if (!step || fl < 1 || vgeti(step, 0) < 1 || fl > x->shape.dim[1]) {
		if (step && fl >= 1 && vgeti(step, 0) >= 1)
			return fail(c, "a frame of %" PRId64 " is longer than the signal", fl);
		set_out(c, 0, x->dtype, NULL);
		return 0;
	}
	o.dim[0] = x->shape.dim[0];
	o.dim[1] = (x->shape.dim[1] - fl) / vgeti(step, 0) + 1;
	o.dim[2] = onesided ? fl / 2 + 1 : fl;
	o.dim[3] = 2;
	set_out(c, 0, x->dtype, &o);
	return 0;
}

/* RoiAlign: X [N, C, H, W], rois [R, 4]: [R, C, output_height, output_width]. */
int ho_infer_roi_align(struct ho_infer *c)
{
	struct ho_tensor *x = in_t(c, 0), *rois = in_t(c, 1);
	struct ho_shape o = {.rank = 4};

	if (!x || !rois || !in_t(c, 2))
		return fail(c, "needs X, rois and batch_indices");
	if (x->shape.rank != 4 || rois->shape.rank != 2 || rois->shape.dim[1] != 4)
		return fail(c, "needs X [N, C, H, W] and rois [R, 4]");
	o.dim[0] = rois->shape.dim[0];
	o.dim[1] = x->shape.dim[1];
	o.dim[2] = attr_i(c, "output_height", 1);
	o.dim[3] = attr_i(c, "output_width", 1);
	if (o.dim[2] < 1 || o.dim[3] < 1)
		return fail(c, "needs a positive output size");
	set_out(c, 0, x->dtype, &o);
	return 0;
}

/* TfIdfVectorizer: [C] or [B, C] to float [max(ngram_indexes) + 1] or [B, that]. */
int ho_infer_tfidf(struct ho_infer *c)
{
	struct ho_tensor *x = in_t(c, 0);
	size_t ni;
	const int64_t *ix = attr_ints(c, "ngram_indexes", &ni);
	struct ho_shape o = {0};
	int64_t width = 0;

	if (!x)
		return fail(c, "missing input");
	if (x->shape.rank != 1 && x->shape.rank != 2)
		return fail(c, "needs [C] or [B, C], got rank %d", x->shape.rank);
	for (size_t k = 0; ix && k < ni; k++) {
		if (ix[k] < 0)
			return fail(c, "ngram_indexes has %" PRId64, ix[k]);
		width = ix[k] + 1 > width ? ix[k] + 1 : width;
	}
	o.rank = x->shape.rank;
	o.dim[0] = x->shape.dim[0];
	o.dim[o.rank - 1] = width;
	set_out(c, 0, HO_DT_FLOAT, &o);
	return 0;
}

/*
 * StringNormalizer: [C] or [1, C] strings to the ones not stopwords, or one
 * empty string when none is left; the extent counted where the input's
 * strings are known (user/common/strnorm.c decides, as the kernel does).
 */
int ho_infer_string_normalizer(struct ho_infer *c)
{
	struct ho_tensor *x = in_t(c, 0);
	struct ho_shape o;
	struct ho_strnorm s;
	int64_t n, kept = 0;
	int ret;

	if (!x || x->dtype != HO_DT_STRING)
		return fail(c, "needs a string input");
	if (x->shape.rank != 1 && (x->shape.rank != 2 || x->shape.dim[0] != 1))
		return fail(c, "needs [C] or [1, C]");
	if ((ret = ho_strnorm_parse(c->nd, &s, c->err)))
		return ret;
	o = x->shape;
	n = ho_shape_numel(&x->shape);
	/* strings known before the run, through views (a Reshape) that keep their order */
	while (!x->data && x->producer >= 0 && ho_op_is_view(c->g->nodes[x->producer].op_type) &&
	       c->g->nodes[x->producer].n_inputs && c->g->nodes[x->producer].inputs[0] >= 0)
		x = &c->g->tensors[c->g->nodes[x->producer].inputs[0]];
	if (!s.n_stop) {
		kept = n;
	} else if (x->data && n >= 0) {
		for (int64_t i = 0; i < n && kept >= 0; i++) {
			int k = ho_strnorm_kept(&s, ((const char *const *)x->data)[i]);

			kept = k < 0 ? k : kept + k;
		}
	} else {
		kept = HO_DIM_UNKNOWN;
	}
	ho_strnorm_free(&s);
	if (kept < HO_DIM_UNKNOWN)
		return ho_err(c->err, -ENOMEM, "out of memory");
	o.dim[o.rank - 1] = kept == 0 ? 1 : kept; /* none left: one empty string */
	set_out(c, 0, HO_DT_STRING, &o);
	return 0;
}

/* MelWeightMatrix: [dft_length / 2 + 1, num_mel_bins] of output_datatype (known values). */
int ho_infer_mel_weight_matrix(struct ho_infer *c)
{
	const struct ho_value *bins = in_v(c, 0), *len = in_v(c, 1);
	int64_t dt = attr_i(c, "output_datatype", HO_DT_FLOAT);
	struct ho_shape o = {.rank = 2};

	for (uint32_t i = 0; i < 5; i++)
		if (!in_t(c, i))
			return fail(c,
				    "needs num_mel_bins, dft_length, sample_rate and both edges");
	if (dt <= HO_DT_UNDEFINED || dt >= HO_DT_COUNT)
		return fail(c, "invalid output_datatype %" PRId64, dt);
	if (!bins || !len) {
		set_out(c, 0, (int)dt, NULL);
		return 0;
	}
	if (vgeti(bins, 0) < 1 || vgeti(len, 0) < 1)
		return fail(c, "needs positive num_mel_bins and dft_length");
	o.dim[0] = vgeti(len, 0) / 2 + 1;
	o.dim[1] = vgeti(bins, 0);
	set_out(c, 0, (int)dt, &o);
	return 0;
}
