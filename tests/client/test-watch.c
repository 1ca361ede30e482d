/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * gpiobroker_watch() and the initial state through the library, on the bench: the
 * level first, then the holder's edges with the holder's sequence numbers;
 * automatic acknowledgements keep a watcher that processes its events lossless
 * under a tiny broker window; denials carry the broker's error.
 */
#include <check.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench.h"
#include "brokertest.h"
#include "client-util.h"
#include "gpiobroker.h"
#include "gpiosim.h"
#include "org.gpiodbroker1.h"
#include "testmain.h"
#include "timing.h"
#include "users.h"

static const char *const names[4] = { "led", "button", "door", NULL };
static struct gb_sim_chip *sim;
static pid_t broker;

#define POLICY \
	"[line button]\nchip = gblw\noffset = 1\nusers = gb-alice\ndirections = input\n" \
	"edges = none, both\nwatch-users = gb-bob, gb-carol\n" \
	"[line door]\nchip = gblw\noffset = 2\nusers = gb-alice\ndirections = input\n" \
	"edges = none, both\nwatch-users = gb-bob\n"

static void setup(void)
{
	sim = gb_sim_chip_new("gblw", 4, names);
	ck_assert_ptr_nonnull(sim);
	for (int i = 0; i < 4; i++)
		ck_assert_int_eq(gb_sim_set_pull(sim, i, false), 0);
	/* A window of 4 and a queue of 8: without acknowledgements a subscriber would
	 * lose everything after its 12th event. */
	broker = gb_broker_spawn(&(struct gb_broker_opts){
		.policy = POLICY, .args = GB_ARGS("--event-window=4", "--event-queue=8") });
}

static void teardown(void)
{
	ck_assert_int_eq(gb_broker_stop(broker), 0);
	gb_sim_chip_free(sim);
}

struct rec {
	int n;
	struct {
		enum gpiobroker_event_type type;
		bool initial;
		int value;
		uint64_t ts, gseq, lseq, seq, lost;
	} ev[128];
};

static void record(struct rec *r, const struct gpiobroker_event *ev)
{
	ck_assert_int_lt(r->n, 128);
	r->ev[r->n].type = gpiobroker_event_get_type(ev);
	r->ev[r->n].initial = gpiobroker_event_is_initial(ev);
	r->ev[r->n].value = gpiobroker_event_get_value(ev);
	r->ev[r->n].ts = gpiobroker_event_get_timestamp_ns(ev);
	r->ev[r->n].gseq = gpiobroker_event_get_global_seqno(ev);
	r->ev[r->n].lseq = gpiobroker_event_get_line_seqno(ev);
	r->ev[r->n].seq = gpiobroker_event_get_seqno(ev);
	r->ev[r->n].lost = gpiobroker_event_get_lost(ev);
	r->n++;
}

static void on_watch(struct gpiobroker_watch *w, const struct gpiobroker_event *ev, void *ud)
{
	record(ud, ev);
}

static void on_irq(struct gpiobroker_request *req, const struct gpiobroker_event *ev, void *ud)
{
	record(ud, ev);
}

START_TEST(test_watch_follows_holder)
{
	struct gpiobroker *alice = gb_client_open_as(UID_ALICE), *bob = gb_client_open_as(UID_BOB);
	struct gpiobroker *both[2] = { alice, bob };
	struct gpiobroker_line_settings s;
	struct gpiobroker_request *req;
	struct gpiobroker_watch *w;
	struct rec rw = { 0 }, rh = { 0 };
	const int edges = 30; /* well past window + queue */

	ck_assert_int_eq(gb_sim_set_pull(sim, 1, true), 0);
	gpiobroker_line_settings_init(&s);
	s.direction = GPIOBROKER_DIRECTION_INPUT;
	s.edge = GPIOBROKER_EDGE_BOTH;
	req = gpiobroker_request(alice, "button", "lib-holder", &s);
	ck_assert_ptr_nonnull(req);
	ck_assert_int_eq(gpiobroker_to_irq_flags(req, on_irq, &rh, GPIOBROKER_IRQ_INITIAL_STATE), 0);
	ck_assert_int_eq(gpiobroker_to_irq_flags(req, on_irq, &rh, 1u << 7), -EINVAL);
	ck_assert_int_eq(gpiobroker_to_irq_flags(req, on_irq, &rh, GPIOBROKER_IRQ_INITIAL_STATE), 0);
	w = gpiobroker_watch(bob, "button", on_watch, &rw);
	ck_assert_ptr_nonnull(w);
	ck_assert_str_eq(gpiobroker_watch_get_chip(w), gb_sim_chip_name(sim));
	ck_assert_uint_eq(gpiobroker_watch_get_offset(w), 1);
	ck_assert(strncmp(gpiobroker_watch_get_path(w), "/org/gpiodbroker1/watch/", 24) == 0);
	ck_assert(gb_client_wait_count(both, 2, &rh.n, 1, 5000));
	ck_assert(gb_client_wait_count(both, 2, &rw.n, 1, 5000));
	ck_assert(rh.ev[0].initial);
	ck_assert_int_eq(rh.ev[0].type, GPIOBROKER_EVENT_INITIAL_STATE);
	ck_assert_int_eq(rh.ev[0].value, 1);
	ck_assert(rw.ev[0].initial);
	ck_assert_int_eq(rw.ev[0].value, 1);

	for (int k = 0; k < edges; k++) {
		ck_assert_int_eq(gb_sim_set_pull(sim, 1, k % 2), 0);
		ck_assert(gb_client_wait_count(both, 2, &rw.n, k + 2, 5000));
		ck_assert(gb_client_wait_count(both, 2, &rh.n, k + 2, 5000));
	}
	for (int k = 1; k <= edges; k++) {
		ck_assert(!rw.ev[k].initial);
		ck_assert_int_eq(rw.ev[k].type, GPIOBROKER_EVENT_EDGE);
		ck_assert_int_eq(rw.ev[k].value, k % 2 == 0);
		ck_assert_uint_eq(rw.ev[k].seq, (uint64_t)k);
		ck_assert_uint_eq(rw.ev[k].lost, 0);
		ck_assert_uint_eq(rw.ev[k].ts, rh.ev[k].ts);
		ck_assert_uint_eq(rw.ev[k].gseq, rh.ev[k].gseq);
		ck_assert_uint_eq(rw.ev[k].lseq, rh.ev[k].lseq);
		ck_assert_uint_eq(rh.ev[k].seq, (uint64_t)k);
		ck_assert_uint_eq(rh.ev[k].lost, 0);
	}
	ck_assert_uint_eq(gpiobroker_watch_get_events_lost(w), 0);
	ck_assert_uint_eq(gpiobroker_request_get_events_lost(req), 0);
	ck_assert_ptr_eq(gpiobroker_watch_get_broker(w), bob);

	ck_assert_int_eq(gpiobroker_watch_close(w), 0);
	ck_assert_int_eq(gpiobroker_free(req), 0);
	gpiobroker_close(alice);
	gpiobroker_close(bob);
}
END_TEST

START_TEST(test_initial_state_before_handler)
{
	struct gpiobroker *alice = gb_client_open_as(UID_ALICE);
	struct gpiobroker_line_settings s;
	struct gpiobroker_request *req;
	struct rec r = { 0 };

	ck_assert_int_eq(gb_sim_set_pull(sim, 2, true), 0);
	gpiobroker_line_settings_init(&s);
	s.direction = GPIOBROKER_DIRECTION_INPUT;
	s.edge = GPIOBROKER_EDGE_BOTH;
	req = gpiobroker_request(alice, "door", "lib-late", &s);
	ck_assert_ptr_nonnull(req);
	/* The program processes before it sets a handler: the level is kept. The
	 * broker sent it before the reply to this call, so once the call returns it is
	 * here, and processing dispatches it. */
	ck_assert_int_eq(gpiobroker_get_value(req, 0), 1);
	while (gpiobroker_process(alice) > 0)
		;
	/* ... and given to the handler that asks for it, first. */
	ck_assert_int_eq(gpiobroker_to_irq_flags(req, on_irq, &r, GPIOBROKER_IRQ_INITIAL_STATE), 0);
	ck_assert_int_eq(r.n, 1);
	ck_assert(r.ev[0].initial);
	ck_assert_int_eq(r.ev[0].value, 1);
	ck_assert_int_eq(gb_sim_set_pull(sim, 2, false), 0);
	ck_assert(gb_client_wait_count(&alice, 1, &r.n, 2, 5000));
	ck_assert_int_eq(r.ev[1].value, 0);
	ck_assert_uint_eq(r.ev[1].seq, 1);
	gpiobroker_close(alice);
}
END_TEST

START_TEST(test_watch_denied)
{
	struct gpiobroker *alice = gb_client_open_as(UID_ALICE), *carol = gb_client_open_as(UID_CAROL);
	struct rec r = { 0 };

	/* alice may request door, but watching is another permission. */
	ck_assert_ptr_null(gpiobroker_watch(alice, "door", on_watch, &r));
	ck_assert_int_eq(errno, EACCES);
	ck_assert_str_eq(gpiobroker_last_error_name(alice), GB_ERROR_PERMISSION);
	ck_assert_ptr_nonnull(strstr(gpiobroker_last_error_message(alice), "watch-users"));
	ck_assert_ptr_null(gpiobroker_watch(carol, "door", on_watch, &r));
	ck_assert_int_eq(errno, EACCES);
	ck_assert_ptr_null(gpiobroker_watch(carol, "nothing-here", on_watch, &r));
	ck_assert_int_eq(errno, ENOENT);
	ck_assert_ptr_null(gpiobroker_watch(carol, "button", NULL, &r));
	ck_assert_int_eq(errno, EINVAL);
	gpiobroker_close(alice);
	gpiobroker_close(carol);
}
END_TEST

int main(int argc, char **argv)
{
	Suite *s = suite_create("library-watch");
	TCase *tc;

	gb_bench_enter(argc, argv);
	tc = gb_tcase_new(s, "watch", setup, teardown, 60 * gb_slow());
	tcase_add_test(tc, test_watch_follows_holder);
	tcase_add_test(tc, test_initial_state_before_handler);
	tcase_add_test(tc, test_watch_denied);
	return gb_run_suite(s);
}
