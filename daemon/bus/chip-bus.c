/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The D-Bus face of chips and lines: /org/gpiodbroker1/chip/gpiochipN
 * (org.gpiodbroker1.Chip) with one child per line (.../lineM, org.gpiodbroker1.Line).
 * Line properties mirror the kernel's line info (kernel/chip.h) and say who holds
 * the line, who watches it, and what the policy calls it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "access.h"
#include "broker.h"
#include "bus.h"
#include "chip.h"
#include "client.h"
#include "macro.h"
#include "org.gpiodbroker1.h"
#include "request.h"
#include "utf8.h"
#include "watch.h"

/* A string the kernel keeps as bytes (a line's name or consumer, a chip's label):
 * bytes that are not UTF-8 would fail the whole reply, GetManagedObjects included. */
static int append_kernel_string(sd_bus_message *reply, const char *s)
{
	_cleanup_free_ char *repaired = NULL;

	if (!s || gb_utf8_valid(s))
		return sd_bus_message_append(reply, "s", s ? s : "");
	repaired = gb_utf8_repair(s);
	if (!repaired)
		return -ENOMEM;
	return sd_bus_message_append(reply, "s", repaired);
}

static Chip *chip_from_path(Broker *b, const char *path)
{
	for (Chip *c = b->chips; c; c = c->next)
		if (strcmp(c->path, path) == 0)
			return c;
	return NULL;
}

static int find_chip(sd_bus *bus, const char *path, const char *iface, void *userdata,
		     void **found, sd_bus_error *error)
{
	Chip *c = chip_from_path(userdata, path);

	if (!c)
		return 0;
	*found = c;
	return 1;
}

static int find_line(sd_bus *bus, const char *path, const char *iface, void *userdata,
		     void **found, sd_bus_error *error)
{
	Line *l = line_from_path(((Broker *)userdata)->chips, path);

	if (!l)
		return 0;
	*found = l;
	return 1;
}

static int enumerate_chips(sd_bus *bus, const char *prefix, void *userdata, char ***nodes,
			   sd_bus_error *error)
{
	Broker *b = userdata;
	size_t n = 0, k = 0;
	char **l;

	for (Chip *c = b->chips; c; c = c->next)
		n += 1 + c->num_lines;
	l = calloc(n + 1, sizeof(char *));
	if (!l)
		return -ENOMEM;
	for (Chip *c = b->chips; c; c = c->next) {
		if (!(l[k++] = strdup(c->path)))
			goto oom;
		for (unsigned int i = 0; i < c->num_lines; i++)
			if (!(l[k++] = strdup(c->lines[i].path)))
				goto oom;
	}
	*nodes = l;
	return 0;
oom:
	strv_free(l);
	return -ENOMEM;
}

#define CHIP_STR_PROP(fn, field)                                                          \
	static int fn(sd_bus *bus, const char *path, const char *iface, const char *prop,   \
		      sd_bus_message *reply, void *userdata, sd_bus_error *error)            \
	{                                                                                    \
		return append_kernel_string(reply, ((Chip *)userdata)->field);               \
	}
CHIP_STR_PROP(chip_get_name, name)
CHIP_STR_PROP(chip_get_label, label)
CHIP_STR_PROP(chip_get_dev_path, dev_path)
/* udev's strings are bytes too (a USB serial number is what the device says). */
CHIP_STR_PROP(chip_get_by_path, by_path)
CHIP_STR_PROP(chip_get_by_id, by_id)
CHIP_STR_PROP(chip_get_serial, serial)

static int chip_get_num_lines(sd_bus *bus, const char *path, const char *iface, const char *prop,
			      sd_bus_message *reply, void *userdata, sd_bus_error *error)
{
	return sd_bus_message_append(reply, "u", ((Chip *)userdata)->num_lines);
}

static const sd_bus_vtable chip_vtable[] = {
	SD_BUS_VTABLE_START(0),
	SD_BUS_PROPERTY("Name", "s", chip_get_name, 0, SD_BUS_VTABLE_PROPERTY_CONST),
	SD_BUS_PROPERTY("Label", "s", chip_get_label, 0, SD_BUS_VTABLE_PROPERTY_CONST),
	SD_BUS_PROPERTY("Path", "s", chip_get_dev_path, 0, SD_BUS_VTABLE_PROPERTY_CONST),
	SD_BUS_PROPERTY("NumLines", "u", chip_get_num_lines, 0, SD_BUS_VTABLE_PROPERTY_CONST),
	SD_BUS_PROPERTY("ByPath", "s", chip_get_by_path, 0, SD_BUS_VTABLE_PROPERTY_CONST),
	SD_BUS_PROPERTY("ById", "s", chip_get_by_id, 0, SD_BUS_VTABLE_PROPERTY_CONST),
	SD_BUS_PROPERTY("Serial", "s", chip_get_serial, 0, SD_BUS_VTABLE_PROPERTY_CONST),
	SD_BUS_VTABLE_END
};

/* One getter for all line properties: they all come from the same cached info. */
static int line_get(sd_bus *bus, const char *path, const char *iface, const char *prop,
		    sd_bus_message *reply, void *userdata, sd_bus_error *error)
{
	Line *l = userdata;
	struct gpiod_line_info *i = l->info;

	if (strcmp(prop, "Chip") == 0)
		return sd_bus_message_append(reply, "o", l->chip->path);
	if (strcmp(prop, "Offset") == 0)
		return sd_bus_message_append(reply, "u", l->offset);
	if (strcmp(prop, "Name") == 0)
		return append_kernel_string(reply, gpiod_line_info_get_name(i));
	if (strcmp(prop, "Used") == 0)
		return sd_bus_message_append(reply, "b", gpiod_line_info_is_used(i));
	if (strcmp(prop, "Consumer") == 0)
		return append_kernel_string(reply, gpiod_line_info_get_consumer(i));
	if (strcmp(prop, "Direction") == 0)
		return sd_bus_message_append(reply, "s",
					     gb_direction_name(gpiod_line_info_get_direction(i)));
	if (strcmp(prop, "Edge") == 0)
		return sd_bus_message_append(reply, "s",
					     gb_edge_name(gpiod_line_info_get_edge_detection(i)));
	if (strcmp(prop, "Bias") == 0)
		return sd_bus_message_append(reply, "s", gb_bias_name(gpiod_line_info_get_bias(i)));
	if (strcmp(prop, "Drive") == 0)
		return sd_bus_message_append(reply, "s", gb_drive_name(gpiod_line_info_get_drive(i)));
	if (strcmp(prop, "ActiveLow") == 0)
		return sd_bus_message_append(reply, "b", gpiod_line_info_is_active_low(i));
	if (strcmp(prop, "Debounced") == 0)
		return sd_bus_message_append(reply, "b", gpiod_line_info_is_debounced(i));
	if (strcmp(prop, "DebouncePeriodUs") == 0)
		return sd_bus_message_append(reply, "t",
					     (uint64_t)gpiod_line_info_get_debounce_period_us(i));
	if (strcmp(prop, "EventClock") == 0)
		return sd_bus_message_append(reply, "s",
					     gb_clock_name(gpiod_line_info_get_event_clock(i)));
	if (strcmp(prop, "Watchers") == 0) {
		int r = sd_bus_message_open_container(reply, 'a', "(su)");

		for (Watch *w = l->watchers; r >= 0 && w; w = w->line_next)
			r = sd_bus_message_append(reply, "(su)", w->client ? w->client->name : "",
						  w->client ? (uint32_t)w->client->uid : 0);
		return r < 0 ? r : sd_bus_message_close_container(reply);
	}
	if (strcmp(prop, "Request") == 0)
		return sd_bus_message_append(reply, "o", l->holder ? l->holder->path : "/");
	if (strcmp(prop, "RequestLabel") == 0)
		return sd_bus_message_append(reply, "s", l->holder ? l->holder->label : "");
	if (strcmp(prop, "Alias") == 0 || strcmp(prop, "Policy") == 0) {
		const struct gb_policy_entry *e = line_policy_entry(l);
		char where[300] = "";

		if (strcmp(prop, "Alias") == 0)
			return sd_bus_message_append(reply, "s", e && !e->group ? e->name : "");
		if (e)
			gb_policy_entry_describe(e, where, sizeof(where));
		return sd_bus_message_append(reply, "s", where);
	}
	return -ENOENT;
}

#define LINE_PROP(name, sig) SD_BUS_PROPERTY(name, sig, line_get, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE)

static const sd_bus_vtable line_vtable[] = {
	SD_BUS_VTABLE_START(0),
	SD_BUS_PROPERTY("Chip", "o", line_get, 0, SD_BUS_VTABLE_PROPERTY_CONST),
	SD_BUS_PROPERTY("Offset", "u", line_get, 0, SD_BUS_VTABLE_PROPERTY_CONST),
	LINE_PROP("Name", "s"),
	LINE_PROP("Used", "b"),
	LINE_PROP("Consumer", "s"),
	LINE_PROP("Direction", "s"),
	LINE_PROP("Edge", "s"),
	LINE_PROP("Bias", "s"),
	LINE_PROP("Drive", "s"),
	LINE_PROP("ActiveLow", "b"),
	LINE_PROP("Debounced", "b"),
	LINE_PROP("DebouncePeriodUs", "t"),
	LINE_PROP("EventClock", "s"),
	LINE_PROP("Request", "o"),
	LINE_PROP("RequestLabel", "s"),
	LINE_PROP("Watchers", "a(su)"),
	LINE_PROP("Alias", "s"),
	LINE_PROP("Policy", "s"),
	SD_BUS_VTABLE_END
};

const struct bus_iface bus_chip_iface = {
	GB_CHIP_PREFIX, true, GB_IFACE_CHIP, chip_vtable, find_chip, enumerate_chips,
};
const struct bus_iface bus_line_iface = {
	GB_CHIP_PREFIX, true, GB_IFACE_LINE, line_vtable, find_line, NULL, /* the chips' */
};
