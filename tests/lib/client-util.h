/* SPDX-License-Identifier: LGPL-2.1-or-later */
/**
 * @file client-util.h
 * @brief Test helper: libgpiobroker connections as a given user, and running them.
 *
 * For the tests of the client library (tests/client) and the benchmark: a
 * library connection made on a bus connection with a test user's identity, and
 * a loop that runs connections as an application's own poll() loop would.
 */
#ifndef GB_TEST_CLIENT_UTIL_H
#define GB_TEST_CLIENT_UTIL_H

#include <stdbool.h>
#include <sys/types.h>

#include "gpiobroker.h"

/**
 * A library connection as @p uid, on a bus connection made with that uid (the
 * broker knows callers by the bus daemon's record, so this is the real thing).
 * Aborts the test on failure; gpiobroker_close() it.
 */
struct gpiobroker *gb_client_open_as(uid_t uid);
/** gb_client_open_as() on @p transport (asserted to be the one in use). */
struct gpiobroker *gb_client_open_transport(uid_t uid, enum gpiobroker_transport transport);

/**
 * Run the @p n connections @p bs (8 at most) with poll() on their fds, events and
 * timeouts until *count reaches @p target or @p timeout_ms (times gb_slow())
 * passes; true if reached.
 */
bool gb_client_wait_count(struct gpiobroker *const *bs, int n, const int *count, int target, int timeout_ms);

/** Settings of an output driven to @p value. */
struct gpiobroker_line_settings gb_output_settings(int value);
/** Settings of an input reporting both edges. */
struct gpiobroker_line_settings gb_input_edge_settings(void);

#endif
