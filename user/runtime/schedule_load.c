// SPDX-License-Identifier: MIT
/*
 * A schedule JSON (Documentation/schedule-format.md) as the executor needs
 * it: a device and a priority per graph node, the predicted timeline, and
 * the box's devices mapped to backends.  The schedule must name exactly the
 * model's runnable nodes, with the same operators, and the box's devices in
 * the same order; anything else is another model's or another box's.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <numa.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "common.h"
#include "heteroopt/box.h"
#include "heteroopt/fingerprint.h"
#include "rt_priv.h"

void ho_rt_placement_free(struct ho_rt_placement *pl)
{
	if (!pl)
		return;
	free(pl->node_device);
	free(pl->node_prio);
	free(pl->node_precision);
	free(pl->node_range);
	free(pl->pred_start);
	free(pl->pred_end);
	free(pl->pred_copy_start);
	free(pl->pred_copy_end);
	free(pl);
}

/*
 * The NUMA node a device's region goes on: the box's numa_node when it says,
 * else the node of a CPU device's first core (libnuma), else a PCI device's
 * (sysfs); -1 when none is known.
 */
static void ho_sched_numa_node(struct ho_rt_device *rd, const struct ho_device *bd)
{
	char path[96];
	FILE *f;

	rd->numa_node = bd->numa_node;
	snprintf(rd->numa_from, sizeof(rd->numa_from),
		 bd->numa_node >= 0 ? "the box's" : "none given");
	if (bd->numa_node >= 0)
		return;
	for (int c = 0; c < 64 * HO_CORE_WORDS; c++)
		if (bd->cores[c / 64] >> (c % 64) & 1) {
			rd->numa_node = numa_available() >= 0 ? numa_node_of_cpu(c) : -1;
			snprintf(rd->numa_from, sizeof(rd->numa_from), "its core %d's", c);
			return;
		}
	if (!*bd->pci)
		return;
	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/numa_node", bd->pci);
	snprintf(rd->numa_from, sizeof(rd->numa_from), "PCI %s's", bd->pci);
	f = fopen(path, "r");
	if (!f || fscanf(f, "%d", &rd->numa_node) != 1)
		rd->numa_node = -1;
	if (f)
		fclose(f);
}

int ho_rt_device_of(const struct ho_box *box, int d, struct ho_rt_device *out)
{
	const struct ho_device *bd = &box->dev[d];
	const char *backend = ho_rt_backend_for(bd->kind, bd->backend);

	memset(out, 0, sizeof(*out));
	snprintf(out->name, sizeof(out->name), "%s", bd->name);
	snprintf(out->backend, sizeof(out->backend), "%s", backend ? backend : bd->backend);
	snprintf(out->platform, sizeof(out->platform), "%s", bd->platform);
	snprintf(out->device, sizeof(out->device), "%s", bd->device);
	snprintf(out->memory, sizeof(out->memory), "%s", bd->memory);
	out->threads = bd->threads;
	memcpy(out->cores, bd->cores, sizeof(out->cores));
	ho_sched_numa_node(out, bd);
	if (bd->p2p_memory)
		snprintf(out->p2p_pci, sizeof(out->p2p_pci), "%s", bd->pci);
	return backend ? 0 : -ENOENT;
}

static int ho_sched_devices(struct ho_rt_placement *pl, json_t *devs, const char *box_path,
			    struct ho_error *err)
{
	struct ho_box *box = NULL;
	int ret = ho_box_load(box_path, &box, err);

	if (ret)
		return ret;
	if (!json_is_array(devs) || json_array_size(devs) != box->n_devices ||
	    box->n_devices > HO_RT_MAX_DEVICES) {
		ret = ho_err(err, -EINVAL,
			     "the schedule's devices are not those of box %s (%u devices)",
			     box_path, box->n_devices);
		goto out;
	}
	pl->n_devices = box->n_devices;
	pl->host = box->host;
	for (uint32_t d = 0; d < box->n_devices; d++) {
		const char *name = json_string_value(json_array_get(devs, d));

		if (!name || strcmp(name, box->dev[d].name)) {
			ret =
			    ho_err(err, -EINVAL,
				   "the schedule's device %u is '%s', box %s has '%s' there: made "
				   "for another box",
				   d, name ? name : "?", box_path, box->dev[d].name);
			goto out;
		}
		if (ho_rt_device_of(box, (int)d, &pl->dev[d])) {
			ret =
			    ho_err(err, -EINVAL,
				   "box %s: device %s runs on backend '%s', which is not built in",
				   box_path, name, box->dev[d].backend);
			goto out;
		}
		pl->in_place[d] = ho_box_in_place(box, (int)d);
		pl->exclusive[d] = ho_box_exclusive(box, (int)d);
	}
	snprintf(pl->box, sizeof(pl->box), "%.255s", box_path);
out:
	ho_box_free(box);
	return ret;
}

/* The graph node of a task, by the task's name; -1 if none. */
static int32_t ho_sched_task_node(json_t *tasks, const int32_t *task_node, json_t *name)
{
	const char *n = json_string_value(name);
	size_t k;
	json_t *tk;

	json_array_foreach(tasks, k, tk)
	{
		const char *tn = json_string_value(json_object_get(tk, "name"));

		if (n && tn && !strcmp(tn, n))
			return task_node[k];
	}
	return -1;
}

/* The tensor node p makes that node c reads; -1 if none. */
static int32_t ho_sched_edge_tensor(const struct ho_graph *g, int32_t p, int32_t c)
{
	for (uint32_t i = 0; p >= 0 && c >= 0 && i < g->nodes[c].n_inputs; i++) {
		int32_t t = g->nodes[c].inputs[i];

		if (t >= 0 && g->tensors[t].producer == p)
			return t;
	}
	return -1;
}

/*
 * A copy of tensor t (-1: none) to device cons from start to end: its
 * first hop takes the bytes on cons when it starts and is done with the
 * producer's when it ends (a staged copy's second hop reads the bounce
 * buffer).
 */
static void ho_sched_copy_at(struct ho_rt_placement *pl, int32_t t, int32_t cons, double start,
			     double end)
{
	double *cs, *ce;

	if (t < 0)
		return;
	cs = &pl->pred_copy_start[(size_t)t * pl->n_devices + (size_t)cons];
	ce = &pl->pred_copy_end[(size_t)t * pl->n_devices + (size_t)cons];
	if (*cs < 0 || start < *cs) {
		*cs = start;
		*ce = end;
	}
}

/* A member's optional precision per task (runtime names) and int8 input ranges. */
static int ho_sched_precisions(struct ho_rt_placement *pl, const struct ho_graph *g, json_t *m,
			       const int32_t *task_node, uint32_t n_tasks, struct ho_error *err)
{
	json_t *prec = json_object_get(m, "precision"), *range = json_object_get(m, "input_range");

	if (!prec && !range)
		return 0;
	if (!json_is_array(prec) || json_array_size(prec) != n_tasks || !json_is_array(range) ||
	    json_array_size(range) != n_tasks)
		return ho_err(err, -EINVAL,
			      "schedule: a member's precision and input_range go together, one "
			      "entry per task (%u)",
			      n_tasks);
	pl->node_precision = calloc(g->n_nodes + 1, 1);
	pl->node_range = malloc((2 * (size_t)g->n_nodes + 1) * sizeof(float));
	if (!pl->node_precision || !pl->node_range)
		return ho_err(err, -ENOMEM, "out of memory");
	for (uint32_t i = 0; i < 2 * g->n_nodes; i++)
		pl->node_range[i] = NAN;
	for (uint32_t t = 0; t < n_tasks; t++) {
		const char *name = json_string_value(json_array_get(prec, t));
		json_t *r = json_array_get(range, t);
		double lo = json_number_value(json_array_get(r, 0)),
		       hi = json_number_value(json_array_get(r, 1));
		uint32_t k = 0;

		while (name && ho_rt_precisions[k] && strcmp(name, ho_rt_precisions[k]))
			k++;
		if (!name || !ho_rt_precisions[k])
			return ho_err(err, -EINVAL, "schedule: task '%s' has precision %s%s%s",
				      g->nodes[task_node[t]].name, name ? "'" : "",
				      name ? name : "that is no string", name ? "'" : "");
		pl->node_precision[task_node[t]] = (uint8_t)k;
		if (json_is_null(r))
			continue;
		if (!json_is_array(r) || json_array_size(r) != 2 || !isfinite(lo) ||
		    !isfinite(hi) || !(lo <= hi) || !json_is_number(json_array_get(r, 0)) ||
		    !json_is_number(json_array_get(r, 1)))
			return ho_err(err, -EINVAL,
				      "schedule: task '%s' has an input_range that is not "
				      "[lo, hi] with lo <= hi",
				      g->nodes[task_node[t]].name);
		pl->node_range[2 * task_node[t]] = (float)lo;
		pl->node_range[2 * task_node[t] + 1] = (float)hi;
	}
	return 0;
}

static int ho_sched_member(struct ho_rt_placement *pl, const struct ho_graph *g, json_t *m,
			   json_t *tasks, const int32_t *task_node, uint32_t n_tasks,
			   struct ho_error *err)
{
	json_t *dev = json_object_get(m, "device"), *order = json_object_get(m, "order"),
	       *st = json_object_get(m, "start_s"), *en = json_object_get(m, "end_s"),
	       *xf = json_object_get(m, "transfers"), *obj = json_object_get(m, "objectives");
	uint64_t used = 0;
	size_t i;
	json_t *v;

	if (!json_is_array(dev) || json_array_size(dev) != n_tasks || !json_is_array(order) ||
	    json_array_size(order) != n_tasks || !json_is_array(st) ||
	    json_array_size(st) != n_tasks || !json_is_array(en) || json_array_size(en) != n_tasks)
		return ho_err(err, -EINVAL,
			      "schedule: front member needs device, order, start_s, end_s of %u "
			      "tasks",
			      n_tasks);
	for (uint32_t t = 0; t < n_tasks; t++) {
		json_int_t d = json_integer_value(json_array_get(dev, t));

		if (!json_is_integer(json_array_get(dev, t)) || d < 0 || d >= pl->n_devices)
			return ho_err(err, -EINVAL, "schedule: task %u has device %lld of %u", t,
				      (long long)d, pl->n_devices);
		pl->node_device[task_node[t]] = (int32_t)d;
		pl->pred_start[task_node[t]] = json_number_value(json_array_get(st, t));
		pl->pred_end[task_node[t]] = json_number_value(json_array_get(en, t));
		used |= 1ull << d;
	}
	for (uint32_t d = 0; d < pl->n_devices; d++)
		if ((used >> d & 1) && (used & pl->exclusive[d]))
			return ho_err(err, -EINVAL,
				      "schedule: the member runs on %s and on a device whose cores "
				      "it shares (box alternative_to): one or the other",
				      pl->dev[d].name);
	/* node_prio starts at zero (calloc): it holds i + 1 while filled, so 0 is unseen. */
	json_array_foreach(order, i, v)
	{
		json_int_t t = json_integer_value(v);

		if (!json_is_integer(v) || t < 0 || t >= n_tasks)
			return ho_err(err, -EINVAL, "schedule: order[%zu] is not a task index", i);
		if (pl->node_prio[task_node[t]])
			return ho_err(
			    err, -EINVAL,
			    "schedule: order[%zu] repeats task %lld ('%s'): the order must "
			    "name every task once",
			    i, (long long)t, g->nodes[task_node[t]].name);
		pl->node_prio[task_node[t]] = (uint32_t)i + 1;
	}
	for (uint32_t t = 0; t < n_tasks; t++)
		pl->node_prio[task_node[t]]--;
	/*
	 * The executor orders buffer reuse by this timeline, so it must be one the
	 * graph allows: a task starts after its inputs' producers end, and comes
	 * after them in the order.  An edited timeline could otherwise make waits
	 * that close a cycle.
	 */
	for (uint32_t t = 0; t < n_tasks; t++) {
		const struct ho_node *c = &g->nodes[task_node[t]];
		double cs = pl->pred_start[task_node[t]], ce = pl->pred_end[task_node[t]];

		if (!(cs >= 0) || !(ce >= cs))
			return ho_err(err, -EINVAL, "schedule: task '%s' has start %g s, end %g s",
				      c->name, cs, ce);
		for (uint32_t k = 0; k < c->n_inputs; k++) {
			int32_t in = c->inputs[k], pr = in >= 0 ? g->tensors[in].producer : -1;

			if (pr < 0 || pl->node_device[pr] < 0)
				continue;
			if (pl->pred_end[pr] > cs + 1e-9 ||
			    pl->node_prio[pr] > pl->node_prio[task_node[t]])
				return ho_err(
				    err, -EINVAL,
				    "schedule: task '%s' starts before its input from '%s' is "
				    "made (timeline or order edited?)",
				    c->name, g->nodes[pr].name);
		}
	}
	/* optional: schedules written before fusion was modelled have none */
	json_array_foreach(json_object_get(m, "runs_as"), i, v)
	{
		pl->pred_fused += json_is_string(v) && !strcmp(json_string_value(v), "fused");
		pl->pred_gathered += json_is_string(v) && !strcmp(json_string_value(v), "gathered");
	}
	pl->pred_makespan = json_number_value(json_object_get(obj, "latency_s"));
	for (uint32_t d = 0; d < pl->n_devices; d++) {
		pl->pred_peak[d] = json_number_value(
		    json_object_get(json_object_get(obj, "peak_memory_bytes"), pl->dev[d].name));
		/* optional: schedules written before kernels' memory was counted have none */
		pl->pred_kernel_mem[d] = json_number_value(
		    json_object_get(json_object_get(obj, "kernel_memory_bytes"), pl->dev[d].name));
	}
	/*
	 * One record per hop: a copy staged through host memory has two.  The
	 * runtime makes one pool copy per tensor and destination, so count a copy
	 * at its last hop (the one that reaches the consumer's device).  In-place
	 * reads have no record.
	 */
	pl->pred_copy_start = malloc(((size_t)g->n_tensors * pl->n_devices + 1) * sizeof(double));
	pl->pred_copy_end = malloc(((size_t)g->n_tensors * pl->n_devices + 1) * sizeof(double));
	if (!pl->pred_copy_start || !pl->pred_copy_end)
		return ho_err(err, -ENOMEM, "out of memory");
	for (size_t k = 0; k < (size_t)g->n_tensors * pl->n_devices; k++)
		pl->pred_copy_start[k] = pl->pred_copy_end[k] = -1;
	json_array_foreach(xf, i, v)
	{
		const char *to = json_string_value(json_object_get(v, "to")),
			   *cname = json_string_value(json_object_get(v, "consumer"));
		/* no consumer: a graph output fetched to the host */
		bool fetch = cname && !strcmp(cname, "(output)");
		int32_t pn = ho_sched_task_node(tasks, task_node, json_object_get(v, "producer"));
		int32_t cn = ho_sched_task_node(tasks, task_node, json_object_get(v, "consumer"));
		int32_t cons = fetch ? pl->host : cn >= 0 ? pl->node_device[cn] : -1;
		double start = json_number_value(json_object_get(v, "start_s")),
		       end = json_number_value(json_object_get(v, "end_s"));

		if (cons < 0)
			continue;
		if (!fetch) {
			ho_sched_copy_at(pl, ho_sched_edge_tensor(g, pn, cn), cons, start, end);
		} else {
			for (uint32_t k = 0; pn >= 0 && k < g->nodes[pn].n_outputs; k++) {
				int32_t t = g->nodes[pn].outputs[k];

				if (t >= 0 && (g->tensors[t].flags & HO_T_OUTPUT))
					ho_sched_copy_at(pl, t, cons, start, end);
			}
		}
		if (!to || strcmp(to, pl->dev[cons].name))
			continue;
		pl->pred_transfers++;
		pl->pred_bytes += json_number_value(json_object_get(v, "bytes"));
	}
	return 0;
}

/* The fingerprint the schedule recorded for what (model, box) against the file at path. */
static int ho_sched_fingerprint(json_t *root, const char *name, const char *what, const char *file,
				struct ho_error *err)
{
	const char *want =
	    json_string_value(json_object_get(json_object_get(root, "fingerprint"), what));
	char have[24];
	uint64_t h;
	int ret;

	if (!want || strlen(want) != 16)
		return ho_err(err, -EINVAL,
			      "%s: no fingerprint of its %s: not a schedule heteroopt "
			      "wrote",
			      name, what);
	if (!strcmp(want, "0000000000000000"))
		return ho_err(err, -EINVAL,
			      "%s: records no fingerprint of its %s (written without the %s's "
			      "path): cannot check it is %s",
			      name, what, what, file);
	ret = ho_fingerprint_file(file, &h, err);
	if (ret)
		return ret;
	snprintf(have, sizeof(have), "%016" PRIx64, h);
	if (strcmp(have, want))
		return ho_err(err, -EINVAL,
			      "%s: made for another %s than %s (fingerprint %s, the file has %s): "
			      "schedule it again",
			      name, what, file, want, have);
	return 0;
}

/* The input shapes it was scheduled for must be those bound now. */
static int ho_sched_inputs(json_t *root, const char *name, const struct ho_graph *g,
			   struct ho_error *err)
{
	json_t *ins = json_object_get(root, "inputs");

	if (!json_is_object(ins) || json_object_size(ins) != g->n_inputs)
		return ho_err(err, -EINVAL,
			      "%s: does not record the model's %u input shapes: schedule it again",
			      name, g->n_inputs);
	for (uint32_t i = 0; i < g->n_inputs; i++) {
		const struct ho_tensor *t = &g->tensors[g->inputs[i]];
		json_t *dims = json_object_get(ins, t->name);
		bool same = json_is_array(dims) && json_array_size(dims) == (size_t)t->shape.rank;
		char want[160] = "?", have[160] = "";
		int n = 0;

		for (int k = 0; same && k < t->shape.rank; k++)
			same =
			    json_integer_value(json_array_get(dims, (size_t)k)) == t->shape.dim[k];
		if (same)
			continue;
		for (size_t k = 0; json_is_array(dims) && k < json_array_size(dims) && n < 140; k++)
			n += snprintf(want + n, sizeof(want) - (size_t)n, "%s%lld", k ? "x" : "",
				      (long long)json_integer_value(json_array_get(dims, k)));
		n = 0;
		for (int k = 0; k < t->shape.rank && n < 140; k++)
			n += snprintf(have + n, sizeof(have) - (size_t)n, "%s%lld", k ? "x" : "",
				      (long long)t->shape.dim[k]);
		return ho_err(err, -EINVAL,
			      "%s: made for input '%s' of %s, this run has %s: schedule it again "
			      "for these shapes",
			      name, t->name, want, have);
	}
	return 0;
}

/*
 * name: the schedule as messages call it; dir: the folder its relative
 * paths start from.
 */
static int ho_sched_from_json(json_t *root, const char *name, const char *dir,
			      const struct ho_rt_schedule_opts *o, const struct ho_graph *g,
			      struct ho_rt_placement *pl, struct ho_error *err)
{
	json_t *tasks, *front;
	int32_t *task_node = NULL;
	uint32_t n_tasks, n_graph_tasks = 0;
	const char *box_path = o ? o->box_path : NULL;
	char box_buf[PATH_MAX];
	int pick = o ? o->pick : -1, ret = -EINVAL;

	if (!json_is_string(json_object_get(root, "format")) ||
	    strcmp(json_string_value(json_object_get(root, "format")), "heteroopt-schedule/1")) {
		ret = ho_err(err, -EINVAL, "%s: not a heteroopt-schedule/1 file", name);
		goto out;
	}
	tasks = json_object_get(root, "tasks");
	front = json_object_get(root, "front");
	if (!json_is_array(tasks) || !json_is_array(front) || !json_array_size(front)) {
		ret = ho_err(err, -EINVAL, "%s: needs tasks and a non-empty front", name);
		goto out;
	}
	if (pick < 0)
		pick = (int)json_integer_value(json_object_get(root, "picked"));
	if (pick < 0 || (size_t)pick >= json_array_size(front)) {
		ret = ho_err(err, -EINVAL, "%s: front member %d asked for, it has %zu", name, pick,
			     json_array_size(front));
		goto out;
	}
	pl->pick = pick;
	n_tasks = (uint32_t)json_array_size(tasks);
	task_node = calloc(n_tasks + 1, sizeof(int32_t));
	pl->node_device = malloc((g->n_nodes + 1) * sizeof(int32_t));
	pl->node_prio = calloc(g->n_nodes + 1, sizeof(uint32_t));
	pl->pred_start = calloc(g->n_nodes + 1, sizeof(double));
	pl->pred_end = calloc(g->n_nodes + 1, sizeof(double));
	if (!task_node || !pl->node_device || !pl->node_prio || !pl->pred_start || !pl->pred_end) {
		ret = ho_err(err, -ENOMEM, "out of memory");
		goto out;
	}
	for (uint32_t i = 0; i < g->n_nodes; i++) {
		pl->node_device[i] = -1;
		n_graph_tasks += ho_node_is_task(&g->nodes[i]);
	}
	/* The same runnable nodes, by name and operator. */
	for (uint32_t t = 0; t < n_tasks; t++) {
		json_t *tk = json_array_get(tasks, t);
		const char *tname = json_string_value(json_object_get(tk, "name")),
			   *op = json_string_value(json_object_get(tk, "op"));
		uint32_t i;

		/* The scheduler keeps 255 bytes of a name: a longer one matches by them. */
		for (i = 0; tname && i < g->n_nodes; i++)
			if (strlen(tname) < 255 ? !strcmp(g->nodes[i].name, tname)
						: !strncmp(g->nodes[i].name, tname, 255))
				break;
		if (!tname || !op || i == g->n_nodes || !ho_node_is_task(&g->nodes[i]) ||
		    strcmp(g->nodes[i].op_type, op)) {
			ret = ho_err(err, -EINVAL,
				     "%s: task %u ('%s', %s) is not a node of this model: the "
				     "schedule is for another model",
				     name, t, tname ? tname : "?", op ? op : "?");
			goto out;
		}
		/* node_device holds the claiming task until ho_sched_member writes devices. */
		if (pl->node_device[i] >= 0) {
			ret = ho_err(err, -EINVAL, "%s: tasks %d and %u are both node '%s'", name,
				     pl->node_device[i], t, tname);
			goto out;
		}
		pl->node_device[i] = (int32_t)t;
		task_node[t] = (int32_t)i;
	}
	if (n_tasks != n_graph_tasks) {
		ret = ho_err(err, -EINVAL,
			     "%s: %u tasks, the model has %u runnable nodes: the schedule is for "
			     "another model (or other input shapes)",
			     name, n_tasks, n_graph_tasks);
		goto out;
	}
	/* The same nodes may still be another model's weights or another batch. */
	if ((ret = ho_sched_inputs(root, name, g, err)) ||
	    (o && o->model_path &&
	     (ret = ho_sched_fingerprint(root, name, "model", o->model_path, err))))
		goto out;
	if (!box_path) {
		const char *rel = json_string_value(json_object_get(root, "box"));

		if (!rel || !*rel) {
			ret = ho_err(err, -EINVAL, "%s: names no box; give one", name);
			goto out;
		}
		snprintf(box_buf, sizeof(box_buf), "%s%s%s", *rel == '/' || !dir ? "" : dir,
			 *rel == '/' || !dir ? "" : "/", rel);
		box_path = box_buf;
	}
	if ((ret = ho_sched_fingerprint(root, name, "box", box_path, err)))
		goto out;
	ret = ho_sched_devices(pl, json_object_get(root, "devices"), box_path, err);
	if (ret)
		goto out;
	ret = ho_sched_member(pl, g, json_array_get(front, (size_t)pick), tasks, task_node, n_tasks,
			      err);
	if (!ret)
		ret = ho_sched_precisions(pl, g, json_array_get(front, (size_t)pick), task_node,
					  n_tasks, err);
out:
	free(task_node);
	return ret;
}

static int ho_sched_publish(struct ho_rt_placement *pl, int ret, struct ho_rt_placement **out)
{
	if (ret) {
		ho_rt_placement_free(pl);
		return ret;
	}
	*out = pl;
	return 0;
}

int ho_rt_schedule_load(const char *path, const struct ho_rt_schedule_opts *o,
			const struct ho_graph *g, struct ho_rt_placement **out,
			struct ho_error *err)
{
	struct ho_rt_placement *pl = calloc(1, sizeof(*pl));
	char dir[PATH_MAX];
	json_error_t je;
	json_t *root;
	int ret;

	*out = NULL;
	if (!pl)
		return ho_err(err, -ENOMEM, "out of memory");
	root = json_load_file(path, 0, &je);
	if (!root)
		return ho_sched_publish(
		    pl, ho_err(err, -EINVAL, "%s: line %d: %s", path, je.line, je.text), out);
	/* The schedule names its box from its own folder. */
	ho_path_dir(path, dir, sizeof(dir));
	ret = ho_sched_from_json(root, path, dir, o, g, pl, err);
	json_decref(root);
	return ho_sched_publish(pl, ret, out);
}

int ho_rt_schedule_parse(const char *text, size_t len, const struct ho_rt_schedule_opts *o,
			 const struct ho_graph *g, struct ho_rt_placement **out,
			 struct ho_error *err)
{
	struct ho_rt_placement *pl = calloc(1, sizeof(*pl));
	json_error_t je;
	json_t *root;
	int ret;

	*out = NULL;
	if (!pl)
		return ho_err(err, -ENOMEM, "out of memory");
	root = json_loadb(text, len, 0, &je);
	if (!root)
		return ho_sched_publish(
		    pl, ho_err(err, -EINVAL, "schedule: line %d: %s", je.line, je.text), out);
	ret = ho_sched_from_json(root, "schedule", o ? o->base_dir : NULL, o, g, pl, err);
	json_decref(root);
	return ho_sched_publish(pl, ret, out);
}
