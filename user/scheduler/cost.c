// SPDX-License-Identifier: MIT
/*
 * Cost model: roofline compute time per (node, device), transfer time per
 * (item, route), and the measured profile that overrides them.  Also builds a
 * struct ho_problem from a graph with inferred shapes and a box.
 *
 * Profile format (written by heteroopt probe; Documentation/schedule-format.md):
 *   {"box": "name", "machine": {...}, "devices": {"cpu0": {"launch_us": 1.5,
 *     "peak_gflops": {"float32": 95.1}, "mem_bw_gbps": 11.2,
 *     "kernel_models": {"conv": {"fixed_us": 2, "gflops": 110, "gbps": 30}},
 *     "families": {"Conv float32 w=64x64x3x3 ...": [[work, us], ...]},
 *     "op_efficiency": {"Conv": 0.55}, "node_us": {"/conv1/Conv": 812.0}}},
 *    "links": [{"a": "cpu0", "b": "cpu1", "latency_us": 2, "gbps": 40}],
 *    "interference": [{"device": "cpu0", "beside": "cpu1", "memory": 1.6, "compute": 1}]}
 * A node's time on a device: its node_us; else its family's measured points,
 * scaled by its work between them; else its class's fitted model; else the
 * roofline of the device's figures.  Then the device's launch_us.
 */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sched_priv.h"

struct ho_class_model {
	bool set;
	double fixed, rate, bw; /* s, FLOP/s, bytes/s (0: no such term) */
};

struct ho_profile_dev {
	double peak_flops[HO_DT_COUNT]; /* 0: keep the box's */
	double mem_bw, launch;		/* < 0: keep the box's */
	double scale; /* measured kernels' times, stretched to whole runs (>= 1) */
	json_t *op_eff, *node_time, *families; /* borrowed from root */
	json_t *bw_by_size; /* [{bytes, gbps}]: the streaming rate by working set */
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
						  NULL};
static const char *const ho_profile_model_keys[] = {"fixed_us", "gflops",    "gbps",
						    "points",	"fit_error", NULL};
static const char *const ho_profile_link_keys[] = {
    "a", "b", "latency_us", "gbps", "handoff_gbps", "copies", NULL};
static const char *const ho_profile_slow_keys[] = {"device", "beside", "memory", "compute", NULL};

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
		*cm = (struct ho_class_model){true, x[0] * 1e-6, x[1] * 1e9, x[2] * 1e9};
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
		if ((x = json_object_get(v, "dispatch_us")) && !json_is_object(x))
			return ho_err(err, -EINVAL, "%s: devices.%s.dispatch_us must be an object",
				      path, dev);
	}
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

static bool ho_profile_interferes(const struct ho_profile *prof, uint32_t d)
{
	for (uint32_t c = 0; c < 2; c++)
		for (uint32_t i = 0; i < d; i++)
			for (uint32_t j = 0; j < d; j++)
				if (prof->slow[c][i][j] > 1)
					return true;
	return false;
}

json_t *ho_profile_machine(const struct ho_profile *prof)
{
	return prof ? json_object_get(prof->root, "machine") : NULL;
}

int ho_profile_load(const char *path, const struct ho_box *box, struct ho_profile **out,
		    struct ho_error *err)
{
	json_error_t je;
	struct ho_profile *prof;
	json_t *devs, *v, *box_name;
	const char *name;
	char what[300];

	*out = NULL;
	prof = calloc(1, sizeof(*prof));
	if (!prof)
		return ho_err(err, -ENOMEM, "out of memory");
	prof->root = json_load_file(path, 0, &je);
	if (!prof->root) {
		free(prof);
		return ho_err(err, -EINVAL, "%s:%d: %s", path, je.line, je.text);
	}
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
	    (kc == HO_KC_CONV || kc == HO_KC_MATMUL || kc == HO_KC_OTHER))
		return 1;
	w_max = json_number_value(json_array_get(json_array_get(pts, json_array_size(pts) - 1), 0));
	if (w <= w_max * (1 + 1e-9) || bytes <= 0)
		return 1;
	r = ho_bw_at(pd->bw_by_size, bytes);
	r_max = ho_bw_at(pd->bw_by_size, bytes * w_max / w);
	return r > 0 && r_max > r ? r_max / r : 1;
}

/* From what the probes measured: the node's family, else its class's model; < 0: neither. */
static double ho_cost_measured(const struct ho_graph *g, const struct ho_node *nd,
			       const struct ho_profile_dev *pd)
{
	char key[256];
	int kc = ho_node_family(g, (uint32_t)(nd - g->nodes), key, sizeof(key));
	const struct ho_class_model *cm = &pd->model[kc];
	json_t *pts = pd->families ? json_object_get(pd->families, key) : NULL;
	double bytes = (double)(nd->feat.bytes_read + nd->feat.bytes_written);

	if (pts)
		return ho_family_time(pts, ho_node_work(nd), cm->set ? cm->fixed : 0) *
		       ho_family_stretch(pd, kc, pts, ho_node_work(nd), bytes);
	if (!cm->set)
		return -1;
	return cm->fixed + (cm->rate > 0 ? nd->feat.flops / cm->rate : 0) +
	       (cm->bw > 0 ? bytes / cm->bw : 0);
}

double ho_cost_launch(const struct ho_box *box, int dev, const struct ho_profile *prof)
{
	if (prof && prof->dev[dev].launch >= 0)
		return prof->dev[dev].launch;
	return box->dev[dev].launch_overhead;
}

double ho_cost_node(const struct ho_graph *g, const struct ho_node *nd, const struct ho_box *box,
		    int dev, const struct ho_profile *prof)
{
	const struct ho_device *d = &box->dev[dev];
	const struct ho_profile_dev *pd = prof ? &prof->dev[dev] : NULL;
	const struct ho_features *f = &nd->feat;
	int dt = HO_DT_FLOAT, cls = f->op_class;
	double peak, bw, launch, eff = d->efficiency[cls];

	if (!ho_device_supports(d, nd->op_type))
		return INFINITY;
	if (pd && pd->node_time) {
		json_t *t = json_object_get(pd->node_time, nd->name);

		if (json_is_number(t))
			return json_number_value(t) * 1e-6;
	}
	launch = pd && pd->launch >= 0 ? pd->launch : d->launch_overhead;
	if (pd) {
		double t = ho_cost_measured(g, nd, pd);

		if (t >= 0)
			return t * pd->scale + launch;
	}
	if (nd->n_outputs && nd->outputs[0] >= 0 && g->tensors[nd->outputs[0]].dtype)
		dt = g->tensors[nd->outputs[0]].dtype;
	peak = pd && pd->peak_flops[dt] > 0 ? pd->peak_flops[dt] : d->peak_flops[dt];
	if (peak <= 0) /* no rate for this type: compute it at float32 speed */
		peak = pd && pd->peak_flops[HO_DT_FLOAT] > 0 ? pd->peak_flops[HO_DT_FLOAT]
							     : d->peak_flops[HO_DT_FLOAT];
	if (peak <= 0 && f->flops > 0)
		return INFINITY; /* the device has no arithmetic for this element type */
	bw = pd && pd->mem_bw > 0 ? pd->mem_bw : d->mem_bw;
	if (pd && pd->op_eff) {
		json_t *e = json_object_get(pd->op_eff, nd->op_type);

		if (e) /* checked to be in (0, 1] when the profile loaded */
			eff = json_number_value(e);
	}
	double t_compute = f->flops > 0 ? f->flops / (peak * eff) : 0;
	double t_memory = (double)(f->bytes_read + f->bytes_written) / (bw * eff);

	return (t_compute > t_memory ? t_compute : t_memory) + launch;
}

double ho_comm_time(const struct ho_problem *p, uint32_t k, int a, int b)
{
	if (a == b)
		return 0;
	if (p->item_comm)
		return p->item_comm[k];
	return p->route_fixed[a * p->d + b] + p->item_bytes[k] * p->route_inv_bw[a * p->d + b];
}

double ho_comm_mean(const struct ho_problem *p, uint32_t k)
{
	double sum = 0;

	if (p->item_comm)
		return p->item_comm[k];
	if (p->d < 2)
		return 0;
	for (uint32_t a = 0; a < p->d; a++)
		for (uint32_t b = 0; b < p->d; b++)
			if (a != b)
				sum += ho_comm_time(p, k, (int)a, (int)b);
	return sum / (double)(p->d * (p->d - 1));
}

/*
 * Route every device pair: none where the link says both address one memory
 * (the consumer reads in place), a direct P2P link, else two hops through
 * the host.
 */
static int ho_routes(struct ho_problem *p, const struct ho_box *box, const struct ho_profile *prof,
		     struct ho_error *err)
{
	uint32_t d = box->n_devices;

	p->n_links = box->n_links;
	p->link_lat = calloc(box->n_links + 1, sizeof(double));
	p->link_bw = calloc(box->n_links + 1, sizeof(double));
	p->link_epb = calloc(box->n_links + 1, sizeof(double));
	p->route = malloc((size_t)d * d * 2 * sizeof(int32_t));
	p->route_fixed = calloc((size_t)d * d, sizeof(double));
	p->route_inv_bw = calloc((size_t)d * d, sizeof(double));
	p->in_place = calloc(d, sizeof(uint64_t));
	if (!p->link_lat || !p->link_bw || !p->link_epb || !p->route || !p->route_fixed ||
	    !p->route_inv_bw || !p->in_place)
		return ho_err(err, -ENOMEM, "out of memory");
	for (uint32_t l = 0; l < box->n_links; l++) {
		p->link_lat[l] = box->links[l].latency;
		p->link_bw[l] = box->links[l].bandwidth;
		p->link_epb[l] = box->links[l].energy_per_byte;
		/* measured on this machine: the probe's hand-off and copy rate */
		if (prof && prof->link_lat[box->links[l].a][box->links[l].b] >= 0)
			p->link_lat[l] = prof->link_lat[box->links[l].a][box->links[l].b];
		if (prof && prof->link_bw[box->links[l].a][box->links[l].b] > 0)
			p->link_bw[l] = prof->link_bw[box->links[l].a][box->links[l].b];
	}
	for (uint32_t b = 0; b < d; b++)
		p->in_place[b] = ho_box_in_place(box, (int)b);
	for (uint32_t a = 0; a < d; a++)
		for (uint32_t b = 0; b < d; b++) {
			int32_t *r = &p->route[(a * d + b) * 2], direct = -1, to_host = -1,
				from_host = -1;

			r[0] = r[1] = -1;
			if (a == b)
				continue;
			for (uint32_t l = 0; l < box->n_links; l++) {
				const struct ho_link *k = &box->links[l];
				bool ab = (k->a == (int)a && k->b == (int)b) ||
					  (k->a == (int)b && k->b == (int)a);

				/* in place nothing moves, but b's worker must learn that
				 * a's task is done (the shared link's latency), and its
				 * core reads what a's wrote from a's cache (the probe's
				 * hand-off bandwidth) */
				if (ab && k->shared_memory) {
					double hbw = prof ? prof->link_handoff_bw[a][b] : 0;

					p->route_fixed[a * d + b] = p->link_lat[l];
					p->route_inv_bw[a * d + b] = hbw > 0 ? 1 / hbw : 0;
					p->handoff |= p->link_lat[l] > 0 || hbw > 0;
				}
				if (ab && (k->p2p || (int)a == box->host || (int)b == box->host))
					direct = (int32_t)l;
				if ((k->a == (int)a && k->b == box->host) ||
				    (k->b == (int)a && k->a == box->host))
					to_host = (int32_t)l;
				if ((k->a == box->host && k->b == (int)b) ||
				    (k->b == box->host && k->a == (int)b))
					from_host = (int32_t)l;
			}
			if (p->in_place[b] >> a & 1)
				continue;
			if (direct >= 0) {
				r[0] = direct;
			} else if (to_host >= 0 && from_host >= 0) {
				r[0] = to_host; /* staged: a -> host memory -> b */
				r[1] = from_host;
			} else {
				return ho_err(err, -EINVAL, "box '%s': no route from %s to %s",
					      box->name, box->dev[a].name, box->dev[b].name);
			}
			for (int h = 0; h < 2; h++)
				if (r[h] >= 0) {
					p->route_fixed[a * d + b] +=
					    p->link_lat[r[h]] + box->small_transfer;
					p->route_inv_bw[a * d + b] += 1.0 / p->link_bw[r[h]];
				}
		}
	return 0;
}

/* Op type, attributes' kinds aside, and every input/output shape and type. */
static uint64_t ho_node_signature(const struct ho_graph *g, const struct ho_node *nd)
{
	uint64_t h = ho_fingerprint_bytes(0xcbf29ce484222325ull, nd->op_type, strlen(nd->op_type));

	for (uint32_t k = 0; k < nd->n_inputs + nd->n_outputs; k++) {
		int32_t tid = k < nd->n_inputs ? nd->inputs[k] : nd->outputs[k - nd->n_inputs];
		const struct ho_tensor *t;

		if (tid < 0)
			continue;
		t = &g->tensors[tid];
		h = ho_fingerprint_bytes(h, &t->dtype, sizeof(t->dtype));
		h = ho_fingerprint_bytes(h, &t->shape.rank, sizeof(t->shape.rank));
		if (t->shape.rank > 0)
			h = ho_fingerprint_bytes(h, t->shape.dim,
						 (size_t)t->shape.rank * sizeof(t->shape.dim[0]));
		h = ho_fingerprint_bytes(h, &k, sizeof(k));
	}
	return h;
}

static bool ho_is_weight(const struct ho_tensor *t)
{
	return t->flags & HO_T_KNOWN;
}

/* n task entries, each UINT32_MAX (HO_NOT_VIEW, HO_NOT_FUSED) until set; NULL on failure. */
static uint32_t *ho_task_array(uint32_t n)
{
	uint32_t *a = malloc((n + 1) * sizeof(uint32_t));

	if (a)
		memset(a, 0xff, (n + 1) * sizeof(uint32_t));
	return a;
}

/*
 * Each view task's source and item (ho_op_is_view).  The arrays are made at
 * the first view: without any they stay NULL, and the simulator skips them.
 */
static int ho_problem_views(const struct ho_graph *g, struct ho_problem *p, const int32_t *task_of,
			    const int32_t *item_of, const int32_t *weight_of)
{
	for (uint32_t i = 0; i < g->n_nodes; i++) {
		const struct ho_node *nd = &g->nodes[i];
		int32_t t = task_of[i], in = nd->n_inputs ? nd->inputs[0] : -1;

		if (t < 0 || !ho_op_is_view(nd->op_type) || in < 0 || !nd->n_outputs ||
		    nd->outputs[0] < 0 || item_of[nd->outputs[0]] < 0 ||
		    (item_of[in] < 0 && weight_of[in] < 0))
			continue;
		if (!p->view_src &&
		    (!(p->view_src = ho_task_array(p->n)) || !(p->view_out = ho_task_array(p->n))))
			return -ENOMEM;
		p->view_src[t] = item_of[in] >= 0 ? (uint32_t)item_of[in] : HO_VIEW_OF_WEIGHT;
		p->view_out[t] = (uint32_t)item_of[nd->outputs[0]];
	}
	return 0;
}

/*
 * Each Conv's and MatMul's chain (fusion.c) as links from a task to the one
 * before it; made at the first chain, NULL without any, like the views.
 */
static int ho_problem_chains(const struct ho_graph *g, struct ho_problem *p, const int32_t *task_of,
			     const int32_t *item_of)
{
	for (uint32_t i = 0; i < g->n_nodes; i++) {
		int32_t chain[4], link[3], len = 1;

		if (task_of[i] < 0)
			continue;
		chain[0] = (int32_t)i;
		if (!strcmp(g->nodes[i].op_type, "MatMul")) {
			ho_matmul_chain(g, i, &link[0], &link[2]);
			link[1] = -1;
		} else {
			ho_conv_chain(g, i, &link[0], &link[2]);
			/* a swish post-op: its Sigmoid is a link of the chain too */
			link[1] = link[2] >= 0 ? ho_swish_sigmoid(g, link[2]) : -1;
		}
		for (int k = 0; k < 3; k++)
			if (link[k] >= 0)
				chain[len++] = link[k];
		for (int k = 1; k < len; k++) {
			int32_t prev = chain[k - 1], t = task_of[chain[k]],
				in = item_of[g->nodes[prev].outputs[0]];

			if (t < 0 || task_of[prev] < 0 || in < 0)
				break;
			if (!p->fuse_prev && (!(p->fuse_prev = ho_task_array(p->n)) ||
					      !(p->fuse_in = ho_task_array(p->n)) ||
					      !(p->fuse_head = ho_task_array(p->n))))
				return -ENOMEM;
			p->fuse_prev[t] = (uint32_t)task_of[prev];
			p->fuse_in[t] = (uint32_t)in;
			p->fuse_head[t] = (uint32_t)task_of[i];
		}
	}
	return 0;
}

/* Measured node times must name nodes of this model: a renamed one would keep the estimate. */
static int ho_profile_check_nodes(const struct ho_profile *prof, const struct ho_graph *g,
				  const struct ho_box *box, struct ho_error *err)
{
	for (uint32_t d = 0; d < prof->n; d++) {
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

int ho_problem_from_graph(const struct ho_graph *g, const struct ho_box *box,
			  const struct ho_profile *prof, struct ho_problem **out,
			  struct ho_error *err)
{
	uint32_t d = box->n_devices, n = 0, m = 0, nw = 0, ne = 0;
	int32_t *task_of = NULL, *item_of = NULL, *weight_of = NULL;
	uint32_t *ei = NULL, *et = NULL, *wfill = NULL;
	struct ho_problem *p = NULL;
	int ret = -ENOMEM;

	*out = NULL;
	if (prof && (ret = ho_profile_check_nodes(prof, g, box, err)))
		return ret;
	task_of = malloc((g->n_nodes + 1) * sizeof(int32_t));
	item_of = malloc((g->n_tensors + 1) * sizeof(int32_t));
	weight_of = malloc((g->n_tensors + 1) * sizeof(int32_t));
	if (!task_of || !item_of || !weight_of)
		goto nomem;
	for (uint32_t i = 0; i < g->n_nodes; i++)
		task_of[i] = ho_node_is_task(&g->nodes[i]) ? (int32_t)n++ : -1;
	for (uint32_t i = 0; i < g->n_tensors; i++) {
		const struct ho_tensor *t = &g->tensors[i];

		item_of[i] = weight_of[i] = -1;
		if (ho_is_weight(t)) {
			weight_of[i] = (int32_t)nw++;
		} else if ((t->producer >= 0 && task_of[t->producer] >= 0) ||
			   (t->flags & HO_T_INPUT)) {
			item_of[i] = (int32_t)m++;
		}
	}
	if (!n) {
		ret = ho_err(err, -EINVAL, "the graph has no operator left to schedule");
		goto out;
	}
	p = ho_problem_alloc(n, d);
	if (!p || ho_problem_alloc_items(p, m, false))
		goto nomem;
	p->task_sig = calloc(n + 1, sizeof(uint64_t));
	if (!p->task_sig)
		goto nomem;
	if (prof && ho_profile_interferes(prof, d)) {
		p->slowdown = malloc(2 * (size_t)d * d * sizeof(double));
		p->task_class = calloc(n + 1, 1);
		if (!p->slowdown || !p->task_class)
			goto nomem;
		for (uint32_t c = 0; c < 2; c++)
			for (uint32_t i = 0; i < d; i++)
				for (uint32_t j = 0; j < d; j++)
					p->slowdown[(c * d + i) * d + j] = prof->slow[c][i][j];
		for (uint32_t i = 0; i < g->n_nodes; i++) {
			int kc = ho_kernel_class(g, &g->nodes[i]);

			if (task_of[i] >= 0)
				p->task_class[task_of[i]] = kc == HO_KC_CONV || kc == HO_KC_MATMUL;
		}
	}
	p->box = box;
	p->contention = true;
	p->small_transfer = box->small_transfer;
	p->default_device = box->host;
	for (uint32_t k = 0; k < d; k++) {
		snprintf(p->dev_name[k], sizeof(p->dev_name[k]), "%s", box->dev[k].name);
		p->capacity[k] = box->dev[k].mem_capacity * box->mem_safety;
		p->idle_power[k] = box->dev[k].idle_power;
	}
	ret = ho_routes(p, box, prof, err);
	if (ret)
		goto out;
	for (uint32_t i = 0; i < g->n_tensors; i++) {
		const struct ho_tensor *t = &g->tensors[i];

		if (item_of[i] < 0)
			continue;
		p->item_prod[item_of[i]] =
		    t->producer >= 0 ? (uint32_t)task_of[t->producer] : HO_EXTERNAL;
		p->item_bytes[item_of[i]] = (double)t->bytes;
		p->item_pinned_out[item_of[i]] = !!(t->flags & HO_T_OUTPUT);
	}
	/* Tasks: costs, energy, and the (item, task) and (weight, task) edges. */
	for (uint32_t i = 0; i < g->n_nodes; i++) {
		const struct ho_node *nd = &g->nodes[i];

		if (task_of[i] < 0)
			continue;
		ne += nd->n_inputs + nd->n_implicit;
	}
	ei = malloc((ne + 1) * sizeof(uint32_t));
	et = malloc((ne + 1) * sizeof(uint32_t));
	p->wcons_off = calloc(nw + 2, sizeof(uint32_t));
	p->weight_bytes = calloc(nw + 1, sizeof(double));
	p->wcons = malloc((ne + 1) * sizeof(uint32_t));
	wfill = calloc(nw + 1, sizeof(uint32_t));
	if (!ei || !et || !p->wcons_off || !p->weight_bytes || !p->wcons || !wfill)
		goto nomem;
	p->n_weights = nw;
	ne = 0;
	for (uint32_t i = 0; i < g->n_nodes; i++) {
		const struct ho_node *nd = &g->nodes[i];
		int32_t t = task_of[i];

		if (t < 0)
			continue;
		snprintf(p->task_name[t], sizeof(p->task_name[t]), "%s", nd->name);
		snprintf(p->task_op[t], sizeof(p->task_op[t]), "%s", nd->op_type);
		p->task_sig[t] = ho_node_signature(g, nd);
		p->allowed[t] = 0;
		for (uint32_t k = 0; k < d; k++) {
			double c = ho_cost_node(g, nd, box, (int)k, prof);
			const struct ho_device *dv = &box->dev[k];

			p->comp[t * d + k] = c;
			p->energy[t * d + k] =
			    nd->feat.flops * dv->energy_per_flop +
			    (double)(nd->feat.bytes_read + nd->feat.bytes_written) *
				dv->energy_per_byte;
			if (isfinite(c))
				p->allowed[t] |= 1ull << k;
		}
		if (!p->allowed[t]) {
			ret =
			    ho_err(err, -EINVAL, "node '%s' (%s) can run on no device of box '%s'",
				   nd->name, nd->op_type, box->name);
			goto out;
		}
		for (uint32_t k = 0; k < nd->n_inputs + nd->n_implicit; k++) {
			int32_t tid =
			    k < nd->n_inputs ? nd->inputs[k] : nd->implicit[k - nd->n_inputs];
			bool dup = false;

			if (tid < 0)
				continue;
			for (uint32_t j = 0; j < k && !dup; j++) /* Mul(x, x): one edge */
				dup = (j < nd->n_inputs ? nd->inputs[j]
							: nd->implicit[j - nd->n_inputs]) == tid;
			if (dup)
				continue;
			if (item_of[tid] >= 0) {
				ei[ne] = (uint32_t)item_of[tid];
				et[ne++] = (uint32_t)t;
			} else if (weight_of[tid] >= 0) {
				p->wcons_off[weight_of[tid] + 2]++;
				p->weight_bytes[weight_of[tid]] = (double)g->tensors[tid].bytes;
			}
		}
	}
	/* Weight consumer CSR. */
	for (uint32_t w = 0; w < nw; w++)
		p->wcons_off[w + 2] += p->wcons_off[w + 1];
	for (uint32_t i = 0; i < g->n_nodes; i++) {
		const struct ho_node *nd = &g->nodes[i];

		if (task_of[i] < 0)
			continue;
		for (uint32_t k = 0; k < nd->n_inputs + nd->n_implicit; k++) {
			int32_t tid =
			    k < nd->n_inputs ? nd->inputs[k] : nd->implicit[k - nd->n_inputs];
			bool dup = false;

			if (tid < 0 || weight_of[tid] < 0)
				continue;
			for (uint32_t j = 0; j < k && !dup; j++)
				dup = (j < nd->n_inputs ? nd->inputs[j]
							: nd->implicit[j - nd->n_inputs]) == tid;
			if (!dup)
				p->wcons[p->wcons_off[weight_of[tid] + 1] +
					 wfill[weight_of[tid]]++] = (uint32_t)task_of[i];
		}
	}
	memmove(p->wcons_off, p->wcons_off + 1, (nw + 1) * sizeof(uint32_t));
	if (ho_problem_views(g, p, task_of, item_of, weight_of) ||
	    ho_problem_chains(g, p, task_of, item_of))
		goto nomem;
	ret = ho_problem_link(p, ne, ei, et, err);
	goto out;
nomem:
	ret = ho_err(err, -ENOMEM, "out of memory building the scheduling problem");
out:
	free(task_of);
	free(item_of);
	free(weight_of);
	free(ei);
	free(et);
	free(wfill);
	return ho_problem_publish(p, ret, out);
}
