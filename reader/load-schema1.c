/* SPDX-License-Identifier: MIT */
/*
 * Loader for schema 1 (per-rank groups /rank<N>/regions/<name>/...): rank
 * groups in numeric order, regions in name order (HDF5 link order), events
 * appended into the same columnar model the other formats use.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hdf5-util.h"
#include "sp-array.h"

struct s1_ctx {
	struct sp_reader *r;
	size_t cap;              /* capacity of the event columns */
	uint32_t *ranks;
	size_t n_ranks, cap_ranks;
	char **names;            /* region group names of one rank */
	size_t n_names, cap_names;
	int rc;
};

static const struct {
	enum sp_column col;
	const char *name;
} s1_optional[] = {
	{ SP_COL_GPU_DURATIONS, "gpu_durations" },
	{ SP_COL_CALL_IDS, "call_ids" },
	{ SP_COL_PARENT_IDS, "parent_ids" },
};

static bool parse_rank_name(const char *name, uint32_t *ret)
{
	unsigned long v = 0;
	const char *p;

	if (strncmp(name, "rank", 4) != 0 || !name[4])
		return false;
	for (p = name + 4; *p; p++) {
		if (*p < '0' || *p > '9' || v > 0xffffffffUL / 10)
			return false;
		v = v * 10 + (unsigned long)(*p - '0');
	}
	if (v > 0xffffffffUL)
		return false;
	*ret = (uint32_t)v;
	return true;
}

static herr_t rank_cb(hid_t g, const char *name, const H5L_info_t *info,
		      void *data)
{
	struct s1_ctx *ctx = data;
	uint32_t rank;

	if (!parse_rank_name(name, &rank))
		return 0;
	if (SP_ARRAY_RESERVE(ctx->ranks, ctx->cap_ranks, ctx->n_ranks + 1, 16) < 0) {
		ctx->rc = -ENOMEM;
		return 1;
	}
	ctx->ranks[ctx->n_ranks++] = rank;
	return 0;
}

static herr_t name_cb(hid_t g, const char *name, const H5L_info_t *info,
		      void *data)
{
	struct s1_ctx *ctx = data;

	if (SP_ARRAY_RESERVE(ctx->names, ctx->cap_names, ctx->n_names + 1, 16) < 0) {
		ctx->rc = -ENOMEM;
		return 1;
	}
	ctx->names[ctx->n_names] = strdup(name);
	if (!ctx->names[ctx->n_names]) {
		ctx->rc = -ENOMEM;
		return 1;
	}
	ctx->n_names++;
	return 0;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

/* Make room for n more events in every present column. */
static int reserve(struct s1_ctx *ctx, size_t n)
{
	struct sp_reader *r = ctx->r;
	size_t cap = ctx->cap ? ctx->cap : 1024;

	if (r->n_events + n <= ctx->cap && r->col[SP_COL_START_TIMES])
		return 0;
	while (cap < r->n_events + n)
		cap *= 2;
	for (int c = 0; c < SP_COL_COUNT; c++) {
		int64_t *p;

		if (!r->col[c] && c > SP_COL_END_TIMES)
			continue;
		p = realloc(r->col[c], cap * sizeof(*p));
		if (!p)
			return -ENOMEM;
		r->col[c] = p;
	}
	ctx->cap = cap;
	return 0;
}

static int append_column(struct s1_ctx *ctx, hid_t g, enum sp_column col,
			 const char *name, size_t n, bool required)
{
	struct sp_reader *r = ctx->r;
	int64_t *buf = NULL;
	long len = h5_read_i64(r, g, name, &buf);

	if (len == -ENOENT && !required) {
		if (r->col[col])
			for (size_t k = 0; k < n; k++)
				r->col[col][r->n_events + k] = -1;
		return 0;
	}
	if (len < 0)
		return (int)len;
	if ((size_t)len != n) {
		free(buf);
		return sp_error(SP_E_CORRUPT,
				"%s: corrupt file: '%s' has %ld values, expected %zu",
				r->path, name, len, n);
	}
	if (!r->col[col]) { /* first region with this column: back-fill -1 */
		r->col[col] = malloc((ctx->cap ? ctx->cap : 1) * sizeof(int64_t));
		if (!r->col[col]) {
			free(buf);
			return -ENOMEM;
		}
		for (size_t k = 0; k < r->n_events; k++)
			r->col[col][k] = -1;
	}
	memcpy(r->col[col] + r->n_events, buf, n * sizeof(*buf));
	free(buf);
	return 0;
}

static int region_attrs(struct sp_reader *r, hid_t g, struct sp_row *row)
{
	struct sp_meta m = { 0 };
	char *s;
	int64_t v;

	if (h5_attr_string(r, g, "source_file", &s) == 0)
		row->source_file = s;
	if (h5_attr_string(r, g, "source_text", &s) == 0)
		row->source_text = s;
	if (h5_attr_int(g, "source_lineno", &v) == 0)
		row->source_lineno = v;
	if (H5Aexists(g, "tags") > 0 &&
	    h5_attr_to_meta(r, g, "tags", &m) == 0) {
		if (m.type == SP_META_STRINGS) {
			row->tags = m.strv;
			row->num_tags = m.n;
		} else if (m.type == SP_META_STRING) {
			return row_set_tags_json(r, row, m.s);
		}
	}
	return 0;
}

static int load_region(struct s1_ctx *ctx, hid_t regions, const char *name,
		       uint32_t rank)
{
	struct sp_reader *r = ctx->r;
	hid_t g = H5Gopen2(regions, name, H5P_DEFAULT);
	int64_t *starts = NULL;
	struct sp_row *row;
	uint32_t id;
	long n;
	int rc;

	if (g < 0)
		return sp_error(SP_E_CORRUPT, "%s: cannot open region '%s' of rank %u",
				r->path, name, rank);
	n = h5_read_i64(r, g, "start_times", &starts);
	free(starts);
	if (n == -ENOENT) {
		H5Gclose(g);
		return sp_error(SP_E_NOT_PROFILE,
				"%s: region '%s' on rank %u has no start_times (count-only files are not supported)",
				r->path, name, rank);
	}
	rc = n < 0 ? (int)n : reserve(ctx, (size_t)n);
	if (rc == 0)
		rc = reader_find_or_add_region(r, name, &id);
	if (rc == 0)
		rc = append_column(ctx, g, SP_COL_START_TIMES, "start_times",
				   (size_t)n, true);
	if (rc == 0)
		rc = append_column(ctx, g, SP_COL_END_TIMES, "end_times",
				   (size_t)n, true);
	for (size_t k = 0; rc == 0 && k < sizeof(s1_optional) /
			 sizeof(s1_optional[0]); k++)
		rc = append_column(ctx, g, s1_optional[k].col,
				   s1_optional[k].name, (size_t)n, false);
	row = rc == 0 ? reader_add_row(r) : NULL;
	if (rc == 0 && !row)
		rc = -ENOMEM;
	if (rc == 0) {
		row->region = id;
		row->rank = rank;
		row->offset = r->n_events;
		row->count = (uint64_t)n;
		r->n_events += (size_t)n;
		rc = region_attrs(r, g, row);
	}
	H5Gclose(g);
	return rc;
}

static int load_rank(struct s1_ctx *ctx, hid_t file, uint32_t rank)
{
	char path[64];
	hsize_t idx = 0;
	hid_t regions, rg;
	int rc = 0;

	/* A rank group without regions (e.g. only likwid data) adds no rows. */
	snprintf(path, sizeof(path), "rank%u", rank);
	rg = H5Gopen2(file, path, H5P_DEFAULT);
	if (rg < 0)
		return 0;
	if (!h5_exists(rg, "regions")) {
		H5Gclose(rg);
		return 0;
	}
	regions = H5Gopen2(rg, "regions", H5P_DEFAULT);
	H5Gclose(rg);
	ctx->n_names = 0;
	H5Literate(regions, H5_INDEX_NAME, H5_ITER_INC, &idx, name_cb, ctx);
	rc = ctx->rc;
	for (size_t i = 0; i < ctx->n_names; i++) {
		if (rc == 0)
			rc = load_region(ctx, regions, ctx->names[i], rank);
		free(ctx->names[i]);
	}
	ctx->n_names = 0;
	H5Gclose(regions);
	return rc;
}

int sp_load_schema1(struct sp_reader *r, hid_t file)
{
	struct s1_ctx ctx = { .r = r };
	hsize_t idx = 0;
	int rc;

	r->layout = SP_LAYOUT_PER_RANK;
	H5Literate(file, H5_INDEX_NAME, H5_ITER_INC, &idx, rank_cb, &ctx);
	rc = ctx.rc;
	if (rc == 0 && ctx.n_ranks == 0 && !h5_exists(file, "metadata") &&
	    H5Aexists(file, "scope_profiler_schema") <= 0)
		rc = sp_error(SP_E_NOT_PROFILE,
			      "%s: not a scope-profiler file: no metadata, rank<N> groups or schema attribute",
			      r->path);
	if (rc == 0)
		qsort(ctx.ranks, ctx.n_ranks, sizeof(*ctx.ranks), cmp_u32);
	for (size_t i = 0; rc == 0 && i < ctx.n_ranks; i++)
		rc = load_rank(&ctx, file, ctx.ranks[i]);
	r->num_ranks = (unsigned)ctx.n_ranks;
	r->num_ranks_known = true;
	free(ctx.ranks);
	free(ctx.names);
	return rc;
}
