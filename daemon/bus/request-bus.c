/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The D-Bus face of requests: Manager.Request() and the Request objects.
 *
 * Handlers go read -> validate -> authorize -> act -> reply. Every argument is
 * checked strictly (sd-bus already checks the signature): unknown keys, wrong
 * variant types, out-of-range indices and impossible combinations are InvalidArgs
 * with a message that says what to change.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bus-error.h"
#include "access.h"
#include "announce.h"
#include "broker.h"
#include "chip.h"
#include "bus.h"
#include "client.h"
#include "journal.h"
#include "request-limits.h"
#include "log.h"
#include "lookup.h"
#include "macro.h"
#include "org.gpiodbroker1.h"
#include "request.h"
#include "watch.h"

int method_request(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
	Broker *b = userdata;
	_cleanup_free_ Line **lines = NULL;
	_cleanup_free_ struct gb_line_config *configs = NULL;
	unsigned int n = 0, cap = 0;
	const char *label;
	int persistent = 0, direct = 0;
	struct gb_caller caller;
	struct gb_event *initial = NULL;
	size_t n_initial = 0;
	Client *client;
	Request *req;
	char msg[512];
	int r;

	/* read */
	r = sd_bus_message_read(m, "s", &label);
	if (r < 0)
		return r;
	if (!gb_label_valid(label))
		return gb_bus_error_setf(error, GB_ERROR_INVALID_ARGS,
					 "label must be 1-%d printable ASCII characters",
					 GB_MAX_LABEL_LEN);
	r = sd_bus_message_enter_container(m, 'a', "(sa{sv})");
	if (r < 0)
		return r;
	while ((r = sd_bus_message_enter_container(m, 'r', "sa{sv}")) > 0) {
		const char *spec;

		if (n == GB_MAX_LINES_PER_REQUEST)
			return gb_bus_error_setf(error, GB_ERROR_INVALID_ARGS,
						 "at most %d lines per request", GB_MAX_LINES_PER_REQUEST);
		if (n == cap) {
			void *nl, *nc;

			cap = cap ? cap * 2 : 8;
			nl = realloc(lines, cap * sizeof(*lines));
			if (nl)
				lines = nl;
			nc = realloc(configs, cap * sizeof(*configs));
			if (nc)
				configs = nc;
			if (!nl || !nc)
				return -ENOMEM;
		}
		r = sd_bus_message_read(m, "s", &spec);
		if (r < 0)
			return r;
		r = line_resolve_spec(b, spec, &lines[n], error);
		if (r < 0)
			return r;
		gb_line_config_init(&configs[n]);
		r = bus_read_line_settings(m, &configs[n], spec, error);
		if (r < 0)
			return r;
		if (gb_line_config_validate(&configs[n], msg, sizeof(msg)) < 0)
			return gb_bus_error_setf(error, GB_ERROR_INVALID_ARGS, "%s: %s", spec, msg);
		r = sd_bus_message_exit_container(m);
		if (r < 0)
			return r;
		n++;
	}
	if (r < 0)
		return r;
	r = sd_bus_message_exit_container(m);
	if (r < 0)
		return r;
	if (n == 0)
		return sd_bus_error_set(error, GB_ERROR_INVALID_ARGS, "no lines given");

	r = bus_read_request_options(m, &persistent, &direct, error);
	if (r < 0)
		return r;

	/* authorize: who is asking comes from the bus; the policy says what they may
	 * do with each line. */
	r = client_get(b, m, &client, error);
	if (r < 0)
		return r;
	/* Limits before the policy: a caller over its limit is told so whatever it asks. */
	r = limits_check_request(b, client, n, persistent, error);
	if (r < 0)
		return r;
	client_caller(client, &caller);
	for (unsigned int i = 0; i < n; i++) {
		const struct gb_policy_entry *e;
		struct gb_line_ident id;

		line_ident(lines[i], &id);
		/* An output with no value asked for starts at the integrator's
		 * initial-value, if there is one; else inactive. */
		e = line_policy_entry(lines[i]);
		if (e && e->initial_value >= 0 && configs[i].direction == GPIOD_LINE_DIRECTION_OUTPUT &&
		    !(configs[i].set & GB_FIELD_VALUE))
			configs[i].value = e->initial_value;
		if (gb_policy_check_request(b->policy, &id, &caller, &configs[i], persistent, label,
					    msg, sizeof(msg)) < 0) {
			journal_denied(b, client->uid, client->name, "requesting", lines[i], NULL, NULL,
				       msg, sizeof(msg));
			return gb_bus_error_setf(error, GB_ERROR_PERMISSION, "%s", msg);
		}
	}
	if (direct && (r = direct_check_request(b, &caller, n, lines, error)) < 0)
		return r;

	/* act: a line the broker holds only for its watchers is handed over; if the
	 * request fails, the broker takes it back. Either way watchers hear the level
	 * from the new source. */
	for (unsigned int i = 0; i < n; i++)
		watch_line_yield(lines[i]);
	r = request_new(b, client, label, persistent, direct, n, lines, configs, &req, error);
	for (unsigned int i = 0; i < n; i++)
		watch_line_resync(lines[i]);
	if (r < 0)
		return r;
	/* The levels are read before the reply, so an edge the caller makes after it is
	 * reported as an edge; they are sent after the reply (the client knows the
	 * object) and before any edge (read only by the event loop, after this). */
	if (request_read_initial_state(req, &initial, &n_initial) < 0)
		log_warning("request %s: out of memory: no initial state", req->path);
	r = sd_bus_reply_method_return(m, "o", req->path);
	request_push_initial_state(req, initial, n_initial);
	return r;
}

/* --- Request objects ------------------------------------------------------- */

/* Only the owning connection may use a managed request; a persistent one belongs
 * to its uid (and root). */
static int authorize(Request *req, sd_bus_message *m, Client **ret, sd_bus_error *error)
{
	Client *c;
	int ret_code = client_get(req->broker, m, &c, error);

	if (ret_code < 0)
		return ret_code;
	if (req->persistent ? (c->uid == req->uid || c->uid == 0) : c == req->client) {
		struct gb_caller caller;
		char msg[512];

		/* Owning it is not enough: the policy must still let this caller use
		 * each line (a reload revokes what it no longer allows). */
		client_caller(c, &caller);
		for (unsigned int i = 0; i < req->n_lines; i++) {
			struct gb_line_ident id;

			if (!req->lines[i].line)
				continue;
			line_ident(req->lines[i].line, &id);
			if (gb_policy_check_use(req->broker->policy, &id, &caller, msg, sizeof(msg)) < 0) {
				journal_denied(req->broker, c->uid, c->name, "using",
					       req->lines[i].line, req->path, req->label, msg,
					       sizeof(msg));
				return gb_bus_error_setf(error, GB_ERROR_PERMISSION, "%s", msg);
			}
		}
		if (ret)
			*ret = c;
		return 0;
	}
	log_notice("uid %u (%s) denied access to request %s", (unsigned)c->uid, c->name, req->path);
	if (req->persistent)
		return gb_bus_error_setf(error, GB_ERROR_PERMISSION,
					 "request %s belongs to uid %u", req->path, (unsigned)req->uid);
	return gb_bus_error_setf(error, GB_ERROR_PERMISSION,
				 "request %s belongs to another connection", req->path);
}

static int read_indices(sd_bus_message *m, Request *req, unsigned int *n, unsigned int **ret)
{
	const void *data;
	size_t size;
	int ret_code;

	ret_code = sd_bus_message_read_array(m, 'u', &data, &size);
	if (ret_code < 0)
		return ret_code;
	*n = size / sizeof(uint32_t);
	*ret = malloc((*n ? *n : req->n_lines) * sizeof(unsigned int) + 1);
	if (!*ret)
		return -ENOMEM;
	if (*n) {
		memcpy(*ret, data, size);
	} else {
		/* Empty means every line of the request, in request order. */
		*n = req->n_lines;
		for (unsigned int i = 0; i < req->n_lines; i++)
			(*ret)[i] = i;
	}
	return 0;
}

static int method_get_values(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
	Request *req = userdata;
	_cleanup_free_ unsigned int *idx = NULL;
	_cleanup_free_ bool *values = NULL;
	sd_bus_message *reply = NULL;
	unsigned int n;
	int ret;

	ret = read_indices(m, req, &n, &idx);
	if (ret < 0)
		return ret;
	ret = authorize(req, m, NULL, error);
	if (ret < 0)
		return ret;
	values = calloc(n + 1, sizeof(bool));
	if (!values)
		return -ENOMEM;
	ret = request_get_values(req, n, idx, values, error);
	if (ret < 0)
		return ret;
	ret = sd_bus_message_new_method_return(m, &reply);
	if (ret >= 0)
		ret = sd_bus_message_open_container(reply, 'a', "b");
	for (unsigned int i = 0; ret >= 0 && i < n; i++)
		ret = sd_bus_message_append(reply, "b", (int)values[i]);
	if (ret >= 0)
		ret = sd_bus_message_close_container(reply);
	if (ret >= 0)
		ret = sd_bus_send(NULL, reply, NULL);
	sd_bus_message_unref(reply);
	return ret;
}

/* Read "a(ub)" index/value pairs. */
static int read_index_values(sd_bus_message *m, unsigned int *n, unsigned int **idx, bool **vals)
{
	unsigned int cap = 0;
	int r;

	*n = 0;
	r = sd_bus_message_enter_container(m, 'a', "(ub)");
	if (r < 0)
		return r;
	for (;;) {
		uint32_t i;
		int v;

		r = sd_bus_message_read(m, "(ub)", &i, &v);
		if (r <= 0)
			break;
		if (*n == GB_MAX_LINES_PER_REQUEST)
			return -E2BIG;
		if (*n == cap) {
			void *a, *b;

			cap = cap ? cap * 2 : 8;
			a = realloc(*idx, cap * sizeof(**idx));
			if (a)
				*idx = a;
			b = realloc(*vals, cap * sizeof(**vals));
			if (b)
				*vals = b;
			if (!a || !b)
				return -ENOMEM;
		}
		(*idx)[*n] = i;
		(*vals)[*n] = v;
		(*n)++;
	}
	if (r < 0)
		return r;
	return sd_bus_message_exit_container(m);
}

static int method_set_values(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
	Request *req = userdata;
	_cleanup_free_ unsigned int *idx = NULL;
	_cleanup_free_ bool *vals = NULL;
	unsigned int n;
	int ret;

	ret = read_index_values(m, &n, &idx, &vals);
	if (ret == -E2BIG)
		return sd_bus_error_set(error, GB_ERROR_INVALID_ARGS, "too many values");
	if (ret < 0)
		return ret;
	if (n == 0)
		return sd_bus_error_set(error, GB_ERROR_INVALID_ARGS, "no values given");
	ret = authorize(req, m, NULL, error);
	if (ret < 0)
		return ret;
	ret = request_set_values(req, n, idx, vals, error);
	if (ret < 0)
		return ret;
	return sd_bus_reply_method_return(m, NULL);
}

static int do_reconfigure(sd_bus_message *m, Request *req, unsigned int n, unsigned int *idx,
			  struct gb_line_config *updates, sd_bus_error *error)
{
	_cleanup_free_ bool *had_edges = NULL, *now_edges = NULL;
	struct gb_event *initial = NULL;
	size_t n_initial = 0;
	struct gb_caller caller;
	bool any = false;
	Client *c;
	int ret = authorize(req, m, &c, error);

	if (ret < 0)
		return ret;
	had_edges = calloc(req->n_lines, sizeof(bool));
	now_edges = calloc(req->n_lines, sizeof(bool));
	if (!had_edges || !now_edges)
		return -ENOMEM;
	for (unsigned int i = 0; i < req->n_lines; i++)
		had_edges[i] = req->lines[i].config.edge != GPIOD_LINE_EDGE_NONE;
	client_caller(c, &caller);
	ret = request_reconfigure(req, &caller, n, idx, updates, error);
	if (ret < 0)
		return ret;
	/* A line whose edge detection this turned on starts from its level, as it
	 * would in a new request: read before the reply, sent after it. */
	for (unsigned int i = 0; i < req->n_lines; i++) {
		now_edges[i] = !had_edges[i] && req->lines[i].config.edge != GPIOD_LINE_EDGE_NONE;
		any |= now_edges[i];
	}
	if (any && request_read_levels_of(req, now_edges, &initial, &n_initial) < 0)
		log_warning("request %s: out of memory: no initial state", req->path);
	ret = sd_bus_reply_method_return(m, NULL);
	request_push_initial_state(req, initial, n_initial);
	return ret;
}

static int method_reconfigure(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
	Request *req = userdata;
	_cleanup_free_ unsigned int *idx = NULL;
	_cleanup_free_ struct gb_line_config *updates = NULL;
	unsigned int n = 0;
	int ret;

	idx = malloc(req->n_lines * sizeof(*idx));
	updates = malloc(req->n_lines * sizeof(*updates));
	if (!idx || !updates)
		return -ENOMEM;
	ret = sd_bus_message_enter_container(m, 'a', "(ua{sv})");
	if (ret < 0)
		return ret;
	while ((ret = sd_bus_message_enter_container(m, 'r', "ua{sv}")) > 0) {
		char what[32];

		if (n == req->n_lines)
			return gb_bus_error_setf(error, GB_ERROR_INVALID_ARGS,
						 "more entries than the request's %u line(s)", req->n_lines);
		ret = sd_bus_message_read(m, "u", &idx[n]);
		if (ret < 0)
			return ret;
		if (idx[n] >= req->n_lines)
			return gb_bus_error_setf(error, GB_ERROR_INVALID_ARGS,
						 "index %u out of range (request has %u line(s))",
						 idx[n], req->n_lines);
		for (unsigned int j = 0; j < n; j++)
			if (idx[j] == idx[n])
				return gb_bus_error_setf(error, GB_ERROR_INVALID_ARGS,
							 "index %u given twice", idx[n]);
		snprintf(what, sizeof(what), "line %u", idx[n]);
		memset(&updates[n], 0, sizeof(updates[n]));
		ret = bus_read_line_settings(m, &updates[n], what, error);
		if (ret < 0)
			return ret;
		ret = sd_bus_message_exit_container(m);
		if (ret < 0)
			return ret;
		n++;
	}
	if (ret < 0)
		return ret;
	ret = sd_bus_message_exit_container(m);
	if (ret < 0)
		return ret;
	if (n == 0)
		return sd_bus_error_set(error, GB_ERROR_INVALID_ARGS, "nothing to reconfigure");
	return do_reconfigure(m, req, n, idx, updates, error);
}

/* gpio_direction_input(): the listed lines (empty: all) become inputs. */
static int method_set_direction_input(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
	Request *req = userdata;
	_cleanup_free_ unsigned int *idx = NULL;
	_cleanup_free_ struct gb_line_config *updates = NULL;
	unsigned int n;
	int ret;

	ret = read_indices(m, req, &n, &idx);
	if (ret < 0)
		return ret;
	updates = calloc(n + 1, sizeof(*updates));
	if (!updates)
		return -ENOMEM;
	for (unsigned int i = 0; i < n; i++) {
		updates[i].set = GB_FIELD_DIRECTION;
		updates[i].direction = GPIOD_LINE_DIRECTION_INPUT;
	}
	return do_reconfigure(m, req, n, idx, updates, error);
}

/* gpio_direction_output(value): direction and level in one call. */
static int method_set_direction_output(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
	Request *req = userdata;
	_cleanup_free_ unsigned int *idx = NULL;
	_cleanup_free_ bool *vals = NULL;
	_cleanup_free_ struct gb_line_config *updates = NULL;
	unsigned int n;
	int ret;

	ret = read_index_values(m, &n, &idx, &vals);
	if (ret == -E2BIG)
		return sd_bus_error_set(error, GB_ERROR_INVALID_ARGS, "too many values");
	if (ret < 0)
		return ret;
	if (n == 0)
		return sd_bus_error_set(error, GB_ERROR_INVALID_ARGS, "no lines given");
	updates = calloc(n, sizeof(*updates));
	if (!updates)
		return -ENOMEM;
	for (unsigned int i = 0; i < n; i++) {
		updates[i].set = GB_FIELD_DIRECTION | GB_FIELD_VALUE;
		updates[i].direction = GPIOD_LINE_DIRECTION_OUTPUT;
		updates[i].value = vals[i];
	}
	return do_reconfigure(m, req, n, idx, updates, error);
}

static int method_subscribe(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
	Request *req = userdata;
	Client *c;
	int ret;

	ret = authorize(req, m, &c, error);
	if (ret < 0)
		return ret;
	if (!req->persistent)
		return sd_bus_reply_method_return(m, NULL); /* the owner already gets them */
	if (req->client != c) {
		request_set_owner(req, c);
		request_save(req); /* the subscriber comes back after a restart */
		struct gb_event *initial = NULL;
		size_t n_initial = 0;

		announce_changed(req->broker, req->path, GB_IFACE_REQUEST, "Owner", NULL);
		/* A new subscriber starts from the level, like a new request. */
		if (request_read_initial_state(req, &initial, &n_initial) < 0)
			log_warning("request %s: out of memory: no initial state", req->path);
		ret = sd_bus_reply_method_return(m, NULL);
		request_push_initial_state(req, initial, n_initial);
		return ret;
	}
	return sd_bus_reply_method_return(m, NULL);
}

/* Flow control: the owner has handled every event up to @seqno (flow.h). */
static int method_ack(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
	Request *req = userdata;
	uint64_t seqno;
	Client *c;
	int ret;

	ret = sd_bus_message_read(m, "t", &seqno);
	if (ret < 0)
		return ret;
	/* Only the connection the events go to: nobody else can open its window. */
	ret = client_get(req->broker, m, &c, error);
	if (ret < 0)
		return ret;
	if (c != req->client)
		return gb_bus_error_setf(error, GB_ERROR_PERMISSION,
					 "events of request %s go to another connection", req->path);
	flow_ack(&req->flow, seqno);
	return sd_bus_reply_method_return(m, NULL);
}

static int method_release(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
	Request *req = userdata;
	Client *c;
	int ret;

	/* A direct request the policy no longer allows is waiting for exactly this:
	 * its owner may always let it go. */
	if (req->revoke_pending && client_get(req->broker, m, &c, NULL) >= 0 && c == req->client)
		ret = 0;
	else
		ret = authorize(req, m, &c, error);
	if (ret < 0)
		return ret;
	/* Lines first, then the reply: when the caller hears "done", they are free. */
	request_close(req, c->uid == req->uid ? "released by its owner" : "released by root");
	return sd_bus_reply_method_return(m, NULL);
}

static int request_get(sd_bus *bus, const char *path, const char *iface, const char *prop,
		       sd_bus_message *reply, void *userdata, sd_bus_error *error)
{
	Request *req = userdata;
	int ret;

	if (strcmp(prop, "Label") == 0)
		return sd_bus_message_append(reply, "s", req->label);
	if (strcmp(prop, "Persistent") == 0)
		return sd_bus_message_append(reply, "b", req->persistent);
	if (strcmp(prop, "OwnerUid") == 0)
		return sd_bus_message_append(reply, "u", (uint32_t)req->uid);
	if (strcmp(prop, "Owner") == 0)
		return sd_bus_message_append(reply, "s", req->client ? req->client->name : "");
	if (strcmp(prop, "EventsLost") == 0)
		return sd_bus_message_append(reply, "t", req->flow.lost);
	if (strcmp(prop, "ChipGone") == 0)
		return sd_bus_message_append(reply, "b", req->chip_gone);
	if (strcmp(prop, "Lines") == 0) {
		ret = sd_bus_message_open_container(reply, 'a', "(osu)");
		for (unsigned int i = 0; ret >= 0 && i < req->n_lines; i++) {
			ReqLine *rl = &req->lines[i];

			ret = sd_bus_message_append(reply, "(osu)", rl->line ? rl->line->path : "/",
						    rl->rc->chip_name, rl->offset);
		}
		return ret < 0 ? ret : sd_bus_message_close_container(reply);
	}
	return -ENOENT;
}

static const sd_bus_vtable request_vtable[] = {
	SD_BUS_VTABLE_START(0),
	SD_BUS_PROPERTY("Label", "s", request_get, 0, SD_BUS_VTABLE_PROPERTY_CONST),
	SD_BUS_PROPERTY("Persistent", "b", request_get, 0, SD_BUS_VTABLE_PROPERTY_CONST),
	SD_BUS_PROPERTY("OwnerUid", "u", request_get, 0, SD_BUS_VTABLE_PROPERTY_CONST),
	SD_BUS_PROPERTY("Owner", "s", request_get, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
	SD_BUS_PROPERTY("Lines", "a(osu)", request_get, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
	SD_BUS_PROPERTY("EventsLost", "t", request_get, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
	SD_BUS_PROPERTY("ChipGone", "b", request_get, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
	SD_BUS_PROPERTY("Direct", "b", bus_request_direct_get, 0, SD_BUS_VTABLE_PROPERTY_CONST),
	SD_BUS_PROPERTY("RevokePending", "s", bus_request_direct_get, 0,
			SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
	SD_BUS_METHOD_WITH_ARGS("GetValues", SD_BUS_ARGS("au", indices), SD_BUS_RESULT("ab", values),
				method_get_values, SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_METHOD_WITH_ARGS("SetValues", SD_BUS_ARGS("a(ub)", values), SD_BUS_NO_RESULT,
				method_set_values, SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_METHOD_WITH_ARGS("SetDirectionInput", SD_BUS_ARGS("au", indices), SD_BUS_NO_RESULT,
				method_set_direction_input, SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_METHOD_WITH_ARGS("SetDirectionOutput", SD_BUS_ARGS("a(ub)", values), SD_BUS_NO_RESULT,
				method_set_direction_output, SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_METHOD_WITH_ARGS("Reconfigure", SD_BUS_ARGS("a(ua{sv})", lines), SD_BUS_NO_RESULT,
				method_reconfigure, SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_METHOD_WITH_ARGS("Subscribe", SD_BUS_NO_ARGS, SD_BUS_NO_RESULT,
				method_subscribe, SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_METHOD_WITH_ARGS("Release", SD_BUS_NO_ARGS, SD_BUS_NO_RESULT,
				method_release, SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_METHOD_WITH_ARGS("Ack", SD_BUS_ARGS("t", seqno), SD_BUS_NO_RESULT,
				method_ack, SD_BUS_VTABLE_UNPRIVILEGED),
	SD_BUS_METHOD_WITH_ARGS("GetLineFds", SD_BUS_NO_ARGS, SD_BUS_RESULT("a(sauh)", fds),
				method_get_line_fds, SD_BUS_VTABLE_UNPRIVILEGED),
	BUS_SUBSCRIPTION_SIGNALS,
	SD_BUS_SIGNAL_WITH_ARGS("RevokePending", SD_BUS_ARGS("s", reason), 0),
	SD_BUS_VTABLE_END
};

static int find_request(sd_bus *bus, const char *path, const char *iface, void *userdata,
			void **found, sd_bus_error *error)
{
	Request *req = request_find(userdata, path);

	if (!req)
		return 0;
	*found = req;
	return 1;
}

static int enumerate_requests(sd_bus *bus, const char *prefix, void *userdata, char ***nodes,
			      sd_bus_error *error)
{
	Broker *b = userdata;
	size_t n = hashmap_size(b->requests), k = 0;
	char **l = calloc(n + 1, sizeof(char *));

	if (!l)
		return -ENOMEM;
	for (Request *req = b->request_list; req; req = req->next)
		if (!(l[k++] = strdup(req->path))) {
			strv_free(l);
			return -ENOMEM;
		}
	*nodes = l;
	return 0;
}

const struct bus_iface bus_request_iface = {
	GB_REQUEST_PREFIX, true, GB_IFACE_REQUEST, request_vtable, find_request, enumerate_requests,
};
