// SPDX-License-Identifier: MIT
/*
 * The CPU time of a chain's copies is the submitter's. Each file's copy
 * workers (one per node) join the submitting process's cgroups, so copying
 * shows in the cgroup's cpu.stat while the process itself sleeps in WAIT,
 * and cpu.max throttles it where the kernel has the cpu controller. A
 * worker runs on the CPUs of the node its chains write to. (Before, copies
 * ran in shared kworkers charged to nobody: a process held to a tenth of a
 * CPU could keep every CPU busy copying.)
 */
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

#include "ump_test.h"

#define CG "/sys/fs/cgroup"
#define T_CG CG "/ump-cpu-test"
#define T_LEN (64u << 20)
#define T_MAX_DESCS 64 /* 4 GiB: UMP_MAX_QUEUED_BYTES */

struct result {
	long long wall_us, usage_us; /* one chain, unthrottled */
	long long throttled_wall_us; /* the same chain under cpu.max 10%, or -1 */
	int descs;
	int workers;	 /* "ump/" kernel threads found in the cgroup */
	int affinity_ok; /* each worker on its node's CPUs */
	int err;
};

static long long now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000ll + ts.tv_nsec / 1000;
}

static int read_text(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = 0;
	return 0;
}

static long long usage_us(void)
{
	char buf[512], *p;

	if (read_text(T_CG "/cpu.stat", buf, sizeof(buf)) || !(p = strstr(buf, "usage_usec ")))
		return -1;
	return atoll(p + strlen("usage_usec "));
}

/* One chain of n 64 MiB copies: wall time; usage through *cpu. */
static long long run_chain(struct ump *u, uint32_t src, uint32_t dst, int n, long long *cpu)
{
	struct ump_copy_desc d[T_MAX_DESCS];
	long long t0, u0;
	struct ump_wait w;
	uint64_t id;

	for (int i = 0; i < n; i++)
		d[i] = (struct ump_copy_desc){src, dst, 0, 0, T_LEN};
	u0 = usage_us();
	t0 = now_us();
	if (ump_submit(u, d, n, 0, &id) || ump_wait(u, id, UMP_TIMEOUT_INFINITE, &w) || w.status)
		return -1;
	if (cpu)
		*cpu = usage_us() - u0;
	return now_us() - t0;
}

/* The ump workers in the cgroup, each checked against its node's CPU list. */
static void find_workers(struct result *r)
{
	char procs[4096], path[96], comm[64], status[4096], want[64];
	char *save, *tok;

	r->affinity_ok = 1;
	if (read_text(T_CG "/cgroup.procs", procs, sizeof(procs)))
		return;
	for (tok = strtok_r(procs, "\n", &save); tok; tok = strtok_r(NULL, "\n", &save)) {
		char *p, *nl;
		int node;

		snprintf(path, sizeof(path), "/proc/%s/comm", tok);
		if (read_text(path, comm, sizeof(comm)) || strncmp(comm, "ump/", 4))
			continue;
		r->workers++;
		/* "ump/<tgid>/<node>" */
		p = strrchr(comm, '/');
		node = atoi(p + 1);
		snprintf(path, sizeof(path), "/sys/devices/system/node/node%d/cpulist", node);
		if (read_text(path, want, sizeof(want)))
			continue;
		want[strcspn(want, "\n")] = 0;
		snprintf(path, sizeof(path), "/proc/%s/status", tok);
		if (read_text(path, status, sizeof(status)) ||
		    !(p = strstr(status, "Cpus_allowed_list:")))
			continue;
		p += strlen("Cpus_allowed_list:");
		p += strspn(p, " \t");
		nl = strchr(p, '\n');
		if (nl)
			*nl = 0;
		if (*want && strcmp(p, want)) {
			printf("cgroup_cpu: worker %s runs on CPUs %s, node %d has %s\n", comm, p,
			       node, want);
			r->affinity_ok = 0;
		}
	}
}

static void child(int out)
{
	struct result r = {.throttled_wall_us = -1};
	uint32_t hs, hd, hd2;
	long long wall = 0;
	struct ump u;
	int n, last;

	if (ump_open(&u)) {
		r.err = 1;
		goto done;
	}
	last = t_nr_nodes(&u) - 1;
	if (ump_alloc(&u, UMP_REGION_HOST(0), T_LEN, &hs) ||
	    ump_alloc(&u, UMP_REGION_HOST(0), T_LEN, &hd) ||
	    ump_alloc(&u, UMP_REGION_HOST(last), T_LEN, &hd2)) {
		r.err = 2;
		goto done;
	}
	/* Long enough to measure: double until a chain takes 0.3 s. */
	for (n = 1; n <= T_MAX_DESCS; n *= 2) {
		wall = run_chain(&u, hs, hd, n, &r.usage_us);
		if (wall < 0) {
			r.err = 3;
			goto done;
		}
		if (wall >= 300000)
			break;
	}
	r.descs = n > T_MAX_DESCS ? T_MAX_DESCS : n;
	r.wall_us = wall;
	/* A chain to the last node makes that node's worker. */
	if (run_chain(&u, hs, hd2, 1, NULL) < 0) {
		r.err = 4;
		goto done;
	}
	find_workers(&r);
	if (!access(T_CG "/cpu.max", F_OK) && !t_write_file(T_CG "/cpu.max", "10000 100000")) {
		r.throttled_wall_us = run_chain(&u, hs, hd, r.descs, NULL);
		t_write_file(T_CG "/cpu.max", "max 100000");
	}
done:
	if (write(out, &r, sizeof(r)) != sizeof(r))
		_exit(2);
	_exit(0);
}

int main(void)
{
	struct result r;

	t_cgroup2();
	t_write_file(CG "/cgroup.subtree_control", "+cpu"); /* where there is one */
	mkdir(T_CG, 0755);
	if (access(T_CG "/cpu.stat", F_OK))
		T_SKIPPED("no cpu.stat in the cgroup");
	t_run_in_cgroup(T_CG, child, &r, sizeof(r));
	if (r.err)
		T_FAIL("the process in the cgroup failed at step %d", r.err);
	printf("cgroup_cpu: a chain of %d x 64 MiB took %.3f s; the cgroup's usage grew %.3f s "
	       "(%.2f of it); %d worker(s) in the cgroup\n",
	       r.descs, r.wall_us / 1e6, r.usage_us / 1e6, (double)r.usage_us / r.wall_us,
	       r.workers);
	if (r.workers < 1)
		T_FAIL("no ump copy worker in the submitter's cgroup");
	if (!r.affinity_ok)
		T_FAIL("a copy worker is not on the CPUs of its node");
	/* The process slept in WAIT: what the cgroup used is the copying. */
	if (r.usage_us < r.wall_us / 2)
		T_FAIL("%.3f s of copying charged %.3f s to the submitter's cgroup",
		       r.wall_us / 1e6, r.usage_us / 1e6);
	if (r.throttled_wall_us < 0) {
		printf("cgroup_cpu: no cpu controller: throttling not checked\n");
	} else {
		printf("cgroup_cpu: under cpu.max 10%% the same chain took %.3f s (%.1fx)\n",
		       r.throttled_wall_us / 1e6, (double)r.throttled_wall_us / r.wall_us);
		if (r.throttled_wall_us < 3 * r.wall_us)
			T_FAIL("cpu.max 10%% did not slow the copying: %.3f s against %.3f s",
			       r.throttled_wall_us / 1e6, r.wall_us / 1e6);
	}
	/* The workers leave with the file; then the cgroup can go. */
	t_cgroup_remove(T_CG);
	return 0;
}
