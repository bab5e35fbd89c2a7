/* SPDX-License-Identifier: MIT */
/*
 * Loader for the JSON profile format v1 (§3.7): metadata, one entry per
 * (region, rank) with integer-nanosecond start/end arrays and optional
 * per-event columns, or an "aggregate" object instead of events.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "json-parse.h"
#include "reader-internal.h"

static const struct {
	enum sp_column col;
	const char *key;
	int64_t missing;
} json_columns[] = {
	{ SP_COL_GPU_DURATIONS, "gpu_durations_ns", -1 },
	{ SP_COL_CALL_IDS, "call_ids", -1 },
	{ SP_COL_PARENT_IDS, "parent_ids", -1 },
	{ SP_COL_THREAD_IDS, "thread_ids", -1 },
	{ SP_COL_TASK_IDS, "task_ids", -1 },
	{ SP_COL_AWAIT_NS, "await_ns", 0 },
};
#define N_JSON_COLUMNS (sizeof(json_columns) / sizeof(json_columns[0]))

static int bad(struct sp_reader *r, const char *what)
{
	return sp_error(SP_E_CORRUPT, "%s: corrupt JSON profile: %s", r->path,
			what);
}

static int load_meta(struct sp_reader *r, const struct json *md)
{
	for (size_t i = 0; md && md->type == JSON_OBJECT && i < md->n; i++) {
		const struct json *v = md->items[i];
		struct sp_meta *m = reader_add_meta(r, md->keys[i]);

		if (!m)
			return -ENOMEM;
		if (v->type == JSON_NUMBER && v->is_int) {
			m->type = SP_META_INT;
			m->i = v->i;
			m->f = (double)v->i;
		} else if (v->type == JSON_NUMBER || v->type == JSON_BOOL) {
			m->type = v->type == JSON_BOOL ? SP_META_INT : SP_META_FLOAT;
			m->f = v->type == JSON_BOOL ? v->b : v->d;
			m->i = v->type == JSON_BOOL ? v->b : v->i; /* range-safe */
		} else if (v->type == JSON_ARRAY) {
			char **strv = pool_add(r, calloc(v->n + 1, sizeof(char *)));

			if (!strv)
				return -ENOMEM;
			for (size_t k = 0; k < v->n; k++)
				strv[k] = pool_strdup(r, v->items[k]->type == JSON_STRING
							 ? v->items[k]->s : "");
			m->type = SP_META_STRINGS;
			m->strv = (const char *const *)strv;
			m->n = v->n;
		} else {
			m->type = SP_META_STRING;
			m->s = pool_strdup(r, v->type == JSON_STRING ? v->s : "");
		}
	}
	return 0;
}

static int ensure_cap(struct sp_reader *r, size_t need, size_t *cap)
{
	size_t nc = *cap ? *cap : 256;

	if (need <= *cap && r->col[0])
		return 0;
	while (nc < need)
		nc *= 2;
	for (int c = 0; c < SP_COL_COUNT; c++) {
		int64_t *p;

		if (!r->col[c] && c > SP_COL_END_TIMES)
			continue;
		p = realloc(r->col[c], nc * sizeof(*p));
		if (!p)
			return -ENOMEM;
		r->col[c] = p;
	}
	*cap = nc;
	return 0;
}

static int fill_column(struct sp_reader *r, enum sp_column col,
		       const struct json *arr, size_t n, int64_t missing,
		       size_t cap)
{
	int64_t *dst;

	if (!arr) {
		if (r->col[col])
			for (size_t k = 0; k < n; k++)
				r->col[col][r->n_events + k] = missing;
		return 0;
	}
	if (arr->type != JSON_ARRAY || arr->n != n)
		return bad(r, "event column length differs from start_times_ns");
	if (!r->col[col]) {
		r->col[col] = malloc(cap * sizeof(int64_t));
		if (!r->col[col])
			return -ENOMEM;
		for (size_t k = 0; k < r->n_events; k++)
			r->col[col][k] = missing;
	}
	dst = r->col[col] + r->n_events;
	for (size_t k = 0; k < n; k++) {
		const struct json *v = arr->items[k];

		/* Timestamps must be integers (ns); other columns are lenient. */
		if (col <= SP_COL_END_TIMES &&
		    (v->type != JSON_NUMBER || !v->is_int))
			return bad(r, col == SP_COL_START_TIMES
				   ? "start_times_ns holds a value that is not an integer"
				   : "end_times_ns holds a value that is not an integer");
		dst[k] = v->type == JSON_NUMBER ? v->i : missing;
	}
	return 0;
}

/* An aggregate value: absent is fine, else a (non-negative) integer. */
static bool agg_int(const struct json *agg, const char *k1, const char *k2,
		    bool nonneg, int64_t *ret)
{
	const struct json *v = json_get(agg, k1);

	if (!v && k2)
		v = json_get(agg, k2);
	if (!v)
		return true;
	if (v->type != JSON_NUMBER || !v->is_int || (nonneg && v->i < 0))
		return false;
	*ret = v->i;
	return true;
}

static int load_aggregate(struct sp_reader *r, struct sp_row *row,
			  const struct json *agg)
{
	int64_t count = 0;

	row->has_aggregate = true;
	row->agg_exclusive_ns = -1;
	if (!agg_int(agg, "count", NULL, true, &count) ||
	    !agg_int(agg, "total", "total_ns", false, &row->agg_total_ns) ||
	    !agg_int(agg, "minimum", "min_ns", false, &row->agg_min_ns) ||
	    !agg_int(agg, "maximum", "max_ns", false, &row->agg_max_ns) ||
	    !agg_int(agg, "exclusive", "exclusive_ns", false,
		     &row->agg_exclusive_ns))
		return bad(r, "\"aggregate\" holds a value that is not an integer (or a negative count)");
	row->agg_count = (uint64_t)count;
	return 0;
}

static int load_row(struct sp_reader *r, const struct json *e, size_t *cap)
{
	const struct json *name = json_get(e, "name"), *rank = json_get(e, "rank");
	const struct json *st = json_get(e, "start_times_ns");
	const struct json *en = json_get(e, "end_times_ns");
	const struct json *v;
	struct sp_row *row;
	size_t n;
	uint32_t id;
	int rc;

	if (!name || name->type != JSON_STRING || !rank ||
	    rank->type != JSON_NUMBER)
		return bad(r, "region entry without name or rank");
	if (!rank->is_int || rank->i < 0 || rank->i > (int64_t)SP_RANK_MAX)
		return bad(r, "region rank is not an integer from 0 to 2^31-1");
	if ((rc = reader_find_or_add_region(r, name->s, &id)) < 0 ||
	    !(row = reader_add_row(r)))
		return rc < 0 ? rc : -ENOMEM;
	row->region = id;
	row->rank = (uint32_t)rank->i;
	row->offset = r->n_events;
	if ((v = json_get(e, "source_file")) && v->type == JSON_STRING)
		row->source_file = pool_strdup(r, v->s);
	if ((v = json_get(e, "source_text")) && v->type == JSON_STRING)
		row->source_text = pool_strdup(r, v->s);
	if ((v = json_get(e, "source_lineno")) && v->type == JSON_NUMBER)
		row->source_lineno = v->i;
	if ((v = json_get(e, "exclusive_total_ns")) && v->type == JSON_NUMBER)
		row->exclusive_total_ns = v->i;
	if ((v = json_get(e, "tags")) && v->type == JSON_ARRAY) {
		char **tags = pool_add(r, calloc(v->n + 1, sizeof(char *)));

		if (!tags)
			return -ENOMEM;
		for (size_t k = 0; k < v->n; k++)
			tags[k] = pool_strdup(r, v->items[k]->type == JSON_STRING
						 ? v->items[k]->s : "");
		row->tags = (const char *const *)tags;
		row->num_tags = v->n;
	}
	if ((v = json_get(e, "aggregate")) && v->type == JSON_OBJECT) {
		return load_aggregate(r, row, v);
	}
	if (!st || !en || st->type != JSON_ARRAY || en->type != JSON_ARRAY)
		return bad(r, "region entry without start_times_ns/end_times_ns");
	n = st->n;
	if ((rc = ensure_cap(r, r->n_events + n, cap)) < 0 ||
	    (rc = fill_column(r, SP_COL_START_TIMES, st, n, 0, *cap)) < 0 ||
	    (rc = fill_column(r, SP_COL_END_TIMES, en, n, 0, *cap)) < 0)
		return rc;
	for (size_t k = 0; k < N_JSON_COLUMNS; k++) {
		rc = fill_column(r, json_columns[k].col,
				 json_get(e, json_columns[k].key), n,
				 json_columns[k].missing, *cap);
		if (rc < 0)
			return rc;
	}
	row->count = n;
	r->n_events += n;
	return 0;
}

static int load_doc(struct sp_reader *r, const struct json *doc)
{
	const struct json *fmt = json_get(doc, "format");
	const struct json *ver = json_get(doc, "format_version");
	const struct json *regions = json_get(doc, "regions");
	const struct json *nr = json_get(doc, "num_ranks");
	size_t cap = 0;
	int rc;

	if (!fmt || fmt->type != JSON_STRING ||
	    strcmp(fmt->s, "scope-profiler-profile") != 0)
		return sp_error(SP_E_NOT_PROFILE,
				"%s: not a scope-profiler file (JSON without \"format\": \"scope-profiler-profile\")",
				r->path);
	if (!ver || ver->type != JSON_NUMBER || !ver->is_int || ver->i != 1)
		return sp_error(SP_E_SCHEMA,
				"%s: unsupported JSON profile format_version (this reader understands 1)",
				r->path);
	r->schema = 1;
	if ((rc = load_meta(r, json_get(doc, "metadata"))) < 0)
		return rc;
	if (!regions || regions->type != JSON_ARRAY)
		return bad(r, "\"regions\" is not a list");
	for (size_t i = 0; i < regions->n; i++)
		if ((rc = load_row(r, regions->items[i], &cap)) < 0)
			return rc;
	for (size_t i = 0; i < r->n_rows; i++)
		if (r->rows[i].has_aggregate)
			r->layout = SP_LAYOUT_AGGREGATE;
	if (nr && nr->type == JSON_NUMBER && nr->i >= 0) {
		r->num_ranks = (unsigned)nr->i;
		r->num_ranks_known = true;
	}
	return 0;
}

int sp_load_json(struct sp_reader *r, const char *text, size_t len)
{
	size_t pos = 0;
	struct json *doc;
	int rc;

	r->input_format = SP_INPUT_JSON;
	doc = json_parse(text, len, &pos);
	if (!doc)
		return sp_error(SP_E_NOT_PROFILE,
				"%s: not a scope-profiler file (invalid JSON at byte %zu)",
				r->path, pos);
	rc = load_doc(r, doc);
	json_free(doc);
	return rc;
}
