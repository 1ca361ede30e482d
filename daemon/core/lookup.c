/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Finding lines: by an integrator's alias (the gpio_export_link() model), a kernel
 * line name, CHIP:OFFSET or an object path (shared/linespec.h). Names need not be
 * unique across chips; an ambiguous one is refused rather than resolved to
 * whichever chip came first.
 */
#include "bus-error.h"
#include "lookup.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "access.h"
#include "broker.h"
#include "chip.h"
#include "org.gpiodbroker1.h"




int line_resolve_alias(Broker *b, const char *alias, Line **ret, sd_bus_error *error)
{
	const struct gb_policy_entry *e = gb_policy_find_alias(b->policy, alias);
	char where[300];
	Line *found = NULL;
	unsigned int n = 0;

	gb_policy_entry_describe(e, where, sizeof(where));
	for (Chip *c = b->chips; c; c = c->next)
		for (unsigned int i = 0; i < c->num_lines; i++) {
			struct gb_line_ident id;

			line_ident(&c->lines[i], &id);
			if (e->line_name ? id.line_name && strcmp(id.line_name, e->line_name) == 0
					 : gb_policy_entry_names_chip(e, c->name, c->label, id.chip_udev) &&
					   i == e->offsets[0]) {
				found = &c->lines[i];
				n++;
			}
		}
	if (!found)
		return gb_bus_error_setf(error, GB_ERROR_NOT_FOUND,
					 "alias '%s' of %s names a line that is not present", alias, where);
	if (n > 1)
		return gb_bus_error_setf(error, GB_ERROR_INVALID_ARGS,
					 "alias '%s' of %s matches %u lines; the policy must name one chip",
					 alias, where, n);
	*ret = found;
	return 0;
}

int line_resolve(Broker *b, const struct gb_linespec *ls, Line **ret, sd_bus_error *error)
{
	Line *found = NULL;
	Chip *c;
	unsigned int matches = 0;
	char others[128] = "";

	switch (ls->kind) {
	case GB_LINESPEC_PATH:
		found = line_from_path(b->chips, ls->text);
		if (!found)
			return gb_bus_error_setf(error, GB_ERROR_NOT_FOUND, "no line object %s", ls->text);
		break;
	case GB_LINESPEC_CHIP_OFFSET:
		c = chip_find(b->chips, ls->text);
		if (!c)
			return gb_bus_error_setf(error, GB_ERROR_NOT_FOUND,
						 "no chip named or labelled '%s'", ls->text);
		if (ls->offset >= c->num_lines)
			return gb_bus_error_setf(error, GB_ERROR_NOT_FOUND,
						 "chip %s has %u lines (0-%u); there is no line %u",
						 c->name, c->num_lines, c->num_lines - 1, ls->offset);
		found = &c->lines[ls->offset];
		break;
	case GB_LINESPEC_NAME:
		/* An integrator's alias (gpio_export_link) names the line first. */
		if (gb_policy_find_alias(b->policy, ls->text))
			return line_resolve_alias(b, ls->text, ret, error);
		/* Names need not be unique across chips; an ambiguous name is refused
		 * rather than resolved to whichever chip came first. */
		for (c = b->chips; c; c = c->next)
			for (unsigned int i = 0; i < c->num_lines; i++) {
				const char *n = gpiod_line_info_get_name(c->lines[i].info);
				size_t len = strlen(others);

				if (!n || strcmp(n, ls->text) != 0)
					continue;
				if (matches++ == 0)
					found = &c->lines[i];
				snprintf(others + len, sizeof(others) - len, "%s%s:%u",
					 len ? ", " : "", c->name, i);
			}
		if (!found)
			return gb_bus_error_setf(error, GB_ERROR_NOT_FOUND, "no line named '%s'",
						 ls->text);
		if (matches > 1)
			return gb_bus_error_setf(error, GB_ERROR_INVALID_ARGS,
						 "line name '%s' is not unique (%s); use CHIP:OFFSET",
						 ls->text, others);
		break;
	}
	*ret = found;
	return 0;
}

int line_resolve_spec(Broker *b, const char *spec, Line **ret, sd_bus_error *error)
{
	struct gb_linespec ls;
	int r = gb_linespec_parse(spec, &ls);

	if (r == -ENOMEM)
		return r;
	if (r < 0)
		return gb_bus_error_setf(error, GB_ERROR_INVALID_ARGS,
					 "'%s' is not a line: use an alias, a line name, CHIP:OFFSET or an object path",
					 spec);
	r = line_resolve(b, &ls, ret, error);
	gb_linespec_clear(&ls);
	return r;
}
