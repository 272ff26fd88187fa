// SPDX-License-Identifier: MIT
/*
 * One option parser for every subcommand.  A command lists its options in a
 * const table (name, value, help, where the value goes); parsing, --help and
 * the errors all come from that table, so an option cannot be parsed but
 * undocumented, or documented but not parsed.
 */
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "heteroopt/version.h"

int cli_number(const char *opt, const char *text, unsigned long long lo, unsigned long long hi,
	       unsigned long long *out)
{
	unsigned long long x;
	char *end;

	/* Decimal digits only: strtoull's base 0 reads 010 as 8, and it skips
	 * leading blanks and takes a sign. */
	errno = 0;
	x = isdigit((unsigned char)*text) ? strtoull(text, &end, 10) : 0;
	if (!isdigit((unsigned char)*text) || *end || errno || x < lo || x > hi) {
		cli_error("%s: '%s' is not a whole number from %llu to %llu", opt, text, lo, hi);
		return -1;
	}
	*out = x;
	return 0;
}

static const struct cli_opt *cli_find(const struct cli_command *c, const char *arg, size_t len)
{
	for (const struct cli_opt *o = c->opts; o->name; o++)
		if ((strlen(o->name) == len && !strncmp(o->name, arg, len)) ||
		    (o->alias && strlen(o->alias) == len && !strncmp(o->alias, arg, len)))
			return o;
	return NULL;
}

static int cli_store(const struct cli_command *c, const struct cli_opt *o, const char *v,
		     void *args)
{
	char *at = (char *)args + o->at;

	switch (o->kind) {
	case CLI_FLAG:
		*(bool *)at = true;
		return 0;
	case CLI_TEXT:
		*(const char **)at = v;
		return 0;
	case CLI_LIST: {
		struct cli_list *l = (struct cli_list *)at;

		if (l->n == CLI_LIST_MAX) {
			cli_error("%s: at most %d %s options", c->name, CLI_LIST_MAX, o->name);
			return -1;
		}
		l->v[l->n++] = v;
		return 0;
	}
	case CLI_COUNT:
		return cli_number(o->name, v, o->lo, o->hi, (unsigned long long *)at);
	}
	return -1;
}

int cli_parse(const struct cli_command *c, int argc, char **argv, void *args)
{
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *eq = strchr(a, '='), *v = NULL;
		const struct cli_opt *o;

		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			cli_usage(c, stdout);
			return 1;
		}
		if (!strcmp(a, "--version")) {
			printf("heteroopt %s\n", HO_VERSION_STRING);
			return 1;
		}
		if (a[0] != '-' || !a[1]) {
			const char **pos = (const char **)((char *)args + c->positional_at);

			if (!c->positional) {
				cli_error("%s: unexpected argument '%s' (see heteroopt %s --help)",
					  c->name, a, c->name);
				return -1;
			}
			if (*pos) {
				cli_error("%s: more than one %s given ('%s' and '%s')", c->name,
					  c->positional, *pos, a);
				return -1;
			}
			*pos = a;
			continue;
		}
		/* --name=value as well as --name value */
		o = cli_find(c, a, eq && a[1] == '-' ? (size_t)(eq - a) : strlen(a));
		if (!o) {
			cli_error("%s: unknown option '%s' (see heteroopt %s --help)", c->name, a,
				  c->name);
			return -1;
		}
		if (o->kind == CLI_FLAG) {
			if (eq && a[1] == '-') {
				cli_error("%s: %s takes no value", c->name, o->name);
				return -1;
			}
		} else if (eq && a[1] == '-') {
			v = eq + 1;
		} else if (i + 1 < argc) {
			v = argv[++i];
		} else {
			cli_error("%s: %s needs a value (%s)", c->name, o->name, o->value);
			return -1;
		}
		if (cli_store(c, o, v, args))
			return -1;
	}
	return 0;
}

/* Help text, one option a paragraph; continuation lines of help are indented. */
void cli_usage(const struct cli_command *c, FILE *f)
{
	fprintf(f, "usage: heteroopt %s %s\n", c->name, c->usage);
	if (c->about)
		fprintf(f, "\n%s\n", c->about);
	if (c->opts->name)
		fprintf(f, "\noptions:\n");
	for (const struct cli_opt *o = c->opts; o->name; o++) {
		char head[64];
		const char *h = o->help;

		snprintf(head, sizeof(head), "%s%s%s%s%s", o->alias ? o->alias : "",
			 o->alias ? ", " : "", o->name, o->value ? " " : "",
			 o->value ? o->value : "");
		fprintf(f, "  %-26s", head);
		if (strlen(head) > 26)
			fprintf(f, "\n  %-26s", "");
		while (*h) {
			const char *nl = strchr(h, '\n');
			int len = nl ? (int)(nl - h) : (int)strlen(h);

			fprintf(f, "%.*s\n", len, h);
			h += len;
			if (*h == '\n' && *++h)
				fprintf(f, "  %-26s", "");
		}
	}
	fprintf(f, "  %-26s%s\n  %-26s%s\n", "-h, --help", "this text", "--version",
		"the version of heteroopt");
}
