/* SPDX-License-Identifier: LGPL-2.1-or-later */
/**
 * @file trigger.h
 * @brief When an edge action fires: debounce, presses, long presses, the level at
 * start, and the rate limit, as a pure state machine (no clock, no I/O).
 *
 * The daemon (core/action.c) feeds it the line's edges with their times, calls
 * gb_trigger_tick() when gb_trigger_deadline() says, and fires what comes out. All
 * times are nanoseconds on one monotonic clock (the kernel's event timestamps,
 * CLOCK_MONOTONIC, and sd-event's CLOCK_MONOTONIC).
 *
 * Levels are logical: with active_low the physical level is inverted first, as
 * gpiomon --active-low reports it. A press is the logical level high; it begins
 * with a (debounced) rising edge and ends with a falling one.
 *
 * The state (struct gb_trigger) is plain data, written to and read from the state
 * directory (gb_trigger_write(), gb_trigger_parse()) so that a broker restart
 * neither repeats nor loses what was in progress: a press that began before the
 * restart ends after it as one press.
 */
#ifndef GB_TRIGGER_H
#define GB_TRIGGER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum gb_trigger_kind {
	GB_TRIGGER_RISING,     /* each logical rising edge */
	GB_TRIGGER_FALLING,    /* each logical falling edge */
	GB_TRIGGER_BOTH,       /* each edge */
	GB_TRIGGER_PRESS,      /* a press, at its release, unless it was a long one */
	GB_TRIGGER_LONG_PRESS, /* a press held for hold_ns, once, while still held */
	GB_TRIGGER_LEVEL,      /* the level when the action starts (broker start, restart,
				* policy load, the chip back) */
};

/* What fires; its name is the %e of a unit name (gb_trigger_event_name()). */
enum gb_trigger_event {
	GB_TEV_RISING,
	GB_TEV_FALLING,
	GB_TEV_PRESS,
	GB_TEV_LONG_PRESS,
	GB_TEV_HIGH,
	GB_TEV_LOW,
	_GB_TEV_MAX,
};

struct gb_trigger_config {
	enum gb_trigger_kind kind;
	bool active_low;
	uint64_t debounce_ns;      /* a level counts once it held this long; 0: at once */
	uint64_t hold_ns;          /* LONG_PRESS: how long a press must be held */
	/* PRESS: the shortest hold_ns of the long-press actions on the same line (0: none),
	 * set by whoever knows the whole policy. A press at least this long was a long
	 * press, and does not fire unless after_long_press. */
	uint64_t long_hold_ns;
	bool after_long_press;
	/* At most rate_burst firings in a window of rate_interval_ns that opens with the
	 * first of them (a fixed window: two in a row may hold twice as many within one
	 * interval); 0 for either: no limit. */
	uint64_t rate_interval_ns;
	unsigned int rate_burst;
};

struct gb_trigger {
	/* The debounced logical level, and since when. */
	bool known;
	bool level;
	uint64_t level_ns;
	/* An edge waiting out the debounce: the raw logical level it went to, and when. */
	bool pending;
	bool pending_level;
	uint64_t pending_ns;
	/* The press in progress (level high): the long press fired for it. */
	bool long_fired;
	/* The rate limit's window: its start and the firings in it. */
	uint64_t window_ns;
	unsigned int window_n;
	/* Counts, for PolicyStatus and the journal. */
	uint64_t fired;
	uint64_t suppressed;
	uint64_t last_fired_usec;  /* CLOCK_REALTIME µs of the last firing, 0: never */
};

/* At most this many events come out of one call. */
#define GB_TRIGGER_MAX_OUT 4

const char *gb_trigger_kind_name(enum gb_trigger_kind k);
/** The kind named @p s (rising, falling, both, press, long-press, level): 0 or -EINVAL. */
int gb_trigger_kind_from_name(const char *s, enum gb_trigger_kind *ret);
const char *gb_trigger_event_name(enum gb_trigger_event e);
/** The events an action of kind @p k can fire, as a bit set (1 << event). */
unsigned int gb_trigger_kind_events(enum gb_trigger_kind k);

/** A trigger that knows nothing yet. */
void gb_trigger_init(struct gb_trigger *t);

/**
 * The action starts (or starts again after a restart, with @p t as it was saved)
 * and the line's physical level is @p raw_high at @p now_ns.
 *  - A trigger that knew no level takes this one: nothing fires (but LEVEL).
 *  - One that knew another level missed an edge while nobody watched: it is taken
 *    as an edge now (no debounce: the level held all that time) and fires as one.
 *  - A long press whose hold ran out meanwhile fires (if it is still held).
 *  - LEVEL fires GB_TEV_HIGH or GB_TEV_LOW.
 * An edge still waiting out its debounce is dropped: the level read now decides.
 * Returns the number of events written to @p out (at most GB_TRIGGER_MAX_OUT).
 */
int gb_trigger_start(struct gb_trigger *t, const struct gb_trigger_config *c, bool raw_high,
		     uint64_t now_ns, enum gb_trigger_event *out);

/**
 * An edge of the line: physically rising or not, at @p ts_ns. With no debounce it
 * counts at once; otherwise it waits (gb_trigger_deadline()), and another edge
 * within the debounce restarts the wait. An edge that agrees with the level
 * (one lost in between) is taken as a bounce that came back. Returns the number of
 * events in @p out.
 */
int gb_trigger_edge(struct gb_trigger *t, const struct gb_trigger_config *c, bool rising,
		    uint64_t ts_ns, enum gb_trigger_event *out);

/** Time passed (@p now_ns): a debounce or a hold may have run out. Events in @p out. */
int gb_trigger_tick(struct gb_trigger *t, const struct gb_trigger_config *c, uint64_t now_ns,
		    enum gb_trigger_event *out);

/** When gb_trigger_tick() is due next (absolute ns), or 0 if nothing waits. */
uint64_t gb_trigger_deadline(const struct gb_trigger *t, const struct gb_trigger_config *c);

/**
 * An event is about to fire at @p now_ns: true if the rate limit lets it (counted
 * in fired), false if not (counted in suppressed). @p realtime_usec is kept as the
 * last firing.
 */
bool gb_trigger_admit(struct gb_trigger *t, const struct gb_trigger_config *c, uint64_t now_ns,
		      uint64_t realtime_usec);

/** Write @p t as "key=value" lines (for the state directory). 0 or -errno. */
int gb_trigger_write(const struct gb_trigger *t, FILE *f);
/**
 * Read what gb_trigger_write() wrote (unknown keys are skipped, for a newer
 * broker's file). 0, or -EINVAL for text that is not such a file (then @p t is a
 * fresh trigger).
 */
int gb_trigger_parse(struct gb_trigger *t, const char *text, size_t len);

#endif
