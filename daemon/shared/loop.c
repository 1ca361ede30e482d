/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The broker's main loop (loop.h says why it is not sd_event_loop()). */

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#include "loop.h"

#define BATCH 64

struct Loop {
	sd_event *event;
	int epoll_fd;
	bool want_turn;
	uint64_t (*prepare)(void *userdata);
	void *prepare_userdata;
	/* The batch being dispatched, so that a removal can take its entry out. */
	struct epoll_event batch[BATCH];
	int batch_n, batch_i;
	const LoopIo *dispatching;
};

/* epoll data that is not a LoopIo: sd-event's fd, and an entry taken out. */
static char event_mark, removed_mark;

int loop_new(sd_event *event, Loop **ret)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = &event_mark };
	Loop *l = calloc(1, sizeof(*l));
	int r;

	if (!l)
		return -ENOMEM;
	l->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	if (l->epoll_fd < 0) {
		r = -errno;
		free(l);
		return r;
	}
	if (epoll_ctl(l->epoll_fd, EPOLL_CTL_ADD, sd_event_get_fd(event), &ev) < 0) {
		r = -errno;
		close(l->epoll_fd);
		free(l);
		return r;
	}
	l->event = sd_event_ref(event);
	*ret = l;
	return 0;
}

Loop *loop_free(Loop *l)
{
	if (!l)
		return NULL;
	close(l->epoll_fd);
	sd_event_unref(l->event);
	free(l);
	return NULL;
}

int loop_io_add(Loop *l, LoopIo *io, int fd, uint32_t events, loop_io_fn fn, void *userdata)
{
	struct epoll_event ev = { .events = events, .data.ptr = io };

	*io = (LoopIo){ .fd = fd, .events = events, .fn = fn, .userdata = userdata };
	if (epoll_ctl(l->epoll_fd, EPOLL_CTL_ADD, fd, &ev) < 0)
		return -errno;
	io->loop = l;
	return 0;
}

int loop_io_set_events(LoopIo *io, uint32_t events)
{
	struct epoll_event ev = { .events = events, .data.ptr = io };

	if (!io->loop)
		return -ENOTCONN;
	if (events == io->events)
		return 0;
	if (epoll_ctl(io->loop->epoll_fd, EPOLL_CTL_MOD, io->fd, &ev) < 0)
		return -errno;
	io->events = events;
	return 0;
}

void loop_io_remove(LoopIo *io)
{
	Loop *l = io->loop;

	if (!l)
		return;
	/* The fd may be closed already (a chip gone): the kernel then dropped it from
	 * the epoll set itself, and ENOENT/EBADF say no more than that. */
	(void)epoll_ctl(l->epoll_fd, EPOLL_CTL_DEL, io->fd, NULL);
	for (int i = l->batch_i + 1; i < l->batch_n; i++)
		if (l->batch[i].data.ptr == io)
			l->batch[i].data.ptr = &removed_mark;
	if (l->dispatching == io)
		l->dispatching = NULL;
	io->loop = NULL;
}

bool loop_io_dispatching(Loop *l, const LoopIo *io)
{
	return l->dispatching == io;
}

void loop_want_turn(Loop *l)
{
	l->want_turn = true;
}

void loop_set_prepare(Loop *l, uint64_t (*prepare)(void *userdata), void *userdata)
{
	l->prepare = prepare;
	l->prepare_userdata = userdata;
}

void loop_io_sync_bus(LoopIo *io, sd_bus *bus)
{
	int ev = sd_bus_get_events(bus);

	/* A closed connection has nothing to wait for: what is left of it comes through
	 * sd_bus_process(). */
	if (ev >= 0)
		(void)loop_io_set_events(io, (ev & POLLIN ? EPOLLIN : 0u) | (ev & POLLOUT ? EPOLLOUT : 0u));
}

bool loop_bus_queued(sd_bus *bus)
{
	uint64_t t;

	return sd_bus_get_timeout(bus, &t) > 0 && t == 0;
}

/* epoll_wait()'s timeout for sleeping until @p until; a clock read only for a
 * deadline, which the broker's own fds never have once running. */
static int timeout_ms(uint64_t until)
{
	struct timespec ts;
	uint64_t now;

	if (until == UINT64_MAX)
		return -1;
	if (until == 0 || clock_gettime(CLOCK_MONOTONIC, &ts) < 0)
		return 0;
	now = (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
	if (until <= now)
		return 0;
	return (until - now) / 1000u >= INT_MAX ? INT_MAX : (int)((until - now + 999u) / 1000u);
}

/*
 * Let sd-event dispatch until it has nothing pending, @p r being what
 * sd_event_wait() just returned (0, or nothing called yet: it is not armed; 1: it
 * has something pending): all of its pending sources, by their priorities, before
 * any fast callback (the chips' line-info events before the calls of the batch).
 * 0 when it is prepared again (armed), 1 when it has finished (sd_event_exit()), or a
 * negative errno.
 */
static int event_settle(Loop *l, int r)
{
	for (;;) {
		if (r < 0)
			return r;
		if (r > 0) {
			r = sd_event_dispatch(l->event);
			if (r < 0)
				return r;
			if (sd_event_get_state(l->event) == SD_EVENT_FINISHED)
				return 1;
		}
		/* More pending: it has waited (without sleeping) already. */
		r = sd_event_prepare(l->event);
		if (r == 0)
			return 0;
	}
}

/* The turns asked for (loop_want_turn()), also by sd-event's own callbacks: what
 * the kernel queued for them is read in the next. Bounded: a turn may ask for
 * another (a watcher retaking a line another turn's event freed), not forever. */
static int wanted_turns(Loop *l)
{
	int r = 0;

	for (int i = 0; r == 0 && l->want_turn && i < 8; i++) {
		l->want_turn = false;
		r = event_settle(l, sd_event_wait(l->event, 0));
	}
	return r;
}

int loop_run(Loop *l)
{
	int r, code = 0;

	/* sd-event is armed whenever the loop sleeps. */
	r = event_settle(l, 0);
	while (r == 0) {
		bool event_ready = false;
		int n, timeout = l->prepare ? timeout_ms(l->prepare(l->prepare_userdata)) : -1;

		/* Armed, sd-event does not see what the fast callbacks gave it: it must be
		 * told (an exit asked for is seen here without being told). */
		if (l->want_turn || sd_event_get_exit_code(l->event, &code) >= 0) {
			l->want_turn = true;
			r = wanted_turns(l);
			continue;
		}
		n = epoll_wait(l->epoll_fd, l->batch, BATCH, timeout);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		l->batch_n = n;
		l->batch_i = -1;
		for (int i = 0; i < n; i++)
			event_ready |= l->batch[i].data.ptr == &event_mark;
		if (event_ready) {
			r = event_settle(l, sd_event_wait(l->event, 0));
			if (r == 0)
				r = wanted_turns(l);
			if (r != 0)
				break;
		}
		for (l->batch_i = 0; l->batch_i < l->batch_n; l->batch_i++) {
			struct epoll_event *e = &l->batch[l->batch_i];
			LoopIo *io = e->data.ptr;

			if (e->data.ptr == &event_mark || e->data.ptr == &removed_mark)
				continue;
			l->dispatching = io;
			io->fn(io, e->events, io->userdata);
			l->dispatching = NULL;
			/* Before the next callback: it may depend on what sd-event is to read
			 * (a line-info event the kernel queued for this callback's release). */
			r = wanted_turns(l);
			if (r != 0)
				break;
		}
		l->batch_n = l->batch_i = 0;
	}
	l->batch_n = l->batch_i = 0;
	if (r < 0)
		return r;
	r = sd_event_get_exit_code(l->event, &code);
	return r < 0 ? r : code;
}
