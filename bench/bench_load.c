// SPDX-License-Identifier: MIT
/*
 * Load + shape-inference time and peak RSS of the ONNX front end, against a
 * baseline measured in the same run: reading the same file into memory with
 * read(2).  Each repetition runs in a fresh child so peak RSS is its own.
 * Prints medians and the ratios; it never passes or fails.
 *
 * usage: bench_load MODEL NAME=DIMS [REPEATS]
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "heteroopt/graph.h"

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int read_whole(const char *path)
{
	int fd = open(path, O_RDONLY);
	struct stat st;
	char *buf;
	size_t done = 0;

	if (fd < 0 || fstat(fd, &st))
		return 1;
	buf = malloc((size_t)st.st_size);
	while (buf && done < (size_t)st.st_size) {
		ssize_t r = read(fd, buf + done, (size_t)st.st_size - done);

		if (r <= 0)
			break;
		done += (size_t)r;
	}
	close(fd);
	/* Touch the result so the pages are really there. */
	volatile unsigned sum = 0;

	for (size_t i = 0; buf && i < done; i += 4096)
		sum += (unsigned char)buf[i];
	free(buf);
	return done == (size_t)st.st_size ? 0 : 1;
}

static int load_infer(const char *path, const char *bind)
{
	struct ho_graph *g = NULL;
	struct ho_error err;
	char name[256];
	int64_t dims[HO_MAX_RANK];
	int rank, ret;

	ret = ho_onnx_load(path, NULL, &g, &err);
	if (!ret && bind)
		ret = ho_parse_shape_arg(bind, name, sizeof(name), dims, &rank, &err) ||
		      ho_graph_bind_input(g, name, dims, rank, &err);
	if (!ret)
		ret = ho_shape_infer(g, &err);
	if (!ret)
		ho_features_compute(g);
	if (ret)
		fprintf(stderr, "bench_load: %s\n", err.msg);
	ho_graph_free(g);
	return ret ? 1 : 0;
}

/* Run one job in a child; return its wall time in the parent and peak RSS (KiB). */
static int measure(int job, const char *path, const char *bind, double *secs, long *rss_kib)
{
	int pfd[2], status;
	struct rusage ru;
	pid_t pid;

	if (pipe(pfd))
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		double t0 = now(), dt;
		int rc = job == 0 ? 0 : job == 1 ? read_whole(path) : load_infer(path, bind);

		dt = now() - t0;
		if (write(pfd[1], &dt, sizeof(dt)) != sizeof(dt))
			rc = 1;
		_exit(rc);
	}
	close(pfd[1]);
	if (read(pfd[0], secs, sizeof(*secs)) != sizeof(*secs))
		*secs = -1;
	close(pfd[0]);
	if (wait4(pid, &status, 0, &ru) < 0 || !WIFEXITED(status) || WEXITSTATUS(status))
		return -1;
	*rss_kib = ru.ru_maxrss;
	return 0;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	int reps = argc > 3 ? atoi(argv[3]) : 7;
	double t[3][64], r[3][64], med_t[3], med_r[3];
	struct stat st;

	if (argc < 3 || reps < 1 || reps > 64) {
		fprintf(stderr, "usage: bench_load MODEL NAME=DIMS [REPEATS<=64]\n");
		return 2;
	}
	if (stat(argv[1], &st)) {
		perror(argv[1]);
		return 2;
	}
	/* Interleave the jobs so machine noise hits them alike. */
	for (int i = 0; i < reps; i++)
		for (int job = 0; job < 3; job++) {
			long kib;

			if (measure(job, argv[1], argv[2], &t[job][i], &kib)) {
				fprintf(stderr, "bench_load: job %d failed\n", job);
				return 1;
			}
			r[job][i] = (double)kib * 1024;
		}
	for (int job = 0; job < 3; job++) {
		qsort(t[job], (size_t)reps, sizeof(double), cmp_d);
		qsort(r[job], (size_t)reps, sizeof(double), cmp_d);
		med_t[job] = t[job][reps / 2];
		med_r[job] = r[job][reps / 2];
	}
	const char *base = strrchr(argv[1], '/') ? strrchr(argv[1], '/') + 1 : argv[1];
	double mb = (double)st.st_size / 1e6;
	double extra_load = med_r[2] - med_r[0], extra_read = med_r[1] - med_r[0];

	printf("%-34s %7.1f MB  load+infer %7.1f ms  read() %6.1f ms  ratio %5.2fx   "
	       "peak RSS +%6.1f MB = %4.2fx file (read(): %4.2fx)   [median of %d]\n",
	       base, mb, med_t[2] * 1e3, med_t[1] * 1e3, med_t[2] / med_t[1], extra_load / 1e6,
	       extra_load / (double)st.st_size, extra_read / (double)st.st_size, reps);
	return 0;
}
