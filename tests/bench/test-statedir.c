/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The broker trusts only a state directory it can trust (gpiod-broker(8), RESTARTS).
 * A directory others can write is refused at start, before anything planted there
 * is acted on; in a safe one, a record or mark that is not a regular file of the
 * broker's own, writable by nobody else, is refused and not used; a directory made
 * unsafe under a running broker gets no more state; and a mark truncated under the
 * broker costs its counts, not the broker. The planter is a test user; what a record
 * would have driven is read from gpio-sim's own view of the line.
 *
 * Lines 0 and 1 are bob's (safe state input); lines 2-5 no entry covers, so only a
 * record could make the broker touch them.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
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
#include "notify-harness.h"
#include "org.gpiodbroker1.h"
#include "testmain.h"
#include "timing.h"
#include "users.h"

#define STATE_DIR "/run/gb-test-statedir"
#define LOG_FILE  "/run/gb-test-statedir.log"
#define PLANTED   "/run/gb-test-planted" /* alice's */
#define POLICY \
	"[group bench]\nchip = gbsd\noffsets = 0-1\nusers = gb-bob\n" \
	"directions = input, output\ndirection-may-change = yes\n" \
	"edges = none, rising, falling, both\npersistent = yes\nsafe-state = input\n" \
	"watch-users = *\n"

static const char *const names[6] = { "relay", "button", "valve", "spare", "fan", "lamp" };
static const struct gb_broker_opts opts = {
	.policy = POLICY,
	.args = GB_ARGS("--state-dir=" STATE_DIR),
};
static struct gb_sim_chip *sim;
static struct gb_harness *h;
static pid_t broker;

static void setup(void)
{
	ck_assert_int_eq(system("rm -rf " STATE_DIR " " LOG_FILE " " PLANTED), 0);
	ck_assert_int_eq(mkdir(PLANTED, 0755), 0);
	ck_assert_int_eq(chown(PLANTED, UID_ALICE, 0), 0);
	sim = gb_sim_chip_new("gbsd", 6, names);
	ck_assert_ptr_nonnull(sim);
	h = gb_harness_new();
	gb_harness_set_log(h, LOG_FILE);
	broker = 0;
}

static void teardown(void)
{
	if (broker > 0)
		ck_assert_int_eq(gb_broker_stop(broker), 0);
	gb_harness_free(h);
	gb_sim_chip_free(sim);
	ck_assert_int_eq(system("rm -rf " STATE_DIR " " PLANTED), 0);
}

static bool log_has(const char *needle)
{
	return gb_harness_log_has(h, needle);
}

/* The broker logs what it saw in its loop, after the event that made it happen. */
static bool wait_log(const char *needle)
{
	long deadline = gb_deadline_ms(10000);

	while (!log_has(needle))
		if (gb_now_ms() > deadline)
			return false;
		else
			usleep(10000);
	return true;
}

static gid_t gid_of(uid_t uid)
{
	struct passwd *pw = getpwuid(uid);

	ck_assert_ptr_nonnull(pw);
	return pw->pw_gid;
}

/* A record a planter would write: a persistent request of root's for line @p off,
 * left as an input, with safe state output-high; valid, so only where it lies
 * decides whether the broker acts on it. */
static void record_text(unsigned int id, unsigned int off, char *buf, size_t size)
{
	snprintf(buf, size,
		 "version=1\nid=%u\nlabel=planted\nuid=0\ngid=0\ngroups=\npersistent=1\nowner=\n"
		 "chips=1\nchip=%s 1 %u\nlines=1\nline=0 %u 1 2 0 1 1 1 0 0 1 3\n",
		 id, gb_sim_chip_name(sim), off, off);
}

/* Write @p text to @p path as @p uid (a test user, in a child), mode @p mode. */
static void plant_as(uid_t uid, const char *path, const char *text, mode_t mode)
{
	int status;
	pid_t pid = fork();

	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		int fd;

		gb_test_child_unreported();
		gb_become(uid);
		fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
		if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text) ||
		    fchmod(fd, mode) < 0 || close(fd) < 0)
			_exit(1);
		_exit(0);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "uid %u could not write %s",
		      (unsigned)uid, path);
}

static void plant_record(uid_t uid, const char *path, unsigned int id, unsigned int off,
			 mode_t mode)
{
	char text[512];

	record_text(id, off, text, sizeof(text));
	plant_as(uid, path, text, mode);
}

/* gpio-sim's view of line @p off: requested by nobody, and an input, as the bench
 * made it. gpio-sim keeps the direction of a line let go of, so an output here is a
 * safe state the broker applied. */
static void assert_untouched(unsigned int off)
{
	char consumer[64];
	bool out;

	ck_assert_msg(!gb_sim_line_used(sim, off, &out, consumer, sizeof(consumer)),
		      "line %u is held by \"%s\"", off, consumer);
	ck_assert_msg(!out, "line %u was driven (it is an output)", off);
	ck_assert_int_eq(gb_sim_get_value(sim, off), 0);
}

/* Manager.Watch(@p line) on @p bus. */
static void watch(sd_bus *bus, const char *line)
{
	sd_bus_error err = SD_BUS_ERROR_NULL;
	sd_bus_message *reply = NULL;

	ck_assert_msg(sd_bus_call_method(bus, GB_BUS_NAME, GB_ROOT_PATH, GB_IFACE_MANAGER, "Watch",
					 &err, &reply, "sa{sv}", line, 0) >= 0,
		      "Watch(%s): %s", line, err.message);
	sd_bus_message_unref(reply);
}

/* A broker started on STATE_DIR expecting it to exit: its exit status. */
static int start_expecting_exit(void)
{
	int status;
	pid_t pid;

	gb_policy_write(POLICY);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		int fd = open(LOG_FILE, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);

		if (fd < 0 || dup2(fd, STDERR_FILENO) < 0)
			_exit(126);
		execl(gb_broker_bin(), "gpiod-broker", "--log-level=debug",
		      "--policy-dir=" GB_TEST_POLICY_DIR, "--state-dir=" STATE_DIR, (char *)NULL);
		_exit(127);
	}
	status = gb_broker_wait_exit(pid, 10000 * gb_slow());
	if (status < 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
	return status;
}

/* --- the directory at start --------------------------------------------------- */

/* A state directory others can write, with a record planted by one of them: the
 * broker refuses it with the error the man page gives, before it drives anything. */
START_TEST(test_unsafe_dir_refused)
{
	static const struct {
		mode_t mode;
		bool alice_owns;
		const char *is;
	} cases[] = {
		{ 01777, false, "(is uid 0, mode 1777)" },
		{ 0770, false, "(is uid 0, mode 0770)" },  /* alice's group */
		{ 0700, true, "(is uid 60001, mode 0700)" },
	};
	char want[300];
	int status;

	ck_assert_int_eq(mkdir(STATE_DIR, 0700), 0);
	ck_assert_int_eq(chown(STATE_DIR, cases[_i].alice_owns ? UID_ALICE : 0,
			       cases[_i].mode == 0770 ? gid_of(UID_ALICE) : 0), 0);
	ck_assert_int_eq(chmod(STATE_DIR, cases[_i].mode), 0);
	plant_record(UID_ALICE, STATE_DIR "/request-1", 1, 3, 0644);

	status = start_expecting_exit();
	assert_untouched(3);
	ck_assert_int_eq(status, 1);
	snprintf(want, sizeof(want), "refusing state directory " STATE_DIR ": must be owned by "
		 "root and not writable by group or others %s", cases[_i].is);
	ck_assert_msg(log_has(want), "no log line \"%s\"", want);
	/* Refused, not cleaned: what was planted is evidence for the operator. */
	ck_assert_int_eq(access(STATE_DIR "/request-1", F_OK), 0);
}
END_TEST

/* --- files in a safe directory ------------------------------------------------ */

/* In the broker's own directory, only its own regular files are read: a symbolic
 * link (to a record a test user wrote), a FIFO, a group-writable record and one
 * owned by a test user are each refused, named in the log with why, deleted, and
 * what they name is not driven. A record of the broker's own is acted on. */
START_TEST(test_planted_records_refused)
{
	sd_bus *root;
	sd_bus_error err = SD_BUS_ERROR_NULL;
	bool out;

	ck_assert_int_eq(mkdir(STATE_DIR, 0700), 0);
	plant_record(UID_ALICE, PLANTED "/record", 1, 2, 0644);
	ck_assert_int_eq(symlink(PLANTED "/record", STATE_DIR "/request-1"), 0);
	ck_assert_int_eq(mkfifo(STATE_DIR "/request-2", 0600), 0);
	plant_record(0, STATE_DIR "/request-3", 3, 3, 0620);
	plant_record(0, STATE_DIR "/request-4", 4, 4, 0600);
	ck_assert_int_eq(chown(STATE_DIR "/request-4", UID_ALICE, 0), 0);
	ck_assert_int_eq(mkfifo(STATE_DIR "/watch-6", 0600), 0);
	plant_record(0, STATE_DIR "/request-5", 5, 5, 0600);

	broker = gb_harness_start(h, &opts, false);
	root = gb_connect(0);
	ck_assert_int_ge(gb_ping(root, &err), 0); /* a FIFO opened for reading would hang here */

	ck_assert(log_has("refusing state file " STATE_DIR "/request-1: not a regular file (a "
			  "symbolic link); releasing request 1"));
	ck_assert(log_has("refusing state file " STATE_DIR "/request-2: not a regular file "
			  "(a FIFO)"));
	ck_assert(log_has("refusing state file " STATE_DIR "/request-3: must be owned by root "
			  "and not writable by group or others (is uid 0, mode 0620)"));
	ck_assert(log_has("refusing state file " STATE_DIR "/request-4: must be owned by root "
			  "and not writable by group or others (is uid 60001, mode 0600)"));
	ck_assert(log_has("refusing state file " STATE_DIR "/watch-6: not a regular file (a FIFO); "
			  "dropping watch 6"));
	for (unsigned int off = 2; off <= 4; off++)
		assert_untouched(off);
	for (unsigned int id = 1; id <= 6; id++) {
		char path[64];

		snprintf(path, sizeof(path), STATE_DIR "/%s-%u", id == 6 ? "watch" : "request", id);
		ck_assert_msg(access(path, F_OK) < 0 && errno == ENOENT, "%s is still there", path);
	}
	/* Only the link went: what it pointed to is not the broker's to touch. */
	ck_assert_int_eq(access(PLANTED "/record", F_OK), 0);
	/* The broker's own record, safe state output-high, for a line nobody holds. */
	ck_assert(!gb_sim_line_used(sim, 5, &out, NULL, 0));
	ck_assert_msg(out, "the broker's own record was not acted on");
	gb_close(root);
}
END_TEST

/* Mark that is not the broker's own regular file of a mark's size: refused, named
 * with why, and replaced by a new one; the watch still comes back. A mark owned by
 * a test user would otherwise be mapped shared, and truncated under the broker. */
START_TEST(test_planted_marks_refused)
{
	static const struct {
		uid_t uid;
		const char *line;
		const char *why;
	} w[] = {
		{ UID_ALICE, "relay", "not a regular file (a symbolic link)" },
		{ UID_ALICE, "button", "not a regular file (a FIFO)" },
		{ UID_BOB, "button", "must be owned by root and not writable by group or others "
				     "(is uid 60001, mode 0600)" },
		{ UID_BOB, "relay", "3 bytes, not " },
	};
	sd_bus *bus[4];
	char want[300], path[64];
	struct stat st;

	broker = gb_harness_start(h, &opts, true);
	for (int i = 0; i < 4; i++) {
		bus[i] = gb_connect_bus(w[i].uid);
		watch(bus[i], w[i].line);
		snprintf(path, sizeof(path), STATE_DIR "/watch-%d.mark", i + 1);
		ck_assert_int_eq(stat(path, &st), 0);
	}
	gb_broker_kill(broker);
	broker = 0;
	ck_assert_int_eq(unlink(STATE_DIR "/watch-1.mark"), 0);
	plant_as(UID_ALICE, PLANTED "/mark", "alice's", 0644);
	ck_assert_int_eq(symlink(PLANTED "/mark", STATE_DIR "/watch-1.mark"), 0);
	ck_assert_int_eq(unlink(STATE_DIR "/watch-2.mark"), 0);
	ck_assert_int_eq(mkfifo(STATE_DIR "/watch-2.mark", 0600), 0);
	ck_assert_int_eq(chown(STATE_DIR "/watch-3.mark", UID_ALICE, 0), 0);
	ck_assert_int_eq(truncate(STATE_DIR "/watch-4.mark", 3), 0);

	broker = gb_harness_start(h, &opts, true);
	for (int i = 0; i < 4; i++) {
		char *owner;

		snprintf(path, sizeof(path), GB_ROOT_PATH "/watch/%d", i + 1);
		owner = gb_get_prop_str(bus[i], path, GB_IFACE_WATCH, "Owner");
		free(owner);
		/* A new mark of the broker's own took its place. */
		snprintf(path, sizeof(path), STATE_DIR "/watch-%d.mark", i + 1);
		ck_assert_int_eq(lstat(path, &st), 0);
		ck_assert_msg(S_ISREG(st.st_mode) && st.st_uid == 0 && (st.st_mode & 077) == 0,
			      "%s: mode %o, uid %u", path, (unsigned)st.st_mode,
			      (unsigned)st.st_uid);
		ck_assert_int_gt(st.st_size, 3);
		snprintf(want, sizeof(want), "refusing event mark " STATE_DIR "/watch-%d.mark: %s",
			 i + 1, w[i].why);
		ck_assert_msg(log_has(want), "no log line \"%s\"", want);
	}
	/* Nothing was written through the link. */
	ck_assert_int_eq(stat(PLANTED "/mark", &st), 0);
	ck_assert_int_eq(st.st_size, 7);
	for (int i = 0; i < 4; i++)
		sd_bus_flush_close_unref(bus[i]);
}
END_TEST

/* --- while the broker runs ---------------------------------------------------- */

/* Made unsafe under a running broker, the directory gets no more state (logged
 * once), the broker goes on serving; made safe again, state is written again. */
START_TEST(test_dir_made_unsafe_while_running)
{
	sd_bus *bob;
	sd_bus_error err = SD_BUS_ERROR_NULL;
	char *path = NULL;

	broker = gb_harness_start(h, &opts, true);
	bob = gb_connect(UID_BOB);
	ck_assert_int_ge(gb_request(bob, "relay-ctl", "relay", "output", 1, NULL, false, &path,
				    &err), 0);
	free(path);
	ck_assert_int_eq(access(STATE_DIR "/request-1", F_OK), 0);
	ck_assert(gb_harness_wait_n_fds(h, 1, 5000));

	ck_assert_int_eq(chmod(STATE_DIR, 01777), 0);
	ck_assert_int_ge(gb_request(bob, "button-ctl", "button", "output", 1, NULL, false, &path,
				    &err), 0);
	ck_assert_str_eq(path, GB_ROOT_PATH "/request/2");
	free(path);
	ck_assert_int_eq(gb_sim_get_value(sim, 1), 1);
	ck_assert_int_ne(access(STATE_DIR "/request-2", F_OK), 0);
	ck_assert_int_ne(access(STATE_DIR "/request-2.mark", F_OK), 0);
	ck_assert(log_has("state directory " STATE_DIR " became unsafe: must be owned by root "
			  "and not writable by group or others (is uid 0, mode 1777); no state is "
			  "written there"));
	/* Without its record, its fds are not handed over either. */
	ck_assert_int_eq(gb_harness_n_fds(h), 1);
	ck_assert(!gb_harness_has_fd(h, "gbreq-2-0"));

	ck_assert_int_eq(chmod(STATE_DIR, 0700), 0);
	ck_assert_int_ge(gb_release(bob, GB_ROOT_PATH "/request/2", &err), 0);
	ck_assert_int_ge(gb_request(bob, "button-ctl", "button", "output", 0, NULL, false, &path,
				    &err), 0);
	ck_assert_str_eq(path, GB_ROOT_PATH "/request/3");
	free(path);
	ck_assert(log_has("state directory " STATE_DIR " is safe again"));
	ck_assert_int_eq(access(STATE_DIR "/request-3", F_OK), 0);
	ck_assert(gb_harness_wait_n_fds(h, 2, 5000));

	/* Killed while it is unsafe: the next broker refuses it, and the lines stay
	 * as the store holds them. */
	ck_assert_int_eq(chmod(STATE_DIR, 01777), 0);
	gb_broker_kill(broker);
	broker = 0;
	ck_assert_int_eq(start_expecting_exit(), 1);
	ck_assert(log_has("refusing state directory " STATE_DIR));
	ck_assert(gb_sim_line_used(sim, 0, NULL, NULL, 0));
	ck_assert_int_eq(gb_sim_get_value(sim, 0), 1);
	ck_assert_int_eq(gb_harness_n_fds(h), 2);
	gb_close(bob);
}
END_TEST

/* Run by hand without --state-dir, the broker records nothing and only reads the
 * default directory: one it cannot trust is not read (logged), and it runs. */
START_TEST(test_default_dir_unsafe_not_read)
{
	sd_bus *root;
	sd_bus_error err = SD_BUS_ERROR_NULL;
	const struct gb_broker_opts by_hand = { .policy = POLICY };

	ck_assert_int_eq(system("rm -rf /run/gpiod-broker"), 0);
	ck_assert_int_eq(mkdir("/run/gpiod-broker", 01777), 0);
	ck_assert_int_eq(chmod("/run/gpiod-broker", 01777), 0);
	plant_record(UID_ALICE, "/run/gpiod-broker/request-1", 1, 3, 0644);
	broker = gb_harness_start(h, &by_hand, false);
	root = gb_connect(0);
	ck_assert_int_ge(gb_ping(root, &err), 0);
	assert_untouched(3);
	ck_assert(log_has("not reading state directory /run/gpiod-broker: must be owned by "
			  "root and not writable by group or others (is uid 0, mode 1777)"));
	gb_close(root);
	ck_assert_int_eq(gb_broker_stop(broker), 0);
	broker = 0;
	ck_assert_int_eq(system("rm -rf /run/gpiod-broker"), 0);
}
END_TEST

/* --- a mark that shrinks ------------------------------------------------------ */

struct events {
	int n;
};

static int on_event(sd_bus_message *m, void *userdata, sd_bus_error *e)
{
	struct events *ev = userdata;

	if (sd_bus_message_is_signal(m, NULL, "Event"))
		ev->n++;
	return 0;
}

/* An edge on line 1 (pulled the other way), far enough from the last one that the
 * kernel sees both (UML ticks at 100 Hz). */
static void edge(bool level)
{
	usleep(20000);
	ck_assert_int_eq(gb_sim_set_pull(sim, 1, level), 0);
}

/* Truncated while events flow, the marks of a request and of a watch would turn the
 * broker's next plain store into SIGBUS: it goes on serving both, says which marks
 * were lost, deletes them, and stops cleanly. */
START_TEST(test_truncated_mark)
{
	sd_bus *bob, *alice;
	sd_bus_error err = SD_BUS_ERROR_NULL;
	struct events req = { 0 }, watched = { 0 };
	char *path = NULL;
	bool level = false;

	broker = gb_harness_start(h, &opts, true);
	bob = gb_connect(UID_BOB);
	alice = gb_connect(UID_ALICE);
	ck_assert_int_ge(sd_bus_add_match(bob, NULL, "type='signal',sender='" GB_BUS_NAME "',"
					  "interface='" GB_IFACE_REQUEST "'", on_event, &req), 0);
	ck_assert_int_ge(sd_bus_add_match(alice, NULL, "type='signal',sender='" GB_BUS_NAME "',"
					  "interface='" GB_IFACE_WATCH "'", on_event, &watched), 0);
	ck_assert_int_ge(gb_request(bob, "button-ctl", "button", "input", -1, "both", false, &path,
				    &err), 0);
	watch(alice, "button");
	for (int i = 1; i <= 2; i++) {
		edge(level = !level);
		ck_assert(gb_bus_wait_count(bob, &req.n, i, 5000));
		ck_assert(gb_bus_wait_count(alice, &watched.n, i, 5000));
	}

	ck_assert_int_eq(truncate(STATE_DIR "/request-1.mark", 0), 0);
	ck_assert_int_eq(truncate(STATE_DIR "/watch-1.mark", 0), 0);
	for (int i = 3; i <= 6; i++) {
		edge(level = !level);
		ck_assert_msg(gb_bus_wait_count(bob, &req.n, i, 5000),
			      "request event %d never came", i);
		ck_assert_msg(gb_bus_wait_count(alice, &watched.n, i, 5000),
			      "watch event %d never came", i);
	}
	ck_assert_int_eq(kill(broker, 0), 0);
	ck_assert_msg(wait_log("event mark " STATE_DIR "/request-1.mark shrank under the broker"),
		      "no log line about the request's mark");
	ck_assert_msg(wait_log("event mark " STATE_DIR "/watch-1.mark shrank under the broker"),
		      "no log line about the watch's mark");
	ck_assert_int_ne(access(STATE_DIR "/request-1.mark", F_OK), 0);
	ck_assert_int_ne(access(STATE_DIR "/watch-1.mark", F_OK), 0);

	/* Still serving: values, and a new request with a mark of its own. */
	ck_assert_int_eq(gb_get_value(bob, path, 0, &err), level);
	free(path);
	ck_assert_int_ge(gb_request(bob, "relay-ctl", "relay", "output", 1, NULL, false, &path,
				    &err), 0);
	ck_assert_int_eq(gb_sim_get_value(sim, 0), 1);
	ck_assert_int_eq(access(STATE_DIR "/request-2.mark", F_OK), 0);
	free(path);
	gb_close(bob);
	gb_close(alice);
	ck_assert_int_eq(gb_broker_stop(broker), 0);
	broker = 0;
}
END_TEST

int main(int argc, char **argv)
{
	Suite *s = suite_create("statedir");
	TCase *tc;

	gb_bench_enter(argc, argv);
	tc = gb_tcase_new(s, "statedir", setup, teardown, 60 * gb_slow());
	tcase_add_loop_test(tc, test_unsafe_dir_refused, 0, 3);
	tcase_add_test(tc, test_planted_records_refused);
	tcase_add_test(tc, test_planted_marks_refused);
	tcase_add_test(tc, test_dir_made_unsafe_while_running);
	tcase_add_test(tc, test_default_dir_unsafe_not_read);
	tcase_add_test(tc, test_truncated_mark);
	return gb_run_suite(s);
}
