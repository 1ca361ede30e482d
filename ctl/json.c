/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gpiobrokerctl's --json: every output is a jansson value, serialized by jansson,
 * which escapes strings and refuses any that are not UTF-8. Strings reach it
 * through jstr(), which replaces such bytes first (gb_utf8_repair()): a line name or
 * consumer is whatever bytes the kernel was given.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ctl.h"
#include "utf8.h"

json_t *jstr(const char *s)
{
	char *repaired;
	json_t *v;

	if (!s)
		s = "";
	if (gb_utf8_valid(s))
		return json_string(s);
	repaired = gb_utf8_repair(s);
	v = repaired ? json_string(repaired) : NULL;
	free(repaired);
	return v;
}

json_t *jstr_or_null(const char *s)
{
	return s && *s ? jstr(s) : json_null();
}

json_t *ju64(uint64_t v)
{
	/* jansson's integers are signed 64-bit; beyond them (no count or timestamp gets
	 * there) the value stays a number, as a real. */
	if (v > INT64_MAX)
		return json_real((double)v);
	return json_integer((json_int_t)v);
}

void jput(json_t **obj, const char *key, json_t *v)
{
	char *repaired = NULL;
	int r = -1;

	/* Keys come from the broker too (PolicyStatus): they get the strings' care. */
	if (*obj && v && !gb_utf8_valid(key))
		key = repaired = gb_utf8_repair(key);
	if (*obj && key)
		r = json_object_set_new(*obj, key, v); /* takes @v, also when it fails */
	else
		json_decref(v);
	if (r < 0) {
		json_decref(*obj);
		*obj = NULL;
	}
	free(repaired);
}

void jpush(json_t **array, json_t *v)
{
	if (!*array) {
		json_decref(v);
		return;
	}
	if (json_array_append_new(*array, v) < 0) { /* takes @v, also when it fails */
		json_decref(*array);
		*array = NULL;
	}
}

int json_print(json_t *v)
{
	const char *why = "out of memory";
	int r = -1;

	if (v) {
		r = json_dumpf(v, stdout, JSON_COMPACT | JSON_ENCODE_ANY);
		why = strerror(errno);
		json_decref(v);
	}
	if (r < 0) {
		fprintf(stderr, "gpiobrokerctl: %s: cannot write the JSON output: %s\n", cur_cmd,
			why);
		return EX_ERROR;
	}
	putchar('\n');
	return EX_OK;
}
