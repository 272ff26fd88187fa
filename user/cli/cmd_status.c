// SPDX-License-Identifier: MIT
/*
 * heteroopt status: this machine as a profile records it, and where tensors
 * would live on it. The memory
 * pool in use (ump.ko through /dev/ump, or the user-space fallback and why),
 * its NUMA nodes, and when the module is loaded its figures (UMP_IOC_STATS)
 * and, for root, the /proc/ump/status view.
 */
#include <stdio.h>
#include <string.h>

#include <heteroopt/pool.h>
#include <heteroopt/probe.h>
#include <ump/libump.h>

#include "cli.h"

struct status_args {
	const char *unused;
};

static const struct cli_opt status_opts[] = {{0}};

static const struct cli_command status_cmd = {
    .name = "status",
    .usage = "",
    .about = "Print the tensor memory pool this machine gives the runtime and, when\n"
	     "ump.ko is loaded, its /proc/ump/status (regions, devices, engines).",
    .opts = status_opts,
};

int cmd_status(int argc, char **argv)
{
	struct status_args a = {0};
	struct ho_pool *pool;
	struct ho_machine m;
	char status[16384];
	struct ump_stats st;
	struct ump u;
	int ret;

	switch (cli_parse(&status_cmd, argc, argv, &a)) {
	case 1:
		return 0;
	case -1:
		return 2;
	}
	ret = ho_pool_open(0, &pool);
	if (ret) {
		cli_error("status: cannot open the memory pool: %s", strerror(-ret));
		return 1;
	}
	ho_machine_read(&m);
	/* what a profile records of this machine (heteroopt probe), and so compares */
	printf("machine: %s; %s; %d CPUs on %d NUMA node%s (%s); kernel %s; ump.ko %s; oneDNN %s; "
	       "GPU %s\n",
	       m.cpu, m.flags[0] ? m.flags : "no AVX2", m.cpus, m.numa_nodes,
	       m.numa_nodes > 1 ? "s" : "", m.numa, m.kernel, m.ump, m.onednn, m.gpu);
	printf("pool: %s\n", ho_pool_describe(pool));
	printf("numa nodes: %d\n", ho_pool_nodes(pool));
	ho_pool_close(pool);
	ret = ump_open(&u);
	if (ret) {
		printf("ump.ko: not in use (%s: %s)\n", UMP_DEV_PATH, strerror(-ret));
		return 0;
	}
	ret = ump_stats(&u, &st, NULL, 0);
	ump_close(&u);
	if (ret >= 0)
		printf(
		    "ump.ko: %u open files (this one included), %u buffers, %u chains; engine cpu "
		    "%llu chains, engine dma %llu chains\n",
		    st.contexts, st.buffers, st.chains, (unsigned long long)st.engine[0].chains,
		    (unsigned long long)st.engine[1].chains);
	ret = ump_read_status(status, sizeof(status));
	if (ret >= 0)
		printf("\n%s:\n%s", UMP_STATUS_PATH, status);
	else
		printf("%s: %s (it is root's)\n", UMP_STATUS_PATH, strerror(-ret));
	return 0;
}
