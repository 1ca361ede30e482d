/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Private connections (Manager.OpenConnection): one hop to the broker with the
 * identity of the bus connection that opened it. The caller's uid and groups are
 * the bus daemon's record, policy applies as on the bus, requests made there are
 * released to their safe state when the socket closes, the client is killed or
 * the opener leaves the bus; events go to the owner alone, on the private
 * connection. Every other bench test runs over private connections as well
 * (make check-transport); this one tests what only they have, and that every
 * kind of call, good or bad, is answered there as on the bus.
 */
#include <check.h>
#include <signal.h>
#include <stdarg.h>
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

static const char *const names[4] = { "lock", "button", "spare", NULL };
/* The private connections one client may hold (docs/dbus-api.md). */
#define GB_TEST_P2P_MAX 4

static struct gb_sim_chip *sim;
static const char *chip;
static pid_t broker;

static const char policy[] =
	"# Only gb-alice drives the lock; it falls back low whenever she lets go.\n"
	"[line lock]\n"
	"chip = gbp2p\n"
	"offset = 0\n"
	"users = gb-alice\n"
	"directions = output\n"
	"safe-state = output-low\n"
	"\n"
	"[line button]\n"
	"chip = gbp2p\n"
	"offset = 1\n"
	"users = gb-alice, gb-bob\n"
	"directions = input\n"
	"edges = both\n";

static void setup(void)
{
	sim = gb_sim_chip_new("gbp2p", 3, names);
	ck_assert_ptr_nonnull(sim);
	chip = gb_sim_chip_name(sim);
	ck_assert_int_eq(gb_sim_set_pull(sim, 1, false), 0);
	broker = gb_broker_spawn(&(struct gb_broker_opts){ .policy = policy });
}

static void teardown(void)
{
	ck_assert_int_eq(gb_broker_stop(broker), 0);
	gb_sim_chip_free(sim);
}

START_TEST(test_identity_is_the_openers)
{
	sd_bus *abus = gb_connect_bus(UID_ALICE), *bbus = gb_connect_bus(UID_BOB);
	sd_bus *alice = gb_open_p2p(abus), *bob = gb_open_p2p(bbus);
	sd_bus_error err = SD_BUS_ERROR_NULL;
	sd_bus_message *reply = NULL;
	const char *me, *p, *label, *owner;
	char *path = NULL;
	uint32_t uid;
	int persistent, found = 0;

	/* Alice's policy on Alice's private connection... */
	ck_assert_msg(gb_request(alice, "mine", "lock", "output", 1, NULL, false, &path, &err) >= 0,
		      "%s", err.message);
	ck_assert_int_eq(gb_sim_get_value(sim, 0), 1);
	/* ...and Bob's on his: the lock is not his to drive, nor her request to touch. */
	ck_assert_int_lt(gb_request(bob, "theirs", "lock", "output", 1, NULL, false, NULL, &err), 0);
	gb_assert_error(&err, GB_ERROR_PERMISSION, NULL);
	ck_assert_int_lt(gb_set_value(bob, path, 0, false, &err), 0);
	gb_assert_error(&err, GB_ERROR_PERMISSION, NULL);
	ck_assert_int_lt(gb_release(bob, path, &err), 0);
	gb_assert_error(&err, GB_ERROR_PERMISSION, NULL);
	ck_assert_int_eq(gb_sim_get_value(sim, 0), 1);

	/* The request belongs to her bus name and uid, as if made on the bus. */
	ck_assert_int_ge(sd_bus_get_unique_name(abus, &me), 0);
	ck_assert_int_ge(sd_bus_call_method(bob, GB_BUS_NAME, GB_ROOT_PATH, GB_IFACE_MANAGER, "ListRequests",
					    &err, &reply, ""), 0);
	ck_assert_int_ge(sd_bus_message_enter_container(reply, 'a', "(osbus)"), 0);
	while (sd_bus_message_read(reply, "(osbus)", &p, &label, &persistent, &uid, &owner) > 0)
		if (strcmp(p, path) == 0) {
			found = 1;
			ck_assert_uint_eq(uid, UID_ALICE);
			ck_assert_str_eq(owner, me);
		}
	ck_assert(found);
	sd_bus_message_unref(reply);
	/* Her bus connection is the same client: it may use the request too. */
	ck_assert_int_ge(gb_set_value(abus, path, 0, false, &err), 0);
	ck_assert_int_eq(gb_sim_get_value(sim, 0), 0);
	free(path);
	sd_bus_flush_close_unref(alice);
	sd_bus_flush_close_unref(bob);
	sd_bus_flush_close_unref(abus);
	sd_bus_flush_close_unref(bbus);
}
END_TEST

START_TEST(test_closing_the_fd_releases)
{
	sd_bus *root = gb_connect_bus(0), *abus = gb_connect_bus(UID_ALICE), *alice = gb_open_p2p(abus);
	sd_bus_error err = SD_BUS_ERROR_NULL;

	ck_assert_int_ge(gb_request(alice, "mine", "lock", "output", 1, NULL, false, NULL, &err), 0);
	ck_assert_int_eq(gb_sim_get_value(sim, 0), 1);
	/* The socket closes, the bus connection stays: the request goes all the same,
	 * to its safe state. */
	sd_bus_flush_close_unref(alice);
	ck_assert_msg(gb_wait_line_used(root, chip, 0, false, 5000), "request outlived its connection");
	ck_assert_int_eq(gb_sim_get_value(sim, 0), 0);
	/* The bus connection is still a client, with a fresh start. */
	ck_assert_int_ge(gb_request(abus, "again", "lock", "output", 1, NULL, false, NULL, &err), 0);
	ck_assert_int_eq(gb_sim_get_value(sim, 0), 1);
	sd_bus_flush_close_unref(abus);
	sd_bus_flush_close_unref(root);
}
END_TEST

static sd_bus *hold_over_p2p(void *userdata)
{
	sd_bus *bus = gb_connect_bus(UID_ALICE), *p2p = gb_open_p2p(bus);
	sd_bus_error err = SD_BUS_ERROR_NULL;

	(void)userdata;
	if (gb_request(p2p, "mine", "lock", "output", 1, NULL, false, NULL, &err) < 0)
		return NULL;
	return bus; /* both stay open until the kill */
}

START_TEST(test_kill_releases)
{
	sd_bus *root = gb_connect_bus(0);
	char name[64];
	pid_t pid = gb_fork_client(hold_over_p2p, NULL, name, sizeof(name));

	ck_assert_int_eq(gb_sim_get_value(sim, 0), 1);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	gb_wait_client_gone(root, name);
	ck_assert_msg(gb_sim_get_value(sim, 0) == 0, "lock left at its last level, not safe-state");
	ck_assert(!gb_line_prop_bool(root, chip, 0, "Used"));
	sd_bus_flush_close_unref(root);
}
END_TEST

START_TEST(test_opener_leaving_closes_it)
{
	sd_bus *root = gb_connect_bus(0), *abus = gb_connect_bus(UID_ALICE), *alice = gb_open_p2p(abus);
	sd_bus_error err = SD_BUS_ERROR_NULL;
	const char *me;
	char name[64];
	int r;

	ck_assert_int_ge(gb_request(alice, "mine", "lock", "output", 1, NULL, false, NULL, &err), 0);
	ck_assert_int_ge(sd_bus_get_unique_name(abus, &me), 0);
	snprintf(name, sizeof(name), "%s", me);
	sd_bus_flush_close_unref(abus);
	gb_wait_client_gone(root, name);
	ck_assert_int_eq(gb_sim_get_value(sim, 0), 0);
	/* The broker closed the private connection with it. */
	while ((r = sd_bus_process(alice, NULL)) > 0)
		;
	r = gb_ping(alice, &err);
	ck_assert_int_lt(r, 0);
	sd_bus_error_free(&err);
	sd_bus_flush_close_unref(alice);
	sd_bus_flush_close_unref(root);
}
END_TEST

START_TEST(test_limits_and_options)
{
	sd_bus *abus = gb_connect_bus(UID_ALICE), *conns[GB_TEST_P2P_MAX];
	sd_bus_error err = SD_BUS_ERROR_NULL;

	for (int i = 0; i < GB_TEST_P2P_MAX; i++)
		conns[i] = gb_open_p2p(abus);
	ck_assert_int_lt(sd_bus_call_method(abus, GB_BUS_NAME, GB_ROOT_PATH, GB_IFACE_MANAGER, "OpenConnection",
					    &err, NULL, "a{sv}", 0), 0);
	gb_assert_error(&err, GB_ERROR_LIMITS_EXCEEDED, "closing any of them ends the client");
	ck_assert_int_lt(sd_bus_call_method(abus, GB_BUS_NAME, GB_ROOT_PATH, GB_IFACE_MANAGER, "OpenConnection",
					    &err, NULL, "a{sv}", 1, "speed", "s", "ludicrous"), 0);
	gb_assert_error(&err, GB_ERROR_INVALID_ARGS, "speed");
	/* Each of them works. */
	for (int i = 0; i < GB_TEST_P2P_MAX; i++)
		ck_assert_int_ge(gb_ping(conns[i], NULL), 0);
	for (int i = 0; i < GB_TEST_P2P_MAX; i++)
		sd_bus_flush_close_unref(conns[i]);
	sd_bus_flush_close_unref(abus);
}
END_TEST

START_TEST(test_broker_stop_closes_them)
{
	sd_bus *abus = gb_connect_bus(UID_ALICE), *alice = gb_open_p2p(abus);
	sd_bus_error err = SD_BUS_ERROR_NULL;

	ck_assert_int_ge(gb_request(alice, "mine", "lock", "output", 1, NULL, false, NULL, &err), 0);
	ck_assert_int_eq(gb_broker_stop(broker), 0);
	ck_assert_int_eq(gb_sim_get_value(sim, 0), 0);
	/* The broker is gone, and so is its end: nothing answers there any more. */
	ck_assert_int_lt(gb_ping(alice, &err), 0);
	sd_bus_error_free(&err);
	sd_bus_flush_close_unref(alice);
	sd_bus_flush_close_unref(abus);
	broker = gb_broker_spawn(&(struct gb_broker_opts){ .policy = policy }); /* for teardown */
}
END_TEST

struct seen {
	int events, other;
	char sender[64];
};

static int on_signal(sd_bus_message *m, void *userdata, sd_bus_error *e)
{
	struct seen *s = userdata;

	if (!sd_bus_message_is_signal(m, GB_IFACE_REQUEST, NULL))
		return 0;
	if (sd_bus_message_is_signal(m, GB_IFACE_REQUEST, "Event")) {
		s->events++;
		snprintf(s->sender, sizeof(s->sender), "%s", sd_bus_message_get_sender(m) ?: "");
	} else {
		s->other++;
	}
	return 0;
}

START_TEST(test_events_on_the_private_connection)
{
	sd_bus *abus = gb_connect_bus(UID_ALICE), *alice = gb_open_p2p(abus), *spy = gb_connect_bus(UID_BOB);
	sd_bus_error err = SD_BUS_ERROR_NULL;
	struct seen mine = { 0 }, on_bus = { 0 }, spied = { 0 };
	const char *broker_name;

	ck_assert_int_ge(sd_bus_add_match(alice, NULL, "type='signal'", on_signal, &mine), 0);
	ck_assert_int_ge(sd_bus_add_match(abus, NULL, "type='signal',sender='" GB_BUS_NAME "'", on_signal,
					  &on_bus), 0);
	ck_assert_int_ge(sd_bus_add_match(spy, NULL, "type='signal',sender='" GB_BUS_NAME "'", on_signal,
					  &spied), 0);
	ck_assert_int_ge(gb_request(alice, "watch", "button", "input", -1, "both", false, NULL, &err), 0);
	ck_assert_int_eq(gb_sim_set_pull(sim, 1, true), 0);
	ck_assert_msg(gb_bus_wait_count(alice, &mine.events, 1, 5000), "no edge on the private connection");
	ck_assert_int_eq(gb_sim_set_pull(sim, 1, false), 0);
	ck_assert_msg(gb_bus_wait_count(alice, &mine.events, 2, 5000), "no second edge");
	/* It names the broker as on the bus. */
	{
		sd_bus_message *reply = NULL;

		ck_assert_int_ge(sd_bus_call_method(abus, "org.freedesktop.DBus", "/org/freedesktop/DBus",
						    "org.freedesktop.DBus", "GetNameOwner", &err, &reply, "s",
						    GB_BUS_NAME), 0);
		ck_assert_int_ge(sd_bus_message_read(reply, "s", &broker_name), 0);
		ck_assert_str_eq(mine.sender, broker_name);
		sd_bus_message_unref(reply);
	}
	/* Nothing of it went over the bus, to her bus connection or anybody else. */
	ck_assert_int_ge(gb_ping(abus, NULL), 0);
	ck_assert_int_ge(gb_ping(spy, NULL), 0);
	while (sd_bus_process(abus, NULL) > 0)
		;
	while (sd_bus_process(spy, NULL) > 0)
		;
	ck_assert_int_eq(on_bus.events, 0);
	ck_assert_int_eq(spied.events + spied.other, 0);
	sd_bus_flush_close_unref(alice);
	sd_bus_flush_close_unref(abus);
	sd_bus_flush_close_unref(spy);
}
END_TEST

/* One call on @p bus; its error name and message (both "" on success) into @p name
 * and @p msg, and on success the reply's signature and its first array's length. */
static void one_call(sd_bus *bus, char *name, char *msg, char *what, const char *path,
		     const char *iface, const char *member, const char *types, va_list ap)
{
	sd_bus_error err = SD_BUS_ERROR_NULL;
	sd_bus_message *m = NULL, *reply = NULL;
	int n = 0;

	ck_assert_int_ge(sd_bus_message_new_method_call(bus, &m, GB_BUS_NAME, path, iface, member), 0);
	if (types)
		ck_assert_int_ge(sd_bus_message_appendv(m, types, ap), 0);
	if (sd_bus_call(bus, m, 0, &err, &reply) < 0) {
		ck_assert_msg(sd_bus_error_is_set(&err), "%s.%s on %s: no error name", iface, member,
			      path);
		snprintf(name, 128, "%s", err.name);
		snprintf(msg, 256, "%s", err.message ? err.message : "");
		*what = '\0';
	} else {
		const char *sig = sd_bus_message_get_signature(reply, 1);

		*name = *msg = '\0';
		if (sig[0] == 'a' && sd_bus_message_enter_container(reply, 'a', sig + 1) > 0)
			while (sd_bus_message_skip(reply, sig + 1) > 0)
				n++;
		snprintf(what, 128, "%s/%d", sig, n);
	}
	sd_bus_error_free(&err);
	sd_bus_message_unref(m);
	sd_bus_message_unref(reply);
}

/* The call on the bus and on the private connection: the same answer, error for error. */
static void same_answer(sd_bus *bus, sd_bus *p2p, const char *path, const char *iface,
			const char *member, const char *types, ...)
{
	char name[2][128], msg[2][256], what[2][128];
	sd_bus *on[2] = { bus, p2p };

	for (int i = 0; i < 2; i++) {
		va_list ap;

		va_start(ap, types);
		one_call(on[i], name[i], msg[i], what[i], path, iface, member, types, ap);
		va_end(ap);
	}
	ck_assert_msg(strcmp(name[0], name[1]) == 0 && strcmp(msg[0], msg[1]) == 0 &&
		      strcmp(what[0], what[1]) == 0,
		      "%s.%s(%s) on %s: bus \"%s: %s\" %s, private connection \"%s: %s\" %s", iface,
		      member, types ? types : "", path, name[0], msg[0], what[0], name[1], msg[1],
		      what[1]);
}

#define PROPS "org.freedesktop.DBus.Properties"

START_TEST(test_calls_answered_as_on_the_bus)
{
	sd_bus *abus = gb_connect_bus(UID_ALICE), *alice = gb_open_p2p(abus);
	sd_bus_error err = SD_BUS_ERROR_NULL;
	sd_bus_message *reply = NULL;
	char *req = NULL, chip_path[128], line_path[128];
	const char *lp, *chip_name, *nope = GB_ROOT_PATH "/request/999999";
	uint32_t off;

	ck_assert_int_ge(gb_request(alice, "mine", "lock", "output", 1, NULL, false, &req, &err), 0);
	ck_assert_int_ge(sd_bus_call_method(alice, GB_BUS_NAME, GB_ROOT_PATH, GB_IFACE_MANAGER, "FindLine",
					    &err, &reply, "s", "button"), 0);
	ck_assert_int_ge(sd_bus_message_read(reply, "osu", &lp, &chip_name, &off), 0);
	snprintf(line_path, sizeof(line_path), "%s", lp);
	snprintf(chip_path, sizeof(chip_path), GB_CHIP_PREFIX "/%s", chip_name);
	sd_bus_message_unref(reply);

	/* Properties, found and not. */
	same_answer(abus, alice, GB_ROOT_PATH, PROPS, "Get", "ss", GB_IFACE_MANAGER, "Version");
	same_answer(abus, alice, line_path, PROPS, "Get", "ss", GB_IFACE_LINE, "Name");
	same_answer(abus, alice, chip_path, PROPS, "Get", "ss", GB_BUS_NAME ".Chip", "NumLines");
	same_answer(abus, alice, req, PROPS, "GetAll", "s", "");
	same_answer(abus, alice, req, PROPS, "GetAll", "s", GB_IFACE_REQUEST);
	same_answer(abus, alice, line_path, PROPS, "GetAll", "s", GB_IFACE_LINE);
	same_answer(abus, alice, GB_ROOT_PATH, PROPS, "GetAll", "s", PROPS);
	same_answer(abus, alice, GB_ROOT_PATH, PROPS, "GetAll", "s", GB_BUS_NAME ".Nope");
	same_answer(abus, alice, line_path, PROPS, "GetAll", "s", GB_BUS_NAME ".Chip");
	same_answer(abus, alice, GB_ROOT_PATH, PROPS, "Get", "ss", GB_IFACE_MANAGER, "Nope");
	same_answer(abus, alice, chip_path, PROPS, "Get", "ss", GB_IFACE_LINE, "Name");
	same_answer(abus, alice, nope, PROPS, "Get", "ss", GB_IFACE_REQUEST, "Label");
	same_answer(abus, alice, nope, PROPS, "GetAll", "s", "");
	same_answer(abus, alice, GB_ROOT_PATH, PROPS, "Set", "ssv", GB_IFACE_MANAGER, "Version", "s", "x");
	same_answer(abus, alice, GB_ROOT_PATH, PROPS, "Get", "u", 1);
	same_answer(abus, alice, GB_ROOT_PATH, PROPS, "GetAll", NULL);
	/* Methods: found, unknown, on the wrong object, with the wrong arguments. */
	same_answer(abus, alice, GB_ROOT_PATH, GB_IFACE_MANAGER, "FindLine", "s", "button");
	same_answer(abus, alice, GB_ROOT_PATH, GB_IFACE_MANAGER, "FindLine", "s", "no-such-line");
	same_answer(abus, alice, GB_ROOT_PATH, GB_IFACE_MANAGER, "FindLine", "u", 7);
	same_answer(abus, alice, GB_ROOT_PATH, GB_IFACE_MANAGER, "Frobnicate", NULL);
	same_answer(abus, alice, GB_ROOT_PATH, GB_IFACE_REQUEST, "GetValues", "au", 0);
	same_answer(abus, alice, GB_ROOT_PATH "/nope", GB_IFACE_MANAGER, "ListRequests", NULL);
	same_answer(abus, alice, req, GB_IFACE_REQUEST, "GetValues", "au", 1, 0);
	same_answer(abus, alice, req, GB_IFACE_REQUEST, "GetValues", "au", 1, 9);
	same_answer(abus, alice, req, GB_BUS_NAME ".Nope", "GetValues", "au", 0);
	same_answer(abus, alice, nope, GB_IFACE_REQUEST, "Release", NULL);
	same_answer(abus, alice, line_path, GB_IFACE_REQUEST, "Release", NULL);
	same_answer(abus, alice, "/", GB_IFACE_MANAGER, "ListRequests", NULL);
	same_answer(abus, alice, GB_ROOT_PATH, NULL, "ListRequests", NULL);
	same_answer(abus, alice, GB_ROOT_PATH, "org.freedesktop.DBus.Peer", "Ping", NULL);
	same_answer(abus, alice, GB_ROOT_PATH, "org.freedesktop.DBus.Peer", "GetMachineId", NULL);
	same_answer(abus, alice, GB_ROOT_PATH, "org.freedesktop.DBus.Peer", "Nope", NULL);

	/* What describes the whole tree is the bus's (docs/dbus-api.md, OpenConnection). */
	ck_assert_int_ge(sd_bus_call_method(abus, GB_BUS_NAME, req, "org.freedesktop.DBus.Introspectable",
					    "Introspect", &err, NULL, ""), 0);
	ck_assert_int_lt(sd_bus_call_method(alice, GB_BUS_NAME, req, "org.freedesktop.DBus.Introspectable",
					    "Introspect", &err, NULL, ""), 0);
	gb_assert_error(&err, SD_BUS_ERROR_UNKNOWN_METHOD, "system bus");
	ck_assert_int_ge(sd_bus_call_method(abus, GB_BUS_NAME, GB_ROOT_PATH, "org.freedesktop.DBus.ObjectManager",
					    "GetManagedObjects", &err, NULL, ""), 0);
	ck_assert_int_lt(sd_bus_call_method(alice, GB_BUS_NAME, GB_ROOT_PATH, "org.freedesktop.DBus.ObjectManager",
					    "GetManagedObjects", &err, NULL, ""), 0);
	gb_assert_error(&err, SD_BUS_ERROR_UNKNOWN_METHOD, "system bus");
	free(req);
	sd_bus_flush_close_unref(alice);
	sd_bus_flush_close_unref(abus);
}
END_TEST

int main(int argc, char **argv)
{
	Suite *s = suite_create("p2p");
	TCase *tc;

	gb_bench_enter(argc, argv);
	tc = gb_tcase_new(s, "p2p", setup, teardown, 60 * gb_slow());
	tcase_add_test(tc, test_identity_is_the_openers);
	tcase_add_test(tc, test_closing_the_fd_releases);
	tcase_add_test(tc, test_kill_releases);
	tcase_add_test(tc, test_opener_leaving_closes_it);
	tcase_add_test(tc, test_limits_and_options);
	tcase_add_test(tc, test_broker_stop_closes_them);
	tcase_add_test(tc, test_events_on_the_private_connection);
	tcase_add_test(tc, test_calls_answered_as_on_the_bus);
	return gb_run_suite(s);
}
