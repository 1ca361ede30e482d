/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Host unit test of the policy: the parser (a valid file, every error with its
 * file:line), loading (permissions, cross-file checks), and a generated matrix of
 * (rule, caller, operation) cases checked against a small reference model.
 */
#include <check.h>
#include <errno.h>
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
	const char *text =
		"# comment\n"
		"; another\n"
		"[broker]\n"
		"root-bypass = no\n"
		"\n"
		"[line camera0-power]\n"
		"chip = gpiochip0\n"
		"offset = 3\n"
		"users = root, 1234\n"
		"groups = 0\n"
		"directions = output\n"
		"safe-state = output-low\n"
		"initial-value = 1\n"
		"label-prefix = cam-\n"
		"drive = open-drain\n"
		"\n"
		"[group motors]\n"
		"chip = pca*\n"
		"offsets = 0-3, 7\n"
		"users = *\n"
		"directions = input, output\n"
		"direction-may-change = yes\n"
		"edges = rising, both\n"
		"bias = pull-up\n"
		"persistent = yes\n"
		"\n"
		"[line door]\n"
		"line-name = DOOR_SENSOR\n"
		"users = 1000\n"
		"directions = input\n";
	struct gb_policy *p = gb_test_policy_valid(text);
	const struct gb_policy_entry *e;

	ck_assert(!p->root_bypass);
	ck_assert_uint_eq(p->n_entries, 3);
	e = gb_policy_find_alias(p, "camera0-power");
	ck_assert_ptr_nonnull(e);
	ck_assert_str_eq(e->chip, "gpiochip0");
	ck_assert_uint_eq(e->n_offsets, 1);
	ck_assert_uint_eq(e->offsets[0], 3);
	ck_assert_uint_eq(e->n_uids, 2);
	ck_assert_uint_eq(e->uids[0], 0);
	ck_assert_uint_eq(e->uids[1], 1234);
	ck_assert_int_eq(e->safe_state, GB_SAFE_OUTPUT_LOW);
	ck_assert_int_eq(e->initial_value, 1);
	ck_assert_str_eq(e->label_prefix, "cam-");
	ck_assert_uint_eq(e->lineno, 6);
	ck_assert(e->drives & GB_BIT(GPIOD_LINE_DRIVE_OPEN_DRAIN));
	e = &p->entries[1];
	ck_assert(e->group && e->any_user && e->persistent && e->direction_may_change);
	ck_assert_uint_eq(e->n_offsets, 5);
	ck_assert(e->edges & GB_BIT(GPIOD_LINE_EDGE_RISING));
	ck_assert(!(e->edges & GB_BIT(GPIOD_LINE_EDGE_FALLING)));
	ck_assert(gb_policy_find_alias(p, "motors") == NULL); /* groups are not aliases */
	{
		struct gb_line_ident l = { "gpiochip5", "pca9555", 7, NULL };
		struct gb_line_ident d = { "gpiochip1", "x", 9, "DOOR_SENSOR" };

		ck_assert_ptr_eq(gb_policy_match(p, &l, NULL, 0), &p->entries[1]);
		ck_assert_ptr_eq(gb_policy_match(p, &d, NULL, 0), &p->entries[2]);
		l.offset = 5;
		ck_assert_ptr_null(gb_policy_match(p, &l, NULL, 0));
	}
	gb_policy_free(p);
}
END_TEST

static const struct {
	const char *text;
	const char *error; /* the exact file:line and the gist */
} bad[] = {
	{ "users = 1\n", "t.conf:1: 'users' outside any section" },
	{ "[line a]\nchip = c\noffset = 1\nusers = 1\ndirections = input\ncolour = red\n",
	  "t.conf:6: unknown key 'colour'" },
	{ "[line a]\nchip = c\nchip = d\noffset = 1\nusers = 1\ndirections = input\n",
	  "t.conf:3: 'chip' given twice" },
	{ "[line a]\nchip = c\noffset = x\nusers = 1\ndirections = input\n",
	  "t.conf:3: 'offset' must be a number" },
	{ "[line a]\nchip = c\noffset = 1\nusers = 1\ndirections = sideways\n",
	  "t.conf:5: 'sideways' is not a valid value for 'directions'" },
	{ "[line a]\nchip = c\noffset = 1\nusers = 1\ndirections = input, input\n",
	  "t.conf:5: 'directions' lists 'input' twice" },
	{ "[line a]\nchip = c\noffset = 1\nusers = 1\ndirections = input,\n",
	  "t.conf:5: empty item in 'directions'" },
	{ "[line a]\nchip = c\noffset = 1\nusers = 1\n", "t.conf:1: [line a]: 'directions' is required" },
	{ "[line a]\nchip = c\noffset = 1\ndirections = input\n", "t.conf:1: [line a]: nobody may use it" },
	{ "[line a]\nusers = 1\ndirections = input\n", "t.conf:1: [line a]: which line?" },
	{ "[line a]\nchip = /dev/gpiochip0\noffset = 1\nusers = 1\ndirections = input\n",
	  "t.conf:2: 'chip' = '/dev/gpiochip0': a path must be a link under /dev/gpio/by-path/ or "
	  "/dev/gpio/by-id/" },
	{ "[line a]\nchip = /dev/gpio/by-id/\noffset = 1\nusers = 1\ndirections = input\n",
	  "t.conf:2: 'chip' = '/dev/gpio/by-id/': a path must be a link" },
	{ "[line a]\nchip = id_path=x\noffset = 1\nusers = 1\ndirections = input\n",
	  "t.conf:2: 'chip': 'id_path=x' is not a udev property match (KEY=VALUE, the key in capitals" },
	{ "[line a]\nchip = ID_PATH=\noffset = 1\nusers = 1\ndirections = input\n",
	  "t.conf:2: 'chip': 'ID_PATH=' is not a udev property match" },
	{ "[line a]\nchip = ID_VENDOR_ID=0403,\noffset = 1\nusers = 1\ndirections = input\n",
	  "t.conf:2: 'chip' has an empty item in 'ID_VENDOR_ID=0403,'" },
	{ "[line a]\nchip = c\noffset = 1\nusers = 1\ndirections = output\nrestore-on-replug = yes\n",
	  "t.conf:1: [line a]: 'restore-on-replug' needs persistent = yes" },
	{ "[line a]\nline-name = x\nchip = c\noffset = 1\nusers = 1\ndirections = input\n",
	  "t.conf:1: [line a]: give either line-name or chip and offset, not both" },
	{ "[line a]\nchip = c\noffset = 1\nusers = 1\ndirections = input\ndirection-may-change = yes\n",
	  "t.conf:1: [line a]: direction-may-change = yes needs directions = input, output" },
	{ "[line a]\nchip = c\noffset = 1\nusers = 1\ndirections = output\nedges = both\n",
	  "t.conf:1: [line a]: edge detection needs input" },
	{ "[line a]\nchip = c\noffset = 1\nusers = 1\ndirections = input\ndrive = open-drain\n",
	  "t.conf:1: [line a]: 'drive' needs output" },
	{ "[line a]\nchip = c\noffset = 1\nusers = 1\ndirections = input\ninitial-value = 1\n",
	  "t.conf:1: [line a]: 'initial-value' needs output" },
	{ "[line a]\nchip = c\noffset = 1\nusers = 1\ndirections = output\ninitial-value = 2\n",
	  "t.conf:6: 'initial-value' must be 0 or 1" },
	{ "[line a]\nchip = c\noffset = 1\nusers = 1\ndirections = output\nsafe-state = floating\n",
	  "t.conf:6: 'safe-state' must be" },
	{ "[line a]\nchip = c\noffset = 1\nusers = 1\ndirections = output\npersistent = maybe\n",
	  "t.conf:6: 'persistent' must be yes or no" },
	{ "[line a]\nchip = c\noffset = 1\nusers = 1\ndirections = output\nlabel-prefix = has space\n",
	  "t.conf:6: 'label-prefix' must be printable ASCII without spaces" },
	{ "[line a]\nchip = c\noffsets = 1-3\nusers = 1\ndirections = output\n",
	  "t.conf:3: 'offsets' does not belong in a [line] section" },
	{ "[group g]\nchip = c\noffsets = 3-1\nusers = 1\ndirections = output\n",
	  "t.conf:3: range '3-1' in 'offsets' runs backwards" },
	{ "[group g]\nchip = c\noffsets = 1, 1\nusers = 1\ndirections = output\n",
	  "t.conf:3: offset 1 is listed twice" },
	{ "[group g]\nline-name = x\nusers = 1\ndirections = output\n",
	  "t.conf:2: 'line-name' does not belong in a [group] section" },
	{ "[gadget x]\n", "t.conf:1: unknown section kind 'gadget'" },
	{ "[line 9lives]\n", "t.conf:1: '9lives' is not a valid line name" },
	{ "[line a\n", "t.conf:1: a section header is" },
	{ "[broker x]\n", "t.conf:1: [broker] takes no name" },
	{ "[broker]\nroot-bypass = yes\n[broker]\n", "t.conf:3: [broker] given twice" },
	{ "[broker]\nusers = 1\n", "t.conf:2: 'users' does not belong in a [broker] section" },
	{ "just some words\n", "t.conf:1: expected 'key = value' or a [section]" },
	{ "[line a]\nchip = c\noffset = 1\nusers =\ndirections = output\n", "t.conf:4: 'users' has no value" },
	{ "[line a]\nchip = c\noffset = 1\nusers = 1\ndirections = input\nwatch-users = 2,\n",
	  "t.conf:6: empty item in 'watch-users'" },
	{ "[line a]\nchip = c\noffset = 1\nusers = 1\ndirections = input\nwatch-users = 2\nwatch-users = 3\n",
	  "t.conf:7: 'watch-users' given twice" },
	{ "[line a]\nchip = c\noffset = 1\nusers = 1\ndirections = input\nwatch-users = 2\nmax-watchers = 0\n",
	  "t.conf:7: 'max-watchers' must be a number 1-1024, not '0'" },
	{ "[line a]\nchip = c\noffset = 1\nusers = 1\ndirections = input\nwatch-users = 2\nmax-watchers = 1025\n",
	  "t.conf:7: 'max-watchers' must be a number 1-1024" },
	{ "[line a]\nchip = c\noffset = 1\nusers = 1\ndirections = input\nwatch-users = 2\nmax-watchers = many\n",
	  "t.conf:7: 'max-watchers' must be a number" },
	{ "[line a]\nchip = c\noffset = 1\nusers = 1\ndirections = input\nmax-watchers = 3\n",
	  "t.conf:1: [line a]: 'max-watchers' without 'watch-users' or 'watch-groups'" },
	{ "[line a]\nchip = c\noffset = 1\nusers = 1\ndirections = output\nwatch-users = *\n",
	  "t.conf:1: [line a]: watching needs input in 'directions'" },
	{ "[broker]\nwatch-users = 1\n", "t.conf:2: 'watch-users' does not belong in a [broker] section" },
	{ "[broker]\nmax-watchers = 1\n", "t.conf:2: 'max-watchers' does not belong in a [broker] section" },
	{ "[line a]\nchip = c\noffset = 1\nusers = 1\ndirections = output\n"
	  "[line a]\nchip = c\noffset = 2\nusers = 1\ndirections = output\n",
	  "t.conf:6: the name 'a' is already used by [line a] (t.conf:1)" },
	{ "[line a]\nchip = c\noffset = 1\nusers = 1\ndirections = output\n"
	  "[group b]\nchip = c\noffsets = 0-4\nusers = 1\ndirections = output\n",
	  "t.conf:6: line c:1 is already covered by [line a] (t.conf:1)" },
	{ "[line a]\nline-name = x\nusers = 1\ndirections = output\n"
	  "[line b]\nline-name = x\nusers = 1\ndirections = output\n",
	  "t.conf:5: line 'x' is already covered by [line a] (t.conf:1)" },
};

START_TEST(test_errors)
{
	gb_test_policy_refuses(_i, bad[_i].text, bad[_i].error);
}
END_TEST

/* Watching: its own users and groups, separate from requesting; the limit. */
START_TEST(test_watch)
{
	const char *text =
		"[line door]\nchip = gpiochip0\noffset = 1\nusers = 1000\ndirections = input\n"
		"watch-users = 2000, 2001\nwatch-groups = 300\nmax-watchers = 3\n"
		"[group all]\nchip = gpiochip1\noffsets = 0-7\nusers = 1000\ndirections = input, output\n"
		"watch-users = *\n"
		"[line lamp]\nchip = gpiochip0\noffset = 2\nusers = 1000\ndirections = output\n";
	const struct gb_line_ident door = { "gpiochip0", "c0", 1, "DOOR" };
	const struct gb_line_ident any = { "gpiochip1", "c1", 5, "" };
	const struct gb_line_ident lamp = { "gpiochip0", "c0", 2, "" };
	const struct gb_line_ident none = { "gpiochip0", "c0", 9, "" };
	const gid_t grp[] = { 300 };
	struct gb_caller owner = { 1000, 1000, NULL, 0 }, watcher = { 2001, 2001, NULL, 0 },
			 member = { 4000, 4000, grp, 1 }, root = { 0, 0, NULL, 0 };
	const struct gb_policy_entry *e;
	unsigned int max = 0;
	char reason[512];
	struct gb_policy *p = gb_test_policy_valid(text);

	e = gb_policy_find_alias(p, "door");
	ck_assert_ptr_nonnull(e);
	ck_assert_uint_eq(e->n_watch_uids, 2);
	ck_assert_uint_eq(e->watch_uids[1], 2001);
	ck_assert_uint_eq(e->n_watch_gids, 1);
	ck_assert_uint_eq(e->watch_gids[0], 300);
	ck_assert_uint_eq(e->max_watchers, 3);
	ck_assert(!e->watch_any_user);

	/* A watch user by uid, a member of a watch group, anybody for "*". */
	ck_assert_int_eq(gb_policy_check_watch(p, &door, &watcher, &max, reason, sizeof(reason)), 0);
	ck_assert_uint_eq(max, 3);
	ck_assert_int_eq(gb_policy_check_watch(p, &door, &member, &max, reason, sizeof(reason)), 0);
	ck_assert_int_eq(gb_policy_check_watch(p, &any, &member, &max, reason, sizeof(reason)), 0);
	ck_assert_uint_eq(max, GB_DEFAULT_MAX_WATCHERS);
	/* May request is not may watch, and the reverse. */
	ck_assert_int_eq(gb_policy_check_watch(p, &door, &owner, &max, reason, sizeof(reason)), -EACCES);
	ck_assert_msg(strstr(reason, "uid 1000 is not among the watch-users or watch-groups of [line door]"),
		      "%s", reason);
	ck_assert_int_eq(gb_policy_check_use(p, &door, &watcher, reason, sizeof(reason)), -EACCES);
	ck_assert_int_eq(gb_policy_check_watch(p, &lamp, &member, &max, reason, sizeof(reason)), -EACCES);
	ck_assert_msg(strstr(reason, "watch-users"), "%s", reason);
	ck_assert_int_eq(gb_policy_check_watch(p, &none, &member, &max, reason, sizeof(reason)), -EACCES);
	ck_assert_msg(strstr(reason, "no policy entry covers gpiochip0:9"), "%s", reason);
	/* Root bypasses who, not how many. */
	ck_assert_int_eq(gb_policy_check_watch(p, &lamp, &root, &max, reason, sizeof(reason)), 0);
	ck_assert_int_eq(gb_policy_check_watch(p, &door, &root, &max, reason, sizeof(reason)), 0);
	ck_assert_uint_eq(max, 3);
	gb_policy_free(p);
}
END_TEST

/* "direct": only on entries that already allow everything the kernel fd can set,
 * with a file:line error naming each missing rule; then the check itself. */
#define DIRECT_ALL "chip = c\noffset = 1\nusers = 1000\ndirections = input, output\n" \
	"direction-may-change = yes\nedges = rising, falling, both\n" \
	"bias = disabled, pull-up, pull-down\ndrive = open-drain, open-source\n"
START_TEST(test_direct)
{
	static const struct {
		const char *text, *error;
	} cases[] = {
		{ "[line a]\nchip = c\noffset = 1\nusers = 1\ndirections = output\ndirect = yes\n",
		  "t.conf:1: [line a]: direct = yes hands out the kernel line fd, which can set anything; "
		  "the entry must allow all of it: missing directions = input, output; "
		  "direction-may-change = yes; edges = rising, falling, both; "
		  "bias = as-is, disabled, pull-up, pull-down; drive = push-pull, open-drain, open-source" },
		{ "[line a]\nchip = c\noffset = 1\nusers = 1\ndirections = input, output\n"
		  "edges = rising, falling, both\nbias = disabled, pull-up, pull-down\n"
		  "drive = open-drain, open-source\ndirect = yes\n",
		  "missing direction-may-change = yes\n" },
		{ "[group g]\nchip = c\noffsets = 1-2\nusers = 1\ndirections = input, output\n"
		  "direction-may-change = yes\nedges = both\nbias = disabled, pull-up, pull-down\n"
		  "drive = open-drain, open-source\ndirect = yes\n",
		  "t.conf:1: [group g]: direct = yes hands out the kernel line fd, which can set "
		  "anything; the entry must allow all of it: missing edges = rising, falling, both\n" },
		{ "[line a]\nchip = c\noffset = 1\nusers = 1\ndirections = input, output\n"
		  "direction-may-change = yes\nedges = rising, falling, both\nbias = pull-up\n"
		  "drive = open-drain, open-source\ndirect = yes\n",
		  "missing bias = as-is, disabled, pull-up, pull-down\n" },
		{ "[line a]\nchip = c\noffset = 1\nusers = 1\ndirections = input, output\n"
		  "direction-may-change = yes\nedges = rising, falling, both\n"
		  "bias = disabled, pull-up, pull-down\ndrive = open-drain\ndirect = yes\n",
		  "missing drive = push-pull, open-drain, open-source\n" },
		{ "[line a]\n" DIRECT_ALL "direct = sometimes\n", "t.conf:10: 'direct' must be yes or no" },
		{ "[broker]\ndirect = yes\n", "t.conf:2: 'direct' does not belong in a [broker] section" },
	};
	const char *good = "[line fast]\n" DIRECT_ALL "direct = yes\n"
			   "[line slow]\n" "chip = c\noffset = 2\nusers = 1000\ndirections = input, output\n"
			   "direction-may-change = yes\nedges = rising, falling, both\n"
			   "bias = disabled, pull-up, pull-down\ndrive = open-drain, open-source\n";
	const struct gb_line_ident fast = { "c", "c", 1, "" }, slow = { "c", "c", 2, "" };
	struct gb_caller owner = { 1000, 1000, NULL, 0 }, other = { 1001, 1001, NULL, 0 },
			 root = { 0, 0, NULL, 0 };
	char reason[512];
	struct gb_policy *p;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		gb_test_policy_refuses((int)i, cases[i].text, cases[i].error);

	p = gb_test_policy_valid(good);
	ck_assert(gb_policy_find_alias(p, "fast")->direct);
	ck_assert(!gb_policy_find_alias(p, "slow")->direct);
	ck_assert_int_eq(gb_policy_check_direct(p, &fast, &owner, reason, sizeof(reason)), 0);
	ck_assert_int_eq(gb_policy_check_direct(p, &slow, &owner, reason, sizeof(reason)), -EACCES);
	ck_assert_str_eq(reason, "direct line fds are not allowed by [line slow] (t.conf:11): "
				 "it needs direct = yes");
	/* Not a user of the entry: that is what is missing, whatever "direct" says. */
	ck_assert_int_eq(gb_policy_check_direct(p, &fast, &other, reason, sizeof(reason)), -EACCES);
	ck_assert_msg(strstr(reason, "uid 1001 is not among the users or groups of [line fast]"),
		      "%s", reason);
	ck_assert_int_eq(gb_policy_check_direct(p, &slow, &root, reason, sizeof(reason)), 0);
	p->root_bypass = false;
	ck_assert_int_eq(gb_policy_check_direct(p, &slow, &root, reason, sizeof(reason)), -EACCES);
	gb_policy_free(p);
}
END_TEST

/* An unknown user or group is a warning naming file:line, not an error: the name
 * matches nobody, the rest of the entry (and of the policy) stands. */
START_TEST(test_unknown_names)
{
	const char *text =
		"[line a]\nchip = c\noffset = 1\nusers = no-such-user-here, 1234\ndirections = input\n"
		"watch-groups = no-such-group-here\n"
		"[line b]\nchip = c\noffset = 2\ngroups = no-such-group-here\ndirections = input\n";
	const struct gb_line_ident a = { "c", "", 1, "" }, b = { "c", "", 2, "" };
	struct gb_caller someone = { 1000, 1000, NULL, 0 }, listed = { 1234, 1234, NULL, 0 };
	unsigned int max;
	char reason[512];
	struct gb_policy *p = gb_test_policy_valid(text);

	ck_assert_uint_eq(p->n_entries, 2);
	ck_assert_msg(p->warnings && strstr(p->warnings, "t.conf:4: unknown user 'no-such-user-here'") &&
		      strstr(p->warnings, "t.conf:6: unknown group 'no-such-group-here'") &&
		      strstr(p->warnings, "t.conf:10: unknown group 'no-such-group-here'"),
		      "%s", p->warnings);
	ck_assert_uint_eq(gb_policy_count_lines(p->warnings), 3);
	ck_assert_int_eq(gb_policy_check_use(p, &a, &listed, reason, sizeof(reason)), 0);
	ck_assert_int_eq(gb_policy_check_use(p, &a, &someone, reason, sizeof(reason)), -EACCES);
	ck_assert_int_eq(gb_policy_check_use(p, &b, &someone, reason, sizeof(reason)), -EACCES);
	ck_assert_int_eq(gb_policy_check_watch(p, &a, &someone, &max, reason, sizeof(reason)), -EACCES);
	gb_policy_free(p);
}
END_TEST

/* The checks against the chips present: two entries on one line (an error), an
 * offset the chip does not have and a line name nobody has (warnings). */
START_TEST(test_check_chips)
{
	const char *text =
		"[line a]\nchip = sim*\noffset = 100\nusers = 1\ndirections = input\n"
		"[line b]\nline-name = nowhere\nusers = 1\ndirections = input\n"
		"[line c]\nline-name = led\nusers = 1\ndirections = input\n"
		"[line d]\nchip = gpiochip0\noffset = 1\nusers = 1\ndirections = input\n"
		"[group e]\nchip = gpiochip0\noffsets = 9, 2-7, 12\nusers = 1\ndirections = input\n";
	const char *const names[] = { NULL, "led", NULL, NULL };
	const struct gb_chip_ident chips[] = {
		{ .name = "gpiochip0", .label = "sim-a", .num_lines = 4, .line_names = names },
	};
	char *errors = NULL, *warnings = NULL;
	struct gb_policy *p = gb_test_policy_valid(text);

	ck_assert_int_eq(gb_policy_check_chips(p, chips, 1, &errors, &warnings), 1);
	ck_assert_msg(strstr(errors, "t.conf:14: gpiochip0:1 is covered by both [line c]"), "%s", errors);
	ck_assert_msg(strstr(warnings, "t.conf:1: [line a]: offset 100 is beyond chip gpiochip0 (sim-a), "
			     "which has 4 lines"), "%s", warnings);
	ck_assert_msg(strstr(warnings, "t.conf:6: [line b]: no line of the chips present is named 'nowhere'"),
		      "%s", warnings);
	/* One warning for a group's offsets beyond the chip, not one each. */
	ck_assert_msg(strstr(warnings, "t.conf:19: [group e]: offsets 4-7, 9, 12 are beyond chip gpiochip0 "
			     "(sim-a), which has 4 lines: they match nothing there"), "%s", warnings);
	ck_assert_uint_eq(gb_policy_count_lines(warnings), 3);
	free(warnings);
	warnings = NULL;
	/* No chip present: nothing to tell. */
	ck_assert_int_eq(gb_policy_check_chips(p, chips, 0, &errors, &warnings), 0);
	ck_assert_ptr_null(warnings);
	gb_policy_free(p);
	free(errors);
}
END_TEST

/* Chips by identity: a /dev/gpio/by-* link or udev properties name the chip
 * whatever its number, and must single one out. */
START_TEST(test_chip_identity)
{
	const char *text =
		"[line relay]\nchip = /dev/gpio/by-id/usb-FTDI_FT232H_A1-if00\noffset = 1\n"
		"users = 1\ndirections = output\npersistent = yes\nrestore-on-replug = yes\n"
		"[line door]\nchip = ID_VENDOR_ID=0403, ID_SERIAL_SHORT=B*\noffset = 2\nusers = 1\n"
		"directions = input\n"
		"[group hdr]\nchip = /dev/gpio/by-path/platform-*\noffsets = 0-1\nusers = 1\n"
		"directions = input\n";
	const char *const links_a[] = { "/dev/gpio/by-id/usb-FTDI_FT232H_A1-if00",
					"/dev/gpio/by-path/pci-0000:00:14.0-usb-0:2:1.0", NULL };
	const char *const props_a[] = { "ID_VENDOR_ID=0403", "ID_SERIAL_SHORT=A1", NULL };
	const char *const links_b[] = { "/dev/gpio/by-id/usb-FTDI_FT232H_B7-if00", NULL };
	const char *const props_b[] = { "ID_VENDOR_ID=0403", "ID_SERIAL_SHORT=B7", NULL };
	const char *const links_c[] = { "/dev/gpio/by-path/platform-gpio-sim.0", NULL };
	const char *const links_d[] = { "/dev/gpio/by-path/platform-gpio-sim.1", NULL };
	const struct gb_chip_udev a = { links_a, props_a }, b = { links_b, props_b },
				  c = { links_c, NULL }, d = { links_d, NULL };
	struct gb_chip_ident chips[] = {
		{ .name = "gpiochip7", .label = "ftdi-cbus", .udev = &a, .num_lines = 4 },
		{ .name = "gpiochip3", .label = "ftdi-cbus", .udev = &b, .num_lines = 4 },
		{ .name = "gpiochip0", .label = "sim", .udev = &c, .num_lines = 4 },
		{ .name = "gpiochip1", .label = "sim", .udev = &d, .num_lines = 4 },
	};
	struct gb_line_ident l = { .chip_name = "gpiochip9", .chip_label = "ftdi-cbus",
				   .chip_udev = &a, .offset = 1 };
	const struct gb_policy_entry *e;
	char *errors = NULL, msg[600];
	struct gb_policy *p = gb_test_policy_valid(text);

	ck_assert_int_eq(p->entries[0].chip_by, GB_CHIP_BY_LINK);
	ck_assert(p->entries[0].restore_on_replug);
	ck_assert_int_eq(p->entries[1].chip_by, GB_CHIP_BY_PROPS);
	ck_assert_uint_eq(p->entries[1].n_chip_props, 2);

	/* The link follows the device, whatever its number; its name does not count. */
	e = gb_policy_match(p, &l, msg, sizeof(msg));
	ck_assert_ptr_nonnull(e);
	ck_assert_str_eq(e->name, "relay");
	l.chip_udev = &b;
	ck_assert_ptr_null(gb_policy_match(p, &l, msg, sizeof(msg)));
	/* Every property must match (a glob each): the B board's line 2 only. */
	l.offset = 2;
	e = gb_policy_match(p, &l, msg, sizeof(msg));
	ck_assert_ptr_nonnull(e);
	ck_assert_str_eq(e->name, "door");
	l.chip_udev = &a;
	ck_assert_ptr_null(gb_policy_match(p, &l, msg, sizeof(msg)));
	/* Nothing known of the chip (no udev): an entry by identity matches nothing. */
	l.chip_udev = NULL;
	ck_assert_ptr_null(gb_policy_match(p, &l, msg, sizeof(msg)));
	ck_assert_str_eq(msg, "");

	/* Each entry singles out one chip: fine. */
	ck_assert_int_eq(gb_policy_check_identity(p, chips, 3, &errors), 0);
	ck_assert_ptr_null(errors);
	/* A second chip matching the by-path glob: an error naming both, at the entry,
	 * and its lines are refused with it until the chips change. */
	ck_assert_int_eq(gb_policy_check_identity(p, chips, 4, &errors), 1);
	ck_assert_msg(strstr(errors, "t.conf:13: [group hdr]: chip = /dev/gpio/by-path/platform-* "
			     "matches both gpiochip0 (sim) and gpiochip1 (sim)"), "%s", errors);
	l = (struct gb_line_ident){ .chip_name = "gpiochip0", .chip_label = "sim", .chip_udev = &c };
	ck_assert_ptr_null(gb_policy_match(p, &l, msg, sizeof(msg)));
	ck_assert_msg(strstr(msg, "t.conf:13: [group hdr]: chip = ") && strstr(msg, "unusable"), "%s", msg);
	free(errors);
	errors = NULL;
	ck_assert_int_eq(gb_policy_check_identity(p, chips, 3, &errors), 0);
	ck_assert_ptr_nonnull(gb_policy_match(p, &l, msg, sizeof(msg)));
	/* The property entry matching both boards is just as much an error. */
	chips[0].udev = &b;
	ck_assert_int_eq(gb_policy_check_identity(p, chips, 2, &errors), 1);
	ck_assert_msg(strstr(errors, "t.conf:8: [line door]: chip = ID_VENDOR_ID=0403, ID_SERIAL_SHORT=B* "
			     "matches both gpiochip7 (ftdi-cbus) and gpiochip3 (ftdi-cbus)"), "%s", errors);
	free(errors);
	errors = NULL;
	gb_policy_free(p);

	/* A line covered by an entry by identity and by one by name: seen with the chips. */
	p = gb_test_policy_valid("[line a]\nchip = /dev/gpio/by-path/platform-gpio-sim.0\n"
				 "offset = 1\nusers = 1\ndirections = input\n[line b]\nchip = sim\n"
				 "offset = 1\nusers = 1\ndirections = input\n");
	ck_assert_int_eq(gb_policy_check_chips(p, &chips[2], 1, &errors, NULL), 1);
	ck_assert_msg(strstr(errors, "t.conf:6: gpiochip0:1 is covered by both [line a]"), "%s", errors);
	free(errors);
	gb_policy_free(p);
}
END_TEST

START_TEST(test_nul_byte)
{
	struct gb_policy *p = gb_policy_new();
	char *errors = NULL;

	ck_assert_int_gt(gb_policy_parse(p, "t.conf", "[line a]\0x", 10, &errors), 0);
	ck_assert_ptr_nonnull(strstr(errors, "NUL"));
	free(errors);
	gb_policy_free(p);
}
END_TEST

START_TEST(test_load)
{
	char dir[] = "/tmp/gb-policy-XXXXXX", *errors = NULL;
	struct gb_policy *p;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	gb_write_file(dir, "10-a.conf",
		      "[line a]\nchip = c\noffset = 1\nusers = 1\ndirections = output\n");
	gb_write_file(dir, "20-b.conf",
		      "[line b]\nchip = c\noffset = 2\nusers = 1\ndirections = output\n");
	gb_write_file(dir, "README", "not a policy file, ignored\n");
	p = gb_policy_load(dir, &errors);
	if (getuid() == 0) {
		ck_assert_msg(p != NULL, "%s", errors);
		ck_assert_uint_eq(p->n_entries, 2);
		gb_policy_free(p);

		/* across files: the second file may not cover the first one's line */
		gb_write_file(dir, "30-c.conf",
			      "[line c]\nchip = c\noffset = 1\nusers = 1\ndirections = input\n");
		ck_assert_ptr_null(gb_policy_load(dir, &errors));
		ck_assert_msg(strstr(errors, "30-c.conf:1: line c:1 is already covered by [line a]"), "%s", errors);
		free(errors);
		errors = NULL;
		{
			char path[600];

			snprintf(path, sizeof(path), "%s/30-c.conf", dir);
			ck_assert_int_eq(unlink(path), 0);
		}

		/* group- or world-writable: refused */
		gb_write_file_mode(dir, "40-d.conf", "[line d]\nchip = c\noffset = 4\nusers = 1\n"
				   "directions = input\n", 0666);
		ck_assert_ptr_null(gb_policy_load(dir, &errors));
		ck_assert_msg(strstr(errors, "40-d.conf: must be owned by root and not writable"), "%s", errors);
	} else {
		/* not root: the files are not root's, so they are refused */
		ck_assert_ptr_null(p);
		ck_assert_msg(strstr(errors, "must be owned by root"), "%s", errors);
	}
	free(errors);
	errors = NULL;
	{
		/* An image's tree: names from its etc/passwd and etc/group, files owned
		 * by whoever built it, modes still checked. */
		char root[600], path[700], *warnings = NULL;

		snprintf(root, sizeof(root), "%s/root", dir);
		snprintf(path, sizeof(path), "%s/pol", dir);
		gb_write_file(dir, "root/etc/passwd",
			      "root:x:0:0::/root:/bin/sh\ndoor-ctl:x:901:901::/:/bin/false\n");
		gb_write_file(dir, "root/etc/group", "root:x:0:\ndoor:x:902:\n");
		gb_write_file(dir, "pol/10-a.conf", "[line a]\nchip = c\noffset = 1\n"
			      "users = door-ctl, ghost\ngroups = door\ndirections = output\n");
		p = gb_policy_load_from(path, root, &errors, &warnings);
		ck_assert_msg(p != NULL, "%s", errors);
		ck_assert_uint_eq(p->entries[0].uids[0], 901);
		ck_assert_uint_eq(p->entries[0].n_uids, 1);
		ck_assert_uint_eq(p->entries[0].gids[0], 902);
		ck_assert_msg(warnings && strstr(warnings, "10-a.conf:4: unknown user 'ghost'"), "%s", warnings);
		ck_assert_ptr_null(p->warnings);
		gb_policy_free(p);
		free(warnings);
		gb_write_file_mode(path, "20-b.conf", "[line b]\nchip = c\noffset = 2\nusers = 1\n"
				   "directions = output\n", 0664);
		ck_assert_ptr_null(gb_policy_load_from(path, root, &errors, NULL));
		ck_assert_msg(strstr(errors, "20-b.conf: must be owned by root and not writable"), "%s", errors);
		free(errors);
		errors = NULL;
	}
	p = gb_policy_load("/nonexistent/gpiod-broker", &errors);
	ck_assert_ptr_nonnull(p); /* no directory: empty policy, deny all */
	ck_assert_uint_eq(p->n_entries, 0);
	gb_policy_free(p);
	gb_remove_tree(dir);
}
END_TEST

/* --- the matrix: the policy against a reference model ------------------------ */

struct rule {
	int users;      /* 0 none, 1 {A}, 2 {A,B}, 3 * */
	int groups;     /* 0 none, 1 {G} */
	int dirs;       /* 1 input, 2 output, 3 both */
	int dmc;
	int edges;      /* 0 none only, 1 both allowed */
	int persistent;
	int prefix;     /* 0 none, 1 "ok-" */
	int bypass;
};

struct caller_model {
	uid_t uid;
	gid_t gid;
	gid_t groups[2];
	size_t n;
};

#define UID_A 1001
#define UID_B 1002
#define UID_C 1003
#define GID_G 2000

static const struct caller_model callers[] = {
	{ UID_A, UID_A, { 0 }, 0 },
	{ UID_B, UID_B, { GID_G }, 1 },  /* in G through a supplementary group */
	{ UID_C, GID_G, { 0 }, 0 },      /* in G as primary group */
	{ UID_C, UID_C, { 0 }, 0 },      /* nobody special */
	{ 0, 0, { 0 }, 0 },
};

static bool rule_valid(const struct rule *r)
{
	if (!r->users && !r->groups)
		return false;
	if (r->dmc && r->dirs != 3)
		return false;
	if (r->edges && !(r->dirs & 1))
		return false;
	return true;
}

static char *rule_text(const struct rule *r)
{
	static const char *const users[] = { NULL, "1001", "1001, 1002", "*" };
	static const char *const dirs[] = { NULL, "input", "output", "input, output" };
	char *t = NULL;
	size_t sz = 0;
	FILE *f = open_memstream(&t, &sz);

	fprintf(f, "[broker]\nroot-bypass = %s\n[line x]\nchip = gbm\noffset = 0\n",
		r->bypass ? "yes" : "no");
	if (r->users)
		fprintf(f, "users = %s\n", users[r->users]);
	if (r->groups)
		fprintf(f, "groups = %d\n", GID_G);
	fprintf(f, "directions = %s\n", dirs[r->dirs]);
	fprintf(f, "direction-may-change = %s\n", r->dmc ? "yes" : "no");
	if (r->edges)
		fprintf(f, "edges = both\n");
	fprintf(f, "persistent = %s\n", r->persistent ? "yes" : "no");
	if (r->prefix)
		fprintf(f, "label-prefix = ok-\n");
	fclose(f);
	return t;
}

static bool model_caller_ok(const struct rule *r, const struct caller_model *c)
{
	bool g = c->gid == GID_G || (c->n && c->groups[0] == GID_G);

	return r->users == 3 || (r->users >= 1 && c->uid == UID_A) || (r->users == 2 && c->uid == UID_B) ||
	       (r->groups && g);
}

/* dir: 0 as-is, 1 input, 2 output */
static bool model_request(const struct rule *r, const struct caller_model *c, bool covered,
			  int dir, bool edge, bool persistent, bool good_label)
{
	if (c->uid == 0 && r->bypass)
		return true;
	if (!covered || !model_caller_ok(r, c))
		return false;
	if (persistent && !r->persistent)
		return false;
	if (r->prefix && !good_label)
		return false;
	if (dir && !(r->dirs & dir))
		return false;
	if (edge && !r->edges)
		return false;
	return true;
}

static bool model_reconfigure(const struct rule *r, const struct caller_model *c, bool covered,
			      int old, int new)
{
	if (c->uid == 0 && r->bypass)
		return true;
	if (!covered || !model_caller_ok(r, c))
		return false;
	if (old != new && !r->dmc)
		return false;
	return !new || (r->dirs & new);
}

static bool model_use(const struct rule *r, const struct caller_model *c, bool covered)
{
	return (c->uid == 0 && r->bypass) || (covered && model_caller_ok(r, c));
}

static const enum gpiod_line_direction dir_enum[] = {
	GPIOD_LINE_DIRECTION_AS_IS, GPIOD_LINE_DIRECTION_INPUT, GPIOD_LINE_DIRECTION_OUTPUT,
};

START_TEST(test_matrix)
{
	unsigned long cases = 0, disagree = 0;
	struct rule r;
	char reason[512];

	for (r.users = 0; r.users < 4; r.users++)
	for (r.groups = 0; r.groups < 2; r.groups++)
	for (r.dirs = 1; r.dirs < 4; r.dirs++)
	for (r.dmc = 0; r.dmc < 2; r.dmc++)
	for (r.edges = 0; r.edges < 2; r.edges++)
	for (r.persistent = 0; r.persistent < 2; r.persistent++)
	for (r.prefix = 0; r.prefix < 2; r.prefix++)
	for (r.bypass = 0; r.bypass < 2; r.bypass++) {
		struct gb_policy *p;
		char *text;

		if (!rule_valid(&r))
			continue;
		text = rule_text(&r);
		p = gb_test_policy_valid(text);

		for (size_t ci = 0; ci < sizeof(callers) / sizeof(callers[0]); ci++)
		for (int covered = 0; covered < 2; covered++) {
			const struct caller_model *cm = &callers[ci];
			struct gb_caller c = { cm->uid, cm->gid, cm->groups, cm->n };
			struct gb_line_ident l = { "gpiochip3", "gbm", covered ? 0 : 1, NULL };

			for (int dir = 0; dir < 3; dir++)
			for (int edge = 0; edge < 2; edge++)
			for (int pers = 0; pers < 2; pers++)
			for (int lab = 0; lab < 2; lab++) {
				struct gb_line_config cfg;
				bool got, want;

				gb_line_config_init(&cfg);
				cfg.direction = dir_enum[dir];
				cfg.edge = edge ? GPIOD_LINE_EDGE_BOTH : GPIOD_LINE_EDGE_NONE;
				got = gb_policy_check_request(p, &l, &c, &cfg, pers, lab ? "ok-1" : "bad",
							      reason, sizeof(reason)) == 0;
				want = model_request(&r, cm, covered, dir, edge, pers, lab);
				cases++;
				if (got != want) {
					disagree++;
					fprintf(stderr, "request disagrees: rule %s caller %u dir %d edge %d "
						"pers %d label %d covered %d: got %d want %d (%s)\n", text,
						(unsigned)cm->uid, dir, edge, pers, lab, covered, got, want, reason);
				}
				/* a denial always says why */
				ck_assert(got || reason[0]);
			}
			for (int old = 0; old < 3; old++)
			for (int new = 0; new < 3; new++) {
				struct gb_line_config a, b;
				bool got, want;

				gb_line_config_init(&a);
				gb_line_config_init(&b);
				a.direction = dir_enum[old];
				b.direction = dir_enum[new];
				got = gb_policy_check_reconfigure(p, &l, &c, &a, &b, reason, sizeof(reason)) == 0;
				want = model_reconfigure(&r, cm, covered, old, new);
				cases++;
				if (got != want) {
					disagree++;
					fprintf(stderr, "reconfigure disagrees: %s caller %u %d->%d covered %d: got %d (%s)\n",
						text, (unsigned)cm->uid, old, new, covered, got, reason);
				}
			}
			{
				bool got = gb_policy_check_use(p, &l, &c, reason, sizeof(reason)) == 0;

				cases++;
				if (got != model_use(&r, cm, covered)) {
					disagree++;
					fprintf(stderr, "use disagrees: %s caller %u covered %d\n", text,
						(unsigned)cm->uid, covered);
				}
			}
		}
		free(text);
		gb_policy_free(p);
	}
	printf("# policy matrix: %lu cases, %lu disagreements\n", cases, disagree);
	ck_assert_uint_ge(cases, 2000);
	ck_assert_uint_eq(disagree, 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("policy");
	TCase *tc = tcase_create("policy");

	tcase_add_test(tc, test_valid);
	tcase_add_loop_test(tc, test_errors, 0, sizeof(bad) / sizeof(bad[0]));
	tcase_add_test(tc, test_watch);
	tcase_add_test(tc, test_direct);
	tcase_add_test(tc, test_unknown_names);
	tcase_add_test(tc, test_check_chips);
	tcase_add_test(tc, test_chip_identity);
	tcase_add_test(tc, test_nul_byte);
	tcase_add_test(tc, test_load);
	tcase_add_test(tc, test_matrix);
	tcase_set_timeout(tc, 120);
	suite_add_tcase(s, tc);
	return gb_run_suite(s);
}
