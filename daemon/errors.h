/* SPDX-License-Identifier: LGPL-2.1-or-later */
/**
 * @file errors.h
 * @brief The broker's D-Bus error names (documented in docs/dbus-api.md).
 */
#ifndef GB_ERRORS_H
#define GB_ERRORS_H

#include "org.gpiodbroker1.h"

#endif
