/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The D-Bus face of the slices (core/sliced.h): /org/gpiodbroker1/slice/NAME, NAME
 * escaped as sd_bus_path_encode() does (a slice's name may hold '-' and '.'),
 * interface org.gpiodbroker1.Slice, read-only: what gpiod-broker-slices recorded.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "broker.h"
#include "bus.h"
#include "macro.h"
#include "org.gpiodbroker1.h"
#include "sliced.h"

static int find_slice(sd_bus *bus, const char *path, const char *iface, void *userdata,
		      void **found, sd_bus_error *error)
{
	Slice *s = slice_from_path(userdata, path);

	if (!s)
		return 0;
	*found = s;
	return 1;
}

static int enumerate_slices(sd_bus *bus, const char *prefix, void *userdata, char ***nodes,
			    sd_bus_error *error)
{
	Broker *b = userdata;
	size_t n = 0;
	char **l;

	for (Slice *s = b->slices; s; s = s->next)
		n++;
	l = calloc(n + 1, sizeof(char *));
	if (!l)
		return -ENOMEM;
	n = 0;
	for (Slice *s = b->slices; s; s = s->next) {
		l[n] = strdup(s->path);
		if (!l[n++]) {
			strv_free(l);
			return -ENOMEM;
		}
	}
	*nodes = l;
	return 0;
}

/* "a,b" as the policy gave them, as an array; "" is none. */
static int append_names(sd_bus_message *reply, const char *csv)
{
	int r = sd_bus_message_open_container(reply, 'a', "s");

	for (const char *p = csv ? csv : ""; r >= 0 && *p;) {
		size_t len = strcspn(p, ",");
		_cleanup_free_ char *name = strndup(p, len);

		if (!name)
			return -ENOMEM;
		if (*name)
			r = sd_bus_message_append(reply, "s", name);
		p += len + (p[len] == ',');
	}
	return r < 0 ? r : sd_bus_message_close_container(reply);
}

static int slice_get(sd_bus *bus, const char *path, const char *iface, const char *prop,
		     sd_bus_message *reply, void *userdata, sd_bus_error *error)
{
	Slice *s = userdata;
	char text[1100];
	int r;

	if (strcmp(prop, "Name") == 0)
		return sd_bus_message_append(reply, "s", s->def.name);
	if (strcmp(prop, "Lines") == 0) {
		r = sd_bus_message_open_container(reply, 'a', "s");
		for (size_t i = 0; r >= 0 && i < s->def.n_lines; i++)
			r = sd_bus_message_append(reply, "s", s->def.lines[i].item);
		return r < 0 ? r : sd_bus_message_close_container(reply);
	}
	if (strcmp(prop, "Users") == 0)
		return append_names(reply, s->def.users);
	if (strcmp(prop, "Groups") == 0)
		return append_names(reply, s->def.groups);
	if (strcmp(prop, "Device") == 0)
		return sd_bus_message_append(reply, "s", s->made ? s->def.device : "");
	if (strcmp(prop, "Chip") == 0)
		return sd_bus_message_append(reply, "s", s->made ? s->def.chip : "");
	if (strcmp(prop, "Link") == 0) {
		slice_link(s, text, sizeof(text));
		return sd_bus_message_append(reply, "s", text);
	}
	if (strcmp(prop, "State") == 0) {
		slice_state_text(s, text, sizeof(text));
		return sd_bus_message_append(reply, "s", text);
	}
	return -ENOENT;
}

#define SLICE_PROP(name, sig) \
	SD_BUS_PROPERTY(name, sig, slice_get, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE)

static const sd_bus_vtable slice_vtable[] = {
	SD_BUS_VTABLE_START(0),
	SD_BUS_PROPERTY("Name", "s", slice_get, 0, SD_BUS_VTABLE_PROPERTY_CONST),
	SLICE_PROP("Lines", "as"),
	SLICE_PROP("Users", "as"),
	SLICE_PROP("Groups", "as"),
	SLICE_PROP("Device", "s"),
	SLICE_PROP("Chip", "s"),
	SD_BUS_PROPERTY("Link", "s", slice_get, 0, SD_BUS_VTABLE_PROPERTY_CONST),
	SLICE_PROP("State", "s"),
	SD_BUS_VTABLE_END
};

const struct bus_iface bus_slice_iface = {
	GB_SLICE_PREFIX, true, GB_IFACE_SLICE, slice_vtable, find_slice, enumerate_slices,
};
