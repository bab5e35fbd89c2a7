/* SPDX-License-Identifier: MIT */
/*
 * summary's tables (docs/SUMMARY.md): the call-path tree (one row per call
 * path, exclusive time from the reader's "(own)" rows), the flat top 10 by
 * exclusive time and the flat view, drawn with the table module. Times are
 * per-rank means unless --sum; throttled functions show their true count.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "summary-view.h"

static const char *const key_names[SV_NKEYS] = {
	"region", "ranks", "calls", "total", "exclusive", "percent", "avg", "min",
	"max", "first", "last", "std", "p50", "p95", "p99", "imbalance", "slowest",
	"start", "name",
};
const char summary_key_names[] =
	"region, ranks, calls, total, exclusive, percent, avg, min, max, first, last, "
	"std, p50, p95, p99, imbalance, slowest (and start, name for --sort)";

static const char *header(enum sv_key k, bool sum, bool flat)
{
	switch (k) {
	case SV_REGION: return flat ? "region" : "call path";
	case SV_RANKS: return "ranks";
	case SV_CALLS: return "calls";
	case SV_TOTAL: return sum ? "incl (sum)" : "incl";
	case SV_EXCL: return sum ? "excl (sum)" : "excl";
	case SV_PERCENT: return "% run";
	case SV_AVG: return "avg";
	case SV_MIN: return "min";
	case SV_MAX: return "max";
	case SV_FIRST: return "first";
	case SV_LAST: return "last";
	case SV_STD: return "std";
	case SV_P50: return "p50";
	case SV_P95: return "p95";
	case SV_P99: return "p99";
	case SV_IMBALANCE: return "max/mean";
	case SV_SLOWEST: return "slowest";
	default: return "";
	}
}

int summary_key_parse(const char *name, enum sv_key *ret)
{
	static const struct { const char *alias; enum sv_key k; } aliases[] = {
		{ "inclusive", SV_TOTAL }, { "incl", SV_TOTAL }, { "excl", SV_EXCL },
		{ "self", SV_EXCL }, { "n", SV_CALLS },
	};

	for (int k = 0; k < SV_NKEYS; k++)
		if (strcmp(name, key_names[k]) == 0) {
			*ret = (enum sv_key)k;
			return 0;
		}
	for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++)
		if (strcmp(name, aliases[i].alias) == 0) {
			*ret = aliases[i].k;
			return 0;
		}
	return -1;
}

/* One row of a summary table, values already scaled (mean or sum). */
struct srow {
	const char *name;
	uint32_t region;
	int depth;
	size_t order;         /* the reader's order (tree: call order) */
	uint64_t calls;
	double v[SV_NKEYS];   /* by key; NAN undefined */
	long slowest;         /* rank, -1 unknown */
	char mark;            /* '*', '~' or ' ' */
	size_t parent;        /* tree: index of the parent row, SIZE_MAX top */
};

/* Per region: throttled calls over the selected ranks, and its slowest rank. */
struct region_info {
	uint64_t hidden_calls;
	int64_t hidden_ns;
	unsigned paths;
	long slowest;
};

/* ---- per-region facts -------------------------------------------------- */

static struct region_info *region_infos(struct sp_reader *r, const struct sp_selection *sel)
{
	size_t nreg = sp_reader_num_regions(r);
	struct region_info *ri = calloc(nreg ? nreg : 1, sizeof(*ri));
	double *best = calloc(nreg ? nreg : 1, sizeof(*best));

	if (!ri || !best) {
		free(ri);
		free(best);
		return NULL;
	}
	for (size_t i = 0; i < nreg; i++)
		ri[i].slowest = -1;
	for (size_t i = 0; i < sp_reader_num_rows(r); i++) {
		const struct sp_row *row = sp_reader_row(r, i);
		struct sp_stats st;
		double t;

		if (row->region >= nreg || !sp_selection_match_rank(sel, row->rank))
			continue;
		if (row->throttled_count > 0) {
			ri[row->region].hidden_calls += (uint64_t)row->throttled_count;
			ri[row->region].hidden_ns += row->throttled_total_ns > 0 ? row->throttled_total_ns : 0;
		}
		/* Only the total: no spread (a pass over the row's events). */
		if (sp_reader_row_stats_flags(r, i, SP_STATS_NO_SPREAD, &st) < 0)
			continue;
		t = st.total + (row->throttled_total_ns > 0 ? (double)row->throttled_total_ns / 1e9 : 0);
		if (ri[row->region].slowest < 0 || t > best[row->region]) {
			best[row->region] = t;
			ri[row->region].slowest = row->rank;
		}
	}
	free(best);
	return ri;
}

/* '*': calls counted but not all on the timeline, time measured; '~': their
 * time estimated (sampled or count x mean). */
static char mark_of(struct sp_reader *r, const struct region_info *ri)
{
	const struct sp_meta *timing = sp_reader_metadata_find(r, "throttle_timing");

	if (!ri->hidden_calls)
		return ' ';
	if (timing && timing->s && (!strcmp(timing->s, "sampled") || !strcmp(timing->s, "estimate")))
		return '~';
	return '*';
}

/* multi: a marked function is on several call paths, where its rows show
 * only its timeline calls (where the counted ones nested is not stored). */
static void legends(struct tbl *t, struct sp_reader *r, bool multi_paths)
{
	const struct sp_meta *timing = sp_reader_metadata_find(r, "throttle_timing");
	const struct sp_meta *calls = sp_reader_metadata_find(r, "throttle_calls");
	const struct sp_meta *mean = sp_reader_metadata_find(r, "throttle_mean_ns");
	const struct sp_meta *sample = sp_reader_metadata_find(r, "throttle_sample");
	const struct sp_meta *early = sp_reader_metadata_find(r, "throttle_early_calls");
	char why[160], buf[600];
	const char *multi = multi_paths
		? ";\non several call paths: timeline calls only (all: --flat)" : "";

	double early_ns = cli_throttle_early_mean_ns(r);
	if (calls && mean && early && early_ns >= 0)
		snprintf(why, sizeof why, "auto-throttle: %lld calls, own cost < %.3g us,\n"
			 "or %lld calls < %.3g us", (long long)calls->i, (double)mean->i / 1e3,
			 (long long)early->i, early_ns / 1e3);
	else if (calls && mean)
		snprintf(why, sizeof why, "auto-throttle: %lld calls, own cost < %.3g us",
			 (long long)calls->i, (double)mean->i / 1e3);
	else
		snprintf(why, sizeof why, "MIN_DURATION, MAX_DEPTH or auto-throttle");
	snprintf(buf, sizeof buf, "calls counted exactly, not all on the timeline\n(%s);\n"
		 "their time measured exactly%s", why, multi);
	tbl_legend(t, '*', buf);
	if (timing && timing->s && !strcmp(timing->s, "sampled") && sample)
		snprintf(buf, sizeof buf, "calls counted exactly, not all on the timeline\n(%s);\n"
			 "1 in %lld timed at random, total estimated (95 %% interval: inspect)%s",
			 why, (long long)sample->i, multi);
	else
		snprintf(buf, sizeof buf, "calls counted exactly, not all on the timeline\n(%s);\n"
			 "their time estimated as count x the mean before the throttle%s", why, multi);
	tbl_legend(t, '~', buf);
}

/* ---- rows ---------------------------------------------------------------- */

static void fill_common(struct srow *s, double scale, double wall_all)
{
	s->v[SV_PERCENT] = wall_all > 0 && !isnan(s->v[SV_TOTAL])
		? 100.0 * s->v[SV_TOTAL] / wall_all : NAN;
	s->v[SV_TOTAL] *= scale;
	s->v[SV_EXCL] *= scale;
}

/*
 * Tree rows from the reader's summary: "(own)" rows become the exclusive
 * time of their parent (a node without one has no kept children: its
 * exclusive time is its inclusive time). scale: 1/ranks for means.
 */
static struct srow *tree_rows(struct sp_reader *r, const struct sp_summary *s,
			      const struct region_info *ri, double scale, double wall_all,
			      size_t *ret_n)
{
	size_t n = sp_summary_count(s), k = 0, *stack = malloc((n + 1) * sizeof(size_t)), top = 0;
	struct srow *out = calloc(n ? n : 1, sizeof(*out));

	if (!out || !stack) {
		free(out);
		free(stack);
		return NULL;
	}
	for (size_t i = 0; i < n; i++) {
		const struct sp_summary_row *row = sp_summary_get(s, i);
		struct srow *o;

		if (row->own) {
			if (k && out[k - 1].depth == row->depth - 1)
				out[k - 1].v[SV_EXCL] = (double)row->total_ns / 1e9;
			continue;
		}
		o = &out[k];
		o->name = row->name;
		o->region = row->region;
		o->depth = row->depth;
		o->order = k;
		o->calls = row->calls;
		o->slowest = ri ? ri[row->region].slowest : -1;
		o->mark = ' ';
		o->v[SV_RANKS] = row->num_ranks;
		o->v[SV_TOTAL] = (double)row->total_ns / 1e9;
		o->v[SV_EXCL] = o->v[SV_TOTAL];
		/* One call path: the throttled calls belong to it (true count and
		 * total); on several, where they nested is not stored. */
		if (ri && ri[row->region].hidden_calls) {
			o->mark = mark_of(r, &ri[row->region]);
			if (ri[row->region].paths == 1) {
				o->calls += ri[row->region].hidden_calls;
				o->v[SV_TOTAL] += (double)ri[row->region].hidden_ns / 1e9;
			}
		}
		o->v[SV_AVG] = row->avg;
		o->v[SV_MIN] = row->min;
		o->v[SV_MAX] = row->max;
		o->v[SV_FIRST] = row->first;
		o->v[SV_LAST] = row->last;
		o->v[SV_STD] = row->std;
		o->v[SV_P50] = row->p50;
		o->v[SV_P95] = row->p95;
		o->v[SV_P99] = row->p99;
		o->v[SV_IMBALANCE] = isnan(row->imbalance) ? NAN : 1.0 + row->imbalance / 100.0;
		o->v[SV_START] = row->first_start;
		while (top && out[stack[top - 1]].depth >= o->depth)
			top--;
		o->parent = top ? stack[top - 1] : SIZE_MAX;
		stack[top++] = k;
		k++;
	}
	for (size_t i = 0; i < k; i++) {
		out[i].v[SV_CALLS] = (double)out[i].calls;
		fill_common(&out[i], scale, wall_all);
	}
	free(stack);
	*ret_n = k;
	return out;
}

/* Flat rows: one per selected region, pooled over the selected ranks. */
/* stats_flags: SP_STATS_NO_SPREAD when std and percentiles are not shown. */
static struct srow *flat_rows(struct sp_reader *r, const struct sp_selection *sel,
			      const struct region_info *ri, double scale, double wall_all,
			      unsigned stats_flags, size_t *ret_n)
{
	uint32_t *ids = NULL;
	int n = sp_reader_regions(r, sel, &ids);
	struct srow *out;
	size_t k = 0;

	if (n < 0)
		return NULL;
	out = calloc(n ? (size_t)n : 1, sizeof(*out));
	for (int i = 0; out && i < n; i++) {
		struct sp_stats st;
		struct srow *o = &out[k];

		if (sp_reader_region_stats_flags(r, ids[i], sel, stats_flags, &st) < 0 ||
		    st.num_ranks == 0)
			continue;
		o->name = sp_reader_region_name(r, ids[i]);
		o->region = ids[i];
		o->order = k;
		o->parent = SIZE_MAX;
		o->calls = st.num_calls + (ri ? ri[ids[i]].hidden_calls : 0);
		o->slowest = ri ? ri[ids[i]].slowest : -1;
		o->mark = ri ? mark_of(r, &ri[ids[i]]) : ' ';
		o->v[SV_RANKS] = st.num_ranks;
		o->v[SV_CALLS] = (double)o->calls;
		o->v[SV_TOTAL] = st.total + (ri ? (double)ri[ids[i]].hidden_ns / 1e9 : 0);
		o->v[SV_EXCL] = st.has_exclusive ? st.exclusive : NAN;
		o->v[SV_AVG] = st.average;
		o->v[SV_MIN] = st.min;
		o->v[SV_MAX] = st.max;
		o->v[SV_FIRST] = st.first;
		o->v[SV_LAST] = st.last;
		o->v[SV_STD] = st.std;
		o->v[SV_P50] = st.has_percentiles ? st.p50 : NAN;
		o->v[SV_P95] = st.has_percentiles ? st.p95 : NAN;
		o->v[SV_P99] = st.has_percentiles ? st.p99 : NAN;
		o->v[SV_IMBALANCE] = st.rank_imbalance > 0 ? st.rank_imbalance : 1.0;
		o->v[SV_START] = st.first_start;
		fill_common(o, scale, wall_all);
		k++;
	}
	free(ids);
	*ret_n = k;
	return out;
}

/* ---- sorting ----------------------------------------------------------- */

static enum sv_key sort_key;

/* Largest first; names and call order ascending; undefined last; ties in
 * the reader's order. */
static int cmp_rows(const void *pa, const void *pb)
{
	const struct srow *a = *(const struct srow *const *)pa, *b = *(const struct srow *const *)pb;
	int c = 0;

	if (sort_key == SV_NAME || sort_key == SV_REGION) {
		c = strcmp(a->name, b->name);
	} else if (sort_key == SV_SLOWEST) {
		c = (a->slowest > b->slowest) - (a->slowest < b->slowest);
	} else if (sort_key != SV_START) {
		double x = a->v[sort_key], y = b->v[sort_key];

		if (isnan(x) != isnan(y))
			return isnan(x) ? 1 : -1;
		if (!isnan(x))
			c = (x < y) - (x > y);
	}
	return c ? c : (a->order > b->order) - (a->order < b->order);
}

/* The rows in display order: flat, all sorted; tree, siblings sorted, each
 * followed by its subtree (children lists, then an explicit-stack walk). */
static const struct srow **ordered(struct srow *rows, size_t n, bool tree, enum sv_key key)
{
	const struct srow **o = malloc((n ? n : 1) * sizeof(*o));
	size_t *first = NULL, *next = NULL, *stack = NULL, top = 0, k = 0;

	sort_key = key;
	if (!o)
		return NULL;
	for (size_t i = 0; i < n; i++)
		o[i] = &rows[i];
	qsort(o, n, sizeof(*o), cmp_rows);
	if (!tree)
		return o;
	/* Children in sorted order: linked lists built from the end. */
	first = malloc((n + 1) * sizeof(size_t));
	next = malloc((n + 1) * sizeof(size_t));
	stack = malloc((n + 1) * sizeof(size_t));
	if (!first || !next || !stack) {
		free(o);
		o = NULL;
		goto out;
	}
	for (size_t i = 0; i <= n; i++)
		first[i] = SIZE_MAX;
	for (size_t i = n; i-- > 0;) {
		size_t id = (size_t)(o[i] - rows), p = rows[id].parent == SIZE_MAX ? n : rows[id].parent;

		next[id] = first[p];
		first[p] = id;
	}
	if (first[n] != SIZE_MAX)
		stack[top++] = first[n];
	while (top) {
		size_t id = stack[--top];

		o[k++] = &rows[id];
		if (next[id] != SIZE_MAX)
			stack[top++] = next[id];
		if (first[id] != SIZE_MAX)
			stack[top++] = first[id];
	}
out:
	free(first);
	free(next);
	free(stack);
	return o;
}

/* ---- printing ------------------------------------------------------------ */

static int parse_columns(const struct cli_common *c, const char *spec, enum sv_key *cols, int max)
{
	char buf[512], *save = NULL, *tok;
	int n = 0;

	snprintf(buf, sizeof(buf), "%s", spec);
	for (tok = strtok_r(buf, ", ", &save); tok; tok = strtok_r(NULL, ", ", &save)) {
		enum sv_key k;

		if (summary_key_parse(tok, &k) < 0 || k == SV_START || k == SV_NAME) {
			cli_usage_error(c, "unknown column '%s' (choose from %.*s)", tok,
					(int)(strchr(summary_key_names, '(') - summary_key_names - 1),
					summary_key_names);
			return -1;
		}
		if (n < max)
			cols[n++] = k;
	}
	return n;
}

static void value_cell(struct tbl *t, int col, const struct srow *s, enum sv_key k, bool ascii)
{
	char buf[64];

	switch (k) {
	case SV_REGION: tbl_cell(t, col, s->name); return;
	case SV_RANKS: tbl_cellf(t, col, "%.0f", s->v[k]); return;
	case SV_CALLS: tbl_cellf(t, col, "%llu", (unsigned long long)s->calls); return;
	case SV_PERCENT:
		isnan(s->v[k]) ? tbl_cell(t, col, "-") : tbl_cellf(t, col, "%.1f", s->v[k]);
		return;
	case SV_IMBALANCE:
		isnan(s->v[k]) ? tbl_cell(t, col, "-") : tbl_cellf(t, col, "%.2f", s->v[k]);
		return;
	case SV_SLOWEST:
		s->slowest < 0 ? tbl_cell(t, col, "-") : tbl_cellf(t, col, "r%ld", s->slowest);
		return;
	default:
		tbl_duration(buf, sizeof buf, s->v[k], ascii);
		tbl_cell(t, col, buf);
	}
}

/* One table of rows (in display order) with the given columns. */
static void print_rows(FILE *f, struct sp_reader *r, const struct srow *const *rows, size_t n,
		       const enum sv_key *cols, int ncols, const struct summary_opts *o,
		       bool tree, const char *const *headers, bool multi)
{
	struct tbl *t = tbl_create(&o->st);

	if (!t)
		return;
	for (int k = 0; k < ncols; k++)
		tbl_column(t, headers && headers[k] ? headers[k] : header(cols[k], o->sum, !tree),
			   cols[k] == SV_REGION ? TBL_LEFT : TBL_RIGHT, cols[k] == SV_REGION);
	legends(t, r, multi);
	for (size_t i = 0; i < n; i++) {
		if (tbl_row(t, tree ? rows[i]->depth : 0, rows[i]->mark) < 0)
			break;
		for (int k = 0; k < ncols; k++)
			value_cell(t, k, rows[i], cols[k], o->st.ascii);
	}
	tbl_print(t, f);
	tbl_destroy(t);
}

static bool needs_spread(const enum sv_key *cols, int n, enum sv_key sort)
{
	for (int k = 0; k < n; k++)
		if (cols[k] >= SV_STD && cols[k] <= SV_P99)
			return true;
	return sort >= SV_STD && sort <= SV_P99;
}

/* The call-path tree (and, on the default screen, the top 10). */
static int print_tree(const struct cli_common *c, FILE *f, struct sp_reader *r,
		      const struct summary_opts *o, const struct summary_run *run,
		      struct region_info *ri, const enum sv_key *cols, int ncols, bool top10)
{
	struct sp_summary *s;
	struct srow *rows;
	const struct srow **ord;
	double scale = o->sum ? 1.0 : 1.0 / (run->nranks ? run->nranks : 1);
	size_t n = 0;
	int rc = sp_summary_build_flags(r, c->sel, SP_SORT_START,
					needs_spread(cols, ncols, o->sort) ? 0 : SP_SUMMARY_NO_SPREAD, &s);

	if (rc < 0) {
		cli_error(c, "%s: %s", sp_reader_path(r), sp_reader_last_error());
		return EXIT_USAGE;
	}
	if (sp_summary_is_flat(s))
		cli_error(c, "warning: %s; showing one row per region",
			  sp_reader_nesting_problem(r) ? sp_reader_nesting_problem(r) : "no call tree");
	bool multi = false;

	for (size_t i = 0; ri && i < sp_summary_count(s); i++) {
		const struct sp_summary_row *row = sp_summary_get(s, i);

		if (!row->own)
			ri[row->region].paths++;
	}
	for (size_t i = 0; ri && i < sp_reader_num_regions(r); i++)
		multi |= ri[i].hidden_calls && ri[i].paths > 1;
	rows = tree_rows(r, s, ri, scale, run->wall * run->nranks, &n);
	ord = rows ? ordered(rows, n, true, o->sort) : NULL;
	if (ord)
		print_rows(f, r, ord, n, cols, ncols, o, true, NULL, multi);
	free(ord);
	free(rows);
	sp_summary_destroy(s);
	if (!top10)
		return 0;
	/* Top 10 by exclusive time, over all call paths of each region. */
	static const enum sv_key tcols[] = { SV_REGION, SV_CALLS, SV_EXCL, SV_PERCENT, SV_TOTAL };
	const char *th[] = { NULL, NULL, NULL, "% run (excl)", NULL };

	rows = flat_rows(r, c->sel, ri, scale, run->wall * run->nranks, SP_STATS_NO_SPREAD, &n);
	ord = rows ? ordered(rows, n, false, SV_EXCL) : NULL;
	if (ord && n) {
		for (size_t i = 0; i < n; i++) {
			struct srow *w = (struct srow *)ord[i];
			double all = run->wall * run->nranks;

			w->v[SV_PERCENT] = all > 0 && !isnan(w->v[SV_EXCL])
				? 100.0 * w->v[SV_EXCL] / scale / all : NAN;
		}
		fprintf(f, "\ntop %zu by exclusive time\n", n < 10 ? n : 10);
		print_rows(f, r, ord, n < 10 ? n : 10, tcols, 5, o, false, th, false);
	}
	free(ord);
	free(rows);
	return 0;
}

int summary_print(const struct cli_common *c, FILE *f, struct sp_reader *r,
		  const struct summary_opts *o)
{
	static const enum sv_key def_tree[] = { SV_REGION, SV_CALLS, SV_PERCENT, SV_TOTAL,
						SV_EXCL, SV_IMBALANCE, SV_SLOWEST };
	static const enum sv_key def_flat[] = { SV_REGION, SV_CALLS, SV_TOTAL, SV_EXCL,
						SV_PERCENT, SV_IMBALANCE, SV_SLOWEST };
	enum sv_key cols[32];
	int ncols;
	struct summary_run run;
	struct region_info *ri;
	int rc = 0;

	if (o->columns) {
		ncols = parse_columns(c, o->columns, cols, 32);
		if (ncols < 0)
			return EXIT_USAGE;
	} else {
		ncols = 7;
		memcpy(cols, o->flat ? def_flat : def_tree, sizeof def_tree);
	}
	summary_run_info(r, c->sel, &run);
	ri = region_infos(r, c->sel);
	summary_print_header(f, r, c->sel, &run, o->sum);
	if (o->flat) {
		double scale = o->sum ? 1.0 : 1.0 / (run.nranks ? run.nranks : 1);
		size_t n = 0;
		struct srow *rows = flat_rows(r, c->sel, ri, scale, run.wall * run.nranks, 0, &n);
		const struct srow **ord = rows ? ordered(rows, n, false,
							 o->sorted ? o->sort : SV_TOTAL) : NULL;

		if (ord)
			print_rows(f, r, ord, n, cols, ncols, o, false, NULL, false);
		free(ord);
		free(rows);
	} else {
		rc = print_tree(c, f, r, o, &run, ri, cols, ncols, true);
	}
	if (rc == 0 && run.mpi_mean >= 0)
		rc = summary_print_mpi(f, r, c->sel, &run, o);
	free(ri);
	return rc;
}

/* inspect's region table: the tree alone, under a title. */
int cli_print_region_table(const struct cli_common *c, FILE *f, struct sp_reader *r,
			   const char *columns, enum sp_sort_key sort, const char *title)
{
	struct summary_opts o = { .sort = SV_START };
	static const enum sv_key map[] = {
		[SP_SORT_START] = SV_START, [SP_SORT_TOTAL] = SV_TOTAL, [SP_SORT_CALLS] = SV_CALLS,
		[SP_SORT_AVG] = SV_AVG, [SP_SORT_MIN] = SV_MIN, [SP_SORT_MAX] = SV_MAX,
		[SP_SORT_FIRST] = SV_FIRST, [SP_SORT_LAST] = SV_LAST, [SP_SORT_STD] = SV_STD,
		[SP_SORT_P50] = SV_P50, [SP_SORT_P95] = SV_P95, [SP_SORT_P99] = SV_P99,
		[SP_SORT_IMBALANCE] = SV_IMBALANCE, [SP_SORT_NAME] = SV_NAME,
	};
	static const enum sv_key def_tree[] = { SV_REGION, SV_CALLS, SV_PERCENT, SV_TOTAL,
						SV_EXCL, SV_IMBALANCE, SV_SLOWEST };
	enum sv_key cols[32];
	int ncols = 7;
	struct summary_run run;
	struct region_info *ri;
	int rc;

	if ((unsigned)sort < sizeof map / sizeof map[0])
		o.sort = map[sort];
	tbl_style_init(&o.st, false, false);
	memcpy(cols, def_tree, sizeof def_tree);
	if (columns && (ncols = parse_columns(c, columns, cols, 32)) < 0)
		return EXIT_USAGE;
	summary_run_info(r, c->sel, &run);
	ri = region_infos(r, c->sel);
	if (title)
		fprintf(f, "%s\n", title);
	else
		summary_print_header(f, r, c->sel, &run, false);
	rc = print_tree(c, f, r, &o, &run, ri, cols, ncols, false);
	free(ri);
	return rc;
}

int cli_print_summary_table(const struct cli_common *c, FILE *f, struct sp_reader *r,
			    const char *columns, enum sp_sort_key sort)
{
	return cli_print_region_table(c, f, r, columns, sort, NULL);
}
