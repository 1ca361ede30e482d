/* SPDX-License-Identifier: LGPL-2.1-or-later */
/**
 * @file line-request.h
 * @brief One kernel line request on one chip: made through libgpiod, or adopted
 * after a restart as a bare fd.
 *
 * Requests the broker makes are libgpiod line requests. After a restart the broker
 * gets the same kernel requests back from systemd's fd store as bare fds (see
 * manager/restore.c); libgpiod cannot wrap an existing fd, so for those the few
 * operations the broker needs are done on the GPIO uAPI directly. Callers do not
 * care which. A LineReq knows nothing of who asked for it: the request that embeds
 * it (core/request.h) does.
 */
#ifndef GB_LINE_REQUEST_H
#define GB_LINE_REQUEST_H

#include <gpiod.h>
#include <stdbool.h>
#include <stdint.h>

#include "line-config.h"
#include "record.h"

/** A kernel edge event, whichever way it was read. */
struct gb_edge {
	unsigned int offset;
	bool rising;
	uint64_t timestamp_ns;
	uint64_t global_seqno;
	uint64_t line_seqno;
};

/* Edge events read per wake-up. */
#define GB_EVENT_BATCH 64

typedef struct LineReq {
	struct gpiod_line_request *lr; /* NULL for an adopted request... */
	int raw_fd;                    /* ... which is a bare uAPI fd */
	unsigned int n_kern;           /* the kernel request's line order */
	unsigned int kern_offsets[GB_RECORD_MAX_KERN];
	/* A client holds a copy of the fd (a direct request): its events are that
	 * client's to read, so nobody in the broker may read them. */
	bool shared;
	uint64_t tag;                  /* who numbers its events (a request's id), or 0 */
} LineReq;

/** Nothing requested yet (raw_fd -1). */
void lreq_init(LineReq *k);
int lreq_fd(const LineReq *k);
bool lreq_active(const LineReq *k);
/**
 * Request @p n lines of @p gc with their settings, @p consumer as the kernel's
 * consumer name. 0 or -errno (EBUSY: taken meanwhile; EINVAL: settings refused).
 */
int lreq_request(LineReq *k, struct gpiod_chip *gc, const char *consumer, unsigned int n,
		 const unsigned int *offsets, const struct gb_line_config *configs);
/** Take over @p fd, a kernel line request of these lines (in kernel order). */
void lreq_adopt(LineReq *k, int fd, unsigned int n_kern, const unsigned int *kern_offsets);
int lreq_get(LineReq *k, unsigned int n, const unsigned int *offsets, enum gpiod_line_value *values);
int lreq_set(LineReq *k, unsigned int n, const unsigned int *offsets,
	     const enum gpiod_line_value *values);
/** Apply settings to the listed lines (every line of the request). 0 or -errno. */
int lreq_reconfigure(LineReq *k, unsigned int n, const unsigned int *offsets,
		     const struct gb_line_config *configs);
/**
 * Read up to @p max events (only when the fd is readable). Count or -errno. All
 * requests share one read buffer: the broker is single-threaded and callers copy
 * each batch out before the next read.
 */
int lreq_read_events(LineReq *k, struct gb_edge *ev, int max);
/** Any events queued in the kernel right now (without blocking)? */
bool lreq_events_pending(LineReq *k);
/** Give the lines back to the kernel (close the fd). Safe to call twice. */
void lreq_release(LineReq *k);
/** Free the shared read buffer at exit. */
void lreq_buffer_free(void);

#endif
