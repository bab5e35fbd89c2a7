/* SPDX-License-Identifier: MIT */
/*
 * Rows of the line profile (line-profile.h): events of the MPI-kind regions
 * grouped by (source location of their call site, MPI function), with per-rank totals
 * for the variation across ranks; regions with a source location after
 * them; and a small cache of source files for the source text.
 */
#include "line-profile.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Accumulator of one row: per-rank calls and time, contributing sites. */
struct acc {
	struct lp_row row;
	uint64_t *rank_calls;
	int64_t *rank_ns;
	uint64_t key;
};

struct groups {
	struct acc *v;
	size_t n, cap;
	uint32_t *slots;         /* 1 + index, open addressing */
	size_t nslots;
	unsigned nranks;
};

static uint64_t mix(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdull;
	return k ^ (k >> 33);
}

static int rehash(struct groups *g)
{
	size_t ns = g->nslots ? 2 * g->nslots : 256;
	uint32_t *sl = calloc(ns, sizeof *sl);
	if (!sl)
		return -ENOMEM;
	for (size_t i = 0; i < g->n; i++) {
		size_t k = mix(g->v[i].key) & (ns - 1);
		while (sl[k])
			k = (k + 1) & (ns - 1);
		sl[k] = (uint32_t)i + 1;
	}
	free(g->slots);
	g->slots = sl;
	g->nslots = ns;
	return 0;
}

/* The accumulator of key, created (zeroed) if new; NULL on ENOMEM. */
static struct acc *group(struct groups *g, uint64_t key, bool *created)
{
	if (2 * (g->n + 1) > g->nslots && rehash(g) < 0)
		return NULL;
	size_t k = mix(key) & (g->nslots - 1);
	*created = false;
	for (; g->slots[k]; k = (k + 1) & (g->nslots - 1))
		if (g->v[g->slots[k] - 1].key == key)
			return &g->v[g->slots[k] - 1];
	if (g->n == g->cap) {
		size_t cap = g->cap ? 2 * g->cap : 64;
		struct acc *v = realloc(g->v, cap * sizeof *v);
		if (!v)
			return NULL;
		g->v = v;
		g->cap = cap;
	}
	struct acc *a = &g->v[g->n];
	memset(a, 0, sizeof *a);
	a->key = key;
	a->rank_calls = calloc(g->nranks + 1, sizeof *a->rank_calls);
	a->rank_ns = calloc(g->nranks + 1, sizeof *a->rank_ns);
	if (!a->rank_calls || !a->rank_ns) {
		free(a->rank_calls);
		free(a->rank_ns);
		return NULL;
	}
	g->slots[k] = (uint32_t)++g->n;
	*created = true;
	return a;
}

static int add_path(struct lp_row *row, int64_t site)
{
	for (size_t i = 0; i < row->n_paths; i++) {
		if (row->paths[i].site == site) {
			row->paths[i].calls++;
			return 0;
		}
	}
	struct lp_path *p = realloc(row->paths, (row->n_paths + 1) * sizeof *p);
	if (!p)
		return -ENOMEM;
	row->paths = p;
	row->paths[row->n_paths++] = (struct lp_path){ site, 1 };
	return 0;
}

/* Variation across the ranks that have calls. */
static void finish_ranks(struct acc *a, unsigned nranks)
{
	double sum = 0, sq = 0;
	unsigned n = 0;
	a->row.slowest_total_ns = -1;
	for (unsigned k = 0; k < nranks; k++) {
		if (!a->rank_calls[k])
			continue;
		n++;
		sum += (double)a->rank_ns[k];
		if (a->rank_ns[k] > a->row.slowest_total_ns) {
			a->row.slowest_total_ns = a->rank_ns[k];
			a->row.slowest_rank = k;
		}
	}
	double mean = n ? sum / n : 0;
	for (unsigned k = 0; k < nranks; k++)
		if (a->rank_calls[k])
			sq += ((double)a->rank_ns[k] - mean) * ((double)a->rank_ns[k] - mean);
	a->row.num_ranks = n;
	a->row.cov = n && mean > 0 ? sqrt(sq / n) / mean : 0;
}

static int cmp_path(const void *x, const void *y)
{
	const struct lp_path *a = x, *b = y;
	if (a->calls != b->calls)
		return a->calls > b->calls ? -1 : 1;
	return a->site < b->site ? -1 : a->site > b->site;
}

static int cmp_row(const void *x, const void *y)
{
	const struct lp_row *a = x, *b = y;
	if (a->total_ns != b->total_ns)
		return a->total_ns > b->total_ns ? -1 : 1;
	int c = strcmp(a->file, b->file);
	if (c)
		return c;
	if (a->line != b->line)
		return a->line < b->line ? -1 : 1;
	return strcmp(a->region, b->region);
}

static bool is_mpi(const struct sp_reader *r, uint32_t region)
{
	return sp_region_kind_is_mpi(sp_reader_region_kind(r, region));
}

/* Location id of every call site: sites with the same innermost frame
 * (function, file, line) share one. */
static int64_t *site_locations(const struct sp_callsites *cs)
{
	size_t n = sp_callsites_count(cs);
	int64_t *loc = malloc((n + 1) * sizeof *loc);
	for (size_t i = 0; loc && i < n; i++) {
		const struct sp_callsite *s = sp_callsites_get(cs, (int64_t)i);
		loc[i] = (int64_t)i;
		for (size_t j = 0; j < i; j++) {
			const struct sp_callsite *o = sp_callsites_get(cs, (int64_t)j);
			if (o->line == s->line && strcmp(o->file, s->file) == 0 &&
			    strcmp(o->function, s->function) == 0) {
				loc[i] = loc[j];
				break;
			}
		}
	}
	return loc;
}

/* One MPI event at a known call site. */
static int add_mpi_event(struct groups *g, const struct lp_result *res, const int64_t *loc,
			 const struct sp_row *row, const char *name, int64_t site, int64_t dur,
			 int64_t bytes, const struct lp_filter *f)
{
	const struct sp_callsite *cs = sp_callsites_get(res->sites, site);
	if (!cs || !sp_selection_match_name(f->functions, cs->function))
		return 0;
	bool created;
	struct acc *a = group(g, ((uint64_t)loc[site] << 32) | row->region, &created);
	if (!a)
		return -ENOMEM;
	if (created)
		a->row = (struct lp_row){ .mpi = true, .file = cs->file, .line = cs->line,
			.function = cs->function, .region = name, .region_id = row->region };
	a->row.calls++;
	a->row.total_ns += dur;
	a->row.max_s = fmax(a->row.max_s, (double)dur / 1e9);
	if (bytes >= 0) {
		a->row.has_bytes = true;
		a->row.bytes += bytes;
	}
	a->rank_calls[row->rank]++;
	a->rank_ns[row->rank] += dur;
	return add_path(&a->row, site);
}

static int collect_mpi(struct sp_reader *r, const struct lp_filter *f, struct lp_result *res,
		       struct groups *g)
{
	const int64_t *st = sp_reader_column(r, SP_COL_START_TIMES);
	const int64_t *en = sp_reader_column(r, SP_COL_END_TIMES);
	int64_t *loc = res->sites ? site_locations(res->sites) : NULL;
	int rc = res->sites && !loc ? -ENOMEM : 0;
	for (size_t i = 0; !rc && st && en && i < sp_reader_num_rows(r); i++) {
		const struct sp_row *row = sp_reader_row(r, i);
		const char *name = sp_reader_region_name(r, row->region);
		if (!is_mpi(r, row->region) || !sp_selection_match_rank(f->ranks, row->rank) ||
		    row->rank >= g->nranks)
			continue;
		/* The row's values only (no full-length column is built). */
		const int64_t *site = sp_reader_row_column(r, i, SP_COL_CALLSITE_IDS);
		const int64_t *bytes = sp_reader_row_column(r, i, SP_COL_MPI_BYTES);
		bool want = loc && site && sp_selection_match_name(f->regions, name) &&
			    sp_selection_match_name(f->ranks, name);
		for (uint64_t k = 0; !rc && k < row->count; k++) {
			uint64_t e = row->offset + k;
			res->mpi_total_ns += en[e] - st[e];
			if (want && site[k] >= 0)
				rc = add_mpi_event(g, res, loc, row, name, site[k], en[e] - st[e],
						   bytes ? bytes[k] : -1, f);
		}
	}
	free(loc);
	return rc;
}

/* Regions (not MPI) whose rows carry a source file and line. */
static int collect_regions(struct sp_reader *r, const struct lp_filter *f, struct groups *g)
{
	for (size_t i = 0; i < sp_reader_num_rows(r); i++) {
		const struct sp_row *row = sp_reader_row(r, i);
		const char *name = sp_reader_region_name(r, row->region);
		struct sp_stats st;
		if (is_mpi(r, row->region) || !row->source_file[0] || row->source_lineno < 0 ||
		    !sp_selection_match_rank(f->ranks, row->rank) || row->rank >= g->nranks ||
		    !sp_selection_match_name(f->regions, name) ||
		    !sp_selection_match_name(f->ranks, name) ||
		    !sp_selection_match_name(f->functions, name))
			continue;
		int rc = sp_reader_row_stats(r, i, &st);
		if (rc < 0)
			return rc;
		if (!st.num_calls)
			continue;
		bool created;
		struct acc *a = group(g, row->region, &created);
		if (!a)
			return -ENOMEM;
		if (created)
			a->row = (struct lp_row){ .file = row->source_file, .line = row->source_lineno,
				.function = name, .region = name, .region_id = row->region,
				.percent_mpi = NAN };
		a->row.calls += st.num_calls;
		a->row.total_ns += st.total_ns;
		a->row.max_s = fmax(a->row.max_s, st.max);
		a->rank_calls[row->rank] += st.num_calls;
		a->rank_ns[row->rank] += st.total_ns;
	}
	return 0;
}

/* Move the groups' rows into res (sorted, cut to top), freeing g. */
static int take_rows(struct groups *g, struct lp_result *res, const struct lp_filter *f,
		     bool mpi)
{
	size_t keep = f->top && f->top < g->n ? f->top : g->n;
	for (size_t i = 0; i < g->n; i++) {
		finish_ranks(&g->v[i], g->nranks);
		if (mpi)
			g->v[i].row.percent_mpi = res->mpi_total_ns > 0
				? 100.0 * (double)g->v[i].row.total_ns / (double)res->mpi_total_ns : 0;
		if (g->v[i].row.n_paths > 1)
			qsort(g->v[i].row.paths, g->v[i].row.n_paths, sizeof *g->v[i].row.paths,
			      cmp_path);
		free(g->v[i].rank_calls);
		free(g->v[i].rank_ns);
	}
	struct lp_row *rows = malloc((g->n + 1) * sizeof *rows);
	for (size_t i = 0; rows && i < g->n; i++)
		rows[i] = g->v[i].row;
	size_t base = res->n_mpi + res->n_regions;
	struct lp_row *all = rows ? realloc(res->rows, (base + keep + 1) * sizeof *all) : NULL;
	if (all) {
		res->rows = all;
		qsort(rows, g->n, sizeof *rows, cmp_row);
		memcpy(all + base, rows, keep * sizeof *rows);
		*(mpi ? &res->n_mpi : &res->n_regions) = keep;
	}
	for (size_t i = all ? keep : 0; i < g->n; i++)
		free(rows ? rows[i].paths : g->v[i].row.paths);
	free(rows);
	free(g->v);
	free(g->slots);
	memset(g, 0, sizeof *g);
	return all ? 0 : -ENOMEM;
}

int lp_collect(struct sp_reader *r, const struct lp_filter *f, struct lp_result *res)
{
	memset(res, 0, sizeof *res);
	res->has_site_column = sp_reader_has_column(r, SP_COL_CALLSITE_IDS);
	int rc = sp_callsites_load(r, &res->sites);
	if (rc == -ENOENT)
		rc = 0;
	struct groups g = { .nranks = sp_reader_num_ranks(r) };
	if (!rc)
		rc = collect_mpi(r, f, res, &g);
	int trc = take_rows(&g, res, f, true);
	rc = rc ? rc : trc;
	g.nranks = sp_reader_num_ranks(r);
	if (!rc)
		rc = collect_regions(r, f, &g);
	trc = take_rows(&g, res, f, false);
	rc = rc ? rc : trc;
	if (rc < 0)
		lp_free(res);
	return rc;
}

void lp_free(struct lp_result *res)
{
	for (size_t i = 0; res->rows && i < res->n_mpi + res->n_regions; i++)
		free(res->rows[i].paths);
	free(res->rows);
	sp_callsites_destroy(res->sites);
	memset(res, 0, sizeof *res);
}

int lp_add_search(struct sp_selection *sel, const char *pattern)
{
	/* The pattern alone first: its errors name it, and a pattern that is
	 * only valid once wrapped ("a)|(b") is refused as Python would. */
	struct sp_selection *raw = NULL;
	int rc = sp_selection_create(&raw);
	if (rc == 0)
		rc = sp_selection_add_include(raw, pattern);
	sp_selection_destroy(raw);
	size_t n = strlen(pattern) + 16;
	char *re = rc == 0 ? malloc(n) : NULL;
	if (rc == 0 && !re)
		rc = -ENOMEM;
	if (rc == 0) {
		snprintf(re, n, ".*?(?:%s)", pattern);
		rc = sp_selection_add_include(sel, re);
	}
	free(re);
	return rc;
}

/* ---- source lines ------------------------------------------------------ */

struct lp_file {
	char *path;
	char *text;      /* NULL: unreadable */
	char **lines;
	size_t nlines;
};

struct lp_sources {
	struct lp_file *v;
	size_t n;
};

struct lp_sources *lp_sources_new(void)
{
	return calloc(1, sizeof(struct lp_sources));
}

void lp_sources_free(struct lp_sources *s)
{
	for (size_t i = 0; s && i < s->n; i++) {
		free(s->v[i].path);
		free(s->v[i].text);
		free(s->v[i].lines);
	}
	if (s)
		free(s->v);
	free(s);
}

/* Read a file and split it into lines (in place). */
static void load_file(struct lp_file *lf)
{
	FILE *fp = fopen(lf->path, "r");
	size_t cap = 0, len = 0, nl = 0;
	char buf[65536];
	for (size_t got; fp && (got = fread(buf, 1, sizeof buf, fp)) > 0;) {
		if (len + got + 1 > cap) {
			cap = 2 * (len + got + 1);
			char *t = realloc(lf->text, cap);
			if (!t)
				break;
			lf->text = t;
		}
		memcpy(lf->text + len, buf, got);
		len += got;
	}
	if (fp)
		fclose(fp);
	if (!lf->text)
		return;
	lf->text[len] = '\0';
	for (size_t i = 0; i < len; i++)
		nl += lf->text[i] == '\n';
	lf->lines = calloc(nl + 2, sizeof *lf->lines);
	for (char *p = lf->text; lf->lines && p && *p;) {
		lf->lines[lf->nlines++] = p;
		p = strchr(p, '\n');
		if (p)
			*p++ = '\0';
	}
}

const char *lp_source_line(struct lp_sources *s, const char *file, int64_t line)
{
	if (!s || !file || !file[0] || line < 1)
		return NULL;
	struct lp_file *lf = NULL;
	for (size_t i = 0; i < s->n && !lf; i++)
		if (strcmp(s->v[i].path, file) == 0)
			lf = &s->v[i];
	if (!lf) {
		struct lp_file *v = realloc(s->v, (s->n + 1) * sizeof *v);
		if (!v)
			return NULL;
		s->v = v;
		lf = &s->v[s->n];
		memset(lf, 0, sizeof *lf);
		if (!(lf->path = strdup(file)))
			return NULL;
		s->n++;
		load_file(lf);
	}
	if (!lf->lines || (uint64_t)line > lf->nlines)
		return NULL;
	char *t = lf->lines[line - 1];
	while (*t == ' ' || *t == '\t')
		t++;
	for (size_t n = strlen(t); n && (t[n - 1] == ' ' || t[n - 1] == '\t' || t[n - 1] == '\r');)
		t[--n] = '\0';
	return t;
}
