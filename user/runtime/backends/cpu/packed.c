// SPDX-License-Identifier: MIT
/*
 * Weights a kernel took over (ho_cpu_takes_over), in the layout its primitive
 * wants, one copy per device for every kernel that reads the same constant in
 * the same layout.  A detector applies its heads' convolutions at each level of
 * its feature pyramid: retinanet_resnet50_fpn's 3x3 head weights, read by five
 * Conv nodes each and four times their size in Winograd's layout, were held
 * five times over (607 MB of its kernels' own).  The source is a constant the
 * plan never writes again (the graph's bytes, or a replica filled at plan
 * time), so its address and the layout name the copy.  A kernel holds a
 * counted reference; the copy goes with the last.  The device's kernels are
 * prepared and freed by one thread at a time: no lock.
 */
#include <stdlib.h>
#include <string.h>

#include "cpu.h"
#include "heteroopt/fingerprint.h"

struct ho_cpu_packed {
	struct ho_cpu_packed *next;
	struct ho_backend *c;
	const void *src;
	dnnl_memory_desc_t md;
	dnnl_memory_t mem;
	uint64_t sig;
	int refs;
};

/* (src, md) as a number: the layout's documented fields only (the rest may be padding). */
static uint64_t ho_packed_sig(const void *src, const dnnl_memory_desc_t *md)
{
	uint64_t h = ho_fingerprint_bytes(0xcbf29ce484222325ull, &src, sizeof(src));
	const dnnl_blocking_desc_t *b = &md->format_desc.blocking;
	const dnnl_wino_desc_t *w = &md->format_desc.wino_desc;

	h = ho_fingerprint_bytes(h, &md->ndims, sizeof(md->ndims));
	h = ho_fingerprint_bytes(h, md->dims, sizeof(md->dims[0]) * (size_t)md->ndims);
	h = ho_fingerprint_bytes(h, &md->data_type, sizeof(md->data_type));
	h = ho_fingerprint_bytes(h, &md->format_kind, sizeof(md->format_kind));
	if (md->format_kind == dnnl_blocked) {
		h = ho_fingerprint_bytes(h, b->strides, sizeof(b->strides[0]) * (size_t)md->ndims);
		h = ho_fingerprint_bytes(h, &b->inner_nblks, sizeof(b->inner_nblks));
		h = ho_fingerprint_bytes(h, b->inner_blks,
					 sizeof(b->inner_blks[0]) * (size_t)b->inner_nblks);
		h = ho_fingerprint_bytes(h, b->inner_idxs,
					 sizeof(b->inner_idxs[0]) * (size_t)b->inner_nblks);
	} else if (md->format_kind == dnnl_format_kind_wino) {
		const int f[] = {(int)w->wino_format, w->r,	   w->alpha,	 w->ic,	      w->oc,
				 w->ic_block,	      w->oc_block, w->ic2_block, w->oc2_block};

		h = ho_fingerprint_bytes(h, f, sizeof(f));
		h = ho_fingerprint_bytes(h, &w->size, sizeof(w->size));
	}
	return ho_fingerprint_bytes(h, &(uint64_t){dnnl_memory_desc_get_size(md)},
				    sizeof(uint64_t));
}

/* The copy made: src reordered (or copied, where the layouts agree) into memory of its own. */
static int ho_packed_fill(struct ho_backend *c, struct ho_cpu_packed *w,
			  const dnnl_memory_desc_t *user)
{
	dnnl_memory_t from = NULL;
	void *to;
	int ret;

	if (dnnl_memory_create(&w->mem, &w->md, c->eng, DNNL_MEMORY_ALLOCATE) != dnnl_success)
		return -1;
	if (dnnl_memory_desc_equal(&w->md, user)) {
		if (dnnl_memory_get_data_handle(w->mem, &to) != dnnl_success)
			return -1;
		memcpy(to, w->src, dnnl_memory_desc_get_size(user));
		return 0;
	}
	if (dnnl_memory_create(&from, user, c->eng, (void *)w->src) != dnnl_success)
		return -1;
	ret = ho_cpu_reorder_now(c, user, from, &w->md, w->mem, NULL);
	dnnl_memory_destroy(from);
	return ret;
}

struct ho_cpu_packed *ho_cpu_packed_get(struct ho_backend *c, const dnnl_memory_desc_t *user,
					const void *src, const dnnl_memory_desc_t *want)
{
	struct ho_cpu_packed *w;

	for (w = c->packed; w; w = w->next)
		if (w->src == src && dnnl_memory_desc_equal(&w->md, want)) {
			w->refs++;
			return w;
		}
	if (!(w = calloc(1, sizeof(*w))))
		return NULL;
	w->c = c;
	w->src = src;
	w->md = *want;
	w->sig = ho_packed_sig(src, want);
	w->refs = 1;
	if (ho_packed_fill(c, w, user)) {
		if (w->mem)
			dnnl_memory_destroy(w->mem);
		free(w);
		return NULL;
	}
	w->next = c->packed;
	c->packed = w;
	return w;
}

void ho_cpu_packed_put(struct ho_cpu_packed *w)
{
	struct ho_cpu_packed **at;

	if (!w || --w->refs > 0)
		return;
	for (at = &w->c->packed; *at && *at != w; at = &(*at)->next)
		;
	if (*at)
		*at = w->next;
	dnnl_memory_destroy(w->mem);
	free(w);
}

void *ho_cpu_packed_bytes(const struct ho_cpu_packed *w)
{
	void *p = NULL;

	return dnnl_memory_get_data_handle(w->mem, &p) == dnnl_success ? p : NULL;
}

void ho_cpu_packed_size(const struct ho_cpu_packed *w, uint64_t *size, uint64_t *sig)
{
	*size = dnnl_memory_desc_get_size(&w->md);
	*sig = w->sig;
}
