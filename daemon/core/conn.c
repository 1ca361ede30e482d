/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A private connection's I/O (conn.h says what it guarantees).
 *
 * sd-bus reads a running connection one message at a time, never past the end of
 * the one it is reading, and reads only when its queue of output is empty or
 * none of it could be written whole: sd_bus_process() writes first and returns
 * once it wrote a whole message. So a call of it reads at most the rest of one
 * message, and the broker makes one only once that message's header has been
 * checked; sd-bus's filter here then sees exactly that message, or the connection
 * ends. (sd-bus drops a message it finds invalid and reads on in the same call:
 * that shows as a message read and not handed on, and ends the connection too.)
 *
 * The look is one MSG_PEEK at the head of the socket when a call comes whole,
 * the usual case. A message that has not all come yet is read as it comes, and
 * the socket's peek offset (SO_PEEK_OFF) is set to its length: the kernel takes
 * every byte sd-bus reads off it, so it says how much of the message is still to
 * read, and whether sd-bus read it all without handing it on.
 *
 * The authentication is where sd-bus reads ahead (up to 64 KiB: BEGIN and what
 * follows it in one go), so while it lasts every look goes on from the peek
 * offset, and the messages after BEGIN are checked as they come. A peer that
 * writes more just while sd-bus reads can still slip bytes past a look; the
 * filter or the offset then shows it, and the connection ends.
 */

#include "conn.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <linux/sockios.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "broker.h"
#include "journal.h"
#include "log.h"
#include "macro.h"
#include "org.gpiodbroker1.h"

/* What a look at a running connection takes at first: a whole call, mostly. */
#define PEEK_FIRST 4096

/* Where looks go: one at a time, the broker being single-threaded. */
static uint8_t peek_buf[GB_WIRE_MAX_AUTH];

static int conn_fd(ClientConn *cc)
{
	return sd_bus_get_fd(cc->bus);
}

static int expect_push(ClientConn *cc, uint32_t serial)
{
	if (cc->expect_first + cc->n_expect == cc->expect_size) {
		size_t size = cc->expect_size ? cc->expect_size * 2 : 4;
		uint32_t *e;

		/* Room at the front first: what was read is gone. */
		if (cc->expect_first) {
			for (size_t i = 0; i < cc->n_expect; i++)
				cc->expect[i] = cc->expect[cc->expect_first + i];
			cc->expect_first = 0;
			return expect_push(cc, serial);
		}
		e = realloc(cc->expect, size * sizeof(*e));
		if (!e)
			return -ENOMEM;
		cc->expect = e;
		cc->expect_size = size;
	}
	cc->expect[cc->expect_first + cc->n_expect++] = serial;
	return 0;
}

/*
 * Seen before the broker's own filter (bus/p2p-dispatch.c: added later, run
 * earlier): every message sd-bus read must be the next one checked. Anything else
 * is not dispatched, and the connection ends once sd-bus returns.
 */
static int conn_filter(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
	ClientConn *cc = userdata;
	uint64_t serial = 0;

	/* sd-bus makes this one up itself when the socket closes. */
	if (sd_bus_message_is_signal(m, "org.freedesktop.DBus.Local", NULL))
		return 0;
	(void)sd_bus_message_get_cookie(m, &serial);
	if (cc->n_expect == 0 || serial != cc->expect[cc->expect_first]) {
		cc->violation = cc->n_expect ? "a message that is not the one whose size was checked" :
					       "a message the broker did not let it read";
		return 1;
	}
	cc->expect_first++;
	if (--cc->n_expect == 0)
		cc->expect_first = 0;
	return 0;
}

static void stall_arm(ClientConn *cc, bool restart);

/* End the connection, and with it the Client, saying why in the journal. */
static void conn_drop(ClientConn *cc, const char *fmt, ...) _printf_(2, 3);
static void conn_drop(ClientConn *cc, const char *fmt, ...)
{
	struct gb_log_fields f = { 0 };
	char why[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	journal_message_id(&f, GB_MESSAGE_CONNECTION_DROPPED);
	journal_caller(&f, cc->uid, cc->name);
	log_struct(LOG_WARNING, &f, "dropping private connection %u of %s (uid %u): %s",
		   cc->index, cc->name, (unsigned)cc->uid, why);
	cc->broken(cc->broker, cc->bus);
}

/*
 * Look at what waits on the socket without taking it (MSG_PEEK), up to @p size
 * bytes: how many, 0 at the end, or -errno (-EAGAIN: nothing). No method takes an
 * fd, and libsystemd 252 leaves open the fds of a message it drops as malformed:
 * a message that brings fds ends the connection before sd-bus reads it (the
 * look's own copies closed; the kernel frees the rest with the socket). -1 then,
 * the connection dropped.
 */
static ssize_t look(ClientConn *cc, void *buf, size_t size)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int) * 16)];
	} control;
	struct iovec iov = { .iov_base = buf, .iov_len = size };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = &control,
			     .msg_controllen = sizeof(control) };
	bool fds = false;
	ssize_t n;

	n = recvmsg(conn_fd(cc), &mh, MSG_PEEK | MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
	if (n < 0)
		return -errno;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c))
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
			size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);

			for (size_t i = 0; i < k; i++)
				close(((int *)CMSG_DATA(c))[i]);
			fds = true;
		}
	if (fds || (mh.msg_flags & MSG_CTRUNC)) {
		conn_drop(cc, "it sent file descriptors, which no method takes");
		return -1;
	}
	return n;
}

/* Look at the authentication that came since the last look. 1: sd-bus may read;
 * 0: not before more comes; -1: dropped. */
static int look_auth(ClientConn *cc)
{
	ssize_t n = look(cc, peek_buf, GB_WIRE_MAX_AUTH);
	size_t off = 0;

	if (n == -1)
		return -1;
	if (n <= 0)
		/* Nothing new, the end, or an error: sd-bus says which. */
		return 1;
	while (off < (size_t)n) {
		const char *reason;
		size_t used;

		switch (gb_wire_feed(&cc->wire, peek_buf + off, (size_t)n - off, &used, &reason)) {
		case GB_WIRE_MORE:
		case GB_WIRE_BEGIN:
		case GB_WIRE_MESSAGE:
			break;
		case GB_WIRE_HEADER:
			if (expect_push(cc, cc->wire.serial) < 0) {
				conn_drop(cc, "out of memory");
				return -1;
			}
			break;
		case GB_WIRE_BAD:
			conn_drop(cc, "it sent %s", reason);
			return -1;
		case GB_WIRE_TOO_BIG:
			conn_drop(cc, "it sent a message of %" PRIu64 " bytes (the most is %u)",
				  cc->wire.size, GB_WIRE_MAX_MESSAGE);
			return -1;
		}
		off += used;
	}
	/* Part of a header after BEGIN: sd-bus would read ahead into a message not
	 * checked. */
	if (cc->wire.phase == GB_WIRE_MESSAGES && cc->wire.head_len > 0 &&
	    cc->wire.head_len < GB_WIRE_FIXED_HEADER) {
		cc->wait_input = true;
		return 0;
	}
	return 1;
}

static int peek_off_get(ClientConn *cc)
{
	socklen_t len = sizeof(int);
	int off = -1;

	(void)getsockopt(conn_fd(cc), SOL_SOCKET, SO_PEEK_OFF, &off, &len);
	return off;
}

/* Count down, on the peek offset, the @p left bytes sd-bus is to read before it
 * has read every message checked (-1: stop counting, look at the head). */
static int meter(ClientConn *cc, int left)
{
	if (setsockopt(conn_fd(cc), SOL_SOCKET, SO_PEEK_OFF, &left, sizeof(left)) < 0)
		return -errno;
	cc->metered = left >= 0;
	return 0;
}

/* Look at the next message of a running connection, at the head of the socket
 * (sd-bus holds nothing of it). 1: its header is checked, sd-bus may read it;
 * 0: none, or not even its header yet; -1: dropped. *@p eof: the peer closed. */
static int look_message(ClientConn *cc, bool *eof)
{
	struct gb_wire w;
	const char *reason;
	size_t used;
	ssize_t n;

	*eof = false;
	n = look(cc, peek_buf, PEEK_FIRST);
	if (n == -1)
		return -1;
	/* The end, or an error: sd-bus finds out which and closes. */
	if (n == 0 || (n < 0 && n != -EAGAIN && n != -EINTR))
		*eof = true;
	if (n <= 0)
		return 0;
	gb_wire_init_messages(&w);
	switch (gb_wire_feed(&w, peek_buf, (size_t)n, &used, &reason)) {
	case GB_WIRE_HEADER:
		break;
	case GB_WIRE_BAD:
		conn_drop(cc, "it sent %s", reason);
		return -1;
	case GB_WIRE_TOO_BIG:
		conn_drop(cc, "it sent a message of %" PRIu64 " bytes (the most is %u)", w.size,
			  GB_WIRE_MAX_MESSAGE);
		return -1;
	default:
		/* Not even a whole header yet. */
		cc->wait_input = true;
		return 0;
	}
	/* Not all of it here yet: read as it comes, its bytes counted down. */
	if (w.size > (size_t)n && meter(cc, (int)w.size) < 0) {
		conn_drop(cc, "its socket has no peek offset: %m");
		return -1;
	}
	if (expect_push(cc, w.serial) < 0) {
		conn_drop(cc, "out of memory");
		return -1;
	}
	return 1;
}

static uint64_t queued_write(sd_bus *bus)
{
	uint64_t n = 0;

	(void)sd_bus_get_n_queued_write(bus, &n);
	return n;
}

/* Past BEGIN: from now on the socket is looked at from its head, once sd-bus has
 * read what was checked during the authentication (counted down meanwhile). */
static int conn_authenticated(ClientConn *cc)
{
	int left = 0, off;

	cc->ready = true;
	stall_arm(cc, false);
	if (gb_wire_at_boundary(&cc->wire)) {
		/* Only whole messages were checked: each is read whole in turn. */
		if (meter(cc, -1) < 0)
			goto fail;
		return 1;
	}
	/* Inside one: what was looked at and not yet read, and the rest of it. */
	off = peek_off_get(cc);
	if (off >= 0)
		left = off + (int)cc->wire.left;
	if (off < 0 || meter(cc, left) < 0)
		goto fail;
	return 1;
fail:
	conn_drop(cc, "its socket has no peek offset: %m");
	return -1;
}

/*
 * One step of the connection: look, then let sd-bus do one thing. 1: it did
 * something (another step may follow); 0: nothing more now; -1: the connection
 * or its Client is gone.
 */
static int conn_step(ClientConn *cc, uint32_t revents)
{
	sd_bus *bus = cc->bus;
	uint64_t out = queued_write(bus);
	size_t expected = cc->n_expect;
	bool eof = false, read;
	int r;

	cc->wait_input = false;
	if (sd_bus_is_open(bus) <= 0) {
		/* Closing: what is left is the Disconnected its filter takes. */
		r = sd_bus_process(bus, NULL);
		return r > 0 ? 1 : r < 0 ? -1 : 0;
	}
	if (!cc->ready) {
		r = look_auth(cc);
		if (r <= 0)
			return r;
	} else if (cc->n_expect == 0) {
		/* Replies wait for the peer: read no more of its calls until it takes
		 * them (the socket says so with EPOLLOUT). */
		if (out > 0 && !(revents & (EPOLLOUT | EPOLLHUP | EPOLLERR)))
			return 0;
		r = look_message(cc, &eof);
		if (r < 0)
			return -1;
		/* Part of a message: sd-bus would read it, and what follows, unchecked
		 * (even when it was only to write: what it cannot write whole, it reads
		 * after). The peer finishes its message first. */
		if (r == 0 && !eof && (cc->wait_input || out == 0))
			return 0;
	}
	r = sd_bus_process(bus, NULL);
	if (r < 0) {
		log_debug_errno(r, "private connection of %s failed, closing it: %m", cc->name);
		cc->broken(cc->broker, bus);
		return -1;
	}
	if (cc->violation) {
		conn_drop(cc, "it sent %s", cc->violation);
		return -1;
	}
	if (!cc->ready && sd_bus_is_ready(bus) > 0)
		return conn_authenticated(cc);
	if (!cc->ready)
		return r > 0 ? 1 : 0;
	/* Did sd-bus read a checked message and not hand it on? (Invalid: it drops such
	 * a message and reads on, unchecked.) Not if it only wrote. */
	read = r > 0 && cc->n_expect == expected && queued_write(bus) >= out && sd_bus_is_open(bus) > 0;
	if (cc->metered) {
		int left = peek_off_get(cc);

		if (cc->n_expect == 0 ? left != 0 : left == 0 && read) {
			conn_drop(cc, "it sent a message that is not valid D-Bus");
			return -1;
		}
		if (cc->n_expect == 0)
			(void)meter(cc, -1);
	} else if (expected > 0 && read) {
		conn_drop(cc, "it sent a message that is not valid D-Bus");
		return -1;
	}
	return r > 0 ? 1 : 0;
}

static uint32_t conn_events(ClientConn *cc)
{
	int ev = sd_bus_get_events(cc->bus);
	uint32_t e = 0;

	if (ev < 0)
		return 0;
	if (ev & POLLOUT)
		e |= EPOLLOUT;
	/* Waiting for the rest of a message that is there in part: the socket stays
	 * readable (and writable), so wake only when something changes. */
	if (cc->wait_input)
		return e | EPOLLIN | EPOLLET;
	/* Calls are read only once what went out before is taken: backpressure. */
	if ((ev & POLLIN) && !(cc->ready && queued_write(cc->bus) > 0))
		e |= EPOLLIN;
	return e;
}

static int on_stall(sd_event_source *s, uint64_t usec, void *userdata)
{
	ClientConn *cc = userdata;
	int unread = 0, waiting = 0;

	if (!cc->ready) {
		conn_drop(cc, "it did not authenticate within %" PRIu64 " ms",
			  cc->broker->stall_usec / 1000);
		return 0;
	}
	if (queued_write(cc->bus) == 0)
		return 0;
	(void)ioctl(conn_fd(cc), SIOCOUTQ, &unread);
	(void)ioctl(conn_fd(cc), SIOCINQ, &waiting);
	/* Slow, or busy elsewhere, but not piling up calls: it is the peer's own window
	 * of events that waits, and flow control bounds it. */
	if (waiting <= 0) {
		log_debug("private connection %u of %s: %d bytes unread for %" PRIu64
			  " ms, no calls waiting: kept", cc->index, cc->name, unread,
			  cc->broker->stall_usec / 1000);
		stall_arm(cc, true);
		return 0;
	}
	conn_drop(cc, "%d bytes of its replies and signals stayed unread for %" PRIu64
		  " ms while it kept sending calls", unread, cc->broker->stall_usec / 1000);
	return 0;
}

/* Armed while authenticating and while output waits (from when it began, or with
 * @p restart from now); off otherwise. */
static void stall_arm(ClientConn *cc, bool restart)
{
	bool want = !cc->ready || queued_write(cc->bus) > 0;
	int r;

	/* Freed when off: a thousand idle connections need no timers. */
	if (!want) {
		cc->stall = sd_event_source_disable_unref(cc->stall);
		return;
	}
	if (!cc->stall) {
		r = sd_event_add_time_relative(cc->broker->event, &cc->stall, CLOCK_MONOTONIC,
					       cc->broker->stall_usec, 0, on_stall, cc);
		if (r < 0) {
			log_warning_errno(r, "cannot time private connection of %s: %m", cc->name);
			return;
		}
	} else if (restart || sd_event_source_get_enabled(cc->stall, NULL) <= 0) {
		(void)sd_event_source_set_time_relative(cc->stall, cc->broker->stall_usec);
		(void)sd_event_source_set_enabled(cc->stall, SD_EVENT_ONESHOT);
	} else {
		return;
	}
	/* Armed from a fast callback: sd-event must see it before the loop sleeps. */
	loop_want_turn(cc->broker->loop);
}

static void conn_on_io(LoopIo *io, uint32_t revents, void *userdata)
{
	ClientConn *cc = userdata;
	Loop *l = io->loop;
	sd_bus *bus = sd_bus_ref(cc->bus);
	bool waited = cc->ready && queued_write(bus) > 0;
	bool took = revents & EPOLLOUT;

	/* One message per wake-up, as sd-bus under sd-event: more wait in the socket,
	 * which stays readable. What sd-bus has already read (after authentication)
	 * is handed on before the loop sleeps. */
	for (int i = 0; i < 64; i++) {
		size_t before = cc->n_expect;
		int r = conn_step(cc, revents);

		if (r < 0 || !loop_io_dispatching(l, io))
			break;
		if (r == 0 || (cc->ready && before <= 1 && cc->n_expect == 0 &&
			       sd_bus_is_open(bus) > 0 && !loop_bus_queued(bus)))
			break;
		revents &= ~(uint32_t)EPOLLOUT;
	}
	if (loop_io_dispatching(l, io)) {
		(void)loop_io_set_events(io, conn_events(cc));
		/* The peer took some of what waited: its time starts again. */
		stall_arm(cc, waited && took);
	}
	sd_bus_unref(bus);
}

int conn_start(ClientConn *cc, Broker *b, sd_bus *bus, const char *name, uid_t uid,
	       unsigned int index, conn_broken_fn broken)
{
	int fd = sd_bus_get_fd(bus), r;

	*cc = (ClientConn){ .broker = b, .name = name, .uid = uid, .index = index,
			    .broken = broken };
	/* sd-bus asks for 8 MiB (and gets it as root); the peer's unread output is
	 * bounded by this instead. The kernel doubles it. */
	if (setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &(int){ GB_CONN_SNDBUF }, sizeof(int)) < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_PEEK_OFF, &(int){ 0 }, sizeof(int)) < 0)
		return -errno;
	r = sd_bus_add_filter(bus, &cc->filter, conn_filter, cc);
	if (r < 0)
		return r;
	r = loop_io_add(b->loop, &cc->io, fd, EPOLLIN, conn_on_io, cc);
	if (r < 0) {
		cc->filter = sd_bus_slot_unref(cc->filter);
		return r;
	}
	cc->bus = sd_bus_ref(bus);
	(void)loop_io_set_events(&cc->io, conn_events(cc));
	stall_arm(cc, false);
	return 0;
}

void conn_stop(ClientConn *cc)
{
	loop_io_remove(&cc->io);
	cc->stall = sd_event_source_disable_unref(cc->stall);
	cc->filter = sd_bus_slot_unref(cc->filter);
	if (cc->bus) {
		/* No flush: a peer that does not read must not block the broker. */
		sd_bus_close(cc->bus);
		cc->bus = sd_bus_unref(cc->bus);
	}
	free(cc->expect);
	cc->expect = NULL;
	cc->n_expect = cc->expect_first = cc->expect_size = 0;
}

void conn_sent(ClientConn *cc)
{
	if (!loop_io_active(&cc->io))
		return;
	(void)loop_io_set_events(&cc->io, conn_events(cc));
	stall_arm(cc, false);
}
