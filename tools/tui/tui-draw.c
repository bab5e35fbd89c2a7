/* SPDX-License-Identifier: MIT */
/*
 * Drawing helpers of `scope-profiler tui`: glyph sets (UTF-8 or ASCII),
 * width-aware clipped text, the status-line prompt, the help screen, list
 * cursors and CSV fields.
 */
#define NCURSES_WIDECHAR 1
#include <curses.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <wchar.h>

#include "tui.h"

static const struct tui_glyphs utf8_glyphs = {
    .open = "▾ ",
    .closed = "▸ ",
    .leaf = "  ",
    .sort_mark = "▼",
    .hline = "─",
    .shade = {" ", "░", "▒", "▓", "█"},
    .eighths = {"", "▏", "▎", "▍", "▌", "▋", "▊", "▉", "█"},
    .mean_mark = "┆",
};

static const struct tui_glyphs ascii_glyphs = {
    .open = "- ",
    .closed = "+ ",
    .leaf = "  ",
    .sort_mark = "v",
    .hline = "-",
    .shade = {" ", ".", ":", "=", "#"},
    .eighths = {"", "", "", "", "", "", "", "", "#"},
    .mean_mark = "|",
};

const struct tui_glyphs *tui_glyphs(bool utf8)
{
	return utf8 ? &utf8_glyphs : &ascii_glyphs;
}

/* Decode one character of s: its byte length and display width. */
static size_t next_char(const struct tui *t, const char *s, int *ret_width)
{
	mbstate_t st;
	wchar_t wc;
	size_t len;
	int w;

	if (!t->utf8 || (unsigned char)*s < 0x80) {
		*ret_width = 1;
		return 1;
	}
	memset(&st, 0, sizeof(st));
	len = mbrtowc(&wc, s, MB_CUR_MAX, &st);
	if (len == (size_t)-1 || len == (size_t)-2 || len == 0) {
		*ret_width = 1;
		return 1;
	}
	w = wcwidth(wc);
	*ret_width = w < 0 ? 1 : w;
	return len;
}

int tui_width(const struct tui *t, const char *s)
{
	int total = 0, w;

	while (*s) {
		s += next_char(t, s, &w);
		total += w;
	}
	return total;
}

int tui_put(const struct tui *t, int y, int x, int width, const char *s, bool pad)
{
	char buf[1024];
	size_t n = 0;
	int used = 0, w;

	while (*s && n + 8 < sizeof(buf)) {
		size_t len = next_char(t, s, &w);
		unsigned char c = (unsigned char)*s;

		if (used + w > width)
			break;
		if (c < 0x20 || c == 0x7f || (!t->utf8 && c >= 0x80) ||
		    (t->utf8 && len == 1 && c >= 0x80)) {
			buf[n++] = '?';
		} else {
			memcpy(buf + n, s, len);
			n += len;
		}
		s += len;
		used += w;
	}
	while (pad && used < width && n + 1 < sizeof(buf)) {
		buf[n++] = ' ';
		used++;
	}
	buf[n] = '\0';
	if (n)
		mvaddstr(y, x, buf);
	return used;
}

void tui_put_right(const struct tui *t, int y, int x, int width, const char *s)
{
	int w = tui_width(t, s);

	if (w < width)
		x += width - w;
	tui_put(t, y, x, width, s, false);
}

void tui_message(struct tui *t, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(t->msg, sizeof(t->msg), fmt, ap);
	va_end(ap);
}

static void prompt_draw(struct tui *t, const char *label, const char *buf)
{
	int y = LINES - 1, w = tui_width(t, label), bw = tui_width(t, buf);
	const char *shown = buf;

	/* Show the end of a long input. */
	while (*shown && bw > COLS - w - 2) {
		int cw;

		shown += next_char(t, shown, &cw);
		bw -= cw;
	}
	move(y, 0);
	clrtoeol();
	attron(A_BOLD);
	tui_put(t, y, 0, COLS, label, false);
	attroff(A_BOLD);
	tui_put(t, y, w, COLS - w, shown, false);
	move(y, w + bw < COLS ? w + bw : COLS - 1);
	refresh();
}

/* Append the wide character wc to buf (UTF-8 or ASCII). */
static void prompt_append(const struct tui *t, char *buf, size_t size, wint_t wc)
{
	char mb[16];
	size_t len = strlen(buf), n;
	mbstate_t st;

	if (wc < 0x20 || wc == 0x7f || (!t->utf8 && wc >= 0x80))
		return;
	memset(&st, 0, sizeof(st));
	n = wcrtomb(mb, (wchar_t)wc, &st);
	if (n == (size_t)-1 || len + n + 1 > size)
		return;
	memcpy(buf + len, mb, n);
	buf[len + n] = '\0';
}

/* Remove the last (UTF-8) character of buf. */
static void prompt_backspace(char *buf)
{
	size_t len = strlen(buf);

	while (len > 0) {
		len--;
		if (((unsigned char)buf[len] & 0xc0) != 0x80)
			break;
	}
	buf[len] = '\0';
}

bool tui_prompt(struct tui *t, const char *label, char *buf, size_t size)
{
	bool done = false, ok = false;

	curs_set(1);
	while (!done) {
		wint_t wc;
		int kind;

		prompt_draw(t, label, buf);
		kind = get_wch(&wc);
		if (kind == ERR)
			continue;
		if (kind == KEY_CODE_YES) {
			if (wc == KEY_BACKSPACE)
				prompt_backspace(buf);
			else if (wc == KEY_ENTER)
				done = ok = true;
			continue;
		}
		if (wc == '\n' || wc == '\r')
			done = ok = true;
		else if (wc == 27 || wc == 7) /* Esc, ^G */
			done = true;
		else if (wc == 127 || wc == 8)
			prompt_backspace(buf);
		else if (wc == 21) /* ^U */
			buf[0] = '\0';
		else
			prompt_append(t, buf, size, wc);
	}
	curs_set(0);
	return ok;
}

static const char *const help_lines[] = {
    "scope-profiler tui: keys",
    "",
    "  Tab / S-Tab, 1-5  switch pane (Summary, Call tree, Ranks, Metadata, Timeline)",
    "  Up/Down, j/k      move      PgUp/PgDn, Home/End, g/G  page, first, last",
    "  Enter             expand/collapse a tree node (Summary, Call tree);",
    "                    open the region's Ranks (Summary leaf); pick a rank (Ranks)",
    "  Right/l, Left/h   expand / collapse (trees); pan (Timeline)",
    "  +/-, 0            zoom in / out / reset (Timeline)",
    "  /                 filter regions by regex (as --include; empty clears)",
    "  s / S             next / previous sort key (Summary); sort (Ranks)",
    "  r                 choose the rank (number, or 'all' / empty)",
    "  t                 next thread lane (Call tree, Timeline)",
    "  e                 export the current pane's rows to CSV",
    "  ?                 this help          q  quit",
    "",
    "Press any key to return.",
};

/*
 * ncurses notices SIGWINCH when getch checks its flag, before it blocks in
 * read(): a resize signalled in between (a loaded machine preempting right
 * there) would leave the old screen up until the next key. So wait at most
 * 250 ms at a time: the next call sees the flag, and a size that changed
 * with no signal seen at all is applied here (a second KEY_RESIZE, if
 * ncurses queues one too, only redraws once more).
 */
int tui_getch(void)
{
	for (;;) {
		struct winsize ws;
		int ch;

		timeout(250);
		ch = getch();
		timeout(-1);
		if (ch != ERR)
			return ch;
		if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_row > 0 &&
		    ws.ws_col > 0 && (ws.ws_row != LINES || ws.ws_col != COLS)) {
			resizeterm(ws.ws_row, ws.ws_col);
			return KEY_RESIZE;
		}
	}
}

void tui_help(struct tui *t)
{
	size_t n = sizeof(help_lines) / sizeof(help_lines[0]);
	int w = 0, h = (int)n + 2, y0, x0;

	for (size_t i = 0; i < n; i++) {
		int lw = tui_width(t, help_lines[i]);

		w = lw > w ? lw : w;
	}
	w += 4;
	for (;;) {
		y0 = LINES > h ? (LINES - h) / 2 : 0;
		x0 = COLS > w ? (COLS - w) / 2 : 0;
		for (int y = 0; y < h && y0 + y < LINES; y++) {
			const char *s = y > 0 && y <= (int)n ? help_lines[y - 1] : "";

			attrset(y == 0 || y == h - 1 ? A_REVERSE : A_NORMAL);
			tui_put(t, y0 + y, x0, COLS - x0, "  ", false);
			tui_put(t, y0 + y, x0 + 2, w - 2 < COLS - x0 - 2 ? w - 2 : COLS - x0 - 2, s,
				true);
			if (y == 1)
				mvchgat(y0 + y, x0 + 2, w - 2, A_BOLD, 0, NULL);
		}
		attrset(A_NORMAL);
		refresh();
		if (tui_getch() != KEY_RESIZE)
			break;
		clear();
	}
}

bool tui_cursor_key(struct tui_cursor *c, int ch, size_t n, int height)
{
	size_t page = height > 1 ? (size_t)height - 1 : 1;

	switch (ch) {
	case KEY_UP:
	case 'k':
		if (c->cur > 0)
			c->cur--;
		break;
	case KEY_DOWN:
	case 'j':
		if (c->cur + 1 < n)
			c->cur++;
		break;
	case KEY_PPAGE:
		c->cur = c->cur > page ? c->cur - page : 0;
		break;
	case KEY_NPAGE:
	case ' ':
		c->cur = c->cur + page < n ? c->cur + page : (n ? n - 1 : 0);
		break;
	case KEY_HOME:
	case 'g':
		c->cur = 0;
		break;
	case KEY_END:
	case 'G':
		c->cur = n ? n - 1 : 0;
		break;
	default:
		return false;
	}
	tui_cursor_fix(c, n, height);
	return true;
}

void tui_cursor_fix(struct tui_cursor *c, size_t n, int height)
{
	size_t h = height > 0 ? (size_t)height : 1;

	if (c->cur >= n)
		c->cur = n ? n - 1 : 0;
	if (c->cur < c->top)
		c->top = c->cur;
	if (c->cur >= c->top + h)
		c->top = c->cur - h + 1;
	if (c->top + h > n)
		c->top = n > h ? n - h : 0;
}

void tui_fmt(char *buf, size_t size, const char *fmt, double v)
{
	if (isnan(v))
		snprintf(buf, size, "-");
	else
		snprintf(buf, size, fmt, v);
}

void tui_csv_field(FILE *f, bool first, const char *s)
{
	if (!first)
		fputc(',', f);
	if (!strpbrk(s, ",\"\n\r")) {
		fputs(s, f);
		return;
	}
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

void tui_csv_double(FILE *f, double v)
{
	if (isnan(v) || isinf(v))
		fputs(",", f);
	else
		fprintf(f, ",%.9g", v);
}
