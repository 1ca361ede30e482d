/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* When an edge action fires (trigger.h). */
#include "trigger.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "macro.h"

/* Another format is another header: an older broker refuses it and starts afresh. */
#define HEADER "gpiod-broker-trigger 1"
/* Room for a newer broker's longer keys; ours need under 40. */
#define MAX_LINE 256

static const char *const kind_names[] = {
	[GB_TRIGGER_RISING] = "rising",
	[GB_TRIGGER_FALLING] = "falling",
	[GB_TRIGGER_BOTH] = "both",
	[GB_TRIGGER_PRESS] = "press",
	[GB_TRIGGER_LONG_PRESS] = "long-press",
	[GB_TRIGGER_LEVEL] = "level",
};

static const char *const event_names[] = {
	[GB_TEV_RISING] = "rising",
	[GB_TEV_FALLING] = "falling",
	[GB_TEV_PRESS] = "press",
	[GB_TEV_LONG_PRESS] = "long-press",
	[GB_TEV_HIGH] = "high",
	[GB_TEV_LOW] = "low",
};

const char *gb_trigger_kind_name(enum gb_trigger_kind k)
{
	return (unsigned int)k < ELEMENTSOF(kind_names) ? kind_names[k] : "?";
}

int gb_trigger_kind_from_name(const char *s, enum gb_trigger_kind *ret)
{
	if (!s)
		return -EINVAL;
	for (size_t i = 0; i < ELEMENTSOF(kind_names); i++)
		if (strcmp(s, kind_names[i]) == 0) {
			*ret = (enum gb_trigger_kind)i;
			return 0;
		}
	return -EINVAL;
}

const char *gb_trigger_event_name(enum gb_trigger_event e)
{
	return (unsigned int)e < ELEMENTSOF(event_names) ? event_names[e] : "?";
}

unsigned int gb_trigger_kind_events(enum gb_trigger_kind k)
{
	switch (k) {
	case GB_TRIGGER_RISING:
		return 1u << GB_TEV_RISING;
	case GB_TRIGGER_FALLING:
		return 1u << GB_TEV_FALLING;
	case GB_TRIGGER_BOTH:
		return 1u << GB_TEV_RISING | 1u << GB_TEV_FALLING;
	case GB_TRIGGER_PRESS:
		return 1u << GB_TEV_PRESS;
	case GB_TRIGGER_LONG_PRESS:
		return 1u << GB_TEV_LONG_PRESS;
	case GB_TRIGGER_LEVEL:
		return 1u << GB_TEV_HIGH | 1u << GB_TEV_LOW;
	}
	return 0;
}

void gb_trigger_init(struct gb_trigger *t)
{
	memset(t, 0, sizeof(*t));
}

/* --- the machine ----------------------------------------------------------------- */

/* Times come from a state file too: a deadline past the clock's end is never, not a
 * wrap to the past (which would tick at once, and again, for ever). */
static uint64_t add_sat(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/*
 * A long press waits for its hold: held, not fired yet, and not ended by a release
 * that waits out its debounce from before the hold ran out. Such a release, if it
 * holds, made the press a short one; if it was a bounce, the wait goes on (and may
 * be over already).
 */
static bool hold_running(const struct gb_trigger *t, const struct gb_trigger_config *c)
{
	return c->kind == GB_TRIGGER_LONG_PRESS && t->known && t->level && !t->long_fired &&
	       !(t->pending && !t->pending_level &&
		 t->pending_ns < add_sat(t->level_ns, c->hold_ns));
}

/* A long press whose hold ran out by @p now fires, once per press. */
static int check_hold(struct gb_trigger *t, const struct gb_trigger_config *c, uint64_t now,
		      enum gb_trigger_event *out)
{
	if (!hold_running(t, c) || now < add_sat(t->level_ns, c->hold_ns))
		return 0;
	t->long_fired = true;
	out[0] = GB_TEV_LONG_PRESS;
	return 1;
}

/* The level is @p high since @p ts, and nothing fires for it (or has fired already). */
static void take(struct gb_trigger *t, bool high, uint64_t ts)
{
	t->known = true;
	t->level = high;
	t->level_ns = ts;
	t->pending = false;
	t->long_fired = false;
}

/*
 * The debounced level becomes @p high at @p ts: what that fires. @p seen: the edge
 * came while the broker watched. One found at a start may have come right after
 * the broker left, so a press it ends cannot be said to have reached the hold.
 */
static int accept(struct gb_trigger *t, const struct gb_trigger_config *c, bool high,
		  uint64_t ts, bool seen, enum gb_trigger_event *out)
{
	int n = 0;

	if (!t->known) {
		/* Only a state file's wait comes before a level: nothing to compare. */
		take(t, high, ts);
		return 0;
	}
	t->pending = false;
	if (t->level == high)
		return 0;
	if (high) {
		if (c->kind == GB_TRIGGER_RISING || c->kind == GB_TRIGGER_BOTH)
			out[n++] = GB_TEV_RISING;
	} else {
		uint64_t held = ts > t->level_ns ? ts - t->level_ns : 0;

		/* The hold ran out before this release, and no tick came in between (the
		 * edges were read late): it was a long press all the same. */
		if (seen)
			n += check_hold(t, c, ts, out + n);
		if (c->kind == GB_TRIGGER_FALLING || c->kind == GB_TRIGGER_BOTH)
			out[n++] = GB_TEV_FALLING;
		/* A long press belongs to the long-press actions, unless this one asked
		 * for it too. */
		if (c->kind == GB_TRIGGER_PRESS &&
		    (!c->long_hold_ns || held < c->long_hold_ns || c->after_long_press))
			out[n++] = GB_TEV_PRESS;
	}
	take(t, high, ts);
	return n;
}

int gb_trigger_start(struct gb_trigger *t, const struct gb_trigger_config *c, bool raw_high,
		     uint64_t now_ns, enum gb_trigger_event *out)
{
	bool high = raw_high != c->active_low;
	int n = 0;

	t->pending = false;
	if (!t->known)
		take(t, high, now_ns);
	else if (t->level != high)
		n = accept(t, c, high, now_ns, false, out);
	else
		n = check_hold(t, c, now_ns, out);
	if (c->kind == GB_TRIGGER_LEVEL)
		out[n++] = high ? GB_TEV_HIGH : GB_TEV_LOW;
	return n;
}

int gb_trigger_edge(struct gb_trigger *t, const struct gb_trigger_config *c, bool rising,
		    uint64_t ts_ns, enum gb_trigger_event *out)
{
	bool high = rising != c->active_low;
	int n = 0;

	if (!t->known) {
		/* Not started: the edge says what the level is now, and nothing more. */
		take(t, high, ts_ns);
		return 0;
	}
	/* An edge from before the level was read (queued while the action started) is
	 * in that level already. */
	if (ts_ns < t->level_ns || (t->pending && ts_ns < t->pending_ns))
		return 0;
	if (!c->debounce_ns) {
		n = accept(t, c, high, ts_ns, true, out);
		return n + check_hold(t, c, ts_ns, out + n);
	}
	/* One that waited its debounce out before this edge came (no tick in between)
	 * counts first, at its own time. */
	if (t->pending && ts_ns >= add_sat(t->pending_ns, c->debounce_ns))
		n = accept(t, c, t->pending_level, t->pending_ns, true, out);
	if (high == t->level) {
		/* Back where it was: the edge that waited was a bounce. */
		t->pending = false;
	} else {
		/* A new wait; a second edge the same way means one between was lost, a
		 * bounce that came back, so the wait starts again as well. */
		t->pending = true;
		t->pending_level = high;
		t->pending_ns = ts_ns;
	}
	return n + check_hold(t, c, ts_ns, out + n);
}

int gb_trigger_tick(struct gb_trigger *t, const struct gb_trigger_config *c, uint64_t now_ns,
		    enum gb_trigger_event *out)
{
	int n = 0;

	if (t->pending && now_ns >= add_sat(t->pending_ns, c->debounce_ns))
		n = accept(t, c, t->pending_level, t->pending_ns, true, out);
	/* A press just accepted may be long already, if the tick came late. */
	return n + check_hold(t, c, now_ns, out + n);
}

uint64_t gb_trigger_deadline(const struct gb_trigger *t, const struct gb_trigger_config *c)
{
	uint64_t at = UINT64_MAX;
	bool waits = false;

	if (t->pending) {
		at = add_sat(t->pending_ns, c->debounce_ns);
		waits = true;
	}
	if (hold_running(t, c)) {
		uint64_t hold = add_sat(t->level_ns, c->hold_ns);

		if (hold < at)
			at = hold;
		waits = true;
	}
	if (!waits)
		return 0;
	/* 0 says nothing waits; a deadline at 0 (only a state file's) is due all the same. */
	return at ? at : 1;
}

bool gb_trigger_admit(struct gb_trigger *t, const struct gb_trigger_config *c, uint64_t now_ns,
		      uint64_t realtime_usec)
{
	if (c->rate_interval_ns && c->rate_burst) {
		/* A window that opens after now is another boot's (a stale state file). */
		if (!t->window_n || now_ns < t->window_ns ||
		    now_ns - t->window_ns >= c->rate_interval_ns) {
			t->window_ns = now_ns;
			t->window_n = 0;
		}
		if (t->window_n >= c->rate_burst) {
			t->suppressed++;
			return false;
		}
		t->window_n++;
	}
	t->fired++;
	t->last_fired_usec = realtime_usec;
	return true;
}

/* --- the state file -------------------------------------------------------------- */

enum field_type { F_BOOL, F_U64, F_UINT };

static const struct field {
	const char *name;
	enum field_type type;
	size_t offset;
} fields[] = {
	{ "known", F_BOOL, offsetof(struct gb_trigger, known) },
	{ "level", F_BOOL, offsetof(struct gb_trigger, level) },
	{ "level_ns", F_U64, offsetof(struct gb_trigger, level_ns) },
	{ "pending", F_BOOL, offsetof(struct gb_trigger, pending) },
	{ "pending_level", F_BOOL, offsetof(struct gb_trigger, pending_level) },
	{ "pending_ns", F_U64, offsetof(struct gb_trigger, pending_ns) },
	{ "long_fired", F_BOOL, offsetof(struct gb_trigger, long_fired) },
	{ "window_ns", F_U64, offsetof(struct gb_trigger, window_ns) },
	{ "window_n", F_UINT, offsetof(struct gb_trigger, window_n) },
	{ "fired", F_U64, offsetof(struct gb_trigger, fired) },
	{ "suppressed", F_U64, offsetof(struct gb_trigger, suppressed) },
	{ "last_fired_usec", F_U64, offsetof(struct gb_trigger, last_fired_usec) },
};

int gb_trigger_write(const struct gb_trigger *t, FILE *f)
{
	const char *base = (const char *)t;

	fputs(HEADER "\n", f);
	for (size_t i = 0; i < ELEMENTSOF(fields); i++) {
		const void *p = base + fields[i].offset;

		switch (fields[i].type) {
		case F_BOOL:
			fprintf(f, "%s=%d\n", fields[i].name, *(const bool *)p ? 1 : 0);
			break;
		case F_U64:
			fprintf(f, "%s=%" PRIu64 "\n", fields[i].name, *(const uint64_t *)p);
			break;
		case F_UINT:
			fprintf(f, "%s=%u\n", fields[i].name, *(const unsigned int *)p);
			break;
		}
	}
	return ferror(f) ? -EIO : 0;
}

/* Decimal digits only (no sign, no space, no base), at most @p max. */
static int parse_number(const char *s, uint64_t max, uint64_t *ret)
{
	uint64_t v = 0;

	if (!*s)
		return -EINVAL;
	for (; *s; s++) {
		uint64_t d = (uint64_t)(*s - '0');

		if (*s < '0' || *s > '9' || v > (max - d) / 10)
			return -EINVAL;
		v = v * 10 + d;
	}
	*ret = v;
	return 0;
}

/* One "key=value" line: 1 for one of ours, 0 for a newer broker's key, or -EINVAL. */
static int parse_field(struct gb_trigger *t, const char *key, const char *value)
{
	char *base = (char *)t;
	uint64_t v;

	for (size_t i = 0; i < ELEMENTSOF(fields); i++) {
		void *p = base + fields[i].offset;

		if (strcmp(key, fields[i].name) != 0)
			continue;
		switch (fields[i].type) {
		case F_BOOL:
			if (strcmp(value, "0") != 0 && strcmp(value, "1") != 0)
				return -EINVAL;
			*(bool *)p = value[0] == '1';
			break;
		case F_U64:
			if (parse_number(value, UINT64_MAX, &v) < 0)
				return -EINVAL;
			*(uint64_t *)p = v;
			break;
		case F_UINT:
			if (parse_number(value, UINT32_MAX, &v) < 0)
				return -EINVAL;
			*(unsigned int *)p = (unsigned int)v;
			break;
		}
		return 1 + (int)i;
	}
	return 0;
}

int gb_trigger_parse(struct gb_trigger *t, const char *text, size_t len)
{
	/* Every key of ours once: a file cut short after a whole line, or one with a
	 * line twice, is no file that gb_trigger_write() wrote. */
	uint32_t seen = 0, all = (UINT32_C(1) << ELEMENTSOF(fields)) - 1;
	char line[MAX_LINE + 1];
	bool header = false;
	size_t at = 0;

	gb_trigger_init(t);
	if (!text)
		goto bad;
	while (at < len) {
		const char *nl = memchr(text + at, '\n', len - at);
		size_t n;
		char *eq;
		int r;

		/* A last line without its newline is a file cut short inside a line: its
		 * number may have lost digits. */
		if (!nl)
			goto bad;
		n = (size_t)(nl - (text + at));
		if (n > MAX_LINE || memchr(text + at, '\0', n))
			goto bad;
		memcpy(line, text + at, n);
		line[n] = '\0';
		at += n + 1;
		if (!header) {
			if (strcmp(line, HEADER) != 0)
				goto bad;
			header = true;
			continue;
		}
		eq = strchr(line, '=');
		if (!eq || eq == line)
			goto bad;
		*eq = '\0';
		r = parse_field(t, line, eq + 1);
		if (r < 0)
			goto bad;
		if (r > 0) {
			if (seen & UINT32_C(1) << (r - 1))
				goto bad;
			seen |= UINT32_C(1) << (r - 1);
		}
	}
	if (header && seen == all)
		return 0;
bad:
	gb_trigger_init(t);
	return -EINVAL;
}
