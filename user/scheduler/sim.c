// SPDX-License-Identifier: MIT
/*
 * The event simulator: the search's inner loop and the source of every
 * timeline the user sees.  Given a device per task and a topological
 * priority order, it list-schedules the tasks with one timeline per device
 * and one per link (compute and copies overlap; a link carries one copy at a
 * time): each task goes, in priority order, into the earliest idle gap on its
 * device after its inputs arrive (insertion, as HEFT does).  It then derives
 * latency, per-device peak memory, energy, throughput and balance.
 *
 * Flat arrays indexed by task, item and device, all allocated in
 * ho_sim_new(): an evaluation allocates nothing.  Work is linear in tasks +
 * edges, plus sorting the memory events of the items that exist.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "listsched.h"

/* 16 bytes: the sort moves these around, so the device rides in the low bits. */
struct ho_mem_event {
	double t;
	int64_t dd; /* bytes * 64 + device: bytes > 0 allocate, < 0 free */
};

#define HO_EV_DEV(e) ((uint32_t)((e)->dd & 63))
#define HO_EV_BYTES(e) (((e)->dd - (int64_t)HO_EV_DEV(e)) / 64)

struct ho_sim {
	const struct ho_problem *p;
	const uint8_t *prec; /* n precision genes (ho_sim_precision); NULL: float32 */
	double *busy, *link_free, *link_busy;
	double *start, *end;
	uint8_t *done;
	double *arrival;  /* m*d: when item k is usable on device j (valid if arr_stamp == gen) */
	double *alloc_at; /* m*d: when its copy on device j was allocated */
	double *last_use; /* m*d: end of its last consumer on device j (valid if lu_stamp == gen) */
	uint32_t *arr_stamp, *lu_stamp; /* m*d: evaluation that wrote the entry */
	uint32_t gen;	 /* this evaluation: stamps replace clearing m*d entries each time */
	double *out_end; /* m: end of the last copy leaving its producer's device */
	double *dies;	 /* m: when the bytes at the item's home are last needed */
	uint16_t *home;	 /* n: where a view's item lives (its source's home) */
	uint32_t *outs;	 /* the graph's outputs a task writes (box mode): fetched to the host */
	uint32_t n_outs;
	/* n: how each task ran (HO_TASK_*: a view costs no bytes or time, nor does
	 * a task fused into its chain's head); the counts let graphs without
	 * either skip every test */
	uint8_t *how;
	uint32_t n_viewed, n_fused, n_gathered;
	struct ho_mem_event *ev, *ev_tmp; /* frees, then allocations; sort scratch */
	uint32_t cap_ev;
	uint32_t n_ev;	    /* events of the last exact memory evaluation: ho_sim_memory_curve's */
	double *static_mem; /* d: weights and kernels' own memory resident (ho_weights_resident) */
	size_t *use_idx;    /* per input of the task being placed: the m*d entry it keeps alive */
	uint64_t *wmask;    /* n_weights device masks */
	uint64_t *pmask;    /* n_packed_groups device masks: where each copy is counted */
	uint8_t *nhwc;	    /* m: each item's layout under the plan evaluated (layouts.c) */
	/* m: an item written into a gathered Concat's output (no bytes of its own), and a
	 * gathered output's first write; only with p->gather_by */
	uint8_t *gathered;
	double *born;
	bool lazy_memory;  /* skip the exact sweep when a bound proves feasibility */
	double idle_power; /* the box's, summed: the decoder's exchange rate for energy */
	/* Each device's busy intervals: a task takes the earliest idle gap after its
	 * inputs arrive (insertion, as HEFT does), through the same helpers. */
	struct ho_slots slots[HO_MAX_DEVICES];
};

void ho_sim_lazy_memory(struct ho_sim *s, bool on)
{
	s->lazy_memory = on;
}

void ho_sim_free(struct ho_sim *s)
{
	if (!s)
		return;
	free(s->busy);
	free(s->use_idx);
	free(s->link_free);
	free(s->link_busy);
	free(s->start);
	free(s->end);
	free(s->done);
	free(s->arrival);
	free(s->arr_stamp);
	free(s->lu_stamp);
	free(s->alloc_at);
	free(s->last_use);
	free(s->out_end);
	free(s->dies);
	free(s->home);
	free(s->outs);
	free(s->how);
	free(s->ev);
	free(s->ev_tmp);
	free(s->static_mem);
	free(s->wmask);
	free(s->pmask);
	free(s->nhwc);
	free(s->gathered);
	free(s->born);
	ho_slots_free(s->slots, s->p->d);
	free(s);
}

struct ho_sim *ho_sim_new(const struct ho_problem *p)
{
	struct ho_sim *s = calloc(1, sizeof(*s));
	size_t md = (size_t)p->m * p->d + 1;
	uint32_t max_in = 0;

	if (!s)
		return NULL;
	s->p = p;
	s->busy = calloc(p->d, sizeof(double));
	s->link_free = calloc(p->n_links + 1, sizeof(double));
	s->link_busy = calloc(p->n_links + 1, sizeof(double));
	s->start = calloc(p->n + 1, sizeof(double));
	s->end = calloc(p->n + 1, sizeof(double));
	s->done = calloc(p->n + 1, 1);
	s->arrival = calloc(md, sizeof(double));
	s->arr_stamp = calloc(md, sizeof(uint32_t));
	s->lu_stamp = calloc(md, sizeof(uint32_t));
	s->alloc_at = calloc(md, sizeof(double));
	s->last_use = calloc(md, sizeof(double));
	s->out_end = calloc(p->m + 1, sizeof(double));
	s->dies = calloc(p->m + 1, sizeof(double));
	s->home = calloc(p->n + 1, sizeof(uint16_t));
	s->outs = calloc(p->m + 1, sizeof(uint32_t));
	s->how = calloc(p->n + 1, 1);
	/* Per item: the producer's buffer, a copy and a staging buffer per other device. */
	s->cap_ev = 2 * (p->m * (2 * p->d - 1)) + 2;
	s->ev = malloc(s->cap_ev * sizeof(*s->ev));
	s->ev_tmp = malloc(s->cap_ev * sizeof(*s->ev));
	s->static_mem = calloc(p->d, sizeof(double));
	s->wmask = calloc(p->n_weights + 1, sizeof(uint64_t));
	s->pmask = calloc(p->n_packed_groups + 1, sizeof(uint64_t));
	for (uint32_t v = 0; v < p->n; v++)
		if (p->in_off[v + 1] - p->in_off[v] > max_in)
			max_in = p->in_off[v + 1] - p->in_off[v];
	s->use_idx = calloc(max_in + 1, sizeof(size_t));
	if (!s->use_idx || !s->busy || !s->arr_stamp || !s->lu_stamp || !s->link_free ||
	    !s->link_busy || !s->start || !s->end || !s->done || !s->arrival || !s->alloc_at ||
	    !s->last_use || !s->out_end || !s->ev || !s->ev_tmp || !s->static_mem || !s->wmask ||
	    !s->pmask || !s->dies || !s->home || !s->outs || !s->how ||
	    ho_slots_init(s->slots, p->d, p->n)) {
		ho_sim_free(s);
		return NULL;
	}
	if ((p->relayout && !(s->nhwc = calloc(p->m + 1, 1))) ||
	    (p->gather_by && (!(s->gathered = calloc(p->m + 1, 1)) ||
			      !(s->born = calloc(p->m + 1, sizeof(double)))))) {
		ho_sim_free(s);
		return NULL;
	}
	for (uint32_t k = 0; !p->item_comm && p->item_pinned_out && k < p->m; k++)
		if (p->item_pinned_out[k] && p->item_prod[k] != HO_EXTERNAL)
			s->outs[s->n_outs++] = k;
	for (uint32_t j = 0; j < p->d; j++)
		s->idle_power += p->idle_power[j];
	/* The shortest task each device could run: shorter gaps are never filled. */
	for (uint32_t j = 0; j < p->d; j++) {
		double shortest = INFINITY;

		for (uint32_t v = 0; v < p->n; v++)
			for (uint32_t q = 0; q < (p->n_prec > 1 ? p->n_prec : 1); q++) {
				double c = q ? p->prec_comp[((size_t)v * p->d + j) * p->n_prec + q]
					     : p->comp[v * p->d + j];

				if (isfinite(c) && (c > 0 || !q))
					shortest = fmin(shortest, c);
			}
		s->slots[j].min_gap = isfinite(shortest) ? shortest : 0;
	}
	return s;
}

void ho_sim_precision(struct ho_sim *s, const uint8_t *prec)
{
	s->prec = prec;
}

struct ho_timeline *ho_timeline_new(const struct ho_problem *p)
{
	struct ho_timeline *tl = calloc(1, sizeof(*tl));

	if (!tl)
		return NULL;
	tl->start = calloc(p->n + 1, sizeof(double));
	tl->end = calloc(p->n + 1, sizeof(double));
	tl->how = calloc(p->n + 1, 1);
	tl->cap_xfer = 2 * p->m * (p->d > 1 ? p->d - 1 : 1) + 1;
	tl->xfer = calloc(tl->cap_xfer, sizeof(*tl->xfer));
	if (!tl->start || !tl->end || !tl->how || !tl->xfer) {
		ho_timeline_free(tl);
		return NULL;
	}
	return tl;
}

void ho_timeline_free(struct ho_timeline *tl)
{
	if (!tl)
		return;
	free(tl->start);
	free(tl->end);
	free(tl->how);
	free(tl->xfer);
	free(tl);
}

static void ho_record(struct ho_timeline *tl, uint32_t k, uint32_t task, int src, int dst, int link,
		      double s, double e)
{
	if (tl && tl->n_xfer < tl->cap_xfer)
		tl->xfer[tl->n_xfer++] = (struct ho_transfer){k, task, src, dst, link, s, e};
}

/* Move item k from src to dst, ready at t0; returns its arrival time. */
static double ho_transfer(struct ho_sim *s, uint32_t k, uint32_t task, int src, int dst, double t0,
			  struct ho_eval *ev, struct ho_timeline *tl, double *first_start)
{
	const struct ho_problem *p = s->p;
	double t = t0;

	*first_start = t0;
	ev->n_transfers++;
	ev->bytes_moved += p->item_bytes[k];
	if (p->item_comm) {
		ho_record(tl, k, task, src, dst, -1, t0, t0 + p->item_comm[k]);
		return t0 + p->item_comm[k];
	}
	for (int h = 0; h < 2; h++) {
		int32_t l = p->route[(src * p->d + dst) * 2 + h];
		double st, dur;

		if (l < 0)
			break;
		st = t;
		if (p->contention && s->link_free[l] > st)
			st = s->link_free[l];
		dur = p->link_lat[l] + p->item_bytes[k] / p->link_bw[l] + p->small_transfer;
		if (h == 0) {
			*first_start = st;
			if (st + dur > s->out_end[k])
				s->out_end[k] = st + dur;
		}
		t = st + dur;
		s->link_free[l] = t;
		s->link_busy[l] += dur;
		ev->obj[HO_OBJ_ENERGY] += p->item_bytes[k] * p->link_epb[l];
		ho_record(tl, k, task, h == 0 ? src : p->default_device,
			  h == 0 && p->route[(src * p->d + dst) * 2 + 1] >= 0 ? p->default_device
									      : dst,
			  l, st, t);
	}
	return t;
}

/*
 * Stable LSD radix sort on the time's bit pattern (times are >= 0, so the
 * IEEE-754 bits order like the values).  Frees are pushed before allocations,
 * so stability keeps "frees first" among equal times.  Passes whose byte is
 * the same in every key are skipped: usually half of them.
 */
static void ho_ev_sort(struct ho_mem_event *a, struct ho_mem_event *tmp, uint32_t n)
{
	uint32_t count[8][256];
	struct ho_mem_event *src = a, *dst = tmp;
	uint64_t bits;

	/* All eight byte histograms in one read of the data. */
	memset(count, 0, sizeof(count));
	for (uint32_t i = 0; i < n; i++) {
		memcpy(&bits, &a[i].t, 8);
		for (int b = 0; b < 8; b++)
			count[b][(bits >> (8 * b)) & 0xff]++;
	}
	for (int b = 0; b < 8 && n; b++) {
		uint32_t sum = 0;

		memcpy(&bits, &src[0].t, 8);
		if (count[b][(bits >> (8 * b)) & 0xff] == n)
			continue; /* every key has this byte: nothing to do */
		for (int v = 0; v < 256; v++) {
			uint32_t c = count[b][v];

			count[b][v] = sum;
			sum += c;
		}
		for (uint32_t i = 0; i < n; i++) {
			memcpy(&bits, &src[i].t, 8);
			dst[count[b][(bits >> (8 * b)) & 0xff]++] = src[i];
		}
		struct ho_mem_event *t = src;

		src = dst;
		dst = t;
	}
	if (src != a)
		memcpy(a, src, n * sizeof(*a));
}

/* Frees go to ev, allocations to ev_tmp; they are joined frees first. */
static void ho_push(struct ho_sim *s, uint32_t *n, uint32_t dev, double from, double to,
		    double bytes)
{
	int64_t b = (int64_t)bytes;

	if (to <= from || b <= 0 || *n + 1 > s->cap_ev / 2)
		return; /* zero lifetime: never resident */
	s->ev_tmp[*n] = (struct ho_mem_event){from, b * 64 + dev};
	s->ev[*n] = (struct ho_mem_event){to, -b * 64 + dev};
	(*n)++;
}

/* dst reads src's memory in place: no copy, src's buffer lives until dst is done. */
static bool ho_reads_in_place(const struct ho_problem *p, int src, int dst)
{
	return p->in_place && (p->in_place[dst] >> src & 1);
}

static bool ho_has_copy(const struct ho_sim *s, size_t idx)
{
	return s->arr_stamp[idx] == s->gen;
}

static double ho_last_use(const struct ho_sim *s, size_t idx)
{
	return s->lu_stamp[idx] == s->gen ? s->last_use[idx] : 0;
}

/* Item k is a view's, and holds no bytes of its own: they are its source's. */
static inline bool ho_is_view_item(const struct ho_sim *s, uint32_t k)
{
	uint32_t prod = s->p->item_prod[k];

	/* n_viewed first: a graph without views pays one test */
	return s->n_viewed && prod != HO_EXTERNAL && s->how[prod] == HO_TASK_VIEW &&
	       s->p->view_out[prod] == k;
}

/*
 * The device whose memory holds item k's bytes (valid once its producer is
 * placed).  Inline: the simulator asks for every input of every task.
 */
static inline int ho_item_home(const struct ho_sim *s, const uint16_t *assign, uint32_t k)
{
	uint32_t prod = s->p->item_prod[k];

	if (prod == HO_EXTERNAL)
		return s->p->default_device;
	return ho_is_view_item(s, k) ? s->home[prod] : assign[prod];
}

/*
 * Item k is what a fused chain passes inside one kernel: never written, no
 * bytes.  Every reader is fused into the chain that writes it, one of them
 * through k (a swish's x is read by its Sigmoid and its Mul, both fused).
 */
static inline bool ho_is_unwritten_item(const struct ho_sim *s, uint32_t k)
{
	const struct ho_problem *p = s->p;
	uint32_t prod = p->item_prod[k], head;
	bool through = false;

	if (!s->n_fused || prod == HO_EXTERNAL || p->cons_off[k + 1] == p->cons_off[k])
		return false;
	head = s->how[prod] == HO_TASK_FUSED ? p->fuse_head[prod] : prod;
	for (uint32_t e = p->cons_off[k]; e < p->cons_off[k + 1]; e++) {
		uint32_t c = p->cons[e];

		if (s->how[c] != HO_TASK_FUSED || p->fuse_head[c] != head)
			return false;
		through |= p->fuse_in[c] == k;
	}
	return through;
}

/* Whether task v on device dev would run inside its chain's head kernel. */
static bool ho_fuses(const struct ho_sim *s, const uint16_t *assign, uint32_t v, int dev)
{
	const struct ho_problem *p = s->p;
	uint32_t u;

	if (!p->fuse_prev || (u = p->fuse_prev[v]) == HO_NOT_FUSED || assign[u] != dev ||
	    (p->fuse_prev[u] != HO_NOT_FUSED && s->how[u] != HO_TASK_FUSED) ||
	    (p->fuse_devs && !(p->fuse_devs[v] >> dev & 1)))
		return false;
	/* a residual is added into where it lies: made and read here alone */
	if (p->fuse_res[v] != HO_NOT_FUSED) {
		uint32_t k = p->fuse_res[v];

		if (ho_item_home(s, assign, k) != dev)
			return false;
		for (uint32_t e = p->cons_off[k]; e < p->cons_off[k + 1]; e++)
			if (assign[p->cons[e]] != dev)
				return false;
	}
	return true;
}

/*
 * Whether view task v on device dev reads its source where it lives, and so
 * runs as a pointer to it (the runtime's alias): then *home is that place.
 */
static bool ho_view_in_place(const struct ho_sim *s, const uint16_t *assign, uint32_t v, int dev,
			     int *home)
{
	const struct ho_problem *p = s->p;
	uint32_t k;

	if (!p->view_src || p->view_src[v] == HO_NOT_VIEW)
		return false;
	/* a Transpose read through: beside its MatMul, on a device whose kernel reads so */
	if (p->view_reader && p->view_reader[v] != HO_NOT_VIEW &&
	    (assign[p->view_reader[v]] != dev || !(p->view_devs[v] >> dev & 1)))
		return false;
	k = p->view_src[v];
	*home = k == HO_VIEW_OF_WEIGHT ? p->default_device : ho_item_home(s, assign, k);
	return *home == dev || ho_reads_in_place(p, *home, dev);
}

/*
 * The item input k of a gathered Concat on dev is written as (its written source,
 * through the views in place it is of), or HO_NO_ITEM where it cannot be written into
 * the Concat's output there: made on another device, channels-last, or by a chain that
 * adds its result into a residual's bytes (the runtime's ho_rt_gather_source).
 */
static uint32_t ho_gather_source(const struct ho_sim *s, const uint16_t *assign, uint32_t k,
				 int dev)
{
	const struct ho_problem *p = s->p;
	const uint8_t *nhwc = s->nhwc ? s->nhwc : p->item_nhwc;
	uint32_t prod;

	for (;;) {
		prod = p->item_prod[k];
		if (prod == HO_EXTERNAL || assign[prod] != dev || (nhwc && nhwc[k]))
			return HO_NO_ITEM;
		if (s->how[prod] != HO_TASK_VIEW || p->view_out[prod] != k)
			break;
		k = p->view_src[prod];
		if (k == HO_VIEW_OF_WEIGHT)
			return HO_NO_ITEM;
	}
	for (uint32_t u = prod; p->fuse_prev && u != HO_NOT_FUSED && s->how[u] == HO_TASK_FUSED;
	     u = p->fuse_prev[u])
		if (p->fuse_res[u] != HO_NOT_FUSED)
			return HO_NO_ITEM;
	return k;
}

/* Concat v on dev runs nothing: each of its inputs is written into its output (sim.c's
 * ho_memory counts them there). */
static bool ho_gathers(const struct ho_sim *s, const uint16_t *assign, uint32_t v, int dev)
{
	const struct ho_problem *p = s->p;
	const uint8_t *nhwc = s->nhwc ? s->nhwc : p->item_nhwc;
	uint32_t y = p->gather_out[v];

	if (y == HO_NOT_VIEW || (nhwc && nhwc[y]))
		return false;
	for (uint32_t e = p->in_off[v]; e < p->in_off[v + 1]; e++) {
		uint32_t k = ho_gather_source(s, assign, p->in_items[e], dev);

		if (k == HO_NO_ITEM || p->gather_by[k] != v)
			return false;
	}
	return true;
}

/*
 * What each device's kernels keep of their own (weights in their layout: one
 * copy of a weight in a layout for all that share it, pmask saying where each
 * is counted) and the workspace they share, as large as the largest one's
 * need: into kmem.
 */
static void ho_kernels_resident(const struct ho_problem *p, const uint16_t *assign,
				const uint8_t *how, uint64_t *pmask, double *kmem)
{
	double ws[HO_MAX_DEVICES] = {0};

	for (uint32_t j = 0; j < p->d; j++)
		kmem[j] = 0;
	memset(pmask, 0, p->n_packed_groups * sizeof(*pmask));
	for (uint32_t t = 0; p->kernel_mem && t < p->n; t++) {
		size_t at = (size_t)t * p->d + assign[t];
		const struct ho_kernel_memory *km = &p->kernel_mem[at];

		if (how[t] != HO_TASK_RAN) /* no kernel of its own: a view, or inside its head's */
			continue;
		kmem[assign[t]] += (double)km->held;
		if (km->packed && !(pmask[p->packed_group[at]] >> assign[t] & 1)) {
			pmask[p->packed_group[at]] |= 1ull << assign[t];
			kmem[assign[t]] += (double)km->packed;
		}
		if ((double)km->scratch > ws[assign[t]])
			ws[assign[t]] = (double)km->scratch;
	}
	for (uint32_t j = 0; j < p->d; j++)
		kmem[j] += ws[j];
}

/*
 * Weights live on every device that runs one of their consumers, or in the
 * host's memory when that device reads it in place, but for consumers whose
 * kernels hold them in their own layout alone; beside them, the kernels' own
 * memory (kmem, filled).
 */
static void ho_weights_resident(const struct ho_problem *p, const uint16_t *assign,
				const uint8_t *how, uint64_t *pmask, double *mem, double *kmem)
{
	ho_kernels_resident(p, assign, how, pmask, kmem);
	for (uint32_t j = 0; j < p->d; j++)
		mem[j] = kmem[j];
	for (uint32_t w = 0; w < p->n_weights; w++) {
		uint64_t mask = 0;

		for (uint32_t c = p->wcons_off[w]; c < p->wcons_off[w + 1]; c++) {
			int j = assign[p->wcons[c]];

			/* a kernel that ran holds it in its own layout (kmem) alone */
			if (p->wcons_taken && (p->wcons_taken[c] >> j & 1) &&
			    how[p->wcons[c]] == HO_TASK_RAN)
				continue;
			if (ho_reads_in_place(p, p->default_device, j))
				j = p->default_device;
			mask |= 1ull << j;
		}
		for (uint32_t j = 0; j < p->d; j++)
			if (mask >> j & 1)
				mem[j] += p->weight_bytes[w];
	}
}

/*
 * Upper bound of every device's peak: all weights and buffers it ever holds at
 * once.  When even that fits, the exact sweep cannot find a violation.
 */
static bool ho_memory_bound_fits(struct ho_sim *s, const uint16_t *assign, struct ho_eval *ev)
{
	const struct ho_problem *p = s->p;
	uint32_t d = p->d;
	bool fits = true;

	for (uint32_t j = 0; j < d; j++)
		ev->peak_mem[j] = s->static_mem[j];
	for (uint32_t k = 0; k < p->m; k++) {
		int src = ho_item_home(s, assign, k);

		if (!ho_is_view_item(s, k) && !ho_is_unwritten_item(s, k))
			ev->peak_mem[src] += p->item_bytes[k];
		for (uint32_t j = 0; j < d; j++)
			if ((int)j != src && ho_has_copy(s, k * d + j)) {
				ev->peak_mem[j] += p->item_bytes[k];
				if (p->route[(src * d + j) * 2 + 1] >= 0)
					ev->peak_mem[p->default_device] += p->item_bytes[k];
			}
	}
	for (uint32_t j = 0; j < d; j++)
		if (p->capacity[j] > 0 && ev->peak_mem[j] > p->capacity[j])
			fits = false;
	return fits;
}

/* When item k's bytes are first written: by its producer, or the head of the chain it is
 * fused into; a gathered Concat's output, by the first of its inputs. */
static double ho_written_at(const struct ho_sim *s, uint32_t k)
{
	uint32_t prod = s->p->item_prod[k];

	if (prod == HO_EXTERNAL)
		return 0;
	if (s->how[prod] == HO_TASK_FUSED)
		return s->start[s->p->fuse_head[prod]];
	return s->how[prod] == HO_TASK_GATHERED ? s->born[k] : s->start[prod];
}

/*
 * Gathered Concats, in topological order (one gathered into a later one is done first):
 * their inputs' items hold no bytes, their output holds them from the first input's write
 * to the last read of any.
 */
static void ho_gathered_memory(struct ho_sim *s, const uint16_t *assign)
{
	const struct ho_problem *p = s->p;

	memset(s->gathered, 0, p->m);
	for (uint32_t i = 0; i < p->n; i++) {
		uint32_t v = p->topo[i], y = p->gather_out ? p->gather_out[v] : HO_NOT_VIEW;

		if (s->how[v] != HO_TASK_GATHERED)
			continue;
		s->born[y] = INFINITY;
		for (uint32_t e = p->in_off[v]; e < p->in_off[v + 1]; e++) {
			uint32_t k = ho_gather_source(s, assign, p->in_items[e], assign[v]);

			s->gathered[k] = 1;
			s->born[y] = fmin(s->born[y], ho_written_at(s, k));
			if (s->dies[k] > s->dies[y])
				s->dies[y] = s->dies[k];
		}
	}
}

static void ho_memory(struct ho_sim *s, const uint16_t *assign, double makespan, struct ho_eval *ev)
{
	const struct ho_problem *p = s->p;
	uint32_t d = p->d, n_ev = 0;
	double cur[HO_MAX_DEVICES] = {0};

	for (uint32_t k = 0; k < p->m; k++) {
		uint32_t prod = p->item_prod[k];
		int src = ho_item_home(s, assign, k);
		double dies = ho_last_use(s, k * d + src);

		if (s->out_end[k] > dies)
			dies = s->out_end[k];
		if (prod != HO_EXTERNAL && s->end[prod] > dies)
			dies = s->end[prod];
		/* the caller's input and the outputs are held for the whole run */
		if (p->item_pinned_out[k] || prod == HO_EXTERNAL)
			dies = makespan;
		s->dies[k] = dies;
		for (uint32_t j = 0; j < d; j++) {
			double arr = s->arrival[k * d + j], lu = ho_last_use(s, k * d + j);

			if ((int)j == src || !ho_has_copy(s, k * d + j))
				continue;
			ho_push(s, &n_ev, j, s->alloc_at[k * d + j], lu > arr ? lu : arr,
				p->item_bytes[k]);
			/* A staged copy also holds a bounce buffer in host memory. */
			if (p->route && p->route[(src * d + j) * 2 + 1] >= 0)
				ho_push(s, &n_ev, (uint32_t)p->default_device,
					s->alloc_at[k * d + j], arr, p->item_bytes[k]);
		}
	}
	/* A view's item is its source's bytes: they live until the view's are done with. */
	for (uint32_t i = p->n; s->n_viewed && i-- > 0;) {
		uint32_t v = p->topo[i], src = p->view_src[v];

		if (s->how[v] == HO_TASK_VIEW && src != HO_VIEW_OF_WEIGHT &&
		    s->dies[p->view_out[v]] > s->dies[src])
			s->dies[src] = s->dies[p->view_out[v]];
	}
	if (s->n_gathered)
		ho_gathered_memory(s, assign);
	for (uint32_t k = 0; k < p->m; k++) {
		double born = ho_written_at(s, k);

		if (ho_is_view_item(s, k) || ho_is_unwritten_item(s, k) ||
		    (s->n_gathered && s->gathered[k]))
			continue;
		ho_push(s, &n_ev, (uint32_t)ho_item_home(s, assign, k), born, s->dies[k],
			p->item_bytes[k]);
	}
	/* Frees first, then allocations: the stable sort keeps that order on ties. */
	memcpy(s->ev + n_ev, s->ev_tmp, n_ev * sizeof(*s->ev));
	n_ev *= 2;
	ho_ev_sort(s->ev, s->ev_tmp, n_ev);
	s->n_ev = n_ev;
	for (uint32_t j = 0; j < d; j++)
		ev->peak_mem[j] = s->static_mem[j];
	for (uint32_t e = 0; e < n_ev; e++) {
		uint32_t j = HO_EV_DEV(&s->ev[e]);

		cur[j] += (double)HO_EV_BYTES(&s->ev[e]);
		if (s->static_mem[j] + cur[j] > ev->peak_mem[j])
			ev->peak_mem[j] = s->static_mem[j] + cur[j];
	}
}

/*
 * ready, or later where v reads an input in place from another device: v's
 * device learns that the producer is done only after the hand-off, the
 * in-place route's cost (ho_comm_time: latency and bytes read; a view's
 * producer is the view itself, on the device that ran it).  A pass of its
 * own, so that boxes without hand-offs run the input loop as before.
 */
static double ho_handoff_ready(const struct ho_sim *s, const uint16_t *assign, uint32_t v, int dev,
			       double ready)
{
	const struct ho_problem *p = s->p;

	for (uint32_t e = p->in_off[v]; e < p->in_off[v + 1]; e++) {
		uint32_t k = p->in_items[e], prod = p->item_prod[k];
		int src = ho_item_home(s, assign, k), from;

		if (prod == HO_EXTERNAL || src == dev || !ho_reads_in_place(p, src, dev))
			continue;
		from = assign[prod];
		if (from != dev && ho_reads_in_place(p, from, dev))
			ready = fmax(ready, s->end[prod] + ho_comm_time(p, k, from, dev));
	}
	return ready;
}

/* Task v's dynamic energy on dev: a reduced precision's by its share of float32's time. */
static double ho_task_energy(const struct ho_sim *s, uint32_t v, uint32_t dev)
{
	const struct ho_problem *p = s->p;
	double e = p->energy[(size_t)v * p->d + dev], f32 = p->comp[(size_t)v * p->d + dev];

	if (!ho_task_precision(p, s->prec, v, dev) || !(f32 > 0))
		return e;
	return e * ho_task_comp(p, s->prec, v, dev) / f32;
}

/* The plan's error, estimated: the sum of the sensitivities of the kernels that compute in a
 * reduced precision (a node run inside another's kernel computes as that one does). */
static double ho_plan_error(const struct ho_sim *s, const uint16_t *assign)
{
	const struct ho_problem *p = s->p;
	double sum = 0;

	for (uint32_t t = 0; s->prec && p->n_prec > 1 && t < p->n; t++) {
		uint32_t q = ho_task_precision(p, s->prec, t, assign[t]);

		if (q && s->how[t] == HO_TASK_RAN)
			sum += p->prec_error[(size_t)t * p->n_prec + q];
	}
	return sum;
}

/*
 * When task v, its producers already placed, would finish on each device
 * given the links' queues as they stand: the device it finishes first on.
 * Read-only; inputs of v that share a link are not queued behind each
 * other, so the estimate is optimistic there.  Ties keep the current device.
 */
static int ho_eft_choice(const struct ho_sim *s, const uint16_t *assign, uint32_t v,
			 double energy_s)
{
	const struct ho_problem *p = s->p;
	uint32_t d = p->d;
	int best_dev = assign[v];
	double best = INFINITY;

	for (uint32_t j = 0; j < d; j++) {
		double cost = ho_task_comp(p, s->prec, v, j), ready = 0, fin;
		int home;

		if (!(ho_list_devices(p, v) >> j & 1) || !isfinite(cost))
			continue;
		if (ho_view_in_place(s, assign, v, (int)j, &home) || ho_fuses(s, assign, v, (int)j))
			cost = 0;
		for (uint32_t e = p->in_off[v]; e < p->in_off[v + 1]; e++) {
			uint32_t k = p->in_items[e], prod = p->item_prod[k];
			int src = ho_item_home(s, assign, k);
			double t = prod == HO_EXTERNAL ? 0 : s->end[prod];

			if (src != (int)j && !ho_reads_in_place(p, src, (int)j)) {
				if (ho_has_copy(s, (size_t)k * d + j)) {
					t = s->arrival[(size_t)k * d + j];
				} else if (p->item_comm) {
					t += p->item_comm[k];
				} else {
					for (int h = 0; h < 2; h++) {
						int32_t l = p->route[(src * d + j) * 2 + h];

						if (l < 0)
							break;
						if (p->contention && s->link_free[l] > t)
							t = s->link_free[l];
						t += p->link_lat[l] +
						     p->item_bytes[k] / p->link_bw[l] +
						     p->small_transfer;
					}
				}
			}
			if (t > ready)
				ready = t;
		}
		if (p->handoff)
			ready = ho_handoff_ready(s, assign, v, (int)j, ready);
		fin = cost ? ho_slots_earliest_bounded(&s->slots[j], ready, cost, 32) + cost +
				 energy_s * ho_task_energy(s, v, j)
			   : ready;
		if (fin < best || (fin == best && (int)j == assign[v])) {
			best = fin;
			best_dev = (int)j;
		}
	}
	return best_dev;
}

/*
 * A task stretched by the devices that run beside it: for each, the part of
 * its window that device is busy, times that pair's slowdown less one.  The
 * window is where it would start; only tasks already placed count, so of
 * two that overlap the later one carries the slowdown (the pair's makespan
 * comes out right, the earlier one's end a little early).
 */
static double ho_interfered(const struct ho_sim *s, uint32_t v, int dev, double ready, double cost)
{
	const struct ho_problem *p = s->p;
	const double *mem = p->slowdown + (uint32_t)dev * p->d,
		     *cpu = p->slowdown + (p->d + (uint32_t)dev) * p->d;
	double t = ho_slots_earliest(&s->slots[dev], ready, cost), extra = 0,
	       c = p->task_compute[v];

	for (uint32_t j = 0; j < p->d; j++) {
		double f = c * cpu[j] + (1 - c) * mem[j];

		if (f > 1 && j != (uint32_t)dev)
			extra += (f - 1) * ho_slots_overlap(&s->slots[j], t, t + cost);
	}
	return cost + extra;
}

/*
 * The graph's outputs end in the host's memory: one written where the host
 * cannot read it in place is copied there once its writer is done (the
 * runtime's copy engine does so, as for a consumer on the host), and held
 * to the end.  Returns when the last has arrived: the run's end.
 */
static double ho_fetch_outputs(struct ho_sim *s, const uint16_t *assign, double makespan,
			       struct ho_eval *ev, struct ho_timeline *tl)
{
	const struct ho_problem *p = s->p;
	int host = p->default_device;
	double end = makespan;

	for (uint32_t i = 0; i < s->n_outs; i++) {
		uint32_t k = s->outs[i];
		int src = ho_item_home(s, assign, k);
		size_t idx = (size_t)k * p->d + (size_t)host;

		if (src == host || ho_reads_in_place(p, src, host) || ho_has_copy(s, idx) ||
		    ho_is_unwritten_item(s, k))
			continue;
		s->arrival[idx] = ho_transfer(s, k, HO_EXTERNAL, src, host, s->end[p->item_prod[k]],
					      ev, tl, &s->alloc_at[idx]);
		s->arr_stamp[idx] = s->gen;
		end = fmax(end, s->arrival[idx]);
	}
	for (uint32_t i = 0; i < s->n_outs; i++) {
		size_t idx = (size_t)s->outs[i] * p->d + (size_t)host;

		if (ho_has_copy(s, idx)) {
			s->last_use[idx] = end;
			s->lu_stamp[idx] = s->gen;
		}
	}
	return end;
}

static int ho_sim_run(struct ho_sim *s, const uint16_t *assign, uint16_t *decode,
		      const struct ho_decode *how, const uint32_t *order,
		      const struct ho_constraints *c, struct ho_eval *ev, struct ho_timeline *tl)
{
	const struct ho_problem *p = s->p;
	uint32_t d = p->d, dfrom = how ? how->from : 0, dto = how ? how->to : 0;
	double makespan = 0,
	       energy_s = how && s->idle_power > 0 ? how->energy_weight / s->idle_power : 0;
	const bool handoff = p->handoff; /* read once: the byte stores below may alias it */

	memset(ev, 0, sizeof(*ev));
	memset(s->busy, 0, d * sizeof(double));
	for (uint32_t j = 0; j < d; j++)
		s->slots[j].n = 0;
	memset(s->link_free, 0, (p->n_links + 1) * sizeof(double));
	memset(s->link_busy, 0, (p->n_links + 1) * sizeof(double));
	memset(s->done, 0, p->n);
	memset(s->out_end, 0, p->m * sizeof(double));
	s->n_viewed = s->n_fused = s->n_gathered = 0;
	if (++s->gen == 0) { /* wrapped after 2^32 evaluations: clear once */
		memset(s->arr_stamp, 0, (size_t)p->m * d * sizeof(uint32_t));
		memset(s->lu_stamp, 0, (size_t)p->m * d * sizeof(uint32_t));
		s->gen = 1;
	}
	if (tl)
		tl->n_xfer = 0;
	/* the layouts of the plan as given (a decoder's later choices are not yet in it) */
	if (p->relayout) {
		for (uint32_t t = 0; t < p->n; t++)
			if (assign[t] >= d)
				return -EINVAL;
		ho_layouts_under(p, assign, s->nhwc);
	}

	for (uint32_t i = 0; i < p->n; i++) {
		uint32_t v = order[i];
		int dev, home;
		double ready = 0, cost;
		bool view, fused, gathered;

		if (v >= p->n || s->done[v] || assign[v] >= d)
			return -EINVAL;
		if (decode && i >= dfrom && i < dto) /* an unplaced producer is caught below */
			decode[v] = (uint16_t)ho_eft_choice(s, assign, v, energy_s);
		dev = assign[v];
		/* tested here: graphs without views or chains make no call */
		view = p->view_src && ho_view_in_place(s, assign, v, dev, &home);
		fused = !view && p->fuse_prev && ho_fuses(s, assign, v, dev);
		gathered = !view && !fused && p->gather_out && ho_gathers(s, assign, v, dev);
		if (view)
			s->home[v] = (uint16_t)home;
		s->how[v] = view       ? HO_TASK_VIEW
			    : fused    ? HO_TASK_FUSED
			    : gathered ? HO_TASK_GATHERED
				       : HO_TASK_RAN;
		s->n_viewed += view;
		s->n_fused += fused;
		s->n_gathered += gathered;
		/* a gathered Concat is a view of its inputs written in place, no time */
		view |= gathered;
		for (uint32_t e = p->in_off[v]; e < p->in_off[v + 1]; e++) {
			uint32_t k = p->in_items[e], prod = p->item_prod[k];
			int src = ho_item_home(s, assign, k);
			double t;

			if (prod != HO_EXTERNAL && !s->done[prod])
				return -EINVAL; /* order is not topological */
			t = prod == HO_EXTERNAL ? 0 : s->end[prod];
			/* read where it is (in place: keeping the producer's buffer alive), or a
			 * copy */
			bool here = src == dev || ho_reads_in_place(p, src, dev);

			s->use_idx[e - p->in_off[v]] = (size_t)k * d + (size_t)(here ? src : dev);
			if (!here) {
				size_t idx = (size_t)k * d + dev;

				if (!ho_has_copy(s, idx)) {
					s->arrival[idx] = ho_transfer(s, k, v, src, dev, t, ev, tl,
								      &s->alloc_at[idx]);
					s->arr_stamp[idx] = s->gen;
				}
				t = s->arrival[idx];
			}
			if (t > ready)
				ready = t;
		}
		if (handoff)
			ready = ho_handoff_ready(s, assign, v, dev, ready);
		cost = ho_task_comp(p, s->prec, v, dev);
		if (!(p->allowed[v] >> dev & 1) || !isfinite(cost)) {
			ev->n_infeasible++;
			if (!isfinite(cost))
				cost = 0;
		}
		/* a pointer to bytes already there, or work done inside the head's kernel */
		if (view || fused)
			cost = fused && p->fused_comp ? p->fused_comp[(size_t)v * d + dev] : 0;
		/* tensors turned between layouts, beyond what the device alone turned */
		if (p->relayout && !view)
			cost = fmax(0, cost + ho_relayout_time(p, v, dev, s->nhwc) -
					   p->relayout_alone[(size_t)v * d + dev]);
		if (p->slowdown && !view && !fused && cost > 0)
			cost = ho_interfered(s, v, dev, ready, cost);
		s->start[v] = cost > 0 || !(view || fused)
				  ? ho_slots_book(&s->slots[dev], ready, cost)
				  : ready;
		s->end[v] = s->start[v] + cost;
		s->busy[dev] += cost;
		s->done[v] = 1;
		ev->obj[HO_OBJ_ENERGY] += view || fused ? 0 : ho_task_energy(s, v, dev);
		if (s->end[v] > makespan)
			makespan = s->end[v];
		for (uint32_t e = 0; e < p->in_off[v + 1] - p->in_off[v]; e++) {
			size_t idx = s->use_idx[e];

			if (s->lu_stamp[idx] != s->gen || s->end[v] > s->last_use[idx]) {
				s->last_use[idx] = s->end[v];
				s->lu_stamp[idx] = s->gen;
			}
		}
	}

	if (s->n_outs && d > 1)
		makespan = ho_fetch_outputs(s, assign, makespan, ev, tl);

	double period = 0, sum_busy = 0, max_busy = 0;

	for (uint32_t j = 0; j < d; j++) {
		ev->busy[j] = s->busy[j];
		sum_busy += s->busy[j];
		if (s->busy[j] > max_busy)
			max_busy = s->busy[j];
		ev->obj[HO_OBJ_ENERGY] += p->idle_power[j] * makespan;
	}
	period = max_busy;
	for (uint32_t l = 0; l < p->n_links; l++)
		if (s->link_busy[l] > period)
			period = s->link_busy[l];
	ev->obj[HO_OBJ_LATENCY] = makespan;
	ev->obj[HO_OBJ_THROUGHPUT] = period;
	ev->obj[HO_OBJ_BALANCE] = sum_busy > 0 ? max_busy / (sum_busy / d) : 1;
	ev->obj[HO_OBJ_ERROR] = ho_plan_error(s, assign);

	if (!p->item_comm) {
		bool exact = !s->lazy_memory || tl;

		for (uint32_t j = 0; c && j < d && !exact; j++)
			exact = c->max_mem[j] > 0;
		/* What is held all run long, once for both: the bound fills peak_mem; it
		 * is replaced by the sweep unless it proves feasibility. */
		ho_weights_resident(p, assign, s->how, s->pmask, s->static_mem, ev->kernel_mem);
		if (exact || !ho_memory_bound_fits(s, assign, ev))
			ho_memory(s, assign, makespan, ev);
		else
			ev->peak_is_bound = 1;
		for (uint32_t j = 0; j < d; j++) {
			if (p->capacity[j] <= 0)
				continue;
			double r = ev->peak_mem[j] / p->capacity[j];

			if (r > ev->obj[HO_OBJ_MEMORY])
				ev->obj[HO_OBJ_MEMORY] = r;
			if (r > 1)
				ev->violation += r - 1;
		}
	}
	ev->violation += ev->n_infeasible;
	/* devices sharing cores (box alternative_to): a plan keeps to one side.  A device is
	 * used where any task is placed, as the runtime's loader counts it: a view or a
	 * fused node there takes no time, but the schedule still names the device */
	if (p->exclusive) {
		uint64_t used = 0;

		for (uint32_t t = 0; t < p->n; t++)
			used |= 1ull << assign[t];
		for (uint32_t j = 0; j < d; j++)
			for (uint32_t k = j + 1; k < d && (used >> j & 1); k++)
				if ((p->exclusive[j] >> k & 1) && (used >> k & 1))
					ev->violation += 1;
	}
	if (c) {
		if (c->max_latency > 0 && makespan > c->max_latency)
			ev->violation += (makespan - c->max_latency) / c->max_latency;
		if (c->max_error > 0 && ev->obj[HO_OBJ_ERROR] > c->max_error)
			ev->violation += (ev->obj[HO_OBJ_ERROR] - c->max_error) / c->max_error;
		for (uint32_t j = 0; j < d; j++)
			if (c->max_mem[j] > 0 && ev->peak_mem[j] > c->max_mem[j])
				ev->violation += (ev->peak_mem[j] - c->max_mem[j]) / c->max_mem[j];
	}
	if (tl) {
		memcpy(tl->start, s->start, p->n * sizeof(double));
		memcpy(tl->end, s->end, p->n * sizeof(double));
		memcpy(tl->how, s->how, p->n);
	}
	return 0;
}

int ho_sim_eval(struct ho_sim *s, const uint16_t *assign, const uint32_t *order,
		const struct ho_constraints *c, struct ho_eval *ev, struct ho_timeline *tl)
{
	return ho_sim_run(s, assign, NULL, NULL, order, c, ev, tl);
}

int ho_sim_decode(struct ho_sim *s, uint16_t *assign, const uint32_t *order,
		  const struct ho_constraints *c, struct ho_eval *ev, struct ho_timeline *tl)
{
	struct ho_decode all = {0, s->p->n, 0};

	return ho_sim_run(s, assign, assign, &all, order, c, ev, tl);
}

int ho_sim_decode_window(struct ho_sim *s, uint16_t *assign, const uint32_t *order,
			 const struct ho_decode *how, const struct ho_constraints *c,
			 struct ho_eval *ev, struct ho_timeline *tl)
{
	return ho_sim_run(s, assign, assign, how, order, c, ev, tl);
}

int ho_sim_memory_curve(const struct ho_sim *s, uint32_t dev, double *t, double *bytes,
			uint32_t max)
{
	double cur;
	uint32_t n = 0;

	if (dev >= s->p->d)
		return -EINVAL;
	cur = s->static_mem[dev];
	if (max) {
		t[0] = 0;
		bytes[0] = cur;
	}
	n = 1;
	for (uint32_t e = 0; e < s->n_ev; e++) {
		const struct ho_mem_event *x = &s->ev[e];

		if (HO_EV_DEV(x) != dev)
			continue;
		cur += (double)HO_EV_BYTES(x);
		/* events at one time are one step: the last says where it lands */
		if (n && n <= max && t[n - 1] == x->t) {
			bytes[n - 1] = cur;
			continue;
		}
		if (n < max) {
			t[n] = x->t;
			bytes[n] = cur;
		}
		n++;
	}
	return (int)n;
}
