/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libFuzzer target for the policy parser: any bytes must give either a policy or
 * errors with file:line, never a crash, a leak or undefined behaviour. A parsed
 * policy is also evaluated once and checked against a chip, so matching and the
 * hardware checks run on what the parser produced.
 *
 *   make check                      a bounded run (tests/fuzz/run-fuzz-policy.sh)
 *   make fuzz FUZZ_SECONDS=600      a longer one
 */
#include <stdint.h>
#include <stdlib.h>

#include "policy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct gb_policy *p = gb_policy_new();
	struct gb_line_ident l = { "gpiochip0", "gpio-sim", 3, "reset" };
	gid_t groups[] = { 10, 20 };
	struct gb_caller c = { 1000, 1000, groups, 2 };
	struct gb_line_config cfg;
	char *errors = NULL, reason[512];

	if (!p)
		return 0;
	if (gb_policy_parse(p, "fuzz.conf", (const char *)data, size, &errors) == 0 &&
	    gb_policy_finish(p, &errors) == 0) {
		gb_line_config_init(&cfg);
		cfg.direction = GPIOD_LINE_DIRECTION_OUTPUT;
		gb_policy_check_request(p, &l, &c, &cfg, true, "label", reason, sizeof(reason));
		gb_policy_check_use(p, &l, &c, reason, sizeof(reason));
		gb_policy_find_alias(p, "reset");
		/* What the slices' helper asks of what the parser made. */
		gb_policy_find_slice(p, "lab");
		gb_policy_slice_of_item(p, "reset");
		gb_policy_slice_of_item(p, "gpiochip0:3");
		{
			/* The checks against present chips, on what the parser made. */
			const char *const names[] = { NULL, "reset", "led", NULL };
			const char *const links[] = { "/dev/gpio/by-path/platform-gpio-sim.0", NULL };
			const char *const props[] = { "ID_PATH=platform-gpio-sim.0", "ID_SERIAL_SHORT=A1",
						      NULL };
			const struct gb_chip_udev udev = { links, props };
			const struct gb_chip_ident chip[2] = {
				{ .name = "gpiochip0", .label = "gpio-sim", .udev = &udev, .num_lines = 4,
				  .line_names = names },
				{ .name = "gpiochip1", .label = "gpio-sim", .udev = &udev, .num_lines = 4,
				  .line_names = names },
			};
			char *warnings = NULL;

			gb_policy_check_identity(p, chip, 2, &errors);
			gb_policy_check_chips(p, chip, 2, &errors, &warnings);
			free(warnings);
		}
	}
	free(errors);
	gb_policy_free(p);
	return 0;
}
