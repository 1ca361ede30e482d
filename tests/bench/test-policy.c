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

/* Manager.PolicyStatus as the test reads it: the "file:line: message" arrays are
 * joined with newlines. */
struct pstatus {
	char state[32], directory[256], running_with[32];
	uint32_t entries;
	uint64_t loaded_at;
	char errors[4096], warnings[4096];
	int n_errors, n_warnings;
};

static void read_strv(sd_bus_message *m, char *buf, size_t size, int *n)
{
	const char *item;
	size_t len = 0;

	buf[0] = '\0';
	*n = 0;
	ck_assert_int_ge(sd_bus_message_enter_container(m, 'v', "as"), 0);
	ck_assert_int_ge(sd_bus_message_enter_container(m, 'a', "s"), 0);
	while (sd_bus_message_read(m, "s", &item) > 0) {
		len += snprintf(buf + len, size - len, "%s\n", item);
		ck_assert_uint_lt(len, size);
		(*n)++;
	}
	ck_assert_int_ge(sd_bus_message_exit_container(m), 0);
	ck_assert_int_ge(sd_bus_message_exit_container(m), 0);
}

static void read_policy_status(sd_bus *bus, struct pstatus *ps)
{
	sd_bus_error err = SD_BUS_ERROR_NULL;
	sd_bus_message *m = NULL;
	const char *key, *str;

	memset(ps, 0, sizeof(*ps));
	ck_assert_int_ge(sd_bus_get_property(bus, GB_BUS_NAME, GB_ROOT_PATH, GB_IFACE_MANAGER,
					     "PolicyStatus", &err, &m, "a{sv}"), 0);
	ck_assert_int_ge(sd_bus_message_enter_container(m, 'a', "{sv}"), 0);
	while (sd_bus_message_enter_container(m, 'e', "sv") > 0) {
		ck_assert_int_ge(sd_bus_message_read(m, "s", &key), 0);
		if (strcmp(key, "state") == 0 || strcmp(key, "directory") == 0 ||
		    strcmp(key, "running-with") == 0) {
			ck_assert_int_ge(sd_bus_message_read(m, "v", "s", &str), 0);
			snprintf(key[0] == 's' ? ps->state : key[0] == 'd' ? ps->directory :
				 ps->running_with, 32, "%s", str);
			if (key[0] == 'd')
				snprintf(ps->directory, sizeof(ps->directory), "%s", str);
		} else if (strcmp(key, "entries") == 0) {
			ck_assert_int_ge(sd_bus_message_read(m, "v", "u", &ps->entries), 0);
		} else if (strcmp(key, "loaded-at") == 0) {
			ck_assert_int_ge(sd_bus_message_read(m, "v", "t", &ps->loaded_at), 0);
		} else if (strcmp(key, "errors") == 0) {
			read_strv(m, ps->errors, sizeof(ps->errors), &ps->n_errors);
		} else if (strcmp(key, "warnings") == 0) {
			read_strv(m, ps->warnings, sizeof(ps->warnings), &ps->n_warnings);
		} else {
			ck_assert_int_ge(sd_bus_message_skip(m, "v"), 0);
		}
		ck_assert_int_ge(sd_bus_message_exit_container(m), 0);
	}
	sd_bus_message_unref(m);
}

/* One string value of Manager.GetAccess(@p line) as @p bus's caller; to free(). */
static char *access_str(sd_bus *bus, const char *line, const char *want)
{
	sd_bus_error err = SD_BUS_ERROR_NULL;
	sd_bus_message *m = NULL;
	const char *key, *str;
	char *ret = NULL;

	ck_assert_int_ge(sd_bus_call_method(bus, GB_BUS_NAME, GB_ROOT_PATH, GB_IFACE_MANAGER,
					    "GetAccess", &err, &m, "s", line), 0);
	ck_assert_int_ge(sd_bus_message_enter_container(m, 'a', "{sv}"), 0);
	while (!ret && sd_bus_message_enter_container(m, 'e', "sv") > 0) {
		ck_assert_int_ge(sd_bus_message_read(m, "s", &key), 0);
		if (strcmp(key, want) == 0) {
			ck_assert_int_ge(sd_bus_message_read(m, "v", "s", &str), 0);
			ret = strdup(str);
		} else {
			ck_assert_int_ge(sd_bus_message_skip(m, "v"), 0);
		}
		ck_assert_int_ge(sd_bus_message_exit_container(m), 0);
	}
	sd_bus_message_unref(m);
	ck_assert_msg(ret, "GetAccess has no '%s'", want);
	return ret;
}

static int reload(sd_bus *root, sd_bus_error *err)
{
	return sd_bus_call_method(root, GB_BUS_NAME, GB_ROOT_PATH, GB_IFACE_MANAGER, "ReloadPolicy",
				  err, NULL, "");
}

/* How the policy loaded, always visible: loaded (warnings for names nobody has,
 * which grant nothing and reject nothing), rejected with every error while the
 * previous policy stays, loaded again; PropertiesChanged each time; a denial
 * under a rejected policy says so. */
START_TEST(test_policy_status)
{
	sd_bus *root = gb_connect(0), *alice = gb_connect(UID_ALICE), *bob = gb_connect(UID_BOB);
	sd_bus_error err = SD_BUS_ERROR_NULL;
	struct pstatus ps;
	uint64_t first;
	int changed = 0;
	char *s;

	read_policy_status(bob, &ps);
	ck_assert_str_eq(ps.state, "loaded");
	ck_assert_str_eq(ps.directory, GB_TEST_POLICY_DIR);
	ck_assert_str_eq(ps.running_with, "this");
	ck_assert_uint_eq(ps.entries, 3);
	ck_assert_int_eq(ps.n_errors, 0);
	ck_assert_int_eq(ps.n_warnings, 0);
	ck_assert_uint_gt(ps.loaded_at, 1600000000ull * 1000000);
	first = ps.loaded_at;
	s = access_str(bob, "gbpol:3", "policy-state");
	ck_assert_str_eq(s, "loaded");
	free(s);
	/* PropertiesChanged is for everyone: it is on the bus, whichever transport
	 * the calls take (docs/dbus-api.md, OpenConnection). */
	ck_assert_int_ge(sd_bus_match_signal(gb_sysbus(bob), NULL, GB_BUS_NAME, GB_ROOT_PATH,
					     "org.freedesktop.DBus.Properties", "PropertiesChanged",
					     gb_bus_count_message, &changed), 0);

	/* An unknown user is a warning naming file:line: the rest of the policy, even
	 * of that entry, stands. */
	gb_policy_write("[line door-lock]\nchip = gbpol\noffset = 1\nusers = gb-nobody-here, gb-alice\n"
			"directions = output\n");
	ck_assert_int_ge(reload(root, &err), 0);
	ck_assert(gb_bus_wait_count(gb_sysbus(bob), &changed, 1, 5000));
	read_policy_status(bob, &ps);
	ck_assert_str_eq(ps.state, "loaded");
	ck_assert_uint_eq(ps.entries, 1);
	ck_assert_int_eq(ps.n_warnings, 1);
	ck_assert_msg(strstr(ps.warnings, GB_TEST_POLICY_DIR "/50-test.conf:4: unknown user 'gb-nobody-here'"),
		      "%s", ps.warnings);
	ck_assert_uint_ge(ps.loaded_at, first);
	ck_assert_int_ge(gb_request(alice, "x", "door-lock", "output", 0, NULL, false, NULL, &err), 0);

	/* Broken: rejected whole, every error listed, the previous policy in force. */
	gb_policy_write("[line door-lock]\nchip = gbpol\noffset = 1\nusers = gb-alice\ndirections = output\n"
			"colour = red\n[line x]\nchip = gbpol\noffset = 6\nusers = gb-nobody-here\n"
			"directions = sideways\n");
	ck_assert_int_lt(reload(root, &err), 0);
	gb_assert_error(&err, GB_ERROR_POLICY, "warnings:\n" GB_TEST_POLICY_DIR "/50-test.conf:10: unknown user");
	ck_assert(gb_bus_wait_count(gb_sysbus(bob), &changed, 2, 5000));
	read_policy_status(bob, &ps);
	ck_assert_str_eq(ps.state, "rejected");
	ck_assert_str_eq(ps.running_with, "previous");
	ck_assert_uint_eq(ps.entries, 1);
	ck_assert_int_eq(ps.n_errors, 3);
	ck_assert_msg(strstr(ps.errors, "50-test.conf:6: unknown key 'colour'") &&
		      strstr(ps.errors, "50-test.conf:11: 'sideways'"), "%s", ps.errors);
	ck_assert_int_eq(ps.n_warnings, 1);

	/* A denial now says where it comes from, in GetAccess and in the error. */
	s = access_str(bob, "gbpol:3", "reason");
	ck_assert_msg(strstr(s, "the policy in " GB_TEST_POLICY_DIR " was rejected (3 errors;") &&
		      strstr(s, "runs with the previous policy: no policy entry covers"), "%s", s);
	free(s);
	s = access_str(bob, "gbpol:3", "policy-state");
	ck_assert_str_eq(s, "rejected");
	free(s);
	ck_assert_int_lt(gb_request(bob, "x", "gbpol:3", "input", -1, NULL, false, NULL, &err), 0);
	expect_denied(&err, "was rejected (3 errors;");

	/* Fixed: loaded again. */
	gb_policy_write(policy);
	ck_assert_int_ge(reload(root, &err), 0);
	ck_assert(gb_bus_wait_count(gb_sysbus(bob), &changed, 3, 5000));
	read_policy_status(bob, &ps);
	ck_assert_str_eq(ps.state, "loaded");
	ck_assert_int_eq(ps.n_errors, 0);
	s = access_str(bob, "gbpol:3", "reason");
	ck_assert_msg(strstr(s, "no policy entry covers") && !strstr(s, "rejected"), "%s", s);
	free(s);
	sd_bus_flush_close_unref(root);
	sd_bus_flush_close_unref(alice);
	sd_bus_flush_close_unref(bob);
}
END_TEST

/* Rejected at start: the broker runs with an empty policy, and says so. An entry
 * naming an offset the chip does not have is a warning, with the chip present. */
START_TEST(test_rejected_at_start)
{
	sd_bus *bob;
	struct pstatus ps;
	char *s;

	ck_assert_int_eq(gb_broker_stop(broker), 0);
	broker = gb_broker_spawn(&(struct gb_broker_opts){
		.policy = "[line a]\nchip = gbpol\noffset = 3\nusers = gb-bob\ndirections = input\nbogus = 1\n" });
	bob = gb_connect(UID_BOB);
	read_policy_status(bob, &ps);
	ck_assert_str_eq(ps.state, "rejected");
	ck_assert_str_eq(ps.running_with, "empty");
	ck_assert_uint_eq(ps.entries, 0);
	ck_assert_uint_eq(ps.loaded_at, 0);
	ck_assert_msg(strstr(ps.errors, "50-test.conf:6: unknown key 'bogus'"), "%s", ps.errors);
	s = access_str(bob, "gbpol:3", "reason");
	ck_assert_msg(strstr(s, "was rejected (1 error;") && strstr(s, "runs with an empty policy"), "%s", s);
	free(s);
	sd_bus_flush_close_unref(bob);

	ck_assert_int_eq(gb_broker_stop(broker), 0);
	broker = gb_broker_spawn(&(struct gb_broker_opts){
		.policy = "[line a]\nchip = gbpol\noffset = 100\nusers = gb-bob\ndirections = input\n"
			  "[line b]\nline-name = no-such-line-name\nusers = gb-bob\ndirections = input\n" });
	bob = gb_connect(UID_BOB);
	read_policy_status(bob, &ps);
	ck_assert_str_eq(ps.state, "loaded");
	ck_assert_int_eq(ps.n_warnings, 2);
	ck_assert_msg(strstr(ps.warnings, "50-test.conf:1: [line a]: offset 100 is beyond chip ") &&
		      strstr(ps.warnings, "50-test.conf:6: [line b]: no line of the chips present is named"),
		      "%s", ps.warnings);
	sd_bus_flush_close_unref(bob);

	/* No such directory at start: an empty policy, with a warning saying so. */
	ck_assert_int_eq(gb_broker_stop(broker), 0);
	broker = gb_broker_spawn(&(struct gb_broker_opts){
		.args = GB_ARGS("--policy-dir=/run/gb-no-such-policy-dir") });
	bob = gb_connect(UID_BOB);
	read_policy_status(bob, &ps);
	ck_assert_str_eq(ps.state, "empty");
	ck_assert_str_eq(ps.directory, "/run/gb-no-such-policy-dir");
	ck_assert_uint_eq(ps.entries, 0);
	ck_assert_int_eq(ps.n_errors, 0);
	ck_assert_msg(strstr(ps.warnings, "/run/gb-no-such-policy-dir: no such directory"), "%s",
		      ps.warnings);
	sd_bus_flush_close_unref(bob);
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
	tcase_add_test(tc, test_policy_status);
	tcase_add_test(tc, test_rejected_at_start);
	tcase_add_test(tc, test_unsafe_policy_file);
	return gb_run_suite(s);
}
