/* SPDX-License-Identifier: LGPL-2.1-or-later */
/**
 * @file request.h
 * @brief Requests: lines held through the broker, the gpio_request() /
 * gpio_request_array() / gpio_free() model, and devm_ for managed ones.
 *
 * One Request may span chips: it holds one kernel line request per chip (ReqChip)
 * and is all-or-nothing: if any chip refuses, the chips already requested are
 * released before the caller hears of the failure, so a failed request holds
 * nothing. The kernel sees the request's label as the lines' consumer. A managed
 * request belongs to its client (a bus connection) and goes when it goes; a
 * persistent one belongs to a uid and stays until released.
 *
 * Lifecycle: request_new() (or request_from_record() + request_link() after a
 * restart) makes it live; request_release() is the bus-visible end (log line,
 * ObjectRemoved, safe states, the fd store); request_free() frees what is left.
 * Values are in value.c, direction and settings in direction.c, edge events below
 * (request_start_events) and in kernel/irq.h.
 */
#ifndef GB_REQUEST_H
#define GB_REQUEST_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <systemd/sd-bus.h>

#include "flow.h"
#include "forward.h"
#include "irq.h"
#include "line-config.h"
#include "line-request.h"
#include "log.h"
#include "policy.h"
#include "record.h"

/* The part of a request on one chip: one kernel line request. */
struct ReqChip {
	Request *request;
	Chip *chip;                 /* NULL once the chip is gone */
	char *chip_name;            /* kept for messages after the chip is gone */
	char *home;                 /* since its chip went: that chip's identity, or NULL */
	LineReq lreq;
	Irq irq;
	uint64_t last_global_seqno;
	bool seqno_unknown;         /* adopted: the old broker's last seqno is lost */
};

struct ReqLine {
	Line *line;                 /* NULL once the chip is gone */
	ReqChip *rc;
	unsigned int offset;
	struct gb_line_config config;
	enum gb_safe_state safe_state; /* applied when the line is let go */
};

struct Request {
	Broker *broker;
	Request *next, *prev;       /* broker->request_list */
	Request *client_next;       /* Client's requests */
	uint64_t id;
	char *path;
	char *label;
	bool persistent;
	/* Its owner has the kernel line fds too (direct.c, below): the broker reads no
	 * edges from them, and a reload can only ask it to let go (revoke_pending). */
	bool direct;
	char *revoke_pending;       /* why the policy no longer allows it, or NULL */
	bool linked;                /* live: on the bus, holding its lines */
	Client *client;             /* owner connection (managed) / subscriber (persistent) */
	uid_t uid;                  /* caller's uid at request time */
	gid_t gid;                  /* ... and groups: policy is re-checked on reload */
	gid_t *groups;
	size_t n_groups;
	unsigned int n_lines;
	ReqLine *lines;
	unsigned int n_chips;
	ReqChip *chips;
	Flow flow;                  /* the owner's events: seqno, lost count, queue */
	uint64_t since_ns;          /* edges up to this are in the owner's initial state */
	bool since_valid;
	bool chip_gone;
	bool stored;                /* its fds are in the fd store / its record on disk */
	struct gb_mark *mark;       /* shared with the next broker (record.h), or NULL */
};

/** Its journal fields (core/journal.h): path, label, owner and, with @p lines, each line's. */
void request_journal(const Request *req, struct gb_log_fields *f, bool lines);

/**
 * Request @p n lines for @p owner (the policy already allows it): each line must be
 * free. Live on return: on the bus, holding the lines, recorded for restarts.
 */
int request_new(Broker *b, Client *owner, const char *label, bool persistent, bool direct,
		unsigned int n, Line **lines, struct gb_line_config *configs,
		Request **ret, sd_bus_error *error);
/**
 * The request a previous broker recorded, not live yet: its chips and lines are
 * found by name and offset (NULL where gone or held), it holds no fds. -ENOMEM.
 */
int request_from_record(Broker *b, const struct gb_record *rec, Request **ret);
/** Make it live: bus object, its lines held, its owner's list. */
int request_link(Request *req, Client *owner);
/** Watch the kernel requests' edge events (every chip with an fd; none for a
 * direct request, whose owner reads them from its copy of the fds). */
int request_start_events(Request *req);

/**
 * The end as the bus sees it: logged with @p reason, ObjectRemoved, each line to
 * its safe state (unless handed over for a restart), out of the fd store, the lines
 * back to the kernel and to their watchers. Then request_free().
 */
void request_release(Request *req, const char *reason);
/** Free a released (or never linked) request. NULL-safe; returns NULL. */
Request *request_free(Request *req);
/** release + free. */
void request_close(Request *req, const char *reason);
static inline void request_freep(Request **req) { request_free(*req); }

Request *request_find(Broker *b, const char *path);
/** Who gets the events: @p c, or nobody (NULL). */
void request_set_owner(Request *req, Client *c);
/** A signal to the owner only (unicast). */
int request_emit(Request *req, const char *member, const char *types, ...);
/** @p c is gone: its part of the request is closed, the owner told. */
void request_chip_gone(Request *req, Chip *c);
/** Rewrite the record (settings or subscriber changed). */
void request_save(Request *req);
/** Write its first record, hand its fds to the store, map its event mark
 * (request-store.c; only request.c calls it, when the request is made). */
void request_store(Request *req);

/** The identity the request was made with, for policy checks. */
void request_caller(const Request *req, struct gb_caller *caller);
/**
 * Does today's policy still allow @p req? Also takes each line's safe state from
 * today's policy, so a release that follows uses it. If not, @p why says why.
 */
bool request_policy_allows(Request *req, char *why, size_t size);

/** Read the level of each edge-detecting line of a new (or newly subscribed)
 * request (edges stamped before this count as in it)... */
int request_read_initial_state(Request *req, struct gb_event **ret, size_t *n);
/** The same for the lines @p which selects only, e.g. those whose edge detection a
 * reconfigure just turned on; the other lines' initial state is not read again. */
int request_read_levels_of(Request *req, const bool *which, struct gb_event **ret, size_t *n);
/** ... and send them as InitialState (frees @p evs). Read before the method reply,
 * sent after it. */
void request_push_initial_state(Request *req, struct gb_event *evs, size_t n);

/* For value.c and direction.c. */
/** Take each output's level from the kernel into the request's settings: a direct
 * request's owner may have driven them through its fd. */
void request_refresh_values(Request *req);
int request_check_usable(Request *req, unsigned int n, const unsigned int *idx,
			 sd_bus_error *error);
int request_kernel_error(sd_bus_error *error, int err, const char *what, const ReqChip *rc);
/** Request @p rc's lines from the kernel with their settings (replug.c too). */
int reqchip_request(ReqChip *rc, sd_bus_error *error);
/** Push the settings of @p rc's lines to the kernel. */
int reqchip_apply(ReqChip *rc, sd_bus_error *error);

/* value.c: gpio_get_value() / gpio_set_value(), one or many lines. */
int request_get_values(Request *req, unsigned int n, const unsigned int *idx, bool *values,
		       sd_bus_error *error);
int request_set_values(Request *req, unsigned int n, const unsigned int *idx,
		       const bool *values, sd_bus_error *error);

/* direction.c: gpio_direction_input/output() and every other setting. */
int request_reconfigure(Request *req, const struct gb_caller *caller, unsigned int n,
			const unsigned int *idx, const struct gb_line_config *updates,
			sd_bus_error *error);

/*
 * direct.c: direct requests, whose owner holds copies of the kernel line-request fds.
 *
 * Where the policy says "direct = yes", a client may ask for its request's kernel
 * line fds (Request option "direct", then Request.GetLineFds()) and get, set and
 * read edges with no broker in the path. The broker keeps its own copy of each fd,
 * which is what lets it apply the safe state when the owner goes and hand the
 * request to the fd store across a restart. What it gives up, because a dup shares
 * the open file description and the kernel cannot revoke an fd:
 *
 *  - it reads no edges (request_start_events() skips a direct request), so it sends
 *    the owner no Event or InitialState, and the lines have no watchers;
 *  - the owner may drive outputs through its fd, so before the broker passes
 *    settings to the kernel it reads the levels back (request_refresh_values());
 *  - a policy reload cannot take the request back: it is reported to the owner
 *    (RevokePending) and ends when the owner releases it or leaves the bus.
 */
/**
 * May @p caller have a direct request of these @p n lines? PermissionDenied naming
 * the entry (file:line) without "direct = yes"; Busy for a line with watchers (the
 * broker would no longer see its edges). 0 or a bus error.
 */
int direct_check_request(Broker *b, const struct gb_caller *caller, unsigned int n,
			 Line **lines, sd_bus_error *error);
/** Does the policy let @p caller have the fds of every line of @p req? Else false and
 * the missing rule in @p why. */
bool direct_lines_allowed(Request *req, const struct gb_caller *caller, char *why, size_t size);
/**
 * After a policy reload (or a restore): if the policy no longer allows @p req
 * (or no longer says "direct = yes"), log it and tell the owner (RevokePending
 * signal and property); if it allows it again, clear that.
 */
void direct_revalidate(Request *req);

#endif
