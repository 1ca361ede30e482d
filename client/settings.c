/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libgpiobroker's line settings: their defaults, and the a{sv} the broker's
 * Request and Reconfigure take (docs/dbus-api.md, "Line settings").
 */
#include "internal.h"

#include <errno.h>
#include <string.h>

GB_EXPORT void gpiobroker_line_settings_init(struct gpiobroker_line_settings *s)
{
	memset(s, 0, sizeof(*s));
	s->direction = GPIOBROKER_DIRECTION_AS_IS;
	s->edge = GPIOBROKER_EDGE_NONE;
	s->bias = GPIOBROKER_BIAS_AS_IS;
	s->drive = GPIOBROKER_DRIVE_PUSH_PULL;
	s->event_clock = GPIOBROKER_CLOCK_MONOTONIC;
}

/* The broker's names for the enums; an out-of-range value is the caller's error. */
static const char *const direction_names[] = { "as-is", "input", "output" };
static const char *const edge_names[] = { "none", "rising", "falling", "both" };
static const char *const bias_names[] = { "as-is", "disabled", "pull-up", "pull-down" };
static const char *const drive_names[] = { "push-pull", "open-drain", "open-source" };
static const char *const clock_names[] = { "monotonic", "realtime", "hte" };
#define NAME_OF(table, v) ((unsigned int)(v) < GB_ELEMENTSOF(table) ? table[v] : NULL)

/* Only what differs from the defaults, so the broker applies its own defaults
 * (Request) or keeps the current setting (Reconfigure). */
int gb_append_settings(sd_bus_message *m, const struct gpiobroker_line_settings *s)
{
	const char *dir, *edge, *bias, *drive, *clk;
	int r;

	r = sd_bus_message_open_container(m, 'a', "{sv}");
	if (r < 0 || !s)
		return r < 0 ? r : sd_bus_message_close_container(m);
	dir = NAME_OF(direction_names, s->direction);
	edge = NAME_OF(edge_names, s->edge);
	bias = NAME_OF(bias_names, s->bias);
	drive = NAME_OF(drive_names, s->drive);
	clk = NAME_OF(clock_names, s->event_clock);
	if (!dir || !edge || !bias || !drive || !clk)
		return -EINVAL;
	if (s->direction != GPIOBROKER_DIRECTION_AS_IS)
		r = sd_bus_message_append(m, "{sv}", "direction", "s", dir);
	if (r >= 0 && s->direction == GPIOBROKER_DIRECTION_OUTPUT)
		r = sd_bus_message_append(m, "{sv}", "value", "b", s->value ? 1 : 0);
	if (r >= 0 && s->edge != GPIOBROKER_EDGE_NONE)
		r = sd_bus_message_append(m, "{sv}", "edge", "s", edge);
	if (r >= 0 && s->bias != GPIOBROKER_BIAS_AS_IS)
		r = sd_bus_message_append(m, "{sv}", "bias", "s", bias);
	if (r >= 0 && s->drive != GPIOBROKER_DRIVE_PUSH_PULL)
		r = sd_bus_message_append(m, "{sv}", "drive", "s", drive);
	if (r >= 0 && s->active_low)
		r = sd_bus_message_append(m, "{sv}", "active-low", "b", 1);
	if (r >= 0 && s->debounce_us)
		r = sd_bus_message_append(m, "{sv}", "debounce-us", "u", (uint32_t)s->debounce_us);
	if (r >= 0 && s->event_clock != GPIOBROKER_CLOCK_MONOTONIC)
		r = sd_bus_message_append(m, "{sv}", "event-clock", "s", clk);
	if (r >= 0)
		r = sd_bus_message_close_container(m);
	return r;
}
