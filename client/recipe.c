/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libgpiobroker's recipes: how a request was made (the lines as named, the label,
 * the flags, the settings), kept up to date with the values, directions and
 * settings set since, so that gpiobroker_reconnect() can make it again. No I/O.
 */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

void gb_recipe_free(struct gb_recipe *rc)
{
	if (!rc)
		return;
	for (size_t i = 0; rc->lines && i < rc->n; i++)
		free(rc->lines[i]);
	free(rc->lines);
	free(rc->settings);
	free(rc->label);
	free(rc);
}

struct gb_recipe *gb_recipe_new(size_t n, const char *const lines[],
				const struct gpiobroker_line_settings settings[], const char *label,
				unsigned int flags)
{
	struct gb_recipe *rc = calloc(1, sizeof(*rc));

	if (!rc)
		return NULL;
	rc->n = n;
	rc->flags = flags;
	rc->label = strdup(label);
	rc->lines = calloc(n ? n : 1, sizeof(char *));
	rc->settings = calloc(n ? n : 1, sizeof(*rc->settings));
	if (!rc->label || !rc->lines || !rc->settings) {
		gb_recipe_free(rc);
		return NULL;
	}
	for (size_t i = 0; i < n; i++) {
		rc->lines[i] = strdup(lines[i] ? lines[i] : "");
		if (!rc->lines[i]) {
			gb_recipe_free(rc);
			return NULL;
		}
		if (settings)
			rc->settings[i] = settings[i];
		else
			gpiobroker_line_settings_init(&rc->settings[i]);
	}
	return rc;
}

void gb_recipe_remember(struct gb_recipe *rc, size_t n, const unsigned int idx[],
			const int values[], bool output,
			const struct gpiobroker_line_settings settings[])
{
	for (size_t i = 0; rc && i < n; i++) {
		struct gpiobroker_line_settings *s, def;
		size_t k = GB_IDX(idx, i);

		if (k >= rc->n)
			continue;
		s = &rc->settings[k];
		if (!settings) {
			s->direction = output ? GPIOBROKER_DIRECTION_OUTPUT :
						GPIOBROKER_DIRECTION_INPUT;
			if (output)
				s->value = values[i] ? 1 : 0;
			continue;
		}
		/* Reconfigure changes what differs from the defaults, keeps the rest. */
		gpiobroker_line_settings_init(&def);
		if (settings[i].direction != def.direction) {
			s->direction = settings[i].direction;
			s->value = settings[i].value ? 1 : 0;
		}
		if (settings[i].edge != def.edge)
			s->edge = settings[i].edge;
		if (settings[i].bias != def.bias)
			s->bias = settings[i].bias;
		if (settings[i].drive != def.drive)
			s->drive = settings[i].drive;
		if (settings[i].active_low)
			s->active_low = true;
		if (settings[i].debounce_us)
			s->debounce_us = settings[i].debounce_us;
		if (settings[i].event_clock != def.event_clock)
			s->event_clock = settings[i].event_clock;
	}
}
