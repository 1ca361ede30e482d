/* SPDX-License-Identifier: LGPL-2.1-or-later */
/**
 * @file brokertest.h
 * @brief Test helper: a real gpiod-broker on the bench's real system bus.
 *
 * Tests start the daemon they built (under valgrind when GB_TEST_VALGRIND=1), talk
 * to it over the bus as real uids (bus-util.h, broker-calls.h), and stop it,
 * checking it exits cleanly. This file is the process's side: start, stop, wait.
 */
#ifndef GB_TEST_BROKERTEST_H
#define GB_TEST_BROKERTEST_H

#include <stdbool.h>
#include <sys/types.h>

/**
 * How to start the broker under test. Every field may be left zero: a zeroed
 * struct (or a NULL pointer) is the broker with GB_TEST_POLICY_OPEN and no extra
 * arguments, in the test's environment.
 */
struct gb_broker_opts {
	/**
	 * The text of the only policy file (written to GB_TEST_POLICY_DIR before the
	 * start); NULL: GB_TEST_POLICY_OPEN, every user may do anything with the
	 * lines of chips labelled "gb*" (what most tests need).
	 */
	const char *policy;
	/** Leave the policy file as it is (a test that made it unsafe on purpose). */
	bool keep_policy;
	/** Extra command-line arguments, NULL-terminated (see GB_ARGS); NULL: none. */
	const char *const *args;
	/** Runs in the child between fork and exec: async-signal-safe code only. */
	void (*child_setup)(void *userdata);
	void *userdata;
	/** The child's environment; NULL: the test's. */
	char **envp;
};

/** A NULL-terminated argument list for gb_broker_opts.args: GB_ARGS("--a", "--b"). */
#define GB_ARGS(...) ((const char *const[]){ __VA_ARGS__, NULL })

/**
 * Start the broker as @p opts says (NULL: the defaults) and wait until it owns
 * its name; aborts the test if it exits or does not appear. A broker left over by
 * a test that failed mid-way is killed first. Returns its pid, for gb_broker_stop().
 */
pid_t gb_broker_spawn(const struct gb_broker_opts *opts);
/** Replace the policy file (then SIGHUP or ReloadPolicy). Done by gb_broker_spawn() too. */
void gb_policy_write(const char *policy);

#define GB_TEST_POLICY_DIR "/run/gb-test-policy"
/**
 * A policy under which every user may do anything (any direction, edges, bias,
 * drive, persistent requests) with lines @p offsets of the chips whose label
 * matches @p chip: both string literals.
 */
#define GB_TEST_POLICY_ALL(chip, offsets) \
	"[group bench]\n" \
	"chip = " chip "\n" \
	"offsets = " offsets "\n" \
	"users = *\n" \
	"directions = input, output\n" \
	"direction-may-change = yes\n" \
	"edges = none, rising, falling, both\n" \
	"bias = as-is, disabled, pull-up, pull-down\n" \
	"drive = push-pull, open-drain, open-source\n" \
	"persistent = yes\n"
/** What most tests need: all of it for the lines of chips labelled "gb*". */
#define GB_TEST_POLICY_OPEN GB_TEST_POLICY_ALL("gb*", "0-63")
/** SIGTERM, wait; returns the exit status (0 = clean; 97 = valgrind found errors). */
int gb_broker_stop(pid_t pid);
/** Wait until the broker process exits on its own; its exit status or -1. */
int gb_broker_wait_exit(pid_t pid, int timeout_ms);

/**
 * Path of the broker binary under test. GB_TEST_VALGRIND=1 runs it under valgrind
 * (exit status 97 on errors), GB_TEST_CALLGRIND=FILE under callgrind, writing its
 * profile to FILE (see timing.h for the slower timeouts).
 */
const char *gb_broker_bin(void);

#endif
