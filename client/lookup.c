/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libgpiobroker's lookups: where a line is (Manager.FindLine), and the requests the
 * broker holds (Manager.ListRequests).
 */
#include "internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

GB_EXPORT int gpiobroker_find_line(struct gpiobroker *b, const char *line, char **path,
				   char **chip, unsigned int *offset)
{
	sd_bus_error e = SD_BUS_ERROR_NULL;
	sd_bus_message *reply = NULL;
	const char *p, *c;
	uint32_t off;
	int r;

	r = sd_bus_call_method(gb_conn(b), GB_BUS_NAME, GB_ROOT_PATH, GB_IFACE_MANAGER, "FindLine",
			       &e, &reply, "s", line ? line : "");
	if (r < 0)
		return gb_fail(b, &e, r);
	r = sd_bus_message_read(reply, "osu", &p, &c, &off);
	if (r >= 0 && path && !(*path = strdup(p)))
		r = -ENOMEM;
	if (r >= 0 && chip && !(*chip = strdup(c))) {
		if (path) {
			free(*path);
			*path = NULL;
		}
		r = -ENOMEM;
	}
	if (r >= 0 && offset)
		*offset = off;
	sd_bus_message_unref(reply);
	if (r < 0)
		return gb_fail(b, NULL, r);
	gb_clear_error(b);
	return 0;
}

GB_EXPORT void gpiobroker_request_info_free(struct gpiobroker_request_info *info, size_t n)
{
	if (!info)
		return;
	for (size_t i = 0; i < n; i++) {
		free(info[i].path);
		free(info[i].label);
		free(info[i].owner);
	}
	free(info);
}

GB_EXPORT int gpiobroker_list_requests(struct gpiobroker *b, struct gpiobroker_request_info **out)
{
	sd_bus_error e = SD_BUS_ERROR_NULL;
	sd_bus_message *reply = NULL;
	struct gpiobroker_request_info *info = NULL;
	const char *path, *label, *owner;
	uint32_t uid;
	size_t n = 0;
	int r, persistent;

	r = sd_bus_call_method(gb_conn(b), GB_BUS_NAME, GB_ROOT_PATH, GB_IFACE_MANAGER,
			       "ListRequests", &e, &reply, "");
	if (r < 0)
		return gb_fail(b, &e, r);
	r = sd_bus_message_enter_container(reply, 'a', "(osbus)");
	while (r >= 0 &&
	       (r = sd_bus_message_read(reply, "(osbus)", &path, &label, &persistent, &uid,
					&owner)) > 0) {
		struct gpiobroker_request_info *bigger = realloc(info, (n + 1) * sizeof(*info));

		if (!bigger) {
			r = -ENOMEM;
			break;
		}
		info = bigger;
		info[n] = (struct gpiobroker_request_info){
			.path = strdup(path), .label = strdup(label), .persistent = persistent,
			.owner_uid = uid, .owner = strdup(owner),
		};
		n++;
		if (!info[n - 1].path || !info[n - 1].label || !info[n - 1].owner)
			r = -ENOMEM;
	}
	sd_bus_message_unref(reply);
	if (r < 0) {
		gpiobroker_request_info_free(info, n);
		return gb_fail(b, NULL, r);
	}
	gb_clear_error(b);
	*out = info;
	return (int)n;
}

