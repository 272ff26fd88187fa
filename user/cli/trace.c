// SPDX-License-Identifier: MIT
/*
 * What the commands write about a timeline: the run record of `run
 * --save-run` (what `report --run` draws), and Chrome trace JSON of a
 * predicted and a measured timeline (`schedule --trace`, `run --trace`), the
 * format chrome://tracing and ui.perfetto.dev open: a process per timeline,
 * a thread per device and per link, a complete event ("ph": "X") per node
 * and per copy, in microseconds.
 */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include <heteroopt/graph.h>
#include <heteroopt/runtime.h>

#include "cli.h"

const char *cli_op_class(const char *op)
{
	const struct ho_op_info *oi = op ? ho_op_info(op) : NULL;

	return oi ? ho_op_class_name(oi->op_class) : "other";
}

json_t *cli_run_record(const struct ho_graph *g, const struct ho_rt_placement *pl,
		       const struct ho_rt_report *r, const char *model, const char *schedule,
		       const double *sorted_s, int repeat, int warmup)
{
	json_t *root = json_object(), *devs = json_array(), *nodes = json_array(),
	       *copies = json_array();
	uint32_t nd = pl ? pl->n_devices : 1;

	json_object_set_new(root, "format", json_string("heteroopt-run/1"));
	json_object_set_new(root, "model", json_string(model));
	json_object_set_new(root, "schedule", schedule ? json_string(schedule) : json_null());
	json_object_set_new(root, "pick", json_integer(pl ? pl->pick : -1));
	json_object_set_new(root, "pool", json_string(r->pool ? r->pool : ""));
	json_object_set_new(root, "copy_path", json_string(r->copy_path ? r->copy_path : ""));
	json_object_set_new(root, "makespan_s", json_real(r->makespan_s));
	json_object_set_new(root, "predicted_s", json_real(pl ? pl->pred_makespan : 0));
	json_object_set_new(
	    root, "latency_ms",
	    json_pack("{s:f, s:f, s:f, s:f, s:f, s:i, s:i}", "median", sorted_s[repeat / 2] * 1e3,
		      "p90", sorted_s[(repeat * 9 + 9) / 10 - 1] * 1e3, "p99",
		      sorted_s[(repeat * 99 + 99) / 100 - 1] * 1e3, "min", sorted_s[0] * 1e3, "max",
		      sorted_s[repeat - 1] * 1e3, "runs", repeat, "warmup", warmup));
	for (uint32_t d = 0; d < nd; d++)
		json_array_append_new(devs,
				      json_pack("{s:s, s:s, s:i, s:I, s:I, s:i, s:f, s:i}", "name",
						pl ? pl->dev[d].name : "cpu0", "backend",
						r->backend[d] ? r->backend[d] : "?", "numa_node",
						pl ? pl->dev[d].numa_node : -1, "region_bytes",
						(json_int_t)r->region_bytes[d], "unshared_bytes",
						(json_int_t)r->unshared_bytes[d],
						"region_pages_on_node", r->region_node[d], "busy_s",
						r->busy_s[d], "nodes_run", (int)r->nodes_run[d]));
	json_object_set_new(root, "devices", devs);
	for (uint32_t i = 0; i < g->n_nodes; i++) {
		int d = pl ? pl->node_device[i] : 0;
		json_t *n;

		if (r->start_s[i] < 0 || d < 0)
			continue;
		n = json_pack("{s:s, s:s, s:s, s:s, s:f, s:f}", "name", g->nodes[i].name, "op",
			      g->nodes[i].op_type, "cls", cli_op_class(g->nodes[i].op_type),
			      "device", pl ? pl->dev[d].name : "cpu0", "start_s", r->start_s[i],
			      "end_s", r->end_s[i]);
		if (pl && pl->pred_start) {
			json_object_set_new(n, "predicted_start_s", json_real(pl->pred_start[i]));
			json_object_set_new(n, "predicted_end_s", json_real(pl->pred_end[i]));
		}
		json_array_append_new(nodes, n);
	}
	json_object_set_new(root, "nodes", nodes);
	for (uint32_t t = 0; t < g->n_tensors && r->copy_start_s; t++)
		for (uint32_t d = 0; d < r->n_devices; d++) {
			size_t at = (size_t)t * r->n_devices + d;
			int32_t p = g->tensors[t].producer;
			int from = p >= 0 && pl ? pl->node_device[p] : pl ? pl->host : 0;

			if (r->copy_start_s[at] < 0 || r->copy_end_s[at] < 0)
				continue;
			json_array_append_new(
			    copies, json_pack("{s:s, s:s, s:s, s:I, s:f, s:f}", "tensor",
					      g->tensors[t].name, "from",
					      pl && from >= 0 ? pl->dev[from].name : "cpu0", "to",
					      pl ? pl->dev[d].name : "cpu0", "bytes",
					      (json_int_t)g->tensors[t].bytes, "start_s",
					      r->copy_start_s[at], "end_s", r->copy_end_s[at]));
		}
	json_object_set_new(root, "copies", copies);
	json_object_set_new(root, "transfers", json_integer(r->transfers));
	json_object_set_new(root, "fused", json_integer(r->fused));
	return root;
}

/* The trace's thread of lane in process pid, named once. */
static int trace_tid(json_t *ev, json_t *lanes, int pid, const char *lane)
{
	json_t *id = json_object_get(lanes, lane);
	int tid;

	if (id)
		return (int)json_integer_value(id);
	tid = (int)json_object_size(lanes) + 1;
	json_object_set_new(lanes, lane, json_integer(tid));
	json_array_append_new(ev,
			      json_pack("{s:s, s:s, s:i, s:i, s:{s:s}}", "name", "thread_name",
					"ph", "M", "pid", pid, "tid", tid, "args", "name", lane));
	json_array_append_new(ev, json_pack("{s:s, s:s, s:i, s:i, s:{s:i}}", "name",
					    "thread_sort_index", "ph", "M", "pid", pid, "tid", tid,
					    "args", "sort_index", tid));
	return tid;
}

static void trace_event(json_t *ev, json_t *lanes, int pid, const char *lane, const char *name,
			const char *cat, double start_s, double end_s, json_t *args)
{
	json_array_append_new(ev, json_pack("{s:s, s:s, s:s, s:f, s:f, s:i, s:i, s:o}", "name",
					    name, "cat", cat, "ph", "X", "ts", start_s * 1e6, "dur",
					    (end_s - start_s) * 1e6, "pid", pid, "tid",
					    trace_tid(ev, lanes, pid, lane), "args", args));
}

/* Copies (a schedule's transfers, a run's copies) on their link's lane, named by name_key. */
static void trace_copies(json_t *ev, json_t *lanes, int pid, const json_t *copies,
			 const char *name_key)
{
	size_t i;
	json_t *x;

	json_array_foreach(copies, i, x)
	{
		char lane[160];

		snprintf(lane, sizeof(lane), "%s -> %s",
			 json_string_value(json_object_get(x, "from")),
			 json_string_value(json_object_get(x, "to")));
		trace_event(ev, lanes, pid, lane, json_string_value(json_object_get(x, name_key)),
			    "copy", json_number_value(json_object_get(x, "start_s")),
			    json_number_value(json_object_get(x, "end_s")),
			    json_pack("{s:O}", "bytes", json_object_get(x, "bytes")));
	}
}

static void trace_process(json_t *ev, int pid, const char *name)
{
	json_array_append_new(ev, json_pack("{s:s, s:s, s:i, s:{s:s}}", "name", "process_name",
					    "ph", "M", "pid", pid, "args", "name", name));
}

int cli_trace_write(const char *path, const json_t *sched, int member, const json_t *run)
{
	json_t *root = json_object(), *ev = json_array(), *lanes, *x;
	size_t i;
	int ret;

	json_object_set_new(root, "traceEvents", ev);
	json_object_set_new(root, "displayTimeUnit", json_string("ms"));
	if (sched) {
		const json_t *m = json_array_get(json_object_get(sched, "front"), (size_t)member),
			     *devs = json_object_get(sched, "devices"),
			     *tasks = json_object_get(sched, "tasks");
		char what[96];

		snprintf(what, sizeof(what), "predicted: front[%d] of the schedule", member);
		trace_process(ev, 1, what);
		lanes = json_object();
		json_array_foreach(json_object_get(m, "device"), i, x)
		{
			const json_t *t = json_array_get(tasks, i);
			const char *how = json_string_value(
				       json_array_get(json_object_get(m, "runs_as"), i)),
				   *op = json_string_value(json_object_get(t, "op"));

			if (how && !strcmp(how, "view"))
				continue; /* a pointer, no time of its own */
			trace_event(
			    ev, lanes, 1,
			    json_string_value(json_array_get(devs, (size_t)json_integer_value(x))),
			    json_string_value(json_object_get(t, "name")), cli_op_class(op),
			    json_number_value(json_array_get(json_object_get(m, "start_s"), i)),
			    json_number_value(json_array_get(json_object_get(m, "end_s"), i)),
			    json_pack("{s:s, s:s}", "op", op ? op : "", "runs_as", how ? how : ""));
		}
		trace_copies(ev, lanes, 1, json_object_get(m, "transfers"), "producer");
		json_decref(lanes);
	}
	if (run) {
		trace_process(ev, 2, "measured: heteroopt run, its last run");
		lanes = json_object();
		json_array_foreach(json_object_get(run, "nodes"), i, x)
		    trace_event(ev, lanes, 2, json_string_value(json_object_get(x, "device")),
				json_string_value(json_object_get(x, "name")),
				json_string_value(json_object_get(x, "cls")),
				json_number_value(json_object_get(x, "start_s")),
				json_number_value(json_object_get(x, "end_s")),
				json_pack("{s:O}", "op", json_object_get(x, "op")));
		trace_copies(ev, lanes, 2, json_object_get(run, "copies"), "tensor");
		json_decref(lanes);
	}
	ret = cli_write_json(root, path, JSON_COMPACT);
	json_decref(root);
	return ret;
}

int cli_write_json(const json_t *root, const char *path, size_t flags)
{
	char tmp[4096];

	if (snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	if (json_dump_file(root, tmp, flags)) {
		remove(tmp);
		return -EIO;
	}
	if (rename(tmp, path)) {
		int e = -errno;

		remove(tmp);
		return e;
	}
	return 0;
}
