/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libgpiobroker in the caller's event loop: the fd to poll (an epoll fd over both
 * connections and the direct requests' line fds), processing what is behind it,
 * waiting, or attaching all of it to an sd-event loop.
 */
#include "internal.h"

#include <errno.h>
#include <poll.h>
#include <time.h>

/* With a private connection possible, the caller polls an epoll fd holding both
 * connections' fds (see gb_transport_start()); otherwise the bus connection's own. */
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
			gb_p2p_drop(b, false);
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
	gb_update_epoll(b);
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

