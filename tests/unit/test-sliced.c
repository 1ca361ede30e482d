/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Host unit test of the broker's view of the slices (core/sliced.c) without
 * hardware: the state files of a temporary directory read, a parent line found in
 * its slice, the Busy message, failed and malformed slices reported, a reload that
 * drops a slice.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "broker.h"
#include "chip.h"
#include "files.h"
#include "org.gpiodbroker1.h"
#include "sliced.h"
#include "testmain.h"

static char dir[64];

static void setup(void)
{
	snprintf(dir, sizeof(dir), "/tmp/test-sliced.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	gb_write_file(dir, "lab-2", "device=gpio-aggregator.0\nchip=gpiochip9\nspec=gpiochip0 1,5\n"
				   "users=root,1000\ngroups=\nline=gpiochip0 1 output-low door\n"
				   "line=gpiochip0 5 as-is gpio-sim.0:5\n");
	gb_write_file(dir, "gone.error", "line door is held by \"x\"\n");
	gb_write_file(dir, "broken", "device=gpio-aggregator.1\nline=gpiochip1 x as-is y\n");
}

static void teardown(void)
{
	gb_remove_tree(dir);
}

START_TEST(test_lookup)
{
	Broker b = { .slice_dir = dir };
	sd_bus_error e = SD_BUS_ERROR_NULL;
	Chip c = { .name = (char *)"gpiochip0" };
	Line l = { .chip = &c, .offset = 5 };
	char text[256];
	size_t i = 99;
	Slice *s;

	c.broker = &b;
	ck_assert_int_eq(slices_load(&b, false), 0);
	s = slice_of_line(&b, "gpiochip0", 5, &i);
	ck_assert_ptr_nonnull(s);
	ck_assert_str_eq(s->def.name, "lab-2");
	ck_assert_uint_eq(i, 1);
	ck_assert_ptr_null(slice_of_line(&b, "gpiochip0", 2, NULL));
	ck_assert_ptr_null(slice_of_line(&b, "gpiochip1", 1, NULL));
	ck_assert_ptr_eq(slice_from_path(&b, s->path), s);
	ck_assert_str_eq(s->path, GB_SLICE_PREFIX "/lab_2d2");

	ck_assert_int_lt(slice_check_line(&b, &l, &e), 0);
	ck_assert_str_eq(e.name, GB_ERROR_BUSY);
	ck_assert_str_eq(e.message, "line gpio-sim.0:5 (gpiochip0:5) is in slice lab-2 "
				    "(/dev/gpio/slice/lab-2): use the slice's chip");
	sd_bus_error_free(&e);
	l.offset = 2;
	ck_assert_int_eq(slice_check_line(&b, &l, &e), 0);

	slice_state_text(s, text, sizeof(text));
	ck_assert_str_eq(text, "made");
	slice_link(s, text, sizeof(text));
	ck_assert_str_eq(text, "/dev/gpio/slice/lab-2");
	slices_free_all(&b);
	ck_assert_ptr_null(b.slices);
}
END_TEST

START_TEST(test_failed)
{
	Broker b = { .slice_dir = dir };
	char text[512];
	Slice *s;

	ck_assert_int_eq(slices_load(&b, false), 0);
	/* By name: broken, gone, lab-2. */
	s = b.slices;
	ck_assert_str_eq(s->def.name, "broken");
	ck_assert(!s->made);
	slice_state_text(s, text, sizeof(text));
	ck_assert_msg(strstr(text, "failed: its state file ") && strstr(text, "(malformed)"), "%s",
		      text);
	ck_assert_uint_eq(s->def.n_lines, 0);
	s = s->next;
	ck_assert_str_eq(s->def.name, "gone");
	slice_state_text(s, text, sizeof(text));
	ck_assert_str_eq(text, "failed: line door is held by \"x\"");
	ck_assert_str_eq(s->next->def.name, "lab-2");
	ck_assert_ptr_null(s->next->next);

	/* A reload after the helper revoked it: the lines are free again. */
	snprintf(text, sizeof(text), "%s/lab-2", dir);
	ck_assert_int_eq(unlink(text), 0);
	ck_assert_int_eq(slices_load(&b, false), 0);
	ck_assert_ptr_null(slice_of_line(&b, "gpiochip0", 5, NULL));
	ck_assert_ptr_null(b.slices->next->next);
	slices_free_all(&b);

	b.slice_dir = "/nonexistent/slices";
	ck_assert_int_eq(slices_load(&b, false), 0);
	ck_assert_ptr_null(b.slices);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("sliced");
	TCase *tc = tcase_create("sliced");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_lookup);
	tcase_add_test(tc, test_failed);
	suite_add_tcase(s, tc);
	return gb_run_suite(s);
}
