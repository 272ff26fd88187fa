// SPDX-License-Identifier: MIT
/* What run and serve share: a schedule loaded for the runtime, as --schedule, --box and
 * --pick say, with a warning where it was measured on another machine. */
#include <heteroopt/runtime.h>

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
