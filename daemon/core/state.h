/* SPDX-License-Identifier: LGPL-2.1-or-later */
/**
 * @file state.h
 * @brief What outlives a broker: request records in the state directory and the
 * kernel line-request fds in systemd's fd store.
 *
 * A kernel line request lives as long as one fd refers to it. Each request's fds
 * go to the service manager (sd_notify FDSTORE=1, FDNAME=gbreq-<id>-<k>), and its
 * record (shared/record.h) to request-<id> in the state directory, written to a
 * temporary file and renamed, so a crash leaves the old or the new version, never
 * half of one. A broker that crashes or is killed leaves its lines requested and
 * driven as they were; the next one gets the fds back and re-adopts the requests
 * (manager/restore.c). See gpiod-broker(8), RESTARTS.
 *
 * Order matters, so that a crash at any point leaves something the next broker can
 * act on:
 *   create:  record, then fds. A crash between: a record without fds; the kernel
 *            released the lines with our fds, the next broker applies the safe
 *            states and deletes the record.
 *   release: safe states, FDSTOREREMOVE, close, delete the record. The store's copy
 *            would keep the lines requested, so it goes before ours.
 * Watches have records too (watch-<id>, no fds), and requests and watches an event
 * mark each (<kind>-<id>.mark, record.h): the last seqnos given and the losses not
 * yet reported, mapped shared so they are current when a broker dies.
 * Whoever can write the state directory decides what the next broker drives, so
 * it and every file in it must be the broker's (or root's) and writable by nobody
 * else, as policy files must be root's: a directory found otherwise is refused at
 * start, and while the broker runs it writes nothing there until it is safe again;
 * a file found otherwise is refused (logged, deleted) and not used. Files are made
 * O_EXCL and opened O_NOFOLLOW, all of them relative to the directory opened and
 * checked at start. A mark that shrinks under the broker (state-mark.c) costs its
 * counts, not the broker: the page is replaced and the loop told.
 * This module knows records and fds only, not requests: core/request.c calls it.
 */
#ifndef GB_STATE_H
#define GB_STATE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <systemd/sd-event.h>

#include "record.h"

typedef struct State {
	char *dir;       /* where records are kept */
	int dfd;         /* that directory, opened and checked at start; -1: none */
	bool fdstore;    /* a service manager takes fds (NOTIFY_SOCKET) */
	bool record;     /* write records (fd store, or --state-dir given) */
	bool unsafe;     /* the last check found the directory unsafe (logged) */
	sd_event_source *shrunk; /* a mapped mark shrank (state_guard_marks) */
} State;

/**
 * Write state file @p name (a name of the broker's own, no '/') with @p write, whole
 * or not at all (a temporary file renamed over it), in a directory checked first.
 * 0 or -errno.
 */
int state_write_file(State *s, const char *name, int (*write)(FILE *f, const void *rec),
		     const void *rec);

/** A file descriptor systemd passed in at start (LISTEN_FDS) that may be ours. */
struct state_fd {
	int fd;        /* -1 once taken or closed */
	uint64_t id;
	unsigned int k;
	char *name;
};

typedef struct StatePassed {
	struct state_fd *v;
	size_t n;
	char **names;
} StatePassed;

/**
 * Decide where records go: @p dir (--state-dir), else $RUNTIME_DIRECTORY, else
 * /run/gpiod-broker, and open it (made 0700 if missing). Records are written only
 * when a service manager takes fds (NOTIFY_SOCKET) or @p dir was given. A
 * directory that is not the broker's or root's, or that group or others can write,
 * is refused: -EPERM, logged with its owner and mode, when recording; else it is
 * not read (logged) and 0. 0, or -ENOMEM.
 */
int state_init(State *s, const char *dir);
void state_done(State *s);

/**
 * Recover from a mapped event mark that shrank under the broker (SIGBUS): the
 * page is replaced by private memory, so the event path goes on, and @p e's loop
 * logs which mark it was and deletes it. 0 or -errno. One State per process.
 */
int state_guard_marks(State *s, sd_event *e);
/** Undo state_guard_marks(), once every mark is closed. */
void state_unguard_marks(State *s);

/**
 * Keep @p rec and its @p n_fds fds (one per chip, in order). True if both are
 * kept (or, without an fd store, the record). Failures are logged as about @p what.
 */
bool state_save(State *s, const struct gb_record *rec, const int *fds, unsigned int n_fds,
		const char *what);
/** Rewrite the record (settings or subscriber changed). */
void state_update(State *s, const struct gb_record *rec, const char *what);
/** Forget request @p id: its @p n_fds fds leave the store, its record is deleted. */
void state_remove(State *s, uint64_t id, unsigned int n_fds);
/** Only chip @p k's fd leaves the store (that chip is gone). */
void state_remove_fd(State *s, uint64_t id, unsigned int k);
/** Chip @p k's fd goes into the store again (that chip came back). True if it did,
 * or there is no store. */
bool state_add_fd(State *s, uint64_t id, unsigned int k, int fd);

/** The fds passed in at start, by name; those not ours are closed (logged). */
void state_passed_collect(State *s, StatePassed *p, uint64_t *max_id);
/** Take the fd of request @p id, chip @p k, or -1. */
int state_passed_take(StatePassed *p, uint64_t id, unsigned int k);
/** Close and unstore every passed fd of request @p id. */
void state_passed_drop(State *s, StatePassed *p, uint64_t id);
/** Close what nobody took (logged), and free. */
void state_passed_done(State *s, StatePassed *p);

/** The ids of the @p kind ("request", "watch") records in the directory, sorted;
 * removes half-written ones and marks without a record. */
int state_list(State *s, const char *kind, uint64_t **ids, size_t *n);
/** Read record @p id. 0; or -errno, logged with file:line and what is wrong. */
int state_load(State *s, uint64_t id, struct gb_record *rec);
/** Delete record @p id and its mark (it was damaged, or did not match the kernel). */
void state_delete(State *s, uint64_t id);

/** Keep watch @p rec (watch-<id>); false if not recording or it failed (logged). */
bool state_save_watch(State *s, const struct gb_watch_record *rec, const char *what);
/** Forget watch @p id: record and mark. */
void state_remove_watch(State *s, uint64_t id);
/** Read watch record @p id; as state_load(). */
int state_load_watch(State *s, uint64_t id, struct gb_watch_record *rec);

/**
 * The event mark (record.h) of @p kind @p id, mapped shared: <kind>-<id>.mark,
 * made if missing. @p existed: it was there with a previous broker's counts.
 * NULL if not recording or it cannot be made (logged).
 */
struct gb_mark *state_mark_open(State *s, const char *kind, uint64_t id, bool *existed);
/** Unmap (the file stays; state_delete / state_remove_watch remove it). Returns NULL. */
struct gb_mark *state_mark_close(struct gb_mark *m);

/* For state.c and state-mark.c only. */
/** The directory now: 0, or -EPERM if it became unsafe (a change is logged). */
int state_dir_check(State *s);
/**
 * Open @p name in the directory for @p flags (O_NOFOLLOW and O_NONBLOCK added) and
 * check it is a regular file of the broker's or root's that group and others cannot
 * write, of @p min_size to @p max_size bytes. The fd, or -errno with what is wrong
 * in @p why (-ENOENT: not there).
 */
int state_open_checked(State *s, const char *name, int flags, long min_size, long max_size,
		       char *why, size_t size);
/** "<kind>-<id><suffix>", or with @p tmp ".<kind>-<id><suffix>.tmp" (written, then renamed). */
void state_file_name(const char *kind, uint64_t id, const char *suffix, bool tmp, char *buf,
		     size_t size);

#endif
