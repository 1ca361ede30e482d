/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * watch-irq: print the edge events of an input line, the libgpiobroker way
 * (compare docs/examples/watch-edges.c, the same in plain sd-bus).
 *
 *   watch-irq LINE [COUNT]
 *
 * Requests LINE as an input with both edges, hands the connection to an sd-event
 * loop and prints one line per event; exits after COUNT events (default: never).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-event.h>

#include "gpiobroker.h"

struct state {
	sd_event *loop;
	unsigned long left;
};

static void on_irq(struct gpiobroker_request *req, const struct gpiobroker_event *ev, void *userdata)
{
	struct state *st = userdata;

	switch (gpiobroker_event_get_type(ev)) {
	case GPIOBROKER_EVENT_EDGE:
		if (gpiobroker_event_get_lost(ev))
			printf("lost: %" PRIu64 " event(s)\n", gpiobroker_event_get_lost(ev));
		printf("event: offset %u %s seqno %" PRIu64 " line-seqno %" PRIu64 "\n",
		       gpiobroker_event_get_offset(ev),
		       gpiobroker_event_get_edge(ev) == GPIOBROKER_EDGE_RISING ? "rising" : "falling",
		       gpiobroker_event_get_seqno(ev), gpiobroker_event_get_line_seqno(ev));
		fflush(stdout);
		if (st->left && --st->left == 0)
			sd_event_exit(st->loop, 0);
		break;
	default: /* chip unplugged, request revoked, broker gone: nothing more will come */
		fprintf(stderr, "request ended: %s\n", gpiobroker_event_get_detail(ev) ?: "broker gone");
		sd_event_exit(st->loop, 1);
	}
}

int main(int argc, char **argv)
{
	struct gpiobroker_line_settings s;
	struct gpiobroker_request *req;
	struct state st = { .left = argc > 2 ? strtoul(argv[2], NULL, 10) : 0 };
	struct gpiobroker *b;
	int r;

	if (argc < 2) {
		fprintf(stderr, "usage: %s LINE [COUNT]\n", argv[0]);
		return 2;
	}
	b = gpiobroker_open();
	if (!b) {
		fprintf(stderr, "cannot connect to the system bus: %s\n", strerror(errno));
		return 1;
	}
	gpiobroker_line_settings_init(&s);
	s.direction = GPIOBROKER_DIRECTION_INPUT;
	s.edge = GPIOBROKER_EDGE_BOTH;
	req = gpiobroker_request(b, argv[1], "watch-irq", &s);
	if (!req) {
		fprintf(stderr, "cannot request %s: %s (%s)\n", argv[1],
			gpiobroker_last_error_message(b), gpiobroker_last_error_name(b));
		gpiobroker_close(b);
		return 1;
	}
	r = sd_event_default(&st.loop);
	if (r >= 0)
		r = gpiobroker_attach_event(b, st.loop, 0);
	if (r >= 0)
		r = gpiobroker_to_irq(req, on_irq, &st);
	if (r >= 0) {
		printf("watching %s as %s\n", argv[1], gpiobroker_request_get_path(req));
		fflush(stdout);
		r = sd_event_loop(st.loop);
	}
	if (r < 0)
		fprintf(stderr, "watch-irq: %s\n", strerror(-r));
	gpiobroker_detach_event(b);
	gpiobroker_free(req);
	gpiobroker_close(b);
	sd_event_unref(st.loop);
	return r == 0 ? 0 : 1;
}
