// SPDX-License-Identifier: MIT
/*
 * Box model: devices and links from a JSON description (jansson), validated
 * with errors that name the offending field.  Units in the file are the ones
 * datasheets use (GFLOP/s, GB/s, GiB, pJ, W, us); the struct holds SI units.
 */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "box_priv.h"

static const char *const ho_class_keys[5] = {"compute", "memory", "movement", "control", NULL};
static const double ho_default_eff[4] = {0.6, 0.8, 0.8, 1.0};

void ho_box_free(struct ho_box *box)
{
	if (!box)
		return;
	for (uint32_t i = 0; box->dev && i < box->n_devices; i++) {
		free(box->dev[i].unsupported);
		free(box->dev[i].supported);
	}
	free(box->dev);
	free(box->links);
	free(box);
}

uint64_t ho_box_in_place(const struct ho_box *box, int dev)
{
	uint64_t mask = 0;

	for (uint32_t l = 0; l < box->n_links; l++)
		if (box->links[l].shared_memory &&
		    (box->links[l].a == dev || box->links[l].b == dev))
			mask |= 1ull
				<< (box->links[l].a == dev ? box->links[l].b : box->links[l].a);
	return mask;
}

int ho_box_device(const struct ho_box *box, const char *name)
{
	for (uint32_t i = 0; i < box->n_devices; i++)
		if (!strcmp(box->dev[i].name, name))
			return (int)i;
	return -1;
}

bool ho_box_has_energy(const struct ho_box *box)
{
	for (uint32_t i = 0; i < box->n_devices; i++)
		if (box->dev[i].energy_per_flop > 0 || box->dev[i].energy_per_byte > 0 ||
		    box->dev[i].idle_power > 0)
			return true;
	for (uint32_t l = 0; l < box->n_links; l++)
		if (box->links[l].energy_per_byte > 0)
			return true;
	return false;
}

bool ho_device_supports(const struct ho_device *d, const char *op)
{
	for (uint32_t i = 0; i < d->n_unsupported; i++)
		if (!strcmp(d->unsupported[i], op))
			return false;
	if (!d->n_supported)
		return true;
	for (uint32_t i = 0; i < d->n_supported; i++)
		if (!strcmp(d->supported[i], op))
			return true;
	return false;
}

int ho_json_known_keys(json_t *obj, const char *where, const char *const *keys,
		       struct ho_error *err)
{
	const char *key;
	json_t *v;

	json_object_foreach(obj, key, v)
	{
		char known[512] = "";
		size_t i = 0, n = 0;

		while (keys[i] && strcmp(keys[i], key))
			i++;
		if (keys[i])
			continue;
		for (i = 0; keys[i] && n < sizeof(known); i++)
			n += (size_t)snprintf(known + n, sizeof(known) - n, "%s%s", i ? ", " : "",
					      keys[i]);
		/* "devices[0] (cpu0).key", but "file.json: key" after a path */
		return ho_err(err, -EINVAL, "%s%s%s: unknown key (known: %s)", where,
			      !*where				? ""
			      : where[strlen(where) - 1] == ':' ? " "
								: ".",
			      key, known);
	}
	return 0;
}

/* The kinds of device a box may have: cpu runs on the cpu backend, the others emulated. */
static const char *const ho_device_kinds[] = {"cpu", "gpu", "npu", "fpga", "dsp", NULL};

static const char *const ho_box_keys[] = {"name",    "description", "source",
					  "host",    "mem_safety",  "small_transfer_us",
					  "devices", "links",	    NULL};
static const char *const ho_device_keys[] = {"name",
					     "kind",
					     "description",
					     "source",
					     "peak_gflops",
					     "mem_bw_gbps",
					     "mem_gib",
					     "pj_per_flop",
					     "pj_per_byte",
					     "idle_w",
					     "peak_w",
					     "launch_us",
					     "numa_node",
					     "threads",
					     "cores",
					     "pci",
					     "efficiency",
					     "unsupported_ops",
					     "supported_ops",
					     "p2p_memory",
					     "backend",
					     "alternative_to",
					     NULL};
static const char *const ho_backend_keys[] = {"name", "platform", "device", "memory", NULL};
static const char *const ho_link_keys[] = {
    "a", "b", "gbps", "latency_us", "pj_per_byte", "p2p", "shared_memory", "source", NULL};

/* Read a number field; required fields must be present and > min (or >= 0). */
static int num(json_t *obj, const char *where, const char *key, bool required, double min_excl,
	       double def, double *out, struct ho_error *err)
{
	json_t *v = json_object_get(obj, key);

	if (!v) {
		if (required)
			return ho_err(err, -EINVAL, "%s.%s is missing", where, key);
		*out = def;
		return 0;
	}
	/* 1e15 is beyond any real figure in these units, and keeps conversions defined. */
	if (!json_is_number(v) || !isfinite(json_number_value(v)) ||
	    json_number_value(v) <= min_excl || json_number_value(v) > 1e15)
		return ho_err(err, -EINVAL,
			      "%s.%s must be a number greater than %g (and at most 1e15)", where,
			      key, min_excl);
	*out = json_number_value(v);
	return 0;
}

static int name_list(json_t *arr, const char *where, char (**out)[HO_NAME_LEN], uint32_t *n,
		     struct ho_error *err)
{
	size_t i;
	json_t *v;

	*n = 0;
	*out = NULL;
	if (!arr)
		return 0;
	if (!json_is_array(arr))
		return ho_err(err, -EINVAL, "%s must be an array of op types", where);
	*out = calloc(json_array_size(arr) + 1, HO_NAME_LEN);
	if (!*out)
		return ho_err(err, -ENOMEM, "out of memory");
	json_array_foreach(arr, i, v)
	{
		if (!json_is_string(v) || strlen(json_string_value(v)) >= HO_NAME_LEN)
			return ho_err(err, -EINVAL, "%s[%zu] must be an op type name", where, i);
		if (!ho_op_known(json_string_value(v)))
			return ho_err(err, -EINVAL,
				      "%s[%zu]: '%s' is not an operator HeteroOpt knows", where, i,
				      json_string_value(v));
		snprintf((*out)[i], HO_NAME_LEN, "%s", json_string_value(v));
	}
	*n = (uint32_t)json_array_size(arr);
	return 0;
}

/* "backend": {"name": "opencl", "platform": "...", "device": "...", "memory": "device"}:
 * what runs the device. */
static int ho_parse_backend(json_t *o, const char *where, struct ho_device *d, struct ho_error *err)
{
	static const struct {
		const char *key;
		size_t off, len;
	} fields[] = {
	    {"name", offsetof(struct ho_device, backend), sizeof(d->backend)},
	    {"platform", offsetof(struct ho_device, platform), sizeof(d->platform)},
	    {"device", offsetof(struct ho_device, device), sizeof(d->device)},
	    {"memory", offsetof(struct ho_device, memory), sizeof(d->memory)},
	};
	char bwhere[96];
	int ret;

	if (!o)
		return 0;
	snprintf(bwhere, sizeof(bwhere), "%s.backend", where);
	if (!json_is_object(o))
		return ho_err(err, -EINVAL, "%s must be an object: name, platform, device, memory",
			      bwhere);
	if ((ret = ho_json_known_keys(o, bwhere, ho_backend_keys, err)))
		return ret;
	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
		json_t *v = json_object_get(o, fields[i].key);

		if (!v && i > 0)
			continue;
		if (!json_is_string(v) || strlen(json_string_value(v)) >= fields[i].len ||
		    (i == 0 && !*json_string_value(v)))
			return ho_err(err, -EINVAL, "%s.%s must be a string under %zu characters",
				      bwhere, fields[i].key, fields[i].len);
		snprintf((char *)d + fields[i].off, fields[i].len, "%s", json_string_value(v));
	}
	if (*d->memory && strcmp(d->memory, "host") && strcmp(d->memory, "device"))
		return ho_err(err, -EINVAL, "%s.memory must be \"host\" or \"device\", not \"%s\"",
			      bwhere, d->memory);
	return 0;
}

static int ho_parse_device(json_t *o, uint32_t idx, struct ho_device *d, struct ho_error *err)
{
	char where[64];
	json_t *peak, *eff, *v;
	const char *key;
	double x;
	int ret;

	size_t kind;

	snprintf(where, sizeof(where), "devices[%u]", idx);
	if (!json_is_object(o))
		return ho_err(err, -EINVAL, "%s must be an object", where);
	v = json_object_get(o, "name");
	if (!json_is_string(v) || !*json_string_value(v) ||
	    strlen(json_string_value(v)) >= HO_NAME_LEN)
		return ho_err(err, -EINVAL,
			      "%s.name must be a non-empty string under %d characters", where,
			      HO_NAME_LEN);
	snprintf(d->name, sizeof(d->name), "%s", json_string_value(v));
	snprintf(where, sizeof(where), "devices[%u] (%s)", idx, d->name);
	if ((ret = ho_json_known_keys(o, where, ho_device_keys, err)))
		return ret;
	v = json_object_get(o, "kind");
	for (kind = 0; json_is_string(v) && ho_device_kinds[kind]; kind++)
		if (!strcmp(ho_device_kinds[kind], json_string_value(v)))
			break;
	if (!json_is_string(v) || !ho_device_kinds[kind])
		return ho_err(err, -EINVAL, "%s.kind must be one of cpu, gpu, npu, fpga, dsp",
			      where);
	snprintf(d->kind, sizeof(d->kind), "%s", json_string_value(v));

	peak = json_object_get(o, "peak_gflops");
	if (!json_is_object(peak) || !json_object_size(peak))
		return ho_err(err, -EINVAL, "%s.peak_gflops must map element types to GFLOP/s",
			      where);
	json_object_foreach(peak, key, v)
	{
		int dt = -1;

		for (int k = 1; k < HO_DT_COUNT; k++)
			if (!strcmp(ho_dtype_name(k), key))
				dt = k;
		if (dt < 0)
			return ho_err(err, -EINVAL, "%s.peak_gflops: unknown element type '%s'",
				      where, key);
		if (!json_is_number(v) || json_number_value(v) < 0)
			return ho_err(err, -EINVAL, "%s.peak_gflops.%s must be a number >= 0",
				      where, key);
		d->peak_flops[dt] = json_number_value(v) * 1e9;
	}
	if ((ret = num(o, where, "mem_bw_gbps", true, 0, 0, &x, err)))
		return ret;
	d->mem_bw = x * 1e9;
	if ((ret = num(o, where, "mem_gib", true, 0, 0, &x, err)))
		return ret;
	d->mem_capacity = x * 1073741824.0;
	if ((ret = num(o, where, "pj_per_flop", false, -1e-300, 0, &x, err)))
		return ret;
	d->energy_per_flop = x * 1e-12;
	if ((ret = num(o, where, "pj_per_byte", false, -1e-300, 0, &x, err)))
		return ret;
	d->energy_per_byte = x * 1e-12;
	if ((ret = num(o, where, "idle_w", false, -1e-300, 0, &d->idle_power, err)) ||
	    (ret = num(o, where, "peak_w", false, -1e-300, 0, &d->peak_power, err)))
		return ret;
	if ((ret = num(o, where, "launch_us", false, -1e-300, 0, &x, err)))
		return ret;
	d->launch_overhead = x * 1e-6;
	if ((ret = num(o, where, "numa_node", false, -2, -1, &x, err)))
		return ret;
	if (x > 4096 || x != (int)x)
		return ho_err(err, -EINVAL, "%s.numa_node must be an integer from -1 to 4096",
			      where);
	d->numa_node = (int)x;
	if ((ret = num(o, where, "threads", false, 0, 1, &x, err)))
		return ret;
	if (x > 65536 || x != (int)x)
		return ho_err(err, -EINVAL, "%s.threads must be an integer from 1 to 65536", where);
	d->threads = (int)x;
	json_t *cores = json_object_get(o, "cores"), *core;
	size_t ci;

	if (cores && !json_is_array(cores))
		return ho_err(err, -EINVAL, "%s.cores must be a list of CPU ids", where);
	json_array_foreach(cores, ci, core)
	{
		json_int_t id = json_integer_value(core);

		if (!json_is_integer(core) || id < 0 || id >= 64 * HO_CORE_WORDS)
			return ho_err(err, -EINVAL, "%s.cores[%zu] must be a CPU id from 0 to %d",
				      where, ci, 64 * HO_CORE_WORDS - 1);
		d->cores[id / 64] |= 1ull << (id % 64);
	}
	json_t *pci = json_object_get(o, "pci");
	unsigned dom, bus, dev, fn;
	char tail;

	if (pci && (!json_is_string(pci) || sscanf(json_string_value(pci), "%4x:%2x:%2x.%1x%c",
						   &dom, &bus, &dev, &fn, &tail) != 4))
		return ho_err(err, -EINVAL, "%s.pci must be an address like 0000:03:00.0", where);
	if (pci)
		snprintf(d->pci, sizeof(d->pci), "%04x:%02x:%02x.%x", dom, bus, dev, fn);
	json_t *p2p = json_object_get(o, "p2p_memory");

	if (p2p && !json_is_boolean(p2p))
		return ho_err(err, -EINVAL, "%s.p2p_memory must be true or false", where);
	d->p2p_memory = json_is_true(p2p);
	if (d->p2p_memory && !pci)
		return ho_err(err, -EINVAL, "%s.p2p_memory: say whose, with pci", where);
	eff = json_object_get(o, "efficiency");
	if (eff && !json_is_object(eff))
		return ho_err(err, -EINVAL, "%s.efficiency must map op classes to (0, 1]", where);
	if (eff) {
		char ewhere[80];

		snprintf(ewhere, sizeof(ewhere), "%s.efficiency", where);
		if ((ret = ho_json_known_keys(eff, ewhere, ho_class_keys, err)))
			return ret;
	}
	for (int c = 0; c < 4; c++) {
		d->efficiency[c] = ho_default_eff[c];
		if (eff && (ret = num(eff, where, ho_class_keys[c], false, 0, ho_default_eff[c],
				      &d->efficiency[c], err)))
			return ret;
		if (d->efficiency[c] > 1)
			return ho_err(err, -EINVAL, "%s.efficiency.%s must be in (0, 1]", where,
				      ho_class_keys[c]);
	}
	if ((ret = ho_parse_backend(json_object_get(o, "backend"), where, d, err)))
		return ret;
	snprintf(where, sizeof(where), "devices[%u].unsupported_ops", idx);
	if ((ret = name_list(json_object_get(o, "unsupported_ops"), where, &d->unsupported,
			     &d->n_unsupported, err)))
		return ret;
	snprintf(where, sizeof(where), "devices[%u].supported_ops", idx);
	return name_list(json_object_get(o, "supported_ops"), where, &d->supported, &d->n_supported,
			 err);
}

/*
 * "alternative_to": the devices whose cores this one is, as one device (two
 * CPU devices as one of both threads): a schedule runs on it or on them,
 * never on both, since they would share the cores.
 */
static int ho_parse_alternatives(json_t *devs, struct ho_box *box, struct ho_error *err)
{
	size_t i, k;
	json_t *v, *a;

	json_array_foreach(devs, i, v)
	{
		json_t *alt = json_object_get(v, "alternative_to");

		if (!alt)
			continue;
		if (!json_is_array(alt) || json_array_size(alt) < 1)
			return ho_err(err, -EINVAL,
				      "devices[%zu] (%s).alternative_to must name devices of the "
				      "box",
				      i, box->dev[i].name);
		json_array_foreach(alt, k, a)
		{
			int d = json_is_string(a) ? ho_box_device(box, json_string_value(a)) : -1;

			if (d < 0 || d == (int)i || box->dev[d].whole_of)
				return ho_err(err, -EINVAL,
					      "devices[%zu] (%s).alternative_to[%zu]: not another "
					      "device of the box (nor one that is itself others')",
					      i, box->dev[i].name, k);
			box->dev[i].whole_of |= 1ull << d;
		}
	}
	return 0;
}

uint64_t ho_box_exclusive(const struct ho_box *box, int dev)
{
	uint64_t mask = box->dev[dev].whole_of;

	for (uint32_t i = 0; i < box->n_devices; i++)
		if (box->dev[i].whole_of >> dev & 1)
			mask |= 1ull << i;
	return mask;
}

static int ho_parse_box(json_t *root, struct ho_box *box, struct ho_error *err)
{
	json_t *devs = json_object_get(root, "devices"), *links = json_object_get(root, "links"),
	       *v;
	const char *host;
	size_t i;
	double x;
	int ret;

	if (!json_is_object(root))
		return ho_err(err, -EINVAL, "the box must be a JSON object");
	if ((ret = ho_json_known_keys(root, "", ho_box_keys, err)))
		return ret;
	v = json_object_get(root, "name");
	if (!json_is_string(v))
		return ho_err(err, -EINVAL, "name must be a string");
	snprintf(box->name, sizeof(box->name), "%s", json_string_value(v));
	if (!json_is_array(devs) || !json_array_size(devs) ||
	    json_array_size(devs) > HO_MAX_DEVICES)
		return ho_err(err, -EINVAL, "devices must be an array of 1..%d devices",
			      HO_MAX_DEVICES);
	box->n_devices = (uint32_t)json_array_size(devs);
	box->dev = calloc(box->n_devices, sizeof(*box->dev));
	if (!box->dev)
		return ho_err(err, -ENOMEM, "out of memory");
	json_array_foreach(devs, i, v)
	{
		if ((ret = ho_parse_device(v, (uint32_t)i, &box->dev[i], err)))
			return ret;
		for (size_t k = 0; k < i; k++)
			if (!strcmp(box->dev[k].name, box->dev[i].name))
				return ho_err(err, -EINVAL, "devices[%zu].name '%s' is used twice",
					      i, box->dev[i].name);
	}
	if ((ret = ho_parse_alternatives(devs, box, err)))
		return ret;
	host = json_string_value(json_object_get(root, "host"));
	if (!host)
		return ho_err(err, -EINVAL, "host must name the device whose memory stages copies");
	box->host = ho_box_device(box, host);
	if (box->host < 0)
		return ho_err(err, -EINVAL, "host '%s' is not one of the devices", host);
	if ((ret = num(root, "box", "mem_safety", false, 0, 0.85, &box->mem_safety, err)))
		return ret;
	if (box->mem_safety > 1)
		return ho_err(err, -EINVAL, "box.mem_safety must be in (0, 1]");
	if ((ret = num(root, "box", "small_transfer_us", false, -1e-300, 5, &x, err)))
		return ret;
	box->small_transfer = x * 1e-6;
	if (!json_is_array(links))
		return ho_err(err, -EINVAL, "links must be an array");
	box->n_links = (uint32_t)json_array_size(links);
	box->links = calloc(box->n_links + 1, sizeof(*box->links));
	if (!box->links)
		return ho_err(err, -ENOMEM, "out of memory");
	json_array_foreach(links, i, v)
	{
		struct ho_link *l = &box->links[i];
		const char *a = json_string_value(json_object_get(v, "a"));
		const char *b = json_string_value(json_object_get(v, "b"));
		char where[48];

		snprintf(where, sizeof(where), "links[%zu]", i);
		if (!json_is_object(v))
			return ho_err(err, -EINVAL, "%s must be an object", where);
		if ((ret = ho_json_known_keys(v, where, ho_link_keys, err)))
			return ret;
		if (!a || !b)
			return ho_err(err, -EINVAL, "%s.a and .b must be device names", where);
		if ((l->a = ho_box_device(box, a)) < 0 || (l->b = ho_box_device(box, b)) < 0)
			return ho_err(err, -EINVAL, "%s.%s: the box has no device '%s'", where,
				      l->a < 0 ? "a" : "b", l->a < 0 ? a : b);
		if (l->a == l->b)
			return ho_err(err, -EINVAL, "%s.a and .b must name two different devices",
				      where);
		json_t *shared = json_object_get(v, "shared_memory");

		if (shared && !json_is_boolean(shared))
			return ho_err(err, -EINVAL, "%s.shared_memory must be true or false",
				      where);
		l->shared_memory = json_is_true(shared);
		/* in-place reads move nothing: a bandwidth is then optional */
		if ((ret = num(v, where, "gbps", !l->shared_memory, 0, 1e6, &x, err)))
			return ret;
		l->bandwidth = x * 1e9;
		if ((ret = num(v, where, "latency_us", false, -1e-300, 0, &x, err)))
			return ret;
		l->latency = x * 1e-6;
		if ((ret = num(v, where, "pj_per_byte", false, -1e-300, 0, &x, err)))
			return ret;
		l->energy_per_byte = x * 1e-12;
		json_t *p2p = json_object_get(v, "p2p");

		if (p2p && !json_is_boolean(p2p))
			return ho_err(err, -EINVAL, "%s.p2p must be true or false", where);
		l->p2p = !p2p || json_is_true(p2p);
		/* a device that keeps its tensors in its own memory is read by copies only */
		for (int e = 0; e < 2 && l->shared_memory; e++)
			if (!strcmp(box->dev[e ? l->b : l->a].memory, "device"))
				return ho_err(err, -EINVAL,
					      "%s: shared_memory, but %s keeps its tensors in its "
					      "own memory (backend memory \"device\")",
					      where, box->dev[e ? l->b : l->a].name);
	}
	/* Every device must reach the host, or nothing can be staged to it. */
	for (uint32_t d = 0; d < box->n_devices; d++) {
		bool ok = (int)d == box->host;

		for (uint32_t k = 0; k < box->n_links && !ok; k++)
			ok = (box->links[k].a == (int)d && box->links[k].b == box->host) ||
			     (box->links[k].b == (int)d && box->links[k].a == box->host);
		if (!ok)
			return ho_err(err, -EINVAL, "devices[%u] (%s) has no link to the host '%s'",
				      d, box->dev[d].name, host);
	}
	return 0;
}

int ho_box_parse(const char *text, struct ho_box **out, struct ho_error *err)
{
	json_error_t je;
	json_t *root = json_loads(text, 0, &je);
	struct ho_box *box;
	int ret;

	*out = NULL;
	if (!root)
		return ho_err(err, -EINVAL, "line %d: %s", je.line, je.text);
	box = calloc(1, sizeof(*box));
	if (!box) {
		json_decref(root);
		return ho_err(err, -ENOMEM, "out of memory");
	}
	ret = ho_parse_box(root, box, err);
	json_decref(root);
	if (ret) {
		ho_box_free(box);
		return ret;
	}
	*out = box;
	return 0;
}

int ho_box_load(const char *path, struct ho_box **out, struct ho_error *err)
{
	json_error_t je;
	json_t *root = json_load_file(path, 0, &je);
	char *text;
	int ret;

	*out = NULL;
	if (!root)
		return ho_err(err, -EINVAL, "%s:%d: %s", path, je.line, je.text);
	text = json_dumps(root, 0);
	json_decref(root);
	if (!text)
		return ho_err(err, -ENOMEM, "out of memory");
	ret = ho_box_parse(text, out, err);
	free(text);
	if (ret) {
		char tmp[sizeof(err->msg)];

		snprintf(tmp, sizeof(tmp), "%s", err->msg);
		snprintf(err->msg, sizeof(err->msg), "%.200s: %.300s", path, tmp);
	}
	return ret;
}
