/* SPDX-License-Identifier: MIT */
/*
 * A table of unique strings, ids in first-seen order: the file's region
 * names and call-site keys, unified over the ranks that are written, and
 * the local -> global map of each rank's.
 */
#ifndef SP_NAMES_H
#define SP_NAMES_H

#include <stddef.h>
#include <stdint.h>

#include "compiler.h"

struct sp_names {
	char **v;          /* global names, id order */
	uint32_t n, cap;
	uint32_t *slots;   /* open addressing over v */
	size_t nslots;
};

/* Map n NUL-separated names of blob to global ids (added as needed).
 * Returns 0 or -ENOMEM. */
SP_HIDDEN int sp_names_map(struct sp_names *t,
			   const char *blob, uint32_t n,
			   uint32_t *map);
/* Add one name (or find it). Returns 0 or -ENOMEM. */
SP_HIDDEN int sp_names_add(struct sp_names *t, const char *name,
			   uint32_t *ret_id);
/*
 * The kinds (SP_KIND_*) of the unified names, grown to t->n: the names a
 * rank added since n_old (ids n_old..t->n-1) take that rank's kind through
 * its map (the first rank with a name decides); a name without a valid
 * kind is a function. Returns 0 or -ENOMEM.
 */
SP_HIDDEN int sp_names_kinds(const struct sp_names *t,
			     uint8_t **kinds, uint32_t n_old,
			     const uint32_t *map,
			     const uint8_t *local, uint32_t nlocal);
SP_HIDDEN void sp_names_free(struct sp_names *t);

#endif
