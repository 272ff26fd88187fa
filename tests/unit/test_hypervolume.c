// SPDX-License-Identifier: MIT
/*
 * Hypervolume against hand-computed areas and against an independent count:
 * every cell of the grid the points' own coordinates cut the box into is
 * dominated or not as a whole, so summing the dominated cells is exact.
 */
#include <math.h>

#include "heteroopt/sched.h"
#include "test_util.h"

#define N_PTS 12

/* Exact by cells, for k objectives in [0, 1]^k. */
static double grid_hv(double pts[][4], int n, int k)
{
	double cut[4][N_PTS + 2], hv = 0;
	int nc[4], idx[4] = {0};

	for (int m = 0; m < k; m++) {
		nc[m] = 0;
		cut[m][nc[m]++] = 0;
		for (int i = 0; i < n; i++)
			cut[m][nc[m]++] = pts[i][m];
		cut[m][nc[m]++] = 1;
		for (int i = 1; i < nc[m]; i++) /* insertion sort */
			for (int j = i; j > 0 && cut[m][j] < cut[m][j - 1]; j--) {
				double t = cut[m][j];

				cut[m][j] = cut[m][j - 1];
				cut[m][j - 1] = t;
			}
	}
	for (;;) {
		double vol = 1;
		bool dom = false;

		for (int m = 0; m < k; m++)
			vol *= cut[m][idx[m] + 1] - cut[m][idx[m]];
		for (int i = 0; i < n && !dom; i++) {
			dom = true;
			for (int m = 0; m < k; m++)
				dom &= pts[i][m] <= cut[m][idx[m]];
		}
		hv += dom ? vol : 0;
		int m = 0;

		while (m < k && ++idx[m] == nc[m] - 1)
			idx[m++] = 0;
		if (m == k)
			break;
	}
	return hv;
}

static double lcg(unsigned *s)
{
	*s = *s * 1103515245u + 12345u;
	return (*s >> 8 & 0xffff) / 65536.0;
}

int main(void)
{
	static const int obj[4] = {0, 1, 2, 3};
	double lo[4] = {0}, one[4] = {1, 1, 1, 1}, hv;
	double two[2][4] = {{0.2, 0.6}, {0.5, 0.3}};
	const double *pp[N_PTS];

	/* 0.8 x 0.4 + 0.5 x 0.7 - 0.5 x 0.4 */
	pp[0] = two[0];
	pp[1] = two[1];
	T_REQUIRE(ho_hypervolume_points(pp, 2, obj, 2, lo, one, &hv) == 0);
	T_CHECK(fabs(hv - 0.47) < 1e-12, "two points in 2-D: %.6f, expected 0.47", hv);
	/* The same points in a box twice as wide in the first objective. */
	{
		double lo2[2] = {-1, 0}, ref2[2] = {1, 1};

		ho_hypervolume_points(pp, 2, obj, 2, lo2, ref2, &hv);
		T_CHECK(fabs(hv - (0.4 * 0.4 + 0.25 * 0.7 - 0.25 * 0.4)) < 1e-12,
			"scaled box: %.6f", hv);
	}
	/* A point past the reference in one objective adds nothing. */
	{
		double out[4] = {0.1, 1.5}, *ps[3] = {two[0], two[1], out};

		ho_hypervolume_points((const double *const *)ps, 3, obj, 2, lo, one, &hv);
		T_CHECK(fabs(hv - 0.47) < 1e-12, "point outside the box: %.6f", hv);
	}
	/* Random sets in 1 to 3 objectives (exact) and 4 (sampled). */
	unsigned seed = 7;

	for (int k = 1; k <= 4; k++)
		for (int round = 0; round < 20; round++) {
			double pts[N_PTS][4];
			int n = 1 + round % N_PTS;

			for (int i = 0; i < n; i++) {
				for (int m = 0; m < k; m++)
					pts[i][m] = lcg(&seed);
				pp[i] = pts[i];
			}
			T_REQUIRE(ho_hypervolume_points(pp, (uint32_t)n, obj, (uint32_t)k, lo, one,
							&hv) == 0);
			double want = grid_hv(pts, n, k), tol = k <= 3 ? 1e-9 : 0.02;

			T_CHECK(fabs(hv - want) < tol,
				"%d objectives, %d points: %.6f, cells say %.6f", k, n, hv, want);
		}
	/* A front through the public entry point, objectives picked by mask. */
	{
		struct ho_solution sol[2] = {0};
		struct ho_front f = {.n = 2, .sol = sol};
		double flo[HO_OBJ_COUNT] = {0}, fref[HO_OBJ_COUNT] = {0};

		sol[0].ev.obj[HO_OBJ_LATENCY] = 0.2;
		sol[0].ev.obj[HO_OBJ_ENERGY] = 0.6;
		sol[1].ev.obj[HO_OBJ_LATENCY] = 0.5;
		sol[1].ev.obj[HO_OBJ_ENERGY] = 0.3;
		sol[0].ev.obj[HO_OBJ_MEMORY] = sol[1].ev.obj[HO_OBJ_MEMORY] = 5; /* not chosen */
		fref[HO_OBJ_LATENCY] = fref[HO_OBJ_ENERGY] = 1;
		T_REQUIRE(ho_hypervolume(&f, 1u << HO_OBJ_LATENCY | 1u << HO_OBJ_ENERGY, flo, fref,
					 &hv) == 0);
		T_CHECK(fabs(hv - 0.47) < 1e-12, "front, latency and energy: %.6f", hv);
	}
	return t_failures ? 1 : 0;
}
