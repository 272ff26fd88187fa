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

/* The latency of plan assign (tasks in order 0, 1, 2) as the simulator makes it of p now. */
static double latency(const struct ho_problem *p, const uint16_t *assign)
{
	static const uint32_t order[3] = {0, 1, 2};
	struct ho_sim *sim = ho_sim_new(p);
	struct ho_eval ev;
	double l = -1;

	if (sim && ho_sim_eval(sim, assign, order, NULL, &ev, NULL) == 0)
		l = ev.obj[HO_OBJ_LATENCY];
	ho_sim_free(sim);
	return l;
}

int main(void)
{
	char path[] = "/tmp/ho-interference-XXXXXX";
	int fd = mkstemp(path);
	struct ho_problem *p = NULL;
	struct ho_error err = {0};
	static const uint16_t split[3] = {0, 0, 1}, alone[3] = {0, 0, 0};
	double l;

	T_REQUIRE(fd >= 0 && write(fd, dag, sizeof(dag) - 1) == (ssize_t)sizeof(dag) - 1);
	close(fd);
	T_REQUIRE(ho_problem_from_dag_json(path, &p, &err) == 0);
	unlink(path);
	l = latency(p, split);
	T_CHECK(fabs(l - 6) < 1e-9, "no interference: %g", l);

	/* memory-bound work on either device runs 1.5x slower while the other runs */
	p->slowdown = malloc(2 * 2 * 2 * sizeof(double));
	p->task_compute = calloc(3, sizeof(double));
	T_REQUIRE(p->slowdown && p->task_compute);
	for (int i = 0; i < 8; i++)
		p->slowdown[i] = (i & 4) ? 1 : 1.5; /* class 0: memory 1.5; class 1: compute 1 */
	/* b runs [4, 6); c beside it all along: 2 * 1.5 = 3, ends at 7 */
	l = latency(p, split);
	T_CHECK(fabs(l - 7) < 1e-9, "memory-bound pair: %g", l);
	l = latency(p, alone);
	T_CHECK(fabs(l - 8) < 1e-9, "one device, nothing beside: %g", l);

	/* compute-bound work is not slowed by the same neighbour */
	p->task_compute[1] = p->task_compute[2] = 1;
	l = latency(p, split);
	T_CHECK(fabs(l - 6) < 1e-9, "compute-bound pair: %g", l);

	/* work half arithmetic, half streaming: slowed half as much, 2 * 1.25 */
	p->task_compute[1] = p->task_compute[2] = 0.5;
	l = latency(p, split);
	T_CHECK(fabs(l - 6.5) < 1e-9, "half compute-bound pair: %g", l);
	ho_problem_free(p);
	return t_failures ? 1 : 0;
}
