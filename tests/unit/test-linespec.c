/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Host unit test: every form of line reference the broker accepts, and the bad ones. */
#include <check.h>
#include <errno.h>

#include "linespec.h"
#include "testmain.h"

START_TEST(test_name)
{
	struct gb_linespec s;

	ck_assert_int_eq(gb_linespec_parse("reset", &s), 0);
	ck_assert_int_eq(s.kind, GB_LINESPEC_NAME);
	ck_assert_str_eq(s.text, "reset");
	gb_linespec_clear(&s);
	/* A colon not followed by digits is part of a name. */
	ck_assert_int_eq(gb_linespec_parse("GPIO:A1", &s), 0);
	ck_assert_int_eq(s.kind, GB_LINESPEC_NAME);
	ck_assert_str_eq(s.text, "GPIO:A1");
	gb_linespec_clear(&s);
}
END_TEST

START_TEST(test_chip_offset)
{
	struct gb_linespec s;

	ck_assert_int_eq(gb_linespec_parse("gpiochip0:3", &s), 0);
	ck_assert_int_eq(s.kind, GB_LINESPEC_CHIP_OFFSET);
	ck_assert_str_eq(s.text, "gpiochip0");
	ck_assert_uint_eq(s.offset, 3);
	gb_linespec_clear(&s);
	/* The last colon splits: chip labels may contain colons. */
	ck_assert_int_eq(gb_linespec_parse("i2c:1-0020:15", &s), 0);
	ck_assert_str_eq(s.text, "i2c:1-0020");
	ck_assert_uint_eq(s.offset, 15);
	gb_linespec_clear(&s);
}
END_TEST

START_TEST(test_path)
{
	struct gb_linespec s;

	ck_assert_int_eq(gb_linespec_parse("/org/gpiodbroker1/chip/gpiochip0/line3", &s), 0);
	ck_assert_int_eq(s.kind, GB_LINESPEC_PATH);
	gb_linespec_clear(&s);
}
END_TEST

START_TEST(test_invalid)
{
	struct gb_linespec s;

	ck_assert_int_eq(gb_linespec_parse("", &s), -EINVAL);
	ck_assert_int_eq(gb_linespec_parse(NULL, &s), -EINVAL);
	ck_assert_int_eq(gb_linespec_parse(":3", &s), -EINVAL);
	ck_assert_int_eq(gb_linespec_parse("gpiochip0:", &s), -EINVAL);
	ck_assert_int_eq(gb_linespec_parse("gpiochip0:99999999999", &s), -EINVAL);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("linespec");
	TCase *tc = tcase_create("parse");

	tcase_add_test(tc, test_name);
	tcase_add_test(tc, test_chip_offset);
	tcase_add_test(tc, test_path);
	tcase_add_test(tc, test_invalid);
	suite_add_tcase(s, tc);
	return gb_run_suite(s);
}
