/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A private connection in the hands of a peer that does not play by the rules
 * (gpiod-broker(8), LIMITS; core/conn.h): it pipelines calls with its
 * authentication, floods calls without reading a reply, sends a message too large
 * for the broker to read, or one that is not D-Bus. The broker answers what it
 * should, stays within its documented memory, drops the peer with a journal entry
 * naming it, and goes on serving everyone else; a peer that only reads slowly is
 * never dropped.
 *
 * The peers here write D-Bus by hand on the socket OpenConnection returns: sd-bus
 * would not send what they send.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"
#include "broker-calls.h"
#include "brokertest.h"
#include "bus-util.h"
#include "gpiosim.h"
#include "org.gpiodbroker1.h"
#include "procstat.h"
#include "testmain.h"
#include "timing.h"
#include "users.h"

#define LOG "/run/gb-test-hostile.log"
/* Flooding peers at once (docs/performance.md has the broker's RSS under them). */
#define FLOODERS 10
/* What gpiod-broker(8) says a private connection may cost the broker at most. */
#define CONN_BOUND_KIB 768

static const char *const names[3] = { "out", "button", NULL };
static struct gb_sim_chip *sim;
static const char *chip;
static pid_t broker;

/* The broker's stderr into LOG, to read what it says (async-signal-safe). */
static void log_to_file(void *userdata)
{
	int fd = open(LOG, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	if (fd >= 0) {
		dup2(fd, STDERR_FILENO);
		close(fd);
	}
}

static void start(const char *const *args)
{
	broker = gb_broker_spawn(&(struct gb_broker_opts){ .args = args, .child_setup = log_to_file });
}

static void setup(void)
{
	sim = gb_sim_chip_new("gbhostile", 2, names);
	ck_assert_ptr_nonnull(sim);
	chip = gb_sim_chip_name(sim);
	ck_assert_int_eq(gb_sim_set_pull(sim, 1, false), 0);
}

static void teardown(void)
{
	ck_assert_int_eq(gb_broker_stop(broker), 0);
	gb_sim_chip_free(sim);
}

/* How many lines of the broker's log hold @p needle. */
static int log_count(const char *needle)
{
	FILE *f = fopen(LOG, "re");
	char line[1024];
	int n = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		n += strstr(line, needle) != NULL;
	fclose(f);
	return n;
}

static bool wait_log(const char *needle, int count, int timeout_ms)
{
	long deadline = gb_deadline_ms(timeout_ms);

	while (log_count(needle) < count) {
		if (gb_now_ms() > deadline)
			return false;
		usleep(20000);
	}
	return true;
}

/* --- D-Bus by hand ------------------------------------------------------------- */

#define ALIGN(o, a) (((o) + (a) - 1) & ~(size_t)((a) - 1))

static size_t put_field(uint8_t *b, size_t o, uint8_t code, char type, const char *s)
{
	uint32_t len = strlen(s);

	memset(b + o, 0, ALIGN(o, 8) - o);
	o = ALIGN(o, 8);
	b[o++] = code;
	b[o++] = 1;
	b[o++] = type;
	b[o++] = 0;
	memcpy(b + o, &len, 4);
	o += 4;
	memcpy(b + o, s, len + 1);
	return o + len + 1;
}

/* A Peer.Ping method call numbered @p serial, little-endian, into @p b (256
 * bytes): its length. */
static size_t make_ping(uint8_t *b, uint32_t serial)
{
	uint32_t fields;
	size_t o;

	memset(b, 0, 256);
	b[0] = 'l';
	b[1] = 1; /* method call */
	b[3] = 1; /* protocol version */
	memcpy(b + 8, &serial, 4);
	o = put_field(b, 16, 1, 'o', "/");
	o = put_field(b, o, 2, 's', "org.freedesktop.DBus.Peer");
	o = put_field(b, o, 3, 's', "Ping");
	fields = o - 16;
	memcpy(b + 12, &fields, 4);
	return ALIGN(o, 8);
}

/* Manager.FindLine(@p name) numbered @p serial into @p b (big enough): its length. */
static size_t make_find_line(uint8_t *b, uint32_t serial, const char *name)
{
	uint32_t fields, len = strlen(name), body = 4 + len + 1;
	size_t o;

	memset(b, 0, 64);
	b[0] = 'l';
	b[1] = 1;
	b[3] = 1;
	memcpy(b + 4, &body, 4);
	memcpy(b + 8, &serial, 4);
	o = put_field(b, 16, 1, 'o', GB_ROOT_PATH);
	o = put_field(b, o, 2, 's', GB_IFACE_MANAGER);
	o = put_field(b, o, 3, 's', "FindLine");
	memset(b + o, 0, ALIGN(o, 8) - o);
	o = ALIGN(o, 8);
	b[o++] = 8; /* signature */
	b[o++] = 1;
	b[o++] = 'g';
	b[o++] = 0;
	b[o++] = 1;
	b[o++] = 's';
	b[o++] = 0;
	fields = o - 16;
	memcpy(b + 12, &fields, 4);
	memset(b + o, 0, ALIGN(o, 8) - o);
	o = ALIGN(o, 8);
	memcpy(b + o, &len, 4);
	memcpy(b + o + 4, name, len + 1);
	return o + body;
}

static const char auth[] = "\0AUTH ANONYMOUS 6c\r\nBEGIN\r\n";

/* A private connection of a new bus connection as @p uid: the raw socket, and the
 * bus connection (*@p bus), which must stay open (the client is its name). */
static int open_raw(uid_t uid, sd_bus **bus)
{
	sd_bus_error err = SD_BUS_ERROR_NULL;
	sd_bus_message *reply = NULL;
	int fd;

	*bus = gb_connect_bus(uid);
	ck_assert_msg(sd_bus_call_method(*bus, GB_BUS_NAME, GB_ROOT_PATH, GB_IFACE_MANAGER, "OpenConnection",
					 &err, &reply, "a{sv}", 0) >= 0, "%s", err.message);
	ck_assert_int_ge(sd_bus_message_read(reply, "h", &fd), 0);
	fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	ck_assert_int_ge(fd, 0);
	sd_bus_message_unref(reply);
	return fd;
}

/* Read into @p buf until it holds @p n bytes or @p timeout_ms passes; how many. */
static size_t read_some(int fd, uint8_t *buf, size_t n, int timeout_ms)
{
	long deadline = gb_deadline_ms(timeout_ms);
	size_t got = 0;

	while (got < n) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		long left = deadline - gb_now_ms();
		ssize_t k;

		if (left <= 0 || poll(&p, 1, (int)left) <= 0)
			break;
		k = read(fd, buf + got, n - got);
		if (k <= 0)
			break;
		got += (size_t)k;
	}
	return got;
}

/* The peer's end sees the broker close it within @p timeout_ms: EOF or a reset. */
static bool closed_by_broker(int fd, int timeout_ms)
{
	long deadline = gb_deadline_ms(timeout_ms);
	uint8_t buf[4096];

	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		long left = deadline - gb_now_ms();
		ssize_t k;

		if (left <= 0 || poll(&p, 1, (int)left) <= 0)
			return false;
		k = read(fd, buf, sizeof(buf));
		if (k == 0 || (k < 0 && errno != EAGAIN && errno != EINTR))
			return true;
	}
}

/* --- the tests ----------------------------------------------------------------- */

START_TEST(test_call_pipelined_with_begin_is_answered)
{
	uint8_t msg[512], reply[512];
	sd_bus *bus;
	size_t n, got;
	char *ok;
	int fd;

	start(NULL);
	fd = open_raw(UID_ALICE, &bus);
	/* The authentication and a call in one write, as the D-Bus specification
	 * allows: sd-bus reads the call together with BEGIN. */
	memcpy(msg, auth, sizeof(auth) - 1);
	n = sizeof(auth) - 1 + make_ping(msg + sizeof(auth) - 1, 1);
	ck_assert_int_eq(write(fd, msg, n), (ssize_t)n);
	/* "OK <guid>\r\n", then the reply: nothing else comes first. */
	got = read_some(fd, reply, 37 + 16, 5000 * gb_slow());
	ck_assert_uint_ge(got, 37);
	ok = memmem(reply, got, "\r\n", 2);
	ck_assert_ptr_nonnull(ok);
	ck_assert_msg(got >= (size_t)((uint8_t *)ok + 2 - reply) + 16, "the pipelined call was not answered");
	ck_assert_int_eq(((uint8_t *)ok)[2 + 1], 2); /* a method return */
	close(fd);
	sd_bus_flush_close_unref(bus);
}
END_TEST

/* The next message on @p fd, read whole: its type (2 return, 3 error), -1 if
 * none comes. (One call in flight at a time: a reply is to it.) */
static int read_reply(int fd)
{
	static uint8_t rest[256 * 1024];
	uint32_t fields, body;
	uint8_t h[16];
	size_t n;

	if (read_some(fd, h, 16, 5000 * gb_slow()) < 16)
		return -1;
	memcpy(&body, h + 4, 4);
	memcpy(&fields, h + 12, 4);
	n = ALIGN(fields, 8) + body;
	ck_assert_uint_le(n, sizeof(rest));
	ck_assert_uint_eq(read_some(fd, rest, n, 5000 * gb_slow()), n);
	return h[1];
}

START_TEST(test_large_calls_in_pieces_are_answered)
{
	static uint8_t msg[200000];
	static char name[150000];
	uint8_t ok[64];
	sd_bus *bus;
	size_t n, half;
	int fd;

	start(NULL);
	memset(name, 'x', sizeof(name) - 1);
	fd = open_raw(UID_ALICE, &bus);
	/* A large call right after BEGIN, its first half with the authentication:
	 * sd-bus reads into it while it authenticates, the rest comes later. */
	memcpy(msg, auth, sizeof(auth) - 1);
	n = sizeof(auth) - 1 + make_find_line(msg + sizeof(auth) - 1, 1, name);
	half = sizeof(auth) - 1 + 3000;
	ck_assert_int_eq(write(fd, msg, half), (ssize_t)half);
	ck_assert_uint_eq(read_some(fd, ok, 37, 5000 * gb_slow()), 37);
	ck_assert_int_eq(write(fd, msg + half, n - half), (ssize_t)(n - half));
	/* No such line: an error, and an answer all the same. */
	ck_assert_int_eq(read_reply(fd), 3);
	/* And one that comes in pieces once running. */
	n = make_find_line(msg, 2, name);
	for (size_t off = 0; off < n; off += 40000) {
		size_t k = n - off < 40000 ? n - off : 40000;

		ck_assert_int_eq(write(fd, msg + off, k), (ssize_t)k);
		usleep(20000);
	}
	ck_assert_int_eq(read_reply(fd), 3);
	ck_assert_int_eq(log_count("dropping private connection"), 0);
	/* One that is not D-Bus (padding that is not zero), in pieces: dropped
	 * once sd-bus has read it all. */
	n = make_find_line(msg, 3, name);
	msg[42] = 1; /* after the path, before the interface */
	for (size_t off = 0; off < n; off += 40000) {
		size_t k = n - off < 40000 ? n - off : 40000;

		ck_assert_int_eq(write(fd, msg + off, k), (ssize_t)k);
		usleep(20000);
	}
	ck_assert_msg(closed_by_broker(fd, 5000 * gb_slow()), "the broker kept the connection");
	ck_assert(wait_log("not valid D-Bus", 1, 5000));
	sd_bus_flush_close_unref(bus);
}
END_TEST

/* A peer that writes pings as fast as the socket takes them and never reads: 0 if
 * the broker ended its connection within @p timeout_ms, 1 if not. */
static int flood(uid_t uid, int timeout_ms)
{
	long deadline = gb_deadline_ms(timeout_ms);
	uint8_t msg[256];
	uint32_t serial = 1;
	sd_bus *bus;
	int fd = open_raw(uid, &bus);

	fcntl(fd, F_SETFL, O_NONBLOCK);
	if (write(fd, auth, sizeof(auth) - 1) != sizeof(auth) - 1)
		return 1;
	while (gb_now_ms() < deadline) {
		size_t n = make_ping(msg, serial);
		ssize_t k = send(fd, msg, n, MSG_NOSIGNAL);

		if (k == (ssize_t)n) {
			serial++;
			continue;
		}
		if (k < 0 && errno != EAGAIN)
			return 0; /* the broker closed it */
		if (k > 0) {
			/* Part of a message: the rest, whatever it takes. */
			struct pollfd p = { .fd = fd, .events = POLLOUT };

			while (k < (ssize_t)n && poll(&p, 1, 100) >= 0) {
				ssize_t more = send(fd, msg + k, n - k, MSG_NOSIGNAL);

				if (more < 0 && errno != EAGAIN)
					return 0;
				if (more > 0)
					k += more;
				if (gb_now_ms() > deadline)
					return 1;
			}
			serial++;
			continue;
		}
		/* Full: the broker reads no more of it. Did it hang up? */
		{
			struct pollfd p = { .fd = fd, .events = POLLOUT };

			if (poll(&p, 1, 100) > 0 && (p.revents & (POLLHUP | POLLERR)))
				return 0;
		}
	}
	return 1;
}

START_TEST(test_flood_throttled_then_dropped)
{
	sd_bus *root, *honest, *hbus;
	sd_bus_error err = SD_BUS_ERROR_NULL;
	pid_t kids[FLOODERS];
	long idle, peak = 0;
	char *path = NULL;
	char spec[64];
	int served = 0;

	start(GB_ARGS("--stall-timeout=3"));
	root = gb_connect_bus(0);
	/* Someone who plays by the rules, on a private connection of its own. */
	hbus = gb_connect_bus(UID_BOB);
	honest = gb_open_p2p(hbus);
	snprintf(spec, sizeof(spec), "%s:0", chip);
	ck_assert_msg(gb_request(honest, "honest", spec, "output", 0, NULL, false, &path, &err) >= 0,
		      "%s", err.message);
	idle = gb_proc_rss_kib(broker);
	ck_assert_int_gt(idle, 0);

	for (int k = 0; k < FLOODERS; k++) {
		kids[k] = fork();
		ck_assert_int_ge(kids[k], 0);
		if (kids[k] == 0) {
			gb_test_child_unreported();
			_exit(flood(UID_ALICE, 60000 * gb_slow()));
		}
	}
	/* While they flood, the honest one is answered, and the broker's memory stays
	 * within its bound. */
	while (log_count("dropping private connection") < FLOODERS) {
		long rss = gb_proc_rss_kib(broker);

		if (rss > peak)
			peak = rss;
		ck_assert_msg(gb_set_value(honest, path, 0, served % 2, &err) >= 0, "%s", err.message);
		ck_assert_int_eq(gb_sim_get_value(sim, 0), served % 2);
		served++;
		ck_assert_msg(served < 100000, "the flooders were not dropped");
		usleep(20000);
	}
	for (int k = 0; k < FLOODERS; k++) {
		int status;

		ck_assert_int_eq(waitpid(kids[k], &status, 0), kids[k]);
		ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
			      "flooder %d was not dropped (status %d)", k, status);
	}
	printf("# broker RSS idle %ld KiB, at most %ld KiB under %d flooding peers; %d honest calls served\n",
	       idle, peak, FLOODERS, served);
	/* (Under valgrind the broker's RSS is valgrind's.) */
	ck_assert_msg(getenv("GB_TEST_VALGRIND") || peak - idle <= FLOODERS * CONN_BOUND_KIB,
		      "RSS grew by %ld KiB under %d flooders (bound %d KiB each)", peak - idle, FLOODERS,
		      CONN_BOUND_KIB);
	/* Each drop is in the journal with the peer's uid, and says why. */
	ck_assert_int_eq(log_count("(uid 60001): "), FLOODERS);
	ck_assert_int_eq(log_count("stayed unread for 3000 ms while it kept sending calls"), FLOODERS);
	/* And the honest one was never touched. */
	ck_assert_int_eq(gb_get_value(honest, path, 0, &err), (served - 1) % 2);
	free(path);
	sd_bus_flush_close_unref(honest);
	sd_bus_flush_close_unref(hbus);
	sd_bus_flush_close_unref(root);
}
END_TEST

START_TEST(test_slow_reader_is_kept)
{
	sd_bus *bus, *p2p;
	sd_bus_error err = SD_BUS_ERROR_NULL;
	char spec[64];
	int n = 0;

	/* A wide window: edges enough to fill the socket while it reads nothing. */
	start(GB_ARGS("--stall-timeout=1", "--event-window=4096", "--log-level=debug"));
	bus = gb_connect_bus(UID_ALICE);
	p2p = gb_open_p2p(bus);
	snprintf(spec, sizeof(spec), "%s:1", chip);
	ck_assert_msg(gb_request(p2p, "slow", spec, "input", -1, "both", false, NULL, &err) >= 0, "%s",
		      err.message);
	/* Edges until the broker has output it cannot send, then past its timeout:
	 * it looks, sees no calls waiting, and keeps the connection. */
	while (log_count("no calls waiting: kept") == 0) {
		ck_assert_int_eq(gb_sim_set_pull(sim, 1, n % 2 == 0), 0);
		ck_assert_msg(++n < 20000, "the broker never found its output waiting");
		usleep(11000);
	}
	ck_assert_int_eq(log_count("dropping private connection"), 0);
	/* It reads at last: the connection is alive and answers. */
	ck_assert_msg(gb_ping(p2p, &err) >= 0, "%s", err.message);
	ck_assert_int_eq(log_count("dropping private connection"), 0);
	sd_bus_flush_close_unref(p2p);
	sd_bus_flush_close_unref(bus);
}
END_TEST

/* A peer that sends @p what after authenticating is dropped with @p why in the log. */
static void dropped_for(const uint8_t *what, size_t n, const char *why)
{
	uint8_t msg[1024];
	sd_bus *bus;
	long before;
	int fd;

	start(NULL);
	fd = open_raw(UID_ALICE, &bus);
	before = gb_proc_rss_kib(broker);
	memcpy(msg, auth, sizeof(auth) - 1);
	memcpy(msg + sizeof(auth) - 1, what, n);
	ck_assert_int_eq(write(fd, msg, sizeof(auth) - 1 + n), (ssize_t)(sizeof(auth) - 1 + n));
	ck_assert_msg(closed_by_broker(fd, 5000 * gb_slow()), "the broker kept the connection");
	ck_assert_msg(wait_log(why, 1, 5000), "no log line saying '%s'", why);
	ck_assert_int_eq(log_count("(uid 60001): "), 1);
	ck_assert(getenv("GB_TEST_VALGRIND") || gb_proc_rss_kib(broker) - before <= 256);
	close(fd);
	sd_bus_flush_close_unref(bus);
}

START_TEST(test_oversized_message_dropped)
{
	uint8_t msg[256];
	uint32_t body = 64u << 20;
	size_t n = make_ping(msg, 1);

	/* A body of 64 MiB announced, a few bytes of it sent. */
	memcpy(msg + 4, &body, 4);
	dropped_for(msg, n + 64, "it sent a message of 67108");
}
END_TEST

START_TEST(test_garbage_dropped)
{
	const uint8_t junk[32] = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";

	dropped_for(junk, sizeof(junk), "a message with an unknown byte order");
}
END_TEST

START_TEST(test_fds_dropped)
{
	uint8_t msg[256];
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int))];
	} control = { 0 };
	struct iovec iov = { .iov_base = msg, .iov_len = make_ping(msg, 1) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = &control,
			     .msg_controllen = sizeof(control) };
	struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
	int fd, null, fds;
	sd_bus *bus;

	/* No method takes an fd: one that comes with a message ends the connection,
	 * and none stays open in the broker (libsystemd 252 would keep those of a
	 * message it drops). */
	start(NULL);
	fd = open_raw(UID_ALICE, &bus);
	fds = gb_proc_fd_count(broker);
	ck_assert_int_eq(write(fd, auth, sizeof(auth) - 1), (ssize_t)(sizeof(auth) - 1));
	null = open("/dev/null", O_RDONLY | O_CLOEXEC);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &null, sizeof(int));
	ck_assert_int_eq(sendmsg(fd, &mh, 0), (ssize_t)iov.iov_len);
	close(null);
	ck_assert_msg(closed_by_broker(fd, 5000 * gb_slow()), "the broker kept the connection");
	ck_assert(wait_log("it sent file descriptors", 1, 5000));
	/* Its end of the connection is gone too. */
	ck_assert_int_le(gb_proc_fd_count(broker), fds - 1);
	close(fd);
	sd_bus_flush_close_unref(bus);
}
END_TEST

START_TEST(test_invalid_message_dropped)
{
	uint8_t msg[256];
	size_t n = make_ping(msg, 1);
	uint8_t *member = memmem(msg, n, "\3\1s", 3);

	/* A well-framed message whose header fields are not D-Bus: its member is
	 * typed as a number (sd-bus reads it whole, then refuses it). */
	ck_assert_ptr_nonnull(member);
	member[2] = 'u';
	dropped_for(msg, n, "not valid D-Bus");
}
END_TEST

int main(int argc, char **argv)
{
	Suite *s = suite_create("p2p-hostile");
	TCase *tc;

	gb_bench_enter(argc, argv);
	tc = gb_tcase_new(s, "hostile", setup, teardown, 120 * gb_slow());
	tcase_add_test(tc, test_call_pipelined_with_begin_is_answered);
	tcase_add_test(tc, test_large_calls_in_pieces_are_answered);
	tcase_add_test(tc, test_oversized_message_dropped);
	tcase_add_test(tc, test_garbage_dropped);
	tcase_add_test(tc, test_invalid_message_dropped);
	tcase_add_test(tc, test_fds_dropped);
	tcase_add_test(tc, test_slow_reader_is_kept);
	tcase_add_test(tc, test_flood_throttled_then_dropped);
	return gb_run_suite(s);
}
