/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Integrator policy: [action NAME] sections, an edge of a line turned into a
 * systemd job with no program in between (gpiod-broker.policy(5), "ACTIONS").
 *
 * As strict as the rest of the parser: an action that would never fire, or fire on
 * something else than its author meant, is an error at load, not a surprise on the
 * first press.
 */
#include "policy.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "macro.h"
#include "sysroot.h"

#define NSEC_PER_USEC 1000ull
#define NSEC_PER_MSEC 1000000ull
#define NSEC_PER_SEC  1000000000ull
/* systemd's UNIT_NAME_MAX, with its NUL */
#define UNIT_NAME_MAX 256

enum {
	A_LINE, A_TRIGGER, A_HOLD, A_AFTER_LONG_PRESS, A_ACTIVE_LOW, A_DEBOUNCE, A_BIAS, A_UNIT,
	A_JOB, A_RATE_INTERVAL, A_RATE_BURST,
};

static const char *const action_keys[] = {
	[A_LINE] = "line",
	[A_TRIGGER] = "trigger",
	[A_HOLD] = "hold",
	[A_AFTER_LONG_PRESS] = "after-long-press",
	[A_ACTIVE_LOW] = "active-low",
	[A_DEBOUNCE] = "debounce",
	[A_BIAS] = "bias",
	[A_UNIT] = "unit",
	[A_JOB] = "job",
	[A_RATE_INTERVAL] = "rate-limit-interval",
	[A_RATE_BURST] = "rate-limit-burst",
};

static const char *const job_names[] = {
	[GB_JOB_START] = "start",
	[GB_JOB_STOP] = "stop",
	[GB_JOB_RESTART] = "restart",
};

static const char *const unit_suffixes[] = {
	".service", ".socket", ".target", ".device", ".mount", ".automount", ".swap",
	".timer", ".path", ".slice", ".scope",
};

const char *gb_action_job_name(enum gb_action_job j)
{
	return j < ELEMENTSOF(job_names) ? job_names[j] : "?";
}

int gb_policy_action_begin(struct gb_policy_action *a, const char *name, const char *file,
			   unsigned int lineno)
{
	memset(a, 0, sizeof(*a));
	a->lineno = lineno;
	a->trigger.kind = -1; /* required: the check says so if it stays unset */
	a->bias = GPIOD_LINE_BIAS_AS_IS;
	a->job = GB_JOB_START;
	a->name = strdup(name);
	a->file = strdup(file);
	return a->name && a->file ? 0 : -ENOMEM;
}

void gb_policy_action_clear(struct gb_policy_action *a)
{
	free(a->file);
	free(a->name);
	free(a->line);
	free(a->unit);
	memset(a, 0, sizeof(*a));
}

/* A time span: a number (fractions allowed) and its unit, us, ms, s or min. A bare
 * number is refused: systemd reads it as seconds, gpioset and gpiobrokerctl as ms. */
static int parse_span(const char *s, uint64_t max_ns, uint64_t *ret)
{
	static const struct {
		const char *unit;
		uint64_t ns;
	} units[] = {
		{ "us", NSEC_PER_USEC }, { "ms", NSEC_PER_MSEC }, { "s", NSEC_PER_SEC },
		{ "sec", NSEC_PER_SEC }, { "min", 60 * NSEC_PER_SEC },
	};
	uint64_t whole = 0, frac = 0, div = 1;
	const char *p = s;

	if (!isdigit((unsigned char)*p))
		return -EINVAL;
	for (; isdigit((unsigned char)*p); p++) {
		if (whole > UINT64_MAX / 10 / (60 * NSEC_PER_SEC))
			return -ERANGE;
		whole = whole * 10 + (uint64_t)(*p - '0');
	}
	if (*p == '.') {
		p++;
		if (!isdigit((unsigned char)*p))
			return -EINVAL;
		for (; isdigit((unsigned char)*p); p++)
			if (div < 1000000000ull) {
				frac = frac * 10 + (uint64_t)(*p - '0');
				div *= 10;
			}
	}
	while (*p == ' ')
		p++;
	for (size_t i = 0; i < ELEMENTSOF(units); i++)
		if (strcmp(p, units[i].unit) == 0) {
			uint64_t ns = whole * units[i].ns + frac * units[i].ns / div;

			if (ns > max_ns)
				return -ERANGE;
			*ret = ns;
			return 0;
		}
	return -EINVAL;
}

static int span_key(const char *key, const char *value, uint64_t max_ns, uint64_t *ret, char *err,
		    size_t size)
{
	int r = parse_span(value, max_ns, ret);

	if (r == -ERANGE)
		snprintf(err, size, "'%s' is at most %" PRIu64 " ms, not '%s'", key,
			 (uint64_t)(max_ns / NSEC_PER_MSEC), value);
	else if (r < 0)
		snprintf(err, size, "'%s' must be a time span with its unit (us, ms, s, min), such as "
			 "20ms or 3s, not '%s'", key, value);
	return r < 0 ? -EINVAL : 0;
}

static int bool_key(const char *key, const char *v, bool *out, char *err, size_t size)
{
	if (gb_policy_parse_bool(v, out) == 0)
		return 0;
	snprintf(err, size, "'%s' must be yes or no, not '%s'", key, v);
	return -EINVAL;
}

/* The characters systemd keeps in a unit name; %l and %e are checked after expansion. */
static bool unit_chars_ok(const char *s)
{
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && !strchr(":-_.\\@%", *s))
			return false;
	return true;
}

static int set_unit(struct gb_policy_action *a, const char *value, char *err, size_t size)
{
	if (!unit_chars_ok(value)) {
		snprintf(err, size, "'unit' has a character a unit name cannot have: '%s'", value);
		return -EINVAL;
	}
	a->unit = strdup(value);
	return a->unit ? 0 : -ENOMEM;
}

int gb_policy_action_set_key(struct gb_policy_action *a, const char *key, const char *value,
			     unsigned long *seen, char *err, size_t size)
{
	unsigned long v;
	char *end;
	int id;

	id = gb_policy_section_key(action_keys, ELEMENTSOF(action_keys), "an [action]", key, value,
				   seen, err, size);
	if (id < 0)
		return id;

	switch (id) {
	case A_LINE:
		for (const char *c = value; *c; c++)
			if ((unsigned char)*c < 0x21 || *c == 0x7f) {
				snprintf(err, size, "'line' must be an alias, a line name or "
					 "CHIP:OFFSET without spaces or control characters");
				return -EINVAL;
			}
		a->line = strdup(value);
		return a->line ? 0 : -ENOMEM;
	case A_TRIGGER: {
		enum gb_trigger_kind k;

		if (gb_trigger_kind_from_name(value, &k) < 0) {
			snprintf(err, size, "'trigger' must be rising, falling, both, press, "
				 "long-press or level, not '%s'", value);
			return -EINVAL;
		}
		a->trigger.kind = k;
		return 0;
	}
	case A_HOLD:
		if (span_key(key, value, 3600 * NSEC_PER_SEC, &a->trigger.hold_ns, err, size) < 0)
			return -EINVAL;
		if (!a->trigger.hold_ns) {
			snprintf(err, size, "'hold' must be longer than 0");
			return -EINVAL;
		}
		return 0;
	case A_DEBOUNCE:
		return span_key(key, value, 10 * NSEC_PER_SEC, &a->trigger.debounce_ns, err, size);
	case A_RATE_INTERVAL:
		return span_key(key, value, 86400 * NSEC_PER_SEC, &a->trigger.rate_interval_ns, err,
				size);
	case A_AFTER_LONG_PRESS:
		return bool_key(key, value, &a->trigger.after_long_press, err, size);
	case A_ACTIVE_LOW:
		return bool_key(key, value, &a->trigger.active_low, err, size);
	case A_RATE_BURST:
		errno = 0;
		v = strtoul(value, &end, 10);
		if (!isdigit((unsigned char)*value) || *end || errno || v == 0 || v > 10000) {
			snprintf(err, size, "'rate-limit-burst' must be a number 1-10000, not '%s'",
				 value);
			return -EINVAL;
		}
		a->trigger.rate_burst = (unsigned int)v;
		return 0;
	case A_BIAS:
		if (!strcmp(value, "as-is"))
			a->bias = GPIOD_LINE_BIAS_AS_IS;
		else if (!strcmp(value, "pull-up"))
			a->bias = GPIOD_LINE_BIAS_PULL_UP;
		else if (!strcmp(value, "pull-down"))
			a->bias = GPIOD_LINE_BIAS_PULL_DOWN;
		else if (!strcmp(value, "disabled"))
			a->bias = GPIOD_LINE_BIAS_DISABLED;
		else {
			snprintf(err, size, "'bias' must be as-is, pull-up, pull-down or disabled, "
				 "not '%s'", value);
			return -EINVAL;
		}
		return 0;
	case A_JOB:
		for (size_t j = 0; j < ELEMENTSOF(job_names); j++)
			if (strcmp(value, job_names[j]) == 0) {
				a->job = j;
				return 0;
			}
		snprintf(err, size, "'job' must be start, stop or restart, not '%s'", value);
		return -EINVAL;
	case A_UNIT:
		return set_unit(a, value, err, size);
	}
	return 0;
}

/* systemd-escape of one string: what a unit name's instance can hold, with '/' as '-'. */
static size_t escape(const char *s, char *out, size_t size)
{
	size_t n = 0;

	for (const char *c = s; *c; c++) {
		char tmp[5];
		const char *add = tmp;

		if (*c == '/')
			add = "-";
		else if (isalnum((unsigned char)*c) || *c == ':' || *c == '_' ||
			 (*c == '.' && c != s))
			tmp[0] = *c, tmp[1] = '\0';
		else
			snprintf(tmp, sizeof(tmp), "\\x%02x", (unsigned char)*c);
		for (; *add; add++, n++)
			if (n + 1 < size)
				out[n] = *add;
	}
	if (size)
		out[n < size ? n : size - 1] = '\0';
	return n;
}

static const char *unit_suffix(const char *name)
{
	const char *dot = strrchr(name, '.');

	for (size_t i = 0; dot && i < ELEMENTSOF(unit_suffixes); i++)
		if (strcmp(dot, unit_suffixes[i]) == 0)
			return dot;
	return NULL;
}

/* A unit name systemd takes: a known suffix, at most one '@' and an instance only with
 * it, no '%' left, the allowed characters, not too long. */
static bool unit_name_ok(const char *name)
{
	const char *suffix = unit_suffix(name), *at = strchr(name, '@');

	if (!suffix || suffix == name || strlen(name) >= UNIT_NAME_MAX || strchr(name, '%'))
		return false;
	if (at && (at == name || strchr(at + 1, '@') || at + 1 == suffix))
		return false;
	for (const char *c = name; c < suffix; c++)
		if (!isalnum((unsigned char)*c) && !strchr(":-_.\\@", *c))
			return false;
	return true;
}

int gb_policy_action_unit(const struct gb_policy_action *a, enum gb_trigger_event event,
			  char *buf, size_t size)
{
	char line[UNIT_NAME_MAX * 4], ev[64];
	const char *suffix;
	size_t n = 0;

	/* Escaped as the line is: %I would read the '-' of "long-press" as a '/'. */
	escape(a->line ? a->line : "", line, sizeof(line));
	escape(gb_trigger_event_name(event), ev, sizeof(ev));
	for (const char *c = a->unit; *c; c++) {
		const char *add;
		char one[2] = { *c, '\0' };

		if (*c == '%' && c[1] == 'l')
			add = line, c++;
		else if (*c == '%' && c[1] == 'e')
			add = ev, c++;
		else if (*c == '%')
			return -EINVAL;
		else if (*c == '@' && (suffix = unit_suffix(c + 1)) == c + 1 && !strchr(a->unit, '%')) {
			/* a bare template: the instance says which line and what happened */
			n += (size_t)snprintf(n < size ? buf + n : NULL, n < size ? size - n : 0,
					      "@%s:%s", line, ev);
			continue;
		} else
			add = one;
		for (; *add; add++, n++)
			if (n + 1 < size)
				buf[n] = *add;
	}
	if (n >= size || n >= UNIT_NAME_MAX) {
		if (size)
			buf[0] = '\0';
		return -ENAMETOOLONG;
	}
	buf[n] = '\0';
	return unit_name_ok(buf) ? 0 : -EINVAL;
}

int gb_policy_action_end(struct gb_policy *p, struct gb_policy_action *a, char **errors)
{
	const struct gb_trigger_config *t = &a->trigger;
	unsigned int bits;
	int n = 0;

#define AERR(...) do { gb_policy_add_error(errors, a->file, a->lineno, __VA_ARGS__); n++; } while (0)
	if (!a->line)
		AERR("[action %s]: which line? give 'line' (an alias, a line name or CHIP:OFFSET)",
		     a->name);
	if ((int)t->kind < 0)
		AERR("[action %s]: give 'trigger' (rising, falling, both, press, long-press or level)",
		     a->name);
	if (!a->unit)
		AERR("[action %s]: give 'unit', the systemd unit it %ss", a->name,
		     gb_action_job_name(a->job));
	if (n)
		return n;
	if (t->kind == GB_TRIGGER_LONG_PRESS && !t->hold_ns)
		AERR("[action %s]: trigger = long-press needs 'hold' (how long, such as 3s)", a->name);
	if (t->kind != GB_TRIGGER_LONG_PRESS && t->hold_ns)
		AERR("[action %s]: 'hold' belongs to trigger = long-press", a->name);
	if (t->kind != GB_TRIGGER_PRESS && t->after_long_press)
		AERR("[action %s]: 'after-long-press' belongs to trigger = press", a->name);
	if (!t->rate_interval_ns != !t->rate_burst)
		AERR("[action %s]: give both rate-limit-interval and rate-limit-burst, or neither",
		     a->name);
	bits = gb_trigger_kind_events(t->kind);
	for (int e = 0; e < _GB_TEV_MAX; e++) {
		char unit[UNIT_NAME_MAX];
		int r;

		if (!(bits & (1u << e)))
			continue;
		r = gb_policy_action_unit(a, e, unit, sizeof(unit));
		if (r < 0) {
			AERR("[action %s]: 'unit = %s' does not make a valid unit name for '%s'%s",
			     a->name, a->unit, gb_trigger_event_name(e),
			     r == -ENAMETOOLONG ? " (too long)" :
			     " (NAME.service, a template NAME@.service, with %l and %e)");
			break;
		}
	}
#undef AERR
	if (!n) {
		struct gb_policy_action *v = realloc(p->actions, (p->n_actions + 1) * sizeof(*v));

		if (!v)
			return -ENOMEM;
		p->actions = v;
		v[p->n_actions++] = *a;
		memset(a, 0, sizeof(*a));
	}
	return n;
}

int gb_policy_actions_finish(struct gb_policy *p, char **errors)
{
	int n = 0;

	for (size_t i = 0; i < p->n_actions; i++) {
		struct gb_policy_action *a = &p->actions[i];
		const struct gb_policy_entry *e = gb_policy_find_alias(p, a->line);

		a->trigger.long_hold_ns = 0;
		for (size_t j = 0; j < p->n_actions; j++) {
			const struct gb_policy_action *b = &p->actions[j];

			if (j == i || strcmp(a->line, b->line) != 0)
				continue;
			/* One kernel request observes the line for all of them. */
			if (j < i && (a->bias != b->bias ||
				      a->trigger.active_low != b->trigger.active_low)) {
				gb_policy_add_error(errors, a->file, a->lineno,
						    "[action %s]: line '%s' has another 'bias' or "
						    "'active-low' in [action %s] (%s:%u)", a->name,
						    a->line, b->name, b->file, b->lineno);
				n++;
			}
			if (a->trigger.kind == GB_TRIGGER_PRESS && b->trigger.kind == GB_TRIGGER_LONG_PRESS &&
			    (!a->trigger.long_hold_ns || b->trigger.hold_ns < a->trigger.long_hold_ns))
				a->trigger.long_hold_ns = b->trigger.hold_ns;
		}
		for (size_t j = 0; j < i; j++)
			if (strcmp(a->name, p->actions[j].name) == 0) {
				gb_policy_add_error(errors, a->file, a->lineno,
						    "the action name '%s' is already used at %s:%u",
						    a->name, p->actions[j].file,
						    p->actions[j].lineno);
				n++;
			}
		/* The broker sees no edge of a line whose holder reads them from the kernel. */
		if (e && e->direct) {
			gb_policy_add_error(errors, a->file, a->lineno,
					    "[action %s]: line '%s' is direct = yes in %s:%u; the "
					    "broker does not see the edges of a direct request",
					    a->name, a->line, e->file, e->lineno);
			n++;
		}
	}
	return n;
}

/* Where systemd looks for units, but /run (not in an image) and the user's. */
static const char *const unit_dirs[] = {
	"etc/systemd/system", "usr/local/lib/systemd/system", "usr/lib/systemd/system",
	"lib/systemd/system",
};

static bool unit_in_root(int rootfd, const char *unit)
{
	char path[UNIT_NAME_MAX + 64];

	for (size_t i = 0; i < ELEMENTSOF(unit_dirs); i++) {
		int fd;

		snprintf(path, sizeof(path), "%s/%s", unit_dirs[i], unit);
		fd = gb_sysroot_open(rootfd, path, O_PATH | O_CLOEXEC);
		if (fd >= 0) {
			close(fd);
			return true;
		}
	}
	return false;
}

int gb_policy_actions_check_units(const struct gb_policy *p, int rootfd, char **errors)
{
	int n = 0;

	for (size_t i = 0; i < p->n_actions; i++) {
		const struct gb_policy_action *a = &p->actions[i];
		unsigned int bits = gb_trigger_kind_events(a->trigger.kind);

		for (int e = 0; e < _GB_TEV_MAX; e++) {
			char unit[UNIT_NAME_MAX], tmpl[UNIT_NAME_MAX];
			const char *at, *suffix;

			if (!(bits & (1u << e)) || gb_policy_action_unit(a, e, unit, sizeof(unit)) < 0)
				continue;
			if (unit_in_root(rootfd, unit))
				continue;
			/* An instance comes from its template. */
			at = strchr(unit, '@');
			suffix = unit_suffix(unit);
			if (at && suffix &&
			    snprintf(tmpl, sizeof(tmpl), "%.*s@%s", (int)(at - unit), unit, suffix) > 0 &&
			    unit_in_root(rootfd, tmpl))
				continue;
			gb_policy_add_error(errors, a->file, a->lineno,
					    "[action %s]: unit %s is not in the image (%s, %s, %s, %s)",
					    a->name, unit, unit_dirs[0], unit_dirs[1], unit_dirs[2],
					    unit_dirs[3]);
			n++;
			break;
		}
	}
	return n;
}

/* A JavaScript string literal of @p s (unit names hold backslashes). */
static void js_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fputc('\\', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

int gb_policy_actions_polkit(const struct gb_policy *p, const char *user, const char *source,
			     FILE *f)
{
	bool first = true;

	fprintf(f, "// Made by gpiod-broker --polkit-rules from %s: the broker's user may\n"
		"// start, stop or restart the units its edge actions name, as they name them,\n"
		"// and nothing else. Make it again when the actions change.\n"
		"polkit.addRule(function(action, subject) {\n"
		"\tif (action.id != \"org.freedesktop.systemd1.manage-units\" ||\n"
		"\t    subject.user != ", source);
	js_string(f, user);
	fputs(")\n\t\treturn polkit.Result.NOT_HANDLED;\n\tvar allowed = {", f);
	for (size_t i = 0; i < p->n_actions; i++) {
		const struct gb_policy_action *a = &p->actions[i];
		unsigned int bits = gb_trigger_kind_events(a->trigger.kind);

		for (int e = 0; e < _GB_TEV_MAX; e++) {
			char unit[UNIT_NAME_MAX], key[UNIT_NAME_MAX + 16];

			if (!(bits & (1u << e)) || gb_policy_action_unit(a, e, unit, sizeof(unit)) < 0)
				continue;
			fputs(first ? "\n\t\t" : ",\n\t\t", f);
			first = false;
			/* "VERB UNIT": one unit with two jobs (two actions) is two keys. */
			snprintf(key, sizeof(key), "%s %s", gb_action_job_name(a->job), unit);
			js_string(f, key);
			fputs(": true", f);
		}
	}
	fputs("\n\t};\n"
	      "\tif (allowed[action.lookup(\"verb\") + \" \" + action.lookup(\"unit\")] === true)\n"
	      "\t\treturn polkit.Result.YES;\n"
	      "\treturn polkit.Result.NOT_HANDLED;\n"
	      "});\n", f);
	return ferror(f) ? -EIO : 0;
}
