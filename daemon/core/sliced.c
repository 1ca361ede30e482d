/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The slices as the broker sees them (sliced.h): read, looked up, reported, refused. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "announce.h"
#include "broker.h"
#include "bus-error.h"
#include "chip.h"
#include "journal.h"
#include "log.h"
#include "macro.h"
#include "org.gpiodbroker1.h"
#include "sliced.h"

/* The consumer of the broker's own short request that puts a line in its safe
 * state: its release is the broker's, not a program's, and starts nothing. */
#define SLICE_SAFE_CONSUMER "gpiod-broker-safe"

#define SWAP_PTR(a, b) do { __typeof__(a) _t = (a); (a) = (b); (b) = _t; } while (0)

static const char *slice_dir(const Broker *b)
{
	return b->slice_dir ? b->slice_dir : GB_SLICE_STATE_DIR;
}

static Slice *slice_free(Slice *s)
{
	if (!s)
		return NULL;
	if (s->consumers)
		for (size_t i = 0; i < s->def.n_lines; i++)
			free(s->consumers[i]);
	free(s->consumers);
	gb_slice_clear(&s->def);
	free(s->error);
	free(s->path);
	free(s);
	return NULL;
}

void slice_link(const Slice *s, char *buf, size_t size)
{
	snprintf(buf, size, GB_SLICE_LINK_DIR "/%s", s->def.name);
}

void slice_state_text(const Slice *s, char *buf, size_t size)
{
	if (s->made)
		snprintf(buf, size, "made");
	else
		snprintf(buf, size, "failed: %s", s->error ? s->error : "unknown");
}

/* What the kernel says now of the slice chip's lines, so that a release seen later
 * names who let go. */
static void slice_note_consumers(Slice *s)
{
	Chip *c = s->made ? chip_by_name(s->broker->chips, s->def.chip) : NULL;

	for (size_t i = 0; i < s->def.n_lines; i++) {
		const char *who = "";

		if (c && i < c->num_lines && gpiod_line_info_is_used(c->lines[i].info))
			who = gpiod_line_info_get_consumer(c->lines[i].info);
		if (who && strcmp(who, SLICE_SAFE_CONSUMER) == 0)
			who = "";
		free(s->consumers[i]);
		s->consumers[i] = strdup(who ? who : "");
	}
}

/* One slice from the directory: its state file, else (or also) its NAME.error. */
static int slice_read(Broker *b, const char *name, Slice **ret)
{
	const char *dir = slice_dir(b);
	_cleanup_free_ char *why = NULL;
	Slice *s = calloc(1, sizeof(*s));
	int r, e;

	if (!s)
		return -ENOMEM;
	s->broker = b;
	r = gb_slice_state_read(dir, name, &s->def); /* cleared again on failure */
	if (r == -EBADMSG)
		log_warning("slice %s: %s/%s: malformed state file; the slice is reported as "
			    "failed", name, dir, name);
	else if (r < 0 && r != -ENOENT && r != -ENOMEM)
		log_warning_errno(r, "slice %s: cannot read %s/%s: %m", name, dir, name);
	if (r < 0 && r != -ENOENT && r != -ENOMEM &&
	    asprintf(&why, "its state file %s/%s cannot be read (%s)", dir, name,
		     r == -EBADMSG ? "malformed" : strerror(-r)) < 0)
		why = NULL;
	e = gb_slice_error_read(dir, name, &s->error);
	if (e == -EBADMSG)
		log_warning("slice %s: %s/%s.error: malformed (empty, or a line too long)", name,
			    dir, name);
	if (r == -ENOMEM || e == -ENOMEM)
		return slice_free(s), -ENOMEM;
	s->made = r >= 0 && e == -ENOENT;
	if (!s->made && !s->error) {
		if (why)
			s->error = TAKE_PTR(why);
		else
			s->error = strdup(e == -EBADMSG ? "its .error file is malformed" :
					  r == -ENOENT ? "no state file, and no reason recorded" :
					  "its .error file cannot be read");
		if (!s->error)
			return slice_free(s), -ENOMEM;
	}
	if (!s->def.name)
		s->def.name = strdup(name);
	s->consumers = calloc(s->def.n_lines + 1, sizeof(char *));
	if (!s->def.name || !s->consumers ||
	    sd_bus_path_encode(GB_SLICE_PREFIX, name, &s->path) < 0)
		return slice_free(s), -ENOMEM;
	*ret = s;
	return 0;
}

static Slice *find_by_name(Slice *list, const char *name)
{
	for (Slice *s = list; s; s = s->next)
		if (strcmp(s->def.name, name) == 0)
			return s;
	return NULL;
}

static void log_loaded(const Slice *s, const Slice *old)
{
	if (!s->made) {
		if (!old || old->made || strcmp(old->error ? old->error : "", s->error) != 0)
			log_notice("slice %s: not made: %s", s->def.name, s->error);
		return;
	}
	if (!old || !old->made || strcmp(old->def.chip, s->def.chip) != 0)
		log_info("slice %s: %zu line%s as %s (" GB_SLICE_LINK_DIR "/%s)", s->def.name,
			 s->def.n_lines, s->def.n_lines == 1 ? "" : "s", s->def.chip, s->def.name);
}

int slices_load(Broker *b, bool announce)
{
	_cleanup_strv_free_ char **names = NULL;
	Slice *list = NULL, **tail = &list;
	int r = gb_slice_state_names(slice_dir(b), true, &names);

	if (r == -ENOMEM)
		return r;
	if (r < 0)
		/* Not fatal: the broker serves the rest, and says why slices are missing. */
		log_warning_errno(r, "cannot read the slices' directory %s: %m", slice_dir(b));
	for (size_t i = 0; names && names[i]; i++) {
		Slice *s, *old;

		r = slice_read(b, names[i], &s);
		if (r < 0)
			goto fail;
		old = find_by_name(b->slices, s->def.name);
		log_loaded(s, old);
		slice_note_consumers(s);
		/* A release between two loads still names whoever held the line. */
		if (old && old->made && s->made && strcmp(old->def.chip, s->def.chip) == 0 &&
		    old->def.n_lines == s->def.n_lines)
			for (size_t k = 0; k < s->def.n_lines; k++)
				if ((!s->consumers[k] || !*s->consumers[k]) && old->consumers[k] &&
				    *old->consumers[k])
					SWAP_PTR(s->consumers[k], old->consumers[k]);
		*tail = s;
		tail = &s->next;
	}
	/* Removed while still findable, so that InterfacesRemoved lists the interface. */
	for (Slice *s = b->slices; announce && s; s = s->next)
		if (!find_by_name(list, s->def.name)) {
			log_notice("slice %s: no longer recorded (revoked, or out of the policy)",
				   s->def.name);
			announce_object_removed(b, s->path);
		}
	SWAP_PTR(b->slices, list);
	for (Slice *s = b->slices; announce && s; s = s->next) {
		if (find_by_name(list, s->def.name))
			announce_changed(b, s->path, GB_IFACE_SLICE, "Lines", "Users", "Groups",
					 "Device", "Chip", "State", NULL);
		else
			announce_object_added(b, s->path);
	}
	r = 0;
fail:
	while (list) {
		Slice *n = list->next;

		slice_free(list);
		list = n;
	}
	return r;
}

void slices_free_all(Broker *b)
{
	while (b->slices) {
		Slice *n = b->slices->next;

		slice_free(b->slices);
		b->slices = n;
	}
}

Slice *slice_of_line(Broker *b, const char *chip, unsigned int offset, size_t *index)
{
	for (Slice *s = b->slices; s; s = s->next)
		for (size_t i = 0; s->made && i < s->def.n_lines; i++)
			if (s->def.lines[i].offset == offset &&
			    strcmp(s->def.lines[i].parent, chip) == 0) {
				if (index)
					*index = i;
				return s;
			}
	return NULL;
}

Slice *slice_from_path(Broker *b, const char *path)
{
	for (Slice *s = b->slices; s; s = s->next)
		if (strcmp(s->path, path) == 0)
			return s;
	return NULL;
}

int slice_check_line(Broker *b, const Line *l, sd_bus_error *error)
{
	size_t i;
	Slice *s = slice_of_line(b, l->chip->name, l->offset, &i);

	if (!s)
		return 0;
	return gb_bus_error_setf(error, GB_ERROR_BUSY,
				 "line %s (%s:%u) is in slice %s (" GB_SLICE_LINK_DIR "/%s): "
				 "use the slice's chip", s->def.lines[i].item, l->chip->name,
				 l->offset, s->def.name, s->def.name);
}

static Slice *slice_of_chip(Broker *b, const char *chip)
{
	for (Slice *s = b->slices; s; s = s->next)
		if (s->made && strcmp(s->def.chip, chip) == 0)
			return s;
	return NULL;
}

/* The consumer let go: request the line with its safe settings and release it at
 * once; the chips the aggregator stands on keep the value after the release. */
static void put_safe(Slice *s, Line *l, const char *former)
{
	const struct gb_slice_line *sl = &s->def.lines[l->offset];
	struct gb_line_config cfg;
	struct gb_log_fields f = {};
	LineReq k;
	int r;

	gb_line_config_init(&cfg);
	if (!gb_safe_state_config(sl->safe, &cfg)) {
		log_info("slice %s: line %s (%s:%u) released by \"%s\"; its safe state is as-is",
			 s->def.name, sl->item, s->def.chip, l->offset, former);
		return;
	}
	lreq_init(&k);
	r = lreq_request(&k, l->chip->gc, SLICE_SAFE_CONSUMER, 1, &l->offset, &cfg);
	lreq_release(&k);
	chip_lines_changed(l->chip);
	if (r < 0) {
		/* Taken again at once (its new consumer sets it), or the slice's chip is
		 * going (the helper revokes the slice and sets the parent lines itself):
		 * nothing for the broker to put right. */
		if (r == -EBUSY || r == -ENODEV || r == -ENXIO || r == -ENOENT)
			log_full_errno(LOG_NOTICE, r, "slice %s: line %s (%s:%u) released by \"%s\": "
				       "its safe state not set: %s", s->def.name, sl->item,
				       s->def.chip, l->offset, former, r == -EBUSY ?
				       "taken again at once" : "the slice's chip is going");
		else
			log_warning_errno(r, "slice %s: line %s (%s:%u) released by \"%s\": cannot "
					  "set its safe state %s: %m", s->def.name, sl->item,
					  s->def.chip, l->offset, former, gb_safe_state_name(sl->safe));
		return;
	}
	journal_message_id(&f, GB_MESSAGE_SAFE_STATE);
	journal_line(&f, l);
	gb_log_field(&f, "SLICE", "%s", s->def.name);
	log_struct(LOG_NOTICE, &f, "slice %s: line %s (%s:%u) released by \"%s\": put in its safe "
		   "state %s", s->def.name, sl->item, s->def.chip, l->offset, former,
		   gb_safe_state_name(sl->safe));
}

void slice_line_changed(Line *l)
{
	Slice *s = slice_of_chip(l->chip->broker, l->chip->name);
	const char *who;
	char **last;

	if (!s || l->offset >= s->def.n_lines)
		return;
	last = &s->consumers[l->offset];
	if (gpiod_line_info_is_used(l->info)) {
		who = gpiod_line_info_get_consumer(l->info);
		if (l->holder || l->source || (who && strcmp(who, SLICE_SAFE_CONSUMER) == 0))
			return; /* the broker's own, not a program of the slice's users */
		free(*last);
		*last = strdup(who && *who ? who : "?");
		return;
	}
	if (!*last || !**last)
		return;
	put_safe(s, l, *last);
	free(*last);
	*last = strdup("");
}

void slice_chip_gone(const Chip *c)
{
	Slice *s = slice_of_chip(c->broker, c->name);

	/* The helper's revocation, or its stop: expected, not a fault. */
	if (s)
		log_notice("slice %s: its chip %s is gone (revoked by gpiod-broker-slices)",
			   s->def.name, c->name);
}

int slices_append_status(Broker *b, sd_bus_message *reply)
{
	int r = sd_bus_message_open_container(reply, 'e', "sv");

	if (r >= 0)
		r = sd_bus_message_append(reply, "s", "slices");
	if (r >= 0)
		r = sd_bus_message_open_container(reply, 'v', "a(ssssas)");
	if (r >= 0)
		r = sd_bus_message_open_container(reply, 'a', "(ssssas)");
	for (Slice *s = b->slices; r >= 0 && s; s = s->next) {
		char state[1100], link[300];

		slice_state_text(s, state, sizeof(state));
		slice_link(s, link, sizeof(link));
		r = sd_bus_message_open_container(reply, 'r', "ssssas");
		if (r >= 0)
			r = sd_bus_message_append(reply, "ssss", s->def.name, state,
						  s->made ? s->def.chip : "", link);
		if (r >= 0)
			r = sd_bus_message_open_container(reply, 'a', "s");
		for (size_t i = 0; r >= 0 && i < s->def.n_lines; i++)
			r = sd_bus_message_append(reply, "s", s->def.lines[i].item);
		if (r >= 0)
			r = sd_bus_message_close_container(reply);
		if (r >= 0)
			r = sd_bus_message_close_container(reply);
	}
	for (int i = 0; r >= 0 && i < 3; i++)
		r = sd_bus_message_close_container(reply);
	return r;
}
