// SPDX-License-Identifier: MIT
/* Bump allocator and name index: the graph IR's objects, the search's block index. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"

struct ho_arena_chunk {
	struct ho_arena_chunk *next;
	size_t used, cap;
	max_align_t data[];
};

#define HO_CHUNK_MIN (64u * 1024u)

void *ho_arena_alloc(struct ho_arena *a, size_t size)
{
	struct ho_arena_chunk *c = a->head;
	size_t align = _Alignof(max_align_t);

	size = (size + align - 1) & ~(align - 1);
	if (size == 0)
		size = align;
	if (!c || c->cap - c->used < size) {
		size_t cap = size > HO_CHUNK_MIN ? size : HO_CHUNK_MIN;

		if (cap > SIZE_MAX - sizeof(*c))
			return NULL;
		c = malloc(sizeof(*c) + cap);
		if (!c)
			return NULL;
		c->used = 0;
		c->cap = cap;
		/* Keep the partly used chunk first when this one is a big one-off. */
		if (a->head && cap > HO_CHUNK_MIN) {
			c->next = a->head->next;
			a->head->next = c;
		} else {
			c->next = a->head;
			a->head = c;
		}
		a->total += cap;
	}
	void *p = (char *)c->data + c->used;

	c->used += size;
	return p;
}

void *ho_arena_calloc(struct ho_arena *a, size_t n, size_t size)
{
	if (size && n > SIZE_MAX / size)
		return NULL;
	void *p = ho_arena_alloc(a, n * size);

	if (p)
		memset(p, 0, n * size);
	return p;
}

char *ho_arena_strndup(struct ho_arena *a, const char *s, size_t n)
{
	char *p = ho_arena_alloc(a, n + 1);

	if (p) {
		if (n)
			memcpy(p, s, n); /* s may be NULL for an empty protobuf bytes field */
		p[n] = '\0';
	}
	return p;
}

char *ho_arena_strdup(struct ho_arena *a, const char *s)
{
	return ho_arena_strndup(a, s ? s : "", s ? strlen(s) : 0);
}

void ho_arena_release(struct ho_arena *a)
{
	struct ho_arena_chunk *c = a->head;

	while (c) {
		struct ho_arena_chunk *next = c->next;

		free(c);
		c = next;
	}
	a->head = NULL;
	a->total = 0;
}

static uint32_t ho_hash(const char *s)
{
	uint32_t h = 2166136261u; /* FNV-1a */

	while (*s)
		h = (h ^ (unsigned char)*s++) * 16777619u;
	return h;
}

int ho_index_init(struct ho_name_index *ix, struct ho_arena *a, uint32_t expected)
{
	uint32_t cap = 16;

	while (cap < expected * 2u && cap < (1u << 30))
		cap <<= 1;
	ix->cap = cap;
	ix->used = 0;
	ix->keys = ho_arena_calloc(a, cap, sizeof(*ix->keys));
	ix->ids = ho_arena_calloc(a, cap, sizeof(*ix->ids));
	return ix->keys && ix->ids ? 0 : -ENOMEM;
}

int32_t ho_index_get(const struct ho_name_index *ix, const char *key)
{
	uint32_t m = ix->cap - 1;

	for (uint32_t i = ho_hash(key) & m;; i = (i + 1) & m) {
		if (!ix->keys[i])
			return -1;
		if (!strcmp(ix->keys[i], key))
			return ix->ids[i];
	}
}

int32_t ho_index_put(struct ho_name_index *ix, const char *key, int32_t id)
{
	uint32_t m = ix->cap - 1;

	for (uint32_t i = ho_hash(key) & m;; i = (i + 1) & m) {
		if (!ix->keys[i]) {
			ix->keys[i] = key;
			ix->ids[i] = id;
			ix->used++;
			return -1;
		}
		if (!strcmp(ix->keys[i], key))
			return ix->ids[i];
	}
}
