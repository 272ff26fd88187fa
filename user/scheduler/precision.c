// SPDX-License-Identifier: MIT
/*
 * Precision as a decision of the schedule: beside each task's device, the search
 * chooses the arithmetic its kernel computes in (float32, bf16, int8), where that
 * device offers it.  What it reads: each precision's speed-up on each device, as the
 * probes measured its kernel class (the conversions the kernel makes are inside
 * those times), and each task's sensitivity, the error of the model's outputs with
 * that task alone in the precision, measured on calibration inputs
 * (heteroopt run --sensitivity).  A plan's error is estimated as the sum of its
 * tasks'; the plan picked is then measured for real.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sched_priv.h"

int ho_problem_set_precisions(struct ho_problem *p, uint32_t n_prec, const char *const *names,
			      const double *speedup, const double *error, const float *range,
			      struct ho_error *err)
{
	size_t cells = (size_t)p->n * p->d * n_prec;

	if (n_prec < 2 || n_prec > UINT8_MAX)
		return ho_err(err, -EINVAL, "precisions: %u of them (float32 and 1 to 254 more)",
			      n_prec);
	if (p->prec_name)
		return ho_err(err, -EEXIST, "precisions: already set");
	p->prec_name = calloc(n_prec, sizeof(*p->prec_name));
	p->prec_comp = calloc(cells + 1, sizeof(double));
	p->prec_error = calloc((size_t)p->n * n_prec + 1, sizeof(double));
	p->prec_range = malloc(((size_t)p->n * n_prec * 2 + 1) * sizeof(float));
	if (!p->prec_name || !p->prec_comp || !p->prec_error || !p->prec_range)
		return ho_err(err, -ENOMEM, "out of memory");
	for (uint32_t q = 0; q < n_prec; q++)
		snprintf(p->prec_name[q], sizeof(p->prec_name[q]), "%s", names[q]);
	for (uint32_t t = 0; t < p->n; t++) {
		for (uint32_t j = 0; j < p->d; j++)
			for (uint32_t q = 1; q < n_prec; q++) {
				size_t i = ((size_t)t * p->d + j) * n_prec + q;
				double c = p->comp[(size_t)t * p->d + j];

				/* a speed-up is the probes' own: one that is no number is none */
				p->prec_comp[i] =
				    isfinite(c) && speedup[i] > 0 && isfinite(speedup[i])
					? c / speedup[i]
					: 0;
			}
		for (uint32_t q = 1; q < n_prec; q++) {
			double e = error[(size_t)t * n_prec + q];

			p->prec_error[(size_t)t * n_prec + q] =
			    e >= 0 && isfinite(e) ? e : INFINITY;
		}
	}
	for (size_t i = 0; i < (size_t)p->n * n_prec * 2; i++)
		p->prec_range[i] = range ? range[i] : NAN;
	p->n_prec = n_prec;
	return 0;
}

uint32_t ho_precision_choices(const struct ho_problem *p, uint32_t t, uint32_t *q)
{
	uint32_t n = 0;

	q[n++] = 0;
	for (uint32_t k = 1; k < p->n_prec; k++)
		for (uint32_t j = 0; j < p->d; j++)
			if ((p->allowed[t] >> j & 1) &&
			    p->prec_comp[((size_t)t * p->d + j) * p->n_prec + k] > 0 &&
			    isfinite(p->prec_error[(size_t)t * p->n_prec + k])) {
				q[n++] = k;
				break;
			}
	return n;
}

void ho_precision_mutate(const struct ho_problem *p, struct ho_rng *rng, uint8_t *prec, double rate)
{
	uint32_t q[256];

	for (uint32_t t = 0; p->n_prec > 1 && t < p->n; t++) {
		if (ho_rng_unit(rng) >= rate)
			continue;
		uint32_t n = ho_precision_choices(p, t, q);

		if (n > 1)
			prec[t] = (uint8_t)q[ho_rng_below(rng, n)];
	}
}

void ho_precision_uniform(const struct ho_problem *p, uint32_t k, uint8_t *prec)
{
	uint32_t q[256];

	for (uint32_t t = 0; t < p->n; t++) {
		uint32_t n = ho_precision_choices(p, t, q);

		prec[t] = 0;
		for (uint32_t i = 1; i < n; i++)
			if (q[i] == k)
				prec[t] = (uint8_t)k;
	}
}

struct ho_prec_item {
	uint32_t t, q;
	double gain; /* seconds saved per unit of error */
};

static int ho_by_gain(const void *a, const void *b)
{
	const struct ho_prec_item *x = a, *y = b;

	return x->gain < y->gain ? 1 : x->gain > y->gain ? -1 : (x->t > y->t) - (x->t < y->t);
}

int ho_precision_fill(const struct ho_problem *p, const uint16_t *assign, double budget,
		      uint8_t *prec)
{
	struct ho_prec_item *it = malloc(((size_t)p->n * p->n_prec + 1) * sizeof(*it));
	uint32_t n = 0;
	double used = 0;

	if (!it)
		return -ENOMEM;
	memset(prec, 0, p->n);
	for (uint32_t t = 0; t < p->n; t++)
		for (uint32_t q = 1; q < p->n_prec; q++) {
			size_t i = ((size_t)t * p->d + assign[t]) * p->n_prec + q;
			double saved = p->comp[(size_t)t * p->d + assign[t]] - p->prec_comp[i],
			       e = p->prec_error[(size_t)t * p->n_prec + q];

			if (p->prec_comp[i] > 0 && saved > 0 && isfinite(e))
				it[n++] = (struct ho_prec_item){t, q, e > 0 ? saved / e : INFINITY};
		}
	qsort(it, n, sizeof(*it), ho_by_gain);
	for (uint32_t k = 0; k < n; k++) {
		double e = p->prec_error[(size_t)it[k].t * p->n_prec + it[k].q];

		if (!prec[it[k].t] && used + e <= budget) {
			prec[it[k].t] = (uint8_t)it[k].q;
			used += e;
		}
	}
	free(it);
	return 0;
}
