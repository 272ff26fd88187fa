// SPDX-License-Identifier: MIT
/*
 * heteroopt schedule --resume OLD.json: the old front's members as plans
 * for the new search's first population (after a new profile, say).  The
 * old schedule must be of the same tasks on devices of the same names; a
 * member whose order is no longer topological is refused, not repaired.
 */
#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "heteroopt/sched.h"

static int resume_fail(const char *path, json_t *root, const char *what)
{
	cli_error("--resume %s: %s", path, what);
	json_decref(root);
	return -1;
}

int cli_resume(const char *path, const struct ho_problem *p, struct ho_plan ***out, uint32_t *n)
{
	json_error_t je;
	json_t *root = json_load_file(path, 0, &je), *tasks, *devs, *front, *m;
	int map[HO_MAX_DEVICES];
	struct ho_sim *sim = NULL;
	struct ho_plan **plans;
	char msg[512];
	size_t i;

	*out = NULL;
	*n = 0;
	if (!root) {
		cli_error("--resume %s:%d: %s", path, je.line, je.text);
		return -1;
	}
	tasks = json_object_get(root, "tasks");
	devs = json_object_get(root, "devices");
	front = json_object_get(root, "front");
	if (!json_is_array(tasks) || !json_is_array(devs) || !json_is_array(front))
		return resume_fail(path, root, "not a schedule (no tasks, devices and front)");
	if (json_array_size(tasks) != p->n) {
		snprintf(msg, sizeof(msg), "made for %zu tasks, this problem has %u",
			 json_array_size(tasks), p->n);
		return resume_fail(path, root, msg);
	}
	for (i = 0; i < p->n; i++) {
		const char *name =
		    json_string_value(json_object_get(json_array_get(tasks, i), "name"));

		if (!name || strcmp(name, p->task_name[i])) {
			snprintf(msg, sizeof(msg), "task %zu is '%s' there, '%s' here", i,
				 name ? name : "?", p->task_name[i]);
			return resume_fail(path, root, msg);
		}
	}
	if (json_array_size(devs) > HO_MAX_DEVICES)
		return resume_fail(path, root, "too many devices");
	for (i = 0; i < json_array_size(devs); i++) {
		const char *name = json_string_value(json_array_get(devs, i));

		map[i] = -1;
		for (uint32_t d = 0; name && d < p->d; d++)
			if (!strcmp(name, p->dev_name[d]))
				map[i] = (int)d;
	}
	plans = calloc(json_array_size(front) + 1, sizeof(*plans));
	sim = ho_sim_new(p);
	if (!plans || !sim) {
		free(plans);
		ho_sim_free(sim);
		return resume_fail(path, root, "out of memory");
	}
	json_array_foreach(front, i, m)
	{
		json_t *dv = json_object_get(m, "device"), *ord = json_object_get(m, "order");
		struct ho_plan *pl = ho_plan_new(p->n);
		struct ho_eval ev;
		bool ok = pl && json_array_size(dv) == p->n && json_array_size(ord) == p->n;

		for (uint32_t t = 0; ok && t < p->n; t++) {
			json_int_t d = json_integer_value(json_array_get(dv, t)),
				   o = json_integer_value(json_array_get(ord, t));

			ok = json_is_integer(json_array_get(dv, t)) && d >= 0 &&
			     (size_t)d < json_array_size(devs) && map[d] >= 0 &&
			     json_is_integer(json_array_get(ord, t)) && o >= 0 && o < p->n;
			if (ok) {
				pl->assign[t] = (uint16_t)map[d];
				pl->order[t] = (uint32_t)o;
			}
		}
		/* the simulator refuses an order that repeats a task or breaks a dependency */
		if (!ok || ho_sim_eval(sim, pl->assign, pl->order, NULL, &ev, NULL)) {
			ho_plan_free(pl);
			for (uint32_t k = 0; k < *n; k++)
				ho_plan_free(plans[k]);
			free(plans);
			ho_sim_free(sim);
			snprintf(msg, sizeof(msg),
				 "front[%zu]: not a plan of this problem (devices of another box, "
				 "or an order that is not topological)",
				 i);
			return resume_fail(path, root, msg);
		}
		plans[(*n)++] = pl;
	}
	ho_sim_free(sim);
	json_decref(root);
	*out = plans;
	return 0;
}
