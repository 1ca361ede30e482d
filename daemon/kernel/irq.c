/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "irq.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <sys/epoll.h>

#include "log.h"

static uint64_t abort_after, events_read;

void irq_debug_abort_after(uint64_t n)
{
	abort_after = n;
}

/*
 * The kernel numbers a request's edges as their interrupts come (global seqno) and
 * queues them as its interrupt threads run, one per line: two lines' edges close
 * together can come out of the queue in the other order. Put back in the kernel's
 * own order, a batch shows no gap that is not a loss.
 */
static void sort_by_seqno(struct gb_edge *ev, int n)
{
	for (int i = 1; i < n; i++) {
		struct gb_edge e = ev[i];
		int j = i;

		for (; j > 0 && ev[j - 1].global_seqno > e.global_seqno; j--)
			ev[j] = ev[j - 1];
		ev[j] = e;
	}
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
	if (n > 0) {
		sort_by_seqno(ev, n);
		irq->handler(irq->userdata, ev, n);
	}
}

static void on_readable(LoopIo *io, uint32_t revents, void *userdata)
{
	Irq *irq = userdata;

	if (revents & (EPOLLHUP | EPOLLERR)) {
		/* The chip went away; the manager tells the owner once it sees the node go. */
		irq_detach(irq);
		return;
	}
	irq_read(irq);
}

int irq_attach(Irq *irq, Loop *loop, LineReq *k, irq_handler_t handler, void *userdata,
	       const char *name)
{
	*irq = (Irq){ .lreq = k, .handler = handler, .userdata = userdata, .name = name };
	return loop_io_add(loop, &irq->io, lreq_fd(k), EPOLLIN, on_readable, irq);
}

void irq_detach(Irq *irq)
{
	loop_io_remove(&irq->io);
}

void irq_flush(Irq *irq)
{
	if (irq_attached(irq) && lreq_events_pending(irq->lreq))
		irq_read(irq);
}
