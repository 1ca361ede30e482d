/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The D-Bus face of watches (core/watch.h): Manager.Watch() and the Watch objects
 * (/org/gpiodbroker1/watch/N, org.gpiodbroker1.Watch).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bus-error.h"
#include "access.h"
#include "broker.h"
#include "bus.h"
#include "chip.h"
#include "client.h"
#include "journal.h"
#include "log.h"
#include "lookup.h"
#include "macro.h"
#include "org.gpiodbroker1.h"
#include "sliced.h"
#include "watch.h"

int method_watch(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
	Broker *b = userdata;
	struct gb_line_ident id;
	struct gb_caller caller;
	unsigned int max;
	const char *spec;
	char msg[512];
	bool have_initial = false;
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
	r = bus_read_no_options(m, "Watch", error);
	if (r < 0)
		return r;

	/* authorize */
	r = client_get(b, m, &c, error);
	if (r < 0)
		return r;
	client_caller(c, &caller);
	line_ident(l, &id);
	if (gb_policy_check_watch(b->policy, &id, &caller, &max, msg, sizeof(msg)) < 0) {
		journal_denied(b, c->uid, c->name, "watching", l, NULL, NULL, msg, sizeof(msg));
		return gb_bus_error_setf(error, GB_ERROR_PERMISSION, "%s", msg);
	}
	r = slice_check_line(b, l, error);
	if (r < 0)
		return r;
	if (l->n_watchers >= max)
		return gb_bus_error_setf(error, GB_ERROR_BUSY,
					 "line %s:%u already has %u watcher(s), its max-watchers",
					 l->chip->name, l->offset, max);

	/* act */
	r = watch_new(b, c, l, &w, &initial, &have_initial, error);
	if (r < 0)
		return r;
	/* Sent after the reply, so the client knows the object first, and before any
	 * edge, which only the event loop reads, after this returns. */
	r = sd_bus_reply_method_return(m, "o", w->path);
	if (have_initial)
		watch_push_initial(w, &initial);
	return r;
}

static int owner_only(Watch *w, sd_bus_message *m, sd_bus_error *error)
{
	Client *c;
	int r = client_get(w->broker, m, &c, error);

	if (r < 0)
		return r;
	if (c != w->client) {
		log_notice("uid %u (%s) denied access to watch %s", (unsigned)c->uid, c->name, w->path);
		return gb_bus_error_setf(error, GB_ERROR_PERMISSION,
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
	/* Gone before the reply, as Release: the caller may take the line, or look
	 * for the watch's record, as soon as it has the answer. */
	watch_close(w, "closed by its owner");
	return sd_bus_reply_method_return(m, NULL);
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
	SD_BUS_PROPERTY("Line", "o", watch_get, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
	SD_BUS_PROPERTY("Owner", "s", watch_get, 0, SD_BUS_VTABLE_PROPERTY_CONST),
	SD_BUS_PROPERTY("OwnerUid", "u", watch_get, 0, SD_BUS_VTABLE_PROPERTY_CONST),
	SD_BUS_PROPERTY("EventsLost", "t", watch_get, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
	SD_BUS_PROPERTY("ChipGone", "b", watch_get, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
	SD_BUS_METHOD_WITH_ARGS("Ack", SD_BUS_ARGS("t", seqno), SD_BUS_NO_RESULT,
				method_ack, SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_METHOD_WITH_ARGS("Close", SD_BUS_NO_ARGS, SD_BUS_NO_RESULT,
				method_close, SD_BUS_VTABLE_UNPRIVILEGED),
	BUS_SUBSCRIPTION_SIGNALS,
	SD_BUS_VTABLE_END
};

static int find_watch(sd_bus *bus, const char *path, const char *iface, void *userdata,
		      void **found, sd_bus_error *error)
{
	Watch *w = watch_find(userdata, path);

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

const struct bus_iface bus_watch_iface = {
	GB_WATCH_PREFIX, true, GB_IFACE_WATCH, watch_vtable, find_watch, enumerate_watches,
};
