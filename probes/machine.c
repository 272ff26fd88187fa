// SPDX-License-Identifier: MIT
/*
 * What this machine is, as far as a plan depends on it: the CPU and the ISA
 * extensions its kernels use (AVX-512, AMX change oneDNN's code paths), the
 * cores and NUMA layout, the kernel, ump.ko and oneDNN versions, the GPU.
 * A profile records it; a schedule made with that profile carries it; a
 * run where it differs warns, naming what differs.  Also writes a box for
 * this machine from what it finds.
 */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <oneapi/dnnl/dnnl.h>
#include <ump/libump.h>

#include "probe_priv.h"

/* The flags that select different kernels; others (sse2, fpu) never differ. */
static const char *const machine_isa[] = {"avx2",	 "fma",	     "avx512f",	    "avx512bw",
					  "avx512_vnni", "avx_vnni", "avx512_bf16", "avx512_fp16",
					  "amx_tile",	 "amx_bf16", "amx_int8",    NULL};

static void machine_cpuinfo(struct ho_machine *m)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[8192];
	bool model = false, flags = false;

	snprintf(m->cpu, sizeof(m->cpu), "unknown");
	while (f && fgets(line, sizeof(line), f) && !(model && flags)) {
		char *colon = strchr(line, ':');

		if (!colon)
			continue;
		line[strcspn(line, "\n")] = '\0';
		if (!model && !strncmp(line, "model name", 10)) {
			snprintf(m->cpu, sizeof(m->cpu), "%s", colon + 2);
			model = true;
		} else if (!flags && !strncmp(line, "flags", 5)) {
			size_t at = 0;

			strcat(line, " "); /* every flag, the last too, ends in a blank */
			for (const char *const *isa = machine_isa; *isa; isa++) {
				char want[40];

				snprintf(want, sizeof(want), " %s ", *isa);
				if (strstr(colon, want) && at < sizeof(m->flags))
					at += (size_t)snprintf(m->flags + at, sizeof(m->flags) - at,
							       "%s%s", at ? " " : "", *isa);
			}
			flags = true;
		}
	}
	if (f)
		fclose(f);
}

/* The first line of a small file, or "" */
static void machine_line(const char *path, char *out, size_t len)
{
	FILE *f = fopen(path, "r");

	out[0] = '\0';
	if (f && fgets(out, (int)len, f))
		out[strcspn(out, "\n")] = '\0';
	if (f)
		fclose(f);
}

/* ump.ko as its ABI says it is: the version and the features it offers. */
static void machine_ump(struct ho_machine *m)
{
	struct ump u;

	if (!ump_open(&u)) {
		snprintf(m->ump, sizeof(m->ump), "abi %u.%u features 0x%llx", u.version.abi_major,
			 u.version.abi_minor, (unsigned long long)u.version.features);
		ump_close(&u);
	} else {
		snprintf(m->ump, sizeof(m->ump), "%s",
			 access("/sys/module/ump", F_OK) ? "not loaded" : "loaded, not usable");
	}
}

void ho_machine_read(struct ho_machine *m)
{
	const dnnl_version_t *v = dnnl_version();
	struct utsname u;
	char path[96], cpus[64];

	memset(m, 0, sizeof(*m));
	machine_cpuinfo(m);
	m->cpus = (int)sysconf(_SC_NPROCESSORS_ONLN);
	for (int n = 0; n < 1024; n++) {
		snprintf(path, sizeof(path), "/sys/devices/system/node/node%d/cpulist", n);
		machine_line(path, cpus, sizeof(cpus));
		if (!cpus[0])
			break;
		m->numa_nodes++;
		snprintf(m->numa + strlen(m->numa), sizeof(m->numa) - strlen(m->numa), "%s%s",
			 n ? ";" : "", cpus);
	}
	if (!m->numa_nodes) { /* no NUMA support in the kernel: one node of every CPU */
		m->numa_nodes = 1;
		snprintf(m->numa, sizeof(m->numa), "0-%d", m->cpus - 1);
	}
	if (!uname(&u))
		snprintf(m->kernel, sizeof(m->kernel), "%s", u.release);
	machine_ump(m);
	snprintf(m->onednn, sizeof(m->onednn), "%d.%d.%d", v->major, v->minor, v->patch);
	snprintf(m->gpu, sizeof(m->gpu), "none");
}

/* One table of the fields, for writing and comparing alike. */
#define MF_TEXT(f)                                                                                 \
	{                                                                                          \
#f, offsetof(struct ho_machine, f), sizeof(((struct ho_machine *)0)->f)            \
	}
#define MF_INT(f)                                                                                  \
	{                                                                                          \
#f, offsetof(struct ho_machine, f), 0                                              \
	}
static const struct {
	const char *key;
	size_t at, text; /* text: the buffer's size; 0: an int */
} machine_fields[] = {
    MF_TEXT(cpu),    MF_TEXT(flags), MF_INT(cpus),    MF_INT(numa_nodes), MF_TEXT(numa),
    MF_TEXT(kernel), MF_TEXT(ump),   MF_TEXT(onednn), MF_TEXT(gpu),
};
#define MACHINE_FIELDS (sizeof(machine_fields) / sizeof(machine_fields[0]))

json_t *ho_machine_json(const struct ho_machine *m)
{
	json_t *o = json_object();

	for (size_t i = 0; o && i < MACHINE_FIELDS; i++) {
		const char *at = (const char *)m + machine_fields[i].at;

		json_object_set_new(o, machine_fields[i].key,
				    machine_fields[i].text ? json_string(at)
							   : json_integer(*(const int *)at));
	}
	return o;
}

int ho_machine_compare(const char *path, const struct ho_machine *m, char *diff, size_t len)
{
	json_error_t je;
	json_t *root = json_load_file(path, 0, &je), *rec;
	size_t at = 0;
	int ret = 0;

	if (len)
		diff[0] = '\0';
	if (!root)
		return -EINVAL;
	rec = json_object_get(root, "machine");
	if (!json_is_object(rec)) {
		json_decref(root);
		return 2;
	}
	for (size_t i = 0; i < MACHINE_FIELDS; i++) {
		const char *here = (const char *)m + machine_fields[i].at;
		json_t *v = json_object_get(rec, machine_fields[i].key);
		char there[256], mine[256];

		if (machine_fields[i].text) {
			snprintf(there, sizeof(there), "%s",
				 json_is_string(v) ? json_string_value(v) : "?");
			snprintf(mine, sizeof(mine), "%s", here);
		} else {
			snprintf(there, sizeof(there), "%lld",
				 json_is_integer(v) ? (long long)json_integer_value(v) : -1ll);
			snprintf(mine, sizeof(mine), "%d", *(const int *)here);
		}
		if (!strcmp(there, mine))
			continue;
		ret = 1;
		if (at < len)
			at += (size_t)snprintf(diff + at, len - at, "%s%s: '%s' there, '%s' here",
					       at ? "; " : "", machine_fields[i].key, there, mine);
	}
	json_decref(root);
	return ret;
}
