/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Is a SIGTERM the stop half of a restart? (manager.h) */
#include <inttypes.h>
#include <string.h>
#include <systemd/sd-bus.h>
#include <unistd.h>

#include "log.h"
#include "macro.h"
#include "manager.h"
#include "request.h"

#define SYSTEMD_NAME "org.freedesktop.systemd1"

bool manager_restart_queued(Broker *b)
{
	_cleanup_(sd_bus_error_free) sd_bus_error err = SD_BUS_ERROR_NULL;
	_cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL, *reply = NULL;
	_cleanup_free_ char *type = NULL;
	const char *unit, *job;
	bool stored = false;
	uint32_t id;
	int r;

	if (!b->state.fdstore || !b->bus)
		return false;
	for (Request *req = b->request_list; req && !stored; req = req->next)
		stored = req->stored;
	if (!stored)
		return false;
	/* systemd keeps a unit's fd store while a job is queued for it (sd_notify(3)),
	 * and a restart job stays queued while its stop half runs. A plain stop does
	 * not: then the store is flushed and the lines must go to their safe state. */
	r = sd_bus_message_new_method_call(b->bus, &m, SYSTEMD_NAME, "/org/freedesktop/systemd1",
					   SYSTEMD_NAME ".Manager", "GetUnitByPID");
	if (r >= 0)
		r = sd_bus_message_append(m, "u", (uint32_t)getpid());
	if (r >= 0)
		r = sd_bus_call(b->bus, m, 1000 * 1000, &err, &reply);
	if (r >= 0)
		r = sd_bus_message_read(reply, "o", &unit);
	if (r < 0) {
		log_info_errno(r, "not a restart as far as can be told (systemd: %s): releasing",
			       err.message ? err.message : strerror(-r));
		return false;
	}
	sd_bus_error_free(&err);
	m = sd_bus_message_unref(m);
	r = sd_bus_get_property(b->bus, SYSTEMD_NAME, unit, SYSTEMD_NAME ".Unit", "Job", &err,
				&m, "(uo)");
	if (r >= 0)
		r = sd_bus_message_read(m, "(uo)", &id, &job);
	if (r < 0 || id == 0) {
		if (r < 0)
			log_info_errno(r, "no job for %s (systemd: %s): releasing", unit,
				       err.message ? err.message : strerror(-r));
		return false;
	}
	sd_bus_error_free(&err);
	r = sd_bus_get_property_string(b->bus, SYSTEMD_NAME, job, SYSTEMD_NAME ".Job", "JobType",
				       &err, &type);
	if (r < 0) {
		log_info_errno(r, "job %s of %s (systemd: %s): releasing", job, unit,
			       err.message ? err.message : strerror(-r));
		return false;
	}
	log_debug("job %" PRIu32 " of %s: %s", id, unit, type);
	return strcmp(type, "restart") == 0 || strcmp(type, "try-restart") == 0;
}

