/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Integrator policy on the real broker, with real uids and groups: who may use which
 * line and how, aliases, safe states when a holder dies, reload and revocation.
 */
#include <check.h>
#include <gpiod.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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

static const char *const names[8] = { "door-sensor", "lock", "heater", "fan", "spare" };
static struct gb_sim_chip *sim;
static pid_t broker;
static const char *chip;

static const char policy[] =
	"[broker]\n"
	"root-bypass = yes\n"
	"\n"
	"# The door lock: only gb-alice drives it, and it must never be left unlocked.\n"
	"[line door-lock]\n"
	"chip = gbpol\n"
	"offset = 1\n"
	"users = gb-alice\n"
	"directions = output\n"
	"safe-state = output-low\n"
	"initial-value = 0\n"
	"label-prefix = lock-\n"
	"\n"
	"# Members of gb-gpio (gb-carol, as a supplementary group) read the sensor.\n"
	"[line door]\n"
	"line-name = door-sensor\n"
	"groups = gb-gpio\n"
	"directions = input\n"
	"edges = both\n"
	"persistent = yes\n"
	"\n"
	"[line heater]\n"
	"chip = gbpol\n"
	"offset = 2\n"
	"users = gb-alice, gb-bob\n"
	"directions = input, output\n"
	"direction-may-change = no\n"
	"safe-state = input\n";

static void setup(void)
{
	sim = gb_sim_chip_new("gbpol", 8, names);
	ck_assert_ptr_nonnull(sim);
	chip = gb_sim_chip_name(sim);
	broker = gb_broker_spawn(&(struct gb_broker_opts){ .policy = policy });
}

static void teardown(void)
{
	if (broker > 0)
		ck_assert_int_eq(gb_broker_stop(broker), 0);
	gb_sim_chip_free(sim);
}

#define expect_denied(err, needle) gb_assert_error((err), GB_ERROR_PERMISSION, (needle))

START_TEST(test_users)
{
	sd_bus *alice = gb_connect(UID_ALICE), *bob = gb_connect(UID_BOB);
	sd_bus_error err = SD_BUS_ERROR_NULL;
	char *s;

	/* The alias names the line; the allowed user gets it, with the initial value. */
	ck_assert_int_ge(gb_request(alice, "lock-main", "door-lock", "output", -1, NULL, false, NULL, &err), 0);
	ck_assert_int_eq(gb_sim_get_value(sim, 1), 0);
	s = gb_line_prop_str(alice, chip, 1, "Alias");
	ck_assert_str_eq(s, "door-lock");
	free(s);
	s = gb_line_prop_str(alice, chip, 1, "Policy");
	ck_assert_msg(strstr(s, "[line door-lock]") && strstr(s, "50-test.conf:5"), "%s", s);
	free(s);

	/* Another user: denied (policy is checked before availability), and told
	 * which rule is missing. */
	ck_assert_int_lt(gb_request(bob, "lock-x", "gbpol:3", "input", -1, NULL, false, NULL, &err), 0);
	expect_denied(&err, "no policy entry covers");
	ck_assert_int_lt(gb_request(bob, "lock-x", "door-lock", "output", 0, NULL, false, NULL, &err), 0);
	expect_denied(&err, "uid 60002 is not among the users or groups of [line door-lock]");

	/* What the entry does not allow, even for its user (before "busy"). */
	ck_assert_int_lt(gb_request(alice, "lock-x", "door-lock", "input", -1, NULL, false, NULL, &err), 0);
	expect_denied(&err, "direction input is not allowed");
	ck_assert_int_lt(gb_request(alice, "mine", "door-lock", "output", 0, NULL, false, NULL, &err), 0);
	expect_denied(&err, "must start with 'lock-'");
	ck_assert_int_lt(gb_request(alice, "lock-x", "door-lock", "output", 0, NULL, true, NULL, &err), 0);
	expect_denied(&err, "persistent requests are not allowed");

	/* Root bypasses the policy (root-bypass = yes). */
	{
		sd_bus *root = gb_connect(0);

		ck_assert_int_ge(gb_request(root, "root", "gbpol:4", "output", 1, NULL, true, NULL, &err), 0);
		gb_close(root);
	}
	gb_close(alice);
	gb_close(bob);
}
END_TEST

START_TEST(test_supplementary_group)
{
	sd_bus *carol = gb_connect(UID_CAROL), *bob = gb_connect(UID_BOB);
	sd_bus_error err = SD_BUS_ERROR_NULL;
	sd_bus_message *reply = NULL;
	const char *key;
	int may = -1;

	/* gb-carol's primary group is gb-carol; gb-gpio is supplementary. */
	ck_assert_int_ge(gb_request(carol, "reader", "door", "input", -1, "both", true, NULL, &err), 0);
	/* gb-bob is not in gb-gpio at all. */
	ck_assert_int_lt(gb_request(bob, "reader", "door-sensor", "input", -1, NULL, false, NULL, &err), 0);
	expect_denied(&err, "uid 60002 is not among the users or groups of [line door]");

	/* GetAccess explains before a call fails. */
	ck_assert_int_ge(sd_bus_call_method(bob, GB_BUS_NAME, GB_ROOT_PATH, GB_IFACE_MANAGER, "GetAccess", &err, &reply,
					    "s", "door"), 0);
	ck_assert_int_ge(sd_bus_message_enter_container(reply, 'a', "{sv}"), 0);
	while (sd_bus_message_enter_container(reply, 'e', "sv") > 0) {
		ck_assert_int_ge(sd_bus_message_read(reply, "s", &key), 0);
		if (strcmp(key, "may-use") == 0)
			ck_assert_int_ge(sd_bus_message_read(reply, "v", "b", &may), 0);
		else
			ck_assert_int_ge(sd_bus_message_skip(reply, "v"), 0);
		ck_assert_int_ge(sd_bus_message_exit_container(reply), 0);
	}
	ck_assert_int_eq(may, 0);
	sd_bus_message_unref(reply);
	gb_close(carol);
	gb_close(bob);
}
END_TEST

START_TEST(test_direction_may_not_change)
{
	sd_bus *bob = gb_connect(UID_BOB);
	sd_bus_error err = SD_BUS_ERROR_NULL;
	char *path = NULL;

	ck_assert_int_ge(gb_request(bob, "h", "heater", "output", 1, NULL, false, &path, &err), 0);
	ck_assert_int_eq(gb_sim_get_value(sim, 2), 1);
	ck_assert_int_lt(sd_bus_call_method(bob, GB_BUS_NAME, path, GB_IFACE_REQUEST, "SetDirectionInput", &err,
					    NULL, "au", 0), 0);
	expect_denied(&err, "direction-may-change = no");
	/* still an output, still driven */
	ck_assert_int_ge(gb_set_value(bob, path, 0, false, &err), 0);
	ck_assert_int_eq(gb_sim_get_value(sim, 2), 0);
	free(path);
	gb_close(bob);
}
END_TEST

START_TEST(test_safe_state_on_kill)
{
	sd_bus *root = gb_connect(0);
	char name[64];
	pid_t pid;

	/* alice unlocks the door, then dies without a word */
	pid = gb_spawn_holder(UID_ALICE, "lock-main", "door-lock", "output", 1, false, name, sizeof(name));
	ck_assert_int_eq(gb_sim_get_value(sim, 1), 1);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	gb_wait_client_gone(root, name);
	ck_assert_msg(gb_sim_get_value(sim, 1) == 0, "door lock left at its last level, not safe-state");
	ck_assert(!gb_line_prop_bool(root, chip, 1, "Used"));
	gb_close(root);
}
END_TEST

static int on_revoked(sd_bus_message *m, void *userdata, sd_bus_error *e)
{
	const char *why;

	if (sd_bus_message_read(m, "s", &why) > 0)
		snprintf(userdata, 512, "%s", why);
	return 0;
}

static void write_file(const char *name, const char *text)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), GB_TEST_POLICY_DIR "/%s", name);
	f = fopen(path, "we");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	ck_assert_int_eq(fclose(f), 0);
}

/* ReloadPolicy's reply carries every problem of every file, each as file:line, not
 * just the first; and the journal gets each as a line of its own. */
START_TEST(test_reload_reports_every_error)
{
	static const char *const expect[] = {
		"60-a.conf:3: unknown key 'bogus'", "60-a.conf:4:", "61-b.conf:3:",
		"61-b.conf:5: unknown key 'frob'", "62-c.conf:2:",
	};
	sd_bus *root = gb_connect(0);
	sd_bus_error err = SD_BUS_ERROR_NULL;

	write_file("60-a.conf", "[line a1]\nchip = gbpol\nbogus = 1\noffset = many\n");
	write_file("61-b.conf", "[line b1]\nchip = gbpol\ndirections = sideways\noffset = 5\nfrob = 2\n");
	write_file("62-c.conf", "[line c1]\nusers = \n");
	ck_assert_int_lt(sd_bus_call_method(root, GB_BUS_NAME, GB_ROOT_PATH, GB_IFACE_MANAGER,
					    "ReloadPolicy", &err, NULL, ""), 0);
	ck_assert_str_eq(err.name, GB_ERROR_POLICY);
	for (size_t i = 0; i < sizeof(expect) / sizeof(expect[0]); i++)
		ck_assert_msg(strstr(err.message, expect[i]), "'%s' missing from: %s", expect[i],
			      err.message);
	sd_bus_error_free(&err);
	ck_assert_int_eq(system("rm -f " GB_TEST_POLICY_DIR "/6?-?.conf"), 0);

	/* A directory that is not there is an error at a reload, not an empty policy. */
	ck_assert_int_eq(rename(GB_TEST_POLICY_DIR, GB_TEST_POLICY_DIR ".away"), 0);
	ck_assert_int_lt(sd_bus_call_method(root, GB_BUS_NAME, GB_ROOT_PATH, GB_IFACE_MANAGER,
					    "ReloadPolicy", &err, NULL, ""), 0);
	ck_assert_str_eq(err.name, GB_ERROR_POLICY);
	ck_assert_msg(strstr(err.message, GB_TEST_POLICY_DIR ": no such directory"), "%s",
		      err.message);
	sd_bus_error_free(&err);
	ck_assert_int_eq(rename(GB_TEST_POLICY_DIR ".away", GB_TEST_POLICY_DIR), 0);
	ck_assert_int_ge(sd_bus_call_method(root, GB_BUS_NAME, GB_ROOT_PATH, GB_IFACE_MANAGER,
					    "ReloadPolicy", &err, NULL, ""), 0);
	gb_close(root);
}
END_TEST

START_TEST(test_reload_revokes)
{
	sd_bus *bob = gb_connect(UID_BOB), *root = gb_connect(0);
	sd_bus_error err = SD_BUS_ERROR_NULL;
	char revoked[512] = "", *path = NULL, *s;
	int n = 0;

	ck_assert_int_ge(sd_bus_match_signal(bob, NULL, GB_BUS_NAME, NULL, GB_IFACE_REQUEST, "Revoked",
					     on_revoked, revoked), 0);
	ck_assert_int_ge(gb_request(bob, "h", "heater", "output", 1, NULL, false, &path, &err), 0);

	/* A broken policy is rejected whole; the old one stays. */
	gb_policy_write("[line heater]\nchip = gbpol\noffset = 2\nusers = gb-alice\ndirections = output\nbogus = 1\n");
	ck_assert_int_lt(sd_bus_call_method(root, GB_BUS_NAME, GB_ROOT_PATH, GB_IFACE_MANAGER, "ReloadPolicy", &err,
					    NULL, ""), 0);
	gb_assert_error(&err, GB_ERROR_POLICY, "50-test.conf:6: unknown key 'bogus'");
	ck_assert_int_ge(gb_set_value(bob, path, 0, true, &err), 0);

	/* Only root may reload. */
	ck_assert_int_lt(sd_bus_call_method(bob, GB_BUS_NAME, GB_ROOT_PATH, GB_IFACE_MANAGER, "ReloadPolicy", &err,
					    NULL, ""), 0);
	expect_denied(&err, "only root");

	/* A valid policy without bob: his request is revoked, the line goes to its safe
	 * state (input, per the new entry), and he is told why. SIGHUP reloads too. */
	gb_policy_write("[line heater]\nchip = gbpol\noffset = 2\nusers = gb-alice\n"
			"directions = input, output\nsafe-state = input\n");
	ck_assert_int_eq(kill(broker, SIGHUP), 0);
	for (int i = 0; i < 300 && !revoked[0]; i++)
		gb_bus_wait_count(bob, &n, 1, 10);
	ck_assert_msg(revoked[0], "no Revoked signal");
	ck_assert_msg(strstr(revoked, "uid 60002"), "%s", revoked);
	ck_assert(gb_wait_line_used(root, chip, 2, false, 2000));
	s = gb_line_prop_str(root, chip, 2, "Direction");
	ck_assert_str_eq(s, "input");
	free(s);
	ck_assert_int_lt(gb_set_value(bob, path, 0, true, &err), 0);
	sd_bus_error_free(&err);
	free(path);
	gb_close(bob);
	gb_close(root);
}
END_TEST

START_TEST(test_unsafe_policy_file)
{
	sd_bus *alice;
	sd_bus_error err = SD_BUS_ERROR_NULL;

	/* A policy file others can write is no policy: the broker runs, denying all. */
	ck_assert_int_eq(gb_broker_stop(broker), 0);
	broker = gb_broker_spawn(&(struct gb_broker_opts){ .policy = policy });
	ck_assert_int_eq(gb_broker_stop(broker), 0);
	gb_policy_write(policy);
	ck_assert_int_eq(chmod(GB_TEST_POLICY_DIR "/50-test.conf", 0666), 0);
	broker = gb_broker_spawn(&(struct gb_broker_opts){ .policy = policy, .keep_policy = true });
	alice = gb_connect(UID_ALICE);
	for (int i = 0; i < 500 * gb_slow(); i++) {
		if (gb_request(alice, "lock-main", "gbpol:1", "output", 0, NULL, false, NULL, &err) < 0 &&
		    strcmp(err.name, "org.freedesktop.DBus.Error.ServiceUnknown") != 0 &&
		    strcmp(err.name, "org.freedesktop.DBus.Error.NameHasNoOwner") != 0)
			break;
		sd_bus_error_free(&err);
		usleep(10000);
	}
	/* the policy file was refused, so nothing covers the line */
	expect_denied(&err, "no policy entry covers");
	gb_close(alice);
}
END_TEST

int main(int argc, char **argv)
{
	Suite *s = suite_create("policy");
	TCase *tc;

	gb_bench_enter(argc, argv);
	tc = gb_tcase_new(s, "policy", setup, teardown, 60 * gb_slow());
	tcase_add_test(tc, test_users);
	tcase_add_test(tc, test_supplementary_group);
	tcase_add_test(tc, test_direction_may_not_change);
	tcase_add_test(tc, test_safe_state_on_kill);
	tcase_add_test(tc, test_reload_revokes);
	tcase_add_test(tc, test_reload_reports_every_error);
	tcase_add_test(tc, test_unsafe_policy_file);
	return gb_run_suite(s);
}
