/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libgpiobroker's subscriptions: the part of a request or a watch that receives the
 * broker's signals for its object. Here a signal is dispatched by path, accepted
 * only from the broker's unique name, numbered and counted (one loss count for
 * edges from the bus and from the line fds of direct requests), acknowledged for
 * flow control, and handed to the handler through the subscription's kind
 * (request.c, watch.c), which is all that differs. Initial states that come before
 * a handler wants them are kept for it, and a broker that goes or comes back is
 * followed.
 */
#include "internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static void on_edge(struct gb_subscription *sub, sd_bus_message *m);
static void on_initial(struct gb_subscription *sub, sd_bus_message *m);
static void on_chip_back(struct gb_subscription *sub, sd_bus_message *m);
static bool count_edge(struct gb_subscription *sub, struct gpiobroker_event *ev, uint64_t gap,
		       bool deliverable);
static void ack(struct gb_subscription *sub, uint64_t seqno);
static bool deliver_held(struct gb_subscription *sub, const struct gpiobroker_event *ev);
static void keep_initial(struct gb_subscription *sub, unsigned int index, int value,
			 uint64_t timestamp_ns);
static void tell_marked(struct gpiobroker *b, enum gpiobroker_event_type type,
			const char *detail);

/* --- the connection's list ---------------------------------------------------------- */

int gb_subscription_init(struct gb_subscription *sub, struct gpiobroker *b,
			 const struct gb_subscription_kind *kind, const char *path)
{
	sub->b = b;
	sub->kind = kind;
	sub->path = strdup(path);
	if (!sub->path)
		return -ENOMEM;
	sub->next = b->subs;
	b->subs = sub;
	return 0;
}

bool gb_subscription_end(struct gb_subscription *sub)
{
	/* Off the list once: the second call, after a delivery, may outlive the
	 * connection's list. */
	if (!sub->freed)
		for (struct gb_subscription **pp = &sub->b->subs; *pp; pp = &(*pp)->next)
			if (*pp == sub) {
				*pp = sub->next;
				break;
			}
	if (sub->delivering) {
		sub->freed = true;
		return false;
	}
	for (size_t i = 0; sub->chips && i < sub->n_lines; i++)
		free(sub->chips[i]);
	free(sub->chips);
	free(sub->offsets);
	free(sub->path);
	free(sub->broker_unique);
	free(sub->init_value);
	free(sub->init_ts);
	return true;
}

static struct gb_subscription *find(struct gpiobroker *b, const char *path)
{
	for (struct gb_subscription *s = b->subs; s; s = s->next)
		if (strcmp(s->path, path) == 0)
			return s;
	return NULL;
}

/* --- an edge, from the message to the handler --------------------------------------- */

int gb_subscription_on_signal(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
	struct gpiobroker *b = userdata;
	struct gb_subscription *sub;
	const char *member = sd_bus_message_get_member(m), *path = sd_bus_message_get_path(m);
	const char *sender = sd_bus_message_get_sender(m);
	struct gpiobroker_event ev = { 0 };

	if (!member || !path || !sender)
		return 0;
	sub = find(b, path);
	if (!sub || !sub->broker_unique || strcmp(sender, sub->broker_unique) != 0)
		return 0;
	if (strcmp(member, "Event") == 0) {
		on_edge(sub, m);
		return 0;
	}
	if (strcmp(member, "InitialState") == 0) {
		on_initial(sub, m);
		return 0;
	}
	if (strcmp(member, "EventsLost") == 0) {
		uint64_t count, total;

		if (sd_bus_message_read(m, "tt", &count, &total) >= 0)
			sub->pending_lost += count;
		return 0;
	}
	if (strcmp(member, "ChipBack") == 0) {
		on_chip_back(sub, m);
		return 0;
	}
	if (strcmp(member, "ChipGone") == 0)
		ev.type = GPIOBROKER_EVENT_CHIP_GONE;
	else if (strcmp(member, "Revoked") == 0)
		ev.type = GPIOBROKER_EVENT_REVOKED;
	else if (strcmp(member, "RevokePending") == 0)
		ev.type = GPIOBROKER_EVENT_REVOKE_PENDING;
	else
		return 0;
	if (sd_bus_message_read(m, "s", &ev.detail) < 0 || !sub->handled)
		return 0;
	sub->kind->deliver(sub, &ev);
	return 0;
}

/* The same device is back under another name: the handle's lines are on it now. */
static void on_chip_back(struct gb_subscription *sub, sd_bus_message *m)
{
	struct gpiobroker_event ev = { .type = GPIOBROKER_EVENT_CHIP_BACK };
	const char *was;

	if (sd_bus_message_read(m, "ss", &was, &ev.detail) < 0)
		return;
	for (size_t i = 0; sub->chips && i < sub->n_lines; i++)
		if (sub->chips[i] && strcmp(sub->chips[i], was) == 0) {
			char *now = strdup(ev.detail);

			if (!now)
				return;
			free(sub->chips[i]);
			sub->chips[i] = now;
		}
	if (sub->handled)
		sub->kind->deliver(sub, &ev);
}

static void on_edge(struct gb_subscription *sub, sd_bus_message *m)
{
	struct gpiobroker_event ev = { .type = GPIOBROKER_EVENT_EDGE };
	const char *edge;
	uint32_t index, offset;
	uint64_t gap = 0;

	if (sd_bus_message_read(m, "uustttt", &index, &offset, &edge, &ev.timestamp_ns,
				&ev.global_seqno, &ev.line_seqno, &ev.seqno) < 0)
		return;
	ev.index = index;
	ev.offset = offset;
	ev.edge = strcmp(edge, "rising") == 0 ? GPIOBROKER_EDGE_RISING : GPIOBROKER_EDGE_FALLING;
	ev.value = ev.edge == GPIOBROKER_EDGE_RISING;
	/* The broker numbers the events it sends for a request 1, 2, ...: a gap is an
	 * event that left the broker but did not reach a handler here. Kernel-side
	 * overflow does not advance seqno; it comes as EventsLost (pending_lost). */
	if (sub->have_seqno && ev.seqno > sub->last_seqno + 1)
		gap = ev.seqno - sub->last_seqno - 1;
	ack(sub, ev.seqno);
	/* The handler may free @sub: nothing touches it after the call. */
	if (count_edge(sub, &ev, gap, true))
		sub->kind->deliver(sub, &ev);
}

/* An edge read from a direct request's line fd (direct.c), no broker in the path. */
bool gb_subscription_direct_edge(struct gb_subscription *sub, struct gpiobroker_event *ev,
				 uint64_t kernel_lost, bool late)
{
	/* Counted lost by the gap it left: it is not, after all. Already told in an
	 * earlier event's lost count, it comes out of the total at least. */
	if (late) {
		if (sub->pending_lost)
			sub->pending_lost--;
		else if (sub->total_lost)
			sub->total_lost--;
	}
	/* Numbered here as the broker numbers what it sends (1, 2, ...); the kernel's
	 * own gaps are the loss. One more edge while this handle's handler runs (it
	 * processed from inside) is counted lost too. */
	ev->seqno = sub->last_seqno + 1;
	if (!count_edge(sub, ev, kernel_lost, !sub->delivering))
		return true;
	return deliver_held(sub, ev);
}

/*
 * The loss accounting of edges, the bus's and direct ones: @p ev, numbered, came
 * after @p gap lost ones. True if it goes to the handler, with in ev->lost what was
 * lost since the last one that did; otherwise it is lost as well.
 */
static bool count_edge(struct gb_subscription *sub, struct gpiobroker_event *ev, uint64_t gap,
		       bool deliverable)
{
	sub->pending_lost += gap;
	sub->last_seqno = ev->seqno;
	sub->have_seqno = true;
	if (!sub->handled || !deliverable) {
		sub->pending_lost++;
		return false;
	}
	ev->lost = sub->pending_lost;
	sub->total_lost += ev->lost;
	sub->pending_lost = 0;
	return true;
}

/* Credit for the broker: it sends at most a window of events we have not
 * acknowledged, so a program that stops processing loses its own events (counted)
 * instead of filling the bus daemon. Fire and forget: no reply is waited for. */
static void ack(struct gb_subscription *sub, uint64_t seqno)
{
	struct gpiobroker *b = sub->b;

	if (!b->ack_every || ++sub->unacked < b->ack_every)
		return;
	sub->unacked = 0;
	sd_bus_call_method_async(gb_conn(b), NULL, GB_BUS_NAME, sub->path, sub->kind->iface, "Ack",
				 NULL, NULL, "t", seqno);
}

/* Deliver from a loop that goes on after the handler: a handle it frees goes only
 * once it returns. False if it went. */
static bool deliver_held(struct gb_subscription *sub, const struct gpiobroker_event *ev)
{
	sub->delivering++;
	sub->kind->deliver(sub, ev);
	if (--sub->delivering || !sub->freed)
		return true;
	sub->kind->free(sub);
	return false;
}

/* --- initial states ------------------------------------------------------------------ */

static void on_initial(struct gb_subscription *sub, sd_bus_message *m)
{
	struct gpiobroker_event ev = { .type = GPIOBROKER_EVENT_INITIAL_STATE };
	uint32_t index, offset;
	int value;

	if (sd_bus_message_read(m, "uubtt", &index, &offset, &value, &ev.timestamp_ns,
				&ev.seqno) < 0 || index >= sub->n_lines)
		return;
	ev.index = index;
	ev.offset = offset;
	ev.value = !!value;
	/* Its seqno is the last Event's before it: a baseline for counting gaps. */
	if (sub->have_seqno && ev.seqno > sub->last_seqno)
		sub->pending_lost += ev.seqno - sub->last_seqno;
	if (!sub->have_seqno || ev.seqno > sub->last_seqno)
		sub->last_seqno = ev.seqno;
	sub->have_seqno = true;
	if (!sub->initial) {
		keep_initial(sub, index, ev.value, ev.timestamp_ns);
		return;
	}
	sub->kind->deliver(sub, &ev);
}

/* Kept (the latest per line) for a handler that asks for it later. */
static void keep_initial(struct gb_subscription *sub, unsigned int index, int value,
			 uint64_t timestamp_ns)
{
	if (!sub->init_value) {
		sub->init_value = malloc(sub->n_lines * sizeof(int));
		sub->init_ts = calloc(sub->n_lines, sizeof(uint64_t));
		if (!sub->init_value || !sub->init_ts) {
			free(sub->init_value);
			free(sub->init_ts);
			sub->init_value = NULL;
			sub->init_ts = NULL;
			return;
		}
		for (size_t i = 0; i < sub->n_lines; i++)
			sub->init_value[i] = -1;
	}
	sub->init_value[index] = value;
	sub->init_ts[index] = timestamp_ns;
}

void gb_subscription_replay_initial(struct gb_subscription *sub)
{
	int *vals = sub->init_value;
	uint64_t *ts = sub->init_ts;
	bool alive = true;

	if (!vals)
		return;
	sub->init_value = NULL;
	sub->init_ts = NULL;
	/* The initial states came first; the handler hears them first. */
	for (size_t i = 0; alive && i < sub->n_lines; i++) {
		struct gpiobroker_event ev = {
			.type = GPIOBROKER_EVENT_INITIAL_STATE, .index = i,
			.offset = sub->offsets[i], .value = vals[i], .timestamp_ns = ts[i],
			.seqno = sub->last_seqno,
		};

		if (vals[i] >= 0)
			alive = deliver_held(sub, &ev);
	}
	free(vals);
	free(ts);
}

/* --- the broker going, and a new one taking over -------------------------------------- */

/* A broker restarted with systemd's fd store has taken our requests and watches over
 * under the same paths: accept their signals from its unique name from now on. */
static void follow_new_broker(struct gpiobroker *b, const char *new_owner)
{
	/* A new private connection to it first (the old one died with the old
	 * broker), before anything is asked, so that its signals come that way. */
	if (b->want == GPIOBROKER_TRANSPORT_P2P) {
		sd_bus_error e = SD_BUS_ERROR_NULL;

		gb_p2p_drop(b, false);
		(void)gb_p2p_open(b, new_owner, &e);
		sd_bus_error_free(&e);
	}
	/* Asked of the new broker itself, which handles calls only once it has restored
	 * them (and sent what it sends them at once: EventsLost, InitialState, which
	 * wait in our queue until this call returns). */
	for (struct gb_subscription *s = b->subs; s; s = s->next) {
		sd_bus_error e = SD_BUS_ERROR_NULL;
		char *value = NULL;

		if (s->broker_unique || s->freed || !s->path)
			continue;
		if (sd_bus_get_property_string(gb_conn(b), new_owner, s->path, s->kind->iface,
					       s->kind->restart_prop, &e, &value) >= 0) {
			s->broker_unique = strdup(new_owner);
			s->tell = s->broker_unique != NULL;
			/* The new broker numbers on where the old one stopped: a gap is what
			 * the old one numbered and never sent, lost like any other. (A broker
			 * that could not keep the numbering starts lower: no gap is counted.) */
			s->unacked = 0;
		}
		free(value);
		sd_bus_error_free(&e);
	}
	tell_marked(b, GPIOBROKER_EVENT_BROKER_RESTARTED, NULL);
}

/* Every handle the broker @p unique had (NULL: whichever broker) is gone: no private
 * connection, no signals accepted, each told BROKER_GONE with @p detail. */
static void broker_gone(struct gpiobroker *b, const char *unique, const char *detail)
{
	gb_p2p_drop(b, false);
	for (struct gb_subscription *s = b->subs; s; s = s->next) {
		if (!s->broker_unique || (unique && strcmp(s->broker_unique, unique) != 0))
			continue;
		free(s->broker_unique);
		s->broker_unique = NULL;
		s->tell = true;
	}
	tell_marked(b, GPIOBROKER_EVENT_BROKER_GONE, detail);
}

int gb_subscription_on_owner_changed(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
	struct gpiobroker *b = userdata;
	const char *name, *old_owner, *new_owner;

	if (sd_bus_message_read(m, "sss", &name, &old_owner, &new_owner) < 0)
		return 0;
	if (!*old_owner && *new_owner) {
		follow_new_broker(b, new_owner);
		return 0;
	}
	if (!*old_owner)
		return 0;
	/* The broker left the bus (crash, restart, SIGTERM): every request is gone. */
	broker_gone(b, old_owner, NULL);
	return 0;
}

int gb_subscription_on_disconnected(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
	struct gpiobroker *b = userdata;

	/* The link to the bus went (an SSH connection, the bus daemon): the broker
	 * releases our managed requests and watches as for any client that leaves;
	 * persistent requests stay held on the other side. */
	b->lost = true;
	broker_gone(b, NULL, "the connection to the bus was lost");
	return 0;
}

unsigned int gb_subscription_renew_all(struct gpiobroker *b)
{
	unsigned int failed = 0;

	for (struct gb_subscription *s = b->subs; s; s = s->next) {
		if (s->broker_unique || s->freed)
			continue;
		if (!s->kind->renew || s->kind->renew(s) < 0 || !s->broker_unique) {
			failed++;
			continue;
		}
		s->unacked = 0;
		s->tell = true;
	}
	tell_marked(b, GPIOBROKER_EVENT_BROKER_RESTARTED, "made again after a reconnection");
	return failed;
}

/* Tell each marked subscription's handler once. A handler may free its handle or
 * others, so the walk starts over after each. */
static void tell_marked(struct gpiobroker *b, enum gpiobroker_event_type type,
			const char *detail)
{
	struct gpiobroker_event ev = { .type = type, .detail = detail };
	bool again = true;

	while (again) {
		again = false;
		for (struct gb_subscription *s = b->subs; s; s = s->next) {
			if (!s->tell)
				continue;
			s->tell = false;
			if (s->handled) {
				s->kind->deliver(s, &ev);
				again = true;
				break;
			}
		}
	}
}

/* --- flow control --------------------------------------------------------------------- */

void gb_learn_window(struct gpiobroker *b)
{
	uint32_t w = 0;

	if (b->ack_known)
		return;
	if (sd_bus_get_property_trivial(gb_conn(b), GB_BUS_NAME, GB_ROOT_PATH, GB_IFACE_MANAGER,
					"EventWindow", NULL, 'u', &w) >= 0 && w)
		b->ack_every = w / 2 ? w / 2 : 1;
	b->ack_known = true;
}
