// SPDX-License-Identifier: MIT
/*
 * The profile: this machine as heteroopt probe measured it, read and
 * checked against its box, and what it says a node or a copy costs.
 *
 * Format (written by heteroopt probe; Documentation/schedule-format.md):
 *   {"box": "name", "machine": {...}, "devices": {"cpu0": {"launch_us": 1.5,
 *     "peak_gflops": {"float32": 95.1}, "mem_bw_gbps": 11.2,
 *     "kernel_models": {"conv": {"fixed_us": 2, "gflops": 110, "gbps": 30}},
 *     "families": {"Conv float32 w=64x64x3x3 ...": [[work, us], ...]},
 *     "op_efficiency": {"Conv": 0.55}, "node_us": {"/conv1/Conv": 812.0}}},
 *    "links": [{"a": "cpu0", "b": "cpu1", "latency_us": 2, "gbps": 40}],
 *    "interference": [{"device": "cpu0", "beside": "cpu1", "memory": 1.6, "compute": 1}]}
 * A node's time on a device: its node_us; else its family's measured points,
 * scaled by its work between them; else its class's fitted model (then the
 * device's launch_us); else nothing, and the cost model's roofline of the
 * device's figures (the profile's where it measured them) decides.
 */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "box_priv.h"

struct ho_class_model {
	bool set;
	double fixed, rate, bw; /* s, FLOP/s, bytes/s (0: no such term) */
	uint32_t block;		/* output channels done in blocks of this many */
};

struct ho_profile_dev {
	double peak_flops[HO_DT_COUNT]; /* 0: keep the box's */
	double mem_bw, launch;		/* < 0: keep the box's */
	double scale; /* measured kernels' times, stretched to whole runs (>= 1) */
	json_t *op_eff, *node_time, *families; /* borrowed from root */
	json_t *bw_by_size; /* [{bytes, gbps}]: the streaming rate by working set */
	double peak_bytes;  /* the working set it peaks at; past it, caches are left */
	double cold_bw;	    /* bytes/s at its largest working set, past the peak (0: none) */
	json_t *post_op;    /* op type: ns per element it adds fused into a kernel */
	double relayout_bw; /* a tensor's bytes/s turned channels-last or back (0: unmeasured) */
	json_t *speedup;    /* precision: kernel class: how many times faster than float32 */
	struct ho_class_model model[HO_KC_COUNT]; /* kernel_models */
};

struct ho_profile {
	json_t *root;
	char path[256]; /* for messages about it found later (node_us naming no node) */
	uint32_t n;
	struct ho_profile_dev dev[HO_MAX_DEVICES];
	double link_lat[HO_MAX_DEVICES][HO_MAX_DEVICES]; /* s, < 0: the box's */
	double link_bw[HO_MAX_DEVICES][HO_MAX_DEVICES];	 /* bytes/s, <= 0: the box's */
	/* bytes/s a device reads another's fresh tensor at in place; <= 0: free */
	double link_handoff_bw[HO_MAX_DEVICES][HO_MAX_DEVICES];
	double slow[2][HO_MAX_DEVICES]
		   [HO_MAX_DEVICES]; /* memory, compute: work on i while j runs */
};

void ho_profile_free(struct ho_profile *prof)
{
	if (!prof)
		return;
	json_decref(prof->root);
	free(prof);
}

/* x, the value at a device's key: it must be a number > 0 (>= 0 where zero_ok). */
static int ho_profile_number(const char *path, const char *dev, const char *key, json_t *x,
			     bool zero_ok, double *out, struct ho_error *err)
{
	double v = json_number_value(x);

	if (!json_is_number(x) || !(zero_ok ? v >= 0 : v > 0))
		return ho_err(err, -EINVAL, "%s: devices.%s.%s must be a number %s 0", path, dev,
			      key, zero_ok ? ">=" : ">");
	*out = v;
	return 0;
}

/* precision_speedup: {precision: {kernel class: [[work, times faster than float32], ...]}},
 * each number > 0. */
static int ho_profile_speedups(const char *path, const char *dev, json_t *v, struct ho_error *err)
{
	const char *prec, *cls;
	json_t *m, *x;

	if (v && !json_is_object(v))
		return ho_err(err, -EINVAL,
			      "%s: devices.%s.precision_speedup must map precisions to classes",
			      path, dev);
	json_object_foreach(v, prec, m)
	{
		if (!json_is_object(m))
			return ho_err(err, -EINVAL,
				      "%s: devices.%s.precision_speedup.%s must map kernel classes "
				      "to speed-ups",
				      path, dev, prec);
		json_object_foreach(m, cls, x)
		{
			int kc = ho_kernel_class_find(cls);
			bool ok = json_is_array(x) && json_array_size(x);
			size_t i;
			json_t *pt;

			json_array_foreach(x, i, pt) for (size_t k = 0; k < 2; k++)
			{
				double n = json_number_value(json_array_get(pt, k));

				ok &= json_array_size(pt) == 2 &&
				      json_is_number(json_array_get(pt, k)) && n > 0 && isfinite(n);
			}
			if (kc < 0 || !ok)
				return ho_err(err, -EINVAL,
					      "%s: devices.%s.precision_speedup.%s.%s: %s", path,
					      dev, prec, cls,
					      kc < 0 ? "not a kernel class"
						     : "must be [[work, speed-up], ...], each > 0");
		}
	}
	return 0;
}

/*
 * One device's entry.  Every figure is checked: a profile replaces the box's
 * figures, and a negative time or a zero rate would give schedules that
 * cannot be run as predicted, with no word of why.
 */
static const char *const ho_profile_keys[] = {
    "box",     "box_file", "description",  "source",	  "machine", "probe",
    "devices", "links",	   "interference", "calibration", NULL};
static const char *const ho_profile_dev_keys[] = {"peak_gflops",
						  "mem_bw_gbps",
						  "launch_us",
						  "op_efficiency",
						  "node_us",
						  "source",
						  "kernel_models",
						  "families",
						  "dispatch_us",
						  "bandwidth_by_size",
						  "bandwidth_by_stride",
						  "sweep",
						  "models",
						  "kernel_scale",
						  "post_op_ns",
						  "relayout_gbps",
						  "precision_speedup",
						  NULL};
static const char *const ho_profile_model_keys[] = {"fixed_us", "gflops",    "gbps", "block",
						    "points",	"fit_error", NULL};
static const char *const ho_profile_link_keys[] = {
    "a", "b", "latency_us", "gbps", "handoff_gbps", "copies", NULL};
static const char *const ho_profile_slow_keys[] = {"device", "beside", "memory", "compute", NULL};

/* The streaming rate the probe saw at a working set of b bytes: log-log between sizes. */
static double ho_bw_at(json_t *curve, double b)
{
	double lo_b = 0, lo_r = 0, hi_b = INFINITY, hi_r = 0;
	size_t i;
	json_t *x;

	json_array_foreach(curve, i, x)
	{
		double xb = json_number_value(json_object_get(x, "bytes")),
		       xr = json_number_value(json_object_get(x, "gbps"));

		if (xb <= b && xb >= lo_b)
			lo_b = xb, lo_r = xr;
		if (xb >= b && xb < hi_b)
			hi_b = xb, hi_r = xr;
	}
	if (lo_r <= 0 || hi_r <= 0 || hi_b <= lo_b)
		return lo_r > 0 ? lo_r : hi_r;
	return exp(log(lo_r) +
		   (log(hi_r) - log(lo_r)) * (log(b) - log(lo_b)) / (log(hi_b) - log(lo_b)));
}

/*
 * The working set the curve streams fastest at: below it kernels are bound by
 * their launch, past it by the caches they leave; 0 without a curve.
 */
static double ho_bw_peak_bytes(json_t *curve)
{
	double peak_b = 0, peak_r = 0;
	size_t i;
	json_t *x;

	json_array_foreach(curve, i, x)
	{
		double xr = json_number_value(json_object_get(x, "gbps"));

		if (xr > peak_r) {
			peak_r = xr;
			peak_b = json_number_value(json_object_get(x, "bytes"));
		}
	}
	return peak_b;
}

/* kernel_models: per class, a fitted model; every figure a number >= 0. */
static int ho_profile_models(const char *path, const char *dev, json_t *v,
			     struct ho_profile_dev *pd, struct ho_error *err)
{
	const char *key;
	json_t *m;
	char what[320];

	if (!json_is_object(v))
		return ho_err(err, -EINVAL,
			      "%s: devices.%s.kernel_models must map classes to models", path, dev);
	json_object_foreach(v, key, m)
	{
		int kc = ho_kernel_class_find(key);
		struct ho_class_model *cm = &pd->model[kc < 0 ? 0 : kc];
		double x[3];
		const char *const fields[3] = {"fixed_us", "gflops", "gbps"};

		if (kc < 0)
			return ho_err(err, -EINVAL,
				      "%s: devices.%s.kernel_models.%s: not a kernel class", path,
				      dev, key);
		snprintf(what, sizeof(what), "%s: devices.%s.kernel_models.%s", path, dev, key);
		if (!json_is_object(m))
			return ho_err(err, -EINVAL, "%s must be an object", what);
		if (ho_json_known_keys(m, what, ho_profile_model_keys, err))
			return err->code;
		for (int f = 0; f < 3; f++) {
			json_t *n = json_object_get(m, fields[f]);

			if (!json_is_number(n) || !(json_number_value(n) >= 0) ||
			    json_number_value(n) > 1e15)
				return ho_err(err, -EINVAL, "%s.%s must be a number >= 0", what,
					      fields[f]);
			x[f] = json_number_value(n);
		}
		if (x[0] == 0 && x[1] == 0 && x[2] == 0)
			return ho_err(err, -EINVAL, "%s predicts no time at all", what);
		json_t *b = json_object_get(m, "block");

		if (b && (!json_is_integer(b) || json_integer_value(b) < 1 ||
			  json_integer_value(b) > 256))
			return ho_err(err, -EINVAL, "%s.block must be a whole number from 1 to 256",
				      what);
		*cm = (struct ho_class_model){true, x[0] * 1e-6, x[1] * 1e9, x[2] * 1e9,
					      b ? (uint32_t)json_integer_value(b) : 1};
	}
	return 0;
}

/* families: per key, [work, us] points of increasing work, both > 0. */
static int ho_profile_families(const char *path, const char *dev, json_t *v, struct ho_error *err)
{
	const char *key;
	json_t *pts;

	if (!json_is_object(v))
		return ho_err(err, -EINVAL, "%s: devices.%s.families must map kernels to points",
			      path, dev);
	json_object_foreach(v, key, pts)
	{
		double last = 0;
		size_t i;
		json_t *pt;

		if (!json_is_array(pts) || !json_array_size(pts))
			return ho_err(
			    err, -EINVAL,
			    "%s: devices.%s.families[\"%s\"] must be a list of [work, us]", path,
			    dev, key);
		json_array_foreach(pts, i, pt)
		{
			double w = json_number_value(json_array_get(pt, 0)),
			       t = json_number_value(json_array_get(pt, 1));

			if (json_array_size(pt) != 2 || !json_is_number(json_array_get(pt, 0)) ||
			    !json_is_number(json_array_get(pt, 1)) || !(w > 0) || !(t > 0) ||
			    w < last || w > 1e18 || t > 1e12)
				return ho_err(
				    err, -EINVAL,
				    "%s: devices.%s.families[\"%s\"][%zu] must be [work, us], "
				    "both > 0, in increasing work",
				    path, dev, key, i);
			last = w;
		}
	}
	return 0;
}

static int ho_profile_device(const char *path, const char *dev, json_t *v,
			     struct ho_profile_dev *pd, struct ho_error *err)
{
	json_t *peak = json_object_get(v, "peak_gflops"), *x;
	const char *key;
	char what[320];
	double val;
	int ret;

	snprintf(what, sizeof(what), "%s: devices.%s", path, dev);
	if (ho_json_known_keys(v, what, ho_profile_dev_keys, err))
		return err->code;

	if (peak && !json_is_object(peak))
		return ho_err(err, -EINVAL, "%s: devices.%s.peak_gflops must map types to rates",
			      path, dev);
	json_object_foreach(peak, key, x)
	{
		int k = 1;

		while (k < HO_DT_COUNT && strcmp(ho_dtype_name(k), key))
			k++;
		if (k == HO_DT_COUNT)
			return ho_err(err, -EINVAL, "%s: devices.%s.peak_gflops: unknown type '%s'",
				      path, dev, key);
		snprintf(what, sizeof(what), "peak_gflops.%s", key);
		if (ho_profile_number(path, dev, what, x, false, &val, err))
			return err->code;
		pd->peak_flops[k] = val * 1e9;
	}
	if ((x = json_object_get(v, "mem_bw_gbps"))) {
		if (ho_profile_number(path, dev, "mem_bw_gbps", x, false, &val, err))
			return err->code;
		pd->mem_bw = val * 1e9;
	}
	if ((x = json_object_get(v, "launch_us"))) {
		if (ho_profile_number(path, dev, "launch_us", x, true, &val, err))
			return err->code;
		pd->launch = val * 1e-6;
	}
	pd->op_eff = json_object_get(v, "op_efficiency");
	if (pd->op_eff && !json_is_object(pd->op_eff))
		return ho_err(err, -EINVAL,
			      "%s: devices.%s.op_efficiency must map op types to "
			      "efficiencies",
			      path, dev);
	json_object_foreach(pd->op_eff, key, x)
	{
		if (!ho_op_known(key))
			return ho_err(err, -EINVAL,
				      "%s: devices.%s.op_efficiency.%s: not an operator HeteroOpt "
				      "knows",
				      path, dev, key);
		if (!json_is_number(x) || !(json_number_value(x) > 0 && json_number_value(x) <= 1))
			return ho_err(err, -EINVAL,
				      "%s: devices.%s.op_efficiency.%s must be in (0, 1]", path,
				      dev, key);
	}
	pd->scale = 1;
	if ((x = json_object_get(v, "kernel_scale"))) {
		if (!json_is_number(x) ||
		    !(json_number_value(x) >= 1 && json_number_value(x) <= 10))
			return ho_err(err, -EINVAL,
				      "%s: devices.%s.kernel_scale must be from 1 to 10", path,
				      dev);
		pd->scale = json_number_value(x);
	}
	if ((x = json_object_get(v, "kernel_models")) && ho_profile_models(path, dev, x, pd, err))
		return err->code;
	pd->families = json_object_get(v, "families");
	if (pd->families && ho_profile_families(path, dev, pd->families, err))
		return err->code;
	/* what the probe saw, kept for people: only its shape is checked */
	{
		static const char *const kept[] = {"bandwidth_by_size", "bandwidth_by_stride",
						   "sweep"};

		for (int k = 0; k < 3; k++)
			if ((x = json_object_get(v, kept[k])) && !json_is_array(x))
				return ho_err(err, -EINVAL, "%s: devices.%s.%s must be a list",
					      path, dev, kept[k]);
		size_t i;

		pd->bw_by_size = json_object_get(v, "bandwidth_by_size");
		json_array_foreach(pd->bw_by_size, i, x)
		{
			json_t *b = json_object_get(x, "bytes"), *r = json_object_get(x, "gbps");

			if (!json_is_object(x) || json_object_size(x) != 2 || !json_is_number(b) ||
			    !json_is_number(r) || json_number_value(b) <= 0 ||
			    json_number_value(r) <= 0)
				return ho_err(err, -EINVAL,
					      "%s: devices.%s.bandwidth_by_size[%zu] must be "
					      "{\"bytes\": > 0, \"gbps\": > 0}",
					      path, dev, i);
		}
		pd->peak_bytes = ho_bw_peak_bytes(pd->bw_by_size);
		/* a curve that ends at its peak never left the caches: no cold rate */
		if (ho_bw_at(pd->bw_by_size, INFINITY) < ho_bw_at(pd->bw_by_size, pd->peak_bytes))
			pd->cold_bw = ho_bw_at(pd->bw_by_size, INFINITY) * 1e9;
		if ((x = json_object_get(v, "dispatch_us")) && !json_is_object(x))
			return ho_err(err, -EINVAL, "%s: devices.%s.dispatch_us must be an object",
				      path, dev);
	}
	if ((x = json_object_get(v, "relayout_gbps"))) {
		if (ho_profile_number(path, dev, "relayout_gbps", x, false, &val, err))
			return err->code;
		pd->relayout_bw = val * 1e9;
	}
	pd->post_op = json_object_get(v, "post_op_ns");
	if (pd->post_op && !json_is_object(pd->post_op))
		return ho_err(err, -EINVAL, "%s: devices.%s.post_op_ns must map op types to times",
			      path, dev);
	json_object_foreach(pd->post_op, key, x)
	{
		if (!ho_op_is_post_op(key))
			return ho_err(err, -EINVAL,
				      "%s: devices.%s.post_op_ns.%s: not an operator fused as a "
				      "post-op",
				      path, dev, key);
		snprintf(what, sizeof(what), "post_op_ns.%s", key);
		if (ho_profile_number(path, dev, what, x, true, &val, err))
			return err->code;
	}
	if ((ret = ho_profile_speedups(path, dev, json_object_get(v, "precision_speedup"), err)))
		return ret;
	pd->speedup = json_object_get(v, "precision_speedup");
	pd->node_time = json_object_get(v, "node_us");
	if (pd->node_time && !json_is_object(pd->node_time))
		return ho_err(err, -EINVAL, "%s: devices.%s.node_us must map node names to times",
			      path, dev);
	json_object_foreach(pd->node_time, key, x)
	{
		snprintf(what, sizeof(what), "node_us.%s", key);
		if (ho_profile_number(path, dev, what, x, true, &val, err))
			return err->code;
	}
	return 0;
}

/* The device of box named by obj's key, or an error naming the entry. */
static int ho_profile_pair_dev(const struct ho_profile *prof, const struct ho_box *box, json_t *obj,
			       const char *key, const char *what, struct ho_error *err)
{
	const char *name = json_string_value(json_object_get(obj, key));
	int d = name ? ho_box_device(box, name) : -1;

	if (d < 0)
		return ho_err(err, -EINVAL, "%s: %s.%s must name a device of box '%s'", prof->path,
			      what, key, box->name);
	return d;
}

/* links and interference: measured between pairs of the box's devices. */
static int ho_profile_pairs(struct ho_profile *prof, const struct ho_box *box, struct ho_error *err)
{
	json_t *links = json_object_get(prof->root, "links"),
	       *slow = json_object_get(prof->root, "interference"), *v;
	char what[64];
	size_t i;

	for (uint32_t a = 0; a < HO_MAX_DEVICES; a++)
		for (uint32_t b = 0; b < HO_MAX_DEVICES; b++) {
			prof->link_lat[a][b] = -1;
			prof->link_bw[a][b] = 0;
			prof->link_handoff_bw[a][b] = 0;
			prof->slow[0][a][b] = prof->slow[1][a][b] = 1;
		}
	if ((links && !json_is_array(links)) || (slow && !json_is_array(slow)))
		return ho_err(err, -EINVAL, "%s: links and interference must be lists", prof->path);
	json_array_foreach(links, i, v)
	{
		int a, b;
		json_t *lat, *bw, *hbw, *copies, *c;
		size_t k;

		snprintf(what, sizeof(what), "links[%zu]", i);
		if (!json_is_object(v))
			return ho_err(err, -EINVAL, "%s: %s must be an object", prof->path, what);
		if (ho_json_known_keys(v, what, ho_profile_link_keys, err))
			return err->code;
		if ((a = ho_profile_pair_dev(prof, box, v, "a", what, err)) < 0 ||
		    (b = ho_profile_pair_dev(prof, box, v, "b", what, err)) < 0)
			return err->code;
		/* the copy paths measured, kept for people: only their shape is checked */
		copies = json_object_get(v, "copies");
		if (copies && !json_is_array(copies))
			return ho_err(err, -EINVAL, "%s: %s.copies must be a list", prof->path,
				      what);
		json_array_foreach(copies, k,
				   c) if (!json_is_object(c) ||
					  !json_is_string(json_object_get(
					      c, "path"))) return ho_err(err, -EINVAL,
									 "%s: %s.copies[%zu] must "
									 "be an object with a path",
									 prof->path, what, k);
		lat = json_object_get(v, "latency_us");
		bw = json_object_get(v, "gbps");
		hbw = json_object_get(v, "handoff_gbps");
		if (hbw && (!json_is_number(hbw) || !(json_number_value(hbw) > 0)))
			return ho_err(err, -EINVAL, "%s: %s: handoff_gbps must be > 0", prof->path,
				      what);
		if (hbw)
			prof->link_handoff_bw[a][b] = prof->link_handoff_bw[b][a] =
			    json_number_value(hbw) * 1e9;
		if ((lat && (!json_is_number(lat) || !(json_number_value(lat) >= 0))) ||
		    (bw && (!json_is_number(bw) || !(json_number_value(bw) > 0))))
			return ho_err(err, -EINVAL, "%s: %s: latency_us must be >= 0 and gbps > 0",
				      prof->path, what);
		if (lat)
			prof->link_lat[a][b] = prof->link_lat[b][a] = json_number_value(lat) * 1e-6;
		if (bw)
			prof->link_bw[a][b] = prof->link_bw[b][a] = json_number_value(bw) * 1e9;
	}
	json_array_foreach(slow, i, v)
	{
		int a, b;

		snprintf(what, sizeof(what), "interference[%zu]", i);
		if (!json_is_object(v))
			return ho_err(err, -EINVAL, "%s: %s must be an object", prof->path, what);
		if (ho_json_known_keys(v, what, ho_profile_slow_keys, err))
			return err->code;
		if ((a = ho_profile_pair_dev(prof, box, v, "device", what, err)) < 0 ||
		    (b = ho_profile_pair_dev(prof, box, v, "beside", what, err)) < 0)
			return err->code;
		for (int c = 0; c < 2; c++) {
			json_t *f = json_object_get(v, c ? "compute" : "memory");

			if (!json_is_number(f) || !(json_number_value(f) >= 1) ||
			    json_number_value(f) > 100)
				return ho_err(err, -EINVAL,
					      "%s: %s.%s must be a slowdown from 1 to 100",
					      prof->path, what, c ? "compute" : "memory");
			prof->slow[c][a][b] = json_number_value(f);
		}
	}
	return 0;
}

bool ho_profile_interferes(const struct ho_profile *prof)
{
	for (uint32_t c = 0; prof && c < 2; c++)
		for (uint32_t i = 0; i < prof->n; i++)
			for (uint32_t j = 0; j < prof->n; j++)
				if (prof->slow[c][i][j] > 1)
					return true;
	return false;
}

struct json_t *ho_profile_machine(const struct ho_profile *prof)
{
	return prof ? json_object_get(prof->root, "machine") : NULL;
}

/* The profile root (a reference taken) says, read and checked against box; path names it. */
static int ho_profile_from_json(json_t *root, const char *path, const struct ho_box *box,
				struct ho_profile **out, struct ho_error *err)
{
	struct ho_profile *prof;
	json_t *devs, *v, *box_name;
	const char *name;
	char what[300];

	*out = NULL;
	prof = calloc(1, sizeof(*prof));
	if (!prof)
		return ho_err(err, -ENOMEM, "out of memory");
	prof->root = json_incref(root);
	snprintf(prof->path, sizeof(prof->path), "%s", path);
	if (!json_is_object(prof->root))
		goto bad;
	snprintf(what, sizeof(what), "%s:", path);
	if (ho_json_known_keys(prof->root, what, ho_profile_keys, err))
		goto fail;
	box_name = json_object_get(prof->root, "box");
	if (box_name && !json_is_string(box_name)) {
		ho_err(err, -EINVAL, "%s: box: expected the box's name, a string", path);
		goto fail;
	}
	name = json_string_value(box_name);
	if (name && strcmp(name, box->name)) {
		ho_err(err, -EINVAL, "%s: measured on box '%s', not on '%s'", path, name,
		       box->name);
		goto fail;
	}
	prof->n = box->n_devices;
	for (uint32_t i = 0; i < box->n_devices; i++) {
		prof->dev[i].mem_bw = -1;
		prof->dev[i].launch = -1;
		prof->dev[i].scale = 1;
	}
	devs = json_object_get(prof->root, "devices");
	if (!json_is_object(devs))
		goto bad;
	json_object_foreach(devs, name, v)
	{
		int d = ho_box_device(box, name);

		if (d < 0) {
			ho_err(err, -EINVAL, "%s: devices.%s is not a device of box '%s'", path,
			       name, box->name);
			goto fail;
		}
		if (!json_is_object(v)) {
			ho_err(err, -EINVAL, "%s: devices.%s must be an object", path, name);
			goto fail;
		}
		if (ho_profile_device(path, name, v, &prof->dev[d], err))
			goto fail;
	}
	if (ho_profile_pairs(prof, box, err))
		goto fail;
	*out = prof;
	return 0;
bad:
	ho_err(err, -EINVAL, "%s: expected {\"devices\": {NAME: {...}}}", path);
fail:
	ho_profile_free(prof);
	return err->code;
}

int ho_profile_load(const char *path, const struct ho_box *box, struct ho_profile **out,
		    struct ho_error *err)
{
	json_error_t je;
	json_t *root = json_load_file(path, 0, &je);
	int ret;

	*out = NULL;
	if (!root)
		return ho_err(err, -EINVAL, "%s:%d: %s", path, je.line, je.text);
	ret = ho_profile_from_json(root, path, box, out, err);
	json_decref(root);
	return ret;
}

int ho_profile_write(struct json_t *doc, const struct ho_box *box, const char *path,
		     struct ho_error *err)
{
	struct ho_profile *prof = NULL;
	int ret = ho_profile_from_json(doc, path, box, &prof, err);

	ho_profile_free(prof);
	return ret ? ret : ho_json_write_file(doc, path, err);
}

int ho_json_write_file(struct json_t *doc, const char *path, struct ho_error *err)
{
	char tmp[4096];

	if (snprintf(tmp, sizeof(tmp), "%s.tmp.%d", path, (int)getpid()) >= (int)sizeof(tmp))
		return ho_err(err, -ENAMETOOLONG, "%s: path too long", path);
	if (json_dump_file(doc, tmp, JSON_INDENT(1) | JSON_REAL_PRECISION(6))) {
		unlink(tmp);
		return ho_err(err, -EIO, "%s: cannot write: %s", tmp, strerror(errno));
	}
	if (rename(tmp, path)) {
		int e = errno;

		unlink(tmp);
		return ho_err(err, -e, "%s: cannot rename into place: %s", path, strerror(e));
	}
	return 0;
}

/*
 * The family's next point from *i on: its work and, where several nodes had
 * that work (one layer repeated in a model, or in two models), their mean
 * time, so that a model the probe ran sums to what it measured.
 */
static void ho_family_point(json_t *pts, size_t *i, double *w, double *t)
{
	size_t n = json_array_size(pts), k = 0;
	double sum = 0;

	*w = json_number_value(json_array_get(json_array_get(pts, *i), 0));
	for (; *i < n; (*i)++, k++) {
		json_t *pt = json_array_get(pts, *i);

		if (json_number_value(json_array_get(pt, 0)) > *w * (1 + 1e-9))
			break;
		sum += json_number_value(json_array_get(pt, 1));
	}
	*t = sum / (double)k * 1e-6;
}

/*
 * A family's time at work w from its points: log-log between the two around
 * it (kernels grow a little faster or slower than their work), at the
 * nearest point's rate beyond the largest, and down to the class's fixed
 * cost below the smallest (a small kernel costs its launch, not zero).
 */
static double ho_family_time(json_t *pts, double w, double fixed)
{
	size_t i = 0, n = json_array_size(pts);
	double w0, t0, w1, t1;

	ho_family_point(pts, &i, &w0, &t0);
	if (w <= w0 * (1 + 1e-9)) {
		fixed = fixed < t0 ? fixed : 0;
		return w >= w0 ? t0 : fixed + (t0 - fixed) * w / w0;
	}
	while (i < n) {
		ho_family_point(pts, &i, &w1, &t1);
		if (w <= w1 * (1 + 1e-9)) {
			if (w >= w1)
				return t1;
			return exp(log(t0) +
				   (log(t1) - log(t0)) * (log(w) - log(w0)) / (log(w1) - log(w0)));
		}
		w0 = w1;
		t0 = t1;
	}
	return t0 * w / w0;
}

/*
 * Past a memory-bound family's largest point its time grows with its work
 * and, once the working set leaves a cache, faster: stretch the linear
 * extrapolation by how much slower the probe's element-wise streaming was at
 * this node's bytes than at the point's. The detector at 1280x736, from
 * points at 640x640: measured/predicted 1.13-1.14 without this, 0.97-1.00
 * with it (three rounds each, one profile).
 */
static double ho_family_stretch(const struct ho_profile_dev *pd, int kc, json_t *pts, double w,
				double bytes)
{
	double w_max, r, r_max;

	if (!pd->bw_by_size || !json_array_size(pts) ||
	    (kc == HO_KC_CONV || kc == HO_KC_CONV_TRANSPOSE || kc == HO_KC_CONV_3X3 ||
	     kc == HO_KC_MATMUL || kc == HO_KC_OTHER))
		return 1;
	w_max = json_number_value(json_array_get(json_array_get(pts, json_array_size(pts) - 1), 0));
	if (w <= w_max * (1 + 1e-9) || bytes <= 0)
		return 1;
	r = ho_bw_at(pd->bw_by_size, bytes);
	r_max = ho_bw_at(pd->bw_by_size, bytes * w_max / w);
	return r > 0 && r_max > r ? r_max / r : 1;
}

/*
 * What a kernel's weights cost beyond the class model, which the sweep fitted
 * with them in cache: a model reads them once a run, and a run streams more
 * than a cache holds (97 MB for ResNet-18, 229 MB for EfficientNet-B0), so
 * they come from memory, at the largest working set's rate.  ResNet-18's
 * last 3x3 convolutions (9.4 MB of weights each) ran 1.2-1.3x their class
 * model, its classifier 4x.
 */
static double ho_cold_weights(const struct ho_node *nd, const struct ho_profile_dev *pd, double bw)
{
	double w = (double)nd->feat.param_bytes;

	if (w <= 0 || pd->cold_bw <= 0 || (bw > 0 && bw <= pd->cold_bw))
		return 0;
	return w / pd->cold_bw - (bw > 0 ? w / bw : 0);
}

/*
 * Below the curve's peak (at peak bytes) its rows are bound by their
 * launch, not by a cache: there a class streams at its own rate.  Past it,
 * at the curve's rate where that is slower (the caches left).
 */
static double ho_stream_bw(json_t *curve, double peak, double bytes, double class_bw)
{
	double r;

	if (!curve || bytes <= peak)
		return class_bw;
	r = ho_bw_at(curve, bytes) * 1e9;
	return r > 0 && r < class_bw ? r : class_bw;
}

/* A class's bandwidth at a working set of bytes: past the caches as ho_stream_bw says. */
static double ho_class_bw(const struct ho_profile_dev *pd, int kc, const struct ho_class_model *cm,
			  double bytes)
{
	if (!ho_class_past_caches(kc))
		return cm->bw;
	return ho_stream_bw(pd->bw_by_size, pd->peak_bytes, bytes, cm->bw);
}

/* What the post-ops a family key names after its kernel (" +Relu +Add") cost per element. */
static double ho_chain_post_ops(const struct ho_profile_dev *pd, const char *chain)
{
	double ns = 0;

	for (const char *p = strstr(chain, " +"); p; p = strstr(p + 2, " +")) {
		char op[64];
		size_t n = strcspn(p + 2, " ");
		json_t *x;

		if (n >= sizeof(op))
			continue;
		memcpy(op, p + 2, n);
		op[n] = '\0';
		/* the probe prices a fused Swish under its Sigmoid, a HardSwish under
		 * its HardSigmoid (their Mul is free) */
		x = pd->post_op
			? json_object_get(pd->post_op, !strcmp(op, "Swish")	  ? "Sigmoid"
						       : !strcmp(op, "HardSwish") ? "HardSigmoid"
										  : op)
			: NULL;
		ns += x ? json_number_value(x) : 0;
	}
	return ns * 1e-9;
}

/*
 * A kernel measured with other post-ops fused than this node's: the family of
 * the same kernel (the key up to its " +" chain) whose post-ops cost least,
 * less what they cost; the node's own are the chain's to add (cost.c: its
 * head counts as unmeasured).  The probe's sweep fuses a Relu; a model's
 * convolution has none, a Clip or a Swish.  NULL: no such family.
 */
static json_t *ho_family_other_chain(const struct ho_profile_dev *pd, const char *key,
				     double *post_s_per_elem)
{
	const char *plus = strstr(key, " +"), *k;
	size_t base = plus ? (size_t)(plus - key) : strlen(key);
	json_t *v, *best = NULL;

	if (!pd->families)
		return NULL;
	json_object_foreach(pd->families, k, v)
	{
		double c;

		if (strncmp(k, key, base) || (k[base] && strncmp(k + base, " +", 2)) ||
		    !strcmp(k, key))
			continue;
		c = ho_chain_post_ops(pd, k + base);
		if (!best || c < *post_s_per_elem) {
			best = v;
			*post_s_per_elem = c;
		}
	}
	return best;
}

/* The class model's time for node nd. */
static double ho_class_time(const struct ho_graph *g, const struct ho_node *nd,
			    const struct ho_profile_dev *pd, int kc, double bytes)
{
	const struct ho_class_model *cm = &pd->model[kc];
	double bw = cm->bw > 0 ? ho_class_bw(pd, kc, cm, bytes) : 0;

	return cm->fixed +
	       (ho_kernel_class_convolves(kc) || kc == HO_KC_MATMUL ? ho_cold_weights(nd, pd, bw)
								    : 0) +
	       (cm->rate > 0
		    ? nd->feat.flops * ho_node_tap_share(g, nd) *
			  ho_channel_pad(ho_node_block_channels(g, nd), cm->block) *
			  ho_channel_pad(ho_node_block_in_channels(g, nd), cm->block) / cm->rate
		    : 0) +
	       (bw > 0 ? bytes / bw : 0);
}

/*
 * A compute kernel past its family's largest point (work w_max, time t_max):
 * t_max grown as the class model grows from w_max to the node's work (its
 * fixed part does not grow), not in proportion to the work; past
 * HO_FAMILY_REACH times w_max, the class model alone.  A point measured on
 * one pixel (the sweep's squeeze-excite 1x1) is mostly its launch: scaled by
 * work it priced MobileNetV2's 56x56 projection of that shape at 1.4 ms (it
 * runs in 0.08), grown as the class model 0.14.
 */
#define HO_FAMILY_REACH 64
static double ho_family_beyond(const struct ho_graph *g, const struct ho_node *nd,
			       const struct ho_profile_dev *pd, int kc, json_t *pts, double w_max,
			       double bytes)
{
	const struct ho_class_model *cm = &pd->model[kc];
	double w = ho_node_work(nd), ct = ho_class_time(g, nd, pd, kc, bytes),
	       at_max = cm->fixed + (ct - cm->fixed) * w_max / w;

	if (w > HO_FAMILY_REACH * w_max || !(ct > 0) || !(at_max > 0))
		return ct;
	return ho_family_time(pts, w_max, cm->fixed) * ct / at_max;
}

/* From what the probes measured: the node's family, else its class's model; < 0: neither. */
static double ho_cost_measured(const struct ho_graph *g, const struct ho_node *nd,
			       const struct ho_profile_dev *pd)
{
	char key[256];
	int kc = ho_node_family(g, (uint32_t)(nd - g->nodes), key, sizeof(key));
	json_t *pts = pd->families ? json_object_get(pd->families, key) : NULL;
	double bytes = (double)(nd->feat.bytes_read + nd->feat.bytes_written), post = 0;
	double w = ho_node_work(nd), w_max, t, less;
	bool compute = ho_kernel_class_convolves(kc) || kc == HO_KC_MATMUL;

	if (!pd->model[kc].set)
		kc = ho_kernel_class_fallback(kc);
	const struct ho_class_model *cm = &pd->model[kc];

	if (!pts && ho_kernel_class_convolves(kc) && nd->n_outputs && nd->outputs[0] >= 0)
		pts = ho_family_other_chain(pd, key, &post);
	if (!pts)
		return cm->set ? ho_class_time(g, nd, pd, kc, bytes) : -1;
	w_max = json_number_value(json_array_get(json_array_get(pts, json_array_size(pts) - 1), 0));
	if (compute && cm->set && w > w_max * (1 + 1e-9))
		t = ho_family_beyond(g, nd, pd, kc, pts, w_max, bytes);
	else
		t = ho_family_time(pts, w, cm->set ? cm->fixed : 0) *
		    ho_family_stretch(pd, kc, pts, w, bytes);
	less = post > 0 ? post * (double)ho_shape_numel(&g->tensors[nd->outputs[0]].shape) : 0;
	/* a post-op dearer than the kernel it sat in is a noisy figure: keep half */
	return less < t / 2 ? t - less : t / 2;
}

bool ho_profile_node_measured(const struct ho_profile *prof, const struct ho_graph *g,
			      const struct ho_node *nd, int dev)
{
	const struct ho_profile_dev *pd = prof ? &prof->dev[dev] : NULL;
	char key[256];

	if (!pd)
		return false;
	if (pd->node_time && json_object_get(pd->node_time, nd->name))
		return true;
	ho_node_family(g, (uint32_t)(nd - g->nodes), key, sizeof(key));
	return pd->families && json_object_get(pd->families, key);
}

double ho_profile_post_op(const struct ho_profile *prof, int dev, const char *op_type)
{
	json_t *x = prof && prof->dev[dev].post_op
			? json_object_get(prof->dev[dev].post_op, op_type)
			: NULL;

	return x ? json_number_value(x) * 1e-9 : 0;
}

double ho_profile_speedup(const struct ho_profile *prof, int dev, const char *precision, int kc,
			  double work)
{
	json_t *pts = prof && dev >= 0 && (uint32_t)dev < prof->n
			  ? json_object_get(json_object_get(prof->dev[dev].speedup, precision),
					    ho_kernel_class_name(kc))
			  : NULL;
	double lo_w = 0, lo_s = 0, hi_w = INFINITY, hi_s = 0;
	size_t i;
	json_t *pt;

	/* the rows either side of work, between them by log(work); past the ends, the end's */
	json_array_foreach(pts, i, pt)
	{
		double w = json_number_value(json_array_get(pt, 0)),
		       s = json_number_value(json_array_get(pt, 1));

		if (w <= work && w >= lo_w)
			lo_w = w, lo_s = s;
		if (w >= work && w < hi_w)
			hi_w = w, hi_s = s;
	}
	if (!(lo_s > 0) || !(hi_s > 0) || !(hi_w > lo_w))
		return lo_s > 0 ? lo_s : hi_s;
	return lo_s + (hi_s - lo_s) * (log(work) - log(lo_w)) / (log(hi_w) - log(lo_w));
}

double ho_profile_relayout_bw(const struct ho_profile *prof, int dev)
{
	return prof && dev >= 0 && (uint32_t)dev < prof->n ? prof->dev[dev].relayout_bw : 0;
}

double ho_profile_bw_at(const struct json_t *curve, double bytes)
{
	return curve ? ho_bw_at((json_t *)curve, bytes) : 0;
}

double ho_profile_stream_bw(const struct json_t *curve, double bytes, double class_bw)
{
	return curve ? ho_stream_bw((json_t *)curve, ho_bw_peak_bytes((json_t *)curve), bytes,
				    class_bw)
		     : class_bw;
}

/*
 * A convolution over a large map streams it as an element-wise op would:
 * the 16-channel depthwise at 640x368 of the detector at 1280x736 ran at
 * 20 GB/s where its class said 400.  A MatMul's bytes are mostly its
 * weights, which ho_cold_weights prices; OTHER has no fitted class.
 */
bool ho_class_past_caches(int kc)
{
	return kc != HO_KC_MATMUL && kc != HO_KC_OTHER;
}

/* Measured node times must name nodes of this model: a renamed one would keep the estimate. */
int ho_profile_check_nodes(const struct ho_profile *prof, const struct ho_graph *g,
			   const struct ho_box *box, struct ho_error *err)
{
	for (uint32_t d = 0; prof && d < prof->n; d++) {
		const char *key;
		json_t *v;

		json_object_foreach(prof->dev[d].node_time, key, v)
		{
			uint32_t i = 0;

			while (i < g->n_nodes && strcmp(g->nodes[i].name, key))
				i++;
			if (i == g->n_nodes)
				return ho_err(err, -EINVAL,
					      "%s: devices.%s.node_us.%s: the model has no node of "
					      "that name",
					      prof->path, box->dev[d].name, key);
		}
	}
	return 0;
}

double ho_profile_launch(const struct ho_profile *prof, const struct ho_box *box, int dev)
{
	if (prof && prof->dev[dev].launch >= 0)
		return prof->dev[dev].launch;
	return box->dev[dev].launch_overhead;
}

double ho_profile_peak(const struct ho_profile *prof, const struct ho_box *box, int dev, int dt)
{
	if (prof && prof->dev[dev].peak_flops[dt] > 0)
		return prof->dev[dev].peak_flops[dt];
	return box->dev[dev].peak_flops[dt];
}

double ho_profile_mem_bw(const struct ho_profile *prof, const struct ho_box *box, int dev)
{
	if (prof && prof->dev[dev].mem_bw > 0)
		return prof->dev[dev].mem_bw;
	return box->dev[dev].mem_bw;
}

double ho_profile_efficiency(const struct ho_profile *prof, const struct ho_box *box, int dev,
			     const char *op_type, int op_class)
{
	json_t *e =
	    prof && prof->dev[dev].op_eff ? json_object_get(prof->dev[dev].op_eff, op_type) : NULL;

	/* checked to be in (0, 1] when the profile loaded */
	return e ? json_number_value(e) : box->dev[dev].efficiency[op_class];
}

double ho_profile_node_time(const struct ho_profile *prof, const struct ho_graph *g,
			    const struct ho_node *nd, int dev, double launch)
{
	const struct ho_profile_dev *pd = prof ? &prof->dev[dev] : NULL;
	double t;

	if (!pd)
		return -1;
	if (pd->node_time) {
		json_t *v = json_object_get(pd->node_time, nd->name);

		if (json_is_number(v))
			return json_number_value(v) * 1e-6;
	}
	t = ho_cost_measured(g, nd, pd);
	return t >= 0 ? t * pd->scale + launch : -1;
}

double ho_profile_link_latency(const struct ho_profile *prof, int a, int b)
{
	return prof ? prof->link_lat[a][b] : -1;
}

double ho_profile_link_bw(const struct ho_profile *prof, int a, int b)
{
	return prof ? prof->link_bw[a][b] : 0;
}

double ho_profile_handoff_bw(const struct ho_profile *prof, int a, int b)
{
	return prof ? prof->link_handoff_bw[a][b] : 0;
}

double ho_profile_slowdown(const struct ho_profile *prof, int c, int i, int j)
{
	return prof ? prof->slow[c][i][j] : 1;
}
