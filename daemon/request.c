/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Requests: lines held through the broker, the gpio_request()/gpio_free() model.
 *
 * One Request may span chips: it holds one kernel line request per chip (ReqChip)
 * and is all-or-nothing: if any chip refuses, the chips already requested are
 * released before the caller hears of the failure, so a failed request holds nothing.
 * The kernel sees the request's label as the lines' consumer.
 */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "broker.h"
#include "errors.h"
#include "fdstore.h"
#include "log.h"
#include "line-request.h"
#include "macro.h"

static int reqchip_apply(ReqChip *rc, sd_bus_error *error);

/* Name a line for messages: "gpiochip0:3 (reset)". */
static void describe(char *buf, size_t size, const char *chip, unsigned int offset, Line *l)
{
	const char *name = l ? gpiod_line_info_get_name(l->info) : NULL;

	if (name && *name)
		snprintf(buf, size, "%s:%u (\"%s\")", chip, offset, name);
	else
		snprintf(buf, size, "%s:%u", chip, offset);
}

static int check_available(Line *l, sd_bus_error *error)
{
	char what[128];

	describe(what, sizeof(what), l->chip->name, l->offset, l);
	if (l->holder) {
		Request *h = l->holder;

		return sd_bus_error_setf(error, GB_ERROR_BUSY,
					 "line %s is held by request %s (label \"%s\", uid %u%s%s)",
					 what, h->path, h->label, (unsigned)h->uid,
					 h->persistent ? ", persistent" : "",
					 h->chip_gone ? ", chip gone" : "");
	}
	if (gpiod_line_info_is_used(l->info) && l->chip->gc) {
		/* The cache lags the kernel: right after one of our own releases the
		 * "released" info event may still be queued. Ask the kernel before
		 * refusing, or an immediate re-request gets a spurious Busy. */
		struct gpiod_line_info *fresh = gpiod_chip_get_line_info(l->chip->gc, l->offset);

		if (fresh) {
			gpiod_line_info_free(l->info);
			l->info = fresh;
		}
	}
	if (gpiod_line_info_is_used(l->info)) {
		const char *consumer = gpiod_line_info_get_consumer(l->info);

		return sd_bus_error_setf(error, GB_ERROR_BUSY,
					 "line %s is in use outside the broker (consumer \"%s\")",
					 what, consumer && *consumer ? consumer : "unknown");
	}
	return 0;
}

static int kernel_error(sd_bus_error *error, int err, const char *what, ReqChip *rc)
{
	switch (err) {
	case EBUSY:
		return sd_bus_error_setf(error, GB_ERROR_BUSY,
					 "%s: a line on %s was taken outside the broker meanwhile",
					 what, rc->chip_name);
	case EINVAL:
		return sd_bus_error_setf(error, GB_ERROR_INVALID_ARGS,
					 "%s: %s refused the line settings (not supported by this chip?)",
					 what, rc->chip_name);
	case ENODEV:
		return sd_bus_error_setf(error, GB_ERROR_CHIP_GONE, "%s: chip %s is gone",
					 what, rc->chip_name);
	default:
		return sd_bus_error_setf(error, GB_ERROR_FAILED, "%s on %s failed: %s",
					 what, rc->chip_name, strerror(err));
	}
}

/* Before a line goes back to the kernel, put it where the integrator wants it when
 * nobody holds it (safe-state): the kernel itself leaves a released line as it was. */
static void reqchip_apply_safe_state(ReqChip *rc)
{
	Request *r = rc->request;
	bool any = false;

	if (lreq_fd(rc) < 0 || !rc->chip)
		return;
	for (unsigned int i = 0; i < r->n_lines; i++) {
		ReqLine *rl = &r->lines[i];
		struct gb_line_config *c = &rl->config;

		if (rl->rc != rc || rl->safe_state == GB_SAFE_AS_IS)
			continue;
		any = true;
		c->edge = GPIOD_LINE_EDGE_NONE;
		c->debounce_us = 0;
		c->active_low = false;
		if (rl->safe_state == GB_SAFE_INPUT) {
			c->direction = GPIOD_LINE_DIRECTION_INPUT;
			c->drive = GPIOD_LINE_DRIVE_PUSH_PULL;
		} else {
			c->direction = GPIOD_LINE_DIRECTION_OUTPUT;
			c->value = rl->safe_state == GB_SAFE_OUTPUT_HIGH;
		}
	}
	if (any && reqchip_apply(rc, NULL) < 0)
		log_warning("request %s: could not put lines on %s in their safe state", r->path,
			    rc->chip_name);
}

static void reqchip_release(ReqChip *rc)
{
	events_detach(rc);
	lreq_release(rc);
}

static int reqchip_request(ReqChip *rc, const char *label, sd_bus_error *error)
{
	struct gpiod_request_config *reqc = gpiod_request_config_new();
	struct gpiod_line_config *lc = NULL;
	int r;

	if (!reqc)
		return -ENOMEM;
	gpiod_request_config_set_consumer(reqc, label);
	r = lreq_build_config(rc, &lc);
	if (r < 0) {
		gpiod_request_config_free(reqc);
		return sd_bus_error_set_errno(error, r);
	}
	rc->lr = gpiod_chip_request_lines(rc->chip->gc, reqc, lc);
	r = rc->lr ? 0 : -errno;
	gpiod_line_config_free(lc);
	gpiod_request_config_free(reqc);
	if (r < 0)
		return kernel_error(error, -r, "request", rc);
	lreq_note_offsets(rc);
	r = events_attach(rc);
	if (r < 0) {
		reqchip_release(rc);
		return sd_bus_error_set_errno(error, r);
	}
	return 0;
}

static void request_unlink(Request *r)
{
	Broker *b = r->broker;

	if (r->client)
		client_detach_request(r->client, r);
	hashmap_remove(b->requests, r->path);
	if (r->prev)
		r->prev->next = r->next;
	else if (b->request_list == r)
		b->request_list = r->next;
	if (r->next)
		r->next->prev = r->prev;
	r->next = r->prev = NULL;
}

static void request_destroy(Request *r)
{
	/* Stopping for a restart, a stored request is left exactly as it is: systemd
	 * keeps the fds, the metadata stays, and the next broker takes it over. */
	bool hand_over = r->broker->handover && r->stored;

	for (unsigned int i = 0; !hand_over && r->chips && i < r->n_chips; i++)
		reqchip_apply_safe_state(&r->chips[i]);
	/* The fd store holds a copy of each fd: it must let go before ours is closed,
	 * or the kernel keeps the lines requested. */
	if (r->stored && !hand_over)
		fdstore_request_removed(r);
	for (unsigned int i = 0; r->chips && i < r->n_chips; i++) {
		reqchip_release(&r->chips[i]);
		free(r->chips[i].chip_name);
	}
	for (unsigned int i = 0; r->lines && i < r->n_lines; i++)
		if (r->lines[i].line && r->lines[i].line->holder == r) {
			r->lines[i].line->holder = NULL;
			watch_line_resync(r->lines[i].line);
		}
	flow_done(&r->flow);
	free(r->chips);
	free(r->lines);
	free(r->groups);
	free(r->label);
	free(r->path);
	free(r->owner_name);
	free(r);
}

int request_new(Broker *b, Client *owner, const char *label, bool persistent,
		unsigned int n, Line **lines, struct gb_line_config *configs,
		Request **ret, sd_bus_error *error)
{
	Request *r;
	int ret_code;

	for (unsigned int i = 0; i < n; i++) {
		ret_code = check_available(lines[i], error);
		if (ret_code < 0)
			return ret_code;
		for (unsigned int j = 0; j < i; j++)
			if (lines[j] == lines[i])
				return sd_bus_error_setf(error, GB_ERROR_INVALID_ARGS,
							 "line %s:%u is listed twice",
							 lines[i]->chip->name, lines[i]->offset);
	}

	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->broker = b;
	r->id = ++b->next_request_id;
	r->persistent = persistent;
	r->uid = owner->uid;
	r->gid = owner->gid;
	if (owner->n_groups) {
		r->groups = malloc(owner->n_groups * sizeof(gid_t));
		if (r->groups) {
			memcpy(r->groups, owner->groups, owner->n_groups * sizeof(gid_t));
			r->n_groups = owner->n_groups;
		}
	}
	r->label = strdup(label);
	r->lines = calloc(n, sizeof(ReqLine));
	r->chips = calloc(n, sizeof(ReqChip));
	if (!r->label || !r->lines || !r->chips || (owner->n_groups && !r->groups) ||
	    asprintf(&r->path, GB_REQUEST_PREFIX "/%" PRIu64, r->id) < 0) {
		r->path = NULL;
		request_destroy(r);
		return -ENOMEM;
	}
	flow_init(&r->flow, b->bus, r->path, GB_IFACE_REQUEST, b->event_window, b->event_queue);
	r->n_lines = n;

	/* Group the lines by chip, in the order the caller named them. */
	for (unsigned int i = 0; i < n; i++) {
		ReqLine *rl = &r->lines[i];
		ReqChip *rc = NULL;

		for (unsigned int k = 0; k < r->n_chips; k++)
			if (r->chips[k].chip == lines[i]->chip)
				rc = &r->chips[k];
		if (!rc) {
			rc = &r->chips[r->n_chips++];
			rc->request = r;
			rc->raw_fd = -1;
			rc->chip = lines[i]->chip;
			rc->chip_name = strdup(rc->chip->name);
			if (!rc->chip_name) {
				request_destroy(r);
				return -ENOMEM;
			}
		}
		rl->line = lines[i];
		rl->rc = rc;
		rl->offset = lines[i]->offset;
		rl->config = configs[i];
		rl->config.set &= ~GB_FIELD_VALUE; /* see request_reconfigure() */
		{
			const struct gb_policy_entry *e = line_policy_entry(lines[i]);

			rl->safe_state = e ? e->safe_state : GB_SAFE_AS_IS;
		}
	}

	for (unsigned int k = 0; k < r->n_chips; k++) {
		ret_code = reqchip_request(&r->chips[k], label, error);
		if (ret_code < 0) {
			/* All or nothing: what was requested goes back at once. */
			request_destroy(r);
			return ret_code;
		}
	}

	ret_code = request_link(r, owner);
	if (ret_code < 0) {
		request_destroy(r);
		return ret_code;
	}
	fdstore_request_added(r);
	log_info("request %s (\"%s\"): %u line(s) for %s uid %u%s", r->path, r->label, n,
		 owner->name, (unsigned)r->uid, persistent ? ", persistent" : "");
	*ret = r;
	return 0;
}

int request_link(Request *r, Client *owner)
{
	Broker *b = r->broker;
	int ret = hashmap_put(b->requests, r->path, r);

	if (ret < 0)
		return ret;
	for (unsigned int i = 0; i < r->n_lines; i++)
		if (r->lines[i].line)
			r->lines[i].line->holder = r;
	r->next = b->request_list;
	if (r->next)
		r->next->prev = r;
	b->request_list = r;
	if (owner)
		client_attach_request(owner, r);
	sd_bus_emit_object_added(b->bus, r->path);
	return 0;
}

void request_free(Request *r, const char *reason)
{
	if (!r)
		return;
	if (r->broker->handover && r->stored)
		log_info("request %s (\"%s\") left as it is for the next broker (restart)",
			 r->path, r->label);
	else
		log_info("request %s (\"%s\") released: %s", r->path, r->label, reason);
	request_unlink(r);
	sd_bus_emit_object_removed(r->broker->bus, r->path);
	request_destroy(r);
}

Request *request_find(Broker *b, const char *path)
{
	return hashmap_get(b->requests, path);
}

void request_chip_gone(Request *r, Chip *c)
{
	const char *name = c->name;

	for (unsigned int k = 0; k < r->n_chips; k++)
		if (r->chips[k].chip == c) {
			if (r->stored)
				fdstore_reqchip_gone(&r->chips[k]);
			reqchip_release(&r->chips[k]);
			r->chips[k].chip = NULL;
		}
	for (unsigned int i = 0; i < r->n_lines; i++)
		if (r->lines[i].line && r->lines[i].line->chip == c) {
			r->lines[i].line->holder = NULL;
			r->lines[i].line = NULL;
		}
	r->chip_gone = true;
	log_warning("request %s (\"%s\"): chip %s is gone", r->path, r->label, name);
	request_emit(r, "ChipGone", "s", name);
	sd_bus_emit_properties_changed(r->broker->bus, r->path, GB_IFACE_REQUEST, "ChipGone", NULL);
}

static int check_usable(Request *r, unsigned int n, const unsigned int *idx, sd_bus_error *error)
{
	if (r->chip_gone)
		return sd_bus_error_setf(error, GB_ERROR_CHIP_GONE,
					 "request %s lost a chip that was unplugged; release it",
					 r->path);
	for (unsigned int i = 0; i < n; i++)
		if (idx[i] >= r->n_lines)
			return sd_bus_error_setf(error, GB_ERROR_INVALID_ARGS,
						 "index %u out of range: request %s has %u line(s), 0-%u",
						 idx[i], r->path, r->n_lines, r->n_lines - 1);
	return 0;
}

int request_get_values(Request *r, unsigned int n, const unsigned int *idx, bool *values,
		       sd_bus_error *error)
{
	int ret = check_usable(r, n, idx, error);

	if (ret < 0)
		return ret;
	/* One ioctl per chip, not per line. */
	for (unsigned int k = 0; k < r->n_chips; k++) {
		ReqChip *rc = &r->chips[k];
		unsigned int offs[GB_MAX_LINES_PER_REQUEST];
		enum gpiod_line_value vals[GB_MAX_LINES_PER_REQUEST];
		unsigned int m = 0;

		for (unsigned int i = 0; i < n; i++)
			if (r->lines[idx[i]].rc == rc)
				offs[m++] = r->lines[idx[i]].offset;
		if (!m)
			continue;
		ret = lreq_get(rc, m, offs, vals);
		if (ret < 0)
			return kernel_error(error, -ret, "reading values", rc);
		m = 0;
		for (unsigned int i = 0; i < n; i++)
			if (r->lines[idx[i]].rc == rc)
				values[i] = vals[m++] == GPIOD_LINE_VALUE_ACTIVE;
	}
	return 0;
}

int request_set_values(Request *r, unsigned int n, const unsigned int *idx, const bool *values,
		       sd_bus_error *error)
{
	int ret = check_usable(r, n, idx, error);

	if (ret < 0)
		return ret;
	for (unsigned int i = 0; i < n; i++) {
		ReqLine *rl = &r->lines[idx[i]];
		char what[128];

		if (rl->config.direction != GPIOD_LINE_DIRECTION_OUTPUT) {
			describe(what, sizeof(what), rl->rc->chip_name, rl->offset, rl->line);
			return sd_bus_error_setf(error, GB_ERROR_NOT_OUTPUT,
						 "line %u of request %s, %s, is not an output; "
						 "set its direction to output first",
						 idx[i], r->path, what);
		}
		for (unsigned int j = 0; j < i; j++)
			if (idx[j] == idx[i] && values[j] != values[i])
				return sd_bus_error_setf(error, GB_ERROR_INVALID_ARGS,
							 "line %u is given two different values", idx[i]);
	}
	for (unsigned int k = 0; k < r->n_chips; k++) {
		ReqChip *rc = &r->chips[k];
		unsigned int offs[GB_MAX_LINES_PER_REQUEST];
		enum gpiod_line_value vals[GB_MAX_LINES_PER_REQUEST];
		unsigned int m = 0;

		for (unsigned int i = 0; i < n; i++)
			if (r->lines[idx[i]].rc == rc) {
				offs[m] = r->lines[idx[i]].offset;
				vals[m++] = values[i] ? GPIOD_LINE_VALUE_ACTIVE : GPIOD_LINE_VALUE_INACTIVE;
			}
		if (!m)
			continue;
		ret = lreq_set(rc, m, offs, vals);
		if (ret < 0)
			return kernel_error(error, -ret, "setting values", rc);
		/* Remember what each output drives: a later reconfigure of another line on
		 * this chip must pass the same value, or the kernel would change it. */
		for (unsigned int i = 0; i < n; i++)
			if (r->lines[idx[i]].rc == rc)
				r->lines[idx[i]].config.value = values[i];
	}
	return 0;
}

static int reqchip_apply(ReqChip *rc, sd_bus_error *error)
{
	int ret = lreq_reconfigure(rc);

	return ret < 0 ? kernel_error(error, -ret, "reconfigure", rc) : 0;
}

int request_reconfigure(Request *r, const struct gb_caller *caller, unsigned int n,
			const unsigned int *idx, const struct gb_line_config *updates,
			sd_bus_error *error)
{
	_cleanup_free_ struct gb_line_config *old = NULL;
	char msg[256];
	int ret = check_usable(r, n, idx, error);

	if (ret < 0)
		return ret;
	old = malloc(r->n_lines * sizeof(*old));
	if (!old)
		return -ENOMEM;
	for (unsigned int i = 0; i < r->n_lines; i++)
		old[i] = r->lines[i].config;

	for (unsigned int i = 0; i < n; i++) {
		ReqLine *rl = &r->lines[idx[i]];
		const struct gb_line_config *u = &updates[i];
		bool to_output = (u->set & GB_FIELD_DIRECTION) &&
				 u->direction == GPIOD_LINE_DIRECTION_OUTPUT &&
				 rl->config.direction != GPIOD_LINE_DIRECTION_OUTPUT;

		/* gpio_direction_output() takes its value: no implicit level. */
		if (to_output && !(u->set & GB_FIELD_VALUE)) {
			ret = sd_bus_error_setf(error, GB_ERROR_INVALID_ARGS,
						"line %u: switching to output needs 'value'", idx[i]);
			goto revert;
		}
		gb_line_config_merge(&rl->config, u);
		if (gb_line_config_validate(&rl->config, msg, sizeof(msg)) < 0) {
			ret = sd_bus_error_setf(error, GB_ERROR_INVALID_ARGS, "line %u: %s", idx[i], msg);
			goto revert;
		}
		{
			struct gb_line_ident id;

			line_ident(rl->line, &id);
			if (gb_policy_check_reconfigure(r->broker->policy, &id, caller, &old[idx[i]],
							&rl->config, msg, sizeof(msg)) < 0) {
				log_notice("uid %u denied reconfiguring %s: %s", (unsigned)caller->uid,
					   r->path, msg);
				ret = sd_bus_error_setf(error, GB_ERROR_PERMISSION, "line %u: %s",
							idx[i], msg);
				goto revert;
			}
		}
		/* "value" was for this call; from now on it is the tracked output level. */
		rl->config.set &= ~GB_FIELD_VALUE;
	}
	for (unsigned int k = 0; k < r->n_chips; k++) {
		bool touched = false;

		for (unsigned int i = 0; i < n; i++)
			touched |= r->lines[idx[i]].rc == &r->chips[k];
		if (!touched)
			continue;
		ret = reqchip_apply(&r->chips[k], error);
		if (ret < 0) {
			/* Put the chips already changed back as they were. */
			for (unsigned int i = 0; i < r->n_lines; i++)
				r->lines[i].config = old[i];
			for (unsigned int j = 0; j < k; j++)
				reqchip_apply(&r->chips[j], NULL);
			return ret;
		}
	}
	fdstore_request_changed(r);
	return 0;
revert:
	for (unsigned int i = 0; i < r->n_lines; i++)
		r->lines[i].config = old[i];
	return ret;
}
