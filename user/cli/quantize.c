// SPDX-License-Identifier: MIT
/*
 * run --precision int8: the range each int8 kernel's input takes, calibrated.  A plan
 * that asks every node int8 and gives no ranges computes float32, each kernel that
 * would quantize observing its input; it runs once per calibration sample, and the
 * ranges seen go to the timed plan (ho_rt_opts.node_range).  The samples: --calibrate
 * NAME=FILE.npy, the input's shape with a leading axis of samples (or the input's own
 * shape: one; for an input of batch 1, samples along that axis too), an input not named
 * there keeping its --input; without --calibrate, the
 * run's own inputs, one sample.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "heteroopt/npy.h"
#include "heteroopt/runtime.h"

struct calib {
	const char *file;
	char name[256];
	struct ho_npy npy;
	int64_t samples;
	size_t stride; /* bytes per sample */
};

/* "[1, 3, 224, 224]" into buf. */
static const char *dims_text(const int64_t *d, int n, char *buf, size_t len)
{
	size_t at = (size_t)snprintf(buf, len, "[");

	for (int i = 0; i < n && at < len; i++)
		at +=
		    (size_t)snprintf(buf + at, len - at, "%s%lld", i ? ", " : "", (long long)d[i]);
	if (at < len)
		snprintf(buf + at, len - at, "]");
	return buf;
}

/* One --calibrate NAME=FILE.npy read and checked against the model's input. */
static int calib_read(const struct ho_graph *g, const char *arg, struct calib *c)
{
	const char *eq = strchr(arg, '=');
	struct ho_error err = {0};
	char a[96], b[96];

	if (!eq || eq == arg || !eq[1] || (size_t)(eq - arg) >= sizeof(c->name)) {
		cli_error("run: --calibrate '%s': expected NAME=FILE.npy", arg);
		return -EINVAL;
	}
	memcpy(c->name, arg, (size_t)(eq - arg));
	c->name[eq - arg] = '\0';
	c->file = eq + 1;
	int32_t t = ho_graph_find_tensor(g, c->name);
	bool input = false;

	for (uint32_t i = 0; t >= 0 && i < g->n_inputs; i++)
		input |= g->inputs[i] == t;
	if (!input) {
		cli_error("run: --calibrate %s: the model has no input '%s'", c->file, c->name);
		return -EINVAL;
	}
	if (ho_npy_read(c->file, &c->npy, &err)) {
		cli_error("run: --calibrate: %s", err.msg);
		return -EINVAL;
	}
	const struct ho_tensor *x = &g->tensors[t];
	int r = x->shape.rank, lead = c->npy.ndim - r;
	/* an input of batch 1 may have its samples along that axis */
	bool batch = !lead && r > 0 && x->shape.dim[0] == 1, same = lead == 0 || lead == 1;

	for (int i = 0; same && i < r; i++)
		same = c->npy.shape[lead + i] == x->shape.dim[i] || (batch && !i);
	if (ho_npy_dtype(c->npy.descr) != x->dtype) {
		cli_error("run: --calibrate %s: dtype %s; input '%s' is %s", c->file, c->npy.descr,
			  c->name, ho_dtype_name(x->dtype));
		return -EINVAL;
	}
	if (!same) {
		cli_error("run: --calibrate %s: shape %s is neither input '%s''s %s nor samples of "
			  "it",
			  c->file, dims_text(c->npy.shape, c->npy.ndim, a, sizeof(a)), c->name,
			  dims_text(x->shape.dim, r, b, sizeof(b)));
		return -EINVAL;
	}
	c->samples = lead || batch ? c->npy.shape[0] : 1;
	c->stride = c->samples ? c->npy.nbytes / (size_t)c->samples : 0;
	if (!c->samples) {
		cli_error("run: --calibrate %s: no samples", c->file);
		return -EINVAL;
	}
	return 0;
}

/* Sample s of every input into rt: a calibration file's, else the run's own. */
static int calib_set(struct ho_rt *rt, const struct ho_graph *g, const struct cli_inputs *in,
		     const struct calib *c, int nc, int64_t s, struct ho_error *err)
{
	for (int i = 0; i < in->n; i++) {
		const struct calib *f = NULL;
		int32_t t = ho_graph_find_tensor(g, in->name[i]);

		for (int j = 0; j < nc; j++)
			f = !strcmp(c[j].name, in->name[i]) ? &c[j] : f;
		const void *data =
		    f ? (const char *)f->npy.data + (size_t)s * f->stride : in->npy[i].data;
		int ret = ho_rt_set_input_data(rt, in->name[i], g->tensors[t].dtype,
					       g->tensors[t].shape.dim, g->tensors[t].shape.rank,
					       data, err);

		if (ret)
			return ret;
	}
	return 0;
}

int cli_int8_ranges(const struct ho_graph *g, const struct ho_rt_opts *base,
		    const struct cli_inputs *in, const struct cli_list *files, const char *rule,
		    float **ranges, struct ho_error *unsupported)
{
	struct calib c[CLI_LIST_MAX] = {0};
	struct ho_rt_opts o = *base;
	struct ho_rt *rt = NULL;
	struct ho_error err = {0};
	int64_t samples = 1;
	uint32_t seen = 0;
	int ret = 0, nc = files->n;

	*ranges = NULL;
	for (int i = 0; i < nc && !ret; i++) {
		ret = calib_read(g, files->v[i], &c[i]);
		if (!ret && i && c[i].samples != samples) {
			cli_error("run: --calibrate: %s has %lld samples, %s %lld", c[i].file,
				  (long long)c[i].samples, c[0].file, (long long)samples);
			ret = -EINVAL;
		}
		samples = ret ? samples : c[i].samples;
	}
	if (ret)
		goto out;
	o.node_range = NULL;
	o.precision = "int8";
	if (!(*ranges = malloc(2 * sizeof(float) * (g->n_nodes + 1)))) {
		ret = -ENOMEM;
		cli_error("run: out of memory");
		goto out;
	}
	ret = ho_rt_new(g, &o, &rt, &err);
	if (ret == -EOPNOTSUPP && unsupported) { /* no int8 on this CPU: the caller says so */
		*unsupported = err;
		goto out;
	}
	for (int64_t s = 0; !ret && s < samples; s++) {
		ret = calib_set(rt, g, in, c, nc, s, &err);
		if (!ret)
			ret = ho_rt_run(rt, &err);
	}
	if (ret) {
		cli_error("run: int8 calibration: %s", err.msg);
		goto out;
	}
	for (uint32_t i = 0; i < g->n_nodes; i++) {
		float *r = &(*ranges)[2 * i];

		int e = ho_rt_observed(rt, i, rule, r);

		if (e == -EINVAL) {
			cli_error("run: --int8-range '%s': one of max, mse, or pNN (a percentile "
				  "of |x|, p99.99)",
				  rule);
			ret = e;
			goto out;
		}
		if (e)
			r[0] = r[1] = NAN;
		else
			seen++;
	}
	printf("int8: %u kernels' input ranges calibrated on %lld sample%s (%s), by %s\n", seen,
	       (long long)samples, samples == 1 ? "" : "s",
	       nc ? "--calibrate" : "the run's own inputs", rule);
out:
	ho_rt_free(rt);
	for (int i = 0; i < nc; i++)
		ho_npy_free(&c[i].npy);
	if (ret) {
		free(*ranges);
		*ranges = NULL;
	}
	return ret;
}
