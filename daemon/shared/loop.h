/* SPDX-License-Identifier: LGPL-2.1-or-later */
/**
 * @file loop.h
 * @brief The broker's main loop: sd-event for everything, and a short way for the
 * fds every call and every edge goes through.
 *
 * A turn of sd-event reads three clocks (no vDSO on some targets, UML among them)
 * and runs the prepare callback of every attached bus: one per private connection,
 * so a broker with a thousand of them would do a thousand callbacks for each call
 * it answers. The fds on the hot path (private connections, edge fds) are therefore
 * not sd-event sources: this loop waits on them and on sd-event's own fd in one
 * epoll, runs their callbacks itself, and lets sd-event take a turn only when its fd
 * is ready or it has work it cannot see.
 *
 * The catch, and the rule for fast callbacks: while the loop sleeps, sd-event has
 * been prepared (its timers armed, its buses' events set). A fast callback that
 * changes what sd-event would wait for must say so: loop_want_turn() after arming a
 * timer or a deferred source, or after queueing it something to read before the
 * next call (the kernel's line-info events of a request or release). I/O
 * registrations and
 * sd_event_exit() need nothing: a new or changed sd-event io source is on
 * sd-event's epoll at once, and the loop looks for an exit asked for.
 *
 * Order: in a batch of ready fds, sd-event's turn comes first (the chips' line-info
 * events are read before the calls of the same batch are answered), then the fast
 * callbacks in the kernel's order. All of it runs on one thread.
 */
#ifndef GB_LOOP_H
#define GB_LOOP_H

#include <stdbool.h>
#include <stdint.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>

typedef struct Loop Loop;
typedef struct LoopIo LoopIo;

/** @p revents as epoll gives them (EPOLLIN, EPOLLOUT, EPOLLHUP, EPOLLERR). */
typedef void (*loop_io_fn)(LoopIo *io, uint32_t revents, void *userdata);

/** An fd in the loop; embedded in its owner, which keeps it where it is. */
struct LoopIo {
	Loop *loop; /* NULL while not in a loop */
	int fd;
	uint32_t events;
	loop_io_fn fn;
	void *userdata;
};

/** A loop around @p event (a reference is taken). */
int loop_new(sd_event *event, Loop **ret);
/** NULL-safe; returns NULL. Every LoopIo must have been removed. */
Loop *loop_free(Loop *l);

/** Watch @p fd for @p events (level-triggered); 0 or -errno. */
int loop_io_add(Loop *l, LoopIo *io, int fd, uint32_t events, loop_io_fn fn, void *userdata);
/** Change the events; no system call when they are the same. */
int loop_io_set_events(LoopIo *io, uint32_t events);
/**
 * Stop watching. Safe on one never added, twice, and from any callback, including
 * its own: a removed LoopIo is not called again, not even for the batch at hand.
 */
void loop_io_remove(LoopIo *io);
static inline bool loop_io_active(const LoopIo *io)
{
	return io->loop != NULL;
}
/**
 * Inside @p io's callback: is it still in the loop? False once the callback did
 * something that removed it (and perhaps freed its owner): touch nothing of it then.
 */
bool loop_io_dispatching(Loop *l, const LoopIo *io);

/**
 * Let sd-event take a turn before the next fast callback runs (or the loop sleeps):
 * after arming one of its timers or deferred sources, or when it has something to
 * read that the next callback may depend on (chip_lines_changed()).
 */
void loop_want_turn(Loop *l);
/**
 * Called each time before the loop sleeps, as sd-event calls a prepare callback:
 * for what the owner of fast fds must do then (what sd-bus has queued, the events
 * to wait for). It returns until when the loop may sleep, in CLOCK_MONOTONIC
 * microseconds: UINT64_MAX for as long as nothing happens, 0 not at all.
 */
void loop_set_prepare(Loop *l, uint64_t (*prepare)(void *userdata), void *userdata);

/*
 * An sd-bus connection on the short way, doing what sd_bus_attach_event() would:
 * loop_io_sync_bus() after processing or sending, so that the loop waits for what
 * sd-bus wants (POLLOUT while output is queued); loop_bus_queued() for whether
 * sd-bus has work its fd does not show (messages read while a call waited for its
 * reply, or a closing to finish), to be processed before the loop sleeps.
 */
void loop_io_sync_bus(LoopIo *io, sd_bus *bus);
bool loop_bus_queued(sd_bus *bus);

/** Run until sd_event_exit(); its exit code, or a negative errno. */
int loop_run(Loop *l);

#endif
