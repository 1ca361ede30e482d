/* SPDX-License-Identifier: LGPL-2.1-or-later */
/**
 * @file slice-state.h
 * @brief The slices' state files: what gpiod-broker-slices made, for itself and the broker.
 *
 * The root helper writes DIR/NAME for each slice it made (and DIR/NAME.error for
 * one it could not make); the next run of the helper and the unprivileged broker
 * read them. One module for both, so that the format has one definition:
 *
 *     device=gpio-aggregator.N
 *     chip=gpiochipM
 *     spec=...            what the aggregator's new_device was given
 *     users=a,b           as the policy names them
 *     groups=g
 *     line=PARENTCHIP OFFSET SAFESTATE ITEM    one per slice line, in its order
 *
 * A reader takes a well-formed key it does not know as written by a later version
 * and skips it; anything else malformed is -EBADMSG. DIR is a parameter so that
 * tests can use a temporary directory.
 */
#ifndef GB_SLICE_STATE_H
#define GB_SLICE_STATE_H

#include <stdbool.h>
#include <stddef.h>

#include "policy.h"

#define GB_SLICE_STATE_DIR "/run/gpiod-broker-slices"
/* Where the helper links a slice's chip: GB_SLICE_LINK_DIR "/NAME". */
#define GB_SLICE_LINK_DIR "/dev/gpio/slice"
/* No line of a state file is longer: a longer one is not the helper's. */
#define GB_SLICE_STATE_LINE_MAX 4096

struct gb_slice_line {
	char parent[64];          /* gpiochipN of the line */
	unsigned int offset;
	enum gb_safe_state safe;  /* of the [line] entry covering it; as-is if none */
	char *item;               /* as the slice's "lines" names it */
};

struct gb_slice {
	char *name;
	char device[64];  /* gpio-aggregator.N, "" until made */
	char chip[64];    /* its gpiochipM */
	char *spec;       /* what new_device was given */
	char *users;      /* names as the policy gives them, comma-separated */
	char *groups;
	struct gb_slice_line *lines;
	size_t n_lines;
};

/** Free what @p s holds, and zero it. */
void gb_slice_clear(struct gb_slice *s);
/** Whether @p a and @p b make the same chip for the same users (device aside). */
bool gb_slice_same(const struct gb_slice *a, const struct gb_slice *b);

/** Write @p dir/NAME atomically (a temporary file renamed over it), mode 0644. */
int gb_slice_state_write(const char *dir, const struct gb_slice *s);
/**
 * Read @p dir/@p name into @p s (cleared first; cleared again on failure).
 * -ENOENT, -EBADMSG (malformed: a line without '=', a bad key, a bad line=, a
 * line over GB_SLICE_STATE_LINE_MAX, no device= or chip=), -ENOMEM.
 */
int gb_slice_state_read(const char *dir, const char *name, struct gb_slice *s);
/**
 * The names of the slices recorded in @p dir, sorted, in a NULL-terminated array
 * to free (strv_free); NULL if none or no directory. With @p with_errors, also
 * those that have only a NAME.error.
 */
int gb_slice_state_names(const char *dir, bool with_errors, char ***names);
/** Remove @p dir/NAME and NAME.error. */
void gb_slice_state_remove(const char *dir, const char *name);
/** Why the slice could not be made, in @p dir/NAME.error (NULL @p why: remove the file). */
int gb_slice_error_write(const char *dir, const char *name, const char *why);
/**
 * The reason in @p dir/NAME.error (its first line) into @p why, to free. -ENOENT if
 * there is none, -EBADMSG if it is empty or too long, -ENOMEM.
 */
int gb_slice_error_read(const char *dir, const char *name, char **why);

#endif
