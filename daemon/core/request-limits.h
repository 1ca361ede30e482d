/* SPDX-License-Identifier: LGPL-2.1-or-later */
/**
 * @file request-limits.h
 * @brief Per-client and per-uid limits on what a caller may make the broker hold.
 */
#ifndef GB_REQUEST_LIMITS_H
#define GB_REQUEST_LIMITS_H

#include <stdbool.h>
#include <systemd/sd-bus.h>

#include "forward.h"

/** LimitsExceeded if @p c may not make a request of @p n_lines more lines. */
int limits_check_request(Broker *b, const Client *c, unsigned int n_lines, bool persistent,
			 sd_bus_error *error);

#endif
