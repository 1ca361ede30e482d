/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * watch-edges: request one input line with edge detection through gpiod-broker and
 * print its edge events, using nothing but sd-bus.
 *
 *   watch-edges LINE [COUNT]
 *
 * LINE is a line name, CHIP:OFFSET or a line object path. The request is managed:
 * it is released when this program exits, however it exits. Prints one line per
 * event and exits after COUNT events (default: never).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-bus.h>

static int on_event(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
	unsigned long *left = userdata;
	uint32_t index, offset;
	uint64_t ts, gseq, lseq, seq;
	const char *edge;

	if (sd_bus_message_read(m, "uustttt", &index, &offset, &edge, &ts, &gseq, &lseq, &seq) < 0)
		return 0;
	printf("event: offset %" PRIu32 " %-7s timestamp %" PRIu64 ".%09" PRIu64
	       " seqno %" PRIu64 " line-seqno %" PRIu64 "\n",
	       offset, edge, ts / 1000000000, ts % 1000000000, gseq, lseq);
	fflush(stdout);
	/* Flow control: tell the broker this one is handled, or after its window and
	 * queue (Manager.EventWindow + EventQueue) it only counts events as lost. Fire
	 * and forget (no callback: no reply is asked for). Acking every W/2 events
	 * would do; every event is simplest. */
	sd_bus_call_method_async(sd_bus_message_get_bus(m), NULL, "org.gpiodbroker1",
				 sd_bus_message_get_path(m), "org.gpiodbroker1.Request", "Ack",
				 NULL, NULL, "t", seq);
	if (*left && --*left == 0) {
		sd_bus_flush(sd_bus_message_get_bus(m));
		exit(EXIT_SUCCESS);
	}
	return 0;
}

static int on_lost(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
	uint64_t n, total;

	if (sd_bus_message_read(m, "tt", &n, &total) >= 0)
		printf("lost: %" PRIu64 " event(s), %" PRIu64 " in all\n", n, total);
	return 0;
}

int main(int argc, char **argv)
{
	sd_bus_error error = SD_BUS_ERROR_NULL;
	sd_bus_message *reply = NULL;
	sd_bus *bus = NULL;
	unsigned long left = argc > 2 ? strtoul(argv[2], NULL, 10) : 0;
	const char *path;
	int r;

	if (argc < 2) {
		fprintf(stderr, "usage: %s LINE [COUNT]\n", argv[0]);
		return 2;
	}
	r = sd_bus_open_system(&bus);
	if (r < 0) {
		fprintf(stderr, "cannot connect to the system bus: %s\n", strerror(-r));
		return 1;
	}
	/* Subscribe before requesting, so no event can come before the match. The
	 * broker addresses events to us alone; the match just routes them here. */
	sd_bus_match_signal(bus, NULL, "org.gpiodbroker1", NULL, "org.gpiodbroker1.Request",
			    "Event", on_event, &left);
	sd_bus_match_signal(bus, NULL, "org.gpiodbroker1", NULL, "org.gpiodbroker1.Request",
			    "EventsLost", on_lost, NULL);
	r = sd_bus_call_method(bus, "org.gpiodbroker1", "/org/gpiodbroker1",
			       "org.gpiodbroker1.Manager", "Request", &error, &reply,
			       "sa(sa{sv})a{sv}", "watch-edges", 1,
			       argv[1], 2, "direction", "s", "input", "edge", "s", "both", 0);
	if (r < 0) {
		fprintf(stderr, "request failed: %s (%s)\n", error.message, error.name);
		return 1;
	}
	sd_bus_message_read(reply, "o", &path);
	printf("watching %s as %s\n", argv[1], path);
	fflush(stdout);
	sd_bus_message_unref(reply);

	for (;;) {
		r = sd_bus_process(bus, NULL);
		if (r < 0) {
			fprintf(stderr, "bus: %s\n", strerror(-r));
			return 1;
		}
		if (r == 0)
			sd_bus_wait(bus, UINT64_MAX);
	}
}
