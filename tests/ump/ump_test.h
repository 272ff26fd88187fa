/* SPDX-License-Identifier: MIT */
/*
 * Helpers shared by the /dev/ump tests. Each test is one program per
 * feature, run inside a QEMU guest by scripts/qemu/run-tests.sh; exit 0 is
 * pass, 1 fail, 77 skipped (with the reason on stdout).
 */
#ifndef UMP_TEST_H
#define UMP_TEST_H

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <ump/libump.h>

#include "../test_helpers.h"

static inline void t_open(struct ump *u)
{
	int ret = ump_open(u);

	if (ret == -ENOENT)
		T_SKIPPED("/dev/ump missing: module not loaded");
	if (ret)
		T_FAIL("ump_open: %s", strerror(-ret));
}

/*
 * dmatest-style marks. Source bytes have bit 7 set, destination bytes clear;
 * bytes inside the copied range also carry bit 6. The low six bits hash the
 * position, so an uncopied, over-copied or displaced byte, and a modified
 * source, all show up as a mismatch.
 */
#define T_SRC 0x80u
#define T_IN 0x40u

static inline unsigned char t_mark(uint64_t pos, unsigned int seed)
{
	uint64_t x = pos * 0x9e3779b97f4a7c15ull + seed;

	return (unsigned char)((x >> 29) & 0x3f);
}

static inline void t_fill(unsigned char *p, uint64_t len, uint64_t lo, uint64_t hi, int src,
			  unsigned int seed)
{
	uint64_t i;

	for (i = 0; i < len; i++)
		p[i] = (unsigned char)((src ? T_SRC : 0) | (i >= lo && i < hi ? T_IN : 0) |
				       t_mark(i, seed));
}

/* Returns the first bad offset, or -1. */
static inline long long t_check_dst(const unsigned char *dst, uint64_t len, uint64_t doff,
				    uint64_t soff, uint64_t n, unsigned int sseed,
				    unsigned int dseed)
{
	uint64_t i;

	for (i = 0; i < len; i++) {
		unsigned char want;

		if (i >= doff && i < doff + n)
			want = (unsigned char)(T_SRC | T_IN | t_mark(i - doff + soff, sseed));
		else
			want = t_mark(i, dseed);
		if (dst[i] != want)
			return (long long)i;
	}
	return -1;
}

static inline long long t_check_src(const unsigned char *src, uint64_t len, uint64_t soff,
				    uint64_t n, unsigned int seed)
{
	uint64_t i;

	for (i = 0; i < len; i++) {
		unsigned char want =
		    (unsigned char)(T_SRC | (i >= soff && i < soff + n ? T_IN : 0) |
				    t_mark(i, seed));
		if (src[i] != want)
			return (long long)i;
	}
	return -1;
}

/*
 * One of the pool's figures, from UMP_IOC_STATS through a file of its own
 * (not counted in "contexts"): t_pool("buffers"|"chains"|"contexts"), and
 * t_stat("region host1" | "region imported" | "region p2p0" | "engine cpu" |
 * "engine dma", "used"|"buffers"|"capacity"|"chains"|"bytes"|"errors"|"staged").
 * Fails the test for a name it does not know.
 */
static inline long long t_stats_read(struct ump_stats *s, struct ump_stats_region *r, int max)
{
	struct ump u;
	int n;

	if (ump_open(&u))
		T_FAIL("t_stats: cannot open /dev/ump");
	n = ump_stats(&u, s, r, (unsigned int)max);
	ump_close(&u);
	if (n < 0)
		T_FAIL("UMP_IOC_STATS: %s", strerror(-n));
	if (s->contexts)
		s->contexts--; /* ours */
	return n < max ? n : max;
}

static inline long long t_pool(const char *key)
{
	struct ump_stats s;

	t_stats_read(&s, NULL, 0);
	if (!strcmp(key, "buffers"))
		return s.buffers;
	if (!strcmp(key, "chains"))
		return s.chains;
	if (!strcmp(key, "contexts"))
		return s.contexts;
	T_FAIL("t_pool: no figure '%s'", key);
}

/* Bytes used in every region together. */
static inline long long t_used_total(void)
{
	struct ump_stats_region r[64];
	struct ump_stats s;
	long long sum = 0;
	int n = (int)t_stats_read(&s, r, 64);

	while (n--)
		sum += (long long)r[n].used;
	return sum;
}

static inline long long t_stat(const char *prefix, const char *field)
{
	struct ump_stats_region r[64];
	struct ump_stats s;
	int n = (int)t_stats_read(&s, r, 64), i;
	char kind[16];

	if (!strncmp(prefix, "engine ", 7)) {
		const struct ump_stats_engine *e = &s.engine[strcmp(prefix + 7, "dma") ? 0 : 1];

		if (!strcmp(field, "chains"))
			return (long long)e->chains;
		if (!strcmp(field, "bytes"))
			return (long long)e->bytes;
		if (!strcmp(field, "errors"))
			return (long long)e->errors;
		if (!strcmp(field, "staged"))
			return (long long)e->staged;
		T_FAIL("t_stat: no engine figure '%s'", field);
	}
	for (i = 0; i < n; i++) {
		uint32_t reg = r[i].region;

		if (reg == UMP_REGION_IMPORTED)
			snprintf(kind, sizeof(kind), "imported");
		else if (UMP_REGION_IS_P2P(reg))
			snprintf(kind, sizeof(kind), "p2p%u", reg & 0xffff);
		else
			snprintf(kind, sizeof(kind), "host%u", reg);
		if (strncmp(prefix, "region ", 7) || strcmp(prefix + 7, kind))
			continue;
		if (!strcmp(field, "used"))
			return (long long)r[i].used;
		if (!strcmp(field, "buffers"))
			return r[i].buffers;
		if (!strcmp(field, "capacity"))
			return (long long)r[i].capacity;
		T_FAIL("t_stat: no region figure '%s'", field);
	}
	T_FAIL("t_stat: no '%s' in UMP_IOC_STATS", prefix);
}

/* Write s to a sysfs, debugfs, procfs or cgroup file: 0 or -errno. */
static inline int t_write_file(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, s, strlen(s));
	if (n < 0)
		n = -errno;
	close(fd);
	return n < 0 ? (int)n : n == (ssize_t)strlen(s) ? 0 : -EIO;
}

/* cgroup v2 at /sys/fs/cgroup, mounted where it is not; the test skips without one. */
static inline void t_cgroup2(void)
{
	if (access("/sys/fs/cgroup/cgroup.controllers", F_OK))
		mount("cgroup2", "/sys/fs/cgroup", "cgroup2", 0, NULL);
	if (access("/sys/fs/cgroup/cgroup.controllers", F_OK))
		T_SKIPPED("no cgroup v2 in this kernel");
}

/* body(out) in a child that first joins cgroup cg; *in reads what it writes to out. */
static inline pid_t t_fork_in_cgroup(const char *cg, void (*body)(int out), int *in)
{
	char path[256], pid[32];
	int p[2];
	pid_t c;

	T_REQUIRE(!pipe(p));
	c = fork();
	T_REQUIRE(c >= 0);
	if (!c) {
		snprintf(path, sizeof(path), "%s/cgroup.procs", cg);
		snprintf(pid, sizeof(pid), "%d", getpid());
		if (t_write_file(path, pid))
			_exit(3);
		body(p[1]);
		_exit(0);
	}
	close(p[1]);
	*in = p[0];
	return c;
}

/* The first number in a (cgroup, proc or sys) file, or -1. */
static inline long long t_read_number(const char *path)
{
	char buf[64];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	return atoll(buf);
}

/* Whether the task whose comm file is at path is named prefix... */
static inline int t_comm_starts(const char *path, const char *prefix)
{
	char comm[32];
	size_t n = strlen(prefix);
	int fd = open(path, O_RDONLY | O_CLOEXEC), yes;

	if (fd < 0)
		return 0;
	yes = n < sizeof(comm) && read(fd, comm, n) == (ssize_t)n && !memcmp(comm, prefix, n);
	close(fd);
	return yes;
}

/* The ump copy workers ("ump/..." kernel threads) among cgroup cg's processes. */
static inline int t_cgroup_workers(const char *cg)
{
	char path[256];
	long pid;
	int n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/cgroup.procs", cg);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fscanf(f, "%ld", &pid) == 1) {
		snprintf(path, sizeof(path), "/proc/%ld/comm", pid);
		n += t_comm_starts(path, "ump/");
	}
	fclose(f);
	return n;
}

/*
 * Cgroup cg (a child of the v2 root) with controller enabled and limit
 * (e.g. "cpu.max") set to value; the test is skipped where the kernel has
 * no such controller.
 */
static inline void t_cgroup_limited(const char *cg, const char *controller, const char *limit,
				    const char *value)
{
	char path[256];

	t_cgroup2();
	snprintf(path, sizeof(path), "+%s", controller);
	t_write_file("/sys/fs/cgroup/cgroup.subtree_control", path);
	mkdir(cg, 0755);
	snprintf(path, sizeof(path), "%s/%s", cg, limit);
	if (t_write_file(path, value))
		T_SKIPPED("no %s controller", controller);
}

/* body(out) in a child in cgroup cg, which must exit 0; what it wrote to out into result. */
static inline void t_run_in_cgroup(const char *cg, void (*body)(int out), void *result, size_t size)
{
	int in, st;
	pid_t c = t_fork_in_cgroup(cg, body, &in);

	T_REQUIRE(waitpid(c, &st, 0) == c);
	T_REQUIRE(WIFEXITED(st) && !WEXITSTATUS(st));
	T_REQUIRE(read(in, result, size) == (ssize_t)size);
	close(in);
}

/* Remove cgroup cg once its processes are gone; a copy worker left in it fails the test. */
static inline void t_cgroup_remove(const char *cg)
{
	for (int i = 0; i < 100 && rmdir(cg); i++)
		usleep(100000);
	if (!access(cg, F_OK))
		T_FAIL(
		    "%s is still busy 10 s after its processes ended: a copy worker outlived its "
		    "files",
		    cg);
}

static inline int t_nr_nodes(const struct ump *u)
{
	return (int)u->version.nr_nodes;
}

/* A device's PCI address as sysfs names it, "dddd:bb:ss.f". */
static inline void t_pci_name(const struct ump_dev_info *di, char name[32])
{
	snprintf(name, 32, "%04x:%02x:%02x.%x", di->pci_domain, di->pci_bdf >> 8,
		 (di->pci_bdf >> 3) & 0x1f, di->pci_bdf & 7);
}

/*
 * Federates every device of UMP_TEST_PCI and returns the index of the first
 * that publishes P2P memory, its info in *di and its address in name; skips
 * the test when there is none.
 */
static inline uint32_t t_p2p_device(struct ump *u, struct ump_dev_info *di, char name[32])
{
	const char *list = getenv("UMP_TEST_PCI"), *p;
	int dev = -1;
	uint32_t idx;

	if (!list || !*list)
		T_SKIPPED("UMP_TEST_PCI not set: no device to federate");
	for (p = list; *p;) {
		size_t l = strcspn(p, ",");
		char addr[32];

		snprintf(addr, sizeof(addr), "%.*s", (int)l, p);
		T_OK(ump_dev_add(u, addr, &idx));
		T_OK(ump_dev_info(u, idx, di));
		if (di->p2pmem && dev < 0)
			dev = (int)idx;
		p += l + (p[l] == ',');
	}
	if (dev < 0)
		T_SKIPPED("no federated device publishes P2P memory (CONFIG_PCI_P2PDMA)");
	T_OK(ump_dev_info(u, (uint32_t)dev, di));
	t_pci_name(di, name);
	return (uint32_t)dev;
}

#endif
