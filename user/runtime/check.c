// SPDX-License-Identifier: MIT
/*
 * What the runtime cannot run, asked of the host's backend before planning:
 * every node's kernel prepared over scratch buffers (constants hold their
 * real bytes, which some kernels read while preparing; everything else
 * shares one scratch block nothing reads), so that `heteroopt inspect`
 * lists every refusal at once instead of the first one `run` would meet.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "exec_priv.h"

static bool ho_check_known(const struct ho_graph *g, const struct ho_node *n)
{
	for (uint32_t k = 0; k < n->n_inputs + n->n_outputs; k++) {
		int32_t t = k < n->n_inputs ? n->inputs[k] : n->outputs[k - n->n_inputs];

		if (t >= 0 && ho_shape_numel(&g->tensors[t].shape) < 0)
			return false;
	}
	return true;
}

int ho_rt_check(const struct ho_graph *g, ho_rt_refusal_fn fn, void *arg, struct ho_error *err)
{
	const struct ho_backend_ops *ops = ho_backend_host();
	struct ho_rt_device dev = {.name = "check", .threads = 1, .numa_node = -1};
	struct ho_backend *be = NULL;
	void **buf = calloc(g->n_tensors + 1, sizeof(void *));
	struct ho_mem *mem = calloc(g->n_tensors + 1, sizeof(*mem));
	uint8_t *nchw = calloc(g->n_tensors + 1, 1); /* every tensor planar */
	uint64_t most = 64;
	char *scratch = NULL;
	int refused = 0, ret;

	if (!buf || !nchw || !mem)
		goto nomem;
	for (uint32_t t = 0; t < g->n_tensors; t++)
		most = g->tensors[t].bytes > most ? g->tensors[t].bytes : most;
	if (!(scratch = aligned_alloc(64, (most + 63) & ~63ull)))
		goto nomem;
	for (uint32_t t = 0; t < g->n_tensors; t++) {
		const struct ho_tensor *tt = &g->tensors[t];

		buf[t] = scratch;
		if ((tt->flags & (HO_T_INITIALIZER | HO_T_CONSTANT | HO_T_FOLDED | HO_T_BOUND)) &&
		    tt->bytes) {
			if (!(buf[t] = aligned_alloc(64, (tt->bytes + 63) & ~63ull)))
				goto nomem;
			if (ho_rt_fill_constant(tt, buf[t]))
				memset(buf[t], 0, tt->bytes);
		}
	}
	for (uint32_t t = 0; t < g->n_tensors; t++)
		mem[t].host = buf[t];
	if ((ret = ops->open(&dev, 1, &be, err)))
		goto out;
	for (uint32_t i = 0; i < g->n_nodes; i++) {
		const struct ho_node *n = &g->nodes[g->topo[i]];
		struct ho_kernel *k = NULL;
		struct ho_error e = {0};

		if (!ho_node_is_task(n))
			continue;
		if (!ho_check_known(g, n)) {
			snprintf(e.msg, sizeof(e.msg),
				 "node '%s' (%s): its shapes are not all known", n->name,
				 n->op_type);
		} else if (ho_rt_is_control(n->op_type)) {
			struct ho_control *cf = NULL;

			if (!ho_rt_control_prepare(g, n, mem, 1, &cf, &e)) {
				ho_rt_control_free(cf);
				continue;
			}
		} else if (!ops->prepare(be, g, (uint32_t)g->topo[i], NULL, mem, nchw, &k, &e)) {
			if (k)
				ops->kernel_free(k);
			continue;
		}
		refused++;
		if (fn)
			fn(n, e.msg, arg);
	}
	ret = refused;
	goto out;
nomem:
	ret = ho_err(err, -ENOMEM, "out of memory");
out:
	if (be)
		ops->close(be);
	for (uint32_t t = 0; buf && t < g->n_tensors; t++)
		if (buf[t] != scratch)
			free(buf[t]);
	free(scratch);
	free(buf);
	free(mem);
	free(nchw);
	return ret;
}
