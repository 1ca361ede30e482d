/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Edge events through the broker: the gpio_to_irq() model. Events reach the owner
 * only (unicast), in order, with the kernel's and the broker's sequence numbers;
 * loss in the kernel is reported with the exact count.
 */
#include <check.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"
#include "broker-calls.h"
#include "brokertest.h"
#include "bus-util.h"
#include "gpiosim.h"
#include "org.gpiodbroker1.h"
#include "testmain.h"
#include "timing.h"
#include "users.h"

static const char *const names[4] = { "led", "button", "door", NULL };
static struct gb_sim_chip *sim;
static pid_t broker;

static void setup(void)
{
	sim = gb_sim_chip_new("gbev", 4, names);
	ck_assert_ptr_nonnull(sim);
	ck_assert_int_eq(gb_sim_set_pull(sim, 1, false), 0);
	ck_assert_int_eq(gb_sim_set_pull(sim, 2, false), 0);
	broker = gb_broker_spawn(NULL);
}

static void teardown(void)
{
	ck_assert_int_eq(gb_broker_stop(broker), 0);
	gb_sim_chip_free(sim);
}

struct ev {
	uint32_t index, offset;
	char edge[8];
	uint64_t ts, gseq, lseq, seq;
};

/* The signature a signal is declared with in the broker's introspection data. */
static char *declared_signature(sd_bus *bus, const char *path, const char *signal)
{
	sd_bus_message *reply = NULL;
	const char *xml, *p, *end;
	char want[64], sig[64] = "";

	ck_assert_int_ge(sd_bus_call_method(bus, GB_BUS_NAME, path, "org.freedesktop.DBus.Introspectable",
					    "Introspect", NULL, &reply, ""), 0);
	ck_assert_int_ge(sd_bus_message_read(reply, "s", &xml), 0);
	snprintf(want, sizeof(want), "<signal name=\"%s\">", signal);
	p = strstr(xml, want);
	ck_assert_ptr_nonnull(p);
	end = strstr(p, "</signal>");
	while ((p = strstr(p, "type=\"")) && p < end) {
		p += 6;
		strncat(sig, p, strcspn(p, "\""));
	}
	sd_bus_message_unref(reply);
	return strdup(sig);
}

struct rec {
	char sig[64];
	struct ev ev[256];
	int n;
	int lost_signals;
	uint64_t lost, lost_total;
	int other; /* any other signal from the broker */
};

static int on_signal(sd_bus_message *m, void *userdata, sd_bus_error *e)
{
	struct rec *r = userdata;
	const char *edge;

	if (!sd_bus_message_get_sender(m) || !sd_bus_message_is_signal(m, GB_IFACE_REQUEST, NULL))
		return 0;
	if (sd_bus_message_is_signal(m, GB_IFACE_REQUEST, "Event") && r->n < 256) {
		struct ev *ev = &r->ev[r->n];

		ck_assert_int_ge(sd_bus_message_read(m, "uustttt", &ev->index, &ev->offset, &edge,
						     &ev->ts, &ev->gseq, &ev->lseq, &ev->seq), 0);
		snprintf(ev->edge, sizeof(ev->edge), "%s", edge);
		snprintf(r->sig, sizeof(r->sig), "%s", sd_bus_message_get_signature(m, true));
		r->n++;
	} else if (sd_bus_message_is_signal(m, GB_IFACE_REQUEST, "EventsLost")) {
		uint64_t n, total;

		ck_assert_int_ge(sd_bus_message_read(m, "tt", &n, &total), 0);
		r->lost += n;
		r->lost_total = total;
		r->lost_signals++;
	} else {
		r->other++;
	}
	return 0;
}

static void subscribe(sd_bus *bus, const char *match, struct rec *r)
{
	ck_assert_int_ge(sd_bus_add_match(bus, NULL, match, on_signal, r), 0);
}

START_TEST(test_edges_to_owner_only)
{
	sd_bus *owner = gb_connect(UID_ALICE), *spy = gb_connect(UID_CAROL);
	sd_bus_error err = SD_BUS_ERROR_NULL;
	struct rec mine = { 0 }, spied = { 0 };
	char *path = NULL;

	subscribe(owner, "type='signal',sender='" GB_BUS_NAME "'", &mine);
	/* The eavesdropper asks for everything the broker sends, and tries eavesdropping
	 * outright (the bus policy refuses that to non-root peers). */
	subscribe(spy, "type='signal',sender='" GB_BUS_NAME "'", &spied);
	subscribe(spy, "type='signal',interface='" GB_IFACE_REQUEST "'", &spied);
	sd_bus_add_match(spy, NULL, "type='signal',eavesdrop='true'", on_signal, &spied);

	ck_assert_int_ge(gb_request(owner, "watch", "button", "input", -1, "both", false, &path, &err), 0);

	ck_assert_int_eq(gb_sim_set_pull(sim, 1, true), 0);
	ck_assert_msg(gb_bus_wait_count(owner, &mine.n, 1, 5000), "no rising edge");
	ck_assert_int_eq(gb_sim_set_pull(sim, 1, false), 0);
	ck_assert_msg(gb_bus_wait_count(owner, &mine.n, 2, 5000), "no falling edge");

	ck_assert_str_eq(mine.ev[0].edge, "rising");
	ck_assert_str_eq(mine.ev[1].edge, "falling");
	for (int i = 0; i < 2; i++) {
		ck_assert_uint_eq(mine.ev[i].index, 0);
		ck_assert_uint_eq(mine.ev[i].offset, 1);
		ck_assert_uint_eq(mine.ev[i].gseq, i + 1);
		ck_assert_uint_eq(mine.ev[i].lseq, i + 1);
		ck_assert_uint_eq(mine.ev[i].seq, i + 1);
		ck_assert_uint_gt(mine.ev[i].ts, 0);
	}
	ck_assert_uint_gt(mine.ev[1].ts, mine.ev[0].ts);
	ck_assert_int_eq(mine.lost_signals, 0);
	{
		/* What is sent is what is declared (a 64-bit timestamp sent as 32 bits
		 * would pass every other check until the clock passed 4.3 s). The bus
		 * introspects; a private connection does not (docs/dbus-api.md). */
		char *sig = declared_signature(gb_sysbus(owner), path, "Event");

		ck_assert_str_eq(mine.sig, sig);
		free(sig);
	}

	/* Anything sent to the spy before the broker answers its Ping would be queued
	 * ahead of the reply: after it, the spy has seen all it ever will of these. */
	ck_assert_int_ge(gb_ping(spy, NULL), 0);
	while (sd_bus_process(spy, NULL) > 0)
		;
	ck_assert_int_eq(spied.n, 0);
	ck_assert_int_eq(spied.lost_signals, 0);
	free(path);
	gb_close(owner);
	gb_close(spy);
}
END_TEST

START_TEST(test_kernel_overflow_counted)
{
	sd_bus *bus = gb_connect(UID_BOB);
	sd_bus_error err = SD_BUS_ERROR_NULL;
	struct rec r = { 0 };
	char *path = NULL;
	const int toggles = 60;
	struct ev *marker;
	int ret;

	subscribe(bus, "type='signal',sender='" GB_BUS_NAME "'", &r);
	ret = sd_bus_call_method(bus, GB_BUS_NAME, GB_ROOT_PATH, GB_IFACE_MANAGER, "Request", &err, NULL,
				 "sa(sa{sv})a{sv}", "burst", 2,
				 "button", 2, "direction", "s", "input", "edge", "s", "both",
				 "door", 2, "direction", "s", "input", "edge", "s", "both", 0);
	ck_assert_msg(ret >= 0, "%s", err.message);

	/* The broker stops reading; the kernel's buffer for this request (16 events per
	 * line, 32 here) overflows and drops the oldest events. */
	ck_assert_int_eq(kill(broker, SIGSTOP), 0);
	for (int i = 0; i < toggles; i++) {
		ck_assert_int_eq(gb_sim_set_pull(sim, 1, i % 2 == 0), 0);
		usleep(20000); /* pacing: closer edges coalesce at UML's 100 Hz tick */
	}
	ck_assert_int_eq(kill(broker, SIGCONT), 0);
	/* The first event after the gap proves the broker is reading again; a marker
	 * edge on the other line comes after everything the kernel kept. */
	ck_assert(gb_bus_wait_count(bus, &r.n, 1, 5000));
	ck_assert_int_eq(gb_sim_set_pull(sim, 2, true), 0);
	for (;;) {
		int seen = r.n;

		ck_assert_msg(gb_bus_wait_count(bus, &r.n, seen + 1, 5000), "marker edge never came");
		if (r.ev[r.n - 1].index == 1)
			break;
	}
	marker = &r.ev[r.n - 1];

	/* Exact accounting: every kernel sequence number is either delivered or counted. */
	ck_assert_int_ge(r.lost_signals, 1);
	ck_assert_uint_gt(r.lost, 0);
	ck_assert_uint_eq((uint64_t)(r.n - 1) + r.lost, marker->gseq - 1);
	ck_assert_uint_eq(r.lost_total, r.lost);
	for (int i = 1; i < r.n; i++)
		ck_assert_uint_gt(r.ev[i].gseq, r.ev[i - 1].gseq);
	/* The broker's own numbering has no gap: nothing was lost after the kernel. */
	for (int i = 0; i < r.n; i++)
		ck_assert_uint_eq(r.ev[i].seq, i + 1);
	ck_assert_uint_eq(gb_get_prop_u64(bus, path ? path : GB_REQUEST_PREFIX "/1", GB_IFACE_REQUEST, "EventsLost"),
			  r.lost);
	gb_close(bus);
}
END_TEST

START_TEST(test_persistent_subscribe)
{
	sd_bus *first = gb_connect(UID_ALICE), *root = gb_connect(0), *later;
	sd_bus_error err = SD_BUS_ERROR_NULL;
	struct rec r = { 0 };
	const char *name;
	char *path = NULL, *uname;
	uint64_t lost = 0;

	ck_assert_int_ge(gb_request(first, "door-log", "door", "input", -1, "both", true, &path, &err), 0);
	gb_get_unique_name(first, &name);
	uname = strdup(name);
	gb_close(first);
	gb_wait_client_gone(root, uname);

	/* Nobody to tell: the edge is counted, not dropped silently. */
	ck_assert_int_eq(gb_sim_set_pull(sim, 2, true), 0);
	for (int i = 0; i < 500 * gb_slow() && lost == 0; i++) {
		lost = gb_get_prop_u64(root, path, GB_IFACE_REQUEST, "EventsLost");
		usleep(10000);
	}
	ck_assert_uint_eq(lost, 1);

	later = gb_connect(UID_ALICE);
	subscribe(later, "type='signal',sender='" GB_BUS_NAME "'", &r);
	ck_assert_int_ge(sd_bus_call_method(later, GB_BUS_NAME, path, GB_IFACE_REQUEST, "Subscribe", &err,
					    NULL, ""), 0);
	ck_assert_int_eq(gb_sim_set_pull(sim, 2, false), 0);
	ck_assert(gb_bus_wait_count(later, &r.n, 1, 5000));
	ck_assert_str_eq(r.ev[0].edge, "falling");
	ck_assert_uint_eq(r.ev[0].seq, 2); /* the subscriber sees that one came before */
	ck_assert_int_ge(gb_release(later, path, &err), 0);
	free(uname);
	free(path);
	gb_close(root);
	gb_close(later);
}
END_TEST

int main(int argc, char **argv)
{
	Suite *s = suite_create("events");
	TCase *tc;

	gb_bench_enter(argc, argv);
	tc = gb_tcase_new(s, "events", setup, teardown, 60 * gb_slow());
	tcase_add_test(tc, test_edges_to_owner_only);
	tcase_add_test(tc, test_kernel_overflow_counted);
	tcase_add_test(tc, test_persistent_subscribe);
	return gb_run_suite(s);
}
