/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * For the host unit tests of libgpiobroker's parts (client/internal.h): sd-bus
 * messages made and read with no bus daemon and no broker.
 */
#ifndef GB_LIB_UNIT_H
#define GB_LIB_UNIT_H

#include <check.h>
#include <stdint.h>
#include <sys/socket.h>
#include <unistd.h>
#include <systemd/sd-bus.h>

/*
 * A connection to make messages with (unit_bus): sd-bus makes them only for a
 * started connection. This one is started on one end of a socket pair; nobody
 * answers at the other, and nothing is sent. A test case's setup and teardown.
 */
static sd_bus *unit_bus;
static int unit_peer = -1;

static inline void unit_bus_open(void)
{
	int fds[2];

	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, fds), 0);
	ck_assert_int_ge(sd_bus_new(&unit_bus), 0);
	ck_assert_int_ge(sd_bus_set_fd(unit_bus, fds[0], fds[0]), 0);
	ck_assert_int_ge(sd_bus_start(unit_bus), 0);
	unit_peer = fds[1];
}

/* Not flushed: the handshake never ends, and what is queued goes nowhere. */
static inline void unit_bus_close(void)
{
	unit_bus = sd_bus_close_unref(unit_bus);
	close(unit_peer);
	unit_peer = -1;
}

/* @p m as a receiver has it: sealed, and read from the start. */
static inline sd_bus_message *gb_unit_seal(sd_bus_message *m)
{
	static uint64_t cookie;

	ck_assert_int_ge(sd_bus_message_seal(m, ++cookie, 0), 0);
	ck_assert_int_ge(sd_bus_message_rewind(m, 1), 0);
	return m;
}

#endif
