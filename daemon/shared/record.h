/* SPDX-License-Identifier: LGPL-2.1-or-later */
/**
 * @file record.h
 * @brief The request record: what a broker writes so that the next one can take a
 * request over after a restart (gpiod-broker(8), RESTARTS).
 *
 * A record says everything the kernel line-request fds alone cannot: the request's
 * id, label, owner and its credentials, its lines with their settings and safe
 * states, and each chip's kernel line order. Values are not recorded: they live in
 * the kernel request and are read back. The format is "key=value" lines, one
 * version number, and strict: a record that does not parse whole is rejected whole.
 *
 * Pure: no bus, no kernel, no files (the caller reads and writes them), so the
 * parser is unit-tested and fuzzed on the host.
 */
#ifndef GB_RECORD_H
#define GB_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "line-config.h"
#include "policy.h"

#define GB_RECORD_VERSION   1
/* A kernel line request holds at most 64 lines (GPIO_V2_LINES_MAX). */
#define GB_RECORD_MAX_KERN  64

struct gb_record_chip {
	char *name;                                 /* gpiochipN */
	unsigned int n_kern;                        /* the kernel request's line order */
	unsigned int kern_offsets[GB_RECORD_MAX_KERN];
};

struct gb_record_line {
	unsigned int chip;                          /* index into chips */
	unsigned int offset;
	struct gb_line_config config;
	enum gb_safe_state safe_state;
};

struct gb_record {
	uint64_t id;
	char *label;
	uid_t uid;
	gid_t gid;                                  /* (gid_t)-1: not known */
	gid_t *groups;
	size_t n_groups;
	bool persistent;
	bool direct;                                /* its holder has the line fds too */
	char *owner;                                /* unique bus name, or "" */
	unsigned int n_chips;
	struct gb_record_chip *chips;
	unsigned int n_lines;
	struct gb_record_line *lines;
};

/** An empty record (no allocation). */
void gb_record_init(struct gb_record *rec);
/** Free what @p rec holds and make it empty again. */
void gb_record_clear(struct gb_record *rec);

/** Write @p rec to @p f. 0, or -errno (the stream's error). */
int gb_record_write(const struct gb_record *rec, FILE *f);

/**
 * Parse a whole record of @p len bytes into @p rec (initialized or cleared). It
 * must name @p file_id as its id. 0; or -EINVAL with a message in @p err and the
 * line number in @p lineno (0: the record as a whole is wrong); or -ENOMEM. On
 * error @p rec is cleared.
 */
int gb_record_parse(const char *text, size_t len, uint64_t file_id, struct gb_record *rec,
		    unsigned int *lineno, char *err, size_t errlen);

/**
 * The watch record: a watch (core/watch.h) has no fd to keep, only who watches
 * which line. Its subscriber's unique name survives a broker restart (the bus
 * daemon keeps the clients connected); the uid guards against a bus daemon that
 * restarted too and gave the name to someone else.
 */
struct gb_watch_record {
	uint64_t id;
	uid_t uid;
	char *owner;                                /* unique bus name */
	char *chip;                                 /* gpiochipN */
	unsigned int offset;
};

void gb_watch_record_init(struct gb_watch_record *rec);
void gb_watch_record_clear(struct gb_watch_record *rec);
/** Write @p rec to @p f. 0, or -errno. */
int gb_watch_record_write(const struct gb_watch_record *rec, FILE *f);
/** As gb_record_parse(), for a watch record. */
int gb_watch_record_parse(const char *text, size_t len, uint64_t file_id,
			  struct gb_watch_record *rec, unsigned int *lineno, char *err,
			  size_t errlen);

/*
 * The event mark: what a subscriber was told, kept in a file the broker maps
 * MAP_SHARED, so that it outlives a broker that dies and costs no system call to
 * keep current. Per subscriber (a request's owner, a watcher):
 *  - seqno: the last broker seqno given to one of its events. The next broker goes
 *    on numbering from there, so events the old one had numbered and never sent
 *    (queued behind the window, or written when it died) are a seqno gap to the
 *    subscriber, as events lost on the way are; one it did send is no gap. Counting
 *    those in EventsLost instead would count an event sent just before the broker
 *    died and received, since nothing tells the broker it got out.
 *  - owed: losses it must report (drops, the kernel's gaps); paid: those it has
 *    reported (EventsLost, or without a subscriber the property). A broker that
 *    dies leaves owed - paid: losses nobody was told of yet.
 *  - seq: per kernel request (a request's chip k; a watch: seq[0]) the last
 *    kernel seqno handed on (global seqno; a watch: the line seqno), so the next
 *    broker measures the gap to the next event it reads: events the old broker read
 *    and never handled, and the kernel's own losses while no broker ran.
 *  - src: a watch: the request whose kernel request fed it (0: none, or the
 *    broker's own, which does not outlive the broker): seq[0] is in its numbering.
 * Written only by the one broker running; read by the next one at start.
 */
#define GB_MARK_MAGIC   UINT64_C(0x3230206b72616d67) /* "gmark 02" */
#define GB_MARK_MAX_SEQ GB_MAX_LINES_PER_REQUEST     /* a request has at most this many chips */

struct gb_mark_count {
	uint64_t owed, paid;
	uint64_t seqno;
};

struct gb_mark {
	uint64_t magic;
	struct gb_mark_count count;
	uint64_t src;
	uint64_t seq[GB_MARK_MAX_SEQ];
};

/** "gbreq-<id>-<k>": the fd store name of chip @p k of request @p id. */
void gb_record_fd_name(uint64_t id, unsigned int k, char *buf, size_t size);
/** The reverse; false if @p name is not one of ours. */
bool gb_record_parse_fd_name(const char *name, uint64_t *id, unsigned int *k);
/** A decimal number and nothing else. */
bool gb_parse_u64(const char *s, uint64_t *ret);

#endif
