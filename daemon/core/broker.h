/* SPDX-License-Identifier: LGPL-2.1-or-later */
/**
 * @file broker.h
 * @brief The daemon's one context: what every object of the core model shares.
 *
 * The Broker owns the chips (kernel/chip.h), the clients (client.h), the requests
 * (request.h) and the watches (watch.h), the policy in force and the state kept for
 * restarts (state.h). manager/ builds it up and tears it down; bus/ serves it.
 */
#ifndef GB_BROKER_H
#define GB_BROKER_H

#include <stdbool.h>
#include <stdint.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>

#include "forward.h"
#include "hashmap.h"
#include "loop.h"
#include "policy.h"
#include "state.h"

/* Per-client limits (limits.c); defaults for a small board, 0 = no limit. Each
 * managed request costs the broker one kernel line request (an fd) per chip. */
#define GB_DEFAULT_MAX_REQUESTS_PER_CLIENT 64
#define GB_DEFAULT_MAX_LINES_PER_CLIENT    512
#define GB_DEFAULT_MAX_PERSISTENT_PER_UID  64

struct gb_limits {
	unsigned int max_requests_per_client; /* managed requests of one connection */
	unsigned int max_lines_per_client;    /* lines in them */
	unsigned int max_persistent_per_uid;  /* persistent requests owned by one uid */
};

/* How the last (re)load of the policy went, for Manager.PolicyStatus and denials. */
enum policy_state {
	POLICY_EMPTY,    /* loaded, no entries (no files, or no directory) */
	POLICY_LOADED,
	POLICY_REJECTED, /* the last load failed: the previous policy, or an empty one, is in force */
};

struct policy_status {
	enum policy_state state;
	char *errors;          /* of the last load, "file:line: message\n" each; NULL if none */
	char *warnings;        /* likewise */
	uint64_t loaded_usec;  /* CLOCK_REALTIME of the load of the policy in force; 0: none */
};

struct Broker {
	sd_event *event;
	Loop *loop;               /* around event, with a short way for calls and edges */
	sd_bus *bus;
	LoopIo bus_io;            /* the bus connection on the loop's short way (main.c) */
	sd_bus_slot *name_owner_slot;
	char *dev_dir;            /* where gpiochip nodes appear, "/dev" */

	Chip *chips;              /* list */
	int inotify_fd;
	sd_event_source *inotify_source;

	Hashmap *requests;        /* object path -> Request */
	Request *request_list;    /* newest first, for listing */
	uint64_t next_request_id; /* never reused within a daemon's life */

	Hashmap *clients;         /* unique bus name -> Client */

	Hashmap *watches;         /* object path -> Watch; made with the first */
	uint64_t next_watch_id;

	Action *actions;          /* the policy's edge actions at work (action.h) */
	Slice *slices;            /* what gpiod-broker-slices recorded (sliced.h), by name */
	const char *slice_dir;    /* where it records them; NULL: GB_SLICE_STATE_DIR */

	char *policy_dir;
	struct gb_policy *policy; /* never NULL: empty means deny all (but root) */
	struct policy_status policy_status;

	State state;              /* records and fd store, for restarts */
	bool handover;            /* stopping for a restart: leave stored lines as they are */

	struct gb_limits limits;
	unsigned int event_window; /* flow control per subscriber (flow.h) */
	unsigned int event_queue;
	uint64_t stall_usec;       /* a private connection's (conn.h) */
};

#endif
