/* SPDX-License-Identifier: MIT */
/*
 * cli_catch_sigbus(): touching a mapped page that a truncation took away
 * ends the process with status 2 (the CLI's status for unreadable input)
 * instead of a crash; a SIGBUS of any other cause keeps the default action.
 */
#include <check.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cli-sigbus.h"
#include "check-main.h"

START_TEST(truncated_mapping_exits_2)
{
	char path[] = "/tmp/sp-sigbus-XXXXXX";
	int fd = mkstemp(path);
	char page[4096] = { 1 };
	volatile const char *p;
	char v;

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, page, sizeof(page)), (ssize_t)sizeof(page));
	p = mmap(NULL, sizeof(page), PROT_READ, MAP_PRIVATE, fd, 0);
	ck_assert(p != MAP_FAILED);
	ck_assert_int_eq(p[0], 1);
	cli_catch_sigbus();
	ck_assert_int_eq(ftruncate(fd, 0), 0);
	unlink(path);
	v = p[0]; /* SIGBUS: the handler exits with 2 */
	(void)v;
}
END_TEST

START_TEST(other_sigbus_keeps_default)
{
	cli_catch_sigbus();
	raise(SIGBUS); /* si_code SI_USER: not a lost page */
}
END_TEST

int main(void)
{
	Suite *s = suite_create("sigbus");
	TCase *tc = tcase_create("sigbus");

	tcase_add_exit_test(tc, truncated_mapping_exits_2, 2);
	tcase_add_test_raise_signal(tc, other_sigbus_keeps_default, SIGBUS);
	suite_add_tcase(s, tc);
	return sp_check_run(s, false);
}
