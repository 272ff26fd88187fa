// SPDX-License-Identifier: MIT
/*
 * A command's inputs as the user gives them (--input NAME=FILE.npy, --bind NAME): every
 * input of the model named once, each file of the input's type, bound to the graph (its
 * shape, or its values for --bind) before shapes are inferred.  run runs on them;
 * schedule measures its pick's error on them.
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "cli.h"
#include "heteroopt/npy.h"

/* Every name an input of g, and every input of g named. */
static int inputs_check(const struct ho_graph *g, const char *cmd, char (*names)[256], int n)
{
	for (int i = 0; i < n; i++) {
		int32_t tid = ho_graph_find_tensor(g, names[i]);

		if (tid < 0 || !(g->tensors[tid].flags & HO_T_INPUT)) {
			char list[512] = "";

			for (uint32_t k = 0; k < g->n_inputs; k++)
				snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s",
					 k ? ", " : "", g->tensors[g->inputs[k]].name);
			cli_error("%s: the model has no input named '%s' (its inputs: %s)", cmd,
				  names[i], list);
			return -ENOENT;
		}
	}
	for (uint32_t k = 0; k < g->n_inputs; k++) {
		const char *name = g->tensors[g->inputs[k]].name;
		int i = 0;

		while (i < n && strcmp(names[i], name))
			i++;
		if (i == n) {
			cli_error("%s: input '%s' was not given (--input %s=FILE.npy)", cmd, name,
				  name);
			return -EINVAL;
		}
	}
	return 0;
}

/* File i read into in[i], of its input's type and rank, and bound to g. */
static int inputs_bind(struct ho_graph *g, const struct cli_list *bind, const char *cmd,
		       const char *name, const char *file, struct ho_npy *in)
{
	struct ho_error err = {0};
	int32_t tid = ho_graph_find_tensor(g, name);
	int want = tid >= 0 ? g->tensors[tid].dtype : HO_DT_FLOAT;
	bool by_value = false;

	if (ho_npy_read(file, in, &err)) {
		cli_error("%s: %s", cmd, err.msg);
		return -EINVAL;
	}
	if (ho_npy_dtype(in->descr) != want) {
		cli_error("%s: %s: dtype %s; input '%s' is %s (%s)", cmd, file, in->descr, name,
			  ho_dtype_name(want),
			  ho_npy_descr(want) ? ho_npy_descr(want) : "no .npy type");
		return -EINVAL;
	}
	if (in->ndim > HO_MAX_RANK) {
		cli_error("%s: %s: rank %d is more than %d", cmd, file, in->ndim, HO_MAX_RANK);
		return -EINVAL;
	}
	for (int b = 0; bind && b < bind->n; b++)
		by_value |= !strcmp(bind->v[b], name);
	if (by_value ? ho_graph_bind_value(g, name, want, in->shape, in->ndim, in->data, in->nbytes,
					   &err)
		     : ho_graph_bind_input(g, name, in->shape, in->ndim, &err)) {
		cli_error("%s: %s", cmd, err.msg);
		return -EINVAL;
	}
	return 0;
}

int cli_inputs_read(struct ho_graph *g, const struct cli_list *inputs, const struct cli_list *bind,
		    const char *cmd, char (*name)[256], struct ho_npy *in)
{
	for (int i = 0; i < inputs->n; i++) {
		const char *eq = strchr(inputs->v[i], '=');

		if (!eq || eq == inputs->v[i] || !eq[1] ||
		    (size_t)(eq - inputs->v[i]) >= sizeof(name[i])) {
			cli_error("%s: --input '%s': expected NAME=FILE.npy", cmd, inputs->v[i]);
			return 2;
		}
		memcpy(name[i], inputs->v[i], (size_t)(eq - inputs->v[i]));
		name[i][eq - inputs->v[i]] = '\0';
	}
	if (inputs_check(g, cmd, name, inputs->n))
		return 1;
	for (int i = 0; i < inputs->n; i++)
		if (inputs_bind(g, bind, cmd, name[i], strchr(inputs->v[i], '=') + 1, &in[i]))
			return 1;
	for (int b = 0; bind && b < bind->n; b++) {
		bool given = false;

		for (int i = 0; i < inputs->n; i++)
			given |= !strcmp(bind->v[b], name[i]);
		if (!given) {
			cli_error("%s: --bind %s: give its values with --input %s=FILE.npy", cmd,
				  bind->v[b], bind->v[b]);
			return 1;
		}
	}
	return 0;
}
