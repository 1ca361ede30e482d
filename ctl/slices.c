/* SPDX-License-Identifier: GPL-2.0-or-later */
/* gpiobrokerctl slices: the policy's slices as the broker reports them (PolicyStatus). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "ctl.h"

const char usage_slices[] = "gpiobrokerctl slices [--json]";
const char help_slices[] =
	"The policy's slices (chips of their own that gpiod-broker-slices made from the\n"
	"policy's lines with the kernel's gpio-aggregator), a line each: name, state\n"
	"(\"made\", or \"failed: REASON\"), chip, link and lines.\n"
	"      --json               one JSON array\n";

static void print_text(const struct status_value *v)
{
	if (!v || !v->n_slices) {
		printf("no slices\n");
		return;
	}
	for (size_t k = 0; k < v->n_slices; k++) {
		const struct slice_status *s = &v->slices[k];

		printf("%s: %s, chip %s, link %s, lines", s->name, s->state,
		       *s->chip ? s->chip : "none", s->link);
		for (size_t j = 0; j < s->n_lines; j++)
			printf(" %s", s->lines[j]);
		printf("%s\n", s->n_lines ? "" : " unknown");
	}
}

int cmd_slices(int argc, char **argv)
{
	struct policy_status ps;
	const struct status_value *v;
	bool json;
	int r;

	if ((r = parse_json_only(argc, argv, &json, 0)))
		return r;
	r = bus_policy_status(&ps);
	if (r < 0) {
		fprintf(stderr, "gpiobrokerctl: slices: cannot read the broker's PolicyStatus: %s\n",
			strerror(-r));
		policy_status_clear(&ps);
		return exit_of(r);
	}
	v = policy_status_slices(&ps);
	if (json)
		r = json_print(v ? slices_json(v) : json_array());
	else
		print_text(v);
	policy_status_clear(&ps);
	return r;
}
