/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Inside libgpiobroker: the private structs, and the functions its files call of
 * one another. The files are in ranks (HACKING.md, "Library"); a file calls only
 * functions of lower ranks, and hears from below through functions it gave at
 * creation (the signal handler of the transport, the edge handler of a direct
 * request, a subscription's kind). The sections below go lowest first.
 */
#ifndef GPIOBROKER_INTERNAL_H
#define GPIOBROKER_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>

#include "gpiobroker.h"
#include "org.gpiodbroker1.h"

/* The public API: every other function stays inside (-fvisibility=hidden); the
 * list of what is exported is client/libgpiobroker.sym. */
#define GB_EXPORT __attribute__((visibility("default")))

#define GB_ELEMENTSOF(a) (sizeof(a) / sizeof((a)[0]))
#define gb_container_of(ptr, type, member) ((type *)((char *)(ptr) - offsetof(type, member)))
/* Index i of a multi-line call: idx[i], or i when idx is NULL. */
#define GB_IDX(idx, i) ((uint32_t)((idx) ? (idx)[i] : (i)))

struct gb_direct_conn;
struct gb_direct_req;

/*
 * What woke the handle's epoll fd (gpiobroker_get_fd()): its data points at one of
 * these, first in what it stands for. One flat set, no epoll nested in another: a
 * line fd's edge is one epoll_wait() and one read() away from its handler.
 */
enum gb_source_kind { GB_SOURCE_BUS, GB_SOURCE_P2P, GB_SOURCE_LINE };
struct gb_source {
	enum gb_source_kind kind;
};
/* A connection not in the epoll set. */
#define GB_EPOLL_NONE UINT32_MAX
struct gb_pending_request;
struct gb_subscription;

/* What a connection was opened to: gpiobroker_reconnect() opens the same again. */
enum gb_target_kind {
	GB_TARGET_SYSTEM,  /* the local system bus */
	GB_TARGET_ADDRESS, /* a D-Bus address */
	GB_TARGET_HOST,    /* a host's system bus over SSH */
	GB_TARGET_MACHINE, /* a local container's system bus */
	GB_TARGET_BUS,     /* the caller's sd_bus: not ours to open again */
};

/* One connection to the broker (struct gpiobroker of the API). */
struct gpiobroker {
	sd_bus *bus;
	enum gb_target_kind target;
	char *target_arg;                /* the address, host or machine */
	enum gpiobroker_transport asked; /* the transport the caller opened with */
	/* The bus connection closed under us (an SSH link went, the bus daemon
	 * died): calls fail with ENOTCONN until gpiobroker_reconnect(). */
	bool lost;
	/* The connection cannot carry file descriptors (an SSH link): no private
	 * connection, no direct request. */
	bool no_fds;
	sd_bus_slot *local_slot;
	/* The private connection to the broker (Manager.OpenConnection), when in use:
	 * every call goes there, and the broker's signals for us come on it. The bus
	 * connection stays: it is our identity, and how we hear the broker restart. */
	sd_bus *p2p;
	sd_bus_slot *p2p_slots[3];
	/* The subscriptions' signal handler, given at open (transport.c installs it on
	 * every private connection it opens). */
	sd_bus_message_handler_t on_signal;
	enum gpiobroker_transport want; /* what the caller asked for (never _AUTO here) */
	bool strict;                     /* GPIOBROKER_TRANSPORT_P2P: no fallback at open */
	/* gpiobroker_get_fd(): both connections and every direct line fd, made when a
	 * private connection may be used or the first direct request is; -1 none. */
	int epfd;
	struct gb_source bus_source, p2p_source;
	uint32_t bus_events, p2p_events; /* what the epoll set waits for of each */
	/* What gpiobroker_wait()'s epoll_wait() found ready, for the gpiobroker_process()
	 * that follows: one system call fewer between an edge and its handler. Forgotten
	 * when a direct request goes (its line fd's entry would point at nothing). */
	struct epoll_event ready[16];
	int n_ready;
	sd_event *event;                 /* gpiobroker_attach_event()'s, for a p2p made later */
	int event_priority;
	struct gb_pending_request *pending; /* gpiobroker_request_array_async() calls in flight */
	sd_bus_slot *signal_slot;
	sd_bus_slot *owner_slot;
	sd_bus_slot *watch_slot;
	struct gb_subscription *subs;    /* every open request and watch, for dispatch by path */
	/* Flow control: acknowledge every ack_every events (the broker's EventWindow/2;
	 * 0: a broker without flow control). */
	bool ack_known;
	unsigned int ack_every;
	char *err_name;
	char *err_message;
	struct gb_direct_conn *direct;   /* line fds of direct requests (direct.c), NULL if none */
};

/* One event, as handlers see it (struct gpiobroker_event of the API). */
struct gpiobroker_event {
	enum gpiobroker_event_type type;
	unsigned int index, offset;
	enum gpiobroker_edge edge;
	int value;
	uint64_t timestamp_ns, global_seqno, line_seqno, seqno, lost;
	const char *detail;
};

/* --- rank 0: errors.c, settings.c, event.c, recipe.c (no I/O) --------------------- */

/* The errno of a failed call: the broker's error name mapped (the table in
 * gpiobroker.h), else sd-bus's errno of @p e, else @p r; never 0 or positive. */
int gb_errno_of(const sd_bus_error *e, int r);
/* Record a failed call on @p b (gpiobroker_last_error_*()), free @p e, return its
 * negative errno. */
int gb_fail(struct gpiobroker *b, sd_bus_error *e, int r);
void gb_clear_error(struct gpiobroker *b);
/* The end of a call: gb_fail() if @p r < 0, else the last error cleared and 0. */
int gb_result(struct gpiobroker *b, sd_bus_error *e, int r);

/* Append one a{sv} of line settings (NULL: empty). -EINVAL: an enum out of range. */
int gb_append_settings(sd_bus_message *m, const struct gpiobroker_line_settings *s);

/* How a request was made, to make it again after a reconnection (recipe.c): the
 * lines as the caller named them, their settings kept up to date with the values
 * and directions set since, the label and the flags. */
struct gb_recipe {
	size_t n;
	char **lines;
	struct gpiobroker_line_settings *settings;
	char *label;
	unsigned int flags;
};

/* A copy of a request's arguments; NULL if out of memory (the request then cannot
 * be made again, nothing else). */
struct gb_recipe *gb_recipe_new(size_t n, const char *const lines[],
				const struct gpiobroker_line_settings settings[], const char *label,
				unsigned int flags);
void gb_recipe_free(struct gb_recipe *rc);
/* What was set since (@p idx NULL: 0..n-1): outputs at @p values (NULL values and
 * !@p output: inputs), or @p settings merged as Reconfigure does. @p rc NULL: nothing. */
void gb_recipe_remember(struct gb_recipe *rc, size_t n, const unsigned int idx[],
			const int values[], bool output,
			const struct gpiobroker_line_settings settings[]);

/* --- rank 1: direct.c, the kernel's line fds of direct requests -------------------- */

/*
 * A direct request holds copies of its kernel line-request fds (Request option
 * "direct", then Request.GetLineFds()): values are read and set by ioctl on them,
 * and edges are read from them, with no broker in the path. direct.c knows the
 * GPIO v2 uAPI (no libgpiod: the library is built without it) and the fds.
 *
 * One edge read from a line fd, filled in but for its seqno and lost count, is
 * handed to the function given at gb_direct_open() with the subscription given
 * there. @p kernel_lost: events the kernel dropped just before it (a gap in its
 * seqno); @p late: it came after a later one, so that a gap counted it lost before.
 * It returns false if the handler freed the request: no more edges of it are read
 * in this round.
 */
typedef bool (*gb_direct_edge_fn)(struct gb_subscription *sub, struct gpiobroker_event *ev,
				  uint64_t kernel_lost, bool late);

/*
 * Ask the broker for the line fds of the request at @p path (GetLineFds) and set
 * them up on @p *connp (made on first use), each in the epoll set @p epfd (its
 * data a struct gb_source of kind GB_SOURCE_LINE, for gb_direct_read()). The fds
 * are made non-blocking: they share the broker's open file description, and the
 * broker never reads a direct request's events, so that changes nothing for it.
 * @p chips and @p offsets are the request's lines in request order. 0 or -errno,
 * the broker's error in @p e.
 */
int gb_direct_open(struct gb_direct_conn **connp, sd_bus *bus, int epfd, const char *path,
		   size_t n_lines, char *const *chips, const unsigned int *offsets,
		   gb_direct_edge_fn on_edge, struct gb_subscription *sub,
		   struct gb_direct_req **ret, sd_bus_error *e);
/* Close the request's fds (before its Release, so the lines go when the broker lets go). */
void gb_direct_req_free(struct gb_direct_conn *c, struct gb_direct_req *d);
void gb_direct_conn_free(struct gb_direct_conn *c);

/* Values by ioctl: @p idx NULL means lines 0..n-1. 0 or -errno (-EPERM: an input). */
int gb_direct_get(struct gb_direct_req *d, size_t n, const unsigned int idx[], int values[]);
int gb_direct_set(struct gb_direct_req *d, size_t n, const unsigned int idx[], const int values[]);

/*
 * Edges are read between gb_direct_hold() and gb_direct_release(): a request freed
 * by a handler meanwhile keeps its memory (its fds closed) until the release, so
 * that a batch of epoll events may still point at it.
 */
void gb_direct_hold(struct gb_direct_conn *c);
void gb_direct_release(struct gb_direct_conn *c);
/* What the line fd of @p src (GB_SOURCE_LINE) holds, read once and delivered;
 * @p revents as epoll said. Edges read, or -errno. */
int gb_direct_read(struct gb_source *src, uint32_t revents);
/* Every line fd of @p d (NULL: of every request) read once. Edges read, or -errno. */
int gb_direct_process(struct gb_direct_conn *c, struct gb_direct_req *d);
/* The one line fd of @p d; -EXDEV if its lines are on several chips. */
int gb_direct_req_fd(const struct gb_direct_req *d);
/* Made on first use, like gb_direct_open(): the loop may come before any request. */
int gb_direct_attach_event(struct gb_direct_conn **connp, sd_event *e, int priority);
void gb_direct_detach_event(struct gb_direct_conn *c);

/* --- rank 2: transport.c, the bus connection and the private one ------------------ */

/* Where calls to the broker go: the private connection, unless it is gone. */
sd_bus *gb_conn(struct gpiobroker *b);
/* Manager.OpenConnection() to @p dest, and calls and signals by it from now on. */
int gb_p2p_open(struct gpiobroker *b, const char *dest, sd_bus_error *e);
/* Calls go by the bus again; @p flush: send what is queued first (a Release). */
void gb_p2p_drop(struct gpiobroker *b, bool flush);
/* Keep the epoll set of gpiobroker_get_fd() in step with what each connection waits
 * for: a system call only when that changed. */
void gb_update_epoll(struct gpiobroker *b);
/* The handle's epoll fd, made now if it has none yet (with the bus connection in
 * it): for the first direct request on the bus transport. The fd or -errno. */
int gb_epoll_fd(struct gpiobroker *b);
/* GPIOBROKER_TRANSPORT's value: "bus", "p2p", anything else (or NULL) _AUTO. */
enum gpiobroker_transport gb_transport_parse(const char *value);
/* At open: the private connection if wanted and the broker gives one. */
int gb_transport_start(struct gpiobroker *b, enum gpiobroker_transport t);

/* Appends a call's arguments to @p m (made for whichever connection it goes by). */
typedef int (*gb_append_fn)(sd_bus_message *m, const void *args);
/*
 * Call @p method of the request at @p path, one that may safely be done twice (a
 * value read or set, a direction, a reconfiguration), and record the outcome. No
 * check first that the private connection is alive: a call that finds it dead
 * goes again over the bus, to whoever is the broker now.
 */
int gb_call_repeatable(struct gpiobroker *b, const char *path, const char *method,
		       gb_append_fn append, const void *args, sd_bus_message **reply);

/* The sd-bus address of [USER@]HOST[:PORT]'s system bus over SSH (open.c; exposed
 * for the host tests). 0, or -EINVAL for a malformed host. */
int gb_host_address(const char *host, char *out, size_t size);

/* --- rank 3: subscription.c, what requests and watches share ---------------------- */

/* What differs between a request and a watch, for the code they share. */
struct gb_subscription_kind {
	const char *iface;        /* the object's interface: its signals, Ack */
	const char *restart_prop; /* a property of it, read to see a new broker has it */
	/* Call the handler (which may free the handle: nothing may touch it after). */
	void (*deliver)(struct gb_subscription *sub, const struct gpiobroker_event *ev);
	/* Free the handle without telling the broker (gpiobroker_close()). */
	void (*free)(struct gb_subscription *sub);
	/* Make the request or watch again on a new connection (gpiobroker_reconnect()),
	 * the handle kept: 0, or -errno with the handle still gone. */
	int (*renew)(struct gb_subscription *sub);
};

/* The part of a request or watch that receives the broker's signals. */
struct gb_subscription {
	struct gpiobroker *b;
	const struct gb_subscription_kind *kind;
	struct gb_subscription *next;
	char *path;
	/* The broker's unique name as it answered us. Signals are accepted only from
	 * it: any peer may send a unicast signal to us with the broker's interface,
	 * and the bus daemon does not stop it. */
	char *broker_unique;
	size_t n_lines;
	char **chips;
	unsigned int *offsets;
	bool handled;         /* a handler is set: events go to it, else they count as lost */
	bool initial;         /* InitialState goes to the handler, else it is kept */
	/* Loss accounting (see gpiobroker_event_get_lost()). */
	bool have_seqno;      /* last_seqno is meaningful */
	uint64_t last_seqno;
	uint64_t pending_lost; /* lost (EventsLost, gaps, undelivered) since the last delivery */
	uint64_t total_lost;
	unsigned int unacked;  /* events received since the last Ack */
	/* Initial states that came before a handler asked for them: value per line,
	 * -1 none. */
	int *init_value;
	uint64_t *init_ts;
	/* Handlers running from a delivery that goes on after them (direct edges, a
	 * replay): a free then only marks the handle, and the delivery frees it. */
	unsigned int delivering;
	bool freed;
	bool tell;             /* the broker went or came back: not yet told to the handler */
};

/* Set up @p sub and put it on @p b's list. 0 or -ENOMEM (then it needs kind->free). */
int gb_subscription_init(struct gb_subscription *sub, struct gpiobroker *b,
			 const struct gb_subscription_kind *kind, const char *path);
/* Off the list. True if its parts are freed and the caller frees the handle now;
 * false if a delivery runs its handler: it calls kind->free() again when done. */
bool gb_subscription_end(struct gb_subscription *sub);
/* The broker's event window, asked once per connection (before the first event). */
void gb_learn_window(struct gpiobroker *b);
/* Deliver the initial states kept (gpiobroker_to_irq_flags()) and forget them. */
void gb_subscription_replay_initial(struct gb_subscription *sub);

/* The handlers the connection's matches and direct requests are given. */
int gb_subscription_on_signal(sd_bus_message *m, void *userdata, sd_bus_error *error);
int gb_subscription_on_owner_changed(sd_bus_message *m, void *userdata, sd_bus_error *error);
/* The bus connection's Local.Disconnected: every handle is told BROKER_GONE. */
int gb_subscription_on_disconnected(sd_bus_message *m, void *userdata, sd_bus_error *error);
/* After gpiobroker_reconnect(): each handle still gone is made again (kind->renew)
 * and told BROKER_RESTARTED. The number that could not be. */
unsigned int gb_subscription_renew_all(struct gpiobroker *b);
bool gb_subscription_direct_edge(struct gb_subscription *sub, struct gpiobroker_event *ev,
				 uint64_t kernel_lost, bool late);

/* --- rank 5: request.c ------------------------------------------------------------ */

struct gpiobroker_request {
	struct gb_subscription sub;
	struct gb_recipe *recipe; /* NULL: opened by path, or persistent */
	bool persistent;
	gpiobroker_irq_handler handler;
	void *userdata;
	struct gb_direct_req *direct; /* its line fds, if direct */
};

/* Cancel the async requests in flight: their handlers never run. */
void gb_request_cancel_pending(struct gpiobroker *b);

/* --- rank 7: watch.c -------------------------------------------------------------- */

struct gpiobroker_watch {
	struct gb_subscription sub;
	char *line; /* as the caller named it, to watch it again after a reconnection */
	gpiobroker_watch_handler handler;
	void *userdata;
};

/* --- rank 8: line-info.c ------------------------------------------------------------- */

/* Properties.GetAll's a{sv} of a Line object (@p m at it) as a new info. NULL and
 * -errno in @p ret if it cannot be read. */
struct gpiobroker_line_info *gb_line_info_from_properties(sd_bus_message *m, const char *path,
							  const char *chip, unsigned int offset,
							  int *ret);

#endif
