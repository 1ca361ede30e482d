/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libFuzzer target for the restart record parsers (requests, watches and the edge
 * actions' triggers): any bytes (a damaged state file) must give a record or a
 * refusal with a message, never a crash, a leak or undefined behaviour. A parsed
 * record is written out and must parse again to the same thing. A parsed trigger
 * also runs: whatever state a file gives it, a tick at its deadline must move the
 * deadline on, or the daemon's timer would fire for ever.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "record.h"
#include "trigger.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fuzz_watch(const uint8_t *data, size_t size)
{
	struct gb_watch_record rec, again;
	unsigned int lineno;
	char err[160], *text = NULL;
	size_t len = 0;
	FILE *f;

	gb_watch_record_init(&rec);
	gb_watch_record_init(&again);
	if (gb_watch_record_parse((const char *)data, size, 42, &rec, &lineno, err, sizeof(err)) < 0)
		return;
	f = open_memstream(&text, &len);
	if (f && gb_watch_record_write(&rec, f) == 0 && fclose(f) == 0) {
		if (gb_watch_record_parse(text, len, 42, &again, &lineno, err, sizeof(err)) < 0 ||
		    again.offset != rec.offset || strcmp(again.chip, rec.chip) != 0 ||
		    strcmp(again.owner, rec.owner) != 0)
			abort();
		f = NULL;
	}
	if (f)
		fclose(f);
	free(text);
	gb_watch_record_clear(&again);
	gb_watch_record_clear(&rec);
}

static void fuzz_request(const uint8_t *data, size_t size)
{
	struct gb_record rec, again;
	unsigned int lineno;
	char err[160], *text = NULL;
	size_t len = 0;
	FILE *f;

	gb_record_init(&rec);
	gb_record_init(&again);
	if (gb_record_parse((const char *)data, size, 42, &rec, &lineno, err, sizeof(err)) < 0)
		return;
	f = open_memstream(&text, &len);
	if (f && gb_record_write(&rec, f) == 0 && fclose(f) == 0) {
		if (gb_record_parse(text, len, 42, &again, &lineno, err, sizeof(err)) < 0 ||
		    again.n_lines != rec.n_lines || strcmp(again.label, rec.label) != 0)
			abort();
		f = NULL;
	}
	if (f)
		fclose(f);
	free(text);
	gb_record_clear(&again);
	gb_record_clear(&rec);
}

static bool trigger_same(const struct gb_trigger *a, const struct gb_trigger *b)
{
	return a->known == b->known && a->level == b->level && a->level_ns == b->level_ns &&
	       a->pending == b->pending && a->pending_level == b->pending_level &&
	       a->pending_ns == b->pending_ns && a->long_fired == b->long_fired &&
	       a->window_ns == b->window_ns && a->window_n == b->window_n &&
	       a->fired == b->fired && a->suppressed == b->suppressed &&
	       a->last_fired_usec == b->last_fired_usec;
}

/* Each kind, with a debounce and without. */
static void run_trigger(const struct gb_trigger *parsed, const uint8_t *data, size_t size)
{
	enum gb_trigger_event out[GB_TRIGGER_MAX_OUT];

	for (int k = GB_TRIGGER_RISING; k <= GB_TRIGGER_LEVEL; k++) {
		for (int slow = 0; slow < 2; slow++) {
			struct gb_trigger_config c = {
				.kind = (enum gb_trigger_kind)k,
				.debounce_ns = slow ? 20000000 : 0,
				.hold_ns = 1000000000,
				.long_hold_ns = slow ? 1000000000 : 0,
				.rate_interval_ns = 1000000000,
				.rate_burst = 2,
			};
			struct gb_trigger t = *parsed;
			uint64_t at = gb_trigger_deadline(&t, &c), now = at, next;
			int n;

			if (at) {
				n = gb_trigger_tick(&t, &c, at, out);
				next = gb_trigger_deadline(&t, &c);
				if (n < 0 || n > GB_TRIGGER_MAX_OUT || (next && next <= at))
					abort();
			}
			/* A few edges from the input's last bytes, then a start. */
			for (size_t i = 0; i < size && i < 4; i++) {
				uint8_t b = data[size - 1 - i];

				now += (uint64_t)(b >> 1) * 1000000;
				n = gb_trigger_edge(&t, &c, b & 1, now, out);
				if (n < 0 || n > GB_TRIGGER_MAX_OUT)
					abort();
				for (int j = 0; j < n; j++)
					(void)gb_trigger_admit(&t, &c, now, 1);
			}
			n = gb_trigger_start(&t, &c, size & 1, now, out);
			if (n < 0 || n > GB_TRIGGER_MAX_OUT || t.pending)
				abort();
		}
	}
}

/* Written out, @p t must parse again to the same thing. */
static void trigger_round_trip(const struct gb_trigger *t)
{
	struct gb_trigger again;
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	f = open_memstream(&text, &len);
	if (f && gb_trigger_write(t, f) == 0 && fclose(f) == 0) {
		if (gb_trigger_parse(&again, text, len) < 0 || !trigger_same(t, &again))
			abort();
		f = NULL;
	}
	if (f)
		fclose(f);
	free(text);
}

/* The next @p n bytes of the input as a number (zeros past its end). */
static uint64_t take_bytes(const uint8_t **data, size_t *size, size_t n)
{
	uint64_t v = 0;

	for (size_t i = 0; i < n; i++) {
		v = v << 8 | (*size ? **data : 0);
		if (*size) {
			(*data)++;
			(*size)--;
		}
	}
	return v;
}

static void fuzz_trigger(const uint8_t *data, size_t size)
{
	struct gb_trigger t, fresh;
	const uint8_t *p = data;
	size_t left = size;
	uint64_t bits;

	gb_trigger_init(&fresh);
	if (gb_trigger_parse(&t, (const char *)data, size) == 0) {
		trigger_round_trip(&t);
		run_trigger(&t, data, size);
	} else if (!trigger_same(&t, &fresh)) {
		abort(); /* a refusal leaves a fresh trigger, never half a file's state */
	}
	/* Random text rarely makes a whole state file: the bytes as a state too, for
	 * the writer and for the machine in states no file of ours holds. */
	bits = take_bytes(&p, &left, 1);
	t = (struct gb_trigger){
		.known = bits & 1,
		.level = bits & 2,
		.pending = bits & 4,
		.pending_level = bits & 8,
		.long_fired = bits & 16,
	};
	/* Small times mostly, so that they meet the configuration's; the top bit of
	 * the first byte makes them anything. */
	t.level_ns = take_bytes(&p, &left, bits & 128 ? 8 : 2) * 1000000;
	t.pending_ns = take_bytes(&p, &left, bits & 128 ? 8 : 2) * 1000000;
	t.window_ns = take_bytes(&p, &left, 8);
	t.window_n = (unsigned int)take_bytes(&p, &left, 4);
	t.fired = take_bytes(&p, &left, 8);
	t.suppressed = take_bytes(&p, &left, 8);
	t.last_fired_usec = take_bytes(&p, &left, 8);
	trigger_round_trip(&t);
	run_trigger(&t, data, size);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_request(data, size);
	fuzz_watch(data, size);
	fuzz_trigger(data, size);
	return 0;
}
