// SPDX-License-Identifier: MIT
/*
 * heteroopt probe: measure a box's devices on this machine and write the
 * profile.  Per device: the kernel sweep (kernels.c), fitted per class
 * (fit.c); bandwidth by size and stride; dispatch overhead; the families of
 * the models named, measured in place.  Per pair of devices: the hand-off
 * from one to the other, pool copies by size, and how much each slows the
 * other when both run.  The profile is written whole or not at all.
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "probe_priv.h"

#define CLI_MODELS_MAX 64   /* models whose runs are kept */
#define PROBE_TINY 16	    /* floats: a hand-off with nothing to read */
#define PROBE_HANDOFF 65536 /* floats: a hand-off of a 256 KiB tensor, an activation's size */

struct probe {
	const struct ho_box *box;
	const struct ho_probe_opts *o;
	struct ho_probe_method m;
	uint32_t step, steps;
	uint32_t dev_steps; /* of those, one device's */
	json_t *flagged;
	struct ho_error *err;
};

static void probe_progress(struct probe *pr, const char *fmt, const char *a, const char *b)
{
	char what[160];

	pr->step++;
	if (!pr->o->progress)
		return;
	snprintf(what, sizeof(what), fmt, a, b);
	pr->o->progress(what, pr->step, pr->steps, pr->o->progress_arg);
}

static bool probe_stopped(const struct probe *pr)
{
	return pr->o->stop && *pr->o->stop;
}

/* Measure run r as the method says; a wide one is flagged in the profile. */
static int probe_time(struct probe *pr, struct ho_probe_run *r, const char *dev, const char *what,
		      struct ho_probe_stat *st)
{
	int ret = ho_probe_measure(ho_probe_run_once, r, &pr->m, pr->o->stop, st);

	if (ret == -EINTR)
		return ho_err(pr->err, ret, "probe: interrupted");
	if (ret)
		return ho_err(pr->err, ret, "probe: %s on %s failed to run", what, dev);
	if (st->flagged) {
		char line[200];

		snprintf(line, sizeof(line), "%s: %s (spread %.0f%% after %u rounds)", dev, what,
			 st->spread * 100, st->rounds);
		json_array_append_new(pr->flagged, json_string(line));
	}
	return 0;
}

static json_t *probe_stat_json(const struct ho_probe_stat *st)
{
	return json_pack("{s:f, s:f, s:i, s:b}", "us", st->median * 1e6, "spread", st->spread,
			 "dropped", (int)st->dropped, "flagged", st->flagged);
}

static void probe_family_add(json_t *families, const char *key, double work, double seconds)
{
	json_t *pts = json_object_get(families, key);

	if (!pts) {
		pts = json_array();
		json_object_set_new(families, key, pts);
	}
	json_array_append_new(pts, json_pack("[f, f]", work, seconds * 1e6));
}

/* Class fits take each family point: (flops, bytes, seconds) of its node. */
struct probe_points {
	struct ho_fit_point *v[HO_KC_COUNT];
	uint32_t n[HO_KC_COUNT], cap[HO_KC_COUNT];
};

static void probe_point(struct probe_points *pp, int kc, const struct ho_graph *g,
			const struct ho_node *nd, double s)
{
	if (pp->n[kc] == pp->cap[kc]) {
		uint32_t cap = pp->cap[kc] ? 2 * pp->cap[kc] : 32;
		struct ho_fit_point *v = realloc(pp->v[kc], cap * sizeof(*v));

		if (!v)
			return;
		pp->v[kc] = v;
		pp->cap[kc] = cap;
	}
	pp->v[kc][pp->n[kc]++] =
	    (struct ho_fit_point){.flops = nd->feat.flops * ho_node_tap_share(g, nd),
				  .bytes = (double)(nd->feat.bytes_read + nd->feat.bytes_written),
				  .seconds = s,
				  .channels = ho_node_block_channels(g, nd),
				  .in_channels = ho_node_block_in_channels(g, nd)};
}

struct probe_dev_out {
	json_t *dev, *families, *sweep, *by_size, *by_stride, *models;
	json_t *post_op, *post_op_elems; /* op: ns per element fused, from the row of most */
	double best_gflops, best_gbps, chain_us, model_us, run_us;
	double relayout_gbps; /* a tensor's bytes per second turned channels-last; 0: none */
	uint32_t model_nodes;
	struct ho_run_point runs[CLI_MODELS_MAX]; /* per model: its run beyond the kernels */
	uint32_t n_runs;
	double interfere_alone[2];	    /* memory, compute rows alone: seconds */
	struct ho_probe_speedups *speedups; /* the reduced precisions' rows (precision.c) */
};

/*
 * What a unary element-wise op costs beyond moving its bytes: its time less
 * the streaming time of its working set (the Relu rows measured before it).
 * Fused into a convolution's or MatMul's kernel it costs that, per element
 * of the output: a Swish after every convolution (EfficientNet-B0) is a
 * fifth of the model's time, and the kernel's own model knows nothing of it.
 */
static void probe_post_op(struct probe_dev_out *po, const struct ho_graph *g,
			  const struct ho_node *nd, double seconds)
{
	const struct ho_tensor *y = &g->tensors[nd->outputs[0]];
	double bytes = (double)(nd->feat.bytes_read + nd->feat.bytes_written),
	       elems = (double)ho_shape_numel(&y->shape),
	       gbps = ho_profile_bw_at(po->by_size, bytes), ns;
	json_t *seen = json_object_get(po->post_op_elems, nd->op_type);

	/* the Relu rows are the streaming they would be measured against: their
	 * residue is the curve's interpolation (0.06-0.08 ns, a third of a fused
	 * 3>32 convolution's time), not work; the sweep's convolutions fuse it */
	if (nd->n_inputs != 1 || !ho_op_is_post_op(nd->op_type) || !strcmp(nd->op_type, "Relu") ||
	    elems <= 0 || gbps <= 0 || (seen && json_number_value(seen) >= elems))
		return;
	ns = fmax(0, seconds - bytes / (gbps * 1e9)) / elems * 1e9;
	json_object_set_new(po->post_op, nd->op_type, json_real(ns));
	json_object_set_new(po->post_op_elems, nd->op_type, json_real(elems));
}

/*
 * A Sigmoid fused into a kernel is nearly always a Swish's (x * Sigmoid(x),
 * EfficientNet's activation): what the Swish adds per output element fused
 * after a convolution, the row with it less its Relu twin before it (a fused
 * Relu adds nothing measurable).  Timed alone a Sigmoid said 0.12 ns; fused as a
 * Swish it added 0.21 (a 2-core AMD EPYC), and EfficientNet-B0, priced at the
 * 0.12, ran 1.4x its prediction.
 */
static void probe_swish(struct probe_dev_out *po, double swish_ns)
{
	if (swish_ns >= 0)
		json_object_set_new(po->post_op, "Sigmoid", json_real(swish_ns));
}

static int probe_sweep(struct probe *pr, int d, struct probe_points *pp, struct probe_dev_out *po)
{
	const char *dev = pr->box->dev[d].name;
	double last_conv_s = -1, swish_ns = -1;
	const struct ho_probe_method prec_method = {
	    .warmup = 1, .repeats = 5, .rounds = 2, .max_spread = 0.10, .min_seconds = 0.02};

	for (const struct ho_probe_case *c = ho_probe_cases; c->what; c++) {
		struct ho_probe_run r;
		struct ho_graph *g;
		struct ho_probe_stat st;
		char key[256];
		int ret, kc;

		if (pr->o->quick && !c->quick)
			continue;
		probe_progress(pr, "%s: %s", dev, c->what);
		ret = ho_probe_case_open(pr->box, c, d, &r, pr->err);
		if (ret == -EOPNOTSUPP) { /* the device has no kernel for it: nothing to measure */
			ho_probe_run_close(&r);
			continue;
		}
		if (ret || (ret = probe_time(pr, &r, dev, c->what, &st))) {
			ho_probe_run_close(&r);
			return ret;
		}
		g = r.g;
		uint32_t mn = ho_probe_main_node(g);
		const struct ho_node *nd = &g->nodes[mn];
		double bytes = (double)(nd->feat.bytes_read + nd->feat.bytes_written);
		json_t *row = probe_stat_json(&st);

		kc = ho_node_family(g, mn, key, sizeof(key));
		json_object_set_new(row, "kernel", json_string(c->what));
		json_object_set_new(row, "class", json_string(ho_kernel_class_name(kc)));
		if (nd->feat.flops > 0)
			json_object_set_new(row, "gflops",
					    json_real(nd->feat.flops / st.median / 1e9));
		json_object_set_new(row, "gbps", json_real(bytes / st.median / 1e9));
		json_array_append_new(po->sweep, row);
		/* a kernel by weights again in each reduced precision it takes there: the
		 * rows of --quick, which span each class's sizes, timed as --quick times (a
		 * ratio within a few percent; all rows as the sweep's took the full probe
		 * from 57 to 94 s here) */
		if ((ho_kernel_class_convolves(kc) || kc == HO_KC_MATMUL) && c->quick &&
		    c->role != HO_PROBE_SWISH && nd->n_inputs > 1 &&
		    (g->tensors[nd->inputs[1]].flags & HO_T_INITIALIZER) &&
		    (ret = ho_probe_precisions(pr->box, c, d, kc, st.median, &prec_method,
					       pr->o->stop, po->speedups, row, pr->err))) {
			ho_probe_run_close(&r);
			return ret;
		}
		/* a family holds kernels timed in place: the sandwiched convolutions and
		 * pools here, every node of a model; a lone streaming kernel only informs
		 * its class */
		if (ho_kernel_class_convolves(kc) || kc == HO_KC_POOL)
			probe_family_add(po->families, key, ho_node_work(nd), st.median);
		/* a strided row's bytes are the floats it keeps, not the lines it
		 * reads: it informs the stride curve, not its class; a relayout, its
		 * own rate */
		if (c->role != HO_PROBE_STRIDE && c->role != HO_PROBE_RELAYOUT)
			probe_point(pp, kc, g, nd, st.median);
		if (kc == HO_KC_ELTWISE)
			probe_post_op(po, g, nd, st.median);
		if (kc == HO_KC_CONV && nd->feat.flops / st.median / 1e9 > po->best_gflops)
			po->best_gflops = nd->feat.flops / st.median / 1e9;
		if (c->role == HO_PROBE_SWISH && last_conv_s > 0)
			swish_ns = fmax(0, st.median - last_conv_s) /
				   (double)ho_shape_numel(&g->tensors[nd->outputs[0]].shape) * 1e9;
		if (kc == HO_KC_CONV)
			last_conv_s = st.median;
		if (c->role == HO_PROBE_BANDWIDTH || c->role == HO_PROBE_INTERFERE_MEM) {
			json_array_append_new(po->by_size,
					      json_pack("{s:f, s:f}", "bytes", bytes, "gbps",
							bytes / st.median / 1e9));
			if (bytes >= 8e6 && bytes / st.median / 1e9 > po->best_gbps)
				po->best_gbps = bytes / st.median / 1e9;
		}
		if (c->role == HO_PROBE_STRIDE)
			json_array_append_new(po->by_stride,
					      json_pack("{s:i, s:f}", "step", (int)c->a[1], "gbps",
							bytes / st.median / 1e9));
		if (c->role == HO_PROBE_RELAYOUT)
			po->relayout_gbps = bytes / 2 / st.median / 1e9;
		if (c->role == HO_PROBE_INTERFERE_MEM)
			po->interfere_alone[0] = st.median;
		if (c->role == HO_PROBE_INTERFERE_COMPUTE)
			po->interfere_alone[1] = st.median;
		ho_probe_run_close(&r);
	}
	probe_swish(po, swish_ns);
	return 0;
}

/*
 * A chain of n Relus on elems floats on devs (alternating when two), timed
 * whole (kernel_s: its kernels' time in the last run), or with kernel_s NULL
 * what it takes beyond its kernels; *own (NULL: not asked): bit i, devs[i]
 * keeps its own memory.
 */
static int probe_chain(struct probe *pr, const int *devs, uint32_t n_devs, uint32_t n,
		       int64_t elems, struct ho_probe_stat *st, double *kernel_s, uint32_t *own)
{
	struct ho_probe_run r;
	struct ho_graph *g = NULL;
	struct ho_pb *pb = ho_pb_new(1);
	uint8_t *node_dev = NULL;
	int ret;

	if (!pb)
		return ho_err(pr->err, -ENOMEM, "probe: out of memory");
	ret = ho_probe_build_chain(pb, n, elems);
	ret =
	    ret ? ho_err(pr->err, ret, "probe: chain does not build") : ho_pb_load(pb, &g, pr->err);
	ho_pb_free(pb);
	if (ret || (ret = ho_shape_infer(g, pr->err))) {
		ho_graph_free(g);
		return ret;
	}
	node_dev = calloc(g->n_nodes + 1, 1);
	if (!node_dev) {
		ho_graph_free(g);
		return ho_err(pr->err, -ENOMEM, "probe: out of memory");
	}
	for (uint32_t i = 0; i < g->n_nodes; i++)
		node_dev[g->topo[i]] = (uint8_t)(i % n_devs);
	ret = ho_probe_run_open(&r, g, pr->box, devs, n_devs, node_dev, pr->err);
	free(node_dev);
	r.wall = true;
	r.overhead = !kernel_s;
	if (!ret && own)
		*own = ho_rt_last_report(r.rt)->own_memory;
	if (!ret)
		ret = probe_time(pr, &r, pr->box->dev[devs[0]].name, "dispatch chain", st);
	if (kernel_s)
		*kernel_s = r.last_kernel_s;
	ho_probe_run_close(&r);
	return ret;
}

static int probe_dispatch(struct probe *pr, int d, struct probe_dev_out *po)
{
	struct ho_probe_stat one, many;
	double k1 = 0, kn = 0;
	int ret;

	probe_progress(pr, "%s: %s", pr->box->dev[d].name, "dispatch overhead");
	if ((ret = probe_chain(pr, &d, 1, 1, PROBE_TINY, &one, &k1, NULL)) ||
	    (ret = probe_chain(pr, &d, 1, 33, PROBE_TINY, &many, &kn, NULL)))
		return ret;
	po->chain_us = fmax(0, ((many.median - kn) - (one.median - k1)) / 32) * 1e6;
	po->run_us = fmax(0, one.median - k1) * 1e6;
	return 0;
}

static int probe_model_error(struct probe *pr, const char *path)
{
	char msg[sizeof(pr->err->msg)];

	snprintf(msg, sizeof(msg), "%s", pr->err->msg);
	return ho_err(pr->err, pr->err->code, "probe: --model %s: %s", path, msg);
}

/* A model to measure in place: its graph and the plan of it on one device. */
struct probe_model_run {
	struct ho_graph *g;
	struct ho_problem *p;
	struct ho_plan *plan;
	struct ho_calibration *best; /* the fastest round so far */
};

static void probe_model_close(struct probe_model_run *m)
{
	ho_calibration_free(m->best);
	ho_plan_free(m->plan);
	ho_problem_free(m->p);
	ho_graph_free(m->g);
}

static int probe_model_open(struct probe *pr, const struct ho_probe_model *mm, int d,
			    struct probe_model_run *m)
{
	int ret = ho_onnx_load(mm->path, NULL, &m->g, pr->err);

	if (ret)
		return ret; /* the message names the file */
	for (uint32_t s = 0; s < mm->n_shapes && !ret; s++) {
		char name[256];
		int64_t dims[HO_MAX_RANK];
		int rank;

		ret = ho_parse_shape_arg(mm->shapes[s], name, sizeof(name), dims, &rank, pr->err);
		/* a binding for another model's input is not this one's */
		if (!ret && ho_graph_find_tensor(m->g, name) >= 0)
			ret = ho_graph_bind_input(m->g, name, dims, rank, pr->err);
	}
	if (!ret)
		ret = ho_shape_infer(m->g, pr->err);
	if (!ret) {
		uint64_t *takes = malloc((m->g->n_nodes + 1) * sizeof(uint64_t));

		ret = takes ? ho_rt_box_takes(pr->box, m->g, takes, NULL, NULL, NULL, pr->err)
			    : ho_err(pr->err, -ENOMEM, "probe: out of memory");
		if (!ret)
			ret = ho_problem_from_graph_on(m->g, pr->box, NULL,
						       &(struct ho_backend_view){.takes = takes},
						       &m->p, pr->err);
		free(takes);
	}
	if (!ret && !(m->plan = ho_plan_new(m->p->n)))
		ret = ho_err(pr->err, -ENOMEM, "probe: out of memory");
	if (!ret)
		ret = ho_plan_single(m->p, d, m->plan);
	/* what the device has no kernel for runs on the host, as a schedule would place it */
	for (uint32_t t = 0; !ret && t < m->p->n; t++)
		if (!(m->p->allowed[t] >> d & 1)) /* allowed: where it runs, at a finite cost */
			m->plan->assign[t] = (uint16_t)pr->box->host;
	return ret ? probe_model_error(pr, mm->path) : 0;
}

/* What the fastest round of model m measured: families, class points, dispatch. */
static void probe_model_record(struct probe *pr, int d, const char *dev, const char *path,
			       const struct probe_model_run *m, struct probe_points *pp,
			       struct probe_dev_out *po)
{
	const struct ho_calibration *c = m->best;
	const struct ho_graph *g = m->g;
	double sum = 0;
	uint32_t timed = 0;

	if ((c->p90 - c->measured) / c->measured > pr->m.max_spread) {
		char line[300];

		snprintf(line, sizeof(line), "%s: model %s (P90 %.0f%% above the median)", dev,
			 path, (c->p90 - c->measured) / c->measured * 100);
		json_array_append_new(pr->flagged, json_string(line));
	}
	bool elsewhere = false; /* nodes the device has no kernel for ran on the host */

	for (uint32_t i = 0; i < g->n_nodes; i++) {
		const struct ho_calib_node *cn = &c->node[i];
		char key[256];
		int kc;

		elsewhere |= cn->dev >= 0 && cn->dev != d;
		if (cn->dev != d)
			continue;
		sum += cn->measured;
		timed++;
		/* views and nodes folded into a kernel have no time of their own */
		if (cn->how != HO_TASK_RAN || !(cn->measured > 0))
			continue;
		kc = ho_node_family(g, i, key, sizeof(key));
		probe_family_add(po->families, key, ho_node_work(&g->nodes[i]), cn->measured);
		probe_point(pp, kc, g, &g->nodes[i], cn->measured);
	}
	/* a run shared with the host says nothing of this device's own time between kernels */
	if (elsewhere)
		return;
	/* the time between kernels: the worker's own, per node */
	po->model_us += fmax(0, c->measured - sum) * 1e6;
	po->model_nodes += timed;
	/*
	 * A run takes longer than its nodes' medians summed: every run has some
	 * slow kernels, never the same (a share of them), and each node leaves
	 * more behind in a model than in the dispatch chain (0.1-1.5 us here).
	 */
	if (sum > 0 && po->n_runs < CLI_MODELS_MAX)
		po->runs[po->n_runs++] = (struct ho_run_point){
		    c->measured, sum, c->measured - sum - timed * po->chain_us * 1e-6, timed};
	json_array_append_new(po->models, json_pack("{s:s, s:f, s:f, s:i}", "model", path, "run_us",
						    c->measured * 1e6, "kernels_us", sum * 1e6,
						    "nodes", (int)timed));
}

/*
 * Each model named, run whole on device d exactly as a schedule of it runs
 * (ho_calibrate: the timeline drives the memory plan, so buffers are reused
 * and caches warm as they will be): every node's kernel time in place.
 * Rounds over all the models, each model's fastest kept: a neighbour on
 * the host slowed whole rounds up to fourfold here (most on a device of two
 * threads, whose every barrier waits for the slower core), for seconds at a
 * time, which back-to-back rounds of one model would all have caught.
 * Five short rounds rather than three long ones: more chances, in the same
 * time, to catch the machine at its own speed.
 */
static int probe_models(struct probe *pr, int d, struct probe_points *pp, struct probe_dev_out *po)
{
	const char *dev = pr->box->dev[d].name;
	uint32_t runs = pr->o->quick ? 5 : 7, rounds = pr->o->quick ? 3 : 5, n = pr->o->n_models;
	struct probe_model_run *m = calloc(n + 1, sizeof(*m));
	int ret = 0;

	if (!m)
		return ho_err(pr->err, -ENOMEM, "probe: out of memory");
	for (uint32_t k = 0; k < n && !ret; k++)
		ret = probe_model_open(pr, &pr->o->models[k], d, &m[k]);
	for (uint32_t round = 0; round < rounds && !ret; round++)
		for (uint32_t k = 0; k < n && !ret; k++) {
			struct ho_calibration *c = NULL;

			if (!round)
				probe_progress(pr, "%s: model %s", dev, pr->o->models[k].path);
			if (probe_stopped(pr)) {
				ret = ho_err(pr->err, -EINTR, "probe: interrupted");
				break;
			}
			ret = ho_calibrate(m[k].g, pr->box, NULL, m[k].p, m[k].plan->assign,
					   m[k].plan->order, runs, &c, pr->err);
			if (ret) {
				ret = probe_model_error(pr, pr->o->models[k].path);
			} else if (!m[k].best || c->measured < m[k].best->measured) {
				ho_calibration_free(m[k].best);
				m[k].best = c;
			} else {
				ho_calibration_free(c);
			}
		}
	for (uint32_t k = 0; k < n && !ret; k++)
		probe_model_record(pr, d, dev, pr->o->models[k].path, &m[k], pp, po);
	for (uint32_t k = 0; k < n; k++)
		probe_model_close(&m[k]);
	free(m);
	return ret;
}

/* Order a family's points by work (the cost model averages those of equal work). */
static void probe_families_sort(json_t *families)
{
	const char *key;
	json_t *pts;

	json_object_foreach(families, key, pts)
	{
		size_t n = json_array_size(pts);

		/* insertion sort by work: a family has a few points */
		for (size_t i = 1; i < n; i++)
			for (size_t j = i; j > 0; j--) {
				json_t *a = json_array_get(pts, j - 1), *b = json_array_get(pts, j);

				if (json_number_value(json_array_get(a, 0)) <=
				    json_number_value(json_array_get(b, 0)))
					break;
				json_incref(a);
				json_array_set(pts, j - 1, b);
				json_array_set_new(pts, j, a);
			}
	}
}

static int probe_device(struct probe *pr, int d, json_t *devices, double *alone)
{
	struct probe_points pp = {0};
	struct probe_dev_out po = {0};
	json_t *models = json_object();
	int ret;

	po.dev = json_object();
	po.families = json_object();
	po.sweep = json_array();
	po.by_size = json_array();
	po.by_stride = json_array();
	po.models = json_array();
	po.post_op = json_object();
	po.post_op_elems = json_object();
	po.speedups = calloc(1, sizeof(*po.speedups));
	json_object_set_new(devices, pr->box->dev[d].name, po.dev);
	if (!po.speedups) {
		ret = ho_err(pr->err, -ENOMEM, "probe: out of memory");
		goto out;
	}
	if ((ret = probe_sweep(pr, d, &pp, &po)) || (ret = probe_dispatch(pr, d, &po)) ||
	    (ret = probe_models(pr, d, &pp, &po)))
		goto out;
	probe_families_sort(po.families);
	/* a class of too few points to tell its block takes its fallback's (fitted first) */
	uint32_t block[HO_KC_COUNT];

	for (int kc = 0; kc < HO_KC_COUNT; kc++) {
		struct ho_kernel_model km;
		int fb = ho_kernel_class_fallback(kc);

		block[kc] = 1;
		if (!pp.n[kc] ||
		    ho_fit_class_model(pp.v[kc], pp.n[kc], kc <= HO_KC_MATMUL,
				       fb < kc ? block[fb] : 1,
				       ho_class_past_caches(kc) ? po.by_size : NULL, &km))
			continue;
		block[kc] = km.block;
		json_object_set_new(models, ho_kernel_class_name(kc),
				    json_pack("{s:f, s:f, s:f, s:i, s:i, s:f}", "fixed_us",
					      km.fixed_s * 1e6, "gflops", km.rate / 1e9, "gbps",
					      km.bandwidth / 1e9, "block", (int)km.block, "points",
					      (int)km.points, "fit_error", km.fit_error));
	}
	double launch = po.chain_us;
	struct ho_run_model rm = {0};

	if (po.n_runs && !ho_fit_run_model(po.runs, po.n_runs, &rm)) {
		json_object_set_new(po.dev, "kernel_scale", json_real(1 + fmin(rm.share, 1)));
		launch += rm.per_node_s * 1e6;
	}
	json_object_set_new(po.dev, "peak_gflops",
			    json_pack("{s:f}", "float32", fmax(po.best_gflops, 0.001)));
	json_object_set_new(po.dev, "mem_bw_gbps", json_real(fmax(po.best_gbps, 0.001)));
	json_object_set_new(po.dev, "launch_us", json_real(launch));
	json_object_set_new(po.dev, "dispatch_us",
			    po.model_nodes
				? json_pack("{s:f, s:f, s:f, s:f, s:f}", "chain", po.chain_us,
					    "models", po.model_us / po.model_nodes, "run",
					    po.run_us, "models_per_node", rm.per_node_s * 1e6,
					    "models_fit_error", rm.fit_error)
				: json_pack("{s:f, s:f}", "chain", po.chain_us, "run", po.run_us));
	json_object_set(po.dev, "kernel_models", models);
	json_object_set_new(po.dev, "families", po.families);
	json_object_set_new(po.dev, "bandwidth_by_size", po.by_size);
	json_object_set_new(po.dev, "bandwidth_by_stride", po.by_stride);
	json_object_set_new(po.dev, "sweep", po.sweep);
	json_object_set_new(po.dev, "models", po.models);
	json_object_set_new(po.dev, "post_op_ns", po.post_op);
	if (po.relayout_gbps > 0)
		json_object_set_new(po.dev, "relayout_gbps", json_real(po.relayout_gbps));
	json_t *speedups = ho_probe_speedups_json(po.speedups);

	if (speedups)
		json_object_set_new(po.dev, "precision_speedup", speedups);
	po.families = po.sweep = po.by_size = po.by_stride = po.models = po.post_op = NULL;
	alone[0] = po.interfere_alone[0];
	alone[1] = po.interfere_alone[1];
out:
	json_decref(models);
	json_decref(po.families);
	json_decref(po.sweep);
	json_decref(po.by_size);
	json_decref(po.by_stride);
	json_decref(po.models);
	json_decref(po.post_op);
	json_decref(po.post_op_elems);
	free(po.speedups);
	for (int kc = 0; kc < HO_KC_COUNT; kc++)
		free(pp.v[kc]);
	return ret;
}

/*
 * Twins (twins.c) a quarter of whose kernels differ by more than
 * HO_PROBE_TWIN_GAP are measured again, one after the other.  A difference
 * that survives is the machine's load, not its silicon: flagged, and the
 * slower carries the faster's figures.
 */
static int probe_twins_agree(struct probe *pr, const int *cpu, uint32_t n, json_t *devices,
			     double (*alone)[2])
{
	for (uint32_t i = 0; i < n; i++)
		for (uint32_t j = i + 1; j < n; j++) {
			const char *a = pr->box->dev[cpu[i]].name, *b = pr->box->dev[cpu[j]].name;
			bool a_slower = false;
			double gap = 0;
			char line[320];
			int ret;

			if (!ho_probe_twins(pr->box, cpu[i], cpu[j]))
				continue;
			for (int round = 0; round < 2; round++) {
				gap = ho_probe_twin_gap(json_object_get(devices, a),
							json_object_get(devices, b), &a_slower);
				if (gap <= HO_PROBE_TWIN_GAP || round)
					break;
				snprintf(line, sizeof(line),
					 "%s and %s: twins (same backend, threads and cores) a "
					 "quarter of whose kernels measured %.2fx apart: measured "
					 "again",
					 a, b, gap);
				json_array_append_new(pr->flagged, json_string(line));
				pr->steps += 2 * pr->dev_steps;
				if ((ret = probe_device(pr, cpu[i], devices, alone[i])) ||
				    (ret = probe_device(pr, cpu[j], devices, alone[j])))
					return ret;
			}
			if (gap <= HO_PROBE_TWIN_GAP)
				continue;
			uint32_t slow = a_slower ? i : j, fast = a_slower ? j : i;
			const char *sn = pr->box->dev[cpu[slow]].name,
				   *fn = pr->box->dev[cpu[fast]].name;

			snprintf(line, sizeof(line),
				 "%s: slower than %s, its twin, measured twice (%.2fx apart): the "
				 "machine's load, not its silicon; %s carries %s's figures",
				 sn, fn, gap, sn, fn);
			json_array_append_new(pr->flagged, json_string(line));
			json_object_set_new(devices, sn,
					    json_deep_copy(json_object_get(devices, fn)));
			alone[slow][0] = alone[fast][0];
			alone[slow][1] = alone[fast][1];
		}
	return 0;
}

struct probe_busy {
	struct ho_probe_run *r;
	volatile int stop;
};

static void *probe_busy_loop(void *arg)
{
	struct probe_busy *b = arg;

	while (!b->stop && ho_probe_run_once(b->r) >= 0)
		;
	return NULL;
}

/* How much slower row c runs on device a while device b runs it too, against alone. */
static int probe_interfere(struct probe *pr, int role, int a, int b, double alone, double *factor)
{
	const struct ho_probe_case *c = ho_probe_cases;
	struct ho_probe_run ra, rb;
	struct probe_busy busy = {&rb, 0};
	struct ho_probe_stat st;
	pthread_t th;
	int ret;

	while (c->what && c->role != role)
		c++;
	*factor = 1;
	if (!c->what || alone <= 0)
		return 0;
	if ((ret = ho_probe_case_open(pr->box, c, a, &ra, pr->err)) ||
	    (ret = ho_probe_case_open(pr->box, c, b, &rb, pr->err))) {
		if (ret == -EOPNOTSUPP) /* one of the two cannot run it: nothing to measure */
			ret = 0;
		goto out;
	}
	if (pthread_create(&th, NULL, probe_busy_loop, &busy)) {
		ret = ho_err(pr->err, -EAGAIN, "probe: no thread for the interference probe");
		goto out;
	}
	ret = probe_time(pr, &ra, pr->box->dev[a].name, c->what, &st);
	busy.stop = 1;
	pthread_join(th, NULL);
	if (!ret)
		*factor = fmax(1, st.median / alone);
out:
	ho_probe_run_close(&ra);
	ho_probe_run_close(&rb);
	return ret;
}

/*
 * A pair one of which keeps its own memory: its copies go through its
 * backend (an upload, a download), not the pool.  A chain alternating
 * between the two against one on the first alone, by size, each run's time
 * beyond its kernels (a median of each, not a difference of noisy wholes):
 * what a hop adds, fitted as the kernels' classes are (fit.c: latency +
 * bytes / bandwidth), the link's figures.
 */
static int probe_backend_copies(struct probe *pr, const int *pair, json_t *link)
{
	static const int64_t elems[] = {PROBE_TINY, PROBE_HANDOFF, 4 * PROBE_HANDOFF,
					16 * PROBE_HANDOFF};
	const uint32_t hops = 8, n = sizeof(elems) / sizeof(elems[0]);
	struct ho_fit_point pts[sizeof(elems) / sizeof(elems[0])] = {{0}};
	struct ho_kernel_model m;
	json_t *by_size = json_array();
	int ret;

	for (uint32_t i = 0; i < n; i++) {
		struct ho_probe_stat one, two;

		if ((ret = probe_chain(pr, pair, 1, hops + 1, elems[i], &one, NULL, NULL)) ||
		    (ret = probe_chain(pr, pair, 2, hops + 1, elems[i], &two, NULL, NULL))) {
			json_decref(by_size);
			return ret;
		}
		pts[i].bytes = (double)elems[i] * sizeof(float);
		pts[i].seconds = fmax(1e-9, (two.median - one.median) / hops);
		json_array_append_new(by_size, json_pack("[I, f, f]", (json_int_t)pts[i].bytes,
							 pts[i].seconds * 1e6,
							 pts[i].bytes / pts[i].seconds / 1e9));
	}
	if (ho_fit_kernel_model(pts, n, false, 1, &m)) {
		json_decref(by_size);
		return ho_err(pr->err, -EINVAL, "probe: the copies' sizes do not fit a model");
	}
	json_object_set_new(link, "latency_us", json_real(m.fixed_s * 1e6));
	/* no bandwidth term (nothing more for more bytes: noise): the largest copy's rate */
	json_object_set_new(link, "gbps",
			    json_real(m.bandwidth > 0
					  ? m.bandwidth / 1e9
					  : pts[n - 1].bytes / pts[n - 1].seconds / 1e9));
	json_object_set_new(link, "copies",
			    json_pack("[{s:s, s:f, s:o}]", "path", "backend (device memory)",
				      "latency_us", m.fixed_s * 1e6, "by_size", by_size));
	return 0;
}

static int probe_pairs(struct probe *pr, const int *cpu, uint32_t n, double (*alone)[2],
		       json_t *links, json_t *interference)
{
	for (uint32_t i = 0; i < n; i++)
		for (uint32_t j = 0; j < n; j++) {
			int pair[2] = {cpu[i], cpu[j]}, ret;
			const char *an = pr->box->dev[cpu[i]].name, *bn = pr->box->dev[cpu[j]].name;
			double fm, fc;

			/* one is the other's cores as one device: never run together */
			if (i == j || (ho_box_exclusive(pr->box, cpu[i]) >> cpu[j] & 1))
				continue;
			if (!pr->o->links_only) {
				probe_progress(pr, "%s beside %s", an, bn);
				if ((ret = probe_interfere(pr, HO_PROBE_INTERFERE_MEM, cpu[i],
							   cpu[j], alone[i][0], &fm)) ||
				    (ret = probe_interfere(pr, HO_PROBE_INTERFERE_COMPUTE, cpu[i],
							   cpu[j], alone[i][1], &fc)))
					return ret;
				json_array_append_new(interference,
						      json_pack("{s:s, s:s, s:f, s:f}", "device",
								an, "beside", bn, "memory", fm,
								"compute", fc));
			}
			if (j < i)
				continue;
			/*
			 * The hand-off: a chain alternating between the two, against one
			 * device, on tiny tensors (the latency) and on 256 KiB ones (what
			 * reading a tensor the other core just wrote costs beyond that: 3-8 us
			 * more per hop at 64-256 KiB here, which made every split of small
			 * operators over two CPU devices run 5-15% slower than predicted).
			 */
			struct ho_probe_stat one, two, one_big, two_big;
			double k1, k2, lat, per_byte;
			uint32_t own = 0;
			json_t *link;

			probe_progress(pr, "%s and %s: hand-off and copies", an, bn);
			if ((ret = probe_chain(pr, pair, 1, 33, PROBE_TINY, &one, &k1, NULL)) ||
			    (ret = probe_chain(pr, pair, 2, 33, PROBE_TINY, &two, &k2, &own)) ||
			    (ret = probe_chain(pr, pair, 1, 33, PROBE_HANDOFF, &one_big, &k1,
					       NULL)) ||
			    (ret =
				 probe_chain(pr, pair, 2, 33, PROBE_HANDOFF, &two_big, &k2, NULL)))
				return ret;
			lat = fmax(0, (two.median - one.median) / 32);
			per_byte = ((two_big.median - one_big.median) / 32 - lat) /
				   (PROBE_HANDOFF * sizeof(float));
			link =
			    json_pack("{s:s, s:s, s:f}", "a", an, "b", bn, "latency_us", lat * 1e6);
			if (per_byte > 0)
				json_object_set_new(link, "handoff_gbps",
						    json_real(1 / per_byte / 1e9));
			json_array_append_new(links, link);
			int na = pr->box->dev[cpu[i]].numa_node,
			    nb = pr->box->dev[cpu[j]].numa_node;

			na = na < 0 ? 0 : na;
			nb = nb < 0 ? 0 : nb;
			ret = own ? probe_backend_copies(pr, pair, link)
				  : ho_probe_copies(&pr->m, pr->o, na, nb, link, pr->err);
			if (ret)
				return ret;
		}
	return 0;
}

int ho_probe_box(const struct ho_box *box, const char *box_path, const struct ho_probe_opts *o,
		 const char *path, struct ho_error *err)
{
	struct probe pr = {.box = box, .o = o, .err = err};
	struct ho_machine mach;
	int cpu[HO_MAX_DEVICES];
	double alone[HO_MAX_DEVICES][2] = {{0}};
	uint32_t n = 0, per_dev = 0;
	json_t *doc, *devices, *links, *interference;
	double t0 = ho_clock_s();
	int ret = 0;

	for (uint32_t d = 0; d < box->n_devices; d++) {
		const char *be = ho_rt_backend_for(box->dev[d].kind, box->dev[d].backend);

		if (!be || !strcmp(be, "emu"))
			return ho_err(
			    err, -ENODEV,
			    "probe: %s is a %s this machine's runtime would only emulate, and a "
			    "profile must not hold figures nobody measured (probe a box of this "
			    "machine: heteroopt probe --write-box [--opencl])",
			    box->dev[d].name, box->dev[d].kind);
		for (uint32_t w = 0; w < HO_CORE_WORDS; w++)
			for (int b = 0; b < 64; b++)
				if (box->dev[d].cores[w] >> b & 1 &&
				    (w * 64 + (uint32_t)b) >=
					(uint32_t)sysconf(_SC_NPROCESSORS_ONLN))
					return ho_err(
					    err, -ENODEV,
					    "probe: %s runs on CPU %u, which this machine "
					    "lacks (it has %ld)",
					    box->dev[d].name, w * 64 + b,
					    sysconf(_SC_NPROCESSORS_ONLN));
		cpu[n++] = (int)d;
	}
	pr.m = (struct ho_probe_method){.warmup = o->quick ? 1 : 3,
					.repeats = o->quick ? 5 : 11,
					.rounds = 3,
					.max_spread = 0.10,
					.min_seconds = o->quick ? 0.02 : 0.06};
	for (const struct ho_probe_case *c = ho_probe_cases; c->what; c++)
		per_dev += !o->quick || c->quick;
	pr.dev_steps = per_dev + 1 + o->n_models;
	pr.steps = (o->links_only ? 0 : n * pr.dev_steps + n * (n - 1)) + n * (n - 1) / 2;
	doc = json_object();
	devices = json_object();
	links = json_array();
	interference = json_array();
	pr.flagged = json_array();
	ho_machine_read(&mach);
	json_object_set_new(doc, "box", json_string(box->name));
	if (box_path)
		json_object_set_new(doc, "box_file", json_string(box_path));
	json_object_set_new(doc, "description",
			    json_string("measured by heteroopt probe with the runtime's own "
					"kernels and pool; figures are medians over repeats"));
	json_object_set_new(doc, "machine", ho_machine_json(&mach));
	json_object_set_new(doc, "devices", devices);
	json_object_set_new(doc, "links", links);
	json_object_set_new(doc, "interference", interference);
	for (uint32_t i = 0; i < n && !ret && !o->links_only; i++)
		ret = probe_device(&pr, cpu[i], devices, alone[i]);
	if (!ret && !o->links_only)
		ret = probe_twins_agree(&pr, cpu, n, devices, alone);
	if (!ret)
		ret = probe_pairs(&pr, cpu, n, alone, links, interference);
	if (!ret) {
		json_object_set_new(doc, "probe",
				    json_pack("{s:b, s:b, s:f, s:i, s:i, s:f, s:O}", "quick",
					      o->quick, "links_only", o->links_only, "seconds",
					      ho_clock_s() - t0, "warmup", (int)pr.m.warmup,
					      "repeats", (int)pr.m.repeats, "max_spread",
					      pr.m.max_spread, "flagged", pr.flagged));
		ret = ho_profile_write(doc, box, path, err);
	}
	json_decref(pr.flagged);
	json_decref(doc);
	return ret;
}
