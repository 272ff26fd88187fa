// SPDX-License-Identifier: MIT
/*
 * heteroopt run: execute a model, on one CPU device or as a schedule from
 * `heteroopt schedule` places it, with inputs and outputs as .npy files.
 * Input shapes come from the files; the report compares what ran with what
 * the schedule predicted.
 */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <heteroopt/npy.h>
#include <heteroopt/runtime.h>

#include "cli.h"

struct run_args {
	const char *model, *outdir, *schedule, *box, *inject_failure, *save_run, *trace, *precision,
	    *sensitivity, *accuracy, *int8_range, *accuracy_metric;
	struct cli_list inputs, bind, bounds, calibrate;
	unsigned long long repeat, warmup, threads, pick;
	bool report, pace, plain_layout, no_fusion, copy_ioctl;
};

#define RA(field) offsetof(struct run_args, field)
static const struct cli_opt run_opts[] = {
    {"--input", NULL, CLI_LIST, "NAME=FILE.npy",
     "model input NAME from a .npy file of its type; its shape binds\n"
     "the input's extents; one per model input",
     RA(inputs), 0, 0},
    {"--bind", NULL, CLI_LIST, "NAME",
     "plan ahead for the values of input NAME's file, not only its\n"
     "shape (without it, what they decide is planned as the run\n"
     "meets them); other values are refused at run time",
     RA(bind), 0, 0},
    {"--output", "-o", CLI_TEXT, "DIR", "write each output as DIR/<output name>.npy (default .)",
     RA(outdir), 0, 0},
    {"--repeat", NULL, CLI_COUNT, "N",
     "warm runs measured: their median, P90 and P99 are printed\n"
     "and the median is held against the prediction (default 10)",
     RA(repeat), 1, 100000},
    {"--warmup", NULL, CLI_COUNT, "N",
     "runs before measuring: threads start, caches and pages\nwarm (default 2, at least 1)",
     RA(warmup), 1, 1000},
    {"--threads", NULL, CLI_COUNT, "N",
     "without --schedule: oneDNN threads of the CPU device\n"
     "(default: OpenMP's choice, one per core)",
     RA(threads), 1, 1024},
    {"--precision", NULL, CLI_TEXT, "fp32|bf16|int8|auto|PLAN.json",
     "without --schedule: the CPU device's arithmetic; bf16 rounds\n"
     "convolutions' and weight products' inputs and weights to\n"
     "bfloat16 (float32 sums and outputs), on a CPU with AVX512-BF16\n"
     "or AMX; int8 quantizes convolutions' (input by its range on\n"
     "--calibrate, weights per channel), on a CPU with VNNI or AMX;\n"
     "auto: per node int8, bf16 or fp32, the least sensitive nodes\n"
     "reduced, as many as --accuracy allows, measured on the inputs\n"
     "given; int8 and auto write DIR/precision.json, a plan that\n"
     "--precision PLAN.json runs again as it is (default fp32)",
     RA(precision), 0, 0},
    {"--calibrate", NULL, CLI_LIST, "NAME=FILE.npy",
     "with --precision int8: samples of input NAME to calibrate on,\n"
     "its shape with a leading axis of samples; inputs not named\n"
     "keep --input's (default: the run's inputs, one sample)",
     RA(calibrate), 0, 0},
    {"--int8-range", NULL, CLI_TEXT, "max|mse|pNN",
     "with int8: each input's range from what calibration saw: its\n"
     "lowest to highest (max), clipped where the int8 values' squared\n"
     "error is least (mse), or at a percentile of |x| (default p99.99)",
     RA(int8_range), 0, 0},
    {"--accuracy", NULL, CLI_TEXT, "BUDGET",
     "with --precision auto: the largest error allowed, a fraction\n"
     "by --accuracy-metric (1e-3)",
     RA(accuracy), 0, 0},
    {"--accuracy-metric", NULL, CLI_TEXT, "max|top1|ctc|iou@T",
     "what --accuracy and --sensitivity judge, over every row of\n"
     "the outputs: max, the largest difference over float32's\n"
     "largest value (default); top1, the rows whose best class\n"
     "moved; ctc, those whose greedy CTC decoding changed (a\n"
     "recogniser's strings); iou@T, 1 - IoU of the outputs\n"
     "binarised at T (a segmentation map's)",
     RA(accuracy_metric), 0, 0},
    {"--sensitivity", NULL, CLI_TEXT, "bf16|int8",
     "instead of timed runs: each node that can compute in this\n"
     "precision alone so, its outputs' error against float32's on\n"
     "the inputs given, worst first, and DIR/sensitivity.json",
     RA(sensitivity), 0, 0},
    {"--schedule", NULL, CLI_TEXT, "S.json",
     "run a schedule from heteroopt schedule over its box's\n"
     "devices: each on the backend it names (opencl), else cpu\n"
     "devices on oneDNN and any other kind on the emulated\n"
     "accelerator (the same kernels in a region of its own);\n"
     "the run is reported against the prediction",
     RA(schedule), 0, 0},
    {"--pick", NULL, CLI_COUNT, "N",
     "with --schedule: run front member N (default: the\nschedule's pick)", RA(pick), 0, 1000000},
    {"--box", NULL, CLI_TEXT, "BOX.json",
     "with --schedule: the box file, when not where the schedule\n"
     "says (it must be the same box: its fingerprint is checked)",
     RA(box), 0, 0},
    {"--report", NULL, CLI_FLAG, NULL,
     "list every node of the last run as it started: device,\n"
     "measured and predicted times",
     RA(report), 0, 0},
    {"--bound", NULL, CLI_LIST, "TENSOR=N",
     "fail a run in which an extent of TENSOR that the run decides\n"
     "(a NonZero's count, the boxes NMS keeps) passes N; repeatable",
     RA(bounds), 0, 0},
    {"--pace", NULL, CLI_FLAG, NULL, "each emulated accelerator node lasts its predicted time",
     RA(pace), 0, 0},
    {"--plain-layout", NULL, CLI_FLAG, NULL,
     "keep every tensor row-major (NCHW): no channels-last\nbetween kernels, for comparison",
     RA(plain_layout), 0, 0},
    {"--no-fusion", NULL, CLI_FLAG, NULL,
     "run every node as its own kernel: no batch norm, bias or\nelement-wise node folded, for "
     "comparison",
     RA(no_fusion), 0, 0},
    {"--copy-ioctl", NULL, CLI_FLAG, NULL,
     "with ump.ko: submit copies by ioctl (UMP_IOC_SUBMIT and\n"
     "WAIT) rather than io_uring, for comparison",
     RA(copy_ioctl), 0, 0},
    {"--save-run", NULL, CLI_TEXT, "RUN.json",
     "write what heteroopt report --run draws: the last run's\n"
     "nodes and copies, start and end, per device, the latencies",
     RA(save_run), 0, 0},
    {"--trace", NULL, CLI_TEXT, "TRACE.json",
     "write the last run (and, with --schedule, its prediction)\n"
     "as Chrome trace JSON, for chrome://tracing or ui.perfetto.dev",
     RA(trace), 0, 0},
    {"--inject-failure", NULL, CLI_TEXT, "NODE",
     "make that node fail at run time (tests the error paths)", RA(inject_failure), 0, 0},
    {0},
};

static const struct cli_command run_cmd = {
    .name = "run",
    .usage = "MODEL.onnx --input NAME=FILE.npy ... [-o DIR] [--repeat N] [options]",
    .about = "Run MODEL on this machine and write its outputs as .npy files: on one CPU\n"
	     "device (oneDNN kernels), or as a schedule from `heteroopt schedule` places\n"
	     "it.  Input shapes come from the files.",
    .positional = "model",
    .positional_at = RA(model),
    .opts = run_opts,
};

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Every model input given, and nothing else: said in run's own words. */
/* The q-quantile of n sorted times (nearest rank). */
static double run_quantile(const double *sorted, int n, double q)
{
	int k = (int)(q * n + 0.999999) - 1;

	return sorted[k < 0 ? 0 : k >= n ? n - 1 : k];
}

/* The run against the schedule: time, per device, copies. */
/* What a device's kernels hold beyond the plan's region (weights in their own layout) and
 * the workspace they share while each runs. */
static void print_kernel_memory(const struct ho_rt_report *r, uint32_t d)
{
	if (r->kernel_held_bytes[d] || r->workspace_bytes[d])
		printf("           its kernels: %.2f MB of their own (weights in their layout), "
		       "%.2f MB workspace\n",
		       r->kernel_held_bytes[d] / 1e6, r->workspace_bytes[d] / 1e6);
}

static void print_report(const struct ho_graph *g, const struct ho_rt_placement *pl,
			 const struct ho_rt_report *r, const double *times, int repeat, int warmup)
{
	double measured = times[repeat / 2];

	double dev_sum = 0, dev_max = 0, start_abs = 0, start_max = 0;
	uint32_t timed = 0;

	printf("run: schedule front member %d on %s; memory pool: %s\n", pl->pick, pl->box,
	       r->pool);
	for (uint32_t d = 0; d < pl->n_devices; d++) {
		printf("  %-8s %-22s %4u nodes, busy %8.3f ms; memory %7.2f MB planned (%7.2f "
		       "without reuse), %7.2f MB predicted peak\n",
		       pl->dev[d].name, r->backend_desc[d] ? r->backend_desc[d] : "?",
		       r->nodes_run[d], r->busy_s[d] * 1e3, r->region_bytes[d] / 1e6,
		       r->unshared_bytes[d] / 1e6, pl->pred_peak[d] / 1e6);
		printf("           NUMA node %d (%s)", pl->dev[d].numa_node, pl->dev[d].numa_from);
		if (r->cpu_seen[d] >= 0)
			printf(", first node ran on CPU %d", r->cpu_seen[d]);
		if (*pl->dev[d].p2p_pci)
			printf(", its region in PCI %s's P2P memory", pl->dev[d].p2p_pci);
		else if (r->region_node[d] >= 0)
			printf(", its region's pages on node %d", r->region_node[d]);
		else if (r->region_node[d] == -ENODATA)
			printf(", its region's pages on several nodes");
		printf("\n");
		print_kernel_memory(r, d);
	}
	/* How far each node's measured duration and start are from the timeline's. */
	for (uint32_t i = 0; i < g->n_nodes; i++) {
		double pd, md, ds;

		if (pl->node_device[i] < 0 || r->start_s[i] < 0)
			continue;
		pd = pl->pred_end[i] - pl->pred_start[i];
		md = r->end_s[i] - r->start_s[i];
		dev_sum += md - pd;
		dev_max = md - pd > dev_max ? md - pd : dev_max;
		ds = r->start_s[i] - pl->pred_start[i];
		start_abs += ds < 0 ? -ds : ds;
		start_max = (ds < 0 ? -ds : ds) > start_max ? (ds < 0 ? -ds : ds) : start_max;
		timed++;
	}
	printf("  latency: measured %.3f ms (median of %d warm runs), predicted %.3f ms "
	       "(ratio %.2f); P90 %.3f ms, P99 %.3f ms, after %d warm-up runs\n",
	       measured * 1e3, repeat, pl->pred_makespan * 1e3,
	       pl->pred_makespan > 0 ? measured / pl->pred_makespan : 0,
	       run_quantile(times, repeat, 0.9) * 1e3, run_quantile(times, repeat, 0.99) * 1e3,
	       warmup);
	printf("  node durations: measured minus predicted, mean %+.3f ms, largest %+.3f ms over "
	       "%u nodes\n",
	       timed ? dev_sum / timed * 1e3 : 0, dev_max * 1e3, timed);
	printf("  node starts: measured against predicted, mean |difference| %.3f ms, largest %.3f "
	       "ms\n",
	       timed ? start_abs / timed * 1e3 : 0, start_max * 1e3);
	if (r->fused || pl->pred_fused)
		printf("  %u nodes folded into the Conv, MatMul or batch norm before them (batch "
		       "norm, bias, residual Add, element-wise, Transpose), schedule predicts %u\n",
		       r->fused, pl->pred_fused);
	if (r->through)
		printf("  %u Transposes read in place by the MatMul after them\n", r->through);
	if (r->gathered || pl->pred_gathered)
		printf("  %u Concats whose inputs were written straight into their output, "
		       "schedule predicts %u\n",
		       r->gathered, pl->pred_gathered);
	if (r->memory_waits)
		printf("  %u waits added so that buffers are reused as the timeline allows\n",
		       r->memory_waits);
	printf("  copies: %u made (%.0f bytes), schedule predicts %u (%.0f bytes); %u "
	       "cross-device reads served in place\n",
	       r->transfers, r->bytes_moved, pl->pred_transfers, pl->pred_bytes, r->zero_copy);
	printf("  pool chains: %u submitted by %s (%.0f bytes)", r->chains, r->copy_path,
	       r->chain_bytes);
	if (r->module_chains >= 0)
		printf("; ump.ko counted %lld chains (%lld bytes, %lld staged through host memory)",
		       (long long)r->module_chains, (long long)r->module_bytes,
		       (long long)r->module_staged);
	printf("\n");
}

/* --report: every node of the last run, in the order they started. */
static int by_start(const void *a, const void *b, void *arg)
{
	const double *s = arg;
	double x = s[*(const uint32_t *)a], y = s[*(const uint32_t *)b];

	return x < y ? -1 : x > y;
}

static int print_nodes(const struct ho_graph *g, const struct ho_rt_placement *pl,
		       const struct ho_rt_report *r)
{
	uint32_t *ids = calloc(g->n_nodes + 1, sizeof(uint32_t)), n = 0;

	if (!ids)
		return -ENOMEM;
	for (uint32_t i = 0; i < g->n_nodes; i++)
		if (r->start_s[i] >= 0)
			ids[n++] = i;
	qsort_r(ids, n, sizeof(*ids), by_start, (void *)r->start_s);
	printf("%-44s %-20s %-8s %21s %21s\n", "node", "op", "device", "measured (ms)",
	       pl ? "predicted (ms)" : "");
	for (uint32_t k = 0; k < n; k++) {
		uint32_t i = ids[k];

		printf("%-44.44s %-20.20s %-8s %10.3f-%10.3f", g->nodes[i].name,
		       g->nodes[i].op_type, pl ? pl->dev[pl->node_device[i]].name : "cpu0",
		       r->start_s[i] * 1e3, r->end_s[i] * 1e3);
		if (pl)
			printf(" %10.3f-%10.3f", pl->pred_start[i] * 1e3, pl->pred_end[i] * 1e3);
		if (r->node_precision && r->node_precision[i])
			printf(" %s", r->node_precision[i]);
		printf("\n");
	}
	free(ids);
	return 0;
}

/* warmup runs, then repeat timed into times[], with a progress line when they take long */
static int timed_runs(struct ho_rt *rt, int warmup, int repeat, double *times, struct ho_error *err)
{
	struct cli_progress *p = cli_progress_start(rt);
	int ret = 0;

	for (int w = 0; w < warmup && !ret; w++) {
		cli_progress_phase(p, "warm-up run", w + 1, warmup);
		ret = ho_rt_run(rt, err);
	}
	for (int r = 0; r < repeat && !ret; r++) {
		double t0 = cli_clock_s();

		cli_progress_phase(p, "run", r + 1, repeat);
		ret = ho_rt_run(rt, err);
		times[r] = cli_clock_s() - t0;
	}
	cli_progress_stop(p);
	return ret;
}

/* "int8" or "int8 and 3 in bf16": how many nodes in each reduced precision, the first
 * count printed before. */
static void print_reduced(const struct ho_graph *g, const struct ho_rt_report *r)
{
	bool first = true;

	for (uint32_t p = 1; ho_rt_precisions[p]; p++) {
		uint32_t n = 0;

		for (uint32_t i = 0; i < g->n_nodes; i++)
			n += r->node_precision[i] &&
			     !strcmp(r->node_precision[i], ho_rt_precisions[p]);
		if (n)
			printf(first ? "run: %u nodes computed in %s" : " and %u in %s", n,
			       ho_rt_precisions[p]);
		first &= !n;
	}
	printf(" (inputs and weights rounded or quantized; float32 outputs), the others in "
	       "float32\n");
}

/* --precision auto: the budget parsed, each node's precision picked (ro->node_precision). */
int cmd_run(int argc, char **argv)
{
	struct run_args a = {.outdir = ".", .repeat = 10, .warmup = 2};
	struct ho_npy in[CLI_LIST_MAX] = {0};
	char in_name[CLI_LIST_MAX][256];
	struct ho_rt_opts ro = {0};
	struct ho_rt_placement *pl = NULL;
	struct ho_graph *g = NULL;
	struct ho_rt *rt = NULL;
	struct ho_error err = {0};
	double *times = NULL;
	struct ho_extent_bound *bounds = NULL;
	const char **auto_want = NULL; /* --precision auto: per node */
	float *ranges = NULL;	       /* --precision int8: per node, calibrated */
	int n_in, repeat, rc = 1;

	a.pick = ~0ull; /* none given: the schedule's own */
	switch (cli_parse(&run_cmd, argc, argv, &a)) {
	case 1:
		return 0;
	case -1:
		return 2;
	}
	if (!a.model) {
		cli_error("run: no model given (see heteroopt run --help)");
		return 2;
	}
	n_in = a.inputs.n;
	repeat = (int)a.repeat;
	ro.threads = (int)a.threads;
	ro.pace = a.pace;
	ro.plain_layout = a.plain_layout;
	ro.no_fusion = a.no_fusion;
	ro.precision = a.precision;
	ro.copy_ioctl = a.copy_ioctl;
	ro.inject_failure = a.inject_failure;
	/* where the results go, before the work: a typo there must not throw it away */
	if (cli_make_folder(a.outdir, "run: -o") ||
	    (a.save_run && cli_can_write(a.save_run, "run: --save-run")) ||
	    (a.trace && cli_can_write(a.trace, "run: --trace")))
		return 1;
	if (ho_onnx_load(a.model, NULL, &g, &err)) {
		cli_error("run: %s", err.msg);
		return 1;
	}
	if ((rc = cli_inputs_read(g, &a.inputs, &a.bind, "run", in_name, in)))
		goto out;
	rc = 1;
	if (ho_shape_infer(g, &err))
		goto fail;
	if (cli_bounds_parse(&a.bounds, &bounds))
		goto out;
	for (int i = 0; i < a.bounds.n; i++)
		if (!ho_graph_names_tensor(g, bounds[i].tensor)) {
			cli_error("run: --bound: the model has no tensor '%s'", bounds[i].tensor);
			goto out;
		}
	ro.bounds = bounds;
	ro.n_bounds = (uint32_t)a.bounds.n;
	if (a.schedule) {
		if (cli_placement(a.schedule, a.box, a.pick, a.model, g, &pl, &err))
			goto fail;
		ro.placement = pl;
	}
	struct cli_inputs ci = {(const char(*)[256])in_name, in, n_in};

	struct cli_accuracy acc;
	const struct cli_precision_args pa = {a.precision,	 a.sensitivity,	    a.accuracy,
					      a.accuracy_metric, a.int8_range,	    a.outdir,
					      &a.calibrate,	 a.schedule != NULL};

	if ((rc = cli_run_precision(g, &pa, &ro, &ci, &acc, &auto_want, &ranges)))
		goto out;
	rc = 1;
	if (a.sensitivity) {
		if (a.schedule || a.precision) {
			cli_error("run: --sensitivity runs on one CPU device, each node in turn: "
				  "without --schedule or --precision");
			rc = 2;
			goto out;
		}
		rc = cli_sensitivity(g, &ro, &ci, a.sensitivity, &acc, a.outdir);
		goto out;
	}
	if (ho_rt_new(g, &ro, &rt, &err))
		goto fail;
	for (int i = 0; i < n_in; i++)
		if (ho_rt_set_input_data(rt, in_name[i], ho_npy_dtype(in[i].descr), in[i].shape,
					 in[i].ndim, in[i].data, &err))
			goto fail;
	times = calloc((size_t)repeat, sizeof(double));
	if (!times) {
		cli_error("run: out of memory");
		goto out;
	}
	if (timed_runs(rt, (int)a.warmup, repeat, times, &err))
		goto fail;
	qsort(times, (size_t)repeat, sizeof(double), cmp_double);
	if (pl) /* per node: the last run; in all: the median of the warm runs */
		print_report(g, pl, ho_rt_last_report(rt), times, repeat, (int)a.warmup);
	if (a.report && print_nodes(g, pl, ho_rt_last_report(rt))) {
		cli_error("run: out of memory");
		goto out;
	}
	if (!pl) {
		printf("run: memory %.2f MB planned (%.2f MB without reuse); memory pool: %s\n",
		       ho_rt_last_report(rt)->region_bytes[0] / 1e6,
		       ho_rt_last_report(rt)->unshared_bytes[0] / 1e6, ho_rt_last_report(rt)->pool);
		print_kernel_memory(ho_rt_last_report(rt), 0);
		if (ho_rt_last_report(rt)->fused)
			printf(
			    "run: %u nodes folded into the Conv, MatMul or batch norm before them "
			    "(batch norm, bias, residual Add, element-wise, Transpose)\n",
			    ho_rt_last_report(rt)->fused);
		if (ho_rt_last_report(rt)->through)
			printf("run: %u Transposes read in place by the MatMul after them\n",
			       ho_rt_last_report(rt)->through);
		if (ho_rt_last_report(rt)->reduced)
			print_reduced(g, ho_rt_last_report(rt));
		if (ho_rt_last_report(rt)->gathered)
			printf("run: %u Concats whose inputs were written straight into their "
			       "output\n",
			       ho_rt_last_report(rt)->gathered);
	}
	if (pl && ho_rt_last_report(rt)->reduced) /* the schedule's precisions */
		print_reduced(g, ho_rt_last_report(rt));
	if (ho_rt_last_report(rt)->deferred)
		printf(
		    "run: %u nodes wait for the run to know their shapes (the values that decide "
		    "them came %u ways: planned for each)\n",
		    ho_rt_last_report(rt)->deferred, ho_rt_last_report(rt)->deferred_plans);
	printf("run: %u nodes on %s: median %.3f ms over %d runs (P90 %.3f, P99 %.3f, min %.3f, "
	       "max %.3f; %llu warm-up runs before)\n",
	       g->n_nodes, pl ? "the schedule's devices" : "cpu0 (oneDNN)", times[repeat / 2] * 1e3,
	       repeat, run_quantile(times, repeat, 0.9) * 1e3,
	       run_quantile(times, repeat, 0.99) * 1e3, times[0] * 1e3, times[repeat - 1] * 1e3,
	       a.warmup);
	if (a.save_run || a.trace) {
		json_t *rec = cli_run_record(g, pl, ho_rt_last_report(rt), a.model, a.schedule,
					     times, repeat, (int)a.warmup),
		       *sched = a.trace && a.schedule ? json_load_file(a.schedule, 0, NULL) : NULL;
		int r = a.save_run ? cli_write_json(rec, a.save_run, JSON_INDENT(1)) : 0;

		if (!r && a.save_run)
			printf("run: wrote %s\n", a.save_run);
		if (!r && a.trace && !(r = cli_trace_write(a.trace, sched, pl ? pl->pick : 0, rec)))
			printf("run: wrote %s (Chrome trace: the run%s)\n", a.trace,
			       sched ? " and the schedule's prediction" : "");
		json_decref(rec);
		json_decref(sched);
		if (r) {
			cli_error("run: cannot write %s: %s",
				  a.save_run && r ? a.save_run : a.trace, strerror(-r));
			goto out;
		}
	}
	for (uint32_t i = 0; i < g->n_outputs; i++) {
		const struct ho_tensor *t;
		const void *y = ho_rt_output_data(rt, i, &t);
		const char *descr = ho_npy_descr(t->dtype);
		char path[4096];

		if (!descr) {
			cli_error("run: output '%s' is %s, which .npy cannot hold", t->name,
				  ho_dtype_name(t->dtype));
			goto out;
		}
		/* Output names like "save_infer_model/scale_0.tmp_1" are not file names. */
		int len = snprintf(path, sizeof(path), "%s/", a.outdir);

		for (const char *c = t->name; *c && len < (int)sizeof(path) - 5; c++)
			path[len++] = (*c == '/' || *c == '\\') ? '_' : *c;
		snprintf(path + len, sizeof(path) - (size_t)len, ".npy");
		if (ho_npy_write(path, descr, t->shape.rank, t->shape.dim, y, &err))
			goto fail;
		printf("output %s: %s\n", t->name, path);
	}
	rc = 0;
	goto out;
fail:
	cli_error("run: %s", err.msg);
out:
	free(times);
	free(auto_want);
	free(ranges);
	ho_rt_placement_free(pl);
	for (int i = 0; i < n_in; i++)
		ho_npy_free(&in[i]);
	ho_rt_free(rt);
	cli_bounds_free(bounds, a.bounds.n);
	ho_graph_free(g);
	return rc;
}
