/* SPDX-License-Identifier: LGPL-2.1-or-later */
/**
 * @file line-config.h
 * @brief Per-line settings a caller asks for, checked before they reach the kernel.
 *
 * The D-Bus layer reads each "a{sv}" entry and hands it here as (key, type, value);
 * this file knows the keys, their types and which combinations make sense, so the
 * rules are in one place and unit-testable without a bus.
 *
 * Keys (D-Bus type): direction (s: "input", "output", "as-is"), value (b: initial or
 * new output value, logical), edge (s: "none", "rising", "falling", "both"),
 * bias (s: "as-is", "disabled", "pull-up", "pull-down"), drive (s: "push-pull",
 * "open-drain", "open-source"), active-low (b), debounce-us (u),
 * event-clock (s: "monotonic", "realtime", "hte").
 */
#ifndef GB_LINE_CONFIG_H
#define GB_LINE_CONFIG_H

#include <gpiod.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Upper bounds that keep one caller from making the broker allocate without limit. */
#define GB_MAX_LINES_PER_REQUEST 512
/* The kernel keeps 31 characters of a consumer name; a longer label would show
 * truncated in the kernel but whole on the bus, so it is refused. */
#define GB_MAX_LABEL_LEN         31

enum gb_line_field {
	GB_FIELD_DIRECTION   = 1 << 0,
	GB_FIELD_VALUE       = 1 << 1,
	GB_FIELD_EDGE        = 1 << 2,
	GB_FIELD_BIAS        = 1 << 3,
	GB_FIELD_DRIVE       = 1 << 4,
	GB_FIELD_ACTIVE_LOW  = 1 << 5,
	GB_FIELD_DEBOUNCE    = 1 << 6,
	GB_FIELD_EVENT_CLOCK = 1 << 7,
};

struct gb_line_config {
	unsigned int set; /* GB_FIELD_* given by the caller */
	enum gpiod_line_direction direction;
	bool value;
	enum gpiod_line_edge edge;
	enum gpiod_line_bias bias;
	enum gpiod_line_drive drive;
	bool active_low;
	unsigned int debounce_us;
	enum gpiod_line_clock event_clock;
};

/** Defaults: as-is direction, no edge, as-is bias, push-pull, active-high, no debounce. */
void gb_line_config_init(struct gb_line_config *c);

/**
 * Set one key. @p type is the D-Bus type character of the variant's content; for
 * 's' pass @p str, for 'b' @p b, for 'u' @p u. On error returns -EINVAL and writes
 * a message for the caller into @p err.
 */
int gb_line_config_set(struct gb_line_config *c, const char *key, char type,
		       const char *str, bool b, unsigned int u, char *err, size_t errlen);

/** Overlay the fields set in @p update onto @p c (for reconfigure). */
void gb_line_config_merge(struct gb_line_config *c, const struct gb_line_config *update);

/**
 * Check that the settings make sense together (value needs output; edge and
 * debounce need input; drive needs output). -EINVAL with a message.
 */
int gb_line_config_validate(const struct gb_line_config *c, char *err, size_t errlen);

/** Fill libgpiod settings from the config. */
int gb_line_config_to_settings(const struct gb_line_config *c, struct gpiod_line_settings *s);

/**
 * "Now" on the clock the kernel stamps edges with, in ns; false if it cannot be
 * compared (HTE).
 */
bool gb_clock_now(enum gpiod_line_clock clock, uint64_t *ns);

/** A request label: 1 to GB_MAX_LABEL_LEN printable ASCII characters. */
bool gb_label_valid(const char *s);

/** Names used on the bus for the enums (also for line properties). */
const char *gb_direction_name(enum gpiod_line_direction d);
const char *gb_edge_name(enum gpiod_line_edge e);
const char *gb_bias_name(enum gpiod_line_bias b);
const char *gb_drive_name(enum gpiod_line_drive d);
const char *gb_clock_name(enum gpiod_line_clock c);

#endif
