// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Linear probing with backward-shift deletion (no tombstones), so lookups
 * stay short however many keys come and go (pids do, all day). A slot is
 * 16 bytes, four to a cache line, key 0 marking it empty (key 0 itself is
 * kept aside), and the table is at most half full: a lookup that misses,
 * the common case for a consumer checking what it has seen, reads about
 * 2.5 slots, one cache line, where 24-byte slots 70% full read six
 * (kmon-trace --fleet spent a tenth of its time here). */
#include <stdio.h>
#include <stdlib.h>

#include "lib/hash.h"
#include "lib/hashmap.h"
#include "lib/xalloc.h"

#define EMPTY 0 /* the key of an empty slot */

struct slot {
	uint64_t key;
	uint64_t value;
};

struct hashmap {
	struct slot *slots;
	size_t cap; /* a power of two */
	size_t count; /* key 0 included */
	bool has_zero;
	uint64_t zero_value;
};

static size_t hash(uint64_t key)
{
	return (size_t)mix64(key); /* pids are small and dense */
}

struct hashmap *hashmap__new(void)
{
	struct hashmap *m = xcalloc(1, sizeof(*m));

	m->cap = 64;
	m->slots = xcalloc(m->cap, sizeof(*m->slots));
	return m;
}

void hashmap__free(struct hashmap *m)
{
	if (!m)
		return;
	free(m->slots);
	free(m);
}

void hashmap__free_values(struct hashmap *m, void (*free_value)(void *))
{
	uint64_t key, value;
	size_t pos = 0;

	while (m && hashmap__next(m, &pos, &key, &value))
		free_value((void *)(uintptr_t)value);
	hashmap__free(m);
}

/* The slot of key (not 0), or the empty slot where it would go. */
static size_t hashmap__index(const struct hashmap *m, uint64_t key)
{
	size_t i = hash(key) & (m->cap - 1);

	while (m->slots[i].key != EMPTY && m->slots[i].key != key)
		i = (i + 1) & (m->cap - 1);
	return i;
}

uint64_t *hashmap__find(const struct hashmap *m, uint64_t key)
{
	size_t i;

	if (key == EMPTY)
		return m->has_zero ? (uint64_t *)&m->zero_value : NULL;
	i = hashmap__index(m, key);
	return m->slots[i].key != EMPTY ? &m->slots[i].value : NULL;
}

static void hashmap__grow(struct hashmap *m)
{
	struct slot *old = m->slots;
	size_t old_cap = m->cap;

	m->cap *= 2;
	m->slots = xcalloc(m->cap, sizeof(*m->slots));
	for (size_t i = 0; i < old_cap; i++)
		if (old[i].key != EMPTY)
			m->slots[hashmap__index(m, old[i].key)] = old[i];
	free(old);
}

void hashmap__set(struct hashmap *m, uint64_t key, uint64_t value)
{
	size_t i;

	if (key == EMPTY) {
		m->count += !m->has_zero;
		m->has_zero = true;
		m->zero_value = value;
		return;
	}
	if ((m->count + 1) * 2 > m->cap)
		hashmap__grow(m);
	i = hashmap__index(m, key);
	if (m->slots[i].key == EMPTY) {
		m->slots[i].key = key;
		m->count++;
	}
	m->slots[i].value = value;
}

bool hashmap__delete(struct hashmap *m, uint64_t key)
{
	size_t mask = m->cap - 1;
	size_t i, j;

	if (key == EMPTY) {
		if (!m->has_zero)
			return false;
		m->has_zero = false;
		m->count--;
		return true;
	}
	i = j = hashmap__index(m, key);
	if (m->slots[i].key == EMPTY)
		return false;
	m->slots[i].key = EMPTY;
	m->count--;
	/* Shift back every later entry of the run that would no longer be
	 * reachable from its home slot across the new hole. */
	for (;;) {
		size_t home;

		j = (j + 1) & mask;
		if (m->slots[j].key == EMPTY)
			break;
		home = hash(m->slots[j].key) & mask;
		if (((j - home) & mask) >= ((j - i) & mask)) {
			m->slots[i] = m->slots[j];
			m->slots[j].key = EMPTY;
			i = j;
		}
	}
	return true;
}

size_t hashmap__count(const struct hashmap *m)
{
	return m->count;
}

/* Positions 0 .. cap-1 are the slots, cap is key 0. */
bool hashmap__next(const struct hashmap *m, size_t *pos, uint64_t *key,
		   uint64_t *value)
{
	while (*pos < m->cap) {
		struct slot *s = &m->slots[(*pos)++];

		if (s->key != EMPTY) {
			*key = s->key;
			if (value)
				*value = s->value;
			return true;
		}
	}
	if (*pos == m->cap && m->has_zero) {
		(*pos)++;
		*key = EMPTY;
		if (value)
			*value = m->zero_value;
		return true;
	}
	return false;
}
