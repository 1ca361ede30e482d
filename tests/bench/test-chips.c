/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Chips and lines as bus objects: properties, lookup by name, changes made outside
 * the broker, chips unplugged under a request and plugged in at runtime, and the
 * broker's own lifetime (SIGTERM, the bus going away).
 */
#include <check.h>
#include <fcntl.h>
#include <gpiod.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"
#include "broker-calls.h"
#include "brokertest.h"
#include "bus-util.h"
#include "gpiosim.h"
#include "org.gpiodbroker1.h"
#include "testmain.h"
#include "timing.h"
#include "users.h"

static const char *const names_a[4] = { "pump", "valve", "shared", NULL };
static const char *const names_b[4] = { "fan", NULL, "shared", "heater" };
static struct gb_sim_chip *sim_a, *sim_b;
static pid_t broker;

static void setup(void)
{
	sim_a = gb_sim_chip_new("gbchip-a", 4, names_a);
	sim_b = gb_sim_chip_new("gbchip-b", 4, names_b);
	ck_assert_ptr_nonnull(sim_a);
	ck_assert_ptr_nonnull(sim_b);
	broker = gb_broker_spawn(NULL);
}

static void teardown(void)
{
	if (broker > 0)
		ck_assert_int_eq(gb_broker_stop(broker), 0);
	gb_sim_chip_free(sim_a);
	gb_sim_chip_free(sim_b);
}

static char *chip_path(struct gb_sim_chip *c)
{
	char *p;

	ck_assert_int_ge(asprintf(&p, GB_ROOT_PATH "/chip/%s", gb_sim_chip_name(c)), 0);
	return p;
}

static void find_line(sd_bus *bus, const char *spec, const char *want_chip, uint32_t want_off)
{
	sd_bus_error err = SD_BUS_ERROR_NULL;
	sd_bus_message *reply = NULL;
	const char *path, *chip;
	uint32_t off;

	ck_assert_msg(sd_bus_call_method(bus, GB_BUS_NAME, GB_ROOT_PATH, GB_IFACE_MANAGER, "FindLine", &err, &reply,
					 "s", spec) >= 0, "FindLine(%s): %s", spec, err.message);
	ck_assert_int_ge(sd_bus_message_read(reply, "osu", &path, &chip, &off), 0);
	ck_assert_str_eq(chip, want_chip);
	ck_assert_uint_eq(off, want_off);
	sd_bus_message_unref(reply);
}

START_TEST(test_objects)
{
	sd_bus *bus = gb_connect(UID_BOB);
	sd_bus_error err = SD_BUS_ERROR_NULL;
	sd_bus_message *reply = NULL;
	char *cp = chip_path(sim_a), *s = NULL, *lp;
	int objects = 0, r;

	s = gb_get_prop_str(bus, cp, GB_IFACE_CHIP, "Label");
	ck_assert_str_eq(s, "gbchip-a");
	free(s);
	s = gb_get_prop_str(bus, cp, GB_IFACE_CHIP, "Path");
	ck_assert_str_eq(s, gb_sim_chip_path(sim_a));
	free(s);
	ck_assert_uint_eq(gb_get_prop_u32(bus, cp, GB_IFACE_CHIP, "NumLines"), 4);
	s = gb_line_prop_str(bus, gb_sim_chip_name(sim_b), 3, "Name");
	ck_assert_str_eq(s, "heater");
	free(s);

	find_line(bus, "valve", gb_sim_chip_name(sim_a), 1);
	find_line(bus, "heater", gb_sim_chip_name(sim_b), 3);
	find_line(bus, "gbchip-b:1", gb_sim_chip_name(sim_b), 1);
	ck_assert_int_ge(asprintf(&lp, "%s:2", gb_sim_chip_name(sim_a)), 0);
	find_line(bus, lp, gb_sim_chip_name(sim_a), 2);
	free(lp);
	ck_assert_int_ge(asprintf(&lp, "%s/line3", cp), 0);
	find_line(bus, lp, gb_sim_chip_name(sim_a), 3);
	free(lp);

	/* A name on two chips is ambiguous: refused, not resolved to either. */
	r = sd_bus_call_method(bus, GB_BUS_NAME, GB_ROOT_PATH, GB_IFACE_MANAGER, "FindLine", &err, NULL, "s", "shared");
	ck_assert_int_lt(r, 0);
	gb_assert_error(&err, GB_ERROR_INVALID_ARGS, "not unique");

	/* ObjectManager: 2 chips + 8 lines. */
	ck_assert_int_ge(sd_bus_call_method(bus, GB_BUS_NAME, GB_ROOT_PATH, "org.freedesktop.DBus.ObjectManager",
					    "GetManagedObjects", &err, &reply, ""), 0);
	ck_assert_int_ge(sd_bus_message_enter_container(reply, 'a', "{oa{sa{sv}}}"), 0);
	while ((r = sd_bus_message_skip(reply, "{oa{sa{sv}}}")) > 0)
		objects++;
	ck_assert_int_eq(objects, 10);
	sd_bus_message_unref(reply);
	free(cp);
	gb_close(bus);
}
END_TEST

START_TEST(test_outside_change)
{
	sd_bus *bus = gb_connect(UID_ALICE);
	sd_bus_error err = SD_BUS_ERROR_NULL;
	struct gpiod_chip *c = gpiod_chip_open(gb_sim_chip_path(sim_a));
	struct gpiod_line_settings *ls = gpiod_line_settings_new();
	struct gpiod_line_config *lc = gpiod_line_config_new();
	struct gpiod_request_config *rc = gpiod_request_config_new();
	struct gpiod_line_request *req;
	unsigned int off = 0;
	int changes = 0;
	char match[256], *s;

	snprintf(match, sizeof(match),
		 "type='signal',sender='" GB_BUS_NAME "',interface='org.freedesktop.DBus.Properties',"
		 "path='" GB_ROOT_PATH "/chip/%s/line0'", gb_sim_chip_name(sim_a));
	ck_assert_int_ge(sd_bus_add_match(bus, NULL, match, gb_bus_count_message, &changes), 0);

	/* Another process takes the line, bypassing the broker. */
	gpiod_request_config_set_consumer(rc, "outsider");
	gpiod_line_settings_set_direction(ls, GPIOD_LINE_DIRECTION_OUTPUT);
	gpiod_line_config_add_line_settings(lc, &off, 1, ls);
	req = gpiod_chip_request_lines(c, rc, lc);
	ck_assert_ptr_nonnull(req);

	ck_assert_msg(gb_bus_wait_count(bus, &changes, 1, 5000), "no PropertiesChanged");
	ck_assert(gb_line_prop_bool(bus, gb_sim_chip_name(sim_a), 0, "Used"));
	s = gb_line_prop_str(bus, gb_sim_chip_name(sim_a), 0, "Consumer");
	ck_assert_str_eq(s, "outsider");
	free(s);
	s = gb_line_prop_str(bus, gb_sim_chip_name(sim_a), 0, "RequestLabel");
	ck_assert_str_eq(s, "");
	free(s);

	ck_assert_int_lt(gb_request(bus, "me", "pump", "input", -1, NULL, false, NULL, &err), 0);
	gb_assert_error(&err, GB_ERROR_BUSY, "outsider");

	gpiod_line_request_release(req);
	ck_assert(gb_bus_wait_count(bus, &changes, 2, 5000));
	ck_assert(gb_wait_line_used(bus, gb_sim_chip_name(sim_a), 0, false, 2000));
	ck_assert_int_ge(gb_request(bus, "me", "pump", "input", -1, NULL, false, NULL, &err), 0);

	gpiod_request_config_free(rc);
	gpiod_line_config_free(lc);
	gpiod_line_settings_free(ls);
	gpiod_chip_close(c);
	gb_close(bus);
}
END_TEST

static int on_chip_gone(sd_bus_message *m, void *userdata, sd_bus_error *e)
{
	const char *chip;

	if (sd_bus_message_read(m, "s", &chip) > 0)
		snprintf(userdata, 32, "%s", chip);
	return 0;
}

START_TEST(test_chip_unplugged)
{
	sd_bus *alice = gb_connect(UID_ALICE), *bob = gb_connect(UID_BOB);
	sd_bus_error err = SD_BUS_ERROR_NULL;
	char gone[32] = "", *pa = NULL, *pb = NULL, *cp = chip_path(sim_b), *name;
	int removed = 0, added = 0, n;
	struct gb_sim_chip *sim_c;

	name = strdup(gb_sim_chip_name(sim_b));
	ck_assert_int_ge(sd_bus_match_signal(alice, NULL, GB_BUS_NAME, NULL, GB_IFACE_REQUEST, "ChipGone",
					     on_chip_gone, gone), 0);
	ck_assert_int_ge(sd_bus_match_signal(alice, NULL, GB_BUS_NAME, GB_ROOT_PATH,
					     "org.freedesktop.DBus.ObjectManager", "InterfacesRemoved",
					     gb_bus_count_message, &removed), 0);
	ck_assert_int_ge(gb_request(alice, "fan-ctl", "fan", "output", 1, NULL, false, &pa, &err), 0);
	ck_assert_int_ge(gb_request(bob, "pump-ctl", "pump", "output", 0, NULL, false, &pb, &err), 0);

	ck_assert_int_eq(gb_sim_chip_unplug(sim_b), 0);
	for (int i = 0; i < 500 && !gone[0]; i++)
		gb_bus_wait_count(alice, &n, 1, 10), n = 0;
	ck_assert_msg(gone[0], "owner was not told the chip went away");
	ck_assert_str_eq(gone, name);
	/* 1 chip + 4 lines removed from the tree */
	ck_assert(gb_bus_wait_count(alice, &removed, 5, 5000));

	ck_assert_int_lt(gb_get_value(alice, pa, 0, &err), 0);
	gb_assert_error(&err, GB_ERROR_CHIP_GONE, NULL);
	ck_assert_int_lt(sd_bus_call_method(alice, GB_BUS_NAME, cp, "org.freedesktop.DBus.Properties",
					    "GetAll", &err, NULL, "s", GB_BUS_NAME ".Chip"), 0);
	sd_bus_error_free(&err);

	/* The other chip is served as before. */
	ck_assert_int_ge(gb_set_value(bob, pb, 0, true, &err), 0);
	ck_assert_int_eq(gb_sim_get_value(sim_a, 0), 1);
	ck_assert_int_eq(gb_get_value(bob, pb, 0, &err), 1);

	/* The defunct request can still be released by its owner. */
	ck_assert_int_ge(gb_release(alice, pa, &err), 0);

	/* A chip plugged in at runtime becomes objects without a restart. */
	ck_assert_int_ge(sd_bus_match_signal(alice, NULL, GB_BUS_NAME, GB_ROOT_PATH,
					     "org.freedesktop.DBus.ObjectManager", "InterfacesAdded",
					     gb_bus_count_message, &added), 0);
	sim_c = gb_sim_chip_new("gbchip-c", 2, NULL);
	ck_assert_ptr_nonnull(sim_c);
	ck_assert(gb_bus_wait_count(alice, &added, 3, 5000));
	ck_assert(gb_wait_line_used(alice, gb_sim_chip_name(sim_c), 1, false, 2000));
	ck_assert_int_ge(gb_request(alice, "new", "gbchip-c:1", "output", 1, NULL, false, NULL, &err), 0);
	ck_assert_int_eq(gb_sim_get_value(sim_c, 1), 1);

	gb_sim_chip_free(sim_c);
	free(name);
	free(cp);
	free(pa);
	free(pb);
	gb_close(alice);
	gb_close(bob);
}
END_TEST

static bool kernel_used(struct gb_sim_chip *s, unsigned int off)
{
	return gb_sim_line_used(s, off, NULL, NULL, 0);
}

START_TEST(test_sigterm_releases_everything)
{
	sd_bus *bus = gb_connect(UID_ALICE);
	sd_bus_error err = SD_BUS_ERROR_NULL;

	ck_assert_int_ge(gb_request(bus, "p", "valve", "output", 1, NULL, true, NULL, &err), 0);
	ck_assert_int_ge(gb_request(bus, "m", "heater", "output", 1, NULL, false, NULL, &err), 0);
	ck_assert(kernel_used(sim_a, 1) && kernel_used(sim_b, 3));
	ck_assert_int_eq(gb_broker_stop(broker), 0);
	broker = 0;
	ck_assert(!kernel_used(sim_a, 1));
	ck_assert(!kernel_used(sim_b, 3));
	gb_close(bus);
}
END_TEST

START_TEST(test_bus_goes_away)
{
	const char *addr = "unix:path=/run/gb-private-bus";
	sd_bus *bus = NULL;
	sd_bus_error err = SD_BUS_ERROR_NULL;
	pid_t dbus, b2;
	char arg[64], line[256];
	int status, ready[2];
	FILE *f;

	/* A bus of its own, so killing it does not disturb the bench's system bus.
	 * The socket file exists between bind() and listen(), when a connect is
	 * still refused; the printed address comes only once the daemon listens. */
	unlink("/run/gb-private-bus");
	ck_assert_int_eq(pipe2(ready, O_CLOEXEC), 0);
	dbus = fork();
	ck_assert_int_ge(dbus, 0);
	if (dbus == 0) {
		/* dup2() onto itself would keep close-on-exec. */
		if (ready[1] == 3 ? fcntl(3, F_SETFD, 0) < 0 : dup2(ready[1], 3) < 0)
			_exit(127);
		execlp("dbus-daemon", "dbus-daemon", "--session", "--nofork", "--nopidfile",
		       "--print-address=3", "--address", addr, (char *)NULL);
		_exit(127);
	}
	close(ready[1]);
	f = fdopen(ready[0], "r");
	ck_assert_ptr_nonnull(f);
	ck_assert_msg(fgets(line, sizeof(line), f) != NULL, "dbus-daemon did not start");
	fclose(f);
	ck_assert_int_ge(sd_bus_new(&bus), 0);
	ck_assert_int_ge(sd_bus_set_address(bus, addr), 0);
	ck_assert_int_ge(sd_bus_set_bus_client(bus, 1), 0);
	ck_assert_int_ge(sd_bus_start(bus), 0);

	snprintf(arg, sizeof(arg), "--bus=%s", addr);
	b2 = fork();
	ck_assert_int_ge(b2, 0);
	if (b2 == 0) {
		execl(gb_broker_bin(), "gpiod-broker", arg, (char *)NULL);
		_exit(127);
	}
	ck_assert(gb_wait_name(bus, GB_BUS_NAME, true, 10000));
	/* Only the second broker can take a line the first one does not hold. */
	ck_assert_int_ge(gb_request(bus, "p", "gbchip-b:1", "output", 1, NULL, true, NULL, &err), 0);
	ck_assert(kernel_used(sim_b, 1));

	kill(dbus, SIGKILL);
	waitpid(dbus, NULL, 0);
	status = gb_broker_wait_exit(b2, 10000 * gb_slow());
	ck_assert_msg(status == 0, "broker did not exit cleanly when its bus went away (%d)", status);
	ck_assert(!kernel_used(sim_b, 1));
	sd_bus_unref(bus);
	(void)status;
}
END_TEST

int main(int argc, char **argv)
{
	Suite *s = suite_create("chips");
	TCase *tc;

	gb_bench_enter(argc, argv);
	tc = gb_tcase_new(s, "chips", setup, teardown, 60 * gb_slow());
	tcase_add_test(tc, test_objects);
	tcase_add_test(tc, test_outside_change);
	tcase_add_test(tc, test_chip_unplugged);
	tcase_add_test(tc, test_sigterm_releases_everything);
	tcase_add_test(tc, test_bus_goes_away);
	return gb_run_suite(s);
}
