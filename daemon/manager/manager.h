/* SPDX-License-Identifier: LGPL-2.1-or-later */
/**
 * @file manager.h
 * @brief Building the broker up and tearing it down, and the changes that fan out
 * to many objects: a client leaving, a chip coming or going, a policy reload, a
 * restart.
 *
 * Start-up (main.c): manager_init() -> bus faces registered -> manager_startup()
 * (clients, chips, policy) -> the bus name -> manager_restore() -> READY.
 */
#ifndef GB_MANAGER_H
#define GB_MANAGER_H

#include <stdbool.h>
#include <systemd/sd-bus.h>

#include "broker.h"

/** Empty maps, an empty (deny-all) policy, the state directory. 0 or -ENOMEM. */
int manager_init(Broker *b, const char *state_dir);
/** Follow the clients, open the chips, load the policy. */
int manager_startup(Broker *b);
/** Release everything (each line to its safe state, unless handed over) and free. */
void manager_done(Broker *b);
/**
 * @p c left the bus, or closed a private connection: its private connections
 * close, its managed requests and watches go, persistent ones stay.
 */
void manager_client_gone(Broker *b, Client *c);

/* hotplug.c: chips as their nodes come and go in dev_dir. */
int manager_chips_start(Broker *b);
void manager_chips_stop(Broker *b);

/* policy-load.c: the policy as the broker applies it. */
/**
 * (Re)load the policy from b->policy_dir. A policy with any error is rejected
 * whole: at start the broker runs with an empty policy, at a reload the policy in
 * force stays (PolicyInvalid with every problem). On success, requests and watches
 * the new policy no longer allows are revoked.
 */
int manager_load_policy(Broker *b, bool initial, sd_bus_error *error);
/**
 * A chip came or went: entries that name a chip by identity are checked again
 * (one that now matches two chips is logged, and its lines refused until then).
 */
void manager_policy_chips_changed(Broker *b);

/* restore.c: after a restart. */
/**
 * Re-adopt the requests a previous broker left (fds passed in, records on disk);
 * release those that cannot or must not come back, to their safe state where the
 * broker can. Needs the bus, the chips and the policy. Never fails the start.
 */
void manager_restore(Broker *b);

/* restart-job.c */
/**
 * At SIGTERM: is this the stop half of a restart ("systemctl restart", a package
 * upgrade)? True when requests are in the fd store and systemd reports a restart
 * job for this unit; systemd then keeps the store for the next broker, so the
 * lines can be left as they are instead of released. Asks systemd over the bus
 * (1 s timeout); any doubt means false, i.e. release as usual.
 */
bool manager_restart_queued(Broker *b);

#endif
