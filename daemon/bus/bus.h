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

#include <systemd/sd-bus.h>

#include "forward.h"
#include "line-config.h"

/* manager-bus.c: /org/gpiodbroker1, org.gpiodbroker1.Manager, ObjectManager. */
int bus_manager_register(Broker *b);
/* Every object of the broker on @p bus: the system bus, or a private connection. */
int bus_register_objects(Broker *b, sd_bus *bus);
/* chip-bus.c: chips and lines. */
int bus_chip_register(Broker *b, sd_bus *bus);
/* request-bus.c: Manager.Request() and the Request objects. */
int bus_request_register(Broker *b, sd_bus *bus);
int method_request(sd_bus_message *m, void *userdata, sd_bus_error *error);
/* line-settings-bus.c: a{sv} arguments. @p what names the line in messages. */
int bus_read_line_settings(sd_bus_message *m, struct gb_line_config *c, const char *what,
			   sd_bus_error *error);
int bus_read_request_options(sd_bus_message *m, int *persistent, int *direct, sd_bus_error *error);
/* direct-bus.c: what only direct requests have (Request.GetLineFds, two properties). */
int method_get_line_fds(sd_bus_message *m, void *userdata, sd_bus_error *error);
int bus_request_direct_get(sd_bus *bus, const char *path, const char *iface, const char *prop,
			   sd_bus_message *reply, void *userdata, sd_bus_error *error);
/* watch-bus.c: Manager.Watch() and the Watch objects. */
int bus_watch_register(Broker *b, sd_bus *bus);
int method_watch(sd_bus_message *m, void *userdata, sd_bus_error *error);
/* policy-bus.c: Manager.ReloadPolicy() and Manager.GetAccess(). */
int method_reload_policy(sd_bus_message *m, void *userdata, sd_bus_error *error);
int method_get_access(sd_bus_message *m, void *userdata, sd_bus_error *error);
/* p2p-bus.c: Manager.OpenConnection(), the private peer-to-peer connections. */
int method_open_connection(sd_bus_message *m, void *userdata, sd_bus_error *error);

#endif
