/* SPDX-License-Identifier: LGPL-2.1-or-later */
/**
 * @file irq.h
 * @brief Edge interrupts of a kernel line request: the gpio_to_irq() +
 * request_irq() model.
 *
 * A line request with edge detection has an fd that becomes readable when the
 * kernel has queued edge events. An Irq watches that fd in the event loop and hands
 * each batch it reads to a handler; what the events mean (whose they are, who gets
 * them) is the handler's business. The fd is always watched: edge detection may be
 * switched on later by a reconfigure, and an fd without edges is simply never
 * readable.
 */
#ifndef GB_IRQ_H
#define GB_IRQ_H

#include <systemd/sd-event.h>

#include "line-request.h"

/** A batch of @p n edges, in kernel order. */
typedef void (*irq_handler_t)(void *userdata, const struct gb_edge *ev, int n);

typedef struct Irq {
	sd_event_source *source;
	LineReq *lreq;
	irq_handler_t handler;
	void *userdata;
	const char *name; /* for messages: the owner's object path */
} Irq;

/** Watch @p k; 0 or -errno. @p name must outlive the Irq. */
int irq_attach(Irq *irq, sd_event *event, LineReq *k, irq_handler_t handler, void *userdata,
	       const char *name);
/** Stop watching (the chip is gone, or the request ends). Safe to call twice. */
void irq_detach(Irq *irq);
/** Hand over what the kernel has queued right now (before the request goes away). */
void irq_flush(Irq *irq);

#endif
