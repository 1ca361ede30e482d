/* SPDX-License-Identifier: LGPL-2.1-or-later */
/**
 * @file slice.h
 * @brief gpiod-broker-slices: a policy [slice] as the kernel's aggregator makes it.
 *
 * A slice is resolved from the policy (resolve.c) into its parent lines and the
 * aggregator's spec, made or kept by the helper (slices.c), and recorded in
 * SLICE_STATE_DIR/NAME (state.c), which the next run and the broker read.
 */
#ifndef GB_SLICE_H
#define GB_SLICE_H

#include <stdbool.h>
#include <stddef.h>

#include "policy.h"

#define SLICE_STATE_DIR "/run/gpiod-broker-slices"

struct slice_line {
	char parent[64];          /* gpiochipN of the line */
	unsigned int offset;
	enum gb_safe_state safe;  /* of the [line] entry covering it; as-is if none */
	char *item;               /* as the slice's "lines" names it */
};

struct slice {
	char *name;
	char device[64];  /* gpio-aggregator.N, "" until made */
	char chip[64];    /* its gpiochipM */
	char *spec;       /* what new_device was given */
	char *users;      /* names as the policy gives them, comma-separated */
	char *groups;
	struct slice_line *lines;
	size_t n_lines;
};

void slice_clear(struct slice *s);
/** Whether @p a and @p b make the same chip for the same users (device aside). */
bool slice_same(const struct slice *a, const struct slice *b);

/* --- state.c --- */

/** Write SLICE_STATE_DIR/NAME atomically (a temporary file renamed over it). */
int slice_state_write(const struct slice *s);
/** Read SLICE_STATE_DIR/@p name into @p s (cleared first). -ENOENT, -EBADMSG, -ENOMEM. */
int slice_state_read(const char *name, struct slice *s);
/**
 * The names of the slices recorded (@p errors: of those with a NAME.error), sorted;
 * a NULL-terminated array to free.
 */
int slice_state_names(char ***names, bool errors);
/** Remove NAME and NAME.error. */
void slice_state_remove(const char *name);
/** Why the slice could not be made, in NAME.error (NULL: remove the file). */
int slice_error_write(const char *name, const char *why);

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
		  const char *own_device, struct slice *out, char *err, size_t size);

#endif
