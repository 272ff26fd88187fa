// SPDX-License-Identifier: MIT
/*
 * The CUDA backend's launches: each kernel's parameters packed once at
 * prepare time over the tensors' device addresses, queued on the device's
 * stream at launch between two events (the node's start and end); refusals
 * and constants read at prepare time.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cu.h"

int cu_refuse(const struct cu_ctx *c, const char *why)
{
	return ho_err(c->err, -EOPNOTSUPP, "node '%s' (%s): the CUDA backend %s", c->n->name,
		      c->n->op_type, why);
}

struct cu_launch *cu_new_launch(const struct cu_ctx *c, const char *name, long n)
{
	struct ho_kernel *k = c->k;
	struct cu_launch *l;

	if (k->n == k->cap) {
		int cap = k->cap ? 2 * k->cap : 4;

		if (!(l = realloc(k->l, (size_t)cap * sizeof(*l))))
			return NULL;
		k->l = l;
		k->cap = cap;
	}
	l = &k->l[k->n];
	memset(l, 0, sizeof(*l));
	l->scratch_at = -1;
	l->block = 256;
	l->grid[0] = (unsigned)((n + 255) / 256);
	l->grid[1] = l->grid[2] = 1;
	if (c->b && c->b->api.cuModuleGetFunction(&l->f, c->b->mod, name) != CUDA_SUCCESS)
		return NULL;
	k->n++;
	return l;
}

void cu_param(struct cu_launch *l, const void *v, size_t len, size_t align)
{
	size_t at = (l->used + align - 1) / align * align;

	if (l->n_params >= CU_MAX_PARAMS || at + len > CU_PARAM_BYTES) {
		l->overflow = true;
		return;
	}
	memcpy(l->bytes + at, v, len);
	l->at[l->n_params++] = (unsigned short)at;
	l->used = (unsigned short)(at + len);
}

void cu_param_int(struct cu_launch *l, int v)
{
	cu_param(l, &v, sizeof(v), sizeof(v));
}

void cu_param_long(struct cu_launch *l, long v)
{
	cu_param(l, &v, sizeof(v), sizeof(v));
}

void cu_param_float(struct cu_launch *l, float v)
{
	cu_param(l, &v, sizeof(v), sizeof(v));
}

void cu_param_ptr(struct cu_launch *l, CUdeviceptr p)
{
	cu_param(l, &p, sizeof(p), sizeof(p));
}

void cu_param_tensor(struct cu_launch *l, const struct cu_ctx *c, int32_t t)
{
	cu_param_tensor_at(l, c, t, 0);
}

void cu_param_tensor_at(struct cu_launch *l, const struct cu_ctx *c, int32_t t, long plus)
{
	cu_param_ptr(l, c->b ? c->mem[t].block->dptr : 0);
	cu_param_long(l, c->b ? (long)(c->mem[t].off / sizeof(float)) + plus : 0);
}

void cu_param_act(struct cu_launch *l, const struct ho_act_args *a)
{
	cu_param_int(l, a->act);
	cu_param_float(l, a->p);
	cu_param_float(l, a->q);
}

void cu_param_scratch(struct cu_launch *l)
{
	l->scratch_at = l->n_params;
	cu_param_ptr(l, 0);
}

int cu_launch_done(const struct cu_ctx *c, const struct cu_launch *l)
{
	if (!l)
		return ho_err(c->err, -EIO, "node '%s' (%s): the CUDA kernel is missing",
			      c->n->name, c->n->op_type);
	if (l->overflow)
		return ho_err(c->err, -EINVAL,
			      "internal: node '%s' (%s): too many kernel parameters", c->n->name,
			      c->n->op_type);
	return 0;
}

int cu_owned(const struct cu_ctx *c, int i, const void *data, size_t len)
{
	CUresult r;

	if (!c->b)
		return 0;
	if ((r = c->b->api.cuMemAlloc_v2(&c->k->owned[i], len)) != CUDA_SUCCESS ||
	    (r = c->b->api.cuMemcpyHtoD_v2(c->k->owned[i], data, len)) != CUDA_SUCCESS) {
		char what[96];

		snprintf(what, sizeof(what), "node '%s': %zu bytes of weights", c->n->name, len);
		return cu_failed(c->b, what, r, c->err);
	}
	return 0;
}

int cu_need_scratch(const struct cu_ctx *c, size_t len)
{
	struct ho_backend *b = c->b;
	CUresult r;

	if (!b || len <= b->scratch_len)
		return 0;
	/* nothing queued may still read the old one */
	b->api.cuStreamSynchronize(b->stream);
	if (b->scratch)
		b->api.cuMemFree_v2(b->scratch);
	b->scratch = 0;
	b->scratch_len = 0;
	if ((r = b->api.cuMemAlloc_v2(&b->scratch, len)) != CUDA_SUCCESS) {
		char what[96];

		snprintf(what, sizeof(what), "node '%s': %zu bytes of im2col scratch", c->n->name,
			 len);
		return cu_failed(b, what, r, c->err);
	}
	b->scratch_len = len;
	return 0;
}

/* Queue k's launches between its two events. */
int cu_run(struct ho_backend *b, struct ho_kernel *k, struct ho_error *err)
{
	CUresult r = b->api.cuEventRecord(k->ev[0], b->stream);

	for (int i = 0; i < k->n && r == CUDA_SUCCESS; i++) {
		struct cu_launch *l = &k->l[i];
		void *p[CU_MAX_PARAMS];

		if (!l->grid[0])
			continue; /* nothing to compute */
		for (int j = 0; j < l->n_params; j++)
			p[j] = j == l->scratch_at ? (void *)&b->scratch : l->bytes + l->at[j];
		r = b->api.cuLaunchKernel(l->f, l->grid[0], l->grid[1], l->grid[2], l->block, 1, 1,
					  0, b->stream, p, NULL);
	}
	if (r == CUDA_SUCCESS)
		r = b->api.cuEventRecord(k->ev[1], b->stream);
	if (r != CUDA_SUCCESS) {
		char what[160];

		snprintf(what, sizeof(what), "node '%s' (%s)", k->name, k->op);
		return cu_failed(b, what, r, err);
	}
	k->launched = true;
	return 0;
}
