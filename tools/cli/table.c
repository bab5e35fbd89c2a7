/* SPDX-License-Identifier: MIT */
/*
 * The CLI's table module (table.h): rows of escaped cells, the tree glyphs
 * in the name column only, right-aligned numeric columns that never move
 * with the depth, middle elision of names to the terminal width, a marker
 * column with a legend, and adaptive duration units.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "table.h"

#define TBL_MAX_COLS 24
/* Tree levels drawn before the indentation is summarised as "[depth]":
 * a hostile file nests 100k levels, which no terminal shows. */
#define TBL_MAX_INDENT 24
/* The name column is never elided below this many columns. */
#define TBL_MIN_NAME 16

struct tbl_row_s {
	int depth;
	char mark;
	char *cells[TBL_MAX_COLS];
};

struct tbl {
	struct tbl_style st;
	int ncols, tree_col;
	char *headers[TBL_MAX_COLS];
	enum tbl_align align[TBL_MAX_COLS];
	struct tbl_row_s *rows;
	size_t n, cap;
	char *legend[128];
	bool used[128];
};

/* ---- style ------------------------------------------------------------ */

static bool names_utf8(const char *v)
{
	return v && (strcasestr(v, "utf-8") || strcasestr(v, "utf8"));
}

void tbl_style_init(struct tbl_style *st, bool force_ascii, bool wide)
{
	const char *a = getenv("SCOPE_PROFILER_ASCII");
	const char *loc = NULL, *cols = getenv("SCOPE_PROFILER_COLUMNS");
	const char *vars[] = { "LC_ALL", "LC_CTYPE", "LANG" };

	for (size_t i = 0; i < 3 && !loc; i++) {
		const char *v = getenv(vars[i]);

		if (v && *v)
			loc = v;
	}
	st->ascii = force_ascii || (a && strcmp(a, "1") == 0) || !names_utf8(loc);
	st->width = 0;
	if (wide)
		return;
	if (cols && *cols) {
		long w = strtol(cols, NULL, 10);

		st->width = w > 0 && w < 100000 ? (size_t)w : 0;
		return;
	}
	if (!isatty(STDOUT_FILENO))
		return;
	struct winsize ws;

	if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) {
		st->width = ws.ws_col;
		return;
	}
	cols = getenv("COLUMNS");
	st->width = cols && strtol(cols, NULL, 10) > 0 ? (size_t)strtol(cols, NULL, 10) : 80;
}

/* ---- cells -------------------------------------------------------------- */

/* Length of the valid UTF-8 sequence at s (1-4) and its code point, or 0. */
static int utf8_seq(const unsigned char *s, uint32_t *cp)
{
	int len;
	uint32_t c;

	if (s[0] < 0x80) {
		*cp = s[0];
		return 1;
	}
	if (s[0] >= 0xc2 && s[0] <= 0xdf) {
		len = 2;
		c = s[0] & 0x1f;
	} else if (s[0] >= 0xe0 && s[0] <= 0xef) {
		len = 3;
		c = s[0] & 0x0f;
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		len = 4;
		c = s[0] & 0x07;
	} else {
		return 0;
	}
	for (int i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (s[i] & 0x3f);
	}
	/* Overlong forms, surrogates, past U+10FFFF. */
	if ((len == 3 && c < 0x800) || (len == 4 && (c < 0x10000 || c > 0x10ffff)) ||
	    (c >= 0xd800 && c <= 0xdfff))
		return 0;
	*cp = c;
	return len;
}

/* Code points a terminal acts on or that reorder text: C1, bidi controls,
 * line and paragraph separators. */
static bool invisible(uint32_t c)
{
	return (c >= 0x80 && c <= 0x9f) || (c >= 0x202a && c <= 0x202e) ||
	       (c >= 0x2066 && c <= 0x2069) || c == 0x2028 || c == 0x2029 ||
	       c == 0x200e || c == 0x200f || c == 0x061c;
}

size_t tbl_escape(char *out, size_t size, const char *s)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	size_t n = 0;

	if (size == 0)
		return 0;
	while (*p) {
		char tmp[16];
		uint32_t cp = 0;
		int len = utf8_seq(p, &cp);
		size_t k;

		if (len == 0) {
			snprintf(tmp, sizeof tmp, "\\x%02x", *p);
			len = 1;
		} else if (cp == '\n' || cp == '\r' || cp == '\t' || cp == '\\') {
			tmp[0] = '\\';
			tmp[1] = cp == '\n' ? 'n' : cp == '\r' ? 'r' : cp == '\t' ? 't' : '\\';
			tmp[2] = '\0';
		} else if (cp < 0x20 || cp == 0x7f) {
			snprintf(tmp, sizeof tmp, "\\x%02x", (unsigned)cp);
		} else if (invisible(cp)) {
			snprintf(tmp, sizeof tmp, "\\u%04x", (unsigned)cp);
		} else {
			memcpy(tmp, p, (size_t)len);
			tmp[len] = '\0';
		}
		k = strlen(tmp);
		if (n + k >= size)
			break;
		memcpy(out + n, tmp, k);
		n += k;
		p += len;
	}
	out[n] = '\0';
	return n;
}

size_t tbl_display_width(const char *s)
{
	size_t w = 0;

	for (; *s; s++)
		w += ((unsigned char)*s & 0xc0) != 0x80;
	return w;
}

void tbl_duration(char *out, size_t size, double v, bool ascii)
{
	double a = fabs(v);

	if (isnan(v))
		snprintf(out, size, "-");
	else if (a >= 0.9995 || isinf(v))
		snprintf(out, size, "%.3f s ", v);
	else if (a >= 0.9995e-3)
		snprintf(out, size, "%.3f ms", v * 1e3);
	else if (a >= 0.9995e-6)
		snprintf(out, size, "%.3f %s", v * 1e6, ascii ? "us" : "µs");
	else
		snprintf(out, size, "%.0f ns", v * 1e9);
}

/* ---- table --------------------------------------------------------------- */

struct tbl *tbl_create(const struct tbl_style *st)
{
	struct tbl *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->st = *st;
	t->tree_col = -1;
	return t;
}

void tbl_destroy(struct tbl *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->n; i++)
		for (int k = 0; k < t->ncols; k++)
			free(t->rows[i].cells[k]);
	for (int k = 0; k < t->ncols; k++)
		free(t->headers[k]);
	for (int k = 0; k < 128; k++)
		free(t->legend[k]);
	free(t->rows);
	free(t);
}

int tbl_column(struct tbl *t, const char *header, enum tbl_align align, bool tree)
{
	if (t->ncols == TBL_MAX_COLS || !(t->headers[t->ncols] = strdup(header)))
		return -1;
	t->align[t->ncols] = align;
	if (tree && t->tree_col < 0)
		t->tree_col = t->ncols;
	return t->ncols++;
}

int tbl_row(struct tbl *t, int depth, char mark)
{
	if (t->n == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 64;
		struct tbl_row_s *r = realloc(t->rows, cap * sizeof(*r));

		if (!r)
			return -ENOMEM;
		t->rows = r;
		t->cap = cap;
	}
	memset(&t->rows[t->n], 0, sizeof(t->rows[0]));
	t->rows[t->n].depth = depth < 0 ? 0 : depth;
	t->rows[t->n].mark = (unsigned char)mark < 128 && mark != ' ' ? mark : 0;
	if (t->rows[t->n].mark)
		t->used[(unsigned char)mark] = true;
	t->n++;
	return 0;
}

int tbl_cell(struct tbl *t, int col, const char *s)
{
	size_t len = strlen(s ? s : "");
	char *e;

	if (t->n == 0 || col < 0 || col >= t->ncols)
		return -EINVAL;
	/* At most 5 bytes ("\xNN", "\uNNNN" 6) per input byte. */
	e = malloc(6 * len + 1);
	if (!e)
		return -ENOMEM;
	tbl_escape(e, 6 * len + 1, s);
	free(t->rows[t->n - 1].cells[col]);
	t->rows[t->n - 1].cells[col] = e;
	return 0;
}

int tbl_cellf(struct tbl *t, int col, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	return tbl_cell(t, col, buf);
}

int tbl_legend(struct tbl *t, char mark, const char *text)
{
	unsigned char m = (unsigned char)mark;

	if (m >= 128)
		return -EINVAL;
	free(t->legend[m]);
	t->legend[m] = strdup(text);
	return t->legend[m] ? 0 : -ENOMEM;
}

/* ---- printing ------------------------------------------------------------ */

/* A line being built: trailing blanks are cut before it is written. */
struct line {
	char *s;
	size_t n, cap;
};

static void put(struct line *l, const char *s, size_t len)
{
	if (l->n + len + 1 > l->cap) {
		size_t cap = (l->n + len + 1) * 2;
		char *p = realloc(l->s, cap);

		if (!p)
			return;
		l->s = p;
		l->cap = cap;
	}
	memcpy(l->s + l->n, s, len);
	l->n += len;
	l->s[l->n] = '\0';
}

static void puts_pad(struct line *l, const char *s, size_t width, enum tbl_align a)
{
	size_t w = tbl_display_width(s);

	for (size_t i = w; a == TBL_RIGHT && i < width; i++)
		put(l, " ", 1);
	put(l, s, strlen(s));
	for (size_t i = w; a == TBL_LEFT && i < width; i++)
		put(l, " ", 1);
}

static void flush(struct line *l, FILE *f)
{
	while (l->n && l->s[l->n - 1] == ' ')
		l->n--;
	if (l->s)
		fwrite(l->s, 1, l->n, f);
	fputc('\n', f);
	l->n = 0;
}

/* Byte offset of code point k of s (or its end). */
static size_t cp_offset(const char *s, size_t k)
{
	size_t i = 0;

	for (; s[i] && k; k--)
		for (i++; ((unsigned char)s[i] & 0xc0) == 0x80; i++)
			;
	return i;
}

/* s cut in the middle to at most max display columns into the line. */
static void put_elided(struct line *l, const char *s, size_t max, bool ascii)
{
	const char *dots = ascii ? "..." : "…";
	size_t w = tbl_display_width(s), nd = ascii ? 3 : 1;

	if (w <= max || max <= nd) {
		put(l, s, strlen(s));
		return;
	}
	size_t keep = max - nd, head = (keep + 1) / 2, tail = keep - head;

	put(l, s, cp_offset(s, head));
	put(l, dots, strlen(dots));
	put(l, s + cp_offset(s, w - tail), strlen(s + cp_offset(s, w - tail)));
}

/* Whether each row is the last of its siblings (the next row at its depth
 * or above is above): an open-row stack, amortised O(rows). */
static bool *last_flags(const struct tbl *t)
{
	bool *last = malloc((t->n ? t->n : 1) * sizeof(*last));
	size_t *stack = malloc((t->n ? t->n : 1) * sizeof(*stack)), top = 0;

	if (!last || !stack) {
		free(last);
		free(stack);
		return NULL;
	}
	for (size_t i = 0; i < t->n; i++) {
		int d = t->rows[i].depth;

		last[i] = true;
		while (top && t->rows[stack[top - 1]].depth >= d) {
			if (t->rows[stack[top - 1]].depth == d)
				last[stack[top - 1]] = false;
			top--;
		}
		stack[top++] = i;
	}
	free(stack);
	return last;
}

/* The tree glyphs of a row into p (cap bytes); anc[k]: is the ancestor at
 * level k the last of its siblings. */
static void prefix(char *p, size_t cap, const struct tbl *t, int d, bool last, const bool *anc,
		   size_t colw)
{
	int lim = TBL_MAX_INDENT;
	char digits[16];

	/* A cut name column: a row keeps 8 columns of name, so fewer levels
	 * are drawn and the others summarised as "[depth] ". */
	if (colw && 3 * (size_t)d + 8 > colw) {
		size_t fixed = 8 + 3 + (size_t)snprintf(digits, sizeof digits, "[%d] ", d);

		lim = colw > fixed + 3 ? (int)((colw - fixed) / 3) : 0;
		lim = lim < TBL_MAX_INDENT ? lim : TBL_MAX_INDENT;
	}
	const char *bar = t->st.ascii ? "|  " : "│  ";
	const char *mid = t->st.ascii ? "|- " : "├─ ";
	const char *end = t->st.ascii ? "`- " : "└─ ";
	size_t n = 0;

	p[0] = '\0';
	if (d == 0)
		return;
	for (int k = 1; k < d && k <= lim; k++)
		n += (size_t)snprintf(p + n, cap - n, "%s", anc[k] ? "   " : bar);
	if (d > lim + 1)
		n += (size_t)snprintf(p + n, cap - n, "[%d] ", d);
	snprintf(p + n, cap - n, "%s", last ? end : mid);
}

void tbl_print(struct tbl *t, FILE *f)
{
	size_t width[TBL_MAX_COLS] = { 0 }, pre_w = 0, other = 0;
	int maxd = 0, tc = t->tree_col;
	size_t colw = 0;
	bool marks = false, *last = last_flags(t), *anc;
	char pre[TBL_MAX_INDENT * 8 + 32];
	struct line l = { 0 };

	for (size_t i = 0; i < t->n; i++) {
		maxd = t->rows[i].depth > maxd ? t->rows[i].depth : maxd;
		marks |= t->rows[i].mark != 0;
	}
	anc = calloc((size_t)maxd + 2, sizeof(*anc));
	if (!last || !anc)
		goto out;
	for (int k = 0; k < t->ncols; k++)
		width[k] = tbl_display_width(t->headers[k]);
	for (size_t i = 0; i < t->n; i++) {
		int d = t->rows[i].depth;

		pre_w = d == 0 ? 0 : 3 * (size_t)(d - 1 < TBL_MAX_INDENT ? d : TBL_MAX_INDENT + 1) +
					     (d > TBL_MAX_INDENT + 1 ? 12 : 0);
		for (int k = 0; k < t->ncols; k++) {
			const char *c = t->rows[i].cells[k] ? t->rows[i].cells[k] : "";
			size_t w = tbl_display_width(c) + (k == tc ? pre_w : 0);

			width[k] = w > width[k] ? w : width[k];
		}
	}
	/* Fit the width: only the name column gives way. */
	for (int k = 0; k < t->ncols; k++)
		other += k == tc ? 0 : width[k] + 2;
	other += marks ? 2 : 0;
	if (tc >= 0 && t->st.width && other + width[tc] > t->st.width) {
		size_t room = t->st.width > other ? t->st.width - other : 0;

		width[tc] = room > TBL_MIN_NAME ? room : TBL_MIN_NAME;
		colw = width[tc];
	}
	/* Header and rule. */
	for (int k = 0; k < t->ncols; k++) {
		if (k)
			put(&l, "  ", 2);
		puts_pad(&l, t->headers[k], width[k], t->align[k]);
		if (k == tc && marks)
			put(&l, "  ", 2);
	}
	flush(&l, f);
	for (int k = 0; k < t->ncols; k++) {
		if (k)
			put(&l, "  ", 2);
		for (size_t i = 0; i < width[k] + (k == tc && marks ? 2 : 0); i++)
			put(&l, t->st.ascii ? "-" : "─", t->st.ascii ? 1 : 3);
	}
	flush(&l, f);
	for (size_t i = 0; i < t->n; i++) {
		const struct tbl_row_s *r = &t->rows[i];

		if (r->depth <= maxd)
			anc[r->depth] = last[i];
		for (int k = 0; k < t->ncols; k++) {
			const char *c = r->cells[k] ? r->cells[k] : "";

			if (k)
				put(&l, "  ", 2);
			if (k != tc) {
				puts_pad(&l, c, width[k], t->align[k]);
				continue;
			}
			prefix(pre, sizeof pre, t, r->depth, last[i], anc, colw);
			put(&l, pre, strlen(pre));
			size_t pw = tbl_display_width(pre), room = width[k] > pw ? width[k] - pw : 0;
			size_t start = l.n;

			put_elided(&l, c, room < 4 ? 4 : room, t->st.ascii);
			for (size_t w = pw + tbl_display_width(l.s ? l.s + start : ""); w < width[k]; w++)
				put(&l, " ", 1);
			if (marks) {
				char m[3] = { ' ', r->mark ? r->mark : ' ', '\0' };

				put(&l, m, 2);
			}
		}
		flush(&l, f);
	}
	/* Legends: "M text", continuation lines (after '\n') indented by 2. */
	for (int m = 0; m < 128; m++) {
		if (!t->used[m] || !t->legend[m])
			continue;
		fprintf(f, "%c ", m);
		for (const char *p = t->legend[m]; *p; p++) {
			fputc(*p, f);
			if (*p == '\n')
				fputs("  ", f);
		}
		fputc('\n', f);
	}
out:
	free(l.s);
	free(last);
	free(anc);
}
