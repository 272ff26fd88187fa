// SPDX-License-Identifier: MIT
/* heteroopt: command-line entry point and subcommand dispatch. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <heteroopt/probe.h>

#include "cli.h"
#include "heteroopt/version.h"

/*
 * The OpenMP wait policy, chosen before libgomp reads it.  libgomp's default
 * spins 300,000 times at every barrier: on a busy machine a team thread then
 * burns its time slice while its peer waits for a core, and resnet18 took
 * 344 ms instead of 17 (two competing processes on two cores).  Passive
 * waiting fixes that but costs 10-80% on an idle machine (mobilenet_v2 3.8
 * against 7.0 ms).  3,000 spins kept the idle times and, beside the same
 * load, gave 43 ms (bench/busy.sh measures it).  A user's own
 * OMP_WAIT_POLICY or GOMP_SPINCOUNT wins.  libgomp reads the environment in
 * its constructor, before main(), and a preinit function runs too early for
 * setenv to survive libc's own start, so the command starts itself again
 * once with the variable set (about a millisecond).
 */
static void cli_wait_policy(char **argv)
{
	const char *preload = getenv("LD_PRELOAD");
	char self[4096];
	ssize_t n;

	if (getenv("OMP_WAIT_POLICY") || getenv("GOMP_SPINCOUNT"))
		return;
	/* Under valgrind a restart would leave it (its preload names itself). */
	if (preload && strstr(preload, "vgpreload"))
		return;
	/* The file itself, not /proc/self/exe, which a tool may stand behind. */
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0 || setenv("GOMP_SPINCOUNT", "3000", 0))
		return;
	self[n] = '\0';
	execv(self, argv);
	/* not restarted: run on with libgomp's default */
}

static const struct {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *help;
} commands[] = {
    {"inspect", cmd_inspect, "read an ONNX model, infer shapes, print per-node costs"},
    {"schedule", cmd_schedule, "find a Pareto front of schedules for a model on a box"},
    {"run", cmd_run, "run a model here, on the CPU or as a schedule places it; .npy in and out"},
    {"probe", cmd_probe, "measure this machine: the profile the cost model reads, or a box"},
    {"calibrate", cmd_calibrate, "run a model's plan here: predicted against measured, a refit"},
    {"report", cmd_report, "a schedule (and a run of it) as one HTML page that opens offline"},
    {"serve", cmd_serve, "run a model on frames a producer sends as fds, with no copy"},
    {"feed", cmd_feed, "send frames to heteroopt serve and check every answer"},
    {"status", cmd_status, "show the tensor memory pool (ump.ko or the fallback)"},
};

double cli_clock_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void cli_error(const char *fmt, ...)
{
	va_list ap;

	fputs("heteroopt: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void cli_warn_machine(const char *path, const char *what)
{
	struct ho_machine here;
	char diff[1024];

	ho_machine_read(&here);
	if (ho_machine_compare(path, &here, diff, sizeof(diff)) == 1)
		cli_error("warning: %s %s was measured on another machine (%s): its figures may "
			  "not hold here; heteroopt probe measures this one",
			  what, path, diff);
}

static void usage(FILE *f)
{
	fprintf(f, "usage: heteroopt COMMAND [ARGS]\n\ncommands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].help);
	fprintf(f, "\n'heteroopt COMMAND --help' describes one command; 'heteroopt --version'\n"
		   "prints the version.\n");
}

int main(int argc, char **argv)
{
	cli_wait_policy(argv);
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("heteroopt %s\n", HO_VERSION_STRING);
		return 0;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].run(argc - 1, argv + 1);
	cli_error("unknown command '%s'", argv[1]);
	usage(stderr);
	return 2;
}
