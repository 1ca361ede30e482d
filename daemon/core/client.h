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
 *
 * A client may also talk to the broker over private connections
 * (Manager.OpenConnection, bus/p2p-bus.c): peer-to-peer D-Bus on a socketpair, one
 * hop instead of two. Such a connection is another way to the same Client, with
 * the identity of the bus name that opened it (nobody on a socketpair can be asked
 * who they are: the peer of the broker's end is the broker). Its calls map to that
 * Client, and what the broker sends the client goes out on its newest private
 * connection instead of the bus. The Client and its connections end together:
 * when the bus name leaves or any of its private connections closes.
 *
 * A private connection is on the short way of the broker's loop (shared/loop.h),
 * not attached to sd-event: core/conn.h runs its I/O, one message per wake-up, and
 * bounds what its peer can make the broker hold; signals go through client_send()
 * so that a full socket is waited on.
 */
#ifndef GB_CLIENT_H
#define GB_CLIENT_H

#include <stddef.h>
#include <sys/types.h>
#include <systemd/sd-bus.h>

#include "conn.h"
#include "forward.h"
#include "policy.h"

/* Private connections one client may hold at a time (LimitsExceeded beyond). */
#define GB_MAX_CONNECTIONS_PER_CLIENT 4

struct Client {
	Broker *broker;
	char *name;                 /* unique bus name */
	uid_t uid;
	gid_t gid;
	gid_t *groups;              /* supplementary groups, as the bus reports them */
	size_t n_groups;
	Request *requests;          /* managed requests (and persistent ones it subscribes to) */
	Watch *watches;             /* its watches */
	ClientConn conns[GB_MAX_CONNECTIONS_PER_CLIENT]; /* private connections, oldest first */
	unsigned int n_conns;
};

/**
 * The Client that sent @p m, asking the bus for its credentials if new. A message
 * on a private connection belongs to the client that opened it.
 */
int client_get(Broker *b, sd_bus_message *m, Client **ret, sd_bus_error *error);
/** The Client for a unique name, asking the bus for its credentials if new. */
int client_get_by_name(Broker *b, const char *name, Client **ret, sd_bus_error *error);
/**
 * A new Client for unique name @p name with the identity given (@p groups are
 * copied; @p gid is (gid_t)-1 when the primary group is among them), as
 * client_get_by_name() makes one from what the bus reports: for a caller known by
 * other means (the fuzz target of the private connection). -EEXIST if @p name has
 * one already.
 */
int client_new(Broker *b, const char *name, uid_t uid, gid_t gid, const gid_t *groups,
	       size_t n_groups, Client **ret);
/** Known already (no bus call), or NULL. */
Client *client_find(Broker *b, const char *name);
/** Forget it. NULL-safe; returns NULL. It must hold nothing any more. */
Client *client_free(Client *c);
/** Its identity for policy checks. */
void client_caller(const Client *c, struct gb_caller *caller);
/**
 * Hand @p bus (a started private connection, not attached to an event loop, and
 * described with sd_bus_set_description() as @p c's unique name) to @p c, which
 * runs its I/O from now on (conn.h) and closes it when it ends. @p broken is called
 * if it breaks or is dropped. -EDQUOT beyond GB_MAX_CONNECTIONS_PER_CLIENT.
 */
int client_add_conn(Client *c, sd_bus *bus, conn_broken_fn broken);
/** The Client whose private connection @p bus is, or NULL. */
Client *client_of_conn(Broker *b, sd_bus *bus);
/** Close its private connections (it is leaving: nothing more goes out on them). */
void client_drop_conns(Client *c);
/**
 * A signal for @p c alone: on its newest private connection, or on the bus with
 * @p c as destination (unicast). Send it with client_send().
 */
int client_new_signal(Client *c, const char *path, const char *iface, const char *member,
		      sd_bus_message **ret);
/** Send @p m (from client_new_signal()), as sd_bus_send() does. */
int client_send(Client *c, sd_bus_message *m);

#endif
