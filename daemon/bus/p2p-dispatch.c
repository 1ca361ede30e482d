/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Serving the broker's objects on a private connection with one message filter.
 *
 * Registering the vtables on each connection, as on the bus, makes sd-bus build
 * its tables of members and nodes once per connection (about 7 KiB for ours): a
 * thousand private connections cost megabytes for a copy of the same static data.
 * Here one filter per connection looks the call up in the very vtables the bus
 * serves (bus_ifaces, bus.h) and runs the same handlers and getters, checking and
 * answering as sd-bus does on the bus: the same signature check, the same error
 * names and messages for an unknown object, interface, method or property, and a
 * handler's error (or negative errno) as the error reply.
 *
 * What a private connection does not serve (docs/dbus-api.md, OpenConnection):
 * Introspect and ObjectManager.GetManagedObjects, which describe the whole tree and
 * belong with the bus's broadcast signals; they are UnknownMethod, saying so.
 * Peer.Ping and Peer.GetMachineId are left to sd-bus, which answers them itself.
 */

#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "bus-error.h"
#include "broker.h"
#include "bus.h"
#include "client.h"
#include "log.h"
#include "macro.h"
#include "manager.h"

#define IFACE_PROPERTIES "org.freedesktop.DBus.Properties"

/* A member of @p f's vtable of @p type (a method, or either kind of property). */
static const sd_bus_vtable *vtable_member(const struct bus_iface *f, int type, const char *member)
{
	for (const sd_bus_vtable *v = f->vtable + 1; v->type != _SD_BUS_VTABLE_END; v++) {
		bool prop = v->type == _SD_BUS_VTABLE_PROPERTY ||
			    v->type == _SD_BUS_VTABLE_WRITABLE_PROPERTY;

		if ((type == _SD_BUS_VTABLE_PROPERTY ? prop : v->type == type) &&
		    strcmp(v->x.method.member, member) == 0)
			return v;
	}
	return NULL;
}

/* As sd-bus finds an object: the Manager's is the Broker itself; a fallback's is
 * what its find callback says of a path at or below its prefix. 1 and *@p found,
 * 0 if @p f has no object at @p path. */
static int find_object(Broker *b, sd_bus *bus, const struct bus_iface *f, const char *path,
		       void **found, sd_bus_error *error)
{
	size_t n = strlen(f->path);

	if (!f->fallback) {
		if (strcmp(path, f->path) != 0)
			return 0;
		*found = b;
		return 1;
	}
	if (strncmp(path, f->path, n) != 0 || (path[n] != '/' && path[n] != '\0'))
		return 0;
	return f->find(bus, path, f->iface, b, found, error);
}

/* Is there any object at @p path? (What decides UnknownObject against the rest.) */
static int object_exists(Broker *b, sd_bus *bus, const char *path, sd_bus_error *error)
{
	for (const struct bus_iface *const *i = bus_ifaces; *i; i++) {
		void *u;
		int r = find_object(b, bus, *i, path, &u, error);

		if (r != 0)
			return r;
	}
	return 0;
}

static int unknown(Broker *b, sd_bus_message *m, sd_bus_error *error)
{
	const char *path = sd_bus_message_get_path(m), *iface = sd_bus_message_get_interface(m);
	int r = object_exists(b, sd_bus_message_get_bus(m), path, error);

	if (r < 0)
		return r;
	if (r == 0)
		return gb_bus_error_setf(error, SD_BUS_ERROR_UNKNOWN_OBJECT, "Unknown object '%s'.",
					 path);
	return gb_bus_error_setf(error, SD_BUS_ERROR_UNKNOWN_METHOD,
				 "Unknown method %s or interface %s.", sd_bus_message_get_member(m),
				 iface);
}

static int call_method(Broker *b, sd_bus_message *m, const struct bus_iface *f,
		       sd_bus_error *error)
{
	const sd_bus_vtable *v = vtable_member(f, _SD_BUS_VTABLE_METHOD, sd_bus_message_get_member(m));
	const char *sig, *want;
	void *u;
	int r;

	if (!v)
		return unknown(b, m, error);
	r = find_object(b, sd_bus_message_get_bus(m), f, sd_bus_message_get_path(m), &u, error);
	if (r <= 0)
		return r < 0 ? r : unknown(b, m, error);
	sig = sd_bus_message_get_signature(m, 1);
	want = v->x.method.signature ? v->x.method.signature : "";
	if (strcmp(sig ? sig : "", want) != 0)
		return gb_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS,
					 "Invalid arguments '%s' to call %s.%s(), expecting '%s'.",
					 sig ? sig : "", f->iface, v->x.method.member, want);
	/* sd-bus lets only privileged callers use a method not marked unprivileged; the
	 * peer of a private connection has no credentials to ask about, so it may not. */
	if (!(v->flags & SD_BUS_VTABLE_UNPRIVILEGED))
		return gb_bus_error_setf(error, SD_BUS_ERROR_ACCESS_DENIED,
					 "Access to %s.%s() not permitted.", f->iface, v->x.method.member);
	r = v->x.method.handler(m, (uint8_t *)u + v->x.method.offset, error);
	/* The handler replied, or failed: then the filter's caller replies with the
	 * error, as sd-bus does after a vtable handler. Either way it is handled. */
	return r < 0 || sd_bus_error_is_set(error) ? r : 1;
}

/* One property into @p reply as a variant, by its own getter. */
static int append_property(sd_bus_message *reply, const char *path, const struct bus_iface *f,
			   const sd_bus_vtable *v, void *u, sd_bus_error *error)
{
	int r = sd_bus_message_open_container(reply, 'v', v->x.property.signature);

	if (r >= 0)
		r = v->x.property.get(sd_bus_message_get_bus(reply), path, f->iface,
				      v->x.property.member, reply,
				      (uint8_t *)u + v->x.property.offset, error);
	if (r >= 0 && sd_bus_error_is_set(error))
		r = -sd_bus_error_get_errno(error);
	return r < 0 ? r : sd_bus_message_close_container(reply);
}

/* Properties.Get and Set. Every property of ours is read-only. */
static int get_set(Broker *b, sd_bus_message *m, bool get, sd_bus_error *error)
{
	const char *path = sd_bus_message_get_path(m), *iface, *prop;
	_cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
	const struct bus_iface *f = NULL;
	const sd_bus_vtable *v = NULL;
	void *u;
	int r;

	if (sd_bus_message_read(m, "ss", &iface, &prop) < 0)
		return sd_bus_error_set(error, SD_BUS_ERROR_INVALID_ARGS,
					"Expected interface and member parameters");
	for (const struct bus_iface *const *i = bus_ifaces; !f && *i; i++)
		if (strcmp((*i)->iface, iface) == 0 &&
		    (v = vtable_member(*i, _SD_BUS_VTABLE_PROPERTY, prop)))
			f = *i;
	r = f ? find_object(b, sd_bus_message_get_bus(m), f, path, &u, error) : 0;
	if (r < 0)
		return r;
	if (r == 0) {
		r = object_exists(b, sd_bus_message_get_bus(m), path, error);
		if (r <= 0)
			return r < 0 ? r : gb_bus_error_setf(error, SD_BUS_ERROR_UNKNOWN_OBJECT,
							     "Unknown object '%s'.", path);
		return gb_bus_error_setf(error, SD_BUS_ERROR_UNKNOWN_PROPERTY,
					 "Unknown interface %s or property %s.", iface, prop);
	}
	if (!get)
		return gb_bus_error_setf(error, SD_BUS_ERROR_PROPERTY_READ_ONLY,
					 "Property '%s' is not writable.", prop);
	r = sd_bus_message_new_method_return(m, &reply);
	if (r >= 0)
		r = append_property(reply, path, f, v, u, error);
	if (r >= 0)
		r = sd_bus_send(NULL, reply, NULL);
	return r < 0 ? r : 1;
}

/* Every property of @p f's object @p u as a{sv} entries, in vtable order. */
static int append_all(sd_bus_message *reply, const char *path, const struct bus_iface *f, void *u,
		      sd_bus_error *error)
{
	int r = 0;

	for (const sd_bus_vtable *v = f->vtable + 1; r >= 0 && v->type != _SD_BUS_VTABLE_END; v++) {
		if ((v->type != _SD_BUS_VTABLE_PROPERTY && v->type != _SD_BUS_VTABLE_WRITABLE_PROPERTY) ||
		    (v->flags & (SD_BUS_VTABLE_HIDDEN | SD_BUS_VTABLE_PROPERTY_EXPLICIT)))
			continue;
		r = sd_bus_message_open_container(reply, 'e', "sv");
		if (r >= 0)
			r = sd_bus_message_append(reply, "s", v->x.property.member);
		if (r >= 0)
			r = append_property(reply, path, f, v, u, error);
		if (r >= 0)
			r = sd_bus_message_close_container(reply);
	}
	return r;
}

/* Properties.GetAll: one interface, or all of the object's for "". */
static int get_all(Broker *b, sd_bus_message *m, sd_bus_error *error)
{
	const char *path = sd_bus_message_get_path(m), *iface;
	_cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
	bool found_object = false, found_iface;
	int r;

	if (sd_bus_message_read(m, "s", &iface) < 0)
		return sd_bus_error_set(error, SD_BUS_ERROR_INVALID_ARGS, "Expected interface parameter");
	/* The standard interfaces have no properties: an empty answer, as sd-bus gives. */
	found_iface = !*iface || strcmp(iface, IFACE_PROPERTIES) == 0 ||
		      strcmp(iface, "org.freedesktop.DBus.Peer") == 0 ||
		      strcmp(iface, "org.freedesktop.DBus.Introspectable") == 0;
	r = sd_bus_message_new_method_return(m, &reply);
	if (r >= 0)
		r = sd_bus_message_open_container(reply, 'a', "{sv}");
	for (const struct bus_iface *const *i = bus_ifaces; r >= 0 && *i; i++) {
		void *u;

		r = find_object(b, sd_bus_message_get_bus(m), *i, path, &u, error);
		if (r <= 0)
			continue;
		found_object = true;
		if (*iface && strcmp((*i)->iface, iface) != 0)
			continue;
		found_iface = true;
		r = append_all(reply, path, *i, u, error);
	}
	if (r < 0)
		return r;
	if (!found_object)
		return gb_bus_error_setf(error, SD_BUS_ERROR_UNKNOWN_OBJECT, "Unknown object '%s'.", path);
	if (!found_iface)
		return gb_bus_error_setf(error, SD_BUS_ERROR_UNKNOWN_INTERFACE, "Unknown interface '%s'.",
					 iface);
	r = sd_bus_message_close_container(reply);
	if (r >= 0)
		r = sd_bus_send(NULL, reply, NULL);
	return r < 0 ? r : 1;
}

void bus_p2p_closed(Broker *b, sd_bus *bus)
{
	Client *c = client_of_conn(b, bus);

	/* The socket closed (the client closed it, exited or was killed): like the
	 * client leaving the bus, what it held goes now, to its safe state. */
	if (c) {
		log_debug("client %s closed its private connection", c->name);
		manager_client_gone(b, c);
	}
}

static int dispatch(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
	Broker *b = userdata;
	sd_bus *bus = sd_bus_message_get_bus(m);
	const char *iface = sd_bus_message_get_interface(m), *member = sd_bus_message_get_member(m);

	/* sd-bus makes this one up when the socket closes (a peer cannot send it: sd-bus
	 * refuses the Local interface from the wire); the connection is closed by then.
	 * Caught here rather than by a match: a match costs a tree of nodes per connection. */
	if (sd_bus_message_is_signal(m, "org.freedesktop.DBus.Local", "Disconnected")) {
		if (!sd_bus_is_open(bus))
			bus_p2p_closed(b, bus);
		return 0;
	}
	if (!sd_bus_message_is_method_call(m, NULL, NULL) || !member)
		return 0;
	/* sd-bus looks a method up by its interface: without one, no object has it. */
	if (!iface)
		return gb_bus_error_setf(error, SD_BUS_ERROR_UNKNOWN_OBJECT, "Unknown object '%s'.",
					 sd_bus_message_get_path(m));
	if (strcmp(iface, "org.freedesktop.DBus.Peer") == 0)
		return 0;
	if (strcmp(iface, IFACE_PROPERTIES) == 0) {
		if (strcmp(member, "Get") == 0 || strcmp(member, "Set") == 0)
			return get_set(b, m, member[0] == 'G', error);
		if (strcmp(member, "GetAll") == 0)
			return get_all(b, m, error);
		return unknown(b, m, error);
	}
	if (sd_bus_message_is_method_call(m, "org.freedesktop.DBus.Introspectable", "Introspect") ||
	    sd_bus_message_is_method_call(m, "org.freedesktop.DBus.ObjectManager", "GetManagedObjects"))
		return gb_bus_error_setf(error, SD_BUS_ERROR_UNKNOWN_METHOD,
					 "%s.%s is served on the system bus, not on a private "
					 "connection", iface, member);
	for (const struct bus_iface *const *i = bus_ifaces; *i; i++)
		if (strcmp((*i)->iface, iface) == 0)
			return call_method(b, m, *i, error);
	return unknown(b, m, error);
}

int bus_p2p_serve(Broker *b, sd_bus *bus)
{
	return sd_bus_add_filter(bus, NULL, dispatch, b);
}
