/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Manager.OpenConnection(): a private peer-to-peer D-Bus connection to the broker,
 * one hop instead of two through the bus daemon.
 *
 * The broker makes a socketpair, serves its end as an sd-bus server in its loop
 * with the same objects as on the bus (through one filter,
 * p2p-dispatch.c), and hands the other end to the caller. Nothing on that socket
 * can tell who is at the far end (SO_PEERCRED of a socketpair names the broker,
 * and PrivateUsers= would map a foreign uid to nobody anyway), so the connection is bound once, here, to the caller as the bus daemon
 * recorded it: it belongs to the caller's Client (core/client.h) and acts with its
 * uid and groups for as long as it is open. Authentication on the socket is
 * therefore anonymous: whoever holds the fd is that client.
 */

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <systemd/sd-id128.h>

#include "bus-error.h"
#include "broker.h"
#include "bus.h"
#include "client.h"
#include "log.h"
#include "macro.h"
#include "org.gpiodbroker1.h"

/*
 * No method takes an fd, and libsystemd 252 leaves open the fds that come with a
 * message it drops as malformed: a peer could fill the broker's fd table. Where the
 * kernel can refuse fds on this socket (SO_PASSRIGHTS, Linux 6.16), the peer's
 * sendmsg() with fds fails (EPERM) and none reach the broker; older kernels say
 * ENOPROTOOPT and pass them on.
 */
static void refuse_fds(int fd)
{
#ifdef SO_PASSRIGHTS
	int no = 0;

	if (setsockopt(fd, SOL_SOCKET, SO_PASSRIGHTS, &no, sizeof(no)) < 0 && errno != ENOPROTOOPT)
		log_debug_errno(errno, "cannot refuse fds on a private connection: %m");
#endif
}

/* A started server connection for @p c on @p fd, serving every object. */
static int new_server(Broker *b, Client *c, int fd, sd_bus **ret)
{
	sd_bus *bus = NULL;
	const char *unique = NULL;
	sd_id128_t id;
	int r;

	refuse_fds(fd);
	r = sd_id128_randomize(&id);
	if (r >= 0)
		r = sd_bus_new(&bus);
	if (r >= 0)
		r = sd_bus_set_fd(bus, fd, fd);
	if (r >= 0)
		r = sd_bus_set_server(bus, 1, id);
	/* Named after its client: how its calls find their Client (client_get()). */
	if (r >= 0)
		r = sd_bus_set_description(bus, c->name);
	/* The identity was bound at open time (see the top of this file). */
	if (r >= 0)
		r = sd_bus_set_anonymous(bus, 1);
	/* What the broker sends carries its bus name, as on the bus: clients that check
	 * the sender of a signal need not know which way it came. */
	if (r >= 0 && sd_bus_get_unique_name(b->bus, &unique) >= 0)
		r = sd_bus_set_sender(bus, unique);
	if (r >= 0)
		r = bus_p2p_serve(b, bus);
	/* Not attached to sd-event: its Client runs its I/O on the loop's short way
	 * (client.h), and closes it without a flush when it ends. */
	if (r >= 0)
		r = sd_bus_start(bus);
	if (r < 0) {
		if (bus) {
			sd_bus_close(bus);
			sd_bus_unref(bus);
		} else {
			close(fd);
		}
		return r;
	}
	*ret = bus;
	return 0;
}

int bus_p2p_open(Broker *b, Client *c, int fd)
{
	sd_bus *bus = NULL;
	int r;

	r = new_server(b, c, fd, &bus);
	if (r < 0)
		return r;
	r = client_add_conn(c, bus, bus_p2p_closed);
	if (r < 0)
		sd_bus_close(bus);
	sd_bus_unref(bus); /* the Client holds it */
	return r;
}

int method_open_connection(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
	Broker *b = userdata;
	Client *c;
	int r, sv[2];

	r = bus_read_no_options(m, "OpenConnection", error);
	if (r < 0)
		return r;
	r = client_get(b, m, &c, error);
	if (r < 0)
		return r;
	if (c->n_conns >= GB_MAX_CONNECTIONS_PER_CLIENT)
		return gb_bus_error_setf(error, GB_ERROR_LIMITS_EXCEEDED,
					 "%s already has %u private connections, the most a client may "
					 "hold; closing any of them ends the client and releases all it "
					 "holds, so use one of them instead of opening another",
					 c->name, GB_MAX_CONNECTIONS_PER_CLIENT);
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return sd_bus_error_set_errnof(error, errno, "cannot make a socket pair: %m");
	r = bus_p2p_open(b, c, sv[0]);
	if (r < 0) {
		close(sv[1]);
		log_warning_errno(r, "cannot open a private connection for %s: %m", c->name);
		return sd_bus_error_set_errnof(error, -r, "cannot open a private connection: %s",
					       strerror(-r));
	}
	log_debug("client %s (uid %u) opened private connection %u", c->name, (unsigned)c->uid,
		  c->n_conns);
	/* The reply carries a copy of the fd; ours goes. */
	r = sd_bus_reply_method_return(m, "h", sv[1]);
	close(sv[1]);
	return r;
}
