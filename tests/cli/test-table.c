/* SPDX-License-Identifier: MIT */
/*
 * The CLI table module (tools/cli/table.c): escaping of control characters
 * and invalid UTF-8, duration units, the style from the environment, tree
 * glyphs (UTF-8 and ASCII) in the name column only, numeric columns that
 * stay aligned whatever the depth, middle elision, the marker legend.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "table.h"
#include "check-main.h"

static char *print(struct tbl *t)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	tbl_print(t, f);
	fclose(f);
	return buf;
}

static void esc_is(const char *in, const char *want)
{
	char out[256];

	tbl_escape(out, sizeof out, in);
	ck_assert_msg(strcmp(out, want) == 0, "escape of %s: \"%s\", want \"%s\"", want, out, want);
}

START_TEST(test_escape)
{
	esc_is("plain", "plain");
	esc_is("a\x1b[31mred", "a\\x1b[31mred");
	esc_is("\x1b]0;pwned\x07", "\\x1b]0;pwned\\x07");
	esc_is("cr\rnl\ntab\t", "cr\\rnl\\ntab\\t");
	esc_is("back\\slash", "back\\\\slash");
	esc_is("del\x7f", "del\\x7f");
	esc_is("bad\xff\xfe", "bad\\xff\\xfe");
	esc_is("trunc\xe2\x94", "trunc\\xe2\\x94");
	esc_is("overlong\xc0\xaf", "overlong\\xc0\\xaf");
	esc_is("c1\xc2\x9b", "c1\\u009b");
	esc_is("bidi\xe2\x80\xae", "bidi\\u202e");
	esc_is("µs └─ ok", "µs └─ ok");
	/* Cut at the buffer, never inside an escape. */
	char small[6];
	tbl_escape(small, sizeof small, "ab\x1b");
	ck_assert_str_eq(small, "ab");
}
END_TEST

static void dur_is(double v, bool ascii, const char *want)
{
	char out[64];

	tbl_duration(out, sizeof out, v, ascii);
	ck_assert_msg(strcmp(out, want) == 0, "%g: \"%s\", want \"%s\"", v, out, want);
}

START_TEST(test_duration)
{
	dur_is(1.2345, false, "1.234 s ");
	dur_is(12.3456e-3, false, "12.346 ms");
	dur_is(3e-6, false, "3.000 µs");
	dur_is(3e-6, true, "3.000 us");
	dur_is(250e-9, false, "250 ns");
	dur_is(4e-10, false, "0 ns");
	dur_is(0.0, false, "0 ns");
	dur_is(0.99996, false, "1.000 s ");
	dur_is(0.9994, false, "999.400 ms");
	dur_is(999.6e-9, false, "1.000 µs");
	dur_is(NAN, false, "-");
}
END_TEST

START_TEST(test_style)
{
	struct tbl_style st;

	unsetenv("SCOPE_PROFILER_ASCII");
	unsetenv("LC_ALL");
	unsetenv("LC_CTYPE");
	setenv("LANG", "en_US.UTF-8", 1);
	setenv("SCOPE_PROFILER_COLUMNS", "80", 1);
	tbl_style_init(&st, false, false);
	ck_assert(!st.ascii);
	ck_assert_uint_eq(st.width, 80);
	tbl_style_init(&st, true, true);
	ck_assert(st.ascii);
	ck_assert_uint_eq(st.width, 0);
	setenv("LC_ALL", "C", 1);
	tbl_style_init(&st, false, false);
	ck_assert(st.ascii);
	unsetenv("LC_ALL");
	setenv("SCOPE_PROFILER_ASCII", "1", 1);
	tbl_style_init(&st, false, false);
	ck_assert(st.ascii);
	unsetenv("SCOPE_PROFILER_ASCII");
	unsetenv("LANG");
	tbl_style_init(&st, false, false);
	ck_assert(st.ascii);
	unsetenv("SCOPE_PROFILER_COLUMNS");
}
END_TEST

static struct tbl *tree(bool ascii, size_t width)
{
	struct tbl_style st = { ascii, width };
	struct tbl *t = tbl_create(&st);
	static const struct { int d; const char *name, *n; char mark; } rows[] = {
		{ 0, "main", "1", ' ' }, { 1, "a", "22", ' ' }, { 2, "a_leaf", "333", '*' },
		{ 1, "b_with_a_rather_long_name_to_cut", "4", ' ' }, { 2, "b_leaf", "5", ' ' },
	};

	ck_assert_ptr_nonnull(t);
	ck_assert_int_eq(tbl_column(t, "name", TBL_LEFT, true), 0);
	ck_assert_int_eq(tbl_column(t, "calls", TBL_RIGHT, false), 1);
	tbl_legend(t, '*', "throttled");
	tbl_legend(t, '~', "estimated (unused: not printed)");
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		ck_assert_int_eq(tbl_row(t, rows[i].d, rows[i].mark), 0);
		tbl_cell(t, 0, rows[i].name);
		tbl_cell(t, 1, rows[i].n);
	}
	return t;
}

START_TEST(test_tree_utf8)
{
	struct tbl *t = tree(false, 0);
	char *out = print(t);

	ck_assert_str_eq(out,
		"name                                   calls\n"
		"─────────────────────────────────────  ─────\n"
		"main                                       1\n"
		"├─ a                                      22\n"
		"│  └─ a_leaf                        *    333\n"
		"└─ b_with_a_rather_long_name_to_cut        4\n"
		"   └─ b_leaf                               5\n"
		"* throttled\n");
	free(out);
	tbl_destroy(t);
}
END_TEST

START_TEST(test_tree_ascii_elided)
{
	struct tbl *t = tree(true, 30);
	char *out = print(t);

	/* 30 columns: 2 + 2 (mark) + 5 (calls) leave 21 for the name. */
	ck_assert_str_eq(out,
		"name                     calls\n"
		"-----------------------  -----\n"
		"main                         1\n"
		"|- a                        22\n"
		"|  `- a_leaf          *    333\n"
		"`- b_with_a..._to_cut        4\n"
		"   `- b_leaf                 5\n"
		"* throttled\n");
	free(out);
	tbl_destroy(t);
}
END_TEST

START_TEST(test_hostile_cells)
{
	struct tbl_style st = { false, 0 };
	struct tbl *t = tbl_create(&st);
	char *out;

	tbl_column(t, "name", TBL_LEFT, true);
	tbl_row(t, 0, ' ');
	tbl_cell(t, 0, "x\x1b]0;pwned\x07y\n\r");
	/* 100k levels: the indentation is summarised, not 300k columns. */
	tbl_row(t, 100000, ' ');
	tbl_cell(t, 0, "deep");
	out = print(t);
	ck_assert_ptr_null(strchr(out, '\x1b'));
	ck_assert_ptr_null(strchr(out, '\r'));
	ck_assert_ptr_nonnull(strstr(out, "x\\x1b]0;pwned\\x07y\\n\\r\n"));
	ck_assert_ptr_nonnull(strstr(out, "[100000] └─ deep"));
	ck_assert_uint_lt(strlen(out), 1000);
	free(out);
	tbl_destroy(t);
}
END_TEST

START_TEST(test_deep_rows_fit)
{
	struct tbl_style st = { false, 40 };
	struct tbl *t = tbl_create(&st);
	char *out, *save = NULL;

	tbl_column(t, "name", TBL_LEFT, true);
	tbl_column(t, "calls", TBL_RIGHT, false);
	for (int d = 0; d < 40; d++) {
		tbl_row(t, d, ' ');
		tbl_cellf(t, 0, "function_at_depth_%d", d);
		tbl_cellf(t, 1, "%d", d);
	}
	out = print(t);
	for (char *l = strtok_r(out, "\n", &save); l; l = strtok_r(NULL, "\n", &save))
		ck_assert_msg(tbl_display_width(l) <= 40, "wider than 40: \"%s\"", l);
	free(out);
	tbl_destroy(t);
}
END_TEST

static Suite *table_suite(void)
{
	Suite *s = suite_create("table");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_escape);
	tcase_add_test(tc, test_duration);
	tcase_add_test(tc, test_style);
	tcase_add_test(tc, test_tree_utf8);
	tcase_add_test(tc, test_tree_ascii_elided);
	tcase_add_test(tc, test_hostile_cells);
	tcase_add_test(tc, test_deep_rows_fit);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return sp_check_run(table_suite(), false);
}
