/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Values: gpio_get_value() / gpio_set_value() on one or many lines of a request,
 * and the levels a subscriber starts from (InitialState).
 */
#include <errno.h>
#include <stdlib.h>

#include "bus-error.h"
#include "broker.h"
#include "chip.h"
#include "log.h"
#include "org.gpiodbroker1.h"
#include "request.h"

int request_get_values(Request *req, unsigned int n, const unsigned int *idx, bool *values,
		       sd_bus_error *error)
{
	int r = request_check_usable(req, n, idx, error);

	if (r < 0)
		return r;
	/* One ioctl per chip, not per line. */
	for (unsigned int k = 0; k < req->n_chips; k++) {
		ReqChip *rc = &req->chips[k];
		unsigned int offs[GB_MAX_LINES_PER_REQUEST];
		enum gpiod_line_value vals[GB_MAX_LINES_PER_REQUEST];
		unsigned int m = 0;

		for (unsigned int i = 0; i < n; i++)
			if (req->lines[idx[i]].rc == rc)
				offs[m++] = req->lines[idx[i]].offset;
		if (!m)
			continue;
		r = lreq_get(&rc->lreq, m, offs, vals);
		if (r < 0)
			return request_kernel_error(error, -r, "reading values", rc);
		m = 0;
		for (unsigned int i = 0; i < n; i++)
			if (req->lines[idx[i]].rc == rc)
				values[i] = vals[m++] == GPIOD_LINE_VALUE_ACTIVE;
	}
	return 0;
}

int request_set_values(Request *req, unsigned int n, const unsigned int *idx,
		       const bool *values, sd_bus_error *error)
{
	int r = request_check_usable(req, n, idx, error);

	if (r < 0)
		return r;
	for (unsigned int i = 0; i < n; i++) {
		ReqLine *rl = &req->lines[idx[i]];

		if (rl->config.direction != GPIOD_LINE_DIRECTION_OUTPUT) {
			char what[128];

			if (rl->line)
				line_describe(rl->line, what, sizeof(what));
			else
				snprintf(what, sizeof(what), "%s:%u", rl->rc->chip_name, rl->offset);
			return gb_bus_error_setf(error, GB_ERROR_NOT_OUTPUT,
						 "line %u of request %s, %s, is not an output; "
						 "set its direction to output first",
						 idx[i], req->path, what);
		}
		for (unsigned int j = 0; j < i; j++)
			if (idx[j] == idx[i] && values[j] != values[i])
				return gb_bus_error_setf(error, GB_ERROR_INVALID_ARGS,
							 "line %u is given two different values", idx[i]);
	}
	for (unsigned int k = 0; k < req->n_chips; k++) {
		ReqChip *rc = &req->chips[k];
		unsigned int offs[GB_MAX_LINES_PER_REQUEST];
		enum gpiod_line_value vals[GB_MAX_LINES_PER_REQUEST];
		unsigned int m = 0;

		for (unsigned int i = 0; i < n; i++)
			if (req->lines[idx[i]].rc == rc) {
				offs[m] = req->lines[idx[i]].offset;
				vals[m++] = values[i] ? GPIOD_LINE_VALUE_ACTIVE : GPIOD_LINE_VALUE_INACTIVE;
			}
		if (!m)
			continue;
		r = lreq_set(&rc->lreq, m, offs, vals);
		if (r < 0)
			return request_kernel_error(error, -r, "setting values", rc);
		/* Remember what each output drives: a later reconfigure of another line on
		 * this chip must pass the same value, or the kernel would change it. */
		for (unsigned int i = 0; i < n; i++)
			if (req->lines[idx[i]].rc == rc)
				req->lines[idx[i]].config.value = values[i];
	}
	return 0;
}

/* The levels of the edge-detecting lines @p which selects (NULL: all), read at one
 * instant: the time first, then the levels (an edge between the two shows in the
 * level and again as an edge, never in neither). */
static int read_levels(Request *req, const bool *which, struct gb_event **ret, size_t *n_ret,
		       uint64_t *ts_ret, bool *ts_valid)
{
	enum gpiod_line_clock clock = GPIOD_LINE_CLOCK_MONOTONIC;
	struct gb_event *evs;
	size_t n = 0;
	uint64_t ts = 0;

	*ret = NULL;
	*n_ret = 0;
	for (unsigned int i = 0; i < req->n_lines; i++)
		if (req->lines[i].line && req->lines[i].config.edge != GPIOD_LINE_EDGE_NONE &&
		    (!which || which[i])) {
			clock = req->lines[i].config.event_clock;
			n++;
		}
	/* A direct request's owner reads levels from its own fds. */
	if (!n || !req->client || req->direct)
		return 0;
	evs = calloc(n, sizeof(*evs));
	if (!evs)
		return -ENOMEM;
	n = 0;
	*ts_valid = gb_clock_now(clock, &ts);
	if (!*ts_valid)
		gb_clock_now(GPIOD_LINE_CLOCK_MONOTONIC, &ts);
	for (unsigned int i = 0; i < req->n_lines; i++) {
		ReqLine *rl = &req->lines[i];
		enum gpiod_line_value v;

		if (!rl->line || rl->config.edge == GPIOD_LINE_EDGE_NONE || (which && !which[i]))
			continue;
		if (lreq_get(&rl->rc->lreq, 1, &rl->offset, &v) < 0) {
			log_warning("request %s: cannot read line %u for its initial state", req->path, i);
			continue;
		}
		evs[n].index = i;
		evs[n].offset = rl->offset;
		evs[n].timestamp_ns = ts;
		evs[n].value = v == GPIOD_LINE_VALUE_ACTIVE;
		n++;
	}
	*ret = evs;
	*n_ret = n;
	*ts_ret = ts;
	return 0;
}

int request_read_initial_state(Request *req, struct gb_event **ret, size_t *n_ret)
{
	uint64_t ts = 0;
	bool ts_valid = true;
	int r = read_levels(req, NULL, ret, n_ret, &ts, &ts_valid);

	/* Edges the kernel stamped before that instant are in the levels just read. */
	if (r >= 0 && *n_ret) {
		req->since_ns = ts;
		req->since_valid = ts_valid;
	}
	return r;
}

int request_read_levels_of(Request *req, const bool *which, struct gb_event **ret, size_t *n_ret)
{
	uint64_t ts;
	bool ts_valid;

	/* Lines whose edge detection just began have no earlier edges: the request's
	 * "since" stays as it is for the others. */
	return read_levels(req, which, ret, n_ret, &ts, &ts_valid);
}

void request_push_initial_state(Request *req, struct gb_event *evs, size_t n)
{
	for (size_t i = 0; i < n; i++)
		flow_push_initial(&req->flow, &evs[i]);
	free(evs);
}
