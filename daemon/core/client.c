/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Clients (client.h).
 *
 * Who leaves the bus, and what then goes with it, is manager/manager.c's business.
 */

#include "bus-error.h"
#include "client.h"

#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "broker.h"
#include "log.h"
#include "macro.h"
#include "org.gpiodbroker1.h"

Client *client_free(Client *c)
{
	if (!c)
		return NULL;
	/* Released first, by the manager, with the signals that go with it. */
	assert(!c->requests && !c->watches);
	client_drop_conns(c);
	hashmap_remove(c->broker->clients, c->name);
	free(c->name);
	free(c->groups);
	free(c);
	return NULL;
}

Client *client_find(Broker *b, const char *name)
{
	return hashmap_get(b->clients, name);
}

void client_caller(const Client *c, struct gb_caller *caller)
{
	*caller = (struct gb_caller){ c->uid, c->gid, c->groups, c->n_groups };
}

/* Ask the bus daemon who the peer is: UnixUserID and UnixGroupIDs (primary and
 * supplementary groups, complete or absent, as the D-Bus specification says). The
 * groups are malloc()ed into *@p groups. */
static int query_credentials(sd_bus *bus, const char *name, uid_t *uid, gid_t **groups,
			     size_t *n_groups)
{
	sd_bus_error err = SD_BUS_ERROR_NULL;
	sd_bus_message *reply = NULL;
	bool have_uid = false;
	int r;

	*groups = NULL;
	*n_groups = 0;
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
			uint32_t u;

			r = sd_bus_message_read(reply, "v", "u", &u);
			*uid = u;
			have_uid = r >= 0;
		} else if (strcmp(key, "UnixGroupIDs") == 0) {
			const void *data;
			size_t size;

			r = sd_bus_message_enter_container(reply, 'v', "au");
			if (r >= 0)
				r = sd_bus_message_read_array(reply, 'u', &data, &size);
			if (r >= 0 && size && !*groups) {
				*groups = malloc(size);
				if (!*groups)
					r = -ENOMEM;
				else {
					memcpy(*groups, data, size);
					*n_groups = size / sizeof(uint32_t);
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
	if (r >= 0 && !have_uid)
		r = -ENODATA;
	if (r < 0) {
		free(*groups);
		*groups = NULL;
		*n_groups = 0;
	}
	return r < 0 ? r : 0;
}

int client_add_conn(Client *c, sd_bus *bus, conn_broken_fn broken)
{
	const char *name;
	int r;

	if (c->n_conns >= GB_MAX_CONNECTIONS_PER_CLIENT)
		return -EDQUOT;
	/* Named after its client (before it started): that is how its calls find it. */
	if (sd_bus_get_description(bus, &name) < 0 || strcmp(name, c->name) != 0)
		return -EINVAL;
	r = conn_start(&c->conns[c->n_conns], c->broker, bus, c->name, c->uid, c->n_conns + 1,
		       broken);
	if (r < 0)
		return r;
	c->n_conns++;
	return 0;
}

Client *client_of_conn(Broker *b, sd_bus *bus)
{
	const char *name;
	Client *c;

	if (sd_bus_get_description(bus, &name) < 0 || !(c = client_find(b, name)))
		return NULL;
	for (unsigned int i = 0; i < c->n_conns; i++)
		if (c->conns[i].bus == bus)
			return c;
	return NULL;
}

void client_drop_conns(Client *c)
{
	while (c->n_conns)
		conn_stop(&c->conns[--c->n_conns]);
}

int client_new_signal(Client *c, const char *path, const char *iface, const char *member,
		      sd_bus_message **ret)
{
	sd_bus_message *m = NULL;
	int r;

	if (c->n_conns)
		/* Peer to peer: nobody else is on that connection, no destination. */
		return sd_bus_message_new_signal(c->conns[c->n_conns - 1].bus, ret, path, iface,
						 member);
	r = sd_bus_message_new_signal(c->broker->bus, &m, path, iface, member);
	if (r < 0)
		return r;
	/* sd_bus_emit_signal_to() is libsystemd 253+; this is the same on 252. */
	r = sd_bus_message_set_destination(m, c->name);
	if (r < 0) {
		sd_bus_message_unref(m);
		return r;
	}
	*ret = m;
	return 0;
}

int client_get(Broker *b, sd_bus_message *m, Client **ret, sd_bus_error *error)
{
	const char *sender = sd_bus_message_get_sender(m);
	sd_bus *bus = sd_bus_message_get_bus(m);

	if (bus != b->bus) {
		/* A private connection: its identity is its opener's, fixed at open. */
		Client *c = client_of_conn(b, bus);

		if (!c)
			return sd_bus_error_set(error, GB_ERROR_PERMISSION,
						"this connection has no client any more");
		*ret = c;
		return 0;
	}

	if (!sender)
		return sd_bus_error_set(error, GB_ERROR_PERMISSION, "caller has no bus name");
	return client_get_by_name(b, sender, ret, error);
}

int client_new(Broker *b, const char *name, uid_t uid, gid_t gid, const gid_t *groups,
	       size_t n_groups, Client **ret)
{
	Client *c;
	int r;

	if (hashmap_get(b->clients, name))
		return -EEXIST;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	*c = (Client){ .broker = b, .uid = uid, .gid = gid, .n_groups = n_groups };
	c->name = strdup(name);
	if (n_groups)
		c->groups = malloc(n_groups * sizeof(*groups));
	if (!c->name || (n_groups && !c->groups)) {
		r = -ENOMEM;
		goto fail;
	}
	if (n_groups)
		memcpy(c->groups, groups, n_groups * sizeof(*groups));
	r = hashmap_put(b->clients, c->name, c);
	if (r < 0)
		goto fail;
	*ret = c;
	return 0;
fail:
	free(c->name);
	free(c->groups);
	free(c);
	return r;
}

int client_get_by_name(Broker *b, const char *sender, Client **ret, sd_bus_error *error)
{
	_cleanup_free_ gid_t *groups = NULL;
	size_t n_groups;
	uid_t uid = 0;
	Client *c;
	int r;

	c = hashmap_get(b->clients, sender);
	if (c) {
		*ret = c;
		return 0;
	}
	/* The bus, never /proc, never the message body. */
	r = query_credentials(b->bus, sender, &uid, &groups, &n_groups);
	if (r < 0) {
		/* A connection that has already left (NameHasNoOwner: ENXIO) is no fault:
		 * e.g. a persistent request's creator, asked for after a restart. */
		log_full_errno(r == -ENXIO ? LOG_DEBUG : LOG_WARNING, r,
			       "cannot get credentials of %s from the bus: %m", sender);
		return gb_bus_error_setf(error, GB_ERROR_PERMISSION,
					 "cannot determine the caller's credentials: %s", strerror(-r));
	}
	/* The primary group is among the groups the bus reports. */
	return client_new(b, sender, uid, (gid_t)-1, groups, n_groups, ret);
}

int client_send(Client *c, sd_bus_message *m)
{
	sd_bus *bus = sd_bus_message_get_bus(m);
	int r = sd_bus_send(NULL, m, NULL);

	/* What a full socket did not take waits in sd-bus: the loop must wake when the
	 * client reads. (The bus connection's events are set each time before the loop
	 * sleeps, main.c.) */
	for (unsigned int i = 0; i < c->n_conns; i++)
		if (c->conns[i].bus == bus)
			conn_sent(&c->conns[i]);
	return r;
}
