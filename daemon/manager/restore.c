/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * After a restart: taking over the requests the previous broker left (manager.h).
 *
 * Each record (core/state.h) is read, its chips and lines found, its fds taken from
 * what systemd passed in, and checked against the kernel: an fd that does not hold
 * the lines its record names, for its label, is not driven (it is not known what it
 * holds). A request comes back under the same object path, id and label when all
 * its fds survived, its owner (for a managed one) is still on the bus, and today's
 * policy allows it; otherwise it goes through the usual release, to its safe state.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "access.h"
#include "action.h"
#include "chip.h"
#include "client.h"
#include "journal.h"
#include "log.h"
#include "macro.h"
#include "manager.h"
#include "org.gpiodbroker1.h"
#include "request.h"
#include "watch.h"

/* The kernel must agree that this fd holds these lines for this label. */
static bool reqchip_matches_kernel(ReqChip *rc)
{
	Request *req = rc->request;
	unsigned int mine = 0;

	if (!rc->chip || !rc->chip->gc)
		return false;
	for (unsigned int i = 0; i < req->n_lines; i++) {
		ReqLine *rl = &req->lines[i];
		Line *l;
		const char *consumer;
		bool in_kern = false;

		if (rl->rc != rc)
			continue;
		mine++;
		for (unsigned int j = 0; j < rc->lreq.n_kern; j++)
			in_kern |= rc->lreq.kern_offsets[j] == rl->offset;
		if (!in_kern || rl->offset >= rc->chip->num_lines || rc->chip->lines[rl->offset].holder)
			return false;
		l = &rc->chip->lines[rl->offset];
		line_refresh_info(l);
		consumer = gpiod_line_info_get_consumer(l->info);
		if (!gpiod_line_info_is_used(l->info) || !consumer || strcmp(consumer, req->label) != 0)
			return false;
	}
	return mine == rc->lreq.n_kern;
}

/* No fd for this chip: the kernel let the lines go when the old broker died, as
 * they were. Put them in their safe state now, if nobody took them meanwhile. */
static void apply_safe_without_fd(ReqChip *rc)
{
	Request *req = rc->request;
	unsigned int offs[GB_RECORD_MAX_KERN], n = 0;
	struct gb_line_config cfgs[GB_RECORD_MAX_KERN];
	LineReq k;
	int r;

	if (!rc->chip || !rc->chip->gc)
		return;
	for (unsigned int i = 0; i < req->n_lines && n < ELEMENTSOF(offs); i++) {
		ReqLine *rl = &req->lines[i];
		Line *l;

		if (rl->rc != rc || rl->offset >= rc->chip->num_lines)
			continue;
		l = &rc->chip->lines[rl->offset];
		if (l->holder)
			continue;
		gb_line_config_init(&cfgs[n]);
		if (!gb_safe_state_config(rl->safe_state, &cfgs[n]))
			continue;
		line_refresh_info(l);
		if (gpiod_line_info_is_used(l->info)) {
			log_warning("request %s: %s:%u is in use: not putting it in its safe state",
				    req->path, rc->chip_name, rl->offset);
			continue;
		}
		offs[n++] = rl->offset;
	}
	if (!n)
		return;
	lreq_init(&k);
	r = lreq_request(&k, rc->chip->gc, req->label, n, offs, cfgs);
	if (r < 0) {
		log_warning_errno(r, "request %s: cannot put lines on %s in their safe state: %m",
				  req->path, rc->chip_name);
		return;
	}
	{
		struct gb_log_fields f = {};

		journal_message_id(&f, GB_MESSAGE_SAFE_STATE);
		request_journal(req, &f, false);
		for (unsigned int i = 0; i < n; i++)
			journal_line(&f, &rc->chip->lines[offs[i]]);
		log_struct(LOG_INFO, &f, "request %s (\"%s\"): %u line(s) on %s put in their safe state",
			   req->path, req->label, n, rc->chip_name);
	}
	lreq_release(&k);
}

/* A record says what the policy said when it was written: where an entry covers a
 * line today, the safe state it gets is that entry's. */
static void take_policy_safe_states(Request *req)
{
	for (unsigned int i = 0; i < req->n_lines; i++) {
		ReqLine *rl = &req->lines[i];
		Chip *c = rl->rc->chip;
		const struct gb_policy_entry *e;

		if (!c || !c->gc || rl->offset >= c->num_lines)
			continue;
		e = line_policy_entry(&c->lines[rl->offset]);
		if (e)
			rl->safe_state = e->safe_state;
	}
}

/* The owner the request had, if that connection is still on the bus. */
static Client *find_owner(Broker *b, const Request *req, const char *owner_name)
{
	sd_bus_error err = SD_BUS_ERROR_NULL;
	Client *c = NULL;
	int r;

	if (!owner_name || !*owner_name)
		return NULL;
	/* Unique names are not reused while the bus runs; the uid check covers a
	 * restarted bus daemon handing the same name to someone else. */
	r = client_get_by_name(b, owner_name, &c, &err);
	sd_bus_error_free(&err);
	if (r < 0 || c->uid != req->uid)
		return NULL;
	return c;
}

/* Why @p req cannot come back, or NULL. */
static const char *refuse_reason(Request *req, unsigned int n_fds, Client *owner, char *buf,
				 size_t size)
{
	char why[512];

	if (n_fds < req->n_chips)
		return n_fds ? "only part of it survived the restart" :
			       "its fds did not survive the restart (no fd store?)";
	if (!req->persistent && !owner)
		return "its owner left the bus while the broker was down";
	/* A direct owner still has its fds: refusing would not free the lines. */
	if (!req->direct && !request_policy_allows(req, why, sizeof(why))) {
		snprintf(buf, size, "not allowed by the policy after the restart: %s", why);
		return buf;
	}
	for (unsigned int k = 0; k < req->n_chips; k++)
		req->chips[k].seqno_unknown = true;
	if (request_start_events(req) < 0)
		return "cannot watch its edge events";
	return NULL;
}

/* The previous broker's event mark: where each kernel request's seqnos stood, the
 * last broker seqno it gave, and the losses it had not reported yet. Returns those. */
static uint64_t adopt_mark(Broker *b, Request *req)
{
	bool existed;

	req->mark = state_mark_open(&b->state, "request", req->id, &existed);
	if (!req->mark)
		return 0;
	if (existed)
		for (unsigned int k = 0; k < req->n_chips && k < GB_MARK_MAX_SEQ; k++) {
			req->chips[k].last_global_seqno = req->mark->seq[k];
			req->chips[k].seqno_unknown = false;
		}
	return flow_take_mark(&req->flow, &req->mark->count, existed);
}

static void restore_one(Broker *b, uint64_t id, StatePassed *p)
{
	_cleanup_(request_freep) Request *req = NULL;
	struct gb_record rec;
	unsigned int n_fds = 0;
	const char *why;
	char reason[600];
	Client *owner;

	gb_record_init(&rec);
	if (state_load(&b->state, id, &rec) < 0 || request_from_record(b, &rec, &req) < 0) {
		/* Unknown settings, unknown safe state: the kernel gets the lines back as
		 * they are. */
		gb_record_clear(&rec);
		state_passed_drop(&b->state, p, id);
		state_delete(&b->state, id);
		return;
	}
	take_policy_safe_states(req);
	for (unsigned int k = 0; k < req->n_chips; k++) {
		ReqChip *rc = &req->chips[k];
		int fd = state_passed_take(p, id, k);

		if (fd < 0)
			continue;
		lreq_adopt(&rc->lreq, fd, rc->lreq.n_kern, rc->lreq.kern_offsets);
		n_fds++;
	}
	for (unsigned int k = 0; k < req->n_chips; k++)
		if (lreq_active(&req->chips[k].lreq) && !reqchip_matches_kernel(&req->chips[k])) {
			log_error("state file of request %" PRIu64 " does not match the kernel's view "
				  "of its lines (chip gone, or lines held by someone else); releasing "
				  "it as it is", id);
			state_remove(&b->state, id, req->n_chips);
			gb_record_clear(&rec);
			return; /* request_free closes the fds: the kernel keeps the lines as they are */
		}

	owner = find_owner(b, req, rec.owner);
	gb_record_clear(&rec);
	why = refuse_reason(req, n_fds, owner, reason, sizeof(reason));
	if (!why) {
		/* Values were never recorded: the kernel request has them. */
		for (unsigned int i = 0; i < req->n_lines; i++) {
			ReqLine *rl = &req->lines[i];
			enum gpiod_line_value v;

			if (rl->config.direction == GPIOD_LINE_DIRECTION_OUTPUT &&
			    lreq_get(&rl->rc->lreq, 1, &rl->offset, &v) == 0)
				rl->config.value = v == GPIOD_LINE_VALUE_ACTIVE;
		}
	}

	/* Make it live either way: released or kept, it goes through the usual paths
	 * (safe states, FDSTOREREMOVE, record removed). */
	for (unsigned int k = 0; k < req->n_chips; k++)
		if (!lreq_active(&req->chips[k].lreq))
			apply_safe_without_fd(&req->chips[k]);
	if (request_link(req, why ? NULL : owner) < 0) {
		log_error("request %" PRIu64 ": out of memory restoring it", id);
		state_remove(&b->state, id, req->n_chips);
		return;
	}
	req->stored = true;
	if (b->next_request_id < id)
		b->next_request_id = id;
	if (why) {
		request_close(TAKE_PTR(req), why);
		return;
	}
	if (!b->state.record) {
		/* Adopted, but this broker does not record: the store keeps nothing past it. */
		state_remove(&b->state, id, req->n_chips);
		req->stored = false;
	} else {
		uint64_t unsent = adopt_mark(b, req);

		request_save(req); /* the subscriber may be gone */
		/* No silent loss: losses the old broker had not reported yet are told now
		 * (what it numbered and never sent shows as a seqno gap). */
		if (unsent) {
			log_info("request %s: %" PRIu64 " lost event(s) the previous broker had not "
				 "reported yet", req->path, unsent);
			flow_lost(&req->flow, unsent);
		}
	}
	log_info("request %s (\"%s\") restored after a restart: %u line(s), uid %u, %s%s%s",
		 req->path, req->label, req->n_lines, (unsigned)req->uid,
		 req->persistent ? "persistent" : "managed", req->direct ? ", direct" : "",
		 req->client ? (req->persistent ? ", subscriber still here" : ", owner still here") : "");
	if (req->direct)
		direct_revalidate(req);
	TAKE_PTR(req);
}

/* Why watch @p rec cannot come back (@p l, @p c: its line and subscriber), or NULL. */
static const char *watch_refuse_reason(Broker *b, const struct gb_watch_record *rec, Line *l,
				       Client *c, char *buf, size_t size)
{
	struct gb_line_ident ident;
	struct gb_caller caller;
	unsigned int max;
	char why[512];

	if (!c)
		return "its subscriber left the bus while the broker was down";
	if (!l)
		return "its line is gone (chip unplugged while the broker was down)";
	client_caller(c, &caller);
	line_ident(l, &ident);
	if (gb_policy_check_watch(b->policy, &ident, &caller, &max, why, sizeof(why)) < 0) {
		snprintf(buf, size, "not allowed by the policy after the restart: %s", why);
		return buf;
	}
	if (l->n_watchers >= max)
		return "its line has its max-watchers after the restart";
	return NULL;
}

/* A watch comes back to its subscriber, if it is still on the bus and may still
 * watch the line; otherwise its record goes. After the requests: a line they hold
 * feeds its watchers again from the same kernel request. */
static void restore_watch(Broker *b, uint64_t id)
{
	struct gb_watch_record rec;
	const char *why;
	char reason[600];
	Client *c = NULL;
	Line *l = NULL;
	Chip *chip;

	gb_watch_record_init(&rec);
	if (b->next_watch_id < id)
		b->next_watch_id = id;
	if (state_load_watch(&b->state, id, &rec) < 0) {
		state_remove_watch(&b->state, id);
		return;
	}
	chip = chip_by_name(b->chips, rec.chip);
	if (chip && chip->gc && rec.offset < chip->num_lines)
		l = &chip->lines[rec.offset];
	if (!b->state.record)
		why = "this broker does not record";
	else {
		/* The same connection (unique names are not reused while the bus runs). */
		sd_bus_error err = SD_BUS_ERROR_NULL;

		if (client_get_by_name(b, rec.owner, &c, &err) < 0 || c->uid != rec.uid)
			c = NULL;
		sd_bus_error_free(&err);
		why = watch_refuse_reason(b, &rec, l, c, reason, sizeof(reason));
	}
	if (!why && watch_adopt(b, c, l, id) < 0)
		why = "out of memory";
	if (why) {
		/* Nothing to release: the watch never held anything the kernel keeps. */
		log_info("watch " GB_WATCH_PREFIX "/%" PRIu64 " (%s:%u of %s) not restored: %s", id,
			 rec.chip, rec.offset, rec.owner, why);
		state_remove_watch(&b->state, id);
	}
	gb_watch_record_clear(&rec);
}

void manager_restore(Broker *b)
{
	StatePassed p = { 0 };
	uint64_t *ids = NULL;
	size_t n_ids = 0;

	state_passed_collect(&b->state, &p, &b->next_request_id);
	state_list(&b->state, "request", &ids, &n_ids);
	for (size_t i = 0; i < n_ids; i++) {
		if (b->next_request_id < ids[i])
			b->next_request_id = ids[i];
		restore_one(b, ids[i], &p);
	}
	state_passed_done(&b->state, &p);
	free(ids);
	ids = NULL;
	state_list(&b->state, "watch", &ids, &n_ids);
	for (size_t i = 0; i < n_ids; i++)
		restore_watch(b, ids[i]);
	free(ids);
	/* Last: an action's line may be one a restored request holds, whose edges it then
	 * reads through that request rather than asking the kernel for the line. */
	actions_apply(b);
}
