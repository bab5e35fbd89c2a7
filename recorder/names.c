/* SPDX-License-Identifier: MIT */
/*
 * A table of unique strings in first-seen order (region names and call-site
 * keys unified over ranks): FNV-1a hash, open addressing, grown by doubling.
 */
#define _GNU_SOURCE
#include "names.h"

#include "sp-format.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static uint64_t hash_name(const char *s)
{
	uint64_t h = 1469598103934665603ull; /* FNV-1a */
	for (const char *p = s; *p; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ull;
	return h;
}

static uint32_t names_add(struct sp_names *t, const char *s)
{
	if (2 * (size_t)(t->n + 1) > t->nslots) {
		size_t ns = t->nslots ? 2 * t->nslots : 1024;
		uint32_t *sl = malloc(ns * sizeof *sl);
		if (!sl)
			return UINT32_MAX;
		memset(sl, 0xff, ns * sizeof *sl);
		free(t->slots);
		t->slots = sl;
		t->nslots = ns;
		for (uint32_t i = 0; i < t->n; i++) {
			size_t k = hash_name(t->v[i]) & (ns - 1);
			while (sl[k] != UINT32_MAX)
				k = (k + 1) & (ns - 1);
			sl[k] = i;
		}
	}
	size_t k = hash_name(s) & (t->nslots - 1);
	while (t->slots[k] != UINT32_MAX) {
		if (strcmp(t->v[t->slots[k]], s) == 0)
			return t->slots[k];
		k = (k + 1) & (t->nslots - 1);
	}
	if (t->n == t->cap) {
		uint32_t cap = t->cap ? 2 * t->cap : 256;
		char **v = realloc(t->v, cap * sizeof *v);
		if (!v)
			return UINT32_MAX;
		t->v = v;
		t->cap = cap;
	}
	if (!(t->v[t->n] = strdup(s)))
		return UINT32_MAX;
	t->slots[k] = t->n;
	return t->n++;
}

void sp_names_free(struct sp_names *t)
{
	for (uint32_t i = 0; i < t->n; i++)
		free(t->v[i]);
	free(t->v);
	free(t->slots);
}

/* Map a rank's names blob; returns 0 or -ENOMEM. */
int sp_names_map(struct sp_names *t, const char *blob, uint32_t n, uint32_t *map)
{
	for (uint32_t i = 0; i < n; i++) {
		map[i] = names_add(t, blob);
		if (map[i] == UINT32_MAX)
			return -ENOMEM;
		blob += strlen(blob) + 1;
	}
	return 0;
}


int sp_names_add(struct sp_names *t, const char *name, uint32_t *ret_id)
{
	uint32_t id = names_add(t, name);
	if (id == UINT32_MAX)
		return -ENOMEM;
	*ret_id = id;
	return 0;
}

int sp_names_kinds(const struct sp_names *t, uint8_t **kinds, uint32_t n_old, const uint32_t *map,
		   const uint8_t *local, uint32_t nlocal)
{
	uint8_t *k = realloc(*kinds, (size_t)t->n + 1);
	if (!k)
		return -ENOMEM;
	*kinds = k;
	if (t->n > n_old)
		memset(k + n_old, SP_KIND_FUNCTION, t->n - n_old);
	for (uint32_t i = 0; local && i < nlocal; i++)
		if (map[i] >= n_old && map[i] < t->n && local[i] < SP_KIND_COUNT)
			k[map[i]] = local[i];
	return 0;
}
