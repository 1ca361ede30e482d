/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Host unit test: the line settings callers may ask for, and the combinations refused. */
#include <check.h>
#include <errno.h>
#include <string.h>

#include "line-config.h"
#include "testmain.h"

static char err[256];

static int set_s(struct gb_line_config *c, const char *k, const char *v)
{
	return gb_line_config_set(c, k, 's', v, false, 0, err, sizeof(err));
}

static int set_b(struct gb_line_config *c, const char *k, bool v)
{
	return gb_line_config_set(c, k, 'b', NULL, v, 0, err, sizeof(err));
}

START_TEST(test_keys)
{
	struct gb_line_config c;

	gb_line_config_init(&c);
	ck_assert_int_eq(set_s(&c, "direction", "input"), 0);
	ck_assert_int_eq(set_s(&c, "edge", "both"), 0);
	ck_assert_int_eq(set_s(&c, "bias", "pull-up"), 0);
	ck_assert_int_eq(gb_line_config_set(&c, "debounce-us", 'u', NULL, false, 500, err, sizeof(err)), 0);
	ck_assert_int_eq(set_s(&c, "event-clock", "realtime"), 0);
	ck_assert_int_eq(set_b(&c, "active-low", true), 0);
	ck_assert_int_eq(gb_line_config_validate(&c, err, sizeof(err)), 0);
	ck_assert_int_eq(c.direction, GPIOD_LINE_DIRECTION_INPUT);
	ck_assert_int_eq(c.edge, GPIOD_LINE_EDGE_BOTH);
	ck_assert_int_eq(c.bias, GPIOD_LINE_BIAS_PULL_UP);
	ck_assert_uint_eq(c.debounce_us, 500);
	ck_assert(c.active_low);
}
END_TEST

START_TEST(test_bad_keys)
{
	struct gb_line_config c;

	gb_line_config_init(&c);
	ck_assert_int_eq(set_s(&c, "colour", "red"), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "unknown line setting 'colour'"));
	ck_assert_int_eq(set_b(&c, "direction", true), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "type 's'"));
	ck_assert_int_eq(set_s(&c, "direction", "sideways"), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "input, output"));
	ck_assert_int_eq(set_s(&c, "bias", "unknown"), -EINVAL); /* reported, never asked for */
	ck_assert_int_eq(set_s(&c, "direction", "output"), 0);
	ck_assert_int_eq(set_s(&c, "direction", "input"), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "twice"));
}
END_TEST

START_TEST(test_combinations)
{
	struct gb_line_config c;

	gb_line_config_init(&c);
	ck_assert_int_eq(set_b(&c, "value", true), 0);
	ck_assert_int_eq(gb_line_config_validate(&c, err, sizeof(err)), -EINVAL); /* value w/o output */

	gb_line_config_init(&c);
	set_s(&c, "direction", "output");
	set_s(&c, "edge", "rising");
	ck_assert_int_eq(gb_line_config_validate(&c, err, sizeof(err)), -EINVAL);

	gb_line_config_init(&c);
	set_s(&c, "direction", "input");
	set_s(&c, "drive", "open-drain");
	ck_assert_int_eq(gb_line_config_validate(&c, err, sizeof(err)), -EINVAL);

	gb_line_config_init(&c);
	set_s(&c, "direction", "output");
	gb_line_config_set(&c, "debounce-us", 'u', NULL, false, 10, err, sizeof(err));
	ck_assert_int_eq(gb_line_config_validate(&c, err, sizeof(err)), -EINVAL);

	gb_line_config_init(&c);
	set_s(&c, "direction", "output");
	set_s(&c, "drive", "open-drain");
	set_b(&c, "value", true);
	ck_assert_int_eq(gb_line_config_validate(&c, err, sizeof(err)), 0);
}
END_TEST

START_TEST(test_merge)
{
	struct gb_line_config c, u;

	gb_line_config_init(&c);
	set_s(&c, "direction", "input");
	set_s(&c, "edge", "both");
	set_s(&c, "bias", "pull-down");
	memset(&u, 0, sizeof(u));
	ck_assert_int_eq(gb_line_config_set(&u, "direction", 's', "output", false, 0, err, sizeof(err)), 0);
	gb_line_config_merge(&c, &u);
	/* Turning a line into an output drops its input-only settings, keeps the rest. */
	ck_assert_int_eq(c.direction, GPIOD_LINE_DIRECTION_OUTPUT);
	ck_assert_int_eq(c.edge, GPIOD_LINE_EDGE_NONE);
	ck_assert_int_eq(c.bias, GPIOD_LINE_BIAS_PULL_DOWN);
	ck_assert_int_eq(gb_line_config_validate(&c, err, sizeof(err)), 0);
}
END_TEST

START_TEST(test_names)
{
	ck_assert_str_eq(gb_direction_name(GPIOD_LINE_DIRECTION_OUTPUT), "output");
	ck_assert_str_eq(gb_edge_name(GPIOD_LINE_EDGE_FALLING), "falling");
	ck_assert_str_eq(gb_bias_name(GPIOD_LINE_BIAS_UNKNOWN), "unknown");
	ck_assert_str_eq(gb_drive_name(GPIOD_LINE_DRIVE_OPEN_SOURCE), "open-source");
	ck_assert_str_eq(gb_clock_name(GPIOD_LINE_CLOCK_HTE), "hte");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("line-config");
	TCase *tc = tcase_create("line-config");

	tcase_add_test(tc, test_keys);
	tcase_add_test(tc, test_bad_keys);
	tcase_add_test(tc, test_combinations);
	tcase_add_test(tc, test_merge);
	tcase_add_test(tc, test_names);
	suite_add_tcase(s, tc);
	return gb_run_suite(s);
}
