/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The Manager object (/org/gpiodbroker1): the entry point. Request lines, find a
 * line by name, list requests; ObjectManager for the whole tree.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "access.h"
#include "action.h"
#include "broker.h"
#include "bus.h"
#include "chip.h"
#include "client.h"
#include "flow.h"
#include "lookup.h"
#include "macro.h"
#include "org.gpiodbroker1.h"
#include "request.h"
#include "sliced.h"

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
	for (Request *req = b->request_list; r >= 0 && req; req = req->next)
		r = sd_bus_message_append(reply, "(osbus)", req->path, req->label, req->persistent,
					  (uint32_t)req->uid, req->client ? req->client->name : "");
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
		return sd_bus_message_append(reply, "u", b->event_window);
	return sd_bus_message_append(reply, "u", b->event_queue);
}

/* "file:line: message\n" lines as an array of strings. */
static int append_lines(sd_bus_message *reply, const char *text)
{
	int r = sd_bus_message_open_container(reply, 'a', "s");

	for (const char *l = text; r >= 0 && l && *l;) {
		size_t len = strcspn(l, "\n");
		char *one = strndup(l, len);

		r = one ? sd_bus_message_append(reply, "s", one) : -ENOMEM;
		free(one);
		l += len + (l[len] == '\n');
	}
	return r < 0 ? r : sd_bus_message_close_container(reply);
}

static int append_strv_entry(sd_bus_message *reply, const char *key, const char *text)
{
	int r = sd_bus_message_open_container(reply, 'e', "sv");

	if (r >= 0)
		r = sd_bus_message_append(reply, "s", key);
	if (r >= 0)
		r = sd_bus_message_open_container(reply, 'v', "as");
	if (r >= 0)
		r = append_lines(reply, text);
	if (r >= 0)
		r = sd_bus_message_close_container(reply);
	if (r >= 0)
		r = sd_bus_message_close_container(reply);
	return r;
}

/* How the last policy load went (access.h, broker.h: struct policy_status). */
static int get_policy_status(sd_bus *bus, const char *path, const char *iface, const char *prop,
			     sd_bus_message *reply, void *userdata, sd_bus_error *error)
{
	Broker *b = userdata;
	const struct policy_status *st = &b->policy_status;
	int r = sd_bus_message_open_container(reply, 'a', "{sv}");

	if (r >= 0)
		r = sd_bus_message_append(reply, "{sv}{sv}{sv}{sv}",
					  "state", "s", access_policy_state_name(b),
					  "directory", "s", b->policy_dir,
					  "entries", "u", (uint32_t)b->policy->n_entries,
					  "loaded-at", "t", st->loaded_usec);
	if (r >= 0)
		r = sd_bus_message_append(reply, "{sv}", "running-with", "s",
					  st->state != POLICY_REJECTED ? "this" :
					  st->loaded_usec ? "previous" : "empty");
	if (r >= 0)
		r = append_strv_entry(reply, "errors", st->errors);
	if (r >= 0)
		r = append_strv_entry(reply, "warnings", st->warnings);
	if (r >= 0)
		r = actions_append_status(b, reply);
	if (r >= 0)
		r = slices_append_status(b, reply);
	return r < 0 ? r : sd_bus_message_close_container(reply);
}

static const sd_bus_vtable manager_vtable[] = {
	SD_BUS_VTABLE_START(0),
	SD_BUS_PROPERTY("Version", "s", get_version, 0, SD_BUS_VTABLE_PROPERTY_CONST),
	SD_BUS_PROPERTY("EventWindow", "u", get_flow, 0, SD_BUS_VTABLE_PROPERTY_CONST),
	SD_BUS_PROPERTY("EventQueue", "u", get_flow, 0, SD_BUS_VTABLE_PROPERTY_CONST),
	SD_BUS_PROPERTY("PolicyStatus", "a{sv}", get_policy_status, 0,
			SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
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
	SD_BUS_METHOD_WITH_ARGS("OpenConnection", SD_BUS_ARGS("a{sv}", options),
				SD_BUS_RESULT("h", fd),
				method_open_connection, SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_METHOD_WITH_ARGS("ReloadPolicy", SD_BUS_NO_ARGS, SD_BUS_NO_RESULT,
				method_reload_policy, SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_VTABLE_END
};

const struct bus_iface bus_manager_iface = {
	GB_ROOT_PATH, false, GB_IFACE_MANAGER, manager_vtable, NULL, NULL,
};

/* Watches hang off the Manager (Manager.Watch). */
const struct bus_iface *const bus_ifaces[] = {
	&bus_manager_iface, &bus_chip_iface, &bus_line_iface, &bus_request_iface, &bus_watch_iface,
	&bus_slice_iface, NULL,
};

int bus_manager_register(Broker *b)
{
	int r = sd_bus_add_object_manager(b->bus, NULL, GB_ROOT_PATH);

	for (const struct bus_iface *const *i = bus_ifaces; r >= 0 && *i; i++) {
		const struct bus_iface *f = *i;

		if (f->fallback)
			r = sd_bus_add_fallback_vtable(b->bus, NULL, f->path, f->iface, f->vtable,
						       f->find, b);
		else
			r = sd_bus_add_object_vtable(b->bus, NULL, f->path, f->iface, f->vtable, b);
		if (r >= 0 && f->enumerate)
			r = sd_bus_add_node_enumerator(b->bus, NULL, f->path, f->enumerate, b);
	}
	return r;
}
