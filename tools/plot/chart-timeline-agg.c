/* SPDX-License-Identifier: MIT */
/*
 * Per-pixel aggregation of the timeline (chart-timeline.c) past max_bars
 * calls: per lane row the region covering most of each pixel, binned from
 * sorted calls (aggregate_lane) or straight from call-stack walks over a
 * rank (add_rank_walk: one walk when the rank nests as deep as the
 * previous one, else two), neither storing nor sorting the calls.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "chart-timeline.h"
#include "sp-array.h"

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
		rc = timeline_push_bar(t, cap, (struct tl_bar){
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

int aggregate_lane(struct timeline *t, size_t *cap,
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
int add_rank_walk(struct timeline *t, size_t *cap, const struct sp_reader *r,
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
