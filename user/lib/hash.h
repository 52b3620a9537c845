/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* kmond's one byte-string hash, 64-bit FNV-1a: user-space tables are
 * u64-keyed, and two keys colliding would merely share an entry's
 * figures, which FNV-1a makes negligible at our table sizes. And one
 * integer mixer, splitmix64's. */
#ifndef KMON_HASH_H
#define KMON_HASH_H

#include <stddef.h>
#include <stdint.h>

#define FNV1A_SEED 0xcbf29ce484222325ULL

/* Continues hash h (FNV1A_SEED to start) over len bytes at p. */
static inline uint64_t fnv1a_more(uint64_t h, const void *p, size_t len)
{
	const unsigned char *b = p;

	for (size_t i = 0; i < len; i++)
		h = (h ^ b[i]) * 0x100000001b3ULL;
	return h;
}

static inline uint64_t fnv1a(const void *p, size_t len)
{
	return fnv1a_more(FNV1A_SEED, p, len);
}

/* splitmix64's finalizer: every input bit moves every output bit, for
 * small dense keys (pids) in tables and ids that should look random. */
static inline uint64_t mix64(uint64_t x)
{
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

/* splitmix64: a fixed seed gives the same numbers on every machine
 * (simulations and test workloads). */
static inline uint64_t splitmix64_next(uint64_t *state)
{
	return mix64(*state += 0x9e3779b97f4a7c15ULL);
}

#endif
