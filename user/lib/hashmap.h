/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* An open-addressing hash map from u64 keys to u64 values (or pointers
 * cast to u64): the one user-space table kmond keeps state in. */
#ifndef KMON_HASHMAP_H
#define KMON_HASHMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct hashmap;

struct hashmap *hashmap__new(void);
void hashmap__free(struct hashmap *m); /* NULL-safe */
/* For a map whose values point to what it owns: free_value on each
 * value, then the map. NULL-safe. */
void hashmap__free_values(struct hashmap *m, void (*free_value)(void *));
/* Returns a pointer to the value slot, or NULL. Valid until the next
 * insert or delete. */
uint64_t *hashmap__find(const struct hashmap *m, uint64_t key);
void hashmap__set(struct hashmap *m, uint64_t key, uint64_t value);
bool hashmap__delete(struct hashmap *m, uint64_t key);
size_t hashmap__count(const struct hashmap *m);
/* Iteration: *pos starts at 0; returns false at the end. Deleting the
 * current key while iterating may skip or repeat entries: collect keys
 * first. */
bool hashmap__next(const struct hashmap *m, size_t *pos, uint64_t *key,
		   uint64_t *value);

#endif
