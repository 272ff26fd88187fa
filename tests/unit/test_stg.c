// SPDX-License-Identifier: MIT
/*
 * Standard Task Graph Set, 50 tasks, p = 2, 4, 8, 16 identical processors,
 * no communication (../shared/data/stg): the search must never beat a proven
 * optimum or a lower bound (that would be a simulator bug) and never lose to
 * its HEFT seed.  Prints how often it reaches the optimum and the mean gap.
 * The quick loop (HO_TEST_QUICK=1, make test) takes the first 45 graphs of
 * each set, make check all 180.
 */
#include <math.h>

#include "heteroopt/sched.h"
#include "test_util.h"

#define STG "../shared/data/stg/"

int main(int argc, char **argv)
{
	static const unsigned procs[] = {2, 4, 8, 16};
	const char *quick = getenv("HO_TEST_QUICK");
	unsigned limit = argc > 1			? (unsigned)atoi(argv[1])
			 : quick && !strcmp(quick, "1") ? 45
							: 180;

	if (access(STG "optimal/Case50_4_OPT.csv", R_OK)) {
		fprintf(stderr, "skipped: ../shared/data/stg not present\n");
		return T_SKIP;
	}
	for (size_t pi = 0; pi < 4; pi++) {
		char path[256], line[256];
		unsigned graphs = 0, at_opt = 0, heft_at = 0;
		double gap = 0;
		FILE *f;

		snprintf(path, sizeof(path), STG "optimal/Case50_%u_OPT.csv", procs[pi]);
		f = fopen(path, "r");
		T_CHECK(f != NULL, "%s", path);
		while (f && fgets(line, sizeof(line), f) && graphs < limit) {
			char name[128];
			unsigned p;
			double lb, ub = -1;
			int fields = sscanf(line, "%127[^,],%u,%lf,%lf", name, &p, &lb, &ub);
			struct ho_problem *pr = NULL;
			struct ho_error err;

			if (fields < 3)
				continue;
			if (fields == 3)
				ub = lb; /* proven optimum */
			snprintf(path, sizeof(path), STG "%s", name);
			if (ho_problem_from_stg(path, p, &pr, &err)) {
				T_CHECK(0, "%s", err.msg);
				continue;
			}
			struct ho_plan *h = ho_plan_new(pr->n), *pe = ho_plan_new(pr->n);
			const struct ho_plan *seeds[2] = {h, pe};
			struct ho_search_opts o;
			struct ho_front *fr = NULL;

			ho_plan_heft(pr, h, NULL);
			ho_plan_peft(pr, pe, NULL);
			ho_search_defaults(&o);
			o.objectives = 1u << HO_OBJ_LATENCY;
			o.population = 64;
			o.generations = 120;
			o.stall_window = 30;
			o.seed = graphs + 1;
			o.seeds = seeds;
			o.n_seeds = 2;
			if (ho_search(pr, &o, &fr, &err)) {
				T_CHECK(0, "%s: %s", name, err.msg);
			} else {
				double best = fr->sol[0].ev.obj[HO_OBJ_LATENCY];

				T_CHECK(best >= lb - 1e-9,
					"%s p=%u: makespan %g beats the bound %g", name, p, best,
					lb);
				T_CHECK(best <= h->makespan + 1e-9, "%s p=%u: %g loses to HEFT %g",
					name, p, best, h->makespan);
				at_opt += fields == 3 && best == lb;
				heft_at += fields == 3 && h->makespan == lb;
				gap += (best - ub) / ub;
				graphs++;
			}
			ho_front_free(fr);
			ho_plan_free(h);
			ho_plan_free(pe);
			ho_problem_free(pr);
		}
		if (f)
			fclose(f);
		printf("  p=%-2u %u graphs: search at the optimum %u (%.0f%%), HEFT %u (%.0f%%); "
		       "mean gap to the optimum %.2f%%\n",
		       procs[pi], graphs, at_opt, 100.0 * at_opt / graphs, heft_at,
		       100.0 * heft_at / graphs, 100 * gap / graphs);
	}
	return t_failures ? 1 : 0;
}
