/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Clients: the bus connections that talk to the broker, and the devm_ model.
 *
 * Identity comes from the bus, never from call arguments: the first call of a
 * connection asks the bus daemon for its credentials (GetConnectionCredentials:
 * uid and groups); a failed lookup denies the call. Unique names are never reused, so the answer is
 * cached for the connection's life.
 *
 * One NameOwnerChanged match covers every client (dbus-daemon allows 512 match rules
 * per connection, so one per client would not scale); when a unique name goes away
 * its managed requests are released.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "broker.h"
#include "errors.h"
#include "log.h"
#include "macro.h"

static void client_free(Client *c)
{
	while (c->requests) {
		Request *r = c->requests;

		if (r->persistent) {
			/* It lives on; events wait for the next subscriber. */
			client_detach_request(c, r);
			sd_bus_emit_properties_changed(c->broker->bus, r->path, GB_IFACE_REQUEST,
						       "Owner", NULL);
		} else {
			request_free(r, "its owner left the bus");
		}
	}
	watch_client_gone(c);
	hashmap_remove(c->broker->clients, c->name);
	free(c->name);
	free(c->groups);
	free(c);
}

static int on_name_owner_changed(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
	Broker *b = userdata;
	const char *name, *old_owner, *new_owner;
	Client *c;
	int r;

	r = sd_bus_message_read(m, "sss", &name, &old_owner, &new_owner);
	if (r < 0)
		return 0;
	if (name[0] != ':' || *new_owner)
		return 0;
	c = hashmap_get(b->clients, name);
	if (c) {
		log_debug("client %s left the bus", name);
		client_free(c);
	}
	return 0;
}

int clients_start(Broker *b)
{
	return sd_bus_match_signal(b->bus, &b->name_owner_slot, "org.freedesktop.DBus",
				   "/org/freedesktop/DBus", "org.freedesktop.DBus",
				   "NameOwnerChanged", on_name_owner_changed, b);
}

void clients_stop(Broker *b)
{
	Client *c;
	size_t i = 0;

	while ((i = 0, c = hashmap_iterate(b->clients, &i, NULL)))
		client_free(c);
	b->name_owner_slot = sd_bus_slot_unref(b->name_owner_slot);
}

/* Ask the bus daemon who the peer is: UnixUserID and UnixGroupIDs (primary and
 * supplementary groups, complete or absent, as the D-Bus specification says). */
static int query_credentials(sd_bus *bus, const char *name, Client *c)
{
	sd_bus_error err = SD_BUS_ERROR_NULL;
	sd_bus_message *reply = NULL;
	bool have_uid = false;
	int r;

	r = sd_bus_call_method(bus, "org.freedesktop.DBus", "/org/freedesktop/DBus",
			       "org.freedesktop.DBus", "GetConnectionCredentials", &err, &reply,
			       "s", name);
	sd_bus_error_free(&err);
	if (r < 0)
		return r;
	r = sd_bus_message_enter_container(reply, 'a', "{sv}");
	while (r >= 0 && (r = sd_bus_message_enter_container(reply, 'e', "sv")) > 0) {
		const char *key;

		r = sd_bus_message_read(reply, "s", &key);
		if (r < 0)
			break;
		if (strcmp(key, "UnixUserID") == 0) {
			uint32_t uid;

			r = sd_bus_message_read(reply, "v", "u", &uid);
			c->uid = uid;
			have_uid = r >= 0;
		} else if (strcmp(key, "UnixGroupIDs") == 0) {
			const void *data;
			size_t size;

			r = sd_bus_message_enter_container(reply, 'v', "au");
			if (r >= 0)
				r = sd_bus_message_read_array(reply, 'u', &data, &size);
			if (r >= 0 && size) {
				c->groups = malloc(size);
				if (!c->groups)
					r = -ENOMEM;
				else {
					memcpy(c->groups, data, size);
					c->n_groups = size / sizeof(uint32_t);
				}
			}
			if (r >= 0)
				r = sd_bus_message_exit_container(reply);
		} else {
			r = sd_bus_message_skip(reply, "v");
		}
		if (r >= 0)
			r = sd_bus_message_exit_container(reply);
	}
	sd_bus_message_unref(reply);
	if (r < 0)
		return r;
	return have_uid ? 0 : -ENODATA;
}

int client_get(Broker *b, sd_bus_message *m, Client **ret, sd_bus_error *error)
{
	const char *sender = sd_bus_message_get_sender(m);

	if (!sender)
		return sd_bus_error_set(error, GB_ERROR_PERMISSION, "caller has no bus name");
	return client_get_by_name(b, sender, ret, error);
}

int client_get_by_name(Broker *b, const char *sender, Client **ret, sd_bus_error *error)
{
	Client *c;
	int r;

	c = hashmap_get(b->clients, sender);
	if (c) {
		*ret = c;
		return 0;
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->broker = b;
	c->gid = (gid_t)-1; /* the primary group is among the groups the bus reports */
	/* The bus, never /proc, never the message body. */
	r = query_credentials(b->bus, sender, c);
	if (r < 0) {
		free(c->groups);
		free(c);
		log_warning_errno(r, "cannot get credentials of %s from the bus: %m", sender);
		return sd_bus_error_setf(error, GB_ERROR_PERMISSION,
					 "cannot determine the caller's credentials: %s", strerror(-r));
	}
	c->name = strdup(sender);
	if (!c->name || (r = hashmap_put(b->clients, c->name, c)) < 0) {
		free(c->name);
		free(c->groups);
		free(c);
		return r < 0 ? r : -ENOMEM;
	}
	*ret = c;
	return 0;
}

void client_attach_request(Client *c, Request *r)
{
	r->client = c;
	r->client_next = c->requests;
	c->requests = r;
	if (flow_set_dest(&r->flow, c->name) < 0)
		log_warning("request %s: out of memory: events for %s are counted lost", r->path,
			    c->name);
}

void client_detach_request(Client *c, Request *r)
{
	for (Request **pp = &c->requests; *pp; pp = &(*pp)->client_next)
		if (*pp == r) {
			*pp = r->client_next;
			break;
		}
	r->client_next = NULL;
	r->client = NULL;
	flow_set_dest(&r->flow, NULL);
}
