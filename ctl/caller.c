/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Who gpiobrokerctl is to the broker: the uid and groups the bus daemon recorded
 * for its connection (GetConnectionCredentials). Over -H that is the SSH login on
 * the far host, not this process's getuid(); in a user namespace, the mapped uid.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <systemd/sd-bus.h>

#include "ctl.h"

int bus_caller(uint32_t *uid, uint32_t *groups, int max_groups)
{
	sd_bus_error e = SD_BUS_ERROR_NULL;
	sd_bus_message *reply = NULL;
	const char *me = NULL, *key;
	int r, n = 0, have_uid = 0;

	/* Over -H the uid that counts is the SSH login's, which only the far bus knows. */
	r = sd_bus_get_unique_name(gpiobroker_get_bus(B), &me);
	if (r >= 0)
		r = sd_bus_call_method(gpiobroker_get_bus(B), "org.freedesktop.DBus", "/org/freedesktop/DBus",
				       "org.freedesktop.DBus", "GetConnectionCredentials", &e, &reply,
				       "s", me);
	sd_bus_error_free(&e);
	if (r >= 0)
		r = sd_bus_message_enter_container(reply, 'a', "{sv}");
	while (r >= 0 && (r = sd_bus_message_enter_container(reply, 'e', "sv")) > 0) {
		r = sd_bus_message_read(reply, "s", &key);
		if (r >= 0 && strcmp(key, "UnixUserID") == 0) {
			r = sd_bus_message_read(reply, "v", "u", uid);
			have_uid = r >= 0;
		} else if (r >= 0 && strcmp(key, "UnixGroupIDs") == 0) {
			uint32_t g;

			r = sd_bus_message_enter_container(reply, 'v', "au");
			if (r >= 0)
				r = sd_bus_message_enter_container(reply, 'a', "u");
			while (r >= 0 && (r = sd_bus_message_read(reply, "u", &g)) > 0)
				if (n < max_groups)
					groups[n++] = g;
			if (r >= 0)
				r = sd_bus_message_exit_container(reply);
			if (r >= 0)
				r = sd_bus_message_exit_container(reply);
		} else if (r >= 0) {
			r = sd_bus_message_skip(reply, "v");
		}
		if (r >= 0)
			r = sd_bus_message_exit_container(reply);
	}
	sd_bus_message_unref(reply);
	if (r < 0)
		return r;
	return have_uid ? n : -ENODATA;
}

uint32_t caller_uid(void)
{
	static bool known;
	static uint32_t uid;
	uint32_t g;

	if (!known) {
		if (bus_caller(&uid, &g, 0) < 0)
			uid = (uint32_t)getuid();
		known = true;
	}
	return uid;
}
