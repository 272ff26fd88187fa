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
 *
 * Mapping a frame afresh faults every page in: 1.2 ms for a 4.9 MB frame
 * here, more than copying it.  A producer sends a ring of the same few
 * buffers, so each one bound is kept (HO_RT_EXT_FRAMES of them): when
 * another takes the span, its pages move into a slot of their own, and
 * back when it returns, by mremap, which moves page tables instead of
 * faulting.  MREMAP_DONTUNMAP leaves the place moved from mapped, so the
 * span and the slots are never holes another thread's mmap could land in.
 * Where mremap cannot move a mapping (an exporter's VM_PFNMAP), each bind
 * maps afresh.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/dma-buf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
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
		rt->ext[rt->n_ext++] =
		    (struct ho_rt_ext){.t = r, .named = t, .dev = (uint32_t)rt->home[r], .cur = -1};
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
		/* a copy from it (of it or a view) to another device, or a move that writes it */
		e->copied = tt->producer >= 0 && rt->moves[tt->producer];
		for (uint32_t a = 0; a < rt->g->n_tensors && !e->copied; a++)
			for (uint32_t d = 0; d < rt->n_dev && ho_rt_root(rt, (int32_t)a) == e->t;
			     d++)
				e->copied |= rt->is_copy[AT(rt, a, d)] != 0;
		/* address space only: the slots hold what is parked, else nothing */
		e->slots = mmap(NULL, HO_RT_EXT_FRAMES * e->len, PROT_NONE,
				MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (e->slots == MAP_FAILED) {
			e->slots = NULL;
			return ho_err(err, -errno, "external tensor '%s': no address space: %s",
				      tt->name, strerror(errno));
		}
	}
	return 0;
}

/* Frame i let go: its slot back to reserved address space, what it held released. */
static void ho_rt_frame_drop(struct ho_rt *rt, struct ho_rt_ext *e, int i)
{
	struct ho_rt_frame *f = &e->frame[i];

	if (!f->held)
		return;
	/* MAP_FIXED replaces what is parked (or left by DONTUNMAP) in one step */
	mmap(e->slots + (size_t)i * e->len, e->len, PROT_NONE,
	     MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	ho_pool_free(rt->pool, &f->import);
	if (f->sync_fd >= 0)
		close(f->sync_fd);
	*f = (struct ho_rt_frame){.sync_fd = -1};
}

/* The span's pages from src (a slot) by moving page tables; false where mremap cannot. */
static bool ho_rt_ext_move(struct ho_rt_ext *e, char *from, char *to)
{
	if (e->no_park)
		return false;
	if (mremap(from, e->len, e->len, MREMAP_MAYMOVE | MREMAP_FIXED | MREMAP_DONTUNMAP, to) ==
	    MAP_FAILED) {
		e->no_park = true;
		return false;
	}
	return true;
}

/* e's own pages mapped back under its span; with all, every frame it kept let go. */
static int ho_rt_ext_unbind(struct ho_rt *rt, struct ho_rt_ext *e, bool all)
{
	int fd = ho_pool_share_fd(rt->pool, &e->own), ret = 0;

	if (fd < 0 || mmap(e->own.ptr, e->len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd,
			   0) == MAP_FAILED)
		ret = fd < 0 ? fd : -errno;
	if (fd >= 0)
		close(fd);
	if (e->cur >= 0)
		e->frame[e->cur].parked = false; /* its pages went with the span */
	e->cur = -1;
	for (int i = 0; all && i < HO_RT_EXT_FRAMES; i++)
		ho_rt_frame_drop(rt, e, i);
	return ret;
}

void ho_rt_ext_free(struct ho_rt *rt)
{
	for (uint32_t i = 0; i < rt->n_ext; i++) {
		struct ho_rt_ext *e = &rt->ext[i];

		for (int k = 0; k < HO_RT_EXT_FRAMES; k++) {
			struct ho_rt_frame *f = &e->frame[k];

			if (!f->held) /* a free one: nothing held, sync_fd meaningless */
				continue;
			ho_pool_free(rt->pool, &f->import);
			if (f->sync_fd >= 0)
				close(f->sync_fd);
		}
		if (e->slots)
			munmap(e->slots, HO_RT_EXT_FRAMES * e->len);
		/* its span goes whatever is mapped there: no need to map its own back */
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
		if (e->cur < 0 || !e->frame[e->cur].import.ptr) {
			*off = (size_t)(c - span); /* not copied: nothing asks (e->copied) */
			return &e->own;
		}
		*off = (size_t)(c - span) + (size_t)e->frame[e->cur].offset;
		return &e->frame[e->cur].import;
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
		if (rt->ext[i].cur >= 0)
			(void)ioctl(rt->ext[i].frame[rt->ext[i].cur].sync_fd, DMA_BUF_IOCTL_SYNC,
				    &s);
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

/* The frame kept for this file and offset, or a place for it: a free one, else the oldest. */
static int ho_rt_frame_find(struct ho_rt *rt, struct ho_rt_ext *e, const struct stat *st,
			    uint64_t offset, bool *known)
{
	int pick = -1;

	for (int i = 0; i < HO_RT_EXT_FRAMES; i++) {
		const struct ho_rt_frame *f = &e->frame[i];

		if (f->held && f->dev == (unsigned long)st->st_dev &&
		    f->ino == (unsigned long)st->st_ino && f->offset == offset) {
			*known = true;
			return i;
		}
		if (i != e->cur && (pick < 0 || !f->held ||
				    (e->frame[pick].held && f->used < e->frame[pick].used)))
			pick = i;
	}
	*known = false;
	ho_rt_frame_drop(rt, e, pick);
	return pick;
}

int ho_rt_bind_fd(struct ho_rt *rt, const char *name, int fd, uint64_t offset, struct ho_error *err)
{
	struct ho_rt_ext *e = ho_rt_ext_named(rt, name, err);
	const struct ho_graph *g;
	struct ho_rt_frame *f;
	struct stat st;
	off_t size;
	bool known;
	int ret, i;

	if (!e)
		return err->code;
	g = rt->g;
	if (fd < 0) {
		ret = ho_rt_ext_unbind(rt, e, true);
		return ret ? ho_err(err, ret, "tensor '%s': its own memory back: %s", name,
				    strerror(-ret))
			   : 0;
	}
	size = lseek(fd, 0, SEEK_END);
	if (size < 0 || fstat(fd, &st))
		return ho_err(err, -errno, "tensor '%s': fd %d: %s", name, fd, strerror(errno));
	if (offset % (uint64_t)sysconf(_SC_PAGESIZE) || offset > (uint64_t)size ||
	    (uint64_t)size - offset < e->len)
		return ho_err(err, -EINVAL,
			      "tensor '%s': fd %d holds %lld bytes; it needs %zu from offset "
			      "%llu, a multiple of the page size",
			      name, fd, (long long)size, e->len, (unsigned long long)offset);
	i = ho_rt_frame_find(rt, e, &st, offset, &known);
	f = &e->frame[i];
	if (i != e->cur) {
		if (!known) {
			/* what only kernels read in place needs no import: ump.ko imports
			 * dma-bufs only, and a memfd is none */
			ret = e->copied ? ho_pool_import(rt->pool, fd, &f->import) : 0;
			if (ret)
				return ho_err(err, ret,
					      "tensor '%s': the pool cannot import fd %d (%s), and "
					      "this plan copies the tensor between devices%s",
					      name, fd, strerror(-ret),
					      ret == -EINVAL && ho_pool_is_ump(rt->pool)
						  ? "; ump.ko takes dma-bufs"
						  : "");
			f->held = true;
			f->sync_fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
			f->dev = (unsigned long)st.st_dev;
			f->ino = (unsigned long)st.st_ino;
			f->offset = offset;
		}
		/* the frame under the span now goes to its slot, this one comes from its own */
		if (e->cur >= 0)
			e->frame[e->cur].parked =
			    ho_rt_ext_move(e, e->own.ptr, e->slots + (size_t)e->cur * e->len);
		if (!(f->parked && ho_rt_ext_move(e, e->slots + (size_t)i * e->len, e->own.ptr)) &&
		    mmap(e->own.ptr, e->len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd,
			 (off_t)offset) == MAP_FAILED) {
			ret = -errno;
			ho_rt_frame_drop(rt, e, i);
			/* MAP_FIXED may have unmapped the span before failing: its own pages */
			ho_rt_ext_unbind(rt, e, false);
			return ho_err(err, ret, "tensor '%s': fd %d cannot be mapped: %s", name, fd,
				      strerror(-ret));
		}
		f->parked = false;
		e->cur = i;
	}
	f->used = ++e->binds;
	for (uint32_t k = 0; k < g->n_inputs; k++)
		if (g->inputs[k] == e->named)
			rt->is_set[k] = 1;
	return 0;
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
