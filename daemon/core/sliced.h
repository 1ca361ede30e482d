/* SPDX-License-Identifier: LGPL-2.1-or-later */
/**
 * @file sliced.h
 * @brief The policy's slices as the broker sees them: read, reported, refused.
 *
 * gpiod-broker-slices (root) makes each [slice] of the policy into a chip of the
 * kernel's gpio-aggregator and records it in GB_SLICE_STATE_DIR (shared/slice-state.h).
 * The broker, unprivileged, only reads those files, at start and at every policy
 * reload: a line a slice holds is the slice's (a Request or Watch of it is Busy,
 * naming the slice's chip), each slice is an object on the bus, and when a program
 * of the slice's users releases a line of the slice's chip the broker puts that
 * line in its safe state (the broker opens the slice's chip as any other, through
 * the ACL the helper gives it, and hears of the release through its line-info watch).
 */
#ifndef GB_SLICED_H
#define GB_SLICED_H

#include <stdbool.h>
#include <systemd/sd-bus.h>

#include "forward.h"
#include "slice-state.h"

struct Slice {
	Broker *broker;
	Slice *next;           /* the broker's list, by name */
	struct gb_slice def;   /* its state file; only the name if there is none */
	bool made;             /* the state file was read and there is no NAME.error */
	char *error;           /* why not made: NAME.error's reason, or the state file's fault */
	char *path;            /* its bus object */
	char **consumers;      /* per line of its chip: who held it last, "" for nobody */
};

/**
 * Read the state directory (b->slice_dir, GB_SLICE_STATE_DIR if NULL) again: slices
 * that went are removed from the bus, new ones added, the others announced as
 * changed when @p announce. A malformed file is logged with its name and makes a
 * failed slice; it never stops the broker. 0 or -ENOMEM.
 */
int slices_load(Broker *b, bool announce);
/** Forget them all (the broker stops). */
void slices_free_all(Broker *b);
/** The slice holding parent line @p chip:@p offset, and that line's index in it; NULL if none. */
Slice *slice_of_line(Broker *b, const char *chip, unsigned int offset, size_t *index);
/** The slice whose object is @p path, or NULL. */
Slice *slice_from_path(Broker *b, const char *path);
/** Where the helper links the slice's chip: GB_SLICE_LINK_DIR "/NAME". */
void slice_link(const Slice *s, char *buf, size_t size);
/** "made", or "failed: REASON", into @p buf. */
void slice_state_text(const Slice *s, char *buf, size_t size);
/**
 * Busy, with the message that names the slice and its chip, when a slice holds
 * @p l; else 0. For Request and Watch.
 */
int slice_check_line(Broker *b, const Line *l, sd_bus_error *error);
/** The kernel's info of @p l changed: a release of a slice chip's line puts it in its safe state. */
void slice_line_changed(Line *l);
/** Chip @p c is going away: if it is a slice's, say so (the helper revoked the slice). */
void slice_chip_gone(const Chip *c);
/** Append the slices to a PolicyStatus reply, as "slices" a(ssssas). */
int slices_append_status(Broker *b, sd_bus_message *reply);

#endif
