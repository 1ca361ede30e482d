/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Requests: making, linking, releasing and freeing them (request.h). */
#include "bus-error.h"
#include "request.h"

#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "access.h"
#include "announce.h"
#include "broker.h"
#include "chip.h"
#include "client.h"
#include "journal.h"
#include "log.h"
#include "macro.h"
#include "org.gpiodbroker1.h"
#include "sliced.h"
#include "state.h"
#include "watch.h"

static int check_available(Line *l, sd_bus_error *error)
{
	char what[128];
	int r = slice_check_line(l->chip->broker, l, error);

	if (r < 0)
		return r;
	line_describe(l, what, sizeof(what));
	if (l->holder) {
		Request *h = l->holder;

		return gb_bus_error_setf(error, GB_ERROR_BUSY,
					 "line %s is held by request %s (label \"%s\", uid %u%s%s)",
					 what, h->path, h->label, (unsigned)h->uid,
					 h->persistent ? ", persistent" : "",
					 h->chip_gone ? ", chip gone" : "");
	}
	/* The cache lags the kernel: right after one of our own releases the
	 * "released" info event may still be queued. Ask the kernel before refusing,
	 * or an immediate re-request gets a spurious Busy. */
	if (gpiod_line_info_is_used(l->info))
		line_refresh_info(l);
	if (gpiod_line_info_is_used(l->info)) {
		const char *consumer = gpiod_line_info_get_consumer(l->info);

		return gb_bus_error_setf(error, GB_ERROR_BUSY,
					 "line %s is in use outside the broker (consumer \"%s\")",
					 what, consumer && *consumer ? consumer : "unknown");
	}
	return 0;
}

int request_kernel_error(sd_bus_error *error, int err, const char *what, const ReqChip *rc)
{
	switch (err) {
	case EBUSY:
		return gb_bus_error_setf(error, GB_ERROR_BUSY,
					 "%s: a line on %s was taken outside the broker meanwhile",
					 what, rc->chip_name);
	case EINVAL:
		return gb_bus_error_setf(error, GB_ERROR_INVALID_ARGS,
					 "%s: %s refused the line settings (not supported by this chip?)",
					 what, rc->chip_name);
	case ENODEV:
		return gb_bus_error_setf(error, GB_ERROR_CHIP_GONE, "%s: chip %s is gone",
					 what, rc->chip_name);
	default:
		return gb_bus_error_setf(error, GB_ERROR_FAILED, "%s on %s failed: %s",
					 what, rc->chip_name, strerror(err));
	}
}

/* The offsets and settings of @p rc's lines, in request order. */
static unsigned int reqchip_lines(const ReqChip *rc, unsigned int *offsets,
				  struct gb_line_config *configs)
{
	const Request *req = rc->request;
	unsigned int n = 0;

	for (unsigned int i = 0; i < req->n_lines; i++)
		if (req->lines[i].rc == rc) {
			const Line *l = req->lines[i].line;

			offsets[n] = req->lines[i].offset;
			configs[n] = req->lines[i].config;
			/* An edge action observes the line through its holder: the kernel
			 * reports every edge of an input, and the owner gets those it asked
			 * for (reqchip_on_edges()). */
			if (l && l->taps && configs[n].direction == GPIOD_LINE_DIRECTION_INPUT &&
			    !req->direct)
				configs[n].edge = GPIOD_LINE_EDGE_BOTH;
			n++;
		}
	return n;
}

int reqchip_apply(ReqChip *rc, sd_bus_error *error)
{
	_cleanup_free_ unsigned int *offs = malloc(rc->request->n_lines * sizeof(*offs));
	_cleanup_free_ struct gb_line_config *cfgs = malloc(rc->request->n_lines * sizeof(*cfgs));
	unsigned int n;
	int r;

	if (!offs || !cfgs)
		return -ENOMEM;
	n = reqchip_lines(rc, offs, cfgs);
	r = lreq_reconfigure(&rc->lreq, n, offs, cfgs);
	if (r >= 0)
		chip_lines_changed(rc->chip);
	return r < 0 ? request_kernel_error(error, -r, "reconfigure", rc) : 0;
}

void request_journal(const Request *req, struct gb_log_fields *f, bool lines)
{
	gb_log_field(f, "REQUEST", "%s", req->path);
	gb_log_field(f, "REQUEST_LABEL", "%s", req->label);
	journal_caller(f, req->uid, req->client ? req->client->name : NULL);
	/* A field may repeat: each line of the request is found by its own. */
	for (unsigned int i = 0; lines && i < req->n_lines; i++)
		if (req->lines[i].line)
			journal_line(f, req->lines[i].line);
}

void request_refresh_values(Request *req)
{
	for (unsigned int i = 0; i < req->n_lines; i++) {
		ReqLine *rl = &req->lines[i];
		enum gpiod_line_value v;

		if (rl->config.direction == GPIOD_LINE_DIRECTION_OUTPUT && lreq_active(&rl->rc->lreq) &&
		    lreq_get(&rl->rc->lreq, 1, &rl->offset, &v) == 0)
			rl->config.value = v == GPIOD_LINE_VALUE_ACTIVE;
	}
}

/* Before a line goes back to the kernel, put it where the integrator wants it when
 * nobody holds it (safe-state): the kernel itself leaves a released line as it was. */
static void reqchip_apply_safe_state(ReqChip *rc)
{
	Request *req = rc->request;
	bool any = false;

	if (!lreq_active(&rc->lreq) || !rc->chip)
		return;
	/* Lines left as they are keep what the owner drove through its fd. */
	if (req->direct)
		request_refresh_values(req);
	for (unsigned int i = 0; i < req->n_lines; i++)
		if (req->lines[i].rc == rc)
			any |= gb_safe_state_config(req->lines[i].safe_state, &req->lines[i].config);
	if (any && reqchip_apply(rc, NULL) < 0)
		log_warning("request %s: could not put lines on %s in their safe state", req->path,
			    rc->chip_name);
	else if (any) {
		struct gb_log_fields f = {};

		journal_message_id(&f, GB_MESSAGE_SAFE_STATE);
		request_journal(req, &f, false);
		for (unsigned int i = 0; i < req->n_lines; i++)
			if (req->lines[i].rc == rc && req->lines[i].line &&
			    req->lines[i].safe_state != GB_SAFE_AS_IS)
				journal_line(&f, req->lines[i].line);
		log_struct(LOG_INFO, &f, "request %s (\"%s\"): lines on %s put in their safe state",
			   req->path, req->label, rc->chip_name);
	}
}

static void reqchip_release(ReqChip *rc)
{
	bool held = lreq_active(&rc->lreq);

	irq_detach(&rc->irq);
	lreq_release(&rc->lreq);
	if (held && rc->chip)
		chip_lines_changed(rc->chip);
}

static int line_index(Request *req, ReqChip *rc, unsigned int offset)
{
	for (unsigned int i = 0; i < req->n_lines; i++)
		if (req->lines[i].rc == rc && req->lines[i].offset == offset)
			return (int)i;
	return -1;
}

/* Edge events of one chip's kernel request: to the owner, unicast, and to the
 * line's watchers. Nothing is lost silently: the kernel numbers events per request
 * (global seqno), and a gap means its buffer overflowed; the broker says so with
 * EventsLost. Each subscriber's events pass through its own bounded queue (flow.h):
 * a client that does not keep up loses its own events, counted, and delays nobody. */
static bool owner_asked(const struct gb_line_config *c, bool rising)
{
	return c->edge == GPIOD_LINE_EDGE_BOTH ||
	       c->edge == (rising ? GPIOD_LINE_EDGE_RISING : GPIOD_LINE_EDGE_FALLING);
}

static void reqchip_on_edges(void *userdata, const struct gb_edge *ev, int n)
{
	ReqChip *rc = userdata;
	Request *req = rc->request;

	for (int i = 0; i < n; i++) {
		uint64_t gseq = ev[i].global_seqno;
		int idx = line_index(req, rc, ev[i].offset);
		struct gb_event e = {
			.kind = ev[i].rising ? GB_EV_RISING : GB_EV_FALLING,
			.offset = ev[i].offset,
			.timestamp_ns = ev[i].timestamp_ns,
			.global_seqno = gseq,
			.line_seqno = ev[i].line_seqno,
		};

		if (rc->seqno_unknown)
			rc->seqno_unknown = false; /* adopted: no gap to measure */
		else if (gseq > rc->last_global_seqno + 1)
			flow_lost(&req->flow, gseq - rc->last_global_seqno - 1);
		/* One that comes after a later one (a read apart, irq.c) was counted in
		 * that one's gap; the numbering goes on from the later one. */
		if (gseq > rc->last_global_seqno)
			rc->last_global_seqno = gseq;
		if (req->mark)
			req->mark->seq[rc - req->chips] = gseq; /* for the next broker's gap */
		if (idx < 0)
			continue;
		e.index = (uint32_t)idx;
		/* Edges stamped before the owner's initial state are already in it; those
		 * it did not ask for are there for an edge action only. */
		if ((!req->since_valid || ev[i].timestamp_ns > req->since_ns) &&
		    owner_asked(&req->lines[idx].config, ev[i].rising))
			flow_push_edge(&req->flow, &e);
		if (req->lines[idx].line)
			watch_fan_out(req->lines[idx].line, &ev[i]);
	}
}

int request_start_events(Request *req)
{
	/* A dup shares the open file description: an edge the broker read would be
	 * one the owner never sees. */
	if (req->direct)
		return 0;
	for (unsigned int k = 0; k < req->n_chips; k++) {
		ReqChip *rc = &req->chips[k];
		int r;

		if (!lreq_active(&rc->lreq) || irq_attached(&rc->irq))
			continue;
		r = irq_attach(&rc->irq, req->broker->loop, &rc->lreq, reqchip_on_edges, rc,
			       req->path);
		if (r < 0)
			return r;
	}
	return 0;
}

int reqchip_request(ReqChip *rc, sd_bus_error *error)
{
	_cleanup_free_ unsigned int *offs = malloc(rc->request->n_lines * sizeof(*offs));
	_cleanup_free_ struct gb_line_config *cfgs = malloc(rc->request->n_lines * sizeof(*cfgs));
	unsigned int n;
	int r;

	if (!offs || !cfgs)
		return -ENOMEM;
	n = reqchip_lines(rc, offs, cfgs);
	r = lreq_request(&rc->lreq, rc->chip->gc, rc->request->label, n, offs, cfgs);
	if (r < 0)
		return r == -ENOMEM ? r : request_kernel_error(error, -r, "request", rc);
	chip_lines_changed(rc->chip);
	return 0;
}

/* The one allocation of a Request, for both constructors. */
static Request *request_alloc(Broker *b, uint64_t id, const char *label, bool persistent,
			      uid_t uid, gid_t gid, const gid_t *groups, size_t n_groups,
			      unsigned int n_lines, unsigned int max_chips)
{
	Request *req = calloc(1, sizeof(*req));

	if (!req)
		return NULL;
	req->broker = b;
	req->id = id;
	req->persistent = persistent;
	req->uid = uid;
	req->gid = gid;
	req->n_lines = n_lines;
	req->label = strdup(label);
	req->lines = calloc(n_lines, sizeof(ReqLine));
	req->chips = calloc(max_chips, sizeof(ReqChip));
	if (n_groups && (req->groups = malloc(n_groups * sizeof(gid_t)))) {
		memcpy(req->groups, groups, n_groups * sizeof(gid_t));
		req->n_groups = n_groups;
	}
	if (!req->label || !req->lines || !req->chips || (n_groups && !req->groups) ||
	    asprintf(&req->path, GB_REQUEST_PREFIX "/%" PRIu64, id) < 0) {
		req->path = NULL;
		return request_free(req);
	}
	for (unsigned int k = 0; k < max_chips; k++) {
		req->chips[k].request = req;
		lreq_init(&req->chips[k].lreq);
		req->chips[k].lreq.tag = id; /* watchers' marks name it (watch.c) */
	}
	/* The owner's event flow starts afresh, also after a restart: the client
	 * acknowledges by this broker's seqnos. */
	flow_init(&req->flow, b->bus, req->path, GB_IFACE_REQUEST, b->event_window, b->event_queue);
	return req;
}

int request_new(Broker *b, Client *owner, const char *label, bool persistent, bool direct,
		unsigned int n, Line **lines, struct gb_line_config *configs,
		Request **ret, sd_bus_error *error)
{
	_cleanup_(request_freep) Request *req = NULL;
	int r;

	for (unsigned int i = 0; i < n; i++) {
		r = check_available(lines[i], error);
		if (r < 0)
			return r;
		for (unsigned int j = 0; j < i; j++)
			if (lines[j] == lines[i])
				return gb_bus_error_setf(error, GB_ERROR_INVALID_ARGS,
							 "line %s:%u is listed twice",
							 lines[i]->chip->name, lines[i]->offset);
	}

	req = request_alloc(b, b->next_request_id + 1, label, persistent, owner->uid, owner->gid,
			    owner->groups, owner->n_groups, n, n);
	if (!req)
		return -ENOMEM;
	b->next_request_id++;
	req->direct = direct;

	/* Group the lines by chip, in the order the caller named them. */
	for (unsigned int i = 0; i < n; i++) {
		ReqLine *rl = &req->lines[i];
		const struct gb_policy_entry *e = line_policy_entry(lines[i]);
		ReqChip *rc = NULL;

		for (unsigned int k = 0; k < req->n_chips; k++)
			if (req->chips[k].chip == lines[i]->chip)
				rc = &req->chips[k];
		if (!rc) {
			rc = &req->chips[req->n_chips++];
			rc->chip = lines[i]->chip;
			rc->chip_name = strdup(rc->chip->name);
			if (!rc->chip_name)
				return -ENOMEM;
		}
		rl->line = lines[i];
		rl->rc = rc;
		rl->offset = lines[i]->offset;
		rl->config = configs[i];
		rl->config.set &= ~GB_FIELD_VALUE; /* see request_reconfigure() */
		rl->safe_state = e ? e->safe_state : GB_SAFE_AS_IS;
	}

	/* All or nothing: if one chip refuses, what was requested goes back at once
	 * (request_free below). */
	for (unsigned int k = 0; k < req->n_chips; k++) {
		r = reqchip_request(&req->chips[k], error);
		if (r < 0)
			return r;
	}
	r = request_start_events(req);
	if (r < 0)
		return r;
	r = request_link(req, owner);
	if (r < 0)
		return r;
	request_store(req);
	{
		struct gb_log_fields f = {};

		journal_message_id(&f, GB_MESSAGE_REQUEST_MADE);
		request_journal(req, &f, true);
		log_struct(LOG_INFO, &f, "request %s (\"%s\"): %u line(s) for %s uid %u%s%s", req->path,
			   req->label, n, owner->name, (unsigned)req->uid,
			   persistent ? ", persistent" : "", direct ? ", direct" : "");
	}
	*ret = TAKE_PTR(req);
	return 0;
}

int request_from_record(Broker *b, const struct gb_record *rec, Request **ret)
{
	Request *req = request_alloc(b, rec->id, rec->label, rec->persistent, rec->uid, rec->gid,
				     rec->groups, rec->n_groups, rec->n_lines, rec->n_chips);

	if (!req)
		return -ENOMEM;
	req->direct = rec->direct;
	req->n_chips = rec->n_chips;
	for (unsigned int k = 0; k < rec->n_chips; k++) {
		ReqChip *rc = &req->chips[k];

		rc->chip_name = strdup(rec->chips[k].name);
		if (!rc->chip_name) {
			request_free(req);
			return -ENOMEM;
		}
		/* By name only: a label that happens to match is another chip. */
		rc->chip = chip_by_name(b->chips, rc->chip_name);
		rc->lreq.n_kern = rec->chips[k].n_kern;
		memcpy(rc->lreq.kern_offsets, rec->chips[k].kern_offsets,
		       rec->chips[k].n_kern * sizeof(unsigned int));
	}
	for (unsigned int i = 0; i < rec->n_lines; i++) {
		ReqLine *rl = &req->lines[i];
		Chip *c;

		rl->rc = &req->chips[rec->lines[i].chip];
		rl->offset = rec->lines[i].offset;
		rl->config = rec->lines[i].config;
		rl->safe_state = rec->lines[i].safe_state;
		c = rl->rc->chip;
		if (c && rl->offset < c->num_lines && !c->lines[rl->offset].holder)
			rl->line = &c->lines[rl->offset];
	}
	*ret = req;
	return 0;
}

int request_link(Request *req, Client *owner)
{
	Broker *b = req->broker;
	int r = hashmap_put(b->requests, req->path, req);

	if (r < 0)
		return r;
	req->linked = true;
	for (unsigned int k = 0; k < req->n_chips; k++)
		req->chips[k].lreq.shared = req->direct;
	for (unsigned int i = 0; i < req->n_lines; i++)
		if (req->lines[i].line)
			line_set_holder(req->lines[i].line, req, &req->lines[i].rc->lreq,
					&req->lines[i].config);
	req->next = b->request_list;
	if (req->next)
		req->next->prev = req;
	b->request_list = req;
	if (owner)
		request_set_owner(req, owner);
	announce_object_added(b, req->path);
	return 0;
}

static void request_unlink(Request *req)
{
	Broker *b = req->broker;

	if (req->client)
		request_set_owner(req, NULL);
	hashmap_remove(b->requests, req->path);
	if (req->prev)
		req->prev->next = req->next;
	else if (b->request_list == req)
		b->request_list = req->next;
	if (req->next)
		req->next->prev = req->prev;
	req->next = req->prev = NULL;
	req->linked = false;
}

void request_release(Request *req, const char *reason)
{
	Broker *b = req->broker;
	/* Stopping for a restart, a stored request is left exactly as it is: systemd
	 * keeps the fds, the record stays, and the next broker takes it over. */
	bool hand_over = b->handover && req->stored;

	if (hand_over)
		log_info("request %s (\"%s\") left as it is for the next broker (restart)",
			 req->path, req->label);
	else {
		struct gb_log_fields f = {};

		journal_message_id(&f, GB_MESSAGE_REQUEST_RELEASED);
		request_journal(req, &f, true);
		log_struct(LOG_INFO, &f, "request %s (\"%s\") released: %s", req->path, req->label,
			   reason);
	}
	if (req->linked) {
		request_unlink(req);
		announce_object_removed(b, req->path);
	}
	for (unsigned int k = 0; !hand_over && k < req->n_chips; k++)
		reqchip_apply_safe_state(&req->chips[k]);
	/* The fd store holds a copy of each fd: it must let go before ours is closed,
	 * or the kernel keeps the lines requested. */
	if (req->stored && !hand_over)
		state_remove(&b->state, req->id, req->n_chips);
	req->stored = false;
	req->flow.mark = NULL;
	req->mark = state_mark_close(req->mark);
	for (unsigned int k = 0; k < req->n_chips; k++)
		reqchip_release(&req->chips[k]);
	for (unsigned int i = 0; i < req->n_lines; i++) {
		Line *l = req->lines[i].line;

		if (l && l->holder == req) {
			line_set_holder(l, NULL, NULL, NULL);
			watch_line_resync(l);
		}
	}
}

Request *request_free(Request *req)
{
	if (!req)
		return NULL;
	assert(!req->linked && !req->client);
	for (unsigned int k = 0; req->chips && k < req->n_chips; k++) {
		/* A request that never went live may still hold fds: they go back now. */
		reqchip_release(&req->chips[k]);
		free(req->chips[k].chip_name);
		free(req->chips[k].home);
	}
	for (unsigned int i = 0; req->lines && i < req->n_lines; i++)
		assert(!req->lines[i].line || req->lines[i].line->holder != req);
	state_mark_close(req->mark);
	flow_done(&req->flow);
	free(req->chips);
	free(req->lines);
	free(req->groups);
	free(req->revoke_pending);
	free(req->label);
	free(req->path);
	free(req);
	return NULL;
}

void request_close(Request *req, const char *reason)
{
	request_release(req, reason);
	request_free(req);
}

Request *request_find(Broker *b, const char *path)
{
	return hashmap_get(b->requests, path);
}

void request_set_owner(Request *req, Client *c)
{
	Client *old = req->client;

	if (old == c)
		return;
	if (old) {
		for (Request **pp = &old->requests; *pp; pp = &(*pp)->client_next)
			if (*pp == req) {
				*pp = req->client_next;
				break;
			}
		req->client_next = NULL;
		req->client = NULL;
	}
	if (c) {
		req->client = c;
		req->client_next = c->requests;
		c->requests = req;
	}
	if (flow_set_dest(&req->flow, c) < 0)
		log_warning("request %s: out of memory: events for %s are counted lost", req->path,
			    c->name);
}

int request_emit(Request *req, const char *member, const char *types, ...)
{
	sd_bus_message *m = NULL;
	va_list ap;
	int r;

	if (!req->client)
		return 0;
	/* To the owner only, on its private connection if it has one. */
	r = client_new_signal(req->client, req->path, GB_IFACE_REQUEST, member, &m);
	if (r < 0)
		return r;
	va_start(ap, types);
	r = sd_bus_message_appendv(m, types, ap);
	va_end(ap);
	if (r >= 0)
		r = client_send(req->client, m);
	sd_bus_message_unref(m);
	return r;
}

void request_chip_gone(Request *req, Chip *c)
{
	const char *name = c->name;

	for (unsigned int k = 0; k < req->n_chips; k++)
		if (req->chips[k].chip == c) {
			if (req->stored)
				state_remove_fd(&req->broker->state, req->id, k);
			reqchip_release(&req->chips[k]);
			req->chips[k].chip = NULL;
			free(req->chips[k].home);
			req->chips[k].home = c->identity ? strdup(c->identity) : NULL;
		}
	for (unsigned int i = 0; i < req->n_lines; i++)
		if (req->lines[i].line && req->lines[i].line->chip == c) {
			line_set_holder(req->lines[i].line, NULL, NULL, NULL);
			req->lines[i].line = NULL;
		}
	req->chip_gone = true;
	log_warning("request %s (\"%s\"): chip %s is gone", req->path, req->label, name);
	request_emit(req, "ChipGone", "s", name);
	announce_changed(req->broker, req->path, GB_IFACE_REQUEST, "ChipGone", NULL);
}

int request_check_usable(Request *req, unsigned int n, const unsigned int *idx,
			 sd_bus_error *error)
{
	if (req->chip_gone)
		return gb_bus_error_setf(error, GB_ERROR_CHIP_GONE,
					 "request %s lost a chip that was unplugged; release it",
					 req->path);
	for (unsigned int i = 0; i < n; i++)
		if (idx[i] >= req->n_lines)
			return gb_bus_error_setf(error, GB_ERROR_INVALID_ARGS,
						 "index %u out of range: request %s has %u line(s), 0-%u",
						 idx[i], req->path, req->n_lines, req->n_lines - 1);
	return 0;
}

/* --- policy ------------------------------------------------------------------ */

void request_caller(const Request *req, struct gb_caller *caller)
{
	*caller = (struct gb_caller){ req->uid, req->gid, req->groups, req->n_groups };
}

bool request_policy_allows(Request *req, char *why, size_t size)
{
	struct gb_caller caller;
	bool denied = false;

	request_caller(req, &caller);
	for (unsigned int i = 0; i < req->n_lines; i++) {
		ReqLine *rl = &req->lines[i];
		const struct gb_policy_entry *e;
		struct gb_line_ident id;

		if (!rl->line)
			continue;
		e = line_policy_entry(rl->line);
		if (e)
			rl->safe_state = e->safe_state;
		line_ident(rl->line, &id);
		if (!denied && gb_policy_check_request(req->broker->policy, &id, &caller, &rl->config,
						       req->persistent, req->label, why, size) < 0)
			denied = true;
	}
	return !denied;
}
