/* SPDX-License-Identifier: LGPL-2.1-or-later */
/**
 * @file testmain.h
 * @brief Run a Check suite with TAP output on stdout (read by automake's tap-driver).
 */
#ifndef GB_TEST_MAIN_H
#define GB_TEST_MAIN_H

#include <check.h>
#include <stdlib.h>

/**
 * A test case named @p name, added to @p s, with @p setup and @p teardown
 * (either may be NULL) around each of its tests, run in the test's forked
 * child, and a timeout of @p timeout_s seconds (scale it with gb_slow() where
 * the broker's speed matters). Add its tests with tcase_add_test().
 */
static inline TCase *gb_tcase_new(Suite *s, const char *name, void (*setup)(void), void (*teardown)(void),
				  double timeout_s)
{
	TCase *tc = tcase_create(name);

	if (setup || teardown)
		tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, timeout_s);
	suite_add_tcase(s, tc);
	return tc;
}

/** Run @p s, TAP on stdout; EXIT_SUCCESS if every test passed. */
static inline int gb_run_suite(Suite *s)
{
	SRunner *sr = srunner_create(s);
	int failed;

	srunner_set_tap(sr, "-");
	srunner_run_all(sr, CK_SILENT);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

#endif
