/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Watches (watch.h). */
#include "bus-error.h"
#include "watch.h"

#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "access.h"
#include "announce.h"
#include "broker.h"
#include "chip.h"
#include "client.h"
#include "irq.h"
#include "journal.h"
#include "log.h"
#include "macro.h"
#include "org.gpiodbroker1.h"
#include "state.h"

#define WATCH_CONSUMER "gpiod-broker-watch"
#define LSEQ_UNKNOWN   UINT64_MAX

struct WatchSource {
	Line *line;
	LineReq lreq;
	Irq irq;
	char name[64];
};

/* --- the broker's own request of a line nobody holds ------------------------ */

static void source_on_edges(void *userdata, const struct gb_edge *ev, int n)
{
	WatchSource *s = userdata;

	for (int i = 0; i < n; i++)
		watch_fan_out(s->line, &ev[i]);
}

static void source_close(Line *l)
{
	WatchSource *s = l->source;

	if (!s)
		return;
	/* What the kernel has queued still goes out: it happened before the hand-over. */
	irq_flush(&s->irq);
	irq_detach(&s->irq);
	lreq_release(&s->lreq);
	chip_lines_changed(l->chip);
	free(s);
	l->source = NULL;
	log_debug("line %s:%u: broker's watch request released", l->chip->name, l->offset);
}

static int source_open(Line *l, sd_bus_error *error)
{
	struct gb_line_config cfg;
	WatchSource *s;
	int r;

	if (!l->chip->gc)
		return gb_bus_error_setf(error, GB_ERROR_CHIP_GONE, "chip %s is gone", l->chip->name);
	/* The cache may lag the kernel (a release we just did): ask it. */
	line_refresh_info(l);
	if (gpiod_line_info_is_used(l->info)) {
		const char *consumer = gpiod_line_info_get_consumer(l->info);

		return gb_bus_error_setf(error, GB_ERROR_BUSY,
					 "line %s:%u is in use outside the broker (consumer \"%s\"); "
					 "it cannot be watched", l->chip->name, l->offset,
					 consumer && *consumer ? consumer : "unknown");
	}
	if (gpiod_line_info_get_direction(l->info) == GPIOD_LINE_DIRECTION_OUTPUT)
		/* Requesting it as an input to watch it would change what it drives. */
		return gb_bus_error_setf(error, GB_ERROR_BUSY,
					 "line %s:%u is an output nobody holds; watching it would "
					 "make it an input", l->chip->name, l->offset);

	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->line = l;
	snprintf(s->name, sizeof(s->name), "watch source %s:%u", l->chip->name, l->offset);
	lreq_init(&s->lreq);
	gb_line_config_init(&cfg);
	cfg.direction = GPIOD_LINE_DIRECTION_INPUT;
	cfg.edge = GPIOD_LINE_EDGE_BOTH;
	/* An edge action may need a pull on a button nobody else holds. */
	for (LineTap *t = l->taps; t; t = t->next)
		if (t->bias != GPIOD_LINE_BIAS_AS_IS)
			cfg.bias = t->bias;
	r = lreq_request(&s->lreq, l->chip->gc, WATCH_CONSUMER, 1, &l->offset, &cfg);
	if (r >= 0)
		chip_lines_changed(l->chip);
	if (r >= 0)
		r = irq_attach(&s->irq, l->chip->broker->loop, &s->lreq, source_on_edges, s, s->name);
	if (r < 0) {
		lreq_release(&s->lreq);
		free(s);
		if (r == -EBUSY)
			return gb_bus_error_setf(error, GB_ERROR_BUSY,
						 "line %s:%u was taken outside the broker meanwhile",
						 l->chip->name, l->offset);
		return sd_bus_error_set_errno(error, r);
	}
	l->source = s;
	log_debug("line %s:%u: requested by the broker for its watchers", l->chip->name, l->offset);
	return 0;
}

/* --- initial state ----------------------------------------------------------- */

/* The level, read after taking the time: an edge between the two shows both in the
 * level and as an edge after it (harmless: it agrees with the level), never in
 * neither. */
static int read_level(Line *l, bool *value, uint64_t *ts, bool *ts_valid)
{
	enum gpiod_line_clock clock = l->holder_config ? l->holder_config->event_clock
						       : GPIOD_LINE_CLOCK_MONOTONIC;
	LineReq *k = l->holder_lreq ? l->holder_lreq : l->source ? &l->source->lreq : NULL;
	enum gpiod_line_value v;
	int r;

	*ts_valid = gb_clock_now(clock, ts);
	if (!*ts_valid)
		gb_clock_now(GPIOD_LINE_CLOCK_MONOTONIC, ts);
	if (!k)
		return -ENODATA;
	r = lreq_get(k, 1, &l->offset, &v);
	if (r < 0)
		return r;
	*value = v == GPIOD_LINE_VALUE_ACTIVE;
	return 0;
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
	r = read_level(w->line, &e->value, &e->timestamp_ns, &ts_valid);
	if (r < 0) {
		if (r != -ENODATA)
			log_warning_errno(r, "watch %s: cannot read the level: %m", w->path);
		w->since_valid = false;
		return false;
	}
	w->since_ns = e->timestamp_ns;
	w->since_valid = ts_valid;
	w->last_line_seqno = fresh_source ? 0 : LSEQ_UNKNOWN;
	if (w->mark)
		/* Only a request's kernel request outlives the broker: the next one can
		 * go on counting in its numbering, not in the broker's own. */
		w->mark->src = w->line->holder_lreq ? w->line->holder_lreq->tag : 0;
	return true;
}

static void watch_send_initial(Watch *w, bool fresh_source)
{
	struct gb_event e;

	if (watch_read_initial(w, fresh_source, &e))
		flow_push_initial(&w->flow, &e);
}

void watch_push_initial(Watch *w, struct gb_event *initial)
{
	flow_push_initial(&w->flow, initial);
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
		/* Late (irq.c): counted in the gap before, the numbering goes on. */
		if (w->last_line_seqno == LSEQ_UNKNOWN || ev->line_seqno > w->last_line_seqno)
			w->last_line_seqno = ev->line_seqno;
		if (w->mark)
			w->mark->seq[0] = ev->line_seqno;
		if (w->since_valid && ev->timestamp_ns <= w->since_ns)
			continue; /* already in its initial state */
		flow_push_edge(&w->flow, &e);
	}
	for (LineTap *t = l->taps, *next; t; t = next) {
		next = t->next;
		t->on_edge(t, ev);
	}
}

static void announce_watchers(Line *l)
{
	announce_changed(l->chip->broker, l->path, GB_IFACE_LINE, "Watchers", NULL);
}

void watch_line_yield(Line *l)
{
	source_close(l);
}

void watch_line_resync(Line *l)
{
	sd_bus_error err = SD_BUS_ERROR_NULL;

	if (!l->n_watchers && !l->taps)
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
	for (LineTap *t = l->taps, *next; t; t = next) {
		next = t->next;
		t->on_resync(t);
	}
}

/* --- Watch objects ----------------------------------------------------------- */

Watch *watch_find(Broker *b, const char *path)
{
	return b->watches ? hashmap_get(b->watches, path) : NULL;
}

/* Among @p l's watchers (watch_unlink_line() undoes it). */
static void watch_link_line(Watch *w, Line *l)
{
	w->line = l;
	w->line_next = l->watchers;
	l->watchers = w;
	l->n_watchers++;
}

/* A live watch of @p l for @p c under @p id, not yet recorded. -ENOMEM. */
static int watch_make(Broker *b, Client *c, Line *l, uint64_t id, Watch **ret)
{
	_cleanup_free_ Watch *w = calloc(1, sizeof(*w));

	if (!w)
		return -ENOMEM;
	w->broker = b;
	w->id = id;
	if (asprintf(&w->path, GB_WATCH_PREFIX "/%" PRIu64, w->id) < 0) {
		w->path = NULL;
		return -ENOMEM;
	}
	flow_init(&w->flow, b->bus, w->path, GB_IFACE_WATCH, b->event_window, b->event_queue);
	if ((!b->watches && !(b->watches = hashmap_new())) || flow_set_dest(&w->flow, c) < 0 ||
	    hashmap_put(b->watches, w->path, w) < 0) {
		flow_done(&w->flow);
		free(w->path);
		return -ENOMEM;
	}
	w->client = c;
	w->client_next = c->watches;
	c->watches = w;
	watch_link_line(w, l);
	announce_object_added(b, w->path);
	announce_watchers(l);
	*ret = TAKE_PTR(w);
	return 0;
}

/* Record it for the next broker, and map its event mark. */
static void watch_store(Watch *w)
{
	struct gb_watch_record rec = {
		.id = w->id,
		.uid = w->client->uid,
		.owner = w->client->name,
		.chip = w->line->chip->name,
		.offset = w->line->offset,
	};
	bool existed;

	w->stored = state_save_watch(&w->broker->state, &rec, w->path);
	if (w->stored)
		w->mark = state_mark_open(&w->broker->state, "watch", w->id, &existed);
	if (w->mark)
		flow_take_mark(&w->flow, &w->mark->count, false);
}

int watch_new(Broker *b, Client *c, Line *l, Watch **ret, struct gb_event *initial,
	      bool *have_initial, sd_bus_error *error)
{
	bool fresh = false;
	Watch *w;
	int r;

	if (l->holder && l->holder_lreq && l->holder_lreq->shared)
		/* Its owner reads the edges from its own copy of the fd; the broker
		 * reading them too would take them from the owner. */
		return gb_bus_error_setf(error, GB_ERROR_BUSY,
					 "line %s:%u is held by a direct request (label \"%s\"), whose "
					 "owner reads its edges from the kernel itself: it has no watchers",
					 l->chip->name, l->offset,
					 gpiod_line_info_get_consumer(l->info) ?: "");
	if (!l->holder && !l->source) {
		r = source_open(l, error);
		if (r < 0)
			return r;
		fresh = true;
	}
	r = watch_make(b, c, l, b->next_watch_id + 1, &w);
	if (r < 0) {
		if (fresh && !l->n_watchers)
			source_close(l);
		return r;
	}
	b->next_watch_id++;
	watch_store(w);
	log_info("watch %s: %s:%u for %s uid %u", w->path, l->chip->name, l->offset, c->name,
		 (unsigned)c->uid);
	/* The level is read before the reply: an edge the caller makes once it has the
	 * reply is after it, so it comes as an edge. */
	*have_initial = watch_read_initial(w, fresh, initial);
	*ret = w;
	return 0;
}

/* A watch that comes to a line without asking (a restart, a replug): the broker's
 * own request of it if nobody holds it. True if that request is new. */
static bool source_open_or_wait(Line *l)
{
	sd_bus_error err = SD_BUS_ERROR_NULL;
	bool fresh = false;

	if (l->holder || l->source)
		return false;
	if (source_open(l, &err) < 0)
		/* Kept, as on a hand-over: its level comes when the line is free again. */
		log_info("line %s:%u: not watched until requested again: %s", l->chip->name,
			 l->offset, err.message);
	else
		fresh = true;
	sd_bus_error_free(&err);
	return fresh;
}

int watch_adopt(Broker *b, Client *c, Line *l, uint64_t id)
{
	uint64_t unsent = 0, src = 0, lseq = 0;
	bool fresh = false, existed = false, have;
	struct gb_event initial;
	Watch *w;
	int r;

	fresh = source_open_or_wait(l);
	r = watch_make(b, c, l, id, &w);
	if (r < 0) {
		if (fresh && !l->n_watchers)
			source_close(l);
		return r;
	}
	w->stored = b->state.record;
	w->mark = state_mark_open(&b->state, "watch", id, &existed);
	if (w->mark) {
		src = existed ? w->mark->src : 0;
		lseq = w->mark->seq[0];
		unsent = flow_take_mark(&w->flow, &w->mark->count, existed);
	}
	have = watch_read_initial(w, fresh, &initial);
	/* Fed by the same kernel request as before the restart: its line seqnos go on,
	 * and a gap is what the old broker read and never handled, or the kernel lost. */
	if (have && src && l->holder_lreq && l->holder_lreq->tag == src) {
		w->last_line_seqno = lseq;
		w->mark->seq[0] = lseq;
	}
	log_info("watch %s (%s:%u) restored after a restart for %s uid %u%s", w->path,
		 l->chip->name, l->offset, c->name, (unsigned)c->uid,
		 unsent ? ", losses the previous broker had not reported counted lost" : "");
	if (unsent)
		flow_lost(&w->flow, unsent);
	if (have)
		flow_push_initial(&w->flow, &initial);
	return 0;
}

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
	if (!l->n_watchers && !l->taps)
		source_close(l);
	announce_watchers(l);
}

/* Nothing more of it goes to the next broker; @p forget: its record and mark go too
 * (kept when it is handed over to the next broker). */
static void watch_unstore(Watch *w, bool forget)
{
	if (w->stored && forget)
		state_remove_watch(&w->broker->state, w->id);
	w->stored = false;
	w->flow.mark = NULL;
	w->mark = state_mark_close(w->mark);
}

void watch_release(Watch *w, const char *reason)
{
	Broker *b = w->broker;
	/* As a request: stopping for a restart, the next broker takes it over. */
	bool hand_over = b->handover && w->stored;

	if (hand_over)
		log_info("watch %s left to the next broker (restart)", w->path);
	else
		log_info("watch %s closed: %s", w->path, reason);
	watch_unstore(w, !hand_over);
	watch_unlink_line(w);
	if (w->client) {
		for (Watch **pp = &w->client->watches; *pp; pp = &(*pp)->client_next)
			if (*pp == w) {
				*pp = w->client_next;
				break;
			}
		w->client = NULL;
		w->client_next = NULL;
	}
	hashmap_remove(b->watches, w->path);
	if (!hashmap_size(b->watches)) {
		/* Made on the first watch, gone with the last: nothing left at exit. */
		hashmap_free(b->watches);
		b->watches = NULL;
	}
	announce_object_removed(b, w->path);
}

Watch *watch_free(Watch *w)
{
	if (!w)
		return NULL;
	assert(!w->line && !w->client);
	state_mark_close(w->mark);
	free(w->home);
	free(w->home_chip);
	flow_done(&w->flow);
	free(w->path);
	free(w);
	return NULL;
}

void watch_close(Watch *w, const char *reason)
{
	watch_release(w, reason);
	watch_free(w);
}

void watch_client_gone(Client *c)
{
	while (c->watches)
		watch_close(c->watches, "its owner left the bus");
}

void watch_chip_gone(Line *l)
{
	while (l->watchers) {
		Watch *w = l->watchers;

		flow_signal(&w->flow, "ChipGone", "s", l->chip->name);
		/* Where it resumes if the same device comes back (watch_chip_back). */
		free(w->home);
		free(w->home_chip);
		w->home = l->chip->identity ? strdup(l->chip->identity) : NULL;
		w->home_chip = strdup(l->chip->name);
		w->home_offset = l->offset;
		/* Not after a restart: a chip of the same name then may be another one. */
		watch_unstore(w, true);
		watch_unlink_line(w);
		announce_changed(w->broker, w->path, GB_IFACE_WATCH, "ChipGone", NULL);
	}
	while (l->taps) {
		LineTap *t = l->taps;

		l->taps = t->next;
		t->next = NULL;
		t->line = NULL;
		t->on_gone(t);
	}
	source_close(l);
}

/* --- the broker's own observers ---------------------------------------------- */

int watch_tap_add(LineTap *t, Line *l, sd_bus_error *error)
{
	t->line = l;
	t->next = l->taps;
	l->taps = t;
	if (l->holder && l->holder_lreq && l->holder_lreq->shared)
		return gb_bus_error_setf(error, GB_ERROR_BUSY,
					 "line %s:%u is held by a direct request, whose owner reads "
					 "its edges from the kernel itself", l->chip->name, l->offset);
	if (!l->holder && !l->source)
		return source_open(l, error);
	return 0;
}

void watch_tap_remove(LineTap *t)
{
	Line *l = t->line;

	if (!l)
		return;
	for (LineTap **pp = &l->taps; *pp; pp = &(*pp)->next)
		if (*pp == t) {
			*pp = t->next;
			break;
		}
	t->next = NULL;
	t->line = NULL;
	if (!l->n_watchers && !l->taps)
		source_close(l);
}

int watch_line_level(Line *l, bool *high, uint64_t *mono_ns)
{
	bool ts_valid;
	uint64_t ts;
	int r = read_level(l, high, &ts, &ts_valid);

	gb_clock_now(GPIOD_LINE_CLOCK_MONOTONIC, mono_ns);
	if (r < 0)
		return r;
	/* The holder's active-low inverts what the kernel reports; this is the wire. */
	if (l->holder_config && l->holder_config->active_low)
		*high = !*high;
	return 0;
}

int watch_chip_back(Watch *w, Line *l)
{
	bool fresh;

	if (w->line || !w->client)
		return -EINVAL;
	fresh = source_open_or_wait(l);
	watch_link_line(w, l);
	flow_signal(&w->flow, "ChipBack", "ss", w->home_chip ? w->home_chip : "", l->chip->name);
	free(w->home);
	free(w->home_chip);
	w->home = w->home_chip = NULL;
	watch_store(w);
	announce_watchers(l);
	announce_changed(w->broker, w->path, GB_IFACE_WATCH, "Line", "ChipGone", NULL);
	log_info("watch %s: %s:%u is back (replugged) for %s uid %u", w->path, l->chip->name,
		 l->offset, w->client->name, (unsigned)w->client->uid);
	/* The level now, as after any change of source: edges while it was away are
	 * nobody's to report. */
	watch_send_initial(w, fresh);
	return 0;
}

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
		{
			struct gb_log_fields f = {};

			journal_message_id(&f, GB_MESSAGE_WATCH_REVOKED);
			journal_line(&f, w->line);
			journal_caller(&f, w->client->uid, w->client->name);
			log_struct(LOG_NOTICE, &f, "watch %s (%s:%u) %s", w->path, w->line->chip->name,
				   w->line->offset, why);
		}
		flow_signal(&w->flow, "Revoked", "s", why);
		watch_close(w, why);
		i = 0;
	}
}
