// SPDX-License-Identifier: MIT
/*
 * Control flow (If, Loop, Scan), the executor's own on whatever device the
 * schedule put the node: each subgraph becomes a plan of its own,
 * made once with the node's kernel, over the shapes the enclosing graph's
 * inference gave it, and run as the data decides.  Inputs go in and outputs
 * come out by copies into the subplan's own buffers (the outer tensors it
 * reads once per node run, the loop state once per iteration), so that the
 * subplan keeps the memory plan and kernels it was made with.  A subgraph
 * whose shapes depend on values that change from one run of it to the next
 * (a loop-carried value that grows) is refused at plan time.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "exec_priv.h"
#include "heteroopt/opsem.h"

enum ho_cf_op { HO_CF_IF, HO_CF_LOOP, HO_CF_SCAN };

/* A tensor's bytes on both sides: the node's (parent plan) and the subplan's. */
struct ho_cf_io {
	void *outer, *inner;
	uint64_t bytes;
};

struct ho_cf_sub {
	struct ho_rt *rt;
	int threads;	       /* its plan's: the node's device's */
	struct ho_cf_io *feed; /* outer tensors it reads that are not known at plan time */
	uint32_t n_feed;
	void **in, **out; /* its inputs' and outputs' bytes in the subplan */
};

struct ho_control {
	int op;
	const struct ho_node *n;
	struct ho_cf_sub sub[2]; /* If: then, else; Loop and Scan: the body */
	void **in, **out;	 /* the node's inputs' and outputs' bytes (NULL: omitted) */
	uint64_t *in_bytes, *out_bytes;
	int64_t steps; /* Loop: the scan outputs' planned extent; Scan: its sequence length */
	struct ho_scan scan;
	/* Scan: per state or scan input and output, blocks of inner bytes in outer runs
	 * of len (the sliced axis) */
	int64_t in_outer[2 * HO_SCAN_MAX], in_inner[2 * HO_SCAN_MAX];
	int64_t out_outer[2 * HO_SCAN_MAX], out_inner[2 * HO_SCAN_MAX];
	int64_t batch;
};

void ho_rt_control_free(struct ho_control *cf)
{
	if (!cf)
		return;
	for (int s = 0; s < 2; s++) {
		ho_rt_free(cf->sub[s].rt);
		free(cf->sub[s].feed);
		free(cf->sub[s].in);
		free(cf->sub[s].out);
	}
	free(cf->in);
	free(cf->out);
	free(cf->in_bytes);
	free(cf->out_bytes);
	free(cf);
}

/* Plan subgraph sg of node n, its outer tensors read from the parent's tensors mem (host
 * addresses). */
static int cf_plan(const struct ho_node *n, const char *what, const struct ho_graph *sg,
		   const struct ho_mem *mem, struct ho_cf_sub *s, struct ho_error *err)
{
	struct ho_rt_opts o = {.threads = s->threads};
	struct ho_error e = {0};
	int ret;

	ret = ho_rt_new(sg, &o, &s->rt, &e);
	if (ret)
		return ho_err(err, ret, "node '%s' (%s): its %s: %s", n->name, n->op_type, what,
			      e.msg);
	s->feed = calloc(sg->n_tensors + 1, sizeof(*s->feed));
	s->in = calloc(sg->n_inputs + 1, sizeof(void *));
	s->out = calloc(sg->n_outputs + 1, sizeof(void *));
	if (!s->feed || !s->in || !s->out)
		return ho_err(err, -ENOMEM, "out of memory");
	for (uint32_t t = 0; t < sg->n_tensors; t++) {
		const struct ho_tensor *tt = &sg->tensors[t];
		void *inner;

		if (!(tt->flags & HO_T_OUTER) || (tt->flags & HO_T_KNOWN) || !tt->bytes)
			continue;
		inner = ho_rt_tensor_data(s->rt, (int32_t)t);
		if (!inner)
			continue; /* nothing in the subgraph reads it */
		if (!mem[tt->outer].host)
			return ho_err(err, -EFAULT,
				      "internal: node '%s' (%s): outer tensor '%s' has no buffer",
				      n->name, n->op_type, tt->name);
		s->feed[s->n_feed++] = (struct ho_cf_io){mem[tt->outer].host, inner, tt->bytes};
	}
	for (uint32_t k = 0; k < sg->n_inputs; k++)
		s->in[k] = ho_rt_tensor_data(s->rt, sg->inputs[k]);
	for (uint32_t k = 0; k < sg->n_outputs; k++)
		s->out[k] = (void *)ho_rt_output_data(s->rt, k, NULL);
	return 0;
}

static int cf_refuse(struct ho_error *err, const struct ho_node *n, const char *fmt, uint32_t k)
{
	char why[160];

	snprintf(why, sizeof(why), fmt, k);
	return ho_err(err, -EOPNOTSUPP, "node '%s' (%s): %s", n->name, n->op_type, why);
}

/* The subgraph's output k against the node's output o: one shape (slice), one type. */
static int cf_check_out(const struct ho_node *n, const struct ho_graph *sg, uint32_t k,
			const struct ho_shape *want, struct ho_error *err)
{
	const struct ho_tensor *bt = &sg->tensors[sg->outputs[k]];

	if (!ho_shape_same(&bt->shape, want) || !bt->bytes)
		return cf_refuse(err, n,
				 "its subgraph's output %u has another shape than the node's "
				 "(or one that depends on the data)",
				 k);
	return 0;
}

static int cf_prep_if(const struct ho_graph *g, const struct ho_node *n, const struct ho_mem *mem,
		      struct ho_control *cf, struct ho_error *err)
{
	static const char *const branch[2] = {"then_branch", "else_branch"};
	int ret;

	for (int s = 0; s < 2; s++) {
		const struct ho_attr *a = ho_node_attr(n, branch[s]);

		if (!a || a->type != HO_ATTR_GRAPH)
			return cf_refuse(err, n, "needs its two branches", 0);
		ret = cf_plan(n, branch[s], a->g[0], mem, &cf->sub[s], err);
		if (ret)
			return ret;
		for (uint32_t k = 0; k < n->n_outputs; k++)
			if (n->outputs[k] >= 0 &&
			    (ret = cf_check_out(n, a->g[0], k, &g->tensors[n->outputs[k]].shape,
						err)))
				return ret;
	}
	return 0;
}

static int cf_prep_loop(const struct ho_graph *g, const struct ho_node *n, const struct ho_mem *mem,
			struct ho_control *cf, struct ho_error *err)
{
	const struct ho_attr *a = ho_node_attr(n, "body");
	uint32_t n_carried = n->n_inputs - 2;
	const struct ho_graph *body;
	int ret;

	if (!a || a->type != HO_ATTR_GRAPH || n->n_inputs < 2)
		return cf_refuse(err, n, "needs a body graph", 0);
	body = a->g[0];
	ret = cf_plan(n, "body", body, mem, &cf->sub[0], err);
	if (ret)
		return ret;
	cf->steps = -1;
	for (uint32_t k = 0; k < n->n_outputs; k++) {
		const struct ho_tensor *y = n->outputs[k] >= 0 ? &g->tensors[n->outputs[k]] : NULL;
		struct ho_shape slice;

		if (k < n_carried) {
			/* the state: one shape going in, coming out, and left at the end */
			const struct ho_tensor *x = ho_node_input(g, n, 2 + k);

			if (!x || !y ||
			    !ho_shape_same(&body->tensors[body->inputs[2 + k]].shape, &x->shape))
				return cf_refuse(err, n, "needs loop-carried value %u in and out",
						 k);
			ret = cf_check_out(n, body, 1 + k, &x->shape, err);
			if (ret)
				return cf_refuse(err, n,
						 "loop-carried value %u changes shape from one "
						 "iteration to the next",
						 k);
			continue;
		}
		if (!y)
			continue;
		if (y->shape.rank < 1 || y->shape.dim[0] < 0 ||
		    (cf->steps >= 0 && y->shape.dim[0] != cf->steps))
			return cf_refuse(err, n,
					 "stacks scan output %u over a number of iterations not "
					 "known at plan time",
					 k);
		cf->steps = y->shape.dim[0];
		slice = y->shape;
		slice.rank--;
		memmove(slice.dim, slice.dim + 1, sizeof(slice.dim[0]) * (size_t)slice.rank);
		ret = cf_check_out(n, body, 1 + k, &slice, err);
		if (ret)
			return ret;
	}
	return 0;
}

/* Blocks of t's shape around axis a: outer runs of dim[a] blocks of inner bytes. */
static void cf_blocks(const struct ho_shape *s, int64_t a, int es, int64_t *outer, int64_t *inner)
{
	*outer = 1;
	*inner = es;
	for (int i = 0; i < s->rank; i++) {
		if (i < a)
			*outer *= s->dim[i];
		else if (i > a)
			*inner *= s->dim[i];
	}
}

static int cf_prep_scan(const struct ho_graph *g, const struct ho_node *n, const struct ho_mem *mem,
			struct ho_control *cf, struct ho_error *err)
{
	const struct ho_attr *a = ho_node_attr(n, "body");
	int in_rank[2 * HO_SCAN_MAX], out_rank[2 * HO_SCAN_MAX];
	struct ho_scan *s = &cf->scan;
	const struct ho_graph *body;
	int ret;

	if (!a || a->type != HO_ATTR_GRAPH)
		return cf_refuse(err, n, "needs a body graph", 0);
	body = a->g[0];
	for (uint32_t k = 0; k < 2 * HO_SCAN_MAX; k++) {
		const struct ho_tensor *x = ho_node_input(g, n, k + (n->opset < 9));

		in_rank[k] = x ? x->shape.rank : -1;
		out_rank[k] = k < body->n_outputs ? body->tensors[body->outputs[k]].shape.rank : -1;
	}
	ret = ho_scan_parse(n, body, in_rank, out_rank, s, err);
	if (ret)
		return ret;
	ret = cf_plan(n, "body", body, mem, &cf->sub[0], err);
	if (ret)
		return ret;
	cf->batch = 1;
	cf->steps = -1;
	for (uint32_t k = 0; k < s->n_state + s->n_in; k++) {
		const struct ho_tensor *x = ho_node_input(g, n, s->first + k);

		if (!x || !x->bytes)
			return cf_refuse(err, n, "needs input %u", s->first + k);
		if (s->batched)
			cf->batch = x->shape.dim[0];
		if (k >= s->n_state)
			cf->steps = x->shape.dim[s->in_axis[k - s->n_state]];
	}
	/* the state: a batch entry's bytes (opset 8) or all; a scan input: around its axis */
	for (uint32_t k = 0; k < s->n_state + s->n_in; k++) {
		const struct ho_tensor *x = ho_node_input(g, n, s->first + k);

		if (k < s->n_state)
			cf->in_inner[k] = (int64_t)x->bytes / cf->batch;
		else
			cf_blocks(&x->shape, s->in_axis[k - s->n_state], ho_dtype_size(x->dtype),
				  &cf->in_outer[k], &cf->in_inner[k]);
	}
	for (uint32_t k = 0; k < s->n_state + s->n_out; k++) {
		const struct ho_tensor *y = n->outputs[k] >= 0 ? &g->tensors[n->outputs[k]] : NULL;
		const struct ho_tensor *bt = &body->tensors[body->outputs[k]];

		if (!y || !y->bytes || !bt->bytes || y->dtype != bt->dtype)
			return cf_refuse(err, n, "needs output %u, of a shape known at plan time",
					 k);
		/* one batch entry's (a step's) slice is the body's output */
		if (y->bytes !=
		    bt->bytes * (uint64_t)cf->batch * (uint64_t)(k < s->n_state ? 1 : cf->steps))
			return cf_refuse(err, n,
					 "its body's output %u has another size than a slice of "
					 "the node's",
					 k);
		if (k < s->n_state)
			cf->out_inner[k] = (int64_t)y->bytes / cf->batch;
		else
			cf_blocks(&y->shape, s->out_axis[k - s->n_state], ho_dtype_size(y->dtype),
				  &cf->out_outer[k], &cf->out_inner[k]);
	}
	return 0;
}

bool ho_rt_is_control(const char *op)
{
	return !strcmp(op, "If") || !strcmp(op, "Loop") || !strcmp(op, "Scan");
}

int ho_rt_control_prepare(const struct ho_graph *g, const struct ho_node *n,
			  const struct ho_mem *mem, int threads, struct ho_control **out,
			  struct ho_error *err)
{
	struct ho_control *cf = calloc(1, sizeof(*cf));
	int ret;

	if (!cf)
		return ho_err(err, -ENOMEM, "out of memory");
	*out = cf;
	cf->sub[0].threads = cf->sub[1].threads = threads;
	cf->n = n;
	cf->op = !strcmp(n->op_type, "If")     ? HO_CF_IF
		 : !strcmp(n->op_type, "Loop") ? HO_CF_LOOP
					       : HO_CF_SCAN;
	cf->in = calloc(n->n_inputs + 1, sizeof(void *));
	cf->out = calloc(n->n_outputs + 1, sizeof(void *));
	cf->in_bytes = calloc(n->n_inputs + 1, sizeof(uint64_t));
	cf->out_bytes = calloc(n->n_outputs + 1, sizeof(uint64_t));
	if (!cf->in || !cf->out || !cf->in_bytes || !cf->out_bytes)
		return ho_err(err, -ENOMEM, "out of memory");
	for (uint32_t i = 0; i < n->n_inputs; i++)
		if (n->inputs[i] >= 0) {
			cf->in[i] = mem[n->inputs[i]].host;
			cf->in_bytes[i] = g->tensors[n->inputs[i]].bytes;
		}
	for (uint32_t i = 0; i < n->n_outputs; i++)
		if (n->outputs[i] >= 0) {
			cf->out[i] = mem[n->outputs[i]].host;
			cf->out_bytes[i] = g->tensors[n->outputs[i]].bytes;
		}
	ret = cf->op == HO_CF_IF     ? cf_prep_if(g, n, mem, cf, err)
	      : cf->op == HO_CF_LOOP ? cf_prep_loop(g, n, mem, cf, err)
				     : cf_prep_scan(g, n, mem, cf, err);
	if (ret) {
		ho_rt_control_free(cf);
		*out = NULL;
	}
	return ret;
}

static void cf_copy(void *dst, const void *src, uint64_t bytes)
{
	if (bytes && dst != src)
		memmove(dst, src, bytes);
}

/* Run a subplan, its outer tensors fed first; its failure named after the node. */
static int cf_run(const struct ho_control *cf, const struct ho_cf_sub *s, const char *what,
		  struct ho_error *err)
{
	struct ho_error e = {0};
	int ret;

	ret = ho_rt_run(s->rt, &e);
	if (ret)
		return ho_err(err, ret, "node '%s' (%s): its %s: %s", cf->n->name, cf->n->op_type,
			      what, e.msg);
	return 0;
}

static void cf_feed(const struct ho_cf_sub *s)
{
	for (uint32_t i = 0; i < s->n_feed; i++)
		cf_copy(s->feed[i].inner, s->feed[i].outer, s->feed[i].bytes);
}

static int cf_run_if(struct ho_control *cf, struct ho_error *err)
{
	const struct ho_cf_sub *s = &cf->sub[*(const uint8_t *)cf->in[0] ? 0 : 1];

	cf_feed(s);
	if (cf_run(cf, s, s == cf->sub ? "then_branch" : "else_branch", err))
		return err->code;
	for (uint32_t k = 0; k < cf->n->n_outputs; k++)
		if (cf->out[k])
			cf_copy(cf->out[k], s->out[k], cf->out_bytes[k]);
	return 0;
}

static int cf_extent(const struct ho_control *cf, struct ho_error *err)
{
	return ho_err(err, -ERANGE,
		      "node '%s' (%s): the loop ran another number of iterations than the plan's "
		      "%lld: plan for these inputs' values",
		      cf->n->name, cf->n->op_type, (long long)cf->steps);
}

static int cf_run_loop(struct ho_control *cf, struct ho_error *err)
{
	const struct ho_node *n = cf->n;
	const struct ho_cf_sub *s = &cf->sub[0];
	uint32_t n_carried = n->n_inputs - 2;
	int64_t trips = cf->in[0] ? *(const int64_t *)cf->in[0] : INT64_MAX, it = 0;
	bool cond = cf->in[1] ? *(const uint8_t *)cf->in[1] : true;

	/* the node's outputs hold the state between iterations: the body's outputs may be
	 * its inputs' bytes (an Identity), so each step goes through them */
	for (uint32_t k = 0; k < n_carried; k++)
		cf_copy(cf->out[k], cf->in[2 + k], cf->in_bytes[2 + k]);
	cf_feed(s);
	for (; it < trips && cond; it++) {
		if (cf->steps >= 0 && it >= cf->steps)
			return cf_extent(cf, err);
		if (s->in[0])
			*(int64_t *)s->in[0] = it;
		if (s->in[1])
			*(uint8_t *)s->in[1] = cond;
		for (uint32_t k = 0; k < n_carried; k++)
			if (s->in[2 + k])
				cf_copy(s->in[2 + k], cf->out[k], cf->in_bytes[2 + k]);
		if (cf_run(cf, s, "body", err))
			return err->code;
		cond = *(const uint8_t *)s->out[0];
		for (uint32_t k = 0; k < n->n_outputs; k++) {
			uint64_t b = k < n_carried ? cf->out_bytes[k]
						   : cf->out_bytes[k] / (uint64_t)cf->steps;

			if (cf->out[k])
				cf_copy((char *)cf->out[k] + (k < n_carried ? 0 : (uint64_t)it * b),
					s->out[1 + k], b);
		}
	}
	if (cf->steps >= 0 && it != cf->steps)
		return cf_extent(cf, err);
	return 0;
}

/* Scan: copy block idx of each of outer runs [o0, o1) between a tensor and a slice. */
static void cf_slice(char *whole, char *slice, int64_t o0, int64_t o1, int64_t len, int64_t idx,
		     int64_t inner, bool gather)
{
	for (int64_t o = o0; o < o1; o++) {
		char *w = whole + (o * len + idx) * inner, *p = slice + (o - o0) * inner;

		if (gather)
			memcpy(p, w, (size_t)inner);
		else
			memcpy(w, p, (size_t)inner);
	}
}

static int cf_run_scan(struct ho_control *cf, struct ho_error *err)
{
	const struct ho_scan *sc = &cf->scan;
	const struct ho_cf_sub *s = &cf->sub[0];
	int64_t T = cf->steps, B = cf->batch;

	cf_feed(s);
	for (int64_t b = 0; b < B; b++) {
		/* the state: a batch entry of it (opset 8), or all of it */
		for (uint32_t k = 0; k < sc->n_state; k++)
			cf_slice(cf->in[sc->first + k], s->in[k], 0, 1, B, b, cf->in_inner[k],
				 true);
		for (int64_t t = 0; t < T; t++) {
			for (uint32_t j = 0; j < sc->n_in; j++) {
				uint32_t k = sc->n_state + j;
				int64_t o0 = sc->batched ? b : 0,
					o1 = sc->batched ? b + 1 : cf->in_outer[k];

				cf_slice(cf->in[sc->first + k], s->in[k], o0, o1, T,
					 sc->in_reverse[j] ? T - 1 - t : t, cf->in_inner[k], true);
			}
			if (cf_run(cf, s, "body", err))
				return err->code;
			for (uint32_t k = 0; k < sc->n_state; k++)
				cf_copy(s->in[k], s->out[k], cf->in_inner[k]);
			for (uint32_t j = 0; j < sc->n_out; j++) {
				uint32_t k = sc->n_state + j;
				int64_t o0 = sc->batched ? b : 0,
					o1 = sc->batched ? b + 1 : cf->out_outer[k];

				cf_slice(cf->out[k], s->out[k], o0, o1, T,
					 sc->out_reverse[j] ? T - 1 - t : t, cf->out_inner[k],
					 false);
			}
		}
		for (uint32_t k = 0; k < sc->n_state; k++)
			cf_slice(cf->out[k], s->in[k], 0, 1, B, b, cf->out_inner[k], false);
	}
	return 0;
}

int ho_rt_control_run(struct ho_control *cf, struct ho_error *err)
{
	return cf->op == HO_CF_IF     ? cf_run_if(cf, err)
	       : cf->op == HO_CF_LOOP ? cf_run_loop(cf, err)
				      : cf_run_scan(cf, err);
}
