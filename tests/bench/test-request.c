/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Requests through the real broker on the real bus: the gpio_request() model.
 * Request/release, labels in the kernel, exclusivity, atomic multi-line requests,
 * managed (devm) vs persistent lifetime, values, directions, ownership, bad input.
 */
#include <check.h>
#include <gpiod.h>
#include <signal.h>
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

static const char *const names[8] = { "led", "button", "reset", "motor", NULL, NULL, NULL, "spare" };
static struct gb_sim_chip *sim;
static pid_t broker;
static const char *chip; /* gpiochipN */

static void setup(void)
{
	sim = gb_sim_chip_new("gbreq", 8, names);
	ck_assert_ptr_nonnull(sim);
	chip = gb_sim_chip_name(sim);
	broker = gb_broker_spawn(NULL);
}

static void teardown(void)
{
	ck_assert_int_eq(gb_broker_stop(broker), 0);
	gb_sim_chip_free(sim);
}

/* What the kernel says of a line, independent of the broker. */
static bool kernel_used(unsigned int off, char *consumer, size_t size)
{
	return gb_sim_line_used(sim, off, NULL, consumer, size);
}

START_TEST(test_request_release)
{
	sd_bus *bus = gb_connect(UID_ALICE);
	sd_bus_error err = SD_BUS_ERROR_NULL;
	char *path = NULL, *path2 = NULL, *s, consumer[64];

	ck_assert_int_ge(gb_request(bus, "door-ctl", "led", "output", 1, NULL, false, &path, &err), 0);
	ck_assert_str_eq(path, GB_ROOT_PATH "/request/1");

	/* The label is the kernel's consumer, and the line object shows who holds it. */
	ck_assert(kernel_used(0, consumer, sizeof(consumer)));
	ck_assert_str_eq(consumer, "door-ctl");
	ck_assert(gb_wait_line_used(bus, chip, 0, true, 2000));
	s = gb_line_prop_str(bus, chip, 0, "Consumer");
	ck_assert_str_eq(s, "door-ctl");
	free(s);
	s = gb_line_prop_str(bus, chip, 0, "RequestLabel");
	ck_assert_str_eq(s, "door-ctl");
	free(s);
	s = gb_line_prop_str(bus, chip, 0, "Direction");
	ck_assert_str_eq(s, "output");
	free(s);
	ck_assert_int_eq(gb_sim_get_value(sim, 0), 1);

	ck_assert_int_ge(gb_release(bus, path, &err), 0);
	ck_assert(!kernel_used(0, NULL, 0));
	ck_assert(gb_wait_line_used(bus, chip, 0, false, 2000));

	/* Paths are never reused. */
	ck_assert_int_ge(gb_request(bus, "door-ctl", "led", "output", 0, NULL, false, &path2, &err), 0);
	ck_assert_str_eq(path2, GB_ROOT_PATH "/request/2");
	free(path);
	free(path2);
	gb_close(bus);
}
END_TEST

START_TEST(test_exclusive)
{
	sd_bus *a = gb_connect(UID_ALICE), *a2 = gb_connect(UID_ALICE), *b = gb_connect(UID_BOB);
	sd_bus_error err = SD_BUS_ERROR_NULL;
	char *path = NULL;

	ck_assert_int_ge(gb_request(a, "holder", "button", "input", -1, NULL, false, &path, &err), 0);
	ck_assert_int_lt(gb_request(b, "thief", "button", "input", -1, NULL, false, NULL, &err), 0);
	ck_assert_str_eq(err.name, GB_ERROR_BUSY);
	ck_assert_msg(strstr(err.message, path) && strstr(err.message, "holder"),
		      "Busy should say who holds the line: %s", err.message);
	sd_bus_error_free(&err);
	/* Another connection of the same user is another client too. */
	ck_assert_int_lt(gb_request(a2, "again", "gbreq:1", "input", -1, NULL, false, NULL, &err), 0);
	gb_assert_error(&err, GB_ERROR_BUSY, NULL);
	free(path);
	gb_close(a);
	gb_close(a2);
	gb_close(b);
}
END_TEST

START_TEST(test_atomic)
{
	sd_bus *a = gb_connect(UID_ALICE), *b = gb_connect(UID_BOB);
	sd_bus_error err = SD_BUS_ERROR_NULL;
	struct gb_sim_chip *hogged;
	int r;

	/* A line held by another client: the whole request fails, nothing is held. */
	ck_assert_int_ge(gb_request(a, "a", "motor", "output", 0, NULL, false, NULL, &err), 0);
	r = sd_bus_call_method(b, GB_BUS_NAME, GB_ROOT_PATH, GB_IFACE_MANAGER, "Request", &err, NULL,
			       "sa(sa{sv})a{sv}", "b", 3,
			       "led", 1, "direction", "s", "output",
			       "reset", 1, "direction", "s", "input",
			       "motor", 1, "direction", "s", "input", 0);
	ck_assert_int_lt(r, 0);
	gb_assert_error(&err, GB_ERROR_BUSY, NULL);
	ck_assert(!kernel_used(0, NULL, 0));
	ck_assert(!kernel_used(2, NULL, 0));

	/* Across chips: the second chip's line is hogged by a kernel driver, so the
	 * kernel refuses it after the broker has already got the first chip's line.
	 * The first must be back with the kernel when the error arrives. */
	hogged = gb_sim_chip_new_hogged("gbhog", 4, NULL, 2, "kernel-driver");
	ck_assert_ptr_nonnull(hogged);
	ck_assert(gb_wait_line_used(a, gb_sim_chip_name(hogged), 2, true, 3000));
	r = sd_bus_call_method(b, GB_BUS_NAME, GB_ROOT_PATH, GB_IFACE_MANAGER, "Request", &err, NULL,
			       "sa(sa{sv})a{sv}", "b", 2,
			       "led", 1, "direction", "s", "output",
			       "gbhog:2", 1, "direction", "s", "input", 0);
	ck_assert_int_lt(r, 0);
	gb_assert_error(&err, GB_ERROR_BUSY, "kernel-driver");
	ck_assert(!kernel_used(0, NULL, 0));
	ck_assert(!gb_line_prop_bool(a, chip, 0, "Used"));

	/* And a multi-line request that works holds all, values in order. */
	r = sd_bus_call_method(b, GB_BUS_NAME, GB_ROOT_PATH, GB_IFACE_MANAGER, "Request", &err, NULL,
			       "sa(sa{sv})a{sv}", "multi", 2,
			       "led", 2, "direction", "s", "output", "value", "b", 1,
			       "reset", 2, "direction", "s", "output", "value", "b", 0, 0);
	ck_assert_int_ge(r, 0);
	ck_assert_int_eq(gb_sim_get_value(sim, 0), 1);
	ck_assert_int_eq(gb_sim_get_value(sim, 2), 0);
	gb_sim_chip_free(hogged);
	gb_close(a);
	gb_close(b);
}
END_TEST

/* A client in its own process: alice drives the motor, then waits to be killed. */
static pid_t spawn_holder(bool persistent, char *name, size_t size)
{
	return gb_spawn_holder(UID_ALICE, persistent ? "keeper" : "devm", "motor", "output", 1, persistent, name,
			       size);
}

/* One request of 64 lines takes and gives back 64 lines at once: more line-info
 * events than the kernel queues per chip fd (32; it drops the rest without a word).
 * The broker must still show every line as it is. */
START_TEST(test_wide_request_seen_whole)
{
	sd_bus *bus = gb_connect(UID_ALICE);
	sd_bus_error err = SD_BUS_ERROR_NULL;
	struct gb_sim_chip *wide = gb_sim_chip_new("gbwide", 64, NULL);
	const char *specs[64];
	char spec_buf[64][32], *path = NULL;
	const char *wchip;

	ck_assert_ptr_nonnull(wide);
	wchip = gb_sim_chip_name(wide);
	ck_assert(gb_wait_line_used(bus, wchip, 63, false, 5000));
	for (int i = 0; i < 64; i++) {
		snprintf(spec_buf[i], sizeof(spec_buf[i]), "%s:%d", wchip, i);
		specs[i] = spec_buf[i];
	}
	ck_assert_int_ge(gb_request_lines(bus, "wide", specs, 64, "output", 0, NULL, false, &path, &err),
			 0);
	for (int i = 0; i < 64; i++)
		ck_assert_msg(gb_wait_line_used(bus, wchip, i, true, 5000), "line %d not shown used", i);
	ck_assert_int_ge(gb_release(bus, path, &err), 0);
	for (int i = 0; i < 64; i++)
		ck_assert_msg(gb_wait_line_used(bus, wchip, i, false, 5000), "line %d still shown used",
			      i);
	free(path);
	gb_close(bus);
	gb_sim_chip_free(wide);
}
END_TEST

START_TEST(test_managed_release_on_kill)
{
	sd_bus *bus = gb_connect(0);
	char name[64];
	pid_t pid = spawn_holder(false, name, sizeof(name));

	ck_assert(kernel_used(3, NULL, 0));
	ck_assert_int_eq(gb_sim_get_value(sim, 3), 1);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	gb_wait_client_gone(bus, name);
	ck_assert_msg(!kernel_used(3, NULL, 0), "managed request outlived its client");
	ck_assert(!gb_line_prop_bool(bus, chip, 3, "Used"));
	gb_close(bus);
}
END_TEST

START_TEST(test_persistent_survives)
{
	sd_bus *root = gb_connect(0), *alice = gb_connect(UID_ALICE), *bob = gb_connect(UID_BOB);
	sd_bus_error err = SD_BUS_ERROR_NULL;
	sd_bus_message *reply = NULL;
	const char *path = NULL, *label, *owner;
	int persistent;
	uint32_t uid;
	char name[64];
	pid_t pid = spawn_holder(true, name, sizeof(name));

	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	gb_wait_client_gone(root, name);
	ck_assert_msg(kernel_used(3, NULL, 0), "persistent request died with its client");
	ck_assert_int_eq(gb_sim_get_value(sim, 3), 1);

	ck_assert_int_ge(sd_bus_call_method(root, GB_BUS_NAME, GB_ROOT_PATH, GB_IFACE_MANAGER, "ListRequests",
					    &err, &reply, ""), 0);
	ck_assert_int_eq(sd_bus_message_enter_container(reply, 'a', "(osbus)"), 1);
	ck_assert_int_eq(sd_bus_message_read(reply, "(osbus)", &path, &label, &persistent, &uid, &owner), 1);
	ck_assert_str_eq(label, "keeper");
	ck_assert(persistent);
	ck_assert_uint_eq(uid, UID_ALICE);
	ck_assert_str_eq(owner, "");

	/* It belongs to alice's uid: another connection of alice may use it, bob not. */
	ck_assert_int_ge(gb_set_value(alice, path, 0, false, &err), 0);
	ck_assert_int_eq(gb_sim_get_value(sim, 3), 0);
	ck_assert_int_lt(gb_set_value(bob, path, 0, true, &err), 0);
	gb_assert_error(&err, GB_ERROR_PERMISSION, NULL);
	ck_assert_int_eq(gb_sim_get_value(sim, 3), 0);
	ck_assert_int_lt(gb_release(bob, path, &err), 0);
	gb_assert_error(&err, GB_ERROR_PERMISSION, NULL);
	/* Root may release it. */
	ck_assert_int_ge(gb_release(root, path, &err), 0);
	ck_assert(!kernel_used(3, NULL, 0));
	sd_bus_message_unref(reply);
	gb_close(root);
	gb_close(alice);
	gb_close(bob);
}
END_TEST

START_TEST(test_managed_owner_only)
{
	sd_bus *a = gb_connect(UID_ALICE), *a2 = gb_connect(UID_ALICE);
	sd_bus_error err = SD_BUS_ERROR_NULL;
	char *path = NULL;

	ck_assert_int_ge(gb_request(a, "mine", "led", "output", 0, NULL, false, &path, &err), 0);
	/* Managed: the owning connection only, even for the same uid. */
	ck_assert_int_lt(gb_set_value(a2, path, 0, true, &err), 0);
	gb_assert_error(&err, GB_ERROR_PERMISSION, NULL);
	ck_assert_int_eq(gb_sim_get_value(sim, 0), 0);
	free(path);
	gb_close(a);
	gb_close(a2);
}
END_TEST

START_TEST(test_values)
{
	sd_bus *bus = gb_connect(UID_BOB);
	sd_bus_error err = SD_BUS_ERROR_NULL;
	sd_bus_message *reply = NULL;
	char *out = NULL, *in = NULL;
	int v0, v1, v2;

	ck_assert_int_ge(gb_request(bus, "o", "led", "output", 0, NULL, false, &out, &err), 0);
	for (int i = 0; i < 4; i++) {
		ck_assert_int_ge(gb_set_value(bus, out, 0, i % 2, &err), 0);
		ck_assert_int_eq(gb_sim_get_value(sim, 0), i % 2);
		ck_assert_int_eq(gb_get_value(bus, out, 0, &err), i % 2);
	}

	ck_assert_int_eq(gb_sim_set_pull(sim, 1, true), 0);
	ck_assert_int_ge(gb_request(bus, "i", "button", "input", -1, NULL, false, &in, &err), 0);
	ck_assert_int_eq(gb_get_value(bus, in, 0, &err), 1);
	ck_assert_int_eq(gb_sim_set_pull(sim, 1, false), 0);
	ck_assert_int_eq(gb_get_value(bus, in, 0, &err), 0);

	/* set on an input is an error, not a no-op */
	ck_assert_int_lt(gb_set_value(bus, in, 0, true, &err), 0);
	gb_assert_error(&err, GB_ERROR_NOT_OUTPUT, NULL);

	/* Many lines: one call, values in request order; empty index list = all. */
	ck_assert_int_ge(sd_bus_call_method(bus, GB_BUS_NAME, GB_ROOT_PATH, GB_IFACE_MANAGER, "Request", &err, &reply,
					    "sa(sa{sv})a{sv}", "many", 3,
					    "reset", 2, "direction", "s", "output", "value", "b", 1,
					    "motor", 2, "direction", "s", "output", "value", "b", 0,
					    "spare", 2, "direction", "s", "output", "value", "b", 1, 0), 0);
	{
		const char *p;

		ck_assert_int_ge(sd_bus_message_read(reply, "o", &p), 0);
		free(out);
		out = strdup(p);
	}
	sd_bus_message_unref(reply);
	reply = NULL;
	ck_assert_int_ge(sd_bus_call_method(bus, GB_BUS_NAME, out, GB_IFACE_REQUEST, "SetValues", &err, NULL,
					    "a(ub)", 2, 0, 0, 1, 1), 0);
	ck_assert_int_eq(gb_sim_get_value(sim, 2), 0);
	ck_assert_int_eq(gb_sim_get_value(sim, 3), 1);
	ck_assert_int_eq(gb_sim_get_value(sim, 7), 1);
	ck_assert_int_ge(sd_bus_call_method(bus, GB_BUS_NAME, out, GB_IFACE_REQUEST, "GetValues", &err, &reply,
					    "au", 0), 0);
	ck_assert_int_eq(sd_bus_message_read(reply, "ab", 3, &v0, &v1, &v2), 1);
	ck_assert(!v0 && v1 && v2);
	sd_bus_message_unref(reply);
	free(out);
	free(in);
	gb_close(bus);
}
END_TEST

START_TEST(test_direction)
{
	sd_bus *bus = gb_connect(UID_ALICE);
	sd_bus_error err = SD_BUS_ERROR_NULL;
	char *path = NULL, *s;

	ck_assert_int_eq(gb_sim_set_pull(sim, 2, false), 0);
	ck_assert_int_ge(gb_request(bus, "dir", "reset", "input", -1, NULL, false, &path, &err), 0);
	/* gpio_direction_output(value): value in the same call, no glitch to another level */
	ck_assert_int_ge(sd_bus_call_method(bus, GB_BUS_NAME, path, GB_IFACE_REQUEST, "SetDirectionOutput", &err,
					    NULL, "a(ub)", 1, 0, 1), 0);
	ck_assert_int_eq(gb_sim_get_value(sim, 2), 1);
	ck_assert(gb_wait_line_used(bus, chip, 2, true, 1000));
	s = gb_line_prop_str(bus, chip, 2, "Direction");
	ck_assert_str_eq(s, "output");
	free(s);
	ck_assert_int_ge(gb_set_value(bus, path, 0, false, &err), 0);
	ck_assert_int_eq(gb_sim_get_value(sim, 2), 0);

	ck_assert_int_ge(sd_bus_call_method(bus, GB_BUS_NAME, path, GB_IFACE_REQUEST, "SetDirectionInput", &err,
					    NULL, "au", 0), 0);
	ck_assert_int_lt(gb_set_value(bus, path, 0, true, &err), 0);
	gb_assert_error(&err, GB_ERROR_NOT_OUTPUT, NULL);

	/* Reconfigure to output must say which level. */
	ck_assert_int_lt(sd_bus_call_method(bus, GB_BUS_NAME, path, GB_IFACE_REQUEST, "Reconfigure", &err, NULL,
					    "a(ua{sv})", 1, 0, 1, "direction", "s", "output"), 0);
	gb_assert_error(&err, GB_ERROR_INVALID_ARGS, NULL);
	ck_assert_int_ge(sd_bus_call_method(bus, GB_BUS_NAME, path, GB_IFACE_REQUEST, "Reconfigure", &err, NULL,
					    "a(ua{sv})", 1, 0, 3, "direction", "s", "output",
					    "value", "b", 1, "active-low", "b", 1), 0);
	/* active-low: logical 1 is a low level */
	ck_assert_int_eq(gb_sim_get_value(sim, 2), 0);
	free(path);
	gb_close(bus);
}
END_TEST

#define expect_error gb_call_expect_error

#define INVALID GB_ERROR_INVALID_ARGS
#define NOTFOUND GB_ERROR_NOT_FOUND
#define REQ "sa(sa{sv})a{sv}"

START_TEST(test_bad_input)
{
	sd_bus *bus = gb_connect(UID_CAROL);
	sd_bus_error err = SD_BUS_ERROR_NULL;
	char *path = NULL;

	/* wrong signature: sd-bus itself rejects it */
	expect_error(bus, "org.freedesktop.DBus.Error.InvalidArgs", GB_ROOT_PATH, GB_IFACE_MANAGER, "Request",
		     "s", "x");
	expect_error(bus, INVALID, GB_ROOT_PATH, GB_IFACE_MANAGER, "Request", REQ, "", 1, "led", 0, 0);
	expect_error(bus, INVALID, GB_ROOT_PATH, GB_IFACE_MANAGER, "Request", REQ, "bad\nlabel", 1, "led", 0, 0);
	expect_error(bus, INVALID, GB_ROOT_PATH, GB_IFACE_MANAGER, "Request", REQ,
		     "a-label-that-is-far-too-long-for-the-kernel-consumer-field-x", 1, "led", 0, 0);
	expect_error(bus, INVALID, GB_ROOT_PATH, GB_IFACE_MANAGER, "Request", REQ, "x", 0, 0);
	expect_error(bus, NOTFOUND, GB_ROOT_PATH, GB_IFACE_MANAGER, "Request", REQ, "x", 1, "nosuchline", 0, 0);
	expect_error(bus, NOTFOUND, GB_ROOT_PATH, GB_IFACE_MANAGER, "Request", REQ, "x", 1, "gbreq:8", 0, 0);
	expect_error(bus, NOTFOUND, GB_ROOT_PATH, GB_IFACE_MANAGER, "Request", REQ, "x", 1, "nochip:0", 0, 0);
	expect_error(bus, INVALID, GB_ROOT_PATH, GB_IFACE_MANAGER, "Request", REQ, "x", 1, "gbreq:", 0, 0);
	expect_error(bus, NOTFOUND, GB_ROOT_PATH, GB_IFACE_MANAGER, "Request", REQ, "x", 1,
		     GB_ROOT_PATH "/chip/gpiochip99/line0", 0, 0);
	expect_error(bus, INVALID, GB_ROOT_PATH, GB_IFACE_MANAGER, "Request", REQ, "x", 1,
		     "led", 1, "colour", "s", "red", 0);
	expect_error(bus, INVALID, GB_ROOT_PATH, GB_IFACE_MANAGER, "Request", REQ, "x", 1,
		     "led", 1, "direction", "b", 1, 0);
	expect_error(bus, INVALID, GB_ROOT_PATH, GB_IFACE_MANAGER, "Request", REQ, "x", 1,
		     "led", 1, "direction", "s", "sideways", 0);
	expect_error(bus, INVALID, GB_ROOT_PATH, GB_IFACE_MANAGER, "Request", REQ, "x", 1,
		     "led", 1, "value", "b", 1, 0); /* value without output */
	expect_error(bus, INVALID, GB_ROOT_PATH, GB_IFACE_MANAGER, "Request", REQ, "x", 1,
		     "led", 2, "direction", "s", "output", "edge", "s", "both", 0);
	expect_error(bus, INVALID, GB_ROOT_PATH, GB_IFACE_MANAGER, "Request", REQ, "x", 1,
		     "led", 1, "debounce-us", "as", 0, 0);
	expect_error(bus, INVALID, GB_ROOT_PATH, GB_IFACE_MANAGER, "Request", REQ, "x", 2,
		     "led", 0, "gbreq:0", 0, 0); /* the same line twice */
	expect_error(bus, INVALID, GB_ROOT_PATH, GB_IFACE_MANAGER, "Request", REQ, "x", 1, "led", 0,
		     1, "forever", "b", 1);
	expect_error(bus, INVALID, GB_ROOT_PATH, GB_IFACE_MANAGER, "Request", REQ, "x", 1, "led", 0,
		     1, "persistent", "s", "yes");
	expect_error(bus, INVALID, GB_ROOT_PATH, GB_IFACE_MANAGER, "FindLine", "s", "");
	expect_error(bus, "org.freedesktop.DBus.Error.UnknownObject", GB_ROOT_PATH "/request/999",
		     GB_IFACE_REQUEST, "Release", "");

	/* nothing above left a line held */
	for (unsigned int i = 0; i < 8; i++)
		ck_assert(!kernel_used(i, NULL, 0));

	ck_assert_int_ge(gb_request(bus, "ok", "led", "output", 0, NULL, false, &path, &err), 0);
	expect_error(bus, INVALID, path, GB_IFACE_REQUEST, "GetValues", "au", 1, 5);
	expect_error(bus, INVALID, path, GB_IFACE_REQUEST, "SetValues", "a(ub)", 1, 1, 1);
	expect_error(bus, INVALID, path, GB_IFACE_REQUEST, "SetValues", "a(ub)", 0);
	expect_error(bus, INVALID, path, GB_IFACE_REQUEST, "SetValues", "a(ub)", 2, 0, 1, 0, 0);
	expect_error(bus, INVALID, path, GB_IFACE_REQUEST, "Reconfigure", "a(ua{sv})", 1, 0, 1,
		     "bias", "s", "sticky");
	expect_error(bus, "org.freedesktop.DBus.Error.InvalidArgs", path, GB_IFACE_REQUEST, "SetValues",
		     "au", 1, 0);

	/* still healthy */
	ck_assert_int_ge(gb_ping(bus, &err), 0);
	free(path);
	gb_close(bus);
}
END_TEST

int main(int argc, char **argv)
{
	Suite *s = suite_create("request");
	TCase *tc;

	gb_bench_enter(argc, argv);
	tc = gb_tcase_new(s, "request", setup, teardown, 60 * gb_slow());
	tcase_add_test(tc, test_request_release);
	tcase_add_test(tc, test_exclusive);
	tcase_add_test(tc, test_atomic);
	tcase_add_test(tc, test_wide_request_seen_whole);
	tcase_add_test(tc, test_managed_release_on_kill);
	tcase_add_test(tc, test_persistent_survives);
	tcase_add_test(tc, test_managed_owner_only);
	tcase_add_test(tc, test_values);
	tcase_add_test(tc, test_direction);
	tcase_add_test(tc, test_bad_input);
	return gb_run_suite(s);
}
