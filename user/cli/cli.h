/* SPDX-License-Identifier: MIT */
/* The heteroopt command: one file per subcommand, one option parser (opts.c). */
#ifndef HO_CLI_H
#define HO_CLI_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "heteroopt/graph.h"

int cmd_inspect(int argc, char **argv);
int cmd_schedule(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_status(int argc, char **argv);
int cmd_probe(int argc, char **argv);
int cmd_calibrate(int argc, char **argv);
int cmd_serve(int argc, char **argv);
int cmd_feed(int argc, char **argv);
int cmd_report(int argc, char **argv);

struct ho_npy;
struct ho_rt_opts;
/* A run's inputs as given (--input NAME=FILE.npy). */
struct cli_inputs {
	const char (*name)[256];
	const struct ho_npy *npy;
	int n;
};
/* --input NAME=FILE.npy (inputs.c): every input of g read into in[i] (named name[i]), of
 * its type, and bound to g (by value where bind names it); 0, or the exit status with the
 * error printed, cmd naming the command. */
struct cli_list;
int cli_inputs_read(struct ho_graph *g, const struct cli_list *inputs, const struct cli_list *bind,
		    const char *cmd, char (*name)[256], struct ho_npy *in);
/* --accuracy-metric (accuracy.c): how far a run's outputs are from float32's. */
enum cli_acc_metric { CLI_ACC_MAX, CLI_ACC_TOP1, CLI_ACC_CTC, CLI_ACC_IOU };
struct cli_accuracy {
	enum cli_acc_metric metric;
	double threshold; /* iou@T's T */
};
/* text (NULL: max) into m; -EINVAL printed for an unknown one. */
int cli_accuracy_parse(const char *text, struct cli_accuracy *m);
/* rt's outputs' error against ref's (float32's), a fraction. */
struct ho_rt;
double cli_accuracy_error(const struct ho_graph *g, const struct cli_accuracy *m,
			  const struct ho_rt *ref, const struct ho_rt *rt);
const char *cli_accuracy_name(const struct cli_accuracy *m, char *buf, size_t len);

/* schedule --sensitivity (schedule_precision.c): the files read into p's precisions, priced
 * by each node's measured speed-up on box's CPUs, else prof's; the files' metric into
 * metric.  0, or -errno printed. */
struct ho_problem;
struct ho_box;
struct ho_profile;
struct ho_front;
int cli_sched_precisions(const struct ho_graph *g, const struct ho_box *box,
			 const struct ho_profile *prof, const struct cli_list *files,
			 struct ho_problem *p, char *metric, size_t len);
/* p priced in every precision prof has a speed-up for, each task a candidate with no error:
 * what report simulates a schedule's precisions with.  0, -ENOENT (none), or -errno. */
int cli_sched_precisions_priced(const struct ho_graph *g, const struct ho_box *box,
				const struct ho_profile *prof, struct ho_problem *p);
/* What measures a schedule's error: the schedule written at path (for box, model), run on
 * the inputs against float32 on one CPU, judged by acc. */
struct cli_sched_check {
	const char *path, *box, *model, *metric;
	const struct cli_inputs *in;
	const struct cli_accuracy *acc;
	double budget;
};
/* How many front members are measured before the most accurate is taken. */
#define CLI_SCHED_TRIES 4
/* Front member *picked measured, then while over the budget the fastest other whose
 * estimate, scaled by how far the estimates fell short, fits, up to CLI_SCHED_TRIES; none
 * within it: the most accurate.  *picked and *measured say which
 * and what it measured; 0, or -errno printed. */
int cli_sched_check(const struct ho_graph *g, const struct ho_front *f,
		    const struct cli_sched_check *s, int *picked, double *measured);
/* run --sensitivity (sensitivity.c): each node alone in precision, its outputs' error
 * (metric m) against float32 on these inputs, printed and written as
 * outdir/sensitivity.json. */
int cli_sensitivity(const struct ho_graph *g, const struct ho_rt_opts *base,
		    const struct cli_inputs *in, const char *precision,
		    const struct cli_accuracy *m, const char *outdir);
/* run --precision auto --accuracy BUDGET (sensitivity.c): per node "int8", "bf16" or NULL
 * into want, the least sensitive nodes whose measured error (metric m) stays within the
 * budget; int8 only where base->node_range has its calibration (else no_int8 says why). */
int cli_precision_auto(const struct ho_graph *g, const struct ho_rt_opts *base,
		       const struct cli_inputs *in, double budget, const struct cli_accuracy *m,
		       const char *no_int8, const char **want, double *error);

/* run --precision int8 (quantize.c): per node two floats into *ranges (malloc'd), its
 * first input's range over the calibration samples (files: --calibrate NAME=FILE.npy;
 * none: the run's inputs) by rule, NaN where no int8 kernel observed one.  0, or -errno
 * printed; where the CPU has no int8 and unsupported is not NULL, -EOPNOTSUPP with the
 * reason there, not printed. */
struct cli_list;
int cli_int8_ranges(const struct ho_graph *g, const struct ho_rt_opts *base,
		    const struct cli_inputs *in, const struct cli_list *files, const char *rule,
		    float **ranges, struct ho_error *unsupported);

/* run's precision options (run_precision.c): checked, calibrated, picked or read into ro
 * (node_precision, node_range: *want, *ranges, the caller frees); 0, 1 (failed) or 2 (a
 * usage error), printed. */
struct cli_precision_args {
	const char *precision, *sensitivity, *accuracy, *accuracy_metric, *int8_range, *outdir;
	const struct cli_list *calibrate;
	bool schedule;
};
int cli_run_precision(const struct ho_graph *g, const struct cli_precision_args *a,
		      struct ho_rt_opts *ro, const struct cli_inputs *in, struct cli_accuracy *acc,
		      const char ***want, float **ranges);

/* Precision plans (precision_plan.c): per node the precision want says (NULL: float32)
 * and range its int8 input range (NULL, NaN: none), written to path with what picked it
 * (metric NULL: none); read back for --precision PLAN.json.  0, or -errno printed. */
int cli_plan_write(const char *path, const struct ho_graph *g, const char *const *want,
		   const float *range, const char *metric, double budget, double error);
int cli_plan_read(const char *path, const struct ho_graph *g, const char ***want, float **range);

/* Seconds on the monotonic clock: what every command times with. */
double cli_clock_s(void);
/*
 * Warn on stderr when the file (a profile or a schedule: what) records a
 * machine other than this one, naming what differs.
 */
void cli_warn_machine(const char *path, const char *what);
/*
 * --resume (resume.c): the front of an earlier schedule of problem p as
 * plans (*n of them, the caller frees each and the array); -1 with a
 * message when it is of another problem.
 */
struct ho_problem;
struct ho_plan;
int cli_resume(const char *path, const struct ho_problem *p, struct ho_plan ***out, uint32_t *n);
/* trace.c: the run record, Chrome trace JSON, and JSON written whole or not at all. */
struct ho_graph;
struct ho_rt_placement;
struct ho_rt_report;
typedef struct json_t json_t;
/* The first key of object o that keys (NULL-terminated) does not list, or NULL: the check
 * the CLI's own files (plans, sensitivities) make. */
const char *cli_odd_key(json_t *o, const char *const *keys);
/* An operator's class ("compute", "memory", ...; "other" when unknown): what colours it. */
const char *cli_op_class(const char *op);
/* What `run --save-run` writes: devices, the last run's nodes and copies, the latencies. */
json_t *cli_run_record(const struct ho_graph *g, const struct ho_rt_placement *pl,
		       const struct ho_rt_report *r, const char *model, const char *schedule,
		       const double *sorted_s, int repeat, int warmup);
/* sched's front member (NULL: none) predicted, and run (NULL: none) measured, as a trace. */
int cli_trace_write(const char *path, const json_t *sched, int member, const json_t *run);
/* root as path: a temporary beside it, renamed when whole.  0 or -errno. */
int cli_write_json(const json_t *root, const char *path, size_t flags);
/*
 * outputs.c, asked before the work: whether a file can be written at path
 * (its folder exists and takes new files, and path is no folder), and the
 * folder dir made if missing and taking files.  0, or the cli_error printed
 * (what: the command and option, as "run: --save-run") and -errno.
 */
int cli_can_write(const char *path, const char *what);
int cli_make_folder(const char *dir, const char *what);

/*
 * progress.c: a line on stderr while a run of rt lasts longer than a few
 * seconds, naming the phase (what, index of count) and the nodes done.
 * NULL from start (no thread): no line, nothing else changes.
 */
struct ho_rt;
struct cli_progress;
struct cli_progress *cli_progress_start(const struct ho_rt *rt);
void cli_progress_phase(struct cli_progress *p, const char *what, int index, int count);
void cli_progress_stop(struct cli_progress *p);

/* placement.c: --schedule (with --box, --pick; ~0 = the schedule's own pick) loaded for g. */
struct ho_error;
int cli_placement(const char *schedule, const char *box, unsigned long long pick, const char *model,
		  const struct ho_graph *g, struct ho_rt_placement **pl, struct ho_error *err);

/* The scheduling problem of g on box: no node where box's backends would refuse its kernel. */
struct ho_box;
struct ho_profile;
int cli_problem(const struct ho_graph *g, const struct ho_box *box, const struct ho_profile *prof,
		struct ho_problem **out, struct ho_error *err);

/* Print "heteroopt: <msg>" to stderr. */
void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

enum cli_opt_kind {
	CLI_FLAG,  /* bool, set when given */
	CLI_TEXT,  /* const char *, the last one given */
	CLI_LIST,  /* struct cli_list, repeatable */
	CLI_COUNT, /* unsigned long long, decimal, in [lo, hi] */
};

#define CLI_LIST_MAX 32
struct cli_list {
	const char *v[CLI_LIST_MAX];
	int n;
};

struct cli_opt {
	const char *name;	   /* "--box"; NULL ends a table */
	const char *alias;	   /* "-o", or NULL */
	int kind;		   /* enum cli_opt_kind */
	const char *value;	   /* what the value looks like, for --help: "BOX.json" */
	const char *help;	   /* what it does, its unit and its default; '\n' breaks lines */
	size_t at;		   /* offsetof the field in the command's argument struct */
	unsigned long long lo, hi; /* CLI_COUNT: the accepted range */
};

struct cli_command {
	const char *name;	/* "schedule" */
	const char *usage;	/* what follows "heteroopt NAME" in the usage line */
	const char *about;	/* a paragraph under the usage line, or NULL */
	const char *positional; /* what the one bare argument is ("model"), or NULL */
	size_t positional_at;	/* offsetof its const char * */
	const struct cli_opt *opts;
};

/*
 * Parse argv[1..] into args as c's table says.  0: parsed; 1: --help or
 * --version was printed (exit 0); -1: an error was printed (exit 2).
 */
int cli_parse(const struct cli_command *c, int argc, char **argv, void *args);
void cli_usage(const struct cli_command *c, FILE *f);
/* A decimal whole number in [lo, hi] and nothing after it, or -1 with a message. */
int cli_number(const char *opt, const char *text, unsigned long long lo, unsigned long long hi,
	       unsigned long long *out);

/* --bound NAME=N (bounds.c): parsed (names malloc'ed; cli_bounds_free), or g's shapes a
 * run decides priced at their bounds (ho_graph_infer_bounds: how many, or -1, said),
 * and the bounded tensors listed, at most most of them. */
int cli_bounds_parse(const struct cli_list *l, struct ho_extent_bound **out);
void cli_bounds_free(struct ho_extent_bound *b, int n);
int cli_bounds_price(struct ho_graph *g, const struct cli_list *l);
void cli_bounds_print(const struct ho_graph *g, const char *indent, int most);

#endif
