// SPDX-License-Identifier: MIT
/*
 * heteroopt status: this machine as a profile records it, and where tensors
 * would live on it. The memory
 * pool in use (ump.ko through /dev/ump, or the user-space fallback and why),
 * its NUMA nodes with what each has free, and when the module is loaded its
 * figures as an operator reads them: each region's capacity, use and
 * buffers (host nodes, imported dma-bufs, each device's P2P memory), the
 * copy engines' chains, bytes, errors and staged bytes (UMP_IOC_STATS,
 * UMP_IOC_DEV_INFO); and, for root, the kernel's own /proc/ump/status.
 */
#include <numa.h>
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

/* bytes as a person reads them: "4.6 MiB" */
static const char *status_bytes(uint64_t b, char *buf, size_t len)
{
	static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
	double v = (double)b;
	int u = 0;

	while (v >= 1024 && u < 4) {
		v /= 1024;
		u++;
	}
	snprintf(buf, len, u ? "%.1f %s" : "%.0f %s", v, unit[u]);
	return buf;
}

/* The user-space pool: what each node has, as the kernel counts it. */
static void status_nodes(int nodes)
{
	char a[32], b[32];

	printf("memory        %-22s %s\n", "total", "free");
	for (int n = 0; n < nodes; n++) {
		long long free_b = 0,
			  total = numa_available() >= 0 ? numa_node_size64(n, &free_b) : -1;

		if (total < 0)
			printf("  node %-6d (not known: no NUMA support)\n", n);
		else
			printf("  node %-6d %-22s %s\n", n,
			       status_bytes((uint64_t)total, a, sizeof(a)),
			       status_bytes((uint64_t)free_b, b, sizeof(b)));
	}
}

/* ump.ko's figures (UMP_IOC_STATS, UMP_IOC_DEV_INFO): each region, device and engine. */
static void status_ump(struct ump *u)
{
	struct ump_stats_region r[64];
	struct ump_stats st;
	char a[32], b[32], c[32];
	int n = ump_stats(u, &st, r, 64);

	if (n < 0) {
		printf("ump.ko: its figures cannot be read: %s\n", strerror(-n));
		return;
	}
	printf("memory        %-22s %-22s %s\n", "capacity", "used", "buffers");
	for (int i = 0; i < n && i < 64; i++) {
		char what[64], pct[16] = "";

		if (r[i].region == UMP_REGION_IMPORTED) {
			snprintf(what, sizeof(what), "imported");
		} else if (UMP_REGION_IS_P2P(r[i].region)) {
			struct ump_dev_info di;

			if (ump_dev_info(u, r[i].region & 0xffffu, &di))
				snprintf(what, sizeof(what), "p2p %u", r[i].region & 0xffffu);
			else
				snprintf(what, sizeof(what), "p2p %04x:%02x:%02x.%x", di.pci_domain,
					 di.pci_bdf >> 8, (di.pci_bdf >> 3) & 0x1f, di.pci_bdf & 7);
		} else {
			snprintf(what, sizeof(what), "node %u", r[i].region);
		}
		if (r[i].capacity)
			snprintf(pct, sizeof(pct), " (%.1f%%)", 100.0 * r[i].used / r[i].capacity);
		printf("  %-11s %-22s %-22s %u%s\n", what,
		       r[i].capacity ? status_bytes(r[i].capacity, a, sizeof(a)) : "-",
		       strcat(strcpy(b, status_bytes(r[i].used, c, sizeof(c))), pct), r[i].buffers,
		       r[i].region == UMP_REGION_IMPORTED ? "  (dma-bufs of other drivers, held)"
							  : "");
	}
	printf("copy engines  %-22s %-22s %-8s %s\n", "chains", "bytes", "errors", "staged");
	for (int e = 0; e < 2; e++)
		printf("  %-11s %-22llu %-22s %-8llu %s%s\n", e ? "dma" : "cpu",
		       (unsigned long long)st.engine[e].chains,
		       status_bytes(st.engine[e].bytes, a, sizeof(a)),
		       (unsigned long long)st.engine[e].errors,
		       status_bytes(st.engine[e].staged, b, sizeof(b)),
		       e && !(u->version.features & UMP_FEAT_DMA_ENGINE) ? "  (no memcpy channel)"
									 : "");
	/* Before ABI 1.2 every caller had the pool's. */
	if (st.flags & UMP_STATS_POOL || !(u->version.features & UMP_FEAT_STATS_SCOPED))
		printf("ump.ko: %u open files (this one included), %u buffers, %u chains not yet "
		       "freed\n",
		       st.contexts, st.buffers, st.chains);
	else
		printf("ump.ko: the figures above are this command's own file's: the pool's are "
		       "CAP_SYS_ADMIN's (/proc/ump/status is root's)\n");
}

int cmd_status(int argc, char **argv)
{
	struct status_args a = {0};
	struct ho_pool *pool;
	struct ho_machine m;
	char status[16384];
	struct ump u;
	int ret, nodes;

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
	nodes = ho_pool_nodes(pool);
	printf("numa nodes: %d\n", nodes);
	ho_pool_close(pool);
	ret = ump_open(&u);
	if (ret) {
		status_nodes(nodes);
		printf("ump.ko: not in use (%s: %s)\n", UMP_DEV_PATH, strerror(-ret));
		return 0;
	}
	status_ump(&u);
	ump_close(&u);
	ret = ump_read_status(status, sizeof(status));
	if (ret >= 0)
		printf("\n%s:\n%s", UMP_STATUS_PATH, status);
	else
		printf("%s: %s (it is root's)\n", UMP_STATUS_PATH, strerror(-ret));
	return 0;
}
