// SPDX-License-Identifier: MIT
/*
 * The published list-scheduling examples (../shared/data/heft):
 * Topcuoglu et al. 2002: HEFT ranks and makespan 80;
 * Arabnejad & Barbosa 2014: PEFT's optimistic cost table and makespan 122,
 * HEFT 133.  The simulator must replay each plan to the same makespan.
 */
#include <math.h>

#include "heteroopt/sched.h"
#include "test_util.h"

#define DATA "../shared/data/heft/"

static struct ho_problem *load(const char *stem)
{
	char comp[512], edges[512];
	struct ho_problem *p = NULL;
	struct ho_error err;

	snprintf(comp, sizeof(comp), DATA "%s_comp_costs.csv", stem);
	snprintf(edges, sizeof(edges), DATA "%s_edges_matrix.csv", stem);
	if (ho_problem_from_csv(comp, edges, &p, &err)) {
		T_CHECK(0, "%s", err.msg);
		return NULL;
	}
	return p;
}

static double replay(const struct ho_problem *p, const struct ho_plan *pl)
{
	struct ho_sim *s = ho_sim_new(p);
	struct ho_eval ev;
	int ret;

	ret = ho_sim_eval(s, pl->assign, pl->order, NULL, &ev, NULL);
	T_CHECK(ret == 0, "simulator refused the plan: %d", ret);
	ho_sim_free(s);
	return ev.obj[HO_OBJ_LATENCY];
}

static void topcuoglu(void)
{
	static const double want_rank[10] = {108.000, 77.000, 80.000, 80.000, 69.000,
					     63.333,  42.667, 35.667, 44.333, 14.667};
	static const int want_proc[10] = {2, 0, 2, 1, 2, 1, 2, 0, 1, 1};
	static const double want_start[10] = {0, 27, 9, 18, 28, 26, 38, 57, 56, 73};
	struct ho_problem *p = load("topcuoglu2002_fig2");
	double rank[10];

	if (!p)
		return;
	struct ho_plan *pl = ho_plan_new(p->n);

	T_CHECK(p->n == 10 && p->d == 3, "shape %ux%u", p->n, p->d);
	T_CHECK(ho_plan_heft(p, pl, rank) == 0, "heft failed");
	for (int t = 0; t < 10; t++) {
		T_CHECK(fabs(rank[t] - want_rank[t]) < 1e-3, "rank_u(T%d) = %.3f, published %.3f",
			t, rank[t], want_rank[t]);
		T_CHECK(pl->assign[t] == want_proc[t], "T%d on P%d, published P%d", t,
			pl->assign[t], want_proc[t]);
	}
	T_CHECK(pl->makespan == 80, "HEFT makespan %g, published 80", pl->makespan);
	T_CHECK(replay(p, pl) == 80, "simulator replays HEFT to %g", replay(p, pl));
	/* Published start times come back from the simulator's timeline. */
	struct ho_sim *s = ho_sim_new(p);
	struct ho_timeline *tl = ho_timeline_new(p);
	struct ho_eval ev;

	ho_sim_eval(s, pl->assign, pl->order, NULL, &ev, tl);
	for (int t = 0; t < 10; t++)
		T_CHECK(tl->start[t] == want_start[t], "T%d starts at %g, published %g", t,
			tl->start[t], want_start[t]);
	printf("  Topcuoglu 2002: HEFT ranks and schedule as published, makespan %g\n",
	       pl->makespan);
	ho_timeline_free(tl);
	ho_sim_free(s);
	ho_plan_free(pl);
	ho_problem_free(p);
}

static void arabnejad(void)
{
	static const double want_oct[10][3] = {
	    {64, 68, 86}, {42, 39, 42}, {27, 41, 43}, {42, 39, 50}, {28, 37, 28},
	    {42, 39, 44}, {13, 16, 22}, {13, 16, 33}, {13, 16, 20}, {0, 0, 0}};
	struct ho_problem *p = load("arabnejad2014_fig");
	double oct[30];

	if (!p)
		return;
	struct ho_plan *pl = ho_plan_new(p->n);

	T_CHECK(ho_plan_peft(p, pl, oct) == 0, "peft failed");
	for (int t = 0; t < 10; t++)
		for (int j = 0; j < 3; j++)
			T_CHECK(oct[t * 3 + j] == want_oct[t][j], "OCT(T%d,P%d) = %g, published %g",
				t, j, oct[t * 3 + j], want_oct[t][j]);
	T_CHECK(pl->makespan == 122, "PEFT makespan %g, published 122", pl->makespan);
	T_CHECK(replay(p, pl) == 122, "simulator replays PEFT to %g", replay(p, pl));
	T_CHECK(ho_plan_heft(p, pl, NULL) == 0 && pl->makespan == 133,
		"HEFT on Arabnejad: %g, published 133", pl->makespan);
	T_CHECK(replay(p, pl) == 133, "simulator replays HEFT to %g", replay(p, pl));
	printf("  Arabnejad 2014: OCT as published, PEFT 122, HEFT 133\n");
	ho_plan_free(pl);
	ho_problem_free(p);
}

int main(void)
{
	if (access(DATA "expected.txt", R_OK)) {
		fprintf(stderr, "skipped: ../shared/data/heft not present\n");
		return T_SKIP;
	}
	topcuoglu();
	arabnejad();
	return t_failures ? 1 : 0;
}
