/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Host unit test of the slices' state files (shared/slice-state.c), in a temporary
 * directory: what is written reads back the same, the names listed (with and without
 * the slices that only failed), NAME.error, and malformed files refused with
 * -EBADMSG and nothing left allocated (the test runs under valgrind/ASan as the others).
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
#include "macro.h"
#include "slice-state.h"
#include "testmain.h"

static char dir[64];

static void setup(void)
{
	snprintf(dir, sizeof(dir), "/tmp/test-slice-state.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void teardown(void)
{
	gb_remove_tree(dir);
}

static void make(struct gb_slice *s)
{
	static const char *const items[] = { "door", "gpio-sim.0:5", "LED 0" };

	memset(s, 0, sizeof(*s));
	s->name = strdup("lab-2");
	snprintf(s->device, sizeof(s->device), "gpio-aggregator.0");
	snprintf(s->chip, sizeof(s->chip), "gpiochip7");
	s->spec = strdup("gpiochip0 1,5 gpiochip1 0");
	s->users = strdup("root,1000");
	s->groups = strdup("");
	s->lines = calloc(3, sizeof(*s->lines));
	for (size_t i = 0; i < 3; i++) {
		snprintf(s->lines[i].parent, sizeof(s->lines[i].parent), "gpiochip%zu", i / 2);
		s->lines[i].offset = (unsigned int)(i * 4 + 1);
		s->lines[i].safe = i == 0 ? GB_SAFE_OUTPUT_LOW : GB_SAFE_AS_IS;
		s->lines[i].item = strdup(items[i]);
	}
	s->n_lines = 3;
}

START_TEST(test_round_trip)
{
	struct gb_slice a, b = {};
	struct stat st;
	char path[256];

	make(&a);
	ck_assert_int_eq(gb_slice_state_write(dir, &a), 0);
	snprintf(path, sizeof(path), "%s/lab-2", dir);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_int_eq(st.st_mode & 0777, 0644);
	ck_assert_int_eq(gb_slice_state_read(dir, "lab-2", &b), 0);
	ck_assert(gb_slice_same(&a, &b));
	ck_assert_str_eq(b.name, "lab-2");
	ck_assert_str_eq(b.device, "gpio-aggregator.0");
	ck_assert_str_eq(b.chip, "gpiochip7");
	ck_assert_uint_eq(b.n_lines, 3);
	ck_assert_str_eq(b.lines[2].item, "LED 0"); /* the rest of the line, spaces and all */
	ck_assert_int_eq(b.lines[0].safe, GB_SAFE_OUTPUT_LOW);
	b.lines[1].offset++;
	ck_assert(!gb_slice_same(&a, &b));
	gb_slice_clear(&a);
	gb_slice_clear(&b);
	ck_assert_int_eq(gb_slice_state_read(dir, "nothing", &b), -ENOENT);
	ck_assert_ptr_null(b.name);
}
END_TEST

START_TEST(test_names_and_errors)
{
	struct gb_slice a;
	char **names, *why;

	make(&a);
	ck_assert_int_eq(gb_slice_state_write(dir, &a), 0);
	ck_assert_int_eq(gb_slice_error_write(dir, "bad", "line door is held by \"x\"\nsecond"),
			 0);
	gb_write_file(dir, "lab-2.tmp", "half");
	gb_write_file(dir, ".hidden", "x");
	ck_assert_int_eq(gb_slice_state_names(dir, false, &names), 0);
	ck_assert_ptr_nonnull(names);
	ck_assert_str_eq(names[0], "lab-2");
	ck_assert_ptr_null(names[1]);
	strv_free(names);
	ck_assert_int_eq(gb_slice_state_names(dir, true, &names), 0);
	ck_assert_str_eq(names[0], "bad");
	ck_assert_str_eq(names[1], "lab-2");
	ck_assert_ptr_null(names[2]);
	strv_free(names);

	ck_assert_int_eq(gb_slice_error_read(dir, "bad", &why), 0);
	ck_assert_str_eq(why, "line door is held by \"x\""); /* one line */
	free(why);
	ck_assert_int_eq(gb_slice_error_read(dir, "lab-2", &why), -ENOENT);
	ck_assert_ptr_null(why);
	gb_write_file(dir, "empty.error", "");
	ck_assert_int_eq(gb_slice_error_read(dir, "empty", &why), -EBADMSG);
	ck_assert_int_eq(gb_slice_error_write(dir, "bad", NULL), 0);
	ck_assert_int_eq(gb_slice_error_read(dir, "bad", &why), -ENOENT);

	gb_slice_state_remove(dir, "lab-2");
	ck_assert_int_eq(gb_slice_state_names(dir, true, &names), 0);
	ck_assert_str_eq(names[0], "empty");
	ck_assert_ptr_null(names[1]);
	strv_free(names);
	gb_slice_clear(&a);

	ck_assert_int_eq(gb_slice_state_names("/nonexistent/slices", true, &names), 0);
	ck_assert_ptr_null(names);
}
END_TEST

#define HEAD "device=gpio-aggregator.1\nchip=gpiochip9\nspec=x\nusers=a\ngroups=\n"

static const char *const bad[] = {
	HEAD "line=gpiochip0 1 as-is door\nnot a key value\n",
	HEAD "Device=x\n",                                  /* a bad key */
	HEAD "=x\n",
	HEAD "line=gpiochip0 1x as-is door\n",              /* bad offsets */
	HEAD "line=gpiochip0 -1 as-is door\n",
	HEAD "line=gpiochip0 4294967296 as-is door\n",
	HEAD "line=gpiochip0 1 output-middle door\n",       /* an unknown safe state */
	HEAD "line=gpiochip0 1 as-is\n",                    /* no item */
	HEAD "line=gpiochip0000000000000000000000000000000000000000000000000000000000000 1 "
	     "as-is door\n",
	"chip=gpiochip9\nline=gpiochip0 1 as-is door\n",   /* no device */
	"device=gpio-aggregator.1\n",                      /* no chip */
	"",
};

START_TEST(test_malformed)
{
	struct gb_slice s = {};

	gb_write_file(dir, "m", bad[_i]);
	ck_assert_int_eq(gb_slice_state_read(dir, "m", &s), -EBADMSG);
	ck_assert_ptr_null(s.name);
	ck_assert_ptr_null(s.lines);
	ck_assert_uint_eq(s.n_lines, 0);
}
END_TEST

START_TEST(test_long_line)
{
	size_t n = GB_SLICE_STATE_LINE_MAX + 16, head = strlen(HEAD "spec=");
	char *text = malloc(head + n + 2);
	struct gb_slice s = {};

	ck_assert_ptr_nonnull(text);
	memcpy(text, HEAD "spec=", head);
	memset(text + head, 'a', n);
	memcpy(text + head + n, "\n", 2);
	gb_write_file(dir, "long", text);
	free(text);
	ck_assert_int_eq(gb_slice_state_read(dir, "long", &s), -EBADMSG);
	ck_assert_ptr_null(s.spec);
}
END_TEST

START_TEST(test_later_keys)
{
	struct gb_slice s = {};

	gb_write_file(dir, "later", HEAD "made_by=2.0\nline=gpiochip0 1 output-high a b\n");
	ck_assert_int_eq(gb_slice_state_read(dir, "later", &s), 0);
	ck_assert_uint_eq(s.n_lines, 1);
	ck_assert_str_eq(s.lines[0].item, "a b");
	ck_assert_int_eq(s.lines[0].safe, GB_SAFE_OUTPUT_HIGH);
	/* A second read of the same struct frees what the first left. */
	ck_assert_int_eq(gb_slice_state_read(dir, "later", &s), 0);
	gb_slice_clear(&s);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("slice-state");
	TCase *tc = tcase_create("slice-state");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_round_trip);
	tcase_add_test(tc, test_names_and_errors);
	tcase_add_loop_test(tc, test_malformed, 0, sizeof(bad) / sizeof(bad[0]));
	tcase_add_test(tc, test_long_line);
	tcase_add_test(tc, test_later_keys);
	suite_add_tcase(s, tc);
	return gb_run_suite(s);
}
