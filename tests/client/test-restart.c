/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libgpiobroker across a broker restart: the notify harness plays systemd's fd
 * store (tests/lib/notify-harness.c), the broker is SIGKILLed and started again,
 * and takes the request and the watch over. The library must follow it: BROKER_GONE,
 * then BROKER_RESTARTED, then the edges of the same request again; for the watch
 * also its level again (INITIAL_STATE). An edge a dying broker read and never sent
 * is counted lost on the next edge. A direct request comes back direct, its level as
 * its owner drove it.
 */
#include <check.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "brokertest.h"
#include "bus-util.h"
#include "client-util.h"
#include "gpiobroker.h"
#include "gpiosim.h"
#include "notify-harness.h"
#include "org.gpiodbroker1.h"
#include "testmain.h"
#include "timing.h"
#include "users.h"

static const struct gb_broker_opts opts = {
	.policy = GB_TEST_POLICY_OPEN "watch-users = *\n",
	.args = GB_ARGS("--state-dir=/run/gb-test-client-state"),
};
static const char *const names[2] = { "bell", "spare" };

struct seen {
	int n, gone, restarted, initial;
	uint64_t lost;
	enum gpiobroker_edge last_edge;
};

static void on_irq(struct gpiobroker_request *req, const struct gpiobroker_event *ev, void *userdata)
{
	struct seen *s = userdata;

	switch (gpiobroker_event_get_type(ev)) {
	case GPIOBROKER_EVENT_EDGE:
		s->n++;
		s->last_edge = gpiobroker_event_get_edge(ev);
		s->lost += gpiobroker_event_get_lost(ev);
		break;
	case GPIOBROKER_EVENT_BROKER_GONE:
		s->gone++;
		break;
	case GPIOBROKER_EVENT_BROKER_RESTARTED:
		s->restarted++;
		break;
	case GPIOBROKER_EVENT_INITIAL_STATE:
		s->initial++;
		break;
	default:
		break;
	}
}

static void on_watch(struct gpiobroker_watch *w, const struct gpiobroker_event *ev, void *userdata)
{
	on_irq(NULL, ev, userdata);
}

START_TEST(test_library_follows_a_restarted_broker)
{
	struct gb_sim_chip *sim = gb_sim_chip_new("gbclrst", 2, names);
	struct gb_harness *h = gb_harness_new();
	struct gpiobroker_line_settings s;
	struct gpiobroker_request *req;
	struct gpiobroker *b;
	struct seen seen = { 0 }, wseen = { 0 };
	struct gpiobroker_watch *w;
	pid_t broker;

	ck_assert_ptr_nonnull(sim);
	ck_assert_int_eq(system("rm -rf /run/gb-test-client-state"), 0);
	ck_assert_int_eq(gb_sim_set_pull(sim, 0, false), 0);
	ck_assert_int_eq(gb_sim_set_pull(sim, 1, false), 0);
	broker = gb_harness_start(h, &opts, true);
	b = gb_client_open_as(UID_ALICE);

	gpiobroker_line_settings_init(&s);
	s.direction = GPIOBROKER_DIRECTION_INPUT;
	s.edge = GPIOBROKER_EDGE_BOTH;
	req = gpiobroker_request(b, "gbclrst:0", "bell-ctl", &s);
	ck_assert_msg(req != NULL, "%s", gpiobroker_last_error_message(b));
	ck_assert_int_eq(gpiobroker_to_irq(req, on_irq, &seen), 0);
	ck_assert(gb_harness_wait_n_fds(h, 1, 5000));
	ck_assert_int_eq(gb_sim_set_pull(sim, 0, true), 0);
	ck_assert(gb_client_wait_count(&b, 1, &seen.n, 1, 10000));
	/* A watch of the other line, which nobody holds. */
	w = gpiobroker_watch(b, "gbclrst:1", on_watch, &wseen);
	ck_assert_msg(w != NULL, "%s", gpiobroker_last_error_message(b));
	ck_assert(gb_client_wait_count(&b, 1, &wseen.initial, 1, 10000));

	gb_broker_kill(broker);
	broker = gb_harness_start(h, &opts, true);
	ck_assert(gb_client_wait_count(&b, 1, &seen.restarted, 1, 10000));
	ck_assert_int_eq(seen.gone, 1);
	/* On the transport it had: a new private connection to the new broker, unless
	 * the bus was asked for. */
	{
		const char *t = getenv("GPIOBROKER_TRANSPORT");

		ck_assert_int_eq(gpiobroker_get_transport(b), t && strcmp(t, "bus") == 0 ?
				 GPIOBROKER_TRANSPORT_BUS : GPIOBROKER_TRANSPORT_P2P);
	}
	/* The watch came back too: told so, then the level again, then its edges. */
	ck_assert(gb_client_wait_count(&b, 1, &wseen.initial, 2, 10000));
	ck_assert_int_eq(wseen.gone, 1);
	ck_assert_int_eq(wseen.restarted, 1);
	ck_assert_int_eq(gb_sim_set_pull(sim, 1, true), 0);
	ck_assert(gb_client_wait_count(&b, 1, &wseen.n, 1, 10000));
	ck_assert_int_eq(wseen.last_edge, GPIOBROKER_EDGE_RISING);
	ck_assert_uint_eq(gpiobroker_watch_get_events_lost(w), 0);
	ck_assert_int_eq(gpiobroker_watch_close(w), 0);

	/* The same request, its events accepted from the new broker. */
	usleep(20000); /* UML ticks at 100 Hz: closer edges coalesce */
	ck_assert_int_eq(gb_sim_set_pull(sim, 0, false), 0);
	ck_assert(gb_client_wait_count(&b, 1, &seen.n, 2, 10000));
	ck_assert_int_eq(seen.last_edge, GPIOBROKER_EDGE_FALLING);
	ck_assert_int_eq(gpiobroker_get_value(req, 0), 0);
	ck_assert_uint_eq(seen.lost, 0);

	/* A broker that dies between reading an edge and sending it: the next edge
	 * after the restart carries it as lost. */
	gb_broker_kill(broker);
	setenv("GPIOD_BROKER_DEBUG_ABORT_AFTER_EVENTS", "1", 1);
	broker = gb_harness_start(h, &opts, true);
	unsetenv("GPIOD_BROKER_DEBUG_ABORT_AFTER_EVENTS");
	ck_assert(gb_client_wait_count(&b, 1, &seen.restarted, 2, 10000));
	usleep(20000);
	ck_assert_int_eq(gb_sim_set_pull(sim, 0, true), 0);
	ck_assert_int_eq(gb_broker_wait_died(broker), 128 + SIGABRT);
	broker = gb_harness_start(h, &opts, true);
	ck_assert(gb_client_wait_count(&b, 1, &seen.restarted, 3, 10000));
	ck_assert_int_eq(seen.n, 2);
	usleep(20000);
	ck_assert_int_eq(gb_sim_set_pull(sim, 0, false), 0);
	ck_assert(gb_client_wait_count(&b, 1, &seen.n, 3, 10000));
	ck_assert_uint_eq(seen.lost, 1);
	ck_assert_uint_eq(gpiobroker_request_get_events_lost(req), 1);
	ck_assert_int_eq(gpiobroker_free(req), 0);
	ck_assert(gb_harness_wait_n_fds(h, 0, 5000));
	gpiobroker_close(b);

	ck_assert_int_eq(gb_broker_stop(broker), 0);
	gb_harness_free(h);
	gb_sim_chip_free(sim);
}
END_TEST

/* A program that only sets and gets, never running the library's events: after a
 * broker restart its next calls find the private connection dead, and go to the new
 * broker, which has taken the request over. */
START_TEST(test_calls_without_events_follow_a_restart)
{
	struct gb_sim_chip *sim = gb_sim_chip_new("gbclrst", 2, names);
	struct gb_harness *h = gb_harness_new();
	struct gpiobroker_line_settings s = gb_output_settings(0);
	struct gpiobroker_request *req;
	struct gpiobroker *b;
	pid_t broker;

	ck_assert_ptr_nonnull(sim);
	ck_assert_int_eq(system("rm -rf /run/gb-test-client-state"), 0);
	broker = gb_harness_start(h, &opts, true);
	b = gb_client_open_as(UID_ALICE);
	req = gpiobroker_request(b, "gbclrst:1", "spare-ctl", &s);
	ck_assert_msg(req != NULL, "%s", gpiobroker_last_error_message(b));
	ck_assert(gb_harness_wait_n_fds(h, 1, 5000));

	gb_broker_kill(broker);
	broker = gb_harness_start(h, &opts, true);
	ck_assert_msg(gpiobroker_set_value(req, 0, 1) == 0, "%s", gpiobroker_last_error_message(b));
	ck_assert_int_eq(gb_sim_get_value(sim, 1), 1);
	ck_assert_int_eq(gpiobroker_get_value(req, 0), 1);
	ck_assert_int_eq(gpiobroker_free(req), 0);
	gpiobroker_close(b);

	ck_assert_int_eq(gb_broker_stop(broker), 0);
	gb_harness_free(h);
	gb_sim_chip_free(sim);
}
END_TEST

/* A direct request across a restart: its fds go to the store and come back to the
 * new broker, which takes it over still direct (its record says so), reads no
 * edges of it, and leaves the level the owner drove through its fd as it is. */
START_TEST(test_direct_request_survives_a_restart)
{
	static const char *const policy =
		"[group direct]\nchip = gbcldir\noffsets = 0-1\nusers = *\n"
		"directions = input, output\ndirection-may-change = yes\n"
		"edges = rising, falling, both\nbias = as-is, disabled, pull-up, pull-down\n"
		"drive = push-pull, open-drain, open-source\nsafe-state = input\ndirect = yes\n";
	const struct gb_broker_opts dopts = {
		.args = GB_ARGS("--state-dir=/run/gb-test-client-state"), .policy = policy,
	};
	struct gb_sim_chip *sim = gb_sim_chip_new("gbcldir", 2, names);
	struct gb_harness *h = gb_harness_new();
	struct gpiobroker_line_settings s[2];
	const char *lines[2] = { "gbcldir:0", "gbcldir:1" };
	struct gpiobroker_request *req;
	struct gpiobroker *b;
	struct seen seen = { 0 };
	pid_t broker;
	bool output = false;

	ck_assert_ptr_nonnull(sim);
	ck_assert_int_eq(system("rm -rf /run/gb-test-client-state"), 0);
	ck_assert_int_eq(gb_sim_set_pull(sim, 1, false), 0);
	broker = gb_harness_start(h, &dopts, true);
	b = gb_client_open_as(UID_ALICE);

	gpiobroker_line_settings_init(&s[0]);
	s[0].direction = GPIOBROKER_DIRECTION_OUTPUT;
	gpiobroker_line_settings_init(&s[1]);
	s[1].direction = GPIOBROKER_DIRECTION_INPUT;
	s[1].edge = GPIOBROKER_EDGE_BOTH;
	req = gpiobroker_request_array(b, 2, lines, s, "dir-ctl", GPIOBROKER_REQUEST_DIRECT);
	ck_assert_msg(req != NULL, "%s", gpiobroker_last_error_message(b));
	ck_assert(gpiobroker_request_is_direct(req));
	ck_assert_int_eq(gpiobroker_to_irq(req, on_irq, &seen), 0);
	ck_assert(gb_harness_wait_n_fds(h, 1, 5000));
	/* Driven through the fd only: the broker's record still says 0. */
	ck_assert_int_eq(gpiobroker_set_value(req, 0, 1), 0);
	ck_assert_int_eq(gb_sim_get_value(sim, 0), 1);

	gb_broker_kill(broker);
	/* While it is down the fds keep working: they are the kernel's. */
	ck_assert_int_eq(gb_sim_set_pull(sim, 1, true), 0);
	ck_assert(gb_client_wait_count(&b, 1, &seen.n, 1, 10000));
	broker = gb_harness_start(h, &dopts, true);
	ck_assert(gb_client_wait_count(&b, 1, &seen.restarted, 1, 10000));
	ck_assert_int_eq(gb_sim_get_value(sim, 0), 1);
	ck_assert(gb_sim_line_used(sim, 0, &output, NULL, 0));
	ck_assert(output);
	ck_assert(gb_get_prop_bool(gpiobroker_get_bus(b), gpiobroker_request_get_path(req),
				   GB_IFACE_REQUEST, "Direct"));

	/* The new broker reads no edges of it: every one still reaches the owner. */
	usleep(20000); /* UML ticks at 100 Hz: closer edges coalesce */
	ck_assert_int_eq(gb_sim_set_pull(sim, 1, false), 0);
	ck_assert(gb_client_wait_count(&b, 1, &seen.n, 2, 10000));
	ck_assert_int_eq(seen.last_edge, GPIOBROKER_EDGE_FALLING);
	/* A reconfigure through the new broker keeps the level the fd drove. */
	ck_assert_int_eq(gpiobroker_direction_output(req, 1, 0), 0);
	ck_assert_int_eq(gb_sim_get_value(sim, 0), 1);
	ck_assert_int_eq(gpiobroker_free(req), 0);
	ck_assert(gb_harness_wait_n_fds(h, 0, 5000));
	ck_assert(!gb_sim_line_used(sim, 0, NULL, NULL, 0));
	gpiobroker_close(b);

	ck_assert_int_eq(gb_broker_stop(broker), 0);
	gb_harness_free(h);
	gb_sim_chip_free(sim);
}
END_TEST

int main(int argc, char **argv)
{
	Suite *s = suite_create("client-restart");
	TCase *tc;

	gb_bench_enter(argc, argv);
	tc = gb_tcase_new(s, "restart", NULL, NULL, 120 * gb_slow());
	tcase_add_test(tc, test_library_follows_a_restarted_broker);
	tcase_add_test(tc, test_direct_request_survives_a_restart);
	tcase_add_test(tc, test_calls_without_events_follow_a_restart);
	return gb_run_suite(s);
}
