/* SPDX-License-Identifier: LGPL-2.1-or-later */
/**
 * @file bus-util.h
 * @brief Test helper: the system bus as a given user, name owners, typed property
 * reads and error checks.
 *
 * Nothing here knows the broker's methods (see broker-calls.h); these are the
 * sd-bus steps every test repeats. Helpers that assert abort the running test
 * with a message naming what failed, so a test reads as its scenario.
 */
#ifndef GB_TEST_BUS_UTIL_H
#define GB_TEST_BUS_UTIL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <systemd/sd-bus.h>

/**
 * A system bus connection made as @p uid (0: root), with the user's groups.
 * The bus daemon records the identity at connect time, so the broker sees the
 * real user. Aborts the test on failure.
 *
 * With GB_TEST_TRANSPORT=p2p (make check-p2p) and a broker running, it returns
 * instead a private connection to the broker (Manager.OpenConnection) opened by
 * that bus connection: the test's calls and the broker's signals go over it, with
 * the same identity. The bus connection is kept behind it: gb_sysbus() finds it,
 * gb_close() closes both. Bus-daemon questions (names, NameOwnerChanged) go
 * through the helpers below, which use the bus connection.
 */
sd_bus *gb_connect(uid_t uid);
/** gb_connect() on the system bus whatever GB_TEST_TRANSPORT says. */
sd_bus *gb_connect_bus(uid_t uid);
/** Is GB_TEST_TRANSPORT=p2p? */
bool gb_test_p2p(void);
/** A private connection opened by @p bus (a bus connection); the test aborts on failure. */
sd_bus *gb_open_p2p(sd_bus *bus);
/** The bus connection behind @p bus (itself if it is one). */
sd_bus *gb_sysbus(sd_bus *bus);
/** sd_bus_get_unique_name() of the bus connection behind @p bus. */
int gb_get_unique_name(sd_bus *bus, const char **name);
/** Flush and close @p bus, and the bus connection behind it; NULL is ignored. */
void gb_close(sd_bus *bus);

/** Does @p name (well-known or unique) have an owner on @p bus? false if the call fails. */
bool gb_name_has_owner(sd_bus *bus, const char *name);
/**
 * Poll (every 5 ms) until @p name has an owner (@p owned true) or none (false),
 * for at most @p timeout_ms (times gb_slow()); true if it happened.
 */
bool gb_wait_name(sd_bus *bus, const char *name, bool owned, int timeout_ms);

/**
 * A client in a process of its own: @p body runs in a forked child and returns
 * the bus connection it made and used (NULL: it failed). The child then reports
 * that connection's unique name and waits to be killed (SIGKILL, then waitpid,
 * is the test's). The parent gets the name in @p name (@p size bytes); the test
 * aborts if the child failed.
 */
pid_t gb_fork_client(sd_bus *(*body)(void *userdata), void *userdata, char *name, size_t size);

/** Process @p bus until *counter >= target or @p timeout_ms (times gb_slow()) passes; true if reached. */
bool gb_bus_wait_count(sd_bus *bus, const int *counter, int target, int timeout_ms);
/** A message handler that counts: increments the int that @p userdata points to. */
int gb_bus_count_message(sd_bus_message *m, void *userdata, sd_bus_error *ret_error);

/**
 * Read a property of @p path on the broker (GB_BUS_NAME). The test aborts if the
 * read fails. The string is the caller's to free().
 */
char *gb_get_prop_str(sd_bus *bus, const char *path, const char *iface, const char *prop);
bool gb_get_prop_bool(sd_bus *bus, const char *path, const char *iface, const char *prop);
uint32_t gb_get_prop_u32(sd_bus *bus, const char *path, const char *iface, const char *prop);
uint64_t gb_get_prop_u64(sd_bus *bus, const char *path, const char *iface, const char *prop);

/**
 * Assert that @p err is the D-Bus error @p name and, if @p needle is not NULL,
 * that its message contains @p needle; then free it (ready for the next call).
 */
#define gb_assert_error(err, name, needle) gb_assert_error_at(__FILE__, __LINE__, (err), (name), (needle))
void gb_assert_error_at(const char *file, int line, sd_bus_error *err, const char *name, const char *needle);

/**
 * Call @p member of @p iface on @p path (on the broker) with @p types and the
 * arguments after it, and assert that it fails with the error @p want, with a
 * message.
 */
#define gb_call_expect_error(bus, want, path, iface, member, ...) \
	gb_call_expect_error_at(__FILE__, __LINE__, (bus), (want), (path), (iface), (member), __VA_ARGS__)
void gb_call_expect_error_at(const char *file, int line, sd_bus *bus, const char *want, const char *path,
			     const char *iface, const char *member, const char *types, ...);

/**
 * The bus daemon's pid, as the bus names it (for dbus-broker, the dbus-broker
 * process under the launcher the bus names). Aborts the test if not found.
 */
pid_t gb_bus_daemon_pid(sd_bus *root);

#endif
