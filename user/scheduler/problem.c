// SPDX-License-Identifier: MIT
/*
 * The scheduling problem: flat arrays indexed by task, device and data item,
 * built once from a graph + box (or from a classic cost-matrix DAG) so that
 * the simulator's inner loop touches nothing else.
 */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heteroopt/sched.h"
#include "sched_priv.h"

void ho_problem_free(struct ho_problem *p)
{
	if (!p)
		return;
	free(p->task_name);
	free(p->task_op);
	free(p->dev_name);
	free(p->comp);
	free(p->energy);
	free(p->prec_name);
	free(p->prec_comp);
	free(p->prec_error);
	free(p->prec_range);
	free(p->allowed);
	free(p->exclusive);
	free(p->item_prod);
	free(p->item_bytes);
	free(p->item_comm);
	free(p->item_pinned_out);
	free(p->cons_off);
	free(p->cons);
	free(p->in_off);
	free(p->in_items);
	free(p->pred_off);
	free(p->pred);
	free(p->succ_off);
	free(p->succ);
	free(p->fuse_prev);
	free(p->fuse_in);
	free(p->fuse_head);
	free(p->fuse_res);
	free(p->fuse_devs);
	free(p->fused_comp);
	free(p->view_src);
	free(p->gather_out);
	free(p->gather_by);
	free(p->view_out);
	free(p->view_reader);
	free(p->view_devs);
	free(p->weight_bytes);
	free(p->kernel_mem);
	free(p->packed_group);
	free(p->wcons_off);
	free(p->wcons);
	free(p->wcons_taken);
	free(p->link_lat);
	free(p->link_bw);
	free(p->link_epb);
	free(p->route);
	free(p->route_fixed);
	free(p->route_inv_bw);
	free(p->in_place);
	free(p->capacity);
	free(p->idle_power);
	free(p->topo);
	free(p->task_sig);
	free(p->slowdown);
	free(p->task_compute);
	ho_layouts_drop(p);
	free(p->item_nhwc);
	free(p);
}

struct ho_problem *ho_problem_alloc(uint32_t n, uint32_t d)
{
	struct ho_problem *p = calloc(1, sizeof(*p));

	if (!p || d == 0 || d > HO_MAX_DEVICES)
		goto fail;
	p->n = n;
	p->d = d;
	p->task_name = calloc(n + 1, sizeof(*p->task_name));
	p->task_op = calloc(n + 1, sizeof(*p->task_op));
	p->dev_name = calloc(d, sizeof(*p->dev_name));
	p->comp = calloc((size_t)n * d + 1, sizeof(double));
	p->energy = calloc((size_t)n * d + 1, sizeof(double));
	p->allowed = calloc(n + 1, sizeof(uint64_t));
	p->capacity = calloc(d, sizeof(double));
	p->idle_power = calloc(d, sizeof(double));
	p->topo = calloc(n + 1, sizeof(uint32_t));
	if (!p->task_name || !p->task_op || !p->dev_name || !p->comp || !p->energy || !p->allowed ||
	    !p->capacity || !p->idle_power || !p->topo)
		goto fail;
	for (uint32_t i = 0; i < n; i++)
		p->allowed[i] = d == 64 ? ~0ull : (1ull << d) - 1;
	return p;
fail:
	ho_problem_free(p);
	return NULL;
}

/* Build CSR arrays from (item, consumer) pairs, then a topological order. */
int ho_problem_link(struct ho_problem *p, uint32_t n_edges, const uint32_t *edge_item,
		    const uint32_t *edge_task, struct ho_error *err)
{
	uint32_t n = p->n, m = p->m, *fill = NULL, *indeg = NULL, head = 0, tail = 0;
	int ret = -ENOMEM;

	p->cons_off = calloc(m + 1, sizeof(uint32_t));
	p->cons = calloc(n_edges + 1, sizeof(uint32_t));
	p->in_off = calloc(n + 1, sizeof(uint32_t));
	p->in_items = calloc(n_edges + 1, sizeof(uint32_t));
	p->pred_off = calloc(n + 1, sizeof(uint32_t));
	p->pred = calloc(n_edges + 1, sizeof(uint32_t));
	p->succ_off = calloc(n + 1, sizeof(uint32_t));
	p->succ = calloc(n_edges + 1, sizeof(uint32_t));
	fill = calloc((m > n ? m : n) + 1, sizeof(uint32_t));
	indeg = calloc(n + 1, sizeof(uint32_t));
	if (!p->cons_off || !p->cons || !p->in_off || !p->in_items || !p->pred_off || !p->pred ||
	    !p->succ_off || !p->succ || !fill || !indeg)
		goto out;
	for (uint32_t e = 0; e < n_edges; e++) {
		p->cons_off[edge_item[e] + 1]++;
		p->in_off[edge_task[e] + 1]++;
		if (p->item_prod[edge_item[e]] != HO_EXTERNAL) {
			p->pred_off[edge_task[e] + 1]++;
			p->succ_off[p->item_prod[edge_item[e]] + 1]++;
		}
	}
	for (uint32_t i = 0; i < m; i++)
		p->cons_off[i + 1] += p->cons_off[i];
	for (uint32_t i = 0; i < n; i++) {
		p->in_off[i + 1] += p->in_off[i];
		p->pred_off[i + 1] += p->pred_off[i];
		p->succ_off[i + 1] += p->succ_off[i];
	}
	for (uint32_t e = 0; e < n_edges; e++)
		p->cons[p->cons_off[edge_item[e]] + fill[edge_item[e]]++] = edge_task[e];
	memset(fill, 0, (m > n ? m : n) * sizeof(uint32_t));
	for (uint32_t e = 0; e < n_edges; e++)
		p->in_items[p->in_off[edge_task[e]] + fill[edge_task[e]]++] = edge_item[e];
	memset(fill, 0, (m > n ? m : n) * sizeof(uint32_t));
	for (uint32_t e = 0; e < n_edges; e++) {
		uint32_t prod = p->item_prod[edge_item[e]], t = edge_task[e];

		if (prod == HO_EXTERNAL)
			continue;
		p->pred[p->pred_off[t] + fill[t]++] = prod;
	}
	memset(fill, 0, (m > n ? m : n) * sizeof(uint32_t));
	for (uint32_t e = 0; e < n_edges; e++) {
		uint32_t prod = p->item_prod[edge_item[e]];

		if (prod == HO_EXTERNAL)
			continue;
		p->succ[p->succ_off[prod] + fill[prod]++] = edge_task[e];
	}
	/* Kahn's algorithm over tasks. */
	for (uint32_t t = 0; t < n; t++) {
		indeg[t] = p->pred_off[t + 1] - p->pred_off[t];
		if (!indeg[t])
			p->topo[tail++] = t;
	}
	while (head < tail) {
		uint32_t t = p->topo[head++];

		for (uint32_t k = p->succ_off[t]; k < p->succ_off[t + 1]; k++)
			if (--indeg[p->succ[k]] == 0)
				p->topo[tail++] = p->succ[k];
	}
	if (tail != n) {
		for (uint32_t t = 0; t < n; t++)
			if (indeg[t]) {
				ret =
				    ho_err(err, -ELOOP, "task graph has a cycle through task '%s'",
					   p->task_name[t]);
				goto out;
			}
	}
	ret = 0;
out:
	if (ret == -ENOMEM)
		ho_err(err, ret, "out of memory building the task graph");
	free(fill);
	free(indeg);
	return ret;
}

int ho_problem_alloc_items(struct ho_problem *p, uint32_t m, bool matrix)
{
	p->m = m;
	p->item_prod = calloc(m + 1, sizeof(uint32_t));
	p->item_bytes = calloc(m + 1, sizeof(double));
	p->item_pinned_out = calloc(m + 1, 1);
	if (matrix)
		p->item_comm = calloc(m + 1, sizeof(double));
	return p->item_prod && p->item_bytes && p->item_pinned_out && (!matrix || p->item_comm)
		   ? 0
		   : -ENOMEM;
}

/* ---- classic inputs ---- */

static char *slurp(const char *path, struct ho_error *err)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t len = 0, cap = 0;

	if (!f) {
		ho_err(err, -errno, "%s: %s", path, strerror(errno));
		return NULL;
	}
	for (;;) {
		if (len + 4096 + 1 > cap) {
			char *nb;

			cap = cap ? cap * 2 : 65536;
			if (cap > (64u << 20)) {
				ho_err(err, -EFBIG, "%s: larger than 64 MiB", path);
				goto fail;
			}
			nb = realloc(buf, cap);
			if (!nb) {
				ho_err(err, -ENOMEM, "out of memory");
				goto fail;
			}
			buf = nb;
		}
		size_t r = fread(buf + len, 1, 4096, f);

		len += r;
		if (r < 4096)
			break;
	}
	fclose(f);
	buf[len] = '\0';
	return buf;
fail:
	free(buf);
	fclose(f);
	return NULL;
}

/* Split CSV text into rows of numeric cells (first column and header ignored). */
static int csv_matrix(const char *path, double **out, uint32_t *rows, uint32_t *cols,
		      struct ho_error *err)
{
	char *text = slurp(path, err), *line, *save = NULL;
	double *v = NULL;
	uint32_t r = 0, c = 0, cap = 0;
	int ret = 0;

	if (!text)
		return err->code;
	line = strtok_r(text, "\n", &save); /* header */
	if (!line) {
		ret = ho_err(err, -EINVAL, "%s: empty file", path);
		goto out;
	}
	while ((line = strtok_r(NULL, "\n", &save))) {
		uint32_t k = 0;
		char *cell, *s2 = NULL;

		if (!*line || *line == '\r')
			continue;
		strtok_r(line, ",", &s2); /* row label */
		while ((cell = strtok_r(NULL, ",\r", &s2))) {
			char *end;
			double x = strtod(cell, &end);

			if (r > 0 && k >= c) {
				ret = ho_err(err, -EINVAL, "%s: row %u has more than %u values",
					     path, r + 2, c);
				goto out;
			}
			if (end == cell || x < 0 || !isfinite(x)) {
				ret = ho_err(err, -EINVAL, "%s: row %u: '%s' is not a cost", path,
					     r + 2, cell);
				goto out;
			}
			if ((r + 1) * (size_t)(k + 1) > cap) {
				double *nv;

				cap = cap ? cap * 2 : 256;
				nv = realloc(v, cap * sizeof(double));
				if (!nv) {
					ret = ho_err(err, -ENOMEM, "out of memory");
					goto out;
				}
				v = nv;
			}
			v[(size_t)r * (c ? c : 1) + k] = x;
			k++;
		}
		if (r == 0)
			c = k;
		else if (k != c) {
			ret = ho_err(err, -EINVAL, "%s: row %u has %u values, expected %u", path,
				     r + 2, k, c);
			goto out;
		}
		r++;
		if (cap < (r + 1) * (size_t)c) {
			double *nv;

			cap = (uint32_t)((r + 1) * c * 2);
			nv = realloc(v, cap * sizeof(double));
			if (!nv) {
				ret = ho_err(err, -ENOMEM, "out of memory");
				goto out;
			}
			v = nv;
		}
	}
	if (!r || !c)
		ret = ho_err(err, -EINVAL, "%s: no data rows", path);
out:
	free(text);
	if (ret) {
		free(v);
		return ret;
	}
	*out = v;
	*rows = r;
	*cols = c;
	return 0;
}

int ho_problem_from_csv(const char *comp_csv, const char *edges_csv, struct ho_problem **out,
			struct ho_error *err)
{
	double *w = NULL, *c = NULL;
	uint32_t n, d, en, ec, m = 0, *ei = NULL, *et = NULL;
	struct ho_problem *p = NULL;
	int ret;

	ret = csv_matrix(comp_csv, &w, &n, &d, err);
	if (ret)
		return ret;
	ret = csv_matrix(edges_csv, &c, &en, &ec, err);
	if (ret)
		goto out;
	if (en != n || ec != n) {
		ret = ho_err(err, -EINVAL, "%s is %ux%u, expected %ux%u for %u tasks", edges_csv,
			     en, ec, n, n, n);
		goto out;
	}
	if (d > HO_MAX_DEVICES) {
		ret = ho_err(err, -EINVAL, "%s: %u processors, at most %d", comp_csv, d,
			     HO_MAX_DEVICES);
		goto out;
	}
	p = ho_problem_alloc(n, d);
	ei = calloc((size_t)n * n + 1, sizeof(uint32_t));
	et = calloc((size_t)n * n + 1, sizeof(uint32_t));
	if (!p || !ei || !et || ho_problem_alloc_items(p, n * n, true)) {
		ret = ho_err(err, -ENOMEM, "out of memory");
		goto out;
	}
	for (uint32_t i = 0; i < n; i++) {
		snprintf(p->task_name[i], sizeof(p->task_name[i]), "T%u", i);
		for (uint32_t k = 0; k < d; k++)
			p->comp[i * d + k] = w[i * d + k];
	}
	for (uint32_t k = 0; k < d; k++)
		snprintf(p->dev_name[k], sizeof(p->dev_name[k]), "P%u", k);
	/* One item per edge: the classic model charges each edge on its own. */
	for (uint32_t i = 0; i < n; i++)
		for (uint32_t j = 0; j < n; j++)
			if (c[i * n + j] > 0) {
				p->item_prod[m] = i;
				p->item_comm[m] = c[i * n + j];
				ei[m] = m;
				et[m] = j;
				m++;
			}
	p->m = m;
	p->default_device = 0;
	ret = ho_problem_link(p, m, ei, et, err);
out:
	free(w);
	free(c);
	free(ei);
	free(et);
	return ho_problem_publish(p, ret, out);
}

int ho_problem_from_stg(const char *path, uint32_t n_procs, struct ho_problem **out,
			struct ho_error *err)
{
	char *text = slurp(path, err), *line, *save = NULL;
	uint32_t n = 0, m = 0, cap = 0, *ei = NULL, *et = NULL, *prod = NULL;
	struct ho_problem *p = NULL;
	int ret = 0;
	long total;

	if (!text)
		return err->code;
	if (n_procs < 1 || n_procs > HO_MAX_DEVICES) {
		ret =
		    ho_err(err, -EINVAL, "STG: %u processors, need 1..%d", n_procs, HO_MAX_DEVICES);
		goto out;
	}
	line = strtok_r(text, "\n", &save);
	if (!line || sscanf(line, "%ld", &total) != 1 || total < 1 || total > 1000000) {
		ret = ho_err(err, -EINVAL, "%s: first line must be the task count", path);
		goto out;
	}
	n = (uint32_t)total + 2; /* dummy entry and exit */
	p = ho_problem_alloc(n, n_procs);
	if (!p) {
		ret = ho_err(err, -ENOMEM, "out of memory");
		goto out;
	}
	for (uint32_t k = 0; k < n_procs; k++)
		snprintf(p->dev_name[k], sizeof(p->dev_name[k]), "P%u", k);
	for (uint32_t i = 0; i < n; i++) {
		long id, time, npred;
		int off = 0, used;

		line = strtok_r(NULL, "\n", &save);
		if (!line || sscanf(line, "%ld %ld %ld%n", &id, &time, &npred, &off) != 3 ||
		    id != (long)i || time < 0 || npred < 0 || npred > (long)n) {
			ret = ho_err(err, -EINVAL, "%s: task line %u is malformed", path, i);
			goto out;
		}
		snprintf(p->task_name[i], sizeof(p->task_name[i]), "T%u", i);
		for (uint32_t k = 0; k < n_procs; k++)
			p->comp[i * n_procs + k] = (double)time;
		for (long j = 0; j < npred; j++) {
			long pr;

			if (sscanf(line + off, "%ld%n", &pr, &used) != 1 || pr < 0 ||
			    pr >= (long)n) {
				ret = ho_err(err, -EINVAL, "%s: task %u: bad predecessor", path, i);
				goto out;
			}
			off += used;
			if (m == cap) {
				cap = cap ? cap * 2 : 256;
				uint32_t *a = realloc(ei, cap * sizeof(*a)), *b, *c;

				if (a)
					ei = a;
				b = realloc(et, cap * sizeof(*b));
				if (b)
					et = b;
				c = realloc(prod, cap * sizeof(*c));
				if (c)
					prod = c;
				if (!a || !b || !c) {
					ret = ho_err(err, -ENOMEM, "out of memory");
					goto out;
				}
			}
			prod[m] = (uint32_t)pr;
			ei[m] = m;
			et[m] = i;
			m++;
		}
	}
	if (ho_problem_alloc_items(p, m, true)) {
		ret = ho_err(err, -ENOMEM, "out of memory");
		goto out;
	}
	if (m) /* a graph of independent tasks has no edge array at all */
		memcpy(p->item_prod, prod, m * sizeof(uint32_t));
	ret = ho_problem_link(p, m, ei, et, err);
out:
	free(text);
	free(ei);
	free(et);
	free(prod);
	return ho_problem_publish(p, ret, out);
}

/*
 * JSON DAG: {"devices": ["a","b"], "tasks": [{"name": "t0", "cost": [3, 5]}, ...],
 *            "edges": [{"from": 0, "to": 1, "comm": 2.5}, ...]}
 * Costs in seconds; a null cost marks a device that cannot run the task.
 */
int ho_problem_from_dag_json(const char *path, struct ho_problem **out, struct ho_error *err)
{
	json_error_t je;
	json_t *root = json_load_file(path, 0, &je), *devs, *tasks, *edges, *v;
	struct ho_problem *p = NULL;
	uint32_t *ei = NULL, *et = NULL;
	size_t i, k;
	int ret = 0;

	if (!root)
		return ho_err(err, -EINVAL, "%s:%d: %s", path, je.line, je.text);
	devs = json_object_get(root, "devices");
	tasks = json_object_get(root, "tasks");
	edges = json_object_get(root, "edges");
	if (!json_is_array(devs) || !json_array_size(devs) ||
	    json_array_size(devs) > HO_MAX_DEVICES) {
		ret = ho_err(err, -EINVAL, "%s: \"devices\" must be an array of 1..%d names", path,
			     HO_MAX_DEVICES);
		goto out;
	}
	if (!json_is_array(tasks) || !json_array_size(tasks) || !json_is_array(edges)) {
		ret = ho_err(err, -EINVAL, "%s: needs \"tasks\" and \"edges\" arrays", path);
		goto out;
	}
	uint32_t n = (uint32_t)json_array_size(tasks), d = (uint32_t)json_array_size(devs);
	uint32_t m = (uint32_t)json_array_size(edges);

	p = ho_problem_alloc(n, d);
	ei = calloc(m + 1, sizeof(uint32_t));
	et = calloc(m + 1, sizeof(uint32_t));
	if (!p || !ei || !et || ho_problem_alloc_items(p, m, true)) {
		ret = ho_err(err, -ENOMEM, "out of memory");
		goto out;
	}
	json_array_foreach(devs, i, v)
	{
		if (!json_is_string(v)) {
			ret = ho_err(err, -EINVAL, "%s: devices[%zu] is not a string", path, i);
			goto out;
		}
		snprintf(p->dev_name[i], sizeof(p->dev_name[i]), "%s", json_string_value(v));
	}
	json_array_foreach(tasks, i, v)
	{
		json_t *cost = json_object_get(v, "cost"), *c;
		const char *name = json_string_value(json_object_get(v, "name"));

		snprintf(p->task_name[i], sizeof(p->task_name[i]), "%s", name ? name : "");
		if (!name)
			snprintf(p->task_name[i], sizeof(p->task_name[i]), "t%zu", i);
		if (!json_is_array(cost) || json_array_size(cost) != d) {
			ret = ho_err(err, -EINVAL, "%s: tasks[%zu].cost must have %u entries", path,
				     i, d);
			goto out;
		}
		p->allowed[i] = 0;
		json_array_foreach(cost, k, c)
		{
			if (json_is_null(c)) {
				p->comp[i * d + k] = INFINITY;
				continue;
			}
			if (!json_is_number(c) || json_number_value(c) < 0) {
				ret = ho_err(err, -EINVAL, "%s: tasks[%zu].cost[%zu] is not a cost",
					     path, i, k);
				goto out;
			}
			p->comp[i * d + k] = json_number_value(c);
			p->allowed[i] |= 1ull << k;
		}
		if (!p->allowed[i]) {
			ret = ho_err(err, -EINVAL, "%s: task '%s' runs on no device", path,
				     p->task_name[i]);
			goto out;
		}
	}
	json_array_foreach(edges, i, v)
	{
		json_int_t from = json_integer_value(json_object_get(v, "from"));
		json_int_t to = json_integer_value(json_object_get(v, "to"));
		double comm = json_number_value(json_object_get(v, "comm"));

		if (!json_is_integer(json_object_get(v, "from")) ||
		    !json_is_integer(json_object_get(v, "to")) || from < 0 || to < 0 || from >= n ||
		    to >= n || from == to || comm < 0 || !isfinite(comm)) {
			ret = ho_err(err, -EINVAL,
				     "%s: edges[%zu] needs from/to task indices and comm >= 0",
				     path, i);
			goto out;
		}
		p->item_prod[i] = (uint32_t)from;
		p->item_comm[i] = comm;
		ei[i] = (uint32_t)i;
		et[i] = (uint32_t)to;
	}
	ret = ho_problem_link(p, m, ei, et, err);
out:
	json_decref(root);
	free(ei);
	free(et);
	return ho_problem_publish(p, ret, out);
}

int ho_problem_pin(struct ho_problem *p, const char *key, const char *device, struct ho_error *err)
{
	int dev = -1;
	uint32_t hits = 0;

	for (uint32_t k = 0; k < p->d; k++)
		if (!strcmp(p->dev_name[k], device))
			dev = (int)k;
	if (dev < 0)
		return ho_err(err, -ENOENT, "--pin %s=%s: no device '%s' in the box", key, device,
			      device);
	for (uint32_t t = 0; t < p->n; t++) {
		if (strcmp(p->task_op[t], key) && strcmp(p->task_name[t], key))
			continue;
		if (!isfinite(p->comp[t * p->d + dev]))
			return ho_err(err, -EINVAL, "--pin %s=%s: task '%s' (%s) cannot run on %s",
				      key, device, p->task_name[t], p->task_op[t], device);
		p->allowed[t] = 1ull << dev;
		hits++;
	}
	if (!hits)
		return ho_err(err, -ENOENT, "--pin %s=%s: no task has that op type or name", key,
			      device);
	return 0;
}
