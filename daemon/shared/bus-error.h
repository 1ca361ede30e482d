/* SPDX-License-Identifier: LGPL-2.1-or-later */
/**
 * @file bus-error.h
 * @brief Named D-Bus errors whose text is always UTF-8.
 *
 * The broker's error messages quote what the kernel and the policy files hold:
 * line names, consumers set by other programs, chip labels, policy text. None of
 * it need be UTF-8, and sd-bus cannot send a string that is not: the error reply
 * would fail and the caller wait for it until its call timed out. Every named
 * error of the daemon is set through gb_bus_error_setf(), which replaces such
 * bytes with U+FFFD (dbus/utf8.h), as the Line and Chip properties do.
 */
#ifndef GB_BUS_ERROR_H
#define GB_BUS_ERROR_H

#include <systemd/sd-bus.h>

#include "bus-error.h"
#include "macro.h"

/** gb_bus_error_setf(), with the message made UTF-8. */
int gb_bus_error_setf(sd_bus_error *e, const char *name, const char *fmt, ...) _printf_(3, 4);

#endif
