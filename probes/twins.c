// SPDX-License-Identifier: MIT
/*
 * Twins: devices a box makes alike (the same backend, kind and platform,
 * as many threads on as many cores) are the same silicon, so their figures
 * must agree.  On a busy machine the probe once measured one of two
 * identical cores as faster, and the report repeated it: a pair that
 * disagrees is measured again (probe.c), and a difference that survives is
 * flagged and not believed.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "probe_priv.h"

static int twin_popcount(const uint64_t *w)
{
	int n = 0;

	for (int i = 0; i < HO_CORE_WORDS; i++)
		n += __builtin_popcountll(w[i]);
	return n;
}

bool ho_probe_twins(const struct ho_box *box, int a, int b)
{
	const struct ho_device *x = &box->dev[a], *y = &box->dev[b];

	return a != b && !strcmp(x->kind, y->kind) && !strcmp(x->backend, y->backend) &&
	       !strcmp(x->platform, y->platform) && !strcmp(x->device, y->device) &&
	       x->threads == y->threads && twin_popcount(x->cores) == twin_popcount(y->cores) &&
	       !x->whole_of && !y->whole_of && x->numa_node == y->numa_node;
}

double ho_probe_twin_gap(const json_t *a, const json_t *b, bool *a_slower)
{
	const json_t *sa = json_object_get(a, "sweep"), *sb = json_object_get(b, "sweep");
	size_t na = json_array_size(sa), nb = json_array_size(sb), n = 0;
	double *r = malloc((na + 1) * sizeof(double)), *gap = malloc((na + 1) * sizeof(double)),
	       worst = 0;

	for (size_t i = 0; r && gap && i < na; i++) {
		const json_t *x = json_array_get(sa, i);
		const char *k = json_string_value(json_object_get(x, "kernel"));

		for (size_t j = 0; k && j < nb; j++) {
			const json_t *y = json_array_get(sb, j);
			const char *ky = json_string_value(json_object_get(y, "kernel"));
			double ux = json_number_value(json_object_get(x, "us")),
			       uy = json_number_value(json_object_get(y, "us"));

			if (ky && !strcmp(k, ky) && ux > 0 && uy > 0) {
				r[n] = ux / uy;
				gap[n++] = fmax(ux / uy, uy / ux);
				break;
			}
		}
	}
	if (n) {
		*a_slower = ho_probe_quantile(r, (uint32_t)n, 0.5) > 1;
		worst = ho_probe_quantile(gap, (uint32_t)n, 0.75); /* the worse quarter */
	}
	free(r);
	free(gap);
	return worst;
}
