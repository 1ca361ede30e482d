/* SPDX-License-Identifier: LGPL-2.1-or-later */
/**
 * @file line-request.h
 * @brief One kernel line request: through libgpiod, or adopted after a restart.
 *
 * Requests the broker makes are libgpiod line requests. After a restart the broker
 * gets the same kernel requests back from systemd's fd store as bare fds (see
 * fdstore.c); libgpiod cannot wrap an existing fd, so for those the few operations
 * the broker needs are done on the GPIO uAPI directly. Callers do not care which.
 */
#ifndef GB_LINE_REQUEST_H
#define GB_LINE_REQUEST_H

#include <gpiod.h>
#include <stdint.h>

#include "broker.h"

/** A kernel edge event, whichever way it was read. */
struct gb_edge {
	unsigned int offset;
	bool rising;
	uint64_t timestamp_ns;
	uint64_t global_seqno;
	uint64_t line_seqno;
};

int lreq_fd(const ReqChip *rc);
/** Record the kernel's line order of a new libgpiod request. */
void lreq_note_offsets(ReqChip *rc);
int lreq_get(ReqChip *rc, unsigned int n, const unsigned int *offsets, enum gpiod_line_value *values);
int lreq_set(ReqChip *rc, unsigned int n, const unsigned int *offsets,
	     const enum gpiod_line_value *values);
/** The libgpiod line config for the request's lines on this chip (new requests). */
int lreq_build_config(ReqChip *rc, struct gpiod_line_config **ret);
/** Apply the configs of the request's lines on this chip. 0 or -errno. */
int lreq_reconfigure(ReqChip *rc);
/** Read up to @p max events (only when the fd is readable). Count or -errno. */
int lreq_read_events(ReqChip *rc, struct gb_edge *ev, int max);
void lreq_release(ReqChip *rc);

#endif
