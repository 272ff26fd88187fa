// SPDX-License-Identifier: MIT
/*
 * An ioctl whose argument cannot be written back (it sits in a read-only
 * page) returns -EFAULT and has no effect: ALLOC and IMPORT leave no buffer,
 * EXPORT installs no fd, SUBMIT runs no chain, and WAIT does not reap the
 * chain it could not report, so a second WAIT still gets the result.
 */
#include <dirent.h>
#include <sys/ioctl.h>
#include <sys/mman.h>

#include "ump_test.h"

static long long live(const char *key)
{
	return t_pool(key);
}

static int open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	if (!d)
		T_FAIL("opendir /proc/self/fd: %s", strerror(errno));
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

/* The ioctl with its argument copied into a page that is then made read-only. */
static int ro_ioctl(int fd, unsigned long cmd, const void *arg, size_t len)
{
	void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int ret;

	if (p == MAP_FAILED)
		T_FAIL("mmap: %s", strerror(errno));
	memcpy(p, arg, len);
	if (mprotect(p, 4096, PROT_READ))
		T_FAIL("mprotect: %s", strerror(errno));
	ret = ioctl(fd, cmd, p) ? -errno : 0;
	munmap(p, 4096);
	return ret;
}

int main(void)
{
	struct ump_copy_desc d = {0, 0, 0, 0, 4096};
	unsigned char *ms, *md;
	uint32_t hs, hd, h;
	struct ump_wait w;
	struct ump u;
	long long bufs;
	int fds, fd;

	t_open(&u);
	T_OK(ump_alloc(&u, UMP_REGION_HOST(0), 1 << 16, &hs));
	T_OK(ump_alloc(&u, UMP_REGION_HOST(0), 1 << 16, &hd));
	T_OK(ump_mmap(&u, hs, 1 << 16, (void **)&ms));
	T_OK(ump_mmap(&u, hd, 1 << 16, (void **)&md));
	memset(ms, 0x5a, 1 << 16);

	bufs = live("buffers");
	{
		struct ump_alloc a = {.size = 4096, .region = UMP_REGION_HOST(0)};

		T_EXPECT(ro_ioctl(u.fd, UMP_IOC_ALLOC, &a, sizeof(a)), -EFAULT);
		if (live("buffers") != bufs)
			T_FAIL("ALLOC: -EFAULT but %lld buffers, was %lld", live("buffers"), bufs);
	}
	fds = open_fds();
	{
		struct ump_export e = {.handle = hs};

		T_EXPECT(ro_ioctl(u.fd, UMP_IOC_EXPORT, &e, sizeof(e)), -EFAULT);
		if (open_fds() != fds)
			T_FAIL("EXPORT: -EFAULT but %d fds open, was %d", open_fds(), fds);
	}
	fd = ump_export(&u, hs);
	T_REQUIRE(fd >= 0);
	{
		struct ump_import im = {.fd = fd};

		bufs = live("buffers");
		T_EXPECT(ro_ioctl(u.fd, UMP_IOC_IMPORT, &im, sizeof(im)), -EFAULT);
		if (live("buffers") != bufs)
			T_FAIL("IMPORT: -EFAULT but %lld buffers, was %lld", live("buffers"), bufs);
	}
	close(fd);
	/* The handle a leaked buffer would have held is still the next one given. */
	T_OK(ump_alloc(&u, UMP_REGION_HOST(0), 4096, &h));
	T_EXPECT(h, hd + 1);
	{
		struct ump_submit s = {.descs = (uintptr_t)&d, .count = 1};
		long long chains = live("chains");

		d.src = hs;
		d.dst = hd;
		T_EXPECT(ro_ioctl(u.fd, UMP_IOC_SUBMIT, &s, sizeof(s)), -EFAULT);
		usleep(200000);
		if (md[0] || live("chains") != chains)
			T_FAIL("SUBMIT: -EFAULT but the chain ran (dst %#x, chains %lld, was %lld)",
			       md[0], live("chains"), chains);
	}
	{
		struct ump_wait a = {.timeout_ns = UMP_TIMEOUT_INFINITE};
		uint64_t chain;

		T_OK(ump_submit(&u, &d, 1, 99, &chain));
		a.chain = chain;
		T_EXPECT(ro_ioctl(u.fd, UMP_IOC_WAIT, &a, sizeof(a)), -EFAULT);
		T_OK(ump_wait(&u, chain, UMP_TIMEOUT_INFINITE, &w));
		if (w.status || w.user_data != 99 || md[4095] != 0x5a)
			T_FAIL("WAIT after a failed copy-out: status %d user_data %llu", w.status,
			       (unsigned long long)w.user_data);
	}
	ump_close(&u);
	printf("copyout: ALLOC, EXPORT, IMPORT, SUBMIT and WAIT undo on a failed copy-out\n");
	return 0;
}
