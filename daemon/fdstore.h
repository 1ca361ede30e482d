/* SPDX-License-Identifier: LGPL-2.1-or-later */
/**
 * @file fdstore.h
 * @brief Outputs that survive a broker restart: systemd's fd store plus metadata.
 *
 * A kernel line request lives as long as one fd refers to it. The broker hands a
 * copy of each request's fds to the service manager (sd_notify FDSTORE=1) and
 * writes what the fds alone cannot say (who owns the request, its lines and their
 * settings, safe states) into a state directory. A broker that crashes or is
 * killed leaves its lines requested, driven as they were; the next one gets the
 * fds back (sd_listen_fds_with_names) and re-adopts the requests under the same
 * object paths. See gpiod-broker(8), RESTARTS.
 */
#ifndef GB_FDSTORE_H
#define GB_FDSTORE_H

#include "broker.h"

/**
 * Decide where metadata goes: @p state_dir (--state-dir), else $RUNTIME_DIRECTORY,
 * else /run/gpiod-broker. Metadata is written only when a service manager takes
 * fds (NOTIFY_SOCKET) or --state-dir was given. 0 or -errno.
 */
int fdstore_init(Broker *b, const char *state_dir);
/**
 * Re-adopt the requests a previous broker left (fds passed in, metadata on disk);
 * release those that cannot or must not come back, to their safe state where the
 * broker can. Needs the bus, the chips and the policy. Never fails the start.
 */
void fdstore_restore(Broker *b);
void fdstore_done(Broker *b);
/**
 * At SIGTERM: is this the stop half of a restart ("systemctl restart", a package
 * upgrade)? True when requests are in the fd store and systemd reports a restart
 * job for this unit; systemd then keeps the store for the next broker, so the
 * lines can be left as they are instead of released. Asks systemd over the bus
 * (1 s timeout); any doubt means false, i.e. release as usual.
 */
bool fdstore_restart_queued(Broker *b);

/* Hooks of request.c / request-bus.c. Cheap no-ops when nothing is recorded. */
void fdstore_request_added(Request *r);
/** Settings or subscriber changed: rewrite the metadata. */
void fdstore_request_changed(Request *r);
/** Called after the safe states are applied, before the fds are closed. */
void fdstore_request_removed(Request *r);
/** The chip went away: its fd is of no use to a later broker. */
void fdstore_reqchip_gone(ReqChip *rc);

#endif
