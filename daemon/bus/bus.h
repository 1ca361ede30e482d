/* SPDX-License-Identifier: LGPL-2.1-or-later */
/**
 * @file bus.h
 * @brief The broker's D-Bus faces: vtables and method handlers only.
 *
 * Each handler reads its arguments, validates them, authorizes the caller (whose
 * identity comes from the bus, core/client.h), acts through the layers below,
 * and replies; what the model changed it announces itself (core/announce.h).
 * docs/dbus-api.md documents the API and dbus/org.gpiodbroker1.xml is its
 * introspection, checked against the live broker by the tests.
 */
#ifndef GB_BUS_H
#define GB_BUS_H

#include <stdbool.h>
#include <sys/socket.h>
#include <systemd/sd-bus.h>

#include "forward.h"
#include "line-config.h"

/*
 * One interface of the broker's objects, defined once and served two ways: on the
 * system bus as sd-bus vtables (bus_manager_register()), and on a private
 * connection by one dispatcher (p2p-dispatch.c), which walks the same vtables so
 * as not to pay sd-bus's per-connection copy of them.
 */
struct bus_iface {
	const char *path;     /* the object's path, or the prefix of a fallback */
	bool fallback;        /* objects strictly below @path, found by @find */
	const char *iface;
	const sd_bus_vtable *vtable;
	sd_bus_object_find_t find; /* fallbacks only: userdata Broker -> the object */
	sd_bus_node_enumerator_t enumerate; /* the objects below @path, or NULL */
};
/*
 * The signals of a subscription, which a Request's owner and a Watch's holder get
 * alike (docs/dbus-api.md): declared once so that the two interfaces cannot drift
 * apart. A Request adds RevokePending after them.
 */
#define BUS_SUBSCRIPTION_SIGNALS \
	SD_BUS_SIGNAL_WITH_ARGS("Event", \
				SD_BUS_ARGS("u", index, "u", offset, "s", edge, "t", timestamp_ns, \
					    "t", global_seqno, "t", line_seqno, "t", seqno), 0), \
	SD_BUS_SIGNAL_WITH_ARGS("InitialState", \
				SD_BUS_ARGS("u", index, "u", offset, "b", value, "t", timestamp_ns, \
					    "t", seqno), 0), \
	SD_BUS_SIGNAL_WITH_ARGS("EventsLost", SD_BUS_ARGS("t", count, "t", total), 0), \
	SD_BUS_SIGNAL_WITH_ARGS("ChipGone", SD_BUS_ARGS("s", chip), 0), \
	SD_BUS_SIGNAL_WITH_ARGS("ChipBack", SD_BUS_ARGS("s", was, "s", chip), 0), \
	SD_BUS_SIGNAL_WITH_ARGS("Revoked", SD_BUS_ARGS("s", reason), 0)

/* Every interface, NULL-terminated (manager-bus.c). */
extern const struct bus_iface *const bus_ifaces[];
extern const struct bus_iface bus_manager_iface;  /* manager-bus.c */
extern const struct bus_iface bus_chip_iface;     /* chip-bus.c: chips */
extern const struct bus_iface bus_line_iface;     /* chip-bus.c: their lines */
extern const struct bus_iface bus_request_iface;  /* request-bus.c */
extern const struct bus_iface bus_watch_iface;    /* watch-bus.c */
extern const struct bus_iface bus_slice_iface;    /* slice-bus.c: the slices */

/* manager-bus.c: every object of the broker on the system bus. */
int bus_manager_register(Broker *b);
/* p2p-dispatch.c: serve every object on private connection @p bus (one filter,
 * which also calls bus_p2p_closed() when the connection closes). */
int bus_p2p_serve(Broker *b, sd_bus *bus);
/* The private connection @p bus closed, or its I/O failed: its Client leaves. */
void bus_p2p_closed(Broker *b, sd_bus *bus);
/* request-bus.c: Manager.Request() and the Request objects. */
int method_request(sd_bus_message *m, void *userdata, sd_bus_error *error);
/* line-settings-bus.c: a{sv} arguments. @p what names the line in messages. */
int bus_read_line_settings(sd_bus_message *m, struct gb_line_config *c, const char *what,
			   sd_bus_error *error);
int bus_read_request_options(sd_bus_message *m, int *persistent, int *direct, sd_bus_error *error);
/* An a{sv} of options for @p method, which has none yet: any is refused (InvalidArgs),
 * not ignored, so that a client asking for one this broker lacks knows it. */
int bus_read_no_options(sd_bus_message *m, const char *method, sd_bus_error *error);
/* direct-bus.c: what only direct requests have (Request.GetLineFds, two properties). */
int method_get_line_fds(sd_bus_message *m, void *userdata, sd_bus_error *error);
int bus_request_direct_get(sd_bus *bus, const char *path, const char *iface, const char *prop,
			   sd_bus_message *reply, void *userdata, sd_bus_error *error);
/* watch-bus.c: Manager.Watch() and the Watch objects. */
int method_watch(sd_bus_message *m, void *userdata, sd_bus_error *error);
/* policy-bus.c: Manager.ReloadPolicy() and Manager.GetAccess(). */
int method_reload_policy(sd_bus_message *m, void *userdata, sd_bus_error *error);
int method_get_access(sd_bus_message *m, void *userdata, sd_bus_error *error);
/* p2p-bus.c: Manager.OpenConnection(), the private peer-to-peer connections. */
int method_open_connection(sd_bus_message *m, void *userdata, sd_bus_error *error);
/* Serve @p fd (one end of a socketpair, taken even on failure) as a private
 * connection of @p c: what OpenConnection does with its end, for a caller that
 * made the pair itself (the fuzz target). 0, or -EDQUOT past the limit, or -errno. */
int bus_p2p_open(Broker *b, Client *c, int fd);
/* The socket option (Linux 6.16) with which a private connection's end refuses fds;
 * libc headers may not have it yet. Its number is the asm-generic one. */
#if !defined(SO_PASSRIGHTS) && !defined(__alpha__) && !defined(__hppa__) && !defined(__mips__) && \
	!defined(__sparc__)
#define SO_PASSRIGHTS 83
#endif

#endif
