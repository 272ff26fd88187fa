// SPDX-License-Identifier: MIT
/*
 * The OpenCL backend's kernel launches and their arguments, set once at prepare
 * time over the tensors' (buffer, offset) handles; refusals and constants read
 * at prepare time.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ocl.h"

/* Channels-last in memory: a map of 1 x 1 (a global pool's) is the same bytes either way. */
bool ocl_is_nhwc(const struct ocl_ctx *c, int32_t t)
{
	return c->channels_last && t >= 0 && c->channels_last[t] &&
	       c->g->tensors[t].shape.rank == 4 && !ho_shape_layout_free(&c->g->tensors[t].shape);
}

int ocl_refuse(const struct ocl_ctx *c, const char *why)
{
	return ho_err(c->err, -EOPNOTSUPP, "node '%s' (%s): the OpenCL backend %s", c->n->name,
		      c->n->op_type, why);
}

/* A new launch of kernel name (NULL: a GEMM); its arguments set by the caller. */
struct ocl_launch *ocl_new_launch(const struct ocl_ctx *c, const char *name)
{
	struct ho_kernel *k = c->k;
	cl_int e = CL_SUCCESS;

	if (k->n == k->cap) {
		int cap = k->cap ? 2 * k->cap : 4;
		struct ocl_launch *l = realloc(k->l, (size_t)cap * sizeof(*l));

		if (!l)
			return NULL;
		k->l = l;
		k->cap = cap;
	}
	memset(&k->l[k->n], 0, sizeof(k->l[0]));
	if (name && c->b)
		k->l[k->n].k = clCreateKernel(c->b->prog, name, &e);
	if (e != CL_SUCCESS)
		return NULL;
	return &k->l[k->n++];
}

/* Kernel arguments, in order, through one cursor. */
static void ocl_arg_raw(struct ocl_args *a, size_t len, const void *v)
{
	if (a->e == CL_SUCCESS && a->k) /* no kernel: a check */
		a->e = clSetKernelArg(a->k, a->i, len, v);
	a->i++;
}

void ocl_arg_int(struct ocl_args *a, int v)
{
	ocl_arg_raw(a, sizeof(v), &v);
}

void ocl_arg_long(struct ocl_args *a, long v)
{
	cl_long l = v;

	ocl_arg_raw(a, sizeof(l), &l);
}

void ocl_arg_float(struct ocl_args *a, float v)
{
	ocl_arg_raw(a, sizeof(v), &v);
}

void ocl_arg_buf(struct ocl_args *a, cl_mem m)
{
	ocl_arg_raw(a, sizeof(m), &m);
}

cl_mem ocl_buf(const struct ocl_ctx *c, int32_t t)
{
	return c->b ? c->mem[t].block->mem : NULL;
}

/* A tensor: its block's buffer and its offset in floats. */
void ocl_arg_tensor(struct ocl_args *a, const struct ocl_ctx *c, int32_t t)
{
	ocl_arg_buf(a, ocl_buf(c, t));
	ocl_arg_long(a, (long)(c->mem[t].off / sizeof(float)));
}

void ocl_arg_window(struct ocl_args *a, const struct ho_window *w)
{
	for (int k = 0; k < 2; k++)
		ocl_arg_int(a, (int)w->ks[k]);
	for (int k = 0; k < 2; k++)
		ocl_arg_int(a, (int)w->st[k]);
	for (int k = 0; k < 2; k++)
		ocl_arg_int(a, (int)w->pd[k]);
	for (int k = 0; k < 2; k++)
		ocl_arg_int(a, (int)w->dl[k]);
}

void ocl_arg_act(struct ocl_args *a, const struct ho_act_args *act)
{
	ocl_arg_int(a, act->act);
	ocl_arg_float(a, act->p);
	ocl_arg_float(a, act->q);
}

void ocl_arg_int8(struct ocl_args *a, const int *v)
{
	cl_int8 x;

	memcpy(&x, v, sizeof(x));
	ocl_arg_raw(a, sizeof(x), &x);
}

int ocl_args_done(const struct ocl_ctx *c, const struct ocl_args *a)
{
	if (a->e != CL_SUCCESS)
		return ho_err(c->err, -EINVAL, "node '%s' (%s): OpenCL kernel arguments: %s (%d)",
			      c->n->name, c->n->op_type, ocl_strerror(a->e), a->e);
	return 0;
}

static struct ocl_args ocl_start(struct ocl_launch *l)
{
	return (struct ocl_args){.k = l->k};
}

int ocl_no_kernel(const struct ocl_ctx *c)
{
	return ho_err(c->err, -ENOMEM, "node '%s' (%s): cannot create its OpenCL kernel",
		      c->n->name, c->n->op_type);
}

/* A launch of kernel name whose first arguments are tensors y and x. */
struct ocl_launch *ocl_launch_yx(const struct ocl_ctx *c, const char *name, int32_t y, int32_t x,
				 struct ocl_args *a)
{
	struct ocl_launch *l = ocl_new_launch(c, name);

	if (!l)
		return NULL;
	*a = ocl_start(l);
	ocl_arg_tensor(a, c, y);
	ocl_arg_tensor(a, c, x);
	return l;
}

/* Buffer owned[i] of the kernel: a copy of len bytes the kernel computed at prepare time. */
int ocl_owned(const struct ocl_ctx *c, int i, const void *data, size_t len)
{
	cl_int e = CL_SUCCESS;

	if (!c->b)
		return 0;
	c->k->owned[i] = clCreateBuffer(c->b->ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, len,
					(void *)data, &e);
	if (e != CL_SUCCESS)
		return ho_err(c->err, -ENOMEM, "node '%s': %s (%d)", c->n->name, ocl_strerror(e),
			      e);
	return 0;
}
