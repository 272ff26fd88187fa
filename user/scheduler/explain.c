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

void ho_explain(const struct ho_problem *p, const uint16_t *assign, const uint8_t *prec,
		const struct ho_eval *ev, const struct ho_timeline *tl, uint32_t t, char *buf,
		size_t n)
{
	uint32_t d = p->d, q = ho_task_precision(p, prec, t, assign[t]);
	int here = assign[t], fastest = -1;
	char a[32], b[32];

	/* times as the task computes, in its precision where its device offers that */
	if (q && (!tl || tl->how[t] == HO_TASK_RAN)) {
		int k = snprintf(buf, n, "in %s: ", p->prec_name[q]);

		if (k > 0 && (size_t)k < n) {
			buf += k;
			n -= (size_t)k;
		}
	}

	if (tl && tl->how[t] == HO_TASK_FUSED) {
		snprintf(buf, n, "fused into %s's kernel on this device: no time, no bytes between",
			 p->task_name[p->fuse_head[t]]);
		return;
	}
	if (tl && tl->how[t] == HO_TASK_VIEW) {
		snprintf(buf, n, "a view of its input, read where that lives: no time, no bytes");
		return;
	}
	if (tl && tl->how[t] == HO_TASK_GATHERED) {
		snprintf(buf, n,
			 "its inputs are written straight into its output: no time, no bytes");
		return;
	}
	for (uint32_t j = 0; j < d; j++)
		if ((p->allowed[t] >> j & 1) && isfinite(ho_task_comp(p, prec, t, j)) &&
		    (fastest < 0 ||
		     ho_task_comp(p, prec, t, j) < ho_task_comp(p, prec, t, fastest)))
			fastest = (int)j;
	if (__builtin_popcountll(p->allowed[t]) == 1) {
		bool pinned = false;

		for (uint32_t j = 0; j < d; j++)
			pinned |= (int)j != here && isfinite(ho_task_comp(p, prec, t, j));
		snprintf(buf, n, "%s",
			 pinned ? "pinned here by --pin"
				: "the only device that supports this operator");
		return;
	}
	fmt_time(ho_task_comp(p, prec, t, here), a, sizeof(a));
	if (fastest == here) {
		double second = INFINITY;
		int sj = -1;

		for (uint32_t j = 0; j < d; j++)
			if ((int)j != here && isfinite(ho_task_comp(p, prec, t, j)) &&
			    ho_task_comp(p, prec, t, j) < second) {
				second = ho_task_comp(p, prec, t, j);
				sj = (int)j;
			}
		if (sj < 0) {
			snprintf(buf, n, "fastest device (%s)", a);
			return;
		}
		fmt_time(second, b, sizeof(b));
		snprintf(buf, n, "fastest device: %s, %.2gx faster than on %s (%s)", a,
			 ho_task_comp(p, prec, t, here) > 0
			     ? second / ho_task_comp(p, prec, t, here)
			     : 1.0,
			 p->dev_name[sj], b);
		return;
	}
	fmt_time(ho_task_comp(p, prec, t, fastest), b, sizeof(b));
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
