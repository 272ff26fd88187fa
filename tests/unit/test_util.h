/* SPDX-License-Identifier: MIT */
/* What the unit test programs share beyond tests/test_helpers.h: the models' folder and a
 * model loaded from it, a runtime device, a profile from text, a plan's simulated latency. */
#ifndef HO_TEST_UTIL_H
#define HO_TEST_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../test_helpers.h"
#include "heteroopt/box.h"
#include "heteroopt/runtime.h"
#include "heteroopt/sched.h"

/* Folder of the generated models (scripts/models.sh). */
static inline const char *t_models_dir(void)
{
	const char *d = getenv("HETEROOPT_MODELS");

	return d && *d ? d : NULL;
}

/* A placement's device: its name and backend, one thread, on NUMA node numa_node. */
static inline void t_rt_device(struct ho_rt_device *d, const char *name, const char *backend,
			       int numa_node)
{
	memset(d, 0, sizeof(*d));
	snprintf(d->name, sizeof(d->name), "%s", name);
	snprintf(d->backend, sizeof(d->backend), "%s", backend);
	d->threads = 1;
	d->numa_node = numa_node;
}

/*
 * A model scripts/models.sh did not leave (PaddleOCR's come from npm, which a
 * machine may not reach): its checks are skipped, saying so the one way.
 */
static inline void t_model_skipped(const char *name)
{
	printf("  skipped: %s not in $HETEROOPT_MODELS (scripts/models.sh makes or fetches it)\n",
	       name);
}

static inline int t_model_path(char *buf, size_t n, const char *name)
{
	const char *d = t_models_dir();

	if (!d)
		return -1;
	snprintf(buf, n, "%s/%s", d, name);
	return access(buf, R_OK);
}

/*
 * Model name from the models' folder with input bound to dims (rank of them), its shapes
 * inferred and its cost features computed, into *g; -1 where the model is not there.
 */
static inline int t_load_model(const char *name, const char *input, const int64_t *dims, int rank,
			       struct ho_graph **g)
{
	char path[4096];
	struct ho_error err = {0};

	*g = NULL;
	if (t_model_path(path, sizeof(path), name))
		return -1;
	T_REQUIRE(ho_onnx_load(path, NULL, g, &err) == 0);
	T_REQUIRE(ho_graph_bind_input(*g, input, dims, rank, &err) == 0);
	T_REQUIRE(ho_shape_infer(*g, &err) == 0);
	ho_features_compute(*g);
	return 0;
}

/* Load the profile text given through a file, as a user's would be. */
static inline int t_profile_text(const char *text, const struct ho_box *box, struct ho_profile **pf,
				 struct ho_error *err)
{
	char path[] = "/tmp/ho-profile-XXXXXX";
	int fd = mkstemp(path), ret;

	T_REQUIRE(fd >= 0 && write(fd, text, strlen(text)) == (ssize_t)strlen(text));
	close(fd);
	ret = ho_profile_load(path, box, pf, err);
	unlink(path);
	return ret;
}

/* p's latency as simulated, every task on device 0, or alternating over 0 and 1 in p's order. */
static inline double t_sim_latency(const struct ho_problem *p, bool alternate)
{
	uint16_t *assign = calloc(p->n + 1, sizeof(uint16_t));
	struct ho_sim *sim = ho_sim_new(p);
	struct ho_eval ev;

	T_REQUIRE(assign && sim);
	for (uint32_t t = 0; t < p->n; t++)
		assign[p->topo[t]] = alternate ? (uint16_t)(t % 2) : 0;
	T_REQUIRE(ho_sim_eval(sim, assign, p->topo, NULL, &ev, NULL) == 0);
	ho_sim_free(sim);
	free(assign);
	return ev.obj[HO_OBJ_LATENCY];
}

#endif
