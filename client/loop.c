/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libgpiobroker in the caller's event loop: the fd to poll (an epoll fd over both
 * connections and the direct requests' line fds, in one flat set), processing
 * what is behind it, waiting, or attaching all of it to an sd-event loop; and one
 * request's own fd, for a program that waits on nothing else.
 */
#include "internal.h"

#include <errno.h>
#include <poll.h>
#include <sys/epoll.h>
#include <time.h>

/* With a private connection possible or a direct request, the caller polls one epoll
 * fd over both connections and every line fd (see gb_epoll_fd()); otherwise the bus
 * connection's own. */
GB_EXPORT int gpiobroker_get_fd(struct gpiobroker *b)
{
	return b->epfd >= 0 ? b->epfd : sd_bus_get_fd(b->bus);
}

GB_EXPORT int gpiobroker_get_events(struct gpiobroker *b)
{
	if (b->epfd < 0)
		return sd_bus_get_events(b->bus);
	gb_update_epoll(b);
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

static uint64_t now_usec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

/* Does sd-bus have work its fd does not show: messages it read while a call waited
 * (or its closing to finish), or a call's timeout that has passed? No system call
 * but where an asynchronous call is in flight. */
static bool bus_due(sd_bus *bus)
{
	uint64_t t;

	if (sd_bus_get_timeout(bus, &t) <= 0)
		return false;
	return t == 0 || t <= now_usec();
}

/* Everything pending on the connection in @p slot, if its fd said so (@p must) or
 * sd-bus holds work the fd does not show; nothing, not even a read that finds the
 * socket empty, if not. The slot is read again after each message: a handler may
 * drop and free the connection from inside sd_bus_process() (the private
 * connection's Disconnected does), leaving it NULL. Messages handled, or -errno. */
static int process_bus(sd_bus *const *slot, bool must)
{
	int n = 0, r = 0;

	if (!*slot || (!must && !bus_due(*slot)))
		return 0;
	while (*slot && (r = sd_bus_process(*slot, NULL)) > 0)
		n++;
	return r < 0 ? r : n;
}

static int process_p2p(struct gpiobroker *b, bool must)
{
	int r = process_bus(&b->p2p, must);

	if (r >= 0)
		return r;
	/* The broker went: not the caller's error, the bus says the rest. */
	gb_p2p_drop(b, false);
	return 0;
}

GB_EXPORT int gpiobroker_process(struct gpiobroker *b)
{
	struct epoll_event *ev = b->ready;
	bool bus = false, p2p = false;
	int n = 0, k, r = 0;

	bool was_lost = b->lost;

	/* Nothing is behind the fd any more: say so, rather than "nothing to do". */
	if (was_lost)
		return -ENOTCONN;
	if (b->epfd < 0) {
		r = process_bus(&b->bus, true);
		/* The call that delivered the loss to the handles succeeded; later ones fail. */
		return r < 0 && b->lost && !was_lost ? 1 : r;
	}
	/* What is ready, in one call (or the one gpiobroker_wait() just made): a line
	 * fd's edges are one read() from here. */
	k = b->n_ready;
	b->n_ready = 0;
	if (k <= 0)
		k = epoll_wait(b->epfd, ev, GB_ELEMENTSOF(b->ready), 0);
	if (k < 0)
		return errno == EINTR ? 0 : -errno;
	gb_direct_hold(b->direct);
	for (int i = 0; i < k && r >= 0; i++) {
		struct gb_source *src = ev[i].data.ptr;

		if (src->kind == GB_SOURCE_LINE) {
			r = gb_direct_read(src, ev[i].events);
			n += r > 0 ? r : 0;
		} else if (src->kind == GB_SOURCE_P2P) {
			p2p = true;
		} else {
			bus = true;
		}
	}
	gb_direct_release(b->direct);
	if (r < 0)
		return r;
	r = process_bus(&b->bus, bus);
	if (r < 0 && b->lost && !was_lost)
		r = 1;
	if (r < 0)
		return r;
	n += r;
	n += process_p2p(b, p2p);
	gb_update_epoll(b);
	return n;
}

GB_EXPORT int gpiobroker_wait(struct gpiobroker *b, uint64_t timeout_us)
{
	uint64_t until = UINT64_MAX;
	int r, ms = -1;

	if (b->lost)
		return -ENOTCONN;
	/* Read already and waiting: there is something to process now. */
	if (bus_due(b->bus) || (b->p2p && bus_due(b->p2p)))
		return 1;
	if (b->epfd < 0)
		return sd_bus_wait(b->bus, timeout_us);
	r = gpiobroker_get_timeout(b, &until);
	if (r < 0)
		return r;
	if (until != UINT64_MAX) {
		uint64_t now = now_usec();

		if (until <= now)
			return 1;
		if (until - now < timeout_us)
			timeout_us = until - now;
	}
	if (timeout_us != UINT64_MAX)
		ms = timeout_us / 1000 > 0x7fffffff ? 0x7fffffff : (int)((timeout_us + 999) / 1000);
	/* One fd holds every connection and line fd, each waiting for what it needs;
	 * what it says is ready is kept for gpiobroker_process(). */
	gb_update_epoll(b);
	r = epoll_wait(b->epfd, b->ready, GB_ELEMENTSOF(b->ready), ms);
	if (r < 0)
		return -errno;
	b->n_ready = r;
	return r > 0;
}

GB_EXPORT int gpiobroker_request_get_fd(struct gpiobroker_request *req)
{
	if (!req)
		return -EINVAL;
	/* Its edges come over the connection, with every other handle's. */
	if (!req->direct)
		return gpiobroker_get_fd(req->sub.b);
	return gb_direct_req_fd(req->direct);
}

GB_EXPORT int gpiobroker_request_process(struct gpiobroker_request *req)
{
	if (!req)
		return -EINVAL;
	if (!req->direct)
		return gpiobroker_process(req->sub.b);
	return gb_direct_process(req->sub.b->direct, req->direct);
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

