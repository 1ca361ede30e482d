/* SPDX-License-Identifier: LGPL-2.1-or-later */
/**
 * @file linespec.h
 * @brief How callers name a line: by name, by chip and offset, or by object path.
 *
 * Accepted forms (the same in every method that takes a line):
 *   - "reset"                       a line name (gpio-line-names, or a policy alias)
 *   - "gpiochip0:3", "my-chip:3"    a chip (its name or label) and an offset
 *   - "/org/gpiodbroker1/chip/gpiochip0/line3"  the line's object path
 * A string "X:N" with N all decimal digits is always chip X, offset N.
 */
#ifndef GB_LINESPEC_H
#define GB_LINESPEC_H

#include <stdbool.h>

enum gb_linespec_kind {
	GB_LINESPEC_NAME,
	GB_LINESPEC_CHIP_OFFSET,
	GB_LINESPEC_PATH,
};

struct gb_linespec {
	enum gb_linespec_kind kind;
	/* NAME: the name; CHIP_OFFSET: the chip; PATH: the path. Points into a copy
	 * owned by the spec (gb_linespec_clear frees it). */
	char *text;
	unsigned int offset;
};

/** Parse @p s; 0, or -EINVAL for an empty string, an empty chip or a bad offset. */
int gb_linespec_parse(const char *s, struct gb_linespec *out);
void gb_linespec_clear(struct gb_linespec *spec);

#endif
