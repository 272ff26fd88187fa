// SPDX-License-Identifier: MIT
/*
 * A program that embeds HeteroOpt as a user would: built against an
 * installed prefix with nothing but `pkg-config --cflags --libs heteroopt`.
 * It loads a model, infers shapes (and with them the cost features, which it
 * never asks for), schedules it on an installed box, hands the schedule to
 * the runtime from memory and runs it.
 * usage: embed MODEL.onnx INPUT=D0xD1x... BOXDIR
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <heteroopt/graph.h>
#include <heteroopt/runtime.h>
#include <heteroopt/sched.h>
#include <heteroopt/version.h>

#if HO_VERSION < HO_VERSION_OF(0, 2, 0)
#error "needs HeteroOpt 0.2.0: ho_rt_schedule_parse, the version macro"
#endif

#define CHECK(x)                                                                                   \
	do {                                                                                       \
		if (x) {                                                                           \
			fprintf(stderr, "embed: %s: %s\n", #x, err.msg);                           \
			return 1;                                                                  \
		}                                                                                  \
	} while (0)

int main(int argc, char **argv)
{
	struct ho_error err = {0};
	struct ho_graph *g;
	struct ho_box *box;
	struct ho_problem *p;
	struct ho_search_opts so;
	struct ho_front *front;
	struct ho_rt_placement *pl;
	struct ho_rt *rt;
	struct ho_plan *cpu;
	char name[64], boxpath[4096], sched[] = "/tmp/heteroopt-embed-XXXXXX";
	int64_t dims[HO_MAX_RANK];
	int rank, fd;

	if (argc != 4)
		return 2;
	if (strcmp(ho_version(), HO_VERSION_STRING)) {
		fprintf(stderr, "embed: header %s, library %s\n", HO_VERSION_STRING, ho_version());
		return 1;
	}
	snprintf(boxpath, sizeof(boxpath), "%s/this-machine-cpu-emu.json", argv[3]);
	CHECK(ho_onnx_load(argv[1], NULL, &g, &err));
	CHECK(ho_parse_shape_arg(argv[2], name, sizeof(name), dims, &rank, &err));
	CHECK(ho_graph_bind_input(g, name, dims, rank, &err));
	CHECK(ho_shape_infer(g, &err));
	CHECK(ho_box_load(boxpath, &box, &err));
	CHECK(ho_problem_from_graph(g, box, NULL, &p, &err));
	/* features come with shapes: a graph with no FLOPs would cost next to nothing */
	struct ho_sim *sim = ho_sim_new(p);
	struct ho_eval ev;

	cpu = ho_plan_new(p->n);
	if (!sim || !cpu || ho_plan_single(p, 0, cpu) ||
	    ho_sim_eval(sim, cpu->assign, cpu->order, NULL, &ev, NULL))
		return 1;
	if (!(ev.obj[HO_OBJ_LATENCY] > 1e-3)) {
		fprintf(stderr, "embed: all on cpu0 predicted %g s: no cost features?\n",
			ev.obj[HO_OBJ_LATENCY]);
		return 1;
	}
	ho_search_defaults(&so);
	so.population = 16;
	so.generations = 5;
	CHECK(ho_search(p, &so, &front, &err));

	/* the schedule JSON, written by the library, handed back from memory */
	struct ho_schedule_doc doc = {.p = p,
				      .front = front,
				      .picked = 0,
				      .pick_method = "first",
				      .objectives = so.objectives,
				      .search = &so,
				      .model = argv[1],
				      .box = boxpath,
				      .graph = g};
	fd = mkstemp(sched);
	if (fd < 0)
		return 1;
	/* no fingerprints set: ho_schedule_write reads the model's and the box's */
	CHECK(ho_schedule_write(sched, &doc, &err));
	FILE *f = fopen(sched, "rb");
	static char text[1 << 24];
	size_t len = f ? fread(text, 1, sizeof(text), f) : 0;

	if (f)
		fclose(f);
	unlink(sched);
	/* its paths are from the folder it was written in */
	struct ho_rt_schedule_opts ro = {.pick = -1, .model_path = argv[1], .base_dir = "/tmp"};

	CHECK(ho_rt_schedule_parse(text, len, &ro, g, &pl, &err));
	struct ho_rt_opts o = {.placement = pl};

	CHECK(ho_rt_new(g, &o, &rt, &err));
	const struct ho_tensor *in = &g->tensors[g->inputs[0]];
	int64_t n = ho_shape_numel(&in->shape);
	float *x = calloc((size_t)n, sizeof(float));

	for (int64_t i = 0; i < n; i++)
		x[i] = (float)(i % 7) / 7;
	CHECK(ho_rt_set_input(rt, in->name, in->shape.dim, in->shape.rank, x, &err));
	CHECK(ho_rt_run(rt, &err));
	const struct ho_rt_report *r = ho_rt_last_report(rt);

	printf("embed: heteroopt %s, %u tasks, front of %u, fastest %.3f ms predicted, "
	       "all on cpu0 %.3f ms; ran in %.3f ms on %u devices\n",
	       ho_version(), p->n, front->n, front->sol[0].ev.obj[HO_OBJ_LATENCY] * 1e3,
	       ev.obj[HO_OBJ_LATENCY] * 1e3, r->makespan_s * 1e3, pl->n_devices);
	free(x);
	ho_rt_free(rt);
	ho_rt_placement_free(pl);
	ho_front_free(front);
	ho_plan_free(cpu);
	ho_sim_free(sim);
	ho_problem_free(p);
	ho_box_free(box);
	ho_graph_free(g);
	return 0;
}
