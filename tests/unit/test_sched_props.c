// SPDX-License-Identifier: MIT
/*
 * Properties of the simulator and the search on random DAGs (HEFT-paper
 * generator) and on real exported models on the shipped boxes:
 *  - precedence holds, no two tasks overlap on a device, no two copies on a link;
 *  - the peak memory recomputed by brute force from the timeline equals the
 *    simulator's sweep, views read in place holding no bytes of their own and
 *    fused Conv chains writing only their result;
 *  - every front member is non-dominated, and the front never loses to its
 *    HEFT seed on latency;
 *  - the same seed gives the same front, whatever the thread count;
 *  - impossible constraints leave only violating schedules.
 */
#include <errno.h>
#include <math.h>

#include "heteroopt/graph.h"
#include "heteroopt/sched.h"
#include "randdag.h"
#include "test_util.h"

#define EXT UINT32_MAX
#define EPS 1e-9

/* The latency of a shared-memory link between two devices, 0 if none. */
static double handoff(const struct ho_problem *p, int a, int b)
{
	for (uint32_t l = 0; p->box && a != b && l < p->box->n_links; l++) {
		const struct ho_link *k = &p->box->links[l];

		if (k->shared_memory && ((k->a == a && k->b == b) || (k->a == b && k->b == a)))
			return k->latency;
	}
	return 0;
}

static bool in_place(const struct ho_problem *p, int src, int dst)
{
	return p->in_place && p->in_place[dst] >> src & 1;
}

/*
 * Where each item's bytes are (home) and which items are views read in place
 * (the source's bytes under another shape), following view chains from the
 * graph's start.
 */
static void item_homes(const struct ho_problem *p, const uint16_t *assign, int *home,
		       uint8_t *is_view)
{
	for (uint32_t k = 0; k < p->m; k++) {
		home[k] = p->item_prod[k] == EXT ? p->default_device : assign[p->item_prod[k]];
		is_view[k] = 0;
	}
	for (uint32_t i = 0; p->view_src && i < p->n; i++) {
		uint32_t t = p->topo[i], src = p->view_src[t];
		int h;

		if (src == HO_NOT_VIEW)
			continue;
		h = src == HO_VIEW_OF_WEIGHT ? p->default_device : home[src];
		/* a Transpose read through: beside its MatMul, where the kernel reads so */
		if (p->view_reader && p->view_reader[t] != HO_NOT_VIEW &&
		    (assign[p->view_reader[t]] != assign[t] || !(p->view_devs[t] >> assign[t] & 1)))
			continue;
		if (h == assign[t] || in_place(p, h, assign[t])) {
			home[p->view_out[t]] = h;
			is_view[p->view_out[t]] = 1;
		}
	}
}

/* Arrival of item k on device dst according to the recorded transfers (a record with no
 * consumer task is a graph output fetched to the host). */
static double arrival(const struct ho_problem *p, const struct ho_timeline *tl,
		      const uint16_t *assign, uint32_t k, int dst, double *alloc)
{
	double t = -1;

	*alloc = INFINITY;
	for (uint32_t i = 0; i < tl->n_xfer; i++) {
		const struct ho_transfer *x = &tl->xfer[i];
		int to = x->task == UINT32_MAX ? p->default_device : assign[x->task];

		if (x->item != k || to != dst)
			continue;
		if (x->end > t)
			t = x->end;
		if (x->start < *alloc)
			*alloc = x->start;
	}
	return t;
}

/*
 * The memory curve the report draws (ho_sim_memory_curve): in time order, never below
 * zero, its highest step the simulator's peak, and counted and filled alike.
 */
static void check_memory_curve(const struct ho_problem *p, const struct ho_sim *s,
			       const struct ho_eval *ev, const char *what)
{
	for (uint32_t j = 0; j < p->d; j++) {
		int n = ho_sim_memory_curve(s, j, NULL, NULL, 0);
		double *t = malloc(sizeof(double) * (size_t)(n + 1)),
		       *b = malloc(sizeof(double) * (size_t)(n + 1)), top = 0;
		int got;

		T_REQUIRE(n >= 1 && t && b);
		got = ho_sim_memory_curve(s, j, t, b, (uint32_t)n);
		T_CHECK(got >= 1 && got <= n, "%s: %s: %d points, %d counted", what, p->dev_name[j],
			got, n);
		for (int k = 0; k < got; k++) {
			T_CHECK(b[k] >= -1e-6 && (!k || t[k] > t[k - 1]),
				"%s: %s: point %d at %g s, %g bytes", what, p->dev_name[j], k, t[k],
				b[k]);
			top = b[k] > top ? b[k] : top;
		}
		T_CHECK(fabs(top - ev->peak_mem[j]) <= 1e-6 * (top + 1),
			"%s: %s: the curve's top %.0f, the simulated peak %.0f", what,
			p->dev_name[j], top, ev->peak_mem[j]);
		free(t);
		free(b);
	}
}

/*
 * Concat t, said gathered (each input written straight into its output), may be: every
 * input made on its device, through the views in place it is of, by a task the Concat
 * gathers (the simulator's further rules, channels-last and residual chains, are its own).
 */
static bool may_gather(const struct ho_problem *p, const uint16_t *assign,
		       const struct ho_timeline *tl, uint32_t t)
{
	if (!p->gather_out || p->gather_out[t] == HO_NOT_VIEW)
		return false;
	for (uint32_t e = p->in_off[t]; e < p->in_off[t + 1]; e++) {
		uint32_t k = p->in_items[e], prod;

		for (;;) {
			prod = p->item_prod[k];
			if (prod == EXT || assign[prod] != assign[t])
				return false;
			if (tl->how[prod] != HO_TASK_VIEW || p->view_out[prod] != k)
				break;
			if ((k = p->view_src[prod]) == HO_VIEW_OF_WEIGHT)
				return false;
		}
		if (p->gather_by[k] != t)
			return false;
	}
	return true;
}

static void check_timeline(const struct ho_problem *p, const uint16_t *assign,
			   const struct ho_timeline *tl, const struct ho_eval *ev, const char *what)
{
	uint32_t d = p->d;
	int *home = malloc(sizeof(int) * (p->m + 1));
	uint8_t *is_view = malloc(p->m + 1);

	item_homes(p, assign, home, is_view);
	/* Chains on one device: the head's kernel writes only the last result. */
	uint8_t *fused = calloc(p->n + 1, 1), *unwritten = calloc(p->m + 1, 1);

	for (uint32_t i = 0; p->fuse_prev && i < p->n; i++) {
		uint32_t t = p->topo[i], u = p->fuse_prev[t];

		fused[t] = u != HO_NOT_FUSED && assign[u] == assign[t] &&
			   (p->fuse_prev[u] == HO_NOT_FUSED || fused[u]) &&
			   (!p->fuse_devs || (p->fuse_devs[t] >> assign[t] & 1));
		/* a residual Add: the residual made and read on that device alone */
		if (fused[t] && p->fuse_res[t] != HO_NOT_FUSED) {
			uint32_t k = p->fuse_res[t];

			fused[t] = home[k] == assign[t];
			for (uint32_t e = p->cons_off[k]; e < p->cons_off[k + 1]; e++)
				fused[t] &= assign[p->cons[e]] == assign[t];
		}
		if (fused[t])
			unwritten[p->fuse_in[t]] = 1;
	}
	/* ... which is what the timeline says of each task, and those take no time */
	for (uint32_t t = 0; t < p->n; t++) {
		int how = fused[t] ? HO_TASK_FUSED
			  : p->view_src && p->view_src[t] != HO_NOT_VIEW && is_view[p->view_out[t]]
			      ? HO_TASK_VIEW
			  : tl->how[t] == HO_TASK_GATHERED && may_gather(p, assign, tl, t)
			      ? HO_TASK_GATHERED
			      : HO_TASK_RAN;

		T_CHECK(tl->how[t] == how, "%s: task %s ran as %d, the rules say %d", what,
			p->task_name[t], tl->how[t], how);
		T_CHECK(how == HO_TASK_RAN || tl->end[t] == tl->start[t],
			"%s: task %s is not run but takes %.9g s", what, p->task_name[t],
			tl->end[t] - tl->start[t]);
	}
	/* Precedence, including the copy time between devices. */
	for (uint32_t t = 0; t < p->n; t++)
		for (uint32_t e = p->in_off[t]; e < p->in_off[t + 1]; e++) {
			uint32_t k = p->in_items[e], prod = p->item_prod[k];
			double ready = prod == EXT ? 0 : tl->end[prod], alloc;

			/* read in place: no copy, only the producer's end, and from
			 * another device the hand-off, the shared link's latency */
			if (home[k] == assign[t] || in_place(p, home[k], assign[t])) {
				if (prod != EXT)
					ready += handoff(p, assign[prod], assign[t]);
			} else {
				ready = arrival(p, tl, assign, k, assign[t], &alloc);
				T_CHECK(ready >= 0, "%s: item %u never reached task %s", what, k,
					p->task_name[t]);
				T_CHECK(prod == EXT || alloc >= tl->end[prod] - EPS,
					"%s: copy of item %u starts before it exists", what, k);
			}
			T_CHECK(tl->start[t] >= ready - EPS,
				"%s: task %s starts %.9g before its input (%.9g)", what,
				p->task_name[t], tl->start[t], ready);
		}
	/* The graph's outputs end in the host's memory: one made where the host cannot read it
	 * is copied there after its producer, and the run lasts until it has arrived. */
	for (uint32_t k = 0; !p->item_comm && k < p->m; k++) {
		uint32_t prod = p->item_prod[k];
		double alloc, arr;

		if (!p->item_pinned_out[k] || prod == EXT || unwritten[k] ||
		    home[k] == p->default_device || in_place(p, home[k], p->default_device))
			continue;
		arr = arrival(p, tl, assign, k, p->default_device, &alloc);
		T_CHECK(arr >= 0 && alloc >= tl->end[prod] - EPS &&
			    ev->obj[HO_OBJ_LATENCY] >= arr - EPS,
			"%s: output item %u on %s: fetched to the host at %.9g..%.9g, the run ends "
			"%.9g",
			what, k, p->dev_name[home[k]], alloc, arr, ev->obj[HO_OBJ_LATENCY]);
	}
	/* No overlap on a device. */
	for (uint32_t a = 0; a < p->n; a++)
		for (uint32_t b = a + 1; b < p->n; b++)
			if (assign[a] == assign[b] && tl->end[a] > tl->start[a] &&
			    tl->end[b] > tl->start[b])
				T_CHECK(tl->end[a] <= tl->start[b] + EPS ||
					    tl->end[b] <= tl->start[a] + EPS,
					"%s: %s and %s overlap on %s", what, p->task_name[a],
					p->task_name[b], p->dev_name[assign[a]]);
	/* No overlap on a link (contention model). */
	if (p->contention)
		for (uint32_t i = 0; i < tl->n_xfer; i++)
			for (uint32_t j = i + 1; j < tl->n_xfer; j++)
				if (tl->xfer[i].link == tl->xfer[j].link && tl->xfer[i].link >= 0)
					T_CHECK(tl->xfer[i].end <= tl->xfer[j].start + EPS ||
						    tl->xfer[j].end <= tl->xfer[i].start + EPS,
						"%s: two copies overlap on link %d", what,
						tl->xfer[i].link);
	/* Peak memory by brute force: every buffer's interval, summed at every start. */
	if (p->item_comm) {
		free(home);
		free(is_view);
		free(fused);
		free(unwritten);
		return;
	}
	double *from = malloc(sizeof(double) * p->m * (2 * d + 1)),
	       *to = malloc(sizeof(double) * p->m * (2 * d + 1)),
	       *own_end = malloc(sizeof(double) * (p->m + 1));
	double *bytes = malloc(sizeof(double) * p->m * (2 * d + 1)), stat[HO_MAX_DEVICES] = {0};
	uint32_t *on = malloc(sizeof(uint32_t) * p->m * (2 * d + 1)), ni = 0;
	double makespan = ev->obj[HO_OBJ_LATENCY];

	for (uint32_t w = 0; w < p->n_weights; w++) {
		uint64_t mask = 0;

		for (uint32_t c = p->wcons_off[w]; c < p->wcons_off[w + 1]; c++) {
			int j = assign[p->wcons[c]];

			/* read in place from the host's memory */
			if (p->in_place && p->in_place[j] >> p->default_device & 1)
				j = p->default_device;
			mask |= 1ull << j;
		}
		for (uint32_t j = 0; j < d; j++)
			if (mask >> j & 1)
				stat[j] += p->weight_bytes[w];
	}
	/* Each item's own end at its home, before views extend their sources'. */
	for (uint32_t k = 0; k < p->m; k++) {
		uint32_t prod = p->item_prod[k];
		int src = home[k];
		double dies = prod == EXT ? 0 : tl->end[prod];

		for (uint32_t c = p->cons_off[k]; c < p->cons_off[k + 1]; c++)
			if ((assign[p->cons[c]] == src || in_place(p, src, assign[p->cons[c]])) &&
			    tl->end[p->cons[c]] > dies)
				dies = tl->end[p->cons[c]];
		for (uint32_t i = 0; i < tl->n_xfer; i++)
			if (tl->xfer[i].item == k && tl->xfer[i].src == src &&
			    tl->xfer[i].end > dies)
				dies = tl->xfer[i].end;
		if (p->item_pinned_out[k] || prod == EXT)
			dies = makespan;
		own_end[k] = dies;
	}
	for (uint32_t k = 0; k < p->m; k++) {
		uint32_t prod = p->item_prod[k];
		int src = home[k];
		double born = prod == EXT ? 0 : tl->start[prod], dies = own_end[k];

		/* A view's bytes are its source's: the source (the first item up its
		 * chain that is no view) holds them until every view of it is done. */
		for (uint32_t a = 0; !is_view[k] && a < p->m; a++) {
			uint32_t r = a;

			while (is_view[r] && p->view_src[p->item_prod[r]] != HO_VIEW_OF_WEIGHT)
				r = p->view_src[p->item_prod[r]];
			if (a != k && is_view[a] && r == k && own_end[a] > dies)
				dies = own_end[a];
		}
		if (prod != EXT && fused[prod])
			born = tl->start[p->fuse_head[prod]];
		if (!is_view[k] && !unwritten[k])
			from[ni] = born, to[ni] = dies, bytes[ni] = p->item_bytes[k],
			on[ni++] = (uint32_t)src;
		for (uint32_t j = 0; j < d; j++) {
			double alloc, arr, last;

			if ((int)j == src)
				continue;
			arr = arrival(p, tl, assign, k, (int)j, &alloc);
			if (arr < 0)
				continue;
			/* an output's copy in the host's memory is held to the end */
			last =
			    p->item_pinned_out[k] && (int)j == p->default_device ? makespan : arr;
			for (uint32_t c = p->cons_off[k]; c < p->cons_off[k + 1]; c++)
				if (assign[p->cons[c]] == j && tl->end[p->cons[c]] > last)
					last = tl->end[p->cons[c]];
			from[ni] = alloc, to[ni] = last, bytes[ni] = p->item_bytes[k], on[ni++] = j;
			if (p->route[(src * d + j) * 2 + 1] >= 0)
				from[ni] = alloc, to[ni] = arr, bytes[ni] = p->item_bytes[k],
				on[ni++] = (uint32_t)p->default_device;
		}
	}
	for (uint32_t j = 0; j < d; j++) {
		double peak = stat[j];

		for (uint32_t a = 0; a < ni; a++) {
			double sum = stat[j];

			if (on[a] != j || !(to[a] > from[a]) || bytes[a] <= 0)
				continue;
			for (uint32_t b = 0; b < ni; b++)
				if (on[b] == j && to[b] > from[b] && bytes[b] > 0 &&
				    from[b] <= from[a] && from[a] < to[b])
					sum += bytes[b];
			if (sum > peak)
				peak = sum;
		}
		T_CHECK(fabs(peak - ev->peak_mem[j]) <= 1e-6 * (peak + 1),
			"%s: %s peak %.0f by brute force, %.0f simulated", what, p->dev_name[j],
			peak, ev->peak_mem[j]);
	}
	free(from);
	free(to);
	free(own_end);
	free(bytes);
	free(on);
	free(home);
	free(is_view);
	free(fused);
	free(unwritten);
}

static void check_front(const struct ho_problem *p, const struct ho_front *f, uint32_t objectives,
			const char *what)
{
	struct ho_sim *s = ho_sim_new(p);
	struct ho_timeline *tl = ho_timeline_new(p);

	for (uint32_t i = 0; i < f->n; i++) {
		struct ho_eval ev;

		ho_sim_precision(s, f->sol[i].prec);
		T_CHECK(ho_sim_eval(s, f->sol[i].assign, f->sol[i].order, NULL, &ev, tl) == 0,
			"%s: re-evaluation", what);
		T_CHECK(ev.obj[HO_OBJ_LATENCY] == f->sol[i].ev.obj[HO_OBJ_LATENCY],
			"%s: re-evaluation differs", what);
		check_timeline(p, f->sol[i].assign, tl, &ev, what);
		check_memory_curve(p, s, &ev, what);
		for (uint32_t j = 0; j < f->n; j++) {
			bool all_le = true, one_lt = false;

			if (i == j)
				continue;
			for (int m = 0; m < HO_OBJ_COUNT; m++) {
				if (!(objectives >> m & 1))
					continue;
				all_le &= f->sol[j].ev.obj[m] <= f->sol[i].ev.obj[m];
				one_lt |= f->sol[j].ev.obj[m] < f->sol[i].ev.obj[m];
			}
			T_CHECK(!(all_le && one_lt), "%s: front member %u dominated by %u", what, i,
				j);
		}
	}
	ho_timeline_free(tl);
	ho_sim_free(s);
}

/*
 * The contention-aware decoder: what it chose replays to the same objectives
 * and a valid timeline, on allowed devices only.  Returns the decoded latency.
 */
static double check_decode(const struct ho_problem *p, const struct ho_plan *seed, const char *what)
{
	struct ho_sim *s = ho_sim_new(p);
	struct ho_timeline *tl = ho_timeline_new(p), *tl2 = ho_timeline_new(p);
	uint16_t *assign = malloc(p->n * sizeof(*assign));
	struct ho_eval dev, rev;
	double lat = 0;

	memcpy(assign, seed->assign, p->n * sizeof(*assign));
	T_CHECK(ho_sim_decode(s, assign, seed->order, NULL, &dev, tl) == 0, "%s: decode", what);
	for (uint32_t t = 0; t < p->n; t++)
		T_CHECK(p->allowed[t] >> assign[t] & 1, "%s: task %u decoded onto device %u", what,
			t, assign[t]);
	T_CHECK(ho_sim_eval(s, assign, seed->order, NULL, &rev, tl2) == 0, "%s: replay", what);
	for (int m = 0; m < HO_OBJ_COUNT; m++)
		T_CHECK(rev.obj[m] == dev.obj[m], "%s: decoded objective %d %g replays as %g", what,
			m, dev.obj[m], rev.obj[m]);
	for (uint32_t t = 0; t < p->n; t++)
		T_CHECK(tl->start[t] == tl2->start[t], "%s: task %u starts differently on replay",
			what, t);
	check_timeline(p, assign, tl2, &rev, what);
	lat = dev.obj[HO_OBJ_LATENCY];

	/* A window re-chooses only its own stretch of the order, and replays the same. */
	uint32_t from = p->n / 3, to = 2 * p->n / 3, moved = 0;

	memcpy(assign, seed->assign, p->n * sizeof(*assign));
	struct ho_decode window = {from, to, 0};

	T_CHECK(ho_sim_decode_window(s, assign, seed->order, &window, NULL, &dev, NULL) == 0,
		"%s: window decode", what);
	for (uint32_t i = 0; i < p->n; i++) {
		uint32_t t = seed->order[i];

		if (i < from || i >= to)
			T_CHECK(assign[t] == seed->assign[t],
				"%s: task %u outside the window moved", what, t);
		moved += assign[t] != seed->assign[t];
	}
	T_CHECK(ho_sim_eval(s, assign, seed->order, NULL, &rev, NULL) == 0, "%s: replay", what);
	for (int m = 0; m < HO_OBJ_COUNT; m++)
		T_CHECK(rev.obj[m] == dev.obj[m], "%s: window objective %d %g replays as %g", what,
			m, dev.obj[m], rev.obj[m]);
	if (getenv("HO_TEST_VERBOSE"))
		printf("  %s: the window re-chose %u of %u devices\n", what, moved, to - from);

	/* Energy weighed far above time: each task in the window to its least-energy device. */
	double idle = 0;
	uint32_t cheaper = 0;

	for (uint32_t j = 0; j < p->d; j++)
		idle += p->idle_power[j];
	window.energy_weight = 1e12;
	memcpy(assign, seed->assign, p->n * sizeof(*assign));
	T_CHECK(ho_sim_decode_window(s, assign, seed->order, &window, NULL, &dev, NULL) == 0,
		"%s: energy-weighted window decode", what);
	for (uint32_t i = from; i < to && idle > 0; i++) {
		uint32_t t = seed->order[i];
		double least = INFINITY;

		for (uint32_t j = 0; j < p->d; j++)
			if ((p->allowed[t] >> j & 1) && isfinite(p->comp[t * p->d + j]))
				least = fmin(least, p->energy[t * p->d + j]);
		T_CHECK(p->energy[t * p->d + assign[t]] == least,
			"%s: task %u decoded for energy onto %u (%g J), the least is %g J", what, t,
			assign[t], p->energy[t * p->d + assign[t]], least);
		cheaper += assign[t] != seed->assign[t];
	}
	if (getenv("HO_TEST_VERBOSE") && idle > 0)
		printf("  %s: weighing energy moved %u of %u devices to their least-energy one\n",
		       what, cheaper, to - from);
	free(assign);
	ho_timeline_free(tl);
	ho_timeline_free(tl2);
	ho_sim_free(s);
	return lat;
}

static struct ho_front *search(const struct ho_problem *p, uint32_t objectives, uint64_t seed,
			       uint32_t threads, const struct ho_plan *heft, uint32_t gens)
{
	struct ho_search_opts o;
	struct ho_front *f = NULL;
	struct ho_error err;
	const struct ho_plan *seeds[1] = {heft};

	ho_search_defaults(&o);
	o.population = 48;
	o.generations = gens;
	o.seed = seed;
	o.threads = threads;
	o.objectives = objectives;
	o.seeds = seeds;
	o.n_seeds = heft ? 1 : 0;
	T_CHECK(ho_search(p, &o, &f, &err) == 0, "search: %s", err.msg);
	return f;
}

static bool same_front(const struct ho_problem *p, const struct ho_front *a,
		       const struct ho_front *b)
{
	if (a->n != b->n)
		return false;
	for (uint32_t i = 0; i < a->n; i++)
		if (memcmp(a->sol[i].ev.obj, b->sol[i].ev.obj, sizeof(a->sol[i].ev.obj)) ||
		    memcmp(a->sol[i].assign, b->sol[i].assign, p->n * sizeof(uint16_t)) ||
		    memcmp(a->sol[i].order, b->sol[i].order, p->n * sizeof(uint32_t)))
			return false;
	return true;
}

static void random_dags(void)
{
	uint32_t obj = 1u << HO_OBJ_LATENCY | 1u << HO_OBJ_BALANCE | 1u << HO_OBJ_THROUGHPUT;
	unsigned graphs = 0, improved = 0;

	for (uint64_t seed = 1; seed <= 24; seed++) {
		unsigned v = 20 + (unsigned)(seed * 37 % 180), procs = 2 + (unsigned)(seed % 4);
		struct ho_problem *p = rd_problem(seed, v, procs, 0.1 + (double)(seed % 5) * 2,
						  0.5 + (double)(seed % 3) * 0.5, 1.0);
		char what[64];

		T_CHECK(p != NULL, "random DAG %llu", (unsigned long long)seed);
		if (!p)
			continue;
		snprintf(what, sizeof(what), "random DAG %llu (%u tasks, %u procs)",
			 (unsigned long long)seed, v, procs);
		struct ho_plan *h = ho_plan_new(p->n);
		struct ho_sim *s = ho_sim_new(p);
		struct ho_eval hev;

		ho_plan_heft(p, h, NULL);
		ho_sim_eval(s, h->assign, h->order, NULL, &hev, NULL);
		/* The simulator replays an insertion schedule no later than HEFT computed it. */
		T_CHECK(hev.obj[HO_OBJ_LATENCY] <= h->makespan + EPS,
			"%s: HEFT %.3f replayed as %.3f", what, h->makespan,
			hev.obj[HO_OBJ_LATENCY]);
		check_decode(p, h, what);
		struct ho_front *f = search(p, obj, seed, 2, h, 30),
				*g = search(p, obj, seed, 1, h, 30);

		if (f && g) {
			check_front(p, f, obj, what);
			T_CHECK(same_front(p, f, g),
				"%s: same seed, 2 threads vs 1 thread: different fronts", what);
			T_CHECK(f->sol[0].ev.obj[HO_OBJ_LATENCY] <= hev.obj[HO_OBJ_LATENCY] + EPS,
				"%s: front %.3f loses to its HEFT seed %.3f", what,
				f->sol[0].ev.obj[HO_OBJ_LATENCY], hev.obj[HO_OBJ_LATENCY]);
			improved +=
			    f->sol[0].ev.obj[HO_OBJ_LATENCY] < hev.obj[HO_OBJ_LATENCY] - EPS;
			graphs++;
		}
		ho_front_free(f);
		ho_front_free(g);
		ho_plan_free(h);
		ho_sim_free(s);
		ho_problem_free(p);
	}
	printf("  random DAGs: %u checked, the search beat HEFT on %u\n", graphs, improved);
}

/* model (the models folder's) with input bind, scheduled on box: 0, or the error in err. */
static int load_problem(const char *path, const char *bind, const char *box_path,
			struct ho_graph **g, struct ho_box **box, struct ho_problem **p,
			struct ho_error *err)
{
	char in[64];
	int64_t dims[HO_MAX_RANK];
	int rank;

	if (ho_onnx_load(path, NULL, g, err) ||
	    ho_parse_shape_arg(bind, in, sizeof(in), dims, &rank, err) ||
	    ho_graph_bind_input(*g, in, dims, rank, err) || ho_shape_infer(*g, err))
		return -1;
	ho_features_compute(*g);
	return ho_box_load(box_path, box, err) || ho_problem_from_graph(*g, *box, NULL, p, err);
}

static void real_models(void)
{
	static const struct {
		const char *model, *bind, *box, *pin_op, *pin_dev;
	} cases[] = {
	    {"resnet18.onnx", "input=1x3x224x224", "boxes/edge-mlu370-ascend310p-u280.json", NULL,
	     NULL},
	    {"ch_PP-OCRv4_det_infer.onnx", "x=1x3x320x320", "boxes/server-t4-ascend-xeon.json",
	     NULL, NULL},
	    {"transformer_encoder.onnx", "src=1x32x256", "boxes/this-machine-2cpu.json", NULL,
	     NULL},
	    /* emu0 reads no other memory: the Identity views of weights there copy */
	    {"transformer_encoder.onnx", "src=1x32x256", "boxes/this-machine-cpu-emu.json",
	     "Identity", "emu0"},
	    {"mobilenet_v2.onnx", "input=1x3x224x224", "boxes/nvlink-2xa100-epyc.json", NULL, NULL},
	};
	uint32_t obj = 1u << HO_OBJ_LATENCY | 1u << HO_OBJ_MEMORY | 1u << HO_OBJ_ENERGY;

	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		char path[4096], what[128];
		struct ho_graph *g = NULL;
		struct ho_box *box = NULL;
		struct ho_problem *p = NULL;
		struct ho_error err;

		if (t_model_path(path, sizeof(path), cases[c].model)) {
			t_model_skipped(cases[c].model);
			continue;
		}
		snprintf(what, sizeof(what), "%s on %s", cases[c].model, cases[c].box);
		if (load_problem(path, cases[c].bind, cases[c].box, &g, &box, &p, &err) ||
		    (cases[c].pin_op &&
		     ho_problem_pin(p, cases[c].pin_op, cases[c].pin_dev, &err))) {
			T_CHECK(0, "%s: %s", what, err.msg);
			goto next;
		}
		struct ho_plan *h = ho_plan_new(p->n);

		ho_plan_heft(p, h, NULL);
		{
			struct ho_sim *s = ho_sim_new(p);
			struct ho_eval hev;
			double dec = check_decode(p, h, what);

			ho_sim_eval(s, h->assign, h->order, NULL, &hev, NULL);
			printf("  %s: HEFT %.3f ms, its order decoded under contention %.3f ms\n",
			       what, hev.obj[HO_OBJ_LATENCY] * 1e3, dec * 1e3);
			ho_sim_free(s);
		}
		struct ho_front *f = search(p, obj, 42, 2, h, 25),
				*f2 = search(p, obj, 42, 2, h, 25);

		if (f && f2) {
			check_front(p, f, obj, what);
			T_CHECK(same_front(p, f, f2), "%s: same seed gave different fronts", what);
			printf("  %s: %u tasks, front of %u, fastest %.3f ms\n", what, p->n, f->n,
			       f->sol[0].ev.obj[HO_OBJ_LATENCY] * 1e3);
		}
		/* Impossible: a latency limit of a nanosecond. */
		{
			struct ho_search_opts o;
			struct ho_front *fi = NULL;

			ho_search_defaults(&o);
			o.population = 16;
			o.generations = 3;
			o.constraints.max_latency = 1e-9;
			T_CHECK(ho_search(p, &o, &fi, &err) == 0, "%s", err.msg);
			T_CHECK(fi && fi->n && fi->sol[0].ev.violation > 0,
				"%s: impossible constraint met?", what);
			ho_front_free(fi);
		}
		ho_front_free(f);
		ho_front_free(f2);
		ho_plan_free(h);
	next:
		ho_problem_free(p);
		ho_box_free(box);
		ho_graph_free(g);
	}
}

/* Member sol's error as the sum of the sensitivities of its tasks that ran their own kernel
 * in a reduced precision on a device that offers it; and how many did. */
static double plan_error(const struct ho_problem *p, const struct ho_solution *sol,
			 uint32_t *reduced)
{
	struct ho_sim *s = ho_sim_new(p);
	struct ho_timeline *tl = ho_timeline_new(p);
	struct ho_eval ev;
	double sum = 0;

	*reduced = 0;
	ho_sim_precision(s, sol->prec);
	ho_sim_eval(s, sol->assign, sol->order, NULL, &ev, tl);
	for (uint32_t t = 0; t < p->n; t++) {
		uint32_t q = sol->prec[t], j = sol->assign[t];
		bool offered = q && p->prec_comp[((size_t)t * p->d + j) * p->n_prec + q] > 0;

		if (offered && tl->how[t] == HO_TASK_RAN) {
			sum += p->prec_error[(size_t)t * p->n_prec + q];
			(*reduced)++;
		}
	}
	ho_timeline_free(tl);
	ho_sim_free(s);
	return sum;
}

/*
 * Precision as a decision: resnet18 on a CPU and an emulated accelerator, the CPU's
 * convolutions 1.5x faster in bf16 and 2.5x in int8, each with a sensitivity of its own,
 * the accelerator offering neither.  Every member of the front keeps the estimated error
 * within the budget, and that error is the sum of the reduced tasks' sensitivities; the
 * fastest is at least as fast as HEFT's plan in float32 and in each single precision that
 * fits; a budget below every sensitivity leaves every task in float32.
 */
static void precisions(void)
{
	static const char *const names[] = {"fp32", "bf16", "int8"};
	char path[4096];
	struct ho_graph *g = NULL;
	struct ho_box *box = NULL;
	struct ho_problem *p = NULL;
	struct ho_error err;

	if (t_model_path(path, sizeof(path), "resnet18.onnx")) {
		t_model_skipped("resnet18.onnx");
		return;
	}
	if (load_problem(path, "input=1x3x224x224", "boxes/this-machine-cpu-emu.json", &g, &box, &p,
			 &err)) {
		T_CHECK(0, "precisions: %s", err.msg);
		goto out;
	}
	double *speedup = calloc((size_t)p->n * p->d * 3, sizeof(double)),
	       *error = calloc((size_t)p->n * 3, sizeof(double));

	for (uint32_t t = 0; t < p->n; t++) {
		bool conv = !strcmp(p->task_op[t], "Conv");

		speedup[((size_t)t * p->d + 0) * 3 + 1] = conv ? 1.5 : 0;
		speedup[((size_t)t * p->d + 0) * 3 + 2] = conv ? 2.5 : 0;
		error[t * 3 + 1] = conv ? 1e-4 * (1 + t % 5) : -1;
		error[t * 3 + 2] = conv ? 1e-3 * (1 + t % 3) : -1;
	}
	T_CHECK(ho_problem_set_precisions(p, 1, names, speedup, error, NULL, &err) == -EINVAL,
		"precisions: float32 alone accepted as a choice");
	T_CHECK(ho_problem_set_precisions(p, 3, names, speedup, error, NULL, &err) == 0,
		"precisions: %s", err.msg);
	T_CHECK(ho_problem_set_precisions(p, 3, names, speedup, error, NULL, &err) == -EEXIST,
		"precisions: set twice");
	struct ho_plan *h = ho_plan_new(p->n);
	struct ho_sim *s = ho_sim_new(p);
	uint8_t *uniform = calloc(p->n, 1);
	uint32_t obj = 1u << HO_OBJ_LATENCY | 1u << HO_OBJ_ERROR;
	const double budget = 5e-3;
	struct ho_eval base[3];

	ho_plan_heft(p, h, NULL);
	for (uint32_t q = 0; q < 3; q++) { /* HEFT's plan with every CPU convolution in q */
		for (uint32_t t = 0; t < p->n; t++)
			uniform[t] = error[t * 3 + q] >= 0 ? (uint8_t)q : 0;
		ho_sim_precision(s, uniform);
		ho_sim_eval(s, h->assign, h->order, NULL, &base[q], NULL);
	}
	for (int tight = 0; tight < 2; tight++) {
		struct ho_search_opts o;
		struct ho_front *f = NULL;
		const struct ho_plan *seeds[1] = {h};
		uint32_t most = 0;

		ho_search_defaults(&o);
		o.population = 48;
		o.generations = 30;
		o.threads = 2;
		o.objectives = obj;
		o.seeds = seeds;
		o.n_seeds = 1;
		o.constraints.max_error = tight ? 5e-5 : budget;
		T_CHECK(ho_search(p, &o, &f, &err) == 0, "precisions: %s", err.msg);
		if (!f)
			continue;
		check_front(p, f, obj, "precisions");
		for (uint32_t i = 0; i < f->n; i++) {
			uint32_t reduced;
			double e = plan_error(p, &f->sol[i], &reduced);

			T_CHECK(f->sol[i].ev.violation == 0 &&
				    f->sol[i].ev.obj[HO_OBJ_ERROR] <= o.constraints.max_error,
				"precisions: member %u error %g over %g", i,
				f->sol[i].ev.obj[HO_OBJ_ERROR], o.constraints.max_error);
			T_CHECK(fabs(e - f->sol[i].ev.obj[HO_OBJ_ERROR]) < 1e-12,
				"precisions: member %u error %g, its tasks' sum %g", i,
				f->sol[i].ev.obj[HO_OBJ_ERROR], e);
			most = reduced > most ? reduced : most;
		}
		if (tight) {
			T_CHECK(most == 0, "precisions: %u tasks reduced under a budget below each",
				most);
		} else {
			T_CHECK(most > 0, "precisions: the search reduced no task");
			for (uint32_t q = 0; q < 3; q++)
				T_CHECK(
				    base[q].obj[HO_OBJ_ERROR] > budget ||
					f->sol[0].ev.obj[HO_OBJ_LATENCY] <=
					    base[q].obj[HO_OBJ_LATENCY],
				    "precisions: fastest %g ms, HEFT all %s %g ms within budget",
				    f->sol[0].ev.obj[HO_OBJ_LATENCY] * 1e3, names[q],
				    base[q].obj[HO_OBJ_LATENCY] * 1e3);
			printf(
			    "  precisions: HEFT float32 %.3f ms, bf16 %.3f ms (error %.1e), int8 "
			    "%.3f ms (%.1e); front of %u, fastest %.3f ms (error %.1e, %u tasks "
			    "reduced at most)\n",
			    base[0].obj[HO_OBJ_LATENCY] * 1e3, base[1].obj[HO_OBJ_LATENCY] * 1e3,
			    base[1].obj[HO_OBJ_ERROR], base[2].obj[HO_OBJ_LATENCY] * 1e3,
			    base[2].obj[HO_OBJ_ERROR], f->n, f->sol[0].ev.obj[HO_OBJ_LATENCY] * 1e3,
			    f->sol[0].ev.obj[HO_OBJ_ERROR], most);
		}
		ho_front_free(f);
	}
	free(uniform);
	ho_sim_free(s);
	ho_plan_free(h);
	free(speedup);
	free(error);
out:
	ho_problem_free(p);
	ho_box_free(box);
	ho_graph_free(g);
}

int main(void)
{
	random_dags();
	if (t_models_dir()) {
		real_models();
		precisions();
	}
	return t_failures ? 1 : 0;
}
