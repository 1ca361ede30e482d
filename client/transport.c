/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libgpiobroker's transport: the bus connection, and the private connection to the
 * broker (Manager.OpenConnection) that calls and signals take when it is there;
 * the epoll fd over both; calls with their outcome recorded, and the rule that a
 * repeatable call which finds the private connection dead goes again by the bus.
 * Signals go to the handler the connection was opened with (b->on_signal).
 */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

/* epoll events for sd-bus's poll events. */
static uint32_t epoll_events(int events)
{
	return (events & POLLIN ? EPOLLIN : 0) | (events & POLLOUT ? EPOLLOUT : 0);
}

/* @p bus in the epoll set as @p src, waiting for what sd-bus wants now; *@p have is
 * what it waits for already (GB_EPOLL_NONE: not in the set). */
static void epoll_sync(struct gpiobroker *b, sd_bus *bus, struct gb_source *src, uint32_t *have)
{
	struct epoll_event ev = { .data.ptr = src };
	int fd = sd_bus_get_fd(bus), events = sd_bus_get_events(bus);

	if (fd < 0 || events < 0)
		return;
	ev.events = epoll_events(events);
	if (ev.events == *have)
		return;
	if (epoll_ctl(b->epfd, *have == GB_EPOLL_NONE ? EPOLL_CTL_ADD : EPOLL_CTL_MOD, fd, &ev) < 0 &&
	    epoll_ctl(b->epfd, *have == GB_EPOLL_NONE ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, fd, &ev) < 0)
		return;
	*have = ev.events;
}

void gb_update_epoll(struct gpiobroker *b)
{
	if (b->epfd < 0)
		return;
	epoll_sync(b, b->bus, &b->bus_source, &b->bus_events);
	if (b->p2p)
		epoll_sync(b, b->p2p, &b->p2p_source, &b->p2p_events);
}

int gb_epoll_fd(struct gpiobroker *b)
{
	if (b->epfd >= 0)
		return b->epfd;
	b->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (b->epfd < 0)
		return -errno;
	b->bus_events = b->p2p_events = GB_EPOLL_NONE;
	gb_update_epoll(b);
	if (b->bus_events == GB_EPOLL_NONE)
		return -EIO;
	return b->epfd;
}

void gb_p2p_drop(struct gpiobroker *b, bool flush)
{
	sd_bus *p = b->p2p;
	int fd;

	if (!p)
		return;
	b->p2p = NULL;
	for (size_t i = 0; i < GB_ELEMENTSOF(b->p2p_slots); i++)
		b->p2p_slots[i] = sd_bus_slot_unref(b->p2p_slots[i]);
	if (b->epfd >= 0 && (fd = sd_bus_get_fd(p)) >= 0)
		epoll_ctl(b->epfd, EPOLL_CTL_DEL, fd, NULL);
	b->p2p_events = GB_EPOLL_NONE;
	if (flush)
		sd_bus_flush(p);
	sd_bus_close(p);
	sd_bus_unref(p);
}

sd_bus *gb_conn(struct gpiobroker *b)
{
	struct pollfd p;

	if (!b->p2p)
		return b->bus;
	/* A broker that went leaves our end hung up before we have read why: such a
	 * call would fail on the dead socket, where on the bus it gets the answer of
	 * whoever is there now (nobody: EHOSTDOWN; a new broker). */
	p = (struct pollfd){ .fd = sd_bus_get_fd(b->p2p), .events = POLLIN };
	if (p.fd < 0 || (poll(&p, 1, 0) > 0 && (p.revents & (POLLHUP | POLLERR | POLLNVAL))))
		gb_p2p_drop(b, false);
	return b->p2p ? b->p2p : b->bus;
}

static int on_p2p_disconnected(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
	/* The broker went (or closed us): calls go by the bus until one is back. */
	gb_p2p_drop(userdata, false);
	return 0;
}

/*
 * @p dest is the broker's well-known or unique name. The broker bound the socket
 * it returns to this bus connection's identity; on our side it is a plain
 * peer-to-peer sd-bus client.
 */
int gb_p2p_open(struct gpiobroker *b, const char *dest, sd_bus_error *e)
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
		r = sd_bus_call_method(p, GB_BUS_NAME, GB_ROOT_PATH, "org.freedesktop.DBus.Peer",
				       "Ping", e, NULL, "");
	/* No sender filter: only the broker is at the other end (it names itself
	 * anyway, and the subscriptions check that name as on the bus). */
	if (r >= 0)
		r = sd_bus_match_signal(p, &b->p2p_slots[0], NULL, NULL, GB_IFACE_REQUEST, NULL,
					b->on_signal, b);
	if (r >= 0)
		r = sd_bus_match_signal(p, &b->p2p_slots[1], NULL, NULL, GB_IFACE_WATCH, NULL,
					b->on_signal, b);
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
		gb_p2p_drop(b, false);
		return r;
	}
	b->p2p = p;
	gb_update_epoll(b);
	return 0;
}

enum gpiobroker_transport gb_transport_parse(const char *v)
{
	if (v && strcmp(v, "bus") == 0)
		return GPIOBROKER_TRANSPORT_BUS;
	if (v && strcmp(v, "p2p") == 0)
		return GPIOBROKER_TRANSPORT_P2P;
	return GPIOBROKER_TRANSPORT_AUTO;
}

int gb_transport_start(struct gpiobroker *b, enum gpiobroker_transport t)
{
	sd_bus_error e = SD_BUS_ERROR_NULL;
	int r;

	if (t == GPIOBROKER_TRANSPORT_AUTO)
		t = gb_transport_parse(getenv("GPIOBROKER_TRANSPORT"));
	b->strict = t == GPIOBROKER_TRANSPORT_P2P;
	b->want = t == GPIOBROKER_TRANSPORT_BUS ? GPIOBROKER_TRANSPORT_BUS :
						  GPIOBROKER_TRANSPORT_P2P;
	/* The private connection is a file descriptor the broker hands over: a link
	 * that cannot carry one (SSH) stays on the bus, and says why if that was not
	 * what the caller asked for. */
	if (b->want == GPIOBROKER_TRANSPORT_P2P && b->no_fds) {
		b->want = GPIOBROKER_TRANSPORT_BUS;
		if (b->strict) {
			sd_bus_error_set(&e, GB_ERROR_NO_FD_PASSING,
					 "this connection cannot pass file descriptors (a link over "
					 "SSH): no private connection, calls go over the bus");
			return gb_fail(b, &e, -EOPNOTSUPP);
		}
	}
	if (b->want == GPIOBROKER_TRANSPORT_BUS)
		return 0;
	/* One fd for the caller's poll from the start, whichever way the broker's
	 * messages come later (a broker may start, restart or be upgraded). */
	r = gb_epoll_fd(b);
	if (r < 0)
		return r;
	r = gb_p2p_open(b, GB_BUS_NAME, &e);
	if (r >= 0 || !b->strict ||
	    sd_bus_error_has_names(&e, "org.freedesktop.DBus.Error.ServiceUnknown",
				   "org.freedesktop.DBus.Error.NameHasNoOwner")) {
		/* Auto: an older broker (UnknownMethod) or a refusal leaves us on the bus;
		 * no broker yet: the private connection is opened when one comes. */
		sd_bus_error_free(&e);
		return 0;
	}
	return gb_fail(b, &e, r);
}

static bool disconnected(int r)
{
	return r == -ECONNRESET || r == -ENOTCONN || r == -EPIPE || r == -ESHUTDOWN;
}

/*
 * The calls made most (values) go by this. They skip gb_conn()'s check that the
 * private connection is alive: a system call each time, as much as a third of a
 * round trip on a small board.
 */
int gb_call_repeatable(struct gpiobroker *b, const char *path, const char *method,
		       gb_append_fn append, const void *args, sd_bus_message **reply)
{
	int r;

	for (int attempt = 0;; attempt++) {
		sd_bus *bus = attempt ? gb_conn(b) :
			      b->p2p && sd_bus_is_open(b->p2p) > 0 ? b->p2p : gb_conn(b);
		sd_bus_error e = SD_BUS_ERROR_NULL;
		sd_bus_message *m = NULL;

		r = sd_bus_message_new_method_call(bus, &m, GB_BUS_NAME, path, GB_IFACE_REQUEST,
						   method);
		if (r >= 0)
			r = append(m, args);
		if (r >= 0)
			r = sd_bus_call(bus, m, 0, &e, reply);
		sd_bus_message_unref(m);
		/* Not an answer: the connection itself went (sd-bus has closed it). */
		if (r < 0 && !attempt && bus == b->p2p && disconnected(r) &&
		    sd_bus_is_open(bus) <= 0) {
			sd_bus_error_free(&e);
			gb_p2p_drop(b, false);
			continue;
		}
		return gb_result(b, &e, r);
	}
}

GB_EXPORT enum gpiobroker_transport gpiobroker_get_transport(struct gpiobroker *b)
{
	return b && b->p2p ? GPIOBROKER_TRANSPORT_P2P : GPIOBROKER_TRANSPORT_BUS;
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
