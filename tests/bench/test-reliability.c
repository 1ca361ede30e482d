/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Reliability under abuse, on the real bus with real uids (no timing thresholds):
 *
 *  - kill storm: a client requests a line and is SIGKILLed 0-10 ms later, over and
 *    over: no line stays held, the broker never dies. The time from kill() to the
 *    kernel's "released" line-info event is reported (TAP diagnostic).
 *  - many clients: 1000 connections across 4 uids; 512 of them hold a line each
 *    (all the lines the kernel can have), the others are refused Busy on a held line
 *    (so the broker knows them all); the broker stays on the bus and every holder
 *    still has its line.
 *  - malformed calls: a fixed-seed stream of random signatures, huge arrays,
 *    unknown keys, wrong paths/interfaces/types: every call is answered (a reply
 *    or a named error), the broker is healthy after (Ping, fds, RSS).
 *
 * Counts: GB_TEST_RELIABILITY_SCALE=full (make bench) runs the figures of the issue
 * (1000 kills, 1000 clients, 10000 calls); make check runs 300 kills, 1000 clients
 * and 2000 calls; under valgrind 50 kills, 200 clients and 300 calls.
 */
#include <check.h>
#include <errno.h>
#include <gpiod.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "broker-calls.h"
#include "brokertest.h"
#include "bus-util.h"
#include "gpiosim.h"
#include "org.gpiodbroker1.h"
#include "procstat.h"
#include "testmain.h"
#include "timing.h"
#include "users.h"

/* Linux 6.1 (the bench's kernel) numbers GPIOs globally and has 512 numbers
 * (ARCH_NR_GPIOS): no more lines than that can exist at once, across all chips. */
#define MANY_LINES 512
#define POLICY_MANY GB_TEST_POLICY_ALL("gbrel*", "0-511")

static struct gb_sim_chip *sim;
static const char *chip;
static pid_t broker;

static bool full(void)
{
	const char *s = getenv("GB_TEST_RELIABILITY_SCALE");

	return s && strcmp(s, "full") == 0;
}

static int count(int full_n, int check_n, int valgrind_n)
{
	if (getenv("GB_TEST_RELIABILITY_N"))
		return atoi(getenv("GB_TEST_RELIABILITY_N"));
	if (getenv("GB_TEST_VALGRIND"))
		return valgrind_n;
	return full() ? full_n : check_n;
}

static void setup(void)
{
	/* 1000 client connections here, a line request fd each in the broker. */
	ck_assert_int_ge(gb_raise_fd_limit(), 2200);
	sim = gb_sim_chip_new("gbrel", MANY_LINES, NULL);
	ck_assert_ptr_nonnull(sim);
	chip = gb_sim_chip_name(sim);
	broker = gb_broker_spawn(&(struct gb_broker_opts){ .policy = POLICY_MANY,
						      .args = GB_ARGS("--log-level=notice") });
}

static void teardown(void)
{
	ck_assert_int_eq(gb_broker_stop(broker), 0);
	gb_sim_chip_free(sim);
}

static void assert_broker_alive(sd_bus *bus)
{
	int status;

	ck_assert_msg(waitpid(broker, &status, WNOHANG) == 0, "the broker died");
	ck_assert_int_ge(gb_ping(bus, NULL), 0);
}

/* --- kill storm -------------------------------------------------------------- */

#define STORM_LINES 16

START_TEST(test_kill_storm)
{
	int n = count(1000, 100, 20), released = 0, refused = 0;
	struct gpiod_chip *gc = gpiod_chip_open(gb_sim_chip_path(sim));
	struct gpiod_info_event *iev;
	long long *lat = calloc(n, sizeof(*lat));
	sd_bus *bus = gb_connect(0);

	ck_assert_ptr_nonnull(gc);
	ck_assert_ptr_nonnull(lat);
	/* The kernel tells us when a line is released, with its own timestamp. */
	for (unsigned int i = 0; i < STORM_LINES; i++)
		ck_assert_ptr_nonnull(gpiod_chip_watch_line_info(gc, i));
	srand(7);
	long long t_start = gb_now_ns();
	for (int k = 0; k < n; k++) {
		unsigned int off = k % STORM_LINES;
		char name[128] = "";
		int pfd[2], status;
		long long killed;
		pid_t pid;
		ssize_t len;

		ck_assert_int_eq(pipe(pfd), 0);
		pid = fork();
		ck_assert_int_ge(pid, 0);
		if (pid == 0) {
			const char *u = NULL;
			char spec[64];
			sd_bus *cb;

			gb_test_child_unreported();
			cb = gb_connect(k % 2 ? UID_ALICE : UID_BOB);

			close(pfd[0]);
			gb_get_unique_name(cb, &u);
			if (write(pfd[1], u, strlen(u)) < 0)
				_exit(1);
			close(pfd[1]);
			snprintf(spec, sizeof(spec), "%s:%u", chip, off);
			gb_request(cb, "storm", spec, "output", 1, NULL, false, NULL, NULL);
			pause();
			_exit(0);
		}
		close(pfd[1]);
		len = read(pfd[0], name, sizeof(name) - 1);
		close(pfd[0]);
		ck_assert_int_gt(len, 0);
		name[len] = '\0';
		usleep(rand() % 10001); /* 0-10 ms: before, during or after the request */
		killed = gb_now_ns();
		kill(pid, SIGKILL);
		ck_assert_int_eq(waitpid(pid, &status, 0), pid);

		/* Once the broker has seen the client leave, nothing of it may be held. */
		gb_wait_client_gone(bus, name);
		ck_assert_msg(!gb_line_prop_bool(bus, chip, off, "Used"),
			      "kill %d: line %u still held after the client was killed", k, off);
		{
			struct gpiod_line_info *li = gpiod_chip_get_line_info(gc, off);

			ck_assert_ptr_nonnull(li);
			ck_assert_msg(!gpiod_line_info_is_used(li), "kill %d: kernel says line %u used",
				      k, off);
			gpiod_line_info_free(li);
		}
		/* The release (if the request was made) is queued on the watch by now. */
		bool got = false;

		while (gb_wait_readable(gpiod_chip_get_fd(gc), 0) > 0 &&
		       (iev = gpiod_chip_read_info_event(gc))) {
			if (gpiod_info_event_get_event_type(iev) == GPIOD_INFO_EVENT_LINE_RELEASED &&
			    (long long)gpiod_info_event_get_timestamp_ns(iev) >= killed && !got) {
				lat[released++] = gpiod_info_event_get_timestamp_ns(iev) - killed;
				got = true;
			}
			gpiod_info_event_free(iev);
		}
		if (!got)
			refused++; /* killed before the request was made (or answered) */
		if (k % 100 == 99) {
			assert_broker_alive(bus);
			fprintf(stderr, "kill storm: %d kills, %.1f s\n", k + 1, (gb_now_ns() - t_start) / 1e9);
		}
	}
	assert_broker_alive(bus);
	gb_sort_samples(lat, released);
	printf("# kill storm: %d kills, %d released after the kill, %d killed before holding, "
	       "0 left held\n", n, released, refused);
	if (released)
		printf("# kill-to-release: p50 %.2f ms, p99 %.2f ms, max %.2f ms\n",
		       gb_percentile(lat, released, 50) / 1e6, gb_percentile(lat, released, 99) / 1e6,
		       lat[released - 1] / 1e6);
	ck_assert_msg(released > 0, "no kill came after the request: the storm tested nothing");
	free(lat);
	gpiod_chip_close(gc);
	gb_close(bus);
}
END_TEST

/* --- many clients ------------------------------------------------------------ */

START_TEST(test_many_clients)
{
	static const uid_t uids[] = { UID_ALICE, UID_BOB, UID_CAROL, 0 };
	int n = count(1000, 100, 40), holders = n < MANY_LINES ? n : MANY_LINES;
	sd_bus **c = calloc(n, sizeof(*c));
	char **path = calloc(n, sizeof(*path));
	sd_bus *bus = gb_connect(0);
	sd_bus_message *reply = NULL;
	long rss0 = gb_proc_rss_kib(broker), rss1;
	long long t_start = gb_now_ns();
	int listed = 0;

	ck_assert_ptr_nonnull(c);
	ck_assert_ptr_nonnull(path);
	for (int i = 0; i < n; i++) {
		sd_bus_error err = SD_BUS_ERROR_NULL;
		char spec[64];

		if (i % 100 == 0)
			fprintf(stderr, "many clients: %d, %.1f s\n", i, (gb_now_ns() - t_start) / 1e9);
		c[i] = gb_connect(uids[i % 4]);
		snprintf(spec, sizeof(spec), "%s:%d", chip, i % holders);
		if (i < holders) {
			ck_assert_msg(gb_request(c[i], "many", spec, "output", i % 2, NULL, false,
						 &path[i], &err) >= 0, "client %d: %s: %s", i, err.name,
				      err.message);
		} else {
			ck_assert_int_lt(gb_request(c[i], "many", spec, "input", -1, NULL, false, NULL,
						    &err), 0);
			ck_assert_msg(sd_bus_error_has_name(&err, GB_BUS_NAME ".Error.Busy"), "client %d: %s",
				      i, err.name);
			sd_bus_error_free(&err);
		}
	}
	assert_broker_alive(bus);
	rss1 = gb_proc_rss_kib(broker);
	ck_assert_int_ge(sd_bus_call_method(bus, GB_BUS_NAME, GB_ROOT_PATH, GB_IFACE_MANAGER, "ListRequests", NULL,
					    &reply, ""), 0);
	ck_assert_int_ge(sd_bus_message_enter_container(reply, 'a', "(osbus)"), 0);
	while (sd_bus_message_skip(reply, "(osbus)") > 0)
		listed++;
	sd_bus_message_unref(reply);
	ck_assert_int_eq(listed, holders);
	/* Every holder still has its line, with the value it asked for. */
	for (int i = 0; i < holders; i++) {
		sd_bus_error err = SD_BUS_ERROR_NULL;

		ck_assert_msg(gb_get_value(c[i], path[i], 0, &err) == i % 2, "client %d: %s", i,
			      err.message ? err.message : "wrong value");
		ck_assert_int_eq(gb_sim_get_value(sim, i), i % 2);
	}
	printf("# %d clients across 4 uids, %d holding a line each: all held; broker RSS %ld KiB "
	       "idle, %ld KiB with them, fds %d\n", n, holders, rss0, rss1, gb_proc_fd_count(broker));
	for (int i = 0; i < n; i++) {
		gb_close(c[i]);
		free(path[i]);
	}
	/* All of them leave: every line comes back. */
	for (int i = 0; i < holders; i++)
		ck_assert_msg(gb_wait_line_used(bus, chip, i, false, 10000), "line %d still held", i);
	assert_broker_alive(bus);
	free(c);
	free(path);
	gb_close(bus);
}
END_TEST

/* --- malformed calls ------------------------------------------------------------ */

static const char basic_types[] = "ybnqiuxtdsogh";

/* Length of the complete type at @p s. */
static size_t type_len(const char *s)
{
	size_t i;

	switch (*s) {
	case 'a':
		return 1 + type_len(s + 1);
	case '(':
	case '{':
		for (i = 1; s[i] != ')' && s[i] != '}';)
			i += type_len(s + i);
		return i + 1;
	default:
		return 1;
	}
}

static void gen_type(char *buf, size_t *len, int depth)
{
	int k = rand() % (depth < 3 ? 16 : 12);

	if (k < 12) {
		/* Every basic type but 'h' (fds: not worth the bus's limits here). */
		buf[(*len)++] = basic_types[k];
	} else if (k == 12) {
		buf[(*len)++] = 'a';
		gen_type(buf, len, depth + 1);
	} else if (k == 13) {
		int n = 1 + rand() % 3;

		buf[(*len)++] = '(';
		while (n--)
			gen_type(buf, len, depth + 1);
		buf[(*len)++] = ')';
	} else if (k == 14) {
		buf[(*len)++] = 'a';
		buf[(*len)++] = '{';
		buf[(*len)++] = basic_types[rand() % 12];
		gen_type(buf, len, depth + 1);
		buf[(*len)++] = '}';
	} else {
		buf[(*len)++] = 'v';
	}
	buf[*len] = '\0';
}

static void rand_string(char *s, size_t max)
{
	static const char *const words[] = { "direction", "value", "edge", "bias", "drive",
		"active-low", "debounce-period-us", "event-clock", "persistent", "output", "input",
		"both", "gbrel:1", "gpiochip0:0", "/org/gpiodbroker1", "", "x", "reset" };
	size_t n;

	if (rand() % 2) {
		snprintf(s, max, "%s", words[rand() % (sizeof(words) / sizeof(*words))]);
		return;
	}
	n = rand() % (max - 1);
	for (size_t i = 0; i < n; i++)
		s[i] = 0x20 + rand() % 0x5f;
	s[n] = '\0';
}

/* Values left for the message being built: huge, but within the bus's size limit. */
static int budget;

static int append_value(sd_bus_message *m, const char *t, int depth)
{
	char s[200], inner[64];
	int r = 0;

	switch (*t) {
	case 'y': { uint8_t v = rand(); return sd_bus_message_append_basic(m, 'y', &v); }
	case 'b': { int v = rand() % 3; return sd_bus_message_append_basic(m, 'b', &v); }
	case 'n': case 'q': { uint16_t v = rand(); return sd_bus_message_append_basic(m, *t, &v); }
	case 'i': case 'u': {
		uint32_t v = rand() % 4 ? (uint32_t)rand() % 70 : (uint32_t)rand() * 2u;
		return sd_bus_message_append_basic(m, *t, &v);
	}
	case 'x': case 't': { uint64_t v = ((uint64_t)rand() << 33) ^ rand(); return sd_bus_message_append_basic(m, *t, &v); }
	case 'd': { double v = rand() / 3.0; return sd_bus_message_append_basic(m, 'd', &v); }
	case 's':
		rand_string(s, sizeof(s));
		return sd_bus_message_append_basic(m, 's', s);
	case 'o':
		return sd_bus_message_append_basic(m, 'o', rand() % 2 ? "/org/gpiodbroker1" : "/x/y");
	case 'g':
		return sd_bus_message_append_basic(m, 'g', rand() % 2 ? "a{sv}" : "");
	case 'v': {
		size_t len = 0;

		if (depth > 4) {
			strcpy(inner, "s");
		} else {
			gen_type(inner, &len, 2);
		}
		r = sd_bus_message_open_container(m, 'v', inner);
		if (r >= 0)
			r = append_value(m, inner, depth + 1);
		return r < 0 ? r : sd_bus_message_close_container(m);
	}
	case 'a': {
		size_t el = type_len(t + 1);
		/* Mostly small; sometimes huge (but within the bus's message size). */
		int n = rand() % 8 ? rand() % 4 : (depth == 0 ? 2000 + rand() % 20000 : 600);

		if (el >= sizeof(inner))
			return -EINVAL;
		if (n > budget)
			n = budget > 0 ? budget : 0;
		budget -= n;
		memcpy(inner, t + 1, el);
		inner[el] = '\0';
		r = sd_bus_message_open_container(m, 'a', inner);
		for (int i = 0; r >= 0 && i < n; i++)
			r = append_value(m, inner, depth + 1);
		return r < 0 ? r : sd_bus_message_close_container(m);
	}
	case '(': case '{': {
		size_t el = type_len(t);

		memcpy(inner, t + 1, el - 2);
		inner[el - 2] = '\0';
		r = sd_bus_message_open_container(m, *t == '(' ? 'r' : 'e', inner);
		for (const char *p = inner; r >= 0 && *p; p += type_len(p))
			r = append_value(m, p, depth + 1);
		return r < 0 ? r : sd_bus_message_close_container(m);
	}
	}
	return -EINVAL;
}

/* A body that matches the method's signature but not its meaning, or any body. */
static const char *const members[][2] = {
	{ "Request", "sa(sa{sv})a{sv}" }, { "FindLine", "s" }, { "ListRequests", "" },
	{ "GetAccess", "s" }, { "ReloadPolicy", "" }, { "GetValues", "au" },
	{ "SetValues", "a(ub)" }, { "SetDirectionInput", "au" },
	{ "SetDirectionOutput", "a(ub)" }, { "Reconfigure", "a(ua{sv})" }, { "Subscribe", "" },
	{ "Release", "" }, { "Get", "ss" }, { "GetAll", "s" }, { "Set", "ssv" },
	{ "Introspect", "" }, { "GetManagedObjects", "" }, { "Frobnicate", "s" },
};
static const char *const interfaces[] = {
	GB_IFACE_MANAGER, GB_IFACE_REQUEST, GB_IFACE_LINE, GB_BUS_NAME ".Chip", "org.freedesktop.DBus.Properties",
	"org.freedesktop.DBus.Introspectable", "org.freedesktop.DBus.ObjectManager",
	GB_BUS_NAME ".Nope", NULL,
};

static sd_bus_message *fuzz_call(sd_bus *bus, const char *request_path)
{
	const char *paths[] = { GB_ROOT_PATH, request_path, GB_ROOT_PATH "/request/999999", GB_ROOT_PATH "/chip",
				NULL, GB_ROOT_PATH "/nope", "/", GB_ROOT_PATH "/chip/x/line9" };
	char line_path[128], sig[256];
	int mi = rand() % (sizeof(members) / sizeof(*members));
	const char *iface = interfaces[rand() % (sizeof(interfaces) / sizeof(*interfaces))];
	const char *path;
	sd_bus_message *m = NULL;
	int r;

	snprintf(line_path, sizeof(line_path), GB_ROOT_PATH "/chip/%s/line%d", chip, rand() % 8);
	paths[4] = line_path;
	path = paths[rand() % (sizeof(paths) / sizeof(*paths))];
	/* Mostly the interface the member belongs to, with a meaningful path. */
	if (rand() % 2 == 0) {
		iface = mi < 5 ? GB_IFACE_MANAGER : mi < 12 ? GB_IFACE_REQUEST : mi < 15 ?
			"org.freedesktop.DBus.Properties" : iface;
		path = mi < 5 ? GB_ROOT_PATH : mi < 12 ? request_path : path;
	}
	ck_assert_int_ge(sd_bus_message_new_method_call(bus, &m, GB_BUS_NAME, path, iface,
							members[mi][0]), 0);
	if (rand() % 4) {
		strcpy(sig, members[mi][1]);
	} else {
		size_t len = 0;
		int n = rand() % 4;

		sig[0] = '\0';
		while (n--)
			gen_type(sig, &len, 0);
	}
	/* On a private connection a message over 512 KiB ends the connection
	 * (gpiod-broker(8), MEMORY: test-p2p-hostile sends one): stay well under. */
	budget = gb_test_p2p() ? 500 : 40000;
	for (const char *p = sig; *p; p += type_len(p)) {
		r = append_value(m, p, 0);
		ck_assert_msg(r >= 0, "building a %s body: %s", sig, strerror(-r));
	}
	return m;
}

START_TEST(test_malformed_calls)
{
	int n = count(10000, 1000, 150), replies = 0, errors = 0, named_ours = 0;
	sd_bus *bus = gb_connect(0), *fz;
	char *req_path = NULL, unique[128];
	const char *u;
	long rss0 = 0, rss1;
	int fds0 = 0, fds1;

	/* A warm-up round first: sd-bus and malloc keep some memory once used. */
	for (int round = 0; round < 2; round++) {
		int calls = round == 0 ? n / 5 : n;

		if (round == 1) {
			/* The warm-up client is gone and its lines released: the baseline. */
			rss0 = gb_proc_rss_kib(broker);
			fds0 = gb_proc_fd_count(broker);
		}
		fz = gb_connect(UID_ALICE);
		ck_assert_int_ge(gb_get_unique_name(fz, &u), 0);
		snprintf(unique, sizeof(unique), "%s", u);
		free(req_path);
		req_path = NULL;
		{
			char spec[64];

			snprintf(spec, sizeof(spec), "%s:0", chip);
			ck_assert_int_ge(gb_request(fz, "fuzz", spec, "output", 0, NULL, false,
						    &req_path, NULL), 0);
		}
		srand(1234 + round);
		for (int k = 0; k < calls; k++) {
			sd_bus_error err = SD_BUS_ERROR_NULL;
			sd_bus_message *m = fuzz_call(fz, req_path), *reply = NULL;
			int r = sd_bus_call(fz, m, 30 * 1000000ULL * gb_slow(), &err, &reply);

			if (r >= 0) {
				replies++;
			} else {
				ck_assert_msg(sd_bus_error_is_set(&err), "call %d (%s.%s %s): no error name "
					      "(%s)", k, sd_bus_message_get_interface(m),
					      sd_bus_message_get_member(m), sd_bus_message_get_signature(m, 1),
					      strerror(-r));
				ck_assert_msg(!sd_bus_error_has_names(&err, SD_BUS_ERROR_NO_REPLY,
								      SD_BUS_ERROR_TIMEOUT,
								      SD_BUS_ERROR_DISCONNECTED,
								      SD_BUS_ERROR_SERVICE_UNKNOWN,
								      SD_BUS_ERROR_NAME_HAS_NO_OWNER),
					      "call %d (%s.%s): %s: %s", k, sd_bus_message_get_interface(m),
					      sd_bus_message_get_member(m), err.name, err.message);
				errors++;
				named_ours += strncmp(err.name, GB_BUS_NAME ".Error.", 22) == 0;
			}
			sd_bus_error_free(&err);
			sd_bus_message_unref(m);
			sd_bus_message_unref(reply);
		}
		gb_close(fz);
		gb_wait_client_gone(bus, unique);
		assert_broker_alive(bus);
	}
	rss1 = gb_proc_rss_kib(broker);
	fds1 = gb_proc_fd_count(broker);
	printf("# %d malformed calls (seeds 1234, 1235; %d of them warm-up): %d replies, %d named "
	       "errors (%d the broker's own), 0 unanswered; broker RSS %ld -> %ld KiB, fds %d -> %d\n",
	       n + n / 5, n / 5, replies, errors, named_ours,
	       rss0, rss1, fds0, fds1);
	ck_assert_int_eq(fds1, fds0);
	/* Only a coarse bound (malloc keeps freed memory, and huge messages grow the heap):
	 * the leak check proper is the valgrind run (GB_TEST_VALGRIND=1), which measures
	 * its own memory here. */
	if (!getenv("GB_TEST_VALGRIND"))
		ck_assert_msg(rss1 - rss0 <= 1024, "broker RSS grew by %ld KiB", rss1 - rss0);
	free(req_path);
	gb_close(bus);
}
END_TEST

int main(int argc, char **argv)
{
	Suite *s = suite_create("reliability");
	TCase *tc;
	const char *only;

	gb_bench_enter(argc, argv);
	tc = gb_tcase_new(s, "reliability", setup, teardown, (full() ? 1500 : 150) * gb_slow());
	/* GB_TEST_RELIABILITY_ONLY=storm|many|calls runs one of them. */
	only = getenv("GB_TEST_RELIABILITY_ONLY");
	if (!only || strcmp(only, "storm") == 0)
		tcase_add_test(tc, test_kill_storm);
	if (!only || strcmp(only, "many") == 0)
		tcase_add_test(tc, test_many_clients);
	if (!only || strcmp(only, "calls") == 0)
		tcase_add_test(tc, test_malformed_calls);
	return gb_run_suite(s);
}
