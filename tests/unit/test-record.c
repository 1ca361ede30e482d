/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Host unit test: the request and watch records a broker leaves for the next one.
 * What is written reads back the same, and every damaged form is refused whole,
 * with the line that is wrong.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "record.h"
#include "testmain.h"

static char *write_sample(struct gb_record *rec)
{
	static gid_t groups[] = { 60001, 60100 };
	static struct gb_record_chip chips[2] = {
		{ .name = "gpiochip0", .n_kern = 2, .kern_offsets = { 3, 1 } },
		{ .name = "gpiochip1", .n_kern = 1, .kern_offsets = { 7 } },
	};
	static struct gb_record_line lines[3];
	char *text = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&text, &size);

	gb_record_init(rec);
	for (int i = 0; i < 3; i++)
		gb_line_config_init(&lines[i].config);
	lines[0] = (struct gb_record_line){ 0, 3, lines[0].config, GB_SAFE_OUTPUT_LOW };
	lines[0].config.direction = GPIOD_LINE_DIRECTION_OUTPUT;
	lines[0].config.set = GB_FIELD_DIRECTION;
	lines[1] = (struct gb_record_line){ 0, 1, lines[1].config, GB_SAFE_INPUT };
	lines[1].config.direction = GPIOD_LINE_DIRECTION_INPUT;
	lines[1].config.edge = GPIOD_LINE_EDGE_BOTH;
	lines[1].config.debounce_us = 5000;
	lines[2] = (struct gb_record_line){ 1, 7, lines[2].config, GB_SAFE_AS_IS };
	rec->id = 42;
	rec->label = "porch";
	rec->uid = 60001;
	rec->gid = 60001;
	rec->groups = groups;
	rec->n_groups = 2;
	rec->persistent = true;
	rec->owner = ":1.17";
	rec->n_chips = 2;
	rec->chips = chips;
	rec->n_lines = 3;
	rec->lines = lines;
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(gb_record_write(rec, f), 0);
	fclose(f);
	return text;
}

START_TEST(test_round_trip)
{
	struct gb_record in, out;
	char *text = write_sample(&in), err[160];
	unsigned int lineno;

	gb_record_init(&out);
	ck_assert_int_eq(gb_record_parse(text, strlen(text), 42, &out, &lineno, err, sizeof(err)), 0);
	ck_assert_uint_eq(out.id, 42);
	ck_assert_str_eq(out.label, "porch");
	ck_assert_uint_eq(out.uid, 60001);
	ck_assert_uint_eq(out.n_groups, 2);
	ck_assert_uint_eq(out.groups[1], 60100);
	ck_assert(out.persistent);
	ck_assert_str_eq(out.owner, ":1.17");
	ck_assert_uint_eq(out.n_chips, 2);
	ck_assert_str_eq(out.chips[1].name, "gpiochip1");
	ck_assert_uint_eq(out.chips[0].n_kern, 2);
	ck_assert_uint_eq(out.chips[0].kern_offsets[1], 1);
	ck_assert_uint_eq(out.n_lines, 3);
	ck_assert_uint_eq(out.lines[1].config.debounce_us, 5000);
	ck_assert_int_eq(out.lines[1].config.edge, GPIOD_LINE_EDGE_BOTH);
	ck_assert_int_eq(out.lines[0].safe_state, GB_SAFE_OUTPUT_LOW);
	ck_assert_uint_eq(out.lines[2].chip, 1);
	ck_assert(!out.direct);
	/* A plain request's record says nothing of "direct": an older broker reads it. */
	ck_assert_ptr_null(strstr(text, "direct"));
	gb_record_clear(&out);
	ck_assert_ptr_null(out.label);
	free(text);
}
END_TEST

/* A direct request stays direct across a restart: its record says so. */
START_TEST(test_direct)
{
	struct gb_record in, out;
	char *text, *copy = NULL, err[160];
	unsigned int lineno;
	size_t len;
	FILE *f = open_memstream(&copy, &len);

	free(write_sample(&in));
	in.direct = true;
	ck_assert_int_eq(gb_record_write(&in, f), 0);
	fclose(f);
	text = copy;
	ck_assert_ptr_nonnull(strstr(text, "\ndirect=1\n"));
	gb_record_init(&out);
	ck_assert_int_eq(gb_record_parse(text, strlen(text), 42, &out, &lineno, err, sizeof(err)), 0);
	ck_assert(out.direct);
	ck_assert(out.persistent);
	gb_record_clear(&out);
	free(text);
}
END_TEST

/* Replace the first line starting with @p key by @p repl (NULL: delete it). */
static char *edit(const char *text, const char *key, const char *repl)
{
	const char *p = strstr(text, key), *nl;
	char *out;

	ck_assert_ptr_nonnull(p);
	nl = strchr(p, '\n');
	ck_assert(asprintf(&out, "%.*s%s%s", (int)(p - text), text, repl ? repl : "",
			   repl ? nl : nl + 1) > 0);
	return out;
}

START_TEST(test_damaged)
{
	static const struct { const char *key, *repl, *msg; unsigned int lineno; } cases[] = {
		{ "version=", "version=2\n", "unsupported version", 2 },
		{ "id=", "id=43\n", "id does not match", 3 },
		{ "label=", "label=\n", "invalid label", 4 },
		{ "uid=", NULL, "missing", 0 },
		{ "groups=", "groups=1,,2\n", "invalid groups", 7 },
		{ "persistent=", "persistent=yes\n", "invalid persistent", 8 },
		{ "persistent=", "persistent=1\ndirect=yes\n", "invalid direct", 9 },
		{ "owner=", "owner=nobody\n", "invalid owner", 9 },
		{ "chips=", "chips=0\n", "invalid count", 10 },
		{ "chip=gpiochip0", "chip=gpiochip0 2 3\n", "invalid chip offsets", 11 },
		{ "line=0 3", "line=5 3 1 3 0 1 1 1 0 0 1 2\n", "out of range", 14 },
		{ "line=0 3", "line=0 1 1 3 0 1 1 1 0 0 1 2\n", "listed twice", 0 },
		{ "line=0 1", "line=0 1 2 2 1 4 1 1 0 5000 1 1\n", "needs direction", 0 },
		{ "line=1 7", NULL, "missing", 0 },
		{ "lines=", "lines=3\nfrob=1\n", "unknown key", 14 },
		{ "chips=", "chips\n", "not key=value", 10 },
	};
	struct gb_record in, out;
	char *text = write_sample(&in), err[160];

	gb_record_init(&out);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *bad = edit(text, cases[i].key, cases[i].repl);
		unsigned int lineno = 99;

		ck_assert_msg(gb_record_parse(bad, strlen(bad), 42, &out, &lineno, err,
					      sizeof(err)) == -EINVAL, "case %zu accepted", i);
		ck_assert_msg(strstr(err, cases[i].msg), "case %zu: '%s'", i, err);
		ck_assert_msg(lineno == cases[i].lineno, "case %zu: line %u", i, lineno);
		ck_assert_ptr_null(out.label);
		free(bad);
	}
	/* Cut short: no newline at the end. */
	ck_assert_int_eq(gb_record_parse(text, strlen(text) - 1, 42, &out, &(unsigned int){ 0 },
					 err, sizeof(err)), -EINVAL);
	ck_assert_str_eq(err, "truncated");
	free(text);
}
END_TEST

START_TEST(test_fd_names)
{
	char name[40];
	uint64_t id;
	unsigned int k;

	gb_record_fd_name(12, 3, name, sizeof(name));
	ck_assert_str_eq(name, "gbreq-12-3");
	ck_assert(gb_record_parse_fd_name(name, &id, &k));
	ck_assert_uint_eq(id, 12);
	ck_assert_uint_eq(k, 3);
	ck_assert(!gb_record_parse_fd_name("gbreq-12", &id, &k));
	ck_assert(!gb_record_parse_fd_name("gbreq--1-2", &id, &k));
	ck_assert(!gb_record_parse_fd_name("other-1-2", &id, &k));
	ck_assert(!gb_record_parse_fd_name("gbreq-1-99999", &id, &k));
}
END_TEST

static const char watch_text[] =
	"# gpiod-broker watch state\nversion=1\nid=7\nuid=60002\nowner=:1.23\nline=gpiochip2 5\n";

START_TEST(test_watch_round_trip)
{
	struct gb_watch_record in = { .id = 7, .uid = 60002, .owner = ":1.23", .chip = "gpiochip2",
				      .offset = 5 }, out;
	char *text = NULL, err[160];
	unsigned int lineno;
	size_t size = 0;
	FILE *f = open_memstream(&text, &size);

	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(gb_watch_record_write(&in, f), 0);
	fclose(f);
	gb_watch_record_init(&out);
	ck_assert_int_eq(gb_watch_record_parse(text, size, 7, &out, &lineno, err, sizeof(err)), 0);
	ck_assert_uint_eq(out.id, 7);
	ck_assert_uint_eq(out.uid, 60002);
	ck_assert_str_eq(out.owner, ":1.23");
	ck_assert_str_eq(out.chip, "gpiochip2");
	ck_assert_uint_eq(out.offset, 5);
	gb_watch_record_clear(&out);
	ck_assert_int_eq(gb_watch_record_parse(watch_text, strlen(watch_text), 7, &out, &lineno, err,
					       sizeof(err)), 0);
	ck_assert_str_eq(out.chip, "gpiochip2");
	gb_watch_record_clear(&out);
	free(text);
}
END_TEST

START_TEST(test_watch_damaged)
{
	static const struct {
		const char *text;
		unsigned int lineno;
		const char *what;
	} bad[] = {
		{ "version=1\nid=8\nuid=1\nowner=:1.2\nline=gpiochip0 1\n", 2, "id does not match" },
		{ "version=2\nid=7\nuid=1\nowner=:1.2\nline=gpiochip0 1\n", 1, "unsupported version" },
		{ "version=1\nid=7\nuid=1\nowner=\nline=gpiochip0 1\n", 4, "invalid owner" },
		{ "version=1\nid=7\nuid=1\nowner=:1.2\nline=gpiochip0\n", 5, "invalid line" },
		{ "version=1\nid=7\nuid=1\nowner=:1.2\nline=gpiochip0  1\n", 5, "invalid line" },
		{ "version=1\nid=7\nuid=1\nowner=:1.2\nline=gpiochip0 70000\n", 5, "invalid line" },
		{ "version=1\nid=7\nuid=1\nowner=:1.2\nline=gpiochip0 1 2\n", 5, "invalid line" },
		{ "version=1\nid=7\nuid=1\nowner=:1.2\nline=a 1\nline=a 2\n", 6, "invalid line" },
		{ "version=1\nid=7\nuid=1\nowner=:1.2\nlabel=x\n", 5, "unknown key" },
		{ "version=1\nid=7\nuid=1\nowner=:1.2\n", 0, "missing" },
		{ "version=1\nid=7\nuid=1\nowner=:1.2\nline=gpiochip0 1", 5, "truncated" },
	};
	struct gb_watch_record rec;
	unsigned int lineno;
	char err[160];

	gb_watch_record_init(&rec);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ck_assert_msg(gb_watch_record_parse(bad[i].text, strlen(bad[i].text), 7, &rec, &lineno,
						    err, sizeof(err)) == -EINVAL, "accepted: %s", bad[i].text);
		ck_assert_msg(lineno == bad[i].lineno, "%s: line %u, not %u", bad[i].text, lineno,
			      bad[i].lineno);
		ck_assert_msg(strstr(err, bad[i].what), "%s: '%s'", bad[i].text, err);
		ck_assert_ptr_null(rec.owner);
		ck_assert_ptr_null(rec.chip);
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("record");
	TCase *tc = tcase_create("record");

	tcase_add_test(tc, test_round_trip);
	tcase_add_test(tc, test_damaged);
	tcase_add_test(tc, test_direct);
	tcase_add_test(tc, test_fd_names);
	tcase_add_test(tc, test_watch_round_trip);
	tcase_add_test(tc, test_watch_damaged);
	suite_add_tcase(s, tc);
	return gb_run_suite(s);
}
