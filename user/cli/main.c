// SPDX-License-Identifier: MIT
/* heteroopt: command-line entry point and subcommand dispatch. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "heteroopt/version.h"

static const struct {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *help;
} commands[] = {
    {"inspect", cmd_inspect, "read an ONNX model, infer shapes, print per-node costs"},
    {"schedule", cmd_schedule, "find a Pareto front of schedules for a model on a box"},
    {"run", cmd_run, "run a model here, on the CPU or as a schedule places it; .npy in and out"},
    {"status", cmd_status, "show the tensor memory pool (ump.ko or the fallback)"},
};

void cli_error(const char *fmt, ...)
{
	va_list ap;

	fputs("heteroopt: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
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
