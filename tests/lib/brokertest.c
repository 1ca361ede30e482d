/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "brokertest.h"

#include <check.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bus-util.h"
#include "timing.h"

#ifndef GB_BROKER_BIN
#error "GB_BROKER_BIN must be defined by the build"
#endif

const char *gb_broker_bin(void)
{
	return GB_BROKER_BIN;
}

#define PIDFILE "/run/gb-test-broker.pid"

/* A test that fails mid-way exits without its teardown; its broker would still own
 * the name. The pid file lets the next test put it down first. */
static void kill_stale_broker(void)
{
	FILE *f = fopen(PIDFILE, "re");
	int pid = 0;

	if (!f)
		return;
	if (fscanf(f, "%d", &pid) == 1 && pid > 1 && kill(pid, SIGKILL) == 0)
		while (kill(pid, 0) == 0)
			usleep(10000);
	fclose(f);
	unlink(PIDFILE);
}

void gb_policy_write(const char *policy)
{
	FILE *f;

	mkdir(GB_TEST_POLICY_DIR, 0755);
	f = fopen(GB_TEST_POLICY_DIR "/50-test.conf.tmp", "we");
	ck_assert_ptr_nonnull(f);
	ck_assert_int_ge(fputs(policy, f), 0);
	ck_assert_int_eq(fclose(f), 0);
	ck_assert_int_eq(chmod(GB_TEST_POLICY_DIR "/50-test.conf.tmp", 0644), 0);
	ck_assert_int_eq(rename(GB_TEST_POLICY_DIR "/50-test.conf.tmp", GB_TEST_POLICY_DIR "/50-test.conf"), 0);
}

pid_t gb_broker_spawn(const struct gb_broker_opts *opts)
{
	static const struct gb_broker_opts defaults = { 0 };
	const char *argv[32];
	sd_bus *bus;
	long deadline;
	FILE *f;
	pid_t pid;
	int n = 0;

	if (!opts)
		opts = &defaults;
	kill_stale_broker();
	if (!opts->keep_policy)
		gb_policy_write(opts->policy ? opts->policy : GB_TEST_POLICY_OPEN);
	bus = gb_connect(0);

	/* The command line is made before fork: the parent may have threads
	 * (notify-harness.c), so the child does nothing that could need a lock. */
	if (getenv("GB_TEST_CALLGRIND")) {
		/* Instruction counts, repeatable where times are not (make bench). */
		static char out[300];

		snprintf(out, sizeof(out), "--callgrind-out-file=%s", getenv("GB_TEST_CALLGRIND"));
		argv[n++] = "valgrind";
		argv[n++] = "-q";
		argv[n++] = "--tool=callgrind";
		argv[n++] = out;
	} else if (getenv("GB_TEST_VALGRIND")) {
		argv[n++] = "valgrind";
		argv[n++] = "-q";
		argv[n++] = "--error-exitcode=97";
		argv[n++] = "--leak-check=full";
		argv[n++] = "--errors-for-leak-kinds=definite";
		argv[n++] = "--show-leak-kinds=definite";
	}
	argv[n++] = GB_BROKER_BIN;
	argv[n++] = "--log-level=debug";
	argv[n++] = "--policy-dir=" GB_TEST_POLICY_DIR;
	for (int i = 0; opts->args && opts->args[i]; i++) {
		ck_assert_msg(n < (int)(sizeof(argv) / sizeof(argv[0])) - 1, "too many broker arguments");
		argv[n++] = opts->args[i];
	}
	argv[n] = NULL;

	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		if (opts->child_setup)
			opts->child_setup(opts->userdata);
		/* execvpe, not setenv: no allocation between fork and exec. */
		execvpe(argv[0], (char **)argv, opts->envp ? opts->envp : environ);
		_exit(127);
	}
	f = fopen(PIDFILE, "we");
	if (f) {
		fprintf(f, "%d\n", (int)pid);
		fclose(f);
	}
	deadline = gb_deadline_ms(10000);
	while (!gb_name_has_owner(bus, GB_BUS_NAME)) {
		int status;

		ck_assert_msg(waitpid(pid, &status, WNOHANG) == 0, "broker exited at start (status %d)",
			      WIFEXITED(status) ? WEXITSTATUS(status) : -1);
		ck_assert_msg(gb_now_ms() < deadline, "broker did not appear on the bus");
		usleep(10000);
	}
	sd_bus_flush_close_unref(bus);
	return pid;
}

int gb_broker_wait_exit(pid_t pid, int timeout_ms)
{
	long deadline = gb_now_ms() + timeout_ms;
	int status;

	for (;;) {
		pid_t r = waitpid(pid, &status, WNOHANG);

		if (r == pid)
			return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
		if (r < 0 || gb_now_ms() > deadline)
			return -1;
		usleep(10000);
	}
}

int gb_broker_stop(pid_t pid)
{
	int status;

	kill(pid, SIGTERM);
	status = gb_broker_wait_exit(pid, 10000 * gb_slow());
	unlink(PIDFILE);
	if (status < 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
	return status;
}

void gb_wait_client_gone(sd_bus *bus, const char *unique_name)
{
	sd_bus_slot *slot = NULL;
	char match[256];
	int gone = 0;

	/* The bus daemon sends NameOwnerChanged to every subscriber, the broker included,
	 * when it drops the connection. Once we have seen it, any call we make reaches
	 * the broker after its own copy, and it handles messages in order: so the next
	 * call's answer already reflects the release. */
	snprintf(match, sizeof(match),
		 "type='signal',sender='org.freedesktop.DBus',member='NameOwnerChanged',arg0='%s'",
		 unique_name);
	ck_assert_int_ge(sd_bus_add_match(bus, &slot, match, gb_bus_count_message, &gone), 0);
	if (gb_name_has_owner(bus, unique_name))
		ck_assert_msg(gb_bus_wait_count(bus, &gone, 1, 5000), "%s did not leave the bus",
			      unique_name);
	sd_bus_slot_unref(slot);
	/* A round trip to the broker: it has processed its NameOwnerChanged by now. */
	ck_assert_int_ge(sd_bus_call_method(bus, GB_BUS_NAME, GB_ROOT_PATH, "org.freedesktop.DBus.Peer",
					    "Ping", NULL, NULL, ""), 0);
}

static char *line_path(const char *chip, unsigned int off)
{
	char *p;

	ck_assert_int_ge(asprintf(&p, GB_ROOT_PATH "/chip/%s/line%u", chip, off), 0);
	return p;
}

char *gb_line_prop_str(sd_bus *bus, const char *chip, unsigned int off, const char *prop)
{
	char *path = line_path(chip, off), *v = gb_get_prop_str(bus, path, GB_IFACE_LINE, prop);

	free(path);
	return v;
}

bool gb_line_prop_bool(sd_bus *bus, const char *chip, unsigned int off, const char *prop)
{
	char *path = line_path(chip, off);
	bool v = gb_get_prop_bool(bus, path, GB_IFACE_LINE, prop);

	free(path);
	return v;
}

bool gb_wait_line_used(sd_bus *bus, const char *chip, unsigned int off, bool used, int timeout_ms)
{
	long deadline = gb_now_ms() + (long)timeout_ms * gb_slow();
	char *path = line_path(chip, off);
	bool ok = false;

	/* The line may not be an object yet (a chip just plugged in): keep asking. */
	while (!ok && gb_now_ms() <= deadline) {
		sd_bus_error err = SD_BUS_ERROR_NULL;
		int v = -1;

		if (sd_bus_get_property_trivial(bus, GB_BUS_NAME, path, GB_IFACE_LINE, "Used", &err, 'b', &v) >= 0)
			ok = (bool)v == used;
		sd_bus_error_free(&err);
		if (!ok)
			usleep(10000);
	}
	free(path);
	return ok;
}

int gb_request(sd_bus *bus, const char *label, const char *spec, const char *direction,
	       int value, const char *edge, bool persistent, char **path, sd_bus_error *err)
{
	sd_bus_message *m = NULL, *reply = NULL;
	const char *p;
	int r;

	ck_assert_int_ge(sd_bus_message_new_method_call(bus, &m, GB_BUS_NAME, GB_ROOT_PATH, GB_IFACE_MANAGER,
							"Request"), 0);
	ck_assert_int_ge(sd_bus_message_append(m, "s", label), 0);
	ck_assert_int_ge(sd_bus_message_open_container(m, 'a', "(sa{sv})"), 0);
	ck_assert_int_ge(sd_bus_message_open_container(m, 'r', "sa{sv}"), 0);
	ck_assert_int_ge(sd_bus_message_append(m, "s", spec), 0);
	ck_assert_int_ge(sd_bus_message_open_container(m, 'a', "{sv}"), 0);
	if (direction)
		ck_assert_int_ge(sd_bus_message_append(m, "{sv}", "direction", "s", direction), 0);
	if (value >= 0)
		ck_assert_int_ge(sd_bus_message_append(m, "{sv}", "value", "b", value), 0);
	if (edge)
		ck_assert_int_ge(sd_bus_message_append(m, "{sv}", "edge", "s", edge), 0);
	ck_assert_int_ge(sd_bus_message_close_container(m), 0);
	ck_assert_int_ge(sd_bus_message_close_container(m), 0);
	ck_assert_int_ge(sd_bus_message_close_container(m), 0);
	if (persistent)
		ck_assert_int_ge(sd_bus_message_append(m, "a{sv}", 1, "persistent", "b", 1), 0);
	else
		ck_assert_int_ge(sd_bus_message_append(m, "a{sv}", 0), 0);
	r = sd_bus_call(bus, m, 0, err, &reply);
	if (r >= 0) {
		ck_assert_int_ge(sd_bus_message_read(reply, "o", &p), 0);
		if (path)
			*path = strdup(p);
	}
	sd_bus_message_unref(m);
	sd_bus_message_unref(reply);
	return r;
}

int gb_get_value(sd_bus *bus, const char *path, unsigned int idx, sd_bus_error *err)
{
	sd_bus_message *reply = NULL;
	int r, v = 0;

	r = sd_bus_call_method(bus, GB_BUS_NAME, path, GB_IFACE_REQUEST, "GetValues", err, &reply, "au", 1, idx);
	if (r < 0)
		return r;
	ck_assert_int_ge(sd_bus_message_read(reply, "ab", 1, &v), 0);
	sd_bus_message_unref(reply);
	return v;
}

int gb_set_value(sd_bus *bus, const char *path, unsigned int idx, bool value, sd_bus_error *err)
{
	return sd_bus_call_method(bus, GB_BUS_NAME, path, GB_IFACE_REQUEST, "SetValues", err, NULL, "a(ub)", 1,
				  idx, (int)value);
}
