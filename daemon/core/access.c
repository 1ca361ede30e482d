/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "access.h"

#include <stdio.h>
#include <string.h>

#include "broker.h"
#include "chip.h"

void line_ident(const Line *l, struct gb_line_ident *id)
{
	*id = (struct gb_line_ident){
		.chip_name = l->chip->name,
		.chip_label = l->chip->label,
		.chip_udev = &l->chip->udev,
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

const char *access_policy_state_name(const Broker *b)
{
	switch (b->policy_status.state) {
	case POLICY_LOADED:
		return "loaded";
	case POLICY_REJECTED:
		return "rejected";
	default:
		return "empty";
	}
}

void access_explain_denial(const Broker *b, char *reason, size_t size)
{
	const struct policy_status *st = &b->policy_status;
	unsigned int n = gb_policy_count_lines(st->errors);
	char why[512];

	/* The entry the integrator wrote may be right there in the file: say that the
	 * file was not taken, or the denial reads as a missing entry. */
	if (st->state != POLICY_REJECTED)
		return;
	snprintf(why, sizeof(why), "%s", reason);
	snprintf(reason, size, "the policy in %s was rejected (%u error%s; see \"gpiobrokerctl "
		 "status\" or the journal), so the broker runs with %s: %s", b->policy_dir, n,
		 n == 1 ? "" : "s", st->loaded_usec ? "the previous policy" : "an empty policy", why);
}
