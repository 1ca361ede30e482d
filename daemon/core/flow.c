/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Flow control for one subscriber's events (see flow.h).
 *
 * Order is kept exactly: an event goes straight to the bus only when nothing is
 * queued ahead of it and the window has room; a drop is remembered on the next
 * event queued (lost_before), so the subscriber hears EventsLost at the place of
 * the gap, never earlier or later. Dropped events take no broker seqno: loss in the
 * broker is told by EventsLost alone, and a seqno gap keeps meaning "lost on the
 * bus", so the two never count one event twice.
 *
 * Memory per subscriber is bounded: the queue grows by doubling up to its limit
 * (plus one InitialState per line and resync, which are never dropped: a client
 * must not be left not knowing the level), the in-flight ring is the window.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "client.h"
#include "flow.h"
#include "log.h"

void flow_init(Flow *f, sd_bus *bus, const char *path, const char *iface, unsigned int window,
	       unsigned int limit)
{
	memset(f, 0, sizeof(*f));
	f->bus = bus;
	f->path = path;
	f->iface = iface;
	f->window = window ? window : GB_FLOW_DEFAULT_WINDOW;
	f->limit = limit;
}

static void reset(Flow *f)
{
	free(f->q);
	free(f->inflight);
	f->q = NULL;
	f->inflight = NULL;
	f->q_head = f->q_len = f->q_cap = 0;
	f->if_head = f->if_len = 0;
}

void flow_done(Flow *f)
{
	reset(f);
	f->to = NULL;
}

static int emitv(Flow *f, const char *member, const char *types, va_list ap)
{
	sd_bus_message *m = NULL;
	int ret;

	if (!f->to)
		return 0;
	/* Unicast: to the subscriber only, on its private connection if it has one. */
	ret = client_new_signal(f->to, f->path, f->iface, member, &m);
	if (ret < 0)
		return ret;
	ret = sd_bus_message_appendv(m, types, ap);
	if (ret >= 0)
		ret = client_send(f->to, m);
	sd_bus_message_unref(m);
	if (ret < 0)
		log_warning_errno(ret, "%s: cannot send %s to %s: %m", f->path, member, f->to->name);
	return ret;
}

static int emit(Flow *f, const char *member, const char *types, ...)
{
	va_list ap;
	int ret;

	va_start(ap, types);
	ret = emitv(f, member, types, ap);
	va_end(ap);
	return ret;
}

int flow_signal(Flow *f, const char *member, const char *types, ...)
{
	va_list ap;
	int ret;

	va_start(ap, types);
	ret = emitv(f, member, types, ap);
	va_end(ap);
	return ret;
}

static void owe(Flow *f, uint64_t n)
{
	if (f->mark)
		f->mark->owed += n;
}

static void pay(Flow *f, uint64_t n)
{
	if (f->mark)
		f->mark->paid += n;
}

static void emit_lost(Flow *f, uint64_t n)
{
	emit(f, "EventsLost", "tt", n, f->lost);
	/* Paid once sent: a broker dying in between makes the next one tell it again
	 * (counted twice) rather than not at all. */
	pay(f, n);
	sd_bus_emit_properties_changed(f->bus, f->path, f->iface, "EventsLost", NULL);
}

static void send_one(Flow *f, const struct gb_event *ev)
{
	if (ev->lost_before)
		emit_lost(f, ev->lost_before);
	if (ev->kind == GB_EV_INITIAL) {
		emit(f, "InitialState", "uubtt", ev->index, ev->offset, (int)ev->value,
		     ev->timestamp_ns, ev->seqno);
		return;
	}
	if (emit(f, "Event", "uustttt", ev->index, ev->offset,
		 ev->kind == GB_EV_RISING ? "rising" : "falling", ev->timestamp_ns,
		 ev->global_seqno, ev->line_seqno, ev->seqno) < 0) {
		/* Not on the bus: as lost as a drop, and said the same way. */
		f->lost++;
		f->pending_lost++;
		owe(f, 1);
		return;
	}
	if (!f->inflight) {
		f->inflight = calloc(f->window, sizeof(*f->inflight));
		if (!f->inflight)
			return; /* cannot track it: it simply does not count against the window */
	}
	f->inflight[(f->if_head + f->if_len) % f->window] = ev->seqno;
	f->if_len++;
}

static bool window_full(const Flow *f)
{
	return f->if_len >= f->window;
}

static int enqueue(Flow *f, const struct gb_event *ev)
{
	if (f->q_len == f->q_cap) {
		size_t cap = f->q_cap ? f->q_cap * 2 : 16;
		struct gb_event *n = malloc(cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		/* Unroll the ring into the new array. */
		for (size_t i = 0; i < f->q_len; i++)
			n[i] = f->q[(f->q_head + i) % f->q_cap];
		free(f->q);
		f->q = n;
		f->q_head = 0;
		f->q_cap = cap;
	}
	f->q[(f->q_head + f->q_len) % f->q_cap] = *ev;
	f->q[(f->q_head + f->q_len) % f->q_cap].lost_before = f->pending_lost;
	f->pending_lost = 0;
	f->q_len++;
	return 0;
}

/* Send what the window allows, in order. */
static void pump(Flow *f)
{
	while (f->q_len) {
		struct gb_event *ev = &f->q[f->q_head];

		if (ev->kind != GB_EV_INITIAL && window_full(f))
			break;
		send_one(f, ev);
		f->q_head = (f->q_head + 1) % f->q_cap;
		f->q_len--;
	}
	if (!f->q_len) {
		/* Keep the memory of a burst only while it is in use. */
		free(f->q);
		f->q = NULL;
		f->q_head = f->q_cap = 0;
		if (f->pending_lost && !window_full(f)) {
			uint64_t n = f->pending_lost;

			f->pending_lost = 0;
			emit_lost(f, n);
		}
	}
}

static void drop(Flow *f)
{
	f->lost++;
	f->pending_lost++;
	owe(f, 1);
}

/* The next broker numbers on from here (the mark). */
static uint64_t next_seqno(Flow *f)
{
	f->seqno++;
	if (f->mark)
		f->mark->seqno = f->seqno;
	return f->seqno;
}

void flow_push_edge(Flow *f, struct gb_event *ev)
{
	ev->lost_before = 0;
	if (!f->to) {
		/* Nobody subscribed (a persistent request): counted, and the next
		 * subscriber sees it in the EventsLost property and the seqno gap. */
		ev->seqno = next_seqno(f);
		f->lost++;
		return;
	}
	if (!f->q_len && !window_full(f)) {
		ev->seqno = next_seqno(f);
		ev->lost_before = f->pending_lost;
		f->pending_lost = 0;
		send_one(f, ev);
		return;
	}
	/* A drop takes no seqno: it is reported once, by EventsLost, so a client that
	 * adds seqno gaps (lost on the bus) and EventsLost counts gets it right. */
	if (f->q_len >= f->limit) {
		drop(f);
		return;
	}
	ev->seqno = f->seqno + 1;
	if (enqueue(f, ev) < 0) {
		drop(f);
		return;
	}
	next_seqno(f);
}

void flow_push_initial(Flow *f, struct gb_event *ev)
{
	ev->kind = GB_EV_INITIAL;
	ev->seqno = f->seqno;
	ev->lost_before = 0;
	if (!f->to)
		return;
	if (!f->q_len) {
		ev->lost_before = f->pending_lost;
		f->pending_lost = 0;
		send_one(f, ev);
		return;
	}
	if (enqueue(f, ev) < 0)
		log_warning("%s: out of memory queueing the initial state", f->path);
}

void flow_lost(Flow *f, uint64_t n)
{
	f->lost += n;
	owe(f, n);
	if (!f->to) {
		pay(f, n);
		return;
	}
	f->pending_lost += n;
	pump(f);
}

void flow_ack(Flow *f, uint64_t seqno)
{
	while (f->if_len && f->inflight[f->if_head] <= seqno) {
		f->if_head = (f->if_head + 1) % f->window;
		f->if_len--;
	}
	pump(f);
}

int flow_set_dest(Flow *f, Client *to)
{
	/* What was waiting for the previous subscriber never reaches anybody. */
	for (size_t i = 0; i < f->q_len; i++) {
		const struct gb_event *ev = &f->q[(f->q_head + i) % f->q_cap];

		if (ev->kind != GB_EV_INITIAL)
			f->lost++;
		pay(f, ev->lost_before);
	}
	pay(f, f->pending_lost);
	reset(f);
	f->pending_lost = 0;
	f->to = to;
	return 0;
}

uint64_t flow_take_mark(Flow *f, struct gb_mark_count *count, bool existed)
{
	uint64_t unreported = 0;

	if (existed) {
		if (count->owed > count->paid)
			unreported = count->owed - count->paid;
		/* Numbered on: what it numbered and never sent is a gap to the subscriber. */
		f->seqno = count->seqno;
	}
	*count = (struct gb_mark_count){ .seqno = f->seqno };
	f->mark = count;
	return unreported;
}

size_t flow_in_flight(const Flow *f)
{
	return f->if_len;
}

size_t flow_queued(const Flow *f)
{
	return f->q_len;
}
