/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The D-Bus face of direct requests (core/direct.h): Request.GetLineFds() and the
 * Direct and RevokePending properties.
 */
#include <errno.h>
#include <string.h>

#include "bus-error.h"
#include "access.h"
#include "broker.h"
#include "bus.h"
#include "client.h"
#include "log.h"
#include "org.gpiodbroker1.h"
#include "request.h"

/* The fds are the request itself: only the connection that made it, and only
 * while the policy still says "direct = yes" for each line. */
static int authorize_fds(Request *req, sd_bus_message *m, sd_bus_error *error)
{
	struct gb_caller caller;
	char msg[512];
	Client *c;
	int r = client_get(req->broker, m, &c, error);

	if (r < 0)
		return r;
	if (c != req->client) {
		log_notice("uid %u (%s) denied the line fds of request %s", (unsigned)c->uid, c->name,
			   req->path);
		return gb_bus_error_setf(error, GB_ERROR_PERMISSION,
					 "request %s belongs to another connection", req->path);
	}
	if (!req->direct)
		return gb_bus_error_setf(error, GB_ERROR_INVALID_ARGS,
					 "request %s is not direct; ask for it with the Request "
					 "option direct = true", req->path);
	if (req->revoke_pending)
		return gb_bus_error_setf(error, GB_ERROR_PERMISSION, "%s", req->revoke_pending);
	client_caller(c, &caller);
	if (!direct_lines_allowed(req, &caller, msg, sizeof(msg)))
		return gb_bus_error_setf(error, GB_ERROR_PERMISSION, "%s", msg);
	if (req->chip_gone)
		return gb_bus_error_setf(error, GB_ERROR_CHIP_GONE,
					 "request %s lost a chip that was unplugged; release it",
					 req->path);
	return 0;
}

int method_get_line_fds(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
	Request *req = userdata;
	sd_bus_message *reply = NULL;
	int r = authorize_fds(req, m, error);

	if (r < 0)
		return r;
	/* sd-bus sends a dup of each fd: the broker keeps its own. With each, the
	 * offsets in the kernel request's order, which is the order of the bits of
	 * GPIO_V2_LINE_GET/SET_VALUES. */
	r = sd_bus_message_new_method_return(m, &reply);
	if (r >= 0)
		r = sd_bus_message_open_container(reply, 'a', "(sauh)");
	for (unsigned int k = 0; r >= 0 && k < req->n_chips; k++) {
		const LineReq *lr = &req->chips[k].lreq;

		if (!lreq_active(lr))
			continue;
		r = sd_bus_message_open_container(reply, 'r', "sauh");
		if (r >= 0)
			r = sd_bus_message_append(reply, "s", req->chips[k].chip_name);
		if (r >= 0)
			r = sd_bus_message_append_array(reply, 'u', lr->kern_offsets,
							lr->n_kern * sizeof(uint32_t));
		if (r >= 0)
			r = sd_bus_message_append(reply, "h", lreq_fd(lr));
		if (r >= 0)
			r = sd_bus_message_close_container(reply);
	}
	if (r >= 0)
		r = sd_bus_message_close_container(reply);
	if (r >= 0)
		r = sd_bus_send(NULL, reply, NULL);
	sd_bus_message_unref(reply);
	if (r >= 0)
		log_info("request %s: line fds handed to its owner %s", req->path, req->client->name);
	return r;
}

int bus_request_direct_get(sd_bus *bus, const char *path, const char *iface, const char *prop,
			   sd_bus_message *reply, void *userdata, sd_bus_error *error)
{
	Request *req = userdata;

	if (strcmp(prop, "Direct") == 0)
		return sd_bus_message_append(reply, "b", req->direct);
	if (strcmp(prop, "RevokePending") == 0)
		return sd_bus_message_append(reply, "s", req->revoke_pending ? req->revoke_pending : "");
	return -ENOENT;
}
