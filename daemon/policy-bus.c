/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The policy as the broker applies it: loading and reloading (SIGHUP or
 * Manager.ReloadPolicy), revoking requests a new policy no longer allows, aliases,
 * and Manager.GetAccess so clients can explain a denial before they hit it.
 */
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "broker.h"
#include "errors.h"
#include "log.h"
#include "linespec.h"
#include "macro.h"

void line_ident(const Line *l, struct gb_line_ident *id)
{
	*id = (struct gb_line_ident){
		.chip_name = l->chip->name,
		.chip_label = l->chip->label,
		.offset = l->offset,
		.line_name = gpiod_line_info_get_name(l->info),
	};
}

void client_caller(const Client *c, struct gb_caller *caller)
{
	*caller = (struct gb_caller){ c->uid, c->gid, c->groups, c->n_groups };
}

void request_caller(const Request *r, struct gb_caller *caller)
{
	*caller = (struct gb_caller){ r->uid, r->gid, r->groups, r->n_groups };
}

const struct gb_policy_entry *line_policy_entry(const Line *l)
{
	struct gb_line_ident id;

	line_ident(l, &id);
	return gb_policy_match(l->chip->broker->policy, &id, NULL, 0);
}

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
					 : (fnmatch(e->chip, c->name, 0) == 0 ||
					    fnmatch(e->chip, c->label, 0) == 0) && i == e->offsets[0]) {
				found = &c->lines[i];
				n++;
			}
		}
	if (!found)
		return sd_bus_error_setf(error, GB_ERROR_NOT_FOUND,
					 "alias '%s' of %s names a line that is not present", alias, where);
	if (n > 1)
		return sd_bus_error_setf(error, GB_ERROR_INVALID_ARGS,
					 "alias '%s' of %s matches %u lines; the policy must name one chip",
					 alias, where, n);
	*ret = found;
	return 0;
}

/* Two entries covering one line can only be seen with the hardware present. */
static int check_against_chips(Broker *b, const struct gb_policy *p, char **errors)
{
	int n = 0;

	for (Chip *c = b->chips; c; c = c->next)
		for (unsigned int i = 0; i < c->num_lines; i++) {
			struct gb_line_ident id;
			char msg[700];

			line_ident(&c->lines[i], &id);
			if (!gb_policy_match(p, &id, msg, sizeof(msg)) && msg[0]) {
				size_t old = *errors ? strlen(*errors) : 0;
				char *nn = realloc(*errors, old + strlen(msg) + 2);

				if (nn) {
					sprintf(nn + old, "%s\n", msg);
					*errors = nn;
				}
				n++;
			}
		}
	return n;
}

static void emit_all_lines_changed(Broker *b)
{
	for (Chip *c = b->chips; c; c = c->next)
		for (unsigned int i = 0; i < c->num_lines; i++)
			sd_bus_emit_properties_changed(b->bus, c->lines[i].path, GB_IFACE_LINE,
						       "Alias", "Policy", NULL);
}

bool request_policy_allows(Request *r, char *why, size_t size)
{
	struct gb_caller caller;
	bool denied = false;

	request_caller(r, &caller);
	for (unsigned int i = 0; i < r->n_lines; i++) {
		ReqLine *rl = &r->lines[i];
		const struct gb_policy_entry *e;
		struct gb_line_ident id;

		if (!rl->line)
			continue;
		e = line_policy_entry(rl->line);
		if (e)
			rl->safe_state = e->safe_state;
		line_ident(rl->line, &id);
		if (!denied && gb_policy_check_request(r->broker->policy, &id, &caller, &rl->config,
						       r->persistent, r->label, why, size) < 0)
			denied = true;
	}
	return !denied;
}

/* Requests the new policy no longer allows are revoked: lines to their safe
 * state, the owner told why. */
static void revalidate_requests(Broker *b)
{
	Request *r, *next;

	for (r = b->request_list; r; r = next) {
		char reason[512] = "";

		next = r->next;
		if (!request_policy_allows(r, reason, sizeof(reason))) {
			char why[600];

			snprintf(why, sizeof(why), "revoked by a policy reload: %s", reason);
			request_emit(r, "Revoked", "s", why);
			request_free(r, why);
		}
	}
}

int broker_load_policy(Broker *b, bool initial, sd_bus_error *error)
{
	_cleanup_free_ char *errors = NULL;
	struct gb_policy *p;

	p = gb_policy_load(b->policy_dir, &errors);
	if (p && check_against_chips(b, p, &errors) > 0) {
		gb_policy_free(p);
		p = NULL;
	}
	if (!p) {
		/* Every problem, each as file:line: message. */
		for (char *l = errors, *nl; l && *l; l = nl) {
			nl = strchr(l, '\n');
			if (nl)
				*nl++ = '\0';
			log_error("policy: %s", l);
		}
		if (!initial) {
			log_error("policy in %s rejected; the policy in force stays", b->policy_dir);
			return sd_bus_error_setf(error, GB_ERROR_POLICY, "policy rejected, nothing changed:\n%s",
						 errors ? errors : "out of memory");
		}
		log_error("policy in %s rejected: starting with an empty policy (deny all but root)",
			  b->policy_dir);
		p = gb_policy_new();
		if (!p)
			return -ENOMEM;
	}
	if (b->policy) {
		struct gb_policy *old = b->policy;

		b->policy = p;
		revalidate_requests(b);
		watch_revalidate(b);
		gb_policy_free(old);
		emit_all_lines_changed(b);
	} else {
		b->policy = p;
	}
	log_info("policy: %zu entr%s from %s%s", p->n_entries, p->n_entries == 1 ? "y" : "ies",
		 b->policy_dir, p->root_bypass ? " (root bypasses it)" : "");
	return 0;
}

/* --- D-Bus ------------------------------------------------------------------- */

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
	r = broker_load_policy(b, false, error);
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
	char reason[512], where[300] = "", ambiguous[600];
	bool may, bypass;
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
		char wreason[512];
		bool may_watch = gb_policy_check_watch(b->policy, &id, &caller, &max, wreason,
						       sizeof(wreason)) == 0;

		r = sd_bus_message_append(reply, "{sv}{sv}{sv}", "may-watch", "b", may_watch,
					  "max-watchers", "u", max,
					  "watch-reason", "s", may_watch ? "" : wreason);
	}
	if (r >= 0 && e) {
		r = sd_bus_message_append(reply, "{sv}{sv}{sv}{sv}{sv}",
					  "direction-may-change", "b", e->direction_may_change,
					  "persistent", "b", e->persistent,
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
