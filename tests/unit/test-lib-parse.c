/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Host unit test of what libgpiobroker reads besides signals: a Line object's
 * properties (Properties.GetAll) as line info (client/line-info.c), the
 * transport GPIOBROKER_TRANSPORT asks for (client/transport.c), and the SSH
 * address of gpiobroker_open_host()'s [USER@]HOST[:PORT] (client/open.c).
 */
#include <check.h>
#include <errno.h>

#include "internal.h"
#include "lib-unit.h"
#include "testmain.h"

#define LINE_PATH "/org/gpiodbroker1/chip/gpiochip0/line3"

static sd_bus_message *properties(void)
{
	sd_bus_message *m = NULL;

	ck_assert_int_ge(sd_bus_message_new_method_call(unit_bus, &m, GB_BUS_NAME, LINE_PATH,
							"org.freedesktop.DBus.Properties",
							"GetAll"), 0);
	ck_assert_int_ge(sd_bus_message_open_container(m, 'a', "{sv}"), 0);
	return m;
}

static struct gpiobroker_line_info *parse(sd_bus_message *m, int *r)
{
	struct gpiobroker_line_info *info;

	ck_assert_int_ge(sd_bus_message_close_container(m), 0);
	info = gb_line_info_from_properties(gb_unit_seal(m), LINE_PATH, "gpiochip0", 3, r);
	sd_bus_message_unref(m);
	return info;
}

START_TEST(test_every_property)
{
	sd_bus_message *m = properties();
	struct gpiobroker_line_info *info;
	int r;

	ck_assert_int_ge(sd_bus_message_append(m, "{sv}{sv}{sv}{sv}{sv}{sv}{sv}", "Name", "s", "led",
					       "Offset", "u", 3, "Used", "b", 1, "Direction", "s",
					       "output", "Consumer", "s", "gpiod-broker", "Alias", "s",
					       "porch-light", "RequestLabel", "s", "porch"), 0);
	info = parse(m, &r);
	ck_assert_int_eq(r, 0);
	ck_assert_ptr_nonnull(info);
	ck_assert_str_eq(gpiobroker_line_info_get_name(info), "led");
	ck_assert_str_eq(gpiobroker_line_info_get_chip(info), "gpiochip0");
	ck_assert_uint_eq(gpiobroker_line_info_get_offset(info), 3);
	ck_assert(gpiobroker_line_info_is_used(info));
	ck_assert_int_eq(gpiobroker_line_info_get_direction(info), GPIOBROKER_DIRECTION_OUTPUT);
	ck_assert_str_eq(gpiobroker_line_info_get_consumer(info), "gpiod-broker");
	ck_assert_str_eq(gpiobroker_line_info_get_alias(info), "porch-light");
	ck_assert_str_eq(gpiobroker_line_info_get_request_label(info), "porch");
	gpiobroker_line_info_free(info);
}
END_TEST

START_TEST(test_missing_and_unknown)
{
	sd_bus_message *m = properties();
	struct gpiobroker_line_info *info;
	int r;

	/* An older or newer broker: what is missing reads "", what is unknown is
	 * skipped, a direction it does not name is AS_IS. */
	ck_assert_int_ge(sd_bus_message_append(m, "{sv}{sv}", "Direction", "s", "sideways",
					       "Future", "a{sv}", 0), 0);
	info = parse(m, &r);
	ck_assert_int_eq(r, 0);
	ck_assert_ptr_nonnull(info);
	ck_assert_str_eq(gpiobroker_line_info_get_name(info), "");
	ck_assert_str_eq(gpiobroker_line_info_get_consumer(info), "");
	ck_assert_str_eq(gpiobroker_line_info_get_alias(info), "");
	ck_assert_str_eq(gpiobroker_line_info_get_request_label(info), "");
	ck_assert(!gpiobroker_line_info_is_used(info));
	ck_assert_int_eq(gpiobroker_line_info_get_direction(info), GPIOBROKER_DIRECTION_AS_IS);
	gpiobroker_line_info_free(info);

	m = properties();
	ck_assert_int_ge(sd_bus_message_append(m, "{sv}", "Direction", "s", "input"), 0);
	info = parse(m, &r);
	ck_assert_ptr_nonnull(info);
	ck_assert_int_eq(gpiobroker_line_info_get_direction(info), GPIOBROKER_DIRECTION_INPUT);
	gpiobroker_line_info_free(info);
}
END_TEST

START_TEST(test_wrong_type)
{
	sd_bus_message *m = properties();
	int r = 0;

	/* A property of another type than the broker's: an error, not a guess. */
	ck_assert_int_ge(sd_bus_message_append(m, "{sv}", "Used", "s", "yes"), 0);
	ck_assert_ptr_null(parse(m, &r));
	ck_assert_int_lt(r, 0);
}
END_TEST

START_TEST(test_transport_env)
{
	ck_assert_int_eq(gb_transport_parse("bus"), GPIOBROKER_TRANSPORT_BUS);
	ck_assert_int_eq(gb_transport_parse("p2p"), GPIOBROKER_TRANSPORT_P2P);
	ck_assert_int_eq(gb_transport_parse(NULL), GPIOBROKER_TRANSPORT_AUTO);
	ck_assert_int_eq(gb_transport_parse(""), GPIOBROKER_TRANSPORT_AUTO);
	ck_assert_int_eq(gb_transport_parse("auto"), GPIOBROKER_TRANSPORT_AUTO);
	ck_assert_int_eq(gb_transport_parse("BUS"), GPIOBROKER_TRANSPORT_AUTO);
}
END_TEST

#define SSH_HEAD "unixexec:path=ssh,argv1=-xT,argv2=-o,argv3=ServerAliveInterval%3d5,argv4=-o," \
		 "argv5=ServerAliveCountMax%3d3,"

START_TEST(test_host_address)
{
	static const struct {
		const char *host, *want;
	} ok[] = {
		{ "board", SSH_HEAD "argv6=--,argv7=board,argv8=systemd-stdio-bridge" },
		{ "pi@board.lan", SSH_HEAD "argv6=--,argv7=pi%40board.lan,argv8=systemd-stdio-bridge" },
		{ "gb-alice@localhost:2222", SSH_HEAD "argv6=-p,argv7=2222,argv8=--,"
					     "argv9=gb-alice%40localhost,argv10=systemd-stdio-bridge" },
		{ "10.0.0.7", SSH_HEAD "argv6=--,argv7=10.0.0.7,argv8=systemd-stdio-bridge" },
		/* ssh takes an IPv6 address without brackets; its colons are escaped. */
		{ "[fe80::1]", SSH_HEAD "argv6=--,argv7=fe80%3a%3a1,argv8=systemd-stdio-bridge" },
		{ "root@[::1]:22", SSH_HEAD "argv6=-p,argv7=22,argv8=--,argv9=root%40%3a%3a1,"
				   "argv10=systemd-stdio-bridge" },
	};
	static const char *const bad[] = {
		"", "@board", "pi@", "a@b@c", "board:", "board:0", "board:65536", "board:22x",
		"[::1", "[]", "[::1]x", "-oProxyCommand=sh", "pi@[::1]:", ":22",
	};
	char out[1024];

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		ck_assert_msg(gb_host_address(ok[i].host, out, sizeof(out)) == 0, "%s", ok[i].host);
		ck_assert_str_eq(out, ok[i].want);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_msg(gb_host_address(bad[i], out, sizeof(out)) == -EINVAL, "'%s' taken",
			      bad[i]);
	/* Too long for the buffer: refused, not cut. */
	ck_assert_int_eq(gb_host_address("board", out, 40), -EINVAL);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("lib-parse");
	TCase *tc = gb_tcase_new(s, "line-info", unit_bus_open, unit_bus_close, 10);

	tcase_add_test(tc, test_every_property);
	tcase_add_test(tc, test_missing_and_unknown);
	tcase_add_test(tc, test_wrong_type);
	tcase_add_test(tc, test_transport_env);
	tcase_add_test(tc, test_host_address);
	return gb_run_suite(s);
}
