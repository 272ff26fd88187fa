// SPDX-License-Identifier: MIT
/*
 * The OpenCL backend's data movement: Concat, Transpose, Slice and Pad, each
 * an output element a work-item that reads its source by strides.
 */
#include <errno.h>
#include <string.h>

#include "heteroopt/opsem.h"
#include "ocl.h"

int ocl_prep_concat(const struct ocl_ctx *c)
{
	const struct ho_tensor *yt = &c->g->tensors[c->n->outputs[0]];
	int64_t axis = ho_node_attr_i(c->n, "axis", 0), out_inner = 1, col = 0;

	if (axis < 0)
		axis += yt->shape.rank;
	if (axis < 0 || axis >= yt->shape.rank)
		return ocl_refuse(c, "has an axis out of range");
	for (int k = (int)axis; k < yt->shape.rank; k++)
		out_inner *= yt->shape.dim[k];
	for (uint32_t i = 0; i < c->n->n_inputs; i++) {
		const struct ho_tensor *x = ho_node_input(c->g, c->n, i);
		int64_t inner = 1, n;
		struct ocl_launch *l;
		struct ocl_args a;

		if (!x || !(n = ho_shape_numel(&x->shape)))
			continue;
		for (int k = (int)axis; k < x->shape.rank; k++)
			inner *= x->shape.dim[k];
		if (!(l = ocl_launch_yx(c, "place", c->n->outputs[0], c->n->inputs[i], &a)))
			return ocl_no_kernel(c);
		ocl_arg_int(&a, (int)inner);
		ocl_arg_int(&a, (int)out_inner);
		ocl_arg_int(&a, (int)col);
		l->dims = 1;
		l->global[0] = (size_t)n;
		if (ocl_args_done(c, &a))
			return c->err->code;
		col += inner;
	}
	return 0;
}

/* The output, each element from the input base elements in and strides sx along dims. */
static int ocl_gather(const struct ocl_ctx *c, int r, const int *dims, const int *sx, int64_t base)
{
	const struct ho_tensor *yt = &c->g->tensors[c->n->outputs[0]];
	struct ocl_launch *l = ocl_new_launch(c, "gather_nd");
	struct ocl_args a;

	if (!l)
		return ocl_no_kernel(c);
	a = (struct ocl_args){.k = l->k};
	ocl_arg_tensor(&a, c, c->n->outputs[0]);
	ocl_arg_buf(&a, ocl_buf(c, c->n->inputs[0]));
	ocl_arg_long(&a, (long)(c->mem[c->n->inputs[0]].off / sizeof(float) + (uint64_t)base));
	ocl_arg_int(&a, r);
	ocl_arg_int8(&a, dims);
	ocl_arg_int8(&a, sx);
	l->dims = 1;
	l->global[0] = (size_t)ho_shape_numel(&yt->shape);
	return ocl_args_done(c, &a);
}

int ocl_prep_transpose(const struct ocl_ctx *c)
{
	const struct ho_tensor *x = ho_node_input(c->g, c->n, 0),
			       *yt = &c->g->tensors[c->n->outputs[0]];
	int dims[8] = {1, 1, 1, 1, 1, 1, 1, 1}, sx[8] = {0};
	int64_t perm[8], in_st[8], acc = 1;
	int r;

	if (!x || (r = x->shape.rank) > 8 || !r)
		return ocl_refuse(c, "transposes ranks 1 to 8 only");
	for (int k = 0; k < r; k++)
		perm[k] = r - 1 - k; /* the default: axes reversed */
	if (ho_node_attr(c->n, "perm") && !ho_node_attr_ints(c->n, "perm", perm, (size_t)r, 0))
		return ocl_refuse(c, "has a perm of another rank");
	for (int k = r - 1; k >= 0; k--) {
		in_st[k] = acc;
		acc *= x->shape.dim[k];
	}
	for (int k = 0; k < r; k++) {
		if (perm[k] < 0 || perm[k] >= r)
			return ocl_refuse(c, "has a perm out of range");
		dims[k] = (int)yt->shape.dim[k];
		sx[k] = (int)in_st[perm[k]];
	}
	return ocl_gather(c, r, dims, sx, 0);
}

/* Slice (constant starts, ends, axes, steps: ho_slice_node) as a strided gather. */
int ocl_prep_slice(const struct ocl_ctx *c)
{
	const struct ho_tensor *x = ho_node_input(c->g, c->n, 0),
			       *yt = &c->g->tensors[c->n->outputs[0]];
	int dims[8] = {1, 1, 1, 1, 1, 1, 1, 1}, sx[8] = {0}, r;
	const void *data[5] = {NULL};
	int64_t st = 1, base = 0;
	struct ho_slice sl;
	struct ho_error e;

	if (!x || (r = x->shape.rank) > 8 || r < 1)
		return ocl_refuse(c, "slices ranks 1 to 8 only");
	for (uint32_t i = 1; i < 5 && i < c->n->n_inputs; i++)
		data[i] = c->n->inputs[i] >= 0 ? c->mem[c->n->inputs[i]].host : NULL;
	if (ho_slice_node(c->g, c->n, data, &sl, &e))
		return ocl_refuse(c, "cannot read its starts, ends, axes and steps");
	for (int k = r - 1; k >= 0; k--) {
		dims[k] = (int)yt->shape.dim[k];
		sx[k] = (int)(st * sl.step[k]);
		base += sl.first[k] * st;
		st *= x->shape.dim[k];
	}
	return ocl_gather(c, r, dims, sx, base);
}

/*
 * Pad (opset 11 on: constant pads, a constant value), modes constant, reflect
 * and edge; a negative pad crops.
 */
int ocl_prep_pad(const struct ocl_ctx *c)
{
	static const char *const modes[] = {"constant", "reflect", "edge", NULL};
	const struct ho_tensor *x = ho_node_input(c->g, c->n, 0),
			       *yt = &c->g->tensors[c->n->outputs[0]],
			       *pt = ho_node_input(c->g, c->n, 1);
	const struct ho_attr *m = ho_node_attr(c->n, "mode");
	int dims[8] = {1, 1, 1, 1, 1, 1, 1, 1}, xd[8] = {1, 1, 1, 1, 1, 1, 1, 1}, b[8] = {0};
	int64_t pads[2 * HO_MAX_RANK];
	int mode = 0, r;
	float value = 0;
	struct ocl_launch *l;
	struct ocl_args a;

	while (m && m->s && modes[mode] && strcmp(m->s, modes[mode]))
		mode++;
	if (!x || (r = x->shape.rank) > 8 || r < 1 || c->n->opset < 11 || !modes[mode] ||
	    ho_node_input(c->g, c->n, 3))
		return ocl_refuse(c, "pads every axis of ranks 1 to 8 (constant, reflect, edge) "
				     "by inputs (opset 11 on) only");
	if (!pt || !(pt->flags & HO_T_KNOWN) ||
	    ho_tensor_ints(pt, c->mem[c->n->inputs[1]].host, pads, 2 * HO_MAX_RANK) != 2 * r)
		return ocl_refuse(c, "needs constant pads, two per axis");
	if (ho_node_input(c->g, c->n, 2)) {
		if (!ho_is_const_f(c->g, c->n->inputs[2]))
			return ocl_refuse(c, "needs a constant value");
		value = ho_const_f(c->g, c->n->inputs[2], 0);
	}
	for (int k = 0; k < r; k++) {
		dims[k] = (int)yt->shape.dim[k];
		xd[k] = (int)x->shape.dim[k];
		b[k] = (int)pads[k];
		/* a negative pad crops: the kernel's source index never leaves the
		 * input there, in any mode */
		if (mode == 1 && (pads[k] >= xd[k] || pads[r + k] >= xd[k]))
			return ocl_refuse(c, "reflects by less than the extent only");
	}
	if (!(l = ocl_launch_yx(c, "pad", c->n->outputs[0], c->n->inputs[0], &a)))
		return ocl_no_kernel(c);
	ocl_arg_int(&a, r);
	ocl_arg_int8(&a, dims);
	ocl_arg_int8(&a, xd);
	ocl_arg_int8(&a, b);
	ocl_arg_int(&a, mode);
	ocl_arg_float(&a, value);
	l->dims = 1;
	l->global[0] = (size_t)ho_shape_numel(&yt->shape);
	return ocl_args_done(c, &a);
}
