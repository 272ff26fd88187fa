// SPDX-License-Identifier: MIT
/*
 * heteroopt schedule: model (or task graph) + box -> baselines, NSGA-II front,
 * a picked schedule with explanations, written as schedule JSON.
 */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <heteroopt/probe.h>

#include "cli.h"
#include "heteroopt/graph.h"
#include "heteroopt/npy.h"
#include "heteroopt/sched.h"

struct sched_args {
	const char *model, *box, *profile, *out, *stg, *dag, *resume, *trace;
	struct cli_list shapes, constraints, pins, bounds, sensitivity, inputs;
	const char *objectives, *pick, *weights, *accuracy;
	double budget;			 /* --accuracy's */
	char metric[32];		 /* the --sensitivity files' */
	char in_name[CLI_LIST_MAX][256]; /* --input's */
	struct ho_npy in[CLI_LIST_MAX];
	unsigned long long procs, population, generations, seed, threads, stall;
	bool quiet, coarsen, share_blocks;
	struct ho_search_opts so;
	uint32_t n_decided; /* nodes whose shapes a run decides */
	int n_bounded;	    /* tensors priced at their bounds */
};

#define SA(field) offsetof(struct sched_args, field)
static const struct cli_opt schedule_opts[] = {
    {"--box", NULL, CLI_TEXT, "BOX.json",
     "the box to schedule on: its devices, links and figures\n"
     "(boxes/ has the shipped ones); needed with a model",
     SA(box), 0, 0},
    {"--shape", NULL, CLI_LIST, "NAME=D0xD1x...",
     "bind the extents of model input NAME (as for inspect);\nrepeatable", SA(shapes), 0, 0},
    {"--bound", NULL, CLI_LIST, "TENSOR=N",
     "the most each extent of TENSOR holds where a run decides it\n"
     "(a NonZero's count, the boxes NMS keeps): priced at that,\n"
     "not at the most the operator allows; repeatable",
     SA(bounds), 0, 0},
    {"--profile", NULL, CLI_TEXT, "PROFILE.json",
     "measured figures that override the box's (default: none)", SA(profile), 0, 0},
    {"--output", "-o", CLI_TEXT, "FILE.json",
     "write the schedule JSON: the front, the pick, per-task\n"
     "explanations and fingerprints (default: not written)",
     SA(out), 0, 0},
    {"--stg", NULL, CLI_TEXT, "FILE.stg",
     "schedule a Standard Task Graph Set file instead of a model", SA(stg), 0, 0},
    {"--procs", NULL, CLI_COUNT, "P", "with --stg: the number of identical processors (default 4)",
     SA(procs), 1, HO_MAX_DEVICES},
    {"--dag", NULL, CLI_TEXT, "FILE.json",
     "schedule a JSON DAG with a cost matrix instead of a model", SA(dag), 0, 0},
    {"--objectives", NULL, CLI_TEXT, "LIST",
     "comma-separated, of latency, memory, energy, throughput,\n"
     "balance (default latency,throughput,energy; energy is left\n"
     "off where the box gives no power figures); device capacity\n"
     "is always enforced: add memory when it is tight; error\n"
     "joins them with --sensitivity",
     SA(objectives), 0, 0},
    {"--constraint", NULL, CLI_LIST, "C",
     "latency<=TIME (units s, ms, us; a bare number is seconds) or\n"
     "mem:DEVICE<=SIZE (B, KB, MB, GB, KiB, MiB, GiB; a bare number\n"
     "is bytes); repeatable",
     SA(constraints), 0, 0},
    {"--pin", NULL, CLI_LIST, "KEY=DEVICE",
     "keep every task whose op type or node name is KEY on DEVICE;\nrepeatable", SA(pins), 0, 0},
    {"--pick", NULL, CLI_TEXT, "HOW",
     "how to choose one schedule from the front (default topsis):\n"
     "topsis (closest to the ideal point), weighted (least weighted\n"
     "sum, each objective relative to all on the default device),\n"
     "constraint (the fastest schedule that meets every --constraint)",
     SA(pick), 0, 0},
    {"--weights", NULL, CLI_TEXT, "W,W,...",
     "objective weights for weighted and topsis, in --objectives\norder (default all 1)",
     SA(weights), 0, 0},
    {"--population", NULL, CLI_COUNT, "N", "NSGA-II population (default 128)", SA(population), 4,
     1000000},
    {"--generations", NULL, CLI_COUNT, "N", "at most N generations (default 200)", SA(generations),
     0, 1000000},
    {"--stall", NULL, CLI_COUNT, "N",
     "stop once the hypervolume gained less than 1e-4 over N\n"
     "generations; 0 never stops early (default 40)",
     SA(stall), 0, 1000000},
    {"--seed", NULL, CLI_COUNT, "S",
     "random seed: the same seed gives the same front, whatever\nthe thread count (default 1)",
     SA(seed), 0, ~0ull},
    {"--threads", NULL, CLI_COUNT, "T", "search threads; 0 is one per core (default 0)",
     SA(threads), 0, 64},
    {"--coarsen", NULL, CLI_FLAG, NULL, "one device gene per single-producer/single-consumer chain",
     SA(coarsen), 0, 0},
    {"--share-blocks", NULL, CLI_FLAG, NULL,
     "one device gene per position of repeated identical blocks", SA(share_blocks), 0, 0},
    {"--resume", NULL, CLI_TEXT, "OLD.json",
     "start from an earlier schedule of this problem: its front\njoins the first population "
     "(after a new profile, say)",
     SA(resume), 0, 0},
    {"--trace", NULL, CLI_TEXT, "TRACE.json",
     "with -o: the picked schedule's predicted timeline as Chrome\n"
     "trace JSON (chrome://tracing, ui.perfetto.dev)",
     SA(trace), 0, 0},
    {"--sensitivity", NULL, CLI_LIST, "FILE.json",
     "each node's precision chosen with its device: a file run\n"
     "--sensitivity bf16|int8 wrote (one per precision), priced by\n"
     "the --profile's precision_speedup; needs --accuracy, --input\n"
     "and -o; repeatable",
     SA(sensitivity), 0, 0},
    {"--accuracy", NULL, CLI_TEXT, "BUDGET",
     "with --sensitivity: the largest error allowed, in the files'\n"
     "metric (a fraction such as 1e-2); the pick is measured on\n"
     "--input and refused over it (default pick: constraint)",
     SA(accuracy), 0, 0},
    {"--input", NULL, CLI_LIST, "NAME=FILE.npy",
     "with --sensitivity: the calibration inputs the pick's error is\n"
     "measured on (their shapes bind the model's); repeatable",
     SA(inputs), 0, 0},
    {"--quiet", NULL, CLI_FLAG, NULL, "no progress on standard error", SA(quiet), 0, 0},
    {0},
};

static const struct cli_command schedule_cmd = {
    .name = "schedule",
    .usage = "MODEL.onnx --box BOX.json [options] [-o schedule.json]\n"
	     "       heteroopt schedule --stg FILE.stg [--procs P] [options]\n"
	     "       heteroopt schedule --dag FILE.json [options]",
    .about = "Print the baselines (each device alone, greedy, HEFT, PEFT) and the Pareto\n"
	     "front NSGA-II finds over the chosen objectives, and pick one schedule.",
    .positional = "model",
    .positional_at = SA(model),
    .opts = schedule_opts,
};

static int parse_objectives(const char *s, uint32_t *mask)
{
	char buf[256], *tok, *save = NULL, names[128] = "";

	*mask = 0;
	for (int m = 0; m < HO_OBJ_COUNT; m++)
		snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s",
			 m ? ", " : "", ho_objective_name(m));
	snprintf(buf, sizeof(buf), "%s", s);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		int m;

		for (m = 0; m < HO_OBJ_COUNT; m++)
			if (!strcmp(tok, ho_objective_name(m)))
				break;
		if (m == HO_OBJ_COUNT) {
			cli_error("--objectives: unknown objective '%s' (%s)", tok, names);
			return -1;
		}
		*mask |= 1u << m;
	}
	if (!*mask) {
		cli_error("--objectives: none given (%s)", names);
		return -1;
	}
	return 0;
}

static int parse_quantity(const char *s, bool time, double *out)
{
	static const struct {
		const char *unit;
		double scale;
	} units[] = {{"ms", 1e-3},	 {"us", 1e-6},	  {"s", 1},    {"GiB", 1073741824.0},
		     {"MiB", 1048576.0}, {"KiB", 1024.0}, {"GB", 1e9}, {"MB", 1e6},
		     {"KB", 1e3},	 {"B", 1}};
	char *end;
	double v = strtod(s, &end);

	if (end == s || !isfinite(v) || v <= 0)
		return -1;
	if (!*end) {
		*out = v;
		return 0;
	}
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (!strcmp(end, units[i].unit) &&
		    (time == (units[i].unit[strlen(units[i].unit) - 1] == 's'))) {
			*out = v * units[i].scale;
			return 0;
		}
	return -1;
}

static int apply_constraints(struct sched_args *a, const struct ho_problem *p)
{
	for (int i = 0; i < a->constraints.n; i++) {
		const char *c = a->constraints.v[i], *le = strstr(c, "<=");
		double v;

		if (!le) {
			cli_error("--constraint '%s': expected latency<=VALUE or mem:DEVICE<=VALUE",
				  c);
			return -1;
		}
		if (!strncmp(c, "latency<=", 9)) {
			if (parse_quantity(le + 2, true, &v)) {
				cli_error("--constraint '%s': '%s' is not a time like 8ms", c,
					  le + 2);
				return -1;
			}
			a->so.constraints.max_latency = v;
		} else if (!strncmp(c, "mem:", 4)) {
			char dev[HO_NAME_LEN];
			int j = -1;
			size_t n = (size_t)(le - c - 4);

			if (n >= sizeof(dev)) {
				cli_error("--constraint '%s': device name too long", c);
				return -1;
			}
			memcpy(dev, c + 4, n);
			dev[n] = '\0';
			for (uint32_t k = 0; k < p->d; k++)
				if (!strcmp(p->dev_name[k], dev))
					j = (int)k;
			if (j < 0) {
				cli_error("--constraint '%s': no device '%s'", c, dev);
				return -1;
			}
			if (parse_quantity(le + 2, false, &v)) {
				cli_error("--constraint '%s': '%s' is not a size like 12GiB", c,
					  le + 2);
				return -1;
			}
			a->so.constraints.max_mem[j] = v;
		} else {
			cli_error("--constraint '%s': only latency<= and mem:DEVICE<= are known",
				  c);
			return -1;
		}
	}
	return 0;
}

static int load_problem(struct sched_args *a, struct ho_graph **g, struct ho_box **box,
			struct ho_profile **prof, struct ho_problem **p)
{
	struct ho_error err = {0};

	if (a->stg)
		return ho_problem_from_stg(a->stg, (unsigned)a->procs, p, &err)
		       ? cli_error("%s", err.msg),
		       -1 : 0;
	if (a->dag)
		return ho_problem_from_dag_json(a->dag, p, &err) ? cli_error("%s", err.msg), -1 : 0;
	if (ho_onnx_load(a->model, NULL, g, &err)) {
		cli_error("%s", err.msg);
		return -1;
	}
	if (a->inputs.n && cli_inputs_read(*g, &a->inputs, NULL, "schedule", a->in_name, a->in))
		return -1;
	for (int i = 0; i < a->shapes.n; i++) {
		char name[256];
		int64_t dims[HO_MAX_RANK];
		int rank;

		if (ho_parse_shape_arg(a->shapes.v[i], name, sizeof(name), dims, &rank, &err) ||
		    ho_graph_bind_input(*g, name, dims, rank, &err)) {
			cli_error("%s", err.msg);
			return -1;
		}
	}
	if (ho_shape_infer(*g, &err)) {
		cli_error("%s: %s", a->model, err.msg);
		return -1;
	}
	/* what waits for a run is priced at its bound, not at nothing */
	a->n_decided = ho_graph_run_decides(*g, NULL);
	if ((a->n_decided || a->bounds.n) && (a->n_bounded = cli_bounds_price(*g, &a->bounds)) < 0)
		return -1;
	if (ho_box_load(a->box, box, &err)) {
		cli_error("%s", err.msg);
		return -1;
	}
	if (a->profile && ho_profile_load(a->profile, *box, prof, &err)) {
		cli_error("%s", err.msg);
		return -1;
	}
	if (a->profile)
		cli_warn_machine(a->profile, "profile");
	if (cli_problem(*g, *box, *prof, p, &err)) {
		cli_error("%s", err.msg);
		return -1;
	}
	if (a->sensitivity.n) {
		if (cli_sched_precisions(*g, *box, *prof, &a->sensitivity, *p, a->metric,
					 sizeof(a->metric)))
			return -1;
		a->so.constraints.max_error = a->budget;
	}
	return 0;
}

/*
 * One line that updates in place on a terminal; plain lines, each a whole
 * record, when standard error is a file or a pipe.
 */
struct progress {
	bool tty, shown;
};

static void print_progress(const struct ho_search_progress *sp, void *arg)
{
	struct progress *pr = arg;
	double rate = sp->elapsed_s > 0 ? (double)sp->evaluations / sp->elapsed_s : 0;

	if (sp->done) {
		if (pr->tty && pr->shown)
			fputc('\n', stderr);
		fprintf(stderr, "search: done after %u generations, %llu evaluations in %.2f s\n",
			sp->generation, (unsigned long long)sp->evaluations, sp->elapsed_s);
		if (sp->shared_blocks)
			fprintf(stderr,
				"search: %u tasks follow the device of an identical earlier "
				"block\n",
				sp->shared_blocks);
		return;
	}
	fprintf(stderr,
		"%ssearch: generation %u/%u, front %u, hypervolume %.4f, %llu evaluations "
		"(%.0f/s)%s",
		pr->tty ? "\r\033[K" : "", sp->generation, sp->generations, sp->front_size,
		sp->hypervolume, (unsigned long long)sp->evaluations, rate, pr->tty ? "" : "\n");
	pr->shown = true;
}

/* Ctrl-C during the search: it ends after its generation, and its front is written. */
static volatile sig_atomic_t schedule_stop;

static void schedule_on_signal(int sig)
{
	(void)sig;
	schedule_stop = 1;
}

static void fmt_bytes(double b, char *buf, size_t n)
{
	if (b >= 1073741824.0)
		snprintf(buf, n, "%.2fG", b / 1073741824.0);
	else if (b >= 1048576.0)
		snprintf(buf, n, "%.1fM", b / 1048576.0);
	else
		snprintf(buf, n, "%.0fK", b / 1024.0);
}

static void print_row(const struct ho_problem *p, const char *label, const struct ho_eval *ev,
		      bool mark)
{
	bool prec = p->n_prec > 1; /* the error estimated from the sensitivities */

	char b[32], e[32] = "n/m"; /* energy: not measured where the box gives no power figures */

	if (!p->box || ho_box_has_energy(p->box))
		snprintf(e, sizeof(e), "%.4g", ev->obj[HO_OBJ_ENERGY] * 1e3);
	printf("%c %-18.18s %11.4f %9.4f %11s %10.1f %7.2f %5u %5.0f", mark ? '*' : ' ', label,
	       ev->obj[HO_OBJ_LATENCY] * 1e3, ev->obj[HO_OBJ_MEMORY], e,
	       ev->obj[HO_OBJ_THROUGHPUT] > 0 ? 1 / ev->obj[HO_OBJ_THROUGHPUT] : 0,
	       ev->obj[HO_OBJ_BALANCE], ev->n_transfers,
	       ev->violation > 0 ? ev->violation * 100 : 0);
	if (prec)
		printf(" %8.2e", ev->obj[HO_OBJ_ERROR]);
	for (uint32_t j = 0; j < p->d && j < 6; j++) {
		fmt_bytes(ev->peak_mem[j], b, sizeof(b));
		printf(" %8s", b);
	}
	printf("\n");
}

static void print_header(const struct ho_problem *p)
{
	printf("  %-18s %11s %9s %11s %10s %7s %5s %5s", "schedule", "latency ms", "mem/cap",
	       "energy mJ", "infer/s", "balance", "xfers", "viol%");
	if (p->n_prec > 1)
		printf(" %8s", "error");
	for (uint32_t j = 0; j < p->d && j < 6; j++)
		printf(" %8.8s", p->dev_name[j]);
	printf("\n");
}

static void explain_violation(const struct ho_problem *p, const struct ho_eval *ev,
			      const struct ho_constraints *c)
{
	char msg[512];
	int n = 0;

	n += snprintf(msg + n, sizeof(msg) - n,
		      "no schedule meets the constraints; the closest found has");
	if (ev->n_infeasible)
		n += snprintf(msg + n, sizeof(msg) - n,
			      " %u tasks on devices that cannot run them;", ev->n_infeasible);
	if (c->max_latency > 0 && ev->obj[HO_OBJ_LATENCY] > c->max_latency)
		n += snprintf(msg + n, sizeof(msg) - n, " latency %.3f ms > %.3f ms;",
			      ev->obj[HO_OBJ_LATENCY] * 1e3, c->max_latency * 1e3);
	for (uint32_t j = 0; j < p->d && n < (int)sizeof(msg) - 80; j++) {
		char a[32], b[32];

		if (c->max_mem[j] > 0 && ev->peak_mem[j] > c->max_mem[j]) {
			fmt_bytes(ev->peak_mem[j], a, sizeof(a));
			fmt_bytes(c->max_mem[j], b, sizeof(b));
			n += snprintf(msg + n, sizeof(msg) - n, " %s peak %s > limit %s;",
				      p->dev_name[j], a, b);
		} else if (p->capacity[j] > 0 && ev->peak_mem[j] > p->capacity[j]) {
			fmt_bytes(ev->peak_mem[j], a, sizeof(a));
			fmt_bytes(p->capacity[j], b, sizeof(b));
			n += snprintf(msg + n, sizeof(msg) - n, " %s peak %s > usable %s;",
				      p->dev_name[j], a, b);
		}
	}
	if (n > 0 && msg[n - 1] == ';')
		msg[n - 1] = '\0';
	cli_error("%s", msg);
}

/* The precision options that go together, checked before any work: 0, or 2 printed. */
static int precision_usage(struct sched_args *a)
{
	char *end = NULL;

	if (!a->sensitivity.n) {
		if (a->accuracy || a->inputs.n)
			cli_error(
			    "schedule: --%s: it goes with --sensitivity (each node's precision "
			    "chosen with its device)",
			    a->accuracy ? "accuracy" : "input");
		return a->accuracy || a->inputs.n ? 2 : 0;
	}
	a->budget = a->accuracy ? strtod(a->accuracy, &end) : 0;
	if (!a->model)
		cli_error("schedule: --sensitivity: a model's nodes, not --stg or --dag tasks");
	else if (!a->accuracy || end == a->accuracy || *end || !(a->budget > 0) ||
		 !isfinite(a->budget))
		cli_error("schedule: --sensitivity needs --accuracy BUDGET, a number > 0 in the "
			  "files' metric such as 1e-2%s%s%s",
			  a->accuracy ? " ('" : "", a->accuracy ? a->accuracy : "",
			  a->accuracy ? "' is none)" : "");
	else if (!a->inputs.n)
		cli_error(
		    "schedule: --sensitivity needs --input NAME=FILE.npy: the pick's error is "
		    "measured on it");
	else if (!a->out)
		cli_error("schedule: --sensitivity needs -o S.json: the pick is measured as the "
			  "runtime loads it");
	else if (a->shapes.n)
		cli_error("schedule: --shape: with --input, the inputs' shapes bind the model");
	else
		return 0;
	return 2;
}

/* With precisions: the pick measured on the inputs (another member where it is over the
 * budget), and the schedule written again with what was measured.  0, or 1 printed. */
static int precision_check(struct sched_args *a, const struct ho_graph *g, const struct ho_front *f,
			   struct ho_schedule_doc *doc, int *picked)
{
	const struct ho_problem *p = doc->p;
	struct cli_inputs in = {(const char(*)[256])a->in_name, a->in, a->inputs.n};
	struct cli_accuracy acc;
	struct cli_sched_check chk = {a->out, a->box, a->model, a->metric, &in, &acc, a->budget};
	struct ho_error err = {0};
	double measured = NAN;
	uint32_t count[8] = {0};

	if (cli_accuracy_parse(a->metric, &acc) || cli_sched_check(g, f, &chk, picked, &measured))
		return 1;
	doc->picked = *picked;
	doc->metric = a->metric;
	doc->budget = a->budget;
	doc->measured = measured;
	if (ho_schedule_write(a->out, doc, &err)) {
		cli_error("%s", err.msg);
		return 1;
	}
	for (uint32_t t = 0; t < p->n; t++)
		count[ho_task_precision(p, f->sol[*picked].prec, t, f->sol[*picked].assign[t])]++;
	printf("precision: front[%d]:", *picked);
	for (uint32_t q = 1; q < p->n_prec && q < 8; q++)
		printf(" %u nodes in %s,", count[q], p->prec_name[q]);
	printf(" the rest float32; error %.3g measured (%.3g estimated), budget %.3g (%s)\n",
	       measured, f->sol[*picked].ev.obj[HO_OBJ_ERROR], a->budget, a->metric);
	if (measured > a->budget) {
		cli_error("schedule: no schedule meets --accuracy %g: front[%d], the most accurate "
			  "found, measured %.3g (%s), is written to %s",
			  a->budget, *picked, measured, a->metric, a->out);
		return 1;
	}
	return 0;
}

int cmd_schedule(int argc, char **argv)
{
	static const char default_objectives[] = "latency,throughput,energy",
			  default_pick[] = "topsis";
	struct sched_args a = {.objectives = default_objectives, .pick = default_pick, .procs = 4};

	struct ho_graph *g = NULL;
	struct ho_box *box = NULL;
	struct ho_profile *prof = NULL;
	struct ho_problem *p = NULL;
	struct ho_front *front = NULL;
	struct ho_baseline *base = NULL;
	struct ho_plan **plans = NULL;
	const struct ho_plan **seeds = NULL;
	struct ho_plan **resumed = NULL;
	struct ho_sim *sim = NULL;
	struct ho_error err = {0};
	uint32_t nb = 0, n_plans = 0, n_resumed = 0;
	bool energy_off = false;
	int ret = 1;

	ho_search_defaults(&a.so);
	a.population = a.so.population;
	a.generations = a.so.generations;
	a.seed = a.so.seed;
	a.threads = a.so.threads;
	a.stall = a.so.stall_window;
	switch (cli_parse(&schedule_cmd, argc, argv, &a)) {
	case 1:
		return 0;
	case -1:
		return 2;
	}
	a.so.population = (uint32_t)a.population;
	a.so.generations = (uint32_t)a.generations;
	a.so.seed = a.seed;
	a.so.threads = (uint32_t)a.threads;
	a.so.stall_window = (uint32_t)a.stall;
	a.so.coarsen_chains = a.coarsen;
	a.so.share_blocks = a.share_blocks;
	if (!a.stg && !a.dag && (!a.model || !a.box)) {
		cli_usage(&schedule_cmd, stderr);
		return 2;
	}
	if (a.trace && !a.out) {
		cli_error("--trace: the trace is of the schedule written: give -o S.json too");
		return 2;
	}
	if (precision_usage(&a))
		return 2;
	if ((a.out && cli_can_write(a.out, "schedule: -o")) ||
	    (a.trace && cli_can_write(a.trace, "schedule: --trace")))
		return 1;
	if (parse_objectives(a.objectives, &a.so.objectives))
		return 2;
	if ((a.so.objectives >> HO_OBJ_ERROR & 1) && !a.sensitivity.n) {
		cli_error("--objectives error: the error of precisions; give --sensitivity");
		return 2;
	}
	if (a.sensitivity.n) { /* the error is on the front; the fastest within the budget picked */
		a.so.objectives |= 1u << HO_OBJ_ERROR;
		if (a.pick == default_pick)
			a.pick = "constraint";
	}
	static const struct {
		const char *name;
		enum ho_pick how;
	} picks[] = {{"topsis", HO_PICK_TOPSIS},
		     {"weighted", HO_PICK_WEIGHTED},
		     {"constraint", HO_PICK_CONSTRAINT}};
	size_t pk = 0;

	while (pk < sizeof(picks) / sizeof(picks[0]) && strcmp(a.pick, picks[pk].name))
		pk++;
	if (pk == sizeof(picks) / sizeof(picks[0])) {
		cli_error("--pick: '%s' is not topsis, weighted or constraint", a.pick);
		return 2;
	}
	enum ho_pick how = picks[pk].how;
	double weights[HO_OBJ_COUNT] = {1, 1, 1, 1, 1, 1};

	if (a.weights) {
		char buf[256], *tok, *save = NULL;
		int m = 0;
		double sum = 0;

		snprintf(buf, sizeof(buf), "%s", a.weights);
		tok = strtok_r(buf, ",", &save);
		for (; m < HO_OBJ_COUNT; m++) {
			if (!(a.so.objectives >> m & 1))
				continue;
			char *end = NULL;
			double w = tok ? strtod(tok, &end) : -1;

			if (!tok || end == tok || *end || !(w >= 0) || !isfinite(w)) {
				cli_error("--weights: one non-negative weight per objective, in "
					  "--objectives order");
				return 2;
			}
			weights[m] = w;
			sum += w;
			tok = strtok_r(NULL, ",", &save);
		}
		if (tok || !(sum > 0)) {
			cli_error("--weights: %s", tok ? "more weights than --objectives"
						       : "all zero: nothing to choose by");
			return 2;
		}
	}
	struct progress pr = {.tty = isatty(STDERR_FILENO)};

	if (!a.quiet) {
		a.so.progress = print_progress;
		a.so.progress_arg = &pr;
	}

	if (load_problem(&a, &g, &box, &prof, &p))
		goto out;
	/*
	 * Energy nobody measured is no objective: a box without power figures (as
	 * probe --write-box writes, where no RAPL counter can be read) would give a
	 * front a dimension of zeros.  Asked for by name, it is refused.
	 */
	if ((a.so.objectives >> HO_OBJ_ENERGY & 1) && box && !ho_box_has_energy(box)) {
		if (a.objectives != default_objectives) { /* asked for by name */
			cli_error(
			    "--objectives energy: box '%s' gives no power figures (pj_per_flop, "
			    "pj_per_byte, idle_w): energy is not measured on it",
			    box->name);
			goto out;
		}
		a.so.objectives &= ~(1u << HO_OBJ_ENERGY);
		energy_off = true; /* said with the tables, once nothing can fail */
	}
	for (int i = 0; i < a.pins.n; i++) {
		char key[128];
		const char *eq = strchr(a.pins.v[i], '=');

		if (!eq || eq == a.pins.v[i] || (size_t)(eq - a.pins.v[i]) >= sizeof(key)) {
			cli_error("--pin '%s': expected OP_OR_NODE=DEVICE", a.pins.v[i]);
			goto out;
		}
		memcpy(key, a.pins.v[i], (size_t)(eq - a.pins.v[i]));
		key[eq - a.pins.v[i]] = '\0';
		if (ho_problem_pin(p, key, eq + 1, &err)) {
			cli_error("%s", err.msg);
			goto out;
		}
	}
	if (apply_constraints(&a, p))
		goto out;

	/* Baselines: every plan of every planner (each device alone, greedy, HEFT, PEFT). */
	n_plans = ho_planner_plans(p);
	if (a.resume && cli_resume(a.resume, p, &resumed, &n_resumed))
		goto out;
	sim = ho_sim_new(p);
	base = calloc(n_plans, sizeof(*base));
	plans = calloc(n_plans, sizeof(*plans));
	seeds = calloc(n_plans + n_resumed, sizeof(*seeds));
	if (!sim || !base || !plans || !seeds)
		goto nomem;
	for (const struct ho_planner *const *planner = ho_planners; *planner; planner++)
		for (uint32_t j = 0; j < ((*planner)->per_device ? p->d : 1); j++) {
			struct ho_plan *pl = ho_plan_new(p->n);
			int r;

			if (!pl)
				goto nomem;
			plans[nb] = pl;
			if ((*planner)->per_device)
				snprintf(base[nb].name, sizeof(base[nb].name), (*planner)->label,
					 p->dev_name[j]);
			else
				snprintf(base[nb].name, sizeof(base[nb].name), "%s",
					 (*planner)->label);
			r = (*planner)->plan(p, (int)j, pl);
			if (r) {
				cli_error("baseline %s failed: %s", base[nb].name, strerror(-r));
				goto out;
			}
			base[nb].plan = pl;
			ho_sim_eval(sim, pl->assign, pl->order, &a.so.constraints, &base[nb].ev,
				    NULL);
			seeds[nb] = pl;
			nb++;
		}
	for (uint32_t k = 0; k < n_resumed; k++)
		seeds[nb + k] = resumed[k];
	a.so.seeds = seeds;
	a.so.n_seeds = nb + n_resumed;
	if (n_resumed && !a.quiet)
		fprintf(stderr, "schedule: %u plans of %s in the first population\n", n_resumed,
			a.resume);
	if (!a.quiet)
		fprintf(stderr,
			"schedule: %u tasks, %u devices, %u data items; population %u, up to %u "
			"generations\n",
			p->n, p->d, p->m, a.so.population, a.so.generations);
	struct sigaction sa = {.sa_handler = schedule_on_signal}, old_int, old_term;

	a.so.stop = &schedule_stop;
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	ret = ho_search(p, &a.so, &front, &err);
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	if (ret) {
		ret = 1;
		cli_error("%s", err.msg);
		goto out;
	}
	ret = 1;
	if (front->interrupted)
		fprintf(stderr,
			"schedule: interrupted after generation %u of %u: the best front found so "
			"far (%u schedules) follows%s\n",
			front->generations_run, a.so.generations, front->n,
			a.out ? ", and is written" : "");
	if (!front->n || front->sol[0].ev.violation > 0) {
		const struct ho_eval *best = front->n ? &front->sol[0].ev : &base[0].ev;

		explain_violation(p, best, &a.so.constraints);
		goto out;
	}
	const double *ref = p->box ? base[p->default_device].ev.obj : NULL;
	int picked = ho_pick(front, how, a.so.objectives, weights, ref);

	if (energy_off)
		printf("energy: not measured (box '%s' gives no power figures): left off the "
		       "front\n",
		       box->name);
	if (a.n_decided) {
		printf("run-time: %u nodes' shapes only a run decides, planned as each run meets "
		       "them; priced at the bounds of %d tensors\n",
		       a.n_decided, a.n_bounded);
		cli_bounds_print(g, "  ", 8);
		if (a.n_bounded > 8)
			printf("  (and %d more: inspect lists them)\n", a.n_bounded - 8);
	}
	printf("baselines:\n");
	print_header(p);
	for (uint32_t b = 0; b < nb; b++)
		print_row(p, base[b].name, &base[b].ev, false);
	printf("Pareto front (%u schedules, %u generations, %llu evaluations, hypervolume %.4f); * "
	       "= picked by %s:\n",
	       front->n, front->generations_run, (unsigned long long)front->evaluations,
	       front->hypervolume, a.pick);
	print_header(p);
	/* At most 12 rows, spread along the front, always with the picked one. */
	uint32_t step = front->n > 12 ? (front->n + 10) / 11 : 1;

	for (uint32_t i = 0; i < front->n; i++) {
		char label[32];

		if (i % step && i + 1 != front->n && (int)i != picked)
			continue;
		snprintf(label, sizeof(label), "front[%u]", i);
		print_row(p, label, &front->sol[i].ev, (int)i == picked);
	}
	if (step > 1)
		printf("  (%u schedules shown; all %u are in the schedule JSON)\n",
		       (front->n + step - 1) / step + 1, front->n);
	if (a.out) {
		struct ho_schedule_doc doc = {.p = p,
					      .front = front,
					      .picked = picked,
					      .pick_method = a.pick,
					      .objectives = a.so.objectives,
					      .search = &a.so,
					      .baselines = base,
					      .n_baselines = nb,
					      .model = a.model ? a.model
						       : a.stg ? a.stg
							       : a.dag,
					      .box = box ? a.box : NULL,
					      .graph = g,
					      .profile = a.profile,
					      .prof = prof};
		char settings[512];

		if ((a.model && ho_fingerprint_file(a.model, &doc.fp_model, &err)) ||
		    (a.box && ho_fingerprint_file(a.box, &doc.fp_box, &err)) ||
		    (a.profile && ho_fingerprint_file(a.profile, &doc.fp_profile, &err))) {
			cli_error("%s", err.msg);
			goto out;
		}
		snprintf(settings, sizeof(settings),
			 "obj=%u pop=%u gen=%u seed=%llu coarsen=%d blocks=%d pick=%s",
			 a.so.objectives, a.so.population, a.so.generations,
			 (unsigned long long)a.so.seed, a.so.coarsen_chains, a.so.share_blocks,
			 a.pick);
		for (int i = 0; i < a.shapes.n; i++)
			snprintf(settings + strlen(settings), sizeof(settings) - strlen(settings),
				 " shape=%s", a.shapes.v[i]);
		doc.fp_settings =
		    ho_fingerprint_bytes(0xcbf29ce484222325ull, settings, strlen(settings));
		if (ho_schedule_write(a.out, &doc, &err)) {
			cli_error("%s", err.msg);
			goto out;
		}
		if (p->n_prec > 1 && precision_check(&a, g, front, &doc, &picked))
			goto out;
		printf("wrote %s%s\n", a.out,
		       front->interrupted ? " (interrupted: the best front found so far)" : "");
		if (a.trace) {
			json_t *sched = json_load_file(a.out, 0, NULL);
			int r = sched ? cli_trace_write(a.trace, sched, picked, NULL) : -EIO;

			json_decref(sched);
			if (r) {
				cli_error("schedule: cannot write %s: %s", a.trace, strerror(-r));
				goto out;
			}
			printf("wrote %s (Chrome trace of front[%d]'s predicted timeline)\n",
			       a.trace, picked);
		}
	}
	ret = front->interrupted ? 130 : 0;
	goto out;
nomem:
	cli_error("out of memory");
out:
	for (uint32_t b = 0; plans && b < nb + 1 && b < n_plans; b++)
		ho_plan_free(plans[b]);
	free(plans);
	for (uint32_t k = 0; k < n_resumed; k++)
		ho_plan_free(resumed[k]);
	free(resumed);
	free(seeds);
	free(base);
	ho_sim_free(sim);
	ho_front_free(front);
	ho_problem_free(p);
	ho_profile_free(prof);
	ho_box_free(box);
	ho_graph_free(g);
	for (int i = 0; i < a.inputs.n; i++)
		ho_npy_free(&a.in[i]);
	return ret;
}
