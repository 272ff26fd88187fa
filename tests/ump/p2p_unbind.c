// SPDX-License-Identifier: MIT
/*
 * Unbinding the driver that provides P2P memory while a pool buffer in it
 * is held: the kernel's memunmap_pages() makes the unbind wait until the
 * buffer is freed, so the BAR cannot vanish under a mapping or a chain. The
 * buffer stays readable and copyable while the unbind waits, the unbind
 * ends once the buffer goes, the device then offers no P2P memory
 * (-ENODEV), and rebinding the driver brings it back.
 */
#include <libgen.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>

#include "ump_test.h"

#define SZ (1u << 20)

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(void)
{
	char name[32], link[256], path[320], drv[64];
	struct ump_dev_info di;
	unsigned char *p, *h;
	uint32_t hp, hh;
	int dev, status, go[2];
	struct ump u;
	double t0, t;
	pid_t pid;
	ssize_t n;

	setvbuf(stdout, NULL, _IONBF, 0);
	t_open(&u);
	dev = (int)t_p2p_device(&u, &di, name);
	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/driver", name);
	n = readlink(path, link, sizeof(link) - 1);
	if (n <= 0)
		T_SKIPPED("%s has no driver to unbind", name);
	link[n] = 0;
	snprintf(drv, sizeof(drv), "%s", basename(link));

	/*
	 * The unbinding child is forked before the buffer is mapped: a child
	 * forked after would inherit the mapping, and with it a reference to
	 * the buffer that its own blocked unbind then waits for.
	 */
	if (pipe(go))
		T_FAIL("pipe");
	pid = fork();
	if (pid < 0)
		T_FAIL("fork");
	if (pid == 0) {
		char c;

		close(u.fd);
		close(go[1]);
		if (read(go[0], &c, 1) != 1)
			_exit(2);
		snprintf(path, sizeof(path), "/sys/bus/pci/drivers/%s/unbind", drv);
		_exit(t_write_file(path, name) ? 1 : 0);
	}
	close(go[0]);
	T_OK(ump_alloc(&u, UMP_REGION_P2P(dev), SZ, &hp));
	T_OK(ump_alloc(&u, UMP_REGION_HOST(0), SZ, &hh));
	T_OK(ump_mmap(&u, hp, SZ, (void **)&p));
	T_OK(ump_mmap(&u, hh, SZ, (void **)&h));
	for (unsigned int i = 0; i < SZ; i++)
		p[i] = t_mark(i, 77);

	t0 = now();
	if (write(go[1], "g", 1) != 1)
		T_FAIL("cannot start the unbinding child");
	sleep(2);
	printf("unbinding %s from %s\n", name, drv);
	if (waitpid(pid, &status, WNOHANG) != 0)
		T_FAIL("unbinding %s from %s finished while a P2P buffer in it was held", name,
		       drv);
	/* Still memory while the unbind waits: read it, copy out of it. */
	struct ump_copy_desc d = {hp, hh, 0, 0, SZ};

	T_OK(ump_copy_sync(&u, &d, 1));
	printf("copied out of it while the unbind waits\n");
	for (unsigned int i = 0; i < SZ; i++)
		if (p[i] != t_mark(i, 77) || h[i] != t_mark(i, 77))
			T_FAIL("byte %u changed while the unbind waited", i);
	munmap(p, SZ);
	T_OK(ump_free(&u, hp));
	printf("freed\n");
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
		T_FAIL("unbind failed after the buffer was freed");
	t = now() - t0;
	T_OK(ump_dev_info(&u, (uint32_t)dev, &di));
	if (di.p2pmem)
		T_FAIL("%s still offers P2P memory with its driver unbound", name);
	T_EXPECT(ump_alloc(&u, UMP_REGION_P2P(dev), SZ, &hp), -ENODEV);

	snprintf(path, sizeof(path), "/sys/bus/pci/drivers/%s/bind", drv);
	T_OK(t_write_file(path, name));
	for (int i = 0; i < 100; i++) {
		T_OK(ump_dev_info(&u, (uint32_t)dev, &di));
		if (di.p2pmem)
			break;
		usleep(100000);
	}
	if (!di.p2pmem)
		T_FAIL("%s offers no P2P memory 10 s after rebinding %s", name, drv);
	T_OK(ump_alloc(&u, UMP_REGION_P2P(dev), SZ, &hp));
	T_OK(ump_free(&u, hp));
	munmap(h, SZ);
	ump_close(&u);
	printf("p2p_unbind: %s unbound from %s %.1f s after it began, once its buffer was "
	       "freed; rebound\n",
	       name, drv, t);
	return 0;
}
