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
#include <stdlib.h>
#include <string.h>

#include "chart-timeline.h"
#include "sp-array.h"
#include "svg.h"

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

int timeline_push_bar(struct timeline *t, size_t *cap, struct tl_bar b)
{
	if (SP_ARRAY_RESERVE(t->bars, *cap, t->n_bars + 1, 1024) < 0)
		return -ENOMEM;
	t->bars[t->n_bars++] = b;
	return 0;
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
				rc = timeline_push_bar(t, cap, (struct tl_bar){ c[k].region, c[k].depth,
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
