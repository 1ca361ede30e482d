/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What udev says of a chip, through sd-device: the /dev/gpio/by-path/ and by-id/
 * links (systemd 259's 60-gpiochip.rules, or our 61-gpiod-broker-gpiochip.rules
 * where systemd is older) and the properties they come from. The policy can name a
 * chip by them, and a chip that comes back with the same identity gets back what
 * it had (manager/hotplug.c).
 *
 * udev gives a new node its group before it writes its database, so a chip the
 * broker can already open may not be described yet: while udev runs and has not
 * finished with the chip, this says -EAGAIN and the caller tries again.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <systemd/sd-device.h>
#include <unistd.h>

#include "chip.h"
#include "log.h"
#include "macro.h"

static int strv_push(char ***v, size_t *n, char *s)
{
	char **nv;

	if (!s)
		return -ENOMEM;
	nv = realloc(*v, (*n + 2) * sizeof(char *));
	if (!nv) {
		free(s);
		return -ENOMEM;
	}
	nv[(*n)++] = s;
	nv[*n] = NULL;
	*v = nv;
	return 0;
}

void chip_udev_clear(Chip *c)
{
	strv_free(c->udev_links);
	strv_free(c->udev_props);
	free(c->identity);
	c->udev_links = c->udev_props = NULL;
	c->identity = NULL;
	c->udev = (struct gb_chip_udev){ NULL, NULL };
	c->by_path = c->by_id = c->serial = "";
}

static const char *first_link(char **links, const char *prefix)
{
	for (size_t i = 0; links && links[i]; i++)
		if (strncmp(links[i], prefix, strlen(prefix)) == 0)
			return links[i];
	return "";
}

static int collect(sd_device *d, char ***links, char ***props)
{
	size_t nl = 0, np = 0;
	const char *key, *value;

	for (const char *l = sd_device_get_devlink_first(d); l; l = sd_device_get_devlink_next(d))
		if (strv_push(links, &nl, strdup(l)) < 0)
			return -ENOMEM;
	for (key = sd_device_get_property_first(d, &value); key;
	     key = sd_device_get_property_next(d, &value)) {
		char *kv;

		if (asprintf(&kv, "%s=%s", key, value) < 0)
			return -ENOMEM;
		if (strv_push(props, &np, kv) < 0)
			return -ENOMEM;
	}
	return 0;
}

int udev_describe_fd(int fd, char ***links, char ***props)
{
	sd_device *d = NULL;
	struct stat st;
	int r;

	*links = *props = NULL;
	if (fstat(fd, &st) < 0 || !S_ISCHR(st.st_mode))
		return 0;
	if (sd_device_new_from_devnum(&d, 'c', st.st_rdev) < 0)
		return 0;
	/* Without udev (a container, a minimal image) nothing will ever describe it. */
	if (access("/run/udev/control", F_OK) == 0 && sd_device_get_is_initialized(d) == 0) {
		sd_device_unref(d);
		return -EAGAIN;
	}
	r = collect(d, links, props);
	sd_device_unref(d);
	if (r < 0) {
		strv_free(*links);
		strv_free(*props);
		*links = *props = NULL;
	}
	return r;
}

static int identify(Chip *c)
{
	const char *id;

	c->udev = (struct gb_chip_udev){ (const char *const *)c->udev_links,
					 (const char *const *)c->udev_props };
	c->by_path = first_link(c->udev_links, "/dev/gpio/by-path/");
	c->by_id = first_link(c->udev_links, "/dev/gpio/by-id/");
	c->serial = gb_chip_udev_get(&c->udev, "ID_SERIAL_SHORT") ?:
		    gb_chip_udev_get(&c->udev, "ID_SERIAL") ?: "";
	id = *c->by_id ? c->by_id : *c->by_path ? c->by_path : gb_chip_udev_get(&c->udev, "ID_PATH");
	if (id && asprintf(&c->identity, "%s %s", id, c->label ? c->label : "") < 0) {
		c->identity = NULL;
		return -ENOMEM;
	}
	return 0;
}

int chip_read_udev(Chip *c)
{
	int r;

	chip_udev_clear(c);
	r = udev_describe_fd(gpiod_chip_get_fd(c->gc), &c->udev_links, &c->udev_props);
	if (r == -EAGAIN)
		return r;
	if (r >= 0)
		r = identify(c);
	if (r < 0) {
		chip_udev_clear(c);
		log_warning_errno(r, "%s: cannot keep what udev says of it: %m", c->name);
		return 0;
	}
	if (c->identity)
		log_debug("%s: identity %s", c->name, c->identity);
	return 0;
}
