/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "broker-calls.h"

#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bus-util.h"
#include "org.gpiodbroker1.h"
#include "timing.h"

void gb_wait_client_gone(sd_bus *conn, const char *unique_name)
{
	/* The bus connection: names are the bus daemon's, and the ordering argument
	 * below holds on one connection only. */
	sd_bus *bus = gb_sysbus(conn);
	sd_bus_slot *slot = NULL;
	char match[256];
	int gone = 0;

	/* The bus daemon sends NameOwnerChanged to every subscriber, the broker included,
	 * when it drops the connection. Once we have seen it, any call we make reaches
	 * the broker after its own copy, and it handles messages in order: so the next
	 * call's answer already reflects the release. */
	snprintf(match, sizeof(match),
		 "type='signal',sender='org.freedesktop.DBus',member='NameOwnerChanged',arg0='%s'",
		 unique_name);
	ck_assert_int_ge(sd_bus_add_match(bus, &slot, match, gb_bus_count_message, &gone), 0);
	if (gb_name_has_owner(bus, unique_name))
		ck_assert_msg(gb_bus_wait_count(bus, &gone, 1, 5000), "%s did not leave the bus",
			      unique_name);
	sd_bus_slot_unref(slot);
	/* A round trip to the broker: it has processed its NameOwnerChanged by now. */
	ck_assert_int_ge(gb_ping(bus, NULL), 0);
}

char *gb_line_path(const char *chip, unsigned int off)
{
	char *p;

	ck_assert_int_ge(asprintf(&p, GB_CHIP_PREFIX "/%s/line%u", chip, off), 0);
	return p;
}

char *gb_line_prop_str(sd_bus *bus, const char *chip, unsigned int off, const char *prop)
{
	char *path = gb_line_path(chip, off), *v = gb_get_prop_str(bus, path, GB_IFACE_LINE, prop);

	free(path);
	return v;
}

bool gb_line_prop_bool(sd_bus *bus, const char *chip, unsigned int off, const char *prop)
{
	char *path = gb_line_path(chip, off);
	bool v = gb_get_prop_bool(bus, path, GB_IFACE_LINE, prop);

	free(path);
	return v;
}

bool gb_wait_line_used(sd_bus *bus, const char *chip, unsigned int off, bool used, int timeout_ms)
{
	long deadline = gb_deadline_ms(timeout_ms);
	char *path = gb_line_path(chip, off);
	bool ok = false;

	/* The line may not be an object yet (a chip just plugged in): keep asking. */
	while (!ok && gb_now_ms() <= deadline) {
		sd_bus_error err = SD_BUS_ERROR_NULL;
		int v = -1;

		if (sd_bus_get_property_trivial(bus, GB_BUS_NAME, path, GB_IFACE_LINE, "Used", &err, 'b', &v) >= 0)
			ok = (bool)v == used;
		sd_bus_error_free(&err);
		if (!ok)
			usleep(10000);
	}
	free(path);
	return ok;
}

int gb_request_lines(sd_bus *bus, const char *label, const char *const *specs, unsigned int n,
		     const char *direction, int value, const char *edge, bool persistent, char **path,
		     sd_bus_error *err)
{
	sd_bus_message *m = NULL, *reply = NULL;
	const char *p;
	int r;

	ck_assert_int_ge(sd_bus_message_new_method_call(bus, &m, GB_BUS_NAME, GB_ROOT_PATH, GB_IFACE_MANAGER,
							"Request"), 0);
	ck_assert_int_ge(sd_bus_message_append(m, "s", label), 0);
	ck_assert_int_ge(sd_bus_message_open_container(m, 'a', "(sa{sv})"), 0);
	for (unsigned int i = 0; i < n; i++) {
		ck_assert_int_ge(sd_bus_message_open_container(m, 'r', "sa{sv}"), 0);
		ck_assert_int_ge(sd_bus_message_append(m, "s", specs[i]), 0);
		ck_assert_int_ge(sd_bus_message_open_container(m, 'a', "{sv}"), 0);
		if (direction)
			ck_assert_int_ge(sd_bus_message_append(m, "{sv}", "direction", "s", direction), 0);
		if (value >= 0)
			ck_assert_int_ge(sd_bus_message_append(m, "{sv}", "value", "b", value), 0);
		if (edge)
			ck_assert_int_ge(sd_bus_message_append(m, "{sv}", "edge", "s", edge), 0);
		ck_assert_int_ge(sd_bus_message_close_container(m), 0);
		ck_assert_int_ge(sd_bus_message_close_container(m), 0);
	}
	ck_assert_int_ge(sd_bus_message_close_container(m), 0);
	if (persistent)
		ck_assert_int_ge(sd_bus_message_append(m, "a{sv}", 1, "persistent", "b", 1), 0);
	else
		ck_assert_int_ge(sd_bus_message_append(m, "a{sv}", 0), 0);
	r = sd_bus_call(bus, m, 0, err, &reply);
	if (r >= 0) {
		ck_assert_int_ge(sd_bus_message_read(reply, "o", &p), 0);
		if (path)
			*path = strdup(p);
	}
	sd_bus_message_unref(m);
	sd_bus_message_unref(reply);
	return r;
}

int gb_request(sd_bus *bus, const char *label, const char *spec, const char *direction,
	       int value, const char *edge, bool persistent, char **path, sd_bus_error *err)
{
	return gb_request_lines(bus, label, &spec, 1, direction, value, edge, persistent, path, err);
}

int gb_get_value(sd_bus *bus, const char *path, unsigned int idx, sd_bus_error *err)
{
	sd_bus_message *reply = NULL;
	int r, v = 0;

	r = sd_bus_call_method(bus, GB_BUS_NAME, path, GB_IFACE_REQUEST, "GetValues", err, &reply, "au", 1, idx);
	if (r < 0)
		return r;
	ck_assert_int_ge(sd_bus_message_read(reply, "ab", 1, &v), 0);
	sd_bus_message_unref(reply);
	return v;
}

int gb_set_value(sd_bus *bus, const char *path, unsigned int idx, bool value, sd_bus_error *err)
{
	return sd_bus_call_method(bus, GB_BUS_NAME, path, GB_IFACE_REQUEST, "SetValues", err, NULL, "a(ub)", 1,
				  idx, (int)value);
}

int gb_release(sd_bus *bus, const char *path, sd_bus_error *err)
{
	return sd_bus_call_method(bus, GB_BUS_NAME, path, GB_IFACE_REQUEST, "Release", err, NULL, "");
}

int gb_ping(sd_bus *bus, sd_bus_error *err)
{
	return sd_bus_call_method(bus, GB_BUS_NAME, GB_ROOT_PATH, "org.freedesktop.DBus.Peer", "Ping", err, NULL, "");
}

struct holder {
	uid_t uid;
	const char *label, *spec, *direction;
	int value;
	bool persistent;
};

static sd_bus *hold(void *userdata)
{
	const struct holder *h = userdata;
	sd_bus *bus = gb_connect(h->uid);
	sd_bus_error err = SD_BUS_ERROR_NULL;

	if (gb_request(bus, h->label, h->spec, h->direction, h->value, NULL, h->persistent, NULL, &err) < 0)
		return NULL;
	return bus;
}

pid_t gb_spawn_holder(uid_t uid, const char *label, const char *spec, const char *direction, int value,
		      bool persistent, char *name, size_t size)
{
	struct holder h = { uid, label, spec, direction, value, persistent };

	return gb_fork_client(hold, &h, name, size);
}
