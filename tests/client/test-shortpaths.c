/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libgpiobroker's short paths against the real broker on the bench: one-call
 * requests, the call timeout (against a stopped broker), the version, line info and
 * its change callback, and the asynchronous request. Values are checked in gpio-sim,
 * edges are made with its pulls, callers are real uids.
 */
#include <check.h>
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <sys/wait.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "broker-calls.h"
#include "brokertest.h"
#include "bus-util.h"
#include "client-util.h"
#include "timing.h"
#include "users.h"
#include "gpiobroker.h"
#include "gpiosim.h"
#include "org.gpiodbroker1.h"
#include "testmain.h"

static const char *const names[4] = { "porch", "doorbell", "spare", NULL };
static struct gb_sim_chip *sim;
static pid_t broker;
static const char *chip;

/* Line 0 has the alias porch-light (a policy entry of its own); the rest is open. */
#define POLICY \
	"[group rest]\n" \
	"chip = gbshort\n" \
	"offsets = 1-3\n" \
	"users = *\n" \
	"directions = input, output\n" \
	"direction-may-change = yes\n" \
	"edges = none, rising, falling, both\n" \
	"[line porch-light]\n" \
	"chip = gbshort\n" \
	"offset = 0\n" \
	"users = *\n" \
	"directions = input, output\n" \
	"direction-may-change = yes\n"

static void setup(void)
{
	sim = gb_sim_chip_new("gbshort", 4, names);
	ck_assert_ptr_nonnull(sim);
	chip = gb_sim_chip_name(sim);
	for (unsigned int i = 0; i < 4; i++)
		ck_assert_int_eq(gb_sim_set_pull(sim, i, false), 0);
	broker = gb_broker_spawn(&(struct gb_broker_opts){ .policy = POLICY });
}

static void teardown(void)
{
	ck_assert_int_eq(gb_broker_stop(broker), 0);
	gb_sim_chip_free(sim);
}

/* One connection's events, through the shared poll loop. */
static bool wait_count(struct gpiobroker *b, const int *count, int target, int timeout_ms)
{
	return gb_client_wait_count(&b, 1, count, target, timeout_ms);
}

START_TEST(test_version)
{
	ck_assert_str_eq(gpiobroker_version(), GPIOBROKER_VERSION_STRING);
	ck_assert_str_eq(gpiobroker_version(), PACKAGE_VERSION);
	ck_assert(GPIOBROKER_VERSION_CHECK(0, 0, 0));
	ck_assert(GPIOBROKER_VERSION_CHECK(GPIOBROKER_VERSION_MAJOR, GPIOBROKER_VERSION_MINOR,
					   GPIOBROKER_VERSION_MICRO));
	ck_assert(!GPIOBROKER_VERSION_CHECK(GPIOBROKER_VERSION_MAJOR, GPIOBROKER_VERSION_MINOR + 1, 0));
	ck_assert(!GPIOBROKER_VERSION_CHECK(GPIOBROKER_VERSION_MAJOR + 1, 0, 0));
}
END_TEST

/* Two calls drive a line: request_output() then set_value(). */
START_TEST(test_request_output)
{
	struct gpiobroker *b = gb_client_open_as(UID_ALICE);
	struct gpiobroker_request *req;
	char spec[64];

	req = gpiobroker_request_output(b, "porch-light", "shortpath", 1);
	ck_assert_msg(req != NULL, "%s", gpiobroker_last_error_message(b));
	ck_assert_int_eq(gb_sim_get_value(sim, 0), 1);
	ck_assert_int_eq(gpiobroker_set_value(req, 0, 0), 0);
	ck_assert_int_eq(gb_sim_get_value(sim, 0), 0);
	ck_assert_int_eq(gpiobroker_free(req), 0);

	/* By CHIP:OFFSET and line name, low and high; any non-zero value is high. */
	snprintf(spec, sizeof(spec), "%s:2", chip);
	req = gpiobroker_request_output(b, spec, "shortpath", 7);
	ck_assert_ptr_nonnull(req);
	ck_assert_int_eq(gb_sim_get_value(sim, 2), 1);
	ck_assert_int_eq(gpiobroker_free(req), 0);
	req = gpiobroker_request_output(b, "spare", "shortpath", 0);
	ck_assert_ptr_nonnull(req);
	ck_assert_int_eq(gb_sim_get_value(sim, 2), 0);

	/* The broker's errors, by name: the line is held (Busy names the holder). */
	ck_assert_ptr_null(gpiobroker_request_output(b, "spare", "other", 1));
	ck_assert_int_eq(errno, EBUSY);
	ck_assert_str_eq(gpiobroker_last_error_name(b), GB_ERROR_BUSY);
	ck_assert_ptr_nonnull(strstr(gpiobroker_last_error_message(b), "shortpath"));
	ck_assert_ptr_null(gpiobroker_request_output(b, "no-such-line", "x", 1));
	ck_assert_int_eq(errno, ENOENT);
	ck_assert_ptr_null(gpiobroker_request_output(b, "spare", NULL, 1));
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_int_eq(gpiobroker_free(req), 0);
	gpiobroker_close(b);
}
END_TEST

struct edges {
	int n;
	enum gpiobroker_edge edge[16];
};

static void on_edge(struct gpiobroker_request *req, const struct gpiobroker_event *ev, void *userdata)
{
	struct edges *e = userdata;

	if (gpiobroker_event_get_type(ev) == GPIOBROKER_EVENT_EDGE && e->n < 16)
		e->edge[e->n++] = gpiobroker_event_get_edge(ev);
}

START_TEST(test_request_input)
{
	struct gpiobroker *b = gb_client_open_as(UID_BOB);
	struct gpiobroker_request *req;
	struct edges e = { 0 };

	/* After a broker error, a local one is not mistaken for it. */
	ck_assert_ptr_null(gpiobroker_request_input(b, "no-such-line", "bell", GPIOBROKER_EDGE_BOTH));
	ck_assert_str_eq(gpiobroker_last_error_name(b), GB_ERROR_NOT_FOUND);
	ck_assert_ptr_null(gpiobroker_request_input(b, "doorbell", "bell", (enum gpiobroker_edge)9));
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_ptr_null(gpiobroker_last_error_name(b));
	ck_assert_str_eq(gpiobroker_last_error_message(b), strerror(EINVAL));

	req = gpiobroker_request_input(b, "doorbell", "bell", GPIOBROKER_EDGE_BOTH);
	ck_assert_msg(req != NULL, "%s", gpiobroker_last_error_message(b));
	ck_assert_int_eq(gpiobroker_to_irq(req, on_edge, &e), 0);
	ck_assert_int_eq(gpiobroker_get_value(req, 0), 0);
	ck_assert_int_eq(gb_sim_set_pull(sim, 1, true), 0);
	ck_assert(wait_count(b, &e.n, 1, 5000));
	usleep(20000); /* UML's 100 Hz tick: closer edges would coalesce */
	ck_assert_int_eq(gb_sim_set_pull(sim, 1, false), 0);
	ck_assert(wait_count(b, &e.n, 2, 5000));
	ck_assert_int_eq(e.edge[0], GPIOBROKER_EDGE_RISING);
	ck_assert_int_eq(e.edge[1], GPIOBROKER_EDGE_FALLING);
	/* An input: setting it is the broker's NotOutput. */
	ck_assert_int_eq(gpiobroker_set_value(req, 0, 1), -EPERM);
	ck_assert_int_eq(gpiobroker_free(req), 0);

	/* Rising only: the falling edge does not come. */
	e.n = 0;
	req = gpiobroker_request_input(b, "doorbell", "bell", GPIOBROKER_EDGE_RISING);
	ck_assert_ptr_nonnull(req);
	ck_assert_int_eq(gpiobroker_to_irq(req, on_edge, &e), 0);
	ck_assert_int_eq(gb_sim_set_pull(sim, 1, true), 0);
	ck_assert(wait_count(b, &e.n, 1, 5000));
	usleep(20000);
	ck_assert_int_eq(gb_sim_set_pull(sim, 1, false), 0);
	ck_assert(!wait_count(b, &e.n, 2, 300));
	ck_assert_int_eq(e.n, 1);
	ck_assert_int_eq(e.edge[0], GPIOBROKER_EDGE_RISING);
	ck_assert_int_eq(gpiobroker_free(req), 0);
	gpiobroker_close(b);
}
END_TEST

/* A stopped broker: the call gives up after the connection's timeout. */
START_TEST(test_call_timeout)
{
	struct gpiobroker *b = gb_client_open_as(UID_ALICE);
	char *chipname = NULL;
	long t0, took;
	int r;

	ck_assert_uint_eq(gpiobroker_get_call_timeout(b), 25000000);
	ck_assert_int_eq(gpiobroker_set_call_timeout(b, 300000), 0);
	ck_assert_uint_eq(gpiobroker_get_call_timeout(b), 300000);
	/* Still fine with a live broker. */
	ck_assert_int_eq(gpiobroker_find_line(b, "porch-light", NULL, &chipname, NULL), 0);
	ck_assert_str_eq(chipname, chip);
	free(chipname);

	ck_assert_int_eq(kill(broker, SIGSTOP), 0);
	t0 = gb_now_ms();
	ck_assert_ptr_null(gpiobroker_request_output(b, "porch-light", "late", 1));
	r = errno;
	took = gb_now_ms() - t0;
	ck_assert_int_eq(kill(broker, SIGCONT), 0);
	ck_assert_int_eq(r, ETIMEDOUT);
	ck_assert_int_ge(took, 250);
	ck_assert_int_lt(took, 5000);

	ck_assert_int_eq(gpiobroker_set_call_timeout(b, 0), 0);
	ck_assert_uint_eq(gpiobroker_get_call_timeout(b), 25000000);
	ck_assert_int_eq(gpiobroker_set_call_timeout(NULL, 1), -EINVAL);
	gpiobroker_close(b);
}
END_TEST

START_TEST(test_line_info)
{
	struct gpiobroker *a = gb_client_open_as(UID_ALICE), *c = gb_client_open_as(UID_CAROL);
	struct gpiobroker_line_info *info;
	struct gpiobroker_request *req;

	info = gpiobroker_line_info_get(c, "porch-light");
	ck_assert_msg(info != NULL, "%s", gpiobroker_last_error_message(c));
	ck_assert(!gpiobroker_line_info_is_used(info));
	ck_assert_str_eq(gpiobroker_line_info_get_alias(info), "porch-light");
	ck_assert_str_eq(gpiobroker_line_info_get_name(info), "porch");
	ck_assert_str_eq(gpiobroker_line_info_get_chip(info), chip);
	ck_assert_uint_eq(gpiobroker_line_info_get_offset(info), 0);
	ck_assert_str_eq(gpiobroker_line_info_get_consumer(info), "");
	ck_assert_str_eq(gpiobroker_line_info_get_request_label(info), "");
	gpiobroker_line_info_free(info);

	req = gpiobroker_request_output(a, "porch", "porch-app", 1);
	ck_assert_ptr_nonnull(req);
	info = gpiobroker_line_info_get(c, "porch");
	ck_assert_ptr_nonnull(info);
	ck_assert(gpiobroker_line_info_is_used(info));
	ck_assert_int_eq(gpiobroker_line_info_get_direction(info), GPIOBROKER_DIRECTION_OUTPUT);
	ck_assert_str_eq(gpiobroker_line_info_get_request_label(info), "porch-app");
	ck_assert_ptr_nonnull(strstr(gpiobroker_line_info_get_consumer(info), "porch-app"));
	gpiobroker_line_info_free(info);
	ck_assert_int_eq(gpiobroker_direction_input(req, 0), 0);
	info = gpiobroker_line_info_get(c, "porch");
	ck_assert_int_eq(gpiobroker_line_info_get_direction(info), GPIOBROKER_DIRECTION_INPUT);
	gpiobroker_line_info_free(info);
	ck_assert_int_eq(gpiobroker_free(req), 0);

	ck_assert_ptr_null(gpiobroker_line_info_get(c, "no-such-line"));
	ck_assert_int_eq(errno, ENOENT);
	ck_assert_str_eq(gpiobroker_last_error_name(c), GB_ERROR_NOT_FOUND);
	ck_assert_ptr_null(gpiobroker_line_info_get(c, NULL));
	ck_assert_int_eq(errno, EINVAL);
	gpiobroker_line_info_free(NULL);
	gpiobroker_close(a);
	gpiobroker_close(c);
}
END_TEST

struct changes {
	int n, used_seen, unused_after_used;
	char label[32];
};

static void on_info(struct gpiobroker_line_info_watch *w, const struct gpiobroker_line_info *info,
		    void *userdata)
{
	struct changes *ch = userdata;

	ch->n++;
	if (gpiobroker_line_info_is_used(info)) {
		ch->used_seen++;
		snprintf(ch->label, sizeof(ch->label), "%s", gpiobroker_line_info_get_request_label(info));
	} else if (ch->used_seen) {
		ch->unused_after_used++;
	}
}

START_TEST(test_line_info_watch)
{
	struct gpiobroker *a = gb_client_open_as(UID_ALICE), *c = gb_client_open_as(UID_CAROL);
	struct gpiobroker_line_info_watch *w;
	struct gpiobroker_request *req;
	struct changes ch = { 0 };

	ck_assert_ptr_null(gpiobroker_line_info_watch(c, "no-such-line", on_info, &ch));
	ck_assert_int_eq(errno, ENOENT);
	w = gpiobroker_line_info_watch(c, "porch-light", on_info, &ch);
	ck_assert_ptr_nonnull(w);
	/* Another uid's request and release, seen by carol who holds nothing. */
	req = gpiobroker_request_output(a, "porch-light", "watched", 0);
	ck_assert_ptr_nonnull(req);
	ck_assert(wait_count(c, &ch.used_seen, 1, 5000));
	ck_assert_str_eq(ch.label, "watched");
	ck_assert_int_eq(gpiobroker_free(req), 0);
	ck_assert(wait_count(c, &ch.unused_after_used, 1, 5000));
	gpiobroker_line_info_unwatch(w);
	/* Unwatched: nothing more. */
	ch.n = 0;
	req = gpiobroker_request_output(a, "porch-light", "watched", 0);
	ck_assert_ptr_nonnull(req);
	ck_assert(!wait_count(c, &ch.n, 1, 300));
	ck_assert_int_eq(gpiobroker_free(req), 0);
	gpiobroker_line_info_unwatch(NULL);
	gpiobroker_close(a);
	gpiobroker_close(c);
}
END_TEST

struct done {
	int n, error;
	struct gpiobroker_request *req;
	char err_name[96];
};

static void on_done(struct gpiobroker *b, struct gpiobroker_request *req, int error, void *userdata)
{
	struct done *d = userdata;

	d->n++;
	d->error = error;
	d->req = req;
	snprintf(d->err_name, sizeof(d->err_name), "%s",
		 gpiobroker_last_error_name(b) ? gpiobroker_last_error_name(b) : "");
}

START_TEST(test_request_async)
{
	struct gpiobroker *a = gb_client_open_as(UID_ALICE), *b = gb_client_open_as(UID_BOB);
	const char *line = "porch-light";
	struct gpiobroker_line_settings s;
	struct done d = { 0 }, d2 = { 0 };

	gpiobroker_line_settings_init(&s);
	s.direction = GPIOBROKER_DIRECTION_OUTPUT;
	s.value = 1;
	ck_assert_int_eq(gpiobroker_request_array_async(a, 1, &line, &s, "async", 0, on_done, &d), 0);
	ck_assert_int_eq(d.n, 0); /* nothing before the loop runs */
	ck_assert(wait_count(a, &d.n, 1, 5000));
	ck_assert_int_eq(d.error, 0);
	ck_assert_ptr_nonnull(d.req);
	ck_assert_int_eq(gb_sim_get_value(sim, 0), 1);
	ck_assert_int_eq(gpiobroker_set_value(d.req, 0, 0), 0);
	ck_assert_int_eq(gb_sim_get_value(sim, 0), 0);

	/* Refused: the handler has the errno and the broker's error name. */
	ck_assert_int_eq(gpiobroker_request_array_async(b, 1, &line, &s, "async2", 0, on_done, &d2), 0);
	ck_assert(wait_count(b, &d2.n, 1, 5000));
	ck_assert_int_eq(d2.error, -EBUSY);
	ck_assert_ptr_null(d2.req);
	ck_assert_str_eq(d2.err_name, GB_ERROR_BUSY);
	ck_assert_int_eq(gpiobroker_free(d.req), 0);

	ck_assert_int_eq(gpiobroker_request_array_async(b, 1, &line, &s, "async", 0, NULL, NULL), -EINVAL);
	ck_assert_int_eq(gpiobroker_request_array_async(b, 1, &line, &s, "async", 8, on_done, &d2), -EINVAL);

	/* Closed before the answer: the handler never runs, and the line is not left held. */
	d2.n = 0;
	ck_assert_int_eq(gpiobroker_request_array_async(b, 1, &line, &s, "gone", 0, on_done, &d2), 0);
	gpiobroker_close(b);
	ck_assert_int_eq(d2.n, 0);
	ck_assert(gb_wait_line_used(gpiobroker_get_bus(a), chip, 0, false, 5000 * gb_slow()));
	gpiobroker_close(a);
}
END_TEST

/* client/examples/drive-line, run as gb-alice: the line is high while it runs
 * and released when it exits. */
START_TEST(test_example_drive_line)
{
	const char *prog = GB_CLIENT_BUILDDIR "/examples/drive-line";
	struct gpiobroker *c = gb_client_open_as(UID_CAROL);
	char out[128] = "";
	int p[2], status;
	FILE *f;
	pid_t pid;

	ck_assert_int_eq(pipe(p), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct passwd *pw = getpwuid(UID_ALICE);

		if (!pw || initgroups(pw->pw_name, pw->pw_gid) < 0 ||
		    setresgid(pw->pw_gid, pw->pw_gid, pw->pw_gid) < 0 ||
		    setresuid(UID_ALICE, UID_ALICE, UID_ALICE) < 0)
			_exit(90);
		dup2(p[1], 1);
		close(p[0]);
		close(p[1]);
		execl(prog, prog, "porch-light", "1", "1500", (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	f = fdopen(p[0], "r");
	ck_assert_ptr_nonnull(fgets(out, sizeof(out), f));
	ck_assert_str_eq(out, "porch-light=1\n");
	ck_assert_int_eq(gb_sim_get_value(sim, 0), 1);
	ck_assert(gb_line_prop_bool(gpiobroker_get_bus(c), chip, 0, "Used"));
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	fclose(f);
	ck_assert(gb_wait_line_used(gpiobroker_get_bus(c), chip, 0, false, 5000 * gb_slow()));
	gpiobroker_close(c);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("libgpiobroker short paths");
	TCase *tc = tcase_create("shortpaths");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60 * gb_slow());
	tcase_add_test(tc, test_version);
	tcase_add_test(tc, test_request_output);
	tcase_add_test(tc, test_request_input);
	tcase_add_test(tc, test_call_timeout);
	tcase_add_test(tc, test_line_info);
	tcase_add_test(tc, test_line_info_watch);
	tcase_add_test(tc, test_request_async);
	tcase_add_test(tc, test_example_drive_line);
	suite_add_tcase(s, tc);
	return s;
}

int main(int argc, char **argv)
{
	gb_bench_enter(argc, argv);
	return gb_run_suite(suite());
}
