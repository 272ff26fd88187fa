// SPDX-License-Identifier: MIT
/* xoshiro256** (Blackman & Vigna), seeded through splitmix64. */
#include "common.h"

static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

void ho_rng_seed(struct ho_rng *r, uint64_t seed)
{
	for (int i = 0; i < 4; i++)
		r->s[i] = splitmix64(&seed);
}

static uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

uint64_t ho_rng_next(struct ho_rng *r)
{
	uint64_t *s = r->s, result = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return result;
}

double ho_rng_unit(struct ho_rng *r)
{
	return (double)(ho_rng_next(r) >> 11) * 0x1.0p-53;
}

uint32_t ho_rng_below(struct ho_rng *r, uint32_t n)
{
	return n ? (uint32_t)(((ho_rng_next(r) >> 32) * (uint64_t)n) >> 32) : 0;
}
