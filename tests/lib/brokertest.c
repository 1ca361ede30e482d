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
#include "org.gpiodbroker1.h"
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
