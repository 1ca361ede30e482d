/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Host unit test of gpiobrokerctl's pure parts (client/ctl/parse.c, json.c and the
 * UTF-8 repair they share with the broker): periods, values, LINE=VALUE, settings
 * options, "did you mean" for words and options, handles, and the JSON writer on odd
 * strings, whose output must parse (jansson reads it back) and match what Python's
 * errors="replace" makes of the same bytes.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Before Check's: it has a fail() macro, and ctl.h a fail() function. */
#include "ctl.h"
#include "utf8.h"

#include <check.h>

#include "testmain.h"

/* What the code under test writes to stderr while @expr runs. */
static char stderr_buf[4096];
#define CAPTURE_STDERR(expr)                                                         \
	({                                                                           \
		FILE *tmp_ = tmpfile();                                              \
		int saved_ = dup(STDERR_FILENO), r_;                                 \
		size_t n_;                                                           \
		ck_assert_ptr_nonnull(tmp_);                                         \
		fflush(stderr);                                                      \
		dup2(fileno(tmp_), STDERR_FILENO);                                   \
		r_ = (expr);                                                         \
		fflush(stderr);                                                      \
		dup2(saved_, STDERR_FILENO);                                         \
		close(saved_);                                                       \
		rewind(tmp_);                                                        \
		n_ = fread(stderr_buf, 1, sizeof(stderr_buf) - 1, tmp_);             \
		stderr_buf[n_] = '\0';                                               \
		fclose(tmp_);                                                        \
		r_;                                                                  \
	})

START_TEST(test_period)
{
	ck_assert_int_eq(parse_period("10ms", 1000), 10000);
	ck_assert_int_eq(parse_period("1.5s", 1000), 1500000);
	ck_assert_int_eq(parse_period("100us", 1000), 100);
	ck_assert_int_eq(parse_period("0", 1000), 0);
	/* A bare number is in the caller's unit: ms for periods, s for --timeout. */
	ck_assert_int_eq(parse_period("5", 1000), 5000);
	ck_assert_int_eq(parse_period("5", 1000000), 5000000);
	ck_assert_int_eq(parse_period("0.3", 1000000), 300000);
	/* Rounded to the microsecond. */
	ck_assert_int_eq(parse_period("1.0005ms", 1000), 1001);
	ck_assert_int_eq(parse_period("", 1000), -1);
	ck_assert_int_eq(parse_period("ms", 1000), -1);
	ck_assert_int_eq(parse_period("-1", 1000), -1);
	ck_assert_int_eq(parse_period(" 1", 1000), -1);
	ck_assert_int_eq(parse_period("1x", 1000), -1);
	ck_assert_int_eq(parse_period("1 ms", 1000), -1);
	ck_assert_int_eq(parse_period("2sec", 1000), -1);
	ck_assert_int_eq(parse_period("1e30s", 1000), -1);
}
END_TEST

START_TEST(test_period_str)
{
	char buf[32];

	ck_assert_str_eq(period_str(10000, buf, sizeof(buf)), "10ms");
	ck_assert_str_eq(period_str(2000000, buf, sizeof(buf)), "2s");
	ck_assert_str_eq(period_str(1500, buf, sizeof(buf)), "1500us");
	ck_assert_str_eq(period_str(15, buf, sizeof(buf)), "15us");
}
END_TEST

START_TEST(test_values)
{
	static const char *const one[] = { "1", "active", "on", "high", "true" };
	static const char *const zero[] = { "0", "inactive", "off", "low", "false" };
	unsigned long n;

	for (size_t i = 0; i < 5; i++) {
		ck_assert_int_eq(parse_value(one[i]), 1);
		ck_assert_int_eq(parse_value(zero[i]), 0);
	}
	ck_assert_int_eq(parse_value("2"), -1);
	ck_assert_int_eq(parse_value("On"), -1);
	ck_assert_int_eq(parse_value(""), -1);
	ck_assert_int_eq(parse_count("3", &n), 0);
	ck_assert_uint_eq(n, 3);
	ck_assert_int_eq(parse_count("0", &n), -1);
	ck_assert_int_eq(parse_count("-1", &n), -1);
	ck_assert_int_eq(parse_count("3x", &n), -1);
	ck_assert_int_eq(parse_count("", &n), -1);
	ck_assert_int_eq(parse_count("99999999999999999999999", &n), -1);
}
END_TEST

START_TEST(test_line_arg)
{
	struct gpiobroker_line_settings base = { 0 }, s; /* 0: the defaults (as-is...) */
	char *id = NULL;
	int v;

	ck_assert_int_eq(parse_line_arg("lamp=1", &id, &v), 0);
	ck_assert_str_eq(id, "lamp");
	ck_assert_int_eq(v, 1);
	free(id);
	ck_assert_int_eq(parse_line_arg("lamp", &id, &v), 0);
	ck_assert_str_eq(id, "lamp");
	ck_assert_int_eq(v, -1);
	free(id);
	/* The last "=" splits; one followed by a "/" is part of a path. */
	ck_assert_int_eq(parse_line_arg("a=b=off", &id, &v), 0);
	ck_assert_str_eq(id, "a=b");
	ck_assert_int_eq(v, 0);
	free(id);
	ck_assert_int_eq(parse_line_arg("/org/x=y/z", &id, &v), 0);
	ck_assert_str_eq(id, "/org/x=y/z");
	ck_assert_int_eq(v, -1);
	free(id);
	cur_cmd = "set";
	ck_assert_int_eq(CAPTURE_STDERR(parse_line_arg("lamp=maybe", &id, &v)), EX_USAGE);
	ck_assert_str_eq(stderr_buf, "gpiobrokerctl: set: bad value 'maybe' in lamp=maybe (allowed: "
				     "0, 1, active, inactive, on, off)\ntry 'gpiobrokerctl set --help'\n");

	base.bias = GPIOBROKER_BIAS_PULL_UP;
	s = with_value(&base, 1);
	ck_assert_int_eq(s.direction, GPIOBROKER_DIRECTION_OUTPUT);
	ck_assert_int_eq(s.value, 1);
	ck_assert_int_eq(s.bias, GPIOBROKER_BIAS_PULL_UP);
	s = with_value(&base, -1);
	ck_assert_int_eq(s.direction, GPIOBROKER_DIRECTION_AS_IS);
}
END_TEST

START_TEST(test_settings_opt)
{
	struct gpiobroker_line_settings s = { 0 };
	bool given = false;

	cur_cmd = "get";
	ck_assert_int_eq(settings_opt('e', "both", &s, &given), 1);
	ck_assert_int_eq(s.edge, GPIOBROKER_EDGE_BOTH);
	ck_assert(given);
	ck_assert_int_eq(settings_opt('d', "open-drain", &s, NULL), 1);
	ck_assert_int_eq(s.drive, GPIOBROKER_DRIVE_OPEN_DRAIN);
	ck_assert_int_eq(settings_opt('E', "realtime", &s, NULL), 1);
	ck_assert_int_eq(s.event_clock, GPIOBROKER_CLOCK_REALTIME);
	ck_assert_int_eq(settings_opt('p', "10ms", &s, NULL), 1);
	ck_assert_uint_eq(s.debounce_us, 10000);
	ck_assert_int_eq(settings_opt('p', "5", &s, NULL), 1); /* a bare number: ms */
	ck_assert_uint_eq(s.debounce_us, 5000);
	ck_assert_int_eq(settings_opt('l', NULL, &s, NULL), 1);
	ck_assert(s.active_low);
	ck_assert_int_eq(settings_opt('o', NULL, &s, NULL), 1);
	ck_assert_int_eq(s.direction, GPIOBROKER_DIRECTION_OUTPUT);
	/* Not a settings option: left to the caller. */
	ck_assert_int_eq(settings_opt('x', NULL, &s, NULL), 0);

	given = false;
	ck_assert_int_eq(CAPTURE_STDERR(settings_opt('b', "sideways", &s, &given)), EX_USAGE);
	ck_assert(!given);
	ck_assert_str_eq(stderr_buf, "gpiobrokerctl: get: bad bias 'sideways' (allowed: as-is, "
				     "disabled, pull-up, pull-down)\ntry 'gpiobrokerctl get --help'\n");
	ck_assert_int_eq(CAPTURE_STDERR(settings_opt('p', "4295s", &s, NULL)), EX_USAGE);
	ck_assert_ptr_nonnull(strstr(stderr_buf, "bad debounce period '4295s'"));
	ck_assert_int_eq(CAPTURE_STDERR(settings_opt(OPT_REFUSED_DEBOUNCE, "10", &s, NULL)), EX_USAGE);
	ck_assert_ptr_nonnull(strstr(stderr_buf, "use -p/--debounce-period"));
}
END_TEST

START_TEST(test_suggest)
{
	static const char *const commands[] = { "detect", "info", "find", "status", "request",
						 "requests", "release", "get", "set", "wait" };
	static const char *const lines[] = { "lamp", "switch", "porch-light" };

	ck_assert_str_eq(suggest("reqests", commands, 10), "requests");
	ck_assert_str_eq(suggest("swich", lines, 3), "switch");
	ck_assert_str_eq(suggest("porch-lite", lines, 3), "porch-light");
	/* Short words: one edit at most. */
	ck_assert_str_eq(suggest("gt", commands, 10), "get");
	ck_assert_ptr_null(suggest("xyz", commands, 10));
	ck_assert_ptr_null(suggest("frobnicate", commands, 10));
	/* The word itself is no suggestion. */
	ck_assert_ptr_null(suggest("lamp", lines, 1));
}
END_TEST

static int run_getopt(int argc, char **argv, const struct option *opts, const char *letters)
{
	int c;

	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, letters, opts, NULL)) != -1)
		if (c == '?' || c == ':')
			return opt_error(c, argv, opts);
	return 0;
}

START_TEST(test_opt_error)
{
	static const struct option opts[] = {
		{ "numeric", no_argument, NULL, 256 }, { "chip", required_argument, NULL, 'c' },
		{ "hold-period", required_argument, NULL, 'p' }, { 0 }
	};
	char *misspelt[] = { "get", "--numerc", "switch", NULL };
	char *unknown[] = { "get", "--frobnicate=3", NULL };
	char *letter[] = { "get", "-x", NULL };
	char *missing[] = { "get", "-c", NULL };
	char *missing_long[] = { "get", "--hold-period", NULL };

	cur_cmd = "get";
	ck_assert_int_eq(CAPTURE_STDERR(run_getopt(3, misspelt, opts, "+:c:p:")), EX_USAGE);
	ck_assert_str_eq(stderr_buf, "gpiobrokerctl: get: unknown option '--numerc' (did you mean "
				     "'--numeric'?)\ntry 'gpiobrokerctl get --help'\n");
	ck_assert_int_eq(CAPTURE_STDERR(run_getopt(2, unknown, opts, "+:c:p:")), EX_USAGE);
	ck_assert_str_eq(stderr_buf, "gpiobrokerctl: get: unknown option '--frobnicate=3'\n"
				     "try 'gpiobrokerctl get --help'\n");
	ck_assert_int_eq(CAPTURE_STDERR(run_getopt(2, letter, opts, "+:c:p:")), EX_USAGE);
	ck_assert_ptr_nonnull(strstr(stderr_buf, "unknown option -x\n"));
	ck_assert_int_eq(CAPTURE_STDERR(run_getopt(2, missing, opts, "+:c:p:")), EX_USAGE);
	ck_assert_ptr_nonnull(strstr(stderr_buf, "option -c needs a value\n"));
	ck_assert_int_eq(CAPTURE_STDERR(run_getopt(2, missing_long, opts, "+:c:p:")), EX_USAGE);
	ck_assert_ptr_nonnull(strstr(stderr_buf, "option --hold-period needs a value\n"));
}
END_TEST

START_TEST(test_json_only)
{
	char *ok[] = { "detect", "--json", NULL };
	char *bad[] = { "detect", "--jsn", NULL };
	char *extra[] = { "detect", "x", NULL };
	char *one[] = { "find", "--json", "lamp", NULL };
	char *none[] = { "find", NULL };
	bool json = false;

	cur_cmd = "detect";
	optind = 0;
	ck_assert_int_eq(parse_json_only(2, ok, &json, 0), 0);
	ck_assert(json);
	ck_assert_int_eq(optind, 2);
	optind = 0;
	ck_assert_int_eq(CAPTURE_STDERR(parse_json_only(2, bad, &json, 0)), EX_USAGE);
	ck_assert_ptr_nonnull(strstr(stderr_buf, "(did you mean '--json'?)"));
	optind = 0;
	ck_assert_int_eq(CAPTURE_STDERR(parse_json_only(2, extra, &json, 0)), EX_USAGE);
	ck_assert_ptr_nonnull(strstr(stderr_buf, "unexpected argument 'x'"));
	cur_cmd = "find";
	optind = 0;
	ck_assert_int_eq(parse_json_only(3, one, &json, 1), 0);
	ck_assert_str_eq(one[optind], "lamp");
	optind = 0;
	ck_assert_int_eq(CAPTURE_STDERR(parse_json_only(1, none, &json, 1)), EX_USAGE);
	ck_assert_ptr_nonnull(strstr(stderr_buf, "one LINE expected"));
}
END_TEST

START_TEST(test_shared_opts)
{
	struct line_opts lo = { 0 };
	unsigned long n = 0;
	uint64_t us = 0;

	cur_cmd = "notify";
	ck_assert_int_eq(line_opt('c', "gpiochip0", &lo), 1);
	ck_assert_str_eq(lo.chip_id, "gpiochip0");
	ck_assert_int_eq(line_opt(OPT_BY_NAME, NULL, &lo), 1);
	ck_assert(lo.by_name);
	ck_assert_int_eq(line_opt('n', "3", &lo), 0);
	ck_assert_int_eq(count_opt("3", &n), 1);
	ck_assert_uint_eq(n, 3);
	ck_assert_int_eq(CAPTURE_STDERR(count_opt("0", &n)), EX_USAGE);
	ck_assert_ptr_nonnull(strstr(stderr_buf, "bad number of events '0' (a positive integer)"));
	ck_assert_int_eq(idle_opt("200ms", &us), 1);
	ck_assert_uint_eq(us, 200000);
	ck_assert_int_eq(idle_opt("2", &us), 1); /* a bare number: ms */
	ck_assert_uint_eq(us, 2000);
	ck_assert_int_eq(CAPTURE_STDERR(idle_opt("0", &us)), EX_USAGE);
	ck_assert_int_eq(CAPTURE_STDERR(idle_opt("2x", &us)), EX_USAGE);
	ck_assert_str_eq(stderr_buf, "gpiobrokerctl: notify: bad idle timeout '2x' (a period: 10ms, "
				     "5s; bare number: ms)\ntry 'gpiobrokerctl notify --help'\n");
}
END_TEST

START_TEST(test_handles)
{
	char *p;

	ck_assert(is_number("12"));
	ck_assert(!is_number(""));
	ck_assert(!is_number("1a"));
	p = request_ref("5");
	ck_assert_str_eq(p, "/org/gpiodbroker1/request/5");
	free(p);
	p = request_ref("/org/gpiodbroker1/request/7");
	ck_assert_str_eq(p, "/org/gpiodbroker1/request/7");
	free(p);
	ck_assert_ptr_null(request_ref("lamp"));
	ck_assert_str_eq(short_id("/org/gpiodbroker1/request/7"), "7");
	ck_assert_str_eq(short_id("/org/gpiodbroker1/watch/3"), "3");
	ck_assert_str_eq(short_id("/org/gpiodbroker1/chip/gpiochip0"), "/org/gpiodbroker1/chip/gpiochip0");
}
END_TEST

/* The compact JSON text of one value (freed). */
static char *dump(json_t *v)
{
	char *s;

	ck_assert_ptr_nonnull(v);
	s = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
	json_decref(v);
	ck_assert_ptr_nonnull(s);
	return s;
}

static void check_str(const char *in, const char *want)
{
	char *s = dump(jstr(in));
	json_error_t err;
	json_t *back;

	ck_assert_msg(strcmp(s, want) == 0, "jstr(\"%s\"): %s, not %s", in, s, want);
	/* What it wrote parses, and is what the writer was given once repaired. */
	back = json_loads(s, JSON_DECODE_ANY, &err);
	ck_assert_msg(back != NULL, "%s does not parse: %s", s, err.text);
	ck_assert(gb_utf8_valid(json_string_value(back)));
	json_decref(back);
	free(s);
}

START_TEST(test_json_strings)
{
	check_str("lamp", "\"lamp\"");
	check_str("a\"b\\c/d", "\"a\\\"b\\\\c/d\"");
	check_str("\x01\n\t\x1f\x7f", "\"\\u0001\\n\\t\\u001F\x7f\"");
	check_str("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"");
	check_str(NULL, "\"\"");
	/* Not UTF-8: a foreign process's consumer. One U+FFFD per maximal ill-formed
	 * subsequence, as Python's bytes.decode("utf-8", "replace"). */
	check_str("bad\xff\xfex\xc3(", "\"bad\xef\xbf\xbd\xef\xbf\xbdx\xef\xbf\xbd(\"");
	check_str("a\xe2\x82", "\"a\xef\xbf\xbd\"");                  /* cut short */
	check_str("\xf0\x9f\x98x", "\"\xef\xbf\xbdx\"");
	check_str("\xc0\x80", "\"\xef\xbf\xbd\xef\xbf\xbd\"");          /* overlong NUL */
	check_str("\xe0\x80\x80", "\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\"");
	check_str("\xed\xa0\x80", "\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\""); /* a surrogate */
	check_str("\xf4\x90\x80\x80",                                   /* beyond U+10FFFF */
		  "\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\"");
	check_str("\xf5\x80", "\"\xef\xbf\xbd\xef\xbf\xbd\"");
	check_str("\xe1\x80\xe1\x80\x80", "\"\xef\xbf\xbd\xe1\x80\x80\"");
	check_str("\x80", "\"\xef\xbf\xbd\"");
}
END_TEST

START_TEST(test_json_values)
{
	json_t *o, *a;
	char *s;

	s = dump(jstr_or_null(""));
	ck_assert_str_eq(s, "null");
	free(s);
	s = dump(jstr_or_null(NULL));
	ck_assert_str_eq(s, "null");
	free(s);
	s = dump(ju64(UINT64_C(1234567890123)));
	ck_assert_str_eq(s, "1234567890123");
	free(s);
	o = ju64(UINT64_MAX);
	ck_assert(json_is_number(o));
	json_decref(o);

	/* As the verbs build their output: insertion order, compact. */
	o = json_pack("{s:o,s:I,s:b,s:o}", "chip", jstr("gpiochip0"), "offset", (json_int_t)3,
		      "used", 1, "consumer", jstr_or_null(NULL));
	jput(&o, "path", jstr("/org/gpiodbroker1/chip/gpiochip0/line3"));
	a = json_array();
	jpush(&a, o);
	s = dump(a);
	ck_assert_str_eq(s, "[{\"chip\":\"gpiochip0\",\"offset\":3,\"used\":true,\"consumer\":null,"
			    "\"path\":\"/org/gpiodbroker1/chip/gpiochip0/line3\"}]");
	free(s);

	/* A key that is not UTF-8 (PolicyStatus is the broker's) is repaired too. */
	o = json_object();
	jput(&o, "k\xff", json_true());
	s = dump(o);
	ck_assert_str_eq(s, "{\"k\xef\xbf\xbd\":true}");
	free(s);

	/* A value that could not be made drops the whole output, which json_print says. */
	o = json_object();
	jput(&o, "x", NULL);
	ck_assert_ptr_null(o);
	a = json_array();
	jpush(&a, NULL);
	ck_assert_ptr_null(a);
	jpush(&a, json_true());
	ck_assert_ptr_null(a);
	cur_cmd = "info";
	ck_assert_int_eq(CAPTURE_STDERR(json_print(NULL)), EX_ERROR);
	ck_assert_str_eq(stderr_buf, "gpiobrokerctl: info: cannot write the JSON output: out of memory\n");
}
END_TEST

START_TEST(test_utf8)
{
	char *r;

	ck_assert(gb_utf8_valid(""));
	ck_assert(gb_utf8_valid("plain"));
	ck_assert(gb_utf8_valid("\xf4\x8f\xbf\xbf")); /* U+10FFFF */
	ck_assert(!gb_utf8_valid("\xf4\x90\x80\x80"));
	ck_assert(!gb_utf8_valid("\xed\xbf\xbf"));
	ck_assert(!gb_utf8_valid("x\xc3"));
	r = gb_utf8_repair("ok");
	ck_assert_str_eq(r, "ok");
	free(r);
	r = gb_utf8_repair("\xff\xff\xff");
	ck_assert_str_eq(r, "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
	free(r);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("ctl");
	TCase *tc = gb_tcase_new(s, "parse", NULL, NULL, 10);

	tcase_add_test(tc, test_period);
	tcase_add_test(tc, test_period_str);
	tcase_add_test(tc, test_values);
	tcase_add_test(tc, test_line_arg);
	tcase_add_test(tc, test_settings_opt);
	tcase_add_test(tc, test_suggest);
	tcase_add_test(tc, test_opt_error);
	tcase_add_test(tc, test_json_only);
	tcase_add_test(tc, test_shared_opts);
	tcase_add_test(tc, test_handles);
	tc = gb_tcase_new(s, "json", NULL, NULL, 10);
	tcase_add_test(tc, test_json_strings);
	tcase_add_test(tc, test_json_values);
	tcase_add_test(tc, test_utf8);
	return gb_run_suite(s);
}
