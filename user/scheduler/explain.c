// SPDX-License-Identifier: MIT
/*
 * Why a task sits where it sits, in one sentence: how much faster its device
 * is, or which copies and which memory limit keep it off the faster one.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "sched_priv.h"

static void fmt_time(double s, char *buf, size_t n)
{
	if (s >= 1)
		snprintf(buf, n, "%.3g s", s);
	else if (s >= 1e-3)
		snprintf(buf, n, "%.3g ms", s * 1e3);
	else
		snprintf(buf, n, "%.3g us", s * 1e6);
}

/* Bytes that would have to move if task t ran on dev instead, given the others stay. */
static double ho_moved_bytes(const struct ho_problem *p, const uint16_t *assign, uint32_t t,
			     int dev)
{
	double bytes = 0;

	for (uint32_t e = p->in_off[t]; e < p->in_off[t + 1]; e++) {
		uint32_t k = p->in_items[e], prod = p->item_prod[k];
		int src = prod == HO_EXTERNAL ? p->default_device : assign[prod];

		if (src != dev)
			bytes += p->item_bytes[k];
	}
	for (uint32_t s = p->succ_off[t]; s < p->succ_off[t + 1]; s++) {
		uint32_t c = p->succ[s];

		if (assign[c] == dev)
			continue;
		for (uint32_t e = p->in_off[c]; e < p->in_off[c + 1]; e++)
			if (p->item_prod[p->in_items[e]] == t) {
				bytes += p->item_bytes[p->in_items[e]];
				break;
			}
	}
	return bytes;
}

static int ho_view_home(const struct ho_problem *p, const uint16_t *assign, uint32_t t);

/* Task t runs inside its chain's Conv kernel: the simulator's rule (ho_conv_chain). */
static bool ho_fused(const struct ho_problem *p, const uint16_t *assign, uint32_t t)
{
	uint32_t u;

	if (!p->fuse_prev || (u = p->fuse_prev[t]) == HO_NOT_FUSED || assign[u] != assign[t])
		return false;
	return p->fuse_prev[u] == HO_NOT_FUSED || ho_fused(p, assign, u);
}

/* Where item k's bytes live: the simulator's rule, views read in place keep their source's. */
static int ho_item_home(const struct ho_problem *p, const uint16_t *assign, uint32_t k)
{
	uint32_t prod = p->item_prod[k];
	int h;

	if (prod == HO_EXTERNAL)
		return p->default_device;
	if (p->view_src && p->view_out[prod] == k && (h = ho_view_home(p, assign, prod)) >= 0)
		return h;
	return assign[prod];
}

/* The device whose memory view task t shows in place, or -1 (no view, or it reads a copy). */
static int ho_view_home(const struct ho_problem *p, const uint16_t *assign, uint32_t t)
{
	uint32_t src;
	int h;

	if (!p->view_src || (src = p->view_src[t]) == HO_NOT_VIEW)
		return -1;
	h = src == HO_VIEW_OF_WEIGHT ? p->default_device : ho_item_home(p, assign, src);
	return h == assign[t] || (p->in_place && p->in_place[assign[t]] >> h & 1) ? h : -1;
}

void ho_explain(const struct ho_problem *p, const uint16_t *assign, const struct ho_eval *ev,
		uint32_t t, char *buf, size_t n)
{
	uint32_t d = p->d;
	int here = assign[t], fastest = -1;
	char a[32], b[32];
	int view_home = ho_view_home(p, assign, t);

	if (ho_fused(p, assign, t)) {
		snprintf(buf, n, "fused into %s's kernel on this device: no time, no bytes between",
			 p->task_name[p->fuse_head[t]]);
		return;
	}

	if (view_home >= 0) {
		snprintf(buf, n, "a view of its input where that lives (%s): no time, no bytes",
			 p->dev_name[view_home]);
		return;
	}

	for (uint32_t j = 0; j < d; j++)
		if ((p->allowed[t] >> j & 1) && isfinite(p->comp[t * d + j]) &&
		    (fastest < 0 || p->comp[t * d + j] < p->comp[t * d + fastest]))
			fastest = (int)j;
	if (__builtin_popcountll(p->allowed[t]) == 1) {
		bool pinned = false;

		for (uint32_t j = 0; j < d; j++)
			pinned |= (int)j != here && isfinite(p->comp[t * d + j]);
		snprintf(buf, n, "%s",
			 pinned ? "pinned here by --pin"
				: "the only device that supports this operator");
		return;
	}
	fmt_time(p->comp[t * d + here], a, sizeof(a));
	if (fastest == here) {
		double second = INFINITY;
		int sj = -1;

		for (uint32_t j = 0; j < d; j++)
			if ((int)j != here && isfinite(p->comp[t * d + j]) &&
			    p->comp[t * d + j] < second) {
				second = p->comp[t * d + j];
				sj = (int)j;
			}
		if (sj < 0) {
			snprintf(buf, n, "fastest device (%s)", a);
			return;
		}
		fmt_time(second, b, sizeof(b));
		snprintf(buf, n, "fastest device: %s, %.2gx faster than on %s (%s)", a,
			 p->comp[t * d + here] > 0 ? second / p->comp[t * d + here] : 1.0,
			 p->dev_name[sj], b);
		return;
	}
	fmt_time(p->comp[t * d + fastest], b, sizeof(b));
	double moved = ho_moved_bytes(p, assign, t, fastest),
	       kept = ho_moved_bytes(p, assign, t, here);
	double cap = p->capacity[fastest];

	if (cap > 0 && ev->peak_mem[fastest] > 0.9 * cap)
		snprintf(
		    buf, n,
		    "%s is faster (%s vs %s) but its memory is at %.0f%% of the usable capacity",
		    p->dev_name[fastest], b, a, 100 * ev->peak_mem[fastest] / cap);
	else if (moved > kept)
		snprintf(buf, n, "%s is faster (%s vs %s) but would need %.3g MB more copies",
			 p->dev_name[fastest], b, a, (moved - kept) / 1e6);
	else
		snprintf(buf, n,
			 "%s is faster (%s vs %s) but is busy with tasks on the critical path",
			 p->dev_name[fastest], b, a);
}
