/* SPDX-License-Identifier: MIT */
/*
 * The end of every Check unit test's main(): run the suite, free the
 * runner, and exit with the failures' status. Check's own fork mode stands
 * (CK_FORK=no in the environment runs in one process, for a debugger)
 * unless the test needs no fork (nofork: its tests share the process's
 * state on purpose).
 */
#ifndef SP_TESTS_CHECK_MAIN_H
#define SP_TESTS_CHECK_MAIN_H

#include <check.h>
#include <stdbool.h>
#include <stdlib.h>

static inline int sp_check_run(Suite *s, bool nofork)
{
	SRunner *sr = srunner_create(s);
	if (nofork)
		srunner_set_fork_status(sr, CK_NOFORK);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

#endif /* SP_TESTS_CHECK_MAIN_H */
