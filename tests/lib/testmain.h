/* SPDX-License-Identifier: LGPL-2.1-or-later */
/**
 * @file testmain.h
 * @brief Run a Check suite with TAP output on stdout (read by automake's tap-driver).
 */
#ifndef GB_TEST_MAIN_H
#define GB_TEST_MAIN_H

#include <check.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

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

/**
 * In a child the test forks and may SIGKILL at any moment: its assertions must not
 * write to Check's message file. Every assertion that passes writes a record there,
 * and a kill between the two halves of one that crosses a page leaves half a record,
 * which breaks the whole test's report ("Bad message type"). The file is the only
 * unlinked regular file among the low fds; it is pointed at /dev/null. The parent
 * checks what the child did from outside, as the kill demands anyway.
 */
static inline void gb_test_child_unreported(void)
{
	int null = open("/dev/null", O_WRONLY | O_CLOEXEC);

	for (int fd = 3; null >= 0 && fd < 64; fd++) {
		struct stat st;

		if (fd != null && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_nlink == 0)
			dup2(null, fd);
	}
	if (null >= 0)
		close(null);
}

#endif
