// SPDX-License-Identifier: MIT
/*
 * heteroopt calibrate: run a plan's nodes for real and hold each against
 * the cost model's prediction for it, end to end and per node; and refit a
 * profile from what ran (each node's time added to its family, each
 * device's dispatch overhead from the gaps between its nodes).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probe_priv.h"

static int cal_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

void ho_calibration_free(struct ho_calibration *c)
{
	if (!c)
		return;
	free(c->node);
	free(c);
}

int ho_calibrate(const struct ho_graph *g, const struct ho_box *box, const struct ho_profile *prof,
		 const struct ho_problem *p, const uint16_t *assign, const uint32_t *order,
		 uint32_t repeats, struct ho_calibration **out, struct ho_error *err)
{
	struct ho_calibration *c = calloc(1, sizeof(*c));
	struct ho_sim *sim = ho_sim_new(p);
	struct ho_timeline *tl = ho_timeline_new(p);
	struct ho_rt_opts o = {0};
	struct ho_rt_placement pl = {0};
	struct ho_eval ev;
	double *t = NULL, *wall = NULL, *ps = NULL, *pe = NULL;
	int32_t *task_of = NULL;
	struct ho_rt *rt = NULL;
	struct ho_probe_run r = {0};
	int ret = -ENOMEM;

	*out = NULL;
	if (!c || !sim || !tl)
		goto nomem;
	if (p->d > HO_RT_MAX_DEVICES) {
		ret = ho_err(err, -EINVAL, "calibrate: %u devices, at most %d", p->d,
			     HO_RT_MAX_DEVICES);
		goto out;
	}
	if ((ret = ho_sim_eval(sim, assign, order, NULL, &ev, tl))) {
		ho_err(err, ret, "calibrate: the plan's order is not topological");
		goto out;
	}
	c->n = g->n_nodes;
	c->node = calloc(g->n_nodes + 1, sizeof(*c->node));
	task_of = calloc(g->n_nodes + 1, sizeof(int32_t));
	pl.node_device = calloc(g->n_nodes + 1, sizeof(int32_t));
	pl.node_prio = calloc(g->n_nodes + 1, sizeof(uint32_t));
	ps = calloc(g->n_nodes + 1, sizeof(double));
	pe = calloc(g->n_nodes + 1, sizeof(double));
	t = calloc((size_t)g->n_nodes * repeats + 1, sizeof(double));
	wall = calloc(repeats + 1, sizeof(double));
	if (!c->node || !task_of || !pl.node_device || !pl.node_prio || !ps || !pe || !t || !wall)
		goto nomem;
	/* the runtime's placement, as a schedule file would give it */
	pl.n_devices = p->d;
	pl.host = box->host;
	for (uint32_t d = 0; d < p->d; d++) {
		uint64_t mask = ho_box_in_place(box, (int)d);

		ho_rt_device_of(box, (int)d, &pl.dev[d]);
		pl.in_place[d] = mask;
	}
	for (uint32_t i = 0, k = 0; i < g->n_nodes; i++)
		task_of[i] = ho_node_is_task(&g->nodes[i]) ? (int32_t)k++ : -1;
	{
		uint32_t *pos = calloc(p->n + 1, sizeof(uint32_t));

		if (!pos)
			goto nomem;
		for (uint32_t k = 0; k < p->n; k++)
			pos[order[k]] = k;
		for (uint32_t i = 0; i < g->n_nodes; i++)
			pl.node_prio[i] = task_of[i] >= 0 ? pos[task_of[i]] : 0;
		free(pos);
	}
	for (uint32_t i = 0; i < g->n_nodes; i++) {
		int32_t tk = task_of[i];

		pl.node_device[i] = tk >= 0 ? assign[tk] : -1;
		c->node[i].dev = pl.node_device[i];
		c->node[i].how = tk >= 0 ? tl->how[tk] : HO_TASK_VIEW;
		ps[i] = tk >= 0 ? tl->start[tk] : 0;
		pe[i] = tk >= 0 ? tl->end[tk] : 0;
		/* the kernel's own time: the timeline's less the launch it adds */
		c->node[i].predicted =
		    tk >= 0 && c->node[i].how == HO_TASK_RAN
			? fmax(0, pe[i] - ps[i] - ho_cost_launch(box, assign[tk], prof))
			: 0;
	}
	pl.pred_start = ps;
	pl.pred_end = pe;
	pl.pred_makespan = ev.obj[HO_OBJ_LATENCY];
	c->predicted = ev.obj[HO_OBJ_LATENCY];
	o.placement = &pl;
	if ((ret = ho_rt_new(g, &o, &rt, err)))
		goto out;
	/* the runner's inputs and timing, on this plan */
	r.g = (struct ho_graph *)g;
	r.rt = rt;
	r.main = -1;
	r.wall = true;
	if ((ret = ho_probe_set_inputs(g, rt, err)))
		goto out;
	for (uint32_t w = 0; w < 2 + repeats; w++) {
		const struct ho_rt_report *rep;

		if (ho_probe_run_once(&r) < 0) {
			ret = ho_err(err, -EIO, "calibrate: the plan failed to run");
			goto out;
		}
		if (w < 2)
			continue;
		rep = ho_rt_last_report(rt);
		wall[w - 2] = r.last_wall_s;
		for (uint32_t i = 0; i < g->n_nodes; i++)
			t[(size_t)i * repeats + w - 2] =
			    rep->start_s[i] >= 0 ? rep->end_s[i] - rep->start_s[i] : 0;
	}
	for (uint32_t i = 0; i < g->n_nodes; i++) {
		struct ho_probe_stat st;

		ho_probe_robust(t + (size_t)i * repeats, repeats, &st);
		c->node[i].measured = st.median;
		c->kernels += st.median;
		c->tasks += c->node[i].dev >= 0;
	}
	qsort(wall, repeats, sizeof(double), cal_cmp);
	c->measured = wall[repeats / 2];
	c->p90 = wall[(uint32_t)(0.9 * (repeats - 1) + 0.5)];
	c->p99 = wall[(uint32_t)(0.99 * (repeats - 1) + 0.5)];
	*out = c;
	c = NULL;
	ret = 0;
	goto out;
nomem:
	ret = ho_err(err, -ENOMEM, "calibrate: out of memory");
out:
	ho_rt_free(rt);
	ho_calibration_free(c);
	ho_sim_free(sim);
	ho_timeline_free(tl);
	free(task_of);
	free(pl.node_device);
	free(pl.node_prio);
	free(ps);
	free(pe);
	free(t);
	free(wall);
	return ret;
}

/* The index of the first point of pts at work w or above. */
static size_t cal_family_find(json_t *pts, double w)
{
	size_t i = 0;

	while (i < json_array_size(pts) &&
	       json_number_value(json_array_get(json_array_get(pts, i), 0)) < w * (1 - 1e-9))
		i++;
	return i;
}

/* Drop a family's points at work w: this run's measure them again. */
static void cal_family_drop(json_t *families, const char *key, double w)
{
	json_t *pts = json_object_get(families, key);
	size_t i;

	if (!pts)
		return;
	i = cal_family_find(pts, w);
	while (i < json_array_size(pts) &&
	       json_number_value(json_array_get(json_array_get(pts, i), 0)) <= w * (1 + 1e-9))
		json_array_remove(pts, i);
	if (!json_array_size(pts))
		json_object_del(families, key);
}

/* Add a point in order of work; the cost model takes the mean of equal works. */
static void cal_family_put(json_t *families, const char *key, double w, double us)
{
	json_t *pts = json_object_get(families, key);

	if (!pts) {
		pts = json_array();
		json_object_set_new(families, key, pts);
	}
	json_array_insert_new(pts, cal_family_find(pts, w * (1 + 2e-9)),
			      json_pack("[f, f]", w, us));
}

int ho_calibration_refit(const char *profile_in, const char *profile_out, const struct ho_graph *g,
			 const struct ho_box *box, const struct ho_profile *prof,
			 const struct ho_calibration *const *runs, uint32_t n_runs,
			 struct ho_error *err)
{
	json_error_t je;
	json_t *root = json_load_file(profile_in, 0, &je), *devs;
	int ret = 0;

	if (!root)
		return ho_err(err, -EINVAL, "%s:%d: %s", profile_in, je.line, je.text);
	devs = json_object_get(root, "devices");
	if (!json_is_object(devs)) {
		json_decref(root);
		return ho_err(err, -EINVAL, "%s: no devices", profile_in);
	}
	for (uint32_t k = 0; k < n_runs; k++) {
		const struct ho_calibration *c = runs[k];
		int only = -2; /* the one device the run used; -1: several */

		for (uint32_t i = 0; i < c->n; i++)
			if (c->node[i].dev >= 0)
				only = only == -2 || only == c->node[i].dev ? c->node[i].dev : -1;
		/* on one device, what the run took beyond its kernels and their launches
		 * is a share of the kernels (ho_probe_box's kernel_scale) */
		if (only >= 0 && c->kernels > 0) {
			json_t *dev = json_object_get(devs, box->dev[only].name);
			double launch = ho_cost_launch(box, only, prof);

			if (dev)
				json_object_set_new(
				    dev, "kernel_scale",
				    json_real(fmin(2, fmax(1, (c->measured - c->tasks * launch) /
								  c->kernels))));
		}
	}
	/* this calibration's points replace the profile's at their works, all of them kept */
	for (int put = 0; put < 2; put++)
		for (uint32_t k = 0; k < n_runs; k++)
			for (uint32_t i = 0; i < runs[k]->n; i++) {
				const struct ho_calib_node *cn = &runs[k]->node[i];
				double w = ho_node_work(&g->nodes[i]);
				json_t *dev, *fam;
				char key[256];

				if (cn->dev < 0 || cn->how != HO_TASK_RAN || !(cn->measured > 0))
					continue;
				dev = json_object_get(devs, box->dev[cn->dev].name);
				if (!dev) {
					dev = json_object();
					json_object_set_new(devs, box->dev[cn->dev].name, dev);
				}
				fam = json_object_get(dev, "families");
				if (!fam) {
					fam = json_object();
					json_object_set_new(dev, "families", fam);
				}
				ho_node_family(g, i, key, sizeof(key));
				if (put)
					cal_family_put(fam, key, w, cn->measured * 1e6);
				else
					cal_family_drop(fam, key, w);
			}
	json_object_set_new(
	    root, "calibration",
	    json_pack("{s:s, s:i}", "model", g->name ? g->name : "", "runs", (int)n_runs));
	ret = ho_profile_write(root, box, profile_out, err);
	json_decref(root);
	return ret;
}
