// SPDX-License-Identifier: MIT
/* Where nodes go, both ways: the problem schedule, report and calibrate search, placing no node
 * where the box's backends would refuse its kernel; and what run and serve share, a schedule
 * loaded for the runtime as --schedule, --box and --pick say, with a warning where it was
 * measured on another machine. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include <heteroopt/box.h>
#include <heteroopt/runtime.h>
#include <heteroopt/sched.h>

#include "cli.h"

int cli_placement(const char *schedule, const char *box, unsigned long long pick, const char *model,
		  const struct ho_graph *g, struct ho_rt_placement **pl, struct ho_error *err)
{
	struct ho_rt_schedule_opts so = {
	    .pick = pick == ~0ull ? -1 : (int)pick, .box_path = box, .model_path = model};
	int ret = ho_rt_schedule_load(schedule, &so, g, pl, err);

	if (!ret)
		cli_warn_machine(schedule, "schedule");
	return ret;
}

/* The nodes no device of the box takes: how many, and the first one's reason. */
struct refused {
	int n;
	char first[256];
};

static void refused_node(const struct ho_node *n, const char *why, void *arg)
{
	struct refused *r = arg;

	(void)n;
	if (!r->n++)
		snprintf(r->first, sizeof(r->first), "%s", why);
}

int cli_problem(const struct ho_graph *g, const struct ho_box *box, const struct ho_profile *prof,
		struct ho_problem **out, struct ho_error *err)
{
	uint64_t *takes = malloc((g->n_nodes + 1) * sizeof(uint64_t));
	struct ho_kernel_memory *km = calloc((size_t)g->n_nodes * box->n_devices + 1, sizeof(*km));
	struct refused r = {0};
	int ret = takes && km ? ho_rt_box_takes(box, g, takes, km, refused_node, &r, err)
			      : ho_err(err, -ENOMEM, "out of memory");

	/* one line: schedule never plans what run would refuse; inspect lists them all */
	if (!ret && r.n)
		ret = ho_err(err, -EOPNOTSUPP,
			     "%d node(s) can run on no device of box '%s', the first: %s "
			     "(heteroopt inspect lists every one)",
			     r.n, box->name, r.first);
	uint8_t *layout = ret ? NULL : malloc((size_t)g->n_nodes * box->n_devices + 1);
	uint64_t *folds = ret ? NULL : malloc((g->n_nodes + 1) * sizeof(uint64_t));

	if (!ret && (!layout || !folds))
		ret = ho_err(err, -ENOMEM, "out of memory");
	if (!ret)
		ret = ho_rt_box_folds(box, g, folds, err);
	if (!ret) {
		struct ho_backend_view bv = {takes, layout, ho_rt_box_layouts(box, g, layout), km,
					     folds};

		ret = ho_problem_from_graph_on(g, box, prof, &bv, out, err);
	}
	free(folds);
	free(layout);
	free(km);
	free(takes);
	return ret;
}
