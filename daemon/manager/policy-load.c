/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The policy as the broker applies it (manager.h): loading and reloading (SIGHUP
 * or Manager.ReloadPolicy), and revoking the requests and watches a new policy no
 * longer allows.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <systemd/sd-daemon.h>

#include "bus-error.h"
#include "access.h"
#include "action.h"
#include "announce.h"
#include "chip.h"
#include "journal.h"
#include "log.h"
#include "macro.h"
#include "manager.h"
#include "org.gpiodbroker1.h"
#include "request.h"
#include "sliced.h"
#include "watch.h"

static void log_lines(int level, const char *text);

/* The chips present as the policy sees them: -ENOMEM or their number. */
static int chip_idents(Broker *b, struct gb_chip_ident **ret, const char ***ret_names)
{
	struct gb_chip_ident *ids;
	const char **names;
	size_t n = 0, total = 0, k = 0;

	for (Chip *c = b->chips; c; c = c->next)
		n++, total += c->num_lines;
	ids = calloc(n ? n : 1, sizeof(*ids));
	names = calloc(total ? total : 1, sizeof(*names));
	if (!ids || !names) {
		free(ids);
		free(names);
		return -ENOMEM;
	}
	n = 0;
	for (Chip *c = b->chips; c; c = c->next) {
		ids[n] = (struct gb_chip_ident){ c->name, c->label, c->num_lines, names + k,
						 &c->udev };
		for (unsigned int i = 0; i < c->num_lines; i++)
			names[k++] = gpiod_line_info_get_name(c->lines[i].info);
		n++;
	}
	*ret = ids;
	*ret_names = names;
	return (int)n;
}

/* The checks that need the hardware (shared/policy.h), on the chips present. */
static int check_against_chips(Broker *b, struct gb_policy *p, char **errors,
			       char **warnings)
{
	_cleanup_free_ struct gb_chip_ident *ids = NULL;
	_cleanup_free_ const char **names = NULL;
	int n = chip_idents(b, &ids, &names);

	if (n < 0) {
		gb_policy_add_error(errors, b->policy_dir, 0, "out of memory");
		return 1;
	}
	return gb_policy_check_identity(p, ids, n, errors) +
	       gb_policy_check_chips(p, ids, n, errors, warnings);
}

void manager_policy_chips_changed(Broker *b)
{
	_cleanup_free_ struct gb_chip_ident *ids = NULL;
	_cleanup_free_ const char **names = NULL;
	_cleanup_free_ char *errors = NULL;
	int n = chip_idents(b, &ids, &names);

	if (n < 0 || !b->policy)
		return;
	/* A chip that has just come may make an entry by identity match two: its
	 * lines are then refused, with this message, until one of them goes. */
	if (gb_policy_check_identity(b->policy, ids, n, &errors) > 0)
		log_lines(LOG_ERR, errors);
}

static void emit_all_lines_changed(Broker *b)
{
	for (Chip *c = b->chips; c; c = c->next)
		for (unsigned int i = 0; i < c->num_lines; i++)
			announce_changed(b, c->lines[i].path, GB_IFACE_LINE, "Alias", "Policy",
					 NULL);
}

/* Requests the new policy no longer allows are revoked: lines to their safe
 * state, the owner told why. */
static void revalidate_requests(Broker *b)
{
	Request *req, *next;

	for (req = b->request_list; req; req = next) {
		char reason[512] = "";

		next = req->next;
		if (req->direct) {
			direct_revalidate(req); /* reported, not revoked: see request.h */
			continue;
		}
		if (!request_policy_allows(req, reason, sizeof(reason))) {
			struct gb_log_fields f = {};
			char why[600];

			snprintf(why, sizeof(why), "revoked by a policy reload: %s", reason);
			journal_message_id(&f, GB_MESSAGE_REVOKED);
			request_journal(req, &f, true);
			log_struct(LOG_NOTICE, &f, "request %s (\"%s\") %s", req->path, req->label, why);
			request_emit(req, "Revoked", "s", why);
			request_close(req, why);
		}
	}
}

/* Each problem a line of its own in the journal; the text stays whole. */
static void log_lines(int level, const char *text)
{
	for (const char *l = text; l && *l;) {
		size_t len = strcspn(l, "\n");

		log_full_errno(level, 0, "policy: %.*s", (int)len, l);
		l += len + (l[len] == '\n');
	}
}

static void set_status(Broker *b, enum policy_state state, char **errors, char **warnings)
{
	struct policy_status *st = &b->policy_status;
	struct timespec ts;

	free(st->errors);
	free(st->warnings);
	st->state = state;
	st->errors = TAKE_PTR(*errors);
	st->warnings = TAKE_PTR(*warnings);
	if (state != POLICY_REJECTED && clock_gettime(CLOCK_REALTIME, &ts) == 0)
		st->loaded_usec = (uint64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
	announce_changed(b, GB_ROOT_PATH, GB_IFACE_MANAGER, "PolicyStatus", NULL);
}

/* Rejected whole: at start the broker runs with an empty policy, at a reload the
 * policy in force stays; either way loudly (journal, STATUS=, PolicyStatus). */
static int reject(Broker *b, bool initial, char **errors, char **warnings, sd_bus_error *error)
{
	struct gb_log_fields f = {};
	unsigned int n = gb_policy_count_lines(*errors);
	_cleanup_free_ char *text = NULL;

	log_lines(LOG_ERR, *errors);
	log_lines(LOG_WARNING, *warnings);
	sd_notifyf(0, "STATUS=policy REJECTED (%u error%s, see journal): running with %s", n,
		   n == 1 ? "" : "s", initial ? "an empty policy" : "the previous policy");
	journal_message_id(&f, GB_MESSAGE_POLICY_REJECTED);
	gb_log_field(&f, "POLICY_DIRECTORY", "%s", b->policy_dir);
	gb_log_field(&f, "POLICY_ERRORS", "%u", n);
	log_struct(LOG_ERR, &f, "policy in %s rejected (%u error%s): %s", b->policy_dir, n,
		   n == 1 ? "" : "s", initial ? "starting with an empty policy (deny all but root)" :
		   "the policy in force stays");
	if (error && asprintf(&text, "policy rejected, nothing changed:\n%s%s%s",
			      *errors ? *errors : "out of memory\n",
			      *warnings ? "warnings:\n" : "", *warnings ? *warnings : "") < 0)
		text = NULL;
	if (initial)
		b->policy_status.loaded_usec = 0;
	set_status(b, POLICY_REJECTED, errors, warnings);
	if (!initial)
		return gb_bus_error_setf(error, GB_ERROR_POLICY, "%s",
					 text ? text : "policy rejected, nothing changed");
	return 0;
}

int manager_load_policy(Broker *b, bool initial, sd_bus_error *error)
{
	_cleanup_free_ char *errors = NULL, *warnings = NULL;
	struct gb_log_fields f = {};
	struct gb_policy *p;
	struct stat st;
	int r;

	/* gpiod-broker-slices has made the policy's slices anew just before (its unit
	 * reloads first): read what it recorded, whatever becomes of the policy. */
	if (slices_load(b, !initial) < 0)
		log_error("cannot read the slices: out of memory");
	/* A typo in --policy-dir must not pass for an empty policy without a word. */
	if (stat(b->policy_dir, &st) < 0 && errno == ENOENT) {
		if (!initial) {
			gb_policy_add_error(&errors, b->policy_dir, 0, "no such directory");
			return reject(b, false, &errors, &warnings, error);
		}
		gb_policy_add_error(&warnings, b->policy_dir, 0,
				    "no such directory: no policy (deny all but root)");
	}
	p = gb_policy_load_from(b->policy_dir, NULL, &errors, &warnings);
	if (p && check_against_chips(b, p, &errors, &warnings) > 0) {
		gb_policy_free(p);
		p = NULL;
	}
	if (!p) {
		r = reject(b, initial, &errors, &warnings, error);
		if (!initial)
			return r;
		if (b->policy)
			return 0;
		b->policy = gb_policy_new();
		return b->policy ? 0 : -ENOMEM;
	}
	log_lines(LOG_WARNING, warnings);
	if (b->policy) {
		struct gb_policy *old = b->policy;

		b->policy = p;
		revalidate_requests(b);
		watch_revalidate(b);
		/* At start they begin after the restore (manager_restore()). */
		if (!initial)
			actions_apply(b);
		gb_policy_free(old);
		emit_all_lines_changed(b);
	} else {
		b->policy = p;
	}
	journal_message_id(&f, GB_MESSAGE_POLICY_LOADED);
	gb_log_field(&f, "POLICY_DIRECTORY", "%s", b->policy_dir);
	gb_log_field(&f, "POLICY_ENTRIES", "%zu", p->n_entries);
	gb_log_field(&f, "POLICY_WARNINGS", "%u", gb_policy_count_lines(warnings));
	log_struct(LOG_INFO, &f, "policy: %zu entr%s from %s%s", p->n_entries,
		   p->n_entries == 1 ? "y" : "ies", b->policy_dir,
		   p->root_bypass ? " (root bypasses it)" : "");
	sd_notifyf(0, "STATUS=policy: %zu entr%s from %s", p->n_entries,
		   p->n_entries == 1 ? "y" : "ies", b->policy_dir);
	set_status(b, p->n_entries ? POLICY_LOADED : POLICY_EMPTY, &errors, &warnings);
	return 0;
}
