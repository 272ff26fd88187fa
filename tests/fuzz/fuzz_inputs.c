// SPDX-License-Identifier: MIT
/*
 * libFuzzer target for the text inputs other than ONNX and boxes: the first
 * byte picks the reader, the rest is the file it reads.
 *   0  schedule JSON (heteroopt run), against FUZZ_MODEL and FUZZ_BOX
 *   1  JSON DAG (heteroopt schedule --dag), then HEFT and one simulation
 *   2  STG file (--stg) on 1..4 processors, then HEFT and one simulation
 *   3  measured profile (--profile) for FUZZ_BOX, then FUZZ_MODEL's problem
 *      with it, HEFT and one simulation
 *   4  .npy file (heteroopt run --input)
 * The readers take paths, so each input is written to one scratch file.
 * Any crash, sanitizer report, leak or hang is a bug; error returns are fine.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "heteroopt/graph.h"
#include "heteroopt/npy.h"
#include "heteroopt/runtime.h"
#include "heteroopt/sched.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

/* Set once before the first input; libFuzzer runs inputs one at a time. */
static struct fuzz_env {
	char path[64];
	struct ho_graph *graph;
	struct ho_box *box;
	const char *box_path;
} env;

static void fuzz_cleanup(void)
{
	unlink(env.path);
	ho_graph_free(env.graph);
	ho_box_free(env.box);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *model = getenv("FUZZ_MODEL");
	struct ho_error err;

	(void)argc;
	(void)argv;
	/* made by the first input's write, removed at exit */
	snprintf(env.path, sizeof(env.path), "/tmp/fuzz_inputs.%d", (int)getpid());
	env.box_path = getenv("FUZZ_BOX");
	if (!model || !env.box_path) {
		fprintf(stderr, "fuzz_inputs: set FUZZ_MODEL (ONNX) and FUZZ_BOX (box JSON)\n");
		exit(1);
	}
	if (ho_onnx_load(model, NULL, &env.graph, &err) || ho_shape_infer(env.graph, &err) ||
	    ho_box_load(env.box_path, &env.box, &err)) {
		fprintf(stderr, "fuzz_inputs: %s\n", err.msg);
		exit(1);
	}
	ho_features_compute(env.graph);
	atexit(fuzz_cleanup);
	return 0;
}

static int write_scratch(const unsigned char *data, size_t size)
{
	FILE *f = fopen(env.path, "wb");
	size_t put;

	if (!f)
		return -1;
	put = fwrite(data, 1, size, f);
	return fclose(f) || put != size ? -1 : 0;
}

/* A problem that loaded must schedule and simulate without tripping anything. */
static void exercise(struct ho_problem *p)
{
	struct ho_plan *plan = ho_plan_new(p->n);
	struct ho_sim *sim = ho_sim_new(p);
	struct ho_eval ev;

	if (plan && sim && !ho_plan_heft(p, plan, NULL))
		ho_sim_eval(sim, plan->assign, plan->order, NULL, &ev, NULL);
	ho_sim_free(sim);
	ho_plan_free(plan);
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	struct ho_rt_placement *pl = NULL;
	struct ho_problem *p = NULL;
	struct ho_profile *prof = NULL;
	struct ho_npy npy;
	struct ho_error err;
	int ret = -1; /* 0: p holds a problem */

	if (size < 1 || write_scratch(data + 1, size - 1))
		return 0;
	switch (data[0] % 5) {
	case 0: {
		struct ho_rt_schedule_opts so = {.pick = (int)(data[0] / 5) - 1,
						 .box_path = env.box_path};

		/* the in-memory reader: the file reader is a wrapper around it */
		if (!ho_rt_schedule_parse((const char *)data + 1, size - 1, &so, env.graph, &pl,
					  &err))
			ho_rt_placement_free(pl);
	} break;
	case 1:
		ret = ho_problem_from_dag_json(env.path, &p, &err);
		break;
	case 2:
		ret = ho_problem_from_stg(env.path, 1 + data[0] / 5 % 4, &p, &err);
		break;
	case 3:
		if (!ho_profile_load(env.path, env.box, &prof, &err))
			ret = ho_problem_from_graph(env.graph, env.box, prof, &p, &err);
		break;
	default:
		if (!ho_npy_read(env.path, &npy, &err))
			ho_npy_free(&npy);
		break;
	}
	if (!ret) {
		exercise(p);
		ho_problem_free(p);
	}
	ho_profile_free(prof);
	return 0;
}
