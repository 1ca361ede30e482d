/* SPDX-License-Identifier: LGPL-2.1-or-later */
/**
 * @file wire.h
 * @brief What a peer sends on a private connection, framed before sd-bus reads it.
 *
 * sd-bus reads a message whole into memory before anyone sees it, up to 128 MiB,
 * and a peer that sends only part of one keeps that memory for as long as it
 * likes. So the broker looks at what waits on a private connection's socket
 * (MSG_PEEK) before it lets sd-bus read: the authentication up to its BEGIN line,
 * then each message's fixed header, which says how long the message is. A message
 * over GB_WIRE_MAX_MESSAGE ends the connection before sd-bus reads a byte of it.
 *
 * This module is the framing alone, over bytes it is given in pieces (core/conn.c
 * does the I/O): no system call, no allocation.
 */
#ifndef GB_WIRE_H
#define GB_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The largest message a private connection may send: four times the largest call
 * of the API under the default limits (Manager.Request of the 512 lines a client
 * may hold, every setting given to each: 128 KiB). */
#define GB_WIRE_MAX_MESSAGE (512u * 1024u)
/* The most authentication sd-bus reads (BUS_AUTH_SIZE_MAX): more is not D-Bus. */
#define GB_WIRE_MAX_AUTH (64u * 1024u)
/* The D-Bus fixed header: endianness, type, flags, version, body length, serial,
 * length of the header fields. */
#define GB_WIRE_FIXED_HEADER 16u

enum gb_wire_phase {
	GB_WIRE_AUTH_NUL,   /* the NUL byte a client sends first */
	GB_WIRE_AUTH_LINES, /* authentication lines, up to BEGIN */
	GB_WIRE_MESSAGES,
};

/** The framing of one byte stream, fed in pieces. Zeroed: at the stream's start. */
struct gb_wire {
	enum gb_wire_phase phase;
	size_t auth_bytes;  /* of the authentication so far */
	char line[6];       /* the current line's first bytes, enough to know BEGIN */
	size_t line_len;    /* its length so far (more than fits in line[]: too long) */
	bool cr;            /* the last byte was a CR */
	uint8_t head[GB_WIRE_FIXED_HEADER];
	size_t head_len;    /* of the current message's fixed header so far */
	uint64_t left;      /* of the current message after its fixed header */
	uint32_t serial;    /* the current message's */
	uint64_t size;
};

enum gb_wire_result {
	GB_WIRE_MORE,    /* every byte taken, nothing complete: more must come */
	GB_WIRE_BEGIN,   /* the authentication ended with BEGIN: messages follow */
	GB_WIRE_HEADER,  /* a message's fixed header: size and serial known */
	GB_WIRE_MESSAGE, /* a message ended */
	GB_WIRE_BAD,     /* not what sd-bus would read: *reason says why */
	GB_WIRE_TOO_BIG, /* a message over GB_WIRE_MAX_MESSAGE (its size in w->size) */
};

/** At the start of messages (a stream past authentication, or a fresh header). */
void gb_wire_init_messages(struct gb_wire *w);

/**
 * Take bytes from @p data (@p n of them) up to the next thing worth telling, and
 * say what it was; *@p used is how many bytes were taken. After GB_WIRE_HEADER,
 * w->size and w->serial describe the message; GB_WIRE_MESSAGE follows once its
 * last byte is taken. GB_WIRE_BAD and GB_WIRE_TOO_BIG are final.
 */
enum gb_wire_result gb_wire_feed(struct gb_wire *w, const void *data, size_t n, size_t *used,
				 const char **reason);

/** Between two messages (or before the first): nothing of the next one taken. */
static inline bool gb_wire_at_boundary(const struct gb_wire *w)
{
	return w->phase == GB_WIRE_MESSAGES && w->head_len == 0;
}

#endif
