/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * blink: toggle an output line through gpiod-broker with libgpiobroker.
 *
 *   blink LINE [COUNT [PERIOD_MS]]
 *
 * Requests LINE as an output (initially low), toggles it COUNT times (default 10)
 * every PERIOD_MS milliseconds (default 500), printing each level, and frees it.
 * The request is managed: killed half-way, the broker releases the line anyway.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gpiobroker.h"

int main(int argc, char **argv)
{
	struct gpiobroker_line_settings s;
	struct gpiobroker_request *req;
	struct gpiobroker *b;
	unsigned long count = argc > 2 ? strtoul(argv[2], NULL, 10) : 10;
	long period = argc > 3 ? strtol(argv[3], NULL, 10) : 500;
	struct timespec ts = { period / 1000, (period % 1000) * 1000000L };
	int value = 0, r = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: %s LINE [COUNT [PERIOD_MS]]\n", argv[0]);
		return 2;
	}
	b = gpiobroker_open();
	if (!b) {
		fprintf(stderr, "cannot connect to the system bus: %s\n", strerror(errno));
		return 1;
	}
	gpiobroker_line_settings_init(&s);
	s.direction = GPIOBROKER_DIRECTION_OUTPUT;
	s.value = 0;
	req = gpiobroker_request(b, argv[1], "blink", &s);
	if (!req) {
		/* The broker's message says what to change (for Busy: who holds it). */
		fprintf(stderr, "cannot request %s: %s (%s)\n", argv[1],
			gpiobroker_last_error_message(b), gpiobroker_last_error_name(b));
		gpiobroker_close(b);
		return 1;
	}
	for (unsigned long i = 0; i < count && r >= 0; i++) {
		value = !value;
		r = gpiobroker_set_value(req, 0, value);
		if (r >= 0) {
			printf("%s=%d\n", argv[1], value);
			fflush(stdout);
			nanosleep(&ts, NULL);
		}
	}
	if (r < 0)
		fprintf(stderr, "set: %s\n", gpiobroker_last_error_message(b));
	if (gpiobroker_free(req) < 0 && r >= 0)
		r = -1;
	gpiobroker_close(b);
	return r < 0 ? 1 : 0;
}
