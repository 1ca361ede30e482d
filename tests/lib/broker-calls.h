/* SPDX-License-Identifier: LGPL-2.1-or-later */
/**
 * @file broker-calls.h
 * @brief Test helper: the broker's D-Bus methods and objects, as tests call them.
 *
 * Thin wrappers that build the broker's messages (Manager.Request, the Request
 * object's values, Release, the Line objects' properties) so that a test says
 * which lines it wants, not how the message is laid out. Calls that the test
 * expects may fail return the call's result and fill @p err; the rest abort the
 * test on failure.
 */
#ifndef GB_TEST_BROKER_CALLS_H
#define GB_TEST_BROKER_CALLS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <systemd/sd-bus.h>

/**
 * Manager.Request() of @p n lines with the same settings. @p direction NULL:
 * as-is; @p value < 0: none; @p edge NULL: none. Returns the call's result; on
 * success *path (if not NULL) is the request's path, the caller's to free().
 */
int gb_request_lines(sd_bus *bus, const char *label, const char *const *specs, unsigned int n,
		     const char *direction, int value, const char *edge, bool persistent, char **path,
		     sd_bus_error *err);
/** gb_request_lines() for one line. */
int gb_request(sd_bus *bus, const char *label, const char *spec, const char *direction,
	       int value, const char *edge, bool persistent, char **path, sd_bus_error *err);
/** Request.GetValues([idx]): 0/1, or the negative call error. */
int gb_get_value(sd_bus *bus, const char *path, unsigned int idx, sd_bus_error *err);
/** Request.SetValues([(idx, value)]). */
int gb_set_value(sd_bus *bus, const char *path, unsigned int idx, bool value, sd_bus_error *err);
/** Request.Release(). */
int gb_release(sd_bus *bus, const char *path, sd_bus_error *err);
/** org.freedesktop.DBus.Peer.Ping() to the broker: a round trip through its queue. */
int gb_ping(sd_bus *bus, sd_bus_error *err);

/**
 * A client in a process of its own, connected as @p uid: it requests @p spec
 * (as gb_request(), no edge), writes its unique bus name to @p name, then waits
 * to be killed (SIGKILL, then waitpid, is the test's). Aborts the test if the
 * request fails.
 */
pid_t gb_spawn_holder(uid_t uid, const char *label, const char *spec, const char *direction, int value,
		      bool persistent, char *name, size_t size);

/** Wait until the broker has seen @p unique_name leave the bus (see the .c for why). */
void gb_wait_client_gone(sd_bus *bus, const char *unique_name);

/** The object path of line @p off of chip @p chip ("gpiochipN"); the caller's to free(). */
char *gb_line_path(const char *chip, unsigned int off);
/** Read a property of the broker's line object as string (to free()) / bool. */
char *gb_line_prop_str(sd_bus *bus, const char *chip, unsigned int off, const char *prop);
bool gb_line_prop_bool(sd_bus *bus, const char *chip, unsigned int off, const char *prop);
/** Poll (every 10 ms, up to @p timeout_ms times gb_slow()) until the line's Used property is @p used. */
bool gb_wait_line_used(sd_bus *bus, const char *chip, unsigned int off, bool used, int timeout_ms);

#endif
