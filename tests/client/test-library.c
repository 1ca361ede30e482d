/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libgpiobroker against the real broker on the bench: every call goes to gpio-sim
 * lines through gpiod-broker, as real uids. Values are checked in the simulator,
 * edges are made with its pulls, errors must carry the broker's names.
 */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <grp.h>
#include <malloc.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <systemd/sd-event.h>

#include "bench.h"
#include "broker-calls.h"
#include "brokertest.h"
#include "bus-util.h"
#include "client-util.h"
#include "gpiobroker.h"
#include "gpiosim.h"
#include "org.gpiodbroker1.h"
#include "procstat.h"
#include "testmain.h"
#include "timing.h"
#include "users.h"

static const char *const names[8] = { "led", "button", "reset", "motor", "door", NULL, NULL, "spare" };
static struct gb_sim_chip *sim;
static pid_t broker;
static const char *chip;

static void setup(void)
{
	sim = gb_sim_chip_new("gblib", 8, names);
	ck_assert_ptr_nonnull(sim);
	chip = gb_sim_chip_name(sim);
	for (unsigned int i = 0; i < 8; i++)
		ck_assert_int_eq(gb_sim_set_pull(sim, i, false), 0);
	broker = gb_broker_spawn(NULL);
}

static void teardown(void)
{
	ck_assert_int_eq(gb_broker_stop(broker), 0);
	gb_sim_chip_free(sim);
}

static void pace(void)
{
	/* UML ticks at 100 Hz: closer edges would coalesce into one. */
	usleep(20000);
}

/* Events as the handler saw them. */
struct rec {
	int n;
	struct {
		enum gpiobroker_event_type type;
		unsigned int index, offset;
		enum gpiobroker_edge edge;
		uint64_t ts, gseq, lseq, seq, lost;
		char detail[64];
	} ev[128];
	bool free_in_handler;
};

static void on_irq(struct gpiobroker_request *req, const struct gpiobroker_event *ev, void *userdata)
{
	struct rec *r = userdata;

	ck_assert_int_lt(r->n, 128);
	r->ev[r->n].type = gpiobroker_event_get_type(ev);
	r->ev[r->n].index = gpiobroker_event_get_index(ev);
	r->ev[r->n].offset = gpiobroker_event_get_offset(ev);
	r->ev[r->n].edge = gpiobroker_event_get_edge(ev);
	r->ev[r->n].ts = gpiobroker_event_get_timestamp_ns(ev);
	r->ev[r->n].gseq = gpiobroker_event_get_global_seqno(ev);
	r->ev[r->n].lseq = gpiobroker_event_get_line_seqno(ev);
	r->ev[r->n].seq = gpiobroker_event_get_seqno(ev);
	r->ev[r->n].lost = gpiobroker_event_get_lost(ev);
	snprintf(r->ev[r->n].detail, sizeof(r->ev[r->n].detail), "%s",
		 gpiobroker_event_get_detail(ev) ? gpiobroker_event_get_detail(ev) : "");
	r->n++;
	if (r->free_in_handler)
		ck_assert_int_eq(gpiobroker_free(req), 0);
}

START_TEST(test_request_values_directions)
{
	struct gpiobroker *b = gb_client_open_as(UID_ALICE);
	struct gpiobroker_line_settings s = gb_output_settings(1);
	struct gpiobroker_request *req;
	char *label;

	req = gpiobroker_request(b, "led", "lib-led", &s);
	ck_assert_msg(req != NULL, "%s", gpiobroker_last_error_message(b));
	ck_assert_str_eq(gpiobroker_request_get_path(req), GB_ROOT_PATH "/request/1");
	ck_assert_uint_eq(gpiobroker_request_get_num_lines(req), 1);
	ck_assert_str_eq(gpiobroker_request_get_chip(req, 0), chip);
	ck_assert_int_eq(gpiobroker_request_get_offset(req, 0), 0);
	ck_assert_ptr_null(gpiobroker_request_get_chip(req, 1));
	ck_assert(!gpiobroker_request_is_persistent(req));
	ck_assert_ptr_eq(gpiobroker_request_get_broker(req), b);
	ck_assert_ptr_null(gpiobroker_last_error_name(b));

	/* Values reach the simulator, and read back. */
	ck_assert_int_eq(gb_sim_get_value(sim, 0), 1);
	ck_assert_int_eq(gpiobroker_get_value(req, 0), 1);
	ck_assert_int_eq(gpiobroker_set_value(req, 0, 0), 0);
	ck_assert_int_eq(gb_sim_get_value(sim, 0), 0);
	ck_assert_int_eq(gpiobroker_get_value(req, 0), 0);
	label = gb_line_prop_str(gpiobroker_get_bus(b), chip, 0, "RequestLabel");
	ck_assert_str_eq(label, "lib-led");
	free(label);

	/* gpio_direction_input(): now the pull decides; setting is NotOutput. */
	ck_assert_int_eq(gpiobroker_direction_input(req, 0), 0);
	ck_assert_int_eq(gb_sim_set_pull(sim, 0, true), 0);
	ck_assert_int_eq(gpiobroker_get_value(req, 0), 1);
	ck_assert_int_eq(gpiobroker_set_value(req, 0, 0), -EPERM);
	ck_assert_str_eq(gpiobroker_last_error_name(b), GB_ERROR_NOT_OUTPUT);
	ck_assert_ptr_nonnull(gpiobroker_last_error_message(b));

	/* gpio_direction_output(): direction and level in one call. */
	ck_assert_int_eq(gb_sim_set_pull(sim, 0, true), 0);
	ck_assert_int_eq(gpiobroker_direction_output(req, 0, 0), 0);
	ck_assert_int_eq(gb_sim_get_value(sim, 0), 0);
	ck_assert_ptr_null(gpiobroker_last_error_name(b)); /* success clears it */

	/* Index out of range is the broker's InvalidArgs. */
	ck_assert_int_eq(gpiobroker_get_value(req, 3), -EINVAL);
	ck_assert_str_eq(gpiobroker_last_error_name(b), GB_ERROR_INVALID_ARGS);

	/* gpio_free(): the line is back with the kernel, the path is gone. */
	ck_assert_int_eq(gpiobroker_free(req), 0);
	ck_assert(gb_wait_line_used(gpiobroker_get_bus(b), chip, 0, false, 2000));
	ck_assert_ptr_null(gpiobroker_request_open(b, GB_ROOT_PATH "/request/1"));
	ck_assert_int_eq(errno, ENOENT);
	gpiobroker_close(b);
}
END_TEST

START_TEST(test_array_atomic_and_multi_values)
{
	struct gpiobroker *a = gb_client_open_as(UID_ALICE), *c = gb_client_open_as(UID_CAROL);
	const char *const lines[3] = { "reset", "motor", "gblib:4" };
	struct gpiobroker_line_settings s[3] = { gb_output_settings(1), gb_output_settings(0), gb_output_settings(1) };
	const unsigned int idx[2] = { 2, 0 };
	const int set[2] = { 0, 0 };
	struct gpiobroker_request *req, *other, *got;
	int v[3];

	/* Carol holds "door": the three-line request fails whole, nothing held. */
	s[0] = gb_input_edge_settings();
	other = gpiobroker_request(c, "door", "carol", &s[0]);
	ck_assert_ptr_nonnull(other);
	s[0] = gb_output_settings(1);
	req = gpiobroker_request_array(a, 3, lines, s, "trio", 0);
	ck_assert_ptr_null(req);
	ck_assert_int_eq(errno, EBUSY);
	ck_assert_str_eq(gpiobroker_last_error_name(a), GB_ERROR_BUSY);
	ck_assert_msg(strstr(gpiobroker_last_error_message(a), "carol"),
		      "Busy names the holder: %s", gpiobroker_last_error_message(a));
	ck_assert(!gb_line_prop_bool(gpiobroker_get_bus(a), chip, 2, "Used"));
	ck_assert_int_eq(gpiobroker_free(other), 0);
	/* No waiting here on purpose: a request right after a Release must not be
	 * refused as Busy by a broker whose cached line info still says "used"
	 * (regression test for that race). */

	req = gpiobroker_request_array(a, 3, lines, s, "trio", GPIOBROKER_REQUEST_PERSISTENT);
	ck_assert_msg(req != NULL, "%s", gpiobroker_last_error_message(a));
	ck_assert(gpiobroker_request_is_persistent(req));
	ck_assert_uint_eq(gpiobroker_request_get_num_lines(req), 3);
	ck_assert_int_eq(gpiobroker_request_get_offset(req, 2), 4);
	ck_assert_int_eq(gb_sim_get_value(sim, 2), 1);
	ck_assert_int_eq(gb_sim_get_value(sim, 3), 0);
	ck_assert_int_eq(gb_sim_get_value(sim, 4), 1);
	ck_assert_int_eq(gpiobroker_get_values(req, 3, NULL, v), 0);
	ck_assert(v[0] == 1 && v[1] == 0 && v[2] == 1);
	ck_assert_int_eq(gpiobroker_set_values(req, 2, idx, set), 0);
	ck_assert_int_eq(gb_sim_get_value(sim, 4), 0);
	ck_assert_int_eq(gb_sim_get_value(sim, 2), 0);

	/* Reconfigure: active-low on line 1 only; its logical 1 is a physical 0. */
	gpiobroker_line_settings_init(&s[0]);
	s[0].active_low = true;
	ck_assert_int_eq(gpiobroker_reconfigure(req, 1, &idx[1] /* 0 */, s), 0);
	ck_assert_int_eq(gpiobroker_set_value(req, 0, 1), 0);
	ck_assert_int_eq(gb_sim_get_value(sim, 2), 0);
	ck_assert(gb_line_prop_bool(gpiobroker_get_bus(a), chip, 2, "ActiveLow"));
	ck_assert(!gb_line_prop_bool(gpiobroker_get_bus(a), chip, 3, "ActiveLow"));

	/* Persistent: the handle goes, the request stays; another connection of the
	 * same uid comes back to it by path. */
	gpiobroker_request_close(req);
	gpiobroker_close(a);
	a = gb_client_open_as(UID_ALICE);
	got = gpiobroker_request_open(a, GB_ROOT_PATH "/request/2");
	ck_assert_ptr_nonnull(got);
	ck_assert(gpiobroker_request_is_persistent(got));
	ck_assert_uint_eq(gpiobroker_request_get_num_lines(got), 3);
	ck_assert_int_eq(gpiobroker_set_value(got, 2, 1), 0);
	ck_assert_int_eq(gb_sim_get_value(sim, 4), 1);
	ck_assert_int_eq(gpiobroker_free(got), 0);
	gpiobroker_close(a);
	gpiobroker_close(c);
}
END_TEST

START_TEST(test_errors_have_names)
{
	struct gpiobroker *a = gb_client_open_as(UID_ALICE), *b = gb_client_open_as(UID_BOB);
	struct gpiobroker_line_settings s = gb_output_settings(0);
	struct gpiobroker_request *req, *theirs;
	struct gpiobroker_request_info *info;
	char *path = NULL, *c = NULL;
	unsigned int off = 99;
	int n;

	ck_assert_ptr_null(gpiobroker_request(a, "no-such-line", "x", &s));
	ck_assert_int_eq(errno, ENOENT);
	ck_assert_str_eq(gpiobroker_last_error_name(a), GB_ERROR_NOT_FOUND);
	ck_assert_ptr_null(gpiobroker_request(a, "led", "bad\tlabel", &s));
	ck_assert_int_eq(errno, EINVAL);
	ck_assert_str_eq(gpiobroker_last_error_name(a), GB_ERROR_INVALID_ARGS);
	ck_assert_ptr_null(gpiobroker_request_array(a, 0, (const char *const[]){ NULL }, NULL, "x", 0));
	ck_assert_int_eq(errno, EINVAL);
	/* Edge detection on an output: the broker's rules, not ours. */
	s.edge = GPIOBROKER_EDGE_RISING;
	ck_assert_ptr_null(gpiobroker_request(a, "led", "x", &s));
	ck_assert_int_eq(errno, EINVAL);

	ck_assert_int_eq(gpiobroker_find_line(a, "spare", &path, &c, &off), 0);
	ck_assert_str_eq(c, chip);
	ck_assert_uint_eq(off, 7);
	ck_assert_ptr_nonnull(strstr(path, "/line7"));
	free(path);
	free(c);
	ck_assert_int_eq(gpiobroker_find_line(a, "gblib:99", NULL, NULL, NULL), -ENOENT);

	/* Alice's persistent request: Bob can see it but not use or release it. */
	s = gb_output_settings(1);
	req = gpiobroker_request_array(a, 1, (const char *const[]){ "motor" }, &s, "alices",
				       GPIOBROKER_REQUEST_PERSISTENT);
	ck_assert_ptr_nonnull(req);
	n = gpiobroker_list_requests(b, &info);
	ck_assert_int_eq(n, 1);
	ck_assert_str_eq(info[0].path, gpiobroker_request_get_path(req));
	ck_assert_str_eq(info[0].label, "alices");
	ck_assert(info[0].persistent);
	ck_assert_uint_eq(info[0].owner_uid, UID_ALICE);
	gpiobroker_request_info_free(info, n);
	theirs = gpiobroker_request_open(b, gpiobroker_request_get_path(req));
	ck_assert_ptr_nonnull(theirs);
	ck_assert_int_eq(gpiobroker_set_value(theirs, 0, 0), -EACCES);
	ck_assert_str_eq(gpiobroker_last_error_name(b), GB_ERROR_PERMISSION);
	ck_assert_int_eq(gb_sim_get_value(sim, 3), 1);
	ck_assert_int_eq(gpiobroker_to_irq(theirs, on_irq, NULL), -EACCES); /* Subscribe */
	ck_assert_int_eq(gpiobroker_free(theirs), -EACCES);
	ck_assert(gb_line_prop_bool(gpiobroker_get_bus(a), chip, 3, "Used"));
	/* Busy names the request and its label. */
	ck_assert_ptr_null(gpiobroker_request(b, "motor", "bobs", &s));
	ck_assert_int_eq(errno, EBUSY);
	ck_assert_ptr_nonnull(strstr(gpiobroker_last_error_message(b), "alices"));
	ck_assert_int_eq(gpiobroker_free(req), 0);
	/* A released request is gone: ENOENT (UnknownObject). */
	ck_assert_ptr_null(gpiobroker_request_open(a, GB_ROOT_PATH "/request/1"));
	ck_assert_int_eq(errno, ENOENT);
	gpiobroker_close(a);
	gpiobroker_close(b);
}
END_TEST

START_TEST(test_no_broker)
{
	struct gpiobroker *b = gpiobroker_open_address("unix:path=/run/dbus/system_bus_socket");
	struct gpiobroker_line_settings s = gb_output_settings(0);

	ck_assert_ptr_nonnull(b);
	ck_assert_int_eq(gb_broker_stop(broker), 0);
	ck_assert_ptr_null(gpiobroker_request(b, "led", "x", &s));
	ck_assert_int_eq(errno, EHOSTDOWN);
	ck_assert_ptr_nonnull(gpiobroker_last_error_name(b));
	gpiobroker_close(b);
	ck_assert_ptr_null(gpiobroker_open_address("unix:path=/nonexistent"));
	broker = gb_broker_spawn(NULL); /* for teardown */
}
END_TEST

START_TEST(test_edges_in_order)
{
	struct gpiobroker *b = gb_client_open_as(UID_ALICE);
	struct gpiobroker_line_settings s = gb_input_edge_settings();
	struct gpiobroker_request *req;
	struct rec r = { 0 };
	const int toggles = 6;

	req = gpiobroker_request(b, "button", "lib-irq", &s);
	ck_assert_ptr_nonnull(req);
	ck_assert_int_eq(gpiobroker_to_irq(req, on_irq, &r), 0);
	for (int i = 0; i < toggles; i++) {
		ck_assert_int_eq(gb_sim_set_pull(sim, 1, i % 2 == 0), 0);
		pace();
	}
	ck_assert_msg(gb_client_wait_count(&b, 1, &r.n, toggles, 5000), "got %d of %d events", r.n, toggles);
	for (int i = 0; i < r.n; i++) {
		ck_assert_int_eq(r.ev[i].type, GPIOBROKER_EVENT_EDGE);
		ck_assert_uint_eq(r.ev[i].index, 0);
		ck_assert_uint_eq(r.ev[i].offset, 1);
		ck_assert_int_eq(r.ev[i].edge, i % 2 == 0 ? GPIOBROKER_EDGE_RISING : GPIOBROKER_EDGE_FALLING);
		ck_assert_uint_eq(r.ev[i].seq, i + 1);
		ck_assert_uint_eq(r.ev[i].gseq, i + 1);
		ck_assert_uint_eq(r.ev[i].lseq, i + 1);
		ck_assert_uint_eq(r.ev[i].lost, 0);
		if (i)
			ck_assert_uint_gt(r.ev[i].ts, r.ev[i - 1].ts);
	}
	/* Nothing more came (a bounded look, not a sleep: the loop returns early on events). */
	ck_assert(!gb_client_wait_count(&b, 1, &r.n, toggles + 1, 100));
	ck_assert_uint_eq(gpiobroker_request_get_events_lost(req), 0);

	/* A handler may free its own request. */
	r.free_in_handler = true;
	ck_assert_int_eq(gb_sim_set_pull(sim, 1, true), 0);
	ck_assert(gb_client_wait_count(&b, 1, &r.n, toggles + 1, 5000));
	ck_assert(gb_wait_line_used(gpiobroker_get_bus(b), chip, 1, false, 2000));
	gpiobroker_close(b);
}
END_TEST

START_TEST(test_lost_counted_from_seqno_gaps)
{
	struct gpiobroker *b = gb_client_open_as(UID_ALICE);
	sd_bus *other = gb_connect(UID_ALICE);
	struct gpiobroker_line_settings s = gb_input_edge_settings();
	struct gpiobroker_request *req;
	struct rec r = { 0 };
	int elsewhere = 0;

	req = gpiobroker_request_array(b, 1, (const char *const[]){ "door" }, &s, "gap",
				       GPIOBROKER_REQUEST_PERSISTENT);
	ck_assert_ptr_nonnull(req);
	/* Another connection subscribes: the next two events go there, not here. */
	ck_assert_int_ge(sd_bus_match_signal(other, NULL, GB_BUS_NAME, NULL, GB_IFACE_REQUEST, "Event",
					     gb_bus_count_message, &elsewhere), 0);
	ck_assert_int_ge(sd_bus_call_method(other, GB_BUS_NAME, gpiobroker_request_get_path(req),
					    GB_IFACE_REQUEST, "Subscribe", NULL, NULL, ""), 0);
	ck_assert_int_eq(gb_sim_set_pull(sim, 4, true), 0);
	pace();
	ck_assert_int_eq(gb_sim_set_pull(sim, 4, false), 0);
	ck_assert(gb_bus_wait_count(other, &elsewhere, 2, 5000));
	/* Ours again: the first event we see is seqno 3, two missed. */
	ck_assert_int_eq(gpiobroker_to_irq(req, on_irq, &r), 0);
	ck_assert_int_eq(gb_sim_set_pull(sim, 4, true), 0);
	ck_assert(gb_client_wait_count(&b, 1, &r.n, 1, 5000));
	ck_assert_uint_eq(r.ev[0].seq, 3);
	ck_assert_uint_eq(r.ev[0].lost, 2);
	ck_assert_uint_eq(gpiobroker_request_get_events_lost(req), 2);
	pace();
	ck_assert_int_eq(gb_sim_set_pull(sim, 4, false), 0);
	ck_assert(gb_client_wait_count(&b, 1, &r.n, 2, 5000));
	ck_assert_uint_eq(r.ev[1].seq, 4);
	ck_assert_uint_eq(r.ev[1].lost, 0);
	ck_assert_int_eq(gpiobroker_free(req), 0);
	sd_bus_flush_close_unref(other);
	gpiobroker_close(b);
}
END_TEST

START_TEST(test_lost_counted_from_kernel_overflow)
{
	struct gpiobroker *b = gb_client_open_as(UID_BOB);
	struct gpiobroker_line_settings s[2] = { gb_input_edge_settings(), gb_input_edge_settings() };
	struct gpiobroker_request *req;
	struct rec r = { 0 };
	uint64_t lost = 0;

	req = gpiobroker_request_array(b, 2, (const char *const[]){ "button", "door" }, s, "burst", 0);
	ck_assert_ptr_nonnull(req);
	ck_assert_int_eq(gpiobroker_to_irq(req, on_irq, &r), 0);
	/* The broker stops reading; the kernel's buffer overflows and drops events. The
	 * broker reports them (EventsLost) and the library puts them on the next event. */
	ck_assert_int_eq(kill(broker, SIGSTOP), 0);
	for (int i = 0; i < 60; i++) {
		ck_assert_int_eq(gb_sim_set_pull(sim, 1, i % 2 == 0), 0);
		pace();
	}
	ck_assert_int_eq(kill(broker, SIGCONT), 0);
	ck_assert(gb_client_wait_count(&b, 1, &r.n, 1, 5000));
	/* A marker edge on the other line comes after everything the kernel kept. */
	ck_assert_int_eq(gb_sim_set_pull(sim, 4, true), 0);
	for (;;) {
		int seen = r.n;

		ck_assert_msg(gb_client_wait_count(&b, 1, &r.n, seen + 1, 5000), "marker edge never came");
		if (r.ev[r.n - 1].index == 1)
			break;
	}
	for (int i = 0; i < r.n; i++)
		lost += r.ev[i].lost;
	ck_assert_uint_gt(lost, 0);
	/* Every kernel sequence number is delivered or counted lost, exactly. */
	ck_assert_uint_eq((uint64_t)(r.n - 1) + lost, r.ev[r.n - 1].gseq - 1);
	ck_assert_uint_eq(gpiobroker_request_get_events_lost(req), lost);
	ck_assert_int_eq(gpiobroker_free(req), 0);
	gpiobroker_close(b);
}
END_TEST

START_TEST(test_forged_signals_ignored)
{
	struct gpiobroker *b = gb_client_open_as(UID_ALICE);
	sd_bus *mallory = gb_connect(UID_BOB);
	struct gpiobroker_line_settings s = gb_input_edge_settings();
	struct gpiobroker_request *req;
	sd_bus_message *m = NULL;
	const char *me;
	struct rec r = { 0 };

	req = gpiobroker_request(b, "button", "victim", &s);
	ck_assert_ptr_nonnull(req);
	ck_assert_int_eq(gpiobroker_to_irq(req, on_irq, &r), 0);
	ck_assert_int_ge(sd_bus_get_unique_name(gpiobroker_get_bus(b), &me), 0);
	/* Bob sends Alice an "Event" for her request: the bus lets him, the library must not. */
	ck_assert_int_ge(sd_bus_message_new_signal(mallory, &m, gpiobroker_request_get_path(req),
						   GB_IFACE_REQUEST, "Event"), 0);
	ck_assert_int_ge(sd_bus_message_set_destination(m, me), 0);
	ck_assert_int_ge(sd_bus_message_append(m, "uustttt", 0, 1, "rising", (uint64_t)1, (uint64_t)1,
					       (uint64_t)1, (uint64_t)1), 0);
	ck_assert_int_ge(sd_bus_send(mallory, m, NULL), 0);
	sd_bus_message_unref(m);
	ck_assert_int_ge(sd_bus_flush(mallory), 0);
	/* A real edge afterwards: it is the first and only event seen. */
	ck_assert_int_eq(gb_sim_set_pull(sim, 1, true), 0);
	ck_assert(gb_client_wait_count(&b, 1, &r.n, 1, 5000));
	ck_assert(!gb_client_wait_count(&b, 1, &r.n, 2, 100));
	ck_assert_int_eq(r.n, 1);
	ck_assert_uint_eq(r.ev[0].seq, 1);
	sd_bus_flush_close_unref(mallory);
	gpiobroker_close(b);
}
END_TEST

START_TEST(test_chip_gone)
{
	struct gb_sim_chip *hot = gb_sim_chip_new("gbhot", 2, NULL);
	struct gpiobroker *b = gb_client_open_as(UID_ALICE);
	struct gpiobroker_line_settings s = gb_input_edge_settings();
	struct gpiobroker_request *req;
	struct rec r = { 0 };

	ck_assert_ptr_nonnull(hot);
	ck_assert(gb_wait_line_used(gpiobroker_get_bus(b), gb_sim_chip_name(hot), 1, false, 3000));
	req = gpiobroker_request(b, "gbhot:1", "hot", &s);
	ck_assert_msg(req != NULL, "%s", gpiobroker_last_error_message(b));
	ck_assert_int_eq(gpiobroker_to_irq(req, on_irq, &r), 0);
	ck_assert_int_eq(gb_sim_chip_unplug(hot), 0);
	ck_assert(gb_client_wait_count(&b, 1, &r.n, 1, 5000));
	ck_assert_int_eq(r.ev[0].type, GPIOBROKER_EVENT_CHIP_GONE);
	ck_assert_str_eq(r.ev[0].detail, gb_sim_chip_name(hot));
	ck_assert_int_eq(gpiobroker_get_value(req, 0), -ENODEV);
	ck_assert_str_eq(gpiobroker_last_error_name(b), GB_ERROR_CHIP_GONE);
	ck_assert_int_eq(gpiobroker_free(req), 0);
	gpiobroker_close(b);
	gb_sim_chip_free(hot);
}
END_TEST

START_TEST(test_broker_gone)
{
	struct gpiobroker *b = gb_client_open_as(UID_ALICE);
	struct gpiobroker_line_settings s = gb_input_edge_settings();
	struct gpiobroker_request *req = gpiobroker_request(b, "button", "orphan", &s);
	struct rec r = { 0 };

	ck_assert_ptr_nonnull(req);
	ck_assert_int_eq(gpiobroker_to_irq(req, on_irq, &r), 0);
	ck_assert_int_eq(gb_broker_stop(broker), 0);
	ck_assert(gb_client_wait_count(&b, 1, &r.n, 1, 5000));
	ck_assert_int_eq(r.ev[0].type, GPIOBROKER_EVENT_BROKER_GONE);
	gpiobroker_request_close(req);
	gpiobroker_close(b);
	broker = gb_broker_spawn(NULL);
}
END_TEST

/*
 * The broker's private connection closes before the bus says the broker left (the
 * bus daemon stopped meanwhile): the library drops that connection from inside
 * its own processing and must not touch it again. Under valgrind (make distcheck,
 * gb_bench_enter_memcheck()) a use after that free fails the test; without it,
 * freed memory is scribbled over (M_PERTURB), so that such a use reads garbage
 * rather than a connection that still looks closed.
 */
START_TEST(test_private_connection_closed_first)
{
	struct gpiobroker *b = gb_client_open_as(UID_ALICE);
	struct gpiobroker_line_settings s = gb_input_edge_settings();
	struct gpiobroker_request *req = gpiobroker_request(b, "button", "orphan", &s);
	sd_bus *root = gb_connect_bus(0);
	pid_t bus = gb_bus_daemon_pid(gb_sysbus(root));
	struct rec r = { 0 };
	int guard[2], rw = 0, rp = 0;
	pid_t guard_pid;
	long long end;

	ck_assert_ptr_nonnull(req);
	ck_assert_int_eq(gpiobroker_to_irq(req, on_irq, &r), 0);
	/* Whatever becomes of this test, the bus goes on: a guard wakes it when this
	 * process closes the pipe, or dies. */
	ck_assert_int_eq(pipe(guard), 0);
	guard_pid = fork();
	ck_assert_int_ge(guard_pid, 0);
	if (guard_pid == 0) {
		char c;

		close(guard[1]);
		(void)read(guard[0], &c, 1);
		kill(bus, SIGCONT);
		_exit(0);
	}
	close(guard[0]);
	ck_assert_int_eq(mallopt(M_PERTURB, 0xa5), 1);
	ck_assert_int_eq(kill(bus, SIGSTOP), 0);
	ck_assert_int_eq(gb_broker_stop(broker), 0);
	/* Everything the broker's leaving shows without the bus: processed whole. */
	end = gb_now_ns() + 300000000LL * gb_slow();
	while (gb_now_ns() < end && rw >= 0 && rp >= 0) {
		rw = gpiobroker_wait(b, 20000);
		rp = gpiobroker_process(b);
	}
	close(guard[1]);
	ck_assert_int_eq(waitpid(guard_pid, NULL, 0), guard_pid);
	ck_assert_int_ge(rw, 0);
	ck_assert_int_ge(rp, 0);
	ck_assert(gb_client_wait_count(&b, 1, &r.n, 1, 5000));
	ck_assert_int_eq(r.ev[0].type, GPIOBROKER_EVENT_BROKER_GONE);
	ck_assert_int_eq(mallopt(M_PERTURB, 0), 1);
	gpiobroker_request_close(req);
	gpiobroker_close(b);
	gb_close(root);
	broker = gb_broker_spawn(NULL);
}
END_TEST

/* sd-event integration: the loop runs the handler; a timer bounds the wait. */
struct loop_state {
	sd_event *e;
	struct rec r;
};

static void on_irq_loop(struct gpiobroker_request *req, const struct gpiobroker_event *ev, void *u)
{
	struct loop_state *st = u;

	on_irq(req, ev, &st->r);
	if (st->r.n == 2)
		sd_event_exit(st->e, 0);
}

static int on_tick(sd_event_source *src, uint64_t usec, void *u)
{
	static int step;

	/* Stimuli from inside the loop, paced by the loop's own timer. */
	if (step < 2) {
		ck_assert_int_eq(gb_sim_set_pull(sim, 1, step == 0), 0);
		step++;
		return sd_event_source_set_time_relative(src, 20000);
	}
	return 0;
}

static int on_give_up(sd_event_source *src, uint64_t usec, void *u)
{
	return sd_event_exit(((struct loop_state *)u)->e, 1);
}

START_TEST(test_sd_event)
{
	struct gpiobroker *b = gb_client_open_as(UID_ALICE);
	struct gpiobroker_line_settings s = gb_input_edge_settings();
	struct gpiobroker_request *req = gpiobroker_request(b, "button", "loop", &s);
	struct loop_state st = { 0 };
	sd_event_source *tick = NULL;

	ck_assert_ptr_nonnull(req);
	ck_assert_int_ge(sd_event_new(&st.e), 0);
	ck_assert_int_ge(gpiobroker_attach_event(b, st.e, 0), 0);
	ck_assert_int_eq(gpiobroker_to_irq(req, on_irq_loop, &st), 0);
	ck_assert_int_ge(sd_event_add_time_relative(st.e, &tick, CLOCK_MONOTONIC, 20000, 0, on_tick, NULL), 0);
	ck_assert_int_ge(sd_event_source_set_enabled(tick, SD_EVENT_ON), 0);
	ck_assert_int_ge(sd_event_add_time_relative(st.e, NULL, CLOCK_MONOTONIC,
						    5000000ULL * gb_slow(), 0, on_give_up, &st), 0);
	ck_assert_int_eq(sd_event_loop(st.e), 0);
	ck_assert_int_eq(st.r.n, 2);
	ck_assert_int_eq(st.r.ev[0].edge, GPIOBROKER_EDGE_RISING);
	ck_assert_int_eq(st.r.ev[1].edge, GPIOBROKER_EDGE_FALLING);
	ck_assert_int_ge(gpiobroker_detach_event(b), 0);
	ck_assert_int_eq(gpiobroker_free(req), 0);
	sd_event_source_unref(tick);
	gpiobroker_close(b);
	sd_event_unref(st.e);
}
END_TEST

/* In a child: carol, for good, drives the motor through the library. */
/* The pid of this process's child named @p comm; 0 if none. */
static pid_t child_named(const char *comm)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	pid_t found = 0;

	ck_assert_ptr_nonnull(d);
	while (!found && (de = readdir(d))) {
		char path[64], stat[512], name[32];
		pid_t pid = (pid_t)atoi(de->d_name), ppid = 0;
		FILE *f;

		if (pid <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
		f = fopen(path, "re");
		if (!f)
			continue;
		/* "pid (comm) state ppid": comm may hold spaces, so from its last ')'. */
		if (fgets(stat, sizeof(stat), f) && strrchr(stat, ')'))
			sscanf(strrchr(stat, ')') + 1, " %*c %d", &ppid);
		fclose(f);
		if (ppid == getpid() && gb_proc_comm(pid, name, sizeof(name)) &&
		    strcmp(name, comm) == 0)
			found = pid;
	}
	closedir(d);
	return found;
}

/* Process @p b until @p *n reaches @p want or @p ms pass; errors of a connection
 * that is gone are what the test looks at, not a reason to stop. */
static bool process_until(struct gpiobroker *b, const int *n, int want, int ms)
{
	long long until = gb_now_ns() + (long long)ms * gb_slow() * 1000000LL;

	while (*n < want && gb_now_ns() < until) {
		if (gpiobroker_wait(b, 100000) < 0)
			usleep(10000);
		gpiobroker_process(b);
	}
	return *n >= want;
}

/*
 * A link to the bus of its own, lost under a client that holds lines: the library
 * runs systemd-stdio-bridge itself (an address as gpiobroker_open_host() makes,
 * without ssh), and the bridge is killed. Every handle hears BROKER_GONE, calls say
 * ENOTCONN, the broker releases the lines; gpiobroker_reconnect() makes them again,
 * with the value set since, and edges come again.
 */
START_TEST(test_link_lost_and_reconnect)
{
	struct gpiobroker *b = gpiobroker_open_address("unixexec:path=systemd-stdio-bridge");
	struct gpiobroker_request *led, *button;
	struct rec r = { 0 };
	pid_t bridge;
	int ok;

	ck_assert_ptr_nonnull(b);
	ck_assert(gpiobroker_is_connected(b));
	led = gpiobroker_request_output(b, "led", "linked", 0);
	ck_assert_ptr_nonnull(led);
	ck_assert_int_eq(gpiobroker_set_value(led, 0, 1), 0);
	ck_assert_int_eq(gb_sim_get_value(sim, 0), 1);
	button = gpiobroker_request_input(b, "button", "linked", GPIOBROKER_EDGE_BOTH);
	ck_assert_ptr_nonnull(button);
	ck_assert_int_eq(gpiobroker_to_irq(button, on_irq, &r), 0);

	bridge = child_named("systemd-stdio-b");
	ck_assert_int_gt(bridge, 0);
	ck_assert_int_eq(kill(bridge, SIGKILL), 0);
	ck_assert_msg(process_until(b, &r.n, 1, 5000), "the lost link was not reported");
	ck_assert_int_eq(r.ev[0].type, GPIOBROKER_EVENT_BROKER_GONE);
	ck_assert_str_eq(r.ev[0].detail, "the connection to the bus was lost");
	ck_assert(!gpiobroker_is_connected(b));
	ck_assert_int_eq(gpiobroker_set_value(led, 0, 0), -ENOTCONN);
	ck_assert_int_eq(gpiobroker_process(b), -ENOTCONN);
	/* The broker saw its client go: the output is released, back to the pull. */
	ok = 0;
	for (int i = 0; i < 500 * gb_slow() && !ok; i++) {
		ok = gb_sim_get_value(sim, 0) == 0;
		if (!ok)
			usleep(10000);
	}
	ck_assert_msg(ok, "the broker did not release the output");

	ck_assert_int_eq(gpiobroker_reconnect(b, GPIOBROKER_RECONNECT_REQUESTS), 0);
	ck_assert(gpiobroker_is_connected(b));
	ck_assert_int_eq(r.n, 2);
	ck_assert_int_eq(r.ev[1].type, GPIOBROKER_EVENT_BROKER_RESTARTED);
	ck_assert_str_eq(r.ev[1].detail, "made again after a reconnection");
	ck_assert_int_eq(gb_sim_get_value(sim, 0), 1);
	ck_assert_int_eq(gpiobroker_get_value(led, 0), 1);
	ck_assert_int_eq(gb_sim_set_pull(sim, 1, true), 0);
	ck_assert(process_until(b, &r.n, 3, 5000));
	ck_assert_int_eq(r.ev[2].type, GPIOBROKER_EVENT_EDGE);
	ck_assert_int_eq(r.ev[2].edge, GPIOBROKER_EDGE_RISING);
	/* Numbered afresh by the new request: nothing counted lost. */
	ck_assert_int_eq(r.ev[2].seq, 1);
	ck_assert_int_eq(r.ev[2].lost, 0);
	/* Still connected: nothing to do. */
	ck_assert_int_eq(gpiobroker_reconnect(b, GPIOBROKER_RECONNECT_REQUESTS), 0);
	ck_assert_int_eq(gpiobroker_free(led), 0);
	ck_assert_int_eq(gpiobroker_free(button), 0);
	ck_assert_int_eq(gb_sim_get_value(sim, 0), 0);
	gpiobroker_close(b);
	/* Not for a connection the caller made. */
	b = gb_client_open_as(UID_ALICE);
	ck_assert_int_eq(gpiobroker_reconnect(b, 0), -EOPNOTSUPP);
	gpiobroker_close(b);
}
END_TEST

static sd_bus *carol_drives_motor(void *userdata)
{
	struct gpiobroker_line_settings s = gb_output_settings(1);
	struct gpiobroker *b;

	gb_become(UID_CAROL);
	b = gpiobroker_open(); /* the system bus, as carol */
	if (!b || !gpiobroker_request(b, "motor", "doomed", &s))
		return NULL;
	return gpiobroker_get_bus(b);
}

START_TEST(test_killed_client_leaves_nothing_held)
{
	sd_bus *root = gb_connect(0);
	char name[256] = "";
	pid_t pid = gb_fork_client(carol_drives_motor, NULL, name, sizeof(name));

	ck_assert(gb_line_prop_bool(root, chip, 3, "Used"));
	ck_assert_int_eq(gb_sim_get_value(sim, 3), 1);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	gb_wait_client_gone(root, name);
	ck_assert(!gb_line_prop_bool(root, chip, 3, "Used"));
	sd_bus_flush_close_unref(root);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("libgpiobroker");
	TCase *tc = gb_tcase_new(s, "library", setup, teardown, 60 * gb_slow());

	tcase_add_test(tc, test_request_values_directions);
	tcase_add_test(tc, test_array_atomic_and_multi_values);
	tcase_add_test(tc, test_errors_have_names);
	tcase_add_test(tc, test_no_broker);
	tcase_add_test(tc, test_edges_in_order);
	tcase_add_test(tc, test_lost_counted_from_seqno_gaps);
	tcase_add_test(tc, test_lost_counted_from_kernel_overflow);
	tcase_add_test(tc, test_forged_signals_ignored);
	tcase_add_test(tc, test_chip_gone);
	tcase_add_test(tc, test_broker_gone);
	tcase_add_test(tc, test_private_connection_closed_first);
	tcase_add_test(tc, test_sd_event);
	tcase_add_test(tc, test_link_lost_and_reconnect);
	tcase_add_test(tc, test_killed_client_leaves_nothing_held);
	return s;
}

int main(int argc, char **argv)
{
	gb_bench_enter_memcheck(argc, argv);
	return gb_run_suite(suite());
}
