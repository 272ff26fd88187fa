// SPDX-License-Identifier: MIT
/*
 * Hostile arguments: every ioctl rejects non-zero reserved, pad and flag
 * fields, bad pointers, counts and handles with the documented errno, and
 * nothing is left allocated afterwards.
 */
#include <fcntl.h>
#include <sys/ioctl.h>

#include "ump_test.h"

static int xioctl(int fd, unsigned long cmd, void *arg)
{
	return ioctl(fd, cmd, arg) < 0 ? -errno : 0;
}

int main(void)
{
	struct ump u, other;
	uint32_t h, ho;
	long long bufs0, bufs1;
	int fd, nul;

	t_open(&u);
	T_OK(ump_open(&other));
	bufs0 = t_pool("buffers");
	fd = u.fd;
	T_OK(ump_alloc(&u, UMP_REGION_HOST(0), 4096, &h));
	/* Handles are per file and start at 1: the third of another file's
	 * buffers has a number this file never issued. */
	T_OK(ump_alloc(&other, UMP_REGION_HOST(0), 4096, &ho));
	T_OK(ump_alloc(&other, UMP_REGION_HOST(0), 4096, &ho));
	T_OK(ump_alloc(&other, UMP_REGION_HOST(0), 4096, &ho));

	/* Unknown commands, and known numbers with the wrong size. */
	T_EXPECT(xioctl(fd, _IO(UMP_IOC_MAGIC, 0x7f), NULL), -ENOTTY);
	T_EXPECT(xioctl(fd, _IOWR(UMP_IOC_MAGIC, 0x01, uint64_t), &h), -ENOTTY);
	T_EXPECT(xioctl(fd, _IOWR('x', 0x01, struct ump_alloc), &h), -ENOTTY);
	T_EXPECT(xioctl(fd, _IOR(UMP_IOC_MAGIC, 0x01, struct ump_alloc), &h), -ENOTTY);
	/* A struct from a newer header: zero past ours is fine, anything else -E2BIG. */
	{
		struct {
			struct ump_alloc a;
			uint64_t more[2];
		} big = {{.size = 4096, .region = UMP_REGION_HOST(0)}, {0, 0}};
		unsigned long cmd = _IOWR(UMP_IOC_MAGIC, 0x01, big);

		T_OK(xioctl(fd, cmd, &big));
		T_EXPECT(big.a.handle > 0, 1);
		T_OK(ump_free(&u, big.a.handle));
		big.a.handle = 0;
		big.more[1] = 1;
		T_EXPECT(xioctl(fd, cmd, &big), -E2BIG);
		T_EXPECT(big.a.handle, 0);
	}
	/* Bad pointers. */
	T_EXPECT(xioctl(fd, UMP_IOC_ALLOC, NULL), -EFAULT);
	T_EXPECT(xioctl(fd, UMP_IOC_WAIT, (void *)16), -EFAULT);

	{
		struct ump_alloc a = {.size = 4096, .flags = 1};

		T_EXPECT(xioctl(fd, UMP_IOC_ALLOC, &a), -EINVAL);
		a = (struct ump_alloc){.size = 4096, .pad = 1};
		T_EXPECT(xioctl(fd, UMP_IOC_ALLOC, &a), -EINVAL);
		a = (struct ump_alloc){.size = 4096, .reserved[1] = 1};
		T_EXPECT(xioctl(fd, UMP_IOC_ALLOC, &a), -EINVAL);
		a = (struct ump_alloc){.size = ~0ull};
		T_EXPECT(xioctl(fd, UMP_IOC_ALLOC, &a), -ENOMEM);
	}
	{
		struct ump_handle_arg a = {.handle = h, .reserved = 1};

		T_EXPECT(xioctl(fd, UMP_IOC_FREE, &a), -EINVAL);
		a = (struct ump_handle_arg){.handle = h, .flags = 2};
		T_EXPECT(xioctl(fd, UMP_IOC_FREE, &a), -EINVAL);
		a = (struct ump_handle_arg){.handle = 0};
		T_EXPECT(xioctl(fd, UMP_IOC_FREE, &a), -ENOENT);
		a = (struct ump_handle_arg){.handle = ~0u};
		T_EXPECT(xioctl(fd, UMP_IOC_FREE, &a), -ENOENT);
	}
	{
		struct ump_export e = {.handle = h, .flags = 2};

		T_EXPECT(xioctl(fd, UMP_IOC_EXPORT, &e), -EINVAL);
		e = (struct ump_export){.handle = h, .fd = 5};
		/* fd is out-only: any value in is fine, pad is not. */
		e.pad = 1;
		T_EXPECT(xioctl(fd, UMP_IOC_EXPORT, &e), -EINVAL);
		T_EXPECT(ump_export(&u, ho), -ENOENT);
	}
	{
		struct ump_import i = {.fd = -1};

		T_EXPECT(xioctl(fd, UMP_IOC_IMPORT, &i), -EBADF);
		nul = open("/dev/null", O_RDWR);
		i.fd = nul;
		T_EXPECT(xioctl(fd, UMP_IOC_IMPORT, &i), -EINVAL);
		i.fd = fd; /* /dev/ump itself is no dma-buf */
		T_EXPECT(xioctl(fd, UMP_IOC_IMPORT, &i), -EINVAL);
		close(nul);
		i = (struct ump_import){.fd = 0, .flags = 1};
		T_EXPECT(xioctl(fd, UMP_IOC_IMPORT, &i), -EINVAL);
	}
	{
		struct ump_copy_desc d = {h, h, 0, 0, 1};
		struct ump_submit s = {.descs = (uintptr_t)&d, .count = 1};

		s.count = 0;
		T_EXPECT(xioctl(fd, UMP_IOC_SUBMIT, &s), -EINVAL);
		s.count = UMP_MAX_CHAIN_DESCS + 1;
		T_EXPECT(xioctl(fd, UMP_IOC_SUBMIT, &s), -EINVAL);
		s.count = 1;
		s.flags = 1;
		T_EXPECT(xioctl(fd, UMP_IOC_SUBMIT, &s), -EINVAL);
		s.flags = 0;
		s.reserved[0] = 1;
		T_EXPECT(xioctl(fd, UMP_IOC_SUBMIT, &s), -EINVAL);
		s.reserved[0] = 0;
		s.descs = 8;
		T_EXPECT(xioctl(fd, UMP_IOC_SUBMIT, &s), -EFAULT);
		s.count = 3; /* runs past the end of d */
		s.descs = (uintptr_t)&d;
		d.src = ho; /* another file's handle */
		T_EXPECT(xioctl(fd, UMP_IOC_SUBMIT, &s), -ENOENT);
		s.count = 1;
		T_EXPECT(xioctl(fd, UMP_IOC_SUBMIT, &s), -ENOENT);
		d.src = h;
		d.dst = 0;
		T_EXPECT(xioctl(fd, UMP_IOC_SUBMIT, &s), -ENOENT);
	}
	{
		struct ump_wait w = {.chain = 0};

		T_EXPECT(xioctl(fd, UMP_IOC_WAIT, &w), -EINVAL);
		w.chain = 1ull << 32;
		T_EXPECT(xioctl(fd, UMP_IOC_WAIT, &w), -EINVAL);
		w.chain = 1;
		w.flags = 1;
		T_EXPECT(xioctl(fd, UMP_IOC_WAIT, &w), -EINVAL);
		w.flags = 0;
		w.reserved[1] = 1;
		T_EXPECT(xioctl(fd, UMP_IOC_WAIT, &w), -EINVAL);
		w.reserved[1] = 0;
		T_EXPECT(xioctl(fd, UMP_IOC_WAIT, &w), -ENOENT);
	}
	{
		struct ump_dev_info di = {.index = 0, .reserved[3] = 1};
		struct ump_dev_add da = {.flags = 1};
		struct ump_buf_info bi = {.handle = h, .flags = 1};

		T_EXPECT(xioctl(fd, UMP_IOC_DEV_INFO, &di), -EINVAL);
		T_EXPECT(xioctl(fd, UMP_IOC_DEV_ADD, &da), -EINVAL);
		da = (struct ump_dev_add){.pci_domain = 0x10000};
		T_EXPECT(xioctl(fd, UMP_IOC_DEV_ADD, &da), -EINVAL);
		T_EXPECT(xioctl(fd, UMP_IOC_BUF_INFO, &bi), -EINVAL);
	}
	/* A chain submitted and never waited for is freed with its file. */
	{
		struct ump_copy_desc d = {h, h, 0, 0, 1};
		uint64_t chain;

		T_OK(ump_submit(&u, &d, 1, 0, &chain));
	}
	ump_close(&u);
	ump_close(&other);
	/* The unwaited chain may still be finishing in its worker. */
	for (int i = 0; i < 50; i++) {
		bufs1 = t_pool("buffers");
		if (bufs1 == bufs0)
			break;
		usleep(100000);
	}
	if (bufs1 != bufs0)
		T_FAIL("buffers %lld after close, %lld before", bufs1, bufs0);
	printf("badinput: every hostile argument refused, nothing leaked\n");
	return 0;
}
