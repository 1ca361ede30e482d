/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Direct requests (request.h): the owner holds the kernel line fds too. */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bus-error.h"
#include "access.h"
#include "announce.h"
#include "broker.h"
#include "chip.h"
#include "log.h"
#include "org.gpiodbroker1.h"
#include "request.h"

int direct_check_request(Broker *b, const struct gb_caller *caller, unsigned int n,
			 Line **lines, sd_bus_error *error)
{
	char msg[512], what[128];

	for (unsigned int i = 0; i < n; i++) {
		struct gb_line_ident id;

		line_ident(lines[i], &id);
		if (gb_policy_check_direct(b->policy, &id, caller, msg, sizeof(msg)) < 0) {
			log_notice("uid %u denied a direct request of %s:%u: %s", (unsigned)caller->uid,
				   id.chip_name, id.offset, msg);
			return gb_bus_error_setf(error, GB_ERROR_PERMISSION, "%s", msg);
		}
		if (lines[i]->n_watchers) {
			line_describe(lines[i], what, sizeof(what));
			return gb_bus_error_setf(error, GB_ERROR_BUSY,
						 "line %s has %u watcher(s): a direct request leaves "
						 "its edges to its owner alone, so it takes only a line "
						 "nobody watches", what, lines[i]->n_watchers);
		}
		if (lines[i]->taps) {
			line_describe(lines[i], what, sizeof(what));
			return gb_bus_error_setf(error, GB_ERROR_BUSY,
						 "line %s has an edge action in the policy: a direct "
						 "request leaves its edges to its owner alone, so it "
						 "takes only a line no action observes", what);
		}
	}
	return 0;
}

bool direct_lines_allowed(Request *req, const struct gb_caller *caller, char *why, size_t size)
{
	for (unsigned int i = 0; i < req->n_lines; i++) {
		struct gb_line_ident id;

		if (!req->lines[i].line)
			continue;
		line_ident(req->lines[i].line, &id);
		if (gb_policy_check_direct(req->broker->policy, &id, caller, why, size) < 0)
			return false;
	}
	return true;
}

/* The policy allows the request, and its direct fds. */
static bool allows(Request *req, char *why, size_t size)
{
	struct gb_caller caller;

	if (!request_policy_allows(req, why, size))
		return false;
	request_caller(req, &caller);
	return direct_lines_allowed(req, &caller, why, size);
}

void direct_revalidate(Request *req)
{
	char reason[512] = "", why[700];

	if (allows(req, reason, sizeof(reason))) {
		if (!req->revoke_pending)
			return;
		log_info("request %s (\"%s\"): the policy allows it again", req->path, req->label);
		free(req->revoke_pending);
		req->revoke_pending = NULL;
		announce_changed(req->broker, req->path, GB_IFACE_REQUEST, "RevokePending", NULL);
		return;
	}
	/* The kernel has no revoke for a line fd: the owner keeps its copy whatever the
	 * broker does with its own, so the request stays until the owner lets go. */
	snprintf(why, sizeof(why), "a policy reload would revoke it, but a direct request cannot "
		 "be taken back; it ends when its owner releases it or leaves the bus: %s", reason);
	if (req->revoke_pending && strcmp(req->revoke_pending, why) == 0)
		return;
	log_warning("request %s (\"%s\", uid %u): %s", req->path, req->label, (unsigned)req->uid, why);
	free(req->revoke_pending);
	req->revoke_pending = strdup(why);
	request_emit(req, "RevokePending", "s", why);
	announce_changed(req->broker, req->path, GB_IFACE_REQUEST, "RevokePending", NULL);
}
