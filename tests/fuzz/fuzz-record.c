/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libFuzzer target for the restart record parsers (requests and watches): any
 * bytes (a damaged state file) must give a record or a refusal with a message,
 * never a crash, a leak or undefined behaviour. A parsed record is written out and
 * must parse again to the same thing.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "record.h"

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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_request(data, size);
	fuzz_watch(data, size);
	return 0;
}
