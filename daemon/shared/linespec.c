/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include "linespec.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

static bool all_digits(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return false;
	return true;
}

int gb_linespec_parse(const char *s, struct gb_linespec *out)
{
	const char *colon;
	unsigned long off;
	char *end;

	*out = (struct gb_linespec){ 0 };
	if (!s || !*s)
		return -EINVAL;

	if (s[0] == '/') {
		out->kind = GB_LINESPEC_PATH;
		out->text = strdup(s);
		return out->text ? 0 : -ENOMEM;
	}

	colon = strrchr(s, ':');
	if (colon && all_digits(colon + 1)) {
		if (colon == s)
			return -EINVAL;
		errno = 0;
		off = strtoul(colon + 1, &end, 10);
		if (errno || *end || off > UINT_MAX)
			return -EINVAL;
		out->kind = GB_LINESPEC_CHIP_OFFSET;
		out->text = strndup(s, colon - s);
		out->offset = off;
		return out->text ? 0 : -ENOMEM;
	}
	/* "chip:" (a chip with an empty offset) is a mistake, not a name. */
	if (colon && colon[1] == '\0')
		return -EINVAL;

	out->kind = GB_LINESPEC_NAME;
	out->text = strdup(s);
	return out->text ? 0 : -ENOMEM;
}

void gb_linespec_clear(struct gb_linespec *spec)
{
	free(spec->text);
	spec->text = NULL;
}
