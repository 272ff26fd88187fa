// SPDX-License-Identifier: MIT
/*
 * Cost model: roofline compute time per (node, device), transfer time per
 * (item, route), each where the profile (user/box/profile.c) measured nothing
 * better.  Also builds a struct ho_problem from a graph with inferred shapes
 * and a box.
 */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sched_priv.h"

double ho_cost_launch(const struct ho_box *box, int dev, const struct ho_profile *prof)
{
	return ho_profile_launch(prof, box, dev);
}

double ho_cost_node(const struct ho_graph *g, const struct ho_node *nd, const struct ho_box *box,
		    int dev, const struct ho_profile *prof)
{
	const struct ho_device *d = &box->dev[dev];
	const struct ho_features *f = &nd->feat;
	int dt = HO_DT_FLOAT;
	double peak, bw, eff, t, launch;

	if (!ho_device_supports(d, nd->op_type))
		return INFINITY;
	launch = ho_profile_launch(prof, box, dev);
	if ((t = ho_profile_node_time(prof, g, nd, dev, launch)) >= 0)
		return t;
	if (nd->n_outputs && nd->outputs[0] >= 0 && g->tensors[nd->outputs[0]].dtype)
		dt = g->tensors[nd->outputs[0]].dtype;
	peak = ho_profile_peak(prof, box, dev, dt);
	if (peak <= 0) /* no rate for this type: compute it at float32 speed */
		peak = ho_profile_peak(prof, box, dev, HO_DT_FLOAT);
	if (peak <= 0 && f->flops > 0)
		return INFINITY; /* the device has no arithmetic for this element type */
	bw = ho_profile_mem_bw(prof, box, dev);
	eff = ho_profile_efficiency(prof, box, dev, nd->op_type, f->op_class);
	double t_compute = f->flops > 0 ? f->flops / (peak * eff) : 0;
	double t_memory = (double)(f->bytes_read + f->bytes_written) / (bw * eff);

	return (t_compute > t_memory ? t_compute : t_memory) + launch;
}

/*
 * How much of a node's work is arithmetic rather than memory traffic, by the
 * host's roofline: what a neighbour's compute, not its streaming, slows.  A
 * convolution over a large map with few channels is as much memory-bound as
 * an element-wise op: with a quick probe's 301 GFLOP/s and 69 GB/s (a 2-core
 * AMD EPYC) the detector's 16-channel depthwise at 640x368 comes out 0.34
 * arithmetic, its 96-to-24 3x3 at 320x184 0.95.
 */
static double ho_compute_share(const struct ho_node *nd, const struct ho_box *box,
			       const struct ho_profile *prof)
{
	double peak = ho_profile_peak(prof, box, box->host, HO_DT_FLOAT),
	       bw = ho_profile_mem_bw(prof, box, box->host),
	       tc = peak > 0 ? nd->feat.flops / peak : 0,
	       tm = bw > 0 ? (double)(nd->feat.bytes_read + nd->feat.bytes_written) / bw : 0;

	return tc + tm > 0 ? tc / (tc + tm) : 0;
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
		double lat = ho_profile_link_latency(prof, box->links[l].a, box->links[l].b),
		       bw = ho_profile_link_bw(prof, box->links[l].a, box->links[l].b);

		if (lat >= 0)
			p->link_lat[l] = lat;
		if (bw > 0)
			p->link_bw[l] = bw;
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
					double hbw = ho_profile_handoff_bw(prof, (int)a, (int)b);

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

/* The devices on which task t's kernel folds the Transposes bits names (kernel_mem's
 * through: bit k for input k, HO_THROUGH_OUTPUT for the one after it). */
static uint64_t ho_through_mask(const struct ho_problem *p, int32_t t, uint32_t bits)
{
	uint64_t mask = 0;

	for (uint32_t dev = 0; p->kernel_mem && dev < p->d; dev++)
		mask |= (uint64_t) !!(p->kernel_mem[(size_t)t * p->d + dev].through & bits) << dev;
	return mask;
}

/*
 * The devices on which Transpose node i is read through by the MatMul after it (its
 * kernel there reads that input so), and that MatMul; 0 if none.
 */
static uint64_t ho_through_devices(const struct ho_graph *g, const struct ho_problem *p,
				   const int32_t *task_of, uint32_t i, int32_t *reader)
{
	const struct ho_node *nd = &g->nodes[i];
	int32_t t = nd->n_outputs ? nd->outputs[0] : -1, mm;
	uint64_t mask = 0;

	if (!p->kernel_mem || strcmp(nd->op_type, "Transpose") || t < 0 ||
	    g->tensors[t].n_consumers != 1 || task_of[mm = g->tensors[t].consumers[0]] < 0)
		return 0;
	for (uint32_t k = 0; k < 2; k++)
		if (ho_matmul_through(g, (uint32_t)mm, k) == (int32_t)i)
			mask |= ho_through_mask(p, task_of[mm], 1u << k);
	*reader = task_of[mm];
	return mask;
}

/*
 * Each view task's source and item (ho_node_is_view), and each Transpose a MatMul
 * reads through, where (ho_through_devices).  The arrays are made at the first
 * view: without any they stay NULL, and the simulator skips them.
 */
static int ho_problem_views(const struct ho_graph *g, struct ho_problem *p, const int32_t *task_of,
			    const int32_t *item_of, const int32_t *weight_of)
{
	for (uint32_t i = 0; i < g->n_nodes; i++) {
		const struct ho_node *nd = &g->nodes[i];
		int32_t t = task_of[i], in = nd->n_inputs ? nd->inputs[0] : -1, reader = -1;
		uint64_t through = t < 0 ? 0 : ho_through_devices(g, p, task_of, i, &reader);

		if (t < 0 || (!ho_node_is_view(g, nd) && !through) || in < 0 || !nd->n_outputs ||
		    nd->outputs[0] < 0 || item_of[nd->outputs[0]] < 0 ||
		    (item_of[in] < 0 && weight_of[in] < 0))
			continue;
		if (!p->view_src &&
		    (!(p->view_src = ho_task_array(p->n)) || !(p->view_out = ho_task_array(p->n))))
			return -ENOMEM;
		p->view_src[t] = item_of[in] >= 0 ? (uint32_t)item_of[in] : HO_VIEW_OF_WEIGHT;
		p->view_out[t] = (uint32_t)item_of[nd->outputs[0]];
		if (!through)
			continue;
		if (!p->view_reader && (!(p->view_reader = ho_task_array(p->n)) ||
					!(p->view_devs = calloc(p->n + 1, sizeof(uint64_t)))))
			return -ENOMEM;
		p->view_reader[t] = (uint32_t)reader;
		p->view_devs[t] = through;
	}
	return 0;
}

/*
 * The Concats whose inputs may be written straight into their output, their output items,
 * and the items those inputs show (ho_concat_in_place); NULL without any.
 */
static int ho_problem_gathers(const struct ho_graph *g, struct ho_problem *p,
			      const int32_t *task_of, const int32_t *item_of)
{
	int32_t *by = malloc((g->n_tensors + 1) * sizeof(int32_t));
	uint64_t *off = malloc((g->n_tensors + 1) * sizeof(uint64_t));
	int ret = -ENOMEM;

	if (!by || !off)
		goto out;
	ho_concat_in_place(g, by, off);
	for (uint32_t t = 0; t < g->n_tensors; t++) {
		int32_t c = by[t], y = c >= 0 ? g->nodes[c].outputs[0] : -1;

		if (y < 0 || task_of[c] < 0 || item_of[t] < 0 || item_of[y] < 0)
			continue;
		if (!p->gather_by && (!(p->gather_by = ho_task_array(p->m)) ||
				      !(p->gather_out = ho_task_array(p->n))))
			goto out;
		p->gather_by[item_of[t]] = (uint32_t)task_of[c];
		p->gather_out[task_of[c]] = (uint32_t)item_of[y];
	}
	ret = 0;
out:
	free(by);
	free(off);
	return ret;
}

/*
 * What link node l adds fused into the kernel of chain head h on device k:
 * nothing where h's time was measured (its family held the post-op then),
 * else the post-op's work per output element as the probe measured it.
 */
static double ho_fused_cost(const struct ho_graph *g, const struct ho_profile *prof, uint32_t h,
			    uint32_t l, int k)
{
	const struct ho_node *nd = &g->nodes[l];
	double per = ho_profile_post_op(prof, k, nd->op_type);

	if (per <= 0 || !nd->n_outputs || nd->outputs[0] < 0 ||
	    ho_profile_node_measured(prof, g, &g->nodes[h], k))
		return 0;
	return per * (double)ho_shape_numel(&g->tensors[nd->outputs[0]].shape);
}

struct ho_sig_at {
	uint64_t sig;
	uint32_t at; /* task * devices + device */
};

static int ho_sig_cmp(const void *a, const void *b)
{
	uint64_t x = ((const struct ho_sig_at *)a)->sig, y = ((const struct ho_sig_at *)b)->sig;

	return x < y ? -1 : x > y;
}

/* The kernels that share one copy of a weight in one layout (packed_sig): one group each. */
static int ho_problem_packed_groups(struct ho_problem *p)
{
	size_t nd = (size_t)p->n * p->d, m = 0;
	struct ho_sig_at *v = malloc((nd + 1) * sizeof(*v));

	if (!v || !(p->packed_group = calloc(nd + 1, sizeof(uint32_t)))) {
		free(v);
		return -ENOMEM;
	}
	for (size_t i = 0; i < nd; i++)
		if (p->kernel_mem[i].packed)
			v[m++] = (struct ho_sig_at){p->kernel_mem[i].packed_sig, (uint32_t)i};
	qsort(v, m, sizeof(*v), ho_sig_cmp);
	for (size_t i = 0; i < m; i++) {
		if (i && v[i].sig != v[i - 1].sig)
			p->n_packed_groups++;
		p->packed_group[v[i].at] = p->n_packed_groups;
	}
	p->n_packed_groups += m > 0;
	free(v);
	return 0;
}

/*
 * The devices on which node i's kernel holds weight tid in its own layout alone
 * (ho_kernel_memory.taken), wherever the node reads it.
 */
static uint64_t ho_weight_taken(const struct ho_graph *g, const struct ho_backend_view *bv,
				uint32_t i, int32_t tid, uint32_t d)
{
	uint64_t mask = 0;

	for (uint32_t dev = 0; dev < d; dev++)
		mask |= (uint64_t)ho_reads_only_through(&g->nodes[i], tid,
							bv->memory[(size_t)i * d + dev].taken)
			<< dev;
	return mask;
}

/*
 * Each Conv's, MatMul's and lone batch norm's chain (fusion.c) as links from a
 * task to the one before it, and what each link costs fused; made at the first
 * chain, NULL without any, like the views.
 */
static int ho_problem_chains(const struct ho_graph *g, const struct ho_profile *prof,
			     const struct ho_backend_view *bv, struct ho_problem *p,
			     const int32_t *task_of, const int32_t *item_of)
{
	for (uint32_t i = 0; i < g->n_nodes; i++) {
		int32_t chain[5], link[4], len = 1;
		uint64_t out; /* where a MatMul's Transpose folds */

		if (task_of[i] < 0)
			continue;
		chain[0] = (int32_t)i;
		ho_chain_links(g, i, link);
		/* a MatMul's Transpose: where its kernel writes through it */
		out = link[3] >= 0 && link[3] == ho_matmul_out_through(g, i)
			  ? ho_through_mask(p, task_of[i], HO_THROUGH_OUTPUT)
			  : ~0ull;
		for (int k = 0; k < 4; k++)
			if (link[k] >= 0)
				chain[len++] = link[k];
		for (int k = 1; k < len; k++) {
			int32_t prev = chain[k - 1], t = task_of[chain[k]],
				in = item_of[g->nodes[prev].outputs[0]];

			if (t < 0 || task_of[prev] < 0 || in < 0)
				break;
			if (!p->fuse_prev && (!(p->fuse_prev = ho_task_array(p->n)) ||
					      !(p->fuse_in = ho_task_array(p->n)) ||
					      !(p->fuse_head = ho_task_array(p->n)) ||
					      !(p->fuse_res = ho_task_array(p->n))))
				return -ENOMEM;
			if (chain[k] == link[1]) { /* the residual Add: what it adds into */
				int32_t r = ho_other_input(g, link[1], g->nodes[prev].outputs[0]);

				if (r < 0 || item_of[r] < 0)
					break;
				p->fuse_res[t] = (uint32_t)item_of[r];
			}
			/* where the link folds: the devices whose backend takes it in (bv) */
			uint64_t devs = (k == len - 1 ? out : ~0ull) &
					(bv && bv->folds ? bv->folds[chain[k]] : ~0ull);

			if (devs != ~0ull && !p->fuse_devs) {
				if (!(p->fuse_devs = malloc((p->n + 1) * sizeof(uint64_t))))
					return -ENOMEM;
				memset(p->fuse_devs, 0xff, (p->n + 1) * sizeof(uint64_t));
			}
			if (p->fuse_devs)
				p->fuse_devs[t] = devs;
			p->fuse_prev[t] = (uint32_t)task_of[prev];
			p->fuse_in[t] = (uint32_t)in;
			p->fuse_head[t] = (uint32_t)task_of[i];
			for (uint32_t dev = 0; dev < p->d; dev++) {
				double c = ho_fused_cost(g, prof, i, (uint32_t)chain[k], (int)dev);

				if (c > 0 && !p->fused_comp &&
				    !(p->fused_comp =
					  calloc((size_t)p->n * p->d + 1, sizeof(double))))
					return -ENOMEM;
				if (c > 0)
					p->fused_comp[(size_t)t * p->d + dev] = c;
			}
		}
	}
	return 0;
}

int ho_problem_from_graph(const struct ho_graph *g, const struct ho_box *box,
			  const struct ho_profile *prof, struct ho_problem **out,
			  struct ho_error *err)
{
	return ho_problem_from_graph_on(g, box, prof, NULL, out, err);
}

int ho_problem_from_graph_on(const struct ho_graph *g, const struct ho_box *box,
			     const struct ho_profile *prof, const struct ho_backend_view *bv,
			     struct ho_problem **out, struct ho_error *err)
{
	const uint64_t *takes = bv ? bv->takes : NULL;
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
	if (bv && bv->memory) {
		if (!(p->kernel_mem = calloc((size_t)n * d + 1, sizeof(*p->kernel_mem))))
			goto nomem;
		for (uint32_t i = 0; i < g->n_nodes; i++)
			if (task_of[i] >= 0)
				memcpy(&p->kernel_mem[(size_t)task_of[i] * d],
				       &bv->memory[(size_t)i * d], d * sizeof(*p->kernel_mem));
		if (ho_problem_packed_groups(p))
			goto nomem;
	}
	if (ho_profile_interferes(prof)) {
		p->slowdown = malloc(2 * (size_t)d * d * sizeof(double));
		p->task_compute = calloc(n + 1, sizeof(double));
		if (!p->slowdown || !p->task_compute)
			goto nomem;
		for (uint32_t c = 0; c < 2; c++)
			for (uint32_t i = 0; i < d; i++)
				for (uint32_t j = 0; j < d; j++)
					p->slowdown[(c * d + i) * d + j] =
					    ho_profile_slowdown(prof, (int)c, (int)i, (int)j);
		for (uint32_t i = 0; i < g->n_nodes; i++)
			if (task_of[i] >= 0)
				p->task_compute[task_of[i]] =
				    ho_compute_share(&g->nodes[i], box, prof);
	}
	p->box = box;
	p->contention = true;
	p->small_transfer = box->small_transfer;
	p->default_device = box->host;
	for (uint32_t k = 0; k < d; k++) {
		snprintf(p->dev_name[k], sizeof(p->dev_name[k]), "%s", box->dev[k].name);
		p->capacity[k] = box->dev[k].mem_capacity * box->mem_safety;
		p->idle_power[k] = box->dev[k].idle_power;
		if (box->dev[k].whole_of)
			p->whole |= 1ull << k;
	}
	if (p->whole) {
		if (!(p->exclusive = calloc(d, sizeof(uint64_t))))
			goto nomem;
		for (uint32_t k = 0; k < d; k++)
			p->exclusive[k] = ho_box_exclusive(box, (int)k);
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
	if (bv && bv->memory && !(p->wcons_taken = calloc(ne + 1, sizeof(uint64_t))))
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
			double c = takes && !(takes[i] >> k & 1)
				       ? INFINITY
				       : ho_cost_node(g, nd, box, (int)k, prof);
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
			if (dup)
				continue;
			uint32_t at = p->wcons_off[weight_of[tid] + 1] + wfill[weight_of[tid]]++;

			p->wcons[at] = (uint32_t)task_of[i];
			if (p->wcons_taken)
				p->wcons_taken[at] = ho_weight_taken(g, bv, i, tid, d);
		}
	}
	memmove(p->wcons_off, p->wcons_off + 1, (nw + 1) * sizeof(uint32_t));
	if (ho_problem_views(g, p, task_of, item_of, weight_of) ||
	    ho_problem_gathers(g, p, task_of, item_of) ||
	    ho_problem_chains(g, prof, bv, p, task_of, item_of))
		goto nomem;
	ret = ho_problem_link(p, ne, ei, et, err);
	if (!ret && bv && bv->layout && ho_problem_layouts(g, prof, bv, task_of, item_of, p))
		goto nomem;
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
