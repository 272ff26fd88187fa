/* SPDX-License-Identifier: MIT */
/*
 * dma-bufs from exporters other than ump, for the import tests: vgem (Debian
 * 6.1 ships it as a module; the guest loads it) and the system dma-heap
 * (the debug 6.12 kernel), each either read-write or read-only.
 */
#ifndef UMP_FOREIGN_H
#define UMP_FOREIGN_H

#include <dirent.h>
#include <fcntl.h>
#include <linux/dma-heap.h>
#include <sys/ioctl.h>

#include "ump_test.h"

/* The few DRM ioctls used, as in include/uapi/drm/drm.h and drm_mode.h. */
struct t_drm_version {
	int major, minor, patch;
	size_t name_len;
	char *name;
	size_t date_len;
	char *date;
	size_t desc_len;
	char *desc;
};
struct t_drm_create_dumb {
	uint32_t height, width, bpp, flags, handle, pitch;
	uint64_t size;
};
struct t_drm_prime_handle {
	uint32_t handle, flags;
	int32_t fd;
};
#define T_DRM_IOCTL_VERSION _IOWR('d', 0x00, struct t_drm_version)
#define T_DRM_IOCTL_PRIME_HANDLE_TO_FD _IOWR('d', 0x2d, struct t_drm_prime_handle)
#define T_DRM_IOCTL_MODE_CREATE_DUMB _IOWR('d', 0xB2, struct t_drm_create_dumb)

/* An open vgem card, or -ENODEV. */
static inline int t_vgem_open(void)
{
	char path[64], name[16];
	int i, fd;

	for (i = 0; i < 8; i++) {
		struct t_drm_version v = {.name_len = sizeof(name) - 1, .name = name};

		snprintf(path, sizeof(path), "/dev/dri/card%d", i);
		fd = open(path, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			continue;
		memset(name, 0, sizeof(name));
		if (!ioctl(fd, T_DRM_IOCTL_VERSION, &v) && !strcmp(name, "vgem"))
			return fd;
		close(fd);
	}
	return -ENODEV;
}

/* A dma-buf of size bytes (a multiple of 4 KiB), writable or not; -errno. */
static inline int t_foreign_dmabuf(uint64_t size, int writable, const char **who)
{
	int card = t_vgem_open();

	if (card >= 0) {
		struct t_drm_create_dumb c = {
		    .height = (uint32_t)(size / 4096), .width = 1024, .bpp = 32};
		struct t_drm_prime_handle p = {0};
		int ret;

		*who = "vgem";
		if (ioctl(card, T_DRM_IOCTL_MODE_CREATE_DUMB, &c)) {
			ret = -errno;
			close(card);
			return ret;
		}
		p.handle = c.handle;
		p.flags = O_CLOEXEC | (writable ? O_RDWR : 0);
		ret = ioctl(card, T_DRM_IOCTL_PRIME_HANDLE_TO_FD, &p) ? -errno : p.fd;
		close(card); /* the dma-buf keeps the object */
		return ret;
	}
	if (access("/dev/dma_heap/system", F_OK) == 0) {
		struct dma_heap_allocation_data a = {
		    .len = size,
		    .fd_flags = (writable ? O_RDWR : O_RDONLY) | O_CLOEXEC,
		};
		int heap = open("/dev/dma_heap/system", O_RDONLY | O_CLOEXEC), ret;

		*who = "dma-heap";
		if (heap < 0)
			return -errno;
		ret = ioctl(heap, DMA_HEAP_IOCTL_ALLOC, &a) ? -errno : (int)a.fd;
		close(heap);
		return ret;
	}
	*who = "none";
	return -ENODEV;
}

#endif
