/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Host unit test of libgpiobroker's subscriptions (client/subscription.c), the part
 * requests and watches share: the broker's signals as a connection receives them
 * (made here, from the broker's unique name or another), edges from a direct
 * request's line fds as direct.c hands them up, one loss count for both, initial
 * states kept and replayed, and a handler that frees its own handle.
 */
#include <check.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "lib-unit.h"
#include "testmain.h"

#define PATH "/org/gpiodbroker1/request/1"
#define BROKER ":1.7"

/* A handle of a kind made for the test: it records what its handler is given. */
struct handle {
	struct gb_subscription sub;
	struct gpiobroker_event ev[16];
	char detail[16][64];         /* ev[i].detail points here: the message's is gone */
	unsigned int n;
	unsigned int free_at;        /* the handler frees the handle at this event (1-based) */
	bool nest;                   /* the handler gets a direct edge of its own handle */
};

static unsigned int handles_freed;

static void handle_free(struct gb_subscription *sub)
{
	if (gb_subscription_end(sub)) {
		free(gb_container_of(sub, struct handle, sub));
		handles_freed++;
	}
}

static void handle_deliver(struct gb_subscription *sub, const struct gpiobroker_event *ev)
{
	struct handle *h = gb_container_of(sub, struct handle, sub);

	ck_assert_uint_lt(h->n, 16);
	h->ev[h->n] = *ev;
	if (ev->detail) {
		snprintf(h->detail[h->n], sizeof(h->detail[0]), "%s", ev->detail);
		h->ev[h->n].detail = h->detail[h->n];
	}
	h->n++;
	if (h->nest) {
		struct gpiobroker_event again = { .type = GPIOBROKER_EVENT_EDGE };

		h->nest = false;
		ck_assert(gb_subscription_direct_edge(sub, &again, 0, false));
	}
	if (h->n == h->free_at)
		handle_free(sub);
}

static const struct gb_subscription_kind test_kind = {
	.iface = GB_IFACE_REQUEST,
	.restart_prop = "Label",
	.deliver = handle_deliver,
	.free = handle_free,
};

static struct gpiobroker *b;

static void setup(void)
{
	unit_bus_open();
	b = calloc(1, sizeof(*b));
	ck_assert_ptr_nonnull(b);
	b->bus = unit_bus;
	b->epfd = -1;
	handles_freed = 0;
}

static void teardown(void)
{
	while (b->subs)
		b->subs->kind->free(b->subs);
	free(b);
	unit_bus_close();
}

/* A handle of ours (seqno from 1) on @p n_lines lines at offsets 0.. */
static struct handle *handle_new(size_t n_lines, bool handled)
{
	struct handle *h = calloc(1, sizeof(*h));

	ck_assert_ptr_nonnull(h);
	ck_assert_int_eq(gb_subscription_init(&h->sub, b, &test_kind, PATH), 0);
	h->sub.broker_unique = strdup(BROKER);
	h->sub.chips = calloc(n_lines, sizeof(char *));
	h->sub.offsets = calloc(n_lines, sizeof(unsigned int));
	ck_assert(h->sub.broker_unique && h->sub.chips && h->sub.offsets);
	h->sub.n_lines = n_lines;
	for (size_t i = 0; i < n_lines; i++) {
		h->sub.chips[i] = strdup("gpiochip0");
		h->sub.offsets[i] = 10 + i;
	}
	h->sub.have_seqno = true;
	h->sub.handled = handled;
	return h;
}

/* A signal from @p sender for PATH, as the connection's match hands it over. */
static void signal_from(const char *sender, const char *member, const char *types, ...)
{
	sd_bus_message *m = NULL;
	va_list ap;

	ck_assert_int_ge(sd_bus_message_new_signal(unit_bus, &m, PATH, GB_IFACE_REQUEST, member), 0);
	ck_assert_int_ge(sd_bus_message_set_sender(m, sender), 0);
	va_start(ap, types);
	ck_assert_int_ge(sd_bus_message_appendv(m, types, ap), 0);
	va_end(ap);
	ck_assert_int_eq(gb_subscription_on_signal(gb_unit_seal(m), b, NULL), 0);
	sd_bus_message_unref(m);
}

static void edge(uint64_t seqno, const char *dir)
{
	signal_from(BROKER, "Event", "uustttt", 0, 10, dir, (uint64_t)1000 * seqno, seqno + 100,
		    seqno + 200, seqno);
}

static bool direct_edge_late(struct handle *h, uint64_t kernel_lost, bool late)
{
	struct gpiobroker_event ev = {
		.type = GPIOBROKER_EVENT_EDGE, .index = 0, .offset = 10,
		.edge = GPIOBROKER_EDGE_RISING, .value = 1,
	};

	return gb_subscription_direct_edge(&h->sub, &ev, kernel_lost, late);
}

static bool direct_edge(struct handle *h, uint64_t kernel_lost)
{
	return direct_edge_late(h, kernel_lost, false);
}

START_TEST(test_direct_edge_late)
{
	struct handle *h = handle_new(1, true);

	/* The kernel numbered 3 before 2 went into its queue: the gap counted 2 lost,
	 * and 2 itself takes that back. */
	ck_assert(direct_edge(h, 0));
	h->sub.handled = false;
	ck_assert(direct_edge(h, 1));
	ck_assert_uint_eq(h->sub.pending_lost, 2);
	ck_assert(direct_edge_late(h, 0, true));
	ck_assert_uint_eq(h->sub.pending_lost, 2);
	h->sub.handled = true;
	ck_assert(direct_edge_late(h, 0, false));
	ck_assert_uint_eq(h->ev[1].lost, 2);
	/* Told already: the total is put right. */
	ck_assert(direct_edge(h, 1));
	ck_assert_uint_eq(h->ev[2].lost, 1);
	ck_assert_uint_eq(h->sub.total_lost, 3);
	ck_assert(direct_edge_late(h, 0, true));
	ck_assert_uint_eq(h->sub.total_lost, 2);
	ck_assert_uint_eq(h->ev[3].lost, 0);
}
END_TEST

START_TEST(test_bus_edges)
{
	struct handle *h = handle_new(1, true);

	edge(1, "rising");
	edge(2, "falling");
	ck_assert_uint_eq(h->n, 2);
	ck_assert_int_eq(h->ev[0].type, GPIOBROKER_EVENT_EDGE);
	ck_assert_int_eq(h->ev[0].edge, GPIOBROKER_EDGE_RISING);
	ck_assert_int_eq(h->ev[0].value, 1);
	ck_assert_int_eq(h->ev[1].edge, GPIOBROKER_EDGE_FALLING);
	ck_assert_int_eq(h->ev[1].value, 0);
	ck_assert_uint_eq(h->ev[1].offset, 10);
	ck_assert_uint_eq(h->ev[1].timestamp_ns, 2000);
	ck_assert_uint_eq(h->ev[1].global_seqno, 102);
	ck_assert_uint_eq(h->ev[1].line_seqno, 202);
	ck_assert_uint_eq(h->ev[1].seqno, 2);
	ck_assert_uint_eq(h->ev[1].lost, 0);
	/* 3 and 4 left the broker and never came: the next one says so, once. */
	edge(5, "rising");
	ck_assert_uint_eq(h->ev[2].lost, 2);
	edge(6, "falling");
	ck_assert_uint_eq(h->ev[3].lost, 0);
	/* The broker's own count of events the kernel or the window dropped. */
	signal_from(BROKER, "EventsLost", "tt", (uint64_t)3, (uint64_t)3);
	edge(7, "rising");
	ck_assert_uint_eq(h->ev[4].lost, 3);
	ck_assert_uint_eq(h->sub.total_lost, 5);
}
END_TEST

START_TEST(test_sender_checked)
{
	struct handle *h = handle_new(1, true);

	/* Anyone may send a unicast signal with the broker's interface: only the
	 * broker's unique name counts. */
	signal_from(":1.99", "Event", "uustttt", 0, 10, "rising", (uint64_t)1, (uint64_t)1,
		    (uint64_t)1, (uint64_t)50);
	signal_from(":1.99", "EventsLost", "tt", (uint64_t)9, (uint64_t)9);
	signal_from(":1.99", "Revoked", "s", "not the broker");
	ck_assert_uint_eq(h->n, 0);
	edge(1, "rising");
	ck_assert_uint_eq(h->n, 1);
	ck_assert_uint_eq(h->ev[0].lost, 0);
	/* Nor does a broker that went (BROKER_GONE cleared its name). */
	free(h->sub.broker_unique);
	h->sub.broker_unique = NULL;
	edge(2, "falling");
	ck_assert_uint_eq(h->n, 1);
}
END_TEST

START_TEST(test_no_handler_counts_lost)
{
	struct handle *h = handle_new(1, false);

	edge(1, "rising");
	edge(2, "falling");
	signal_from(BROKER, "ChipGone", "s", "gpiochip0");
	ck_assert_uint_eq(h->n, 0);
	h->sub.handled = true;
	edge(3, "rising");
	ck_assert_uint_eq(h->n, 1);
	ck_assert_uint_eq(h->ev[0].lost, 2);
	signal_from(BROKER, "RevokePending", "s", "policy reloaded");
	ck_assert_uint_eq(h->n, 2);
	ck_assert_int_eq(h->ev[1].type, GPIOBROKER_EVENT_REVOKE_PENDING);
	ck_assert_str_eq(h->ev[1].detail, "policy reloaded");
}
END_TEST

START_TEST(test_direct_edges)
{
	struct handle *h = handle_new(1, true);

	/* Numbered here, 1, 2, ... as the broker would; the kernel's gaps are lost. */
	ck_assert(direct_edge(h, 0));
	ck_assert(direct_edge(h, 0));
	ck_assert(direct_edge(h, 4));
	ck_assert_uint_eq(h->n, 3);
	ck_assert_uint_eq(h->ev[0].seqno, 1);
	ck_assert_uint_eq(h->ev[1].seqno, 2);
	ck_assert_uint_eq(h->ev[2].seqno, 3);
	ck_assert_uint_eq(h->ev[2].lost, 4);
	/* The same count as the bus path's: an edge no handler took is lost too. */
	h->sub.handled = false;
	ck_assert(direct_edge(h, 1));
	h->sub.handled = true;
	ck_assert(direct_edge(h, 0));
	ck_assert_uint_eq(h->ev[3].seqno, 5);
	ck_assert_uint_eq(h->ev[3].lost, 2);
	ck_assert_uint_eq(h->sub.total_lost, 6);
	/* One that comes while the handle's handler runs (it processed from inside)
	 * does not reach it twice over: counted lost. */
	h->nest = true;
	ck_assert(direct_edge(h, 0));
	ck_assert_uint_eq(h->n, 5);
	ck_assert(direct_edge(h, 0));
	ck_assert_uint_eq(h->ev[5].lost, 1);
	ck_assert_uint_eq(h->ev[5].seqno, 8);
}
END_TEST

START_TEST(test_handler_frees_on_direct_edge)
{
	struct handle *h = handle_new(1, true);

	h->free_at = 2;
	ck_assert(direct_edge(h, 0));
	/* Freed from its own handler: gone when the handler returns, not before. */
	ck_assert(!direct_edge(h, 0));
	ck_assert_uint_eq(handles_freed, 1);
	ck_assert_ptr_null(b->subs);
}
END_TEST

START_TEST(test_initial_kept_and_replayed)
{
	struct handle *h = handle_new(3, true);

	/* Before a handler wants them: kept, the latest per line, numbering kept. */
	edge(1, "rising");
	signal_from(BROKER, "InitialState", "uubtt", 2, 12, 1, (uint64_t)500, (uint64_t)1);
	signal_from(BROKER, "InitialState", "uubtt", 0, 10, 1, (uint64_t)600, (uint64_t)1);
	signal_from(BROKER, "InitialState", "uubtt", 0, 10, 0, (uint64_t)700, (uint64_t)1);
	signal_from(BROKER, "InitialState", "uubtt", 7, 17, 0, (uint64_t)700, (uint64_t)1);
	ck_assert_uint_eq(h->n, 1);
	gb_subscription_replay_initial(&h->sub);
	ck_assert_uint_eq(h->n, 3);
	ck_assert_int_eq(h->ev[1].type, GPIOBROKER_EVENT_INITIAL_STATE);
	ck_assert_uint_eq(h->ev[1].index, 0);
	ck_assert_uint_eq(h->ev[1].offset, 10);
	ck_assert_int_eq(h->ev[1].value, 0);
	ck_assert_uint_eq(h->ev[1].timestamp_ns, 700);
	ck_assert_uint_eq(h->ev[1].seqno, 1);
	ck_assert_uint_eq(h->ev[2].index, 2);
	ck_assert_int_eq(h->ev[2].value, 1);
	/* Told once. */
	gb_subscription_replay_initial(&h->sub);
	ck_assert_uint_eq(h->n, 3);
	/* Wanted: straight to the handler. Its seqno is the last edge's before it, so
	 * a jump there is loss, counted at the next edge. */
	h->sub.initial = true;
	signal_from(BROKER, "InitialState", "uubtt", 1, 11, 1, (uint64_t)800, (uint64_t)4);
	ck_assert_uint_eq(h->n, 4);
	ck_assert_uint_eq(h->ev[3].offset, 11);
	edge(5, "rising");
	ck_assert_uint_eq(h->ev[4].lost, 3);
}
END_TEST

START_TEST(test_handler_frees_on_replay)
{
	struct handle *h = handle_new(3, true);

	for (uint32_t i = 0; i < 3; i++)
		signal_from(BROKER, "InitialState", "uubtt", i, 10 + i, 1, (uint64_t)1, (uint64_t)0);
	h->free_at = 1;
	gb_subscription_replay_initial(&h->sub);
	ck_assert_uint_eq(handles_freed, 1);
	ck_assert_ptr_null(b->subs);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("lib-subscription");
	TCase *tc = gb_tcase_new(s, "subscription", setup, teardown, 10);

	tcase_add_test(tc, test_bus_edges);
	tcase_add_test(tc, test_sender_checked);
	tcase_add_test(tc, test_no_handler_counts_lost);
	tcase_add_test(tc, test_direct_edges);
	tcase_add_test(tc, test_direct_edge_late);
	tcase_add_test(tc, test_handler_frees_on_direct_edge);
	tcase_add_test(tc, test_initial_kept_and_replayed);
	tcase_add_test(tc, test_handler_frees_on_replay);
	return gb_run_suite(s);
}
