/* SPDX-License-Identifier: LGPL-2.1-or-later */
/**
 * @file lookup.h
 * @brief Finding the line a caller names (alias, name, CHIP:OFFSET, object path).
 */
#ifndef GB_LOOKUP_H
#define GB_LOOKUP_H

#include <systemd/sd-bus.h>

#include "forward.h"
#include "linespec.h"

int line_resolve(Broker *b, const struct gb_linespec *ls, Line **ret, sd_bus_error *error);
/** Parse and resolve a line reference; InvalidArgs/NotFound errors for the caller. */
int line_resolve_spec(Broker *b, const char *spec, Line **ret, sd_bus_error *error);
/** The line an alias of the policy in force names. */
int line_resolve_alias(Broker *b, const char *alias, Line **ret, sd_bus_error *error);

#endif
