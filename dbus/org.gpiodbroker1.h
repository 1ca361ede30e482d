/* SPDX-License-Identifier: LGPL-2.1-or-later */
/**
 * @file org.gpiodbroker1.h
 * @brief The names of the gpiod-broker D-Bus API, defined once.
 *
 * The daemon, libgpiobroker, gpiobrokerctl and the tests all include this file, so
 * a name changed here changes everywhere (docs/dbus-api.md documents each one and
 * dbus/org.gpiodbroker1.xml is the introspection the live broker is checked
 * against). Internal: not installed.
 */
#ifndef ORG_GPIODBROKER1_H
#define ORG_GPIODBROKER1_H

#define GB_BUS_NAME        "org.gpiodbroker1"

#define GB_ROOT_PATH       "/org/gpiodbroker1"
#define GB_CHIP_PREFIX     GB_ROOT_PATH "/chip"
#define GB_REQUEST_PREFIX  GB_ROOT_PATH "/request"
#define GB_WATCH_PREFIX    GB_ROOT_PATH "/watch"
#define GB_SLICE_PREFIX    GB_ROOT_PATH "/slice"

#define GB_IFACE_MANAGER   GB_BUS_NAME ".Manager"
#define GB_IFACE_CHIP      GB_BUS_NAME ".Chip"
#define GB_IFACE_LINE      GB_BUS_NAME ".Line"
#define GB_IFACE_REQUEST   GB_BUS_NAME ".Request"
#define GB_IFACE_WATCH     GB_BUS_NAME ".Watch"
#define GB_IFACE_SLICE     GB_BUS_NAME ".Slice"

#define GB_ERROR_PREFIX          GB_BUS_NAME ".Error."
#define GB_ERROR_BUSY            GB_ERROR_PREFIX "Busy"
#define GB_ERROR_NOT_FOUND       GB_ERROR_PREFIX "NotFound"
#define GB_ERROR_INVALID_ARGS    GB_ERROR_PREFIX "InvalidArgs"
#define GB_ERROR_PERMISSION      GB_ERROR_PREFIX "PermissionDenied"
#define GB_ERROR_NOT_OUTPUT      GB_ERROR_PREFIX "NotOutput"
#define GB_ERROR_CHIP_GONE       GB_ERROR_PREFIX "ChipGone"
#define GB_ERROR_FAILED          GB_ERROR_PREFIX "Failed"
#define GB_ERROR_POLICY          GB_ERROR_PREFIX "PolicyInvalid"
#define GB_ERROR_LIMITS_EXCEEDED GB_ERROR_PREFIX "LimitsExceeded"
/* Not the broker's: libgpiobroker's own, for what a connection that cannot carry
 * file descriptors (a link over SSH) cannot do. */
#define GB_ERROR_NO_FD_PASSING   GB_ERROR_PREFIX "NoFdPassing"

/* The journal's MESSAGE_ID of the broker's events (systemd/gpiod-broker.catalog
 * explains each: journalctl -x); never change one once released. */
#define GB_MESSAGE_REQUEST_MADE     "633bb7994be6416a8fe035a8540647f4"
#define GB_MESSAGE_REQUEST_RELEASED "fa9113475f9648b1b6b5f9d97a5a7624"
#define GB_MESSAGE_ACCESS_DENIED    "e3b9f92ae79e4fb4ad51f1821b699fc3"
#define GB_MESSAGE_REVOKED          "ce00f2ec165545399a2d53d90793a082"
#define GB_MESSAGE_WATCH_REVOKED    "0572a1ab5bc34987b541cc669d8101ee"
#define GB_MESSAGE_SAFE_STATE       "3b658373096f44f0a95b16303a6a0da2"
#define GB_MESSAGE_POLICY_LOADED    "284e136026c245678e5724b3ea6263b2"
#define GB_MESSAGE_POLICY_REJECTED  "28919b755ade44318ce6006a1f44fb27"
#define GB_MESSAGE_CONNECTION_DROPPED "98d70c89f385451c9efd82a3f1d4e927"
#define GB_MESSAGE_REPLUG_RESTORED  "b2224597093946d88d71cf875ceba39c"
#define GB_MESSAGE_ACTION_FIRED     "6f1d2b5c8a0e4c2f9b7d3e41a5c08d17"
#define GB_MESSAGE_ACTION_SUPPRESSED "c43e9a70b15f4d8e8a26f0d93b7e5c42"

#endif
