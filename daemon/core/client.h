/* SPDX-License-Identifier: LGPL-2.1-or-later */
/**
 * @file client.h
 * @brief Clients: the bus connections that talk to the broker (the devm_ model's
 * "device": what a managed request belongs to).
 *
 * Identity comes from the bus, never from call arguments: the first call of a
 * connection asks the bus daemon for its credentials (GetConnectionCredentials:
 * uid and groups); a failed lookup denies the call. Unique names are never
 * reused, so the answer is cached for the connection's life. When a connection
 * leaves, manager/manager.c releases what it held, then frees the Client.
 */
#ifndef GB_CLIENT_H
#define GB_CLIENT_H

#include <stddef.h>
#include <sys/types.h>
#include <systemd/sd-bus.h>

#include "forward.h"
#include "policy.h"

struct Client {
	Broker *broker;
	char *name;                 /* unique bus name */
	uid_t uid;
	gid_t gid;
	gid_t *groups;              /* supplementary groups, as the bus reports them */
	size_t n_groups;
	Request *requests;          /* managed requests (and persistent ones it subscribes to) */
	Watch *watches;             /* its watches */
};

/** The Client that sent @p m, asking the bus for its credentials if new. */
int client_get(Broker *b, sd_bus_message *m, Client **ret, sd_bus_error *error);
/** The Client for a unique name, asking the bus for its credentials if new. */
int client_get_by_name(Broker *b, const char *name, Client **ret, sd_bus_error *error);
/** Known already (no bus call), or NULL. */
Client *client_find(Broker *b, const char *name);
/** Forget it. NULL-safe; returns NULL. It must hold nothing any more. */
Client *client_free(Client *c);
/** Its identity for policy checks. */
void client_caller(const Client *c, struct gb_caller *caller);

#endif
