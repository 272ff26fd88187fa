// SPDX-License-Identifier: MIT
/*
 * UMP_IOC_STATS shows the whole pool only to CAP_SYS_ADMIN, as
 * /proc/ump/status (mode 0400) does: a caller without it gets its own
 * file's figures. Root holds three 1 MiB buffers on one file; a child opens
 * a file, takes one 64 KiB buffer, runs one chain and drops to uid 65534:
 * it sees one file, its one buffer and its 64 KiB, its one chain. Before,
 * every /dev/ump user read every user's use of the pool.
 */
#include <sys/wait.h>

#include "ump_test.h"

#define T_ROOT_BUFS 3

struct result {
	int err;
	struct ump_stats s;
	struct ump_stats_region r[8];
	int n;
};

static void child(int out)
{
	struct result res = {0};
	struct ump_copy_desc d;
	uint32_t h, h2;
	struct ump u;

	if (ump_open(&u) || ump_alloc(&u, UMP_REGION_HOST(0), 1 << 16, &h)) {
		res.err = 1;
		goto done;
	}
	d = (struct ump_copy_desc){h, h, 0, 1 << 15, 1 << 15};
	if (ump_copy_sync(&u, &d, 1) || setgid(65534) || setuid(65534)) {
		res.err = 2;
		goto done;
	}
	/* Dropped: a buffer made now is the file's too. */
	if (ump_alloc(&u, UMP_REGION_HOST(0), 1 << 16, &h2) || ump_free(&u, h2)) {
		res.err = 3;
		goto done;
	}
	res.n = ump_stats(&u, &res.s, res.r, 8);
	if (res.n < 0)
		res.err = 4;
done:
	if (write(out, &res, sizeof(res)) != sizeof(res))
		_exit(2);
	_exit(0);
}

int main(void)
{
	struct ump_stats_region r[8];
	struct result res;
	struct ump_stats s;
	struct ump u;
	uint32_t h;
	int p[2], st, i, n;
	pid_t c;

	t_open(&u);
	if (!(u.version.features & UMP_FEAT_STATS_SCOPED))
		printf("stats_scope: the module does not claim UMP_FEAT_STATS_SCOPED\n");
	for (i = 0; i < T_ROOT_BUFS; i++)
		T_OK(ump_alloc(&u, UMP_REGION_HOST(0), 1 << 20, &h));
	T_REQUIRE(!pipe(p));
	c = fork();
	T_REQUIRE(c >= 0);
	if (!c) {
		close(p[0]);
		child(p[1]);
	}
	close(p[1]);
	T_REQUIRE(waitpid(c, &st, 0) == c && WIFEXITED(st) && !WEXITSTATUS(st));
	T_REQUIRE(read(p[0], &res, sizeof(res)) == sizeof(res));
	if (res.err)
		T_FAIL("the child failed at step %d", res.err);
	printf("stats_scope: uid 65534 sees flags %u, %u file(s), %u buffer(s), %u chain(s), "
	       "node 0 %llu bytes in %u buffer(s), engines %llu chain(s) %llu bytes\n",
	       res.s.flags, res.s.contexts, res.s.buffers, res.s.chains,
	       (unsigned long long)res.r[0].used, res.r[0].buffers,
	       (unsigned long long)(res.s.engine[0].chains + res.s.engine[1].chains),
	       (unsigned long long)(res.s.engine[0].bytes + res.s.engine[1].bytes));
	if (res.s.flags & UMP_STATS_POOL || res.s.contexts != 1 || res.s.buffers != 1 ||
	    res.r[0].region != UMP_REGION_HOST(0) || res.r[0].used != 1 << 16 ||
	    res.r[0].buffers != 1 || res.s.engine[0].chains + res.s.engine[1].chains != 1 ||
	    res.s.engine[0].bytes + res.s.engine[1].bytes != 1 << 15)
		T_FAIL("an unprivileged caller sees more than its own file");
	if (res.r[0].capacity == 0)
		T_FAIL("the node's capacity is hidden from an unprivileged caller");

	n = ump_stats(&u, &s, r, 8);
	T_REQUIRE(n > 0);
	printf("stats_scope: root sees flags %u, %u buffer(s), node 0 %llu bytes\n", s.flags,
	       s.buffers, (unsigned long long)r[0].used);
	if (!(s.flags & UMP_STATS_POOL) || s.buffers < T_ROOT_BUFS ||
	    r[0].used < (uint64_t)T_ROOT_BUFS << 20)
		T_FAIL("CAP_SYS_ADMIN does not see the pool's figures");
	ump_close(&u);
	return 0;
}
