/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Framing what a private connection's peer sends (wire.h). */

#include <endian.h>
#include <string.h>

#include "wire.h"

#define ALIGN8(x) (((x) + 7u) & ~(uint64_t)7u)

void gb_wire_init_messages(struct gb_wire *w)
{
	*w = (struct gb_wire){ .phase = GB_WIRE_MESSAGES };
}

static void line_add(struct gb_wire *w, char c)
{
	if (w->line_len < sizeof(w->line))
		w->line[w->line_len] = c;
	w->line_len++;
}

/* The authentication as sd-bus's server reads it: lines end in CRLF, and the one
 * that is exactly "BEGIN" ends it (whether sd-bus accepts the rest is its own
 * business: a peer it refuses is closed). */
static enum gb_wire_result feed_auth(struct gb_wire *w, const char *p, size_t n, size_t *used,
				     const char **reason)
{
	size_t i = 0;

	if (w->phase == GB_WIRE_AUTH_NUL) {
		if (n == 0) {
			*used = 0;
			return GB_WIRE_MORE;
		}
		if (p[0] != '\0') {
			*used = 0;
			*reason = "the authentication does not begin with a NUL byte";
			return GB_WIRE_BAD;
		}
		w->phase = GB_WIRE_AUTH_LINES;
		w->auth_bytes = 1;
		i = 1;
	}
	for (; i < n; i++) {
		char c = p[i];

		if (++w->auth_bytes > GB_WIRE_MAX_AUTH) {
			*used = i;
			*reason = "the authentication is longer than 64 KiB";
			return GB_WIRE_BAD;
		}
		if (w->cr && c == '\n') {
			bool begin = w->line_len == 5 && memcmp(w->line, "BEGIN", 5) == 0;

			w->cr = false;
			w->line_len = 0;
			if (begin) {
				gb_wire_init_messages(w);
				*used = i + 1;
				return GB_WIRE_BEGIN;
			}
			continue;
		}
		/* A CR not followed by LF is part of the line. */
		if (w->cr)
			line_add(w, '\r');
		w->cr = c == '\r';
		if (!w->cr)
			line_add(w, c);
	}
	*used = n;
	return GB_WIRE_MORE;
}

static uint32_t u32_at(const uint8_t *p, bool little)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return little ? le32toh(v) : be32toh(v);
}

/* What sd-bus makes of a fixed header before it reads the rest (and what it would
 * refuse only once it had read it all). */
static enum gb_wire_result parse_header(struct gb_wire *w, const char **reason)
{
	const uint8_t *h = w->head;
	bool little = h[0] == 'l';

	if (h[0] != 'l' && h[0] != 'B') {
		*reason = "a message with an unknown byte order";
		return GB_WIRE_BAD;
	}
	if (h[1] < 1 || h[1] > 4) {
		*reason = "a message of an unknown type";
		return GB_WIRE_BAD;
	}
	if (h[3] != 1) {
		*reason = "a message of an unknown protocol version";
		return GB_WIRE_BAD;
	}
	w->size = GB_WIRE_FIXED_HEADER + ALIGN8((uint64_t)u32_at(h + 12, little)) +
		  u32_at(h + 4, little);
	w->serial = u32_at(h + 8, little);
	if (w->serial == 0) {
		*reason = "a message with serial 0";
		return GB_WIRE_BAD;
	}
	if (w->size > GB_WIRE_MAX_MESSAGE)
		return GB_WIRE_TOO_BIG;
	w->left = w->size - GB_WIRE_FIXED_HEADER;
	return GB_WIRE_HEADER;
}

enum gb_wire_result gb_wire_feed(struct gb_wire *w, const void *data, size_t n, size_t *used,
				 const char **reason)
{
	const uint8_t *p = data;
	size_t take;

	*reason = NULL;
	if (w->phase != GB_WIRE_MESSAGES)
		return feed_auth(w, data, n, used, reason);
	if (w->head_len < GB_WIRE_FIXED_HEADER) {
		take = GB_WIRE_FIXED_HEADER - w->head_len;
		if (take > n)
			take = n;
		memcpy(w->head + w->head_len, p, take);
		w->head_len += take;
		*used = take;
		if (w->head_len < GB_WIRE_FIXED_HEADER)
			return GB_WIRE_MORE;
		return parse_header(w, reason);
	}
	take = w->left < n ? (size_t)w->left : n;
	w->left -= take;
	*used = take;
	if (w->left > 0)
		return GB_WIRE_MORE;
	w->head_len = 0;
	return GB_WIRE_MESSAGE;
}
