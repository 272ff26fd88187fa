// SPDX-License-Identifier: MIT
/*
 * --bound NAME=N: the most a tensor whose extents a run decides may hold.
 * schedule and inspect price and list those tensors at their bounds; run
 * fails a run whose tensor passes its bound, naming both.
 */
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"

int cli_bounds_parse(const struct cli_list *l, struct ho_extent_bound **out)
{
	struct ho_extent_bound *b = calloc((size_t)l->n + 1, sizeof(*b));
	struct ho_error err = {0};

	*out = b;
	if (!b) {
		cli_error("out of memory");
		return -1;
	}
	for (int i = 0; i < l->n; i++)
		if (ho_parse_bound_arg(l->v[i], &b[i], &err)) {
			cli_error("%s", err.msg);
			return -1;
		}
	return 0;
}

void cli_bounds_free(struct ho_extent_bound *b, int n)
{
	for (int i = 0; b && i < n; i++)
		free((char *)b[i].tensor);
	free(b);
}

int cli_bounds_price(struct ho_graph *g, const struct cli_list *l)
{
	struct ho_extent_bound *b;
	struct ho_error err = {0};
	int n = -1;

	if (!cli_bounds_parse(l, &b)) {
		n = ho_graph_infer_bounds(g, b, (uint32_t)l->n, &err);
		if (n < 0)
			cli_error("%s", err.msg);
	}
	cli_bounds_free(b, l->n);
	return n;
}

static void cli_bounds_list(const struct ho_graph *g, const char *indent, int *left)
{
	for (uint32_t t = 0; t < g->n_tensors && *left; t++) {
		const struct ho_tensor *x = &g->tensors[t];
		char dims[160];
		int len = 0;

		if (!(x->flags & HO_T_AT_BOUND))
			continue;
		for (int d = 0; d < x->shape.rank && len < (int)sizeof(dims) - 24; d++)
			len += snprintf(dims + len, sizeof(dims) - (size_t)len, "%s%lld",
					d ? ", " : "", (long long)x->shape.dim[d]);
		printf("%s'%s' (%s): at most [%s]: %s\n", indent, x->name,
		       x->producer >= 0 ? g->nodes[x->producer].op_type : "input", dims,
		       ho_bound_how(g, x));
		--*left;
	}
	for (uint32_t i = 0; i < g->n_nodes && *left; i++)
		for (uint32_t s = 0; s < g->nodes[i].n_subgraphs; s++)
			cli_bounds_list(g->nodes[i].subgraphs[s], indent, left);
}

void cli_bounds_print(const struct ho_graph *g, const char *indent, int most)
{
	cli_bounds_list(g, indent, &most);
}
