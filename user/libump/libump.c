// SPDX-License-Identifier: MIT
/* libump: see include/ump/libump.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <ump/libump.h>

static int ump_ioctl(const struct ump *u, unsigned long cmd, void *arg)
{
	int ret;

	do
		ret = ioctl(u->fd, cmd, arg);
	while (ret < 0 && errno == EINTR);
	return ret < 0 ? -errno : 0;
}

int ump_open(struct ump *u)
{
	int ret;

	memset(u, 0, sizeof(*u));
	u->fd = open(UMP_DEV_PATH, O_RDWR | O_CLOEXEC);
	if (u->fd < 0)
		return -errno;
	ret = ump_ioctl(u, UMP_IOC_VERSION, &u->version);
	if (!ret && u->version.abi_major != UMP_ABI_MAJOR)
		ret = -EPROTO;
	if (ret) {
		close(u->fd);
		u->fd = -1;
	}
	return ret;
}

void ump_close(struct ump *u)
{
	if (u->fd >= 0)
		close(u->fd);
	u->fd = -1;
}

int ump_alloc(struct ump *u, uint32_t region, uint64_t size, uint32_t *handle)
{
	struct ump_alloc a = {.size = size, .region = region};
	int ret = ump_ioctl(u, UMP_IOC_ALLOC, &a);

	if (!ret)
		*handle = a.handle;
	return ret;
}

int ump_free(struct ump *u, uint32_t handle)
{
	struct ump_handle_arg a = {.handle = handle};

	return ump_ioctl(u, UMP_IOC_FREE, &a);
}

int ump_buf_info(struct ump *u, uint32_t handle, struct ump_buf_info *info)
{
	memset(info, 0, sizeof(*info));
	info->handle = handle;
	return ump_ioctl(u, UMP_IOC_BUF_INFO, info);
}

int ump_export(struct ump *u, uint32_t handle)
{
	struct ump_export a = {.handle = handle, .flags = UMP_EXPORT_CLOEXEC};
	int ret = ump_ioctl(u, UMP_IOC_EXPORT, &a);

	return ret ? ret : a.fd;
}

int ump_import(struct ump *u, int dmabuf_fd, uint32_t *handle, uint64_t *size)
{
	struct ump_import a = {.fd = dmabuf_fd};
	int ret = ump_ioctl(u, UMP_IOC_IMPORT, &a);

	if (!ret) {
		*handle = a.handle;
		if (size)
			*size = a.size;
	}
	return ret;
}

int ump_mmap(struct ump *u, uint32_t handle, size_t len, void **addr)
{
	int fd = ump_export(u, handle);
	void *p;

	if (fd < 0)
		return fd;
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	/* The mapping holds its own reference to the dma-buf. */
	close(fd);
	if (p == MAP_FAILED)
		return -errno;
	*addr = p;
	return 0;
}

int ump_submit(struct ump *u, const struct ump_copy_desc *descs, unsigned int count,
	       uint64_t user_data, uint64_t *chain)
{
	struct ump_submit a = {
	    .descs = (uint64_t)(uintptr_t)descs,
	    .count = count,
	    .user_data = user_data,
	};
	int ret = ump_ioctl(u, UMP_IOC_SUBMIT, &a);

	if (!ret)
		*chain = a.chain;
	return ret;
}

int ump_wait(struct ump *u, uint64_t chain, uint64_t timeout_ns, struct ump_wait *result)
{
	memset(result, 0, sizeof(*result));
	result->chain = chain;
	result->timeout_ns = timeout_ns;
	/* The timeout is absolute, so restarting after EINTR cannot drift. */
	return ump_ioctl(u, UMP_IOC_WAIT, result);
}

int ump_stats(struct ump *u, struct ump_stats *stats, struct ump_stats_region *regions,
	      unsigned int max)
{
	int ret;

	memset(stats, 0, sizeof(*stats));
	stats->nr_regions = max;
	stats->regions = (uint64_t)(uintptr_t)regions;
	ret = ump_ioctl(u, UMP_IOC_STATS, stats);
	return ret ? ret : (int)stats->nr_regions;
}

int ump_cancel(struct ump *u, uint64_t chain)
{
	struct ump_cancel c = {.chain = chain};

	return ump_ioctl(u, UMP_IOC_CANCEL, &c);
}

int ump_copy_sync(struct ump *u, const struct ump_copy_desc *descs, unsigned int count)
{
	struct ump_wait w;
	uint64_t chain;
	int ret = ump_submit(u, descs, count, 0, &chain);

	if (ret)
		return ret;
	ret = ump_wait(u, chain, UMP_TIMEOUT_INFINITE, &w);
	return ret ? ret : w.status;
}

int ump_dev_add(struct ump *u, const char *pci, uint32_t *index)
{
	unsigned int dom, bus, slot, fn;
	struct ump_dev_add a = {0};
	int ret;

	if (sscanf(pci, "%x:%x:%x.%x", &dom, &bus, &slot, &fn) != 4 || bus > 0xff || slot > 0x1f ||
	    fn > 7)
		return -EINVAL;
	a.pci_domain = dom;
	a.pci_bdf = bus << 8 | slot << 3 | fn;
	ret = ump_ioctl(u, UMP_IOC_DEV_ADD, &a);
	if (!ret && index)
		*index = a.index;
	return ret;
}

int ump_dev_info(struct ump *u, uint32_t index, struct ump_dev_info *info)
{
	memset(info, 0, sizeof(*info));
	info->index = index;
	return ump_ioctl(u, UMP_IOC_DEV_INFO, info);
}

int ump_read_status(char *buf, size_t len)
{
	size_t n = 0;
	ssize_t r;
	int fd;

	if (!len)
		return -EINVAL;
	fd = open(UMP_STATUS_PATH, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while (n + 1 < len && (r = read(fd, buf + n, len - 1 - n)) > 0)
		n += (size_t)r;
	close(fd);
	buf[n] = '\0';
	return (int)n;
}

uint64_t ump_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}
