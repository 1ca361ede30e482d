/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The seed corpus of tests/fuzz/fuzz-p2p: real calls to the broker's objects, as
 * sd-bus writes them on a private connection. Each seed is a new sd-bus client
 * connection on a socketpair whose other end answers the handshake and keeps the
 * bytes of the messages; a seed file is fuzz-p2p's control byte (see there) and
 * those bytes. Every seed is written twice: messages after the handshake's answer,
 * and pipelined with the handshake (calls right behind BEGIN, as GDBus or libdbus
 * may send them).
 *
 *   fuzz-p2p-seeds DIR      (run-fuzz.sh p2p runs it)
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <systemd/sd-bus.h>

#include "org.gpiodbroker1.h"
#include "p2p-wire.h"

#define CTL_ROOT      8
#define CTL_PIPELINED 16

#define MANAGER GB_ROOT_PATH, GB_IFACE_MANAGER
#define PROPS "org.freedesktop.DBus.Properties"
#define REQ GB_REQUEST_PREFIX "/1", GB_IFACE_REQUEST
#define LINE3 GB_CHIP_PREFIX "/gpiochip0/line3"

struct wire {
	sd_bus *bus;
	int fd;            /* the far end, where the bytes arrive */
	unsigned int fds;  /* fds that came with them */
};

static const char *dir;
static unsigned int n_written;

static void die(const char *what, int r)
{
	fprintf(stderr, "fuzz-p2p-seeds: %s: %s\n", what, strerror(r < 0 ? -r : r));
	exit(EXIT_FAILURE);
}

static void check(int r, const char *what)
{
	if (r < 0)
		die(what, r);
}

static void wire_open(struct wire *w)
{
	/* What a server that accepts the client says: sd-bus sent its whole handshake. */
	static const char answer[] = "OK 00112233445566778899aabbccddeeff\r\nAGREE_UNIX_FD\r\n";
	int sv[2];

	*w = (struct wire){ .fd = -1 };
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		die("socketpair", errno);
	w->fd = sv[1];
	check(sd_bus_new(&w->bus), "sd_bus_new");
	check(sd_bus_set_fd(w->bus, sv[0], sv[0]), "sd_bus_set_fd");
	check(sd_bus_set_anonymous(w->bus, 1), "sd_bus_set_anonymous");
	check(sd_bus_negotiate_fds(w->bus, 1), "sd_bus_negotiate_fds");
	check(sd_bus_start(w->bus), "sd_bus_start");
	if (write(w->fd, answer, sizeof(answer) - 1) != (ssize_t)sizeof(answer) - 1)
		die("write", errno);
}

/* A call of @p member with arguments of signature @p types, as sd_bus_message_append(). */
static sd_bus_message *new_call(struct wire *w, const char *path, const char *iface,
				const char *member, const char *types, va_list ap)
{
	sd_bus_message *m = NULL;

	check(sd_bus_message_new_method_call(w->bus, &m, NULL, path, iface, member), member);
	if (types)
		check(sd_bus_message_appendv(m, types, ap), member);
	return m;
}

static void send_message(struct wire *w, sd_bus_message *m)
{
	check(sd_bus_send(w->bus, m, NULL), "sd_bus_send");
	sd_bus_message_unref(m);
}

static void call(struct wire *w, const char *path, const char *iface, const char *member,
		 const char *types, ...)
{
	va_list ap;

	va_start(ap, types);
	send_message(w, new_call(w, path, iface, member, types, ap));
	va_end(ap);
}

/* The same, with no reply expected. */
static void call_no_reply(struct wire *w, const char *path, const char *iface,
			  const char *member, const char *types, ...)
{
	sd_bus_message *m;
	va_list ap;

	va_start(ap, types);
	m = new_call(w, path, iface, member, types, ap);
	va_end(ap);
	check(sd_bus_message_set_expect_reply(m, 0), member);
	send_message(w, m);
}

static void count_fd(int fd, void *userdata)
{
	struct wire *w = userdata;

	close(fd);
	w->fds++;
}

/* Everything sd-bus wrote after the handshake, and the fds it passed. */
static size_t wire_take(struct wire *w, char **ret)
{
	char *all = NULL, *begin, buf[4096];
	size_t len = 0;
	ssize_t k;

	check(sd_bus_flush(w->bus), "sd_bus_flush");
	while ((k = p2p_wire_recv(w->fd, buf, sizeof(buf), count_fd, w)) > 0) {
		char *n = realloc(all, len + k);

		if (!n)
			die("realloc", ENOMEM);
		all = n;
		memcpy(all + len, buf, k);
		len += k;
	}
	begin = all ? memmem(all, len, "BEGIN\r\n", 7) : NULL;
	if (!begin)
		die("no handshake from sd-bus", EPROTO);
	len -= begin + 7 - all;
	memmove(all, begin + 7, len);
	*ret = all;
	return len;
}

static void write_file(const char *name, unsigned int ctl, const char *bytes, size_t len)
{
	char path[4096];
	unsigned char c = ctl;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s%s", dir, name, ctl & CTL_PIPELINED ? "-pipelined" : "");
	f = fopen(path, "we");
	if (!f || fwrite(&c, 1, 1, f) != 1 || fwrite(bytes, 1, len, f) != len || fclose(f) != 0)
		die(path, errno);
	n_written++;
}

/* Close @p w, writing what it carried as seed @p name (both ways), with @p ctl's
 * flags and as many fds as went with the messages (the most fuzz-p2p sends is 7). */
static void seed(struct wire *w, const char *name, unsigned int ctl)
{
	char *bytes;
	size_t len = wire_take(w, &bytes);

	ctl |= w->fds < 7 ? w->fds : 7;
	write_file(name, ctl, bytes, len);
	write_file(name, ctl | CTL_PIPELINED, bytes, len);
	free(bytes);
	sd_bus_flush_close_unref(w->bus);
	close(w->fd);
}

static void seed_peer(void)
{
	struct wire w;

	wire_open(&w);
	call(&w, GB_ROOT_PATH, "org.freedesktop.DBus.Peer", "Ping", NULL);
	call(&w, "/", "org.freedesktop.DBus.Peer", "GetMachineId", NULL);
	seed(&w, "peer", 0);
}

static void seed_properties(void)
{
	struct wire w;

	wire_open(&w);
	call(&w, GB_ROOT_PATH, PROPS, "Get", "ss", GB_IFACE_MANAGER, "Version");
	call(&w, GB_ROOT_PATH, PROPS, "Get", "ss", GB_IFACE_MANAGER, "PolicyStatus");
	call(&w, GB_ROOT_PATH, PROPS, "Get", "ss", GB_IFACE_MANAGER, "NoSuchProperty");
	call(&w, GB_ROOT_PATH, PROPS, "GetAll", "s", GB_IFACE_MANAGER);
	call(&w, GB_ROOT_PATH, PROPS, "GetAll", "s", "");
	call(&w, GB_ROOT_PATH, PROPS, "Set", "ssv", GB_IFACE_MANAGER, "EventWindow", "u", 4);
	call(&w, GB_CHIP_PREFIX "/gpiochip0", PROPS, "GetAll", "s", GB_IFACE_CHIP);
	call(&w, LINE3, PROPS, "Get", "ss", GB_IFACE_LINE, "Consumer");
	call(&w, GB_REQUEST_PREFIX "/1", PROPS, "GetAll", "s", GB_IFACE_REQUEST);
	call(&w, GB_WATCH_PREFIX "/1", PROPS, "Get", "ss", GB_IFACE_WATCH, "Line");
	seed(&w, "properties", 0);
}

static void add_request(struct wire *w, const char *options_key, int option)
{
	call(w, MANAGER, "Request", "sa(sa{sv})a{sv}", "door-ctl", 3,
	     "door-lock", 2, "direction", "s", "output", "value", "b", 1,
	     "gpiochip0:3", 6, "direction", "s", "input", "edge", "s", "both", "bias", "s",
	     "pull-up", "debounce-us", "u", 1000, "active-low", "b", 1, "event-clock", "s",
	     "realtime",
	     LINE3, 1, "drive", "s", "open-drain",
	     1, options_key, "b", option);
}

static void seed_request(void)
{
	struct wire w;

	wire_open(&w);
	add_request(&w, "persistent", 1);
	seed(&w, "request", 0);
	wire_open(&w);
	add_request(&w, "direct", 1);
	seed(&w, "request-direct-root", CTL_ROOT);
	wire_open(&w);
	call(&w, MANAGER, "Request", "sa(sa{sv})a{sv}", "", 0, 0);
	call(&w, MANAGER, "Request", "sa(sa{sv})a{sv}", "x", 1, "motors", 1, "bogus", "u", 1,
	     1, "persistent", "s", "yes");
	call(&w, MANAGER, "Request", "sa(sa{sv})a{sv}", "x", 1, "pca9555:0", 0, 2,
	     "persistent", "b", 1, "direct", "b", 1);
	seed(&w, "request-invalid", 0);
}

static void seed_request_object(void)
{
	struct wire w;

	wire_open(&w);
	call(&w, REQ, "GetValues", "au", 2, 0, 1);
	call(&w, REQ, "SetValues", "a(ub)", 2, 0, 1, 1, 0);
	call(&w, REQ, "SetDirectionInput", "au", 1, 0);
	call(&w, REQ, "SetDirectionOutput", "a(ub)", 1, 0, 1);
	call(&w, REQ, "Reconfigure", "a(ua{sv})", 1, 0, 1, "bias", "s", "pull-down");
	call(&w, REQ, "Subscribe", NULL);
	call(&w, REQ, "Ack", "t", (uint64_t)256);
	call(&w, REQ, "GetLineFds", NULL);
	call(&w, REQ, "Release", NULL);
	seed(&w, "request-object", 0);
}

static void seed_watch(void)
{
	struct wire w;

	wire_open(&w);
	call(&w, MANAGER, "Watch", "sa{sv}", "door-sensor", 0);
	call(&w, MANAGER, "Watch", "sa{sv}", "gpiochip0:1", 1, "initial-state", "b", 0);
	call(&w, GB_WATCH_PREFIX "/1", GB_IFACE_WATCH, "Ack", "t", (uint64_t)1);
	call(&w, GB_WATCH_PREFIX "/1", GB_IFACE_WATCH, "Close", NULL);
	seed(&w, "watch", 0);
}

static void seed_lookup(void)
{
	struct wire w;

	wire_open(&w);
	call(&w, MANAGER, "FindLine", "s", "DOOR_SENSOR");
	call(&w, MANAGER, "FindLine", "s", "gpiochip0:3");
	call(&w, MANAGER, "FindLine", "s", LINE3);
	call(&w, MANAGER, "FindLine", "s", "gpiochip0:");
	call(&w, MANAGER, "GetAccess", "s", "door-lock");
	call(&w, MANAGER, "ListRequests", NULL);
	seed(&w, "lookup", 0);
}

static void seed_connections(void)
{
	struct wire w;

	wire_open(&w);
	call(&w, MANAGER, "OpenConnection", "a{sv}", 0);
	call(&w, GB_ROOT_PATH, "org.freedesktop.DBus.Peer", "Ping", NULL);
	seed(&w, "open-connection", 0);
	wire_open(&w);
	for (int i = 0; i < 4; i++)
		call(&w, MANAGER, "OpenConnection", "a{sv}", 0);
	call(&w, MANAGER, "OpenConnection", "a{sv}", 1, "bogus", "b", 1);
	seed(&w, "open-connection-limit", 0);
}

static void seed_reload(void)
{
	struct wire w;

	wire_open(&w);
	call(&w, MANAGER, "ReloadPolicy", NULL);
	call(&w, GB_ROOT_PATH, PROPS, "Get", "ss", GB_IFACE_MANAGER, "PolicyStatus");
	seed(&w, "reload-root", CTL_ROOT);
	wire_open(&w);
	call(&w, MANAGER, "ReloadPolicy", NULL);
	seed(&w, "reload-user", 0);
}

static void seed_invalid(void)
{
	sd_bus_message *m;
	struct wire w;
	int fd;

	/* Wrong signatures, an fd where none belongs, no reply wanted. */
	wire_open(&w);
	call(&w, MANAGER, "FindLine", "u", 3);
	call(&w, MANAGER, "Request", "s", "x");
	fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		die("/dev/null", errno);
	call(&w, MANAGER, "FindLine", "h", fd);
	close(fd);
	call(&w, GB_ROOT_PATH, "org.freedesktop.DBus.Peer", "Ping", "s", "x");
	call_no_reply(&w, MANAGER, "ListRequests", NULL);
	call_no_reply(&w, MANAGER, "FindLine", "s", "door-lock");
	seed(&w, "signatures", 0);

	/* What a private connection does not serve, and what nobody has. */
	wire_open(&w);
	call(&w, GB_ROOT_PATH, "org.freedesktop.DBus.Introspectable", "Introspect", NULL);
	call(&w, GB_ROOT_PATH, "org.freedesktop.DBus.ObjectManager", "GetManagedObjects", NULL);
	call(&w, GB_ROOT_PATH, "org.example.NoSuchInterface", "Frob", NULL);
	call(&w, GB_ROOT_PATH, NULL, "FindLine", "s", "x");
	call(&w, "/org/example", GB_IFACE_MANAGER, "ListRequests", NULL);
	call(&w, GB_ROOT_PATH, PROPS, "Frob", NULL);
	call(&w, GB_REQUEST_PREFIX "/x", GB_IFACE_REQUEST, "Release", NULL);
	call(&w, GB_CHIP_PREFIX "/gpiochip0/line99999999999", GB_IFACE_LINE, "Release", NULL);
	seed(&w, "unknown", 0);

	/* Messages that are not calls: a signal, a reply and an error nobody asked for. */
	wire_open(&w);
	check(sd_bus_message_new_signal(w.bus, &m, GB_ROOT_PATH, GB_IFACE_MANAGER, "Event"),
	      "signal");
	send_message(&w, m);
	m = NULL;
	check(sd_bus_message_new_method_call(w.bus, &m, NULL, GB_ROOT_PATH, GB_IFACE_MANAGER,
					     "ListRequests"), "call");
	check(sd_bus_message_seal(m, 77, 0), "seal");
	{
		sd_bus_message *reply = NULL, *err = NULL;

		check(sd_bus_message_new_method_return(m, &reply), "return");
		check(sd_bus_message_append(reply, "o", GB_ROOT_PATH), "return");
		send_message(&w, reply);
		check(sd_bus_message_new_method_errorf(m, &err, GB_ERROR_FAILED, "nobody asked"),
		      "error");
		send_message(&w, err);
	}
	sd_bus_message_unref(m);
	seed(&w, "not-calls", 0);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s DIR\n", argv[0]);
		return EXIT_FAILURE;
	}
	dir = argv[1];
	seed_peer();
	seed_properties();
	seed_request();
	seed_request_object();
	seed_watch();
	seed_lookup();
	seed_connections();
	seed_reload();
	seed_invalid();
	printf("%u seeds in %s\n", n_written, dir);
	return EXIT_SUCCESS;
}
