/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "irq.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>

#include "log.h"

static uint64_t abort_after, events_read;

void irq_debug_abort_after(uint64_t n)
{
	abort_after = n;
}

static void irq_read(Irq *irq)
{
	struct gb_edge ev[GB_EVENT_BATCH];
	int n = lreq_read_events(irq->lreq, ev, GB_EVENT_BATCH);

	if (n < 0) {
		if (n == -EAGAIN || n == -EINTR)
			return;
		log_warning_errno(n, "%s: reading edge events: %m", irq->name);
		irq_detach(irq);
		return;
	}
	events_read += n > 0 ? (uint64_t)n : 0;
	if (abort_after && events_read >= abort_after) {
		log_info("%s: aborting after %" PRIu64 " edge event(s) read, before handling them "
			 "(GPIOD_BROKER_DEBUG_ABORT_AFTER_EVENTS)", irq->name, events_read);
		abort();
	}
	if (n > 0)
		irq->handler(irq->userdata, ev, n);
}

static int on_readable(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	Irq *irq = userdata;

	if (revents & (EPOLLHUP | EPOLLERR)) {
		/* The chip went away; the manager tells the owner once it sees the node go. */
		irq_detach(irq);
		return 0;
	}
	irq_read(irq);
	return 0;
}

int irq_attach(Irq *irq, sd_event *event, LineReq *k, irq_handler_t handler, void *userdata,
	       const char *name)
{
	int r;

	*irq = (Irq){ .lreq = k, .handler = handler, .userdata = userdata, .name = name };
	r = sd_event_add_io(event, &irq->source, lreq_fd(k), EPOLLIN, on_readable, irq);
	return r < 0 ? r : 0;
}

void irq_detach(Irq *irq)
{
	irq->source = sd_event_source_disable_unref(irq->source);
}

void irq_flush(Irq *irq)
{
	if (irq->source && lreq_events_pending(irq->lreq))
		irq_read(irq);
}
