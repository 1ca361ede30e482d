/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include "line-config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "macro.h"

struct name_value {
	const char *name;
	int value;
};

static const struct name_value directions[] = {
	{ "as-is", GPIOD_LINE_DIRECTION_AS_IS },
	{ "input", GPIOD_LINE_DIRECTION_INPUT },
	{ "output", GPIOD_LINE_DIRECTION_OUTPUT },
};
static const struct name_value edges[] = {
	{ "none", GPIOD_LINE_EDGE_NONE },
	{ "rising", GPIOD_LINE_EDGE_RISING },
	{ "falling", GPIOD_LINE_EDGE_FALLING },
	{ "both", GPIOD_LINE_EDGE_BOTH },
};
static const struct name_value biases[] = {
	{ "as-is", GPIOD_LINE_BIAS_AS_IS },
	{ "unknown", GPIOD_LINE_BIAS_UNKNOWN },
	{ "disabled", GPIOD_LINE_BIAS_DISABLED },
	{ "pull-up", GPIOD_LINE_BIAS_PULL_UP },
	{ "pull-down", GPIOD_LINE_BIAS_PULL_DOWN },
};
static const struct name_value drives[] = {
	{ "push-pull", GPIOD_LINE_DRIVE_PUSH_PULL },
	{ "open-drain", GPIOD_LINE_DRIVE_OPEN_DRAIN },
	{ "open-source", GPIOD_LINE_DRIVE_OPEN_SOURCE },
};
static const struct name_value clocks[] = {
	{ "monotonic", GPIOD_LINE_CLOCK_MONOTONIC },
	{ "realtime", GPIOD_LINE_CLOCK_REALTIME },
	{ "hte", GPIOD_LINE_CLOCK_HTE },
};

#define NV(t) t, ELEMENTSOF(t)

static const char *name_of(const struct name_value *t, size_t n, int v)
{
	for (size_t i = 0; i < n; i++)
		if (t[i].value == v)
			return t[i].name;
	return "unknown";
}

const char *gb_direction_name(enum gpiod_line_direction d) { return name_of(NV(directions), d); }
const char *gb_edge_name(enum gpiod_line_edge e) { return name_of(NV(edges), e); }
const char *gb_bias_name(enum gpiod_line_bias b) { return name_of(NV(biases), b); }
const char *gb_drive_name(enum gpiod_line_drive d) { return name_of(NV(drives), d); }
const char *gb_clock_name(enum gpiod_line_clock c) { return name_of(NV(clocks), c); }

void gb_line_config_init(struct gb_line_config *c)
{
	*c = (struct gb_line_config){
		.direction = GPIOD_LINE_DIRECTION_AS_IS,
		.edge = GPIOD_LINE_EDGE_NONE,
		.bias = GPIOD_LINE_BIAS_AS_IS,
		.drive = GPIOD_LINE_DRIVE_PUSH_PULL,
		.event_clock = GPIOD_LINE_CLOCK_MONOTONIC,
	};
}

/* Look up an enum value by name; "unknown" bias is what the kernel reports, never
 * something a caller may ask for. */
static int parse_enum(const struct name_value *t, size_t n, const char *key, const char *s,
		      int *out, char *err, size_t errlen)
{
	char choices[128] = "";

	for (size_t i = 0; i < n; i++) {
		if (strcmp(t[i].name, "unknown") == 0)
			continue;
		if (strcmp(t[i].name, s) == 0) {
			*out = t[i].value;
			return 0;
		}
		if (choices[0])
			strncat(choices, ", ", sizeof(choices) - strlen(choices) - 1);
		strncat(choices, t[i].name, sizeof(choices) - strlen(choices) - 1);
	}
	snprintf(err, errlen, "'%s' is not a valid %s (one of: %s)", s, key, choices);
	return -EINVAL;
}

static const struct {
	const char *key;
	char type;
	unsigned int field;
} keys[] = {
	{ "direction", 's', GB_FIELD_DIRECTION },
	{ "value", 'b', GB_FIELD_VALUE },
	{ "edge", 's', GB_FIELD_EDGE },
	{ "bias", 's', GB_FIELD_BIAS },
	{ "drive", 's', GB_FIELD_DRIVE },
	{ "active-low", 'b', GB_FIELD_ACTIVE_LOW },
	{ "debounce-us", 'u', GB_FIELD_DEBOUNCE },
	{ "event-clock", 's', GB_FIELD_EVENT_CLOCK },
};

int gb_line_config_set(struct gb_line_config *c, const char *key, char type,
		       const char *str, bool b, unsigned int u, char *err, size_t errlen)
{
	unsigned int field = 0;
	int v = 0, r = 0;

	for (size_t i = 0; i < ELEMENTSOF(keys); i++) {
		if (strcmp(keys[i].key, key) != 0)
			continue;
		if (keys[i].type != type) {
			snprintf(err, errlen, "line setting '%s' must be of D-Bus type '%c', not '%c'",
				 key, keys[i].type, type);
			return -EINVAL;
		}
		field = keys[i].field;
		break;
	}
	if (!field) {
		snprintf(err, errlen,
			 "unknown line setting '%s' (known: direction, value, edge, bias, drive, "
			 "active-low, debounce-us, event-clock)", key);
		return -EINVAL;
	}
	if (c->set & field) {
		snprintf(err, errlen, "line setting '%s' given twice", key);
		return -EINVAL;
	}

	switch (field) {
	case GB_FIELD_DIRECTION:
		r = parse_enum(NV(directions), key, str, &v, err, errlen);
		c->direction = v;
		break;
	case GB_FIELD_EDGE:
		r = parse_enum(NV(edges), key, str, &v, err, errlen);
		c->edge = v;
		break;
	case GB_FIELD_BIAS:
		r = parse_enum(NV(biases), key, str, &v, err, errlen);
		c->bias = v;
		break;
	case GB_FIELD_DRIVE:
		r = parse_enum(NV(drives), key, str, &v, err, errlen);
		c->drive = v;
		break;
	case GB_FIELD_EVENT_CLOCK:
		r = parse_enum(NV(clocks), key, str, &v, err, errlen);
		c->event_clock = v;
		break;
	case GB_FIELD_VALUE:
		c->value = b;
		break;
	case GB_FIELD_ACTIVE_LOW:
		c->active_low = b;
		break;
	case GB_FIELD_DEBOUNCE:
		c->debounce_us = u;
		break;
	}
	if (r < 0)
		return r;
	c->set |= field;
	return 0;
}

void gb_line_config_merge(struct gb_line_config *c, const struct gb_line_config *u)
{
	if (u->set & GB_FIELD_DIRECTION) {
		c->direction = u->direction;
		/* A new direction starts from the defaults of what it does not use. */
		if (u->direction == GPIOD_LINE_DIRECTION_OUTPUT) {
			c->edge = GPIOD_LINE_EDGE_NONE;
			c->debounce_us = 0;
		} else if (u->direction == GPIOD_LINE_DIRECTION_INPUT) {
			c->drive = GPIOD_LINE_DRIVE_PUSH_PULL;
		}
	}
	if (u->set & GB_FIELD_VALUE)
		c->value = u->value;
	if (u->set & GB_FIELD_EDGE)
		c->edge = u->edge;
	if (u->set & GB_FIELD_BIAS)
		c->bias = u->bias;
	if (u->set & GB_FIELD_DRIVE)
		c->drive = u->drive;
	if (u->set & GB_FIELD_ACTIVE_LOW)
		c->active_low = u->active_low;
	if (u->set & GB_FIELD_DEBOUNCE)
		c->debounce_us = u->debounce_us;
	if (u->set & GB_FIELD_EVENT_CLOCK)
		c->event_clock = u->event_clock;
	c->set |= u->set;
}

int gb_line_config_validate(const struct gb_line_config *c, char *err, size_t errlen)
{
	bool out = c->direction == GPIOD_LINE_DIRECTION_OUTPUT;
	bool in = c->direction == GPIOD_LINE_DIRECTION_INPUT;

	if ((c->set & GB_FIELD_VALUE) && !out) {
		snprintf(err, errlen, "'value' needs direction 'output'");
		return -EINVAL;
	}
	if (c->edge != GPIOD_LINE_EDGE_NONE && !in) {
		snprintf(err, errlen, "edge detection needs direction 'input'");
		return -EINVAL;
	}
	if (c->debounce_us && !in) {
		snprintf(err, errlen, "'debounce-us' needs direction 'input'");
		return -EINVAL;
	}
	if (c->drive != GPIOD_LINE_DRIVE_PUSH_PULL && !out) {
		snprintf(err, errlen, "'drive' needs direction 'output'");
		return -EINVAL;
	}
	return 0;
}

int gb_line_config_to_settings(const struct gb_line_config *c, struct gpiod_line_settings *s)
{
	gpiod_line_settings_reset(s);
	if (gpiod_line_settings_set_direction(s, c->direction) < 0 ||
	    gpiod_line_settings_set_edge_detection(s, c->edge) < 0 ||
	    gpiod_line_settings_set_bias(s, c->bias) < 0 ||
	    gpiod_line_settings_set_drive(s, c->drive) < 0 ||
	    gpiod_line_settings_set_event_clock(s, c->event_clock) < 0)
		return -EINVAL;
	gpiod_line_settings_set_active_low(s, c->active_low);
	gpiod_line_settings_set_debounce_period_us(s, c->debounce_us);
	if (c->direction == GPIOD_LINE_DIRECTION_OUTPUT &&
	    gpiod_line_settings_set_output_value(s, c->value ? GPIOD_LINE_VALUE_ACTIVE
							     : GPIOD_LINE_VALUE_INACTIVE) < 0)
		return -EINVAL;
	return 0;
}

bool gb_label_valid(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > GB_MAX_LABEL_LEN)
		return false;
	for (; *s; s++)
		if (*s < 0x20 || *s > 0x7e)
			return false;
	return true;
}

bool gb_clock_now(enum gpiod_line_clock clock, uint64_t *ns)
{
	struct timespec ts;

	if (clock == GPIOD_LINE_CLOCK_HTE)
		return false;
	clock_gettime(clock == GPIOD_LINE_CLOCK_REALTIME ? CLOCK_REALTIME : CLOCK_MONOTONIC, &ts);
	*ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	return true;
}
