/* SPDX-License-Identifier: MIT */
/*
 * Private interface of `scope-profiler tui`: the shared browser state, the
 * pane table, and the drawing helpers (tui-draw.c) every pane uses. Each pane
 * (tui-summary.c, tui-calltree.c, tui-ranks.c, tui-meta.c, tui-timeline.c)
 * keeps its own state in struct tui and computes it lazily.
 */
#ifndef SP_TUI_H
#define SP_TUI_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "compiler.h"
#include "scope-profiler-reader.h"

#define TUI_ALL_RANKS (-1L)
#define TUI_ALL_LANES INT64_MIN

/* Glyphs: UTF-8 box drawing, or plain ASCII when the locale is not UTF-8. */
struct tui_glyphs {
	const char *open, *closed, *leaf; /* tree node markers */
	const char *sort_mark;		  /* after the sorted column's header */
	const char *hline;
	const char *shade[5];	/* 0, <1/4, <1/2, <9/10, full */
	const char *eighths[9]; /* bar fractions 0/8 .. 8/8 */
	const char *mean_mark;
};

/* Cursor over a list of n rows shown in `height` lines. */
struct tui_cursor {
	size_t cur, top;
};

struct tui;

/* One pane. key() returns true when it used the key. */
struct tui_pane {
	const char *title;
	void (*draw)(struct tui *t, int y, int height);
	bool (*key)(struct tui *t, int ch, int height);
	/* Write the pane's current rows as CSV. Returns rows written or < 0. */
	long (*export_csv)(struct tui *t, FILE *f);
	/* Optional: ready() says whether draw() has what it needs; if not,
	 * prepare() computes it on a worker thread while the screen shows
	 * `busy` (prepare() must not call ncurses). */
	bool (*ready)(const struct tui *t);
	void (*prepare)(struct tui *t);
	const char *busy;
};

enum tui_pane_id { TUI_SUMMARY, TUI_CALLTREE, TUI_RANKS, TUI_META, TUI_TIMELINE, TUI_N_PANES };

struct tui_summary;  /* tui-summary.c */
struct tui_calltree; /* tui-calltree.c */
struct tui_ranks;    /* tui-ranks.c */
struct tui_meta;     /* tui-meta.c */
struct tui_timeline; /* tui-timeline.c */

struct tui {
	struct sp_reader *r;
	const char *path;
	const struct tui_glyphs *g;
	bool utf8;
	enum tui_pane_id pane;
	char filter[256];	    /* include regex ("" = none) */
	long rank;		    /* TUI_ALL_RANKS or a rank */
	int64_t lane;		    /* TUI_ALL_LANES or a thread id */
	struct sp_selection *sel;   /* filter + rank (summary) */
	struct sp_selection *names; /* filter only (call tree, timeline) */
	char *const *excludes;	    /* --exclude patterns, kept in both */
	size_t n_excludes;
	bool has_region; /* region chosen in the summary */
	uint32_t region;
	char msg[512]; /* one-line status message */
	struct tui_summary *summary;
	struct tui_calltree *calltree;
	struct tui_ranks *ranks;
	struct tui_meta *meta;
	struct tui_timeline *timeline;
};

extern const struct tui_pane tui_summary_pane, tui_calltree_pane, tui_ranks_pane, tui_meta_pane,
    tui_timeline_pane;

/* Pane lifecycles (NULL-safe destroy). "reset" drops what depends on the
 * filter, the rank or the lane so it is recomputed when next drawn. */
void tui_summary_destroy(struct tui *t);
void tui_summary_reset(struct tui *t);
void tui_calltree_destroy(struct tui *t);
void tui_calltree_reset(struct tui *t);
void tui_ranks_destroy(struct tui *t);
void tui_ranks_reset(struct tui *t);
void tui_meta_destroy(struct tui *t);
void tui_timeline_destroy(struct tui *t);
void tui_timeline_reset(struct tui *t);

/* Choose the rank (or TUI_ALL_RANKS) and recompute what depends on it. */
void tui_set_rank(struct tui *t, long rank);
/* Name of the Summary pane's sort key. */
const char *tui_summary_sort_name(const struct tui *t);

/* The rank the call tree and the timeline show (the chosen one, else the
 * first rank). Returns -1 when the profile has no rows. */
long tui_single_rank(const struct tui *t);

/* ---- tui-draw.c ----------------------------------------------------- */

const struct tui_glyphs *tui_glyphs(bool utf8);
/* Print s clipped to width columns at (y, x); pad with blanks to width when
 * pad. Returns the columns used. Non-ASCII bytes print as '?' in ASCII mode. */
int tui_put(const struct tui *t, int y, int x, int width, const char *s, bool pad);
/* Like tui_put, right-aligned in width columns. */
void tui_put_right(const struct tui *t, int y, int x, int width, const char *s);
/* Columns of a string as tui_put counts them. */
int tui_width(const struct tui *t, const char *s);
/* printf into a message shown on the status line until the next key. */
void tui_message(struct tui *t, const char *fmt, ...) SP_PRINTF(2, 3);
/* Read a line on the status line. Returns true on Enter, false on Esc. */
bool tui_prompt(struct tui *t, const char *label, char *buf, size_t size);
/* Show the key help until a key is pressed. */
void tui_help(struct tui *t);
/* getch for a key or KEY_RESIZE; never misses a resize (see tui-draw.c). */
int tui_getch(void);

/* Cursor movement keys (arrows, j/k, PgUp/PgDn, Home/End, g/G). */
bool tui_cursor_key(struct tui_cursor *c, int ch, size_t n, int height);
/* Keep cur < n and the cursor inside the window of height lines. */
void tui_cursor_fix(struct tui_cursor *c, size_t n, int height);

/* Seconds formats used in the panes: "-" for NaN. */
void tui_fmt(char *buf, size_t size, const char *fmt, double v);
/* One CSV field (quoted when needed), preceded by a comma unless first. */
void tui_csv_field(FILE *f, bool first, const char *s);
void tui_csv_double(FILE *f, double v);

#endif /* SP_TUI_H */
