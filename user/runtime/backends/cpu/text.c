// SPDX-License-Identifier: MIT
/*
 * Text: TfIdfVectorizer over integer tokens.  Each row's n-grams (lengths
 * min_gram_length to max_gram_length, their items skip_distance apart for
 * each distance 1 to max_skip_count + 1; unigrams once, whatever the
 * distance), counted where the pool holds them, then TF, IDF or TF-IDF
 * into the output column ngram_indexes gives each, as ONNX's reference does.
 * String pools and tokens are refused (the runtime has no string tensors).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cpu.h"

struct ho_tfidf {
	int64_t min_n, max_n, max_skip, mode; /* mode: 0 TF, 1 IDF, 2 TFIDF */
	int64_t n_grams, n_lens;	      /* pool n-grams; lengths 1..n_lens */
	int64_t *start;			      /* per length: its first n-gram's number */
	int64_t *offset;		      /* per length: where its n-grams start in the pool */
	const int64_t *pool, *index;
	const double *weights; /* NULL: all 1 */
	int64_t rows, cols, width;
	int x_dt;
	const void *x;
	float *y;
	int64_t *counts; /* per pool n-gram, for one row */
};

/* The pool's number of the n-gram x[at], x[at + d], ... (n items), or -1. */
static int64_t tfidf_find(const struct ho_tfidf *p, int64_t row, int64_t at, int64_t d, int64_t n)
{
	int64_t first = p->start[n - 1], count = p->start[n] - first;

	for (int64_t g = 0; g < count; g++) {
		const int64_t *gram = p->pool + p->offset[n - 1] + g * n;
		int64_t i = 0;

		while (i < n && ho_cpu_index(p->x, p->x_dt, row * p->cols + at + i * d) == gram[i])
			i++;
		if (i == n)
			return first + g;
	}
	return -1;
}

static int ho_run_tfidf(const struct ho_kernel *k)
{
	const struct ho_tfidf *p = (const struct ho_tfidf *)k->fold;

	for (int64_t r = 0; r < p->rows; r++) {
		int64_t lo = p->min_n;
		float *y = p->y + r * p->width;

		memset(p->counts, 0, (size_t)p->n_grams * sizeof(int64_t));
		for (int64_t d = 1; d <= p->max_skip + 1; d++) {
			for (int64_t s = 0; s < p->cols; s++)
				for (int64_t n = lo; n <= p->max_n && n <= p->n_lens; n++) {
					int64_t g;

					if (s + (n - 1) * d >= p->cols)
						break;
					if ((g = tfidf_find(p, r, s, d, n)) >= 0)
						p->counts[g]++;
				}
			if (lo == 1 && ++lo > p->max_n) /* unigrams: once */
				break;
		}
		memset(y, 0, (size_t)p->width * sizeof(float));
		for (int64_t g = 0; g < p->n_grams; g++) {
			float w = p->weights ? (float)p->weights[g] : 1.0f, c = (float)p->counts[g];

			y[p->index[g]] = p->mode == 0 ? c : p->mode == 1 ? (c > 0 ? w : 0) : c * w;
		}
	}
	return 0;
}

int ho_cpu_prep_tfidf(const struct ho_graph *g, const struct ho_node *n, void *const *buf,
		      struct ho_kernel *k, struct ho_error *err)
{
	static const char *const modes[] = {"TF", "IDF", "TFIDF"};
	const struct ho_tensor *x = ho_cpu_in_t(g, n, 0), *y = &g->tensors[n->outputs[0]];
	const struct ho_attr *pool = ho_node_attr(n, "pool_int64s"),
			     *counts = ho_node_attr(n, "ngram_counts"),
			     *index = ho_node_attr(n, "ngram_indexes"),
			     *weights = ho_node_attr(n, "weights"), *ma = ho_node_attr(n, "mode");
	struct ho_tfidf p = {0}, *q;
	size_t bytes;

	if (!x || (x->dtype != HO_DT_INT64 && x->dtype != HO_DT_INT32) || !pool ||
	    pool->type != HO_ATTR_INTS || !counts || counts->type != HO_ATTR_INTS || !index ||
	    index->type != HO_ATTR_INTS || !ma || ma->type != HO_ATTR_STRING)
		return ho_cpu_unsupported(err, n, "counts integer tokens in an integer pool only");
	for (p.mode = 0; p.mode < 3 && strcmp(ma->s, modes[p.mode]); p.mode++)
		;
	p.min_n = ho_cpu_attr_i(n, "min_gram_length", 0);
	p.max_n = ho_cpu_attr_i(n, "max_gram_length", 0);
	p.max_skip = ho_cpu_attr_i(n, "max_skip_count", 0);
	p.n_lens = (int64_t)counts->n;
	if (p.mode == 3 || p.min_n < 1 || p.max_n < p.min_n || p.max_skip < 0 || p.max_n > p.n_lens)
		return ho_cpu_unsupported(err, n, "needs its mode and gram lengths the pool has");
	bytes = sizeof(p) + 2 * (size_t)(p.n_lens + 1) * sizeof(int64_t);
	if (!(q = calloc(1, bytes + (index->n + 1) * sizeof(int64_t))))
		return ho_err(err, -ENOMEM, "out of memory");
	k->fold = (float *)q;
	p.start = (int64_t *)(q + 1);
	p.offset = p.start + p.n_lens + 1;
	p.counts = (int64_t *)((char *)q + bytes);
	/* each length's n-grams: from its offset in the pool to the next length's */
	for (int64_t l = 0; l < p.n_lens; l++) {
		int64_t from = counts->ints[l],
			to = l + 1 < p.n_lens ? counts->ints[l + 1] : (int64_t)pool->n;

		if (from < 0 || to < from || to > (int64_t)pool->n || (to - from) % (l + 1))
			return ho_cpu_unsupported(err, n,
						  "has ngram_counts that do not fit the pool");
		p.offset[l] = from;
		p.start[l + 1] = p.start[l] + (to - from) / (l + 1);
	}
	p.n_grams = p.start[p.n_lens];
	if ((int64_t)index->n != p.n_grams ||
	    (weights && (weights->type != HO_ATTR_FLOATS || (int64_t)weights->n != p.n_grams)))
		return ho_cpu_unsupported(err, n, "needs an index (and weight) per pool n-gram");
	p.pool = pool->ints;
	p.index = index->ints;
	p.weights = weights ? weights->floats : NULL;
	p.rows = x->shape.rank == 2 ? x->shape.dim[0] : 1;
	p.cols = x->shape.dim[x->shape.rank - 1];
	p.width = y->shape.dim[y->shape.rank - 1];
	for (int64_t i = 0; i < p.n_grams; i++)
		if (p.index[i] < 0 || p.index[i] >= p.width)
			return ho_cpu_unsupported(err, n, "has an ngram index past its output");
	p.x = buf[n->inputs[0]];
	p.x_dt = x->dtype;
	p.y = buf[n->outputs[0]];
	*q = p;
	k->kind = HO_K_LOOP;
	k->typed.run = ho_run_tfidf;
	return 0;
}
