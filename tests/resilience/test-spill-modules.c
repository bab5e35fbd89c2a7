/* SPDX-License-Identifier: MIT */
/*
 * Modules in spill files: MODULE + MODULE_ID records give each function
 * region its module path, bias and build-id; a version-1 file without
 * MODULE_ID still reads (no build-id); a record type this reader does not
 * know is skipped; recover's namer gets the module and the function's
 * address and its file and line reach the snapshot rows; without a name,
 * a function is module+0xoffset, the same for two ranks loaded at
 * different addresses.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "snapshot.h"
#include "sp-spill.h"
#include "spill-read.h"
#include "check-main.h"

static char path[256];
static char buf[1 << 14];
static size_t len;

static void setup(void)
{
	snprintf(path, sizeof path, "/tmp/sp-spill-modules-test-%d", (int)getpid());
	memset(buf, 0, sizeof buf);
	struct sp_spill_header h = { .magic = SP_SPILL_MAGIC, .version = SP_SPILL_VERSION,
				     .header_bytes = sizeof h, .pid = 1, .rank = -1 };
	memcpy(buf, &h, sizeof h);
	len = (sizeof h + 7) & ~(size_t)7;
}

static void teardown(void)
{
	unlink(path);
}

static void put(uint32_t type, const void *a, size_t na, const void *b, size_t nb)
{
	struct sp_spill_rec h = { SP_SPILL_REC_MAGIC, type, (uint32_t)(na + nb), 0 };
	ck_assert_uint_le(len + sizeof h + na + nb, sizeof buf);
	memcpy(buf + len, &h, sizeof h);
	memcpy(buf + len + sizeof h, a, na);
	if (nb)
		memcpy(buf + len + sizeof h + na, b, nb);
	len += (sizeof h + na + nb + 7) & ~(size_t)7;
}

static const unsigned char build_id[20] = { 0xb2, 0xb6, 0xec, 0xde, 0xae, 0x16, 1, 2, 3, 4,
					    5, 6, 7, 8, 9, 10, 11, 12, 13, 14 };

/* Module 0 "/opt/app/bin/solver" at `bias`, function regions at bias +
 * 0x1169 (id 0) and bias + 0x11b5 (id 1), one event each. */
static void put_run(uint64_t bias, bool with_id, bool with_unknown)
{
	const char *p = "/opt/app/bin/solver";
	struct sp_spill_module m = { bias, 0, (uint32_t)strlen(p) };
	put(SP_SPILL_MODULE, &m, sizeof m, p, m.path_bytes);
	if (with_unknown) {
		uint64_t junk[3] = { 7, 8, 9 };
		put(12, junk, sizeof junk, NULL, 0);
	}
	if (with_id) {
		struct sp_spill_module_id id = { 0, sizeof build_id, 0x3000 };
		put(SP_SPILL_MODULE_ID, &id, sizeof id, build_id, sizeof build_id);
	}
	static const uint64_t off[2] = { 0x1169, 0x11b5 };
	for (uint32_t i = 0; i < 2; i++) {
		struct sp_spill_region r = { .id = i, .kind = SP_KIND_FUNCTION,
					     .addr = bias + off[i], .module = 0 };
		put(SP_SPILL_REGION, &r, sizeof r, NULL, 0);
	}
	struct sp_spill_events h = { .first_seq = 0, .n = 2, .tick = 1000, .ns = 1000 };
	struct sp_spill_event ev[2] = { { 10, 50, 0, 0 }, { 20, 30, 1, 0 } };
	put(SP_SPILL_EVENTS, &h, sizeof h, ev, sizeof ev);
}

static void read_back(struct sp_spill_data *d)
{
	FILE *f = fopen(path, "wb");
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(buf, 1, len, f), len);
	fclose(f);
	ck_assert_int_eq(sp_spill_read(path, d), 0);
}

START_TEST(test_module_with_build_id)
{
	put_run(0x55f3c83d6000, true, true);
	struct sp_spill_data d;
	read_back(&d);
	ck_assert_uint_eq(d.nmodules, 1);
	ck_assert_str_eq(d.modules[0].path, "/opt/app/bin/solver");
	ck_assert_uint_eq(d.modules[0].bias, 0x55f3c83d6000);
	ck_assert_uint_eq(d.modules[0].build_id_bytes, sizeof build_id);
	ck_assert_mem_eq(d.modules[0].build_id, build_id, sizeof build_id);
	ck_assert_uint_gt(d.skipped_bytes, 0); /* the unknown record */
	sp_spill_data_free(&d);
}
END_TEST

START_TEST(test_version_1_module)
{
	put_run(0x560545f58000, false, false);
	struct sp_spill_data d;
	read_back(&d);
	ck_assert_uint_eq(d.nmodules, 1);
	ck_assert_uint_eq(d.modules[0].build_id_bytes, 0);
	ck_assert_uint_eq(d.skipped_bytes, 0);
	sp_spill_data_free(&d);
}
END_TEST

static int calls;

static char *namer(const struct sp_spill_mdata *m, uint64_t addr, void *ctx, const char **ret_file,
		   int64_t *ret_line)
{
	ck_assert_ptr_eq(ctx, &calls);
	ck_assert_ptr_nonnull(m);
	calls++;
	if (addr - m->bias != 0x1169)
		return NULL; /* the default name */
	*ret_file = "/src/solver.c";
	*ret_line = 42;
	return strdup("leaf");
}

START_TEST(test_namer_and_default_names)
{
	put_run(0x55f3c83d6000, true, false);
	struct sp_spill_data d;
	read_back(&d);
	struct sp_snapshot s;
	uint64_t unclosed = 0;
	calls = 0;
	ck_assert_int_eq(sp_spill_to_snapshot(&d, namer, &calls, &s, &unclosed), 0);
	ck_assert_int_eq(calls, 2);
	ck_assert_uint_eq(s.nnames, 2);
	ck_assert_uint_eq(s.nrows, 2);
	for (uint32_t i = 0; i < s.nrows; i++) {
		const char *name = s.names[s.rows[i].region];
		if (strcmp(name, "leaf") == 0) {
			ck_assert_str_eq(s.rows[i].source_file, "/src/solver.c");
			ck_assert_int_eq(s.rows[i].source_line, 42);
		} else {
			ck_assert_str_eq(name, "solver+0x11b5");
			ck_assert_ptr_null(s.rows[i].source_file);
			ck_assert_int_eq(s.rows[i].source_line, -1);
		}
	}
	sp_snapshot_free(&s);
	sp_spill_data_free(&d);
	/* Another rank, loaded elsewhere: the same default names. */
	setup();
	put_run(0x560545f58000, true, false);
	read_back(&d);
	ck_assert_int_eq(sp_spill_to_snapshot(&d, NULL, NULL, &s, &unclosed), 0);
	ck_assert_uint_eq(s.nnames, 2);
	ck_assert_str_eq(s.names[0], "solver+0x1169");
	ck_assert_str_eq(s.names[1], "solver+0x11b5");
	sp_snapshot_free(&s);
	sp_spill_data_free(&d);
}
END_TEST

static Suite *modules_suite(void)
{
	Suite *s = suite_create("spill-modules");
	TCase *tc = tcase_create("modules");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_module_with_build_id);
	tcase_add_test(tc, test_version_1_module);
	tcase_add_test(tc, test_namer_and_default_names);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return sp_check_run(modules_suite(), false);
}
