// SPDX-License-Identifier: MIT
/*
 * Selection from a front, on hand-computed cases: constraint-first takes the
 * fastest; weighted sums objectives relative to the reference schedule;
 * TOPSIS takes the point closest to the ideal and farthest from the worst.
 */
#include "heteroopt/sched.h"
#include "test_util.h"

static struct ho_front *front3(void)
{
	/* latency, energy:  A (1, 10)   B (2, 4)   C (5, 1) */
	static const double v[3][2] = {{1, 10}, {2, 4}, {5, 1}};
	struct ho_front *f = calloc(1, sizeof(*f));

	f->n = 3;
	f->sol = calloc(3, sizeof(*f->sol));
	for (int i = 0; i < 3; i++) {
		f->sol[i].ev.obj[HO_OBJ_LATENCY] = v[i][0];
		f->sol[i].ev.obj[HO_OBJ_ENERGY] = v[i][1];
	}
	return f;
}

int main(void)
{
	struct ho_front *f = front3();
	uint32_t obj = 1u << HO_OBJ_LATENCY | 1u << HO_OBJ_ENERGY;
	double base[HO_OBJ_COUNT] = {[HO_OBJ_LATENCY] = 5, [HO_OBJ_ENERGY] = 10};
	double w_lat[HO_OBJ_COUNT] = {[HO_OBJ_LATENCY] = 1, [HO_OBJ_ENERGY] = 0};
	double w_en[HO_OBJ_COUNT] = {[HO_OBJ_LATENCY] = 0, [HO_OBJ_ENERGY] = 1};
	double w_eq[HO_OBJ_COUNT] = {[HO_OBJ_LATENCY] = 1, [HO_OBJ_ENERGY] = 1};

	T_CHECK(ho_pick(f, HO_PICK_CONSTRAINT, obj, NULL, base) == 0,
		"constraint-first picks the fastest");
	T_CHECK(ho_pick(f, HO_PICK_WEIGHTED, obj, w_lat, base) == 0, "latency weight only");
	T_CHECK(ho_pick(f, HO_PICK_WEIGHTED, obj, w_en, base) == 2, "energy weight only");
	/* Relative to (5, 10): A 0.2+1.0, B 0.4+0.4, C 1.0+0.1 -> B. */
	T_CHECK(ho_pick(f, HO_PICK_WEIGHTED, obj, w_eq, base) == 1, "equal weights pick B");
	/*
	 * TOPSIS, vector-normalised: latency /sqrt(30), energy /sqrt(117).
	 * Closeness A 0.47, B 0.70, C 0.53 -> B.
	 */
	T_CHECK(ho_pick(f, HO_PICK_TOPSIS, obj, w_eq, NULL) == 1, "TOPSIS picks B");
	T_CHECK(ho_pick(f, HO_PICK_TOPSIS, obj, w_lat, NULL) == 0,
		"TOPSIS with latency only picks A");
	free(f->sol);
	free(f);
	return t_failures ? 1 : 0;
}
