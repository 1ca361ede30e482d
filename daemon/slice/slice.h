/* SPDX-License-Identifier: LGPL-2.1-or-later */
/**
 * @file slice.h
 * @brief gpiod-broker-slices: a policy [slice] as the kernel's aggregator makes it.
 *
 * A slice is resolved from the policy (resolve.c) into its parent lines and the
 * aggregator's spec, made or kept by the helper (slices.c), and recorded in
 * GB_SLICE_STATE_DIR/NAME (daemon/shared/slice-state.c), which the next run and the
 * broker read.
 */
#ifndef GB_SLICE_H
#define GB_SLICE_H

#include <stdbool.h>
#include <stddef.h>

#include "policy.h"
#include "slice-state.h"

/* --- resolve.c --- */

/**
 * The parent lines of policy slice @p ps, in its order, and the spec for the
 * aggregator, into @p out (its users and groups too). -EINVAL (a line unknown,
 * ambiguous, twice in the slice, or on a chip the aggregator cannot name),
 * -EBUSY (a line held by other than @p own_device, the slice's aggregator device
 * if it is made already: the consumer is named), -ENOMEM; the reason, with the
 * policy's file:line, in @p err.
 */
int slice_resolve(const struct gb_policy *p, const struct gb_policy_slice *ps,
		  const char *own_device, struct gb_slice *out, char *err, size_t size);

#endif
