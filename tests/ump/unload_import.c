// SPDX-License-Identifier: MIT
/*
 * rmmod while a chain that holds a foreign dma-buf import is still copying:
 * its files are closed (the process exited), so nothing holds the module,
 * and the unload must wait for the chain and tear down in order, nothing
 * used after it is freed. Run last: it leaves the module unloaded.
 */
#include <sys/syscall.h>
#include <sys/wait.h>

#include "foreign.h"

#define T_SZ (64u << 20)

static void child(int out)
{
	struct ump_copy_desc d;
	uint32_t hi, hh;
	const char *who;
	uint64_t size, chain;
	struct ump u;
	int fd;

	t_open(&u);
	fd = t_foreign_dmabuf(T_SZ, 1, &who);
	if (fd == -ENODEV)
		_exit(T_SKIP);
	if (fd < 0)
		T_FAIL("%s: %s", who, strerror(-fd));
	T_OK(ump_import(&u, fd, &hi, &size));
	close(fd);
	T_OK(ump_alloc(&u, UMP_REGION_HOST(0), T_SZ, &hh));
	d = (struct ump_copy_desc){hi, hh, 0, 0, T_SZ};
	T_OK(ump_submit(&u, &d, 1, 0, &chain));
	if (write(out, "s", 1) != 1)
		_exit(1);
	_exit(0); /* closes the file with the chain running */
}

int main(void)
{
	int p[2], st, tries;
	pid_t pid;
	char c;

	T_REQUIRE(!pipe(p));
	pid = fork();
	T_REQUIRE(pid >= 0);
	if (!pid)
		child(p[1]);
	close(p[1]);
	if (read(p[0], &c, 1) != 1) {
		waitpid(pid, &st, 0);
		if (WIFEXITED(st) && WEXITSTATUS(st) == T_SKIP)
			T_SKIPPED("no foreign dma-buf exporter in this guest");
		T_FAIL("child failed before submitting");
	}
	waitpid(pid, &st, 0);
	/* The module may be held for an instant while the files close. */
	for (tries = 0; tries < 1000; tries++) {
		if (!syscall(SYS_delete_module, "ump", O_NONBLOCK))
			break;
		if (errno != EWOULDBLOCK && errno != EAGAIN && errno != EBUSY)
			T_FAIL("delete_module: %s", strerror(errno));
		usleep(1000);
	}
	if (tries == 1000)
		T_FAIL("the module stayed busy for a second after its last file closed");
	if (access("/proc/ump", F_OK) == 0)
		T_FAIL("/proc/ump still there after rmmod");
	printf("unload_import: unloaded with an import's chain running (%d retries)\n", tries);
	return 0;
}
