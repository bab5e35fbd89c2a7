/* SPDX-License-Identifier: MIT */
/*
 * Timeline pane of `scope-profiler tui`: a text Gantt chart of one rank,
 * one line per region, each cell shaded by the fraction of its time the
 * region was running. It zooms and pans over the rank's time span; a redraw
 * touches only the events inside the window (binary search on start times,
 * which are sorted within a row for every file the writer produces).
 */
#include <curses.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tui.h"

struct tl_line {
	uint32_t region;
	const struct sp_row *row;
	bool sorted;	 /* starts non-decreasing */
	int64_t max_dur; /* longest event (ns) */
	uint64_t calls;	 /* in the window (last draw) */
	double busy;	 /* ns in the window (last draw) */
};

struct tui_timeline {
	bool valid, failed;
	long rank;
	struct tl_line *lines;
	size_t n;
	int64_t t0, t1; /* the rank's extent (ns) */
	double v0, v1;	/* the window (ns) */
	double origin;	/* seconds */
	struct tui_cursor cur;
};

void tui_timeline_reset(struct tui *t)
{
	if (!t->timeline)
		return;
	free(t->timeline->lines);
	memset(t->timeline, 0, sizeof(*t->timeline));
}

void tui_timeline_destroy(struct tui *t)
{
	tui_timeline_reset(t);
	free(t->timeline);
	t->timeline = NULL;
}

static bool lane_ok(const struct tui *t, const int64_t *lanes, uint64_t e)
{
	return t->lane == TUI_ALL_LANES || !lanes || lanes[e] == t->lane;
}

/* Scan a row once: sortedness, longest event, extent. */
static void scan_row(const struct tui *t, struct tui_timeline *m, struct tl_line *l)
{
	const int64_t *s = sp_reader_column(t->r, SP_COL_START_TIMES);
	const int64_t *e = sp_reader_column(t->r, SP_COL_END_TIMES);
	const int64_t *lanes = sp_reader_column(t->r, SP_COL_THREAD_IDS);
	uint64_t a = l->row->offset, b = a + l->row->count;

	l->sorted = true;
	for (uint64_t i = a; i < b; i++) {
		if (i > a && s[i] < s[i - 1])
			l->sorted = false;
		if (!lane_ok(t, lanes, i))
			continue;
		if (e[i] - s[i] > l->max_dur)
			l->max_dur = e[i] - s[i];
		if (s[i] < m->t0)
			m->t0 = s[i];
		if (e[i] > m->t1)
			m->t1 = e[i];
	}
}

static int load(struct tui *t, struct tui_timeline *m)
{
	uint32_t *ids = NULL;
	int n = sp_reader_regions(t->r, t->names, &ids);
	struct sp_times times;

	m->rank = tui_single_rank(t);
	if (n < 0 || m->rank < 0 || !(m->lines = calloc((size_t)n + 1, sizeof(*m->lines)))) {
		free(ids);
		return -1;
	}
	m->t0 = INT64_MAX;
	m->t1 = INT64_MIN;
	for (int i = 0; i < n; i++) {
		long row = sp_reader_row_find(t->r, ids[i], (uint32_t)m->rank);
		struct tl_line *l = &m->lines[m->n];

		if (row < 0 || sp_reader_row(t->r, (size_t)row)->count == 0)
			continue;
		l->region = ids[i];
		l->row = sp_reader_row(t->r, (size_t)row);
		scan_row(t, m, l);
		m->n++;
	}
	free(ids);
	if (m->t1 < m->t0)
		m->t0 = m->t1 = 0;
	m->v0 = (double)m->t0;
	m->v1 = (double)m->t1 > m->v0 ? (double)m->t1 : m->v0 + 1;
	sp_reader_times(t->r, &times);
	m->origin = times.time_origin;
	m->valid = true;
	return 0;
}

static struct tui_timeline *get(struct tui *t)
{
	struct tui_timeline *m = t->timeline;

	if (!m && !(m = t->timeline = calloc(1, sizeof(*m))))
		return NULL;
	if (!m->valid && !m->failed && load(t, m) < 0) {
		tui_timeline_reset(t);
		m->failed = true;
	}
	return m;
}

/* First event of a sorted row that may reach into [v0, ...). */
static uint64_t first_event(const int64_t *s, const struct tl_line *l, double v0)
{
	uint64_t lo = l->row->offset, hi = lo + l->row->count;
	double from = v0 - (double)l->max_dur;

	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;

		if ((double)s[mid] < from)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Add [a, b] (clipped to the window) to the cell coverage cov[0..w). */
static void cover(double *cov, char *hit, int w, double v0, double cell, double a, double b)
{
	int ca = (int)((a - v0) / cell), cb = (int)((b - v0) / cell);

	ca = ca < 0 ? 0 : ca >= w ? w - 1 : ca;
	cb = cb < 0 ? 0 : cb >= w ? w - 1 : cb;
	hit[ca] = hit[cb] = 1;
	if (ca == cb) {
		cov[ca] += b - a;
		return;
	}
	cov[ca] += v0 + (ca + 1) * cell - a;
	for (int c = ca + 1; c < cb; c++) {
		cov[c] += cell;
		hit[c] = 1;
	}
	cov[cb] += b - (v0 + cb * cell);
}

/* Shade the cells of one line into buf; updates calls/busy of the line. */
static void render_line(const struct tui *t, const struct tui_timeline *m, struct tl_line *l, int w,
			char *buf, size_t size)
{
	const int64_t *s = sp_reader_column(t->r, SP_COL_START_TIMES);
	const int64_t *e = sp_reader_column(t->r, SP_COL_END_TIMES);
	const int64_t *lanes = sp_reader_column(t->r, SP_COL_THREAD_IDS);
	uint64_t i = l->sorted ? first_event(s, l, m->v0) : l->row->offset;
	uint64_t end = l->row->offset + l->row->count;
	double cell = (m->v1 - m->v0) / w, *cov = calloc((size_t)w, sizeof(*cov));
	char *hit = calloc((size_t)w, 1);
	size_t len = 0;

	l->calls = 0;
	l->busy = 0;
	for (; cov && hit && i < end; i++) {
		double a = (double)s[i], b = (double)e[i];

		if (l->sorted && a >= m->v1)
			break;
		if (b < m->v0 || a >= m->v1 || !lane_ok(t, lanes, i))
			continue;
		a = a < m->v0 ? m->v0 : a;
		b = b > m->v1 ? m->v1 : b;
		l->calls++;
		l->busy += b - a;
		cover(cov, hit, w, m->v0, cell, a, b);
	}
	for (int c = 0; c < w && cov && hit && len + 8 < size; c++) {
		double f = cov[c] / cell;
		int k = !hit[c] ? 0 : f < 0.25 ? 1 : f < 0.5 ? 2 : f < 0.9 ? 3 : 4;

		len += (size_t)snprintf(buf + len, size - len, "%s", t->g->shade[k]);
	}
	buf[len] = '\0';
	free(cov);
	free(hit);
}

static void draw_axis(const struct tui *t, const struct tui_timeline *m, int y, int x, int w)
{
	char lab[32];

	tui_put(t, y, 0, COLS, "", true);
	for (int k = 0; k <= 4; k++) {
		int col = x + (w - 1) * k / 4;
		double sec = (m->v0 + (m->v1 - m->v0) * k / 4) / 1e9 - m->origin;
		int lw;

		snprintf(lab, sizeof(lab), "|%.6g", sec);
		lw = (int)strlen(lab);
		if (k == 4) {
			snprintf(lab, sizeof(lab), "%.6g|", sec);
			col = x + w - lw;
		}
		if (col + lw <= COLS)
			tui_put(t, y, col, lw, lab, false);
	}
}

static void draw_title(struct tui *t, const struct tui_timeline *m, int y)
{
	char buf[512], lane[32] = "all";
	double span = (double)(m->t1 - m->t0);

	if (t->lane != TUI_ALL_LANES)
		snprintf(lane, sizeof(lane), "%lld", (long long)t->lane);
	snprintf(buf, sizeof(buf),
		 "rank %ld, thread %s: %.6f s .. %.6f s (zoom x%.3g)  +/- zoom, h/l pan, 0 reset",
		 m->rank, lane, m->v0 / 1e9 - m->origin, m->v1 / 1e9 - m->origin,
		 span > 0 ? span / (m->v1 - m->v0) : 1.0);
	attron(A_BOLD);
	tui_put(t, y, 0, COLS, buf, true);
	attroff(A_BOLD);
}

static void timeline_draw(struct tui *t, int y, int height)
{
	struct tui_timeline *m = get(t);
	int nw = 24, sw = 18, bw;
	char buf[8192], stat[64];

	if (!m || !m->valid || m->n == 0) {
		tui_put(t, y, 0, COLS, "(no events on this rank)", false);
		return;
	}
	bw = COLS - nw - sw - 2;
	if (bw < 8)
		return;
	draw_title(t, m, y);
	draw_axis(t, m, y + 1, nw + 1, bw);
	tui_put_right(t, y + 1, COLS - sw, sw, "calls  busy");
	tui_cursor_fix(&m->cur, m->n, height - 2);
	for (int line = 0; line < height - 2; line++) {
		size_t v = m->cur.top + (size_t)line;
		struct tl_line *l;

		if (v >= m->n)
			break;
		l = &m->lines[v];
		render_line(t, m, l, bw, buf, sizeof(buf));
		attrset(v == m->cur.cur ? A_REVERSE : A_NORMAL);
		tui_put(t, y + 2 + line, 0, nw, sp_reader_region_name(t->r, l->region), true);
		attrset(A_NORMAL);
		tui_put(t, y + 2 + line, nw, 1, t->utf8 ? "│" : "|", false);
		tui_put(t, y + 2 + line, nw + 1, bw, buf, true);
		tui_put(t, y + 2 + line, nw + 1 + bw, 1, t->utf8 ? "│" : "|", false);
		snprintf(stat, sizeof(stat), "%llu %5.1f%%", (unsigned long long)l->calls,
			 l->busy / (m->v1 - m->v0) * 100);
		tui_put_right(t, y + 2 + line, COLS - sw, sw, stat);
	}
	if (m->cur.cur < m->n) {
		t->has_region = true;
		t->region = m->lines[m->cur.cur].region;
	}
}

/* Keep the window inside the rank's extent, at least 1 ns per cell. */
static void clamp_view(struct tui_timeline *m, double w)
{
	double full = (double)(m->t1 - m->t0), min_w = COLS > 0 ? COLS : 80;

	if (w < min_w)
		w = min_w;
	if (w >= full) {
		m->v0 = (double)m->t0;
		m->v1 = (double)m->t0 + (full > 0 ? full : 1);
		return;
	}
	if (m->v0 < (double)m->t0)
		m->v0 = (double)m->t0;
	if (m->v0 + w > (double)m->t1)
		m->v0 = (double)m->t1 - w;
	m->v1 = m->v0 + w;
}

static bool timeline_key(struct tui *t, int ch, int height)
{
	struct tui_timeline *m = get(t);
	double w, mid;

	if (!m || !m->valid)
		return false;
	w = m->v1 - m->v0;
	mid = m->v0 + w / 2;
	switch (ch) {
	case KEY_LEFT:
	case 'h':
		m->v0 -= w / 4;
		break;
	case KEY_RIGHT:
	case 'l':
		m->v0 += w / 4;
		break;
	case '+':
	case '=':
	case '\n':
	case '\r':
	case KEY_ENTER:
		w /= 2;
		m->v0 = mid - w / 2;
		break;
	case '-':
	case '_':
		w *= 2;
		m->v0 = mid - w / 2;
		break;
	case '0':
		m->v0 = (double)m->t0;
		w = (double)(m->t1 - m->t0);
		break;
	default:
		return tui_cursor_key(&m->cur, ch, m->n, height - 2);
	}
	clamp_view(m, w);
	return true;
}

static long timeline_csv(struct tui *t, FILE *f)
{
	struct tui_timeline *m = get(t);
	char buf[8192];
	int bw = COLS - 24 - 18 - 2;

	if (!m || !m->valid)
		return -1;
	fputs("rank,region,window_start,window_end,calls_in_window,busy,busy_fraction,cells\n", f);
	for (size_t i = 0; i < m->n; i++) {
		struct tl_line *l = &m->lines[i];

		render_line(t, m, l, bw > 8 ? bw : 8, buf, sizeof(buf));
		fprintf(f, "%ld", m->rank);
		tui_csv_field(f, false, sp_reader_region_name(t->r, l->region));
		tui_csv_double(f, m->v0 / 1e9 - m->origin);
		tui_csv_double(f, m->v1 / 1e9 - m->origin);
		fprintf(f, ",%llu", (unsigned long long)l->calls);
		tui_csv_double(f, l->busy / 1e9);
		tui_csv_double(f, l->busy / (m->v1 - m->v0));
		tui_csv_field(f, false, buf);
		fputc('\n', f);
	}
	return (long)m->n;
}

static bool timeline_ready(const struct tui *t)
{
	return t->timeline && (t->timeline->valid || t->timeline->failed);
}

static void timeline_prepare(struct tui *t)
{
	get(t);
}

const struct tui_pane tui_timeline_pane = {
    .title = "Timeline",
    .draw = timeline_draw,
    .key = timeline_key,
    .export_csv = timeline_csv,
    .ready = timeline_ready,
    .prepare = timeline_prepare,
    .busy = "scanning the rank's events",
};
