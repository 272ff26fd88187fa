// SPDX-License-Identifier: MIT
/*
 * heteroopt probe: measure this machine and write the profile the cost
 * model reads (probes/), or, with --write-box, a box describing it.
 */
#include <jansson.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <heteroopt/probe.h>

#include "cli.h"

struct probe_args {
	const char *box, *out;
	struct cli_list models, shapes;
	unsigned long long split;
	bool quick, links_only, write_box, opencl, quiet;
};

#define PA(field) offsetof(struct probe_args, field)
static const struct cli_opt probe_opts[] = {
    {"--box", NULL, CLI_TEXT, "BOX.json",
     "the box whose devices are measured (cpu devices, each on\nits cores and threads)", PA(box), 0,
     0},
    {"--output", "-o", CLI_TEXT, "FILE.json",
     "where the profile (or, with --write-box, the box) goes;\nwritten whole or not at all",
     PA(out), 0, 0},
    {"--quick", NULL, CLI_FLAG, NULL,
     "fewer shapes and repeats (under 20 s on two cores); the\ndefault is the full sweep (under "
     "2 minutes)",
     PA(quick), 0, 0},
    {"--links-only", NULL, CLI_FLAG, NULL,
     "measure only the links between the box's devices: the\nhand-off and pool copies through "
     "every path (io_uring,\nioctl, the user-space fallback's copy thread)",
     PA(links_only), 0, 0},
    {"--model", NULL, CLI_LIST, "M.onnx",
     "also measure every node of this model in place, as a\nfamily the cost model scales to other "
     "sizes (repeatable)",
     PA(models), 0, 0},
    {"--shape", NULL, CLI_LIST, "NAME=D0xD1...", "bind a symbolic input of the --model that has it",
     PA(shapes), 0, 0},
    {"--write-box", NULL, CLI_FLAG, NULL,
     "write a box of this machine instead: its CPUs, NUMA\nnodes and memory, split into --split "
     "devices",
     PA(write_box), 0, 0},
    {"--split", NULL, CLI_COUNT, "N", "with --write-box: that many CPU devices (default 1)",
     PA(split), 1, 32},
    {"--opencl", NULL, CLI_FLAG, NULL,
     "with --write-box: the OpenCL (and CUDA) devices found here\njoin the box; one on CPU cores "
     "(PoCL) "
     "takes the last --split\ngroup's cores",
     PA(opencl), 0, 0},
    {"--quiet", "-q", CLI_FLAG, NULL, "no progress line", PA(quiet), 0, 0},
    {0},
};

static const struct cli_command probe_cmd = {
    .name = "probe",
    .usage = "--box BOX.json [--quick] [--links-only | --model M.onnx ...] -o PROFILE.json\n"
	     "       heteroopt probe --write-box [--split N] [--opencl] -o BOX.json",
    .about = "Measure the box's devices on this machine with the runtime's own kernels and\n"
	     "pool: a sweep of kernels per class, fitted per class; bandwidth by size and\n"
	     "stride; dispatch overhead; copies and hand-offs between devices; how much\n"
	     "devices slow each other.  Every figure is a median over repeats; one that\n"
	     "stays noisy is flagged in the profile.  Ctrl-C leaves no file.",
    .opts = probe_opts,
};

/* The box written, a device a line: its cores, what runs it, what it stands in for. */
static void probe_print_box(const char *path)
{
	json_t *doc = json_load_file(path, 0, NULL), *d, *c, *alt;
	size_t i, k;

	json_array_foreach(json_object_get(doc, "devices"), i, d)
	{
		json_t *be = json_object_get(d, "backend");

		printf("  %-6s %-4s cores", json_string_value(json_object_get(d, "name")),
		       json_string_value(json_object_get(d, "kind")));
		json_array_foreach(json_object_get(d, "cores"), k, c)
		    printf("%s%" JSON_INTEGER_FORMAT, k ? "," : " ", json_integer_value(c));
		printf(", %s", be ? json_string_value(json_object_get(be, "device")) : "oneDNN");
		if ((alt = json_object_get(d, "alternative_to"))) {
			printf(", all of");
			json_array_foreach(alt, k, c)
			    printf("%s%s", k ? " and " : " ", json_string_value(c));
			printf(" as one: a schedule uses one or the other");
		}
		printf("\n");
	}
	json_decref(doc);
}

/* The copy paths the profile holds, a line each: what a pool copy costs on this machine. */
static void probe_print_copies(const char *path)
{
	json_t *doc = json_load_file(path, 0, NULL), *link, *c;
	size_t i, k;

	json_array_foreach(json_object_get(doc, "links"), i, link)
	{
		json_t *hbw = json_object_get(link, "handoff_gbps");
		json_t *first = json_array_get(json_object_get(link, "copies"), 0);

		/* a device with memory of its own: uploads and downloads through its backend */
		if (first && !json_object_get(first, "pool")) {
			printf("probe: %s and %s: copies through the %s, %.1f us + bytes at %.2f "
			       "GB/s\n",
			       json_string_value(json_object_get(link, "a")),
			       json_string_value(json_object_get(link, "b")),
			       json_string_value(json_object_get(first, "path")),
			       json_number_value(json_object_get(link, "latency_us")),
			       json_number_value(json_object_get(link, "gbps")));
			continue;
		}
		/* no bandwidth when the bigger tensors cost nothing more to read */
		printf("probe: %s and %s: hand-off %.1f us",
		       json_string_value(json_object_get(link, "a")),
		       json_string_value(json_object_get(link, "b")),
		       json_number_value(json_object_get(link, "latency_us")));
		if (hbw)
			printf(", a fresh tensor read in place at %.1f GB/s",
			       json_number_value(hbw));
		printf("; pool copies:\n");
		json_array_foreach(json_object_get(link, "copies"), k, c)
		{
			printf("  %-11s 4 KiB in %.1f us, %.1f us each of %d in flight, %.2f GB/s "
			       "from %.0f KiB; %" JSON_INTEGER_FORMAT " chains (%s)\n",
			       json_string_value(json_object_get(c, "path")),
			       json_number_value(json_object_get(c, "latency_us")),
			       json_number_value(json_object_get(c, "burst_us_per_chain")),
			       (int)json_integer_value(json_object_get(c, "burst_chains")),
			       json_number_value(json_object_get(c, "gbps")),
			       json_number_value(json_object_get(c, "saturates_at_bytes")) / 1024,
			       json_integer_value(json_object_get(c, "chains")),
			       json_string_value(json_object_get(c, "pool")));
		}
	}
	json_decref(doc);
}

static volatile sig_atomic_t probe_stop;

static void probe_on_signal(int sig)
{
	(void)sig;
	probe_stop = 1;
}

static void probe_progress_line(const char *step, uint32_t done, uint32_t total, void *arg)
{
	(void)arg;
	fprintf(stderr, "\r\033[Kprobe [%3u/%3u] %.70s", done, total, step);
	fflush(stderr);
}

int cmd_probe(int argc, char **argv)
{
	struct probe_args a = {.split = 1};
	struct ho_probe_model models[CLI_LIST_MAX];
	char model_spec[CLI_LIST_MAX][4096];
	const char *model_shapes[CLI_LIST_MAX][2 * CLI_LIST_MAX];
	struct ho_probe_opts po = {0};
	struct sigaction sa = {0};
	struct ho_error err = {0};
	struct ho_box *box = NULL;
	bool tty;
	int ret;

	switch (cli_parse(&probe_cmd, argc, argv, &a)) {
	case 1:
		return 0;
	case -1:
		return 2;
	}
	if (!a.out) {
		cli_error("probe: no output given (-o FILE.json)");
		return 2;
	}
	if (cli_can_write(a.out, "probe: -o"))
		return 1;
	if (a.write_box) {
		if (a.box || a.models.n || a.quick || a.links_only) {
			cli_error("probe: --write-box takes only --split, --opencl and -o");
			return 2;
		}
		if (ho_probe_write_box(a.out, (unsigned)a.split, a.opencl, &err)) {
			cli_error("%s", err.msg);
			return 1;
		}
		printf("probe: wrote %s: this machine as %llu CPU device%s\n", a.out, a.split,
		       a.split > 1 ? "s" : "");
		probe_print_box(a.out);
		return 0;
	}
	if (a.opencl) {
		cli_error("probe: --opencl goes with --write-box");
		return 2;
	}
	if (!a.box) {
		cli_error("probe: no box given (--box BOX.json; heteroopt probe --write-box -o "
			  "BOX.json writes one of this machine)");
		return 2;
	}
	if (a.links_only && a.models.n) {
		cli_error("probe: --links-only measures no model (--model)");
		return 2;
	}
	if (ho_box_load(a.box, &box, &err)) {
		cli_error("probe: %s: %s", a.box, err.msg);
		return 1;
	}
	/* "m.onnx:x=1x3x48x320": the model's own bindings, then the common ones */
	for (int i = 0; i < a.models.n; i++) {
		char *spec = model_spec[i], *at;
		uint32_t n = 0;

		snprintf(spec, sizeof(model_spec[i]), "%s", a.models.v[i]);
		at = strstr(spec, ".onnx:");
		if (at) {
			at += 5;
			*at++ = '\0';
			for (char *tok = strtok(at, ":"); tok && n < CLI_LIST_MAX;
			     tok = strtok(NULL, ":"))
				model_shapes[i][n++] = tok;
		}
		for (int k = 0; k < a.shapes.n; k++)
			model_shapes[i][n++] = a.shapes.v[k];
		models[i] = (struct ho_probe_model){spec, model_shapes[i], n};
	}
	tty = !a.quiet && isatty(STDERR_FILENO);
	po.quick = a.quick;
	po.links_only = a.links_only;
	po.models = models;
	po.n_models = (uint32_t)a.models.n;
	po.progress = tty ? probe_progress_line : NULL;
	po.stop = &probe_stop;
	sa.sa_handler = probe_on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	ret = ho_probe_box(box, a.box, &po, a.out, &err);
	if (tty)
		fprintf(stderr, "\r\033[K");
	ho_box_free(box);
	if (ret) {
		cli_error("%s%s", err.msg, probe_stop ? "; nothing was written" : "");
		return probe_stop ? 130 : 1;
	}
	printf("probe: wrote %s\n", a.out);
	probe_print_copies(a.out);
	return 0;
}
