/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libgpiobroker's watches (Manager.Watch): one line's level and edges, not held.
 * What a watch receives goes through its subscription (subscription.c), as a
 * request's does, which calls back deliver() below.
 */
#include "internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static void deliver(struct gb_subscription *sub, const struct gpiobroker_event *ev)
{
	struct gpiobroker_watch *w = gb_container_of(sub, struct gpiobroker_watch, sub);

	w->handler(w, ev, w->userdata);
}

static void watch_free_handle(struct gpiobroker_watch *w)
{
	if (gb_subscription_end(&w->sub)) {
		free(w->line);
		free(w);
	}
}

static void free_sub(struct gb_subscription *sub)
{
	watch_free_handle(gb_container_of(sub, struct gpiobroker_watch, sub));
}

static int renew(struct gb_subscription *sub);

static const struct gb_subscription_kind watch_kind = {
	.iface = GB_IFACE_WATCH,
	.restart_prop = "Owner",
	.deliver = deliver,
	.free = free_sub,
	.renew = renew,
};

/* After gpiobroker_reconnect(): the line watched again (the broker closed the watch
 * when the connection went); its first event is the level, as for a new watch. */
static int renew(struct gb_subscription *sub)
{
	struct gpiobroker_watch *w = gb_container_of(sub, struct gpiobroker_watch, sub);
	struct gpiobroker *b = sub->b;
	sd_bus_error e = SD_BUS_ERROR_NULL;
	sd_bus_message *reply = NULL;
	const char *path, *sender;
	char *p = NULL, *u = NULL;
	int r;

	if (!w->line)
		return -ENOMEM;
	r = sd_bus_call_method(gb_conn(b), GB_BUS_NAME, GB_ROOT_PATH, GB_IFACE_MANAGER, "Watch", &e,
			       &reply, "sa{sv}", w->line, 0);
	if (r >= 0)
		r = sd_bus_message_read(reply, "o", &path);
	if (r >= 0) {
		sender = sd_bus_message_get_sender(reply);
		p = strdup(path);
		u = sender ? strdup(sender) : NULL;
		if (!p || !u)
			r = -ENOMEM;
	}
	sd_bus_message_unref(reply);
	if (r < 0) {
		free(p);
		free(u);
		return gb_fail(b, &e, r);
	}
	free(sub->path);
	sub->path = p;
	sub->broker_unique = u;
	sub->have_seqno = true;
	sub->last_seqno = 0;
	return 0;
}

GB_EXPORT struct gpiobroker_watch *gpiobroker_watch(struct gpiobroker *b, const char *line,
						   gpiobroker_watch_handler handler,
						   void *userdata)
{
	sd_bus_error e = SD_BUS_ERROR_NULL;
	sd_bus_message *reply = NULL;
	struct gpiobroker_watch *w;
	char *chip = NULL;
	unsigned int offset;
	const char *path, *sender;
	int r;

	if (!b || !line || !handler) {
		errno = EINVAL;
		return NULL;
	}
	/* Where the line is first: the handle must be complete before the first
	 * signal (InitialState, right after the reply) is processed. */
	r = gpiobroker_find_line(b, line, NULL, &chip, &offset);
	if (r < 0) {
		errno = -r;
		return NULL;
	}
	gb_learn_window(b);
	r = sd_bus_call_method(gb_conn(b), GB_BUS_NAME, GB_ROOT_PATH, GB_IFACE_MANAGER, "Watch", &e,
			       &reply, "sa{sv}", line, 0);
	if (r >= 0)
		r = sd_bus_message_read(reply, "o", &path);
	if (r < 0) {
		free(chip);
		sd_bus_message_unref(reply);
		errno = -gb_fail(b, &e, r);
		return NULL;
	}
	sender = sd_bus_message_get_sender(reply);
	w = calloc(1, sizeof(*w));
	r = w ? gb_subscription_init(&w->sub, b, &watch_kind, path) : -ENOMEM;
	if (r >= 0) {
		w->sub.broker_unique = sender ? strdup(sender) : NULL;
		w->sub.chips = calloc(1, sizeof(char *));
		w->sub.offsets = calloc(1, sizeof(unsigned int));
	}
	if (r < 0 || !w->sub.broker_unique || !w->sub.chips || !w->sub.offsets) {
		sd_bus_call_method(gb_conn(b), GB_BUS_NAME, path, GB_IFACE_WATCH, "Close", NULL,
				   NULL, "");
		sd_bus_message_unref(reply);
		if (w)
			watch_free_handle(w);
		free(chip);
		errno = -gb_fail(b, NULL, -ENOMEM);
		return NULL;
	}
	sd_bus_message_unref(reply);
	w->sub.n_lines = 1;
	w->sub.chips[0] = chip;
	w->sub.offsets[0] = offset;
	w->sub.have_seqno = true; /* ours from the start */
	w->line = strdup(line); /* without it, only a reconnection cannot watch again */
	w->sub.handled = true;
	w->sub.initial = true;
	w->handler = handler;
	w->userdata = userdata;
	gb_clear_error(b);
	return w;
}

GB_EXPORT int gpiobroker_watch_close(struct gpiobroker_watch *w)
{
	sd_bus_error e = SD_BUS_ERROR_NULL;
	struct gpiobroker *b;
	int r;

	if (!w)
		return 0;
	b = w->sub.b;
	r = sd_bus_call_method(gb_conn(b), GB_BUS_NAME, w->sub.path, GB_IFACE_WATCH, "Close", &e,
			       NULL, "");
	watch_free_handle(w);
	return gb_result(b, &e, r);
}

GB_EXPORT const char *gpiobroker_watch_get_path(const struct gpiobroker_watch *w)
{
	return w->sub.path;
}

GB_EXPORT const char *gpiobroker_watch_get_chip(const struct gpiobroker_watch *w)
{
	return w->sub.chips[0];
}

GB_EXPORT unsigned int gpiobroker_watch_get_offset(const struct gpiobroker_watch *w)
{
	return w->sub.offsets[0];
}

GB_EXPORT uint64_t gpiobroker_watch_get_events_lost(const struct gpiobroker_watch *w)
{
	return w->sub.total_lost;
}

GB_EXPORT struct gpiobroker *gpiobroker_watch_get_broker(const struct gpiobroker_watch *w)
{
	return w->sub.b;
}
