// SPDX-License-Identifier: MIT
/*
 * How far a run's outputs are from float32's, as --accuracy-metric says, for
 * --sensitivity and --precision auto: a fraction, 0 the same answer.  The metrics
 * judge what a user reads off the outputs, over every row of a batch of samples:
 *   max    the largest |difference| over the largest |float32 value|;
 *   top1   the rows (over the last axis) whose largest entry moved, a classifier's;
 *   ctc    the rows of [..., T, C] whose greedy CTC decoding (best class per step,
 *          repeats merged, class 0 the blank) changed, a text recogniser's strings;
 *   iou@T  1 - the IoU of the two outputs binarised at T, a segmentation map's.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "heteroopt/runtime.h"

static const char *const metric_names[] = {"max", "top1", "ctc", "iou@T", NULL};

int cli_accuracy_parse(const char *text, struct cli_accuracy *m)
{
	char *end;

	*m = (struct cli_accuracy){.metric = CLI_ACC_MAX};
	if (!text || !strcmp(text, "max"))
		return 0;
	if (!strcmp(text, "top1")) {
		m->metric = CLI_ACC_TOP1;
		return 0;
	}
	if (!strcmp(text, "ctc")) {
		m->metric = CLI_ACC_CTC;
		return 0;
	}
	if (!strncmp(text, "iou@", 4)) {
		m->threshold = strtod(text + 4, &end);
		if (end != text + 4 && !*end && isfinite(m->threshold)) {
			m->metric = CLI_ACC_IOU;
			return 0;
		}
	}
	cli_error("run: --accuracy-metric '%s': one of %s, %s, %s or %s (iou@0.3)", text,
		  metric_names[0], metric_names[1], metric_names[2], metric_names[3]);
	return -EINVAL;
}

/* The index of the largest of n values at x, every step-th. */
static int64_t argmax(const float *x, int64_t n, int64_t step)
{
	int64_t best = 0;

	for (int64_t i = 1; i < n; i++)
		if (x[i * step] > x[best * step])
			best = i;
	return best;
}

/* Whether row r's greedy CTC decodings of a and b (t steps of c classes) differ. */
static bool ctc_differs(const float *a, const float *b, int64_t t, int64_t c)
{
	int64_t i = 0, j = 0, prev_a = -1, prev_b = -1;

	/* walk both decodings, comparing each emitted class in turn */
	for (;;) {
		int64_t ea = -1, eb = -1;

		for (; i < t && ea < 0; i++) {
			int64_t k = argmax(a + i * c, c, 1);

			if (k && k != prev_a)
				ea = k;
			prev_a = k;
		}
		for (; j < t && eb < 0; j++) {
			int64_t k = argmax(b + j * c, c, 1);

			if (k && k != prev_b)
				eb = k;
			prev_b = k;
		}
		if (ea != eb)
			return true;
		if (ea < 0)
			return false;
	}
}

double cli_accuracy_error(const struct ho_graph *g, const struct cli_accuracy *m,
			  const struct ho_rt *ref, const struct ho_rt *rt)
{
	double diff = 0, mag = 0, rows = 0, moved = 0, inter = 0, uni = 0;

	for (uint32_t o = 0; o < g->n_outputs; o++) {
		const struct ho_tensor *t;
		const float *a = ho_rt_output(ref, o, &t), *b = ho_rt_output(rt, o, &t);
		int r;
		int64_t n, last, steps;

		if (!a || !b || t->dtype != HO_DT_FLOAT)
			continue;
		n = ho_shape_numel(&t->shape);
		r = t->shape.rank;
		last = r ? t->shape.dim[r - 1] : 1;
		steps = r >= 2 ? t->shape.dim[r - 2] : 1;
		switch (m->metric) {
		case CLI_ACC_MAX:
			for (int64_t e = 0; e < n; e++) {
				diff = fmax(diff, fabs((double)a[e] - b[e]));
				mag = fmax(mag, fabs((double)a[e]));
			}
			break;
		case CLI_ACC_TOP1:
			for (int64_t s = 0; last && s < n / last; s++, rows++)
				moved +=
				    argmax(a + s * last, last, 1) != argmax(b + s * last, last, 1);
			break;
		case CLI_ACC_CTC:
			for (int64_t s = 0; last && steps && s < n / (last * steps); s++, rows++)
				moved += ctc_differs(a + s * steps * last, b + s * steps * last,
						     steps, last);
			break;
		case CLI_ACC_IOU:
			for (int64_t e = 0; e < n; e++) {
				bool x = a[e] > m->threshold, y = b[e] > m->threshold;

				inter += x && y;
				uni += x || y;
			}
			break;
		}
	}
	switch (m->metric) {
	case CLI_ACC_MAX:
		return mag > 0 ? diff / mag : diff;
	case CLI_ACC_IOU:
		return uni > 0 ? 1 - inter / uni : 0;
	default:
		return rows > 0 ? moved / rows : 0;
	}
}

const char *cli_accuracy_name(const struct cli_accuracy *m, char *buf, size_t len)
{
	if (m->metric == CLI_ACC_IOU)
		snprintf(buf, len, "iou@%g", m->threshold);
	else
		snprintf(buf, len, "%s", metric_names[m->metric]);
	return buf;
}
