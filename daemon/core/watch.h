/* SPDX-License-Identifier: LGPL-2.1-or-later */
/**
 * @file watch.h
 * @brief Watches: read-only subscribers of a line's level and edges, the sysfs
 * "value" poll() model without owning the line.
 *
 * A watch is an object (/org/gpiodbroker1/watch/N) that a client makes with
 * Manager.Watch() (bus/watch-bus.c) and that goes away with Close() or when the
 * client leaves the bus. Watching is a permission of its own (watch-users,
 * watch-groups in the policy) and a line has at most max-watchers watchers.
 *
 * Where the events come from:
 *  - A line held by a request: the holder's kernel request. Every edge it reads is
 *    also given to each watcher (watch_fan_out), with the same kernel timestamp and
 *    sequence numbers; watchers see what the holder configured (edge, bias,
 *    debounce), and nothing if it did not ask for edges.
 *  - A line nobody holds: the broker requests it itself (a WatchSource: input,
 *    both edges, consumer "gpiod-broker-watch") and lets go of it the moment a
 *    real request wants the line; when that request ends, it takes the line back
 *    (if it was left an input: the broker never turns an output into an input).
 * Each time the source changes, watchers get the level again (InitialState): the
 * edges in between belong to no request and cannot be reported.
 *
 * Every watcher has its own bounded queue (flow.h): a slow one loses its own
 * events, counted, and never delays the holder or another watcher.
 *
 * A watch is recorded (state.h: watch-<id>, and its event mark) and survives a
 * broker restart: the next broker re-adopts it (watch_adopt) under the same path for
 * the same subscriber, which gets its level again; events the old broker took on
 * and never sent are counted lost.
 */
#ifndef GB_WATCH_H
#define GB_WATCH_H

#include <stdbool.h>
#include <stdint.h>
#include <systemd/sd-bus.h>

#include "flow.h"
#include "forward.h"
#include "line-request.h"

struct Watch {
	Broker *broker;
	uint64_t id;
	char *path;
	Line *line;                 /* NULL once the chip is gone */
	Watch *line_next;           /* Line's watchers */
	Watch *client_next;         /* Client's watches */
	Client *client;
	Flow flow;
	uint64_t since_ns;          /* edges up to this are in the initial state */
	bool since_valid;
	uint64_t last_line_seqno;   /* of the source now feeding it: kernel loss per line */
	bool stored;                /* its record is in the state directory */
	struct gb_mark *mark;       /* shared with the next broker (record.h), or NULL */
	/* Since its chip went: that chip's identity (chip.h), to resume on when it
	 * comes back; NULL if it had none. */
	char *home;
	char *home_chip;            /* the chip's name then, for ChipBack */
	unsigned int home_offset;
};

/**
 * A watch of @p l for @p c (the policy already allows it). Its initial state is
 * read now and kept in @p initial (false if there is none to send), to be sent with
 * watch_push_initial() after the method reply. 0 or -errno / a bus error.
 */
int watch_new(Broker *b, Client *c, Line *l, Watch **ret, struct gb_event *initial,
	      bool *have_initial, sd_bus_error *error);
void watch_push_initial(Watch *w, struct gb_event *initial);
/**
 * After a restart: watch @p id of @p l for @p c, as the previous broker had it
 * (the policy already allows it). Its subscriber is told what the old broker had
 * not sent (EventsLost) and gets an InitialState. 0 or -ENOMEM.
 */
int watch_adopt(Broker *b, Client *c, Line *l, uint64_t id);
/** Announce its end (log, ObjectRemoved) and unlink it from its line and client. */
void watch_release(Watch *w, const char *reason);
/** Free a released watch. NULL-safe; returns NULL. */
Watch *watch_free(Watch *w);
/** release + free. */
void watch_close(Watch *w, const char *reason);
Watch *watch_find(Broker *b, const char *path);

/** An edge on a held line: to each of its watchers. */
void watch_fan_out(Line *l, const struct gb_edge *ev);
/** Before a request takes @p l: the broker's own request, if any, lets go. */
void watch_line_yield(Line *l);
/** The line has a new source of events (a holder came, or went, or a request
 * failed): watchers get its level again as an InitialState. */
void watch_line_resync(Line *l);
/** Every watch of @p c ends (it left the bus). */
void watch_client_gone(Client *c);
/** @p l's chip is gone: its watchers are told, and keep their objects. */
void watch_chip_gone(Line *l);
/**
 * @p w's chip came back (the same identity, at @p l): it watches @p l again, and
 * its subscriber gets the level (InitialState). The caller checked the policy.
 */
int watch_chip_back(Watch *w, Line *l);
/**
 * @p t observes @p l from now on (kernel/chip.h, LineTap): the broker requests the
 * line itself if nobody holds it. The tap stays on the line even when that fails
 * (the line is busy outside the broker, or an output): it hears on_resync() when the
 * line can be read again. 0, or the bus error that says why it is not observed now.
 */
int watch_tap_add(LineTap *t, Line *l, sd_bus_error *error);
/** @p t leaves its line (NULL-safe as to the line). */
void watch_tap_remove(LineTap *t);
/** The line's physical level now (the holder's active-low undone), and the monotonic
 * time. 0, -ENODATA (nothing holds it to read it from), or -errno. */
int watch_line_level(Line *l, bool *high, uint64_t *mono_ns);
/** After a policy reload: watches it no longer allows end, their owners told why. */
void watch_revalidate(Broker *b);

#endif
