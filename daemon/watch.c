/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Watches: read-only subscribers of a line's level and edges, the sysfs "value"
 * poll() model without owning the line.
 *
 * A watch is an object (/org/gpiodbroker1/watch/N, org.gpiodbroker1.Watch) that a
 * client creates with Manager.Watch() and that goes away with Close() or when the
 * client leaves the bus. Watching is a permission of its own (watch-users,
 * watch-groups in the policy) and a line has at most max-watchers watchers.
 *
 * Where the events come from:
 *  - A line held by a request: the holder's kernel request. Every edge it reads is
 *    also given to each watcher (events.c), with the same kernel timestamp and
 *    sequence numbers; watchers see what the holder configured (edge, bias,
 *    debounce), and nothing if it did not ask for edges.
 *  - A line nobody holds: the broker requests it itself (a WatchSource: input,
 *    both edges, consumer "gpiod-broker-watch") and lets go of it the moment a
 *    real request wants the line; when that request ends, it takes the line back
 *    (if it was left an input: the broker never turns an output into an input).
 * Each time the source changes, watchers get the level again (InitialState): the
 *    edges in between belong to no request and cannot be reported.
 *
 * Every watcher has its own bounded queue (flow.c): a slow one loses its own
 * events, counted, and never delays the holder or another watcher.
 */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "broker.h"
#include "errors.h"
#include "line-request.h"
#include "log.h"
#include "macro.h"

#define WATCH_CONSUMER "gpiod-broker-watch"
#define LSEQ_UNKNOWN   UINT64_MAX

struct WatchSource {
	Line *line;
	struct gpiod_line_request *lr;
	sd_event_source *event_source;
	struct gpiod_edge_event_buffer *events;
};

/* --- the broker's own request of a line nobody holds ------------------------ */

static void source_read(WatchSource *s)
{
	int n = gpiod_line_request_read_edge_events(s->lr, s->events, GB_EVENT_BATCH);

	for (int i = 0; i < n; i++) {
		struct gpiod_edge_event *e = gpiod_edge_event_buffer_get_event(s->events, i);
		struct gb_edge ev = {
			.offset = gpiod_edge_event_get_line_offset(e),
			.rising = gpiod_edge_event_get_event_type(e) == GPIOD_EDGE_EVENT_RISING_EDGE,
			.timestamp_ns = gpiod_edge_event_get_timestamp_ns(e),
			.global_seqno = gpiod_edge_event_get_global_seqno(e),
			.line_seqno = gpiod_edge_event_get_line_seqno(e),
		};

		watch_fan_out(s->line, &ev);
	}
}

static int on_source_edge(sd_event_source *es, int fd, uint32_t revents, void *userdata)
{
	WatchSource *s = userdata;

	if (revents & (EPOLLHUP | EPOLLERR)) {
		/* The chip went away; chip.c tells the watchers once it sees the node go. */
		s->event_source = sd_event_source_disable_unref(s->event_source);
		return 0;
	}
	source_read(s);
	return 0;
}

static void source_close(Line *l)
{
	WatchSource *s = l->source;

	if (!s)
		return;
	/* What the kernel has queued still goes out: it happened before the hand-over. */
	if (s->event_source && gpiod_line_request_wait_edge_events(s->lr, 0) > 0)
		source_read(s);
	sd_event_source_disable_unref(s->event_source);
	gpiod_line_request_release(s->lr);
	gpiod_edge_event_buffer_free(s->events);
	free(s);
	l->source = NULL;
	log_debug("line %s:%u: broker's watch request released", l->chip->name, l->offset);
}

static int source_open(Line *l, sd_bus_error *error)
{
	struct gpiod_line_settings *ls = NULL;
	struct gpiod_line_config *lc = NULL;
	struct gpiod_request_config *rc = NULL;
	struct gpiod_line_info *fresh;
	WatchSource *s;
	int r = -ENOMEM;

	if (!l->chip->gc)
		return sd_bus_error_setf(error, GB_ERROR_CHIP_GONE, "chip %s is gone", l->chip->name);
	/* The cache may lag the kernel (a release we just did): ask it. */
	fresh = gpiod_chip_get_line_info(l->chip->gc, l->offset);
	if (fresh) {
		gpiod_line_info_free(l->info);
		l->info = fresh;
	}
	if (gpiod_line_info_is_used(l->info)) {
		const char *consumer = gpiod_line_info_get_consumer(l->info);

		return sd_bus_error_setf(error, GB_ERROR_BUSY,
					 "line %s:%u is in use outside the broker (consumer \"%s\"); "
					 "it cannot be watched", l->chip->name, l->offset,
					 consumer && *consumer ? consumer : "unknown");
	}
	if (gpiod_line_info_get_direction(l->info) == GPIOD_LINE_DIRECTION_OUTPUT)
		/* Requesting it as an input to watch it would change what it drives. */
		return sd_bus_error_setf(error, GB_ERROR_BUSY,
					 "line %s:%u is an output nobody holds; watching it would "
					 "make it an input", l->chip->name, l->offset);

	s = calloc(1, sizeof(*s));
	ls = gpiod_line_settings_new();
	lc = gpiod_line_config_new();
	rc = gpiod_request_config_new();
	if (!s || !ls || !lc || !rc)
		goto out;
	s->line = l;
	gpiod_line_settings_set_direction(ls, GPIOD_LINE_DIRECTION_INPUT);
	gpiod_line_settings_set_edge_detection(ls, GPIOD_LINE_EDGE_BOTH);
	gpiod_request_config_set_consumer(rc, WATCH_CONSUMER);
	if (gpiod_line_config_add_line_settings(lc, &l->offset, 1, ls) < 0)
		goto errno_out;
	s->lr = gpiod_chip_request_lines(l->chip->gc, rc, lc);
	if (!s->lr)
		goto errno_out;
	s->events = gpiod_edge_event_buffer_new(GB_EVENT_BATCH);
	if (!s->events)
		goto out;
	r = sd_event_add_io(l->chip->broker->event, &s->event_source,
			    gpiod_line_request_get_fd(s->lr), EPOLLIN, on_source_edge, s);
	if (r < 0)
		goto out;
	l->source = s;
	s = NULL;
	log_debug("line %s:%u: requested by the broker for its watchers", l->chip->name, l->offset);
	r = 0;
	goto out;
errno_out:
	r = -errno;
	if (r == -EBUSY)
		r = sd_bus_error_setf(error, GB_ERROR_BUSY,
				      "line %s:%u was taken outside the broker meanwhile",
				      l->chip->name, l->offset);
out:
	if (s) {
		if (s->lr)
			gpiod_line_request_release(s->lr);
		gpiod_edge_event_buffer_free(s->events);
		free(s);
	}
	gpiod_line_settings_free(ls);
	gpiod_line_config_free(lc);
	gpiod_request_config_free(rc);
	if (r < 0 && !sd_bus_error_is_set(error))
		sd_bus_error_set_errno(error, r);
	return r;
}

/* --- initial state ----------------------------------------------------------- */

/* "Now" on the clock the kernel stamps this line's edges with; false if it cannot
 * be compared (HTE). */
static bool now_on(enum gpiod_line_clock clock, uint64_t *ns)
{
	struct timespec ts;

	if (clock == GPIOD_LINE_CLOCK_HTE)
		return false;
	clock_gettime(clock == GPIOD_LINE_CLOCK_REALTIME ? CLOCK_REALTIME : CLOCK_MONOTONIC, &ts);
	*ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	return true;
}

static ReqLine *holder_line(Line *l)
{
	Request *h = l->holder;

	for (unsigned int i = 0; h && i < h->n_lines; i++)
		if (h->lines[i].line == l)
			return &h->lines[i];
	return NULL;
}

/* The level, read after taking the time: an edge between the two shows both in the
 * level and as an edge after it (harmless: it agrees with the level), never in
 * neither. */
static int read_level(Line *l, enum gpiod_line_clock clock, bool *value, uint64_t *ts,
		      bool *ts_valid)
{
	ReqLine *rl = holder_line(l);
	enum gpiod_line_value v;

	*ts_valid = now_on(clock, ts);
	if (!*ts_valid)
		now_on(GPIOD_LINE_CLOCK_MONOTONIC, ts);
	if (rl) {
		int r = lreq_get(rl->rc, 1, &rl->offset, &v);

		if (r < 0)
			return r;
	} else if (l->source) {
		v = gpiod_line_request_get_value(l->source->lr, l->offset);
		if (v == GPIOD_LINE_VALUE_ERROR)
			return -errno;
	} else {
		return -ENODATA;
	}
	*value = v == GPIOD_LINE_VALUE_ACTIVE;
	return 0;
}

static enum gpiod_line_clock line_clock(Line *l)
{
	ReqLine *rl = holder_line(l);

	return rl ? rl->config.event_clock : GPIOD_LINE_CLOCK_MONOTONIC;
}

/* Read a watcher's initial state into @p e (not sent yet). @p fresh_source: the
 * events now come from a kernel request that just began, so its line seqnos start
 * at 1. False if there is nothing to read it from. */
static bool watch_read_initial(Watch *w, bool fresh_source, struct gb_event *e)
{
	bool ts_valid;
	int r;

	memset(e, 0, sizeof(*e));
	e->offset = w->line->offset;
	r = read_level(w->line, line_clock(w->line), &e->value, &e->timestamp_ns, &ts_valid);
	if (r < 0) {
		if (r != -ENODATA)
			log_warning_errno(r, "watch %s: cannot read the level: %m", w->path);
		w->since_valid = false;
		return false;
	}
	w->since_ns = e->timestamp_ns;
	w->since_valid = ts_valid;
	w->last_line_seqno = fresh_source ? 0 : LSEQ_UNKNOWN;
	return true;
}

static void watch_send_initial(Watch *w, bool fresh_source)
{
	struct gb_event e;

	if (watch_read_initial(w, fresh_source, &e))
		flow_push_initial(&w->flow, &e);
}

int request_read_initial_state(Request *r, struct gb_event **ret, size_t *n_ret)
{
	enum gpiod_line_clock clock = GPIOD_LINE_CLOCK_MONOTONIC;
	bool ts_valid = true;
	struct gb_event *evs;
	size_t n = 0;
	uint64_t ts = 0;

	*ret = NULL;
	*n_ret = 0;
	for (unsigned int i = 0; i < r->n_lines; i++)
		if (r->lines[i].line && r->lines[i].config.edge != GPIOD_LINE_EDGE_NONE) {
			clock = r->lines[i].config.event_clock;
			n++;
		}
	if (!n || !r->client)
		return 0;
	evs = calloc(n, sizeof(*evs));
	if (!evs)
		return -ENOMEM;
	n = 0;
	/* One instant for all lines: the time first, then the levels (see read_level). */
	if (!now_on(clock, &ts)) {
		ts_valid = false;
		now_on(GPIOD_LINE_CLOCK_MONOTONIC, &ts);
	}
	for (unsigned int i = 0; i < r->n_lines; i++) {
		ReqLine *rl = &r->lines[i];
		enum gpiod_line_value v;

		if (!rl->line || rl->config.edge == GPIOD_LINE_EDGE_NONE)
			continue;
		if (lreq_get(rl->rc, 1, &rl->offset, &v) < 0) {
			log_warning("request %s: cannot read line %u for its initial state", r->path, i);
			continue;
		}
		evs[n].index = i;
		evs[n].offset = rl->offset;
		evs[n].timestamp_ns = ts;
		evs[n].value = v == GPIOD_LINE_VALUE_ACTIVE;
		n++;
	}
	/* Edges the kernel stamped before that instant are in the levels just read. */
	r->since_ns = ts;
	r->since_valid = ts_valid;
	*ret = evs;
	*n_ret = n;
	return 0;
}

void request_push_initial_state(Request *r, struct gb_event *evs, size_t n)
{
	for (size_t i = 0; i < n; i++)
		flow_push_initial(&r->flow, &evs[i]);
	free(evs);
}

/* --- fan-out ----------------------------------------------------------------- */

void watch_fan_out(Line *l, const struct gb_edge *ev)
{
	for (Watch *w = l->watchers; w; w = w->line_next) {
		struct gb_event e = {
			.kind = ev->rising ? GB_EV_RISING : GB_EV_FALLING,
			.index = 0,
			.offset = ev->offset,
			.timestamp_ns = ev->timestamp_ns,
			.global_seqno = ev->global_seqno,
			.line_seqno = ev->line_seqno,
		};

		/* The kernel numbers each line's events: a gap is this line's loss. */
		if (w->last_line_seqno != LSEQ_UNKNOWN && ev->line_seqno > w->last_line_seqno + 1)
			flow_lost(&w->flow, ev->line_seqno - w->last_line_seqno - 1);
		w->last_line_seqno = ev->line_seqno;
		if (w->since_valid && ev->timestamp_ns <= w->since_ns)
			continue; /* already in its initial state */
		flow_push_edge(&w->flow, &e);
	}
}

static void emit_watchers_changed(Line *l)
{
	sd_bus_emit_properties_changed(l->chip->broker->bus, l->path, GB_IFACE_LINE, "Watchers",
				       NULL);
}

void watch_line_yield(Line *l)
{
	source_close(l);
}

void watch_line_resync(Line *l)
{
	sd_bus_error err = SD_BUS_ERROR_NULL;

	if (!l->n_watchers)
		return;
	if (!l->holder && !l->source && source_open(l, &err) < 0) {
		/* Watchers stay; they hear the level again when someone requests it. */
		log_info("line %s:%u: not watched until requested again: %s", l->chip->name,
			 l->offset, err.message);
		sd_bus_error_free(&err);
		return;
	}
	for (Watch *w = l->watchers; w; w = w->line_next)
		watch_send_initial(w, true);
}

/* --- Watch objects ----------------------------------------------------------- */

static void watch_unlink_line(Watch *w)
{
	Line *l = w->line;

	if (!l)
		return;
	for (Watch **pp = &l->watchers; *pp; pp = &(*pp)->line_next)
		if (*pp == w) {
			*pp = w->line_next;
			break;
		}
	l->n_watchers--;
	w->line = NULL;
	w->line_next = NULL;
	if (!l->n_watchers)
		source_close(l);
	emit_watchers_changed(l);
}

static void watch_free(Watch *w, const char *reason)
{
	Broker *b = w->broker;

	log_info("watch %s closed: %s", w->path, reason);
	watch_unlink_line(w);
	if (w->client)
		for (Watch **pp = &w->client->watches; *pp; pp = &(*pp)->client_next)
			if (*pp == w) {
				*pp = w->client_next;
				break;
			}
	hashmap_remove(b->watches, w->path);
	if (!hashmap_size(b->watches)) {
		/* Made on the first watch, gone with the last: nothing left at exit. */
		hashmap_free(b->watches);
		b->watches = NULL;
	}
	sd_bus_emit_object_removed(b->bus, w->path);
	flow_done(&w->flow);
	free(w->path);
	free(w);
}

void watch_client_gone(Client *c)
{
	while (c->watches) {
		Watch *w = c->watches;

		c->watches = w->client_next;
		w->client = NULL;
		watch_free(w, "its owner left the bus");
	}
}

void watch_chip_gone(Line *l)
{
	while (l->watchers) {
		Watch *w = l->watchers;

		flow_signal(&w->flow, "ChipGone", "s", l->chip->name);
		watch_unlink_line(w);
		sd_bus_emit_properties_changed(w->broker->bus, w->path, GB_IFACE_WATCH, "ChipGone",
					       NULL);
	}
	source_close(l);
}

/* After a policy reload: watches it no longer allows end, their owners told why. */
void watch_revalidate(Broker *b)
{
	size_t i = 0;
	Watch *w;

	/* Restart the walk after each removal: freeing changes the map. */
	while (b->watches && (w = hashmap_iterate(b->watches, &i, NULL))) {
		struct gb_line_ident id;
		struct gb_caller caller;
		unsigned int max;
		char reason[512], why[600];

		if (!w->line || !w->client)
			continue;
		client_caller(w->client, &caller);
		line_ident(w->line, &id);
		if (gb_policy_check_watch(b->policy, &id, &caller, &max, reason, sizeof(reason)) == 0)
			continue;
		snprintf(why, sizeof(why), "revoked by a policy reload: %s", reason);
		flow_signal(&w->flow, "Revoked", "s", why);
		watch_free(w, why);
		i = 0;
	}
}

static int read_options(sd_bus_message *m, sd_bus_error *error)
{
	int r = sd_bus_message_enter_container(m, 'a', "{sv}");

	if (r < 0)
		return r;
	r = sd_bus_message_enter_container(m, 'e', "sv");
	if (r < 0)
		return r;
	if (r > 0) {
		const char *key;

		r = sd_bus_message_read(m, "s", &key);
		if (r < 0)
			return r;
		/* None yet; the argument is there so options can come without a new method. */
		return sd_bus_error_setf(error, GB_ERROR_INVALID_ARGS,
					 "unknown watch option '%s' (there are none yet)", key);
	}
	return sd_bus_message_exit_container(m);
}

int method_watch(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
	Broker *b = userdata;
	struct gb_line_ident id;
	struct gb_caller caller;
	unsigned int max;
	const char *spec;
	char msg[512];
	bool fresh = false, have_initial;
	struct gb_event initial;
	Client *c;
	Watch *w;
	Line *l;
	int r;

	/* read */
	r = sd_bus_message_read(m, "s", &spec);
	if (r < 0)
		return r;
	r = line_resolve_spec(b, spec, &l, error);
	if (r < 0)
		return r;
	r = read_options(m, error);
	if (r < 0)
		return r;

	/* authorize */
	r = client_get(b, m, &c, error);
	if (r < 0)
		return r;
	client_caller(c, &caller);
	line_ident(l, &id);
	if (gb_policy_check_watch(b->policy, &id, &caller, &max, msg, sizeof(msg)) < 0) {
		log_notice("uid %u (%s) denied watching %s:%u: %s", (unsigned)c->uid, c->name,
			   id.chip_name, id.offset, msg);
		return sd_bus_error_setf(error, GB_ERROR_PERMISSION, "%s", msg);
	}
	if (l->n_watchers >= max)
		return sd_bus_error_setf(error, GB_ERROR_BUSY,
					 "line %s:%u already has %u watcher(s), its max-watchers",
					 l->chip->name, l->offset, max);

	/* act */
	if (!l->holder && !l->source) {
		r = source_open(l, error);
		if (r < 0)
			return r;
		fresh = true;
	}
	w = calloc(1, sizeof(*w));
	if (!w)
		goto nomem;
	w->broker = b;
	w->id = ++b->next_watch_id;
	if (asprintf(&w->path, GB_WATCH_PREFIX "/%" PRIu64, w->id) < 0) {
		free(w);
		goto nomem;
	}
	flow_init(&w->flow, b->bus, w->path, GB_IFACE_WATCH, b->event_window, b->event_queue);
	if (!b->watches && !(b->watches = hashmap_new())) {
		free(w->path);
		free(w);
		goto nomem;
	}
	if (flow_set_dest(&w->flow, c->name) < 0 || hashmap_put(b->watches, w->path, w) < 0) {
		flow_done(&w->flow);
		free(w->path);
		free(w);
		goto nomem;
	}
	w->client = c;
	w->client_next = c->watches;
	c->watches = w;
	w->line = l;
	w->line_next = l->watchers;
	l->watchers = w;
	l->n_watchers++;
	sd_bus_emit_object_added(b->bus, w->path);
	emit_watchers_changed(l);
	log_info("watch %s: %s:%u for %s uid %u", w->path, l->chip->name, l->offset, c->name,
		 (unsigned)c->uid);

	/* The level is read before the reply: an edge the caller makes once it has
	 * the reply is after it, so it comes as an edge. It is sent after the reply,
	 * so the client knows the object first, and before any edge, which only the
	 * event loop reads, after this returns. */
	have_initial = watch_read_initial(w, fresh, &initial);
	r = sd_bus_reply_method_return(m, "o", w->path);
	if (have_initial)
		flow_push_initial(&w->flow, &initial);
	return r;
nomem:
	if (fresh && !l->n_watchers)
		source_close(l);
	return -ENOMEM;
}

static int owner_only(Watch *w, sd_bus_message *m, sd_bus_error *error)
{
	Client *c;
	int r = client_get(w->broker, m, &c, error);

	if (r < 0)
		return r;
	if (c != w->client) {
		log_notice("uid %u (%s) denied access to watch %s", (unsigned)c->uid, c->name, w->path);
		return sd_bus_error_setf(error, GB_ERROR_PERMISSION,
					 "watch %s belongs to another connection", w->path);
	}
	return 0;
}

static int method_close(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
	Watch *w = userdata;
	int r = owner_only(w, m, error);

	if (r < 0)
		return r;
	r = sd_bus_reply_method_return(m, NULL);
	watch_free(w, "closed by its owner");
	return r;
}

static int method_ack(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
	Watch *w = userdata;
	uint64_t seqno;
	int r;

	r = sd_bus_message_read(m, "t", &seqno);
	if (r < 0)
		return r;
	r = owner_only(w, m, error);
	if (r < 0)
		return r;
	flow_ack(&w->flow, seqno);
	return sd_bus_reply_method_return(m, NULL);
}

static int watch_get(sd_bus *bus, const char *path, const char *iface, const char *prop,
		     sd_bus_message *reply, void *userdata, sd_bus_error *error)
{
	Watch *w = userdata;

	if (strcmp(prop, "Line") == 0)
		return sd_bus_message_append(reply, "o", w->line ? w->line->path : "/");
	if (strcmp(prop, "Owner") == 0)
		return sd_bus_message_append(reply, "s", w->client ? w->client->name : "");
	if (strcmp(prop, "OwnerUid") == 0)
		return sd_bus_message_append(reply, "u", w->client ? (uint32_t)w->client->uid : 0);
	if (strcmp(prop, "EventsLost") == 0)
		return sd_bus_message_append(reply, "t", w->flow.lost);
	if (strcmp(prop, "ChipGone") == 0)
		return sd_bus_message_append(reply, "b", !w->line);
	return -ENOENT;
}

static const sd_bus_vtable watch_vtable[] = {
	SD_BUS_VTABLE_START(0),
	SD_BUS_PROPERTY("Line", "o", watch_get, 0, SD_BUS_VTABLE_PROPERTY_CONST),
	SD_BUS_PROPERTY("Owner", "s", watch_get, 0, SD_BUS_VTABLE_PROPERTY_CONST),
	SD_BUS_PROPERTY("OwnerUid", "u", watch_get, 0, SD_BUS_VTABLE_PROPERTY_CONST),
	SD_BUS_PROPERTY("EventsLost", "t", watch_get, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
	SD_BUS_PROPERTY("ChipGone", "b", watch_get, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
	SD_BUS_METHOD_WITH_ARGS("Ack", SD_BUS_ARGS("t", seqno), SD_BUS_NO_RESULT,
				method_ack, SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_METHOD_WITH_ARGS("Close", SD_BUS_NO_ARGS, SD_BUS_NO_RESULT,
				method_close, SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_SIGNAL_WITH_ARGS("Event",
				SD_BUS_ARGS("u", index, "u", offset, "s", edge, "t", timestamp_ns,
					    "t", global_seqno, "t", line_seqno, "t", seqno), 0),
	SD_BUS_SIGNAL_WITH_ARGS("InitialState",
				SD_BUS_ARGS("u", index, "u", offset, "b", value, "t", timestamp_ns,
					    "t", seqno), 0),
	SD_BUS_SIGNAL_WITH_ARGS("EventsLost", SD_BUS_ARGS("t", count, "t", total), 0),
	SD_BUS_SIGNAL_WITH_ARGS("ChipGone", SD_BUS_ARGS("s", chip), 0),
	SD_BUS_SIGNAL_WITH_ARGS("Revoked", SD_BUS_ARGS("s", reason), 0),
	SD_BUS_VTABLE_END
};

static int find_watch(sd_bus *bus, const char *path, const char *iface, void *userdata,
		      void **found, sd_bus_error *error)
{
	Broker *b = userdata;
	Watch *w = b->watches ? hashmap_get(b->watches, path) : NULL;

	if (!w)
		return 0;
	*found = w;
	return 1;
}

static int enumerate_watches(sd_bus *bus, const char *prefix, void *userdata, char ***nodes,
			     sd_bus_error *error)
{
	Broker *b = userdata;
	size_t n = b->watches ? hashmap_size(b->watches) : 0, k = 0, i = 0;
	char **l = calloc(n + 1, sizeof(char *));
	Watch *w;

	if (!l)
		return -ENOMEM;
	while (k < n && (w = hashmap_iterate(b->watches, &i, NULL)))
		if (!(l[k++] = strdup(w->path))) {
			strv_free(l);
			return -ENOMEM;
		}
	*nodes = l;
	return 0;
}

int watch_add_vtables(Broker *b)
{
	int r = sd_bus_add_fallback_vtable(b->bus, NULL, GB_WATCH_PREFIX, GB_IFACE_WATCH, watch_vtable,
				       find_watch, b);
	if (r >= 0)
		r = sd_bus_add_node_enumerator(b->bus, NULL, GB_WATCH_PREFIX, enumerate_watches, b);
	return r;
}
