/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "journal.h"

#include <gpiod.h>

#include "access.h"
#include "broker.h"
#include "chip.h"
#include "org.gpiodbroker1.h"

void journal_message_id(struct gb_log_fields *f, const char *id)
{
	gb_log_field(f, "MESSAGE_ID", "%s", id);
}

void journal_line(struct gb_log_fields *f, const Line *l)
{
	const struct gb_policy_entry *e = line_policy_entry(l);
	const char *name = gpiod_line_info_get_name(l->info);

	gb_log_field(f, "GPIO_CHIP", "%s", l->chip->name);
	gb_log_field(f, "GPIO_OFFSET", "%u", l->offset);
	if (e && !e->group)
		gb_log_field(f, "GPIO_LINE", "%s", e->name);
	else if (name && *name)
		gb_log_field(f, "GPIO_LINE", "%s", name);
	if (e)
		gb_log_field(f, "POLICY_ENTRY", "%s:%u", e->file, e->lineno);
}

void journal_caller(struct gb_log_fields *f, uid_t uid, const char *name)
{
	gb_log_field(f, "CALLER_UID", "%u", (unsigned)uid);
	if (name && *name)
		gb_log_field(f, "CALLER_NAME", "%s", name);
}

void journal_denied(Broker *b, uid_t uid, const char *name, const char *what, const Line *l,
		    const char *req_path, const char *req_label, char *reason, size_t size)
{
	struct gb_log_fields f = {};

	access_explain_denial(b, reason, size);
	journal_message_id(&f, GB_MESSAGE_ACCESS_DENIED);
	journal_caller(&f, uid, name);
	if (req_path) {
		gb_log_field(&f, "REQUEST", "%s", req_path);
		gb_log_field(&f, "REQUEST_LABEL", "%s", req_label);
	}
	if (l)
		journal_line(&f, l);
	if (l)
		log_struct(LOG_NOTICE, &f, "uid %u (%s) denied %s %s:%u: %s", (unsigned)uid,
			   name ? name : "?", what, l->chip->name, l->offset, reason);
	else
		log_struct(LOG_NOTICE, &f, "uid %u (%s) denied %s %s: %s", (unsigned)uid,
			   name ? name : "?", what, req_path ? req_path : "", reason);
}
