/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libgpiobroker's directions and values, and reconfiguring a request's lines. A
 * direct request reads and sets values on its line fds (direct.c); everything else
 * is one repeatable call to the broker (gb_call_repeatable(), transport.c).
 */
#include "internal.h"

#include <errno.h>

/* The arguments of a call on some of a request's lines: @idx NULL means 0..n-1. */
struct lines_args {
	size_t n;
	const unsigned int *idx;
	const int *values;                                /* a(ub) */
	const struct gpiobroker_line_settings *settings;  /* a(ua{sv}) */
};

/* GetValues, SetDirectionInput: au. */
static int append_indices(sd_bus_message *m, const void *args)
{
	const struct lines_args *a = args;
	int r = sd_bus_message_open_container(m, 'a', "u");

	for (size_t i = 0; r >= 0 && i < a->n; i++)
		r = sd_bus_message_append(m, "u", GB_IDX(a->idx, i));
	return r < 0 ? r : sd_bus_message_close_container(m);
}

/* SetValues, SetDirectionOutput: a(ub). */
static int append_values(sd_bus_message *m, const void *args)
{
	const struct lines_args *a = args;
	int r = sd_bus_message_open_container(m, 'a', "(ub)");

	for (size_t i = 0; r >= 0 && i < a->n; i++)
		r = sd_bus_message_append(m, "(ub)", GB_IDX(a->idx, i), a->values[i] ? 1 : 0);
	return r < 0 ? r : sd_bus_message_close_container(m);
}

/* Reconfigure: a(ua{sv}). */
static int append_settings(sd_bus_message *m, const void *args)
{
	const struct lines_args *a = args;
	int r = sd_bus_message_open_container(m, 'a', "(ua{sv})");

	for (size_t i = 0; r >= 0 && i < a->n; i++) {
		r = sd_bus_message_open_container(m, 'r', "ua{sv}");
		if (r >= 0)
			r = sd_bus_message_append(m, "u", GB_IDX(a->idx, i));
		if (r >= 0)
			r = gb_append_settings(m, &a->settings[i]);
		if (r >= 0)
			r = sd_bus_message_close_container(m);
	}
	return r < 0 ? r : sd_bus_message_close_container(m);
}

/* Every call of this file, but for direct values. */
static int call(struct gpiobroker_request *req, const char *method, gb_append_fn append,
		const struct lines_args *a, sd_bus_message **reply)
{
	return gb_call_repeatable(req->sub.b, req->sub.path, method, append, a, reply);
}

GB_EXPORT int gpiobroker_direction_input(struct gpiobroker_request *req, unsigned int index)
{
	const struct lines_args a = { .n = 1, .idx = &index };
	int r = call(req, "SetDirectionInput", append_indices, &a, NULL);

	if (r >= 0)
		gb_recipe_remember(req->recipe, 1, &index, NULL, false, NULL);
	return r;
}

GB_EXPORT int gpiobroker_direction_output(struct gpiobroker_request *req, unsigned int index,
					  int value)
{
	const struct lines_args a = { .n = 1, .idx = &index, .values = &value };
	int r = call(req, "SetDirectionOutput", append_values, &a, NULL);

	if (r >= 0)
		gb_recipe_remember(req->recipe, 1, &index, &value, true, NULL);
	return r;
}

GB_EXPORT int gpiobroker_set_values(struct gpiobroker_request *req, size_t n,
				    const unsigned int idx[], const int values[])
{
	const struct lines_args a = { .n = n, .idx = idx, .values = values };
	int r;

	if (!values && n)
		return -EINVAL;
	if (req->direct)
		r = gb_result(req->sub.b, NULL, gb_direct_set(req->direct, n, idx, values));
	else
		r = call(req, "SetValues", append_values, &a, NULL);
	if (r >= 0)
		gb_recipe_remember(req->recipe, n, idx, values, true, NULL);
	return r;
}

GB_EXPORT int gpiobroker_set_value(struct gpiobroker_request *req, unsigned int index, int value)
{
	return gpiobroker_set_values(req, 1, &index, &value);
}

GB_EXPORT int gpiobroker_get_values(struct gpiobroker_request *req, size_t n,
				    const unsigned int idx[], int values[])
{
	const struct lines_args a = { .n = n, .idx = idx };
	sd_bus_message *reply = NULL;
	size_t got = 0;
	int r, v;

	if (!values || n == 0)
		return -EINVAL;
	if (req->direct)
		return gb_result(req->sub.b, NULL, gb_direct_get(req->direct, n, idx, values));
	/* Always explicit indices: an empty array would mean "all", which is n lines
	 * only if the caller counted right. */
	r = call(req, "GetValues", append_indices, &a, &reply);
	if (r < 0)
		return r;
	r = sd_bus_message_enter_container(reply, 'a', "b");
	while (r >= 0 && got < n && (r = sd_bus_message_read(reply, "b", &v)) > 0)
		values[got++] = v ? 1 : 0;
	sd_bus_message_unref(reply);
	if (r >= 0 && got != n)
		r = -EBADMSG;
	return r < 0 ? gb_fail(req->sub.b, NULL, r) : 0;
}

GB_EXPORT int gpiobroker_get_value(struct gpiobroker_request *req, unsigned int index)
{
	int v, r = gpiobroker_get_values(req, 1, &index, &v);

	return r < 0 ? r : v;
}

GB_EXPORT int gpiobroker_reconfigure(struct gpiobroker_request *req, size_t n,
				     const unsigned int idx[],
				     const struct gpiobroker_line_settings settings[])
{
	const struct lines_args a = { .n = n, .idx = idx, .settings = settings };

	int r;

	if (!settings)
		return -EINVAL;
	r = call(req, "Reconfigure", append_settings, &a, NULL);
	if (r >= 0)
		gb_recipe_remember(req->recipe, n, idx, NULL, false, settings);
	return r;
}
