/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libFuzzer target for the restart record parser: any bytes (a damaged state
 * file) must give a record or a refusal with a message, never a crash, a leak or
 * undefined behaviour. A parsed record is written out and must parse again to the
 * same thing.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "record.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct gb_record rec, again;
	unsigned int lineno;
	char err[160], *text = NULL;
	size_t len = 0;
	FILE *f;

	gb_record_init(&rec);
	gb_record_init(&again);
	if (gb_record_parse((const char *)data, size, 42, &rec, &lineno, err, sizeof(err)) < 0)
		return 0;
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
	return 0;
}
