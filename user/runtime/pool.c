// SPDX-License-Identifier: MIT
/*
 * ho_pool: see include/heteroopt/pool.h. Two backends behind one const ops
 * table each: ump (libump) and the user-space fallback (memfd + libnuma).
 */
#include <errno.h>
#include <fcntl.h>
#include <numa.h>
#include <numaif.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "pool_priv.h"

static size_t round_up(size_t v, size_t to)
{
	return (v + to - 1) / to * to;
}

/* ---- ump ---------------------------------------------------------------- */

/* A ump buffer in region, mapped; node is what b says of where it is. */
static int ump_alloc_mapped(struct ho_pool *p, uint32_t region, size_t size, int node,
			    struct ho_pool_buf *b)
{
	uint32_t h;
	void *ptr;
	int ret;

	size = round_up(size, p->page);
	ret = ump_alloc(&p->ump, region, size, &h);
	if (ret)
		return ret;
	ret = ump_mmap(&p->ump, h, size, &ptr);
	if (ret) {
		ump_free(&p->ump, h);
		return ret;
	}
	*b = (struct ho_pool_buf){.ptr = ptr, .size = size, .node = node, .handle = h, .fd = -1};
	return 0;
}

static int ump_backend_alloc(struct ho_pool *p, size_t size, int node, struct ho_pool_buf *b)
{
	return ump_alloc_mapped(p, UMP_REGION_HOST((uint32_t)node), size, node, b);
}

static void ump_backend_free(struct ho_pool *p, struct ho_pool_buf *b)
{
	munmap(b->ptr, b->size);
	ump_free(&p->ump, b->handle);
}

static int ump_backend_copy(struct ho_pool *p, const struct ho_pool_copy *c, unsigned int n)
{
	struct ump_copy_desc d[64];

	/* Chains of up to 64: one syscall pair per 64 copies, still in order. */
	for (unsigned int i = 0; i < n;) {
		unsigned int k = 0;
		int ret;

		for (; k < 64 && i < n; k++, i++)
			d[k] = (struct ump_copy_desc){c[i].src->handle, c[i].dst->handle,
						      c[i].src_off, c[i].dst_off, c[i].len};
		ret = ump_copy_sync(&p->ump, d, k);
		if (ret)
			return ret;
	}
	return 0;
}

static int ump_backend_share_fd(struct ho_pool *p, const struct ho_pool_buf *b)
{
	return ump_export(&p->ump, b->handle);
}

/* A foreign dma-buf: ump holds a reference and copies through it, we map it. */
static int ump_backend_import(struct ho_pool *p, int fd, struct ho_pool_buf *b)
{
	uint32_t h;
	uint64_t size;
	void *ptr;
	int ret = ump_import(&p->ump, fd, &h, &size);

	if (ret)
		return ret;
	ret = ump_mmap(&p->ump, h, (size_t)size, &ptr);
	if (ret) {
		ump_free(&p->ump, h);
		return ret;
	}
	*b = (struct ho_pool_buf){
	    .ptr = ptr, .size = (size_t)size, .node = -1, .handle = h, .fd = -1};
	return 0;
}

static const struct ho_pool_ops ump_ops = {
    .alloc = ump_backend_alloc,
    .free = ump_backend_free,
    .copy = ump_backend_copy,
    .share_fd = ump_backend_share_fd,
    .import = ump_backend_import,
};

/* ---- user-space fallback ------------------------------------------------ */

static int user_alloc(struct ho_pool *p, size_t size, int node, struct ho_pool_buf *b)
{
	void *ptr;
	int fd, ret;

	size = round_up(size, p->page);
	fd = memfd_create("heteroopt-tensor", MFD_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (ftruncate(fd, (off_t)size)) {
		ret = -errno;
		goto err_fd;
	}
	ptr = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (ptr == MAP_FAILED) {
		ret = -errno;
		goto err_fd;
	}
	/*
	 * Bind before the first touch so every page is allocated on the node;
	 * on shmem the policy is the object's, so a later mapping keeps it.
	 */
	if (numa_available() >= 0) {
		unsigned long mask[16] = {0};

		mask[node / 64] = 1ul << (node % 64);
		if (mbind(ptr, size, MPOL_BIND, mask, sizeof(mask) * 8, MPOL_MF_STRICT)) {
			ret = -errno;
			munmap(ptr, size);
			goto err_fd;
		}
	}
	memset(ptr, 0, size);
	*b = (struct ho_pool_buf){.ptr = ptr, .size = size, .node = node, .fd = fd};
	return 0;

err_fd:
	close(fd);
	return ret;
}

static void user_free(struct ho_pool *p, struct ho_pool_buf *b)
{
	(void)p;
	munmap(b->ptr, b->size);
	close(b->fd);
}

int ho_pool_user_copy(struct ho_pool *p, const struct ho_pool_copy *c, unsigned int n)
{
	(void)p;
	for (unsigned int i = 0; i < n; i++) {
		if (!c[i].len || c[i].src_off > c[i].src->size ||
		    c[i].len > c[i].src->size - c[i].src_off || c[i].dst_off > c[i].dst->size ||
		    c[i].len > c[i].dst->size - c[i].dst_off)
			return c[i].len ? -ERANGE : -EINVAL;
		memmove((char *)c[i].dst->ptr + c[i].dst_off, (char *)c[i].src->ptr + c[i].src_off,
			c[i].len);
	}
	return 0;
}

static int user_share_fd(struct ho_pool *p, const struct ho_pool_buf *b)
{
	int fd;

	(void)p;
	fd = fcntl(b->fd, F_DUPFD_CLOEXEC, 0);
	return fd < 0 ? -errno : fd;
}

/* A memfd (or any mappable fd): mapped shared, with a descriptor of its own. */
static int user_import(struct ho_pool *p, int fd, struct ho_pool_buf *b)
{
	off_t size = lseek(fd, 0, SEEK_END);
	void *ptr;
	int own;

	(void)p;
	if (size < 0)
		return -errno;
	if (!size)
		return -EINVAL;
	ptr = mmap(NULL, (size_t)size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (ptr == MAP_FAILED)
		return -errno;
	own = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (own < 0) {
		own = -errno;
		munmap(ptr, (size_t)size);
		return own;
	}
	*b = (struct ho_pool_buf){.ptr = ptr, .size = (size_t)size, .node = -1, .fd = own};
	return 0;
}

static const struct ho_pool_ops user_ops = {
    .alloc = user_alloc,
    .free = user_free,
    .copy = ho_pool_user_copy,
    .share_fd = user_share_fd,
    .import = user_import,
};

/* ---- common ------------------------------------------------------------- */

int ho_pool_open(unsigned int flags, struct ho_pool **out)
{
	struct ho_pool *p = calloc(1, sizeof(*p));
	int ret = -ENOENT;

	if (!p)
		return -ENOMEM;
	p->page = (size_t)sysconf(_SC_PAGESIZE);
	p->ump.fd = -1;
	if (!(flags & HO_POOL_FALLBACK))
		ret = ump_open(&p->ump);
	if (!ret) {
		p->ops = &ump_ops;
		p->nodes = (int)p->ump.version.nr_nodes;
		snprintf(p->describe, sizeof(p->describe), "ump (/dev/ump, abi %u.%u, %d node%s)",
			 p->ump.version.abi_major, p->ump.version.abi_minor, p->nodes,
			 p->nodes == 1 ? "" : "s");
	} else {
		p->ops = &user_ops;
		p->nodes = numa_available() >= 0 ? numa_max_node() + 1 : 1;
		snprintf(p->describe, sizeof(p->describe),
			 "user-space fallback (memfd + libnuma, %d node%s): %s", p->nodes,
			 p->nodes == 1 ? "" : "s",
			 flags & HO_POOL_FALLBACK ? "asked for"
			 : ret == -ENOENT	  ? "/dev/ump not present (ump.ko not loaded)"
						  : strerror(-ret));
	}
	*out = p;
	return 0;
}

void ho_pool_close(struct ho_pool *p)
{
	if (!p)
		return;
	ump_close(&p->ump);
	free(p);
}

const char *ho_pool_describe(const struct ho_pool *p)
{
	return p->describe;
}

int ho_pool_is_ump(const struct ho_pool *p)
{
	return p->ops == &ump_ops;
}

int ho_pool_nodes(const struct ho_pool *p)
{
	return p->nodes;
}

/* The index ump.ko gives PCI device pci, federating it if it has none yet. */
static int ump_device_index(struct ho_pool *p, const char *pci, uint32_t *index)
{
	unsigned int dom, bus, dev, fn;
	struct ump_dev_info info = {0};
	char tail;

	if (sscanf(pci, "%4x:%2x:%2x.%1x%c", &dom, &bus, &dev, &fn, &tail) != 4)
		return -EINVAL;
	for (uint32_t i = 0; !ump_dev_info(&p->ump, i, &info) && i < info.nr_devices; i++)
		if (info.pci_domain == dom && info.pci_bdf == (bus << 8 | dev << 3 | fn)) {
			*index = i;
			return info.p2pmem ? 0 : -ENODEV;
		}
	return ump_dev_add(&p->ump, pci, index);
}

int ho_pool_alloc_p2p(struct ho_pool *p, size_t size, const char *pci, struct ho_pool_buf *b)
{
	uint32_t idx;
	int ret;

	if (!ho_pool_is_ump(p))
		return -EOPNOTSUPP;
	if (!size)
		return -EINVAL;
	ret = ump_device_index(p, pci, &idx);
	if (!ret)
		ret = ump_alloc_mapped(p, UMP_REGION_P2P(idx), size, -1, b);
	if (!ret)
		memset(b->ptr, 0, b->size); /* device memory is not zeroed by the allocator */
	return ret;
}

int ho_pool_buf_node(const struct ho_pool_buf *b)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), pages = b->size / page;
	size_t step = pages > 64 ? pages / 64 : 1;
	int node = -1;

	if (numa_available() < 0)
		return -ENOSYS;
	for (size_t i = 0; i < pages; i += step) {
		int here = -1;

		if (get_mempolicy(&here, NULL, 0, (char *)b->ptr + i * page,
				  MPOL_F_NODE | MPOL_F_ADDR))
			return -errno;
		if (node >= 0 && here != node)
			return -ENODATA;
		node = here;
	}
	return node;
}

int ho_pool_alloc(struct ho_pool *p, size_t size, int node, struct ho_pool_buf *b)
{
	if (!size || node < 0 || node >= p->nodes || node >= 1024)
		return -EINVAL;
	return p->ops->alloc(p, size, node, b);
}

void ho_pool_free(struct ho_pool *p, struct ho_pool_buf *b)
{
	if (b && b->ptr)
		p->ops->free(p, b);
	if (b)
		memset(b, 0, sizeof(*b));
}

int ho_pool_copy(struct ho_pool *p, const struct ho_pool_copy *c, unsigned int n)
{
	return n ? p->ops->copy(p, c, n) : 0;
}

int ho_pool_share_fd(struct ho_pool *p, const struct ho_pool_buf *b)
{
	return p->ops->share_fd(p, b);
}

int ho_pool_import(struct ho_pool *p, int fd, struct ho_pool_buf *b)
{
	if (fd < 0)
		return -EBADF;
	return p->ops->import(p, fd, b);
}
