/* SPDX-License-Identifier: MIT */
/*
 * Random task graphs for tests and benchmarks, generated as in the HEFT paper
 * (Topcuoglu et al. 2002, section 5.1): v tasks in layers whose width follows
 * the shape parameter, out-degree, communication-to-computation ratio CCR and
 * range percentage beta (heterogeneity).  Written as the JSON DAG format and
 * loaded through the public reader, so the tests exercise it too.
 */
#ifndef HO_RANDDAG_H
#define HO_RANDDAG_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "heteroopt/sched.h"

struct rd_rng {
	uint64_t s;
};

static inline double rd_unit(struct rd_rng *r)
{
	r->s = r->s * 6364136223846793005ull + 1442695040888963407ull;
	return (double)(r->s >> 11) * 0x1.0p-53;
}

/* Returns a problem, or NULL; writes the JSON to a temporary file and removes it. */
static inline struct ho_problem *rd_problem(uint64_t seed, unsigned v, unsigned procs, double ccr,
					    double beta, double shape)
{
	struct rd_rng r = {seed * 2654435761u + 1};
	char path[] = "/tmp/ho-randdag-XXXXXX";
	int fd = mkstemp(path);
	FILE *f;
	unsigned height, *layer_of, *first, n_layers = 0, placed = 0, edges = 0;
	double wdag = 50; /* average computation cost */
	struct ho_problem *p = NULL;
	struct ho_error err;

	if (fd < 0)
		return NULL;
	f = fdopen(fd, "w");
	height = (unsigned)ceil(sqrt((double)v) / shape);
	if (height < 2)
		height = 2;
	layer_of = calloc(v, sizeof(unsigned));
	first = calloc(v + 2, sizeof(unsigned));
	/* Layer widths: mean sqrt(v) * shape, uniform around it. */
	while (placed < v) {
		unsigned w = (unsigned)(1 + rd_unit(&r) * 2 * sqrt((double)v) * shape);

		if (w > v - placed)
			w = v - placed;
		first[n_layers] = placed;
		for (unsigned i = 0; i < w; i++)
			layer_of[placed + i] = n_layers;
		placed += w;
		n_layers++;
	}
	first[n_layers] = v;
	fprintf(f, "{\"devices\": [");
	for (unsigned j = 0; j < procs; j++)
		fprintf(f, "%s\"p%u\"", j ? "," : "", j);
	fprintf(f, "], \"tasks\": [");
	for (unsigned i = 0; i < v; i++) {
		double wi = rd_unit(&r) * 2 * wdag;

		fprintf(f, "%s{\"name\": \"t%u\", \"cost\": [", i ? "," : "", i);
		for (unsigned j = 0; j < procs; j++)
			fprintf(f, "%s%.6f", j ? "," : "",
				wi * (1 - beta / 2 + rd_unit(&r) * beta) + 1e-3);
		fprintf(f, "]}");
	}
	fprintf(f, "], \"edges\": [");
	/* Each task feeds 1-3 tasks of later layers (mostly the next one). */
	for (unsigned i = 0; i < v; i++) {
		unsigned L = layer_of[i], outs = 1 + (unsigned)(rd_unit(&r) * 3);

		if (L + 1 >= n_layers)
			continue;
		for (unsigned k = 0; k < outs; k++) {
			unsigned tl = L + 1 + (rd_unit(&r) < 0.2 && L + 2 < n_layers ? 1 : 0);
			unsigned w = first[tl + 1] - first[tl],
				 to = first[tl] + (unsigned)(rd_unit(&r) * w);

			fprintf(f, "%s{\"from\": %u, \"to\": %u, \"comm\": %.6f}",
				edges++ ? "," : "", i, to, rd_unit(&r) * 2 * ccr * wdag);
		}
	}
	/* Tasks of later layers with no input hang off a random earlier task. */
	for (unsigned i = first[1]; i < v; i++) {
		unsigned L = layer_of[i],
			 from = first[L - 1] + (unsigned)(rd_unit(&r) * (first[L] - first[L - 1]));

		fprintf(f, "%s{\"from\": %u, \"to\": %u, \"comm\": %.6f}", edges++ ? "," : "", from,
			i, rd_unit(&r) * 2 * ccr * wdag);
	}
	fprintf(f, "]}\n");
	fclose(f);
	if (ho_problem_from_dag_json(path, &p, &err))
		fprintf(stderr, "randdag: %s\n", err.msg);
	unlink(path);
	free(layer_of);
	free(first);
	(void)height;
	return p;
}

#endif
