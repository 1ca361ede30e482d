/* SPDX-License-Identifier: LGPL-2.1-or-later */
/**
 * @file policy-util.h
 * @brief Test helper: a policy file's text parsed and checked as the loader does, for the
 * policy's unit tests.
 *
 * Inline, as testmain.h is: these call the parser in daemon/libbroker.a, which the unit
 * tests link before libgbtest.a, so a function of libgbtest.a could not find it there.
 */
#ifndef GB_TEST_POLICY_UTIL_H
#define GB_TEST_POLICY_UTIL_H

#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "policy.h"

/**
 * @p text parsed as the file "t.conf", then checked as a whole (gb_policy_finish()):
 * the policy, its messages in *@p errors (NULL if none) and their number in *@p n
 * (< 0: out of memory). The caller frees both.
 */
static inline struct gb_policy *gb_test_policy_parse(const char *text, char **errors, int *n)
{
	struct gb_policy *p = gb_policy_new();

	*errors = NULL;
	*n = gb_policy_parse(p, "t.conf", text, strlen(text), errors);
	if (*n >= 0)
		*n += gb_policy_finish(p, errors);
	return p;
}

/**
 * @p text parsed as gb_test_policy_parse() does, and the policy it makes: an error fails
 * the test, naming the caller's line, the messages and the text.
 */
#define gb_test_policy_valid(text) gb_test_policy_valid_at(__FILE__, __LINE__, (text))
static inline struct gb_policy *gb_test_policy_valid_at(const char *file, int line,
							 const char *text)
{
	char *errors;
	int n;
	struct gb_policy *p = gb_test_policy_parse(text, &errors, &n);

	ck_assert_msg(n == 0, "%s:%d: the policy is refused:\n%s--- its text:\n%s", file, line,
		      errors ? errors : "out of memory\n", text);
	free(errors);
	return p;
}

/**
 * @p text refused, with @p error (a part of one message, "file:line: ..." if it is to be
 * checked) among its messages; @p i names the case of a table in what fails.
 */
static inline void gb_test_policy_refuses(int i, const char *text, const char *error)
{
	char *errors;
	int n;
	struct gb_policy *p = gb_test_policy_parse(text, &errors, &n);

	ck_assert_msg(n > 0, "case %d accepted: %s", i, text);
	ck_assert_msg(errors && strstr(errors, error), "case %d: want '%s', got '%s'", i, error,
		      errors);
	free(errors);
	gb_policy_free(p);
}

#endif
