/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Host unit test of the policy's edge actions (shared/policy-action.c): a valid
 * section read whole, every error with its file:line, the unit names an action makes
 * (templates, %l and %e, systemd's escaping), the checks across actions, the units
 * looked for in an image, and the polkit rule.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "files.h"
#include "policy-util.h"
#include "policy.h"
#include "testmain.h"

START_TEST(test_valid)
{
	static const char text[] =
		"[action short]\n"
		"line = power-btn\n"
		"trigger = press\n"
		"active-low = yes\n"
		"debounce = 30ms\n"
		"bias = pull-up\n"
		"unit = button@.service\n"
		"rate-limit-interval = 1.5s\n"
		"rate-limit-burst = 2\n"
		"\n"
		"[action long]\n"
		"line = power-btn\n"
		"trigger = long-press\n"
		"hold = 5s\n"
		"active-low = yes\n"
		"bias = pull-up\n"
		"unit = factory-reset.service\n"
		"job = restart\n"
		"\n"
		"[action longer]\n"
		"line = power-btn\n"
		"trigger = long-press\n"
		"hold = 10s\n"
		"active-low = yes\n"
		"bias = pull-up\n"
		"unit = gb-%e@%l.service\n"
		"\n"
		"[action door]\n"
		"line = gpiochip0:3\n"
		"trigger = both\n"
		"unit = door.target\n"
		"job = stop\n";
	char unit[256];
	struct gb_policy *p = gb_test_policy_valid(text);
	const struct gb_policy_action *a;

	ck_assert_uint_eq(p->n_actions, 4);
	a = &p->actions[0];
	ck_assert_str_eq(a->name, "short");
	ck_assert_str_eq(a->file, "t.conf");
	ck_assert_uint_eq(a->lineno, 1);
	ck_assert_int_eq(a->trigger.kind, GB_TRIGGER_PRESS);
	ck_assert(a->trigger.active_low);
	ck_assert_uint_eq(a->trigger.debounce_ns, 30000000ull);
	ck_assert_uint_eq(a->trigger.rate_interval_ns, 1500000000ull);
	ck_assert_uint_eq(a->trigger.rate_burst, 2);
	ck_assert_int_eq(a->bias, GPIOD_LINE_BIAS_PULL_UP);
	ck_assert_int_eq(a->job, GB_JOB_START);
	/* The shortest hold of the line's long presses decides what was long. */
	ck_assert_uint_eq(a->trigger.long_hold_ns, 5000000000ull);
	ck_assert_int_eq(gb_policy_action_unit(a, GB_TEV_PRESS, unit, sizeof(unit)), 0);
	ck_assert_str_eq(unit, "button@power\\x2dbtn:press.service");
	ck_assert_int_eq(p->actions[1].job, GB_JOB_RESTART);
	ck_assert_uint_eq(p->actions[1].trigger.hold_ns, 5000000000ull);
	ck_assert_uint_eq(p->actions[1].trigger.long_hold_ns, 0);
	ck_assert_int_eq(gb_policy_action_unit(&p->actions[2], GB_TEV_LONG_PRESS, unit,
					       sizeof(unit)), 0);
	ck_assert_str_eq(unit, "gb-long\\x2dpress@power\\x2dbtn.service");
	ck_assert_int_eq(gb_policy_action_unit(&p->actions[3], GB_TEV_FALLING, unit, sizeof(unit)), 0);
	ck_assert_str_eq(unit, "door.target");
	ck_assert_int_eq(p->actions[3].job, GB_JOB_STOP);
	gb_policy_free(p);
}
END_TEST

static const struct {
	const char *text;
	const char *error;
} bad[] = {
	{ "[action a]\ntrigger = rising\nunit = a.service\n",
	  "t.conf:1: [action a]: which line? give 'line'" },
	{ "[action a]\nline = x\nunit = a.service\n", "t.conf:1: [action a]: give 'trigger'" },
	{ "[action a]\nline = x\ntrigger = rising\n", "t.conf:1: [action a]: give 'unit'" },
	{ "[action a]\nline = x\ntrigger = sideways\nunit = a.service\n",
	  "t.conf:3: 'trigger' must be rising, falling, both, press, long-press or level, not 'sideways'" },
	{ "[action a]\nline = x\ntrigger = long-press\nunit = a.service\n",
	  "t.conf:1: [action a]: trigger = long-press needs 'hold'" },
	{ "[action a]\nline = x\ntrigger = press\nhold = 2s\nunit = a.service\n",
	  "t.conf:1: [action a]: 'hold' belongs to trigger = long-press" },
	{ "[action a]\nline = x\ntrigger = rising\nafter-long-press = yes\nunit = a.service\n",
	  "t.conf:1: [action a]: 'after-long-press' belongs to trigger = press" },
	{ "[action a]\nline = x\ntrigger = rising\ndebounce = 20\nunit = a.service\n",
	  "t.conf:4: 'debounce' must be a time span with its unit" },
	{ "[action a]\nline = x\ntrigger = rising\ndebounce = 11s\nunit = a.service\n",
	  "t.conf:4: 'debounce' is at most 10000 ms" },
	{ "[action a]\nline = x\ntrigger = long-press\nhold = 0ms\nunit = a.service\n",
	  "t.conf:4: 'hold' must be longer than 0" },
	{ "[action a]\nline = x\ntrigger = rising\nrate-limit-burst = 3\nunit = a.service\n",
	  "t.conf:1: [action a]: give both rate-limit-interval and rate-limit-burst" },
	{ "[action a]\nline = x\ntrigger = rising\nrate-limit-burst = 0\n",
	  "t.conf:4: 'rate-limit-burst' must be a number 1-10000" },
	{ "[action a]\nline = x\ntrigger = rising\nunit = a.servic\n",
	  "t.conf:1: [action a]: 'unit = a.servic' does not make a valid unit name for 'rising'" },
	{ "[action a]\nline = x\ntrigger = rising\nunit = a b.service\n",
	  "t.conf:4: 'unit' has a character a unit name cannot have" },
	{ "[action a]\nline = x\ntrigger = rising\nunit = a%q.service\n",
	  "t.conf:1: [action a]: 'unit = a%q.service' does not make a valid unit name" },
	{ "[action a]\nline = x\ntrigger = rising\nunit = a.service\njob = reload\n",
	  "t.conf:5: 'job' must be start, stop or restart, not 'reload'" },
	{ "[action a]\nline = x\ntrigger = rising\nunit = a.service\nbias = up\n",
	  "t.conf:5: 'bias' must be as-is, pull-up, pull-down or disabled" },
	{ "[action a]\nline = x\ntrigger = rising\nunit = a.service\nusers = root\n",
	  "t.conf:5: unknown key 'users' in an [action] section" },
	{ "[action a]\nline = x\nline = y\ntrigger = rising\nunit = a.service\n",
	  "t.conf:3: 'line' given twice in this section" },
	{ "[action a]\nline = x\ntrigger =\nunit = a.service\n", "t.conf:3: 'trigger' has no value" },
	{ "[action a]\nline = a b\ntrigger = rising\nunit = a.service\n",
	  "t.conf:2: 'line' must be an alias" },
	{ "[action 1a]\nline = x\ntrigger = rising\nunit = a.service\n",
	  "t.conf:1: '1a' is not a valid action name" },
	{ "[action a]\nline = x\ntrigger = rising\nunit = a.service\n"
	  "[action a]\nline = y\ntrigger = rising\nunit = a.service\n",
	  "t.conf:5: the action name 'a' is already used at t.conf:1" },
	{ "[action a]\nline = x\ntrigger = rising\nunit = a.service\nbias = pull-up\n"
	  "[action b]\nline = x\ntrigger = falling\nunit = b.service\n",
	  "t.conf:6: [action b]: line 'x' has another 'bias' or 'active-low' in [action a] (t.conf:1)" },
	{ "[line x]\nchip = c\noffset = 1\nusers = 1\ndirections = input, output\n"
	  "direction-may-change = yes\nedges = rising, falling, both\n"
	  "bias = as-is, disabled, pull-up, pull-down\ndrive = push-pull, open-drain, open-source\n"
	  "direct = yes\n"
	  "[action a]\nline = x\ntrigger = rising\nunit = a.service\n",
	  "t.conf:11: [action a]: line 'x' is direct = yes in t.conf:1" },
	{ "[action a]\nline = xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
	  "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
	  "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\n"
	  "trigger = rising\nunit = a@.service\n",
	  "does not make a valid unit name for 'rising' (too long)" },
};

START_TEST(test_errors)
{
	gb_test_policy_refuses(_i, bad[_i].text, bad[_i].error);
}
END_TEST

/* after-long-press: a press that was long fires the short action only when asked. */
START_TEST(test_after_long_press)
{
	static const char text[] =
		"[action a]\nline = b\ntrigger = press\nafter-long-press = yes\nunit = a.service\n"
		"[action c]\nline = other\ntrigger = press\nunit = c.service\n";
	struct gb_policy *p = gb_test_policy_valid(text);

	ck_assert(p->actions[0].trigger.after_long_press);
	/* No long press on its line: every press is short. */
	ck_assert_uint_eq(p->actions[1].trigger.long_hold_ns, 0);
	gb_policy_free(p);
}
END_TEST

/* --root: each unit an action can start is in the image, or its template is. */
START_TEST(test_units_in_image)
{
	static const char text[] =
		"[action a]\nline = btn\ntrigger = both\nunit = ev@.service\n"
		"[action b]\nline = btn\ntrigger = press\nunit = reset.service\n"
		"[action c]\nline = door\ntrigger = rising\nunit = door.service\n";
	char root[] = "/tmp/gb-test-units-XXXXXX", *errors = NULL;
	int n, rootfd;
	struct gb_policy *p;

	ck_assert_ptr_nonnull(mkdtemp(root));
	gb_write_file(root, "usr/lib/systemd/system/ev@.service", "");
	gb_write_file(root, "etc/systemd/system/reset.service", "");
	p = gb_test_policy_valid(text);
	rootfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	ck_assert_int_ge(rootfd, 0);
	n = gb_policy_actions_check_units(p, rootfd, &errors);
	ck_assert_int_eq(n, 1);
	ck_assert_msg(strstr(errors, "t.conf:9: [action c]: unit door.service is not in the image"),
		      "%s", errors);
	gb_write_file(root, "lib/systemd/system/door.service", "");
	free(errors);
	errors = NULL;
	ck_assert_int_eq(gb_policy_actions_check_units(p, rootfd, &errors), 0);
	close(rootfd);
	free(errors);
	gb_policy_free(p);
	gb_remove_tree(root);
}
END_TEST

/* The polkit rule names each unit with its job, every template instance spelled out. */
START_TEST(test_polkit)
{
	static const char text[] =
		"[action a]\nline = power-btn\ntrigger = both\nunit = ev@.service\n"
		"[action b]\nline = x\ntrigger = long-press\nhold = 1s\nunit = r\"x.service\njob = restart\n";
	char *out = NULL;
	size_t len = 0;
	struct gb_policy *p;
	FILE *f;

	/* A quote is no unit character: refused before any rule is written. */
	gb_test_policy_refuses(0, text, "t.conf:9: 'unit' has a character a unit name cannot "
			       "have: 'r\"x.service'");
	p = gb_test_policy_valid("[action a]\nline = power-btn\ntrigger = both\n"
				 "unit = ev@.service\n[action b]\nline = x\ntrigger = long-press\n"
				 "hold = 1s\nunit = r.service\njob = restart\n");
	f = open_memstream(&out, &len);
	ck_assert_int_eq(gb_policy_actions_polkit(p, "gpiod-broker", "t.d", f), 0);
	fclose(f);
	ck_assert_msg(strstr(out, "\"start ev@power\\\\x2dbtn:rising.service\": true"), "%s", out);
	ck_assert_msg(strstr(out, "\"start ev@power\\\\x2dbtn:falling.service\": true"), "%s", out);
	ck_assert_msg(strstr(out, "\"restart r.service\": true"), "%s", out);
	ck_assert_msg(strstr(out, "subject.user != \"gpiod-broker\""), "%s", out);
	ck_assert_msg(strstr(out, "org.freedesktop.systemd1.manage-units"), "%s", out);
	ck_assert(!strstr(out, "\"start r.service\""));
	free(out);
	gb_policy_free(p);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("policy-action");
	TCase *tc = tcase_create("policy-action");

	tcase_add_test(tc, test_valid);
	tcase_add_loop_test(tc, test_errors, 0, sizeof(bad) / sizeof(bad[0]));
	tcase_add_test(tc, test_after_long_press);
	tcase_add_test(tc, test_units_in_image);
	tcase_add_test(tc, test_polkit);
	suite_add_tcase(s, tc);
	return gb_run_suite(s);
}
