/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libgpiobroker's direct requests (client/direct.c), inside the library only.
 *
 * A direct request holds copies of its kernel line-request fds (Request option
 * "direct", then Request.GetLineFds()): values are read and set by ioctl on them,
 * and edges are read from them, with no broker in the path. This part knows the
 * GPIO v2 uAPI (no libgpiod: the library is built without it) and the fds; the
 * handles, handlers and loss accounting stay in gpiobroker.c, which it calls back
 * through gb_direct_deliver_edge().
 *
 * The connection's fd (gpiobroker_get_fd()) becomes an epoll fd over the bus and
 * every line fd once the first direct request is made.
 */
#ifndef GPIOBROKER_DIRECT_PRIVATE_H
#define GPIOBROKER_DIRECT_PRIVATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>

#include "gpiobroker.h"

/* Per connection: the epoll fd and the loop the line fds are attached to. */
struct gb_direct_conn;
/* Per request: its line fds and where each line is in them. */
struct gb_direct_req;

/**
 * Ask the broker for @p owner's line fds (GetLineFds on @p path) and set them up
 * on @p *connp (made on first use). @p chips and @p offsets are the request's lines
 * in request order. 0 or -errno, the broker's error in @p e.
 */
int gb_direct_open(struct gb_direct_conn **connp, sd_bus *bus, const char *path,
		   struct gpiobroker_request *owner, size_t n_lines, char *const *chips,
		   const unsigned int *offsets, struct gb_direct_req **ret, sd_bus_error *e);
/** Close the request's fds (before its Release, so the lines go when the broker lets go). */
void gb_direct_req_free(struct gb_direct_conn *c, struct gb_direct_req *d);
void gb_direct_conn_free(struct gb_direct_conn *c);

/** Values by ioctl: @p idx NULL means lines 0..n-1. 0 or -errno (-EPERM: an input). */
int gb_direct_get(struct gb_direct_req *d, size_t n, const unsigned int idx[], int values[]);
int gb_direct_set(struct gb_direct_req *d, size_t n, const unsigned int idx[], const int values[]);

/* Event-loop integration of the connection (see gpiobroker_get_fd()). */
int gb_direct_conn_fd(struct gb_direct_conn *c);
int gb_direct_conn_events(struct gb_direct_conn *c, sd_bus *bus);
/** Read every readable line fd without blocking, delivering edges. Count or -errno. */
int gb_direct_process(struct gb_direct_conn *c);
/** Made on first use, like gb_direct_open(): the loop may come before any request. */
int gb_direct_attach_event(struct gb_direct_conn **connp, sd_event *e, int priority);
void gb_direct_detach_event(struct gb_direct_conn *c);

/**
 * In gpiobroker.c: one edge read from @p req's fd, delivered as the bus path's
 * events are (seqno, lost counts, no handler). @p kernel_lost: events the kernel
 * dropped just before it (a gap in its seqno). False if the handler freed @p req.
 */
bool gb_direct_deliver_edge(struct gpiobroker_request *req, unsigned int index,
			    unsigned int offset, bool rising, uint64_t timestamp_ns,
			    uint64_t global_seqno, uint64_t line_seqno, uint64_t kernel_lost);

#endif
