/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Reading what callers pass in a{sv} dictionaries: per-line settings (for
 * Manager.Request and Request.Reconfigure) and Manager.Request's options. Every
 * key and type is checked: unknown keys and wrong variant types are InvalidArgs
 * with a message that says what to change.
 */
#include <string.h>

#include "bus-error.h"
#include "bus.h"
#include "line-config.h"
#include "org.gpiodbroker1.h"

/* Read one a{sv} of line settings into @p c. */
int bus_read_line_settings(sd_bus_message *m, struct gb_line_config *c, const char *what,
			      sd_bus_error *error)
{
	int r;

	r = sd_bus_message_enter_container(m, 'a', "{sv}");
	if (r < 0)
		return r;
	while ((r = sd_bus_message_enter_container(m, 'e', "sv")) > 0) {
		const char *key, *contents, *str = NULL;
		char type, msg[256];
		int b = 0;
		uint32_t u = 0;

		r = sd_bus_message_read(m, "s", &key);
		if (r < 0)
			return r;
		r = sd_bus_message_peek_type(m, NULL, &contents);
		if (r < 0)
			return r;
		if (strlen(contents) != 1 || !strchr("sbu", contents[0]))
			return gb_bus_error_setf(error, GB_ERROR_INVALID_ARGS,
						 "%s: setting '%s' has unsupported type '%s'",
						 what, key, contents);
		type = contents[0];
		r = sd_bus_message_enter_container(m, 'v', contents);
		if (r < 0)
			return r;
		if (type == 's')
			r = sd_bus_message_read(m, "s", &str);
		else if (type == 'b')
			r = sd_bus_message_read(m, "b", &b);
		else
			r = sd_bus_message_read(m, "u", &u);
		if (r < 0)
			return r;
		if (gb_line_config_set(c, key, type, str, b, u, msg, sizeof(msg)) < 0)
			return gb_bus_error_setf(error, GB_ERROR_INVALID_ARGS, "%s: %s", what, msg);
		r = sd_bus_message_exit_container(m);
		if (r >= 0)
			r = sd_bus_message_exit_container(m);
		if (r < 0)
			return r;
	}
	if (r < 0)
		return r;
	return sd_bus_message_exit_container(m);
}

int bus_read_request_options(sd_bus_message *m, int *persistent, int *direct, sd_bus_error *error)
{
	int r;

	r = sd_bus_message_enter_container(m, 'a', "{sv}");
	if (r < 0)
		return r;
	while ((r = sd_bus_message_enter_container(m, 'e', "sv")) > 0) {
		const char *key;
		int *out;

		r = sd_bus_message_read(m, "s", &key);
		if (r < 0)
			return r;
		if (strcmp(key, "persistent") == 0)
			out = persistent;
		else if (strcmp(key, "direct") == 0)
			out = direct;
		else
			return gb_bus_error_setf(error, GB_ERROR_INVALID_ARGS,
						 "unknown request option '%s' (known: persistent, direct)",
						 key);
		r = sd_bus_message_read(m, "v", "b", out);
		if (r < 0)
			return gb_bus_error_setf(error, GB_ERROR_INVALID_ARGS,
						 "option '%s' must be a boolean (b)", key);
		r = sd_bus_message_exit_container(m);
		if (r < 0)
			return r;
	}
	if (r < 0)
		return r;
	/* A persistent request outlives its connection; a direct one must end when its
	 * owner does, the one moment the broker knows the fds it handed out are gone. */
	if (*persistent && *direct)
		return sd_bus_error_set(error, GB_ERROR_INVALID_ARGS,
					"a request cannot be both persistent and direct: a direct "
					"request ends with its owner's connection");
	return 0;
}

int bus_read_no_options(sd_bus_message *m, const char *method, sd_bus_error *error)
{
	const char *key = "";
	int r = sd_bus_message_enter_container(m, 'a', "{sv}");

	if (r >= 0)
		r = sd_bus_message_enter_container(m, 'e', "sv");
	if (r <= 0)
		return r < 0 ? r : sd_bus_message_exit_container(m);
	r = sd_bus_message_read(m, "s", &key);
	if (r < 0)
		return r;
	return gb_bus_error_setf(error, GB_ERROR_INVALID_ARGS,
				 "unknown option '%s' (%s takes none yet)", key, method);
}
