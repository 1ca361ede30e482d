/* SPDX-License-Identifier: LGPL-2.1-or-later */
/**
 * @file testmain.h
 * @brief Run a Check suite with TAP output on stdout (read by automake's tap-driver).
 */
#ifndef GB_TEST_MAIN_H
#define GB_TEST_MAIN_H

#include <check.h>
#include <stdlib.h>

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
