/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Host unit test: when an edge action fires (trigger.h), and its state file. Events
 * are compared as their names joined with commas, so that a failure says what fired.
 */
#include <check.h>
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testmain.h"
#include "trigger.h"

#define MS(x) ((uint64_t)(x) * 1000000u)

/* The events as "a,b" (empty: none); a few at a time, for one assertion's two sides. */
static const char *names(const enum gb_trigger_event *out, int n)
{
	static char ring[8][96];
	static unsigned int at;
	char *s = ring[at++ % 8];

	ck_assert_int_ge(n, 0);
	ck_assert_int_le(n, GB_TRIGGER_MAX_OUT);
	s[0] = '\0';
	for (int i = 0; i < n; i++) {
		if (i)
			strcat(s, ",");
		strcat(s, gb_trigger_event_name(out[i]));
	}
	return s;
}

static const char *start(struct gb_trigger *t, const struct gb_trigger_config *c, bool raw_high,
			 uint64_t now)
{
	enum gb_trigger_event out[GB_TRIGGER_MAX_OUT];

	return names(out, gb_trigger_start(t, c, raw_high, now, out));
}

static const char *edge(struct gb_trigger *t, const struct gb_trigger_config *c, bool rising,
			uint64_t ts)
{
	enum gb_trigger_event out[GB_TRIGGER_MAX_OUT];

	return names(out, gb_trigger_edge(t, c, rising, ts, out));
}

static const char *tick(struct gb_trigger *t, const struct gb_trigger_config *c, uint64_t now)
{
	enum gb_trigger_event out[GB_TRIGGER_MAX_OUT];

	return names(out, gb_trigger_tick(t, c, now, out));
}

/* A physical rising edge at @p from and a falling one at @p to: what both fired. */
static const char *up_down(struct gb_trigger *t, const struct gb_trigger_config *c, uint64_t from,
			 uint64_t to)
{
	static char both[96];
	const char *a = edge(t, c, true, from), *b = edge(t, c, false, to);

	snprintf(both, sizeof(both), "%s%s%s", a, *a && *b ? "," : "", b);
	return both;
}

/* A trigger started low at 0. */
static void started(struct gb_trigger *t, const struct gb_trigger_config *c)
{
	gb_trigger_init(t);
	ck_assert_str_eq(start(t, c, c->active_low, 0), c->kind == GB_TRIGGER_LEVEL ? "low" : "");
}

#define SAME(f) ck_assert_uint_eq(a->f, b->f)
static void assert_same(const struct gb_trigger *a, const struct gb_trigger *b)
{
	SAME(known); SAME(level); SAME(level_ns); SAME(pending); SAME(pending_level);
	SAME(pending_ns); SAME(long_fired); SAME(window_ns); SAME(window_n); SAME(fired);
	SAME(suppressed); SAME(last_fired_usec);
}

static char *written(const struct gb_trigger *t)
{
	char *text = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&text, &size);

	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(gb_trigger_write(t, f), 0);
	ck_assert_int_eq(fclose(f), 0);
	return text;
}

/* What a restart keeps: @p t written and read back. */
static void restart(struct gb_trigger *t)
{
	char *text = written(t);

	ck_assert_int_eq(gb_trigger_parse(t, text, strlen(text)), 0);
	free(text);
}

START_TEST(test_names)
{
	static const char *const kinds[] = { "rising", "falling", "both", "press", "long-press",
					     "level" };
	static const char *const events[] = { "rising", "falling", "press", "long-press", "high",
					      "low" };
	static const unsigned int kind_events[] = {
		1u << GB_TEV_RISING, 1u << GB_TEV_FALLING,
		1u << GB_TEV_RISING | 1u << GB_TEV_FALLING, 1u << GB_TEV_PRESS,
		1u << GB_TEV_LONG_PRESS, 1u << GB_TEV_HIGH | 1u << GB_TEV_LOW,
	};
	enum gb_trigger_kind k;

	for (unsigned int i = 0; i < 6; i++) {
		ck_assert_int_eq(gb_trigger_kind_from_name(kinds[i], &k), 0);
		ck_assert_int_eq(k, i);
		ck_assert_str_eq(gb_trigger_kind_name(k), kinds[i]);
	}
	ck_assert_int_eq(gb_trigger_kind_from_name("longpress", &k), -EINVAL);
	ck_assert_int_eq(gb_trigger_kind_from_name("", &k), -EINVAL);
	ck_assert_int_eq(gb_trigger_kind_from_name("Rising", &k), -EINVAL);
	for (unsigned int e = 0; e < _GB_TEV_MAX; e++) {
		enum gb_trigger_event ev = (enum gb_trigger_event)e;

		ck_assert_str_eq(names(&ev, 1), events[e]);
	}
	for (unsigned int i = 0; i < 6; i++)
		ck_assert_uint_eq(gb_trigger_kind_events((enum gb_trigger_kind)i), kind_events[i]);
}
END_TEST

START_TEST(test_kinds_and_edges)
{
	struct gb_trigger_config c = { .kind = GB_TRIGGER_RISING };
	struct gb_trigger t;

	started(&t, &c);
	ck_assert_str_eq(edge(&t, &c, true, MS(10)), "rising");
	ck_assert_str_eq(edge(&t, &c, false, MS(20)), "");
	ck_assert_str_eq(edge(&t, &c, true, MS(30)), "rising");

	c.kind = GB_TRIGGER_FALLING;
	started(&t, &c);
	ck_assert_str_eq(up_down(&t, &c, MS(10), MS(20)), "falling");

	c.kind = GB_TRIGGER_BOTH;
	started(&t, &c);
	ck_assert_str_eq(up_down(&t, &c, MS(10), MS(20)), "rising,falling");

	c.kind = GB_TRIGGER_PRESS;
	started(&t, &c);
	ck_assert_str_eq(up_down(&t, &c, MS(10), MS(200)), "press");

	c.kind = GB_TRIGGER_LEVEL;
	started(&t, &c);
	ck_assert_str_eq(up_down(&t, &c, MS(10), MS(20)), "");
	ck_assert_str_eq(tick(&t, &c, MS(5000)), "");

	c = (struct gb_trigger_config){ .kind = GB_TRIGGER_BOTH };
	/* Two risings: the falling between was lost; the level did not change. */
	started(&t, &c);
	ck_assert_str_eq(edge(&t, &c, true, MS(10)), "rising");
	ck_assert_str_eq(edge(&t, &c, true, MS(20)), "");
	ck_assert_uint_eq(t.level_ns, MS(10));
	ck_assert_str_eq(edge(&t, &c, false, MS(30)), "falling");
	ck_assert_str_eq(edge(&t, &c, false, MS(40)), "");

	/* An edge queued before the start read the level is in that level already. */
	gb_trigger_init(&t);
	ck_assert_str_eq(start(&t, &c, true, MS(100)), "");
	ck_assert_str_eq(edge(&t, &c, false, MS(90)), "");
	ck_assert(t.level);
	ck_assert_str_eq(edge(&t, &c, false, MS(110)), "falling");

	c = (struct gb_trigger_config){ .kind = GB_TRIGGER_RISING, .active_low = true };
	gb_trigger_init(&t);
	/* Physically high is logically low. */
	ck_assert_str_eq(start(&t, &c, true, 0), "");
	ck_assert(!t.level);
	ck_assert_str_eq(up_down(&t, &c, MS(10), MS(20)), "rising");
	ck_assert(t.level);

	c.kind = GB_TRIGGER_PRESS;
	gb_trigger_init(&t);
	ck_assert_str_eq(start(&t, &c, true, 0), "");
	ck_assert_str_eq(edge(&t, &c, false, MS(10)), "");
	ck_assert_str_eq(edge(&t, &c, true, MS(90)), "press");

	c.kind = GB_TRIGGER_LEVEL;
	gb_trigger_init(&t);
	ck_assert_str_eq(start(&t, &c, true, 0), "low");
	ck_assert_str_eq(start(&t, &c, false, MS(10)), "high");
}
END_TEST

START_TEST(test_debounce)
{
	struct gb_trigger_config c = { .kind = GB_TRIGGER_BOTH, .debounce_ns = MS(10) };
	struct gb_trigger t;

	started(&t, &c);
	ck_assert_str_eq(edge(&t, &c, true, MS(100)), "");
	ck_assert_uint_eq(gb_trigger_deadline(&t, &c), MS(110));
	ck_assert_str_eq(edge(&t, &c, false, MS(101)), "");
	ck_assert_str_eq(up_down(&t, &c, MS(103), MS(104)), "");
	ck_assert_str_eq(edge(&t, &c, true, MS(106)), "");
	/* Each bounce restarted the wait. */
	ck_assert_uint_eq(gb_trigger_deadline(&t, &c), MS(116));
	ck_assert_str_eq(tick(&t, &c, MS(116) - 1), "");
	ck_assert_str_eq(tick(&t, &c, MS(116)), "rising");
	ck_assert(t.level);
	ck_assert_uint_eq(t.level_ns, MS(106));
	ck_assert_uint_eq(gb_trigger_deadline(&t, &c), 0);
	ck_assert_str_eq(tick(&t, &c, MS(200)), "");

	/* The release bounces too, and counts once. */
	ck_assert_str_eq(edge(&t, &c, false, MS(300)), "");
	ck_assert_str_eq(up_down(&t, &c, MS(302), MS(303)), "");
	ck_assert_str_eq(tick(&t, &c, MS(313)), "falling");
	ck_assert_uint_eq(t.level_ns, MS(303));

	/* A bounce that came back fires nothing. */
	ck_assert_str_eq(up_down(&t, &c, MS(400), MS(405)), "");
	ck_assert_uint_eq(gb_trigger_deadline(&t, &c), 0);
	ck_assert_str_eq(tick(&t, &c, MS(1000)), "");
	ck_assert_uint_eq(t.level_ns, MS(303));

	/* The tick came late: the next edge counts the one that waited out its debounce
	 * first, at its own time. */
	ck_assert_str_eq(up_down(&t, &c, MS(2000), MS(2100)), "rising");
	ck_assert_uint_eq(t.level_ns, MS(2000));
	ck_assert(t.pending);
	ck_assert_uint_eq(gb_trigger_deadline(&t, &c), MS(2110));
	ck_assert_str_eq(tick(&t, &c, MS(2110)), "falling");
}
END_TEST

START_TEST(test_long_press)
{
	struct gb_trigger_config c = { .kind = GB_TRIGGER_LONG_PRESS, .hold_ns = MS(1000) };
	struct gb_trigger t;

	started(&t, &c);
	ck_assert_uint_eq(gb_trigger_deadline(&t, &c), 0);
	ck_assert_str_eq(edge(&t, &c, true, MS(100)), "");
	ck_assert_uint_eq(gb_trigger_deadline(&t, &c), MS(1100));
	ck_assert_str_eq(tick(&t, &c, MS(1100) - 1), "");
	ck_assert_str_eq(tick(&t, &c, MS(1100)), "long-press");
	ck_assert_uint_eq(gb_trigger_deadline(&t, &c), 0);
	ck_assert_str_eq(tick(&t, &c, MS(1100)), "");
	ck_assert_str_eq(tick(&t, &c, MS(9000)), "");
	ck_assert_str_eq(edge(&t, &c, false, MS(9500)), "");

	/* The next press is one of its own: a short one fires nothing. */
	ck_assert_str_eq(edge(&t, &c, true, MS(10000)), "");
	ck_assert_uint_eq(gb_trigger_deadline(&t, &c), MS(11000));
	ck_assert_str_eq(edge(&t, &c, false, MS(10500)), "");
	ck_assert_uint_eq(gb_trigger_deadline(&t, &c), 0);
	ck_assert_str_eq(tick(&t, &c, MS(11000)), "");

	/* A release read after the hold ran out, with no tick between: long all the same. */
	ck_assert_str_eq(up_down(&t, &c, MS(20000), MS(21500)), "long-press");
	ck_assert_str_eq(tick(&t, &c, MS(22000)), "");

	c.debounce_ns = MS(20);
	started(&t, &c);
	ck_assert_str_eq(edge(&t, &c, true, MS(100)), "");
	ck_assert_uint_eq(gb_trigger_deadline(&t, &c), MS(120));
	ck_assert_str_eq(tick(&t, &c, MS(120)), "");
	/* The hold counts from the press's first edge. */
	ck_assert_uint_eq(gb_trigger_deadline(&t, &c), MS(1100));
	/* Released just before the hold ran out: that release decides, once debounced. */
	ck_assert_str_eq(edge(&t, &c, false, MS(1090)), "");
	ck_assert_uint_eq(gb_trigger_deadline(&t, &c), MS(1110));
	ck_assert_str_eq(tick(&t, &c, MS(1100)), "");
	ck_assert_str_eq(tick(&t, &c, MS(1110)), "");
	ck_assert(!t.level);

	/* The same, but the release was a bounce: the press goes on and is long. */
	ck_assert_str_eq(edge(&t, &c, true, MS(2000)), "");
	ck_assert_str_eq(tick(&t, &c, MS(2020)), "");
	ck_assert_str_eq(edge(&t, &c, false, MS(2990)), "");
	ck_assert_str_eq(tick(&t, &c, MS(3000)), "");
	ck_assert_str_eq(edge(&t, &c, true, MS(3005)), "long-press");
	ck_assert_str_eq(tick(&t, &c, MS(3100)), "");

	/* A tick so late that it debounces the press and finds its hold over. */
	ck_assert_str_eq(edge(&t, &c, false, MS(4000)), "");
	ck_assert_str_eq(tick(&t, &c, MS(4020)), "");
	ck_assert_str_eq(edge(&t, &c, true, MS(5000)), "");
	ck_assert_str_eq(tick(&t, &c, MS(7000)), "long-press");
	ck_assert_uint_eq(t.level_ns, MS(5000));
}
END_TEST

START_TEST(test_press)
{
	struct gb_trigger_config c = { .kind = GB_TRIGGER_PRESS, .long_hold_ns = MS(1000) };
	struct gb_trigger t;

	/* Short: a press. */
	started(&t, &c);
	ck_assert_str_eq(edge(&t, &c, true, MS(100)), "");
	ck_assert_uint_eq(gb_trigger_deadline(&t, &c), 0);
	ck_assert_str_eq(tick(&t, &c, MS(5000)), "");
	ck_assert_str_eq(edge(&t, &c, false, MS(300)), "press");

	/* Long: the long-press action's, not this one's. */
	ck_assert_str_eq(up_down(&t, &c, MS(1000), MS(2000)), "");
	ck_assert_str_eq(up_down(&t, &c, MS(3000), MS(4000) - 1), "press");

	/* Unless it asked for them too. */
	c.after_long_press = true;
	ck_assert_str_eq(up_down(&t, &c, MS(5000), MS(7000)), "press");

	/* No long press on the line: every press. */
	c.after_long_press = false;
	c.long_hold_ns = 0;
	ck_assert_str_eq(up_down(&t, &c, MS(8000), MS(60000)), "press");

	/* With a debounce the press lasts from its first edge to its release's. */
	c.long_hold_ns = MS(1000);
	c.debounce_ns = MS(50);
	ck_assert_str_eq(edge(&t, &c, true, MS(70000)), "");
	ck_assert_str_eq(tick(&t, &c, MS(70050)), "");
	ck_assert_str_eq(edge(&t, &c, false, MS(70999)), "");
	ck_assert_str_eq(tick(&t, &c, MS(71049) - 1), "");
	ck_assert_str_eq(tick(&t, &c, MS(71049)), "press");
}
END_TEST

START_TEST(test_long_and_short_same_line)
{
	/* A press action and a long-press action on one line never both fire. */
	struct gb_trigger_config p = { .kind = GB_TRIGGER_PRESS, .long_hold_ns = MS(1000),
				       .debounce_ns = MS(20) };
	struct gb_trigger_config l = { .kind = GB_TRIGGER_LONG_PRESS, .hold_ns = MS(1000),
				       .debounce_ns = MS(20) };
	struct gb_trigger tp, tl;
	static const uint64_t release[] = { 500, 980, 999, 1000, 1001, 1020, 3000 };

	for (unsigned int i = 0; i < 7; i++) {
		uint64_t r = MS(release[i]), now;
		char fired[64] = "";

		started(&tp, &p);
		started(&tl, &l);
		strcat(fired, edge(&tp, &p, true, 0));
		strcat(fired, edge(&tl, &l, true, 0));
		/* The daemon ticks each at its deadline; edges come when they come. */
		for (now = MS(1); now < r; now += MS(1)) {
			strcat(fired, tick(&tp, &p, now));
			strcat(fired, tick(&tl, &l, now));
		}
		strcat(fired, edge(&tp, &p, false, r));
		strcat(fired, edge(&tl, &l, false, r));
		strcat(fired, tick(&tp, &p, r + MS(20)));
		strcat(fired, tick(&tl, &l, r + MS(20)));
		ck_assert_msg(strcmp(fired, release[i] < 1000 ? "press" : "long-press") == 0,
			      "release at %" PRIu64 " ms fired '%s'", release[i], fired);
	}
}
END_TEST

START_TEST(test_start_unknown)
{
	struct gb_trigger_config c = { .kind = GB_TRIGGER_PRESS };
	struct gb_trigger t;

	gb_trigger_init(&t);
	ck_assert_str_eq(start(&t, &c, true, MS(500)), "");
	ck_assert(t.known);
	ck_assert(t.level);
	ck_assert_uint_eq(t.level_ns, MS(500));
	ck_assert_str_eq(edge(&t, &c, false, MS(700)), "press");

	c.kind = GB_TRIGGER_RISING;
	gb_trigger_init(&t);
	ck_assert_str_eq(start(&t, &c, true, MS(500)), "");
	c.kind = GB_TRIGGER_FALLING;
	gb_trigger_init(&t);
	ck_assert_str_eq(start(&t, &c, false, MS(500)), "");
}
END_TEST

START_TEST(test_start_released_meanwhile)
{
	struct gb_trigger_config c = { .kind = GB_TRIGGER_PRESS, .long_hold_ns = MS(1000) };
	struct gb_trigger t;

	/* Pressed at 100, the broker restarts, the button was let go meanwhile: one press. */
	started(&t, &c);
	ck_assert_str_eq(edge(&t, &c, true, MS(100)), "");
	restart(&t);
	ck_assert_str_eq(start(&t, &c, false, MS(400)), "press");
	ck_assert_str_eq(tick(&t, &c, MS(500)), "");
	restart(&t);
	ck_assert_str_eq(start(&t, &c, false, MS(600)), "");

	/* Gone for longer than a long press: that was not this action's press. */
	ck_assert_str_eq(edge(&t, &c, true, MS(1000)), "");
	restart(&t);
	ck_assert_str_eq(start(&t, &c, false, MS(2500)), "");

	/* A long press released while nobody watched cannot be said to have been long. */
	c = (struct gb_trigger_config){ .kind = GB_TRIGGER_LONG_PRESS, .hold_ns = MS(1000) };
	started(&t, &c);
	ck_assert_str_eq(edge(&t, &c, true, MS(100)), "");
	restart(&t);
	ck_assert_str_eq(start(&t, &c, false, MS(5000)), "");
	ck_assert_uint_eq(gb_trigger_deadline(&t, &c), 0);

	/* An edge missed the other way counts as one. */
	c = (struct gb_trigger_config){ .kind = GB_TRIGGER_BOTH };
	started(&t, &c);
	restart(&t);
	ck_assert_str_eq(start(&t, &c, true, MS(100)), "rising");
	restart(&t);
	ck_assert_str_eq(start(&t, &c, false, MS(200)), "falling");
}
END_TEST

START_TEST(test_start_held_meanwhile)
{
	struct gb_trigger_config c = { .kind = GB_TRIGGER_LONG_PRESS, .hold_ns = MS(1000) };
	struct gb_trigger t;

	started(&t, &c);
	ck_assert_str_eq(edge(&t, &c, true, MS(100)), "");
	restart(&t);
	/* Still held, and not yet long: the wait goes on from the press's start. */
	ck_assert_str_eq(start(&t, &c, true, MS(500)), "");
	ck_assert_uint_eq(gb_trigger_deadline(&t, &c), MS(1100));
	restart(&t);
	/* Held past the hold meanwhile: it fires now, once. */
	ck_assert_str_eq(start(&t, &c, true, MS(2000)), "long-press");
	ck_assert_uint_eq(gb_trigger_deadline(&t, &c), 0);
	ck_assert_str_eq(tick(&t, &c, MS(3000)), "");
	restart(&t);
	ck_assert_str_eq(start(&t, &c, true, MS(4000)), "");
	ck_assert_str_eq(edge(&t, &c, false, MS(5000)), "");
}
END_TEST

START_TEST(test_start_level_and_pending)
{
	struct gb_trigger_config c = { .kind = GB_TRIGGER_LEVEL };
	struct gb_trigger t;

	gb_trigger_init(&t);
	ck_assert_str_eq(start(&t, &c, true, MS(1)), "high");
	ck_assert_str_eq(start(&t, &c, true, MS(2)), "high");
	restart(&t);
	ck_assert_str_eq(start(&t, &c, false, MS(3)), "low");
	ck_assert_str_eq(edge(&t, &c, true, MS(4)), "");
	ck_assert_str_eq(start(&t, &c, true, MS(5)), "high");

	c = (struct gb_trigger_config){ .kind = GB_TRIGGER_BOTH, .debounce_ns = MS(10) };
	started(&t, &c);
	ck_assert_str_eq(edge(&t, &c, true, MS(100)), "");
	ck_assert_str_eq(start(&t, &c, false, MS(105)), "");
	ck_assert_uint_eq(gb_trigger_deadline(&t, &c), 0);
	ck_assert_str_eq(tick(&t, &c, MS(200)), "");

	/* The level read now decides, with no debounce: it held all that time. */
	ck_assert_str_eq(edge(&t, &c, true, MS(300)), "");
	ck_assert_str_eq(start(&t, &c, true, MS(305)), "rising");
	ck_assert(!t.pending);
	ck_assert_uint_eq(t.level_ns, MS(305));
}
END_TEST

START_TEST(test_rate_limit)
{
	struct gb_trigger_config c = { .kind = GB_TRIGGER_BOTH, .rate_interval_ns = MS(1000),
				       .rate_burst = 2 };
	struct gb_trigger t;

	gb_trigger_init(&t);
	ck_assert(gb_trigger_admit(&t, &c, MS(5000), 11));
	ck_assert(gb_trigger_admit(&t, &c, MS(5100), 12));
	ck_assert(!gb_trigger_admit(&t, &c, MS(5200), 13));
	ck_assert(!gb_trigger_admit(&t, &c, MS(6000) - 1, 14));
	ck_assert_uint_eq(t.fired, 2);
	ck_assert_uint_eq(t.suppressed, 2);
	ck_assert_uint_eq(t.last_fired_usec, 12);
	/* A new window. */
	ck_assert(gb_trigger_admit(&t, &c, MS(6000), 15));
	ck_assert_uint_eq(t.window_ns, MS(6000));
	ck_assert_uint_eq(t.window_n, 1);
	ck_assert(gb_trigger_admit(&t, &c, MS(6500), 16));
	ck_assert(!gb_trigger_admit(&t, &c, MS(6600), 17));
	restart(&t);
	ck_assert(!gb_trigger_admit(&t, &c, MS(6700), 18));
	ck_assert_uint_eq(t.fired, 4);
	ck_assert_uint_eq(t.suppressed, 4);
	ck_assert_uint_eq(t.last_fired_usec, 16);

	/* The first window opens with the first firing, not at 0. */
	gb_trigger_init(&t);
	ck_assert(gb_trigger_admit(&t, &c, MS(100), 1));
	ck_assert(gb_trigger_admit(&t, &c, MS(200), 2));
	ck_assert(!gb_trigger_admit(&t, &c, MS(1050), 3));
	ck_assert(gb_trigger_admit(&t, &c, MS(1100), 4));

	/* No limit with either one 0. */
	c.rate_burst = 0;
	for (int i = 0; i < 100; i++)
		ck_assert(gb_trigger_admit(&t, &c, MS(6800), 19));
	c.rate_burst = 1;
	c.rate_interval_ns = 0;
	for (int i = 0; i < 100; i++)
		ck_assert(gb_trigger_admit(&t, &c, MS(6800), 20));
	ck_assert_uint_eq(t.fired, 203);
	ck_assert_uint_eq(t.suppressed, 1);
}
END_TEST

START_TEST(test_round_trip)
{
	struct gb_trigger in = {
		.known = true, .level = true, .level_ns = UINT64_MAX, .pending = true,
		.pending_level = false, .pending_ns = 12345, .long_fired = true,
		.window_ns = 777, .window_n = UINT32_MAX, .fired = 42, .suppressed = 7,
		.last_fired_usec = 1733400000000000,
	}, out;
	char *text = written(&in);
	static const char newer[] = "gpiod-broker-trigger 1\nlast_fired_usec=9\nknown=1\n"
		"level=0\nlevel_ns=5\npending=0\npending_level=0\npending_ns=0\nlong_fired=0\n"
		"a_newer_key=what it says\nwindow_ns=0\nwindow_n=0\nfired=00\nsuppressed=0\n";

	ck_assert_str_eq(text, "gpiod-broker-trigger 1\nknown=1\nlevel=1\n"
		"level_ns=18446744073709551615\npending=1\npending_level=0\npending_ns=12345\n"
		"long_fired=1\nwindow_ns=777\nwindow_n=4294967295\nfired=42\nsuppressed=7\n"
		"last_fired_usec=1733400000000000\n");
	memset(&out, 0xff, sizeof(out));
	ck_assert_int_eq(gb_trigger_parse(&out, text, strlen(text)), 0);
	assert_same(&out, &in);
	free(text);

	/* Any order, and a newer broker's key, skipped. */
	ck_assert_int_eq(gb_trigger_parse(&out, newer, strlen(newer)), 0);
	ck_assert(out.known && out.level_ns == 5 && out.last_fired_usec == 9);
}
END_TEST

START_TEST(test_odd_state)
{
	struct gb_trigger_config c = { .kind = GB_TRIGGER_BOTH };
	struct gb_trigger t = { .known = true, .pending = true, .pending_level = true };

	/* A wait at 0, with the debounce gone from the policy: due, not "nothing waits". */
	ck_assert_uint_eq(gb_trigger_deadline(&t, &c), 1);
	ck_assert_str_eq(tick(&t, &c, 1), "rising");
	ck_assert_uint_eq(gb_trigger_deadline(&t, &c), 0);

	/* Deadlines past the clock's end stay there. */
	c.kind = GB_TRIGGER_LONG_PRESS;
	c.hold_ns = MS(1000);
	t = (struct gb_trigger){ .known = true, .level = true, .level_ns = UINT64_MAX - 5 };
	ck_assert_uint_eq(gb_trigger_deadline(&t, &c), UINT64_MAX);
	ck_assert_str_eq(tick(&t, &c, UINT64_MAX - 1), "");
	ck_assert_str_eq(tick(&t, &c, UINT64_MAX), "long-press");

	/* A wait with nothing known takes its level and fires nothing. */
	c.kind = GB_TRIGGER_BOTH;
	t = (struct gb_trigger){ .pending = true, .pending_level = true, .pending_ns = 5 };
	ck_assert_str_eq(tick(&t, &c, 10), "");
	ck_assert(t.known && t.level && !t.pending);
}
END_TEST

/* @p text with line @p key's value replaced by @p value (NULL: the line left out). */
static char *edited(const char *key, const char *value)
{
	struct gb_trigger t = { .known = true, .level_ns = 3 };
	char *text = written(&t), *out = malloc(strlen(text) + 512), *o = out;
	size_t klen = strlen(key);

	ck_assert_ptr_nonnull(out);
	for (char *l = text; *l;) {
		char *nl = strchr(l, '\n');

		if (strncmp(l, key, klen) == 0 && l[klen] == '=') {
			if (value)
				o += sprintf(o, "%s=%s\n", key, value);
		} else {
			memcpy(o, l, (size_t)(nl - l) + 1);
			o += nl - l + 1;
		}
		l = nl + 1;
	}
	*o = '\0';
	free(text);
	return out;
}

static void assert_refused(const char *text, size_t len)
{
	struct gb_trigger t, fresh;

	memset(&t, 0xa5, sizeof(t));
	gb_trigger_init(&fresh);
	ck_assert_msg(gb_trigger_parse(&t, text, len) == -EINVAL, "accepted: %.*s", (int)len,
		      text);
	assert_same(&t, &fresh);
}

START_TEST(test_parse_refuses)
{
	static const char *const bad_values[][2] = {
		{ "known", "2" }, { "known", "" }, { "known", "01" }, { "known", "true" },
		{ "level", " 1" }, { "level", "1 " }, { "level_ns", "-1" }, { "level_ns", "+1" },
		{ "level_ns", "1x" }, { "level_ns", "" }, { "level_ns", "0x10" },
		{ "level_ns", "18446744073709551616" }, { "level_ns", "99999999999999999999" },
		{ "window_n", "4294967296" }, { "window_n", "-0" }, { "fired", "1.5" },
		{ "pending", NULL }, { "last_fired_usec", NULL }, { "known", NULL },
		/* A line twice, a line with no '=' or no key, an empty line, a CR. */
		{ "fired", "1\nfired=1" }, { "fired", "1\nfired" }, { "fired", "1\n=1" },
		{ "fired", "1\n" }, { "fired", "1\r" },
	};
	struct gb_trigger t;
	char *text, big[400];
	size_t len;

	for (unsigned int i = 0; i < sizeof(bad_values) / sizeof(bad_values[0]); i++) {
		text = edited(bad_values[i][0], bad_values[i][1]);
		assert_refused(text, strlen(text));
		free(text);
	}
	/* The edit itself keeps a good file good. */
	text = edited("level_ns", "18446744073709551615");
	ck_assert_int_eq(gb_trigger_parse(&t, text, strlen(text)), 0);
	ck_assert_uint_eq(t.level_ns, UINT64_MAX);

	len = strlen(text);
	/* Cut short: inside the last line, or before it. */
	assert_refused(text, len - 1);
	assert_refused(text, len - 3);
	assert_refused(text, strchr(text, '\n') - text + 1);
	assert_refused(text, 0);
	free(text);
	/* A NUL inside a value. */
	text = edited("fired", "12");
	len = strlen(text);
	strstr(text, "fired=12")[7] = '\0';
	assert_refused(text, len);
	free(text);

	text = edited("fired", "1");
	len = strlen(text);
	/* No header, another version, the header not first. */
	assert_refused(strchr(text, '\n') + 1, len - (size_t)(strchr(text, '\n') + 1 - text));
	memcpy(text, "gpiod-broker-trigger 2", 22);
	assert_refused(text, len);
	free(text);
	assert_refused("\ngpiod-broker-trigger 1\n", 24);

	/* An overlong line, even an unknown key's. */
	memset(big, 'x', sizeof(big) - 3);
	strcpy(big + sizeof(big) - 3, "=1");
	text = edited("fired", big);
	assert_refused(text, strlen(text));
	free(text);
	assert_refused(NULL, 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("trigger");
	TCase *tc = gb_tcase_new(s, "machine", NULL, NULL, 10);

	tcase_add_test(tc, test_names);
	tcase_add_test(tc, test_kinds_and_edges);
	tcase_add_test(tc, test_debounce);
	tcase_add_test(tc, test_long_press);
	tcase_add_test(tc, test_press);
	tcase_add_test(tc, test_long_and_short_same_line);
	tcase_add_test(tc, test_start_unknown);
	tcase_add_test(tc, test_start_released_meanwhile);
	tcase_add_test(tc, test_start_held_meanwhile);
	tcase_add_test(tc, test_start_level_and_pending);
	tcase_add_test(tc, test_rate_limit);
	tcase_add_test(tc, test_odd_state);
	tc = gb_tcase_new(s, "state-file", NULL, NULL, 10);
	tcase_add_test(tc, test_round_trip);
	tcase_add_test(tc, test_parse_refuses);
	return gb_run_suite(s);
}
