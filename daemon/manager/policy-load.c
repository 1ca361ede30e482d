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
#include <systemd/sd-daemon.h>

#include "access.h"
#include "announce.h"
#include "chip.h"
#include "log.h"
#include "macro.h"
#include "manager.h"
#include "org.gpiodbroker1.h"
#include "request.h"
#include "watch.h"

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
			char why[600];

			snprintf(why, sizeof(why), "revoked by a policy reload: %s", reason);
			request_emit(req, "Revoked", "s", why);
			request_close(req, why);
		}
	}
}

static unsigned int count_lines(const char *s)
{
	unsigned int n = 0;

	for (; s && *s; s++)
		n += *s == '\n';
	return n;
}

int manager_load_policy(Broker *b, bool initial, sd_bus_error *error)
{
	_cleanup_free_ char *errors = NULL;
	struct gb_policy *p;
	struct stat st;

	/* A typo in --policy-dir must not pass for an empty policy without a word. */
	if (stat(b->policy_dir, &st) < 0 && errno == ENOENT) {
		if (!initial) {
			log_error("policy directory %s does not exist; the policy in force stays",
				  b->policy_dir);
			return sd_bus_error_setf(error, GB_ERROR_POLICY,
						 "policy rejected, nothing changed:\n%s: no such "
						 "directory", b->policy_dir);
		}
		log_warning("policy directory %s does not exist: no policy (deny all but root)",
			    b->policy_dir);
	}
	p = gb_policy_load(b->policy_dir, &errors);
	if (p && check_against_chips(b, p, &errors) > 0) {
		gb_policy_free(p);
		p = NULL;
	}
	if (!p) {
		/* Every problem, each as file:line: message, logged a line each; the
		 * text itself stays whole for the ReloadPolicy reply. */
		for (const char *l = errors; l && *l;) {
			size_t len = strcspn(l, "\n");

			log_error("policy: %.*s", (int)len, l);
			l += len + (l[len] == '\n');
		}
		sd_notifyf(0, "STATUS=policy REJECTED (%u error%s, see journal): running with %s",
			   count_lines(errors), count_lines(errors) == 1 ? "" : "s",
			   initial ? "an empty policy" : "the previous policy");
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
	if (!errors)
		sd_notifyf(0, "STATUS=policy: %zu entr%s from %s", p->n_entries,
			   p->n_entries == 1 ? "y" : "ies", b->policy_dir);
	return 0;
}

