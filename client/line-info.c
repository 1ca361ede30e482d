/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libgpiobroker's line info: what the broker's Line object says of a line, read
 * now or again at each of its PropertiesChanged signals.
 */
#include "internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct gpiobroker_line_info {
	char *path, *chip, *name, *consumer, *alias, *request_label;
	unsigned int offset;
	bool used;
	enum gpiobroker_direction direction;
};

struct gpiobroker_line_info_watch {
	struct gpiobroker *b;
	sd_bus_slot *slot;
	char *path, *chip;
	unsigned int offset;
	gpiobroker_line_info_handler handler;
	void *userdata;
};

GB_EXPORT void gpiobroker_line_info_free(struct gpiobroker_line_info *info)
{
	if (!info)
		return;
	free(info->path);
	free(info->chip);
	free(info->name);
	free(info->consumer);
	free(info->alias);
	free(info->request_label);
	free(info);
}

static int dup_str(char **dst, const char *src)
{
	char *c = strdup(src ? src : "");

	if (!c)
		return -ENOMEM;
	free(*dst);
	*dst = c;
	return 0;
}

static enum gpiobroker_direction direction_of(const char *s)
{
	if (strcmp(s, "output") == 0)
		return GPIOBROKER_DIRECTION_OUTPUT;
	return strcmp(s, "input") == 0 ? GPIOBROKER_DIRECTION_INPUT : GPIOBROKER_DIRECTION_AS_IS;
}

struct gpiobroker_line_info *gb_line_info_from_properties(sd_bus_message *m, const char *path,
							  const char *chip, unsigned int offset,
							  int *ret)
{
	struct gpiobroker_line_info *info = calloc(1, sizeof(*info));
	int r;

	if (!info) {
		*ret = -ENOMEM;
		return NULL;
	}
	info->offset = offset;
	r = dup_str(&info->path, path);
	if (r >= 0)
		r = dup_str(&info->chip, chip);
	if (r >= 0)
		r = sd_bus_message_enter_container(m, 'a', "{sv}");
	while (r >= 0 && (r = sd_bus_message_enter_container(m, 'e', "sv")) > 0) {
		const char *key, *str;
		char **dst = NULL;
		int bval;

		r = sd_bus_message_read(m, "s", &key);
		if (r < 0)
			break;
		if (strcmp(key, "Used") == 0) {
			r = sd_bus_message_read(m, "v", "b", &bval);
			info->used = bval;
		} else if (strcmp(key, "Direction") == 0) {
			r = sd_bus_message_read(m, "v", "s", &str);
			if (r >= 0)
				info->direction = direction_of(str);
		} else if (strcmp(key, "Name") == 0 || strcmp(key, "Consumer") == 0 ||
			   strcmp(key, "Alias") == 0 || strcmp(key, "RequestLabel") == 0) {
			dst = key[0] == 'N' ? &info->name : key[0] == 'C' ? &info->consumer :
			      key[0] == 'A' ? &info->alias : &info->request_label;
			r = sd_bus_message_read(m, "v", "s", &str);
			if (r >= 0)
				r = dup_str(dst, str);
		} else {
			r = sd_bus_message_skip(m, "v");
		}
		if (r >= 0)
			r = sd_bus_message_exit_container(m);
	}
	/* A broker without one of them still gives a usable info: "" not NULL. */
	if (r >= 0)
		r = dup_str(&info->name, info->name);
	if (r >= 0)
		r = dup_str(&info->consumer, info->consumer);
	if (r >= 0)
		r = dup_str(&info->alias, info->alias);
	if (r >= 0)
		r = dup_str(&info->request_label, info->request_label);
	if (r < 0) {
		gpiobroker_line_info_free(info);
		*ret = r;
		return NULL;
	}
	*ret = 0;
	return info;
}

/* Properties.GetAll of the Line object at @path into a new info. */
static struct gpiobroker_line_info *read_line_info(struct gpiobroker *b, const char *path,
						   const char *chip, unsigned int offset, int *ret)
{
	sd_bus_error e = SD_BUS_ERROR_NULL;
	sd_bus_message *reply = NULL;
	struct gpiobroker_line_info *info = NULL;
	int r;

	r = sd_bus_call_method(gb_conn(b), GB_BUS_NAME, path, "org.freedesktop.DBus.Properties",
			       "GetAll", &e, &reply, "s", GB_IFACE_LINE);
	if (r >= 0)
		info = gb_line_info_from_properties(reply, path, chip, offset, &r);
	sd_bus_message_unref(reply);
	*ret = gb_result(b, &e, r);
	return info;
}

GB_EXPORT struct gpiobroker_line_info *gpiobroker_line_info_get(struct gpiobroker *b,
								const char *line)
{
	struct gpiobroker_line_info *info;
	char *path = NULL, *chip = NULL;
	unsigned int offset;
	int r;

	if (!b || !line) {
		errno = b ? -gb_fail(b, NULL, -EINVAL) : EINVAL;
		return NULL;
	}
	r = gpiobroker_find_line(b, line, &path, &chip, &offset);
	if (r < 0) {
		errno = -r;
		return NULL;
	}
	info = read_line_info(b, path, chip, offset, &r);
	free(path);
	free(chip);
	if (!info)
		errno = -r;
	return info;
}

GB_EXPORT bool gpiobroker_line_info_is_used(const struct gpiobroker_line_info *info)
{
	return info->used;
}

GB_EXPORT const char *gpiobroker_line_info_get_consumer(const struct gpiobroker_line_info *info)
{
	return info->consumer;
}

GB_EXPORT const char *gpiobroker_line_info_get_alias(const struct gpiobroker_line_info *info)
{
	return info->alias;
}

GB_EXPORT const char *gpiobroker_line_info_get_name(const struct gpiobroker_line_info *info)
{
	return info->name;
}

GB_EXPORT const char *gpiobroker_line_info_get_chip(const struct gpiobroker_line_info *info)
{
	return info->chip;
}

GB_EXPORT unsigned int gpiobroker_line_info_get_offset(const struct gpiobroker_line_info *info)
{
	return info->offset;
}

GB_EXPORT enum gpiobroker_direction
gpiobroker_line_info_get_direction(const struct gpiobroker_line_info *info)
{
	return info->direction;
}

GB_EXPORT const char *
gpiobroker_line_info_get_request_label(const struct gpiobroker_line_info *info)
{
	return info->request_label;
}

static int on_line_changed(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
	struct gpiobroker_line_info_watch *w = userdata;
	struct gpiobroker_line_info *info;
	const char *iface;
	int r;

	if (sd_bus_message_read(m, "s", &iface) < 0 || strcmp(iface, GB_IFACE_LINE) != 0)
		return 0;
	/* The whole info read again rather than patched from the signal: the handler
	 * sees one consistent state, and invalidated properties need no special case. */
	info = read_line_info(w->b, w->path, w->chip, w->offset, &r);
	if (!info)
		return 0;
	w->handler(w, info, w->userdata);
	gpiobroker_line_info_free(info);
	return 0;
}

GB_EXPORT struct gpiobroker_line_info_watch *
gpiobroker_line_info_watch(struct gpiobroker *b, const char *line,
			   gpiobroker_line_info_handler handler, void *userdata)
{
	struct gpiobroker_line_info_watch *w;
	int r;

	if (!b || !line || !handler) {
		errno = b ? -gb_fail(b, NULL, -EINVAL) : EINVAL;
		return NULL;
	}
	w = calloc(1, sizeof(*w));
	if (!w) {
		errno = -gb_fail(b, NULL, -ENOMEM);
		return NULL;
	}
	w->b = b;
	w->handler = handler;
	w->userdata = userdata;
	r = gpiobroker_find_line(b, line, &w->path, &w->chip, &w->offset);
	if (r >= 0)
		r = sd_bus_match_signal(b->bus, &w->slot, GB_BUS_NAME, w->path,
					"org.freedesktop.DBus.Properties", "PropertiesChanged",
					on_line_changed, w);
	if (r < 0) {
		free(w->path);
		free(w->chip);
		free(w);
		errno = -r;
		return NULL;
	}
	gb_clear_error(b);
	return w;
}

GB_EXPORT void gpiobroker_line_info_unwatch(struct gpiobroker_line_info_watch *w)
{
	if (!w)
		return;
	sd_bus_slot_unref(w->slot);
	free(w->path);
	free(w->chip);
	free(w);
}
