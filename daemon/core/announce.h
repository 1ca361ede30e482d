/* SPDX-License-Identifier: LGPL-2.1-or-later */
/**
 * @file announce.h
 * @brief What the bus hears when the model changes: objects added and removed,
 * properties changed.
 *
 * The model's objects report their changes here, and here only, so that every
 * announcement is made the same way and failures are logged in one place. The
 * objects' vtables (bus/) answer the questions that follow.
 */
#ifndef GB_ANNOUNCE_H
#define GB_ANNOUNCE_H

#include "forward.h"

void announce_object_added(Broker *b, const char *path);
void announce_object_removed(Broker *b, const char *path);
/** @p iface's properties (NULL-terminated names) of @p path changed. */
void announce_changed(Broker *b, const char *path, const char *iface, const char *prop, ...)
	__attribute__((sentinel));
/** Everything the kernel's line info and the broker say of @p l may have changed. */
void announce_line_changed(const Line *l);
/** A chip and its lines came, or went. */
void announce_chip_added(const Chip *c);
void announce_chip_removed(const Chip *c);

#endif
