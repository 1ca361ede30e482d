/* SPDX-License-Identifier: LGPL-2.1-or-later */
/**
 * @file replug.h
 * @brief A chip that comes back (the same identity, kernel/chip.h): watches resume,
 * and persistent requests whose entry says restore-on-replug are made again.
 */
#ifndef GB_REPLUG_H
#define GB_REPLUG_H

#include "forward.h"

/** @p c has just come (and is on the bus): give back what lost the same device. */
void replug_chip_added(Broker *b, Chip *c);

#endif
