/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Direction and settings of held lines: gpio_direction_input(),
 * gpio_direction_output(value) (direction and level in one call), and every
 * other setting (edge, bias, drive, active-low, debounce, event clock), each
 * change checked against the policy before it reaches the kernel.
 */
#include <errno.h>
#include <stdlib.h>

#include "bus-error.h"
#include "access.h"
#include "broker.h"
#include "client.h"
#include "journal.h"
#include "log.h"
#include "macro.h"
#include "org.gpiodbroker1.h"
#include "request.h"

int request_reconfigure(Request *req, const struct gb_caller *caller, unsigned int n,
			const unsigned int *idx, const struct gb_line_config *updates,
			sd_bus_error *error)
{
	_cleanup_free_ struct gb_line_config *old = NULL;
	char msg[256];
	int ret = request_check_usable(req, n, idx, error);

	if (ret < 0)
		return ret;
	/* The kernel takes every output's level with new settings: for a direct
	 * request it is what the owner last drove through its fd, not our record. */
	if (req->direct)
		request_refresh_values(req);
	old = malloc(req->n_lines * sizeof(*old));
	if (!old)
		return -ENOMEM;
	for (unsigned int i = 0; i < req->n_lines; i++)
		old[i] = req->lines[i].config;

	for (unsigned int i = 0; i < n; i++) {
		ReqLine *rl = &req->lines[idx[i]];
		const struct gb_line_config *u = &updates[i];
		bool to_output = (u->set & GB_FIELD_DIRECTION) &&
				 u->direction == GPIOD_LINE_DIRECTION_OUTPUT &&
				 rl->config.direction != GPIOD_LINE_DIRECTION_OUTPUT;

		/* gpio_direction_output() takes its value: no implicit level. */
		if (to_output && !(u->set & GB_FIELD_VALUE)) {
			ret = gb_bus_error_setf(error, GB_ERROR_INVALID_ARGS,
						"line %u: switching to output needs 'value'", idx[i]);
			goto revert;
		}
		gb_line_config_merge(&rl->config, u);
		if (gb_line_config_validate(&rl->config, msg, sizeof(msg)) < 0) {
			ret = gb_bus_error_setf(error, GB_ERROR_INVALID_ARGS, "line %u: %s", idx[i], msg);
			goto revert;
		}
		{
			struct gb_line_ident id;

			line_ident(rl->line, &id);
			if (gb_policy_check_reconfigure(req->broker->policy, &id, caller, &old[idx[i]],
							&rl->config, msg, sizeof(msg)) < 0) {
				journal_denied(req->broker, caller->uid,
					       req->client ? req->client->name : NULL,
					       "reconfiguring", rl->line, req->path, req->label, msg,
					       sizeof(msg));
				ret = gb_bus_error_setf(error, GB_ERROR_PERMISSION, "line %u: %s",
							idx[i], msg);
				goto revert;
			}
		}
		/* "value" was for this call; from now on it is the tracked output level. */
		rl->config.set &= ~GB_FIELD_VALUE;
	}
	for (unsigned int k = 0; k < req->n_chips; k++) {
		bool touched = false;

		for (unsigned int i = 0; i < n; i++)
			touched |= req->lines[idx[i]].rc == &req->chips[k];
		if (!touched)
			continue;
		ret = reqchip_apply(&req->chips[k], error);
		if (ret < 0) {
			/* Put the chips already changed back as they were. */
			for (unsigned int i = 0; i < req->n_lines; i++)
				req->lines[i].config = old[i];
			for (unsigned int j = 0; j < k; j++)
				reqchip_apply(&req->chips[j], NULL);
			return ret;
		}
	}
	request_save(req);
	return 0;
revert:
	for (unsigned int i = 0; i < req->n_lines; i++)
		req->lines[i].config = old[i];
	return ret;
}
