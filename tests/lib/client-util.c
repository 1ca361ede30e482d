/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "client-util.h"

#include <check.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bus-util.h"
#include "org.gpiodbroker1.h"
#include "timing.h"

struct gpiobroker *gb_client_open_as(uid_t uid)
{
	return gb_client_open_transport(uid, GPIOBROKER_TRANSPORT_AUTO);
}

struct gpiobroker *gb_client_open_transport(uid_t uid, enum gpiobroker_transport transport)
{
	sd_bus *bus = gb_connect_bus(uid);
	struct gpiobroker *b;
	const char *t = getenv("GPIOBROKER_TRANSPORT");

	b = gpiobroker_open_bus_transport(bus, transport);
	ck_assert_ptr_nonnull(b);
	/* What AUTO gives where a broker runs: the private connection unless the
	 * environment says bus. */
	if (transport == GPIOBROKER_TRANSPORT_AUTO)
		transport = t && strcmp(t, "bus") == 0 ? GPIOBROKER_TRANSPORT_BUS : GPIOBROKER_TRANSPORT_P2P;
	/* The transport under test is the one in use: no silent fallback. */
	if (gb_name_has_owner(bus, GB_BUS_NAME))
		ck_assert_int_eq(gpiobroker_get_transport(b), transport);
	sd_bus_unref(bus); /* the library holds its own reference */
	return b;
}

/* Milliseconds from now until the library's deadline @p until (CLOCK_MONOTONIC,
 * in microseconds; UINT64_MAX: none), at most @p ms, rounded up. */
static int ms_until(uint64_t until, int ms)
{
	struct timespec ts;
	uint64_t now;

	if (until == UINT64_MAX)
		return ms;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	now = (uint64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
	if (until <= now)
		return 0;
	if ((until - now) / 1000 < (uint64_t)ms)
		return (int)((until - now) / 1000) + 1;
	return ms;
}

bool gb_client_wait_count(struct gpiobroker *const *bs, int n, const int *count, int target, int timeout_ms)
{
	long deadline = gb_deadline_ms(timeout_ms);

	ck_assert_int_le(n, 8);
	for (;;) {
		struct pollfd p[8];
		bool busy = false;
		long left;
		int ms;

		for (int i = 0; i < n; i++) {
			int r = gpiobroker_process(bs[i]);

			ck_assert_int_ge(r, 0);
			busy |= r > 0;
		}
		if (*count >= target)
			return true;
		if (busy)
			continue;
		left = deadline - gb_now_ms();
		if (left <= 0)
			return false;
		ms = (int)left;
		for (int i = 0; i < n; i++) {
			uint64_t until;

			p[i].fd = gpiobroker_get_fd(bs[i]);
			ck_assert_int_ge(p[i].fd, 0);
			p[i].events = (short)gpiobroker_get_events(bs[i]);
			ck_assert_int_ge(p[i].events, 0);
			ck_assert_int_ge(gpiobroker_get_timeout(bs[i], &until), 0);
			ms = ms_until(until, ms);
		}
		ck_assert_int_ge(poll(p, n, ms), 0);
	}
}

struct gpiobroker_line_settings gb_output_settings(int value)
{
	struct gpiobroker_line_settings s;

	gpiobroker_line_settings_init(&s);
	s.direction = GPIOBROKER_DIRECTION_OUTPUT;
	s.value = value;
	return s;
}

struct gpiobroker_line_settings gb_input_edge_settings(void)
{
	struct gpiobroker_line_settings s;

	gpiobroker_line_settings_init(&s);
	s.direction = GPIOBROKER_DIRECTION_INPUT;
	s.edge = GPIOBROKER_EDGE_BOTH;
	return s;
}
