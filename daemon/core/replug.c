/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A chip that comes back: the same device (its identity, kernel/chip.h) unplugged
 * and plugged in again, under whatever number the kernel gives it now. Aliases and
 * access follow by themselves (the policy names it by identity); what lost it is
 * given it back here:
 *  - watches of its lines resume, each with the level (InitialState);
 *  - a persistent request is made again with its settings and output values, but
 *    only where its entry says restore-on-replug = yes: a relay board should come
 *    back on, a motor maybe not. The others stay released, as before.
 * Requests come first, so that a watched line that was held is held again rather
 * than taken as an input for its watchers.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "access.h"
#include "announce.h"
#include "broker.h"
#include "chip.h"
#include "client.h"
#include "hashmap.h"
#include "journal.h"
#include "log.h"
#include "org.gpiodbroker1.h"
#include "replug.h"
#include "request.h"
#include "state.h"
#include "watch.h"

/* May @p rc's lines be requested again on @p c? False with why in @p why ("" when
 * the entry simply does not ask for it). */
static bool restore_allowed(Request *req, ReqChip *rc, Chip *c, char *why, size_t size)
{
	struct gb_caller caller;

	why[0] = '\0';
	request_caller(req, &caller);
	for (unsigned int i = 0; i < req->n_lines; i++) {
		ReqLine *rl = &req->lines[i];
		const struct gb_policy_entry *e;
		struct gb_line_ident id;
		Line *l;

		if (rl->rc != rc)
			continue;
		if (rl->offset >= c->num_lines) {
			snprintf(why, size, "%s has no line %u now", c->name, rl->offset);
			return false;
		}
		l = &c->lines[rl->offset];
		e = line_policy_entry(l);
		if (!e || !e->restore_on_replug)
			return false;
		if (l->holder || gpiod_line_info_is_used(l->info)) {
			snprintf(why, size, "%s:%u is in use", c->name, rl->offset);
			return false;
		}
		line_ident(l, &id);
		if (gb_policy_check_request(req->broker->policy, &id, &caller, &rl->config,
					    req->persistent, req->label, why, size) < 0)
			return false;
	}
	return true;
}

static void reqchip_back(Request *req, ReqChip *rc, Chip *c)
{
	sd_bus_error err = SD_BUS_ERROR_NULL;
	struct gb_log_fields f = {};
	char *name = strdup(c->name), *was;
	struct gb_event *evs = NULL;
	size_t n_evs = 0;
	unsigned int k = (unsigned int)(rc - req->chips);
	bool all = true;
	int r;

	if (!name)
		return;
	was = rc->chip_name;
	rc->chip_name = name;
	rc->chip = c;
	rc->last_global_seqno = 0;
	rc->seqno_unknown = false;
	for (unsigned int i = 0; i < req->n_lines; i++)
		if (req->lines[i].rc == rc)
			req->lines[i].line = &c->lines[req->lines[i].offset];
	r = reqchip_request(rc, &err);
	if (r < 0) {
		log_warning("request %s (\"%s\"): cannot be made again on %s: %s", req->path,
			    req->label, c->name, err.message ? err.message : strerror(-r));
		sd_bus_error_free(&err);
		for (unsigned int i = 0; i < req->n_lines; i++)
			if (req->lines[i].rc == rc)
				req->lines[i].line = NULL;
		rc->chip = NULL;
		free(rc->chip_name);
		rc->chip_name = was;
		return;
	}
	for (unsigned int i = 0; i < req->n_lines; i++)
		if (req->lines[i].rc == rc)
			line_set_holder(req->lines[i].line, req, &rc->lreq, &req->lines[i].config);
	free(rc->home);
	rc->home = NULL;
	if (req->stored)
		state_add_fd(&req->broker->state, req->id, k, lreq_fd(&rc->lreq));
	request_start_events(req);
	for (unsigned int j = 0; j < req->n_chips; j++)
		all &= req->chips[j].chip != NULL;
	req->chip_gone = !all;
	request_save(req);
	journal_message_id(&f, GB_MESSAGE_REPLUG_RESTORED);
	request_journal(req, &f, true);
	log_struct(LOG_NOTICE, &f, "request %s (\"%s\"): restored on %s (%s), which came back: "
		   "its lines have their settings and values again", req->path, req->label,
		   c->name, c->identity);
	announce_changed(req->broker, req->path, GB_IFACE_REQUEST, "ChipGone", "Lines", NULL);
	/* Its owner (or subscriber) hears of it, then gets the levels of its
	 * edge-detecting lines: edges while the chip was away are nobody's. */
	request_emit(req, "ChipBack", "ss", was, c->name);
	free(was);
	if (!req->chip_gone && request_read_initial_state(req, &evs, &n_evs) >= 0)
		request_push_initial_state(req, evs, n_evs);
}

static void requests_back(Broker *b, Chip *c)
{
	for (Request *req = b->request_list; req; req = req->next) {
		if (!req->chip_gone)
			continue;
		for (unsigned int k = 0; k < req->n_chips; k++) {
			ReqChip *rc = &req->chips[k];
			char why[512];

			if (rc->chip || !rc->home || strcmp(rc->home, c->identity) != 0)
				continue;
			if (!req->persistent || req->direct) {
				log_info("request %s (\"%s\"): %s came back; the request stays released "
					 "(only a persistent one is made again)", req->path,
					 req->label, c->name);
			} else if (restore_allowed(req, rc, c, why, sizeof(why))) {
				reqchip_back(req, rc, c);
			} else {
				log_notice("request %s (\"%s\"): %s came back; the request stays "
					   "released: %s", req->path, req->label, c->name,
					   why[0] ? why : "its entry does not say restore-on-replug = yes");
			}
		}
	}
}

static void watches_back(Broker *b, Chip *c)
{
	size_t i = 0;
	Watch *w;

	while (b->watches && (w = hashmap_iterate(b->watches, &i, NULL))) {
		struct gb_caller caller;
		struct gb_line_ident id;
		unsigned int max;
		char reason[512];
		Line *l;

		if (w->line || !w->client || !w->home || strcmp(w->home, c->identity) != 0 ||
		    w->home_offset >= c->num_lines)
			continue;
		l = &c->lines[w->home_offset];
		client_caller(w->client, &caller);
		line_ident(l, &id);
		if (gb_policy_check_watch(b->policy, &id, &caller, &max, reason, sizeof(reason)) < 0) {
			log_notice("watch %s: %s came back, but %s", w->path, c->name, reason);
			continue;
		}
		if (l->n_watchers >= max || (l->holder_lreq && l->holder_lreq->shared)) {
			log_notice("watch %s: %s came back, but %s:%u cannot take it (%s)", w->path,
				   c->name, c->name, l->offset,
				   l->n_watchers >= max ? "watchers at their limit" : "held directly");
			continue;
		}
		watch_chip_back(w, l);
	}
}

void replug_chip_added(Broker *b, Chip *c)
{
	if (!c->identity)
		return;
	requests_back(b, c);
	watches_back(b, c);
}
