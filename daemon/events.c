/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Edge events: the gpio_to_irq()/request_irq() model.
 *
 * Each kernel line request with edge detection has an fd; when it is readable the
 * broker reads a batch of events and sends each as an Event signal addressed to the
 * request's owner only (unicast: sd_bus_message_set_destination), never broadcast.
 *
 * Nothing is lost silently. The kernel numbers events per request (global seqno);
 * a gap means its buffer overflowed, and the broker says so with EventsLost and the
 * EventsLost property. The broker numbers the signals it sends (Event's last field),
 * so a client also sees any loss after the broker, on the bus. Each subscriber's
 * events pass through its own bounded queue (flow.c): a client that does not keep
 * up loses its own events, counted, and delays nobody.
 */

#include <errno.h>
#include <stdarg.h>
#include <string.h>

#include "broker.h"
#include "line-request.h"
#include "log.h"
#include "macro.h"

int request_emit(Request *r, const char *member, const char *types, ...)
{
	sd_bus_message *m = NULL;
	va_list ap;
	int ret;

	if (!r->client)
		return 0;
	ret = sd_bus_message_new_signal(r->broker->bus, &m, r->path, GB_IFACE_REQUEST, member);
	if (ret < 0)
		return ret;
	/* sd_bus_emit_signal_to() is libsystemd 253+; this is the same on 252. */
	ret = sd_bus_message_set_destination(m, r->client->name);
	if (ret >= 0) {
		va_start(ap, types);
		ret = sd_bus_message_appendv(m, types, ap);
		va_end(ap);
	}
	if (ret >= 0)
		ret = sd_bus_send(r->broker->bus, m, NULL);
	sd_bus_message_unref(m);
	return ret;
}

static int line_index(Request *r, ReqChip *rc, unsigned int offset)
{
	for (unsigned int i = 0; i < r->n_lines; i++)
		if (r->lines[i].rc == rc && r->lines[i].offset == offset)
			return (int)i;
	return -1;
}

static int on_edge(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	ReqChip *rc = userdata;
	Request *r = rc->request;
	struct gb_edge ev[GB_EVENT_BATCH];
	int n;

	if (revents & (EPOLLHUP | EPOLLERR)) {
		/* The chip went away; chip.c tells the owner once it sees the node go. */
		events_detach(rc);
		return 0;
	}
	n = lreq_read_events(rc, ev, GB_EVENT_BATCH);
	if (n < 0) {
		if (n == -EAGAIN || n == -EINTR)
			return 0;
		log_warning_errno(n, "request %s: reading edge events: %m", r->path);
		events_detach(rc);
		return 0;
	}
	for (int i = 0; i < n; i++) {
		uint64_t gseq = ev[i].global_seqno;
		int idx = line_index(r, rc, ev[i].offset);
		struct gb_event e = {
			.kind = ev[i].rising ? GB_EV_RISING : GB_EV_FALLING,
			.offset = ev[i].offset,
			.timestamp_ns = ev[i].timestamp_ns,
			.global_seqno = gseq,
			.line_seqno = ev[i].line_seqno,
		};

		if (rc->seqno_unknown)
			rc->seqno_unknown = false; /* adopted (fdstore.c): no gap to measure */
		else if (gseq > rc->last_global_seqno + 1)
			flow_lost(&r->flow, gseq - rc->last_global_seqno - 1);
		rc->last_global_seqno = gseq;
		if (idx < 0)
			continue;
		/* Watchers first or owner first makes no difference: neither waits for
		 * the other, each has its own queue (flow.c). */
		e.index = (uint32_t)idx;
		/* Edges stamped before the owner's initial state are already in it. */
		if (!r->since_valid || ev[i].timestamp_ns > r->since_ns)
			flow_push_edge(&r->flow, &e);
		if (r->lines[idx].line)
			watch_fan_out(r->lines[idx].line, &ev[i]);
	}
	return 0;
}

int events_attach(ReqChip *rc)
{
	int r;

	Broker *b = rc->request->broker;

	/* One read buffer for all requests: the broker is single-threaded and copies
	 * each batch out before it reads the next, and a buffer per request would cost
	 * every held line ~5 KiB whether or not it ever has an edge. */
	if (!b->edge_events) {
		b->edge_events = gpiod_edge_event_buffer_new(GB_EVENT_BATCH);
		if (!b->edge_events)
			return -ENOMEM;
	}
	/* Always watched: edge detection may be switched on later by Reconfigure, and an
	 * fd without edges is simply never readable. */
	r = sd_event_add_io(rc->request->broker->event, &rc->event_source, lreq_fd(rc), EPOLLIN,
			    on_edge, rc);
	return r < 0 ? r : 0;
}

void events_detach(ReqChip *rc)
{
	rc->event_source = sd_event_source_disable_unref(rc->event_source);
}
