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
/* chip-bus.c: chips and lines. */
int bus_chip_register(Broker *b);
/* request-bus.c: Manager.Request() and the Request objects. */
int bus_request_register(Broker *b);
int method_request(sd_bus_message *m, void *userdata, sd_bus_error *error);
/* watch-bus.c: Manager.Watch() and the Watch objects. */
int bus_watch_register(Broker *b);
int method_watch(sd_bus_message *m, void *userdata, sd_bus_error *error);
/* policy-bus.c: Manager.ReloadPolicy() and Manager.GetAccess(). */
int method_reload_policy(sd_bus_message *m, void *userdata, sd_bus_error *error);
int method_get_access(sd_bus_message *m, void *userdata, sd_bus_error *error);

#endif
