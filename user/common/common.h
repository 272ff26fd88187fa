/* SPDX-License-Identifier: MIT */
/*
 * What every HeteroOpt library shares (user/common): the error helper, the
 * arena and name index, the random generator, the clock.  Not installed.
 */
#ifndef HO_COMMON_H
#define HO_COMMON_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "heteroopt/error.h"

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

/* float16 bits to float32, exactly: normal, subnormal, infinite and NaN halves.  The one
 * decoder: the loader's (widen.c) and the typed loops' (Cast, converters) alike. */
static inline float ho_half_to_float(uint16_t h)
{
	union {
		uint32_t u;
		float f;
	} v;
	uint32_t em = h & 0x7fff;

	if (em >= 0x7c00) {
		v.u = em << 13 | 0x7f800000;
	} else if (em >= 0x0400) {
		v.u = (em << 13) + 0x38000000; /* the exponent rebased from 15 to 127 */
	} else {
		v.f = (float)em * 0x1p-24f;
	}
	v.u |= (uint32_t)(h & 0x8000) << 16;
	return v.f;
}

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

/* utf8.c: the next code point of *s (advanced past it), -1 for a malformed byte (skipped); and
 * code point c as UTF-8 at o (1 to 4 bytes, their count). */
long ho_utf8_next(const char **s);
size_t ho_utf8_put(unsigned long c, char *o);

#endif
