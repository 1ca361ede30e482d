/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "line-request.h"

#include <errno.h>
#include <linux/gpio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "log.h"
#include "macro.h"

int lreq_fd(const ReqChip *rc)
{
	return rc->lr ? gpiod_line_request_get_fd(rc->lr) : rc->raw_fd;
}

void lreq_note_offsets(ReqChip *rc)
{
	rc->n_kern = gpiod_line_request_get_requested_offsets(rc->lr, rc->kern_offsets,
							      ELEMENTSOF(rc->kern_offsets));
}

/* Bit of @p offset in the kernel request's line order, or -1. */
static int kern_index(const ReqChip *rc, unsigned int offset)
{
	for (unsigned int i = 0; i < rc->n_kern; i++)
		if (rc->kern_offsets[i] == offset)
			return (int)i;
	return -1;
}

static int mask_of(const ReqChip *rc, unsigned int n, const unsigned int *offsets, uint64_t *mask)
{
	*mask = 0;
	for (unsigned int i = 0; i < n; i++) {
		int k = kern_index(rc, offsets[i]);

		if (k < 0)
			return -EINVAL;
		*mask |= 1ull << k;
	}
	return 0;
}

int lreq_get(ReqChip *rc, unsigned int n, const unsigned int *offsets, enum gpiod_line_value *values)
{
	struct gpio_v2_line_values v = { 0 };
	uint64_t mask;

	if (rc->lr)
		return gpiod_line_request_get_values_subset(rc->lr, n, offsets, values) < 0 ? -errno : 0;
	if (mask_of(rc, n, offsets, &mask) < 0)
		return -EINVAL;
	v.mask = mask;
	if (ioctl(rc->raw_fd, GPIO_V2_LINE_GET_VALUES_IOCTL, &v) < 0)
		return -errno;
	for (unsigned int i = 0; i < n; i++)
		values[i] = (v.bits >> kern_index(rc, offsets[i])) & 1;
	return 0;
}

int lreq_set(ReqChip *rc, unsigned int n, const unsigned int *offsets,
	     const enum gpiod_line_value *values)
{
	struct gpio_v2_line_values v = { 0 };
	uint64_t mask;

	if (rc->lr)
		return gpiod_line_request_set_values_subset(rc->lr, n, offsets, values) < 0 ? -errno : 0;
	if (mask_of(rc, n, offsets, &mask) < 0)
		return -EINVAL;
	v.mask = mask;
	for (unsigned int i = 0; i < n; i++)
		if (values[i] == GPIOD_LINE_VALUE_ACTIVE)
			v.bits |= 1ull << kern_index(rc, offsets[i]);
	return ioctl(rc->raw_fd, GPIO_V2_LINE_SET_VALUES_IOCTL, &v) < 0 ? -errno : 0;
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

static int build_line_config(ReqChip *rc, struct gpiod_line_config **ret)
{
	Request *r = rc->request;
	struct gpiod_line_config *lc = gpiod_line_config_new();
	struct gpiod_line_settings *s = gpiod_line_settings_new();
	int code = 0;

	if (!lc || !s) {
		code = -ENOMEM;
		goto out;
	}
	for (unsigned int i = 0; i < r->n_lines; i++) {
		ReqLine *rl = &r->lines[i];

		if (rl->rc != rc)
			continue;
		if (gb_line_config_to_settings(&rl->config, s) < 0 ||
		    gpiod_line_config_add_line_settings(lc, &rl->offset, 1, s) < 0) {
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

int lreq_build_config(ReqChip *rc, struct gpiod_line_config **ret)
{
	return build_line_config(rc, ret);
}

int lreq_reconfigure(ReqChip *rc)
{
	Request *r = rc->request;
	struct gpio_v2_line_config lc = { 0 };
	bool first = true;
	int code;

	if (rc->lr) {
		struct gpiod_line_config *cfg = NULL;

		code = build_line_config(rc, &cfg);
		if (code < 0)
			return code;
		code = gpiod_line_request_reconfigure_lines(rc->lr, cfg) < 0 ? -errno : 0;
		gpiod_line_config_free(cfg);
		return code;
	}
	/* uAPI: default flags from the first line, attributes for the rest. */
	for (unsigned int i = 0; i < r->n_lines; i++) {
		ReqLine *rl = &r->lines[i];
		uint64_t f, bit;
		int k;

		if (rl->rc != rc || (k = kern_index(rc, rl->offset)) < 0)
			continue;
		bit = 1ull << k;
		f = uapi_flags(&rl->config);
		if (first) {
			lc.flags = f;
			first = false;
		} else if (f != lc.flags && (code = add_attr(&lc, GPIO_V2_LINE_ATTR_ID_FLAGS, f, bit)) < 0) {
			return code;
		}
		if (rl->config.direction == GPIOD_LINE_DIRECTION_OUTPUT &&
		    (code = add_attr(&lc, GPIO_V2_LINE_ATTR_ID_OUTPUT_VALUES,
				     rl->config.value ? bit : 0, bit)) < 0)
			return code;
		if (rl->config.debounce_us &&
		    (code = add_attr(&lc, GPIO_V2_LINE_ATTR_ID_DEBOUNCE, rl->config.debounce_us, bit)) < 0)
			return code;
	}
	return ioctl(rc->raw_fd, GPIO_V2_LINE_SET_CONFIG_IOCTL, &lc) < 0 ? -errno : 0;
}

int lreq_read_events(ReqChip *rc, struct gb_edge *ev, int max)
{
	int n;

	if (rc->lr) {
		n = gpiod_line_request_read_edge_events(rc->lr, rc->request->broker->edge_events, max);
		if (n < 0)
			return -errno;
		for (int i = 0; i < n; i++) {
			struct gpiod_edge_event *e = gpiod_edge_event_buffer_get_event(rc->request->broker->edge_events, i);

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
		len = read(rc->raw_fd, buf, max * sizeof(buf[0]));
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

void lreq_release(ReqChip *rc)
{
	if (rc->lr)
		gpiod_line_request_release(rc->lr);
	else if (rc->raw_fd >= 0)
		close(rc->raw_fd);
	rc->lr = NULL;
	rc->raw_fd = -1;
}
