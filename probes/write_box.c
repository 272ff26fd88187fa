// SPDX-License-Identifier: MIT
/*
 * heteroopt probe --write-box: a box for this machine from the machine
 * itself.  Its online CPUs, ordered by NUMA node, are split into n CPU
 * devices of (nearly) equal cores, each on its cores' node (-1 where they
 * span several) with its share of their memory and one oneDNN thread per
 * core; every pair shares memory (one host).  With --opencl the devices
 * the device backends find join it (one with memory of its own linked
 * over PCIe, a guess until probed), each naming its backend and listing
 * the operators it runs: one computing on CPU cores (PoCL) in place
 * of the last group's CPU device, on those cores.  With two groups or more,
 * "cpus" is all the cores as one oneDNN device, the alternative to the split
 * (alternative_to): the search weighs one against the other.  Rates come from
 * two probes on each kind of device, so the box plans sensibly before a full
 * profile refines it.
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

/*
 * A device of the box: its name, kind, rates, memory and where its figures
 * come from; f: the backend that runs it (found by the runtime), with the
 * operators that backend runs, so nothing else is placed there.
 */
static json_t *wb_device(const char *name, const char *kind, double gflops, double gbps, double mem,
			 const struct ho_rt_found *f, const char *source)
{
	json_t *d = json_pack("{s:s, s:s, s:{s:f}, s:f, s:f, s:s}", "name", name, "kind", kind,
			      "peak_gflops", "float32", gflops, "mem_bw_gbps", gbps, "mem_gib",
			      floor(mem / (1 << 30) * 10) / 10, "source", source);
	json_t *ops = json_array();
	const char *op;

	if (!f) {
		json_decref(ops);
		return d;
	}
	json_object_set_new(d, "backend",
			    json_pack("{s:s, s:s, s:s}", "name", f->backend, "platform",
				      f->platform, "device", f->device));
	for (size_t i = 0; (op = ho_op_name_at(i)); i++)
		if (ho_rt_backend_runs(f->backend, op))
			json_array_append_new(ops, json_string(op));
	json_object_set_new(d, "supported_ops", ops);
	return d;
}

/*
 * Device d runs on cores lo..hi-1 of the node-ordered list, a thread each, on
 * their NUMA node (-1: several); its memory, their nodes' shares (per_node:
 * how many devices share each node; NULL: all of it).
 */
static double wb_on_cores(json_t *d, const int *cpu, const int *node_of, int lo, int hi,
			  const int *per_node)
{
	json_t *cores = json_array();
	int node = node_of[lo];
	double mem = 0;

	for (int i = lo; i < hi; i++) {
		json_array_append_new(cores, json_integer(cpu[i]));
		if (i == lo || node_of[i] != node_of[i - 1])
			mem += wb_node_mem(node_of[i]) / (per_node ? per_node[node_of[i]] : 1);
		if (node_of[i] != node_of[lo])
			node = -1; /* on several nodes: its region anywhere */
	}
	json_object_set_new(d, "cores", cores);
	json_object_set_new(d, "numa_node", json_integer(node));
	json_object_set_new(d, "threads", json_integer(hi - lo));
	json_object_set_new(d, "mem_gib", json_real(floor(mem / (1 << 30) * 10) / 10));
	return mem;
}

/*
 * The box: n groups of cores, each a CPU device on oneDNN, except that a
 * found device computing on CPU cores (PoCL) takes the last group's; with two
 * groups or more, "cpus", every core as one oneDNN device, their alternative
 * (whether to cut the cores into devices is the search's choice); then the
 * other found devices (GPUs).  gflops and gbps: per core and per device, as
 * measured (found devices: their own, in found_rate).  Every pair shares one
 * memory: each reads the others' tensors in place.
 */
static json_t *wb_box(uint32_t n, const int *cpu, const int *node_of, int n_cpus, double gflops,
		      double gbps, const struct ho_rt_found *found, int n_found,
		      const double (*found_rate)[2], const char *source)
{
	json_t *box = json_object(), *devs = json_array(), *links = json_array(), *dev;
	int per_node[1024] = {0}; /* devices with a core on each node, who share its memory */
	int on_cores = -1, n_ocl = 0, n_own = 0;
	bool own[HO_MAX_DEVICES] = {false};
	uint32_t n_dev = 0;
	char names[HO_MAX_DEVICES][16];

	for (int f = 0; f < n_found && on_cores < 0; f++)
		if (found[f].cpu_cores && n > 1)
			on_cores = f;
	for (uint32_t d = 0; d < n; d++)
		for (int i = (int)(d * (uint32_t)n_cpus / n);
		     i < (int)((d + 1) * (uint32_t)n_cpus / n); i++)
			if (i == (int)(d * (uint32_t)n_cpus / n) || node_of[i] != node_of[i - 1])
				per_node[node_of[i]]++;
	for (uint32_t d = 0; d < n; d++, n_dev++) {
		int lo = (int)(d * (uint32_t)n_cpus / n),
		    hi = (int)((d + 1) * (uint32_t)n_cpus / n);
		bool ocl = d == n - 1 && on_cores >= 0;

		if (ocl)
			snprintf(names[n_dev], sizeof(names[0]), "ocl%d", n_ocl++);
		else
			snprintf(names[n_dev], sizeof(names[0]), "cpu%u", d);
		dev =
		    ocl ? wb_device(names[n_dev], found[on_cores].kind, found_rate[on_cores][0],
				    found_rate[on_cores][1], 0, &found[on_cores], source)
			: wb_device(names[n_dev], "cpu", gflops * (hi - lo), gbps, 0, NULL, source);
		wb_on_cores(dev, cpu, node_of, lo, hi, per_node);
		json_array_append_new(devs, dev);
	}
	if (n > 1) {
		json_t *alt = json_array();

		for (uint32_t d = 0; d < n_dev; d++)
			json_array_append_new(alt, json_string(names[d]));
		snprintf(names[n_dev], sizeof(names[0]), "cpus");
		dev = wb_device(names[n_dev++], "cpu", gflops * n_cpus, gbps, 0, NULL, source);
		wb_on_cores(dev, cpu, node_of, 0, n_cpus, NULL);
		json_object_set_new(dev, "alternative_to", alt);
		json_array_append_new(devs, dev);
	}
	for (int f = 0; f < n_found && n_dev < HO_MAX_DEVICES; f++) {
		if (found[f].cpu_cores)
			continue; /* on cores it does not own it would fight the cores' devices */
		own[n_dev] = found[f].own_memory;
		if (strcmp(found[f].backend, "opencl"))
			snprintf(names[n_dev], sizeof(names[0]), "%s%d", found[f].backend, n_own++);
		else
			snprintf(names[n_dev], sizeof(names[0]), "ocl%d", n_ocl++);
		json_array_append_new(devs, wb_device(names[n_dev++], found[f].kind,
						      found_rate[f][0], found_rate[f][1],
						      wb_node_mem(0) / 4, &found[f], source));
	}
	/* a device with memory of its own: over PCIe, a guess until the profile measures it */
	for (uint32_t a = 0; a < n_dev; a++)
		for (uint32_t b = a + 1; b < n_dev; b++)
			json_array_append_new(
			    links,
			    own[a] || own[b]
				? json_pack("{s:s, s:s, s:f, s:f, s:s}", "a", names[a], "b",
					    names[b], "gbps", 25.0, "latency_us", 10.0, "source",
					    "PCIe, assumed")
				: json_pack("{s:s, s:s, s:b, s:f}", "a", names[a], "b", names[b],
					    "shared_memory", 1, "latency_us", 2.0));
	json_object_set_new(box, "name", json_string("this-machine"));
	json_object_set_new(
	    box, "description",
	    json_string("this machine's CPUs (and the OpenCL devices it found) as heteroopt "
			"probe --write-box found them; a profile (heteroopt probe --box) "
			"measures the rest"));
	json_object_set_new(box, "host", json_string("cpu0"));
	json_object_set_new(box, "devices", devs);
	json_object_set_new(box, "links", links);
	return box;
}

/* Rate and bandwidth of device dev of this box. */
static int wb_rates(json_t *box, int dev, double *gflops, double *gbps, struct ho_error *err)
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
		ret = ho_probe_case_open(b, c, dev, &r, err);
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

int ho_probe_write_box(const char *path, uint32_t n, bool opencl, struct ho_error *err)
{
	int cpu[WB_MAX_CPUS], node_of[WB_MAX_CPUS], n_cpus = wb_cpus(cpu, node_of);
	struct ho_rt_found found[8];
	double gflops = 1, gbps = 1, rate[8][2] = {{0}};
	int n_found = opencl ? ho_rt_find_devices(found, 8) : 0;
	json_t *box, *one;
	int ret;

	if (n_cpus <= 0)
		return ho_err(err, -ENODEV, "probe: cannot read this machine's CPUs from /sys");
	if (!n || n > (uint32_t)n_cpus || n > HO_MAX_DEVICES)
		return ho_err(err, -EINVAL, "probe: --split %u: this machine has %d CPUs", n,
			      n_cpus);
	if (opencl && !n_found)
		return ho_err(err, -ENODEV,
			      "probe: --opencl: no OpenCL device here that shares host memory "
			      "(an ICD such as pocl-opencl-icd must be installed)");
	for (int f = 0; f < n_found && n == 1; f++)
		if (found[f].cpu_cores)
			return ho_err(err, -EINVAL,
				      "probe: --opencl: '%s' computes on this machine's CPU cores; "
				      "--split 2 or more gives it a group of its own",
				      found[f].device);
	/* measured on a device of one core, then scaled by each device's cores */
	one = wb_box((uint32_t)n_cpus, cpu, node_of, n_cpus, 1, 1, NULL, 0, NULL, "");
	ret = wb_rates(one, 0, &gflops, &gbps, err);
	json_decref(one);
	/* a found device on its own share of the cores (the last group's), or alone */
	for (int f = 0; f < n_found && !ret; f++) {
		uint32_t groups = found[f].cpu_cores ? (n > 1 ? n : 2) : 1;

		one = wb_box(groups, cpu, node_of, n_cpus, 1, 1, &found[f], 1,
			     (const double[1][2]){{1, 1}}, "");
		ret = wb_rates(one, found[f].cpu_cores ? (int)groups - 1 : 1, &rate[f][0],
			       &rate[f][1], err);
		json_decref(one);
	}
	if (ret)
		return ret;
	box =
	    wb_box(n, cpu, node_of, n_cpus, gflops, gbps, found, n_found, (const double(*)[2])rate,
		   "heteroopt probe --write-box: a 3x3 convolution and a 64 MB Relu on one "
		   "core of this machine (a found device: on its own)");
	ret = ho_json_write_file(box, path, err);
	json_decref(box);
	return ret;
}
