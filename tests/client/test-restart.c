/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libgpiobroker across a broker restart: the notify harness plays systemd's fd
 * store (tests/lib/notify-harness.c), the broker is SIGKILLed and started again,
 * and takes the request over. The library must follow it: BROKER_GONE, then
 * BROKER_RESTARTED, then the edges of the same request again.
 */
#include <check.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "brokertest.h"
#include "client-util.h"
#include "gpiobroker.h"
#include "gpiosim.h"
#include "notify-harness.h"
#include "testmain.h"
#include "timing.h"
#include "users.h"

static const struct gb_broker_opts opts = { .args = GB_ARGS("--state-dir=/run/gb-test-client-state") };
static const char *const names[2] = { "bell", "spare" };

struct seen {
	int n, gone, restarted;
	enum gpiobroker_edge last_edge;
};

static void on_irq(struct gpiobroker_request *req, const struct gpiobroker_event *ev, void *userdata)
{
	struct seen *s = userdata;

	switch (gpiobroker_event_get_type(ev)) {
	case GPIOBROKER_EVENT_EDGE:
		s->n++;
		s->last_edge = gpiobroker_event_get_edge(ev);
		break;
	case GPIOBROKER_EVENT_BROKER_GONE:
		s->gone++;
		break;
	case GPIOBROKER_EVENT_BROKER_RESTARTED:
		s->restarted++;
		break;
	default:
		break;
	}
}

START_TEST(test_library_follows_a_restarted_broker)
{
	struct gb_sim_chip *sim = gb_sim_chip_new("gbclrst", 2, names);
	struct gb_harness *h = gb_harness_new();
	struct gpiobroker_line_settings s;
	struct gpiobroker_request *req;
	struct gpiobroker *b;
	struct seen seen = { 0 };
	pid_t broker;

	ck_assert_ptr_nonnull(sim);
	ck_assert_int_eq(system("rm -rf /run/gb-test-client-state"), 0);
	ck_assert_int_eq(gb_sim_set_pull(sim, 0, false), 0);
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

	/* The same request, its events accepted from the new broker. */
	usleep(20000); /* UML ticks at 100 Hz: closer edges coalesce */
	ck_assert_int_eq(gb_sim_set_pull(sim, 0, false), 0);
	ck_assert(gb_client_wait_count(&b, 1, &seen.n, 2, 10000));
	ck_assert_int_eq(seen.last_edge, GPIOBROKER_EDGE_FALLING);
	ck_assert_int_eq(gpiobroker_get_value(req, 0), 0);
	ck_assert_int_eq(gpiobroker_free(req), 0);
	ck_assert(gb_harness_wait_n_fds(h, 0, 5000));
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
	return gb_run_suite(s);
}
