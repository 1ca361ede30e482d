/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Outputs survive a broker restart (issue 6). The notify harness plays systemd: it
 * takes the broker's fds (FDSTORE=1), and starts the next broker with them
 * (LISTEN_FDS). Killed with SIGKILL, the broker must leave a driven output alone;
 * the next one takes the request over under the same path, with the same owner,
 * or releases it to its safe state when it must not come back.
 *
 * The policy's safe state is "input": gpio-sim puts a freed line's value back to
 * its pull, but the kernel keeps its direction, so "direction input after release"
 * is what shows that the safe state was applied (a plain close leaves an output).
 */
#include <check.h>
#include <gpiod.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
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

#define STATE_DIR "/run/gb-test-state"
#define LOG_FILE  "/run/gb-test-restart.log"
#define POLICY GB_TEST_POLICY_OPEN "safe-state = input\nwatch-users = *\n"

static const char *const names[4] = { "relay", "button", "valve", "spare" };
static const struct gb_broker_opts opts = { .policy = POLICY, .args = GB_ARGS("--state-dir=" STATE_DIR) };
static struct gb_sim_chip *sim;
static struct gb_harness *h;
static pid_t broker;

static void setup(void)
{
	ck_assert_int_eq(system("rm -rf " STATE_DIR " " LOG_FILE), 0);
	sim = gb_sim_chip_new("gbrst", 4, names);
	ck_assert_ptr_nonnull(sim);
	h = gb_harness_new();
	broker = gb_harness_start(h, &opts, true);
}

static void teardown(void)
{
	if (broker > 0)
		ck_assert_int_eq(gb_broker_stop(broker), 0);
	/* A clean stop leaves nothing behind: no fds in the store, no state. (The
	 * harness may still be reading the broker's last messages.) */
	ck_assert(gb_harness_wait_n_fds(h, 0, 5000));
	ck_assert_int_ne(access(STATE_DIR "/request-1", F_OK), 0);
	ck_assert_int_ne(access(STATE_DIR "/watch-1", F_OK), 0);
	ck_assert_int_ne(access(STATE_DIR "/watch-1.mark", F_OK), 0);
	gb_harness_free(h);
	gb_sim_chip_free(sim);
}

static void restart(bool with_socket)
{
	gb_broker_kill(broker);
	broker = gb_harness_start(h, &opts, with_socket);
}

/* The kernel's view of a line, independent of the broker. */
static bool kernel_line(unsigned int off, bool *output)
{
	return gb_sim_line_used(sim, off, output, NULL, 0);
}

/* The object answers for one of its string properties. */
static bool object_exists(sd_bus *bus, const char *path, const char *iface, const char *prop)
{
	sd_bus_error err = SD_BUS_ERROR_NULL;
	char *v = NULL;
	int r = sd_bus_get_property_string(bus, GB_BUS_NAME, path, iface, prop, &err, &v);

	sd_bus_error_free(&err);
	free(v);
	return r >= 0;
}

static bool request_exists(sd_bus *bus, const char *path)
{
	return object_exists(bus, path, GB_IFACE_REQUEST, "Label");
}

static void check_request(sd_bus *bus, const char *path, const char *label, uid_t uid,
			  bool persistent)
{
	char *s = gb_get_prop_str(bus, path, GB_IFACE_REQUEST, "Label");

	ck_assert_str_eq(s, label);
	free(s);
	ck_assert_uint_eq(gb_get_prop_u32(bus, path, GB_IFACE_REQUEST, "OwnerUid"), uid);
	ck_assert_int_eq(gb_get_prop_bool(bus, path, GB_IFACE_REQUEST, "Persistent"), persistent);
}

/* Wait until @p name is gone from the bus (the broker may be down: no Ping). */
static void wait_name_gone(sd_bus *bus, const char *name)
{
	ck_assert_msg(gb_wait_name(bus, name, false, 10000), "%s did not leave the bus", name);
}

/* A process that reads gpio-sim's value of line 0 in a loop, counting reads and
 * every read that is not 1. */
struct sampler {
	volatile long reads, glitches, stop;
};

static struct sampler *sampler_start(pid_t *pid)
{
	struct sampler *s = mmap(NULL, sizeof(*s), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
				 -1, 0);

	ck_assert_ptr_ne(s, MAP_FAILED);
	*pid = fork();
	ck_assert_int_ge(*pid, 0);
	if (*pid == 0) {
		while (!s->stop) {
			if (gb_sim_get_value(sim, 0) != 1)
				s->glitches++;
			s->reads++;
		}
		_exit(0);
	}
	while (s->reads == 0)
		usleep(1000);
	return s;
}

static void sampler_stop(struct sampler *s, pid_t pid)
{
	s->stop = 1;
	ck_assert_int_eq(waitpid(pid, NULL, 0), pid);
	munmap((void *)s, sizeof(*s));
}

/* --- watches and events across a restart ------------------------------------- */

/* What one connection receives on one request or watch. */
struct recv {
	sd_bus *bus;
	char path[128];
	int initial, edges;
	uint64_t lost;          /* sum of EventsLost counts */
	uint64_t last_total;    /* the last EventsLost total */
	uint64_t last_gseq, last_lseq;
	uint64_t last_seq;      /* the broker's seqno of the last Event or InitialState */
	uint64_t gaps;          /* events numbered and never received: lost on the way */
};

/* Counted as the API says a client counts: EventsLost plus seqno gaps. */
static void seen_seqno(struct recv *r, uint64_t seq, bool event)
{
	if (seq > r->last_seq + (event ? 1 : 0))
		r->gaps += seq - r->last_seq - (event ? 1 : 0);
	if (seq > r->last_seq)
		r->last_seq = seq;
}

static int on_recv(sd_bus_message *m, void *userdata, sd_bus_error *e)
{
	struct recv *r = userdata;
	const char *edge;
	uint32_t idx, off;
	uint64_t ts, seq, n, total;
	int value;

	if (!r->path[0] || strcmp(sd_bus_message_get_path(m), r->path) != 0)
		return 0;
	if (sd_bus_message_is_signal(m, NULL, "Event")) {
		ck_assert_int_ge(sd_bus_message_read(m, "uustttt", &idx, &off, &edge, &ts, &r->last_gseq,
						     &r->last_lseq, &seq), 0);
		seen_seqno(r, seq, true);
		r->edges++;
	} else if (sd_bus_message_is_signal(m, NULL, "InitialState")) {
		ck_assert_int_ge(sd_bus_message_read(m, "uubtt", &idx, &off, &value, &ts, &seq), 0);
		seen_seqno(r, seq, false);
		r->initial++;
	} else if (sd_bus_message_is_signal(m, NULL, "EventsLost")) {
		ck_assert_int_ge(sd_bus_message_read(m, "tt", &n, &total), 0);
		r->lost += n;
		r->last_total = total;
	}
	return 0;
}

static void recv_on(struct recv *r, sd_bus *bus, const char *path)
{
	memset(r, 0, sizeof(*r));
	r->bus = bus;
	snprintf(r->path, sizeof(r->path), "%s", path);
	ck_assert_int_ge(sd_bus_add_match(bus, NULL, "type='signal',sender='" GB_BUS_NAME "'", on_recv, r), 0);
}

static void watch_line(sd_bus *bus, const char *line, char *path, size_t size)
{
	sd_bus_error err = SD_BUS_ERROR_NULL;
	sd_bus_message *reply = NULL;
	const char *p;

	ck_assert_msg(sd_bus_call_method(bus, GB_BUS_NAME, GB_ROOT_PATH, GB_IFACE_MANAGER, "Watch", &err,
					 &reply, "sa{sv}", line, 0) >= 0, "Watch(%s): %s", line, err.message);
	ck_assert_int_ge(sd_bus_message_read(reply, "o", &p), 0);
	snprintf(path, size, "%s", p);
	sd_bus_message_unref(reply);
}

/* Watch @p line and receive on it: the match is there before the InitialState. */
static void watch_recv(struct recv *r, sd_bus *bus, const char *line)
{
	recv_on(r, bus, "");
	watch_line(bus, line, r->path, sizeof(r->path));
}

static bool watch_exists(sd_bus *bus, const char *path)
{
	return object_exists(bus, path, GB_IFACE_WATCH, "Owner");
}

static void wait_recv(struct recv *r, const int *counter, int n)
{
	ck_assert_msg(gb_bus_wait_count(r->bus, counter, n, 10000), "%s: %d of %d", r->path, *counter, n);
}

/* An edge on line @p off (pulled the other way), far enough from the last one that
 * the kernel sees both (UML ticks at 100 Hz). */
static void edge(unsigned int off, bool level)
{
	usleep(20000);
	ck_assert_int_eq(gb_sim_set_pull(sim, off, level), 0);
}

START_TEST(test_output_survives_kill)
{
	sd_bus *alice = gb_connect(UID_ALICE), *root;
	sd_bus_error err = SD_BUS_ERROR_NULL;
	char *path = NULL, *path2 = NULL, me[64];
	const char *unique;
	struct sampler *s;
	long before;
	pid_t spid;
	bool out;

	/* Pulled low: if the line were let go for an instant, the value would drop. */
	ck_assert_int_eq(gb_sim_set_pull(sim, 0, false), 0);
	ck_assert_int_ge(gb_request(alice, "relay-ctl", "relay", "output", 1, NULL, false, &path, &err), 0);
	ck_assert_str_eq(path, GB_ROOT_PATH "/request/1");
	ck_assert(gb_harness_wait_n_fds(h, 1, 5000));
	ck_assert(gb_harness_has_fd(h, "gbreq-1-0"));
	ck_assert_int_eq(access(STATE_DIR "/request-1", F_OK), 0);
	ck_assert_int_eq(gb_sim_get_value(sim, 0), 1);

	s = sampler_start(&spid);
	before = s->reads;
	restart(true);
	ck_assert_int_gt(s->reads, before); /* it sampled across the kill and the restart */
	ck_assert_int_eq(gb_get_value(alice, path, 0, &err), 1); /* alice stayed: still hers */
	before = s->reads;
	while (s->reads == before)
		usleep(1000);
	ck_assert_msg(s->glitches == 0, "the output changed %ld time(s) during the restart",
		      s->glitches);
	sampler_stop(s, spid);

	/* Same path, label, owner; the store was not asked twice for the same fd.
	 * (Connected only now: sd-bus gives a connection that is not used 25 s to
	 * authenticate, and a restart under valgrind takes longer.) */
	root = gb_connect(0);
	check_request(root, path, "relay-ctl", UID_ALICE, false);
	ck_assert_int_eq(gb_harness_n_fds(h), 1);
	ck_assert_int_ge(gb_get_unique_name(alice, &unique), 0);
	snprintf(me, sizeof(me), "%s", unique);
	{
		char *owner = gb_get_prop_str(root, path, GB_IFACE_REQUEST, "Owner");

		ck_assert_str_eq(owner, me);
		free(owner);
	}
	/* Still alice's to drive, and nobody else's. */
	ck_assert_int_ge(gb_set_value(alice, path, 0, false, &err), 0);
	ck_assert_int_eq(gb_sim_get_value(sim, 0), 0);
	ck_assert_int_ge(gb_set_value(alice, path, 0, true, &err), 0);
	ck_assert_int_eq(gb_sim_get_value(sim, 0), 1);
	{
		sd_bus *bob = gb_connect(UID_BOB);

		ck_assert_int_lt(gb_set_value(bob, path, 0, false, &err), 0);
		sd_bus_error_free(&err);
		gb_close(bob);
	}
	/* A new request gets an id after the adopted one. */
	ck_assert_int_ge(gb_request(alice, "valve", "valve", "input", -1, NULL, false, &path2, &err), 0);
	ck_assert_str_eq(path2, GB_ROOT_PATH "/request/2");

	/* alice leaves: the adopted request goes with her, to its safe state, out of
	 * the store. */
	gb_close(alice);
	gb_wait_client_gone(root, me);
	ck_assert(gb_harness_wait_removed(h, "gbreq-1-0", 5000));
	ck_assert(!kernel_line(0, &out));
	ck_assert_msg(!out, "released without its safe state (still an output)");
	ck_assert_int_ne(access(STATE_DIR "/request-1", F_OK), 0);
	free(path);
	free(path2);
	gb_close(root);
}
END_TEST

START_TEST(test_persistent_comes_back)
{
	sd_bus *alice = gb_connect(UID_ALICE);
	sd_bus_error err = SD_BUS_ERROR_NULL;
	char *path = NULL, *path2 = NULL;

	ck_assert_int_ge(gb_request(alice, "heater", "valve", "output", 1, NULL, true, &path, &err), 0);
	ck_assert_int_ge(gb_request(alice, "fan", "spare", "output", 0, NULL, true, &path2, &err), 0);
	/* A configuration change is recorded: "spare" comes back as an input. */
	ck_assert_int_ge(sd_bus_call_method(alice, GB_BUS_NAME, path2, GB_IFACE_REQUEST, "SetDirectionInput",
					    &err, NULL, "au", 0), 0);
	gb_close(alice);
	ck_assert(gb_harness_wait_n_fds(h, 2, 5000));

	restart(true);
	ck_assert_int_eq(gb_sim_get_value(sim, 2), 1);
	alice = gb_connect(UID_ALICE);
	check_request(alice, path, "heater", UID_ALICE, true);
	check_request(alice, path2, "fan", UID_ALICE, true);
	ck_assert_int_eq(gb_get_value(alice, path, 0, &err), 1);
	ck_assert_int_lt(gb_set_value(alice, path2, 0, true, &err), 0);
	gb_assert_error(&err, GB_ERROR_NOT_OUTPUT, NULL);
	ck_assert_int_ge(gb_release(alice, path2, &err), 0);
	ck_assert_int_ge(gb_release(alice, path, &err), 0);
	ck_assert(gb_harness_wait_removed(h, "gbreq-1-0", 5000));
	ck_assert_int_eq(gb_harness_n_fds(h), 0);
	ck_assert(!kernel_line(2, NULL));
	free(path);
	free(path2);
	gb_close(alice);
}
END_TEST

START_TEST(test_owner_died_while_down)
{
	sd_bus *root = gb_connect(0);
	char name[64];
	pid_t pid;
	bool out;

	pid = gb_spawn_holder(UID_ALICE, "relay-ctl", "relay", "output", 1, false, name, sizeof(name));
	ck_assert(gb_harness_wait_n_fds(h, 1, 5000));

	gb_broker_kill(broker);
	/* The client dies while no broker watches. */
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	wait_name_gone(root, name);
	ck_assert(kernel_line(0, &out)); /* the store still holds it */
	broker = gb_harness_start(h, &opts, true);

	ck_assert(!request_exists(root, GB_ROOT_PATH "/request/1"));
	ck_assert(gb_harness_wait_removed(h, "gbreq-1-0", 5000));
	ck_assert_int_eq(gb_harness_n_fds(h), 0);
	ck_assert(!kernel_line(0, &out));
	ck_assert_msg(!out, "released without its safe state (still an output)");
	gb_close(root);
}
END_TEST

/* A request made by a broker run by hand under @p first (records in --state-dir,
 * no fd store), the broker killed, then one under the test's policy, whose safe
 * state is "input": the line left driven is let go of as an input. */
static void killed_without_store(const struct gb_broker_opts *first, const char *msg)
{
	sd_bus *alice, *root;
	sd_bus_error err = SD_BUS_ERROR_NULL;
	char *path = NULL;
	bool out;

	ck_assert_int_eq(gb_broker_stop(broker), 0);
	broker = gb_harness_start(h, first, false);
	alice = gb_connect(UID_ALICE);
	ck_assert_int_ge(gb_request(alice, "relay-ctl", "relay", "output", 1, NULL, true, &path, &err), 0);
	ck_assert_int_eq(access(STATE_DIR "/request-1", F_OK), 0);
	ck_assert_int_eq(gb_harness_n_fds(h), 0);

	/* Killed, nobody keeps the fd: the kernel lets the line go as it was. */
	gb_broker_kill(broker);
	ck_assert(!kernel_line(0, &out));
	ck_assert(out);
	broker = gb_harness_start(h, &opts, false);
	root = gb_connect(0);
	/* Wait for the broker itself, then look. */
	ck_assert_int_ge(gb_ping(root, &err), 0);
	ck_assert(!request_exists(root, path));
	ck_assert(!kernel_line(0, &out));
	ck_assert_msg(!out, "%s", msg);
	ck_assert_int_ne(access(STATE_DIR "/request-1", F_OK), 0);
	free(path);
	gb_close(alice);
	gb_close(root);
}

START_TEST(test_no_store_releases_to_safe)
{
	killed_without_store(&opts, "a restart without the store did not apply the safe state");
}
END_TEST

static bool log_has(const char *needle)
{
	return gb_harness_log_has(h, needle);
}

START_TEST(test_corrupt_state)
{
	sd_bus *alice = gb_connect(UID_ALICE), *root;
	sd_bus_error err = SD_BUS_ERROR_NULL;
	char *path = NULL, *path2 = NULL, *path3 = NULL;
	FILE *f;

	ck_assert_int_ge(gb_request(alice, "relay-ctl", "relay", "output", 1, NULL, true, &path, &err), 0);
	ck_assert_int_ge(gb_request(alice, "valve-ctl", "valve", "output", 1, NULL, true, &path2, &err), 0);
	ck_assert(gb_harness_wait_n_fds(h, 2, 5000));

	gb_broker_kill(broker);
	/* request-1 damaged, request-2's state lost: neither can come back. */
	f = fopen(STATE_DIR "/request-1", "we");
	ck_assert_ptr_nonnull(f);
	fputs("version=1\nid=1\nlabel=relay-ctl\nuid=60001\nchips=1\nchip=gpiochip0 1 0\n"
	      "lines=1\nline=0 0 3 3 7 1 1 1 0 0 1 1\n", f);
	ck_assert_int_eq(fclose(f), 0);
	ck_assert_int_eq(unlink(STATE_DIR "/request-2"), 0);
	/* A damaged watch record: dropped, named in the log. */
	f = fopen(STATE_DIR "/watch-9", "we");
	ck_assert_ptr_nonnull(f);
	fputs("version=1\nid=9\nuid=60001\nowner=:1.999\nline=gpiochip0\n", f);
	ck_assert_int_eq(fclose(f), 0);
	gb_harness_set_log(h, LOG_FILE);
	broker = gb_harness_start(h, &opts, true);
	root = gb_connect(0);

	ck_assert(gb_harness_wait_removed(h, "gbreq-1-0", 5000));
	ck_assert(gb_harness_wait_removed(h, "gbreq-2-0", 5000));
	ck_assert_int_eq(gb_harness_n_fds(h), 0);
	ck_assert_msg(log_has("state file " STATE_DIR "/request-1: line 8"),
		      "no log line naming the damaged state file");
	ck_assert(log_has("\"gbreq-2-0\" has no state file"));
	ck_assert_msg(log_has("state file " STATE_DIR "/watch-9: line 5: invalid line entry; dropping watch 9"),
		      "no log line naming the damaged watch record");
	ck_assert_int_ne(access(STATE_DIR "/watch-9", F_OK), 0);
	ck_assert(!request_exists(root, path));
	ck_assert(!request_exists(root, path2));
	ck_assert(!kernel_line(0, NULL));
	ck_assert(!kernel_line(2, NULL));
	ck_assert_int_ne(access(STATE_DIR "/request-1", F_OK), 0);

	/* The broker is fine, and does not hand out the old ids again. */
	ck_assert_int_ge(gb_request(alice, "relay-ctl", "relay", "output", 1, NULL, false, &path3, &err), 0);
	ck_assert_str_eq(path3, GB_ROOT_PATH "/request/3");
	ck_assert_int_eq(gb_sim_get_value(sim, 0), 1);
	free(path);
	free(path2);
	free(path3);
	gb_close(alice);
	gb_close(root);
}
END_TEST

/* The policy changed while the broker was down: a request it no longer allows does
 * not come back; it is released to its safe state and the log says why. */
START_TEST(test_denied_after_restart)
{
	const struct gb_broker_opts denying = {
		.policy = "[group others]\nchip = gb*\noffsets = 0-63\nusers = gb-bob\n"
			  "directions = input, output\npersistent = yes\nsafe-state = input\n",
		.args = GB_ARGS("--state-dir=" STATE_DIR),
	};
	sd_bus *alice = gb_connect(UID_ALICE), *root;
	sd_bus_error err = SD_BUS_ERROR_NULL;
	char *path = NULL;
	bool out;

	ck_assert_int_ge(gb_request(alice, "relay-ctl", "relay", "output", 1, NULL, true, &path, &err), 0);
	ck_assert(gb_harness_wait_n_fds(h, 1, 5000));
	gb_broker_kill(broker);
	gb_harness_set_log(h, LOG_FILE);
	broker = gb_harness_start(h, &denying, true);
	root = gb_connect(0);

	ck_assert(gb_harness_wait_removed(h, "gbreq-1-0", 5000));
	ck_assert(!request_exists(root, path));
	ck_assert(!kernel_line(0, &out));
	ck_assert_msg(!out, "released without its safe state (still an output)");
	ck_assert_msg(log_has("not allowed by the policy after the restart"),
		      "no log line saying why the request did not come back");
	free(path);
	gb_close(alice);
	gb_close(root);
}
END_TEST

/* The policy's safe state changed while the broker was down, with nothing in the fd
 * store: the line the old broker left driven gets today's safe state, not the one
 * its record gives (what the old policy said). */
START_TEST(test_safe_state_changed_while_down)
{
	const struct gb_broker_opts high = {
		.policy = GB_TEST_POLICY_OPEN "safe-state = output-high\n",
		.args = GB_ARGS("--state-dir=" STATE_DIR),
	};

	killed_without_store(&high, "the record's safe state (output-high) was applied, not the "
			     "policy's (input)");
}
END_TEST

/* The chip was unplugged while the broker was down: its request does not come back
 * and its fd leaves the store; a chip plugged in later is served as usual. */
START_TEST(test_chip_gone_while_down)
{
	sd_bus *alice = gb_connect(UID_ALICE), *root;
	sd_bus_error err = SD_BUS_ERROR_NULL;
	char *path = NULL;

	ck_assert_int_ge(gb_request(alice, "relay-ctl", "relay", "output", 1, NULL, true, &path, &err), 0);
	ck_assert(gb_harness_wait_n_fds(h, 1, 5000));
	{
		char wpath[128];

		watch_line(alice, "valve", wpath, sizeof(wpath));
		ck_assert_str_eq(wpath, GB_ROOT_PATH "/watch/1");
	}
	gb_broker_kill(broker);
	gb_sim_chip_free(sim);
	gb_harness_set_log(h, LOG_FILE);
	broker = gb_harness_start(h, &opts, true);
	root = gb_connect(0);

	ck_assert(gb_harness_wait_removed(h, "gbreq-1-0", 5000));
	ck_assert_int_eq(gb_harness_n_fds(h), 0);
	ck_assert(!request_exists(root, path));
	ck_assert_msg(log_has("does not match the kernel's view"),
		      "no log line about the request of the chip that went away");
	ck_assert(!watch_exists(root, GB_ROOT_PATH "/watch/1"));
	ck_assert_msg(log_has("not restored: its line is gone"),
		      "no log line about the watch of the chip that went away");
	ck_assert_int_ne(access(STATE_DIR "/watch-1", F_OK), 0);
	ck_assert_int_ne(access(STATE_DIR "/request-1", F_OK), 0);
	/* Plugged in again: a new chip, requests work. */
	sim = gb_sim_chip_new("gbrst", 4, names);
	ck_assert_ptr_nonnull(sim);
	free(path);
	path = NULL;
	for (int i = 0; i < 500 * gb_slow(); i++) {
		sd_bus_error_free(&err);
		if (gb_request(alice, "relay-ctl", "relay", "output", 1, NULL, false, &path, &err) >= 0)
			break;
		usleep(10000);
	}
	ck_assert_msg(path, "no request on the new chip: %s", err.message);
	ck_assert_int_eq(gb_sim_get_value(sim, 0), 1);
	free(path);
	sd_bus_error_free(&err);
	gb_close(alice);
	gb_close(root);
}
END_TEST

/* A request on two chips of which one fd did not survive: it cannot come back
 * whole, so it does not come back; the surviving part goes to its safe state. */
START_TEST(test_part_of_request_lost)
{
	static const char *const names2[2] = { "pump", NULL };
	static const char *const specs[2] = { "relay", "pump" };
	struct gb_sim_chip *sim2 = gb_sim_chip_new("gbrst2", 2, names2);
	sd_bus *alice = gb_connect(UID_ALICE), *root;
	sd_bus_error err = SD_BUS_ERROR_NULL;
	char *path = NULL;
	bool out;

	ck_assert_ptr_nonnull(sim2);
	/* The broker sees the new chip before the request names its line. */
	for (int i = 0; i < 500 * gb_slow(); i++) {
		sd_bus_error_free(&err);
		if (gb_request_lines(alice, "two-chips", specs, 2, "output", 1, NULL, true, &path,
				     &err) >= 0)
			break;
		usleep(10000);
	}
	ck_assert_msg(path, "%s", err.message);
	ck_assert(gb_harness_wait_n_fds(h, 2, 5000));
	gb_broker_kill(broker);
	ck_assert(gb_harness_drop(h, "gbreq-1-1"));
	gb_harness_set_log(h, LOG_FILE);
	broker = gb_harness_start(h, &opts, true);
	root = gb_connect(0);

	ck_assert(gb_harness_wait_removed(h, "gbreq-1-0", 5000));
	ck_assert_int_eq(gb_harness_n_fds(h), 0);
	ck_assert(!request_exists(root, path));
	ck_assert_msg(log_has("only part of it survived the restart"),
		      "no log line saying the request lost a part");
	ck_assert(!kernel_line(0, &out));
	ck_assert_msg(!out, "released without its safe state (still an output)");
	free(path);
	sd_bus_error_free(&err);
	gb_close(alice);
	gb_close(root);
	gb_sim_chip_free(sim2);
}
END_TEST

START_TEST(test_events_after_restart)
{
	sd_bus *alice = gb_connect(UID_ALICE);
	sd_bus_error err = SD_BUS_ERROR_NULL;
	sd_bus_slot *slot = NULL;
	char *path = NULL;
	int events = 0;

	ck_assert_int_eq(gb_sim_set_pull(sim, 1, false), 0);
	ck_assert_int_ge(gb_request(alice, "btn", "button", "input", -1, "both", false, &path, &err), 0);
	ck_assert_int_ge(sd_bus_match_signal(alice, &slot, GB_BUS_NAME, path, GB_IFACE_REQUEST, "Event",
					     gb_bus_count_message, &events), 0);
	ck_assert_int_eq(gb_sim_set_pull(sim, 1, true), 0);
	ck_assert(gb_bus_wait_count(alice, &events, 1, 5000));

	restart(true);
	/* The new broker watches the adopted fd: the next edge reaches alice. */
	ck_assert_int_eq(gb_sim_set_pull(sim, 1, false), 0);
	ck_assert(gb_bus_wait_count(alice, &events, 2, 5000));
	ck_assert_uint_eq(gb_get_prop_u64(alice, path, GB_IFACE_REQUEST, "EventsLost"), 0); /* the new broker does not take the old one's events as lost */
	free(path);
	sd_bus_slot_unref(slot);
	gb_close(alice);
}
END_TEST

/* A watch of a held line and one of a line nobody holds come back after a SIGKILL
 * under the same paths, for the same subscriber, with a fresh InitialState each;
 * their edges come again. */
START_TEST(test_watch_survives_kill)
{
	sd_bus *alice = gb_connect(UID_ALICE), *bob = gb_connect(UID_BOB);
	sd_bus_error err = SD_BUS_ERROR_NULL;
	char held[128], free_line[128], *req = NULL, *owner, me[64];
	const char *unique;
	struct recv w1, w2;

	ck_assert_int_eq(gb_sim_set_pull(sim, 1, false), 0);
	ck_assert_int_eq(gb_sim_set_pull(sim, 2, false), 0);
	ck_assert_int_ge(gb_request(alice, "btn", "button", "input", -1, "both", false, &req, &err), 0);
	watch_recv(&w1, bob, "button");
	watch_recv(&w2, bob, "valve");
	snprintf(held, sizeof(held), "%s", w1.path);
	snprintf(free_line, sizeof(free_line), "%s", w2.path);
	ck_assert_str_eq(held, GB_ROOT_PATH "/watch/1");
	wait_recv(&w1, &w1.initial, 1);
	wait_recv(&w2, &w2.initial, 1);
	ck_assert_int_eq(access(STATE_DIR "/watch-1", F_OK), 0);
	ck_assert_int_eq(access(STATE_DIR "/watch-2", F_OK), 0);
	edge(1, true);
	wait_recv(&w1, &w1.edges, 1);
	edge(2, true);
	wait_recv(&w2, &w2.edges, 1);
	w1.initial = w2.initial = 0;

	restart(true);
	/* Levels may have changed while no broker ran: each watch hears it again. */
	wait_recv(&w1, &w1.initial, 1);
	wait_recv(&w2, &w2.initial, 1);
	ck_assert(watch_exists(bob, held));
	ck_assert(watch_exists(bob, free_line));
	ck_assert_int_ge(sd_bus_get_unique_name(bob, &unique), 0);
	snprintf(me, sizeof(me), "%s", unique);
	owner = gb_get_prop_str(bob, held, GB_IFACE_WATCH, "Owner");
	ck_assert_str_eq(owner, me);
	free(owner);

	edge(1, false);
	wait_recv(&w1, &w1.edges, 2);
	edge(2, false);
	wait_recv(&w2, &w2.edges, 2);
	ck_assert_msg(w1.gaps == 0 && w2.gaps == 0, "seqno gaps: %" PRIu64 " on the held line, %" PRIu64
		      " on the free one", w1.gaps, w2.gaps);
	ck_assert_msg(w1.lost == 0 && w2.lost == 0, "lost: %" PRIu64 " on the held line (total %" PRIu64 "), %" PRIu64 " on the free one (total %" PRIu64 ")",
		      w1.lost, w1.last_total, w2.lost, w2.last_total);
	ck_assert_uint_eq(gb_get_prop_u64(bob, held, GB_IFACE_WATCH, "EventsLost"), 0);
	/* A new watch gets an id after the adopted ones; closing one forgets it. */
	{
		char third[128];

		watch_line(bob, "spare", third, sizeof(third));
		ck_assert_str_eq(third, GB_ROOT_PATH "/watch/3");
	}
	ck_assert_int_ge(sd_bus_call_method(bob, GB_BUS_NAME, free_line, GB_IFACE_WATCH, "Close", &err, NULL,
					    ""), 0);
	ck_assert_int_ne(access(STATE_DIR "/watch-2", F_OK), 0);
	ck_assert_int_ne(access(STATE_DIR "/watch-2.mark", F_OK), 0);
	free(req);
	sd_bus_flush_close_unref(alice);
	sd_bus_flush_close_unref(bob);
}
END_TEST

/* A released request's lines go back to its line's watchers, although the fd store
 * still holds a copy of the request's fd for a moment after the release (the harness
 * takes its time, as a busy systemd does): they hear the level again, then the next
 * edge. */
START_TEST(test_watch_takes_line_back_from_store)
{
	sd_bus *alice = gb_connect(UID_ALICE), *bob = gb_connect(UID_BOB);
	sd_bus_error err = SD_BUS_ERROR_NULL;
	char *req = NULL;
	struct recv w;

	gb_harness_set_remove_delay(h, 200);
	ck_assert_int_eq(gb_sim_set_pull(sim, 1, false), 0);
	ck_assert_int_ge(gb_request(alice, "btn", "button", "input", -1, "both", false, &req, &err), 0);
	ck_assert(gb_harness_wait_n_fds(h, 1, 5000));
	watch_recv(&w, bob, "button");
	wait_recv(&w, &w.initial, 1);
	ck_assert_msg(sd_bus_call_method(alice, GB_BUS_NAME, req, GB_IFACE_REQUEST, "Release", &err, NULL,
					 "") >= 0, "Release: %s", err.message);
	wait_recv(&w, &w.initial, 2);
	edge(1, true);
	wait_recv(&w, &w.edges, 1);
	ck_assert_uint_eq(w.lost, 0);
	free(req);
	sd_bus_flush_close_unref(alice);
	sd_bus_flush_close_unref(bob);
}
END_TEST

/* The broker dies between reading edges from the kernel and sending them (the
 * debugging knob makes it abort there), with two more waiting in its queues (a
 * window of 2 nobody acknowledges). After the restart, the owner and the watcher
 * each count the three they never got, as the API says to count: EventsLost plus
 * seqno gaps, before the next edge. */
START_TEST(test_unsent_events_counted_lost)
{
	const struct gb_broker_opts small = {
		.policy = POLICY, .args = GB_ARGS("--state-dir=" STATE_DIR, "--event-window=2"),
	};
	sd_bus *alice, *bob, *root;
	sd_bus_error err = SD_BUS_ERROR_NULL;
	char wpath[128], *req = NULL;
	struct recv o, w;
	int status;

	ck_assert_int_eq(gb_broker_stop(broker), 0);
	ck_assert_int_eq(gb_sim_set_pull(sim, 1, false), 0);
	setenv("GPIOD_BROKER_DEBUG_ABORT_AFTER_EVENTS", "5", 1);
	broker = gb_harness_start(h, &small, true);
	unsetenv("GPIOD_BROKER_DEBUG_ABORT_AFTER_EVENTS");
	alice = gb_connect(UID_ALICE);
	bob = gb_connect(UID_BOB);
	root = gb_connect(0);
	ck_assert_int_ge(gb_request(alice, "btn", "button", "input", -1, "both", false, &req, &err), 0);
	recv_on(&o, alice, req);
	watch_recv(&w, bob, "button");
	snprintf(wpath, sizeof(wpath), "%s", w.path);

	/* Two sent (the window), two queued, the fifth read and never handled. */
	edge(1, true);
	edge(1, false);
	wait_recv(&o, &o.edges, 2);
	wait_recv(&w, &w.edges, 2);
	edge(1, true);
	edge(1, false);
	edge(1, true);
	status = gb_broker_wait_died(broker);
	ck_assert_msg(status == 128 + SIGABRT, "the broker did not abort (status %d)", status);
	ck_assert_int_eq(o.edges, 2);

	broker = gb_harness_start(h, &small, true);
	wait_recv(&w, &w.initial, 2);
	edge(1, false);
	wait_recv(&o, &o.edges, 3);
	wait_recv(&w, &w.edges, 3);
	ck_assert_uint_eq(o.last_gseq, 6);
	ck_assert_uint_eq(w.last_lseq, 6);
	/* The two it had numbered and queued are a seqno gap (the next broker numbers
	 * on); the one it read and never handled, a gap in the kernel's numbering, is
	 * told by EventsLost. Three in all, each counted once. */
	ck_assert_msg(o.lost == 1 && o.gaps == 2, "owner: %" PRIu64 " in EventsLost, %" PRIu64
		      " seqno gaps; want 1 and 2", o.lost, o.gaps);
	ck_assert_msg(w.lost == 1 && w.gaps == 2, "watcher: %" PRIu64 " in EventsLost, %" PRIu64
		      " seqno gaps; want 1 and 2", w.lost, w.gaps);
	ck_assert_uint_eq(o.last_seq, 5);
	ck_assert_uint_eq(o.last_total, 1);
	ck_assert_uint_eq(gb_get_prop_u64(root, req, GB_IFACE_REQUEST, "EventsLost"), 1);
	ck_assert_uint_eq(gb_get_prop_u64(root, wpath, GB_IFACE_WATCH, "EventsLost"), 1);
	free(req);
	sd_bus_flush_close_unref(alice);
	sd_bus_flush_close_unref(bob);
	sd_bus_flush_close_unref(root);
}
END_TEST

static sd_bus *bob_watches_valve(void *userdata)
{
	sd_bus *bus = gb_connect(UID_BOB);

	if (sd_bus_call_method(bus, GB_BUS_NAME, GB_ROOT_PATH, GB_IFACE_MANAGER, "Watch", NULL, NULL,
			       "sa{sv}", "valve", 0) < 0)
		return NULL;
	return bus;
}

/* Is @p needle on a line of the log logged at priority @p level ("<6>": info)? */
static bool log_has_at(const char *level, const char *needle)
{
	static char buf[262144];
	FILE *f = fopen(LOG_FILE, "re");
	const char *p;
	size_t n;

	if (!f)
		return false;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = 0;
	fclose(f);
	for (p = buf; (p = strstr(p, needle)); p++) {
		const char *line = p;

		while (line > buf && line[-1] != '\n')
			line--;
		if (strncmp(line, level, strlen(level)) == 0)
			return true;
	}
	return false;
}

/* The subscriber left while the broker was down: the watch is dropped, said at
 * info level (nothing went wrong), its record gone. */
START_TEST(test_watch_subscriber_left_while_down)
{
	sd_bus *root = gb_connect(0);
	char name[64];
	pid_t pid;

	pid = gb_fork_client(bob_watches_valve, NULL, name, sizeof(name));
	ck_assert_int_eq(access(STATE_DIR "/watch-1", F_OK), 0);
	gb_broker_kill(broker);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	wait_name_gone(root, name);
	gb_harness_set_log(h, LOG_FILE);
	setenv("JOURNAL_STREAM", "0:0", 1); /* priorities in the log */
	broker = gb_harness_start(h, &opts, true);
	unsetenv("JOURNAL_STREAM");

	ck_assert_int_ge(gb_ping(root, NULL), 0);
	ck_assert(!watch_exists(root, GB_ROOT_PATH "/watch/1"));
	ck_assert_int_ne(access(STATE_DIR "/watch-1", F_OK), 0);
	ck_assert_msg(log_has_at("<6>", "not restored: its subscriber left the bus while the broker was down"),
		      "no info line saying why the watch did not come back");
	ck_assert_msg(!log_has_at("<4>", name), "a warning about the subscriber that left");
	/* The line was let go: a new watch of it works. */
	{
		char path[128];

		watch_line(root, "valve", path, sizeof(path));
		ck_assert_str_eq(path, GB_ROOT_PATH "/watch/2");
	}
	sd_bus_flush_close_unref(root);
}
END_TEST

/* The policy changed while the broker was down: a watch it no longer allows does
 * not come back, and the log says why. */
START_TEST(test_watch_denied_after_restart)
{
	const struct gb_broker_opts denying = {
		.policy = GB_TEST_POLICY_OPEN "safe-state = input\nwatch-users = gb-alice\n",
		.args = GB_ARGS("--state-dir=" STATE_DIR),
	};
	sd_bus *bob = gb_connect(UID_BOB), *alice = gb_connect(UID_ALICE);
	char path[128], apath[128];
	struct recv w;

	watch_line(bob, "valve", path, sizeof(path));
	watch_recv(&w, alice, "valve");
	snprintf(apath, sizeof(apath), "%s", w.path);
	wait_recv(&w, &w.initial, 1);
	gb_broker_kill(broker);
	gb_harness_set_log(h, LOG_FILE);
	broker = gb_harness_start(h, &denying, true);

	wait_recv(&w, &w.initial, 2); /* alice's is still allowed */
	ck_assert(!watch_exists(bob, path));
	ck_assert(watch_exists(alice, apath));
	ck_assert_int_ne(access(STATE_DIR "/watch-1", F_OK), 0);
	ck_assert_msg(log_has("not restored: not allowed by the policy after the restart"),
		      "no log line saying why the watch did not come back");
	sd_bus_flush_close_unref(bob);
	sd_bus_flush_close_unref(alice);
}
END_TEST

/* The chip of a watched line is unplugged while the broker runs: the watch stays
 * (ChipGone) until closed, but is not recorded any more: after a restart a chip of
 * the same name may be another one. */
START_TEST(test_watch_chip_gone_not_restored)
{
	sd_bus *bob = gb_connect(UID_BOB);
	struct recv w;
	int gone = 0;

	watch_recv(&w, bob, "valve");
	ck_assert_int_ge(sd_bus_match_signal(bob, NULL, GB_BUS_NAME, w.path, GB_IFACE_WATCH, "ChipGone",
					     gb_bus_count_message, &gone), 0);
	ck_assert_int_eq(access(STATE_DIR "/watch-1", F_OK), 0);
	gb_sim_chip_free(sim);
	sim = NULL;
	ck_assert(gb_bus_wait_count(bob, &gone, 1, 10000));
	ck_assert(watch_exists(bob, w.path));
	ck_assert_int_ne(access(STATE_DIR "/watch-1", F_OK), 0);
	ck_assert_int_ne(access(STATE_DIR "/watch-1.mark", F_OK), 0);
	sim = gb_sim_chip_new("gbrst", 4, names);
	ck_assert_ptr_nonnull(sim);
	restart(true);
	ck_assert(!watch_exists(bob, w.path));
	sd_bus_flush_close_unref(bob);
}
END_TEST

/* Built twice (Makefile.am): each bench run has 15 minutes, and under valgrind a
 * broker start in the bench can take most of a minute; this file has 18 of them:
 * tests/bench/test-restart runs the first set, test-restart-release the second,
 * test-restart-changed the third. */
#ifndef GB_RESTART_PART
#define GB_RESTART_PART 1
#endif

/* systemd's part in "systemctl restart", for the broker's SIGTERM question "is a
 * restart job queued for my unit?": org.freedesktop.systemd1 with GetUnitByPID, a
 * unit whose Job is 42, and job 42 of type @p job_type. Runs in a child process. */
#define FAKE_UNIT "/org/freedesktop/systemd1/unit/gpiod_2dbroker_2eservice"
#define FAKE_JOB  "/org/freedesktop/systemd1/job/42"
static const char *fake_job_type;

static int fake_get_unit_by_pid(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
	return sd_bus_reply_method_return(m, "o", FAKE_UNIT);
}

static int fake_unit_job(sd_bus *bus, const char *path, const char *interface, const char *property,
			 sd_bus_message *reply, void *userdata, sd_bus_error *error)
{
	return sd_bus_message_append(reply, "(uo)", 42, FAKE_JOB);
}

static int fake_job_type_get(sd_bus *bus, const char *path, const char *interface,
			     const char *property, sd_bus_message *reply, void *userdata,
			     sd_bus_error *error)
{
	return sd_bus_message_append(reply, "s", fake_job_type);
}

static const sd_bus_vtable fake_manager[] = {
	SD_BUS_VTABLE_START(0),
	SD_BUS_METHOD("GetUnitByPID", "u", "o", fake_get_unit_by_pid, 0),
	SD_BUS_VTABLE_END
};
static const sd_bus_vtable fake_unit[] = {
	SD_BUS_VTABLE_START(0),
	SD_BUS_PROPERTY("Job", "(uo)", fake_unit_job, 0, 0),
	SD_BUS_VTABLE_END
};
static const sd_bus_vtable fake_job[] = {
	SD_BUS_VTABLE_START(0),
	SD_BUS_PROPERTY("JobType", "s", fake_job_type_get, 0, 0),
	SD_BUS_VTABLE_END
};

static pid_t fake_systemd_start(const char *job_type)
{
	sd_bus *bus = gb_connect(0);
	pid_t pid;

	fake_job_type = job_type;
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		sd_bus *me = gb_connect(0);

		if (sd_bus_add_object_vtable(me, NULL, "/org/freedesktop/systemd1",
					     "org.freedesktop.systemd1.Manager", fake_manager, NULL) < 0 ||
		    sd_bus_add_object_vtable(me, NULL, FAKE_UNIT, "org.freedesktop.systemd1.Unit",
					     fake_unit, NULL) < 0 ||
		    sd_bus_add_object_vtable(me, NULL, FAKE_JOB, "org.freedesktop.systemd1.Job",
					     fake_job, NULL) < 0 ||
		    sd_bus_request_name(me, "org.freedesktop.systemd1", 0) < 0)
			_exit(1);
		for (;;) {
			int r = sd_bus_process(me, NULL);

			if (r < 0)
				_exit(2);
			if (r == 0)
				sd_bus_wait(me, UINT64_MAX);
		}
	}
	ck_assert_msg(gb_wait_name(bus, "org.freedesktop.systemd1", true, 10000),
		      "the stand-in for systemd did not get on the bus");
	gb_close(bus);
	return pid;
}

static void fake_systemd_stop(pid_t pid)
{
	kill(pid, SIGKILL);
	ck_assert_int_eq(waitpid(pid, NULL, 0), pid);
}

/* "systemctl restart" (what a package upgrade does): SIGTERM with a restart job
 * queued. The broker leaves the output to the next one: no glitch, same request. */
START_TEST(test_restart_job_keeps_outputs)
{
	sd_bus *alice = gb_connect(UID_ALICE), *root;
	sd_bus_error err = SD_BUS_ERROR_NULL;
	char *path = NULL;
	struct sampler *s;
	pid_t spid, fake;
	long before;

	sd_bus *bob = gb_connect(UID_BOB);
	char wpath[128];
	struct recv w;

	ck_assert_int_eq(gb_sim_set_pull(sim, 0, false), 0);
	ck_assert_int_ge(gb_request(alice, "relay-ctl", "relay", "output", 1, NULL, false, &path, &err), 0);
	ck_assert(gb_harness_wait_n_fds(h, 1, 5000));
	/* A watcher of the output: left to the next broker too, not closed. */
	watch_recv(&w, bob, "relay");
	snprintf(wpath, sizeof(wpath), "%s", w.path);
	wait_recv(&w, &w.initial, 1);
	fake = fake_systemd_start("restart");

	s = sampler_start(&spid);
	before = s->reads;
	ck_assert_int_eq(gb_broker_stop(broker), 0); /* SIGTERM, exits 0 */
	broker = gb_harness_start(h, &opts, true);
	ck_assert_int_gt(s->reads, before);
	before = s->reads;
	while (s->reads == before)
		usleep(1000);
	ck_assert_msg(s->glitches == 0, "the output changed %ld time(s) during the restart",
		      s->glitches);
	sampler_stop(s, spid);
	fake_systemd_stop(fake);

	root = gb_connect(0);
	check_request(root, path, "relay-ctl", UID_ALICE, false);
	ck_assert_int_eq(gb_get_value(alice, path, 0, &err), 1);
	ck_assert_int_eq(gb_harness_n_fds(h), 1);
	wait_recv(&w, &w.initial, 2);
	ck_assert(watch_exists(root, wpath));
	sd_bus_flush_close_unref(bob);
	free(path);
	gb_close(alice);
	gb_close(root);
}
END_TEST

/* "systemctl stop": SIGTERM with a stop job. Every line goes to its safe state and
 * out of the store, as without systemd. */
START_TEST(test_stop_job_releases)
{
	sd_bus *alice = gb_connect(UID_ALICE);
	sd_bus_error err = SD_BUS_ERROR_NULL;
	char *path = NULL;
	pid_t fake;
	bool out;

	ck_assert_int_ge(gb_request(alice, "relay-ctl", "relay", "output", 1, NULL, false, &path, &err), 0);
	ck_assert(gb_harness_wait_n_fds(h, 1, 5000));
	fake = fake_systemd_start("stop");
	ck_assert_int_eq(gb_broker_stop(broker), 0);
	broker = 0;
	fake_systemd_stop(fake);
	ck_assert(gb_harness_wait_removed(h, "gbreq-1-0", 5000));
	ck_assert(!kernel_line(0, &out));
	ck_assert_msg(!out, "released without its safe state (still an output)");
	free(path);
	gb_close(alice);
}
END_TEST

int main(int argc, char **argv)
{
	/* Requests taken over by the next broker; requests it must release. */
	const TTest *const adopt[] = { test_output_survives_kill, test_persistent_comes_back,
				       test_events_after_restart, test_restart_job_keeps_outputs,
				       test_watch_survives_kill, test_unsent_events_counted_lost,
				       test_watch_takes_line_back_from_store, NULL };
	const TTest *const release[] = { test_owner_died_while_down, test_no_store_releases_to_safe,
					 test_corrupt_state, test_stop_job_releases,
					 test_watch_subscriber_left_while_down, NULL };
	/* What changed while the broker was down. */
	const TTest *const changed[] = { test_denied_after_restart,
					 test_safe_state_changed_while_down,
					 test_chip_gone_while_down, test_part_of_request_lost,
					 test_watch_denied_after_restart,
					 test_watch_chip_gone_not_restored, NULL };
	Suite *s = suite_create("restart");
	TCase *tc;

	gb_bench_enter(argc, argv);
	tc = gb_tcase_new(s, GB_RESTART_PART == 1 ? "adopt" : GB_RESTART_PART == 2 ? "release" : "changed",
			  setup, teardown, 60 * gb_slow());
	for (const TTest *const *t = GB_RESTART_PART == 1 ? adopt : GB_RESTART_PART == 2 ? release : changed;
	     *t; t++)
		tcase_add_test(tc, *t);
	return gb_run_suite(s);
}
