/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libgpiobroker's event object: what a handler is given, valid during the call.
 * Made on the stack by whoever delivers it (subscription.c), never allocated.
 */
#include "internal.h"

#include <errno.h>

GB_EXPORT enum gpiobroker_event_type gpiobroker_event_get_type(const struct gpiobroker_event *ev)
{
	return ev->type;
}

GB_EXPORT unsigned int gpiobroker_event_get_index(const struct gpiobroker_event *ev)
{
	return ev->index;
}

GB_EXPORT unsigned int gpiobroker_event_get_offset(const struct gpiobroker_event *ev)
{
	return ev->offset;
}

GB_EXPORT enum gpiobroker_edge gpiobroker_event_get_edge(const struct gpiobroker_event *ev)
{
	return ev->edge;
}

GB_EXPORT uint64_t gpiobroker_event_get_timestamp_ns(const struct gpiobroker_event *ev)
{
	return ev->timestamp_ns;
}

GB_EXPORT uint64_t gpiobroker_event_get_global_seqno(const struct gpiobroker_event *ev)
{
	return ev->global_seqno;
}

GB_EXPORT uint64_t gpiobroker_event_get_line_seqno(const struct gpiobroker_event *ev)
{
	return ev->line_seqno;
}

GB_EXPORT uint64_t gpiobroker_event_get_seqno(const struct gpiobroker_event *ev)
{
	return ev->seqno;
}

GB_EXPORT uint64_t gpiobroker_event_get_lost(const struct gpiobroker_event *ev)
{
	return ev->lost;
}

GB_EXPORT const char *gpiobroker_event_get_detail(const struct gpiobroker_event *ev)
{
	return ev->detail;
}

GB_EXPORT bool gpiobroker_event_is_initial(const struct gpiobroker_event *ev)
{
	return ev->type == GPIOBROKER_EVENT_INITIAL_STATE;
}

GB_EXPORT int gpiobroker_event_get_value(const struct gpiobroker_event *ev)
{
	if (ev->type != GPIOBROKER_EVENT_EDGE && ev->type != GPIOBROKER_EVENT_INITIAL_STATE)
		return -EINVAL;
	return ev->value;
}
