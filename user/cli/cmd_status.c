// SPDX-License-Identifier: MIT
/*
 * heteroopt status: where tensors would live on this machine. The memory
 * pool in use (ump.ko through /dev/ump, or the user-space fallback and why),
 * its NUMA nodes, and when the module is loaded its /proc/ump/status.
 */
#include <stdio.h>
#include <string.h>

#include <heteroopt/pool.h>
#include <ump/libump.h>

#include "cli.h"

int cmd_status(int argc, char **argv)
{
	struct ho_pool *pool;
	char status[16384];
	int ret;

	if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		printf("usage: heteroopt status\n\n"
		       "Print the tensor memory pool this machine gives the runtime and, when\n"
		       "ump.ko is loaded, its /proc/ump/status (regions, devices, engines).\n");
		return 0;
	}
	if (argc > 1) {
		cli_error("status: unexpected argument '%s'", argv[1]);
		return 2;
	}
	ret = ho_pool_open(0, &pool);
	if (ret) {
		cli_error("status: cannot open the memory pool: %s", strerror(-ret));
		return 1;
	}
	printf("pool: %s\n", ho_pool_describe(pool));
	printf("numa nodes: %d\n", ho_pool_nodes(pool));
	ho_pool_close(pool);
	ret = ump_read_status(status, sizeof(status));
	if (ret >= 0)
		printf("\n%s:\n%s", UMP_STATUS_PATH, status);
	else
		printf("ump.ko: not loaded (%s: %s)\n", UMP_STATUS_PATH, strerror(-ret));
	return 0;
}
