/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Which chip an entry means (gpiod-broker.policy(5), "chip"). A chip's number moves
 * (a USB expander gets the next free one on each replug; a kernel upgrade can
 * renumber a board's chips) and two identical expanders share a label, so besides
 * its name or label an entry may name a chip by what udev says it is: one of the
 * /dev/gpio/by-path/ or /dev/gpio/by-id/ links, or udev properties. Those must
 * single out one chip: a match on two is an error that names both.
 */
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "policy.h"

#define BY_PATH "/dev/gpio/by-path/"
#define BY_ID   "/dev/gpio/by-id/"

static bool has_prefix(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

static bool udev_key_valid(const char *k, size_t len)
{
	if (!len || !((k[0] >= 'A' && k[0] <= 'Z') || k[0] == '_'))
		return false;
	for (size_t i = 0; i < len; i++)
		if (!((k[i] >= 'A' && k[i] <= 'Z') || (k[i] >= '0' && k[i] <= '9') || k[i] == '_'))
			return false;
	return true;
}

static int parse_props(struct gb_policy_entry *e, const char *value, char *err, size_t size)
{
	const char *p = value;

	while (*p) {
		const char *end = strchr(p, ','), *eq;
		size_t len;
		char *term, **n;

		if (!end)
			end = p + strlen(p);
		while (p < end && (*p == ' ' || *p == '\t'))
			p++;
		len = (size_t)(end - p);
		while (len && (p[len - 1] == ' ' || p[len - 1] == '\t'))
			len--;
		eq = memchr(p, '=', len);
		if (!len) {
			snprintf(err, size, "'chip' has an empty item in '%s'", value);
			return -EINVAL;
		}
		if (!eq || !udev_key_valid(p, (size_t)(eq - p)) || eq + 1 == p + len) {
			snprintf(err, size, "'chip': '%.*s' is not a udev property match "
				 "(KEY=VALUE, the key in capitals, for example ID_SERIAL_SHORT=A12345)",
				 (int)len, p);
			return -EINVAL;
		}
		term = strndup(p, len);
		n = realloc(e->chip_props, (e->n_chip_props + 2) * sizeof(char *));
		if (!term || !n) {
			free(term);
			if (n)
				e->chip_props = n;
			return -ENOMEM;
		}
		e->chip_props = n;
		e->chip_props[e->n_chip_props++] = term;
		e->chip_props[e->n_chip_props] = NULL;
		p = *end ? end + 1 : end;
		if (*end && !*p) {
			snprintf(err, size, "'chip' has an empty item in '%s'", value);
			return -EINVAL;
		}
	}
	return 0;
}

int gb_policy_parse_chip(struct gb_policy_entry *e, const char *value, char *err, size_t size)
{
	/* Kept even when it is wrong: the entry does name a chip, and saying "which
	 * line?" as well would only add noise. */
	e->chip = strdup(value);
	if (!e->chip)
		return -ENOMEM;
	if (strchr(value, '=')) {
		e->chip_by = GB_CHIP_BY_PROPS;
		if (parse_props(e, value, err, size) < 0)
			return -EINVAL;
	} else if (value[0] == '/') {
		if ((!has_prefix(value, BY_PATH) || !value[strlen(BY_PATH)]) &&
		    (!has_prefix(value, BY_ID) || !value[strlen(BY_ID)])) {
			snprintf(err, size, "'chip' = '%s': a path must be a link under "
				 BY_PATH " or " BY_ID " (or name the chip gpiochipN, by label, "
				 "or by udev properties, KEY=VALUE)", value);
			return -EINVAL;
		}
		e->chip_by = GB_CHIP_BY_LINK;
	} else {
		e->chip_by = GB_CHIP_BY_NAME;
	}
	return 0;
}

const char *gb_chip_udev_get(const struct gb_chip_udev *u, const char *key)
{
	size_t len = strlen(key);

	for (size_t i = 0; u && u->props && u->props[i]; i++)
		if (strncmp(u->props[i], key, len) == 0 && u->props[i][len] == '=')
			return u->props[i] + len + 1;
	return NULL;
}

bool gb_policy_entry_names_chip(const struct gb_policy_entry *e, const char *name,
				const char *label, const struct gb_chip_udev *udev)
{
	if (!e->chip)
		return false;
	switch (e->chip_by) {
	case GB_CHIP_BY_NAME:
		return fnmatch(e->chip, name, 0) == 0 || (label && fnmatch(e->chip, label, 0) == 0);
	case GB_CHIP_BY_LINK:
		for (size_t i = 0; udev && udev->links && udev->links[i]; i++)
			if (fnmatch(e->chip, udev->links[i], 0) == 0)
				return true;
		return false;
	case GB_CHIP_BY_PROPS:
		for (size_t i = 0; i < e->n_chip_props; i++) {
			const char *eq = strchr(e->chip_props[i], '=');
			char key[128];
			const char *v;

			snprintf(key, sizeof(key), "%.*s", (int)(eq - e->chip_props[i]), e->chip_props[i]);
			v = gb_chip_udev_get(udev, key);
			if (!v || fnmatch(eq + 1, v, 0) != 0)
				return false;
		}
		return true;
	}
	return false;
}
