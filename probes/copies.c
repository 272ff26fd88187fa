// SPDX-License-Identifier: MIT
/*
 * The probe's pool copies between two NUMA nodes, as the runtime makes
 * them: one chain at a time by size and a burst of small ones in flight,
 * through every queue path the pool has (ump.ko's io_uring, its ioctls,
 * the fallback's copy thread); the figures a link of the profile takes.
 */
#include <errno.h>
#include <math.h>
#include <string.h>

#include <heteroopt/pool.h>

#include "probe_priv.h"

/* What a copy measurement reads of the probe. */
struct probe_copying {
	const struct ho_probe_method *m;
	const struct ho_probe_opts *o;
	struct ho_error *err;
};

/* A copy path's queue and what one measurement submits through it. */
struct probe_copy_arg {
	struct ho_pool_queue *q;
	struct ho_pool_copy c;
	unsigned int chains; /* of c each, all in flight at once */
	uint64_t submitted;  /* chains that ended well, every run counted */
};

/* Submit the chains, start them, reap them all: the time, as the runtime's copy thread sees it. */
static double probe_copy_once(void *arg)
{
	struct probe_copy_arg *a = arg;
	struct ho_pool_done done[HO_RT_COPY_DEPTH];
	unsigned int left = a->chains;
	double t0 = ho_clock_s();

	for (unsigned int i = 0; i < a->chains; i++)
		if (ho_pool_submit(a->q, &a->c, 1, i))
			return -1;
	if (ho_pool_flush(a->q))
		return -1;
	while (left) {
		int got = ho_pool_reap(a->q, done, HO_RT_COPY_DEPTH, 1);

		if (got <= 0)
			return -1;
		for (int i = 0; i < got; i++)
			if (done[i].status)
				return -1;
		left -= (unsigned int)got;
	}
	a->submitted += a->chains;
	return ho_clock_s() - t0;
}

/* One path's figures: one chain at a time by size, and a burst of small chains in flight. */
static int probe_copy_path(const struct probe_copying *pr, struct ho_pool *pool,
			   unsigned int queue_flags, const struct ho_pool_buf *a,
			   const struct ho_pool_buf *b, json_t *copies, double *gbps)
{
	struct ho_pool_queue *q;
	struct probe_copy_arg arg = {.c = {a, b, 0, 0, 0}};
	struct ho_probe_stat st;
	json_t *by_size = json_array();
	double lat = 0, best = 0, burst;
	json_int_t saturates = 0;
	int ret = ho_pool_queue_open(pool, HO_RT_COPY_DEPTH, queue_flags, &q);

	if (ret) {
		json_decref(by_size);
		return ho_err(pr->err, ret, "probe: no copy queue on %s: %s",
			      ho_pool_describe(pool), strerror(-ret));
	}
	arg.q = q;
	arg.chains = 1;
	for (size_t sz = 4096; sz <= a->size; sz *= 4) {
		struct ho_probe_method m = *pr->m;

		m.repeats = sz >= (64u << 20) ? 5 : m.repeats;
		arg.c.len = sz;
		if ((ret = ho_probe_measure(probe_copy_once, &arg, &m, pr->o->stop, &st)))
			goto fail;
		if (sz == 4096)
			lat = st.median;
		json_array_append_new(by_size, json_pack("[I, f, f]", (json_int_t)sz,
							 st.median * 1e6, sz / st.median / 1e9));
		best = fmax(best, sz / st.median);
	}
	/* the runtime keeps up to this many in flight: what one costs among them */
	arg.c.len = 4096;
	arg.chains = HO_RT_COPY_DEPTH;
	if ((ret = ho_probe_measure(probe_copy_once, &arg, pr->m, pr->o->stop, &st)))
		goto fail;
	burst = st.median / HO_RT_COPY_DEPTH;
	/* the smallest size that reaches 90% of the best bandwidth */
	for (size_t i = 0; i < json_array_size(by_size); i++) {
		json_t *row = json_array_get(by_size, i);

		if (json_number_value(json_array_get(row, 2)) * 1e9 >= 0.9 * best) {
			saturates = json_integer_value(json_array_get(row, 0));
			break;
		}
	}
	json_array_append_new(
	    copies, json_pack("{s:s, s:s, s:f, s:f, s:i, s:f, s:I, s:I, s:o}", "path",
			      ho_pool_queue_path(q), "pool", ho_pool_describe(pool), "latency_us",
			      lat * 1e6, "burst_us_per_chain", burst * 1e6, "burst_chains",
			      HO_RT_COPY_DEPTH, "gbps", best / 1e9, "saturates_at_bytes", saturates,
			      "chains", (json_int_t)arg.submitted, "by_size", by_size));
	*gbps = best;
	ho_pool_queue_close(q);
	return 0;
fail:
	ho_err(pr->err, ret, ret == -EINTR ? "probe: interrupted" : "probe: %s copy failed",
	       ho_pool_queue_path(q));
	json_decref(by_size);
	ho_pool_queue_close(q);
	return ret;
}

/*
 * Pool copies from a buffer on node na to one on nb through one pool
 * (HO_POOL_FALLBACK or not): every queue path it has, the runtime's first.
 */
static int probe_copy_pool(const struct probe_copying *pr, unsigned int flags, int na, int nb,
			   json_t *copies, double *gbps)
{
	static const size_t quick_max = 16u << 20, full_max = 256u << 20;
	size_t max = pr->o->quick ? quick_max : full_max;
	struct ho_pool *pool;
	struct ho_pool_buf a = {0}, b = {0};
	double other;
	int ret;

	if ((ret = ho_pool_open(flags, &pool)))
		return ho_err(pr->err, ret, "probe: the memory pool does not open: %s",
			      strerror(-ret));
	if ((ret = ho_pool_alloc(pool, max, na, &a)) || (ret = ho_pool_alloc(pool, max, nb, &b))) {
		ho_err(pr->err, ret, "probe: %zu MiB of pool memory on nodes %d and %d: %s",
		       max >> 20, na, nb, strerror(-ret));
		goto out;
	}
	ret = probe_copy_path(pr, pool, 0, &a, &b, copies, gbps);
	/* ump.ko's ioctls, which the runtime takes where the module has no io_uring */
	if (!ret && ho_pool_is_ump(pool) &&
	    strcmp(json_string_value(json_object_get(
		       json_array_get(copies, json_array_size(copies) - 1), "path")),
		   "ioctl"))
		ret = probe_copy_path(pr, pool, HO_POOL_QUEUE_IOCTL, &a, &b, copies, &other);
out:
	if (a.ptr)
		ho_pool_free(pool, &a);
	if (b.ptr)
		ho_pool_free(pool, &b);
	ho_pool_close(pool);
	return ret;
}

/*
 * Pool copies between nodes na and nb by path: the runtime's pool first
 * (ump.ko through io_uring, then its ioctls, where loaded), whose rate the
 * link takes; the user-space fallback beside ump.ko, to compare.
 */
int ho_probe_copies(const struct ho_probe_method *m, const struct ho_probe_opts *o, int na, int nb,
		    json_t *link, struct ho_error *err)
{
	const struct probe_copying c = {m, o, err}, *pr = &c;
	json_t *copies = json_array();
	double gbps = 0, other;
	int ret = probe_copy_pool(pr, 0, na, nb, copies, &gbps);

	if (!ret && strcmp(json_string_value(json_object_get(json_array_get(copies, 0), "path")),
			   "copy thread"))
		ret = probe_copy_pool(pr, HO_POOL_FALLBACK, na, nb, copies, &other);
	if (ret) {
		json_decref(copies);
		return ret;
	}
	json_object_set_new(link, "gbps", json_real(gbps / 1e9));
	json_object_set_new(link, "copies", copies);
	return 0;
}
