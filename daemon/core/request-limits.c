/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Per-client and per-uid limits: one caller must not be able to make the broker
 * hold without bound the things it cannot give back on its own: kernel line
 * requests (one fd each), lines, and persistent requests, which outlive their
 * connection and so are bounded per uid rather than per connection.
 *
 * Counts are taken from the request lists when a request is made, not kept in
 * counters: nothing to get out of step when a request goes away by any of its
 * paths (Release, owner gone, revoked, chip gone, shutdown), and a request freed
 * is free for the limit at once. The lists are short (bounded by these limits).
 *
 * Root is not exempt: the limits protect the broker (its fds and memory) from a
 * runaway program, and a runaway program running as root is just as likely.
 * An integrator who wants more raises the limit, or sets it to 0 (no limit).
 *
 * No limit on pending calls: the broker answers each call before it reads the
 * next one (it never defers a reply). On the bus, the bus daemon bounds what a
 * client can have outstanding (max_replies_per_connection, max_incoming_bytes);
 * on a private connection, core/conn.c stops reading a client that does not read
 * its replies.
 */

#include "bus-error.h"
#include "request-limits.h"

#include "broker.h"
#include "client.h"
#include "log.h"
#include "org.gpiodbroker1.h"
#include "request.h"

int limits_check_request(Broker *b, const Client *c, unsigned int n_lines, bool persistent,
			 sd_bus_error *error)
{
	const struct gb_limits *lim = &b->limits;
	unsigned int requests = 0, lines = 0;

	if (persistent) {
		unsigned int held = 0;

		if (!lim->max_persistent_per_uid)
			return 0;
		for (const Request *req = b->request_list; req; req = req->next)
			if (req->persistent && req->uid == c->uid)
				held++;
		if (held >= lim->max_persistent_per_uid) {
			log_notice("uid %u (%s) refused a persistent request: limit of %u reached",
				   (unsigned)c->uid, c->name, lim->max_persistent_per_uid);
			return gb_bus_error_setf(error, GB_ERROR_LIMITS_EXCEEDED,
						 "uid %u already holds %u persistent request(s), the "
						 "limit (--max-persistent-per-uid); release one first",
						 (unsigned)c->uid, held);
		}
		return 0;
	}

	/* Managed requests of this connection (the list also has the persistent
	 * requests it subscribed to: those count for their uid, above). */
	for (const Request *req = c->requests; req; req = req->client_next)
		if (!req->persistent) {
			requests++;
			lines += req->n_lines;
		}
	if (lim->max_requests_per_client && requests >= lim->max_requests_per_client) {
		log_notice("%s (uid %u) refused a request: limit of %u requests reached", c->name,
			   (unsigned)c->uid, lim->max_requests_per_client);
		return gb_bus_error_setf(error, GB_ERROR_LIMITS_EXCEEDED,
					 "this connection already holds %u request(s), the limit "
					 "(--max-requests-per-client); release one first", requests);
	}
	if (lim->max_lines_per_client && lines + n_lines > lim->max_lines_per_client) {
		log_notice("%s (uid %u) refused a request: %u + %u lines over the limit of %u",
			   c->name, (unsigned)c->uid, lines, n_lines, lim->max_lines_per_client);
		return gb_bus_error_setf(error, GB_ERROR_LIMITS_EXCEEDED,
					 "this connection holds %u line(s); %u more would pass the "
					 "limit of %u (--max-lines-per-client)",
					 lines, n_lines, lim->max_lines_per_client);
	}
	return 0;
}
