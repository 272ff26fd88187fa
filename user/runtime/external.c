// SPDX-License-Identifier: MIT
/*
 * Tensors in outside memory: the zero-copy hand-off of ho_rt_bind_fd.
 *
 * A plan's kernels are made over fixed addresses (oneDNN's memory objects,
 * the loops' pointers), so a frame that arrives as a dma-buf cannot be
 * handed to them by pointer.  Instead each external tensor gets pages of
 * its own, apart from its device's region, and binding maps the outside
 * memory over exactly those pages (mmap MAP_FIXED): every kernel then reads
 * or writes the frame itself, and nothing is copied.  The pool imports the
 * same memory, so that copies to and from other devices (which ump.ko makes
 * by handle, not by address) reach it too.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/dma-buf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common.h"
#include "exec_priv.h"

int ho_rt_ext_plan(struct ho_rt *rt, const struct ho_rt_opts *o, struct ho_error *err)
{
	const struct ho_graph *g = rt->g;
	uint32_t n = o ? o->n_external : 0;

	if (!(rt->ext_of = malloc((g->n_tensors + 1) * sizeof(int32_t))) ||
	    !(rt->ext = calloc(n + 1, sizeof(*rt->ext))))
		return ho_err(err, -ENOMEM, "out of memory");
	for (uint32_t t = 0; t < g->n_tensors; t++)
		rt->ext_of[t] = -1;
	for (uint32_t i = 0; i < n; i++) {
		int32_t t = ho_graph_find_tensor(g, o->external[i]);
		const struct ho_tensor *tt = t >= 0 ? &g->tensors[t] : NULL;

		if (!tt || !(tt->flags & (HO_T_INPUT | HO_T_OUTPUT)) ||
		    (tt->flags & (HO_T_BOUND | HO_T_KNOWN)))
			return ho_err(err, -EINVAL,
				      "external tensor '%s': not an input or output of the model",
				      o->external[i]);
		/* An output that is a view (a classifier's Flatten) has its source's bytes:
		 * the source then lives in the outside memory, written there by its node. */
		int32_t r = ho_rt_root(rt, t);

		if (rt->ext_of[r] >= 0)
			continue;
		if (r != t && (g->tensors[r].flags & (HO_T_INPUT | HO_T_KNOWN)))
			return ho_err(err, -EINVAL,
				      "external tensor '%s': it is a view of '%s', which is "
				      "another input or a constant",
				      tt->name, g->tensors[r].name);
		if (rt->home[r] < 0)
			return ho_err(err, -EINVAL,
				      "external tensor '%s': nothing runs to write it", tt->name);
		if (*rt->desc[rt->home[r]].p2p_pci)
			return ho_err(err, -EINVAL,
				      "external tensor '%s': its device %s keeps its memory in PCI "
				      "%s's P2P memory, not in host memory",
				      tt->name, rt->desc[rt->home[r]].name,
				      rt->desc[rt->home[r]].p2p_pci);
		rt->ext_of[r] = (int32_t)rt->n_ext;
		rt->ext[rt->n_ext++] = (struct ho_rt_ext){
		    .t = r, .named = t, .dev = (uint32_t)rt->home[r], .sync_fd = -1};
	}
	return 0;
}

int ho_rt_ext_alloc(struct ho_rt *rt, struct ho_error *err)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);

	for (uint32_t i = 0; i < rt->n_ext; i++) {
		struct ho_rt_ext *e = &rt->ext[i];
		const struct ho_tensor *tt = &rt->g->tensors[e->t];
		int node = rt->desc[e->dev].numa_node;
		int ret;

		e->len = ((size_t)tt->bytes + page - 1) / page * page;
		if (!e->len)
			e->len = page;
		ret =
		    ho_pool_alloc(rt->pool, e->len,
				  node >= 0 && node < ho_pool_nodes(rt->pool) ? node : 0, &e->own);
		if (ret)
			return ho_err(err, ret, "external tensor '%s': cannot get %zu bytes: %s",
				      tt->name, e->len, strerror(-ret));
		rt->buf[AT(rt, e->t, e->dev)] = e->own.ptr;
	}
	return 0;
}

/* e's own pages mapped back under its span, its outside memory let go. */
static int ho_rt_ext_unbind(struct ho_rt *rt, struct ho_rt_ext *e)
{
	int fd = ho_pool_share_fd(rt->pool, &e->own), ret = 0;

	if (fd < 0 || mmap(e->own.ptr, e->len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd,
			   0) == MAP_FAILED)
		ret = fd < 0 ? fd : -errno;
	if (fd >= 0)
		close(fd);
	ho_pool_free(rt->pool, &e->bound);
	if (e->sync_fd >= 0)
		close(e->sync_fd);
	e->sync_fd = -1;
	return ret;
}

void ho_rt_ext_free(struct ho_rt *rt)
{
	for (uint32_t i = 0; i < rt->n_ext; i++) {
		struct ho_rt_ext *e = &rt->ext[i];

		/* its span goes whatever is mapped there: no need to map its own back */
		ho_pool_free(rt->pool, &e->bound);
		if (e->sync_fd >= 0)
			close(e->sync_fd);
		ho_pool_free(rt->pool, &e->own);
	}
	free(rt->ext);
	free(rt->ext_of);
}

const struct ho_pool_buf *ho_rt_buf_of(const struct ho_rt *rt, uint32_t d, const void *p,
				       size_t *off)
{
	const struct ho_pool_buf *r = &rt->dev[d].region;
	const char *c = p;

	for (uint32_t i = 0; i < rt->n_ext; i++) {
		const struct ho_rt_ext *e = &rt->ext[i];
		const char *span = e->own.ptr;

		if (e->dev != d || c < span || c >= span + e->len)
			continue;
		*off = (size_t)(c - span) + (e->bound.ptr ? (size_t)e->offset : 0);
		return e->bound.ptr ? &e->bound : &e->own;
	}
	*off = (size_t)(c - (const char *)r->ptr);
	return r;
}

void ho_rt_ext_sync(struct ho_rt *rt, bool start)
{
	for (uint32_t i = 0; i < rt->n_ext; i++) {
		struct dma_buf_sync s = {(start ? DMA_BUF_SYNC_START : DMA_BUF_SYNC_END) |
					 DMA_BUF_SYNC_RW};

		/* a memfd has no caches to sync: ENOTTY, and nothing to do */
		if (rt->ext[i].sync_fd >= 0)
			(void)ioctl(rt->ext[i].sync_fd, DMA_BUF_IOCTL_SYNC, &s);
	}
}

static struct ho_rt_ext *ho_rt_ext_named(struct ho_rt *rt, const char *name, struct ho_error *err)
{
	int32_t t = ho_graph_find_tensor(rt->g, name);

	for (uint32_t i = 0; t >= 0 && i < rt->n_ext; i++)
		if (rt->ext[i].named == t)
			return &rt->ext[i];
	ho_err(err, -EINVAL, "tensor '%s' is not one the plan was made to hold in outside memory",
	       name);
	return NULL;
}

int ho_rt_bind_fd(struct ho_rt *rt, const char *name, int fd, uint64_t offset, struct ho_error *err)
{
	struct ho_rt_ext *e = ho_rt_ext_named(rt, name, err);
	const struct ho_graph *g = rt->g;
	struct ho_pool_buf b = {0};
	off_t size;
	int ret, sync_fd;

	if (!e)
		return err->code;
	if (fd < 0) {
		ret = e->bound.ptr ? ho_rt_ext_unbind(rt, e) : 0;
		return ret ? ho_err(err, ret, "tensor '%s': its own memory back: %s", name,
				    strerror(-ret))
			   : 0;
	}
	size = lseek(fd, 0, SEEK_END);
	if (size < 0)
		return ho_err(err, -errno, "tensor '%s': fd %d: %s", name, fd, strerror(errno));
	if (offset % (uint64_t)sysconf(_SC_PAGESIZE) || offset > (uint64_t)size ||
	    (uint64_t)size - offset < e->len)
		return ho_err(err, -EINVAL,
			      "tensor '%s': fd %d holds %lld bytes; it needs %zu from offset "
			      "%llu, a multiple of the page size",
			      name, fd, (long long)size, e->len, (unsigned long long)offset);
	ret = ho_pool_import(rt->pool, fd, &b);
	if (ret)
		return ho_err(err, ret, "tensor '%s': the pool cannot import fd %d: %s", name, fd,
			      strerror(-ret));
	sync_fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (sync_fd < 0) {
		ret = -errno;
		goto fail;
	}
	/* the frame under every kernel's pointers: the span's old pages go */
	if (mmap(e->own.ptr, e->len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd,
		 (off_t)offset) == MAP_FAILED) {
		ret = -errno;
		close(sync_fd);
		ho_pool_free(rt->pool, &b);
		/* MAP_FIXED may have unmapped the span before failing: its own pages back */
		ho_rt_ext_unbind(rt, e);
		return ho_err(err, ret, "tensor '%s': fd %d cannot be mapped: %s", name, fd,
			      strerror(-ret));
	}
	ho_pool_free(rt->pool, &e->bound);
	if (e->sync_fd >= 0)
		close(e->sync_fd);
	e->bound = b;
	e->offset = offset;
	e->sync_fd = sync_fd;
	for (uint32_t i = 0; i < g->n_inputs; i++)
		if (g->inputs[i] == e->named)
			rt->is_set[i] = 1;
	return 0;
fail:
	ho_pool_free(rt->pool, &b);
	return ho_err(err, ret, "tensor '%s': %s", name, strerror(-ret));
}

int ho_rt_export_fd(struct ho_rt *rt, const char *name, struct ho_error *err)
{
	struct ho_rt_ext *e = ho_rt_ext_named(rt, name, err);
	int fd;

	if (!e)
		return err->code;
	fd = ho_pool_share_fd(rt->pool, &e->own);
	return fd < 0 ? ho_err(err, fd, "tensor '%s': cannot export it: %s", name, strerror(-fd))
		      : fd;
}
