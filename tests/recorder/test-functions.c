/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the function-region support behind the hooks: symbol
 * resolution of this binary's own (static) functions, demangling, the
 * filters' re.match semantics, and the filtered enter/exit paths (throttle,
 * min-duration, max-depth, longjmp-style unwinding) with exact counts.
 */
#include <dlfcn.h>
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "functions.h"
#include "snapshot.h"
#include "check-main.h"

/* Stand-ins for instrumented functions: only their addresses are used. */
static const int fn_alpha_line = __LINE__ + 1;
__attribute__((noinline, used)) static int fn_alpha(int x)
{
	return x + 1;
}

__attribute__((noinline, used)) static int fn_beta(int x)
{
	return x * 2;
}

__attribute__((noinline, used)) static int fn_gamma(int x)
{
	return x - 3;
}

static void start(const char *const *env)
{
	static const char *const vars[] = { "INCLUDE", "EXCLUDE", "MIN_DURATION", "MAX_DEPTH",
					     "THROTTLE_CALLS", "THROTTLE_MEAN", "THROTTLE_TIMING",
					     "THROTTLE_SAMPLE" };
	for (size_t i = 0; i < sizeof vars / sizeof *vars; i++) {
		char name[64] = "SCOPE_PROFILER_";
		strcat(name, vars[i]);
		unsetenv(name);
	}
	/* These tests drive the filtered paths directly (no hooks), so the
	 * default auto-throttle is off unless a test asks for it. */
	setenv("SCOPE_PROFILER_THROTTLE_CALLS", "0", 1);
	for (; env && *env; env += 2)
		setenv(env[0], env[1], 1);
	sp_config_load();
	ck_assert_int_eq(sp_recorder_start(), 0);
}

static uint32_t region_of(struct sp_fn_thread *h, void *fn)
{
	struct sp_fn_entry *e = sp_fn_cache_fill(h, (uintptr_t)fn);
	ck_assert_ptr_nonnull(e);
	return e->region;
}

static const struct sp_snap_row *row_named(const struct sp_snapshot *s, const char *name)
{
	for (uint32_t i = 0; i < s->nrows; i++)
		if (strcmp(s->names[s->rows[i].region], name) == 0)
			return &s->rows[i];
	return NULL;
}

START_TEST(test_resolve_static_function)
{
	int m = sp_sym_module_of((uintptr_t)fn_alpha);
	ck_assert_int_ge(m, 0);
	struct sp_symbol sym;
	ck_assert_int_eq(sp_sym_resolve(m, (uintptr_t)fn_alpha, true, &sym), 0);
	ck_assert_str_eq(sym.name, "fn_alpha");
	ck_assert_ptr_nonnull(sym.file);
	ck_assert_ptr_nonnull(strstr(sym.file, "test-functions.c"));
	ck_assert_int_eq(sym.file[0], '/');
	ck_assert_int_eq(sym.line, fn_alpha_line);
	sp_sym_free(&sym);

	/* Not a function of the module: "module+0xoffset", never a failure. */
	ck_assert_int_eq(sp_sym_resolve(m, (uintptr_t)fn_alpha + 0x40000000, false, &sym), 0);
	ck_assert_ptr_nonnull(strstr(sym.name, "test-functions+0x"));
	sp_sym_free(&sym);
	ck_assert_int_eq(sp_sym_resolve(-1, 0x1234, false, &sym), 0);
	ck_assert_str_eq(sym.name, "unknown+0x1234");
	sp_sym_free(&sym);
	sp_sym_close_all();
}
END_TEST

/*
 * The by-address symbol index names every address where a symbol starts as
 * libdwfl's own lookup does: this test program (local and global
 * functions), libc (weak and global aliases at one address, .dynsym only)
 * and libstdc++ (C1/C2 constructor aliases, weak template instances).
 */
START_TEST(test_symbol_index_matches_libdwfl)
{
	void *cxx = dlopen("libstdc++.so.6", RTLD_NOW | RTLD_LOCAL);
	const uintptr_t in[] = {
		(uintptr_t)fn_alpha, (uintptr_t)&printf,
		cxx ? (uintptr_t)dlsym(cxx, "__cxa_demangle") : 0,
	};
	for (size_t i = 0; i < sizeof in / sizeof in[0]; i++) {
		if (!in[i])
			continue;
		int m = sp_sym_module_of(in[i]);
		ck_assert_int_ge(m, 0);
		size_t checked = 0;
		ck_assert_int_eq(sp_sym_check_index(m, &checked), 0);
		ck_assert_uint_gt(checked, i == 0 ? 5 : 500);
	}
	sp_sym_close_all();
	if (cxx)
		dlclose(cxx);
}
END_TEST

START_TEST(test_demangle)
{
	static const char *const cases[][2] = {
		{ "plain_c", "plain_c" },
		{ "compute.constprop.0", "compute" },
		{ "kernel.isra.0.cold", "kernel" },
		{ "_ZN3geo6detail5scaleEi", "geo::detail::scale(int)" },
		{ "_ZN3geo6squareIiEET_S1_", "geo::square<int>(int)" },
		{ "_ZNK3geo4Rect4areaEv", "geo::Rect::area() const" },
		{ "_ZN3geo7apply_nIZ4mainEUliE_EEiiT_",
		  "geo::apply_n<main::{lambda(int)#1}>(int, main::{lambda(int)#1})" },
		{ "_ZZ4mainENKUliE_clEi", "main::{lambda(int)#1}::operator()(int) const" },
		{ "_ZN12_GLOBAL__N_13fooEv", "(anonymous namespace)::foo()" },
		{ "_ZN3geoltIiEEbRKT_S3_", "geo::operator< <int>(int const&, int const&)" },
		{ "_ZN3geo6squareIiEET_S1_.constprop.0", "geo::square<int>(int)" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		char *d = sp_sym_demangle(cases[i][0]);
		ck_assert_str_eq(d, cases[i][1]);
		free(d);
	}
}
END_TEST

START_TEST(test_filter_re_match)
{
	ck_assert_int_eq(sp_filter_set("geo::|main$", "geo::detail::"), 0);
	ck_assert(sp_filter_active());
	ck_assert(sp_filter_accepts("geo::square<int>(int)"));
	ck_assert(!sp_filter_accepts("geo::detail::scale(int)"));
	ck_assert(sp_filter_accepts("main"));
	ck_assert(!sp_filter_accepts("xgeo::f()"));   /* anchored at the start */
	ck_assert(!sp_filter_accepts("domain"));      /* ... like re.match */
	ck_assert(sp_filter_accepts("geo::x_and_more")); /* not at the end */
	ck_assert_int_eq(sp_filter_set(NULL, "fib"), 0);
	ck_assert(sp_filter_accepts("main"));
	ck_assert(!sp_filter_accepts("fibonacci"));
	ck_assert_int_eq(sp_filter_set("", ""), 0);
	ck_assert(!sp_filter_active());
	ck_assert_int_lt(sp_filter_set("(", NULL), 0);
	sp_filter_free();
}
END_TEST

START_TEST(test_exclude_gets_no_region)
{
	static const char *const env[] = { "SCOPE_PROFILER_EXCLUDE", "fn_b", NULL };
	start(env);
	struct sp_fn_thread *h = sp_fn_thread_attach();
	ck_assert_ptr_nonnull(h);
	ck_assert_uint_eq(region_of(h, fn_beta), SP_NO_REGION);
	uint32_t a = region_of(h, fn_alpha);
	ck_assert_uint_ne(a, SP_NO_REGION);
	ck_assert_uint_eq(region_of(h, fn_alpha), a); /* stable */
	ck_assert_uint_eq(sp_region_count(), 1);      /* fn_beta never became a region */
}
END_TEST

/* Throttle: the first N calls are events, the rest counted; all exact. */
START_TEST(test_throttle_exact_counts)
{
	static const char *const env[] = { "SCOPE_PROFILER_THROTTLE_CALLS", "25",
					   "SCOPE_PROFILER_THROTTLE_MEAN", "1s",
					   "SCOPE_PROFILER_THROTTLE_TIMING", "exact", NULL };
	start(env);
	struct sp_fn_thread *h = sp_fn_thread_attach();
	ck_assert_uint_eq(sp_fn_mode & ~SP_FN_SLOW_CLOCK, SP_FN_THROTTLE);
	uint32_t outer = region_of(h, fn_alpha), leaf = region_of(h, fn_beta);
	sp_fn_enter_filtered(h, outer, SP_FRAME_NOWHERE);
	for (int i = 0; i < 1000; i++) {
		sp_fn_enter_filtered(h, leaf, SP_FRAME_NOWHERE);
		sp_fn_exit_filtered(h, leaf, SP_FRAME_NO_SP);
	}
	sp_fn_exit_filtered(h, outer, SP_FRAME_NO_SP);
	ck_assert_uint_eq(h->t->depth, 0);
	sp_recorder_stop();
	sp_fn_finalize();
	struct sp_snapshot s;
	ck_assert_int_eq(sp_snapshot_take(&s), 0);
	const struct sp_snap_row *rl = row_named(&s, "fn_beta"), *ro = row_named(&s, "fn_alpha");
	ck_assert_ptr_nonnull(rl);
	ck_assert_ptr_nonnull(ro);
	ck_assert_uint_eq(rl->count, 25);
	ck_assert_uint_eq(rl->throttled_calls, 975);
	ck_assert_int_gt(rl->throttled_ns, 0);
	ck_assert_uint_eq(ro->count, 1);
	ck_assert_uint_eq(ro->throttled_calls, 0);
	ck_assert_int_eq(ro->source_line >= 0, 1);
	sp_snapshot_free(&s);
}
END_TEST

/* Min-duration deletes every call (1 h threshold) but counts it; deleted
 * events are rewound, so nothing is left in the buffer. */
START_TEST(test_min_duration_rewinds)
{
	static const char *const env[] = { "SCOPE_PROFILER_MIN_DURATION", "1h", NULL };
	start(env); /* "1h" is invalid: keeps the default 0 */
	ck_assert_int_eq(sp_config.min_duration_ns, 0);
	setenv("SCOPE_PROFILER_MIN_DURATION", "3600s", 1);
	sp_config_load();
	struct sp_fn_thread *h = sp_fn_thread_attach();
	ck_assert_uint_eq(sp_fn_mode & ~SP_FN_SLOW_CLOCK, SP_FN_MIN_DURATION);
	uint32_t a = region_of(h, fn_alpha), b = region_of(h, fn_beta);
	sp_fn_enter_filtered(h, a, SP_FRAME_NOWHERE);
	struct sp_event *pos0 = h->t->pos - 1;
	for (int i = 0; i < 100; i++) {
		sp_fn_enter_filtered(h, b, SP_FRAME_NOWHERE);
		sp_fn_exit_filtered(h, b, SP_FRAME_NO_SP);
	}
	ck_assert_ptr_eq(h->t->pos - 1, pos0); /* all 100 rewound */
	sp_fn_exit_filtered(h, a, SP_FRAME_NO_SP);
	sp_recorder_stop();
	sp_fn_finalize();
	struct sp_snapshot s;
	ck_assert_int_eq(sp_snapshot_take(&s), 0);
	ck_assert_uint_eq(s.nevents, 0);
	ck_assert_uint_eq(row_named(&s, "fn_beta")->throttled_calls, 100);
	ck_assert_uint_eq(row_named(&s, "fn_alpha")->throttled_calls, 1);
	sp_snapshot_free(&s);
}
END_TEST

START_TEST(test_max_depth)
{
	static const char *const env[] = { "SCOPE_PROFILER_MAX_DEPTH", "2", NULL };
	start(env);
	struct sp_fn_thread *h = sp_fn_thread_attach();
	uint32_t a = region_of(h, fn_alpha);
	for (int i = 0; i < 5; i++) /* recursion 5 deep: 2 recorded, 3 counted */
		sp_fn_enter_filtered(h, a, SP_FRAME_NOWHERE);
	for (int i = 0; i < 5; i++)
		sp_fn_exit_filtered(h, a, SP_FRAME_NO_SP);
	sp_recorder_stop();
	sp_fn_finalize();
	struct sp_snapshot s;
	ck_assert_int_eq(sp_snapshot_take(&s), 0);
	ck_assert_uint_eq(row_named(&s, "fn_alpha")->count, 2);
	ck_assert_uint_eq(row_named(&s, "fn_alpha")->throttled_calls, 3);
	sp_snapshot_free(&s);
}
END_TEST

/* An exit that skips frames (longjmp) closes them; a stray exit is
 * ignored and never underflows the stack. */
START_TEST(test_unwind_skipped_frames)
{
	start(NULL);
	struct sp_fn_thread *h = sp_fn_thread_attach();
	ck_assert_uint_eq(sp_fn_mode & ~SP_FN_SLOW_CLOCK, 0);
	uint32_t a = region_of(h, fn_alpha), b = region_of(h, fn_beta), c = region_of(h, fn_gamma);
	sp_rec_enter_thread(h->t, a);
	sp_rec_enter_thread(h->t, b);
	sp_rec_enter_thread(h->t, c);
	sp_fn_exit_unwind(h, a, sp_ticks(), SP_FRAME_NO_SP); /* b and c were longjmp'ed over */
	ck_assert_uint_eq(h->t->depth, 0);
	sp_fn_exit_unwind(h, b, sp_ticks(), SP_FRAME_NO_SP);
	ck_assert_uint_eq(h->t->depth, 0);
	sp_recorder_stop();
	sp_fn_finalize();
	struct sp_snapshot s;
	ck_assert_int_eq(sp_snapshot_take(&s), 0);
	ck_assert_uint_eq(s.nevents, 3);
	const struct sp_snap_row *ra = row_named(&s, "fn_alpha"), *rc = row_named(&s, "fn_gamma");
	ck_assert_int_ge(s.end[ra->offset], s.end[rc->offset]);
	ck_assert_int_ge(s.start[rc->offset], s.start[ra->offset]);
	sp_snapshot_free(&s);
}
END_TEST

/*
 * Names once per node (functions.h): this process both lists its unnamed
 * functions and answers the list, as the node's answering rank would. Every
 * prefix of the list and of the answers (a short message) and lists with
 * counts past their bytes are taken without a fault; the names then
 * applied, from a truncated answer or in full, equal the local resolution.
 */
START_TEST(test_names_share)
{
	start(NULL);
	struct sp_fn_thread *h = sp_fn_thread_attach();
	uint32_t a = region_of(h, fn_alpha), b = region_of(h, fn_beta), g = region_of(h, fn_gamma);
	sp_recorder_stop();
	sp_fn_defer_names();
	sp_fn_finalize();
	ck_assert_ptr_null(sp_region_get(a)->name); /* deferred: nothing named yet */
	char *req = NULL;
	size_t len = 0;
	ck_assert_int_eq(sp_fn_names_request(&req, &len), 0);
	ck_assert_uint_gt(len, 3 * 12);
	size_t alen = 0;
	char *ans = sp_fn_names_answer(req, len, &alen);
	ck_assert_ptr_nonnull(ans);
	for (size_t k = 0; k < len; k++) { /* every short list */
		size_t n = 0;
		free(sp_fn_names_answer(req, k, &n));
	}
	char *bad = malloc(len);
	memcpy(bad, req, len);
	memset(bad, 0xff, 4); /* a module count past the bytes */
	size_t n = 0;
	free(sp_fn_names_answer(bad, len, &n));
	memcpy(bad, req, len);
	for (size_t k = 4; k + 4 <= len; k++) { /* a count or length of 0xffffffff anywhere */
		memcpy(bad, req, len);
		memset(bad + k, 0xff, 4);
		free(sp_fn_names_answer(bad, len, &n));
	}
	free(bad);
	/* a short answer: its whole entries (the first of three, ~80 bytes each) */
	sp_fn_names_apply(ans, alen / 2);
	int named = !!sp_region_get(a)->name + !!sp_region_get(b)->name + !!sp_region_get(g)->name;
	ck_assert_int_eq(named, 1);
	sp_fn_names_apply(ans, alen); /* then all: from the answers, not resolved here */
	const struct sp_region *ra = sp_region_get(a);
	ck_assert_str_eq(ra->name, "fn_alpha");
	ck_assert_int_eq(ra->source_line, fn_alpha_line);
	ck_assert_ptr_nonnull(strstr(ra->source_file, "test-functions.c"));
	ck_assert_str_eq(sp_region_get(b)->name, "fn_beta");
	ck_assert_str_eq(sp_region_get(g)->name, "fn_gamma");
	ck_assert_int_eq(sp_region_get(g)->source_line, fn_alpha_line + 10);
	char *again = (char *)"x";
	size_t again_len = 1;
	ck_assert_int_eq(sp_fn_names_request(&again, &again_len), 0);
	ck_assert_ptr_null(again); /* every function named: nothing to ask */
	ck_assert_uint_eq(again_len, 0);
	sp_fn_names_finish(); /* nothing left to name; the symbolizer closed */
	ck_assert_str_eq(sp_region_get(a)->name, "fn_alpha");
	free(req);
	free(ans);
}
END_TEST

static Suite *functions_suite(void)
{
	Suite *s = suite_create("functions");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_resolve_static_function);
	tcase_add_test(tc, test_symbol_index_matches_libdwfl);
	tcase_add_test(tc, test_demangle);
	tcase_add_test(tc, test_filter_re_match);
	tcase_add_test(tc, test_exclude_gets_no_region);
	tcase_add_test(tc, test_throttle_exact_counts);
	tcase_add_test(tc, test_min_duration_rewinds);
	tcase_add_test(tc, test_max_depth);
	tcase_add_test(tc, test_unwind_skipped_frames);
	tcase_add_test(tc, test_names_share);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return sp_check_run(functions_suite(), false);
}
