// SPDX-License-Identifier: MIT
/*
 * What a backend cannot run, asked before planning: each node's kernel
 * prepared over scratch memory (constants hold their real bytes, which some
 * kernels read while preparing; everything else shares one scratch block
 * nothing reads).  `heteroopt inspect` lists every refusal of the host's
 * backend at once instead of the first one `run` would meet; the scheduler
 * asks every box device's backend which nodes it takes (ho_rt_box_takes),
 * so that no node is placed where its kernel would be refused.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "exec_priv.h"
#include "heteroopt/box.h"
#include "heteroopt/sched.h"

void ho_scratch_free(struct ho_scratch_mem *s, const struct ho_graph *g)
{
	for (uint32_t t = 0; s->own && t < g->n_tensors; t++)
		free(s->own[t]);
	free(s->own);
	free(s->mem);
	free(s->scratch);
}

int ho_scratch_new(struct ho_scratch_mem *s, const struct ho_graph *g, bool copy,
		   struct ho_error *err)
{
	uint64_t most = 64;

	*s = (struct ho_scratch_mem){0};
	s->mem = calloc(g->n_tensors + 1, sizeof(*s->mem));
	s->own = calloc(g->n_tensors + 1, sizeof(void *));
	for (uint32_t t = 0; t < g->n_tensors; t++)
		most = g->tensors[t].bytes > most ? g->tensors[t].bytes : most;
	s->scratch = aligned_alloc(64, (most + 63) & ~63ull);
	if (!s->mem || !s->own || !s->scratch)
		goto nomem;
	for (uint32_t t = 0; t < g->n_tensors; t++) {
		const struct ho_tensor *tt = &g->tensors[t];

		s->mem[t].host = s->scratch;
		if (!(tt->flags & (HO_T_INITIALIZER | HO_T_CONSTANT | HO_T_FOLDED | HO_T_BOUND)) ||
		    !tt->bytes)
			continue;
		if (!copy && ho_tensor_holds_bytes(tt)) { /* a check only reads */
			s->mem[t].host = (void *)tt->data;
			continue;
		}
		if (!(s->own[t] = aligned_alloc(64, (tt->bytes + 63) & ~63ull)))
			goto nomem;
		if (ho_rt_fill_constant(tt, s->own[t]))
			memset(s->own[t], 0, tt->bytes);
		s->mem[t].host = s->own[t];
	}
	return 0;
nomem:
	ho_scratch_free(s, g);
	*s = (struct ho_scratch_mem){0};
	return ho_err(err, -ENOMEM, "out of memory");
}

static bool ho_check_known(const struct ho_graph *g, const struct ho_node *n)
{
	if (n->flags & HO_N_RUN_DECIDES) /* its shapes only bounds so far */
		return false;
	for (uint32_t k = 0; k < n->n_inputs + n->n_outputs; k++) {
		int32_t t = k < n->n_inputs ? n->inputs[k] : n->outputs[k - n->n_inputs];

		if (t >= 0 && ho_shape_numel(&g->tensors[t].shape) < 0)
			return false;
	}
	return true;
}

/* A Loop whose carried value's shape no value before it decides: known going in, not out. */
static bool ho_loop_grows(const struct ho_graph *g, const struct ho_node *n)
{
	if (strcmp(n->op_type, "Loop"))
		return false;
	for (uint32_t k = 0; k + 2 < n->n_inputs && k < n->n_outputs; k++) {
		int32_t in = n->inputs[k + 2], out = n->outputs[k];

		if (in >= 0 && out >= 0 && ho_shape_numel(&g->tensors[in].shape) >= 0 &&
		    ho_shape_numel(&g->tensors[out].shape) < 0)
			return true;
	}
	return false;
}

/*
 * What a backend with no check() takes: each node's kernel prepared for
 * real on one thread, over scratch memory that holds the constants, the
 * tensors in the layouts a plan gives them; takes (NULL: not asked) gets
 * the answer per node, km (NULL: not asked) its kernel's own memory, fn
 * each refusal.  How many are refused, or -errno.
 */
static int ho_prepared_nodes(const struct ho_backend_ops *ops, const struct ho_graph *g,
			     bool *takes, struct ho_kernel_memory *km, ho_rt_refusal_fn fn,
			     void *arg, struct ho_error *err)
{
	struct ho_rt_device dev = {.name = "check", .threads = 1, .numa_node = -1};
	struct ho_backend *be = NULL;
	uint8_t *nhwc = calloc(g->n_tensors + 1, 1);
	const struct ho_backend_ops **node_ops = calloc(g->n_nodes + 1, sizeof(*node_ops));
	struct ho_scratch_mem s;
	int refused = 0, ret;

	if (!nhwc || !node_ops) {
		free(nhwc);
		free(node_ops);
		return ho_err(err, -ENOMEM, "out of memory");
	}
	if (km) /* a backend without kernel_memory has none of its own */
		memset(km, 0, g->n_nodes * sizeof(*km));
	/* tensors in the layouts a plan with every node on this backend gives them */
	for (uint32_t i = 0; i < g->n_nodes; i++)
		if (ho_node_is_task(&g->nodes[i]) && ho_check_known(g, &g->nodes[i]))
			node_ops[i] = ops;
	ho_rt_layouts_over(g, node_ops, nhwc);
	free(node_ops);
	if ((ret = ho_scratch_new(&s, g, true, err))) {
		free(nhwc);
		return ret;
	}
	if ((ret = ops->open(&dev, 1, &be, err)))
		goto out;
	for (uint32_t i = 0; i < g->n_nodes; i++) {
		uint32_t id = (uint32_t)g->topo[i];
		const struct ho_node *n = &g->nodes[id];
		struct ho_kernel *k = NULL;
		struct ho_error e = {0};

		if (takes)
			takes[id] = true;
		if (!ho_node_is_task(n))
			continue;
		if (!ho_check_known(g, n)) {
			/* planned at run time, once its shapes are known (tail.c), and checked
			 * then: many (Shape, Range, Cast) fold away once they are */
			if (!ho_loop_grows(g, n))
				continue;
			snprintf(e.msg, sizeof(e.msg),
				 "node '%s' (%s): a value it carries changes shape from one "
				 "iteration to the next",
				 n->name, n->op_type);
		} else if (ho_rt_is_control(n->op_type)) {
			struct ho_control *cf = NULL;

			if (!ho_rt_control_prepare(g, n, s.mem, 1, &cf, &e)) {
				ho_rt_control_free(cf);
				continue;
			}
		} else if (!ops->prepare(be, g, id, NULL, s.mem, nhwc, &k, &e)) {
			if (k && km && ops->kernel_memory)
				ops->kernel_memory(k, &km[id]);
			if (km && ops->takes_over)
				km[id].taken = ops->takes_over(g, id);
			if (k)
				ops->kernel_free(k);
			continue;
		}
		if (takes)
			takes[id] = false;
		refused++;
		if (fn)
			fn(n, e.msg, arg);
	}
	ret = refused;
	ops->close(be);
out:
	ho_scratch_free(&s, g);
	free(nhwc);
	return ret;
}

int ho_rt_check(const struct ho_graph *g, ho_rt_refusal_fn fn, void *arg, struct ho_error *err)
{
	return ho_prepared_nodes(ho_backend_host(), g, NULL, NULL, fn, arg, err);
}

/* Node id of g on ops, over s: 0 or why not.  Control flow is the executor's: taken. */
static int ho_backend_takes(const struct ho_backend_ops *ops, const struct ho_graph *g, uint32_t id,
			    const struct ho_scratch_mem *s, struct ho_error *e)
{
	const struct ho_node *n = &g->nodes[id];

	if (ho_rt_is_control(n->op_type))
		return 0;
	if (!ops->runs(n->op_type))
		return ho_err(e, -EOPNOTSUPP, "node '%s' (%s): the %s backend has no kernel for it",
			      n->name, n->op_type, ops->name);
	if (!ops->check)
		return 0;
	return ops->check(g, id, NULL, s->mem, e);
}

static int ho_nodes_of(const struct ho_backend_ops *ops, const struct ho_graph *g,
		       const struct ho_scratch_mem *s, bool *takes, ho_rt_refusal_fn fn, void *arg)
{
	int refused = 0;

	for (uint32_t i = 0; i < g->n_nodes; i++) {
		struct ho_error e = {0};

		takes[i] = !ho_node_is_task(&g->nodes[i]) || !ho_backend_takes(ops, g, i, s, &e);
		if (takes[i])
			continue;
		refused++;
		if (fn)
			fn(&g->nodes[i], e.msg, arg);
	}
	return refused;
}

/* The backend box device d runs on; NULL: one not built here. */
static const struct ho_backend_ops *ho_box_backend(const struct ho_box *box, uint32_t d)
{
	const char *name = ho_rt_backend_for(box->dev[d].kind, box->dev[d].backend);

	return name ? ho_backend_find(name) : NULL;
}

int ho_rt_backend_nodes(const char *backend, const struct ho_graph *g, bool *takes,
			ho_rt_refusal_fn fn, void *arg, struct ho_error *err)
{
	const struct ho_backend_ops *ops = ho_backend_find(backend);
	struct ho_scratch_mem s = {0}; /* what a backend's check reads; none without one */
	int ret;

	if (!ops)
		return ho_err(err, -ENOENT, "no backend '%s' is built in", backend);
	if (!ops->check)
		return ho_prepared_nodes(ops, g, takes, NULL, fn, arg, err);
	if ((ret = ho_scratch_new(&s, g, false, err)))
		return ret;
	ret = ho_nodes_of(ops, g, &s, takes, fn, arg);
	if (s.mem)
		ho_scratch_free(&s, g);
	return ret;
}

/* A refusal kept per node (the first), for the nodes no device takes. */
struct ho_box_why {
	const struct ho_graph *g;
	char (*why)[sizeof(((struct ho_error *)0)->msg)];
};

static void ho_keep_why(const struct ho_node *n, const char *why, void *arg)
{
	struct ho_box_why *w = arg;
	char *at = w->why[n - w->g->nodes];

	if (!*at)
		snprintf(at, sizeof(w->why[0]), "%s", why);
}

int ho_rt_box_takes(const struct ho_box *box, const struct ho_graph *g, uint64_t *devices,
		    struct ho_kernel_memory *km, ho_rt_refusal_fn fn, void *arg,
		    struct ho_error *err)
{
	bool *takes = calloc(g->n_nodes + 1, sizeof(bool)),
	     *prepared = calloc(g->n_nodes + 1, sizeof(bool));
	struct ho_kernel_memory *own = km ? calloc(g->n_nodes + 1, sizeof(*own)) : NULL;
	struct ho_box_why w = {g, fn ? calloc(g->n_nodes + 1, sizeof(w.why[0])) : NULL};
	struct ho_scratch_mem s = {0};
	uint64_t answered = 0; /* devices whose bits are in: one question per backend */
	/* backends with the same kernels (cpu, emu) answer alike: one preparing pass */
	const struct ho_backend_ops *asked = NULL;
	int ret = takes && prepared && (!fn || w.why) && (!km || own)
		      ? 0
		      : ho_err(err, -ENOMEM, "out of memory");
	ho_rt_refusal_fn keep = fn ? ho_keep_why : NULL;

	memset(devices, 0, g->n_nodes * sizeof(*devices));
	if (km)
		memset(km, 0, (size_t)g->n_nodes * box->n_devices * sizeof(*km));
	for (uint32_t d = 0; d < box->n_devices && !ret; d++) {
		const struct ho_backend_ops *ops = ho_box_backend(box, d);

		if (answered >> d & 1)
			continue;
		if (ops && ops->check && !s.mem && (ret = ho_scratch_new(&s, g, false, err)))
			break;
		/* a backend not built here: the box's op lists decide */
		if (ops && ops->check) {
			ho_nodes_of(ops, g, &s, takes, keep, &w);
		} else if (ops) {
			if ((!asked || asked->prepare != ops->prepare ||
			     asked->runs != ops->runs) &&
			    (ret = ho_prepared_nodes(ops, g, prepared, own, keep, &w, err)) >= 0) {
				asked = ops;
				ret = 0;
			}
			if (ret < 0)
				break;
			memcpy(takes, prepared, g->n_nodes * sizeof(bool));
		}
		for (uint32_t e = d; e < box->n_devices; e++) {
			if (ho_box_backend(box, e) != ops)
				continue;
			answered |= 1ull << e;
			for (uint32_t i = 0; i < g->n_nodes; i++) {
				devices[i] |= (uint64_t)(!ops || takes[i]) << e;
				/* what this machine's kernels hold: devices that prepare them */
				if (km && ops && !ops->check)
					km[(size_t)i * box->n_devices + e] = own[i];
				if (km && ops && ops->folds_transposes)
					km[(size_t)i * box->n_devices + e].through =
					    ops->folds_transposes(g, i);
			}
		}
	}
	for (uint32_t i = 0; fn && !ret && i < g->n_nodes; i++)
		if (!devices[i] && ho_node_is_task(&g->nodes[i]))
			fn(&g->nodes[i], w.why[i], arg);
	if (s.mem)
		ho_scratch_free(&s, g);
	free(w.why);
	free(own);
	free(prepared);
	free(takes);
	return ret;
}

uint64_t ho_rt_box_layouts(const struct ho_box *box, const struct ho_graph *g, uint8_t *layout)
{
	static const uint8_t of[] = {[HO_BE_PLAIN] = HO_LAYOUT_PLAIN,
				     [HO_BE_ANY_LAYOUT] = HO_LAYOUT_ANY,
				     [HO_BE_SAME_LAYOUT] = HO_LAYOUT_SAME};
	uint32_t nd = box->n_devices;
	uint64_t mask = 0;
	bool binary;

	for (uint32_t d = 0; d < nd; d++) {
		const struct ho_backend_ops *ops = ho_box_backend(box, d);

		if (ops && ops->layout("Conv", &binary) == HO_BE_ANY_LAYOUT)
			mask |= 1ull << d;
		for (uint32_t i = 0; layout && i < g->n_nodes; i++)
			layout[(size_t)i * nd + d] =
			    ops ? of[ops->layout(g->nodes[i].op_type, &binary)] : HO_LAYOUT_PLAIN;
	}
	return mask;
}

/* Device d's backend ops takes head's kernel with the links up to upto (ho_chain_links). */
static bool ho_box_fuses(const struct ho_backend_ops *ops, const struct ho_graph *g, uint32_t head,
			 const int32_t link[4], int upto, struct ho_scratch_mem *s)
{
	struct ho_error e;

	return !ops->check(
	    g, head,
	    &(struct ho_fusion){link[0], upto ? link[3] : -1, upto ? link[1] : -1, 0, NULL, NULL},
	    s->mem, &e);
}

int ho_rt_box_folds(const struct ho_box *box, const struct ho_graph *g, uint64_t *folds,
		    struct ho_error *err)
{
	struct ho_scratch_mem s = {0};
	int ret = 0;

	memset(folds, 0xff, g->n_nodes * sizeof(*folds));
	for (uint32_t d = 0; d < box->n_devices && !ret; d++) {
		const struct ho_backend_ops *ops = ho_box_backend(box, d);
		uint64_t same = 0; /* the devices on this backend: one question for all */

		for (uint32_t e = 0; e < box->n_devices; e++)
			same |= (uint64_t)(ho_box_backend(box, e) == ops) << e;
		/* asked already (a device before d on it), or nothing to ask */
		if (!ops || !ops->check || (same & ((1ull << d) - 1)))
			continue;
		if (!s.mem && (ret = ho_scratch_new(&s, g, false, err)))
			break;
		for (uint32_t h = 0; h < g->n_nodes; h++) {
			int32_t link[4];
			bool first, rest;

			ho_chain_links(g, h, link);
			/* a MatMul's Transpose: its kernel's own answer (folds_transposes) */
			if (link[3] >= 0 && link[3] == ho_matmul_out_through(g, h))
				continue;
			first = link[0] < 0 || ho_box_fuses(ops, g, h, link, 0, &s);
			rest = first && (link[1] >= 0 || link[3] >= 0) &&
			       ho_box_fuses(ops, g, h, link, 1, &s);
			if (link[0] >= 0 && !first)
				folds[link[0]] &= ~same;
			for (int k = 1; k < 4; k++)
				if (link[k] >= 0 && !rest)
					folds[link[k]] &= ~same;
		}
	}
	if (s.mem)
		ho_scratch_free(&s, g);
	return ret;
}

bool ho_rt_takes_fused(const struct ho_rt *rt, struct ho_scratch_mem *s, uint32_t i, int32_t bn,
		       int32_t post, int32_t sum)
{
	const struct ho_backend_ops *ops = rt->dev[rt->node_dev[i]].ops;
	struct ho_error e;

	if (!ops->check)
		return true;
	if (!s->mem && ho_scratch_new(s, rt->g, false, &e))
		return false;
	return !ops->check(rt->g, i, &(struct ho_fusion){bn, post, sum, 0, NULL, NULL}, s->mem, &e);
}
