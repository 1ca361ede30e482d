/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The broker's life (manager.h), and clients leaving.
 *
 * One NameOwnerChanged match covers every client (dbus-daemon allows 512 match
 * rules per connection, so one per client would not scale); when a unique name
 * goes away, what it held goes with it (the devm_ model).
 */
#include "manager.h"

#include "action.h"
#include <errno.h>
#include <stdlib.h>

#include "action.h"
#include "announce.h"
#include "client.h"
#include "line-request.h"
#include "log.h"
#include "org.gpiodbroker1.h"
#include "request.h"
#include "sliced.h"
#include "watch.h"

int manager_init(Broker *b, const char *state_dir)
{
	int r;

	b->requests = hashmap_new();
	b->clients = hashmap_new();
	b->policy = gb_policy_new(); /* deny all until the policy is loaded */
	if (!b->requests || !b->clients || !b->policy)
		return -ENOMEM;
	r = state_init(&b->state, state_dir);
	return r;
}

void manager_client_gone(Broker *b, Client *c)
{
	/* Its private connections first: they are the client too, and nothing more
	 * is said on them. */
	client_drop_conns(c);
	while (c->requests) {
		Request *req = c->requests;

		if (req->persistent) {
			/* It lives on; events wait for the next subscriber. */
			request_set_owner(req, NULL);
			announce_changed(b, req->path, GB_IFACE_REQUEST, "Owner", NULL);
		} else {
			request_close(req, "its owner left the bus");
		}
	}
	watch_client_gone(c);
	client_free(c);
}

static int on_name_owner_changed(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
	Broker *b = userdata;
	const char *name, *old_owner, *new_owner;
	Client *c;

	if (sd_bus_message_read(m, "sss", &name, &old_owner, &new_owner) < 0)
		return 0;
	if (name[0] != ':' || *new_owner)
		return 0;
	c = client_find(b, name);
	if (c) {
		log_debug("client %s left the bus", name);
		manager_client_gone(b, c);
	}
	return 0;
}

int manager_startup(Broker *b)
{
	int r;

	r = sd_bus_match_signal(b->bus, &b->name_owner_slot, "org.freedesktop.DBus",
				"/org/freedesktop/DBus", "org.freedesktop.DBus", "NameOwnerChanged",
				on_name_owner_changed, b);
	if (r < 0)
		return log_error_errno(r, "cannot watch bus clients: %m");
	r = manager_chips_start(b);
	if (r < 0)
		return r;
	/* After the chips: entries covering one line twice show only on real lines. */
	r = manager_load_policy(b, true, NULL);
	if (r < 0)
		return log_error_errno(r, "cannot load the policy: %m");
	return 0;
}

void manager_done(Broker *b)
{
	Client *c;
	Watch *w;
	size_t i;

	/* Actions and watches first: a line a request lets go of is then not taken for
	 * them. */
	actions_free_all(b);
	slices_free_all(b);
	while (b->watches && (i = 0, w = hashmap_iterate(b->watches, &i, NULL)))
		watch_close(w, "broker shutting down");
	/* SIGTERM releases everything: every request goes back to the kernel. */
	while (b->request_list)
		request_close(b->request_list, "broker shutting down");
	while ((i = 0, c = b->clients ? hashmap_iterate(b->clients, &i, NULL) : NULL))
		manager_client_gone(b, c);
	b->name_owner_slot = sd_bus_slot_unref(b->name_owner_slot);
	manager_chips_stop(b);
	state_done(&b->state);
	lreq_buffer_free();
	hashmap_free(b->requests);
	hashmap_free(b->clients);
	hashmap_free(b->watches);
	gb_policy_free(b->policy);
	free(b->policy_status.errors);
	free(b->policy_status.warnings);
	if (b->bus)
		sd_bus_flush_close_unref(b->bus);
	sd_event_unref(b->event);
}
