/* SPDX-License-Identifier: MIT */
/* struct sp_map: growing and inserting (lookups are inline in sp-map.h). */
#include "sp-map.h"

#include <errno.h>
#include <stdlib.h>

#define MIN_SLOTS 16

/* Move every entry into a table of `cap` slots (a power of 2). */
static int rehash(struct sp_map *m, size_t cap)
{
	uint64_t *keys = calloc(cap, sizeof(*keys));
	uint32_t *vals = malloc(cap * sizeof(*vals));
	if (!keys || !vals) {
		free(keys);
		free(vals);
		return -ENOMEM;
	}
	for (size_t i = 0; i < m->cap; i++) {
		if (!m->keys[i])
			continue;
		size_t h = sp_map_hash(m->keys[i]) & (cap - 1);
		while (keys[h])
			h = (h + 1) & (cap - 1);
		keys[h] = m->keys[i];
		vals[h] = m->vals[i];
	}
	free(m->keys);
	free(m->vals);
	m->keys = keys;
	m->vals = vals;
	m->cap = cap;
	return 0;
}

int sp_map_reserve(struct sp_map *m, size_t n)
{
	if (n > SIZE_MAX / 4)
		return -ENOMEM;
	size_t cap = m->cap ? m->cap : MIN_SLOTS;
	while (cap < 2 * n)
		cap *= 2;
	return cap == m->cap ? 0 : rehash(m, cap);
}

int sp_map_put(struct sp_map *m, uint64_t key, uint32_t val)
{
	if (key == 0) {
		m->n += !m->has_zero;
		m->has_zero = true;
		m->zero_val = val;
		return 0;
	}
	uint32_t *v = sp_map_find(m, key);
	if (v) {
		*v = val;
		return 0;
	}
	int rc = sp_map_reserve(m, m->n + 1);
	if (rc < 0)
		return rc;
	size_t mask = m->cap - 1, h = sp_map_hash(key) & mask;
	while (m->keys[h])
		h = (h + 1) & mask;
	m->keys[h] = key;
	m->vals[h] = val;
	m->n++;
	return 0;
}

void sp_map_free(struct sp_map *m)
{
	if (!m)
		return;
	free(m->keys);
	free(m->vals);
	*m = (struct sp_map){ 0 };
}
