/* SPDX-License-Identifier: MIT */
/* The heteroopt command: one file per subcommand. */
#ifndef HO_CLI_H
#define HO_CLI_H

int cmd_inspect(int argc, char **argv);
int cmd_schedule(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_status(int argc, char **argv);

/* Print "heteroopt: <msg>" to stderr. */
void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
