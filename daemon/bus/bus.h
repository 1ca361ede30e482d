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

/* manager-bus.c: /org/gpiodbroker1, org.gpiodbroker1.Manager, ObjectManager. */
int bus_manager_register(Broker *b);
/* Every object of the broker on @p bus: the system bus, or a private connection. */
int bus_register_objects(Broker *b, sd_bus *bus);
/* chip-bus.c: chips and lines. */
int bus_chip_register(Broker *b, sd_bus *bus);
/* request-bus.c: Manager.Request() and the Request objects. */
int bus_request_register(Broker *b, sd_bus *bus);
int method_request(sd_bus_message *m, void *userdata, sd_bus_error *error);
/* watch-bus.c: Manager.Watch() and the Watch objects. */
int bus_watch_register(Broker *b, sd_bus *bus);
int method_watch(sd_bus_message *m, void *userdata, sd_bus_error *error);
/* policy-bus.c: Manager.ReloadPolicy() and Manager.GetAccess(). */
int method_reload_policy(sd_bus_message *m, void *userdata, sd_bus_error *error);
int method_get_access(sd_bus_message *m, void *userdata, sd_bus_error *error);
/* p2p-bus.c: Manager.OpenConnection(), the private peer-to-peer connections. */
int method_open_connection(sd_bus_message *m, void *userdata, sd_bus_error *error);

#endif
