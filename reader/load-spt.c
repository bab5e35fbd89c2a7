/* SPDX-License-Identifier: MIT */
/*
 * Loader for native traces (.spt v1/v2, §1.14): "SCOPEPRF", int32 version,
 * int32 rank, int64 region count, then per region the name, [v2: source
 * file and line], int64 call count and the start/end arrays. Either
 * endianness (the version field tells); trailing bytes are an error.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "reader-internal.h"

struct cursor {
	const unsigned char *p;
	size_t left;
	bool swap;
	const char *path;
};

static int truncated(const struct cursor *c)
{
	return sp_error(SP_E_CORRUPT, "%s: truncated .spt trace", c->path);
}

static int get_u32(struct cursor *c, uint32_t *ret)
{
	uint32_t v;

	if (c->left < 4)
		return truncated(c);
	memcpy(&v, c->p, 4);
	c->p += 4;
	c->left -= 4;
	*ret = c->swap ? __builtin_bswap32(v) : v;
	return 0;
}

static int get_i64(struct cursor *c, int64_t *ret)
{
	uint64_t v;

	if (c->left < 8)
		return truncated(c);
	memcpy(&v, c->p, 8);
	c->p += 8;
	c->left -= 8;
	*ret = (int64_t)(c->swap ? __builtin_bswap64(v) : v);
	return 0;
}

static int get_string(struct sp_reader *r, struct cursor *c, char **ret)
{
	uint32_t len = 0;
	char *s;
	int rc = get_u32(c, &len);

	if (rc < 0)
		return rc;
	if ((int32_t)len < 0 || len > c->left)
		return truncated(c);
	s = pool_add(r, malloc((size_t)len + 1));
	if (!s)
		return -ENOMEM;
	memcpy(s, c->p, len);
	s[len] = '\0';
	c->p += len;
	c->left -= len;
	*ret = s;
	return 0;
}

static int read_events(struct sp_reader *r, struct cursor *c, int64_t n,
		       size_t *cap)
{
	size_t need = r->n_events + (size_t)n;

	if (n < 0 || (uint64_t)n > c->left / 16)
		return truncated(c);
	if (need > *cap) {
		size_t nc = *cap ? *cap : 256;

		while (nc < need)
			nc *= 2;
		for (int k = 0; k < 2; k++) {
			int64_t *p = realloc(r->col[k], nc * sizeof(*p));

			if (!p)
				return -ENOMEM;
			r->col[k] = p;
		}
		*cap = nc;
	}
	for (int k = 0; k < 2; k++)
		for (int64_t i = 0; i < n; i++)
			get_i64(c, &r->col[k][r->n_events + (size_t)i]);
	r->n_events = need;
	return 0;
}

static int read_region(struct sp_reader *r, struct cursor *c, uint32_t rank,
		       size_t *cap)
{
	struct sp_row *row;
	char *name, *file;
	uint32_t line = 0;
	int64_t n = 0;
	uint32_t id;
	int rc;

	rc = get_string(r, c, &name);
	if (rc < 0)
		return rc;
	row = reader_add_row(r);
	if (!row)
		return -ENOMEM;
	if (r->schema == 2) {
		if ((rc = get_string(r, c, &file)) < 0 ||
		    (rc = get_u32(c, &line)) < 0)
			return rc;
		row->source_file = file;
		row->source_lineno = (int32_t)line;
	}
	if ((rc = get_i64(c, &n)) < 0)
		return rc;
	rc = reader_find_or_add_region(r, name, &id);
	if (rc < 0)
		return rc;
	row->region = id;
	row->rank = rank;
	row->offset = r->n_events;
	row->count = (uint64_t)n;
	return read_events(r, c, n, cap);
}

int sp_load_spt(struct sp_reader *r, const unsigned char *data, size_t len)
{
	struct cursor c = { data + 8, len - 8, false, r->path };
	uint32_t version = 0, rank = 0;
	int64_t nregions;
	size_t cap = 0;
	struct sp_meta *m;
	int rc;

	r->input_format = SP_INPUT_SPT;
	if ((rc = get_u32(&c, &version)) < 0)
		return rc;
	if (version != 1 && version != 2) {
		c.swap = true;
		version = __builtin_bswap32(version);
	}
	if (version != 1 && version != 2)
		return sp_error(SP_E_SCHEMA,
				"%s: unsupported .spt trace version (expected 1 or 2)",
				r->path);
	r->schema = (int)version;
	if ((rc = get_u32(&c, &rank)) < 0 || (rc = get_i64(&c, &nregions)) < 0)
		return rc;
	if (nregions < 0)
		return truncated(&c);
	for (int64_t i = 0; i < nregions; i++)
		if ((rc = read_region(r, &c, rank, &cap)) < 0)
			return rc;
	if (c.left)
		return sp_error(SP_E_CORRUPT,
				"%s: corrupt .spt trace: %zu trailing bytes",
				r->path, c.left);
	if (!(m = reader_add_meta(r, "source")))
		return -ENOMEM;
	m->type = SP_META_STRING;
	m->s = "native";
	if (!(m = reader_add_meta(r, "trace_format_version")))
		return -ENOMEM;
	m->type = SP_META_INT;
	m->i = version;
	m->f = version;
	if (r->n_events > 0) {
		int64_t first = r->col[0][0];

		for (size_t k = 1; k < r->n_events; k++)
			if (r->col[0][k] < first)
				first = r->col[0][k];
		if (!(m = reader_add_meta(r, "start_time_ns")))
			return -ENOMEM;
		m->type = SP_META_INT;
		m->i = first;
		m->f = (double)first;
	}
	return 0;
}
