/* SPDX-License-Identifier: LGPL-2.1-or-later */
/**
 * @file errors.h
 * @brief The broker's D-Bus error names (documented in docs/dbus-api.md).
 */
#ifndef GB_ERRORS_H
#define GB_ERRORS_H

#define GB_ERROR_PREFIX        "org.gpiodbroker1.Error."
#define GB_ERROR_BUSY          GB_ERROR_PREFIX "Busy"
#define GB_ERROR_NOT_FOUND     GB_ERROR_PREFIX "NotFound"
#define GB_ERROR_INVALID_ARGS  GB_ERROR_PREFIX "InvalidArgs"
#define GB_ERROR_PERMISSION    GB_ERROR_PREFIX "PermissionDenied"
#define GB_ERROR_NOT_OUTPUT    GB_ERROR_PREFIX "NotOutput"
#define GB_ERROR_CHIP_GONE     GB_ERROR_PREFIX "ChipGone"
#define GB_ERROR_FAILED        GB_ERROR_PREFIX "Failed"
#define GB_ERROR_POLICY        GB_ERROR_PREFIX "PolicyInvalid"
#define GB_ERROR_LIMITS_EXCEEDED GB_ERROR_PREFIX "LimitsExceeded"

#endif
