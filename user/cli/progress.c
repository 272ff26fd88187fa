// SPDX-License-Identifier: MIT
/*
 * A progress line for runs that take long: a run of a large int8 model took
 * 12 minutes with nothing printed.  A thread looks in once a second; when
 * the run under way has lasted CLI_PROGRESS_AFTER_S, it says which run it is
 * and how many of its nodes are done, in place on a terminal, else as a line
 * every CLI_PROGRESS_EVERY_S.  Short runs print nothing.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <heteroopt/runtime.h>

#include "cli.h"

#define CLI_PROGRESS_AFTER_S 5.0
#define CLI_PROGRESS_EVERY_S 30.0

struct cli_progress {
	const struct ho_rt *rt;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond; /* on CLOCK_MONOTONIC: the phase changed, or stop */
	bool stop, tty, shown;
	const char *what; /* "warm-up run", "run" */
	int index, count; /* what's index of count */
	double since, last_line;
};

/* With the lock held: the line, if this run has lasted long enough. */
static void progress_show(struct cli_progress *p, double now)
{
	uint32_t done, nodes;

	if (!p->what || now - p->since < CLI_PROGRESS_AFTER_S ||
	    (!p->tty && now - p->last_line < CLI_PROGRESS_EVERY_S))
		return;
	ho_rt_progress(p->rt, &done, &nodes);
	fprintf(stderr, "%srun: %s %d of %d: %u of %u nodes done, %.0f s so far%s",
		p->tty ? "\r" : "", p->what, p->index, p->count, done, nodes, now - p->since,
		p->tty ? "   " : "\n");
	p->shown = true;
	p->last_line = now;
}

static void *progress_main(void *arg)
{
	struct cli_progress *p = arg;

	pthread_mutex_lock(&p->lock);
	while (!p->stop) {
		double wake = cli_clock_s() + 1;
		struct timespec ts = {(time_t)wake, (long)((wake - (double)(time_t)wake) * 1e9)};

		pthread_cond_timedwait(&p->cond, &p->lock, &ts);
		if (!p->stop)
			progress_show(p, cli_clock_s());
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

struct cli_progress *cli_progress_start(const struct ho_rt *rt)
{
	struct cli_progress *p = calloc(1, sizeof(*p));
	pthread_condattr_t ca;

	if (!p)
		return NULL;
	p->rt = rt;
	p->tty = isatty(STDERR_FILENO);
	pthread_mutex_init(&p->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&p->cond, &ca);
	pthread_condattr_destroy(&ca);
	if (pthread_create(&p->thread, NULL, progress_main, p)) {
		pthread_cond_destroy(&p->cond);
		pthread_mutex_destroy(&p->lock);
		free(p);
		return NULL; /* no progress line: the run itself is unaffected */
	}
	return p;
}

void cli_progress_phase(struct cli_progress *p, const char *what, int index, int count)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	p->what = what;
	p->index = index;
	p->count = count;
	p->since = cli_clock_s();
	p->last_line = 0;
	pthread_mutex_unlock(&p->lock);
}

void cli_progress_stop(struct cli_progress *p)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	p->stop = true;
	pthread_cond_signal(&p->cond);
	pthread_mutex_unlock(&p->lock);
	pthread_join(p->thread, NULL);
	if (p->shown && p->tty)
		fputc('\n', stderr);
	pthread_cond_destroy(&p->cond);
	pthread_mutex_destroy(&p->lock);
	free(p);
}
