/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libgpiobroker's requests: lines held through the broker (Manager.Request), made
 * blocking or asynchronously, on the bus or direct (their line fds handed over),
 * opened by path, released; and their edge handler (gpiobroker_to_irq()). What a
 * request receives goes through its subscription (subscription.c), which calls
 * back deliver() below.
 */
#include "internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void deliver(struct gb_subscription *sub, const struct gpiobroker_event *ev)
{
	struct gpiobroker_request *req = gb_container_of(sub, struct gpiobroker_request, sub);

	req->handler(req, ev, req->userdata);
}

static void request_free_handle(struct gpiobroker_request *req)
{
	/* The fds go at once, also from a handler: the handle may outlive this call. */
	if (req->direct) {
		gb_direct_req_free(req->sub.b->direct, req->direct);
		req->sub.b->n_ready = 0;
		req->direct = NULL;
	}
	if (gb_subscription_end(&req->sub)) {
		gb_recipe_free(req->recipe);
		free(req);
	}
}

static void free_sub(struct gb_subscription *sub)
{
	request_free_handle(gb_container_of(sub, struct gpiobroker_request, sub));
}

static int renew(struct gb_subscription *sub);

static const struct gb_subscription_kind request_kind = {
	.iface = GB_IFACE_REQUEST,
	.restart_prop = "Label",
	.deliver = deliver,
	.free = free_sub,
	.renew = renew,
};

/* Read the request's Lines and Persistent properties into the handle. */
static int load_request(struct gpiobroker_request *req)
{
	struct gb_subscription *sub = &req->sub;
	struct gpiobroker *b = sub->b;
	sd_bus_error e = SD_BUS_ERROR_NULL;
	sd_bus_message *reply = NULL;
	const char *obj, *chip;
	uint32_t off;
	int r, p = 0;

	r = sd_bus_get_property(gb_conn(b), GB_BUS_NAME, sub->path, GB_IFACE_REQUEST, "Lines", &e,
				&reply, "a(osu)");
	if (r < 0)
		return gb_fail(b, &e, r);
	r = sd_bus_message_enter_container(reply, 'a', "(osu)");
	while (r >= 0 && (r = sd_bus_message_read(reply, "(osu)", &obj, &chip, &off)) > 0) {
		char **chips = realloc(sub->chips, (sub->n_lines + 1) * sizeof(*chips));
		unsigned int *offs;

		if (!chips) {
			r = -ENOMEM;
			break;
		}
		sub->chips = chips;
		offs = realloc(sub->offsets, (sub->n_lines + 1) * sizeof(*offs));
		if (!offs) {
			r = -ENOMEM;
			break;
		}
		sub->offsets = offs;
		sub->chips[sub->n_lines] = strdup(chip);
		if (!sub->chips[sub->n_lines]) {
			r = -ENOMEM;
			break;
		}
		sub->offsets[sub->n_lines++] = off;
	}
	/* The sender of the reply is the broker (the well-known name resolved). */
	if (r >= 0 && sd_bus_message_get_sender(reply)) {
		sub->broker_unique = strdup(sd_bus_message_get_sender(reply));
		if (!sub->broker_unique)
			r = -ENOMEM;
	}
	sd_bus_message_unref(reply);
	if (r < 0)
		return gb_fail(b, NULL, r);
	r = sd_bus_get_property_trivial(gb_conn(b), GB_BUS_NAME, sub->path, GB_IFACE_REQUEST,
					"Persistent", &e, 'b', &p);
	if (r < 0)
		return gb_fail(b, &e, r);
	req->persistent = p;
	return 0;
}

static struct gpiobroker_request *new_handle(struct gpiobroker *b, const char *path, bool own)
{
	struct gpiobroker_request *req = calloc(1, sizeof(*req));
	int r;

	if (!req) {
		errno = -gb_fail(b, NULL, -ENOMEM);
		return NULL;
	}
	r = gb_subscription_init(&req->sub, b, &request_kind, path);
	if (r < 0) {
		request_free_handle(req);
		errno = -gb_fail(b, NULL, r);
		return NULL;
	}
	gb_learn_window(b);
	/* Our own request: its seqno starts at 1, so loss counts from the start. */
	req->sub.have_seqno = own;
	r = load_request(req);
	if (r < 0) {
		request_free_handle(req);
		errno = -r;
		return NULL;
	}
	return req;
}

/* Manager.Request's message for gpiobroker_request_array() and its async form. */
static int new_request_message(struct gpiobroker *b, sd_bus_message **out, size_t n,
			       const char *const lines[],
			       const struct gpiobroker_line_settings settings[], const char *label,
			       unsigned int flags)
{
	sd_bus_message *m = NULL;
	int r;

	/* n == 0 goes to the broker, which answers InvalidArgs with a message. */
	r = sd_bus_message_new_method_call(gb_conn(b), &m, GB_BUS_NAME, GB_ROOT_PATH,
					   GB_IFACE_MANAGER, "Request");
	if (r >= 0)
		r = sd_bus_message_append(m, "s", label);
	if (r >= 0)
		r = sd_bus_message_open_container(m, 'a', "(sa{sv})");
	for (size_t i = 0; r >= 0 && i < n; i++) {
		r = sd_bus_message_open_container(m, 'r', "sa{sv}");
		if (r >= 0)
			r = sd_bus_message_append(m, "s", lines[i] ? lines[i] : "");
		if (r >= 0)
			r = gb_append_settings(m, settings ? &settings[i] : NULL);
		if (r >= 0)
			r = sd_bus_message_close_container(m);
	}
	if (r >= 0)
		r = sd_bus_message_close_container(m);
	if (r >= 0 && (flags & GPIOBROKER_REQUEST_PERSISTENT))
		r = sd_bus_message_append(m, "a{sv}", 1, "persistent", "b", 1);
	else if (r >= 0 && (flags & GPIOBROKER_REQUEST_DIRECT))
		r = sd_bus_message_append(m, "a{sv}", 1, "direct", "b", 1);
	else if (r >= 0)
		r = sd_bus_message_append(m, "a{sv}", 0);
	if (r < 0) {
		sd_bus_message_unref(m);
		return r;
	}
	*out = m;
	return 0;
}

/* The broker answered Request with @reply: make the handle (NULL, errno set). */
static struct gpiobroker_request *request_from_reply(struct gpiobroker *b, sd_bus_message *reply)
{
	struct gpiobroker_request *req;
	const char *path;
	int r = sd_bus_message_read(reply, "o", &path);

	if (r < 0) {
		errno = -gb_fail(b, NULL, r);
		return NULL;
	}
	req = new_handle(b, path, true);
	if (req)
		gb_clear_error(b);
	else if (errno != ENOMEM) {
		/* Held but unusable (e.g. the broker vanished): do not leak the lines. */
		int saved = errno;

		sd_bus_call_method(gb_conn(b), GB_BUS_NAME, path, GB_IFACE_REQUEST, "Release", NULL,
				   NULL, "");
		errno = saved;
	}
	return req;
}

/* A direct request: its line fds, or it is released (NULL handle, errno set). Its
 * edges come from direct.c straight to its subscription. */
static int open_direct(struct gpiobroker_request *req)
{
	struct gb_subscription *sub = &req->sub;
	struct gpiobroker *b = sub->b;
	sd_bus_error e = SD_BUS_ERROR_NULL;
	int r = gb_epoll_fd(b);

	if (r >= 0)
		r = gb_direct_open(&b->direct, gb_conn(b), r, sub->path, sub->n_lines, sub->chips,
				   sub->offsets, gb_subscription_direct_edge, sub, &req->direct,
				   &e);

	if (r < 0) {
		r = gb_fail(b, &e, r);
		sd_bus_call_method(b->bus, GB_BUS_NAME, sub->path, GB_IFACE_REQUEST, "Release",
				   NULL, NULL, "");
		request_free_handle(req);
		errno = -r;
		return r;
	}
	return 0;
}

GB_EXPORT struct gpiobroker_request *
gpiobroker_request_array(struct gpiobroker *b, size_t n, const char *const lines[],
			 const struct gpiobroker_line_settings settings[], const char *label,
			 unsigned int flags)
{
	sd_bus_error e = SD_BUS_ERROR_NULL;
	sd_bus_message *m = NULL, *reply = NULL;
	struct gpiobroker_request *req = NULL;
	const unsigned int known = GPIOBROKER_REQUEST_PERSISTENT | GPIOBROKER_REQUEST_DIRECT |
				   GPIOBROKER_REQUEST_DIRECT_OR_BUS;
	int r;

	if (!b || !lines || !label || (flags & ~known) ||
	    ((flags & GPIOBROKER_REQUEST_PERSISTENT) && (flags & ~GPIOBROKER_REQUEST_PERSISTENT))) {
		errno = EINVAL;
		return NULL;
	}
	if (b->no_fds && (flags & GPIOBROKER_REQUEST_DIRECT_OR_BUS))
		flags &= ~(GPIOBROKER_REQUEST_DIRECT | GPIOBROKER_REQUEST_DIRECT_OR_BUS);
	if (b->no_fds && (flags & GPIOBROKER_REQUEST_DIRECT)) {
		sd_bus_error_set(&e, GB_ERROR_NO_FD_PASSING,
				 "this connection cannot pass file descriptors (a link over SSH): "
				 "no direct request; GPIOBROKER_REQUEST_DIRECT_OR_BUS falls back to the bus");
		errno = -gb_fail(b, &e, -EOPNOTSUPP);
		return NULL;
	}
	if (flags & GPIOBROKER_REQUEST_DIRECT_OR_BUS)
		flags |= GPIOBROKER_REQUEST_DIRECT;
	r = new_request_message(b, &m, n, lines, settings, label, flags);
	if (r >= 0)
		r = sd_bus_call(gb_conn(b), m, 0, &e, &reply);
	if (r < 0)
		errno = -gb_fail(b, &e, r);
	else
		req = request_from_reply(b, reply);
	if (req && (flags & GPIOBROKER_REQUEST_DIRECT) && open_direct(req) < 0)
		req = NULL;
	sd_bus_message_unref(m);
	sd_bus_message_unref(reply);
	/* Refused (policy, watchers, an older broker): the same request on the bus. */
	if (!req && (flags & GPIOBROKER_REQUEST_DIRECT_OR_BUS))
		return gpiobroker_request_array(b, n, lines, settings, label, 0);
	if (req && !req->persistent)
		req->recipe = gb_recipe_new(n, lines, settings, label,
					    flags & ~GPIOBROKER_REQUEST_DIRECT_OR_BUS);
	return req;
}

/* The handle's lines forgotten, to be read again from the broker. */
static void forget_lines(struct gb_subscription *sub)
{
	for (size_t i = 0; sub->chips && i < sub->n_lines; i++)
		free(sub->chips[i]);
	free(sub->chips);
	free(sub->offsets);
	sub->chips = NULL;
	sub->offsets = NULL;
	sub->n_lines = 0;
	free(sub->init_value);
	free(sub->init_ts);
	sub->init_value = NULL;
	sub->init_ts = NULL;
}

/*
 * After gpiobroker_reconnect(): a persistent request (or one opened by path) is
 * still where it was, if nobody released it; a managed one was released when the
 * connection went, and is requested again as it was made, with the values and
 * directions set since. A direct one comes back direct where this connection can
 * pass its fds, else on the bus.
 */
static int renew(struct gb_subscription *sub)
{
	struct gpiobroker_request *req = gb_container_of(sub, struct gpiobroker_request, sub);
	struct gpiobroker *b = sub->b;
	struct gb_recipe *rc = req->recipe;
	sd_bus_error e = SD_BUS_ERROR_NULL;
	sd_bus_message *m = NULL, *reply = NULL;
	unsigned int flags;
	const char *path;
	char *copy;
	int r;

	if (req->direct) {
		gb_direct_req_free(b->direct, req->direct);
		b->n_ready = 0;
		req->direct = NULL;
	}
	if (!rc) {
		forget_lines(sub);
		r = load_request(req);
		if (r >= 0 && req->handler && req->persistent)
			r = sd_bus_call_method(gb_conn(b), GB_BUS_NAME, sub->path, GB_IFACE_REQUEST,
					       "Subscribe", &e, NULL, "");
		return r < 0 ? gb_fail(b, &e, r) : 0;
	}
	flags = rc->flags;
	if (b->no_fds)
		flags &= ~GPIOBROKER_REQUEST_DIRECT;
	r = new_request_message(b, &m, rc->n, (const char *const *)rc->lines, rc->settings,
				rc->label, flags);
	if (r >= 0)
		r = sd_bus_call(gb_conn(b), m, 0, &e, &reply);
	if (r >= 0)
		r = sd_bus_message_read(reply, "o", &path);
	if (r >= 0) {
		copy = strdup(path);
		if (copy) {
			free(sub->path);
			sub->path = copy;
		} else {
			r = -ENOMEM;
		}
	}
	sd_bus_message_unref(m);
	sd_bus_message_unref(reply);
	if (r < 0)
		return gb_fail(b, &e, r);
	forget_lines(sub);
	sub->have_seqno = true;
	sub->last_seqno = 0;
	r = load_request(req);
	if (r >= 0 && (flags & GPIOBROKER_REQUEST_DIRECT)) {
		r = gb_epoll_fd(b);
		if (r >= 0)
			r = gb_direct_open(&b->direct, gb_conn(b), r, sub->path, sub->n_lines,
					   sub->chips, sub->offsets, gb_subscription_direct_edge,
					   sub, &req->direct, &e);
		if (r < 0)
			r = gb_fail(b, &e, r);
	}
	if (r < 0) {
		/* Held but not usable through this handle: not left held. */
		sd_bus_call_method(gb_conn(b), GB_BUS_NAME, sub->path, GB_IFACE_REQUEST, "Release",
				   NULL, NULL, "");
		free(sub->broker_unique);
		sub->broker_unique = NULL;
	}
	return r;
}

GB_EXPORT struct gpiobroker_request *gpiobroker_request_output(struct gpiobroker *b,
							       const char *line, const char *label,
							       int value)
{
	struct gpiobroker_line_settings s;

	gpiobroker_line_settings_init(&s);
	s.direction = GPIOBROKER_DIRECTION_OUTPUT;
	s.value = value ? 1 : 0;
	return gpiobroker_request_array(b, 1, &line, &s, label, 0);
}

GB_EXPORT struct gpiobroker_request *gpiobroker_request_input(struct gpiobroker *b,
							      const char *line, const char *label,
							      enum gpiobroker_edge edges)
{
	struct gpiobroker_line_settings s;

	if ((unsigned int)edges > GPIOBROKER_EDGE_BOTH) {
		/* Recorded, so no earlier broker error is mistaken for this one. */
		errno = b ? -gb_fail(b, NULL, -EINVAL) : EINVAL;
		return NULL;
	}
	gpiobroker_line_settings_init(&s);
	s.direction = GPIOBROKER_DIRECTION_INPUT;
	s.edge = edges;
	return gpiobroker_request_array(b, 1, &line, &s, label, 0);
}

GB_EXPORT struct gpiobroker_request *gpiobroker_request(struct gpiobroker *b, const char *line,
							const char *label,
							const struct gpiobroker_line_settings *s)
{
	return gpiobroker_request_array(b, 1, &line, s, label, 0);
}

/* An asynchronous Request in flight: cancelled (slot unref'ed, handler never run)
 * when the connection closes first. */
struct gb_pending_request {
	struct gpiobroker *b;
	struct gb_pending_request *next;
	sd_bus_slot *slot;
	gpiobroker_request_handler handler;
	void *userdata;
};

static void pending_unlink(struct gb_pending_request *p)
{
	for (struct gb_pending_request **pp = &p->b->pending; *pp; pp = &(*pp)->next)
		if (*pp == p) {
			*pp = p->next;
			break;
		}
}

static int on_request_reply(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error)
{
	struct gb_pending_request *p = userdata;
	struct gpiobroker *b = p->b;
	struct gpiobroker_request *req = NULL;
	gpiobroker_request_handler handler = p->handler;
	void *ud = p->userdata;
	int err = 0;

	/* Done with the slot before the handler runs: it may close the connection. */
	pending_unlink(p);
	sd_bus_slot_unref(p->slot);
	free(p);
	if (sd_bus_message_is_method_error(reply, NULL)) {
		sd_bus_error e = SD_BUS_ERROR_NULL;

		sd_bus_error_copy(&e, sd_bus_message_get_error(reply));
		err = gb_fail(b, &e, -EIO);
	} else {
		req = request_from_reply(b, reply);
		if (!req)
			err = -errno;
	}
	handler(b, req, err, ud);
	return 0;
}

void gb_request_cancel_pending(struct gpiobroker *b)
{
	while (b->pending) {
		struct gb_pending_request *p = b->pending;

		b->pending = p->next;
		sd_bus_slot_unref(p->slot);
		free(p);
	}
}

GB_EXPORT int gpiobroker_request_array_async(struct gpiobroker *b, size_t n,
					     const char *const lines[],
					     const struct gpiobroker_line_settings settings[],
					     const char *label, unsigned int flags,
					     gpiobroker_request_handler handler, void *userdata)
{
	struct gb_pending_request *p;
	sd_bus_message *m = NULL;
	int r;

	if (!b)
		return -EINVAL;
	/* Not direct: its fds would be one more blocking call in the reply handler. */
	if (!lines || !label || !handler || (flags & ~GPIOBROKER_REQUEST_PERSISTENT))
		return gb_fail(b, NULL, -EINVAL);
	p = calloc(1, sizeof(*p));
	if (!p)
		return gb_fail(b, NULL, -ENOMEM);
	/* Asked now, while blocking is still allowed: the reply handler needs it. */
	gb_learn_window(b);
	r = new_request_message(b, &m, n, lines, settings, label, flags);
	if (r >= 0)
		r = sd_bus_call_async(gb_conn(b), &p->slot, m, on_request_reply, p, 0);
	sd_bus_message_unref(m);
	if (r < 0) {
		free(p);
		return gb_fail(b, NULL, r);
	}
	p->b = b;
	p->handler = handler;
	p->userdata = userdata;
	p->next = b->pending;
	b->pending = p;
	gb_clear_error(b);
	return 0;
}

GB_EXPORT struct gpiobroker_request *gpiobroker_request_open(struct gpiobroker *b, const char *path)
{
	struct gpiobroker_request *req;

	if (!b || !path || !sd_bus_object_path_is_valid(path)) {
		errno = EINVAL;
		return NULL;
	}
	req = new_handle(b, path, false);
	if (req)
		gb_clear_error(b);
	return req;
}

GB_EXPORT int gpiobroker_free(struct gpiobroker_request *req)
{
	sd_bus_error e = SD_BUS_ERROR_NULL;
	struct gpiobroker *b;
	int r;

	if (!req)
		return 0;
	b = req->sub.b;
	/* Gone with the connection: the broker released it then. */
	if (b->lost && !req->persistent) {
		request_free_handle(req);
		gb_clear_error(b);
		return 0;
	}
	/* Our copies of the line fds first: when Release returns, the kernel has the
	 * lines back, not still held by them. */
	gb_direct_req_free(b->direct, req->direct);
	b->n_ready = 0;
	req->direct = NULL;
	r = sd_bus_call_method(gb_conn(b), GB_BUS_NAME, req->sub.path, GB_IFACE_REQUEST, "Release",
			       &e, NULL, "");
	request_free_handle(req);
	return gb_result(b, &e, r);
}

GB_EXPORT void gpiobroker_request_close(struct gpiobroker_request *req)
{
	if (req)
		request_free_handle(req);
}

GB_EXPORT const char *gpiobroker_request_get_path(const struct gpiobroker_request *req)
{
	return req->sub.path;
}

GB_EXPORT size_t gpiobroker_request_get_num_lines(const struct gpiobroker_request *req)
{
	return req->sub.n_lines;
}

GB_EXPORT const char *gpiobroker_request_get_chip(const struct gpiobroker_request *req,
						  size_t index)
{
	if (index >= req->sub.n_lines) {
		errno = EINVAL;
		return NULL;
	}
	return req->sub.chips[index];
}

GB_EXPORT int gpiobroker_request_get_offset(const struct gpiobroker_request *req, size_t index)
{
	return index < req->sub.n_lines ? (int)req->sub.offsets[index] : -EINVAL;
}

GB_EXPORT bool gpiobroker_request_is_persistent(const struct gpiobroker_request *req)
{
	return req->persistent;
}

GB_EXPORT bool gpiobroker_request_is_direct(const struct gpiobroker_request *req)
{
	return req->direct != NULL;
}

GB_EXPORT struct gpiobroker *gpiobroker_request_get_broker(const struct gpiobroker_request *req)
{
	return req->sub.b;
}

GB_EXPORT uint64_t gpiobroker_request_get_events_lost(const struct gpiobroker_request *req)
{
	return req->sub.total_lost;
}

/* --- the edge handler --------------------------------------------------------------- */

/* The broker sends a direct request no InitialState: the levels are read here, of
 * every line (which of them detect edges is the broker's record, not ours). */
static void direct_initial_state(struct gpiobroker_request *req)
{
	struct gb_subscription *sub = &req->sub;
	int *vals = malloc(sub->n_lines * sizeof(int));
	uint64_t *ts = calloc(sub->n_lines, sizeof(uint64_t));
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	if (!vals || !ts || gb_direct_get(req->direct, sub->n_lines, NULL, vals) < 0) {
		free(vals);
		free(ts);
		return;
	}
	for (size_t i = 0; i < sub->n_lines; i++)
		ts[i] = (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
	sub->init_value = vals;
	sub->init_ts = ts;
}

GB_EXPORT int gpiobroker_to_irq(struct gpiobroker_request *req, gpiobroker_irq_handler handler,
				void *userdata)
{
	return gpiobroker_to_irq_flags(req, handler, userdata, 0);
}

GB_EXPORT int gpiobroker_to_irq_flags(struct gpiobroker_request *req,
				      gpiobroker_irq_handler handler, void *userdata,
				      unsigned int flags)
{
	struct gb_subscription *sub = &req->sub;
	sd_bus_error e = SD_BUS_ERROR_NULL;
	bool initial = handler && (flags & GPIOBROKER_IRQ_INITIAL_STATE);
	int r;

	if (flags & ~GPIOBROKER_IRQ_INITIAL_STATE)
		return -EINVAL;
	if (handler && req->persistent && !req->handler) {
		/* Events of a persistent request go to its last subscriber. */
		r = sd_bus_call_method(gb_conn(sub->b), GB_BUS_NAME, sub->path, GB_IFACE_REQUEST,
				       "Subscribe", &e, NULL, "");
		if (r < 0)
			return gb_fail(sub->b, &e, r);
	}
	req->handler = handler;
	req->userdata = userdata;
	sub->handled = handler != NULL;
	sub->initial = initial;
	gb_clear_error(sub->b);
	if (initial && req->direct && !sub->init_value)
		direct_initial_state(req);
	/* The handler may free the request while it hears them. */
	if (initial)
		gb_subscription_replay_initial(sub);
	return 0;
}
