/* SPDX-License-Identifier: MIT */
/*
 * The timeline model behind the Gantt and flame charts: per rank the calls
 * of the reconstructed call stack, one lane per thread, one row per call
 * depth. Up to max_bars calls are drawn one bar each; beyond that each lane
 * row is aggregated per pixel (the region covering most of the pixel wins,
 * neighbouring pixels of the same region merge into one bar), so a
 * million-event file stays drawable.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "charts.h"
#include "sp-array.h"
#include "svg.h"

struct tl_call {
	int64_t thread;
	int32_t depth;
	uint32_t region;
	int64_t s, e;
};

static int cmp_call(const void *pa, const void *pb)
{
	const struct tl_call *a = pa, *b = pb;

	if (a->thread != b->thread)
		return a->thread < b->thread ? -1 : 1;
	if (a->depth != b->depth)
		return a->depth < b->depth ? -1 : 1;
	if (a->s != b->s)
		return a->s < b->s ? -1 : 1;
	if (a->e != b->e)
		return a->e > b->e ? -1 : 1;
	return 0;
}

/* Calls of one rank from the reconstructed call stack. */
static int calls_from_stack(const struct sp_reader *r, uint32_t rank,
			    const struct sp_selection *sel, struct tl_call **ret,
			    size_t *ret_n)
{
	struct sp_call_stack *st;
	struct tl_call *calls;
	size_t n;
	int rc = sp_call_stack_build(r, rank, INT64_MIN, sel, &st);

	if (rc < 0)
		return rc;
	n = sp_call_stack_count(st);
	calls = malloc((n + 1) * sizeof(*calls));
	if (!calls) {
		sp_call_stack_destroy(st);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		struct sp_call c;

		sp_call_stack_get(st, i, &c);
		calls[i] = (struct tl_call){ c.lane, c.depth, c.region, c.start_ns, c.end_ns };
	}
	sp_call_stack_destroy(st);
	*ret = calls;
	*ret_n = n;
	return 0;
}

/* Fallback when the calls of a rank do not nest: one row per region. */
static int calls_from_rows(const struct sp_reader *r, uint32_t rank,
			   const struct sp_selection *sel, struct tl_call **ret,
			   size_t *ret_n)
{
	const int64_t *s = sp_reader_column(r, SP_COL_START_TIMES);
	const int64_t *e = sp_reader_column(r, SP_COL_END_TIMES);
	const int64_t *t = sp_reader_column(r, SP_COL_THREAD_IDS);
	size_t total = 0, n = 0, nrows = sp_reader_num_rows(r);
	struct tl_call *calls;
	int32_t depth = 0;

	for (size_t i = 0; i < nrows; i++) {
		const struct sp_row *row = sp_reader_row(r, i);

		if (row->rank == rank &&
		    sp_selection_match_name(sel, sp_reader_region_name(r, row->region)))
			total += row->count;
	}
	calls = malloc((total + 1) * sizeof(*calls));
	if (!calls)
		return -ENOMEM;
	for (size_t i = 0; i < nrows; i++) {
		const struct sp_row *row = sp_reader_row(r, i);

		if (row->rank != rank || !row->count ||
		    !sp_selection_match_name(sel, sp_reader_region_name(r, row->region)))
			continue;
		for (uint64_t k = row->offset; k < row->offset + row->count; k++)
			calls[n++] = (struct tl_call){ t ? t[k] : -1, depth, row->region,
						       s[k], e[k] };
		depth++;
	}
	*ret = calls;
	*ret_n = n;
	return 0;
}

static int push_bar(struct timeline *t, size_t *cap, struct tl_bar b)
{
	if (SP_ARRAY_RESERVE(t->bars, *cap, t->n_bars + 1, 1024) < 0)
		return -ENOMEM;
	t->bars[t->n_bars++] = b;
	return 0;
}

/* Per-pixel aggregation state of one lane row. */
struct bin {
	uint32_t best, cur;
	double best_cov, cur_cov;
	uint64_t calls;
};

#define NONE UINT32_MAX

static void bin_add(struct bin *b, uint32_t region, double cov, bool first)
{
	if (first)
		b->calls++;
	if (b->cur == region) {
		b->cur_cov += cov;
	} else {
		b->cur = region;
		b->cur_cov = cov;
	}
	if (b->best == NONE || b->cur_cov > b->best_cov) {
		b->best = b->cur;
		b->best_cov = b->cur_cov;
	}
}

/* Merge runs of pixels won by the same region into bars. */
static int emit_bins(struct timeline *t, size_t *cap, const struct bin *bins,
		     size_t w, int32_t depth, double bin_ns)
{
	for (size_t b = 0; b < w; b++) {
		size_t end = b;
		uint64_t calls;
		int rc;

		if (bins[b].best == NONE)
			continue;
		calls = bins[b].calls;
		while (end + 1 < w && bins[end + 1].best == bins[b].best)
			calls += bins[++end].calls;
		rc = push_bar(t, cap, (struct tl_bar){
			.region = bins[b].best, .depth = depth,
			.start_ns = t->t0_ns + (int64_t)llround((double)b * bin_ns),
			.end_ns = t->t0_ns + (int64_t)llround((double)(end + 1) * bin_ns),
			.calls = calls });
		if (rc < 0)
			return rc;
		b = end;
	}
	return 0;
}

/*
 * Aggregate the calls (sorted by depth, start) of one lane per pixel. The
 * bins of all lanes together stay below AGG_CELLS (wider bins for many
 * deep lanes), which bounds the size of the drawing.
 */
#define AGG_CELLS 100000

/* The per-pixel bins of one lane, every depth row at once. */
struct agg {
	size_t w;
	double bin_ns, inv_bin;     /* inv_bin = 1 / bin_ns, for bin_index */
	struct bin *bins;   /* rows x w */
};

/* Most bins of one lane (rows x pixels) aggregated in one go; beyond it
 * (a hostile depth), calls are sorted by depth and binned row by row. */
#define AGG_LANE_BINS ((size_t)1 << 22)

static int agg_init(struct timeline *t, struct agg *a, int32_t rows,
		    size_t n_rows_at_once, double width)
{
	size_t w = width >= 1 ? (size_t)width : 1;
	size_t per_lane = AGG_CELLS / (t->ranks_drawn ? t->ranks_drawn : 1) / (size_t)rows;

	if (per_lane < w)
		w = per_lane > 50 ? per_lane : 50;
	a->w = w;
	a->bin_ns = (double)(t->t1_ns - t->t0_ns) / (double)w;
	a->bins = malloc(w * n_rows_at_once * sizeof(*a->bins));
	if (!a->bins)
		return -ENOMEM;
	if (!(a->bin_ns > 0))
		a->bin_ns = 1;
	a->inv_bin = 1 / a->bin_ns;
	if (a->bin_ns / 1e9 > t->bin_seconds)
		t->bin_seconds = a->bin_ns / 1e9;
	for (size_t b = 0; b < w * n_rows_at_once; b++)
		a->bins[b] = (struct bin){ NONE, NONE, 0, 0, 0 };
	return 0;
}

/*
 * (size_t)(x / a->bin_ns) for x > 0 by a multiplication with inv_bin when
 * the quotient is not within 1e-6 of an integer, else by the division:
 * the same value either way (below 2^32 the product differs from the
 * rounded quotient by less than 1e-9), and the two divisions per call
 * were a third of the binning.
 */
static inline size_t bin_index(const struct agg *a, double x)
{
	double q = x * a->inv_bin, f;
	size_t k;

	if (q < 4294967296.0) {
		k = (size_t)q;
		f = q - (double)k;
		if (f > 1e-6 && f < 1 - 1e-6)
			return k;
	}
	return (size_t)(x / a->bin_ns);
}

/* Add one call to the bins of its row (row: index of the row's bins). */
static void agg_call(const struct timeline *t, struct agg *a, size_t row,
		     uint32_t region, int64_t cs, int64_t ce)
{
	struct bin *bins = a->bins + row * a->w;
	double s = (double)(cs - t->t0_ns), e = (double)(ce - t->t0_ns);
	size_t b0 = s <= 0 ? 0 : bin_index(a, s);
	size_t b1 = e <= 0 ? 0 : bin_index(a, e);

	b0 = b0 < a->w ? b0 : a->w - 1;
	b1 = b1 < a->w ? b1 : a->w - 1;
	/* Comparisons, not fmax/fmin (calls into libm, a tenth of the
	 * binning): the same values, as no operand is NaN or -0. */
	for (size_t b = b0; b <= b1; b++) {
		double bs = (double)b * a->bin_ns, be = (double)(b + 1) * a->bin_ns;
		double lo = s > bs ? s : bs;
		double hi = e < be ? e : be;

		bin_add(&bins[b], region, hi > lo ? hi - lo : 0, b == b0);
	}
}

static int aggregate_lane(struct timeline *t, size_t *cap,
			  const struct tl_call *c, size_t n, int32_t rows,
			  double width)
{
	struct agg a;
	size_t i = 0;
	int rc = agg_init(t, &a, rows, 1, width);

	for (int32_t d = 0; d < rows && rc == 0; d++) {
		for (size_t b = 0; b < a.w; b++)
			a.bins[b] = (struct bin){ NONE, NONE, 0, 0, 0 };
		for (; i < n && c[i].depth == d; i++)
			agg_call(t, &a, 0, c[i].region, c[i].s, c[i].e);
		rc = emit_bins(t, cap, a.bins, a.w, d, a.bin_ns);
	}
	free(a.bins);
	return rc;
}

/* A lane as the first walk finds it. */
struct lane_scan {
	int64_t lane;
	int32_t max;          /* deepest call */
	uint64_t calls;
};

struct scan {
	struct lane_scan *v;
	size_t n, cap;
};

/* The stack's calls are not in the shape add_rank_walk needs. */
#define NOT_IN_ORDER (-ERANGE)

static int scan_call(void *data, const struct sp_call *c)
{
	struct scan *sc = data;

	if (c->depth < 0)
		return NOT_IN_ORDER;
	if (sc->n == 0 || sc->v[sc->n - 1].lane != c->lane) {
		if (sc->n && c->lane < sc->v[sc->n - 1].lane)
			return NOT_IN_ORDER; /* lanes not ascending */
		if (SP_ARRAY_RESERVE(sc->v, sc->cap, sc->n + 1, 8) < 0)
			return -ENOMEM;
		sc->v[sc->n++] = (struct lane_scan){ c->lane, 0, 0 };
	}
	if (c->depth > sc->v[sc->n - 1].max)
		sc->v[sc->n - 1].max = c->depth;
	sc->v[sc->n - 1].calls++;
	return 0;
}

/* The second walk: each lane's calls into bins of every depth row. */
struct binner {
	struct timeline *t;
	size_t *cap;
	uint32_t rank;
	double width;
	const struct scan *sc;
	size_t li;            /* lane being binned, +1 (0: none yet) */
	struct agg a;
	int64_t *last;        /* start of the last call per depth row */
	int32_t guess_seen;   /* try_guess: deepest call so far */
};

static int lane_end(struct binner *b)
{
	struct timeline *t = b->t;
	int32_t rows = b->sc->v[b->li - 1].max + 1;
	int rc = 0;

	for (int32_t d = 0; rc == 0 && d < rows; d++)
		rc = emit_bins(t, b->cap, b->a.bins + (size_t)d * b->a.w, b->a.w, d,
			       b->a.bin_ns);
	if (rc == 0)
		t->lanes[t->n_lanes - 1].n_bars = t->n_bars - t->lanes[t->n_lanes - 1].first_bar;
	free(b->a.bins);
	free(b->last);
	b->a.bins = NULL;
	b->last = NULL;
	return rc;
}

static int lane_begin(struct binner *b)
{
	struct timeline *t = b->t;
	const struct lane_scan *ls = &b->sc->v[b->li++];
	struct tl_lane *lanes = realloc(t->lanes, (t->n_lanes + 1) * sizeof(*lanes));
	int rc;

	if (!lanes)
		return -ENOMEM;
	t->lanes = lanes;
	t->lanes[t->n_lanes++] = (struct tl_lane){ .rank = b->rank, .thread = ls->lane,
		.rows = ls->max + 1, .calls = ls->calls, .first_bar = t->n_bars };
	rc = agg_init(t, &b->a, ls->max + 1, (size_t)ls->max + 1, b->width);
	if (rc == 0 && !(b->last = malloc(((size_t)ls->max + 1) * sizeof(*b->last))))
		rc = -ENOMEM;
	for (int32_t d = 0; rc == 0 && d <= ls->max; d++)
		b->last[d] = INT64_MIN;
	return rc;
}

static int bin_call(void *data, const struct sp_call *c)
{
	struct binner *b = data;
	int rc = 0;

	if (b->li == 0 || c->lane != b->sc->v[b->li - 1].lane) {
		if (b->li > 0)
			rc = lane_end(b);
		if (rc == 0 && b->li == b->sc->n)
			rc = NOT_IN_ORDER; /* more lanes than the first walk saw */
		if (rc == 0)
			rc = lane_begin(b);
		if (rc < 0)
			return rc;
	}
	if (c->depth > b->sc->v[b->li - 1].max || c->start_ns < b->last[c->depth])
		return NOT_IN_ORDER;
	b->last[c->depth] = c->start_ns;
	agg_call(b->t, &b->a, (size_t)c->depth, c->region, c->start_ns, c->end_ns);
	return 0;
}

/*
 * The previous rank's lane when it was its only one: ranks of one run nest
 * alike, so the next rank is binned in one walk with that depth taken on
 * trust (try_guess), and the first walk is needed only when it was wrong.
 */
struct lane_guess {
	bool valid;
	int32_t max;
};

/* bin_call for a walk on a guessed depth: one lane of exactly that depth,
 * whose id and calls are taken as they come (else NOT_IN_ORDER). */
static int guess_call(void *data, const struct sp_call *c)
{
	struct binner *b = data;
	struct lane_scan *ls = (struct lane_scan *)&b->sc->v[0];

	if (b->li == 0)
		ls->lane = c->lane;
	else if (c->lane != ls->lane)
		return NOT_IN_ORDER;
	if (c->depth < 0 || c->depth > ls->max)
		return NOT_IN_ORDER;
	if (c->depth > b->guess_seen)
		b->guess_seen = c->depth;
	ls->calls++;
	return bin_call(data, c);
}

/*
 * One walk binning the rank as one lane of depth g->max. Right when the
 * rank has one lane and its deepest call is that deep: the first walk of
 * add_rank_walk would have found exactly that lane, so the bins are the
 * same. 0 when it was right, else nothing is added (1).
 */
static int try_guess(struct timeline *t, size_t *cap, const struct sp_reader *r,
		     uint32_t rank, const struct sp_selection *sel, double width,
		     const struct lane_guess *g)
{
	size_t lanes0 = t->n_lanes, bars0 = t->n_bars;
	double bin_seconds = t->bin_seconds;
	struct lane_scan ls = { 0, g->max, 0 };
	struct scan sc = { &ls, 1, 1 };
	struct binner b = { t, cap, rank, width, &sc, 0, { 0 }, NULL, -1 };
	int rc = sp_call_stack_walk(r, rank, INT64_MIN, sel, guess_call, &b);

	if (rc == 0 && (b.li != 1 || b.guess_seen != g->max))
		rc = 1;
	if (rc == 0) {
		t->lanes[lanes0].calls = ls.calls;
		rc = lane_end(&b);
		if (rc == 0)
			t->n_calls += ls.calls;
		return rc;
	}
	free(b.a.bins);
	free(b.last);
	t->n_lanes = lanes0;
	t->n_bars = bars0;
	t->bin_seconds = bin_seconds;
	return rc == -ENOMEM ? rc : 1;
}

/*
 * Aggregated lanes of one rank straight from two walks over its calls
 * (sp_call_stack_walk): the first finds each lane's depth (the bins'
 * size), the second bins the calls, every depth row at once. The calls
 * are neither stored nor sorted: they come lane after lane (ascending
 * thread), each lane in start order, so each row's bins get its calls in
 * start order, as aggregate_lane would. Memory: the bins and the open
 * calls. NOT_IN_ORDER (nothing added) when the calls are not in that
 * shape or a lane is too deep; -SP_E_NESTING, -ENOENT as the walk.
 */
static int add_rank_walk(struct timeline *t, size_t *cap, const struct sp_reader *r,
			 uint32_t rank, const struct sp_selection *sel, double width,
			 struct lane_guess *g)
{
	size_t lanes0 = t->n_lanes, bars0 = t->n_bars;
	double bin_seconds = t->bin_seconds;
	struct scan sc = { 0 };
	struct binner b = { t, cap, rank, width, &sc, 0, { 0 }, NULL, -1 };
	int rc = g->valid ? try_guess(t, cap, r, rank, sel, width, g) : 1;

	if (rc <= 0)
		return rc;
	g->valid = false;
	rc = sp_call_stack_walk(r, rank, INT64_MIN, sel, scan_call, &sc);

	for (size_t i = 0; rc == 0 && i < sc.n; i++)
		if ((size_t)sc.v[i].max + 1 > AGG_LANE_BINS / 50)
			rc = NOT_IN_ORDER;
	if (rc == 0)
		rc = sp_call_stack_walk(r, rank, INT64_MIN, sel, bin_call, &b);
	if (rc == 0 && b.li != sc.n)
		rc = NOT_IN_ORDER;
	if (b.li > 0 && b.a.bins) {
		int rc2 = lane_end(&b);

		rc = rc ? rc : rc2;
	}
	for (size_t i = 0; rc == 0 && i < sc.n; i++)
		t->n_calls += sc.v[i].calls;
	if (rc == 0 && sc.n == 1)
		*g = (struct lane_guess){ true, sc.v[0].max };
	free(sc.v);
	if (rc != 0) { /* undo: the caller redoes the rank */
		t->n_lanes = lanes0;
		t->n_bars = bars0;
		t->bin_seconds = bin_seconds;
	}
	return rc;
}

/* Split the sorted calls of one rank into lanes (one per thread). */
static int add_rank(struct timeline *t, size_t *cap, uint32_t rank,
		    const struct tl_call *c, size_t n, double width)
{
	for (size_t i = 0; i < n;) {
		size_t j = i;
		struct tl_lane *lanes, *ln;
		int rc = 0;

		while (j < n && c[j].thread == c[i].thread)
			j++;
		lanes = realloc(t->lanes, (t->n_lanes + 1) * sizeof(*lanes));
		if (!lanes)
			return -ENOMEM;
		t->lanes = lanes;
		ln = &t->lanes[t->n_lanes++];
		*ln = (struct tl_lane){ .rank = rank, .thread = c[i].thread,
					.rows = c[j - 1].depth + 1, .calls = j - i,
					.first_bar = t->n_bars };
		if (t->aggregated) {
			rc = aggregate_lane(t, cap, c + i, j - i, ln->rows, width);
		} else {
			for (size_t k = i; k < j && rc == 0; k++)
				rc = push_bar(t, cap, (struct tl_bar){ c[k].region, c[k].depth,
								       c[k].s, c[k].e, 1 });
		}
		if (rc < 0)
			return rc;
		ln->n_bars = t->n_bars - ln->first_bar;
		i = j;
	}
	return 0;
}

/* First entry and last exit over every event of the file. */
static void time_range(const struct sp_reader *r, int64_t *t0, int64_t *t1)
{
	const int64_t *s = sp_reader_column(r, SP_COL_START_TIMES);
	const int64_t *e = sp_reader_column(r, SP_COL_END_TIMES);
	size_t n = sp_reader_num_events(r);

	*t0 = n ? INT64_MAX : 0;
	*t1 = 0;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < *t0)
			*t0 = s[i];
		if (i == 0 || e[i] > *t1)
			*t1 = e[i];
	}
	if (*t1 < *t0)
		*t1 = *t0;
}

/* Selected ranks that hold rows (all of them, or the requested ones). */
static size_t pick_ranks(const struct chart_file *cf, const uint32_t *want,
			 size_t n_want, const struct sp_selection *sel, uint32_t *out)
{
	const uint32_t *ranks;
	size_t n = sp_reader_ranks(cf->r, &ranks), k = 0;

	for (size_t i = 0; i < n; i++) {
		bool ok = n_want ? false : sp_selection_match_rank(sel, ranks[i]);

		for (size_t j = 0; j < n_want && !ok; j++)
			ok = want[j] == ranks[i];
		if (ok)
			out[k++] = ranks[i];
	}
	return k;
}

static uint64_t count_calls(const struct sp_reader *r, const uint32_t *ranks,
			    size_t n, const struct sp_selection *sel)
{
	uint64_t total = 0;

	for (size_t i = 0; i < sp_reader_num_rows(r); i++) {
		const struct sp_row *row = sp_reader_row(r, i);
		bool in = false;

		for (size_t k = 0; k < n && !in; k++)
			in = ranks[k] == row->rank;
		if (in && sp_selection_match_name(sel, sp_reader_region_name(r, row->region)))
			total += row->count;
	}
	return total;
}

/*
 * cmp_call's order in linear time for calls that come as the call stack
 * gives them: lane after lane (ascending thread), each lane in start order
 * (start asc, end desc), so each (lane, depth) is in order already and a
 * stable counting sort by depth within each lane is the whole sort (same
 * order as the stable merge sort, and no sort of all events). Returns the
 * new array, or NULL (calls untouched) when they are not in that shape or
 * memory is short: the caller sorts them then.
 */
static struct tl_call *sort_stack_calls(const struct tl_call *c, size_t n)
{
	struct tl_call *out = malloc((n + 1) * sizeof(*out));
	size_t *at = NULL, cap_at = 0, i = 0;

	while (out && i < n) {
		size_t j = i + 1;
		int32_t max = c[i].depth;

		if (i > 0 && c[i].thread <= c[i - 1].thread)
			break; /* lanes not ascending */
		for (; j < n && c[j].thread == c[i].thread; j++) {
			if (c[j].s < c[j - 1].s ||
			    (c[j].s == c[j - 1].s && c[j].e > c[j - 1].e) || c[j].depth < 0)
				break; /* not in start order */
			max = c[j].depth > max ? c[j].depth : max;
		}
		if ((j < n && c[j].thread == c[i].thread) || c[i].depth < 0)
			break;
		if ((size_t)max + 2 > cap_at) {
			size_t *p = realloc(at, ((size_t)max + 2) * sizeof(*p));

			if (!p)
				break;
			at = p;
			cap_at = (size_t)max + 2;
		}
		memset(at, 0, ((size_t)max + 2) * sizeof(*at));
		at[0] = i;
		for (size_t k = i; k < j; k++)
			at[c[k].depth + 1]++;
		for (int32_t d = 0; d <= max; d++)
			at[d + 1] += at[d];
		for (size_t k = i; k < j; k++)
			out[at[c[k].depth]++] = c[k];
		i = j;
	}
	free(at);
	if (out && i == n)
		return out;
	free(out);
	return NULL;
}

static int build_rank(struct timeline *t, size_t *cap, const struct chart_file *cf,
		      uint32_t rank, const struct chart_opts *o, struct lane_guess *g)
{
	struct tl_call *calls = NULL;
	size_t n = 0;
	bool need_sort = false;
	int rc;

	if (t->aggregated) {
		rc = add_rank_walk(t, cap, cf->r, rank, o->sel, o->width, g);
		if (rc == 0 || rc == -ENOMEM)
			return rc;
		if (rc == -ENOENT)
			return 0;
		/* NOT_IN_ORDER: sorted below; nesting: rows below. */
	}
	rc = calls_from_stack(cf->r, rank, o->sel, &calls, &n);

	if (rc == -SP_E_NESTING) {
		if (!t->problem)
			t->problem = strdup(sp_reader_last_error());
		rc = calls_from_rows(cf->r, rank, o->sel, &calls, &n);
		need_sort = true;
	}
	if (rc == -ENOENT)
		return 0;
	if (rc < 0)
		return rc;
	if (!need_sort) {
		struct tl_call *sorted = sort_stack_calls(calls, n);

		if (sorted) {
			free(calls);
			calls = sorted;
		} else {
			need_sort = true;
		}
	}
	if (need_sort)
		qsort(calls, n, sizeof(*calls), cmp_call);
	t->n_calls += n;
	rc = add_rank(t, cap, rank, calls, n, o->width);
	free(calls);
	return rc;
}

int timeline_build(const struct chart_file *cf, const uint32_t *want,
		   size_t n_want, const struct chart_opts *o, struct timeline *ret)
{
	struct timeline t = { 0 };
	struct lane_guess guess = { false, 0 };
	size_t nr = sp_reader_num_ranks(cf->r) + sp_reader_num_rows(cf->r) + 1;
	uint32_t *ranks = malloc(nr * sizeof(*ranks));
	size_t cap = 0;
	int rc = 0;

	if (!ranks)
		return -ENOMEM;
	t.ranks_total = pick_ranks(cf, want, n_want, o->sel, ranks);
	t.ranks_drawn = t.ranks_total;
	if (!n_want && o->max_lanes && t.ranks_drawn > o->max_lanes)
		t.ranks_drawn = o->max_lanes;
	time_range(cf->r, &t.t0_ns, &t.t1_ns);
	t.aggregated = count_calls(cf->r, ranks, t.ranks_drawn, o->sel) > o->max_bars;
	for (size_t i = 0; i < t.ranks_drawn && rc == 0; i++)
		rc = build_rank(&t, &cap, cf, ranks[i], o, &guess);
	free(ranks);
	if (rc < 0) {
		timeline_free(&t);
		return rc;
	}
	*ret = t;
	return 0;
}

void timeline_free(struct timeline *t)
{
	free(t->lanes);
	free(t->bars);
	free(t->problem);
	memset(t, 0, sizeof(*t));
}

void timeline_note(const struct timeline *t, bool problem, char *buf, size_t size)
{
	char bin[32];
	size_t len = 0;

	buf[0] = '\0';
	if (t->aggregated) {
		fmt_seconds(bin, sizeof(bin), t->bin_seconds);
		len += (size_t)snprintf(buf + len, size - len,
			"%" PRIu64 " calls aggregated per pixel (bins of %s; each bar "
			"shows the region that covers most of its bins). ",
			t->n_calls, bin);
	}
	if (len < size && t->ranks_drawn < t->ranks_total)
		len += (size_t)snprintf(buf + len, size - len,
			"Showing the first %zu of %zu ranks (choose with --ranks). ",
			t->ranks_drawn, t->ranks_total);
	if (len < size && t->problem && problem)
		snprintf(buf + len, size - len,
			 "Calls are not properly nested, rows show regions: %s", t->problem);
}
