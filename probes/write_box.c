// SPDX-License-Identifier: MIT
/*
 * heteroopt probe --write-box: a box for this machine from the machine
 * itself.  Its online CPUs, ordered by NUMA node, are split into n CPU
 * devices of (nearly) equal cores, each on its cores' node (-1 where they
 * span several) with its share of their memory and one oneDNN thread per
 * core; every pair
 * shares memory (one host).  Rates come from two probes on the first
 * device, so the box plans sensibly before a full profile refines it.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "probe_priv.h"

#define WB_MAX_CPUS 256

/* Parse a cpulist ("0-3,8") into ids; returns how many. */
static int wb_cpulist(const char *s, int *ids, int cap)
{
	int n = 0;

	while (*s && n < cap) {
		char *end;
		long a = strtol(s, &end, 10), b = a;

		if (end == s)
			break;
		if (*end == '-')
			b = strtol(end + 1, &end, 10);
		for (long c = a; c <= b && n < cap; c++)
			ids[n++] = (int)c;
		s = *end == ',' ? end + 1 : end;
	}
	return n;
}

static double wb_node_mem(int node)
{
	char path[96], line[256];
	FILE *f;
	double kb = 0;

	snprintf(path, sizeof(path), "/sys/devices/system/node/node%d/meminfo", node);
	f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f))
		if (strstr(line, "MemTotal:"))
			sscanf(strstr(line, "MemTotal:") + 9, "%lf", &kb);
	if (f)
		fclose(f);
	/*
	 * No NUMA in the kernel, or one node: all of memory.  A node's own count
	 * can lag memory added since boot (9.3 of this VM's 23 GiB).
	 */
	if (kb <= 0 || access("/sys/devices/system/node/node1", F_OK))
		kb = (double)sysconf(_SC_PHYS_PAGES) * (double)sysconf(_SC_PAGESIZE) / 1024;
	return kb * 1024;
}

/* CPUs in node order, and each one's node. */
static int wb_cpus(int *cpu, int *node_of)
{
	char path[96], list[1024];
	int n = 0;

	for (int nd = 0; nd < 1024; nd++) {
		int ids[WB_MAX_CPUS], k;
		FILE *f;

		snprintf(path, sizeof(path), "/sys/devices/system/node/node%d/cpulist", nd);
		f = fopen(path, "r");
		if (!f)
			break;
		list[0] = '\0';
		if (!fgets(list, sizeof(list), f))
			list[0] = '\0';
		fclose(f);
		k = wb_cpulist(list, ids, WB_MAX_CPUS);
		for (int i = 0; i < k && n < WB_MAX_CPUS; i++) {
			cpu[n] = ids[i];
			node_of[n++] = nd;
		}
	}
	if (!n) {
		FILE *f = fopen("/sys/devices/system/cpu/online", "r");

		if (f && fgets(list, sizeof(list), f))
			n = wb_cpulist(list, cpu, WB_MAX_CPUS);
		if (f)
			fclose(f);
		for (int i = 0; i < n; i++)
			node_of[i] = 0;
	}
	return n;
}

static json_t *wb_box(uint32_t n, const int *cpu, const int *node_of, int n_cpus, double gflops,
		      double gbps, const char *source)
{
	json_t *box = json_object(), *devs = json_array(), *links = json_array();
	int per_node[1024] = {0}; /* devices with a core on each node, who share its memory */

	for (uint32_t d = 0; d < n; d++) {
		int lo = (int)(d * (uint32_t)n_cpus / n),
		    hi = (int)((d + 1) * (uint32_t)n_cpus / n);

		for (int i = lo; i < hi; i++)
			if (i == lo || node_of[i] != node_of[i - 1])
				per_node[node_of[i]]++;
	}
	for (uint32_t d = 0; d < n; d++) {
		int lo = (int)(d * (uint32_t)n_cpus / n),
		    hi = (int)((d + 1) * (uint32_t)n_cpus / n);
		json_t *cores = json_array();
		char name[16];
		int node = node_of[lo];
		double mem = 0;

		/* CPUs come in node order: a device spanning nodes has them in runs */
		for (int i = lo; i < hi; i++) {
			json_array_append_new(cores, json_integer(cpu[i]));
			if (i == lo || node_of[i] != node_of[i - 1])
				mem += wb_node_mem(node_of[i]) / per_node[node_of[i]];
			if (node_of[i] != node_of[lo])
				node = -1; /* on several nodes: its region anywhere */
		}
		snprintf(name, sizeof(name), "cpu%u", d);
		json_array_append_new(
		    devs, json_pack("{s:s, s:s, s:{s:f}, s:f, s:f, s:i, s:i, s:o, s:s}", "name",
				    name, "kind", "cpu", "peak_gflops", "float32",
				    gflops * (hi - lo), "mem_bw_gbps", gbps, "mem_gib",
				    floor(mem / (1 << 30) * 10) / 10, "numa_node", node, "threads",
				    hi - lo, "cores", cores, "source", source));
	}
	for (uint32_t a = 0; a < n; a++)
		for (uint32_t b = a + 1; b < n; b++) {
			char an[16], bn[16];

			snprintf(an, sizeof(an), "cpu%u", a);
			snprintf(bn, sizeof(bn), "cpu%u", b);
			json_array_append_new(links,
					      json_pack("{s:s, s:s, s:b, s:f}", "a", an, "b", bn,
							"shared_memory", 1, "latency_us", 2.0));
		}
	json_object_set_new(box, "name", json_string("this-machine"));
	json_object_set_new(
	    box, "description",
	    json_string("this machine's CPUs as heteroopt probe --write-box found "
			"them; a profile (heteroopt probe --box) measures the rest"));
	json_object_set_new(box, "host", json_string("cpu0"));
	json_object_set_new(box, "devices", devs);
	json_object_set_new(box, "links", links);
	return box;
}

/* Rate per core and bandwidth on a one-core device of this box. */
static int wb_rates(json_t *box, double *gflops, double *gbps, struct ho_error *err)
{
	struct ho_box *b = NULL;
	char *text = json_dumps(box, 0);
	int ret;

	if (!text)
		return ho_err(err, -ENOMEM, "out of memory");
	ret = ho_box_parse(text, &b, err);
	free(text);
	if (ret)
		return ret;
	for (const struct ho_probe_case *c = ho_probe_cases; c->what && !ret; c++) {
		struct ho_probe_method m = {1, 5, 2, 0.1, 0.05};
		struct ho_probe_run r;
		struct ho_probe_stat st;
		bool conv = !strcmp(c->what, "conv 64>64 56 k3"),
		     mem = !strcmp(c->what, "relu 16M");

		if (!conv && !mem)
			continue;
		ret = ho_probe_case_open(b, c, 0, &r, err);
		if (!ret && (ret = ho_probe_measure(ho_probe_run_once, &r, &m, NULL, &st)))
			ho_err(err, ret, "probe: %s failed to run", c->what);
		if (!ret) {
			const struct ho_node *nd = &r.g->nodes[ho_probe_main_node(r.g)];

			if (conv)
				*gflops = nd->feat.flops / st.median / 1e9;
			else
				*gbps = (double)(nd->feat.bytes_read + nd->feat.bytes_written) /
					st.median / 1e9;
		}
		ho_probe_run_close(&r);
	}
	ho_box_free(b);
	return ret;
}

int ho_probe_write_box(const char *path, uint32_t n, struct ho_error *err)
{
	int cpu[WB_MAX_CPUS], node_of[WB_MAX_CPUS], n_cpus = wb_cpus(cpu, node_of);
	double gflops = 1, gbps = 1;
	json_t *box, *one;
	int ret;

	if (n_cpus <= 0)
		return ho_err(err, -ENODEV, "probe: cannot read this machine's CPUs from /sys");
	if (!n || n > (uint32_t)n_cpus || n > HO_MAX_DEVICES)
		return ho_err(err, -EINVAL, "probe: --split %u: this machine has %d CPUs", n,
			      n_cpus);
	/* measured on a device of one core, then scaled by each device's cores */
	one = wb_box((uint32_t)n_cpus, cpu, node_of, n_cpus, 1, 1, "");
	ret = wb_rates(one, &gflops, &gbps, err);
	json_decref(one);
	if (ret)
		return ret;
	box = wb_box(n, cpu, node_of, n_cpus, gflops, gbps,
		     "heteroopt probe --write-box: a 3x3 convolution and a 64 MB Relu on one "
		     "core of this machine");
	ret = ho_probe_write_json(box, path, err);
	json_decref(box);
	return ret;
}
