// SPDX-License-Identifier: MIT
/*
 * The memory planner (user/runtime/memplan.c) on its own, table-driven, as
 * TensorFlow Lite tests its arena planner: small graphs given as edges, the
 * tensors as (size, writer, readers), with and without a timeline, and the
 * region size and the waits each must give.  Every plan is also checked for
 * what it must never do: two tensors that share bytes while one may still be
 * in use without the graph or a wait ordering them.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "heteroopt/graph.h"
#include "rt_priv.h"
#include "test_util.h"

#define MAX_NODES 8
#define MAX_ITEMS 8

struct mp_case {
	const char *name;
	uint32_t n_nodes;
	int edges[16][2]; /* producer -> consumer; ends at {-1, -1} */
	uint32_t n_items;
	struct {
		uint64_t size;
		int32_t writer;
		uint32_t readers[4], n_readers;
		bool permanent, to_end;
		int32_t also[3]; /* other writers (a Concat's output its inputs are written into) */
		uint32_t n_also;
	} items[MAX_ITEMS];
	bool no_reuse;				 /* no ancestors: every tensor its own bytes */
	bool timeline;				 /* start/end below are the schedule's */
	double start[MAX_NODES], end[MAX_NODES]; /* s */
	uint64_t want_total;
	uint32_t want_waits;
};

static const struct mp_case cases[] = {
    {.name = "a chain: the first and third tensors share, the graph orders them",
     .n_nodes = 4,
     .edges = {{0, 1}, {1, 2}, {2, 3}, {-1, -1}},
     .n_items = 3,
     .items = {{1000, 0, {1}, 1}, {1000, 1, {2}, 1}, {1000, 2, {3}, 1}},
     .want_total = 2048},
    {.name = "the same chain with no ancestors: no reuse",
     .n_nodes = 4,
     .edges = {{0, 1}, {1, 2}, {2, 3}, {-1, -1}},
     .n_items = 3,
     .items = {{1000, 0, {1}, 1}, {1000, 1, {2}, 1}, {1000, 2, {3}, 1}},
     .no_reuse = true,
     .want_total = 3072},
    {.name = "sizes round up to 64 bytes",
     .n_nodes = 2,
     .edges = {{0, 1}, {-1, -1}},
     .n_items = 2,
     .items = {{1, 0, {1}, 1}, {65, 1, {0}, 0}},
     .want_total = 192},
    {.name = "an input (permanent) is never shared",
     .n_nodes = 3,
     .edges = {{0, 1}, {1, 2}, {-1, -1}},
     .n_items = 3,
     .items = {{4096, -1, {0}, 1, true}, {4096, 0, {1}, 1}, {4096, 1, {2}, 1}},
     .want_total = 3 * 4096},
    {.name = "an output (to the end) keeps its bytes after its last reader",
     .n_nodes = 3,
     .edges = {{0, 1}, {1, 2}, {-1, -1}},
     .n_items = 2,
     .items = {{4096, 0, {1}, 1, false, true}, {4096, 2, {0}, 0}},
     .want_total = 2 * 4096},
    {.name = "two branches the graph does not order: apart",
     .n_nodes = 4,
     .edges = {{0, 1}, {2, 3}, {-1, -1}},
     .n_items = 2,
     .items = {{2048, 0, {1}, 1}, {2048, 2, {3}, 1}},
     .want_total = 4096},
    {.name = "... the timeline runs one after the other: shared, with a wait",
     .n_nodes = 4,
     .edges = {{0, 1}, {2, 3}, {-1, -1}},
     .n_items = 2,
     .items = {{2048, 0, {1}, 1}, {2048, 2, {3}, 1}},
     .timeline = true,
     .start = {0, 1, 2, 3},
     .end = {1, 2, 3, 4},
     .want_total = 2048,
     .want_waits = 1},
    {.name = "... the timeline overlaps them: apart",
     .n_nodes = 4,
     .edges = {{0, 1}, {2, 3}, {-1, -1}},
     .n_items = 2,
     .items = {{2048, 0, {1}, 1}, {2048, 2, {3}, 1}},
     .timeline = true,
     .start = {0, 1, 0.5, 1.5},
     .end = {1, 2, 1.5, 2.5},
     .want_total = 4096},
    {.name = "a diamond: the join's inputs both live, the fork's output dies before the join",
     .n_nodes = 4,
     .edges = {{0, 1}, {0, 2}, {1, 3}, {2, 3}, {-1, -1}},
     .n_items = 4,
     .items = {{1024, 0, {1, 2}, 2}, {1024, 1, {3}, 1}, {1024, 2, {3}, 1}, {1024, 3, {0}, 0}},
     .want_total = 3072},
    {.name = "a Concat's output two nodes write: not over what the second runs beside",
     .n_nodes = 5,
     .edges = {{0, 1}, {1, 2}, {0, 3}, {2, 4}, {3, 4}, {-1, -1}},
     .n_items = 2,
     .items = {{2048, 0, {1}, 1}, {4096, 2, {4}, 1, .also = {3}, .n_also = 1}},
     .want_total = 2048 + 4096},
    {.name = "... the timeline runs the second after the first's reader: shared, with a wait",
     .n_nodes = 5,
     .edges = {{0, 1}, {1, 2}, {0, 3}, {2, 4}, {3, 4}, {-1, -1}},
     .n_items = 2,
     .items = {{2048, 0, {1}, 1}, {4096, 2, {4}, 1, .also = {3}, .n_also = 1}},
     .timeline = true,
     .start = {0, 1, 2, 3, 4},
     .end = {1, 2, 3, 4, 5},
     .want_total = 4096,
     .want_waits = 1},
    {.name = "... written first by the second (it runs before the first's reader): apart",
     .n_nodes = 5,
     .edges = {{0, 1}, {1, 2}, {0, 3}, {2, 4}, {3, 4}, {-1, -1}},
     .n_items = 2,
     .items = {{2048, 0, {1}, 1}, {4096, 2, {4}, 1, .also = {3}, .n_also = 1}},
     .timeline = true,
     .start = {0, 2, 3, 1, 4},
     .end = {1, 3, 4, 2, 5},
     .want_total = 2048 + 4096},
    {.name = "nothing to place", .n_nodes = 1, .edges = {{-1, -1}}, .n_items = 0, .want_total = 0},
};

static bool is_anc(const uint64_t *anc, uint32_t words, uint32_t a, uint32_t of)
{
	return anc[(size_t)of * words + a / 64] >> (a % 64) & 1;
}

/* Every reader of y (and each of its writers) is an ancestor of each of x's writers. */
static bool graph_orders(const struct ho_mp_item *y, const struct ho_mp_item *x,
			 const uint64_t *anc, uint32_t words)
{
	if (y->permanent || y->to_end || x->permanent || x->writer < 0 || y->writer < 0)
		return false;
	for (uint32_t w = 0; w <= x->n_also; w++) {
		uint32_t xw = (uint32_t)(w ? x->also[w - 1] : x->writer);

		for (uint32_t k = 0; k < y->n_readers; k++)
			if (!is_anc(anc, words, y->readers[k], xw))
				return false;
		for (uint32_t k = 0; k <= y->n_also; k++)
			if (!is_anc(anc, words, (uint32_t)(k ? y->also[k - 1] : y->writer), xw))
				return false;
	}
	return true;
}

static void run_case(const struct mp_case *c)
{
	uint64_t anc[MAX_NODES] = {0};
	uint32_t prio[MAX_NODES];
	struct ho_mp_item items[MAX_ITEMS] = {{0}};
	struct ho_mp_plan pl = {0};
	struct ho_mp_order o = {.anc = c->no_reuse ? NULL : anc,
				.words = 1,
				.start = c->timeline ? c->start : NULL,
				.end = c->timeline ? c->end : NULL,
				.prio = prio,
				.n_nodes = c->n_nodes};

	/* ancestors: the transitive closure of the edges (nodes are in topological order) */
	for (uint32_t v = 0; v < c->n_nodes; v++) {
		prio[v] = v;
		for (int e = 0; c->edges[e][0] >= 0; e++)
			if (c->edges[e][1] == (int)v)
				anc[v] |= anc[c->edges[e][0]] | 1ull << c->edges[e][0];
	}
	for (uint32_t i = 0; i < c->n_items; i++) {
		items[i].size = c->items[i].size;
		items[i].writer = c->items[i].writer;
		items[i].copy_start = -1;
		items[i].permanent = c->items[i].permanent;
		items[i].to_end = c->items[i].to_end;
		items[i].prio = c->items[i].writer < 0 ? 0 : (uint32_t)c->items[i].writer;
		items[i].readers = c->items[i].readers;
		items[i].n_readers = c->items[i].n_readers;
		items[i].also = c->items[i].also;
		items[i].n_also = c->items[i].n_also;
		items[i].tensor = i;
	}
	T_REQUIRE(ho_memplan(items, c->n_items, &o, &pl) == 0);
	T_CHECK(pl.total == c->want_total, "%s: region of %llu bytes, want %llu", c->name,
		(unsigned long long)pl.total, (unsigned long long)c->want_total);
	T_CHECK(pl.n_waits == c->want_waits, "%s: %u waits, want %u", c->name, pl.n_waits,
		c->want_waits);
	/* Overlapping bytes: ordered by the graph, or by a wait the executor enforces. */
	for (uint32_t i = 0; i < c->n_items; i++)
		for (uint32_t j = i + 1; j < c->n_items; j++) {
			const struct ho_mp_item *x = &items[i], *y = &items[j];
			uint64_t xs = (x->size + 63) & ~63ull, ys = (y->size + 63) & ~63ull;
			bool ordered = false;

			T_CHECK(x->offset + xs <= pl.total && y->offset + ys <= pl.total,
				"%s: a tensor ends past the region", c->name);
			if (x->offset >= y->offset + ys || y->offset >= x->offset + xs)
				continue;
			ordered = !c->no_reuse &&
				  (graph_orders(x, y, anc, 1) || graph_orders(y, x, anc, 1));
			for (uint32_t w = 0; w < pl.n_waits && !ordered; w++)
				ordered = (pl.waits[w].before == i && pl.waits[w].after == j) ||
					  (pl.waits[w].before == j && pl.waits[w].after == i);
			T_CHECK(ordered, "%s: tensors %u and %u share bytes unordered", c->name, i,
				j);
		}
	free(pl.waits);
	printf("ok   %s: %llu bytes, %u waits\n", c->name, (unsigned long long)pl.total,
	       pl.n_waits);
}

/*
 * The ancestors the planner reuses by, on a real export: only edges between
 * tasks order anything, since the executor waits on nothing else.  PyTorch's
 * RNN exports size each initial state by Shape -> Gather -> Concat -> Expand
 * of the layer before, all folded at plan time; through those edges the
 * planner once took the last LSTM's state (an Expand on another device that
 * ran at once) to come after the GRU before it, and let its copy land in the
 * GRU's output while it was still being read.
 */
static void ancestors_of_tasks(void)
{
	struct ho_graph *g = NULL;
	int64_t x[3] = {3, 20, 16};
	uint32_t words, differ = 0;
	uint64_t *anc, *tasks, *all;

	if (t_load_model("seq_rnn.onnx", "x", x, 3, &g)) {
		printf("skip ancestors on a real export: seq_rnn.onnx not in $HETEROOPT_MODELS\n");
		return;
	}
	anc = ho_memplan_ancestors(g, &words);
	tasks = calloc((size_t)g->n_nodes * words + 1, sizeof(uint64_t));
	all = calloc((size_t)g->n_nodes * words + 1, sizeof(uint64_t));
	T_REQUIRE(anc && tasks && all);
	/* both closures, independently: through tasks only, and through every node */
	for (uint32_t i = 0; i < g->n_nodes; i++) {
		uint32_t v = (uint32_t)g->topo[i];

		for (uint32_t k = 0; k < g->nodes[v].n_inputs; k++) {
			int32_t t = g->nodes[v].inputs[k], p = t >= 0 ? g->tensors[t].producer : -1;

			for (uint32_t j = 0; p >= 0 && j < words; j++) {
				all[(size_t)v * words + j] |= all[(size_t)p * words + j];
				if (ho_node_is_task(&g->nodes[p]))
					tasks[(size_t)v * words + j] |=
					    tasks[(size_t)p * words + j];
			}
			if (p < 0)
				continue;
			all[(size_t)v * words + (uint32_t)p / 64] |= 1ull << ((uint32_t)p % 64);
			if (ho_node_is_task(&g->nodes[p]))
				tasks[(size_t)v * words + (uint32_t)p / 64] |=
				    1ull << ((uint32_t)p % 64);
		}
	}
	for (uint32_t v = 0; v < g->n_nodes; v++) {
		bool same = true;

		for (uint32_t j = 0; j < words; j++) {
			same &= anc[(size_t)v * words + j] == tasks[(size_t)v * words + j];
			differ += all[(size_t)v * words + j] != tasks[(size_t)v * words + j];
		}
		T_CHECK(same, "node '%s': ancestors through nodes that do not run",
			g->nodes[v].name);
	}
	T_CHECK(differ > 0, "the export has no folded edges: it tests nothing");
	printf("ok   ancestors on seq_rnn.onnx: %u nodes, %u of them ordered by folded edges "
	       "alone\n",
	       g->n_nodes, differ);
	free(anc);
	free(tasks);
	free(all);
	ho_graph_free(g);
}

int main(void)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		run_case(&cases[i]);
	ancestors_of_tasks();
	return t_failures ? 1 : 0;
}
