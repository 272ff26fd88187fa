/* SPDX-License-Identifier: MIT */
/*
 * The regions a test can copy between: every host node, every federated
 * device's P2P memory, and dma-bufs imported from udmabuf and the system
 * dma-heap when the kernel has them. Each region makes a buffer that is both
 * a ump handle and a CPU mapping the test fills and checks.
 */
#ifndef UMP_REGIONS_H
#define UMP_REGIONS_H

#include <fcntl.h>
#include <linux/dma-buf.h>
#include <linux/dma-heap.h>
#include <linux/udmabuf.h>
#include <sys/ioctl.h>
#include <sys/mman.h>

#include "ump_test.h"

enum t_kind { T_HOST, T_P2P, T_UDMABUF, T_HEAP };

struct t_region {
	enum t_kind kind;
	uint32_t region; /* host/p2p */
	char name[32];
	uint64_t max_size; /* P2P memory is small and slow to touch */
};

struct t_buf {
	uint32_t handle;
	unsigned char *map;
	uint64_t size;
	int fd; /* memfd or heap fd, -1 */
};

static inline int t_regions(struct ump *u, struct t_region *r, int max)
{
	struct ump_dev_info di;
	int n = 0, i;

	for (i = 0; i < t_nr_nodes(u) && n < max; i++) {
		r[n] = (struct t_region){T_HOST, UMP_REGION_HOST(i), "", 1ull << 30};
		snprintf(r[n].name, sizeof(r[n].name), "host%d", i);
		n++;
	}
	for (i = 0; i < (int)u->version.nr_devices && n < max; i++) {
		if (ump_dev_info(u, (uint32_t)i, &di) || !di.p2pmem)
			continue;
		r[n] = (struct t_region){T_P2P, UMP_REGION_P2P(i), "", 2ull << 20};
		snprintf(r[n].name, sizeof(r[n].name), "p2p%d", i);
		n++;
	}
	if (access("/dev/udmabuf", F_OK) == 0 && n < max)
		r[n++] = (struct t_region){T_UDMABUF, 0, "udmabuf", 1ull << 30};
	if (access("/dev/dma_heap/system", F_OK) == 0 && n < max)
		r[n++] = (struct t_region){T_HEAP, 0, "dma-heap", 1ull << 30};
	return n;
}

static inline int t_udmabuf(uint64_t size, int *memfd)
{
	struct udmabuf_create c = {0};
	int dev, fd, ret;

	*memfd = memfd_create("ump-test", MFD_ALLOW_SEALING);
	if (*memfd < 0)
		return -errno;
	if (ftruncate(*memfd, (off_t)size) || fcntl(*memfd, F_ADD_SEALS, F_SEAL_SHRINK) < 0)
		return -errno;
	dev = open("/dev/udmabuf", O_RDWR);
	if (dev < 0)
		return -errno;
	c.memfd = (uint32_t)*memfd;
	c.size = size;
	fd = ioctl(dev, UDMABUF_CREATE, &c);
	ret = fd < 0 ? -errno : fd;
	close(dev);
	return ret;
}

/*
 * Whether udmabuf keeps what the CPU wrote across its own
 * DMA_BUF_IOCTL_SYNC(READ), ump not involved. Under swiotlb=force it does
 * not: it maps its pages to its own misc device once, at the first sync,
 * and each later begin_cpu_access(DMA_FROM_DEVICE) syncs that mapping's
 * bounce slots, still holding the bytes of the first sync, back over the
 * pages (drivers/dma-buf/udmabuf.c, 6.12). ump's CPU copies bracket an
 * import with the same calls, so such a udmabuf cannot be a source.
 */
static inline int t_udmabuf_reads_stale(void)
{
	struct dma_buf_sync rd = {DMA_BUF_SYNC_START | DMA_BUF_SYNC_READ};
	struct dma_buf_sync end = {DMA_BUF_SYNC_END | DMA_BUF_SYNC_READ};
	int memfd, fd = t_udmabuf(4096, &memfd), stale;
	volatile unsigned char *p;

	if (fd < 0)
		T_FAIL("udmabuf: %s", strerror(-fd));
	p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, memfd, 0);
	if (p == MAP_FAILED)
		T_FAIL("mmap udmabuf memfd");
	p[0] = 1;
	if (ioctl(fd, DMA_BUF_IOCTL_SYNC, &rd) || ioctl(fd, DMA_BUF_IOCTL_SYNC, &end))
		T_FAIL("DMA_BUF_IOCTL_SYNC: %s", strerror(errno));
	p[0] = 2;
	if (ioctl(fd, DMA_BUF_IOCTL_SYNC, &rd) || ioctl(fd, DMA_BUF_IOCTL_SYNC, &end))
		T_FAIL("DMA_BUF_IOCTL_SYNC: %s", strerror(errno));
	stale = p[0] != 2;
	munmap((void *)p, 4096);
	close(fd);
	close(memfd);
	return stale;
}

static inline int t_heap(uint64_t size)
{
	struct dma_heap_allocation_data a = {
	    .len = size,
	    .fd_flags = O_RDWR | O_CLOEXEC,
	};
	int heap = open("/dev/dma_heap/system", O_RDONLY | O_CLOEXEC);
	int ret;

	if (heap < 0)
		return -errno;
	ret = ioctl(heap, DMA_HEAP_IOCTL_ALLOC, &a);
	close(heap);
	return ret < 0 ? -errno : (int)a.fd;
}

static inline void t_buf_new(struct ump *u, const struct t_region *r, uint64_t size,
			     struct t_buf *b)
{
	int dmabuf = -1, memfd = -1;
	uint64_t isz;

	size = (size + 4095) & ~4095ull;
	b->size = size;
	b->fd = -1;
	switch (r->kind) {
	case T_HOST:
	case T_P2P:
		T_OK(ump_alloc(u, r->region, size, &b->handle));
		T_OK(ump_mmap(u, b->handle, size, (void **)&b->map));
		return;
	case T_UDMABUF:
		dmabuf = t_udmabuf(size, &memfd);
		if (dmabuf < 0)
			T_FAIL("udmabuf: %s", strerror(-dmabuf));
		b->map = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, memfd, 0);
		b->fd = memfd;
		break;
	case T_HEAP:
		dmabuf = t_heap(size);
		if (dmabuf < 0)
			T_FAIL("dma-heap: %s", strerror(-dmabuf));
		b->map = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, dmabuf, 0);
		break;
	}
	if (b->map == MAP_FAILED)
		T_FAIL("mmap %s: %s", r->name, strerror(errno));
	T_OK(ump_import(u, dmabuf, &b->handle, &isz));
	if (isz != size)
		T_FAIL("imported size %llu, want %llu", (unsigned long long)isz,
		       (unsigned long long)size);
	/* The import holds its own reference to the dma-buf. */
	close(dmabuf);
}

static inline void t_buf_free(struct ump *u, struct t_buf *b)
{
	munmap(b->map, b->size);
	T_OK(ump_free(u, b->handle));
	if (b->fd >= 0)
		close(b->fd);
}

#endif
