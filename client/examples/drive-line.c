/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * drive-line: drive a line through gpiod-broker in two library calls.
 *
 *   drive-line LINE VALUE [HOLD_MS]
 *
 * gpiobroker_open() and gpiobroker_request_output() are all it takes: the line
 * (alias, line name or CHIP:OFFSET) is an output at VALUE (0 or 1) from the moment
 * it is held. It stays so for HOLD_MS milliseconds (default 1000); then the program
 * exits and the broker releases the line with the connection.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gpiobroker.h"

int main(int argc, char **argv)
{
	long hold = argc > 3 ? strtol(argv[3], NULL, 10) : 1000;
	struct timespec ts = { hold / 1000, (hold % 1000) * 1000000L };
	struct gpiobroker *b;

	if (argc < 3 || (strcmp(argv[2], "0") != 0 && strcmp(argv[2], "1") != 0) || hold < 0) {
		fprintf(stderr, "usage: %s LINE 0|1 [HOLD_MS]\n", argv[0]);
		return 2;
	}
	b = gpiobroker_open();
	if (!b || !gpiobroker_request_output(b, argv[1], "drive-line", argv[2][0] == '1')) {
		fprintf(stderr, "cannot drive %s: %s\n", argv[1],
			b ? gpiobroker_last_error_message(b) : strerror(errno));
		gpiobroker_close(b);
		return 1;
	}
	printf("%s=%s\n", argv[1], argv[2]);
	fflush(stdout);
	nanosleep(&ts, NULL);
	/* Closing frees the handle; the broker releases the managed request. */
	gpiobroker_close(b);
	return 0;
}
