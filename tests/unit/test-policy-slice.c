/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Host unit test of the policy's slices (shared/policy-slice.c): valid sections read
 * whole, every error with its file:line (the section's own, and the checks across
 * the policy: entries that must allow everything a chip's consumer can set, a line
 * in two slices, a line an action observes), unknown users as warnings, finding a
 * slice by name and by line, and whether the kernel can make them (an image's
 * boot/config-*).
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

/* Everything the kernel lets a line's consumer set. */
#define ALL \
	"directions = input, output\ndirection-may-change = yes\nedges = rising, falling, both\n" \
	"bias = as-is, disabled, pull-up, pull-down\ndrive = push-pull, open-drain, open-source\n"

/* The entries the slices below use; slices come first, so their lines are 1, 2, ... */
#define ENTRIES \
	"[line door]\nchip = gpiochip0\noffset = 1\nusers = 0\n" ALL \
	"[group bank]\nchip = gpio-sim.*\noffsets = 4-7\nusers = 0\n" ALL \
	"[line led]\nline-name = LED0\nusers = 0\n" ALL \
	"[line narrow]\nchip = gpiochip0\noffset = 2\nusers = 0\ndirections = input\n"

START_TEST(test_valid)
{
	static const char text[] =
		"[slice lab]\n"
		"lines = door gpio-sim.0:5   LED0\n"
		"users = root 1000\n"
		"groups = 0\n"
		"\n"
		"[slice lab-2_b]\n"
		"lines = gpio-sim.0:6, gpio-sim.1:6\n"
		"groups = root, 20\n"
		ENTRIES;
	struct gb_policy *p = gb_test_policy_valid(text);
	const struct gb_policy_slice *s;

	ck_assert_ptr_null(p->warnings);
	ck_assert_uint_eq(p->n_slices, 2);
	s = &p->slices[0];
	ck_assert_str_eq(s->name, "lab");
	ck_assert_str_eq(s->file, "t.conf");
	ck_assert_uint_eq(s->lineno, 1);
	ck_assert_uint_eq(s->n_lines, 3);
	ck_assert_str_eq(s->lines[0], "door");
	ck_assert_str_eq(s->lines[1], "gpio-sim.0:5");
	ck_assert_str_eq(s->lines[2], "LED0");
	ck_assert_uint_eq(s->n_users, 2);
	ck_assert_str_eq(s->users[0], "root");
	ck_assert_str_eq(s->users[1], "1000");
	ck_assert_uint_eq(s->n_groups, 1);
	ck_assert_str_eq(s->groups[0], "0");
	s = &p->slices[1];
	ck_assert_str_eq(s->name, "lab-2_b");
	ck_assert_uint_eq(s->lineno, 6);
	ck_assert_uint_eq(s->n_lines, 2);
	ck_assert_str_eq(s->lines[1], "gpio-sim.1:6");
	ck_assert_uint_eq(s->n_users, 0);
	ck_assert_uint_eq(s->n_groups, 2);
	ck_assert_str_eq(s->groups[0], "root");
	ck_assert_str_eq(s->groups[1], "20");
	gb_policy_free(p);
}
END_TEST

START_TEST(test_find)
{
	static const char text[] =
		"[slice a]\nlines = door LED0\nusers = 0\n"
		"[slice b]\nlines = gpio-sim.0:5\nusers = 0\n"
		ENTRIES;
	struct gb_policy *p = gb_test_policy_valid(text);

	ck_assert_ptr_eq(gb_policy_find_slice(p, "a"), &p->slices[0]);
	ck_assert_ptr_eq(gb_policy_find_slice(p, "b"), &p->slices[1]);
	ck_assert_ptr_null(gb_policy_find_slice(p, "c"));
	ck_assert_ptr_null(gb_policy_find_slice(p, "door"));
	/* An alias, the chip and offset its entry names, or the line's kernel name. */
	ck_assert_ptr_eq(gb_policy_slice_of_item(p, "door"), &p->slices[0]);
	ck_assert_ptr_eq(gb_policy_slice_of_item(p, "gpiochip0:1"), &p->slices[0]);
	ck_assert_ptr_eq(gb_policy_slice_of_item(p, "led"), &p->slices[0]);
	ck_assert_ptr_eq(gb_policy_slice_of_item(p, "LED0"), &p->slices[0]);
	ck_assert_ptr_eq(gb_policy_slice_of_item(p, "gpio-sim.0:5"), &p->slices[1]);
	/* Not in a slice: another offset, another chip, a line no slice names. */
	ck_assert_ptr_null(gb_policy_slice_of_item(p, "gpio-sim.0:4"));
	ck_assert_ptr_null(gb_policy_slice_of_item(p, "gpio-sim.1:5"));
	ck_assert_ptr_null(gb_policy_slice_of_item(p, "narrow"));
	ck_assert_ptr_null(gb_policy_slice_of_item(p, "gpiochip0:2"));
	ck_assert_ptr_null(gb_policy_slice_of_item(p, "/org/gpiodbroker1/chip/gpiochip0/line1"));
	ck_assert_ptr_null(gb_policy_slice_of_item(p, ""));
	gb_policy_free(p);
}
END_TEST

/* A user or group nobody has grants nothing: a warning at its line, not an error. */
START_TEST(test_unknown_names)
{
	static const char text[] =
		"[slice a]\nlines = door\nusers = gb-no-such-user-x\ngroups = gb-no-such-group-x\n"
		ENTRIES;
	struct gb_policy *p = gb_test_policy_valid(text);

	ck_assert_uint_eq(p->n_slices, 1);
	ck_assert_msg(p->warnings &&
		      strstr(p->warnings, "t.conf:3: unknown user 'gb-no-such-user-x'"), "%s",
		      p->warnings);
	ck_assert_msg(strstr(p->warnings, "t.conf:4: unknown group 'gb-no-such-group-x'"), "%s",
		      p->warnings);
	ck_assert_uint_eq(gb_policy_count_lines(p->warnings), 2);
	gb_policy_free(p);
}
END_TEST

/* A policy with half-read and refused slices frees all of them (valgrind, ASan). */
START_TEST(test_free)
{
	static const char *const texts[] = {
		"[slice a]\nlines = door\nusers = 0\n" ENTRIES,
		"[slice a]\nlines = door gpio-sim.0:4\nusers = 0\n[slice a.b]\nlines = x\n" ENTRIES,
		"[slice a]\nlines = door\nlines = led\nusers = *\n[slice b]\nlines = LED0,\n",
		"[slice a]\nlines = door narrow\ngroups = 0\n[broker]\n" ENTRIES,
		"[slice a]\nlines = door\nusers = 0\n",
	};

	for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		char *errors;
		int n;

		gb_policy_free(gb_test_policy_parse(texts[i], &errors, &n));
		free(errors);
	}
	gb_policy_free(gb_policy_new());
}
END_TEST

static const struct {
	const char *text;
	const char *error;
} bad[] = {
	{ "[slice s]\nusers = 0\n" ENTRIES,
	  "t.conf:1: [slice s]: which lines? give 'lines' (aliases, line names or CHIP:OFFSET)" },
	{ "[slice s]\nlines = door\n" ENTRIES,
	  "t.conf:1: [slice s]: nobody may use it; add 'users' or 'groups'" },
	{ "[slice s]\nlines = door\nusers = *\n" ENTRIES,
	  "t.conf:3: a slice is for named users and groups: '*' would hand its chip to everyone" },
	{ "[slice s]\nlines = door\ngroups = 0 *\n" ENTRIES,
	  "t.conf:3: a slice is for named users and groups: '*' would hand its chip to everyone" },
	{ "[slice a.b]\nlines = door\nusers = 0\n" ENTRIES,
	  "t.conf:1: 'a.b' is not a valid slice name: 1-32 letters, digits, '-' or '_' "
	  "(it becomes a file name and a D-Bus path element)" },
	{ "[slice abcdefghijklmnopqrstuvwxyz0123456]\nlines = door\nusers = 0\n" ENTRIES,
	  "t.conf:1: 'abcdefghijklmnopqrstuvwxyz0123456' is not a valid slice name" },
	{ "[slice]\nlines = door\nusers = 0\n" ENTRIES,
	  "t.conf:1: '' is not a valid slice name" },
	{ "[slice s]\nlines = door\nusers = 0\nchip = gpiochip0\n" ENTRIES,
	  "t.conf:4: unknown key 'chip' in a [slice] section" },
	{ "[slice s]\nlines = door\nusers = 0\nusers = 1\n" ENTRIES,
	  "t.conf:4: 'users' given twice in this section" },
	{ "[slice s]\nlines =\nusers = 0\n" ENTRIES, "t.conf:2: 'lines' has no value" },
	{ "[slice s]\nlines = door LED0 door\nusers = 0\n" ENTRIES,
	  "t.conf:2: 'lines' lists 'door' twice" },
	{ "[slice s]\nlines = door,,LED0\nusers = 0\n" ENTRIES, "t.conf:2: empty item in 'lines'" },
	{ "[slice s]\nlines = door\nusers = 0,\n" ENTRIES, "t.conf:3: empty item in 'users'" },
	{ "[slice s]\nlines = /org/gpiodbroker1/chip/gpiochip0/line1\nusers = 0\n" ENTRIES,
	  "t.conf:2: 'lines': '/org/gpiodbroker1/chip/gpiochip0/line1' is not an alias, a line "
	  "name or CHIP:OFFSET" },
	{ "[slice s]\nlines = gpiochip0:\nusers = 0\n" ENTRIES,
	  "t.conf:2: 'lines': 'gpiochip0:' is not an alias, a line name or CHIP:OFFSET" },
	{ "[slice s]\nlines = door\x01\nusers = 0\n" ENTRIES,
	  "t.conf:2: 'lines': 'door\x01' is not" },
	/* The alias and its entry's chip and offset are one line. */
	{ "[slice s]\nlines = door gpiochip0:1\nusers = 0\n" ENTRIES,
	  "t.conf:1: [slice s]: 'door' and 'gpiochip0:1' are the same line" },
	{ "[slice s]\nlines = gpiochip1:1\nusers = 0\n" ENTRIES,
	  "t.conf:1: [slice s]: no entry covers line 'gpiochip1:1': a slice hands out only lines "
	  "the policy has (name it as its entry does, or by its alias)" },
	{ "[slice s]\nlines = NOPE\nusers = 0\n" ENTRIES,
	  "t.conf:1: [slice s]: no entry covers line 'NOPE'" },
	{ "[slice s]\nlines = gpio-sim.0:8\nusers = 0\n" ENTRIES,
	  "t.conf:1: [slice s]: no entry covers line 'gpio-sim.0:8'" },
	{ "[slice s]\nlines = narrow\nusers = 0\n" ENTRIES,
	  "t.conf:1: [slice s]: line 'narrow' goes to a chip whose consumer can set anything, "
	  "which the kernel cannot hold to the policy; its entry [line narrow] (t.conf:30) must "
	  "allow all of it: missing directions = input, output; direction-may-change = yes; "
	  "edges = rising, falling, both; bias = as-is, disabled, pull-up, pull-down; "
	  "drive = push-pull, open-drain, open-source" },
	{ "[slice s]\nlines = gpiochip0:2\nusers = 0\n" ENTRIES,
	  "t.conf:1: [slice s]: line 'gpiochip0:2' goes to a chip whose consumer can set "
	  "anything" },
	/* One missing rule is named alone. */
	{ "[slice s]\nlines = x\nusers = 0\n"
	  "[line x]\nchip = c\noffset = 0\nusers = 0\ndirections = input, output\n"
	  "direction-may-change = yes\nedges = rising, falling, both\n"
	  "bias = disabled, pull-up, pull-down\ndrive = open-drain\n",
	  "its entry [line x] (t.conf:4) must allow all of it: missing drive = push-pull, "
	  "open-drain, open-source\n" },
	{ "[slice a]\nlines = door\nusers = 0\n[slice b]\nlines = gpiochip0:1\ngroups = 0\n"
	  ENTRIES,
	  "t.conf:4: [slice b]: line 'gpiochip0:1' is already in [slice a] (t.conf:1)" },
	{ "[slice a]\nlines = gpio-sim.0:5\nusers = 0\n[slice b]\nlines = gpio-sim.0:5\nusers = 0\n"
	  ENTRIES, "t.conf:4: [slice b]: line 'gpio-sim.0:5' is already in [slice a] (t.conf:1)" },
	{ "[slice a]\nlines = led\nusers = 0\n[slice b]\nlines = LED0\nusers = 0\n" ENTRIES,
	  "t.conf:4: [slice b]: line 'LED0' is already in [slice a] (t.conf:1)" },
	{ "[slice s]\nlines = gpiochip0:1\nusers = 0\n"
	  "[action btn]\nline = door\ntrigger = rising\nunit = a.service\n" ENTRIES,
	  "t.conf:1: [slice s]: line 'gpiochip0:1' is observed by [action btn] (t.conf:4); an "
	  "action's watch and a slice cannot share a line: the aggregator takes the line" },
	{ "[slice s]\nlines = led\nusers = 0\n"
	  "[action btn]\nline = LED0\ntrigger = rising\nunit = a.service\n" ENTRIES,
	  "t.conf:1: [slice s]: line 'led' is observed by [action btn] (t.conf:4)" },
	{ "[slice s]\nlines = door\nusers = 0\n[slice s]\nlines = led\nusers = 0\n" ENTRIES,
	  "t.conf:4: the slice name 's' is already used at t.conf:1" },
	{ "[bogus s]\n",
	  "t.conf:1: unknown section kind 'bogus' (line, group, action, slice or broker)" },
	{ "[slice s] x\n", "t.conf:1: a section header is '[line NAME]', '[group NAME]', "
	  "'[action NAME]', '[slice NAME]' or '[broker]'" },
};

START_TEST(test_errors)
{
	gb_test_policy_refuses(_i, bad[_i].text, bad[_i].error);
}
END_TEST

/* The same slice read from two files: the error names the first file:line. */
START_TEST(test_two_files)
{
	static const char a[] = "[slice s]\nlines = door\nusers = 0\n" ENTRIES;
	static const char b[] = "\n[slice s]\nlines = led\nusers = 0\n";
	struct gb_policy *p = gb_policy_new();
	char *errors = NULL;
	int n;

	ck_assert_int_eq(gb_policy_parse(p, "10-a.conf", a, strlen(a), &errors), 0);
	ck_assert_int_eq(gb_policy_parse(p, "20-b.conf", b, strlen(b), &errors), 0);
	n = gb_policy_finish(p, &errors);
	ck_assert_int_eq(n, 1);
	ck_assert_str_eq(errors,
			 "20-b.conf:2: the slice name 's' is already used at 10-a.conf:1\n");
	free(errors);
	gb_policy_free(p);
}
END_TEST

/* direct = yes and a slice ask the same of an entry: one condition, one text. */
START_TEST(test_fd_missing)
{
	static const char text[] = "[line x]\nchip = c\noffset = 0\nusers = 0\n" ALL;
	struct gb_policy_entry e = { .directions = GB_BIT(GPIOD_LINE_DIRECTION_INPUT) };
	char buf[300];
	struct gb_policy *p = gb_test_policy_valid(text);

	ck_assert_ptr_null(gb_policy_entry_fd_missing(&p->entries[0], buf, sizeof(buf)));
	ck_assert_ptr_eq(gb_policy_entry_fd_missing(&e, buf, sizeof(buf)), buf);
	ck_assert_str_eq(buf, "directions = input, output; direction-may-change = yes; "
			 "edges = rising, falling, both; bias = as-is, disabled, pull-up, "
			 "pull-down; drive = push-pull, open-drain, open-source");
	/* Cut short, not overrun. */
	ck_assert_ptr_eq(gb_policy_entry_fd_missing(&e, buf, 10), buf);
	ck_assert_uint_eq(strlen(buf), 9);
	gb_policy_free(p);
}
END_TEST

/* What --check-policy prints of the kernel, and the number of warnings. */
static int check_kernel(const struct gb_policy *p, const char *root, char **out)
{
	size_t len = 0;
	FILE *f = open_memstream(out, &len);
	int n;

	ck_assert_ptr_nonnull(f);
	n = gb_policy_slices_check_kernel(p, root, f);
	fclose(f);
	return n;
}

START_TEST(test_kernel_image)
{
	static const char text[] =
		"[slice a]\nlines = door\nusers = 0\n\n[slice b]\nlines = led\nusers = 0\n" ENTRIES;
	char root[] = "/tmp/gb-test-slice-XXXXXX", *out = NULL, cmd[600];
	struct gb_policy *p = gb_test_policy_valid(text), *none;

	ck_assert_ptr_nonnull(mkdtemp(root));

	/* No boot/ at all: a note, once, and no warning. */
	ck_assert_int_eq(check_kernel(p, root, &out), 0);
	snprintf(cmd, sizeof(cmd), "t.conf:1: note: no kernel config in %s/boot: the aggregator "
		 "could not be checked\n", root);
	ck_assert_str_eq(out, cmd);
	free(out);

	gb_write_file(root, "boot/config-6.1",
		   "CONFIG_GPIOLIB=y\n# CONFIG_GPIO_AGGREGATOR is not set\n"
		   "CONFIG_GPIO_AGGREGATOR_X=y\n");
	ck_assert_int_eq(check_kernel(p, root, &out), 2);
	ck_assert_str_eq(out, "t.conf:1: warning: this kernel has no gpio-aggregator "
			 "(CONFIG_GPIO_AGGREGATOR): the slice cannot be made (boot/config-6.1)\n"
			 "t.conf:5: warning: this kernel has no gpio-aggregator "
			 "(CONFIG_GPIO_AGGREGATOR): the slice cannot be made (boot/config-6.1)\n");
	free(out);

	gb_write_file(root, "boot/config-6.1", "CONFIG_GPIOLIB=y\nCONFIG_GPIO_AGGREGATOR=m\n");
	ck_assert_int_eq(check_kernel(p, root, &out), 0);
	ck_assert_str_eq(out, "");
	free(out);
	gb_write_file(root, "boot/config-6.1", "CONFIG_GPIO_AGGREGATOR=y");
	ck_assert_int_eq(check_kernel(p, root, &out), 0);
	ck_assert_str_eq(out, "");
	free(out);

	/* No slices: nothing to say, whatever the kernel. */
	none = gb_policy_new();
	gb_write_file(root, "boot/config-6.1", "\n");
	ck_assert_int_eq(check_kernel(none, root, &out), 0);
	ck_assert_str_eq(out, "");
	free(out);
	gb_policy_free(none);

	gb_policy_free(p);
	gb_remove_tree(root);
}
END_TEST

/* This machine, whichever way it is: a warning per slice, or nothing. */
START_TEST(test_kernel_host)
{
	static const char text[] = "[slice a]\nlines = door\nusers = 0\n" ENTRIES;
	char *out = NULL;
	struct gb_policy *p = gb_test_policy_valid(text);
	int n;

	n = check_kernel(p, NULL, &out);
	ck_assert_msg((n == 0 && !*out) ||
		      (n == 1 && !strcmp(out, "t.conf:1: warning: this kernel has no "
					 "gpio-aggregator (CONFIG_GPIO_AGGREGATOR): the slice "
					 "cannot be made\n")),
		      "%d: %s", n, out);
	free(out);
	gb_policy_free(p);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("policy-slice");
	TCase *tc = tcase_create("policy-slice");

	tcase_add_test(tc, test_valid);
	tcase_add_test(tc, test_find);
	tcase_add_test(tc, test_unknown_names);
	tcase_add_test(tc, test_free);
	tcase_add_loop_test(tc, test_errors, 0, sizeof(bad) / sizeof(bad[0]));
	tcase_add_test(tc, test_two_files);
	tcase_add_test(tc, test_fd_missing);
	tcase_add_test(tc, test_kernel_image);
	tcase_add_test(tc, test_kernel_host);
	suite_add_tcase(s, tc);
	return gb_run_suite(s);
}
