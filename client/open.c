/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libgpiobroker's connection to the broker: opening it (the bus connection, the
 * matches for the broker's signals and its name, then the transport) and closing
 * it with every handle on it. The top of the library: it gives the lower parts the
 * handlers they call (HACKING.md, "Library").
 */
#include "internal.h"

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

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
	b->bus_source.kind = GB_SOURCE_BUS;
	b->p2p_source.kind = GB_SOURCE_P2P;
	b->bus_events = b->p2p_events = GB_EPOLL_NONE;
	/* A connection the caller already runs in an event loop: the private one
	 * joins it there. */
	if (sd_bus_get_event(bus)) {
		b->event = sd_event_ref(sd_bus_get_event(bus));
		b->event_priority = SD_EVENT_PRIORITY_NORMAL;
	}
	/* One match for all requests, one for all watches: signals are dispatched by
	 * path. Installed now, so no signal of a handle made later can be processed
	 * before there is a match. A private connection gets the same handler. */
	b->on_signal = gb_subscription_on_signal;
	r = sd_bus_match_signal(bus, &b->signal_slot, GB_BUS_NAME, NULL, GB_IFACE_REQUEST, NULL,
				b->on_signal, b);
	if (r >= 0)
		r = sd_bus_add_match(bus, &b->owner_slot,
				     "type='signal',sender='org.freedesktop.DBus',"
				     "path='/org/freedesktop/DBus',"
				     "interface='org.freedesktop.DBus',"
				     "member='NameOwnerChanged',arg0='" GB_BUS_NAME "'",
				     gb_subscription_on_owner_changed, b);
	if (r >= 0)
		r = sd_bus_match_signal(bus, &b->watch_slot, GB_BUS_NAME, NULL, GB_IFACE_WATCH,
					NULL, b->on_signal, b);
	if (r >= 0)
		r = gb_transport_start(b, transport);
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

GB_EXPORT void gpiobroker_close(struct gpiobroker *b)
{
	if (!b)
		return;
	/* Handles the caller did not free are freed here; the broker releases their
	 * managed requests when the connection goes. */
	while (b->subs)
		b->subs->kind->free(b->subs);
	gb_direct_conn_free(b->direct);
	gb_request_cancel_pending(b);
	sd_bus_slot_unref(b->signal_slot);
	sd_bus_slot_unref(b->owner_slot);
	sd_bus_slot_unref(b->watch_slot);
	/* Flush so a Release sent just before is not lost with the connection. */
	gb_p2p_drop(b, true);
	if (b->epfd >= 0)
		close(b->epfd);
	sd_event_unref(b->event);
	sd_bus_flush_close_unref(b->bus);
	gb_clear_error(b);
	free(b);
}

GB_EXPORT struct sd_bus *gpiobroker_get_bus(struct gpiobroker *b)
{
	return b->bus;
}

GB_EXPORT const char *gpiobroker_version(void)
{
	return PACKAGE_VERSION;
}
