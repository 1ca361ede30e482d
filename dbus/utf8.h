/* SPDX-License-Identifier: LGPL-2.1-or-later */
/**
 * @file utf8.h
 * @brief Strings made fit for D-Bus and JSON, which take UTF-8 only.
 *
 * The kernel keeps a line's name and consumer and a chip's label as whatever bytes
 * a driver or another program gave it. sd-bus refuses a string that is not UTF-8
 * (the whole reply fails), and so does a JSON writer; such bytes are replaced, never
 * passed on. For the broker (Line and Chip properties) and gpiobrokerctl (--json)
 * alike, hence here beside the bus names, and inline: neither links the other.
 */
#ifndef GB_UTF8_H
#define GB_UTF8_H

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/*
 * The sequence at @p s: its length if well-formed (Unicode's table 3-7: no overlong
 * forms, surrogates or code points beyond U+10FFFF), else 0 with *@p bad the length
 * of its maximal ill-formed subpart: the lead byte and the continuation bytes that
 * could still have begun a well-formed sequence.
 */
static inline size_t gb_utf8_sequence(const unsigned char *s, size_t *bad)
{
	unsigned char lo = 0x80, hi = 0xbf;
	size_t n;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf) {
		n = 2;
	} else if (s[0] >= 0xe0 && s[0] <= 0xef) {
		n = 3;
		lo = s[0] == 0xe0 ? 0xa0 : 0x80; /* overlong */
		hi = s[0] == 0xed ? 0x9f : 0xbf; /* surrogates */
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		n = 4;
		lo = s[0] == 0xf0 ? 0x90 : 0x80; /* overlong */
		hi = s[0] == 0xf4 ? 0x8f : 0xbf; /* beyond U+10FFFF */
	} else {
		*bad = 1;
		return 0;
	}
	for (size_t i = 1; i < n; i++) {
		/* The terminating NUL is below 0x80: a sequence cut short ends here. */
		if (s[i] < lo || s[i] > hi) {
			*bad = i;
			return 0;
		}
		lo = 0x80;
		hi = 0xbf;
	}
	return n;
}

/** Whether @p s is well-formed UTF-8. */
static inline bool gb_utf8_valid(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t bad, n;

	for (; *p; p += n)
		if (!(n = gb_utf8_sequence(p, &bad)))
			return false;
	return true;
}

/**
 * A copy of @p s in which each maximal ill-formed subsequence is replaced by U+FFFD,
 * the practice the Unicode standard recommends (and Python's errors="replace"
 * follows), so that "a\xe2\x82z" becomes "a\uFFFDz". Free it with free(); NULL (errno
 * ENOMEM) if out of memory.
 */
static inline char *gb_utf8_repair(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	/* Each replaced subsequence is at least one byte and becomes three. */
	char *out = malloc(3 * strlen(s) + 1), *o = out;
	size_t bad = 0, n;

	if (!out)
		return NULL;
	for (; *p; p += n) {
		n = gb_utf8_sequence(p, &bad);
		if (n) {
			memcpy(o, p, n);
			o += n;
		} else {
			memcpy(o, "\xef\xbf\xbd", 3);
			o += 3;
			n = bad;
		}
	}
	*o = '\0';
	return out;
}

#endif
