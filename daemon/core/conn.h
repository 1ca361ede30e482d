/* SPDX-License-Identifier: LGPL-2.1-or-later */
/**
 * @file conn.h
 * @brief A private connection's I/O: what the broker reads of it, when, and what
 * it does with a peer that does not read.
 *
 * A private connection (bus/p2p-bus.c) is on the short way of the broker's loop,
 * not attached to sd-event: this module runs its sd-bus I/O, one message per
 * wake-up, and keeps what it costs the broker bounded whatever the peer does:
 *
 * - **What it sends.** Before sd-bus reads, the broker looks at what waits on the
 *   socket (shared/wire.h): the authentication up to BEGIN, then each message's
 *   fixed header. sd-bus reads only whole messages of at most
 *   GB_WIRE_MAX_MESSAGE whose header has been checked; one that is larger, not
 *   D-Bus, or not the message that was checked ends the connection at once.
 * - **What it does not read.** Replies and signals the peer has not read wait in
 *   the socket, which holds at most GB_CONN_SNDBUF bytes (twice that as the
 *   kernel counts). When it is full the broker stops reading the connection's
 *   calls (backpressure): nothing more piles up than the one reply being sent and
 *   the events its flow-control window allows. A peer that leaves it full for the
 *   stall timeout while it has more calls waiting is dropped, with a journal
 *   entry naming it; one that only reads slowly, or has nothing waiting, is not.
 * - **Its authentication** must end within the stall timeout too.
 *
 * Dropping a private connection ends its Client, as its closing does.
 */
#ifndef GB_CONN_H
#define GB_CONN_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>

#include "forward.h"
#include "loop.h"
#include "wire.h"

/* The send buffer asked for a private connection's socket (SO_SNDBUF): what the
 * peer has not read that the kernel holds before the broker stops reading it. */
#define GB_CONN_SNDBUF (128 * 1024)
/* How long a peer may leave the socket full while it sends more calls, or take to
 * authenticate, before it is dropped (--stall-timeout). */
#define GB_CONN_DEFAULT_STALL_USEC (30 * UINT64_C(1000000))

/** A private connection that broke or was dropped (its Client must go). */
typedef void (*conn_broken_fn)(Broker *b, sd_bus *bus);

typedef struct ClientConn {
	sd_bus *bus;
	LoopIo io;
	Broker *broker;
	const char *name;          /* its Client's unique name (the Client's string) */
	uid_t uid;
	unsigned int index;        /* 1 for a client's first private connection, ... */
	conn_broken_fn broken;
	sd_bus_slot *filter;
	bool ready;                /* authenticated */
	struct gb_wire wire;       /* the authentication, as far as it has been looked at */
	/* Messages checked and not yet read by sd-bus, oldest first: their serials. */
	uint32_t *expect;
	size_t n_expect, expect_first, expect_size;
	const char *violation;     /* a message sd-bus read that was not the one checked */
	bool wait_input;           /* for the rest of a header (edge-triggered) */
	bool metered;              /* the peek offset counts down what sd-bus is to read */
	sd_event_source *stall;    /* armed while authenticating, and while output waits */
} ClientConn;

/**
 * Run @p bus (a started private server connection, not attached to an event loop,
 * whose peer has not yet had its fd) for the client @p name (@p uid), the
 * @p index th of its private connections. @p broken is called when it breaks or
 * is dropped. 0 or -errno.
 */
int conn_start(ClientConn *cc, Broker *b, sd_bus *bus, const char *name, uid_t uid,
	       unsigned int index, conn_broken_fn broken);
/** Stop and close it without a flush (a peer that does not read must not block). */
void conn_stop(ClientConn *cc);
/** After sending on it: wait for the socket to take what it did not. */
void conn_sent(ClientConn *cc);

#endif
