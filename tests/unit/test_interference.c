// SPDX-License-Identifier: MIT
/*
 * The simulator's interference: two tasks running at once on two devices
 * that share memory bandwidth take as long as the profile's slowdown says
 * for the part of them that overlaps, and a task alone is not slowed.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "heteroopt/sched.h"
#include "test_util.h"

/* Three tasks: a (4 s), then b (2 s) and c (2 s) independent; nothing to copy. */
static const char dag[] =
    "{\"devices\": [\"d0\", \"d1\"],"
    " \"tasks\": [{\"name\": \"a\", \"cost\": [4, 4]},"
    "  {\"name\": \"b\", \"cost\": [2, 2]}, {\"name\": \"c\", \"cost\": [2, 2]}],"
    " \"edges\": [{\"from\": 0, \"to\": 1, \"comm\": 0},"
    "  {\"from\": 0, \"to\": 2, \"comm\": 0}]}";

int main(void)
{
	char path[] = "/tmp/ho-interference-XXXXXX";
	int fd = mkstemp(path);
	struct ho_problem *p = NULL;
	struct ho_error err = {0};
	struct ho_sim *sim;
	struct ho_eval ev;
	uint16_t split[3] = {0, 0, 1}, alone[3] = {0, 0, 0};
	uint32_t order[3] = {0, 1, 2};

	T_REQUIRE(fd >= 0 && write(fd, dag, sizeof(dag) - 1) == (ssize_t)sizeof(dag) - 1);
	close(fd);
	T_REQUIRE(ho_problem_from_dag_json(path, &p, &err) == 0);
	unlink(path);
	sim = ho_sim_new(p);
	T_REQUIRE(sim);
	T_REQUIRE(ho_sim_eval(sim, split, order, NULL, &ev, NULL) == 0);
	T_CHECK(fabs(ev.obj[HO_OBJ_LATENCY] - 6) < 1e-9, "no interference: %g",
		ev.obj[HO_OBJ_LATENCY]);
	ho_sim_free(sim);

	/* memory-bound work on either device runs 1.5x slower while the other runs */
	p->slowdown = malloc(2 * 2 * 2 * sizeof(double));
	p->task_compute = calloc(3, sizeof(double));
	T_REQUIRE(p->slowdown && p->task_compute);
	for (int i = 0; i < 8; i++)
		p->slowdown[i] = (i & 4) ? 1 : 1.5; /* class 0: memory 1.5; class 1: compute 1 */
	sim = ho_sim_new(p);
	T_REQUIRE(sim);
	T_REQUIRE(ho_sim_eval(sim, split, order, NULL, &ev, NULL) == 0);
	/* b runs [4, 6); c beside it all along: 2 * 1.5 = 3, ends at 7 */
	T_CHECK(fabs(ev.obj[HO_OBJ_LATENCY] - 7) < 1e-9, "memory-bound pair: %g",
		ev.obj[HO_OBJ_LATENCY]);
	T_REQUIRE(ho_sim_eval(sim, alone, order, NULL, &ev, NULL) == 0);
	T_CHECK(fabs(ev.obj[HO_OBJ_LATENCY] - 8) < 1e-9, "one device, nothing beside: %g",
		ev.obj[HO_OBJ_LATENCY]);
	ho_sim_free(sim);

	/* compute-bound work is not slowed by the same neighbour */
	p->task_compute[1] = p->task_compute[2] = 1;
	sim = ho_sim_new(p);
	T_REQUIRE(sim);
	T_REQUIRE(ho_sim_eval(sim, split, order, NULL, &ev, NULL) == 0);
	T_CHECK(fabs(ev.obj[HO_OBJ_LATENCY] - 6) < 1e-9, "compute-bound pair: %g",
		ev.obj[HO_OBJ_LATENCY]);
	ho_sim_free(sim);

	/* work half arithmetic, half streaming: slowed half as much, 2 * 1.25 */
	p->task_compute[1] = p->task_compute[2] = 0.5;
	sim = ho_sim_new(p);
	T_REQUIRE(sim);
	T_REQUIRE(ho_sim_eval(sim, split, order, NULL, &ev, NULL) == 0);
	T_CHECK(fabs(ev.obj[HO_OBJ_LATENCY] - 6.5) < 1e-9, "half compute-bound pair: %g",
		ev.obj[HO_OBJ_LATENCY]);
	ho_sim_free(sim);
	ho_problem_free(p);
	return t_failures ? 1 : 0;
}
