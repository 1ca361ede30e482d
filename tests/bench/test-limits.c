/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Per-client and per-uid limits (daemon/core/request-limits.c): over a limit the broker answers
 * org.gpiodbroker1.Error.LimitsExceeded, holds nothing more, and a release frees
 * the room at once. Root is not exempt.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "broker-calls.h"
#include "brokertest.h"
#include "bus-util.h"
#include "gpiosim.h"
#include "org.gpiodbroker1.h"
#include "testmain.h"
#include "timing.h"
#include "users.h"

#define LIMITS_EXCEEDED GB_ERROR_LIMITS_EXCEEDED

static struct gb_sim_chip *sim;
static const char *chip;
static pid_t broker;

static void setup(void)
{
	sim = gb_sim_chip_new("gblim", 16, NULL);
	ck_assert_ptr_nonnull(sim);
	chip = gb_sim_chip_name(sim);
}

static void teardown(void)
{
	ck_assert_int_eq(gb_broker_stop(broker), 0);
	gb_sim_chip_free(sim);
}

/* Request lines [first, first + n) as inputs; the call's result. */
static int request_n(sd_bus *bus, unsigned int first, unsigned int n, bool persistent,
		     char **path, sd_bus_error *err)
{
	char buf[16][64];
	const char *specs[16];

	ck_assert_uint_le(n, 16);
	for (unsigned int i = 0; i < n; i++) {
		snprintf(buf[i], sizeof(buf[i]), "%s:%u", chip, first + i);
		specs[i] = buf[i];
	}
	return gb_request_lines(bus, "limits", specs, n, "input", -1, NULL, persistent, path, err);
}

static void expect_limit(sd_bus *bus, unsigned int first, unsigned int n, bool persistent)
{
	sd_bus_error err = SD_BUS_ERROR_NULL;

	ck_assert_int_lt(request_n(bus, first, n, persistent, NULL, &err), 0);
	gb_assert_error(&err, LIMITS_EXCEEDED, NULL);
	/* Nothing was taken. */
	for (unsigned int i = 0; i < n; i++)
		ck_assert(!gb_line_prop_bool(bus, chip, first + i, "Used"));
}

static char *expect_ok(sd_bus *bus, unsigned int first, unsigned int n, bool persistent)
{
	sd_bus_error err = SD_BUS_ERROR_NULL;
	char *path = NULL;

	ck_assert_msg(request_n(bus, first, n, persistent, &path, &err) >= 0, "request: %s: %s",
		      err.name, err.message);
	return path;
}

static void release(sd_bus *bus, char *path)
{
	ck_assert_int_ge(gb_release(bus, path, NULL), 0);
	free(path);
}

static void requests_per_client(uid_t uid)
{
	sd_bus *bus, *other;
	char *a, *b;

	broker = gb_broker_spawn(&(struct gb_broker_opts){ .args = GB_ARGS("--max-requests-per-client=2") });
	bus = gb_connect(uid);
	a = expect_ok(bus, 0, 1, false);
	b = expect_ok(bus, 1, 1, false);
	expect_limit(bus, 2, 1, false);
	/* Per connection: another connection of the same uid has its own room. */
	other = gb_connect(uid);
	free(expect_ok(other, 3, 1, false));
	/* A release frees the room at once. */
	release(bus, a);
	free(expect_ok(bus, 2, 1, false));
	expect_limit(bus, 4, 1, false);
	free(b);
	gb_close(other);
	gb_close(bus);
}

START_TEST(test_requests_per_client)
{
	requests_per_client(UID_ALICE);
}
END_TEST

START_TEST(test_root_not_exempt)
{
	requests_per_client(0);
}
END_TEST

START_TEST(test_lines_per_client)
{
	sd_bus *bus;
	char *a;

	broker = gb_broker_spawn(&(struct gb_broker_opts){ .args = GB_ARGS("--max-lines-per-client=5") });
	bus = gb_connect(UID_BOB);
	a = expect_ok(bus, 0, 3, false);
	expect_limit(bus, 3, 3, false);       /* 3 + 3 > 5 */
	free(expect_ok(bus, 3, 2, false));    /* 3 + 2 = 5 */
	expect_limit(bus, 5, 1, false);
	release(bus, a);
	free(expect_ok(bus, 5, 3, false));
	gb_close(bus);
}
END_TEST

START_TEST(test_persistent_per_uid)
{
	sd_bus *alice1, *alice2, *bob;
	char *a, *b;

	broker = gb_broker_spawn(&(struct gb_broker_opts){ .args = GB_ARGS("--max-persistent-per-uid=2") });
	alice1 = gb_connect(UID_ALICE);
	a = expect_ok(alice1, 0, 1, true);
	gb_close(alice1);
	/* Per uid: a new connection of the same uid finds the room taken. */
	alice2 = gb_connect(UID_ALICE);
	b = expect_ok(alice2, 1, 1, true);
	expect_limit(alice2, 2, 1, true);
	/* Managed requests are not persistent ones. */
	free(expect_ok(alice2, 2, 1, false));
	/* Another uid has its own room. */
	bob = gb_connect(UID_BOB);
	free(expect_ok(bob, 3, 1, true));
	free(expect_ok(bob, 4, 1, true));
	expect_limit(bob, 5, 1, true);
	release(alice2, a);
	free(expect_ok(alice2, 5, 1, true));
	free(b);
	gb_close(bob);
	gb_close(alice2);
}
END_TEST

START_TEST(test_default_limits)
{
	sd_bus *bus;

	/* The defaults leave room for a whole chip in one connection. */
	broker = gb_broker_spawn(NULL);
	bus = gb_connect(UID_CAROL);
	for (unsigned int i = 0; i < 16; i++)
		free(expect_ok(bus, i, 1, false));
	gb_close(bus);
}
END_TEST

int main(int argc, char **argv)
{
	Suite *s = suite_create("limits");
	TCase *tc;

	gb_bench_enter(argc, argv);
	tc = gb_tcase_new(s, "limits", setup, teardown, 60 * gb_slow());
	tcase_add_test(tc, test_requests_per_client);
	tcase_add_test(tc, test_root_not_exempt);
	tcase_add_test(tc, test_lines_per_client);
	tcase_add_test(tc, test_persistent_per_uid);
	tcase_add_test(tc, test_default_limits);
	return gb_run_suite(s);
}
