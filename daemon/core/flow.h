/* SPDX-License-Identifier: LGPL-2.1-or-later */
/**
 * @file flow.h
 * @brief Credit-based flow control for the events one subscriber receives.
 *
 * Every subscriber (a request's owner, a watcher) has a window of W events it may
 * have unacknowledged on the bus, and behind it a broker-side queue of at most Q
 * events. A subscriber that does not acknowledge (Ack(t seqno)) fills its window,
 * then its queue; further events are dropped and counted, and once it has room
 * again it gets EventsLost(count, total) in order, at the place the gap was. The
 * bus daemon therefore never holds more than W of our events for a slow client, the
 * broker never more than Q, and nobody else waits for it.
 *
 * What a broker that dies has taken on and not told (queued, dropped and not yet
 * reported) is in the subscriber's mark (Flow.mark), kept without a system call.
 */
#ifndef GB_FLOW_H
#define GB_FLOW_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>
#include <systemd/sd-bus.h>

#include "record.h"
#include "forward.h"

#define GB_FLOW_DEFAULT_WINDOW 256
#define GB_FLOW_DEFAULT_QUEUE  1024
#define GB_FLOW_MAX            65536

enum gb_event_kind {
	GB_EV_FALLING,
	GB_EV_RISING,
	GB_EV_INITIAL, /* InitialState: the level when the subscription began */
};

struct gb_event {
	uint8_t kind;
	bool value;             /* GB_EV_INITIAL only */
	uint32_t index, offset;
	uint64_t timestamp_ns;
	uint64_t global_seqno, line_seqno;
	uint64_t seqno;         /* broker's; for InitialState the last Event's before it */
	uint64_t lost_before;   /* EventsLost to send before this one */
};

typedef struct Flow {
	sd_bus *bus;
	const char *path;       /* the object the signals come from */
	const char *iface;
	Client *to;             /* the subscriber; NULL: nobody, events are counted lost */
	unsigned int window, limit;
	uint64_t seqno;         /* last broker seqno handed out */
	uint64_t lost;          /* total lost (after the kernel and here) */
	uint64_t pending_lost;  /* lost since the last EventsLost, not yet attached */

	struct gb_event *q;     /* ring */
	size_t q_head, q_len, q_cap;
	uint64_t *inflight;     /* ring of seqnos sent and not acknowledged */
	size_t if_head, if_len;
	/* Shared with the next broker (record.h): the last seqno given, and owed - paid
	 * the losses not yet told to the subscriber. NULL: not recorded. */
	struct gb_mark_count *mark;
} Flow;

void flow_init(Flow *f, sd_bus *bus, const char *path, const char *iface, unsigned int window,
	       unsigned int limit);
/** Free the queue; the subscriber is gone. */
void flow_done(Flow *f);
/**
 * A new subscriber (or NULL): events queued for the previous one count as lost.
 * Signals go where client_new_signal() sends them (a private connection or the bus).
 */
int flow_set_dest(Flow *f, Client *to);
/** Send or queue an edge; assigns its broker seqno. Never blocks. */
void flow_push_edge(Flow *f, struct gb_event *ev);
/** Send or queue an InitialState; these are never dropped (one per line per resync). */
void flow_push_initial(Flow *f, struct gb_event *ev);
/** @p n events were lost before the broker saw them (kernel buffer overflow). */
void flow_lost(Flow *f, uint64_t n);
/** Any other signal to the subscriber (ChipGone, Revoked), unicast, not queued. */
int flow_signal(Flow *f, const char *member, const char *types, ...);
/** The subscriber has handled everything up to @p seqno. */
void flow_ack(Flow *f, uint64_t seqno);
/**
 * Keep @p count current from now on. @p existed: it is the previous broker's, whose
 * numbering goes on here; returns the losses it had not reported yet (for
 * flow_lost()), and the count starts again from them.
 */
uint64_t flow_take_mark(Flow *f, struct gb_mark_count *count, bool existed);
/** Events sent and not acknowledged, and events queued (for tests and properties). */
size_t flow_in_flight(const Flow *f);
size_t flow_queued(const Flow *f);

#endif
