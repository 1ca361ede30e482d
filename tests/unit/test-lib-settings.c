/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Host unit test of libgpiobroker's line settings (client/settings.c): the a{sv}
 * the broker's Request and Reconfigure take, with the broker's names
 * (docs/dbus-api.md, "Line settings"), only what differs from the defaults, and an
 * out-of-range enum refused before anything is sent.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"
#include "lib-unit.h"
#include "testmain.h"

/* The a{sv} of @p s as "key=type:value ..." in message order; or the error. */
static int marshal(const struct gpiobroker_line_settings *s, char *out, size_t size)
{
	sd_bus_message *m = NULL;
	const char *key, *contents;
	size_t len = 0;
	int r;

	ck_assert_int_ge(sd_bus_message_new_method_call(unit_bus, &m, GB_BUS_NAME, GB_ROOT_PATH,
							GB_IFACE_MANAGER, "Request"), 0);
	r = gb_append_settings(m, s);
	if (r < 0) {
		sd_bus_message_unref(m);
		return r;
	}
	gb_unit_seal(m);
	out[0] = '\0';
	ck_assert_int_ge(sd_bus_message_enter_container(m, 'a', "{sv}"), 0);
	while ((r = sd_bus_message_enter_container(m, 'e', "sv")) > 0) {
		const char *str;
		uint32_t u;
		int b;

		ck_assert_int_ge(sd_bus_message_read(m, "s", &key), 0);
		ck_assert_int_ge(sd_bus_message_peek_type(m, NULL, &contents), 0);
		ck_assert_int_ge(sd_bus_message_enter_container(m, 'v', contents), 0);
		if (strcmp(contents, "s") == 0) {
			ck_assert_int_ge(sd_bus_message_read(m, "s", &str), 0);
			len += snprintf(out + len, size - len, "%s%s=s:%s", len ? " " : "", key, str);
		} else if (strcmp(contents, "b") == 0) {
			ck_assert_int_ge(sd_bus_message_read(m, "b", &b), 0);
			len += snprintf(out + len, size - len, "%s%s=b:%d", len ? " " : "", key, b);
		} else {
			ck_assert_str_eq(contents, "u");
			ck_assert_int_ge(sd_bus_message_read(m, "u", &u), 0);
			len += snprintf(out + len, size - len, "%s%s=u:%u", len ? " " : "", key, u);
		}
		ck_assert_int_ge(sd_bus_message_exit_container(m), 0);
		ck_assert_int_ge(sd_bus_message_exit_container(m), 0);
		ck_assert_uint_lt(len, size);
	}
	ck_assert_int_ge(r, 0);
	ck_assert_int_ge(sd_bus_message_exit_container(m), 0);
	sd_bus_message_unref(m);
	return 0;
}

START_TEST(test_defaults_are_empty)
{
	struct gpiobroker_line_settings s;
	char out[512];

	/* The broker applies its own defaults (Request) or keeps what is set (Reconfigure). */
	gpiobroker_line_settings_init(&s);
	ck_assert_int_eq(marshal(&s, out, sizeof(out)), 0);
	ck_assert_str_eq(out, "");
	ck_assert_int_eq(marshal(NULL, out, sizeof(out)), 0);
	ck_assert_str_eq(out, "");
}
END_TEST

START_TEST(test_output)
{
	struct gpiobroker_line_settings s;
	char out[512];

	gpiobroker_line_settings_init(&s);
	s.direction = GPIOBROKER_DIRECTION_OUTPUT;
	ck_assert_int_eq(marshal(&s, out, sizeof(out)), 0);
	/* An output always says its value: the broker drives it in the same step. */
	ck_assert_str_eq(out, "direction=s:output value=b:0");
	s.value = 7;
	s.drive = GPIOBROKER_DRIVE_OPEN_DRAIN;
	s.active_low = true;
	ck_assert_int_eq(marshal(&s, out, sizeof(out)), 0);
	ck_assert_str_eq(out, "direction=s:output value=b:1 drive=s:open-drain active-low=b:1");
	s.drive = GPIOBROKER_DRIVE_OPEN_SOURCE;
	ck_assert_int_eq(marshal(&s, out, sizeof(out)), 0);
	ck_assert_str_eq(out, "direction=s:output value=b:1 drive=s:open-source active-low=b:1");
}
END_TEST

START_TEST(test_input)
{
	static const struct {
		enum gpiobroker_edge edge;
		enum gpiobroker_bias bias;
		enum gpiobroker_event_clock clock;
		const char *want;
	} cases[] = {
		{ GPIOBROKER_EDGE_RISING, GPIOBROKER_BIAS_DISABLED, GPIOBROKER_CLOCK_REALTIME,
		  "direction=s:input edge=s:rising bias=s:disabled debounce-us=u:1000 "
		  "event-clock=s:realtime" },
		{ GPIOBROKER_EDGE_FALLING, GPIOBROKER_BIAS_PULL_UP, GPIOBROKER_CLOCK_HTE,
		  "direction=s:input edge=s:falling bias=s:pull-up debounce-us=u:1000 "
		  "event-clock=s:hte" },
		{ GPIOBROKER_EDGE_BOTH, GPIOBROKER_BIAS_PULL_DOWN, GPIOBROKER_CLOCK_MONOTONIC,
		  "direction=s:input edge=s:both bias=s:pull-down debounce-us=u:1000" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct gpiobroker_line_settings s;
		char out[512];

		gpiobroker_line_settings_init(&s);
		s.direction = GPIOBROKER_DIRECTION_INPUT;
		s.value = 1; /* an input has no value to send */
		s.edge = cases[i].edge;
		s.bias = cases[i].bias;
		s.event_clock = cases[i].clock;
		s.debounce_us = 1000;
		ck_assert_int_eq(marshal(&s, out, sizeof(out)), 0);
		ck_assert_str_eq(out, cases[i].want);
	}
}
END_TEST

START_TEST(test_out_of_range)
{
	struct gpiobroker_line_settings s;
	char out[512];

	/* Each enum one past its last value: the caller's error, nothing sent. */
	gpiobroker_line_settings_init(&s);
	s.direction = GPIOBROKER_DIRECTION_OUTPUT + 1;
	ck_assert_int_eq(marshal(&s, out, sizeof(out)), -EINVAL);
	gpiobroker_line_settings_init(&s);
	s.edge = GPIOBROKER_EDGE_BOTH + 1;
	ck_assert_int_eq(marshal(&s, out, sizeof(out)), -EINVAL);
	gpiobroker_line_settings_init(&s);
	s.bias = GPIOBROKER_BIAS_PULL_DOWN + 1;
	ck_assert_int_eq(marshal(&s, out, sizeof(out)), -EINVAL);
	gpiobroker_line_settings_init(&s);
	s.drive = GPIOBROKER_DRIVE_OPEN_SOURCE + 1;
	ck_assert_int_eq(marshal(&s, out, sizeof(out)), -EINVAL);
	gpiobroker_line_settings_init(&s);
	s.event_clock = GPIOBROKER_CLOCK_HTE + 1;
	ck_assert_int_eq(marshal(&s, out, sizeof(out)), -EINVAL);
	gpiobroker_line_settings_init(&s);
	s.direction = (enum gpiobroker_direction)-1;
	ck_assert_int_eq(marshal(&s, out, sizeof(out)), -EINVAL);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("lib-settings");
	TCase *tc = gb_tcase_new(s, "settings", unit_bus_open, unit_bus_close, 10);

	tcase_add_test(tc, test_defaults_are_empty);
	tcase_add_test(tc, test_output);
	tcase_add_test(tc, test_input);
	tcase_add_test(tc, test_out_of_range);
	return gb_run_suite(s);
}
