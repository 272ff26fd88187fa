// SPDX-License-Identifier: MIT
/*
 * The schedule JSON (Documentation/schedule-format.md): every front member
 * with its assignment, order, predicted timeline, transfers, peak memory and
 * objectives; the picked one with explanations; the baselines; and a
 * fingerprint of model, box, profile and settings so the runtime can refuse a
 * schedule made for something else.
 */
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sched_priv.h"

static const char *const ho_obj_names[HO_OBJ_COUNT] = {"latency",    "memory",	"energy",
						       "throughput", "balance", "error"};

const char *ho_objective_name(int obj)
{
	return obj >= 0 && obj < HO_OBJ_COUNT ? ho_obj_names[obj] : "?";
}

static json_t *hex64(uint64_t v)
{
	char s[24];

	snprintf(s, sizeof(s), "%016" PRIx64, v);
	return json_string(s);
}

static json_t *objectives_json(const struct ho_eval *ev, const struct ho_problem *p)
{
	json_t *o = json_object(), *mem = json_object(), *kmem = json_object();

	json_object_set_new(o, "latency_s", json_real(ev->obj[HO_OBJ_LATENCY]));
	json_object_set_new(o, "memory_ratio", json_real(ev->obj[HO_OBJ_MEMORY]));
	json_object_set_new(o, "energy_j", json_real(ev->obj[HO_OBJ_ENERGY]));
	json_object_set_new(
	    o, "throughput_per_s",
	    json_real(ev->obj[HO_OBJ_THROUGHPUT] > 0 ? 1 / ev->obj[HO_OBJ_THROUGHPUT] : 0));
	json_object_set_new(o, "balance", json_real(ev->obj[HO_OBJ_BALANCE]));
	if (p->n_prec > 1) /* estimated from the sensitivities */
		json_object_set_new(o, "error", json_real(ev->obj[HO_OBJ_ERROR]));
	json_object_set_new(o, "violation", json_real(ev->violation));
	json_object_set_new(o, "transfers", json_integer(ev->n_transfers));
	json_object_set_new(o, "bytes_moved", json_real(ev->bytes_moved));
	for (uint32_t j = 0; j < p->d; j++) {
		json_object_set_new(mem, p->dev_name[j], json_real(ev->peak_mem[j]));
		json_object_set_new(kmem, p->dev_name[j], json_real(ev->kernel_mem[j]));
	}
	json_object_set_new(o, "peak_memory_bytes", mem);
	json_object_set_new(o, "kernel_memory_bytes", kmem);
	return o;
}

/* Each task's precision as the runtime names it, and the input range of those that
 * quantize (null for the others), where the plan has precisions. */
static void precision_json(const struct ho_problem *p, const struct ho_timeline *tl,
			   const uint16_t *assign, const uint8_t *prec, json_t *s)
{
	json_t *names = json_array(), *ranges = json_array();

	for (uint32_t t = 0; t < p->n; t++) {
		uint32_t q =
		    tl->how[t] == HO_TASK_RAN ? ho_task_precision(p, prec, t, assign[t]) : 0;
		const float *r = &p->prec_range[((size_t)t * p->n_prec + q) * 2];

		json_array_append_new(names, json_string(p->prec_name[q]));
		json_array_append_new(ranges, q && !isnan(r[0]) ? json_pack("[f, f]", r[0], r[1])
								: json_null());
	}
	json_object_set_new(s, "precision", names);
	json_object_set_new(s, "input_range", ranges);
}

static json_t *solution_json(const struct ho_problem *p, struct ho_sim *sim, struct ho_timeline *tl,
			     const uint16_t *assign, const uint32_t *order, const uint8_t *prec,
			     const struct ho_constraints *c)
{
	json_t *s = json_object(), *a = json_array(), *ord = json_array(), *st = json_array();
	json_t *en = json_array(), *xf = json_array(), *how = json_array();
	static const char *const runs_as[] = {
	    [HO_TASK_RAN] = "kernel",
	    [HO_TASK_VIEW] = "view",
	    [HO_TASK_FUSED] = "fused",
	    [HO_TASK_GATHERED] = "gathered",
	};
	struct ho_eval ev;

	ho_sim_precision(sim, prec);
	ho_sim_eval(sim, assign, order, c, &ev, tl);
	if (p->n_prec > 1)
		precision_json(p, tl, assign, prec, s);
	for (uint32_t t = 0; t < p->n; t++) {
		json_array_append_new(a, json_integer(assign[t]));
		json_array_append_new(ord, json_integer(order[t]));
		json_array_append_new(st, json_real(tl->start[t]));
		json_array_append_new(en, json_real(tl->end[t]));
		json_array_append_new(how, json_string(runs_as[tl->how[t]]));
	}
	for (uint32_t i = 0; i < tl->n_xfer; i++) {
		const struct ho_transfer *x = &tl->xfer[i];
		json_t *o = json_object();
		uint32_t prod = p->item_prod[x->item];

		json_object_set_new(o, "producer",
				    prod == HO_EXTERNAL ? json_string("(input)")
							: json_string(p->task_name[prod]));
		/* no consumer: a graph output fetched to the host */
		json_object_set_new(o, "consumer",
				    x->task == HO_EXTERNAL ? json_string("(output)")
							   : json_string(p->task_name[x->task]));
		json_object_set_new(o, "from", json_string(p->dev_name[x->src]));
		json_object_set_new(o, "to", json_string(p->dev_name[x->dst]));
		json_object_set_new(o, "bytes", json_real(p->item_bytes[x->item]));
		json_object_set_new(o, "start_s", json_real(x->start));
		json_object_set_new(o, "end_s", json_real(x->end));
		json_array_append_new(xf, o);
	}
	json_object_set_new(s, "objectives", objectives_json(&ev, p));
	json_object_set_new(s, "device", a);
	json_object_set_new(s, "order", ord);
	json_object_set_new(s, "start_s", st);
	json_object_set_new(s, "end_s", en);
	json_object_set_new(s, "runs_as", how);
	json_object_set_new(s, "transfers", xf);
	return s;
}

/* A file's fingerprint for the schedule: the caller's (fp), else the file's; 0 without a file. */
static int ho_doc_fingerprint(const char *file, uint64_t fp, const char *what, uint64_t *out,
			      struct ho_error *err)
{
	int ret;

	*out = fp;
	if (fp || !file || !*file)
		return 0;
	ret = ho_fingerprint_file(file, out, err);
	if (ret)
		return ho_err(err, ret, "schedule: cannot fingerprint its %s: %s", what, err->msg);
	return 0;
}

int ho_schedule_write(const char *path, const struct ho_schedule_doc *doc, struct ho_error *err)
{
	const struct ho_problem *p = doc->p;
	struct ho_sim *sim = ho_sim_new(p);
	struct ho_timeline *tl = ho_timeline_new(p);
	json_t *root = json_object(), *fp = json_object(), *devs = json_array(),
	       *tasks = json_array();
	json_t *front = json_array(), *base = json_array(), *objs = json_array(),
	       *why = json_array();
	const struct ho_constraints *c = doc->search ? &doc->search->constraints : NULL;
	uint64_t h[3];
	int ret = 0;

	if (!sim || !tl || !root) {
		ret = ho_err(err, -ENOMEM, "out of memory writing the schedule");
		goto out;
	}
	json_object_set_new(root, "format", json_string("heteroopt-schedule/1"));
	/* the files' own where the caller left them 0: a loader checks them against the files */
	if ((ret = ho_doc_fingerprint(doc->model, doc->fp_model, "model", &h[0], err)) ||
	    (ret = ho_doc_fingerprint(doc->box, doc->fp_box, "box", &h[1], err)) ||
	    (ret = ho_doc_fingerprint(doc->profile, doc->fp_profile, "profile", &h[2], err)))
		goto out;
	json_object_set_new(fp, "model", hex64(h[0]));
	json_object_set_new(fp, "box", hex64(h[1]));
	json_object_set_new(fp, "profile", hex64(h[2]));
	json_object_set_new(fp, "settings", hex64(doc->fp_settings));
	json_object_set_new(root, "fingerprint", fp);
	/* Paths from the schedule's own folder: the runtime resolves them from there. */
	char dir[PATH_MAX], rel[PATH_MAX];

	ho_path_dir(path, dir, sizeof(dir));
	ho_path_relative(doc->model ? doc->model : "", dir, rel, sizeof(rel));
	json_object_set_new(root, "model", json_string(doc->model ? rel : ""));
	ho_path_relative(doc->box ? doc->box : "", dir, rel, sizeof(rel));
	json_object_set_new(root, "box", json_string(doc->box ? rel : ""));
	ho_path_relative(doc->profile ? doc->profile : "", dir, rel, sizeof(rel));
	json_object_set_new(root, "profile", doc->profile ? json_string(rel) : json_null());
	/* where the profile was measured: a run elsewhere warns, naming what differs */
	if (ho_profile_machine(doc->prof))
		json_object_set_new(root, "machine", json_deep_copy(ho_profile_machine(doc->prof)));
	/* The input shapes it was made for: a schedule for batch 2 is not one for batch 1. */
	if (doc->graph) {
		json_t *ins = json_object();

		for (uint32_t i = 0; i < doc->graph->n_inputs; i++) {
			const struct ho_tensor *t = &doc->graph->tensors[doc->graph->inputs[i]];
			json_t *dims = json_array();

			for (int k = 0; k < t->shape.rank; k++)
				json_array_append_new(dims, json_integer(t->shape.dim[k]));
			json_object_set_new(ins, t->name, dims);
		}
		json_object_set_new(root, "inputs", ins);
	}
	for (uint32_t j = 0; j < p->d; j++)
		json_array_append_new(devs, json_string(p->dev_name[j]));
	json_object_set_new(root, "devices", devs);
	for (uint32_t t = 0; t < p->n; t++) {
		json_t *o = json_object();

		json_object_set_new(o, "name", json_string(p->task_name[t]));
		json_object_set_new(o, "op", json_string(p->task_op[t]));
		json_array_append_new(tasks, o);
	}
	json_object_set_new(root, "tasks", tasks);
	for (int m = 0; m < HO_OBJ_COUNT; m++)
		if (doc->objectives >> m & 1)
			json_array_append_new(objs, json_string(ho_obj_names[m]));
	json_object_set_new(root, "objectives", objs);
	if (doc->search) {
		json_t *s = json_object();

		json_object_set_new(s, "population", json_integer(doc->search->population));
		json_object_set_new(s, "generations", json_integer(doc->search->generations));
		json_object_set_new(s, "generations_run",
				    json_integer(doc->front->generations_run));
		json_object_set_new(s, "evaluations",
				    json_integer((json_int_t)doc->front->evaluations));
		json_object_set_new(s, "seed", json_integer((json_int_t)doc->search->seed));
		json_object_set_new(s, "hypervolume", json_real(doc->front->hypervolume));
		json_object_set_new(s, "coarsen_chains", json_boolean(doc->search->coarsen_chains));
		json_object_set_new(s, "share_blocks", json_boolean(doc->search->share_blocks));
		json_object_set_new(root, "search", s);
	}
	for (uint32_t b = 0; b < doc->n_baselines; b++) {
		json_t *o = solution_json(p, sim, tl, doc->baselines[b].plan->assign,
					  doc->baselines[b].plan->order, NULL, c);

		json_object_set_new(o, "name", json_string(doc->baselines[b].name));
		json_array_append_new(base, o);
	}
	json_object_set_new(root, "baselines", base);
	for (uint32_t i = 0; i < doc->front->n; i++)
		json_array_append_new(front, solution_json(p, sim, tl, doc->front->sol[i].assign,
							   doc->front->sol[i].order,
							   doc->front->sol[i].prec, c));
	json_object_set_new(root, "front", front);
	json_object_set_new(root, "picked", json_integer(doc->picked));
	json_object_set_new(root, "pick_method",
			    json_string(doc->pick_method ? doc->pick_method : ""));
	if (doc->picked >= 0) {
		const struct ho_solution *s = &doc->front->sol[doc->picked];
		const struct ho_timeline *ran = tl; /* the picked schedule's: how each task ran */
		struct ho_eval ev;

		ho_sim_precision(sim, s->prec);
		if (ho_sim_eval(sim, s->assign, s->order, c, &ev, tl))
			ran = NULL;
		for (uint32_t t = 0; t < p->n; t++) {
			char buf[256];
			json_t *o = json_object();

			ho_explain(p, s->assign, s->prec, &s->ev, ran, t, buf, sizeof(buf));
			json_object_set_new(o, "task", json_string(p->task_name[t]));
			json_object_set_new(o, "device", json_string(p->dev_name[s->assign[t]]));
			json_object_set_new(o, "why", json_string(buf));
			if (p->n_prec > 1 && ran) {
				uint32_t q = ran->how[t] == HO_TASK_RAN
						 ? ho_task_precision(p, s->prec, t, s->assign[t])
						 : 0;

				json_object_set_new(o, "precision", json_string(p->prec_name[q]));
				if (q)
					json_object_set_new(
					    o, "sensitivity",
					    json_real(p->prec_error[(size_t)t * p->n_prec + q]));
			}
			json_array_append_new(why, o);
		}
	}
	json_object_set_new(root, "explanations", why);
	if (doc->metric && doc->picked >= 0)
		json_object_set_new(
		    root, "accuracy",
		    json_pack("{s:s, s:f, s:f, s:o}", "metric", doc->metric, "budget", doc->budget,
			      "estimated", doc->front->sol[doc->picked].ev.obj[HO_OBJ_ERROR],
			      "measured",
			      isnan(doc->measured) ? json_null() : json_real(doc->measured)));
	if (json_dump_file(root, path,
			   JSON_INDENT(1) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(9)))
		ret = ho_err(err, -EIO, "%s: cannot write the schedule", path);
out:
	json_decref(root);
	ho_sim_free(sim);
	ho_timeline_free(tl);
	return ret;
}
