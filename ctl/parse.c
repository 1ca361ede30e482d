/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gpiobrokerctl: the pure parts of its command lines (options, values, periods,
 * handles, "did you mean"), with no broker behind them: tests/unit/test-ctl.c runs
 * them on the host.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "ctl.h"

const char *cur_cmd = "gpiobrokerctl";
bool cur_chip_opt;
const char *cur_target;

int usage_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "gpiobrokerctl: %s: ", cur_cmd);
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\ntry 'gpiobrokerctl %s --help'\n", cur_cmd);
	va_end(ap);
	return EX_USAGE;
}

int refuse_opt(const char *opt, const char *why)
{
	return usage_error("%s is not supported: %s", opt, why);
}

int refuse_strict(void)
{
	return refuse_opt("-s/--strict", "the broker resolves every line reference to one line");
}

static size_t edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), *row, best;

	if (la > 64 || lb > 64)
		return SIZE_MAX;
	row = calloc(lb + 1, sizeof(*row));
	if (!row)
		return SIZE_MAX;
	for (size_t j = 0; j <= lb; j++)
		row[j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t diag = row[0];

		row[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t up = row[j], v = diag + (a[i - 1] != b[j - 1]);

			if (up + 1 < v)
				v = up + 1;
			if (row[j - 1] + 1 < v)
				v = row[j - 1] + 1;
			row[j] = v;
			diag = up;
		}
	}
	best = row[lb];
	free(row);
	return best;
}

const char *suggest(const char *word, const char *const *cands, size_t n)
{
	size_t best = SIZE_MAX, limit = strlen(word) <= 4 ? 1 : strlen(word) / 3 + 1;
	const char *pick_ = NULL;

	for (size_t i = 0; i < n; i++) {
		size_t d = edit_distance(word, cands[i]);

		if (d < best && d > 0) {
			best = d;
			pick_ = cands[i];
		}
	}
	return best <= limit ? pick_ : NULL;
}

int opt_error(int c, char **argv, const struct option *opts)
{
	const char *arg = argv[optind - 1];
	const char *names[128];
	size_t n = 0;

	if (c == ':') {
		/* Named as typed: a long option's optopt is its short letter, if it has one. */
		if (optopt && optopt < 256 && strncmp(arg, "--", 2) != 0)
			return usage_error("option -%c needs a value", optopt);
		return usage_error("option %s needs a value", arg);
	}
	if (optopt && optopt < 256)
		return usage_error("unknown option -%c", optopt);
	for (; opts->name && n < 128; opts++)
		names[n++] = opts->name;
	if (strncmp(arg, "--", 2) == 0) {
		char word[64];
		const char *best;

		snprintf(word, sizeof(word), "%s", arg + 2);
		word[strcspn(word, "=")] = '\0';
		best = suggest(word, names, n);
		if (best)
			return usage_error("unknown option '%s' (did you mean '--%s'?)", arg, best);
	}
	return usage_error("unknown option '%s'", arg);
}

int parse_json_only(int argc, char **argv, bool *json, int n_args)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, OPT_JSON }, { "help", no_argument, NULL, 'h' }, { 0 }
	};
	int c;

	*json = false;
	while ((c = getopt_long(argc, argv, "+:", opts, NULL)) != -1) {
		if (c != OPT_JSON)
			return opt_error(c, argv, opts);
		*json = true;
	}
	if (n_args == 0 && optind < argc)
		return usage_error("unexpected argument '%s'", argv[optind]);
	if (n_args == 1 && argc - optind != 1)
		return usage_error("one LINE expected");
	return 0;
}

int count_opt(const char *arg, unsigned long *count)
{
	if (parse_count(arg, count) < 0)
		return usage_error("bad number of events '%s' (a positive integer)", arg);
	return 1;
}

int idle_opt(const char *arg, uint64_t *us)
{
	int64_t p = parse_period(arg, 1000);

	if (p <= 0)
		return usage_error("bad idle timeout '%s' (a period: 10ms, 5s; bare number: ms)", arg);
	*us = (uint64_t)p;
	return 1;
}

int line_opt(int c, const char *arg, struct line_opts *lo)
{
	if (c == 'c')
		lo->chip_id = arg;
	else if (c == OPT_BY_NAME)
		lo->by_name = true;
	else
		return 0;
	return 1;
}

int pick(const char *arg, const char *const names[], int n)
{
	for (int i = 0; i < n; i++)
		if (strcmp(arg, names[i]) == 0)
			return i;
	return -1;
}

int parse_value(const char *s)
{
	static const char *const one[] = { "1", "active", "on", "high", "true" };
	static const char *const zero[] = { "0", "inactive", "off", "low", "false" };

	if (pick(s, one, 5) >= 0)
		return 1;
	if (pick(s, zero, 5) >= 0)
		return 0;
	return -1;
}

int64_t parse_period(const char *s, uint64_t bare_us)
{
	char *end;
	double v;
	uint64_t unit = bare_us;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || v < 0 || !(s[0] >= '0' && s[0] <= '9'))
		return -1;
	if (strcmp(end, "s") == 0)
		unit = 1000000;
	else if (strcmp(end, "ms") == 0)
		unit = 1000;
	else if (strcmp(end, "us") == 0)
		unit = 1;
	else if (*end)
		return -1;
	v *= (double)unit;
	if (v > 4e18)
		return -1;
	return (int64_t)(v + 0.5);
}

int parse_count(const char *s, unsigned long *out)
{
	char *end;

	errno = 0;
	*out = strtoul(s, &end, 10);
	return errno || !*s || *end || *out == 0 || s[0] == '-' ? -1 : 0;
}

int parse_line_arg(const char *arg, char **id, int *value)
{
	const char *eq = strrchr(arg, '=');

	*value = -1;
	if (eq && !strchr(eq, '/')) {
		*value = parse_value(eq + 1);
		if (*value < 0)
			return usage_error("bad value '%s' in %s (allowed: 0, 1, active, inactive, "
					   "on, off)", eq + 1, arg);
	} else {
		eq = NULL;
	}
	*id = eq ? strndup(arg, (size_t)(eq - arg)) : strdup(arg);
	return *id ? 0 : EX_ERROR;
}

struct gpiobroker_line_settings with_value(const struct gpiobroker_line_settings *base, int value)
{
	struct gpiobroker_line_settings s = *base;

	if (value >= 0) {
		s.direction = GPIOBROKER_DIRECTION_OUTPUT;
		s.value = value;
	}
	return s;
}

const char *period_str(uint64_t us, char *buf, size_t size)
{
	if (us % 1000000 == 0)
		snprintf(buf, size, "%" PRIu64 "s", us / 1000000);
	else if (us % 1000 == 0)
		snprintf(buf, size, "%" PRIu64 "ms", us / 1000);
	else
		snprintf(buf, size, "%" PRIu64 "us", us);
	return buf;
}

static int bad_choice(const char *what, const char *arg, const char *const names[], int n)
{
	char allowed[256] = "";
	size_t len = 0;

	for (int i = 0; i < n; i++)
		len += (size_t)snprintf(allowed + len, sizeof(allowed) - len, "%s%s", i ? ", " : "",
					names[i]);
	return usage_error("bad %s '%s' (allowed: %s)", what, arg, allowed);
}

/* -e, -b, -d, -E: a name from a table; 1, or EX_USAGE (reported). */
static int choice_opt(int c, const char *arg, struct gpiobroker_line_settings *s)
{
	static const char *const edges[] = { "none", "rising", "falling", "both" };
	static const char *const biases[] = { "as-is", "disabled", "pull-up", "pull-down" };
	static const char *const drives[] = { "push-pull", "open-drain", "open-source" };
	static const char *const clocks[] = { "monotonic", "realtime", "hte" };
	int v;

	switch (c) {
	case 'e':
		if ((v = pick(arg, edges, 4)) < 0)
			return bad_choice("edges", arg, edges, 4);
		s->edge = (enum gpiobroker_edge)v;
		return 1;
	case 'b':
		if ((v = pick(arg, biases, 4)) < 0)
			return bad_choice("bias", arg, biases, 4);
		s->bias = (enum gpiobroker_bias)v;
		return 1;
	case 'd':
		if ((v = pick(arg, drives, 3)) < 0)
			return bad_choice("drive", arg, drives, 3);
		s->drive = (enum gpiobroker_drive)v;
		return 1;
	default:
		if ((v = pick(arg, clocks, 3)) < 0)
			return bad_choice("event clock", arg, clocks, 3);
		s->event_clock = (enum gpiobroker_event_clock)v;
		return 1;
	}
}

int settings_opt(int c, const char *arg, struct gpiobroker_line_settings *s, bool *given)
{
	int64_t us;
	int r = 1;

	switch (c) {
	case 'i':
		s->direction = GPIOBROKER_DIRECTION_INPUT;
		break;
	case 'o':
		s->direction = GPIOBROKER_DIRECTION_OUTPUT;
		break;
	case 'a':
		s->direction = GPIOBROKER_DIRECTION_AS_IS;
		break;
	case 'l':
		s->active_low = true;
		break;
	case 'e':
	case 'b':
	case 'd':
	case 'E':
		r = choice_opt(c, arg, s);
		break;
	case 'p':
		us = parse_period(arg, 1000);
		if (us < 0 || us > UINT32_MAX)
			return usage_error("bad debounce period '%s' (a period: 10ms, 100us, 1s; "
					   "a bare number is milliseconds)", arg);
		s->debounce_us = (unsigned int)us;
		break;
	case OPT_REFUSED_DEBOUNCE:
		return usage_error("--debounce is gone: use -p/--debounce-period PERIOD "
				   "(10ms, 100us; a bare number is milliseconds)");
	default:
		return 0;
	}
	if (r == 1 && given)
		*given = true;
	return r;
}

bool is_request_path(const char *s)
{
	return strncmp(s, GB_REQ_PREFIX, strlen(GB_REQ_PREFIX)) == 0;
}

bool is_number(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return false;
	return true;
}

char *request_ref(const char *arg)
{
	char *p = NULL;

	if (is_request_path(arg))
		return strdup(arg);
	if (is_number(arg) && asprintf(&p, GB_REQ_PREFIX "%s", arg) >= 0)
		return p;
	return NULL;
}

const char *short_id(const char *path)
{
	if (is_request_path(path))
		return path + strlen(GB_REQ_PREFIX);
	if (strncmp(path, GB_WATCH_PREFIX_SLASH, strlen(GB_WATCH_PREFIX_SLASH)) == 0)
		return path + strlen(GB_WATCH_PREFIX_SLASH);
	return path;
}
