/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gpiobrokerctl's event loop, for monitor, watch and notify: SIGINT and SIGTERM,
 * --timeout and --idle-timeout end it cleanly, and so does the bus connection
 * closing under it (a -H link lost), which it reports.
 */
#include <errno.h>
#include <signal.h>
#include <string.h>

#include "ctl.h"

/* --timeout and --idle-timeout: the command ran as long as asked; exit 0. */
static int on_timeout(sd_event_source *s, uint64_t usec, void *userdata)
{
	return sd_event_exit(sd_event_source_get_event(s), 0);
}

void evloop_kick(struct evloop *l)
{
	uint64_t now;

	if (!l->idle_us || !l->loop)
		return;
	sd_event_now(l->loop, CLOCK_MONOTONIC, &now);
	if (l->idle) {
		sd_event_source_set_time(l->idle, now + l->idle_us);
		sd_event_source_set_enabled(l->idle, SD_EVENT_ONESHOT);
	} else {
		sd_event_add_time(l->loop, &l->idle, CLOCK_MONOTONIC, now + l->idle_us, 0, on_timeout,
				  NULL);
	}
}

int evloop_new(struct evloop *l, uint64_t timeout_us, uint64_t idle_us)
{
	sigset_t mask;
	uint64_t now;
	int r;

	*l = (struct evloop){ .idle_us = idle_us };
	/* sd-event wants the signals it handles blocked. */
	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	r = sd_event_new(&l->loop);
	if (r >= 0)
		r = sd_event_add_signal(l->loop, NULL, SIGINT, NULL, NULL);
	if (r >= 0)
		r = sd_event_add_signal(l->loop, NULL, SIGTERM, NULL, NULL);
	if (r >= 0 && timeout_us > 0) {
		sd_event_now(l->loop, CLOCK_MONOTONIC, &now);
		r = sd_event_add_time(l->loop, NULL, CLOCK_MONOTONIC, now + timeout_us, 0, on_timeout,
				      NULL);
	}
	if (r >= 0)
		r = bus_watch_lost(l);
	if (r >= 0)
		evloop_kick(l);
	if (r < 0)
		fprintf(stderr, "gpiobrokerctl: %s: event loop: %s\n", cur_cmd, strerror(-r));
	return r;
}

void evloop_exit(struct evloop *l)
{
	sd_event_exit(l->loop, 0);
}

int evloop_run(struct evloop *l)
{
	int r = sd_event_loop(l->loop);

	if (l->lost) {
		fprintf(stderr, "gpiobrokerctl: %s: lost the connection to the bus%s%s; "
				"what the broker held for this command went to its safe state\n",
			cur_cmd, cur_target ? " of " : "", cur_target ? cur_target : "");
		return -ENOTCONN;
	}
	if (r < 0)
		fprintf(stderr, "gpiobrokerctl: %s: %s\n", cur_cmd, strerror(-r));
	return r;
}

int evloop_exit_code(int r, int status)
{
	if (r == -ENOTCONN)
		return EX_NOBROKER;
	return r < 0 ? EX_ERROR : status;
}

void evloop_free(struct evloop *l)
{
	bus_unwatch_lost(l);
	sd_event_source_unref(l->idle);
	l->idle = NULL;
	l->loop = sd_event_unref(l->loop);
}
