/* SPDX-License-Identifier: LGPL-2.1-or-later */
/**
 * @file notify-harness.h
 * @brief Test helper: the service manager's side of sd_notify and the fd store.
 *
 * The bench has no systemd as PID 1, so this plays its part for the broker: a
 * SOCK_DGRAM AF_UNIX socket as NOTIFY_SOCKET, READY=1 / FDSTORE=1 / FDSTOREREMOVE=1
 * with SCM_RIGHTS and SCM_CREDENTIALS (only the main pid is listened to, as with
 * NotifyAccess=main), the stored fds kept by FDNAME, and a restart that passes them
 * as LISTEN_FDS / LISTEN_FDNAMES / LISTEN_PID, as systemd does (duplicates of an
 * fd already stored are dropped, as systemd does).
 */
#ifndef GB_TEST_NOTIFY_HARNESS_H
#define GB_TEST_NOTIFY_HARNESS_H

#include <stdbool.h>
#include <sys/types.h>

#include "brokertest.h"

struct gb_harness;

/** A socket under /run and a thread that receives on it. Aborts the test on failure. */
struct gb_harness *gb_harness_new(void);
/** Close the socket and every stored fd. */
void gb_harness_free(struct gb_harness *h);

/**
 * Start the broker through gb_broker_spawn() with NOTIFY_SOCKET set and the
 * stored fds passed in (if any), and wait for READY=1. @p opts as there, but the
 * harness owns the child's setup and environment: child_setup, userdata and envp
 * must be left zero. @p with_socket false: start it as by hand (no NOTIFY_SOCKET,
 * no fds), still waiting for the name.
 */
pid_t gb_harness_start(struct gb_harness *h, const struct gb_broker_opts *opts, bool with_socket);
/** Handle each FDSTOREREMOVE=1 only @p ms later, as a busy systemd may. */
void gb_harness_set_remove_delay(struct gb_harness *h, int ms);
/** Send the broker's stderr to @p path (appended) from the next start on; NULL: don't. */
void gb_harness_set_log(struct gb_harness *h, const char *path);
/** Does the log of gb_harness_set_log() hold @p needle yet? */
bool gb_harness_log_has(struct gb_harness *h, const char *needle);

/** Number of fds in the store. */
int gb_harness_n_fds(struct gb_harness *h);
/** Wait until the store holds @p n fds. */
bool gb_harness_wait_n_fds(struct gb_harness *h, int n, int timeout_ms);
/** Is an fd named @p name in the store? */
bool gb_harness_has_fd(struct gb_harness *h, const char *name);
/** Wait until FDSTOREREMOVE=1 for @p name has been received (ever). */
bool gb_harness_wait_removed(struct gb_harness *h, const char *name, int timeout_ms);
/** Drop every stored fd, as systemd does when the unit stops for good. */
void gb_harness_flush(struct gb_harness *h);
/** Lose one stored fd (closed, forgotten), as if the store had dropped it. */
bool gb_harness_drop(struct gb_harness *h, const char *name);

/** SIGKILL the broker, reap it, and wait until its bus name is gone. */
void gb_broker_kill(pid_t pid);
/**
 * Wait for a broker that dies by itself (GPIOD_BROKER_DEBUG_ABORT_AFTER_EVENTS),
 * reap it, and wait until its bus name is gone. Its exit status (128 + signal).
 */
int gb_broker_wait_died(pid_t pid);

#endif
