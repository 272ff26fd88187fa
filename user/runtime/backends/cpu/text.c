// SPDX-License-Identifier: MIT
/*
 * Text: string tensors' kernels (Cast to and from strings, StringNormalizer),
 * and TfIdfVectorizer over integer tokens.  A string element is a pointer to
 * NUL-terminated UTF-8; the strings a kernel makes live in its own buffer,
 * valid until its next run.
 *
 * TfIdfVectorizer:  Each row's n-grams (lengths
 * min_gram_length to max_gram_length, their items skip_distance apart for
 * each distance 1 to max_skip_count + 1; unigrams once, whatever the
 * distance), counted where the pool holds them, then TF, IDF or TF-IDF
 * into the output column ngram_indexes gives each, as ONNX's reference does.
 * String pools and tokens are refused.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu.h"
#include "heteroopt/opsem.h"

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
	const struct ho_tensor *x = ho_node_input(g, n, 0), *y = &g->tensors[n->outputs[0]];
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
	p.min_n = ho_node_attr_i(n, "min_gram_length", 0);
	p.max_n = ho_node_attr_i(n, "max_gram_length", 0);
	p.max_skip = ho_node_attr_i(n, "max_skip_count", 0);
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

/* A string kernel's plan and the bytes of the strings it writes. */
struct ho_text {
	const void *x;
	void *y;
	int x_dt, y_dt;
	int64_t n, n_out;
	struct ho_strnorm norm;
	char *buf; /* its outputs' bytes, grown as a run needs */
	size_t cap;
};

void ho_cpu_text_free(struct ho_text *t)
{
	if (!t)
		return;
	ho_strnorm_free(&t->norm);
	free(t->buf);
	free(t);
}

static int text_reserve(struct ho_text *t, size_t bytes)
{
	char *b;

	if (bytes <= t->cap)
		return 0;
	if (!(b = realloc(t->buf, bytes)))
		return -ENOMEM;
	t->buf = b;
	t->cap = bytes;
	return 0;
}

/*
 * A number as text: integers in full, floating values in the fewest digits
 * that read back to the same value (ONNX's test data: "0.039187793"), and
 * NaN, INF, -INF as the ONNX specification spells them.
 */
static int text_format(const void *x, int dt, int64_t i, char *o)
{
	double v;
	float f;
	int digits = dt == HO_DT_FLOAT ? 9 : 17;

	switch (dt) {
	case HO_DT_FLOAT:
		v = ((const float *)x)[i];
		break;
	case HO_DT_DOUBLE:
		v = ((const double *)x)[i];
		break;
	case HO_DT_UINT64:
		return sprintf(o, "%" PRIu64, ((const uint64_t *)x)[i]);
	default:
		return sprintf(o, "%" PRId64, ho_cpu_int(x, dt, i));
	}
	if (isnan(v))
		return sprintf(o, "NaN");
	if (isinf(v))
		return sprintf(o, v < 0 ? "-INF" : "INF");
	for (int p = 1; p <= digits; p++) {
		int len = sprintf(o, "%.*g", p, v);

		f = strtof(o, NULL);
		if (dt == HO_DT_FLOAT ? f == (float)v : strtod(o, NULL) == v)
			return len;
	}
	return sprintf(o, "%.*g", digits, v);
}

static int ho_run_to_string(const struct ho_kernel *k)
{
	struct ho_text *t = k->text;
	char **y = t->y;

	for (int64_t i = 0; i < t->n; i++) {
		y[i] = t->buf + i * 32; /* 24 characters at most: "-1.0000000000000002e-308" */
		text_format(t->x, t->x_dt, i, y[i]);
	}
	return 0;
}

/* Strings read as numbers, as strtod reads them ("NaN", "INF", "+INF", "1e-3"). */
static int ho_run_from_string(const struct ho_kernel *k)
{
	const struct ho_text *t = k->text;
	const char *const *x = t->x;

	bool real = t->y_dt == HO_DT_FLOAT || t->y_dt == HO_DT_DOUBLE;

	for (int64_t i = 0; i < t->n; i++) {
		char *end;
		double v = real ? strtod(x[i], &end) : 0;
		long long l = real ? 0 : strtoll(x[i], &end, 10);

		if (end == x[i] || *end)
			return -EDOM;
		if (t->y_dt == HO_DT_FLOAT)
			((float *)t->y)[i] = (float)v;
		else if (t->y_dt == HO_DT_DOUBLE)
			((double *)t->y)[i] = v;
		else if (t->y_dt == HO_DT_INT64)
			((int64_t *)t->y)[i] = l;
		else /* int32: the prepare allows no other */
			((int32_t *)t->y)[i] = (int32_t)l;
	}
	return 0;
}

static bool text_numeric(int dt)
{
	return dt == HO_DT_FLOAT || dt == HO_DT_DOUBLE || dt == HO_DT_INT64 || dt == HO_DT_INT32 ||
	       dt == HO_DT_INT16 || dt == HO_DT_INT8 || dt == HO_DT_UINT64 || dt == HO_DT_UINT32 ||
	       dt == HO_DT_UINT16 || dt == HO_DT_UINT8;
}

int ho_cpu_prep_string_cast(const struct ho_graph *g, const struct ho_node *n, void *const *buf,
			    struct ho_kernel *k, struct ho_error *err)
{
	const struct ho_tensor *x = ho_node_input(g, n, 0), *y = &g->tensors[n->outputs[0]];
	struct ho_text *t;
	bool to = y->dtype == HO_DT_STRING;

	if (!x || (to ? !text_numeric(x->dtype)
		      : x->dtype != HO_DT_STRING ||
			    (y->dtype != HO_DT_FLOAT && y->dtype != HO_DT_DOUBLE &&
			     y->dtype != HO_DT_INT64 && y->dtype != HO_DT_INT32)))
		return ho_cpu_unsupported(err, n,
					  "casts between strings and float, double or integers "
					  "only");
	if (!(t = calloc(1, sizeof(*t))))
		return ho_err(err, -ENOMEM, "out of memory");
	k->text = t;
	t->x = buf[n->inputs[0]];
	t->y = buf[n->outputs[0]];
	t->x_dt = x->dtype;
	t->y_dt = y->dtype;
	t->n = ho_shape_numel(&x->shape);
	if (to && text_reserve(t, (size_t)t->n * 32 + 1))
		return ho_err(err, -ENOMEM, "out of memory");
	k->kind = HO_K_LOOP;
	k->typed.run = to ? ho_run_to_string : ho_run_from_string;
	return 0;
}

static int ho_run_strnorm(const struct ho_kernel *k)
{
	struct ho_text *t = k->text;
	const char *const *x = t->x;
	char **y = t->y;
	size_t need = 1, at = 0;
	int64_t kept = 0;

	for (int64_t i = 0; i < t->n; i++)
		need += 4 * strlen(x[i]) + 1;
	if (text_reserve(t, need))
		return -ENOMEM;
	for (int64_t i = 0; i < t->n; i++) {
		int keep = ho_strnorm_kept(&t->norm, x[i]);

		if (keep < 0)
			return keep;
		if (!keep)
			continue;
		if (kept == t->n_out)
			return -ERANGE; /* more than planned for */
		y[kept++] = t->buf + at;
		at += ho_strnorm_case(&t->norm, x[i], t->norm.change, t->buf + at) + 1;
	}
	if (!kept && t->n_out == 1) { /* none left: one empty string */
		t->buf[0] = '\0';
		y[kept++] = t->buf;
	}
	return kept == t->n_out ? 0 : -ERANGE;
}

int ho_cpu_prep_strnorm(const struct ho_graph *g, const struct ho_node *n, void *const *buf,
			struct ho_kernel *k, struct ho_error *err)
{
	const struct ho_tensor *x = ho_node_input(g, n, 0), *y = &g->tensors[n->outputs[0]];
	struct ho_text *t;
	int ret;

	if (!x || x->dtype != HO_DT_STRING || y->dtype != HO_DT_STRING)
		return ho_cpu_unsupported(err, n, "needs strings in and out");
	if (!(t = calloc(1, sizeof(*t))))
		return ho_err(err, -ENOMEM, "out of memory");
	k->text = t;
	if ((ret = ho_strnorm_parse(n, &t->norm, err)))
		return ret;
	t->x = buf[n->inputs[0]];
	t->y = buf[n->outputs[0]];
	t->n = ho_shape_numel(&x->shape);
	t->n_out = ho_shape_numel(&y->shape);
	k->kind = HO_K_LOOP;
	k->typed.run = ho_run_strnorm;
	return 0;
}
