/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Host unit test of libgpiobroker's errors (client/errors.c): every error name the
 * broker sends as the errno <gpiobroker.h> documents, sd-bus's own names as sd-bus
 * maps them, and the last error a connection records.
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "testmain.h"

static int map(const char *name)
{
	sd_bus_error e = SD_BUS_ERROR_NULL;
	int r;

	sd_bus_error_set_const(&e, name, "a message");
	r = gb_errno_of(&e, -EIO);
	sd_bus_error_free(&e);
	return r;
}

START_TEST(test_broker_names)
{
	/* The table of <gpiobroker.h> and docs/libgpiobroker.md, "Errors". */
	ck_assert_int_eq(map(GB_ERROR_BUSY), -EBUSY);
	ck_assert_int_eq(map(GB_ERROR_NOT_FOUND), -ENOENT);
	ck_assert_int_eq(map(GB_ERROR_INVALID_ARGS), -EINVAL);
	ck_assert_int_eq(map(GB_ERROR_PERMISSION), -EACCES);
	ck_assert_int_eq(map(GB_ERROR_NOT_OUTPUT), -EPERM);
	ck_assert_int_eq(map(GB_ERROR_CHIP_GONE), -ENODEV);
	ck_assert_int_eq(map(GB_ERROR_POLICY), -EBADMSG);
	ck_assert_int_eq(map(GB_ERROR_LIMITS_EXCEEDED), -EDQUOT);
	ck_assert_int_eq(map(GB_ERROR_FAILED), -EIO);
	ck_assert_int_eq(map("org.freedesktop.DBus.Error.UnknownObject"), -ENOENT);
	ck_assert_int_eq(map("org.freedesktop.DBus.Error.UnknownMethod"), -ENOENT);
	ck_assert_int_eq(map("org.freedesktop.DBus.Error.ServiceUnknown"), -EHOSTDOWN);
	ck_assert_int_eq(map("org.freedesktop.DBus.Error.NameHasNoOwner"), -EHOSTDOWN);
}
END_TEST

START_TEST(test_other_names)
{
	/* sd-bus's mapping for the rest, and EIO for a name nobody knows. */
	ck_assert_int_eq(map("org.freedesktop.DBus.Error.AccessDenied"), -EACCES);
	ck_assert_int_eq(map("org.freedesktop.DBus.Error.NoMemory"), -ENOMEM);
	ck_assert_int_eq(map("org.freedesktop.DBus.Error.Timeout"), -ETIMEDOUT);
	ck_assert_int_eq(map("com.example.Unheard.Of"), -EIO);
	/* A broker name only by prefix is not one of them. */
	ck_assert_int_eq(map(GB_ERROR_PREFIX "Busier"), -EIO);
}
END_TEST

START_TEST(test_no_name)
{
	sd_bus_error e = SD_BUS_ERROR_NULL;

	ck_assert_int_eq(gb_errno_of(NULL, -ETIMEDOUT), -ETIMEDOUT);
	ck_assert_int_eq(gb_errno_of(&e, -ECONNRESET), -ECONNRESET);
	/* Never a success for a failure. */
	ck_assert_int_eq(gb_errno_of(NULL, 0), -EIO);
	ck_assert_int_eq(gb_errno_of(NULL, 5), -EIO);
}
END_TEST

START_TEST(test_last_error)
{
	struct gpiobroker *b = calloc(1, sizeof(*b));
	sd_bus_error e = SD_BUS_ERROR_NULL;

	ck_assert_ptr_nonnull(b);
	sd_bus_error_set(&e, GB_ERROR_BUSY, "line led is held by :1.5");
	ck_assert_int_eq(gb_fail(b, &e, -EIO), -EBUSY);
	ck_assert_str_eq(gpiobroker_last_error_name(b), GB_ERROR_BUSY);
	ck_assert_str_eq(gpiobroker_last_error_message(b), "line led is held by :1.5");
	ck_assert(!sd_bus_error_is_set(&e)); /* freed */

	/* A failure of our own: no name, errno's words. */
	ck_assert_int_eq(gb_fail(b, NULL, -ENOMEM), -ENOMEM);
	ck_assert_ptr_null(gpiobroker_last_error_name(b));
	ck_assert_str_eq(gpiobroker_last_error_message(b), strerror(ENOMEM));

	/* A name without a message: the name says it. */
	sd_bus_error_set_const(&e, GB_ERROR_CHIP_GONE, NULL);
	ck_assert_int_eq(gb_result(b, &e, -EIO), -ENODEV);
	ck_assert_str_eq(gpiobroker_last_error_message(b), GB_ERROR_CHIP_GONE);

	/* Success clears it. */
	ck_assert_int_eq(gb_result(b, &e, 0), 0);
	ck_assert_ptr_null(gpiobroker_last_error_name(b));
	ck_assert_ptr_null(gpiobroker_last_error_message(b));
	ck_assert_ptr_null(gpiobroker_last_error_name(NULL));
	ck_assert_ptr_null(gpiobroker_last_error_message(NULL));
	free(b);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("lib-errors");
	TCase *tc = gb_tcase_new(s, "errors", NULL, NULL, 10);

	tcase_add_test(tc, test_broker_names);
	tcase_add_test(tc, test_other_names);
	tcase_add_test(tc, test_no_name);
	tcase_add_test(tc, test_last_error);
	return gb_run_suite(s);
}
