/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libgpiobroker: a thin client of the gpiod-broker D-Bus API. Every operation is a
 * method call to the broker; the broker validates, enforces the policy and talks to
 * the kernel. This file only marshals arguments, keeps handles, turns D-Bus errors
 * into errno values, and turns the broker's unicast signals into handler calls.
 */
#include "gpiobroker.h"

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>

#include "direct-private.h"
#include "org.gpiodbroker1.h"

#define GB_EXPORT __attribute__((visibility("default")))

struct pending_request;

struct gpiobroker {
	sd_bus *bus;
	/* The private connection to the broker (Manager.OpenConnection), when in use:
	 * every call goes there, and the broker's signals for us come on it. The bus
	 * connection stays: it is our identity, and how we hear the broker restart. */
	sd_bus *p2p;
	sd_bus_slot *p2p_slots[3];
	enum gpiobroker_transport want; /* what the caller asked for (never _AUTO here) */
	bool strict;                     /* GPIOBROKER_TRANSPORT_P2P: no fallback at open */
	int epfd;                        /* both connections, for gpiobroker_get_fd(); -1 none */
	sd_event *event;                 /* gpiobroker_attach_event()'s, for a p2p made later */
	int event_priority;
	struct pending_request *pending; /* gpiobroker_request_array_async() calls in flight */
	sd_bus_slot *signal_slot;
	sd_bus_slot *owner_slot;
	sd_bus_slot *watch_slot;
	struct gpiobroker_request *requests; /* every open handle, for dispatch by path */
	/* Flow control: acknowledge every ack_every events (the broker's EventWindow/2;
	 * 0: a broker without flow control). */
	bool ack_known;
	unsigned int ack_every;
	char *err_name;
	char *err_message;
	struct gb_direct_conn *direct; /* line fds of direct requests (direct.c), NULL if none */
};

/* Where calls to the broker go. */
static sd_bus *conn(struct gpiobroker *b);
#define CONN(b) conn(b)

struct gpiobroker_request {
	struct gpiobroker *b;
	struct gpiobroker_request *next;
	char *path;
	/* The broker's unique name as it answered us. Signals are accepted only from
	 * it: any peer may send a unicast signal to us with the broker's interface,
	 * and the bus daemon does not stop it. */
	char *broker_unique;
	size_t n_lines;
	char **chips;
	unsigned int *offsets;
	bool persistent;
	gpiobroker_irq_handler handler;
	void *userdata;
	/* Loss accounting (see gpiobroker_event_get_lost()). */
	bool have_seqno;      /* last_seqno is meaningful */
	uint64_t last_seqno;
	uint64_t pending_lost; /* EventsLost counts and undelivered events since the last delivery */
	uint64_t total_lost;
	unsigned int unacked;  /* events received since the last Ack */
	/* A watch (Manager.Watch) rather than a request: same handle, other object. */
	bool is_watch;
	gpiobroker_watch_handler whandler;
	unsigned int irq_flags;
	/* Initial states that came before a handler asked for them (see
	 * gpiobroker_to_irq_flags()): value per line, -1 none. */
	int *init_value;
	uint64_t *init_ts;
	bool replaying, freed;
	bool restarted;        /* taken over by a new broker, not yet told to the handler */
	struct gb_direct_req *direct; /* its line fds, if direct */
};

struct gpiobroker_event {
	enum gpiobroker_event_type type;
	unsigned int index, offset;
	enum gpiobroker_edge edge;
	int value;
	uint64_t timestamp_ns, global_seqno, line_seqno, seqno, lost;
	const char *detail;
};

/* --- errors ---------------------------------------------------------------- */

static void clear_error(struct gpiobroker *b)
{
	free(b->err_name);
	free(b->err_message);
	b->err_name = b->err_message = NULL;
}

static int errno_of(const sd_bus_error *e, int r)
{
	static const struct {
		const char *name;
		int err;
	} map[] = {
		{ GB_ERROR_PREFIX "Busy", EBUSY },
		{ GB_ERROR_PREFIX "NotFound", ENOENT },
		{ GB_ERROR_PREFIX "InvalidArgs", EINVAL },
		{ GB_ERROR_PREFIX "PermissionDenied", EACCES },
		{ GB_ERROR_PREFIX "NotOutput", EPERM },
		{ GB_ERROR_PREFIX "ChipGone", ENODEV },
		{ GB_ERROR_PREFIX "PolicyInvalid", EBADMSG },
		{ GB_ERROR_PREFIX "LimitsExceeded", EDQUOT },
		{ GB_ERROR_PREFIX "Failed", EIO },
		{ "org.freedesktop.DBus.Error.UnknownObject", ENOENT },
		{ "org.freedesktop.DBus.Error.UnknownMethod", ENOENT },
		/* No broker on the bus (and no activation): say so distinctly. */
		{ "org.freedesktop.DBus.Error.ServiceUnknown", EHOSTDOWN },
		{ "org.freedesktop.DBus.Error.NameHasNoOwner", EHOSTDOWN },
	};

	if (e && e->name) {
		for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
			if (strcmp(e->name, map[i].name) == 0)
				return -map[i].err;
		r = -sd_bus_error_get_errno(e);
	}
	return r < 0 ? r : -EIO;
}

/* Record a failed call on @b and return its negative errno. */
static int fail(struct gpiobroker *b, sd_bus_error *e, int r)
{
	r = errno_of(e, r);
	clear_error(b);
	if (e && e->name) {
		b->err_name = strdup(e->name);
		b->err_message = strdup(e->message ? e->message : e->name);
	} else {
		b->err_message = strdup(strerror(-r));
	}
	sd_bus_error_free(e);
	return r;
}

GB_EXPORT const char *gpiobroker_last_error_name(struct gpiobroker *b)
{
	return b ? b->err_name : NULL;
}

GB_EXPORT const char *gpiobroker_last_error_message(struct gpiobroker *b)
{
	return b ? b->err_message : NULL;
}

/* --- signals ----------------------------------------------------------------- */

static void p2p_drop(struct gpiobroker *b, bool flush);
static int p2p_open(struct gpiobroker *b, const char *dest, sd_bus_error *e);

static struct gpiobroker_request *find_request(struct gpiobroker *b, const char *path)
{
	for (struct gpiobroker_request *r = b->requests; r; r = r->next)
		if (strcmp(r->path, path) == 0)
			return r;
	return NULL;
}

static bool has_handler(const struct gpiobroker_request *req)
{
	return req->is_watch ? req->whandler != NULL : req->handler != NULL;
}

static void deliver(struct gpiobroker_request *req, struct gpiobroker_event *ev)
{
	/* The handler may free @req: nothing touches it after the call. */
	if (req->is_watch)
		req->whandler((struct gpiobroker_watch *)req, ev, req->userdata);
	else
		req->handler(req, ev, req->userdata);
}

/* The broker's window (Manager.EventWindow), asked once per connection. */
static void learn_window(struct gpiobroker *b)
{
	uint32_t w = 0;

	if (b->ack_known)
		return;
	if (sd_bus_get_property_trivial(CONN(b), GB_BUS_NAME, GB_ROOT_PATH, GB_IFACE_MANAGER, "EventWindow", NULL,
					'u', &w) >= 0 && w)
		b->ack_every = w / 2 ? w / 2 : 1;
	b->ack_known = true;
}

/* Credit for the broker: it sends at most a window of events we have not
 * acknowledged, so a program that stops processing loses its own events (counted)
 * instead of filling the bus daemon. Fire and forget: no reply is waited for. */
static void maybe_ack(struct gpiobroker_request *req, uint64_t seqno)
{
	struct gpiobroker *b = req->b;

	if (!b->ack_every || ++req->unacked < b->ack_every)
		return;
	req->unacked = 0;
	sd_bus_call_method_async(CONN(b), NULL, GB_BUS_NAME, req->path,
				 req->is_watch ? GB_IFACE_WATCH : GB_IFACE_REQUEST, "Ack", NULL, NULL, "t", seqno);
}

static void on_edge(struct gpiobroker_request *req, sd_bus_message *m)
{
	struct gpiobroker_event ev = { .type = GPIOBROKER_EVENT_EDGE };
	const char *edge;
	uint32_t index, offset;

	if (sd_bus_message_read(m, "uustttt", &index, &offset, &edge, &ev.timestamp_ns,
				&ev.global_seqno, &ev.line_seqno, &ev.seqno) < 0)
		return;
	ev.index = index;
	ev.offset = offset;
	ev.edge = strcmp(edge, "rising") == 0 ? GPIOBROKER_EDGE_RISING : GPIOBROKER_EDGE_FALLING;
	/* The broker numbers the events it sends for a request 1, 2, ...: a gap is an
	 * event that left the broker but did not reach a handler here. Kernel-side
	 * overflow does not advance seqno; it comes as EventsLost (pending_lost). */
	if (req->have_seqno && ev.seqno > req->last_seqno + 1)
		req->pending_lost += ev.seqno - req->last_seqno - 1;
	req->last_seqno = ev.seqno;
	req->have_seqno = true;
	maybe_ack(req, ev.seqno);
	ev.value = ev.edge == GPIOBROKER_EDGE_RISING;
	if (!has_handler(req)) {
		req->pending_lost++;
		return;
	}
	ev.lost = req->pending_lost;
	req->total_lost += ev.lost;
	req->pending_lost = 0;
	deliver(req, &ev);
}

static bool wants_initial(const struct gpiobroker_request *req)
{
	return req->is_watch || (req->handler && (req->irq_flags & GPIOBROKER_IRQ_INITIAL_STATE));
}

static void on_initial(struct gpiobroker_request *req, sd_bus_message *m)
{
	struct gpiobroker_event ev = { .type = GPIOBROKER_EVENT_INITIAL_STATE };
	uint32_t index, offset;
	int value;

	if (sd_bus_message_read(m, "uubtt", &index, &offset, &value, &ev.timestamp_ns,
				&ev.seqno) < 0 || index >= req->n_lines)
		return;
	ev.index = index;
	ev.offset = offset;
	ev.value = !!value;
	/* Its seqno is the last Event's before it: a baseline for counting gaps. */
	if (req->have_seqno && ev.seqno > req->last_seqno)
		req->pending_lost += ev.seqno - req->last_seqno;
	if (!req->have_seqno || ev.seqno > req->last_seqno)
		req->last_seqno = ev.seqno;
	req->have_seqno = true;
	if (!wants_initial(req)) {
		/* Kept (the latest per line) for a handler that asks for it later. */
		if (!req->init_value) {
			req->init_value = malloc(req->n_lines * sizeof(int));
			req->init_ts = calloc(req->n_lines, sizeof(uint64_t));
			if (!req->init_value || !req->init_ts) {
				free(req->init_value);
				free(req->init_ts);
				req->init_value = NULL;
				req->init_ts = NULL;
				return;
			}
			for (size_t i = 0; i < req->n_lines; i++)
				req->init_value[i] = -1;
		}
		req->init_value[index] = ev.value;
		req->init_ts[index] = ev.timestamp_ns;
		return;
	}
	deliver(req, &ev);
}

static int on_signal(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
	struct gpiobroker *b = userdata;
	struct gpiobroker_request *req;
	const char *member = sd_bus_message_get_member(m), *path = sd_bus_message_get_path(m);
	const char *sender = sd_bus_message_get_sender(m);
	struct gpiobroker_event ev = { 0 };

	if (!member || !path || !sender)
		return 0;
	req = find_request(b, path);
	if (!req || !req->broker_unique || strcmp(sender, req->broker_unique) != 0)
		return 0;
	if (strcmp(member, "Event") == 0) {
		on_edge(req, m);
		return 0;
	}
	if (strcmp(member, "InitialState") == 0) {
		on_initial(req, m);
		return 0;
	}
	if (strcmp(member, "EventsLost") == 0) {
		uint64_t count, total;

		if (sd_bus_message_read(m, "tt", &count, &total) >= 0)
			req->pending_lost += count;
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
	if (sd_bus_message_read(m, "s", &ev.detail) < 0 || !has_handler(req))
		return 0;
	deliver(req, &ev);
	return 0;
}

/* The broker left the bus (crash, restart, SIGTERM): every request is gone. Tell
 * each handler once; handlers may free their request, so walk carefully. */
static void follow_new_broker(struct gpiobroker *b, const char *new_owner)
{
	struct gpiobroker_event ev = { .type = GPIOBROKER_EVENT_BROKER_RESTARTED };
	bool again = true;

	/* A new broker: a new private connection to it (the old one died with the old
	 * broker), before anything is asked, so that its signals come that way. */
	if (b->want == GPIOBROKER_TRANSPORT_P2P) {
		sd_bus_error e = SD_BUS_ERROR_NULL;

		p2p_drop(b, false);
		(void)p2p_open(b, new_owner, &e);
		sd_bus_error_free(&e);
	}
	/* A broker restarted with systemd's fd store has taken our requests and watches
	 * over under the same paths: accept their signals from its unique name from now
	 * on. Asked of the new broker itself, which handles calls only once it has
	 * restored them (and sent what it sends them at once: EventsLost, InitialState,
	 * which wait in our queue until this call returns). */
	for (struct gpiobroker_request *r = b->requests; r; r = r->next) {
		sd_bus_error e = SD_BUS_ERROR_NULL;
		char *label = NULL;

		if (r->broker_unique || r->freed || !r->path)
			continue;
		/* Watches come back too (same path, same subscriber: this connection). */
		if (sd_bus_get_property_string(CONN(b), new_owner, r->path,
					       r->is_watch ? GB_IFACE_WATCH : GB_IFACE_REQUEST,
					       r->is_watch ? "Owner" : "Label", &e, &label) >= 0) {
			r->broker_unique = strdup(new_owner);
			r->restarted = r->broker_unique != NULL;
			/* The new broker numbers on where the old one stopped: a gap is what
			 * the old one numbered and never sent, lost like any other. (A broker
			 * that could not keep the numbering starts lower: no gap is counted.) */
			r->unacked = 0;
		}
		free(label);
		sd_bus_error_free(&e);
	}
	while (again) {
		again = false;
		for (struct gpiobroker_request *r = b->requests; r; r = r->next) {
			if (!r->restarted)
				continue;
			r->restarted = false;
			if (has_handler(r)) {
				deliver(r, &ev);
				again = true; /* the list may have changed */
				break;
			}
		}
	}
}

static int on_owner_changed(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
	struct gpiobroker *b = userdata;
	const char *name, *old_owner, *new_owner;
	struct gpiobroker_event ev = { .type = GPIOBROKER_EVENT_BROKER_GONE };
	bool again = true;

	if (sd_bus_message_read(m, "sss", &name, &old_owner, &new_owner) < 0)
		return 0;
	if (!*old_owner && *new_owner) {
		follow_new_broker(b, new_owner);
		return 0;
	}
	if (!*old_owner)
		return 0;
	p2p_drop(b, false);
	while (again) {
		again = false;
		for (struct gpiobroker_request *r = b->requests; r; r = r->next) {
			if (!r->broker_unique || strcmp(r->broker_unique, old_owner) != 0)
				continue;
			/* Mark first, so it is told once even if the handler keeps it. */
			free(r->broker_unique);
			r->broker_unique = NULL;
			if (has_handler(r)) {
				deliver(r, &ev);
				again = true; /* the list may have changed */
				break;
			}
		}
	}
	return 0;
}

/* --- the private connection ------------------------------------------------- */

/* epoll events for sd-bus's poll events. */
static uint32_t epoll_events(int events)
{
	return (events & POLLIN ? EPOLLIN : 0) | (events & POLLOUT ? EPOLLOUT : 0);
}

/* Keep the epoll set in step with what each connection waits for. */
static void update_epoll(struct gpiobroker *b)
{
	sd_bus *buses[2] = { b->bus, b->p2p };

	if (b->epfd < 0)
		return;
	for (int i = 0; i < 2; i++) {
		struct epoll_event ev = { 0 };
		int fd, events;

		if (!buses[i] || (fd = sd_bus_get_fd(buses[i])) < 0 ||
		    (events = sd_bus_get_events(buses[i])) < 0)
			continue;
		ev.events = epoll_events(events);
		ev.data.fd = fd;
		if (epoll_ctl(b->epfd, EPOLL_CTL_MOD, fd, &ev) < 0 && errno == ENOENT)
			epoll_ctl(b->epfd, EPOLL_CTL_ADD, fd, &ev);
	}
	/* Direct requests' line fds sit in an epoll fd of their own (direct.c), made
	 * with the first of them: nested in this one, which stays the caller's fd. */
	if (gb_direct_conn_fd(b->direct) >= 0) {
		struct epoll_event ev = { .events = EPOLLIN, .data.fd = gb_direct_conn_fd(b->direct) };

		if (epoll_ctl(b->epfd, EPOLL_CTL_MOD, ev.data.fd, &ev) < 0 && errno == ENOENT)
			epoll_ctl(b->epfd, EPOLL_CTL_ADD, ev.data.fd, &ev);
	}
}

static void p2p_drop(struct gpiobroker *b, bool flush)
{
	sd_bus *p = b->p2p;
	int fd;

	if (!p)
		return;
	b->p2p = NULL;
	for (size_t i = 0; i < sizeof(b->p2p_slots) / sizeof(b->p2p_slots[0]); i++)
		b->p2p_slots[i] = sd_bus_slot_unref(b->p2p_slots[i]);
	if (b->epfd >= 0 && (fd = sd_bus_get_fd(p)) >= 0)
		epoll_ctl(b->epfd, EPOLL_CTL_DEL, fd, NULL);
	if (flush)
		sd_bus_flush(p);
	sd_bus_close(p);
	sd_bus_unref(p);
}

static sd_bus *conn(struct gpiobroker *b)
{
	struct pollfd p;

	if (!b->p2p)
		return b->bus;
	/* A broker that went leaves our end hung up before we have read why: such a
	 * call would fail on the dead socket, where on the bus it gets the answer of
	 * whoever is there now (nobody: EHOSTDOWN; a new broker). */
	p = (struct pollfd){ .fd = sd_bus_get_fd(b->p2p), .events = POLLIN };
	if (p.fd < 0 || (poll(&p, 1, 0) > 0 && (p.revents & (POLLHUP | POLLERR | POLLNVAL))))
		p2p_drop(b, false);
	return b->p2p ? b->p2p : b->bus;
}

static int on_p2p_disconnected(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
	/* The broker went (or closed us): calls go by the bus until one is back. */
	p2p_drop(userdata, false);
	return 0;
}

/*
 * Manager.OpenConnection() to @p dest (the broker's well-known or unique name),
 * then talk over the socket it returns. The broker bound that socket to this bus
 * connection's identity; on our side it is a plain peer-to-peer sd-bus client.
 */
static int p2p_open(struct gpiobroker *b, const char *dest, sd_bus_error *e)
{
	sd_bus_message *reply = NULL;
	sd_bus *p = NULL;
	uint64_t usec;
	int r, fd = -1;

	r = sd_bus_call_method(b->bus, dest, GB_ROOT_PATH, GB_IFACE_MANAGER, "OpenConnection", e,
			       &reply, "a{sv}", 0);
	if (r >= 0)
		r = sd_bus_message_read(reply, "h", &fd);
	/* The reply owns its copy: ours must outlive it. */
	if (r >= 0 && (fd = fcntl(fd, F_DUPFD_CLOEXEC, 3)) < 0)
		r = -errno;
	sd_bus_message_unref(reply);
	if (r < 0)
		return r;
	r = sd_bus_new(&p);
	if (r < 0) {
		close(fd);
		return r;
	}
	r = sd_bus_set_fd(p, fd, fd);
	if (r < 0)
		close(fd);
	/* Nothing to prove on this socket: the broker knows who we are from the bus. */
	if (r >= 0)
		r = sd_bus_set_anonymous(p, 1);
	if (r >= 0 && sd_bus_get_method_call_timeout(b->bus, &usec) >= 0)
		r = sd_bus_set_method_call_timeout(p, usec);
	if (r >= 0)
		r = sd_bus_start(p);
	/* Done with the handshake now, while the broker surely answers: a first call
	 * made later must not find it half done. */
	if (r >= 0)
		r = sd_bus_call_method(p, GB_BUS_NAME, GB_ROOT_PATH, "org.freedesktop.DBus.Peer", "Ping", e,
				       NULL, "");
	/* No sender filter: only the broker is at the other end (it names itself
	 * anyway, and on_signal() checks that name as on the bus). */
	if (r >= 0)
		r = sd_bus_match_signal(p, &b->p2p_slots[0], NULL, NULL, GB_IFACE_REQUEST, NULL,
					on_signal, b);
	if (r >= 0)
		r = sd_bus_match_signal(p, &b->p2p_slots[1], NULL, NULL, GB_IFACE_WATCH, NULL,
					on_signal, b);
	if (r >= 0)
		r = sd_bus_match_signal(p, &b->p2p_slots[2], NULL, "/org/freedesktop/DBus/Local",
					"org.freedesktop.DBus.Local", "Disconnected",
					on_p2p_disconnected, b);
	if (r >= 0 && b->event) {
		r = sd_bus_set_close_on_exit(p, 0);
		if (r >= 0)
			r = sd_bus_attach_event(p, b->event, b->event_priority);
	}
	if (r < 0) {
		b->p2p = p;
		p2p_drop(b, false);
		return r;
	}
	b->p2p = p;
	update_epoll(b);
	return 0;
}

/* GPIOBROKER_TRANSPORT: bus, p2p, or auto (unset, empty). */
static enum gpiobroker_transport transport_from_env(void)
{
	const char *v = getenv("GPIOBROKER_TRANSPORT");

	if (v && strcmp(v, "bus") == 0)
		return GPIOBROKER_TRANSPORT_BUS;
	if (v && strcmp(v, "p2p") == 0)
		return GPIOBROKER_TRANSPORT_P2P;
	return GPIOBROKER_TRANSPORT_AUTO;
}

/* At open: the private connection if wanted and the broker gives one. */
static int transport_start(struct gpiobroker *b, enum gpiobroker_transport t)
{
	sd_bus_error e = SD_BUS_ERROR_NULL;
	struct epoll_event ev = { .events = EPOLLIN };
	int r;

	if (t == GPIOBROKER_TRANSPORT_AUTO)
		t = transport_from_env();
	b->strict = t == GPIOBROKER_TRANSPORT_P2P;
	b->want = t == GPIOBROKER_TRANSPORT_BUS ? GPIOBROKER_TRANSPORT_BUS : GPIOBROKER_TRANSPORT_P2P;
	if (b->want == GPIOBROKER_TRANSPORT_BUS)
		return 0;
	/* One fd for the caller's poll from the start, whichever way the broker's
	 * messages come later (a broker may start, restart or be upgraded). */
	b->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (b->epfd < 0)
		return -errno;
	ev.data.fd = sd_bus_get_fd(b->bus);
	if (ev.data.fd < 0 || epoll_ctl(b->epfd, EPOLL_CTL_ADD, ev.data.fd, &ev) < 0)
		return ev.data.fd < 0 ? ev.data.fd : -errno;
	r = p2p_open(b, GB_BUS_NAME, &e);
	if (r >= 0 || !b->strict || sd_bus_error_has_names(&e, "org.freedesktop.DBus.Error.ServiceUnknown",
							      "org.freedesktop.DBus.Error.NameHasNoOwner")) {
		/* Auto: an older broker (UnknownMethod) or a refusal leaves us on the bus;
		 * no broker yet: the private connection is opened when one comes. */
		sd_bus_error_free(&e);
		return 0;
	}
	return fail(b, &e, r);
}

/* --- connection -------------------------------------------------------------- */

static struct gpiobroker *adopt(sd_bus *bus, enum gpiobroker_transport transport)
{
	struct gpiobroker *b = calloc(1, sizeof(*b));
	int r;

	if (!b) {
		sd_bus_unref(bus);
		errno = ENOMEM;
		return NULL;
	}
	b->bus = bus;
	b->epfd = -1;
	/* A connection the caller already runs in an event loop: the private one
	 * joins it there. */
	if (sd_bus_get_event(bus)) {
		b->event = sd_event_ref(sd_bus_get_event(bus));
		b->event_priority = SD_EVENT_PRIORITY_NORMAL;
	}
	/* One match for all requests: signals are dispatched by path. Installed now, so
	 * no signal of a request made later can be processed before there is a match. */
	r = sd_bus_match_signal(bus, &b->signal_slot, GB_BUS_NAME, NULL, GB_IFACE_REQUEST, NULL,
				on_signal, b);
	if (r >= 0)
		r = sd_bus_add_match(bus, &b->owner_slot,
				     "type='signal',sender='org.freedesktop.DBus',"
				     "path='/org/freedesktop/DBus',interface='org.freedesktop.DBus',"
				     "member='NameOwnerChanged',arg0='" GB_BUS_NAME "'",
				     on_owner_changed, b);
	if (r >= 0)
		r = sd_bus_match_signal(bus, &b->watch_slot, GB_BUS_NAME, NULL, GB_IFACE_WATCH, NULL,
					on_signal, b);
	if (r >= 0)
		r = transport_start(b, transport);
	if (r < 0) {
		gpiobroker_close(b);
		errno = -r;
		return NULL;
	}
	return b;
}

GB_EXPORT struct gpiobroker *gpiobroker_open_transport(const char *address,
							enum gpiobroker_transport transport)
{
	sd_bus *bus = NULL;
	int r;

	if ((unsigned int)transport > GPIOBROKER_TRANSPORT_P2P) {
		errno = EINVAL;
		return NULL;
	}
	if (!address) {
		r = sd_bus_open_system(&bus);
		if (r < 0) {
			errno = -r;
			return NULL;
		}
		return adopt(bus, transport);
	}
	r = sd_bus_new(&bus);
	if (r >= 0)
		r = sd_bus_set_address(bus, address);
	if (r >= 0)
		r = sd_bus_set_bus_client(bus, 1);
	if (r >= 0)
		r = sd_bus_start(bus);
	if (r < 0) {
		sd_bus_unref(bus);
		errno = -r;
		return NULL;
	}
	return adopt(bus, transport);
}

GB_EXPORT struct gpiobroker *gpiobroker_open(void)
{
	return gpiobroker_open_transport(NULL, GPIOBROKER_TRANSPORT_AUTO);
}

GB_EXPORT struct gpiobroker *gpiobroker_open_address(const char *address)
{
	if (!address) {
		errno = EINVAL;
		return NULL;
	}
	return gpiobroker_open_transport(address, GPIOBROKER_TRANSPORT_AUTO);
}

GB_EXPORT struct gpiobroker *gpiobroker_open_bus_transport(struct sd_bus *bus,
							    enum gpiobroker_transport transport)
{
	if (!bus || (unsigned int)transport > GPIOBROKER_TRANSPORT_P2P) {
		errno = EINVAL;
		return NULL;
	}
	return adopt(sd_bus_ref(bus), transport);
}

GB_EXPORT struct gpiobroker *gpiobroker_open_bus(struct sd_bus *bus)
{
	return gpiobroker_open_bus_transport(bus, GPIOBROKER_TRANSPORT_AUTO);
}

GB_EXPORT enum gpiobroker_transport gpiobroker_get_transport(struct gpiobroker *b)
{
	return b && b->p2p ? GPIOBROKER_TRANSPORT_P2P : GPIOBROKER_TRANSPORT_BUS;
}

static void request_free_handle(struct gpiobroker_request *req);
static void cancel_pending(struct gpiobroker *b);

GB_EXPORT void gpiobroker_close(struct gpiobroker *b)
{
	if (!b)
		return;
	while (b->requests)
		request_free_handle(b->requests);
	gb_direct_conn_free(b->direct);
	cancel_pending(b);
	sd_bus_slot_unref(b->signal_slot);
	sd_bus_slot_unref(b->owner_slot);
	sd_bus_slot_unref(b->watch_slot);
	/* Flush so a Release sent just before is not lost with the connection. */
	p2p_drop(b, true);
	if (b->epfd >= 0)
		close(b->epfd);
	sd_event_unref(b->event);
	sd_bus_flush_close_unref(b->bus);
	clear_error(b);
	free(b);
}

GB_EXPORT struct sd_bus *gpiobroker_get_bus(struct gpiobroker *b)
{
	return b->bus;
}

/* --- settings ---------------------------------------------------------------- */

GB_EXPORT void gpiobroker_line_settings_init(struct gpiobroker_line_settings *s)
{
	memset(s, 0, sizeof(*s));
	s->direction = GPIOBROKER_DIRECTION_AS_IS;
	s->edge = GPIOBROKER_EDGE_NONE;
	s->bias = GPIOBROKER_BIAS_AS_IS;
	s->drive = GPIOBROKER_DRIVE_PUSH_PULL;
	s->event_clock = GPIOBROKER_CLOCK_MONOTONIC;
}

/* The broker's names for the enums; an out-of-range value is the caller's error. */
static const char *const direction_names[] = { "as-is", "input", "output" };
static const char *const edge_names[] = { "none", "rising", "falling", "both" };
static const char *const bias_names[] = { "as-is", "disabled", "pull-up", "pull-down" };
static const char *const drive_names[] = { "push-pull", "open-drain", "open-source" };
static const char *const clock_names[] = { "monotonic", "realtime", "hte" };
#define NAME_OF(table, v) ((unsigned int)(v) < sizeof(table) / sizeof(table[0]) ? table[v] : NULL)

/* Append one a{sv} of settings: only what differs from the defaults, so the broker
 * applies its own defaults (Request) or keeps the current setting (Reconfigure). */
static int append_settings(sd_bus_message *m, const struct gpiobroker_line_settings *s)
{
	const char *dir, *edge, *bias, *drive, *clk;
	int r;

	r = sd_bus_message_open_container(m, 'a', "{sv}");
	if (r < 0 || !s)
		return r < 0 ? r : sd_bus_message_close_container(m);
	dir = NAME_OF(direction_names, s->direction);
	edge = NAME_OF(edge_names, s->edge);
	bias = NAME_OF(bias_names, s->bias);
	drive = NAME_OF(drive_names, s->drive);
	clk = NAME_OF(clock_names, s->event_clock);
	if (!dir || !edge || !bias || !drive || !clk)
		return -EINVAL;
	if (s->direction != GPIOBROKER_DIRECTION_AS_IS)
		r = sd_bus_message_append(m, "{sv}", "direction", "s", dir);
	if (r >= 0 && s->direction == GPIOBROKER_DIRECTION_OUTPUT)
		r = sd_bus_message_append(m, "{sv}", "value", "b", s->value ? 1 : 0);
	if (r >= 0 && s->edge != GPIOBROKER_EDGE_NONE)
		r = sd_bus_message_append(m, "{sv}", "edge", "s", edge);
	if (r >= 0 && s->bias != GPIOBROKER_BIAS_AS_IS)
		r = sd_bus_message_append(m, "{sv}", "bias", "s", bias);
	if (r >= 0 && s->drive != GPIOBROKER_DRIVE_PUSH_PULL)
		r = sd_bus_message_append(m, "{sv}", "drive", "s", drive);
	if (r >= 0 && s->active_low)
		r = sd_bus_message_append(m, "{sv}", "active-low", "b", 1);
	if (r >= 0 && s->debounce_us)
		r = sd_bus_message_append(m, "{sv}", "debounce-us", "u", (uint32_t)s->debounce_us);
	if (r >= 0 && s->event_clock != GPIOBROKER_CLOCK_MONOTONIC)
		r = sd_bus_message_append(m, "{sv}", "event-clock", "s", clk);
	if (r >= 0)
		r = sd_bus_message_close_container(m);
	return r;
}

/* --- requests ---------------------------------------------------------------- */

static void request_free_handle(struct gpiobroker_request *req)
{
	struct gpiobroker_request **pp;

	/* The fds go at once, also from a handler: the handle may outlive this call. */
	gb_direct_req_free(req->b->direct, req->direct);
	req->direct = NULL;
	for (pp = &req->b->requests; *pp; pp = &(*pp)->next)
		if (*pp == req) {
			*pp = req->next;
			break;
		}
	if (req->replaying) {
		/* Freed from its own handler during gpiobroker_to_irq_flags(): gone from
		 * the list now, the memory when that returns. */
		req->freed = true;
		return;
	}
	for (size_t i = 0; i < req->n_lines; i++)
		free(req->chips[i]);
	free(req->chips);
	free(req->offsets);
	free(req->path);
	free(req->broker_unique);
	free(req->init_value);
	free(req->init_ts);
	free(req);
}

/* Read the request's Lines and Persistent properties into the handle. */
static int load_request(struct gpiobroker_request *req)
{
	sd_bus_error e = SD_BUS_ERROR_NULL;
	sd_bus_message *reply = NULL;
	const char *obj, *chip;
	uint32_t off;
	int r, p = 0;

	r = sd_bus_get_property(CONN(req->b), GB_BUS_NAME, req->path, GB_IFACE_REQUEST, "Lines", &e, &reply,
				"a(osu)");
	if (r < 0)
		return fail(req->b, &e, r);
	r = sd_bus_message_enter_container(reply, 'a', "(osu)");
	while (r >= 0 && (r = sd_bus_message_read(reply, "(osu)", &obj, &chip, &off)) > 0) {
		char **chips = realloc(req->chips, (req->n_lines + 1) * sizeof(*chips));
		unsigned int *offs;

		if (!chips) {
			r = -ENOMEM;
			break;
		}
		req->chips = chips;
		offs = realloc(req->offsets, (req->n_lines + 1) * sizeof(*offs));
		if (!offs) {
			r = -ENOMEM;
			break;
		}
		req->offsets = offs;
		req->chips[req->n_lines] = strdup(chip);
		if (!req->chips[req->n_lines]) {
			r = -ENOMEM;
			break;
		}
		req->offsets[req->n_lines++] = off;
	}
	/* The sender of the reply is the broker (the well-known name resolved). */
	if (r >= 0 && sd_bus_message_get_sender(reply)) {
		req->broker_unique = strdup(sd_bus_message_get_sender(reply));
		if (!req->broker_unique)
			r = -ENOMEM;
	}
	sd_bus_message_unref(reply);
	if (r < 0)
		return fail(req->b, NULL, r);
	r = sd_bus_get_property_trivial(CONN(req->b), GB_BUS_NAME, req->path, GB_IFACE_REQUEST, "Persistent",
					&e, 'b', &p);
	if (r < 0)
		return fail(req->b, &e, r);
	req->persistent = p;
	return 0;
}

static struct gpiobroker_request *new_handle(struct gpiobroker *b, const char *path, bool own)
{
	struct gpiobroker_request *req = calloc(1, sizeof(*req));
	int r;

	if (!req || !(req->path = strdup(path))) {
		free(req);
		errno = -fail(b, NULL, -ENOMEM);
		return NULL;
	}
	req->b = b;
	learn_window(b);
	/* Our own request: its seqno starts at 1, so loss counts from the start. */
	req->have_seqno = own;
	req->next = b->requests;
	b->requests = req;
	r = load_request(req);
	if (r < 0) {
		request_free_handle(req);
		errno = -r;
		return NULL;
	}
	return req;
}

/* Manager.Request's message for gpiobroker_request_array() and its async form. */
static int new_request_message(struct gpiobroker *b, sd_bus_message **out, size_t n,
			       const char *const lines[],
			       const struct gpiobroker_line_settings settings[], const char *label,
			       unsigned int flags)
{
	sd_bus_message *m = NULL;
	int r;

	/* n == 0 goes to the broker, which answers InvalidArgs with a message. */
	r = sd_bus_message_new_method_call(CONN(b), &m, GB_BUS_NAME, GB_ROOT_PATH, GB_IFACE_MANAGER, "Request");
	if (r >= 0)
		r = sd_bus_message_append(m, "s", label);
	if (r >= 0)
		r = sd_bus_message_open_container(m, 'a', "(sa{sv})");
	for (size_t i = 0; r >= 0 && i < n; i++) {
		r = sd_bus_message_open_container(m, 'r', "sa{sv}");
		if (r >= 0)
			r = sd_bus_message_append(m, "s", lines[i] ? lines[i] : "");
		if (r >= 0)
			r = append_settings(m, settings ? &settings[i] : NULL);
		if (r >= 0)
			r = sd_bus_message_close_container(m);
	}
	if (r >= 0)
		r = sd_bus_message_close_container(m);
	if (r >= 0 && (flags & GPIOBROKER_REQUEST_PERSISTENT))
		r = sd_bus_message_append(m, "a{sv}", 1, "persistent", "b", 1);
	else if (r >= 0 && (flags & GPIOBROKER_REQUEST_DIRECT))
		r = sd_bus_message_append(m, "a{sv}", 1, "direct", "b", 1);
	else if (r >= 0)
		r = sd_bus_message_append(m, "a{sv}", 0);
	if (r < 0) {
		sd_bus_message_unref(m);
		return r;
	}
	*out = m;
	return 0;
}

/* The broker answered Request with @reply: make the handle (NULL, errno set). */
static struct gpiobroker_request *request_from_reply(struct gpiobroker *b, sd_bus_message *reply)
{
	struct gpiobroker_request *req;
	const char *path;
	int r = sd_bus_message_read(reply, "o", &path);

	if (r < 0) {
		errno = -fail(b, NULL, r);
		return NULL;
	}
	req = new_handle(b, path, true);
	if (req)
		clear_error(b);
	else if (errno != ENOMEM) {
		/* Held but unusable (e.g. the broker vanished): do not leak the lines. */
		int saved = errno;

		sd_bus_call_method(CONN(b), GB_BUS_NAME, path, GB_IFACE_REQUEST, "Release", NULL, NULL, "");
		errno = saved;
	}
	return req;
}

/* A direct request: its line fds, or it is released (NULL handle, errno set). */
static int gb_direct_request_fds(struct gpiobroker_request *req)
{
	struct gpiobroker *b = req->b;
	sd_bus_error e = SD_BUS_ERROR_NULL;
	int r = gb_direct_open(&b->direct, CONN(b), req->path, req, req->n_lines, req->chips,
			       req->offsets, &req->direct, &e);

	if (r < 0) {
		r = fail(b, &e, r);
		sd_bus_call_method(b->bus, GB_BUS_NAME, req->path, GB_IFACE_REQUEST, "Release", NULL,
				   NULL, "");
		request_free_handle(req);
		errno = -r;
		return r;
	}
	return 0;
}

GB_EXPORT struct gpiobroker_request *
gpiobroker_request_array(struct gpiobroker *b, size_t n, const char *const lines[],
			 const struct gpiobroker_line_settings settings[], const char *label,
			 unsigned int flags)
{
	sd_bus_error e = SD_BUS_ERROR_NULL;
	sd_bus_message *m = NULL, *reply = NULL;
	struct gpiobroker_request *req = NULL;
	const unsigned int known = GPIOBROKER_REQUEST_PERSISTENT | GPIOBROKER_REQUEST_DIRECT |
				   GPIOBROKER_REQUEST_DIRECT_OR_BUS;
	int r;

	if (!b || !lines || !label || (flags & ~known) ||
	    ((flags & GPIOBROKER_REQUEST_PERSISTENT) && (flags & ~GPIOBROKER_REQUEST_PERSISTENT))) {
		errno = EINVAL;
		return NULL;
	}
	if (flags & GPIOBROKER_REQUEST_DIRECT_OR_BUS)
		flags |= GPIOBROKER_REQUEST_DIRECT;
	r = new_request_message(b, &m, n, lines, settings, label, flags);
	if (r >= 0)
		r = sd_bus_call(CONN(b), m, 0, &e, &reply);
	if (r < 0)
		errno = -fail(b, &e, r);
	else
		req = request_from_reply(b, reply);
	if (req && (flags & GPIOBROKER_REQUEST_DIRECT) && gb_direct_request_fds(req) < 0)
		req = NULL;
	sd_bus_message_unref(m);
	sd_bus_message_unref(reply);
	/* Refused (policy, watchers, an older broker): the same request on the bus. */
	if (!req && (flags & GPIOBROKER_REQUEST_DIRECT_OR_BUS))
		return gpiobroker_request_array(b, n, lines, settings, label, 0);
	return req;
}

GB_EXPORT struct gpiobroker_request *gpiobroker_request_output(struct gpiobroker *b,
							       const char *line, const char *label,
							       int value)
{
	struct gpiobroker_line_settings s;

	gpiobroker_line_settings_init(&s);
	s.direction = GPIOBROKER_DIRECTION_OUTPUT;
	s.value = value ? 1 : 0;
	return gpiobroker_request_array(b, 1, &line, &s, label, 0);
}

GB_EXPORT struct gpiobroker_request *gpiobroker_request_input(struct gpiobroker *b,
							      const char *line, const char *label,
							      enum gpiobroker_edge edges)
{
	struct gpiobroker_line_settings s;

	if ((unsigned int)edges > GPIOBROKER_EDGE_BOTH) {
		/* Recorded, so no earlier broker error is mistaken for this one. */
		errno = b ? -fail(b, NULL, -EINVAL) : EINVAL;
		return NULL;
	}
	gpiobroker_line_settings_init(&s);
	s.direction = GPIOBROKER_DIRECTION_INPUT;
	s.edge = edges;
	return gpiobroker_request_array(b, 1, &line, &s, label, 0);
}

/* An asynchronous Request in flight: cancelled (slot unref'ed, handler never run)
 * when the connection closes first. */
struct pending_request {
	struct gpiobroker *b;
	struct pending_request *next;
	sd_bus_slot *slot;
	gpiobroker_request_handler handler;
	void *userdata;
};

static void pending_unlink(struct pending_request *p)
{
	for (struct pending_request **pp = &p->b->pending; *pp; pp = &(*pp)->next)
		if (*pp == p) {
			*pp = p->next;
			break;
		}
}

static int on_request_reply(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error)
{
	struct pending_request *p = userdata;
	struct gpiobroker *b = p->b;
	struct gpiobroker_request *req = NULL;
	gpiobroker_request_handler handler = p->handler;
	void *ud = p->userdata;
	int err = 0;

	/* Done with the slot before the handler runs: it may close the connection. */
	pending_unlink(p);
	sd_bus_slot_unref(p->slot);
	free(p);
	if (sd_bus_message_is_method_error(reply, NULL)) {
		sd_bus_error e = SD_BUS_ERROR_NULL;

		sd_bus_error_copy(&e, sd_bus_message_get_error(reply));
		err = fail(b, &e, -EIO);
	} else {
		req = request_from_reply(b, reply);
		if (!req)
			err = -errno;
	}
	handler(b, req, err, ud);
	return 0;
}

static void cancel_pending(struct gpiobroker *b)
{
	while (b->pending) {
		struct pending_request *p = b->pending;

		b->pending = p->next;
		sd_bus_slot_unref(p->slot);
		free(p);
	}
}

GB_EXPORT int gpiobroker_request_array_async(struct gpiobroker *b, size_t n,
					     const char *const lines[],
					     const struct gpiobroker_line_settings settings[],
					     const char *label, unsigned int flags,
					     gpiobroker_request_handler handler, void *userdata)
{
	struct pending_request *p;
	sd_bus_message *m = NULL;
	int r;

	if (!b)
		return -EINVAL;
	/* Not direct: its fds would be one more blocking call in the reply handler. */
	if (!lines || !label || !handler || (flags & ~GPIOBROKER_REQUEST_PERSISTENT))
		return fail(b, NULL, -EINVAL);
	p = calloc(1, sizeof(*p));
	if (!p)
		return fail(b, NULL, -ENOMEM);
	/* Asked now, while blocking is still allowed: the reply handler needs it. */
	learn_window(b);
	r = new_request_message(b, &m, n, lines, settings, label, flags);
	if (r >= 0)
		r = sd_bus_call_async(CONN(b), &p->slot, m, on_request_reply, p, 0);
	sd_bus_message_unref(m);
	if (r < 0) {
		free(p);
		return fail(b, NULL, r);
	}
	p->b = b;
	p->handler = handler;
	p->userdata = userdata;
	p->next = b->pending;
	b->pending = p;
	clear_error(b);
	return 0;
}

GB_EXPORT struct gpiobroker_request *gpiobroker_request(struct gpiobroker *b, const char *line,
							const char *label,
							const struct gpiobroker_line_settings *s)
{
	return gpiobroker_request_array(b, 1, &line, s, label, 0);
}

GB_EXPORT struct gpiobroker_request *gpiobroker_request_open(struct gpiobroker *b, const char *path)
{
	struct gpiobroker_request *req;

	if (!b || !path || !sd_bus_object_path_is_valid(path)) {
		errno = EINVAL;
		return NULL;
	}
	req = new_handle(b, path, false);
	if (req)
		clear_error(b);
	return req;
}

GB_EXPORT int gpiobroker_free(struct gpiobroker_request *req)
{
	sd_bus_error e = SD_BUS_ERROR_NULL;
	struct gpiobroker *b;
	int r;

	if (!req)
		return 0;
	b = req->b;
	/* Our copies of the line fds first: when Release returns, the kernel has the
	 * lines back, not still held by them. */
	gb_direct_req_free(b->direct, req->direct);
	req->direct = NULL;
	r = sd_bus_call_method(CONN(b), GB_BUS_NAME, req->path, GB_IFACE_REQUEST, "Release", &e, NULL, "");
	request_free_handle(req);
	if (r < 0)
		return fail(b, &e, r);
	clear_error(b);
	return 0;
}

GB_EXPORT void gpiobroker_request_close(struct gpiobroker_request *req)
{
	if (req)
		request_free_handle(req);
}

GB_EXPORT const char *gpiobroker_request_get_path(const struct gpiobroker_request *req)
{
	return req->path;
}

GB_EXPORT size_t gpiobroker_request_get_num_lines(const struct gpiobroker_request *req)
{
	return req->n_lines;
}

GB_EXPORT const char *gpiobroker_request_get_chip(const struct gpiobroker_request *req, size_t index)
{
	if (index >= req->n_lines) {
		errno = EINVAL;
		return NULL;
	}
	return req->chips[index];
}

GB_EXPORT int gpiobroker_request_get_offset(const struct gpiobroker_request *req, size_t index)
{
	return index < req->n_lines ? (int)req->offsets[index] : -EINVAL;
}

GB_EXPORT bool gpiobroker_request_is_persistent(const struct gpiobroker_request *req)
{
	return req->persistent;
}

GB_EXPORT bool gpiobroker_request_is_direct(const struct gpiobroker_request *req)
{
	return req->direct != NULL;
}

GB_EXPORT struct gpiobroker *gpiobroker_request_get_broker(const struct gpiobroker_request *req)
{
	return req->b;
}

/* --- values -------------------------------------------------------------------- */

/* Finish a call built in @m: send it, record the outcome. */
static int call(struct gpiobroker *b, sd_bus_message *m, int r, sd_bus_message **reply)
{
	sd_bus_error e = SD_BUS_ERROR_NULL;

	/* On the connection the message was made for: conn() may have dropped the
	 * private one since. */
	if (r >= 0)
		r = sd_bus_call(sd_bus_message_get_bus(m), m, 0, &e, reply);
	sd_bus_message_unref(m);
	if (r < 0)
		return fail(b, &e, r);
	clear_error(b);
	return 0;
}

/* Index i of a multi-line call: idx[i], or i when idx is NULL. */
#define IDX(idx, i) ((uint32_t)((idx) ? (idx)[i] : (i)))

static bool disconnected(int r)
{
	return r == -ECONNRESET || r == -ENOTCONN || r == -EPIPE || r == -ESHUTDOWN;
}

/*
 * GetValues (au, values NULL) and SetValues / SetDirectionOutput (a(ub)): the calls
 * made most. They skip conn()'s check that the private connection is alive (a
 * system call each time, as much as a third of a round trip on a small board);
 * what they do can be done twice, so one that finds the connection dead (the broker
 * went) simply goes again over the bus, to whoever is the broker now.
 */
static int call_values(struct gpiobroker_request *req, const char *method, size_t n,
		       const unsigned int idx[], const int values[], sd_bus_message **reply)
{
	struct gpiobroker *b = req->b;
	int r;

	for (int attempt = 0;; attempt++) {
		sd_bus *bus = attempt ? CONN(b) : b->p2p && sd_bus_is_open(b->p2p) > 0 ? b->p2p : CONN(b);
		sd_bus_error e = SD_BUS_ERROR_NULL;
		sd_bus_message *m = NULL;

		r = sd_bus_message_new_method_call(bus, &m, GB_BUS_NAME, req->path, GB_IFACE_REQUEST, method);
		if (r >= 0)
			r = sd_bus_message_open_container(m, 'a', values ? "(ub)" : "u");
		for (size_t i = 0; r >= 0 && i < n; i++)
			r = values ? sd_bus_message_append(m, "(ub)", IDX(idx, i), values[i] ? 1 : 0) :
				     sd_bus_message_append(m, "u", IDX(idx, i));
		if (r >= 0)
			r = sd_bus_message_close_container(m);
		if (r >= 0)
			r = sd_bus_call(bus, m, 0, &e, reply);
		sd_bus_message_unref(m);
		/* Not an answer: the connection itself went (sd-bus has closed it). */
		if (r < 0 && !attempt && bus == b->p2p && disconnected(r) && sd_bus_is_open(bus) <= 0) {
			sd_bus_error_free(&e);
			p2p_drop(b, false);
			continue;
		}
		if (r < 0)
			return fail(b, &e, r);
		clear_error(b);
		return 0;
	}
}

/* SetValues / SetDirectionOutput: a(ub). */
static int call_index_values(struct gpiobroker_request *req, const char *method, size_t n,
			     const unsigned int idx[], const int values[])
{
	int r;

	if (!values && n)
		return -EINVAL;
	if (req->direct && strcmp(method, "SetValues") == 0) {
		r = gb_direct_set(req->direct, n, idx, values);
		return r < 0 ? fail(req->b, NULL, r) : (clear_error(req->b), 0);
	}
	return call_values(req, method, n, idx, values ? values : (const int[]){ 0 }, NULL);
}

GB_EXPORT int gpiobroker_direction_input(struct gpiobroker_request *req, unsigned int index)
{
	sd_bus_error e = SD_BUS_ERROR_NULL;
	int r = sd_bus_call_method(CONN(req->b), GB_BUS_NAME, req->path, GB_IFACE_REQUEST, "SetDirectionInput",
				   &e, NULL, "au", 1, (uint32_t)index);

	if (r < 0)
		return fail(req->b, &e, r);
	clear_error(req->b);
	return 0;
}

GB_EXPORT int gpiobroker_direction_output(struct gpiobroker_request *req, unsigned int index,
					  int value)
{
	return call_index_values(req, "SetDirectionOutput", 1, &index, &value);
}

GB_EXPORT int gpiobroker_set_values(struct gpiobroker_request *req, size_t n,
				    const unsigned int idx[], const int values[])
{
	return call_index_values(req, "SetValues", n, idx, values);
}

GB_EXPORT int gpiobroker_set_value(struct gpiobroker_request *req, unsigned int index, int value)
{
	return gpiobroker_set_values(req, 1, &index, &value);
}

GB_EXPORT int gpiobroker_get_values(struct gpiobroker_request *req, size_t n,
				    const unsigned int idx[], int values[])
{
	sd_bus_message *reply = NULL;
	size_t got = 0;
	int r, v;

	if (!values || n == 0)
		return -EINVAL;
	if (req->direct) {
		r = gb_direct_get(req->direct, n, idx, values);
		return r < 0 ? fail(req->b, NULL, r) : (clear_error(req->b), 0);
	}
	/* Always explicit indices: an empty array would mean "all", which is n lines
	 * only if the caller counted right. */
	r = call_values(req, "GetValues", n, idx, NULL, &reply);
	if (r < 0)
		return r;
	r = sd_bus_message_enter_container(reply, 'a', "b");
	while (r >= 0 && got < n && (r = sd_bus_message_read(reply, "b", &v)) > 0)
		values[got++] = v ? 1 : 0;
	sd_bus_message_unref(reply);
	if (r >= 0 && got != n)
		r = -EBADMSG;
	return r < 0 ? fail(req->b, NULL, r) : 0;
}

GB_EXPORT int gpiobroker_get_value(struct gpiobroker_request *req, unsigned int index)
{
	int v, r = gpiobroker_get_values(req, 1, &index, &v);

	return r < 0 ? r : v;
}

GB_EXPORT int gpiobroker_reconfigure(struct gpiobroker_request *req, size_t n,
				     const unsigned int idx[],
				     const struct gpiobroker_line_settings settings[])
{
	sd_bus_message *m = NULL;
	int r;

	if (!settings)
		return -EINVAL;
	r = sd_bus_message_new_method_call(CONN(req->b), &m, GB_BUS_NAME, req->path, GB_IFACE_REQUEST,
					   "Reconfigure");
	if (r >= 0)
		r = sd_bus_message_open_container(m, 'a', "(ua{sv})");
	for (size_t i = 0; r >= 0 && i < n; i++) {
		r = sd_bus_message_open_container(m, 'r', "ua{sv}");
		if (r >= 0)
			r = sd_bus_message_append(m, "u", IDX(idx, i));
		if (r >= 0)
			r = append_settings(m, &settings[i]);
		if (r >= 0)
			r = sd_bus_message_close_container(m);
	}
	if (r >= 0)
		r = sd_bus_message_close_container(m);
	return call(req->b, m, r, NULL);
}

/* --- events ---------------------------------------------------------------------- */

/* The broker sends a direct request no InitialState: the levels are read here, of
 * every line (which of them detect edges is the broker's record, not ours). */
static void direct_initial_state(struct gpiobroker_request *req)
{
	int *vals = malloc(req->n_lines * sizeof(int));
	uint64_t *ts = calloc(req->n_lines, sizeof(uint64_t));
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	if (!vals || !ts || gb_direct_get(req->direct, req->n_lines, NULL, vals) < 0) {
		free(vals);
		free(ts);
		return;
	}
	for (size_t i = 0; i < req->n_lines; i++)
		ts[i] = (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
	req->init_value = vals;
	req->init_ts = ts;
}

bool gb_direct_deliver_edge(struct gpiobroker_request *req, unsigned int index,
			    unsigned int offset, bool rising, uint64_t timestamp_ns,
			    uint64_t global_seqno, uint64_t line_seqno, uint64_t kernel_lost)
{
	struct gpiobroker_event ev = {
		.type = GPIOBROKER_EVENT_EDGE, .index = index, .offset = offset,
		.edge = rising ? GPIOBROKER_EDGE_RISING : GPIOBROKER_EDGE_FALLING,
		.value = rising, .timestamp_ns = timestamp_ns, .global_seqno = global_seqno,
		.line_seqno = line_seqno,
	};
	bool freed;

	/* Numbered here as the broker numbers what it sends (1, 2, ...); the kernel's
	 * own gaps are the loss. */
	req->pending_lost += kernel_lost;
	ev.seqno = ++req->last_seqno;
	req->have_seqno = true;
	if (!req->handler || req->replaying) {
		req->pending_lost++;
		return true;
	}
	ev.lost = req->pending_lost;
	req->total_lost += ev.lost;
	req->pending_lost = 0;
	req->replaying = true;
	deliver(req, &ev);
	req->replaying = false;
	freed = req->freed;
	if (freed)
		request_free_handle(req);
	return !freed;
}

GB_EXPORT int gpiobroker_to_irq(struct gpiobroker_request *req, gpiobroker_irq_handler handler,
				void *userdata)
{
	return gpiobroker_to_irq_flags(req, handler, userdata, 0);
}

GB_EXPORT int gpiobroker_to_irq_flags(struct gpiobroker_request *req,
				      gpiobroker_irq_handler handler, void *userdata,
				      unsigned int flags)
{
	sd_bus_error e = SD_BUS_ERROR_NULL;
	int r;

	if (flags & ~GPIOBROKER_IRQ_INITIAL_STATE)
		return -EINVAL;
	req->irq_flags = flags;

	if (handler && req->persistent && !req->handler) {
		/* Events of a persistent request go to its last subscriber. */
		r = sd_bus_call_method(CONN(req->b), GB_BUS_NAME, req->path, GB_IFACE_REQUEST, "Subscribe",
				       &e, NULL, "");
		if (r < 0)
			return fail(req->b, &e, r);
	}
	req->handler = handler;
	req->userdata = userdata;
	clear_error(req->b);
	if (handler && (flags & GPIOBROKER_IRQ_INITIAL_STATE) && req->direct && !req->init_value)
		direct_initial_state(req);
	if (handler && (flags & GPIOBROKER_IRQ_INITIAL_STATE) && req->init_value) {
		/* The initial states came first; the handler hears them first. */
		int *vals = req->init_value;
		uint64_t *ts = req->init_ts;

		req->init_value = NULL;
		req->init_ts = NULL;
		/* The handler may free the request: the handle then only goes once the
		 * loop is done (request_free_handle() sees replaying). */
		req->replaying = true;
		for (size_t i = 0; i < req->n_lines && !req->freed; i++) {
			struct gpiobroker_event ev = {
				.type = GPIOBROKER_EVENT_INITIAL_STATE, .index = i,
				.offset = req->offsets[i], .value = vals[i], .timestamp_ns = ts[i],
				.seqno = req->last_seqno,
			};

			if (vals[i] >= 0)
				deliver(req, &ev);
		}
		req->replaying = false;
		if (req->freed)
			request_free_handle(req);
		free(vals);
		free(ts);
	}
	return 0;
}

GB_EXPORT bool gpiobroker_event_is_initial(const struct gpiobroker_event *ev)
{
	return ev->type == GPIOBROKER_EVENT_INITIAL_STATE;
}

GB_EXPORT int gpiobroker_event_get_value(const struct gpiobroker_event *ev)
{
	if (ev->type != GPIOBROKER_EVENT_EDGE && ev->type != GPIOBROKER_EVENT_INITIAL_STATE)
		return -EINVAL;
	return ev->value;
}

/* --- watches ----------------------------------------------------------------------- */

#define REQ(w) ((struct gpiobroker_request *)(w))

GB_EXPORT struct gpiobroker_watch *gpiobroker_watch(struct gpiobroker *b, const char *line,
						   gpiobroker_watch_handler handler,
						   void *userdata)
{
	sd_bus_error e = SD_BUS_ERROR_NULL;
	sd_bus_message *reply = NULL;
	struct gpiobroker_request *req;
	char *chip = NULL;
	unsigned int offset;
	const char *path;
	int r;

	if (!b || !line || !handler) {
		errno = EINVAL;
		return NULL;
	}
	/* Where the line is first: the handle must be complete before the first
	 * signal (InitialState, right after the reply) is processed. */
	r = gpiobroker_find_line(b, line, NULL, &chip, &offset);
	if (r < 0) {
		errno = -r;
		return NULL;
	}
	learn_window(b);
	r = sd_bus_call_method(CONN(b), GB_BUS_NAME, GB_ROOT_PATH, GB_IFACE_MANAGER, "Watch", &e, &reply,
			       "sa{sv}", line, 0);
	if (r >= 0)
		r = sd_bus_message_read(reply, "o", &path);
	if (r < 0) {
		free(chip);
		sd_bus_message_unref(reply);
		errno = -fail(b, &e, r);
		return NULL;
	}
	req = calloc(1, sizeof(*req));
	if (req) {
		req->b = b;
		req->is_watch = true;
		req->whandler = handler;
		req->userdata = userdata;
		req->have_seqno = true; /* ours from the start */
		req->n_lines = 1;
		req->path = strdup(path);
		req->broker_unique = sd_bus_message_get_sender(reply) ?
				     strdup(sd_bus_message_get_sender(reply)) : NULL;
		req->chips = calloc(1, sizeof(char *));
		req->offsets = calloc(1, sizeof(unsigned int));
	}
	if (!req || !req->path || !req->broker_unique || !req->chips || !req->offsets) {
		sd_bus_call_method(CONN(b), GB_BUS_NAME, path, GB_IFACE_WATCH, "Close", NULL, NULL, "");
		sd_bus_message_unref(reply);
		if (req) {
			free(req->path);
			free(req->broker_unique);
			free(req->chips);
			free(req->offsets);
			free(req);
		}
		free(chip);
		errno = -fail(b, NULL, -ENOMEM);
		return NULL;
	}
	sd_bus_message_unref(reply);
	req->chips[0] = chip;
	req->offsets[0] = offset;
	req->next = b->requests;
	b->requests = req;
	clear_error(b);
	return (struct gpiobroker_watch *)req;
}

GB_EXPORT int gpiobroker_watch_close(struct gpiobroker_watch *w)
{
	sd_bus_error e = SD_BUS_ERROR_NULL;
	struct gpiobroker *b;
	int r;

	if (!w)
		return 0;
	b = REQ(w)->b;
	r = sd_bus_call_method(CONN(b), GB_BUS_NAME, REQ(w)->path, GB_IFACE_WATCH, "Close", &e, NULL, "");
	request_free_handle(REQ(w));
	if (r < 0)
		return fail(b, &e, r);
	clear_error(b);
	return 0;
}

GB_EXPORT const char *gpiobroker_watch_get_path(const struct gpiobroker_watch *w)
{
	return REQ(w)->path;
}

GB_EXPORT const char *gpiobroker_watch_get_chip(const struct gpiobroker_watch *w)
{
	return REQ(w)->chips[0];
}

GB_EXPORT unsigned int gpiobroker_watch_get_offset(const struct gpiobroker_watch *w)
{
	return REQ(w)->offsets[0];
}

GB_EXPORT uint64_t gpiobroker_watch_get_events_lost(const struct gpiobroker_watch *w)
{
	return REQ(w)->total_lost;
}

GB_EXPORT struct gpiobroker *gpiobroker_watch_get_broker(const struct gpiobroker_watch *w)
{
	return REQ(w)->b;
}

GB_EXPORT uint64_t gpiobroker_request_get_events_lost(const struct gpiobroker_request *req)
{
	return req->total_lost;
}

GB_EXPORT enum gpiobroker_event_type gpiobroker_event_get_type(const struct gpiobroker_event *ev)
{
	return ev->type;
}

GB_EXPORT unsigned int gpiobroker_event_get_index(const struct gpiobroker_event *ev)
{
	return ev->index;
}

GB_EXPORT unsigned int gpiobroker_event_get_offset(const struct gpiobroker_event *ev)
{
	return ev->offset;
}

GB_EXPORT enum gpiobroker_edge gpiobroker_event_get_edge(const struct gpiobroker_event *ev)
{
	return ev->edge;
}

GB_EXPORT uint64_t gpiobroker_event_get_timestamp_ns(const struct gpiobroker_event *ev)
{
	return ev->timestamp_ns;
}

GB_EXPORT uint64_t gpiobroker_event_get_global_seqno(const struct gpiobroker_event *ev)
{
	return ev->global_seqno;
}

GB_EXPORT uint64_t gpiobroker_event_get_line_seqno(const struct gpiobroker_event *ev)
{
	return ev->line_seqno;
}

GB_EXPORT uint64_t gpiobroker_event_get_seqno(const struct gpiobroker_event *ev)
{
	return ev->seqno;
}

GB_EXPORT uint64_t gpiobroker_event_get_lost(const struct gpiobroker_event *ev)
{
	return ev->lost;
}

GB_EXPORT const char *gpiobroker_event_get_detail(const struct gpiobroker_event *ev)
{
	return ev->detail;
}

/* --- event loop -------------------------------------------------------------------- */

/* With a private connection possible, the caller polls an epoll fd holding both
 * connections' fds (see transport_start()); otherwise the bus connection's own. */
GB_EXPORT int gpiobroker_get_fd(struct gpiobroker *b)
{
	int fd = gb_direct_conn_fd(b->direct);

	/* The epoll fd of the connections holds the direct requests' one too. */
	if (b->epfd >= 0)
		return b->epfd;
	return fd >= 0 ? fd : sd_bus_get_fd(b->bus);
}

GB_EXPORT int gpiobroker_get_events(struct gpiobroker *b)
{
	if (b->epfd < 0 && gb_direct_conn_fd(b->direct) < 0)
		return sd_bus_get_events(b->bus);
	if (gb_direct_conn_fd(b->direct) >= 0) {
		int r = gb_direct_conn_events(b->direct, b->bus);

		if (r < 0)
			return r;
	}
	update_epoll(b);
	return POLLIN;
}

GB_EXPORT int gpiobroker_get_timeout(struct gpiobroker *b, uint64_t *usec)
{
	uint64_t t = UINT64_MAX;
	int r = sd_bus_get_timeout(b->bus, usec);

	if (r >= 0 && b->p2p && sd_bus_get_timeout(b->p2p, &t) >= 0 && t < *usec)
		*usec = t;
	return r;
}

GB_EXPORT int gpiobroker_process(struct gpiobroker *b)
{
	bool busy = true;
	int n = 0, r;

	/* sd_bus_process() handles one message per call. */
	while (busy) {
		busy = false;
		r = sd_bus_process(b->bus, NULL);
		if (r < 0)
			return r;
		if (r > 0) {
			n++;
			busy = true;
		}
		if (!b->p2p)
			continue;
		r = sd_bus_process(b->p2p, NULL);
		if (r < 0)
			/* The broker went: not the caller's error, the bus says the rest. */
			p2p_drop(b, false);
		else if (r > 0) {
			n++;
			busy = true;
		}
	}
	if (b->direct) {
		r = gb_direct_process(b->direct);
		if (r < 0)
			return r;
		n += r;
	}
	update_epoll(b);
	return n;
}

GB_EXPORT int gpiobroker_wait(struct gpiobroker *b, uint64_t timeout_us)
{
	struct pollfd p;
	uint64_t until = UINT64_MAX;
	struct timespec ts;
	int r, ms = -1;

	if (b->epfd < 0 && gb_direct_conn_fd(b->direct) < 0)
		return sd_bus_wait(b->bus, timeout_us);
	r = gpiobroker_get_timeout(b, &until);
	if (r < 0)
		return r;
	if (until != UINT64_MAX) {
		uint64_t now;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		now = (uint64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
		if (until <= now)
			return 1; /* something is queued already */
		if (until - now < timeout_us)
			timeout_us = until - now;
	}
	if (timeout_us != UINT64_MAX)
		ms = timeout_us / 1000 > 0x7fffffff ? 0x7fffffff : (int)((timeout_us + 999) / 1000);
	/* One fd holds every connection and line fd, each waiting for what it needs. */
	r = gpiobroker_get_events(b);
	if (r < 0)
		return r;
	p = (struct pollfd){ .fd = gpiobroker_get_fd(b), .events = POLLIN };
	r = poll(&p, 1, ms);
	return r < 0 ? -errno : r;
}

GB_EXPORT int gpiobroker_attach_event(struct gpiobroker *b, struct sd_event *e, int priority)
{
	/* sd-bus closes an attached connection when the loop exits; that would release
	 * every managed request behind the caller's back. The caller closes it. */
	int r = sd_bus_set_close_on_exit(b->bus, 0);

	if (r >= 0)
		r = sd_bus_attach_event(b->bus, e, priority);
	if (r < 0)
		return r;
	/* Kept for a private connection opened later (after a broker restart). */
	sd_event_unref(b->event);
	b->event = sd_event_ref(sd_bus_get_event(b->bus));
	b->event_priority = priority;
	if (b->p2p) {
		r = sd_bus_set_close_on_exit(b->p2p, 0);
		if (r >= 0)
			r = sd_bus_attach_event(b->p2p, b->event, priority);
	}
	/* The line fds of direct requests, now and later, go to the same loop. */
	if (r >= 0)
		r = gb_direct_attach_event(&b->direct, b->event, priority);
	return r;
}

GB_EXPORT int gpiobroker_detach_event(struct gpiobroker *b)
{
	gb_direct_detach_event(b->direct);
	b->event = sd_event_unref(b->event);
	if (b->p2p)
		sd_bus_detach_event(b->p2p);
	return sd_bus_detach_event(b->bus);
}

/* --- lookup -------------------------------------------------------------------------- */

GB_EXPORT int gpiobroker_find_line(struct gpiobroker *b, const char *line, char **path,
				   char **chip, unsigned int *offset)
{
	sd_bus_error e = SD_BUS_ERROR_NULL;
	sd_bus_message *reply = NULL;
	const char *p, *c;
	uint32_t off;
	int r;

	r = sd_bus_call_method(CONN(b), GB_BUS_NAME, GB_ROOT_PATH, GB_IFACE_MANAGER, "FindLine", &e, &reply, "s",
			       line ? line : "");
	if (r < 0)
		return fail(b, &e, r);
	r = sd_bus_message_read(reply, "osu", &p, &c, &off);
	if (r >= 0 && path && !(*path = strdup(p)))
		r = -ENOMEM;
	if (r >= 0 && chip && !(*chip = strdup(c))) {
		if (path) {
			free(*path);
			*path = NULL;
		}
		r = -ENOMEM;
	}
	if (r >= 0 && offset)
		*offset = off;
	sd_bus_message_unref(reply);
	if (r < 0)
		return fail(b, NULL, r);
	clear_error(b);
	return 0;
}

GB_EXPORT void gpiobroker_request_info_free(struct gpiobroker_request_info *info, size_t n)
{
	if (!info)
		return;
	for (size_t i = 0; i < n; i++) {
		free(info[i].path);
		free(info[i].label);
		free(info[i].owner);
	}
	free(info);
}

GB_EXPORT int gpiobroker_list_requests(struct gpiobroker *b, struct gpiobroker_request_info **out)
{
	sd_bus_error e = SD_BUS_ERROR_NULL;
	sd_bus_message *reply = NULL;
	struct gpiobroker_request_info *info = NULL;
	const char *path, *label, *owner;
	uint32_t uid;
	size_t n = 0;
	int r, persistent;

	r = sd_bus_call_method(CONN(b), GB_BUS_NAME, GB_ROOT_PATH, GB_IFACE_MANAGER, "ListRequests", &e, &reply, "");
	if (r < 0)
		return fail(b, &e, r);
	r = sd_bus_message_enter_container(reply, 'a', "(osbus)");
	while (r >= 0 &&
	       (r = sd_bus_message_read(reply, "(osbus)", &path, &label, &persistent, &uid, &owner)) > 0) {
		struct gpiobroker_request_info *bigger = realloc(info, (n + 1) * sizeof(*info));

		if (!bigger) {
			r = -ENOMEM;
			break;
		}
		info = bigger;
		info[n] = (struct gpiobroker_request_info){
			.path = strdup(path), .label = strdup(label), .persistent = persistent,
			.owner_uid = uid, .owner = strdup(owner),
		};
		n++;
		if (!info[n - 1].path || !info[n - 1].label || !info[n - 1].owner)
			r = -ENOMEM;
	}
	sd_bus_message_unref(reply);
	if (r < 0) {
		gpiobroker_request_info_free(info, n);
		return fail(b, NULL, r);
	}
	clear_error(b);
	*out = info;
	return (int)n;
}

/* --- version and call timeout ---------------------------------------------------------- */

GB_EXPORT const char *gpiobroker_version(void)
{
	return PACKAGE_VERSION;
}

GB_EXPORT int gpiobroker_set_call_timeout(struct gpiobroker *b, uint64_t usec)
{
	if (!b)
		return -EINVAL;
	/* sd-bus takes 0 as "its default": the same meaning as ours. */
	if (b->p2p)
		sd_bus_set_method_call_timeout(b->p2p, usec);
	return sd_bus_set_method_call_timeout(b->bus, usec);
}

GB_EXPORT uint64_t gpiobroker_get_call_timeout(struct gpiobroker *b)
{
	uint64_t usec = 0;

	if (!b || sd_bus_get_method_call_timeout(b->bus, &usec) < 0)
		return 0;
	return usec;
}

/* --- line info ------------------------------------------------------------------------- */

struct gpiobroker_line_info {
	char *path, *chip, *name, *consumer, *alias, *request_label;
	unsigned int offset;
	bool used;
	enum gpiobroker_direction direction;
};

struct gpiobroker_line_info_watch {
	struct gpiobroker *b;
	sd_bus_slot *slot;
	char *path, *chip;
	unsigned int offset;
	gpiobroker_line_info_handler handler;
	void *userdata;
};

GB_EXPORT void gpiobroker_line_info_free(struct gpiobroker_line_info *info)
{
	if (!info)
		return;
	free(info->path);
	free(info->chip);
	free(info->name);
	free(info->consumer);
	free(info->alias);
	free(info->request_label);
	free(info);
}

static int dup_str(char **dst, const char *src)
{
	char *c = strdup(src ? src : "");

	if (!c)
		return -ENOMEM;
	free(*dst);
	*dst = c;
	return 0;
}

/* Properties.GetAll of the Line object at @path into a new info. */
static struct gpiobroker_line_info *read_line_info(struct gpiobroker *b, const char *path,
						   const char *chip, unsigned int offset, int *ret)
{
	sd_bus_error e = SD_BUS_ERROR_NULL;
	sd_bus_message *reply = NULL;
	struct gpiobroker_line_info *info = calloc(1, sizeof(*info));
	int r;

	if (!info) {
		*ret = fail(b, NULL, -ENOMEM);
		return NULL;
	}
	info->offset = offset;
	r = dup_str(&info->path, path);
	if (r >= 0)
		r = dup_str(&info->chip, chip);
	if (r >= 0)
		r = sd_bus_call_method(CONN(b), GB_BUS_NAME, path, "org.freedesktop.DBus.Properties", "GetAll", &e,
				       &reply, "s", GB_IFACE_LINE);
	if (r >= 0)
		r = sd_bus_message_enter_container(reply, 'a', "{sv}");
	while (r >= 0 && (r = sd_bus_message_enter_container(reply, 'e', "sv")) > 0) {
		const char *key, *str;
		char **dst = NULL;
		int bval;

		r = sd_bus_message_read(reply, "s", &key);
		if (r < 0)
			break;
		if (strcmp(key, "Used") == 0) {
			r = sd_bus_message_read(reply, "v", "b", &bval);
			info->used = bval;
		} else if (strcmp(key, "Direction") == 0) {
			r = sd_bus_message_read(reply, "v", "s", &str);
			if (r >= 0)
				info->direction = strcmp(str, "output") == 0 ? GPIOBROKER_DIRECTION_OUTPUT :
						  strcmp(str, "input") == 0 ? GPIOBROKER_DIRECTION_INPUT :
									      GPIOBROKER_DIRECTION_AS_IS;
		} else if (strcmp(key, "Name") == 0 || strcmp(key, "Consumer") == 0 ||
			   strcmp(key, "Alias") == 0 || strcmp(key, "RequestLabel") == 0) {
			dst = key[0] == 'N' ? &info->name : key[0] == 'C' ? &info->consumer :
			      key[0] == 'A' ? &info->alias : &info->request_label;
			r = sd_bus_message_read(reply, "v", "s", &str);
			if (r >= 0)
				r = dup_str(dst, str);
		} else {
			r = sd_bus_message_skip(reply, "v");
		}
		if (r >= 0)
			r = sd_bus_message_exit_container(reply);
	}
	sd_bus_message_unref(reply);
	/* A broker without one of them still gives a usable info: "" not NULL. */
	if (r >= 0)
		r = dup_str(&info->name, info->name);
	if (r >= 0)
		r = dup_str(&info->consumer, info->consumer);
	if (r >= 0)
		r = dup_str(&info->alias, info->alias);
	if (r >= 0)
		r = dup_str(&info->request_label, info->request_label);
	if (r < 0) {
		gpiobroker_line_info_free(info);
		*ret = fail(b, &e, r);
		return NULL;
	}
	clear_error(b);
	*ret = 0;
	return info;
}

GB_EXPORT struct gpiobroker_line_info *gpiobroker_line_info_get(struct gpiobroker *b,
								const char *line)
{
	struct gpiobroker_line_info *info;
	char *path = NULL, *chip = NULL;
	unsigned int offset;
	int r;

	if (!b || !line) {
		errno = b ? -fail(b, NULL, -EINVAL) : EINVAL;
		return NULL;
	}
	r = gpiobroker_find_line(b, line, &path, &chip, &offset);
	if (r < 0) {
		errno = -r;
		return NULL;
	}
	info = read_line_info(b, path, chip, offset, &r);
	free(path);
	free(chip);
	if (!info)
		errno = -r;
	return info;
}

GB_EXPORT bool gpiobroker_line_info_is_used(const struct gpiobroker_line_info *info)
{
	return info->used;
}

GB_EXPORT const char *gpiobroker_line_info_get_consumer(const struct gpiobroker_line_info *info)
{
	return info->consumer;
}

GB_EXPORT const char *gpiobroker_line_info_get_alias(const struct gpiobroker_line_info *info)
{
	return info->alias;
}

GB_EXPORT const char *gpiobroker_line_info_get_name(const struct gpiobroker_line_info *info)
{
	return info->name;
}

GB_EXPORT const char *gpiobroker_line_info_get_chip(const struct gpiobroker_line_info *info)
{
	return info->chip;
}

GB_EXPORT unsigned int gpiobroker_line_info_get_offset(const struct gpiobroker_line_info *info)
{
	return info->offset;
}

GB_EXPORT enum gpiobroker_direction
gpiobroker_line_info_get_direction(const struct gpiobroker_line_info *info)
{
	return info->direction;
}

GB_EXPORT const char *gpiobroker_line_info_get_request_label(const struct gpiobroker_line_info *info)
{
	return info->request_label;
}

static int on_line_changed(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
	struct gpiobroker_line_info_watch *w = userdata;
	struct gpiobroker_line_info *info;
	const char *iface;
	int r;

	if (sd_bus_message_read(m, "s", &iface) < 0 || strcmp(iface, GB_IFACE_LINE) != 0)
		return 0;
	/* The whole info read again rather than patched from the signal: the handler
	 * sees one consistent state, and invalidated properties need no special case. */
	info = read_line_info(w->b, w->path, w->chip, w->offset, &r);
	if (!info)
		return 0;
	w->handler(w, info, w->userdata);
	gpiobroker_line_info_free(info);
	return 0;
}

GB_EXPORT struct gpiobroker_line_info_watch *
gpiobroker_line_info_watch(struct gpiobroker *b, const char *line,
			   gpiobroker_line_info_handler handler, void *userdata)
{
	struct gpiobroker_line_info_watch *w;
	int r;

	if (!b || !line || !handler) {
		errno = b ? -fail(b, NULL, -EINVAL) : EINVAL;
		return NULL;
	}
	w = calloc(1, sizeof(*w));
	if (!w) {
		errno = -fail(b, NULL, -ENOMEM);
		return NULL;
	}
	w->b = b;
	w->handler = handler;
	w->userdata = userdata;
	r = gpiobroker_find_line(b, line, &w->path, &w->chip, &w->offset);
	if (r >= 0)
		r = sd_bus_match_signal(b->bus, &w->slot, GB_BUS_NAME, w->path,
					"org.freedesktop.DBus.Properties", "PropertiesChanged",
					on_line_changed, w);
	if (r < 0) {
		free(w->path);
		free(w->chip);
		free(w);
		errno = -r;
		return NULL;
	}
	clear_error(b);
	return w;
}

GB_EXPORT void gpiobroker_line_info_unwatch(struct gpiobroker_line_info_watch *w)
{
	if (!w)
		return;
	sd_bus_slot_unref(w->slot);
	free(w->path);
	free(w->chip);
	free(w);
}
