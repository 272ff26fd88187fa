// SPDX-License-Identifier: MIT
/*
 * A chain runs in its submitter's cgroup, whoever opened the file: a child
 * that inherits a file its parent already copied through, and moves into a
 * cgroup held to 10% of a CPU by cpu.max, copies at 10%. Before, the file's
 * workers sat in the cgroups of the process that made them, and the child
 * copied 16 times faster than its limit through them.
 */
#include <sys/stat.h>
#include <sys/wait.h>

#include "ump_test.h"

#define CG "/sys/fs/cgroup"
#define T_CG CG "/ump-fd-test"
#define T_LEN (64u << 20)
#define T_MAX_DESCS 64

static struct ump u;
static uint32_t hs, hd;
static int descs;

/* One chain of descs 64 MiB copies: its wall time in microseconds, or -1. */
static long long run_chain(void)
{
	struct ump_copy_desc d[T_MAX_DESCS];
	uint64_t t0 = ump_now_ns();

	for (int i = 0; i < descs; i++)
		d[i] = (struct ump_copy_desc){hs, hd, 0, 0, T_LEN};
	if (ump_copy_sync(&u, d, (uint32_t)descs))
		return -1;
	return (long long)(ump_now_ns() - t0) / 1000;
}

static void child(int out)
{
	long long us = run_chain();

	if (write(out, &us, sizeof(us)) != sizeof(us))
		_exit(2);
}

int main(void)
{
	long long wall = 0, throttled;

	t_cgroup_limited(T_CG, "cpu", "cpu.max", "10000 100000");
	t_open(&u);
	T_OK(ump_alloc(&u, UMP_REGION_HOST(0), T_LEN, &hs));
	T_OK(ump_alloc(&u, UMP_REGION_HOST(0), T_LEN, &hd));
	/* Long enough to measure, here in the parent's cgroup: 0.3 s. */
	for (descs = 1; descs <= T_MAX_DESCS; descs *= 2) {
		wall = run_chain();
		T_REQUIRE(wall > 0);
		if (wall >= 300000)
			break;
	}
	if (descs > T_MAX_DESCS)
		descs = T_MAX_DESCS;
	t_run_in_cgroup(T_CG, child, &throttled, sizeof(throttled));
	T_REQUIRE(throttled > 0);
	printf("cgroup_fd: %d x 64 MiB took %.3f s in the parent; %.3f s (%.1fx) through the "
	       "same file in a child under cpu.max 10%%\n",
	       descs, wall / 1e6, throttled / 1e6, (double)throttled / wall);
	if (throttled < 3 * wall)
		T_FAIL("the child's copies escaped its cpu.max: %.3f s against %.3f s",
		       throttled / 1e6, wall / 1e6);
	ump_close(&u);
	t_write_file(T_CG "/cpu.max", "max 100000");
	t_cgroup_remove(T_CG);
	return 0;
}
