/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "line-request.h"

#include <errno.h>
#include <linux/gpio.h>
#include <poll.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "log.h"
#include "macro.h"

/* One read buffer for every request: a buffer per request would cost every held
 * line ~5 KiB whether or not it ever has an edge. */
static struct gpiod_edge_event_buffer *edge_buffer;

void lreq_init(LineReq *k)
{
	*k = (LineReq){ .raw_fd = -1 };
}

int lreq_fd(const LineReq *k)
{
	return k->lr ? gpiod_line_request_get_fd(k->lr) : k->raw_fd;
}

bool lreq_active(const LineReq *k)
{
	return lreq_fd(k) >= 0;
}

/* Bit of @p offset in the kernel request's line order, or -1. */
static int kern_index(const LineReq *k, unsigned int offset)
{
	for (unsigned int i = 0; i < k->n_kern; i++)
		if (k->kern_offsets[i] == offset)
			return (int)i;
	return -1;
}

static int mask_of(const LineReq *k, unsigned int n, const unsigned int *offsets, uint64_t *mask)
{
	*mask = 0;
	for (unsigned int i = 0; i < n; i++) {
		int bit = kern_index(k, offsets[i]);

		if (bit < 0)
			return -EINVAL;
		*mask |= 1ull << bit;
	}
	return 0;
}

int lreq_get(LineReq *k, unsigned int n, const unsigned int *offsets, enum gpiod_line_value *values)
{
	struct gpio_v2_line_values v = { 0 };
	uint64_t mask;

	if (k->lr)
		return gpiod_line_request_get_values_subset(k->lr, n, offsets, values) < 0 ? -errno : 0;
	if (mask_of(k, n, offsets, &mask) < 0)
		return -EINVAL;
	v.mask = mask;
	if (ioctl(k->raw_fd, GPIO_V2_LINE_GET_VALUES_IOCTL, &v) < 0)
		return -errno;
	for (unsigned int i = 0; i < n; i++)
		values[i] = (v.bits >> kern_index(k, offsets[i])) & 1;
	return 0;
}

int lreq_set(LineReq *k, unsigned int n, const unsigned int *offsets,
	     const enum gpiod_line_value *values)
{
	struct gpio_v2_line_values v = { 0 };
	uint64_t mask;

	if (k->lr)
		return gpiod_line_request_set_values_subset(k->lr, n, offsets, values) < 0 ? -errno : 0;
	if (mask_of(k, n, offsets, &mask) < 0)
		return -EINVAL;
	v.mask = mask;
	for (unsigned int i = 0; i < n; i++)
		if (values[i] == GPIOD_LINE_VALUE_ACTIVE)
			v.bits |= 1ull << kern_index(k, offsets[i]);
	return ioctl(k->raw_fd, GPIO_V2_LINE_SET_VALUES_IOCTL, &v) < 0 ? -errno : 0;
}

static uint64_t uapi_flags(const struct gb_line_config *c)
{
	uint64_t f = 0;

	if (c->direction == GPIOD_LINE_DIRECTION_INPUT)
		f |= GPIO_V2_LINE_FLAG_INPUT;
	else if (c->direction == GPIOD_LINE_DIRECTION_OUTPUT)
		f |= GPIO_V2_LINE_FLAG_OUTPUT;
	if (c->active_low)
		f |= GPIO_V2_LINE_FLAG_ACTIVE_LOW;
	if (c->edge == GPIOD_LINE_EDGE_RISING || c->edge == GPIOD_LINE_EDGE_BOTH)
		f |= GPIO_V2_LINE_FLAG_EDGE_RISING;
	if (c->edge == GPIOD_LINE_EDGE_FALLING || c->edge == GPIOD_LINE_EDGE_BOTH)
		f |= GPIO_V2_LINE_FLAG_EDGE_FALLING;
	if (c->bias == GPIOD_LINE_BIAS_DISABLED)
		f |= GPIO_V2_LINE_FLAG_BIAS_DISABLED;
	else if (c->bias == GPIOD_LINE_BIAS_PULL_UP)
		f |= GPIO_V2_LINE_FLAG_BIAS_PULL_UP;
	else if (c->bias == GPIOD_LINE_BIAS_PULL_DOWN)
		f |= GPIO_V2_LINE_FLAG_BIAS_PULL_DOWN;
	if (c->drive == GPIOD_LINE_DRIVE_OPEN_DRAIN)
		f |= GPIO_V2_LINE_FLAG_OPEN_DRAIN;
	else if (c->drive == GPIOD_LINE_DRIVE_OPEN_SOURCE)
		f |= GPIO_V2_LINE_FLAG_OPEN_SOURCE;
	if (c->edge != GPIOD_LINE_EDGE_NONE && c->event_clock == GPIOD_LINE_CLOCK_REALTIME)
		f |= GPIO_V2_LINE_FLAG_EVENT_CLOCK_REALTIME;
	else if (c->edge != GPIOD_LINE_EDGE_NONE && c->event_clock == GPIOD_LINE_CLOCK_HTE)
		f |= GPIO_V2_LINE_FLAG_EVENT_CLOCK_HTE;
	return f;
}

static int add_attr(struct gpio_v2_line_config *lc, uint32_t id, uint64_t value, uint64_t mask)
{
	struct gpio_v2_line_config_attribute *a;

	for (unsigned int i = 0; i < lc->num_attrs; i++) {
		a = &lc->attrs[i];
		if (a->attr.id == id && (id == GPIO_V2_LINE_ATTR_ID_OUTPUT_VALUES ||
					 (id == GPIO_V2_LINE_ATTR_ID_FLAGS && a->attr.flags == value) ||
					 (id == GPIO_V2_LINE_ATTR_ID_DEBOUNCE &&
					  a->attr.debounce_period_us == value))) {
			if (id == GPIO_V2_LINE_ATTR_ID_OUTPUT_VALUES)
				a->attr.values |= value;
			a->mask |= mask;
			return 0;
		}
	}
	if (lc->num_attrs == GPIO_V2_LINE_NUM_ATTRS_MAX)
		return -E2BIG;
	a = &lc->attrs[lc->num_attrs++];
	a->attr.id = id;
	if (id == GPIO_V2_LINE_ATTR_ID_FLAGS)
		a->attr.flags = value;
	else if (id == GPIO_V2_LINE_ATTR_ID_OUTPUT_VALUES)
		a->attr.values = value;
	else
		a->attr.debounce_period_us = value;
	a->mask = mask;
	return 0;
}

static int build_line_config(unsigned int n, const unsigned int *offsets,
			     const struct gb_line_config *configs, struct gpiod_line_config **ret)
{
	struct gpiod_line_config *lc = gpiod_line_config_new();
	struct gpiod_line_settings *s = gpiod_line_settings_new();
	int code = 0;

	if (!lc || !s) {
		code = -ENOMEM;
		goto out;
	}
	for (unsigned int i = 0; i < n; i++) {
		errno = 0;
		if (gb_line_config_to_settings(&configs[i], s) < 0 ||
		    gpiod_line_config_add_line_settings(lc, &offsets[i], 1, s) < 0) {
			code = errno ? -errno : -EINVAL;
			goto out;
		}
	}
	*ret = TAKE_PTR(lc);
out:
	gpiod_line_settings_free(s);
	gpiod_line_config_free(lc);
	return code;
}

int lreq_request(LineReq *k, struct gpiod_chip *gc, const char *consumer, unsigned int n,
		 const unsigned int *offsets, const struct gb_line_config *configs)
{
	struct gpiod_request_config *reqc = gpiod_request_config_new();
	struct gpiod_line_config *lc = NULL;
	int code;

	if (!reqc)
		return -ENOMEM;
	gpiod_request_config_set_consumer(reqc, consumer);
	code = build_line_config(n, offsets, configs, &lc);
	if (code >= 0) {
		k->lr = gpiod_chip_request_lines(gc, reqc, lc);
		code = k->lr ? 0 : -errno;
	}
	gpiod_line_config_free(lc);
	gpiod_request_config_free(reqc);
	if (code < 0)
		return code;
	k->n_kern = gpiod_line_request_get_requested_offsets(k->lr, k->kern_offsets,
							     ELEMENTSOF(k->kern_offsets));
	return 0;
}

void lreq_adopt(LineReq *k, int fd, unsigned int n_kern, const unsigned int *kern_offsets)
{
	k->lr = NULL;
	k->raw_fd = fd;
	k->n_kern = n_kern < ELEMENTSOF(k->kern_offsets) ? n_kern : ELEMENTSOF(k->kern_offsets);
	if (kern_offsets != k->kern_offsets)
		memcpy(k->kern_offsets, kern_offsets, k->n_kern * sizeof(*kern_offsets));
}

int lreq_reconfigure(LineReq *k, unsigned int n, const unsigned int *offsets,
		     const struct gb_line_config *configs)
{
	struct gpio_v2_line_config lc = { 0 };
	bool first = true;
	int code;

	if (k->lr) {
		struct gpiod_line_config *cfg = NULL;

		code = build_line_config(n, offsets, configs, &cfg);
		if (code < 0)
			return code;
		code = gpiod_line_request_reconfigure_lines(k->lr, cfg) < 0 ? -errno : 0;
		gpiod_line_config_free(cfg);
		return code;
	}
	/* uAPI: default flags from the first line, attributes for the rest. */
	for (unsigned int i = 0; i < n; i++) {
		const struct gb_line_config *c = &configs[i];
		uint64_t f, bit;
		int ki = kern_index(k, offsets[i]);

		if (ki < 0)
			continue;
		bit = 1ull << ki;
		f = uapi_flags(c);
		if (first) {
			lc.flags = f;
			first = false;
		} else if (f != lc.flags && (code = add_attr(&lc, GPIO_V2_LINE_ATTR_ID_FLAGS, f, bit)) < 0) {
			return code;
		}
		if (c->direction == GPIOD_LINE_DIRECTION_OUTPUT &&
		    (code = add_attr(&lc, GPIO_V2_LINE_ATTR_ID_OUTPUT_VALUES, c->value ? bit : 0,
				     bit)) < 0)
			return code;
		if (c->debounce_us &&
		    (code = add_attr(&lc, GPIO_V2_LINE_ATTR_ID_DEBOUNCE, c->debounce_us, bit)) < 0)
			return code;
	}
	return ioctl(k->raw_fd, GPIO_V2_LINE_SET_CONFIG_IOCTL, &lc) < 0 ? -errno : 0;
}

int lreq_read_events(LineReq *k, struct gb_edge *ev, int max)
{
	int n;

	if (k->lr) {
		if (!edge_buffer && !(edge_buffer = gpiod_edge_event_buffer_new(GB_EVENT_BATCH)))
			return -ENOMEM;
		if (max > GB_EVENT_BATCH)
			max = GB_EVENT_BATCH;
		n = gpiod_line_request_read_edge_events(k->lr, edge_buffer, max);
		if (n < 0)
			return -errno;
		for (int i = 0; i < n; i++) {
			struct gpiod_edge_event *e = gpiod_edge_event_buffer_get_event(edge_buffer, i);

			ev[i] = (struct gb_edge){
				.offset = gpiod_edge_event_get_line_offset(e),
				.rising = gpiod_edge_event_get_event_type(e) == GPIOD_EDGE_EVENT_RISING_EDGE,
				.timestamp_ns = gpiod_edge_event_get_timestamp_ns(e),
				.global_seqno = gpiod_edge_event_get_global_seqno(e),
				.line_seqno = gpiod_edge_event_get_line_seqno(e),
			};
		}
		return n;
	} else {
		struct gpio_v2_line_event buf[GB_EVENT_BATCH];
		ssize_t len;

		if (max > GB_EVENT_BATCH)
			max = GB_EVENT_BATCH;
		len = read(k->raw_fd, buf, max * sizeof(buf[0]));
		if (len < 0)
			return -errno;
		n = len / sizeof(buf[0]);
		for (int i = 0; i < n; i++)
			ev[i] = (struct gb_edge){
				.offset = buf[i].offset,
				.rising = buf[i].id == GPIO_V2_LINE_EVENT_RISING_EDGE,
				.timestamp_ns = buf[i].timestamp_ns,
				.global_seqno = buf[i].seqno,
				.line_seqno = buf[i].line_seqno,
			};
		return n;
	}
}

void lreq_release(LineReq *k)
{
	if (k->lr)
		gpiod_line_request_release(k->lr);
	else if (k->raw_fd >= 0)
		close(k->raw_fd);
	k->lr = NULL;
	k->raw_fd = -1;
}

bool lreq_events_pending(LineReq *k)
{
	struct pollfd p = { .fd = lreq_fd(k), .events = POLLIN };

	return p.fd >= 0 && poll(&p, 1, 0) > 0 && (p.revents & POLLIN);
}

void lreq_buffer_free(void)
{
	gpiod_edge_event_buffer_free(edge_buffer);
	edge_buffer = NULL;
}
