/* SPDX-License-Identifier: LGPL-2.1-or-later */
/**
 * @file users.h
 * @brief Test helper: the bench's test users, and becoming one of them.
 *
 * tests/bench/guest-init makes three users (and their groups) so that the
 * broker's policy is checked against real uids, never a stand-in.
 */
#ifndef GB_TEST_USERS_H
#define GB_TEST_USERS_H

#include <sys/types.h>

/* Test users made by the bench (tests/bench/guest-init). */
#define UID_ALICE 60001
#define UID_BOB   60002
#define UID_CAROL 60003

/**
 * Become @p uid for good (ids and supplementary groups, as a login would give
 * them), in a forked child only: on failure the child exits with status 90.
 */
void gb_become(uid_t uid);

#endif
