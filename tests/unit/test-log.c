/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Host unit test of the logging layer: journal fields collected by callers, the
 * plain stderr format outside systemd (unchanged: "gpiod-broker: message"), the
 * "<N>" prefix when JOURNAL_STREAM is set but is not our stderr, and the journal
 * chosen only when JOURNAL_STREAM names stderr's own device and inode.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "testmain.h"

START_TEST(test_fields)
{
	struct gb_log_fields f = {};
	char big[3000];

	gb_log_field(&f, "GPIO_CHIP", "%s", "gpiochip0");
	gb_log_field(&f, "GPIO_OFFSET", "%u", 3u);
	ck_assert_uint_eq(f.n, 2);
	ck_assert_str_eq(f.field[0], "GPIO_CHIP=gpiochip0");
	ck_assert_str_eq(f.field[1], "GPIO_OFFSET=3");
	/* A value that does not fit is dropped, never cut. */
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	gb_log_field(&f, "REQUEST_LABEL", "%s", big);
	ck_assert_uint_eq(f.n, 2);
	for (int i = 0; i < 40; i++)
		gb_log_field(&f, "GPIO_OFFSET", "%d", i);
	ck_assert_uint_eq(f.n, GB_LOG_MAX_FIELDS);
	ck_assert_str_eq(f.field[GB_LOG_MAX_FIELDS - 1], "GPIO_OFFSET=21");
}
END_TEST

/* What one log line writes to stderr (stderr made a file for the while). */
static void capture(const char *journal_stream, char *out, size_t size, int *to_journal)
{
	char path[] = "/tmp/gb-log-XXXXXX";
	struct gb_log_fields f = {};
	int fd = mkstemp(path), saved = dup(STDERR_FILENO);
	FILE *in;
	size_t n;

	ck_assert_int_ge(fd, 0);
	ck_assert_int_ge(saved, 0);
	ck_assert_int_ge(dup2(fd, STDERR_FILENO), 0);
	if (journal_stream)
		setenv("JOURNAL_STREAM", journal_stream, 1);
	else
		unsetenv("JOURNAL_STREAM");
	gb_log_init();
	*to_journal = gb_log_to_journal();
	if (!*to_journal) {
		gb_log_field(&f, "CALLER_UID", "%u", 60002u);
		log_struct(LOG_NOTICE, &f, "uid %u denied", 60002u);
		log_error("plain %d", 1);
	}
	fflush(stderr);
	ck_assert_int_ge(dup2(saved, STDERR_FILENO), 0);
	close(saved);
	close(fd);
	in = fopen(path, "r");
	ck_assert_ptr_nonnull(in);
	n = fread(out, 1, size - 1, in);
	out[n] = '\0';
	fclose(in);
	unlink(path);
}

START_TEST(test_stderr)
{
	char out[512];
	int journal;

	capture(NULL, out, sizeof(out), &journal);
	ck_assert_int_eq(journal, 0);
	ck_assert_str_eq(out, "gpiod-broker: uid 60002 denied\ngpiod-broker: plain 1\n");
	/* Set, but another stream's (a child of a service, say): prefixes only. */
	capture("1:1", out, sizeof(out), &journal);
	ck_assert_int_eq(journal, 0);
	ck_assert_str_eq(out, "<5>uid 60002 denied\n<3>plain 1\n");
	capture("garbage", out, sizeof(out), &journal);
	ck_assert_int_eq(journal, 0);
}
END_TEST

START_TEST(test_journal_stream_matches)
{
	char path[] = "/tmp/gb-log-XXXXXX", env[64];
	int fd = mkstemp(path), saved = dup(STDERR_FILENO);
	struct stat st;

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(fstat(fd, &st), 0);
	ck_assert_int_ge(dup2(fd, STDERR_FILENO), 0);
	snprintf(env, sizeof(env), "%llu:%llu", (unsigned long long)st.st_dev,
		 (unsigned long long)st.st_ino);
	setenv("JOURNAL_STREAM", env, 1);
	gb_log_init();
	ck_assert_int_eq(gb_log_to_journal(), 1);
	ck_assert_int_ge(dup2(saved, STDERR_FILENO), 0);
	unsetenv("JOURNAL_STREAM");
	gb_log_init();
	ck_assert_int_eq(gb_log_to_journal(), 0);
	close(saved);
	close(fd);
	unlink(path);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("log");
	TCase *tc = tcase_create("log");

	tcase_add_test(tc, test_fields);
	tcase_add_test(tc, test_stderr);
	tcase_add_test(tc, test_journal_stream_matches);
	suite_add_tcase(s, tc);
	return gb_run_suite(s);
}
