/* SPDX-License-Identifier: LGPL-2.1-or-later */
/**
 * @file broker.h
 * @brief The broker's objects and how they refer to each other.
 *
 * Broker (one per process) owns Chips, which own Lines; Requests hold Lines and know
 * their owner (a Client, i.e. a bus connection, for managed requests; a uid for
 * persistent ones). Each concept has its file: chip.c, request.c, events.c,
 * client.c, manager.c; their D-Bus faces sit beside them.
 */
#ifndef GB_BROKER_H
#define GB_BROKER_H

#include <gpiod.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>

#include "flow.h"
#include "hashmap.h"
#include "line-config.h"
#include "policy.h"

#include "org.gpiodbroker1.h"

/* Upper bounds that keep one caller from making the broker allocate without limit. */
#define GB_MAX_LINES_PER_REQUEST 512
/* The kernel keeps 31 characters of a consumer name; a longer label would show
 * truncated in the kernel but whole on the bus, so it is refused. */
#define GB_MAX_LABEL_LEN         31
#define GB_EVENT_BATCH           64

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
extern struct gb_limits gb_limits;

typedef struct Broker Broker;
typedef struct Chip Chip;
typedef struct Line Line;
typedef struct Request Request;
typedef struct ReqChip ReqChip;
typedef struct ReqLine ReqLine;
typedef struct Client Client;
typedef struct Watch Watch;
typedef struct WatchSource WatchSource;
struct gb_edge;

struct Broker {
	sd_event *event;
	sd_bus *bus;
	sd_bus_slot *name_owner_slot;
	char *dev_dir;            /* where gpiochip nodes appear, "/dev" */

	Chip *chips;              /* list */
	int inotify_fd;
	sd_event_source *inotify_source;

	Hashmap *requests;        /* object path -> Request */
	Request *request_list;    /* in creation order, for listing */
	uint64_t next_request_id; /* never reused within a daemon's life */

	Hashmap *clients;         /* unique bus name -> Client */

	char *policy_dir;
	struct gb_policy *policy; /* never NULL: empty means deny all (but root) */

	/* fdstore.c: surviving a restart */
	char *state_dir;          /* where request metadata is kept */
	bool fdstore;             /* a service manager takes fds (NOTIFY_SOCKET) */
	bool record;              /* write metadata (fd store, or --state-dir given) */
	bool handover;            /* stopping for a restart: leave stored lines as they are */
	struct gpiod_edge_event_buffer *edge_events; /* events.c: one read buffer for all */
	Hashmap *watches;         /* object path -> Watch */
	uint64_t next_watch_id;
	unsigned int event_window; /* flow control per subscriber (flow.h); 0: defaults */
	unsigned int event_queue;
	bool event_queue_set;
};

struct Line {
	Chip *chip;
	unsigned int offset;
	char *path;
	struct gpiod_line_info *info; /* kernel's view, refreshed by the info watch */
	Request *holder;              /* the broker request holding it, or NULL */
	Watch *watchers;              /* read-only subscribers (watch.c) */
	unsigned int n_watchers;
	WatchSource *source;          /* the broker's own request while nobody holds it */
};

struct Chip {
	Broker *broker;
	Chip *next;
	char *name;  /* gpiochipN */
	char *label;
	char *dev_path;
	char *path;
	unsigned int num_lines;
	struct gpiod_chip *gc;
	sd_event_source *info_source;
	Line *lines;
};

/* The part of a request on one chip: one kernel line request. */
struct ReqChip {
	Request *request;
	Chip *chip;                 /* NULL once the chip is gone */
	char *chip_name;            /* kept for messages after the chip is gone */
	struct gpiod_line_request *lr; /* NULL for a request adopted after a restart... */
	int raw_fd;                     /* ... which is a bare uAPI fd (line-request.c) */
	unsigned int n_kern;            /* the kernel request's line order */
	unsigned int kern_offsets[64];
	sd_event_source *event_source;
	uint64_t last_global_seqno;
	bool seqno_unknown;             /* adopted: the old broker's last seqno is lost */
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
	Request *client_next;       /* Client's managed requests */
	uint64_t id;
	char *path;
	char *label;
	bool persistent;
	Client *client;             /* owner connection (managed) / creator while on the bus */
	char *event_dest;           /* unique name that receives events, or NULL */
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
	bool stored;                /* its fds are in the fd store / metadata on disk */
	char *owner_name;           /* fdstore.c, while restoring: the recorded owner */
};

struct Client {
	Broker *broker;
	char *name;                 /* unique bus name */
	uid_t uid;
	gid_t gid;
	gid_t *groups;              /* supplementary groups, as the bus reports them */
	size_t n_groups;
	Request *requests;          /* managed requests (and persistent ones it subscribes to) */
	Watch *watches;             /* its watches, removed with it */
};

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
};

/* chip.c */
int chips_start(Broker *b);
void chips_stop(Broker *b);
Chip *chip_find(Broker *b, const char *name_or_label);
Line *line_from_path(Broker *b, const char *path);
void line_emit_changed(Line *l);
struct gb_linespec;
int line_resolve(Broker *b, const struct gb_linespec *ls, Line **ret, sd_bus_error *error);
/** Parse and resolve a line reference; InvalidArgs/NotFound errors for the caller. */
int line_resolve_spec(Broker *b, const char *spec, Line **ret, sd_bus_error *error);
int chip_add_vtables(Broker *b);

/* request.c */
int request_new(Broker *b, Client *owner, const char *label, bool persistent,
		unsigned int n, Line **lines, struct gb_line_config *configs,
		Request **ret, sd_bus_error *error);
void request_free(Request *r, const char *reason);
int request_get_values(Request *r, unsigned int n, const unsigned int *idx, bool *values,
		       sd_bus_error *error);
int request_set_values(Request *r, unsigned int n, const unsigned int *idx, const bool *values,
		       sd_bus_error *error);
int request_reconfigure(Request *r, const struct gb_caller *caller, unsigned int n,
			const unsigned int *idx, const struct gb_line_config *updates,
			sd_bus_error *error);
void request_chip_gone(Request *r, Chip *c);
/** Make a request built outside request_new() (fdstore.c) live: bus object, lines. */
int request_link(Request *r, Client *owner);
Request *request_find(Broker *b, const char *path);
int request_add_vtables(Broker *b);
int method_request(sd_bus_message *m, void *userdata, sd_bus_error *error);

/* events.c */
int events_attach(ReqChip *rc);
void events_detach(ReqChip *rc);
int request_emit(Request *r, const char *member, const char *types, ...);
int line_resolve_alias(Broker *b, const char *alias, Line **ret, sd_bus_error *error);

/* policy-bus.c: the policy as the broker applies it */
void line_ident(const Line *l, struct gb_line_ident *id);
void client_caller(const Client *c, struct gb_caller *caller);
void request_caller(const Request *r, struct gb_caller *caller);
int broker_load_policy(Broker *b, bool initial, sd_bus_error *error);
const struct gb_policy_entry *line_policy_entry(const Line *l);
/**
 * Does today's policy still allow @p r? Also takes each line's safe state from
 * today's policy, so a release that follows uses it. If not, @p why says why.
 */
bool request_policy_allows(Request *r, char *why, size_t size);
int method_reload_policy(sd_bus_message *m, void *userdata, sd_bus_error *error);
int method_get_access(sd_bus_message *m, void *userdata, sd_bus_error *error);

/* client.c */
int clients_start(Broker *b);
void clients_stop(Broker *b);
int client_get(Broker *b, sd_bus_message *m, Client **ret, sd_bus_error *error);
void client_attach_request(Client *c, Request *r);
void client_detach_request(Client *c, Request *r);
/** The Client for a unique name, asking the bus for its credentials if new. */
int client_get_by_name(Broker *b, const char *name, Client **ret, sd_bus_error *error);

/* limits.c */
/** LimitsExceeded if @p c may not make a request of @p n_lines more lines. */
int limits_check_request(Broker *b, const Client *c, unsigned int n_lines, bool persistent,
			 sd_bus_error *error);

/* watch.c */
/** Manager.Watch(s line, a{sv} options) -> o */
int method_watch(sd_bus_message *m, void *userdata, sd_bus_error *error);
int watch_add_vtables(Broker *b);
/** An edge on a held line: to each of its watchers. */
void watch_fan_out(Line *l, const struct gb_edge *ev);
/** Before a request takes @p l: the broker's own request, if any, lets go. */
void watch_line_yield(Line *l);
/** The line has a new source of events (a holder came, or went, or a request
 * failed): watchers get its level again as an InitialState. */
void watch_line_resync(Line *l);
void watch_client_gone(Client *c);
void watch_chip_gone(Line *l);
void watch_revalidate(Broker *b);
/** Read the level of each edge-detecting line of a new (or newly subscribed)
 * request (edges stamped before this count as in it)... */
int request_read_initial_state(Request *r, struct gb_event **ret, size_t *n);
/** ... and send them as InitialState (frees @p evs). Read before the method reply,
 * sent after it. */
void request_push_initial_state(Request *r, struct gb_event *evs, size_t n);

/* manager.c */
int manager_add_vtables(Broker *b);

#endif
