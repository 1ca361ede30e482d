/* SPDX-License-Identifier: LGPL-2.1-or-later */
/**
 * @file irq.h
 * @brief Edge interrupts of a kernel line request: the gpio_to_irq() +
 * request_irq() model.
 *
 * A line request with edge detection has an fd that becomes readable when the
 * kernel has queued edge events. An Irq watches that fd in the broker's loop (on its
 * short way, shared/loop.h: an edge is on the hot path) and hands
 * each batch it reads to a handler; what the events mean (whose they are, who gets
 * them) is the handler's business. The fd is always watched: edge detection may be
 * switched on later by a reconfigure, and an fd without edges is simply never
 * readable.
 */
#ifndef GB_IRQ_H
#define GB_IRQ_H

#include <stdint.h>

#include "line-request.h"
#include "loop.h"

/** A batch of @p n edges, in kernel order. */
typedef void (*irq_handler_t)(void *userdata, const struct gb_edge *ev, int n);

typedef struct Irq {
	LoopIo io;
	LineReq *lreq;
	irq_handler_t handler;
	void *userdata;
	const char *name; /* for messages: the owner's object path */
} Irq;

/** Watch @p k; 0 or -errno. @p name must outlive the Irq. */
int irq_attach(Irq *irq, Loop *loop, LineReq *k, irq_handler_t handler, void *userdata,
	       const char *name);
/** Is it watching? */
static inline bool irq_attached(const Irq *irq)
{
	return loop_io_active(&irq->io);
}
/** Stop watching (the chip is gone, or the request ends). Safe to call twice. */
void irq_detach(Irq *irq);
/** Hand over what the kernel has queued right now (before the request goes away). */
void irq_flush(Irq *irq);

/**
 * A debugging aid (GPIOD_BROKER_DEBUG_ABORT_AFTER_EVENTS, gpiod-broker(8)): abort()
 * once @p n edge events in all have been read from the kernel, right after the read
 * that reaches it and before any of that batch is handled: a broker dying between
 * the kernel and its subscribers, on purpose. 0: never.
 */
void irq_debug_abort_after(uint64_t n);

#endif
