/* SPDX-License-Identifier: MIT */
/*
 * What every HeteroOpt library shares (user/common): the error helper, the
 * arena and name index, the random generator, the clock.  Not installed.
 */
#ifndef HO_COMMON_H
#define HO_COMMON_H

#include <locale.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "heteroopt/graph.h" /* struct ho_error, ho_err */

/*
 * Every IR object lives in one arena per top-level graph so that a failed
 * load can unwind with a single free and nothing can leak piecemeal.
 */
struct ho_arena_chunk;
struct ho_arena {
	struct ho_arena_chunk *head;
	size_t total;
};

void *ho_arena_alloc(struct ho_arena *a, size_t size);
void *ho_arena_calloc(struct ho_arena *a, size_t n, size_t size);
char *ho_arena_strndup(struct ho_arena *a, const char *s, size_t n);
char *ho_arena_strdup(struct ho_arena *a, const char *s);
void ho_arena_release(struct ho_arena *a);

/* Open-addressing name -> id index. */
struct ho_name_index {
	uint32_t cap; /* power of two */
	uint32_t used;
	const char **keys;
	int32_t *ids;
};

int ho_index_init(struct ho_name_index *ix, struct ho_arena *a, uint32_t expected);
int32_t ho_index_get(const struct ho_name_index *ix, const char *key);
/* Returns the existing id if present (no insert), else inserts and returns -1. */
int32_t ho_index_put(struct ho_name_index *ix, const char *key, int32_t id);

/* xoshiro256** with an explicit state: reproducible and thread-free. */
struct ho_rng {
	uint64_t s[4];
};
void ho_rng_seed(struct ho_rng *r, uint64_t seed);
uint64_t ho_rng_next(struct ho_rng *r);
double ho_rng_unit(struct ho_rng *r);		     /* [0, 1) */
uint32_t ho_rng_below(struct ho_rng *r, uint32_t n); /* [0, n) */

/* The folder path is in ("." for a bare name). */
void ho_path_dir(const char *path, char *out, size_t n);
/* target's path from folder dir ("../boxes/b.json"); target as given if either is not found. */
void ho_path_relative(const char *target, const char *dir, char *out, size_t n);

/* Seconds on the monotonic clock. */
double ho_clock_s(void);

/* einsum.c: an Einsum equation as label ids per axis (shape inference and kernels share it). */
#define HO_EINSUM_MAX_IN 8
struct ho_einsum {
	int n_in, n_labels, n_ell; /* labels 0..n_ell-1 are the ellipsis' axes */
	int in_rank[HO_EINSUM_MAX_IN], in_label[HO_EINSUM_MAX_IN][HO_MAX_RANK];
	int out_rank, out_label[HO_MAX_RANK];
};
int ho_einsum_parse(const char *eq, int n_in, const int *ranks, struct ho_einsum *e,
		    struct ho_error *err);

/* scan.c: how Scan slices its inputs and stacks its outputs (shape inference and kernels
 * share it). */
#define HO_SCAN_MAX 16
struct ho_scan {
	uint32_t first;		       /* the node input of the first state value */
	uint32_t n_state, n_in, n_out; /* state values, scan inputs, scan outputs */
	bool batched;		       /* opset 8: axis 0 is a batch, each entry run apart */
	int64_t in_axis[HO_SCAN_MAX];  /* per scan input, >= 0 where its rank is known */
	int64_t out_axis[HO_SCAN_MAX]; /* per scan output, into the stacked rank */
	bool in_reverse[HO_SCAN_MAX], out_reverse[HO_SCAN_MAX];
};
/* in_rank: per state and scan input; out_rank: per body output (-1 unknown); each
 * read up to 2 * HO_SCAN_MAX entries, beyond which the node is refused. */
int ho_scan_parse(const struct ho_node *n, const struct ho_graph *body, const int *in_rank,
		  const int *out_rank, struct ho_scan *s, struct ho_error *err);

/* utf8.c: the next code point of *s (advanced past it), -1 for a malformed byte (skipped); and
 * code point c as UTF-8 at o (1 to 4 bytes, their count). */
long ho_utf8_next(const char **s);
size_t ho_utf8_put(unsigned long c, char *o);

/* strnorm.c: StringNormalizer's stopwords and case mapping (shape rule and kernel share it). */
struct ho_strnorm {
	int change; /* 0 NONE, 1 LOWER, 2 UPPER */
	bool case_sensitive;
	const char *const *stop;
	size_t n_stop;
	locale_t loc; /* C.UTF-8's case mapping; (locale_t)0: ASCII's */
};
int ho_strnorm_parse(const struct ho_node *n, struct ho_strnorm *s, struct ho_error *err);
void ho_strnorm_free(struct ho_strnorm *s);
/* 1: x stays, 0: a stopword, -ENOMEM. */
int ho_strnorm_kept(const struct ho_strnorm *s, const char *x);
/* x in case change (0 none, 1 lower, 2 upper) into out (4 * strlen(x) + 1 bytes); its length. */
size_t ho_strnorm_case(const struct ho_strnorm *s, const char *x, int change, char *out);

/* nms.c: NonMaxSuppression's selection (shape inference and kernels share it). */
struct ho_nms_args {
	const float *boxes, *scores; /* [batches, n, 4], [batches, classes, n] */
	int64_t batches, classes, boxes_per_batch, max_per_class;
	float iou_threshold, score_threshold;
	bool has_score_threshold, center_point_box;
};
/* The boxes selected, as (batch, class, box) triples into out (up to cap); -1: no memory. */
int64_t ho_nms(const struct ho_nms_args *a, int64_t *out, int64_t cap);

#endif
