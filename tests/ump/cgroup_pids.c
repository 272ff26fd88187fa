// SPDX-License-Identifier: MIT
/*
 * Copy workers are shared per cgroup and NUMA node, not made per open
 * file: a process in a cgroup with pids.max 20 that opens 64 files and
 * copies through each adds one worker per node it copies to, within its
 * pids.max. Before, each file made its own kernel thread, charged to
 * pids.current past the limit (6,001 threads outside a pids.max of 20 in
 * the review).
 */
#include <sys/stat.h>
#include <sys/wait.h>

#include "ump_test.h"

#define CG "/sys/fs/cgroup"
#define T_CG CG "/ump-pids-test"
#define T_FILES 64
#define T_PIDS_MAX 20

struct result {
	int err, workers, nodes;
	long long pids;
};

static void child(int out)
{
	static struct ump u[T_FILES];
	struct result r = {0};
	uint32_t hs, hd;
	int i;

	for (i = 0; i < T_FILES && !r.err; i++) {
		struct ump_copy_desc d;

		if (ump_open(&u[i]) || ump_alloc(&u[i], UMP_REGION_HOST(0), 4096, &hs) ||
		    ump_alloc(&u[i], UMP_REGION_HOST(0), 4096, &hd))
			r.err = 1;
		d = (struct ump_copy_desc){hs, hd, 0, 0, 4096};
		if (!r.err && ump_copy_sync(&u[i], &d, 1))
			r.err = 2;
	}
	r.nodes = (int)u[0].version.nr_nodes;
	r.workers = t_cgroup_workers(T_CG);
	r.pids = t_read_number(T_CG "/pids.current");
	for (i = 0; i < T_FILES; i++)
		ump_close(&u[i]);
	if (write(out, &r, sizeof(r)) != sizeof(r))
		_exit(2);
}

int main(void)
{
	struct result r;

	t_cgroup_limited(T_CG, "pids", "pids.max", "20");
	t_run_in_cgroup(T_CG, child, &r, sizeof(r));
	if (r.err)
		T_FAIL("the process in the cgroup failed at step %d", r.err);
	printf("cgroup_pids: %d files copying: %d copy worker(s) in the cgroup, pids.current %lld "
	       "(pids.max %d)\n",
	       T_FILES, r.workers, r.pids, T_PIDS_MAX);
	if (r.workers < 1)
		T_FAIL("no copy worker in the submitter's cgroup");
	if (r.workers > r.nodes)
		T_FAIL("%d copy workers for %d files: one per file, not per cgroup and node",
		       r.workers, T_FILES);
	if (r.pids > T_PIDS_MAX)
		T_FAIL("pids.current %lld passed pids.max %d", r.pids, T_PIDS_MAX);
	t_cgroup_remove(T_CG);
	return 0;
}
