/* SPDX-License-Identifier: MIT */
/*
 * A small hash map from uint64_t keys to uint32_t values (typically an index
 * into an array the caller owns): open addressing, linear probing, load
 * factor at most 1/2, no removal. Zero-initialise it (struct sp_map m = {0})
 * and free it with sp_map_free(). Every key is allowed.
 */
#ifndef SP_MAP_H
#define SP_MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "compiler.h"

struct sp_map {
	uint64_t *keys;   /* 0 = empty slot (key 0 lives in zero_val) */
	uint32_t *vals;
	size_t n, cap;    /* entries (zero key included), slots (power of 2) */
	bool has_zero;
	uint32_t zero_val;
};

/* The mixing step of MurmurHash3's 64-bit finalizer: keys that differ in
 * their high half (parent << 32 | child) spread over the low bits too. */
static inline uint64_t sp_map_hash(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	return x;
}

/* The value stored for key, or NULL. The pointer is valid until the next
 * sp_map_put(). */
static inline uint32_t *sp_map_find(struct sp_map *m, uint64_t key)
{
	if (SP_UNLIKELY(key == 0))
		return m->has_zero ? &m->zero_val : NULL;
	if (!m->cap)
		return NULL;
	size_t mask = m->cap - 1;
	for (size_t h = sp_map_hash(key) & mask; m->keys[h]; h = (h + 1) & mask)
		if (m->keys[h] == key)
			return &m->vals[h];
	return NULL;
}

/* Set key to val (insert or replace). @return 0 or -ENOMEM (map unchanged). */
int sp_map_put(struct sp_map *m, uint64_t key, uint32_t val);
/* Make room for n entries without growing again. @return 0 or -ENOMEM. */
int sp_map_reserve(struct sp_map *m, size_t n);
/* Free the slots; the map is empty (and usable) again. */
void sp_map_free(struct sp_map *m);

#endif /* SP_MAP_H */
