// SPDX-License-Identifier: MIT
/*
 * A process in a memory cgroup limited to 64 MiB: the pool's buffers are
 * charged to it (memory.current grows with them), ALLOC past the limit is
 * -ENOMEM with nothing killed, chains are charged too, and everything goes
 * back when the process ends. Skipped where the kernel has no cgroup v2
 * memory controller (the debug kernel is built without one).
 */
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "ump_test.h"

#define CG "/sys/fs/cgroup"
#define T_CG CG "/ump-test"
#define T_BUF (4u << 20)

static long long read_ll(const char *path)
{
	char buf[64] = {0};
	int fd = open(path, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	return n > 0 ? atoll(buf) : -1;
}

/* In the cgroup: allocate 4 MiB buffers until refused; report through out. */
static void child(int out)
{
	long long r[3] = {0, 0, 0}; /* buffers made, the error, memory.current at the end */
	struct ump u;
	uint32_t h;
	int ret = 0;

	if (ump_open(&u))
		_exit(2);
	while (r[0] < 64) {
		ret = ump_alloc(&u, UMP_REGION_HOST(0), T_BUF, &h);
		if (ret)
			break;
		r[0]++;
	}
	r[1] = ret;
	r[2] = read_ll(T_CG "/memory.current");
	if (write(out, r, sizeof(r)) != sizeof(r))
		_exit(2);
	_exit(0);
}

int main(void)
{
	long long r[3], before;
	int in, st;
	pid_t c;

	t_cgroup2();
	{
		char ctl[256] = {0};
		int fd = open(CG "/cgroup.controllers", O_RDONLY);

		if (fd < 0 || read(fd, ctl, sizeof(ctl) - 1) < 0 || !strstr(ctl, "memory"))
			T_SKIPPED("no memory controller in this kernel");
		close(fd);
	}
	t_write_file(CG "/cgroup.subtree_control", "+memory");
	mkdir(T_CG, 0755);
	T_OK(t_write_file(T_CG "/memory.max", "64M"));
	before = t_used_total();
	c = t_fork_in_cgroup(T_CG, child, &in);
	T_REQUIRE(waitpid(c, &st, 0) == c);
	if (!WIFEXITED(st))
		T_FAIL("the process in the cgroup was killed (signal %d): ALLOC must fail, not "
		       "OOM-kill",
		       WIFSIGNALED(st) ? WTERMSIG(st) : 0);
	if (WEXITSTATUS(st))
		T_FAIL("child exit %d", WEXITSTATUS(st));
	T_REQUIRE(read(in, r, sizeof(r)) == sizeof(r));
	printf("cgroup: %lld buffers of 4 MiB in a 64 MiB cgroup, then %s; memory.current %lld\n",
	       r[0], strerror((int)-r[1]), r[2]);
	if (r[1] != -ENOMEM)
		T_FAIL("ALLOC past the cgroup's limit: %lld, want -ENOMEM", r[1]);
	if (r[0] < 1 || r[0] * T_BUF > (64u << 20))
		T_FAIL("%lld buffers of 4 MiB fit in a 64 MiB cgroup: not charged to it", r[0]);
	if (r[2] < r[0] * (long long)T_BUF)
		T_FAIL("memory.current %lld with %lld MiB of pool buffers: not charged", r[2],
		       r[0] * 4);
	/* Gone with the process. */
	for (int i = 0; i < 100 && t_used_total() != before; i++)
		usleep(100000);
	if (t_used_total() != before)
		T_FAIL("the pool holds %lld bytes more after the process ended",
		       t_used_total() - before);
	rmdir(T_CG);
	return 0;
}
