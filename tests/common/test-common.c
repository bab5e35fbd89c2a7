/* SPDX-License-Identifier: MIT */
/*
 * common/: the hash map against a plain list of what was put (keys chosen to
 * collide in the low bits, key 0 and UINT64_MAX included), and the growable
 * array's growth, contents and refusal of impossible sizes.
 */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "sp-array.h"
#include "sp-map.h"
#include "check-main.h"

#define N 20000

/* Keys that share their low 32 bits (parent << 32 | region style). */
static uint64_t key_of(size_t i)
{
	return ((uint64_t)i << 32) | 7u;
}

START_TEST(test_map_put_find)
{
	struct sp_map m = { 0 };
	ck_assert_ptr_null(sp_map_find(&m, 1));
	ck_assert_ptr_null(sp_map_find(&m, 0));
	for (size_t i = 0; i < N; i++)
		ck_assert_int_eq(sp_map_put(&m, key_of(i), (uint32_t)(i * 3)), 0);
	ck_assert_int_eq(sp_map_put(&m, 0, 11), 0);
	ck_assert_int_eq(sp_map_put(&m, UINT64_MAX, 12), 0);
	ck_assert_uint_eq(m.n, N + 2);
	ck_assert_uint_le(2 * m.n, m.cap); /* load factor <= 1/2 */
	for (size_t i = 0; i < N; i++) {
		uint32_t *v = sp_map_find(&m, key_of(i));
		ck_assert_ptr_nonnull(v);
		ck_assert_uint_eq(*v, i * 3);
		ck_assert_ptr_null(sp_map_find(&m, key_of(i) + 1)); /* absent neighbour */
	}
	ck_assert_uint_eq(*sp_map_find(&m, 0), 11);
	ck_assert_uint_eq(*sp_map_find(&m, UINT64_MAX), 12);

	/* Replacing keeps the count. */
	ck_assert_int_eq(sp_map_put(&m, key_of(5), 99), 0);
	ck_assert_int_eq(sp_map_put(&m, 0, 13), 0);
	ck_assert_uint_eq(m.n, N + 2);
	ck_assert_uint_eq(*sp_map_find(&m, key_of(5)), 99);
	ck_assert_uint_eq(*sp_map_find(&m, 0), 13);

	sp_map_free(&m);
	ck_assert_uint_eq(m.n, 0);
	ck_assert_ptr_null(sp_map_find(&m, key_of(5)));
	ck_assert_ptr_null(sp_map_find(&m, 0));
	ck_assert_int_eq(sp_map_put(&m, key_of(5), 1), 0); /* usable after free */
	ck_assert_uint_eq(*sp_map_find(&m, key_of(5)), 1);
	sp_map_free(&m);
	sp_map_free(NULL);
}
END_TEST

START_TEST(test_map_reserve)
{
	struct sp_map m = { 0 };
	ck_assert_int_eq(sp_map_reserve(&m, 1000), 0);
	size_t cap = m.cap;
	ck_assert_uint_ge(cap, 2000);
	ck_assert_uint_eq(cap & (cap - 1), 0); /* power of 2 */
	for (uint64_t k = 1; k <= 1000; k++)
		ck_assert_int_eq(sp_map_put(&m, k, (uint32_t)k), 0);
	ck_assert_uint_eq(m.cap, cap); /* no growth within the reservation */
	for (uint64_t k = 1; k <= 1000; k++)
		ck_assert_uint_eq(*sp_map_find(&m, k), k);
	ck_assert_int_eq(sp_map_reserve(&m, SIZE_MAX / 2), -ENOMEM);
	ck_assert_uint_eq(*sp_map_find(&m, 500), 500);
	sp_map_free(&m);
}
END_TEST

START_TEST(test_array_reserve)
{
	int *a = NULL;
	size_t n = 0, cap = 0;
	ck_assert_int_eq(SP_ARRAY_RESERVE(a, cap, 1, 8), 0);
	ck_assert_uint_eq(cap, 8);
	for (int i = 0; i < 1000; i++) {
		ck_assert_int_eq(SP_ARRAY_RESERVE(a, cap, n + 1, 8), 0);
		a[n++] = i * i;
	}
	ck_assert_uint_eq(cap, 1024); /* 8 doubled up to >= 1000 */
	for (int i = 0; i < 1000; i++)
		ck_assert_int_eq(a[i], i * i);
	/* Already room: nothing changes. */
	int *before = a;
	ck_assert_int_eq(SP_ARRAY_RESERVE(a, cap, 1024, 8), 0);
	ck_assert_ptr_eq(a, before);
	/* One jump to the next power of 2 times the capacity. */
	ck_assert_int_eq(SP_ARRAY_RESERVE(a, cap, 5000, 8), 0);
	ck_assert_uint_eq(cap, 8192);
	ck_assert_int_eq(a[999], 999 * 999);
	/* Impossible sizes fail and leave the array alone. */
	ck_assert_int_eq(SP_ARRAY_RESERVE(a, cap, SIZE_MAX, 8), -ENOMEM);
	ck_assert_int_eq(SP_ARRAY_RESERVE(a, cap, SIZE_MAX / 2, 8), -ENOMEM);
	ck_assert_uint_eq(cap, 8192);
	ck_assert_int_eq(a[999], 999 * 999);
	free(a);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("common");
	TCase *tc = tcase_create("containers");
	tcase_add_test(tc, test_map_put_find);
	tcase_add_test(tc, test_map_reserve);
	tcase_add_test(tc, test_array_reserve);
	suite_add_tcase(s, tc);
	return sp_check_run(s, false);
}
