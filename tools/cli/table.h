/* SPDX-License-Identifier: MIT */
/*
 * The one table module of the CLI: columns of text cells, right-aligned
 * numbers, a name column that carries the tree glyphs and is elided in the
 * middle to the terminal width, a marker column with its legend, and every
 * cell escaped so that no control character of a file reaches the terminal.
 * docs/CLI-TABLES.md describes the rules (units, width, ASCII fallback).
 */
#ifndef SP_CLI_TABLE_H
#define SP_CLI_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/** How tables are drawn: chosen once per command by tbl_style_init(). */
struct tbl_style {
	bool ascii;   /* "|-", "`-", "| ", "us", "..." instead of UTF-8 */
	size_t width; /* display columns to fit, 0 = no limit (elide nothing) */
};

/**
 * The style from the options and the environment.
 * ASCII when force_ascii, SCOPE_PROFILER_ASCII=1, or the first set of
 * LC_ALL, LC_CTYPE, LANG does not name UTF-8 (unset: ASCII).
 * Width: 0 with wide; else SCOPE_PROFILER_COLUMNS when set (tests: as if
 * stdout were a terminal of that width); else, when stdout is a terminal,
 * its TIOCGWINSZ width, else $COLUMNS, else 80; not a terminal: 0.
 */
void tbl_style_init(struct tbl_style *st, bool force_ascii, bool wide);

/**
 * Escape s into out (NUL-terminated, cut at size): printable UTF-8 is
 * kept, "\n" "\r" "\t" are shown as those two characters, other control
 * bytes (C0, DEL, C1 code points) and bytes of invalid UTF-8 as "\xNN".
 * @return the length written.
 */
size_t tbl_escape(char *out, size_t size, const char *s);

/**
 * A duration in seconds with a unit chosen per value: "1.235 s",
 * "12.346 ms", "3.000 us" (µs in UTF-8), "250 ns"; "-" for NaN.
 * The unit takes two columns ("s " has a trailing space), so that the
 * decimal points of a right-aligned column line up.
 */
void tbl_duration(char *out, size_t size, double seconds, bool ascii);

/** Display columns of a UTF-8 string (one per code point). */
size_t tbl_display_width(const char *s);

struct tbl;

enum tbl_align { TBL_LEFT = 0, TBL_RIGHT = 1 };

/** @return a new empty table, or NULL without memory. */
struct tbl *tbl_create(const struct tbl_style *st);
/** Free a table. Accepts NULL. */
void tbl_destroy(struct tbl *t);

/**
 * Add a column. The first column added with tree = true is the name
 * column: it carries the tree glyphs of each row's depth and is the one
 * elided to the width. @return its index, or -1 (no memory, too many).
 */
int tbl_column(struct tbl *t, const char *header, enum tbl_align align, bool tree);

/**
 * Start a row at a tree depth (0 = top; ignored without a tree column).
 * mark: ' ' none, else a one-character marker shown after the name
 * column ('*', '~'); the marker column exists when a row has one.
 * @return 0 or -ENOMEM.
 */
int tbl_row(struct tbl *t, int depth, char mark);
/** Set cell col of the current row to s (escaped). @return 0 or -ENOMEM. */
int tbl_cell(struct tbl *t, int col, const char *s);
/** Printf-style tbl_cell. */
int tbl_cellf(struct tbl *t, int col, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/** The legend printed under the table when a row has mark ('\n' starts a
 * continuation line, indented under the text). */
int tbl_legend(struct tbl *t, char mark, const char *text);

/** Print the table (header, rule, rows, legend of the used marks). */
void tbl_print(struct tbl *t, FILE *f);

#endif /* SP_CLI_TABLE_H */
