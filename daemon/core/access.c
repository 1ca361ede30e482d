/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "access.h"

#include "broker.h"
#include "chip.h"

void line_ident(const Line *l, struct gb_line_ident *id)
{
	*id = (struct gb_line_ident){
		.chip_name = l->chip->name,
		.chip_label = l->chip->label,
		.offset = l->offset,
		.line_name = gpiod_line_info_get_name(l->info),
	};
}

const struct gb_policy_entry *line_policy_entry(const Line *l)
{
	struct gb_line_ident id;

	line_ident(l, &id);
	return gb_policy_match(l->chip->broker->policy, &id, NULL, 0);
}
