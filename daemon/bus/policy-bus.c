/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The D-Bus face of the policy: Manager.ReloadPolicy() (root only) and
 * Manager.GetAccess(), so clients can explain a denial before they hit it.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "access.h"
#include "broker.h"
#include "bus.h"
#include "chip.h"
#include "client.h"
#include "log.h"
#include "lookup.h"
#include "macro.h"
#include "manager.h"
#include "org.gpiodbroker1.h"
#include "sliced.h"

int method_reload_policy(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
	Broker *b = userdata;
	Client *c;
	int r;

	r = client_get(b, m, &c, error);
	if (r < 0)
		return r;
	if (c->uid != 0) {
		log_notice("uid %u (%s) denied ReloadPolicy", (unsigned)c->uid, c->name);
		return sd_bus_error_set(error, GB_ERROR_PERMISSION, "only root may reload the policy");
	}
	r = manager_load_policy(b, false, error);
	if (r < 0)
		return r;
	return sd_bus_reply_method_return(m, NULL);
}

static int append_bits(sd_bus_message *reply, const char *key, unsigned int bits,
		       const char *(*name)(int), int max)
{
	int r = sd_bus_message_open_container(reply, 'e', "sv");

	if (r >= 0)
		r = sd_bus_message_append(reply, "s", key);
	if (r >= 0)
		r = sd_bus_message_open_container(reply, 'v', "as");
	if (r >= 0)
		r = sd_bus_message_open_container(reply, 'a', "s");
	for (int i = 0; r >= 0 && i <= max; i++)
		if (bits & GB_BIT(i))
			r = sd_bus_message_append(reply, "s", name(i));
	if (r >= 0)
		r = sd_bus_message_close_container(reply);
	if (r >= 0)
		r = sd_bus_message_close_container(reply);
	if (r >= 0)
		r = sd_bus_message_close_container(reply);
	return r;
}

static const char *dir_name(int v) { return gb_direction_name(v); }
static const char *edge_name(int v) { return gb_edge_name(v); }
static const char *bias_name(int v) { return gb_bias_name(v); }
static const char *drive_name(int v) { return gb_drive_name(v); }

int method_get_access(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
	Broker *b = userdata;
	const struct gb_policy_entry *e;
	struct gb_line_ident id;
	struct gb_caller caller;
	sd_bus_message *reply = NULL;
	const char *spec;
	char reason[1024], where[300] = "", ambiguous[600];
	_cleanup_(sd_bus_error_free) sd_bus_error sliced = SD_BUS_ERROR_NULL;
	bool may, bypass, in_slice;
	Slice *s;
	Client *c;
	Line *l;
	int r;

	r = sd_bus_message_read(m, "s", &spec);
	if (r < 0)
		return r;
	r = line_resolve_spec(b, spec, &l, error);
	if (r < 0)
		return r;
	r = client_get(b, m, &c, error);
	if (r < 0)
		return r;
	client_caller(c, &caller);
	line_ident(l, &id);
	e = gb_policy_match(b->policy, &id, ambiguous, sizeof(ambiguous));
	may = gb_policy_check_use(b->policy, &id, &caller, reason, sizeof(reason)) == 0;
	if (!may)
		access_explain_denial(b, reason, sizeof(reason));
	/* The policy may allow the line, but the slice's chip is where it is used now:
	 * say so before a Request or Watch meets the same Busy. */
	s = slice_of_line(b, l->chip->name, l->offset, NULL);
	in_slice = slice_check_line(b, l, &sliced) < 0;
	if (in_slice && may) {
		may = false;
		snprintf(reason, sizeof(reason), "%s", sliced.message);
	}
	bypass = caller.uid == 0 && b->policy->root_bypass;
	if (e)
		gb_policy_entry_describe(e, where, sizeof(where));

	r = sd_bus_message_new_method_return(m, &reply);
	if (r >= 0)
		r = sd_bus_message_open_container(reply, 'a', "{sv}");
	if (r >= 0)
		r = sd_bus_message_append(reply, "{sv}{sv}{sv}{sv}{sv}{sv}",
					  "line", "o", l->path,
					  "entry", "s", where,
					  "alias", "s", e && !e->group ? e->name : "",
					  "may-use", "b", may,
					  "root-bypass", "b", bypass,
					  "reason", "s", may ? "" : reason);
	if (r >= 0) {
		unsigned int max;
		char wreason[1024];
		bool may_watch = gb_policy_check_watch(b->policy, &id, &caller, &max, wreason,
						       sizeof(wreason)) == 0;

		if (!may_watch)
			access_explain_denial(b, wreason, sizeof(wreason));
		if (in_slice && may_watch) {
			may_watch = false;
			snprintf(wreason, sizeof(wreason), "%s", sliced.message);
		}
		r = sd_bus_message_append(reply, "{sv}{sv}{sv}{sv}",
					  "policy-state", "s", access_policy_state_name(b),
					  "may-watch", "b", may_watch,
					  "max-watchers", "u", max,
					  "watch-reason", "s", may_watch ? "" : wreason);
	}
	if (r >= 0)
		r = sd_bus_message_append(reply, "{sv}", "slice", "s", s ? s->def.name : "");
	if (r >= 0 && e) {
		r = sd_bus_message_append(reply, "{sv}{sv}{sv}{sv}{sv}{sv}",
					  "direction-may-change", "b", e->direction_may_change,
					  "persistent", "b", e->persistent,
					  "direct", "b", e->direct,
					  "label-prefix", "s", e->label_prefix ? e->label_prefix : "",
					  "safe-state", "s", gb_safe_state_name(e->safe_state),
					  "initial-value", "i", e->initial_value);
		if (r >= 0)
			r = append_bits(reply, "directions", e->directions, dir_name,
					GPIOD_LINE_DIRECTION_OUTPUT);
		if (r >= 0)
			r = append_bits(reply, "edges", e->edges, edge_name, GPIOD_LINE_EDGE_BOTH);
		if (r >= 0)
			r = append_bits(reply, "bias", e->biases, bias_name, GPIOD_LINE_BIAS_PULL_DOWN);
		if (r >= 0)
			r = append_bits(reply, "drive", e->drives, drive_name, GPIOD_LINE_DRIVE_OPEN_SOURCE);
	}
	if (r >= 0)
		r = sd_bus_message_close_container(reply);
	if (r >= 0)
		r = sd_bus_send(NULL, reply, NULL);
	sd_bus_message_unref(reply);
	return r;
}
