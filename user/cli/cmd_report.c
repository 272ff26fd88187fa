// SPDX-License-Identifier: MIT
/*
 * heteroopt report: a schedule (and a run of it) as one HTML file that opens
 * offline.  The page (report.html, compiled in as cli_report_page) draws
 * SVG with a script of its own from the JSON this command puts in it: the
 * Pareto front against any two objectives with the baselines, a Gantt chart
 * of any member (a lane per device and per link, predicted and, with --run,
 * measured), each device's memory over time against its capacity, the front
 * as a table, the explanations and the fingerprints.  Memory over time is
 * the simulator's: the model, box and profile are loaded again, as the
 * schedule names them, and every member simulated.
 */
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <heteroopt/graph.h>
#include <heteroopt/sched.h>

#include "cli.h"

extern const char cli_report_page[];

#define REPORT_MEM_POINTS 300 /* per device and member: the curve's envelope beyond */

struct report_args {
	const char *schedule, *run, *profile, *out;
};

#define RA(field) offsetof(struct report_args, field)
static const struct cli_opt report_opts[] = {
    {"--run", NULL, CLI_TEXT, "RUN.json",
     "a run of the schedule (heteroopt run --save-run): its\nmeasured timeline beside the "
     "predicted one",
     RA(run), 0, 0},
    {"--profile", NULL, CLI_TEXT, "PROFILE.json",
     "the profile to simulate memory with (default: the one the\nschedule names)", RA(profile), 0,
     0},
    {"--output", "-o", CLI_TEXT, "REPORT.html", "where the page goes (written whole)", RA(out), 0,
     0},
    {0},
};

static const struct cli_command report_cmd = {
    .name = "report",
    .usage = "SCHEDULE.json [--run RUN.json] [--profile P.json] -o REPORT.html",
    .about = "Write one self-contained HTML page of a schedule: the Pareto front, a Gantt\n"
	     "chart of any member (predicted, and measured with --run), memory over time\n"
	     "per device, the front, the explanations and the fingerprints.  It opens\n"
	     "offline: the data and the script that draws it are in the page.",
    .positional = "schedule",
    .positional_at = RA(schedule),
    .opts = report_opts,
};

/* A path the schedule names, from the schedule's own folder. */
static void report_path(const char *schedule, const char *p, char *out, size_t n)
{
	const char *slash = strrchr(schedule, '/');

	if (!p || !*p || p[0] == '/' || !slash)
		snprintf(out, n, "%s", p ? p : "");
	else
		snprintf(out, n, "%.*s/%s", (int)(slash - schedule), schedule, p);
}

/* A path's last part: what a title names. */
static const char *report_base(const json_t *path)
{
	const char *p = json_string_value(path), *slash = p ? strrchr(p, '/') : NULL;

	return slash ? slash + 1 : p ? p : "";
}

/* The problem the schedule was made for, to simulate memory with; NULL and a reason if not. */
static struct ho_problem *report_problem(const char *spath, const json_t *s, const char *profile,
					 struct ho_graph **g, struct ho_box **box,
					 struct ho_profile **prof, char *why, size_t wn)
{
	const json_t *ins = json_object_get(s, "inputs"), *dims;
	char model[PATH_MAX], boxp[PATH_MAX], profp[PATH_MAX];
	struct ho_problem *p = NULL;
	struct ho_error err = {0};
	const char *name;

	report_path(spath, json_string_value(json_object_get(s, "model")), model, sizeof(model));
	report_path(spath, json_string_value(json_object_get(s, "box")), boxp, sizeof(boxp));
	if (profile)
		snprintf(profp, sizeof(profp), "%s", profile);
	else
		report_path(spath, json_string_value(json_object_get(s, "profile")), profp,
			    sizeof(profp));
	if (!*boxp || !ins) {
		snprintf(why, wn, "a task graph, not a model on a box: memory is not modelled");
		return NULL;
	}
	if (ho_onnx_load(model, NULL, g, &err))
		goto fail;
	json_object_foreach((json_t *)ins, name, dims)
	{
		int64_t d[HO_MAX_RANK];
		size_t k;
		json_t *x;

		json_array_foreach(dims, k, x) if (k < HO_MAX_RANK) d[k] = json_integer_value(x);
		if (ho_graph_bind_input(*g, name, d, (int)json_array_size(dims), &err))
			goto fail;
	}
	if (ho_shape_infer(*g, &err) || ho_box_load(boxp, box, &err) ||
	    (*profp && ho_profile_load(profp, *box, prof, &err)) ||
	    cli_problem(*g, *box, *prof, &p, &err))
		goto fail;
	/* a schedule of precisions: its members' times are simulated in theirs */
	if (json_object_get(s, "accuracy") && p->n == json_array_size(json_object_get(s, "tasks")))
		cli_sched_precisions_priced(*g, *box, *prof, p);
	if (p->n != json_array_size(json_object_get(s, "tasks"))) {
		snprintf(why, wn, "%.300s now has %u tasks, the schedule %zu: memory not shown",
			 model, p->n, json_array_size(json_object_get(s, "tasks")));
		ho_problem_free(p);
		return NULL;
	}
	return p;
fail:
	snprintf(why, wn, "memory not shown: %.400s", err.msg);
	return NULL;
}

/* Member m's memory per device: its curve, or its envelope on REPORT_MEM_POINTS buckets. */
static json_t *report_memory(struct ho_sim *sim, struct ho_timeline *tl, const struct ho_problem *p,
			     const json_t *m, double *t, double *b, uint32_t cap)
{
	json_t *out = json_array(), *x;
	uint16_t *assign = calloc(p->n + 1, sizeof(uint16_t));
	uint32_t *order = calloc(p->n + 1, sizeof(uint32_t));
	uint8_t *prec = calloc(p->n + 1, 1);
	struct ho_eval ev;
	size_t i;

	if (!assign || !order || !prec)
		goto out;
	/* each task's precision by name (a baseline's, or one not priced: float32) */
	json_array_foreach(
	    json_object_get(m, "precision"), i,
	    x) for (uint32_t q = 1; i < p->n && q < p->n_prec;
		    q++) if (!strcmp(json_string_value(x) ? json_string_value(x) : "",
				     p->prec_name[q])) prec[i] = (uint8_t)q;
	ho_sim_precision(sim, p->n_prec > 1 ? prec : NULL);
	json_array_foreach(json_object_get(m, "device"), i, x) if (i < p->n) assign[i] =
	    (uint16_t)json_integer_value(x);
	json_array_foreach(json_object_get(m, "order"), i, x) if (i < p->n) order[i] =
	    (uint32_t)json_integer_value(x);
	if (ho_sim_eval(sim, assign, order, NULL, &ev, tl))
		goto out; /* not a topological order: drawn without memory */
	for (uint32_t d = 0; d < p->d; d++) {
		int n = ho_sim_memory_curve(sim, d, t, b, cap);
		json_t *pts = json_array();
		double end = ev.obj[HO_OBJ_LATENCY] > 0 ? ev.obj[HO_OBJ_LATENCY] : 1;

		if (n > (int)cap)
			n = (int)cap;
		for (int k = 0; k < n;) {
			/* the most in use in this bucket of time, from its first step on */
			int bucket = (int)(t[k] / end * REPORT_MEM_POINTS), j = k;
			double most = b[k];

			while (j + 1 < n && (int)(t[j + 1] / end * REPORT_MEM_POINTS) == bucket)
				most = b[++j] > most ? b[j] : most;
			json_array_append_new(pts, json_pack("[f, f]", t[k], most));
			if (j > k) /* where the bucket ends, the use it ends with */
				json_array_append_new(pts, json_pack("[f, f]", t[j], b[j]));
			k = j + 1;
		}
		json_array_append_new(out, pts);
	}
out:
	free(assign);
	free(order);
	free(prec);
	return out;
}

/* One member as the page draws it: the schedule's own figures, a label, memory. */
static json_t *report_member(const json_t *m, const char *label, const char *kind, json_t *memory)
{
	json_t *o = json_deep_copy(m);

	json_object_set_new(o, "label", json_string(label));
	json_object_set_new(o, "kind", json_string(kind));
	json_object_set_new(o, "memory", memory ? memory : json_array());
	json_object_del(o, "order");
	json_object_del(o, "name");
	return o;
}

static json_t *report_data(const char *spath, const json_t *s, json_t *run,
			   const struct ho_problem *p, const struct ho_box *box,
			   const char *no_memory)
{
	json_t *d = json_object(), *members = json_array(), *tasks = json_array(),
	       *classes = json_array(), *devs = json_array(), *fp = json_array(), *x;
	struct ho_sim *sim = p ? ho_sim_new(p) : NULL;
	struct ho_timeline *tl = p ? ho_timeline_new(p) : NULL;
	uint32_t cap = p ? 4 * (p->m + p->n) + 16 : 0;
	double *t = p ? malloc(cap * sizeof(double)) : NULL,
	       *b = p ? malloc(cap * sizeof(double)) : NULL;
	const json_t *front = json_object_get(s, "front"), *sf = json_object_get(s, "fingerprint");
	size_t i, n_front = json_array_size(front);
	int picked = (int)json_integer_value(json_object_get(s, "picked"));
	char line[1024];

	if (p && (!sim || !tl || !t || !b))
		p = NULL; /* out of memory: drawn without memory */
	json_array_foreach(front, i, x)
	{
		char label[32];

		snprintf(label, sizeof(label), "front[%zu]", i);
		json_array_append_new(
		    members, report_member(x, label, "front",
					   p ? report_memory(sim, tl, p, x, t, b, cap) : NULL));
	}
	json_array_foreach(json_object_get(s, "baselines"), i, x) json_array_append_new(
	    members, report_member(x, json_string_value(json_object_get(x, "name")), "baseline",
				   p ? report_memory(sim, tl, p, x, t, b, cap) : NULL));
	json_array_foreach(json_object_get(s, "tasks"), i, x)
	{
		const char *cls = cli_op_class(json_string_value(json_object_get(x, "op")));
		size_t k;
		json_t *c;
		bool seen = false;

		json_array_foreach(classes, k, c) seen |= !strcmp(json_string_value(c), cls);
		if (!seen)
			json_array_append_new(classes, json_string(cls));
		json_array_append_new(tasks, json_pack("{s:O, s:O, s:s}", "name",
						       json_object_get(x, "name"), "op",
						       json_object_get(x, "op"), "cls", cls));
	}
	json_array_foreach(json_object_get(s, "devices"), i, x)
	{
		int bd = box ? ho_box_device(box, json_string_value(x)) : -1;

		json_array_append_new(devs, json_pack("{s:O, s:s, s:f}", "name", x, "kind",
						      bd >= 0 ? box->dev[bd].kind : "device",
						      "capacity_bytes",
						      p && i < p->d ? p->capacity[i] : 0.0));
	}
	json_array_append_new(fp, json_pack("[s, s++]", "model",
					    json_string_value(json_object_get(s, "model")), ", ",
					    json_string_value(json_object_get(sf, "model"))));
	json_array_append_new(fp, json_pack("[s, s++]", "box",
					    json_string_value(json_object_get(s, "box")), ", ",
					    json_string_value(json_object_get(sf, "box"))));
	snprintf(line, sizeof(line), "%s, %s",
		 json_is_string(json_object_get(s, "profile"))
		     ? json_string_value(json_object_get(s, "profile"))
		     : "none (the box's figures)",
		 json_string_value(json_object_get(sf, "profile")));
	json_array_append_new(fp, json_pack("[s, s]", "profile", line));
	json_array_append_new(fp, json_pack("[s, s]", "settings",
					    json_string_value(json_object_get(sf, "settings"))));
	if (json_object_get(s, "machine")) {
		char *m = json_dumps(json_object_get(s, "machine"), JSON_COMPACT);

		json_array_append_new(fp, json_pack("[s, s]", "profiled on", m ? m : ""));
		free(m);
	}
	json_array_append_new(fp, json_pack("[s, s]", "schedule", spath));
	if (run)
		json_array_append_new(
		    fp,
		    json_pack("[s, s]", "run", json_string_value(json_object_get(run, "pool"))));
	snprintf(
	    line, sizeof(line),
	    "%zu tasks on %zu devices; %zu schedules on the front, front[%d] picked by %s; "
	    "search: %lld generations, %lld evaluations, hypervolume %.4f%s%s",
	    json_array_size(tasks), json_array_size(devs), n_front, picked,
	    json_string_value(json_object_get(s, "pick_method")),
	    json_integer_value(json_object_get(json_object_get(s, "search"), "generations_run")),
	    json_integer_value(json_object_get(json_object_get(s, "search"), "evaluations")),
	    json_number_value(json_object_get(json_object_get(s, "search"), "hypervolume")),
	    no_memory ? "; " : "", no_memory ? no_memory : "");
	json_object_set_new(d, "summary", json_string(line));
	json_object_set_new(d, "model_name", json_string(report_base(json_object_get(s, "model"))));
	json_object_set_new(d, "box_name", json_string(report_base(json_object_get(s, "box"))));
	json_object_set_new(d, "objectives", json_deep_copy(json_object_get(s, "objectives")));
	json_object_set_new(d, "devices", devs);
	json_object_set_new(d, "tasks", tasks);
	json_object_set_new(d, "classes", classes);
	json_object_set_new(d, "members", members);
	json_object_set_new(d, "picked", json_integer(picked));
	json_object_set_new(d, "explanations", json_deep_copy(json_object_get(s, "explanations")));
	/* precisions: the metric, budget, and the pick's error estimated and measured */
	x = json_object_get(s, "accuracy");
	json_object_set_new(d, "accuracy", x ? json_deep_copy(x) : json_null());
	json_object_set_new(d, "fingerprint", fp);
	json_object_set_new(d, "run", run ? json_incref(run) : json_null());
	json_object_set_new(
	    d, "run_member",
	    json_integer(run ? json_integer_value(json_object_get(run, "pick")) : -1));
	ho_sim_free(sim);
	ho_timeline_free(tl);
	free(t);
	free(b);
	return d;
}

/* The page with the data in place of its placeholder; "</" escaped so no string ends the
 * script. */
static int report_write(const char *path, const json_t *data)
{
	static const char mark[] = "/*HO_REPORT_DATA*/null";
	const char *at = strstr(cli_report_page, mark);
	char *js = json_dumps(data, JSON_COMPACT | JSON_ESCAPE_SLASH | JSON_REAL_PRECISION(6)),
	     tmp[PATH_MAX];
	FILE *f;
	int ret = 0;

	if (!js || !at)
		return -ENOMEM;
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	if (!f) {
		free(js);
		return -errno;
	}
	if (fwrite(cli_report_page, 1, (size_t)(at - cli_report_page), f) !=
		(size_t)(at - cli_report_page) ||
	    fputs(js, f) < 0 || fputs(at + sizeof(mark) - 1, f) < 0)
		ret = -EIO;
	if (fclose(f) && !ret)
		ret = -EIO;
	if (!ret && rename(tmp, path))
		ret = -errno;
	if (ret)
		remove(tmp);
	free(js);
	return ret;
}

int cmd_report(int argc, char **argv)
{
	struct report_args a = {0};
	json_error_t je;
	json_t *s = NULL, *run = NULL, *data = NULL;
	struct ho_graph *g = NULL;
	struct ho_box *box = NULL;
	struct ho_profile *prof = NULL;
	struct ho_problem *p = NULL;
	char why[512] = "";
	int ret, rc = 1;

	switch (cli_parse(&report_cmd, argc, argv, &a)) {
	case 1:
		return 0;
	case -1:
		return 2;
	}
	if (!a.schedule || !a.out) {
		cli_error("report: %s (see heteroopt report --help)",
			  a.schedule ? "no output given (-o REPORT.html)" : "no schedule given");
		return 2;
	}
	if (cli_can_write(a.out, "report: -o"))
		return 1;
	s = json_load_file(a.schedule, 0, &je);
	if (!s ||
	    strcmp(json_string_value(json_object_get(s, "format")) ?: "", "heteroopt-schedule/1")) {
		cli_error("report: %s: %s", a.schedule,
			  s ? "not a schedule of heteroopt schedule (format heteroopt-schedule/1)"
			    : je.text);
		goto out;
	}
	if (a.run) {
		const json_t *pick;

		run = json_load_file(a.run, 0, &je);
		if (!run || strcmp(json_string_value(json_object_get(run, "format")) ?: "",
				   "heteroopt-run/1")) {
			cli_error("report: %s: %s", a.run,
				  run ? "not a run of heteroopt run --save-run (format "
					"heteroopt-run/1)"
				      : je.text);
			goto out;
		}
		pick = json_object_get(run, "pick");
		if (!json_is_integer(pick) || json_integer_value(pick) < 0 ||
		    (size_t)json_integer_value(pick) >=
			json_array_size(json_object_get(s, "front"))) {
			cli_error(
			    "report: %s: not a run of a member of %s (run it with --schedule %s)",
			    a.run, a.schedule, a.schedule);
			goto out;
		}
	}
	p = report_problem(a.schedule, s, a.profile, &g, &box, &prof, why, sizeof(why));
	if (!p && *why)
		fprintf(stderr, "report: %s\n", why);
	data = report_data(a.schedule, s, run, p, box, p ? NULL : why);
	ret = report_write(a.out, data);
	if (ret) {
		cli_error("report: cannot write %s: %s", a.out, strerror(-ret));
		goto out;
	}
	printf("report: wrote %s (%zu schedule%s on the front, %zu baselines%s)\n", a.out,
	       json_array_size(json_object_get(s, "front")),
	       json_array_size(json_object_get(s, "front")) == 1 ? "" : "s",
	       json_array_size(json_object_get(s, "baselines")),
	       run ? ", with the measured run" : "");
	rc = 0;
out:
	json_decref(data);
	json_decref(run);
	json_decref(s);
	ho_problem_free(p);
	ho_profile_free(prof);
	ho_box_free(box);
	ho_graph_free(g);
	return rc;
}
