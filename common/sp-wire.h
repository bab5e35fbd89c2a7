/* SPDX-License-Identifier: MIT */
/*
 * Bytes between processes of one job: a growable buffer that values are
 * appended to in host order, and a bounded reader of such bytes that never
 * reads past the end (a short or malformed message sets `bad` and reads as
 * zeros from then on).
 */
#ifndef SP_WIRE_H
#define SP_WIRE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sp-array.h"

struct sp_wire_out {
	char *p;
	size_t len, cap;
	bool oom; /* an append failed: p holds what came before it */
};

static inline void sp_wire_put(struct sp_wire_out *w, const void *v, size_t n)
{
	if (w->oom || SP_ARRAY_RESERVE(w->p, w->cap, w->len + n, 256) < 0) {
		w->oom = true;
		return;
	}
	if (n)
		memcpy(w->p + w->len, v, n);
	w->len += n;
}

static inline void sp_wire_u32(struct sp_wire_out *w, uint32_t v)
{
	sp_wire_put(w, &v, sizeof v);
}

static inline void sp_wire_u64(struct sp_wire_out *w, uint64_t v)
{
	sp_wire_put(w, &v, sizeof v);
}

/* A string as its length and bytes; NULL as length UINT32_MAX. */
static inline void sp_wire_str(struct sp_wire_out *w, const char *s)
{
	size_t n = s ? strlen(s) : 0;
	if (s && n >= UINT32_MAX) {
		w->oom = true;
		return;
	}
	sp_wire_u32(w, s ? (uint32_t)n : UINT32_MAX);
	if (s)
		sp_wire_put(w, s, n);
}

struct sp_wire_in {
	const char *p;
	size_t left;
	bool bad; /* read past the end */
};

static inline bool sp_wire_get(struct sp_wire_in *r, void *v, size_t n)
{
	if (r->bad || n > r->left) {
		r->bad = true;
		memset(v, 0, n);
		return false;
	}
	memcpy(v, r->p, n);
	r->p += n;
	r->left -= n;
	return true;
}

static inline uint32_t sp_wire_get_u32(struct sp_wire_in *r)
{
	uint32_t v;
	sp_wire_get(r, &v, sizeof v);
	return v;
}

static inline uint64_t sp_wire_get_u64(struct sp_wire_in *r)
{
	uint64_t v;
	sp_wire_get(r, &v, sizeof v);
	return v;
}

/* A string written by sp_wire_str(), copied with its terminating NUL into
 * a new allocation (*ret NULL for a NULL string). Returns false when the
 * bytes end early or memory runs out; either sets r->bad (its bytes were
 * not taken, so nothing after it can be read in step). */
static inline bool sp_wire_get_str(struct sp_wire_in *r, char **ret)
{
	*ret = NULL;
	uint32_t n = sp_wire_get_u32(r);
	if (r->bad)
		return false;
	if (n == UINT32_MAX)
		return true;
	if (n > r->left) {
		r->bad = true;
		return false;
	}
	char *s = malloc((size_t)n + 1);
	if (!s) {
		r->bad = true;
		return false;
	}
	memcpy(s, r->p, n);
	s[n] = '\0';
	r->p += n;
	r->left -= n;
	*ret = s;
	return true;
}

#endif /* SP_WIRE_H */
