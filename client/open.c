/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libgpiobroker's connection to the broker: opening it (the bus connection, the
 * matches for the broker's signals and its name, then the transport) and closing
 * it with every handle on it. The top of the library: it gives the lower parts the
 * handlers they call (HACKING.md, "Library").
 */
#include "internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The matches a bus connection needs, on b->bus. */
static int add_matches(struct gpiobroker *b)
{
	sd_bus *bus = b->bus;
	/* One match for all requests, one for all watches: signals are dispatched by
	 * path. Installed now, so no signal of a handle made later can be processed
	 * before there is a match. A private connection gets the same handler. */
	int r = sd_bus_match_signal(bus, &b->signal_slot, GB_BUS_NAME, NULL, GB_IFACE_REQUEST, NULL,
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
	/* sd-bus's own word that the connection closed (EOF on an SSH link, the bus
	 * daemon gone): no bus daemon sends it, so no sender to match. */
	if (r >= 0)
		r = sd_bus_match_signal(bus, &b->local_slot, NULL, "/org/freedesktop/DBus/Local",
					"org.freedesktop.DBus.Local", "Disconnected",
					gb_subscription_on_disconnected, b);
	/* Without fd passing (an SSH link) there is no private connection and no line
	 * fd: everything goes over this one. */
	b->no_fds = sd_bus_can_send(bus, SD_BUS_TYPE_UNIX_FD) <= 0;
	return r;
}

static void drop_matches(struct gpiobroker *b)
{
	b->signal_slot = sd_bus_slot_unref(b->signal_slot);
	b->owner_slot = sd_bus_slot_unref(b->owner_slot);
	b->watch_slot = sd_bus_slot_unref(b->watch_slot);
	b->local_slot = sd_bus_slot_unref(b->local_slot);
}

static struct gpiobroker *adopt(sd_bus *bus, enum gpiobroker_transport transport,
				enum gb_target_kind target, const char *arg)
{
	struct gpiobroker *b = calloc(1, sizeof(*b));
	int r;

	if (!b || (arg && !(b->target_arg = strdup(arg)))) {
		free(b);
		sd_bus_unref(bus);
		errno = ENOMEM;
		return NULL;
	}
	b->bus = bus;
	b->target = target;
	b->asked = transport;
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
	b->on_signal = gb_subscription_on_signal;
	r = add_matches(b);
	if (r >= 0)
		r = gb_transport_start(b, transport);
	/* A link that may be lost and opened again: one fd to poll across both. */
	if (r >= 0 && (target == GB_TARGET_HOST || target == GB_TARGET_MACHINE))
		r = gb_epoll_fd(b);
	if (r < 0) {
		gpiobroker_close(b);
		errno = -r;
		return NULL;
	}
	return b;
}

/* D-Bus address escaping (the specification's "optionally-escaped" bytes pass). */
static int escape_address(char *out, size_t size, const char *in)
{
	size_t k = 0;

	for (; *in; in++) {
		unsigned char c = (unsigned char)*in;
		bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			     (c >= '0' && c <= '9') || strchr("-_/.\\*", c);

		if (k + (plain ? 1 : 3) >= size)
			return -EINVAL;
		if (plain)
			out[k++] = (char)c;
		else
			k += (size_t)snprintf(out + k, size - k, "%%%02x", c);
	}
	out[k] = '\0';
	return 0;
}

/*
 * The address of a host's system bus over SSH: what busctl -H does (ssh -xT to
 * HOST, systemd-stdio-bridge at the far end), with SSH's keepalive on, so that a
 * link that goes silent (a board powered off, a network gone) ends within
 * GB_SSH_ALIVE_INTERVAL x (GB_SSH_ALIVE_COUNT + 1) seconds instead of never.
 * @p host is [USER@]HOST[:PORT], HOST a name, an IPv4 address or [IPv6].
 */
#define GB_SSH_ALIVE_INTERVAL "5"
#define GB_SSH_ALIVE_COUNT "3"
int gb_host_address(const char *host, char *out, size_t size)
{
	char who[256], port[16] = "", ehost[3 * sizeof(who)];
	const char *at = strchr(host, '@'), *name = at ? at + 1 : host, *colon;
	size_t len;
	int r, n;

	if (!*host || (at && (at == host || strchr(at + 1, '@'))))
		return -EINVAL;
	if (*name == '[') {
		const char *rb = strchr(name, ']');

		if (!rb || rb == name + 1)
			return -EINVAL;
		colon = rb[1] == ':' ? rb + 1 : NULL;
		if (!colon && rb[1])
			return -EINVAL;
		/* ssh takes the address without its brackets. */
		len = (size_t)(at ? at + 1 - host : 0);
		if (len + (size_t)(rb - name - 1) >= sizeof(who))
			return -EINVAL;
		memcpy(who, host, len);
		memcpy(who + len, name + 1, (size_t)(rb - name - 1));
		who[len + (size_t)(rb - name - 1)] = '\0';
	} else {
		colon = strchr(name, ':');
		len = colon ? (size_t)(colon - host) : strlen(host);
		if (len >= sizeof(who) || (colon && colon == name) || !*name)
			return -EINVAL;
		memcpy(who, host, len);
		who[len] = '\0';
	}
	if (colon) {
		char *end;
		unsigned long p = strtoul(colon + 1, &end, 10);

		if (!colon[1] || *end || p == 0 || p > 65535)
			return -EINVAL;
		snprintf(port, sizeof(port), "%lu", p);
	}
	/* Nothing that ssh could read as an option. */
	if (who[0] == '-')
		return -EINVAL;
	r = escape_address(ehost, sizeof(ehost), who);
	if (r < 0)
		return r;
	n = snprintf(out, size,
		     "unixexec:path=ssh,argv1=-xT,argv2=-o,argv3=ServerAliveInterval%%3d" GB_SSH_ALIVE_INTERVAL
		     ",argv4=-o,argv5=ServerAliveCountMax%%3d" GB_SSH_ALIVE_COUNT "%s%s"
		     ",argv%d=--,argv%d=%s,argv%d=systemd-stdio-bridge",
		     *port ? ",argv6=-p,argv7=" : "", port, *port ? 8 : 6, *port ? 9 : 7, ehost,
		     *port ? 10 : 8);
	return n < 0 || (size_t)n >= size ? -EINVAL : 0;
}

/* A new bus connection to what @p b was opened to (@p kind, @p arg). */
static int connect_target(enum gb_target_kind kind, const char *arg, sd_bus **ret)
{
	char address[1024];
	sd_bus *bus = NULL;
	int r;

	switch (kind) {
	case GB_TARGET_SYSTEM:
		return sd_bus_open_system(ret);
	case GB_TARGET_MACHINE:
		return sd_bus_open_system_machine(ret, arg);
	case GB_TARGET_HOST:
		r = gb_host_address(arg, address, sizeof(address));
		if (r < 0)
			return r;
		arg = address;
		break;
	case GB_TARGET_ADDRESS:
		break;
	default:
		return -EOPNOTSUPP;
	}
	r = sd_bus_new(&bus);
	if (r >= 0)
		r = sd_bus_set_address(bus, arg);
	if (r >= 0)
		r = sd_bus_set_bus_client(bus, 1);
	/* Nothing passes file descriptors through SSH: say so from the start, so that
	 * no call that carries one is ever sent (the far side could not deliver it). */
	if (r >= 0 && kind == GB_TARGET_HOST)
		r = sd_bus_negotiate_fds(bus, 0);
	if (r >= 0)
		r = sd_bus_start(bus);
	if (r < 0) {
		sd_bus_unref(bus);
		return r;
	}
	*ret = bus;
	return 0;
}

static struct gpiobroker *open_target(enum gb_target_kind kind, const char *arg,
				      enum gpiobroker_transport transport)
{
	sd_bus *bus = NULL;
	int r;

	if ((unsigned int)transport > GPIOBROKER_TRANSPORT_P2P) {
		errno = EINVAL;
		return NULL;
	}
	r = connect_target(kind, arg, &bus);
	if (r < 0) {
		errno = -r;
		return NULL;
	}
	return adopt(bus, transport, kind, arg);
}

GB_EXPORT struct gpiobroker *gpiobroker_open_transport(const char *address,
							enum gpiobroker_transport transport)
{
	return open_target(address ? GB_TARGET_ADDRESS : GB_TARGET_SYSTEM, address, transport);
}

GB_EXPORT struct gpiobroker *gpiobroker_open_host(const char *host)
{
	if (!host) {
		errno = EINVAL;
		return NULL;
	}
	return open_target(GB_TARGET_HOST, host, GPIOBROKER_TRANSPORT_AUTO);
}

GB_EXPORT struct gpiobroker *gpiobroker_open_machine(const char *machine)
{
	if (!machine) {
		errno = EINVAL;
		return NULL;
	}
	return open_target(GB_TARGET_MACHINE, machine, GPIOBROKER_TRANSPORT_AUTO);
}

GB_EXPORT bool gpiobroker_is_connected(struct gpiobroker *b)
{
	return b && !b->lost && sd_bus_is_open(b->bus) > 0;
}

GB_EXPORT int gpiobroker_reconnect(struct gpiobroker *b, unsigned int flags)
{
	sd_bus *bus = NULL;
	int r;

	if (!b || (flags & ~GPIOBROKER_RECONNECT_REQUESTS))
		return -EINVAL;
	if (b->target == GB_TARGET_BUS)
		return gb_fail(b, NULL, -EOPNOTSUPP);
	if (gpiobroker_is_connected(b))
		return 0;
	r = connect_target(b->target, b->target_arg, &bus);
	if (r < 0)
		return gb_fail(b, NULL, r);
	/* The old connection's matches and its place in the epoll set go with it; the
	 * epoll fd stays, so the caller's poll needs nothing new. */
	gb_p2p_drop(b, false);
	drop_matches(b);
	gb_request_cancel_pending(b);
	if (b->event)
		sd_bus_detach_event(b->bus);
	sd_bus_close(b->bus);
	sd_bus_unref(b->bus);
	b->bus = bus;
	b->bus_events = GB_EPOLL_NONE;
	b->n_ready = 0;
	b->lost = false;
	b->ack_known = false;
	r = add_matches(b);
	if (r >= 0 && b->event) {
		r = sd_bus_set_close_on_exit(bus, 0);
		if (r >= 0)
			r = sd_bus_attach_event(bus, b->event, b->event_priority);
	}
	if (r >= 0)
		r = gb_transport_start(b, b->asked);
	if (r < 0)
		return gb_fail(b, NULL, r);
	gb_update_epoll(b);
	if (!(flags & GPIOBROKER_RECONNECT_REQUESTS)) {
		gb_clear_error(b);
		return 0;
	}
	/* The new connection's event window, before anything is made on it. */
	gb_learn_window(b);
	r = (int)gb_subscription_renew_all(b);
	gb_clear_error(b);
	return r;
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
	return adopt(sd_bus_ref(bus), transport, GB_TARGET_BUS, NULL);
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
	drop_matches(b);
	/* Flush so a Release sent just before is not lost with the connection. */
	gb_p2p_drop(b, true);
	if (b->epfd >= 0)
		close(b->epfd);
	sd_event_unref(b->event);
	sd_bus_flush_close_unref(b->bus);
	gb_clear_error(b);
	free(b->target_arg);
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
