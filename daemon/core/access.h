/* SPDX-License-Identifier: LGPL-2.1-or-later */
/**
 * @file access.h
 * @brief Broker objects as the policy sees them (the gpio_export() model): a
 * Line becomes a gb_line_ident, and the entry that covers it is looked up.
 *
 * The policy itself (shared/policy.h) is pure and knows no objects; callers'
 * identities come from client.h (client_caller) and request.h (request_caller).
 */
#ifndef GB_ACCESS_H
#define GB_ACCESS_H

#include <stddef.h>

#include "forward.h"
#include "policy.h"

/** @p l as the policy names lines (chip name and label, offset, kernel name). */
void line_ident(const Line *l, struct gb_line_ident *id);
/** The entry of the policy in force that covers @p l, or NULL. */
const struct gb_policy_entry *line_policy_entry(const Line *l);

/** "loaded", "rejected" or "empty": how the last policy load went. */
const char *access_policy_state_name(const Broker *b);
/**
 * A denial's @p reason, told that it comes from a rejected policy (the previous or
 * an empty one is in force) when it does; left alone otherwise.
 */
void access_explain_denial(const Broker *b, char *reason, size_t size);

#endif
