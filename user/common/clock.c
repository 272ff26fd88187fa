// SPDX-License-Identifier: MIT
/* Seconds on the monotonic clock, for timelines and progress. */
#include <time.h>

#include "common.h"

double ho_clock_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}
