/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The Manager object (/org/gpiodbroker1): the entry point. Request lines, find a
 * line by name, list requests; ObjectManager for the whole tree.
 */

#include <errno.h>
#include <string.h>

#include "broker.h"
#include "errors.h"
#include "linespec.h"
#include "macro.h"

static int method_find_line(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
	Broker *b = userdata;
	const char *spec;
	Line *l;
	int r;

	r = sd_bus_message_read(m, "s", &spec);
	if (r < 0)
		return r;
	r = line_resolve_spec(b, spec, &l, error);
	if (r < 0)
		return r;
	return sd_bus_reply_method_return(m, "osu", l->path, l->chip->name, l->offset);
}

static int method_list_requests(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
	Broker *b = userdata;
	sd_bus_message *reply = NULL;
	int r;

	r = sd_bus_message_new_method_return(m, &reply);
	if (r >= 0)
		r = sd_bus_message_open_container(reply, 'a', "(osbus)");
	for (Request *q = b->request_list; r >= 0 && q; q = q->next)
		r = sd_bus_message_append(reply, "(osbus)", q->path, q->label, q->persistent,
					  (uint32_t)q->uid, q->client ? q->client->name : "");
	if (r >= 0)
		r = sd_bus_message_close_container(reply);
	if (r >= 0)
		r = sd_bus_send(NULL, reply, NULL);
	sd_bus_message_unref(reply);
	return r;
}

static int get_version(sd_bus *bus, const char *path, const char *iface, const char *prop,
		       sd_bus_message *reply, void *userdata, sd_bus_error *error)
{
	return sd_bus_message_append(reply, "s", PACKAGE_VERSION);
}

/* Flow control numbers (flow.h): the client library acks every EventWindow/2. */
static int get_flow(sd_bus *bus, const char *path, const char *iface, const char *prop,
		    sd_bus_message *reply, void *userdata, sd_bus_error *error)
{
	Broker *b = userdata;

	if (strcmp(prop, "EventWindow") == 0)
		return sd_bus_message_append(reply, "u", b->event_window ? b->event_window
									 : GB_FLOW_DEFAULT_WINDOW);
	return sd_bus_message_append(reply, "u", b->event_queue);
}

static const sd_bus_vtable manager_vtable[] = {
	SD_BUS_VTABLE_START(0),
	SD_BUS_PROPERTY("Version", "s", get_version, 0, SD_BUS_VTABLE_PROPERTY_CONST),
	SD_BUS_PROPERTY("EventWindow", "u", get_flow, 0, SD_BUS_VTABLE_PROPERTY_CONST),
	SD_BUS_PROPERTY("EventQueue", "u", get_flow, 0, SD_BUS_VTABLE_PROPERTY_CONST),
	SD_BUS_METHOD_WITH_ARGS("Request",
				SD_BUS_ARGS("s", label, "a(sa{sv})", lines, "a{sv}", options),
				SD_BUS_RESULT("o", request),
				method_request, SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_METHOD_WITH_ARGS("Watch", SD_BUS_ARGS("s", line, "a{sv}", options),
				SD_BUS_RESULT("o", watch),
				method_watch, SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_METHOD_WITH_ARGS("FindLine", SD_BUS_ARGS("s", line),
				SD_BUS_RESULT("o", line, "s", chip, "u", offset),
				method_find_line, SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_METHOD_WITH_ARGS("ListRequests", SD_BUS_NO_ARGS,
				SD_BUS_RESULT("a(osbus)", requests),
				method_list_requests, SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_METHOD_WITH_ARGS("GetAccess", SD_BUS_ARGS("s", line), SD_BUS_RESULT("a{sv}", access),
				method_get_access, SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_METHOD_WITH_ARGS("ReloadPolicy", SD_BUS_NO_ARGS, SD_BUS_NO_RESULT,
				method_reload_policy, SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_VTABLE_END
};

int manager_add_vtables(Broker *b)
{
	int r;

	/* The queue limit's default is set here, so that main.c only parses options. */
	if (!b->event_queue_set)
		b->event_queue = GB_FLOW_DEFAULT_QUEUE;
	r = sd_bus_add_object_vtable(b->bus, NULL, GB_ROOT_PATH, GB_IFACE_MANAGER, manager_vtable, b);
	if (r >= 0)
		r = sd_bus_add_object_manager(b->bus, NULL, GB_ROOT_PATH);
	/* Watches hang off the Manager (Manager.Watch). */
	if (r >= 0)
		r = watch_add_vtables(b);
	return r;
}
