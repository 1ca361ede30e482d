/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libFuzzer target for the private connection (bus/p2p-bus.c, bus/p2p-dispatch.c):
 * whatever the holder of an OpenConnection fd writes must give replies and named
 * errors, or a closed connection, never a crash, a leak, undefined behaviour, a
 * call left unanswered or a client outliving its connection.
 *
 * The broker is the daemon's own code, built with the fuzzer: a Broker with a
 * policy (written here) and no chips, so lookups fail with their named errors;
 * its bus connection is never connected (what the broker says on the bus, such as
 * PropertiesChanged, fails as it does once the bus has gone). Each input gets a
 * new Client and a private connection made as OpenConnection makes one
 * (bus_p2p_open()), on one end of a socketpair, run by the broker's own loop and
 * client.c; the input is written into the other end after the SASL handshake that
 * sd-bus clients send.
 *
 * Input: byte 0 says how the peer behaves, the rest is raw D-Bus messages.
 *   bits 0-2  so many fds of /dev/null go with the messages (SCM_RIGHTS)
 *   bit 3     the caller is root (else uid and group 60100)
 *   bit 4     handshake and messages in one go (else the messages follow the
 *             broker's answer to the handshake)
 *
 *   make check                      a bounded run (tests/fuzz/run-fuzz-p2p.sh)
 *   make fuzz FUZZ_SECONDS=600      a longer one
 * The seed corpus is made by tests/fuzz/fuzz-p2p-seeds (run-fuzz.sh p2p does).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "broker.h"
#include "bus.h"
#include "client.h"
#include "flow.h"
#include "log.h"
#include "loop.h"
#include "manager.h"
#include "p2p-wire.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_UID 60100
/* Prepare calls for one input: far more than the longest input needs. */
#define MAX_TURNS 100000
/* OpenConnection fds the peer keeps open until its end (closing one ends the client). */
#define MAX_KEPT_FDS 8

static const char handshake[] =
	"\0AUTH ANONYMOUS 616e6f6e796d6f7573\r\nNEGOTIATE_UNIX_FD\r\nBEGIN\r\n";

/* Numeric users and groups only: the entries must load on any machine. */
static const char policy_text[] =
	"[broker]\n"
	"root-bypass = yes\n"
	"\n"
	"[line door-lock]\n"
	"chip = gpio-sim.0-node0\n"
	"offset = 1\n"
	"users = 60100\n"
	"directions = output\n"
	"safe-state = output-low\n"
	"initial-value = 0\n"
	"label-prefix = door-\n"
	"\n"
	"[line door-sensor]\n"
	"line-name = DOOR_SENSOR\n"
	"groups = 60100\n"
	"directions = input\n"
	"edges = both\n"
	"watch-users = *\n"
	"persistent = yes\n"
	"\n"
	"[group motors]\n"
	"chip = pca9555*\n"
	"offsets = 0-3, 7\n"
	"users = *\n"
	"directions = input, output\n"
	"direction-may-change = yes\n"
	"edges = rising, falling, both\n"
	"bias = as-is, disabled, pull-up, pull-down\n"
	"drive = push-pull, open-drain, open-source\n"
	"safe-state = input\n"
	"direct = yes\n";

static Broker broker = { .inotify_fd = -1 };
static char policy_dir[] = "/tmp/fuzz-p2p-policy.XXXXXX";
static char policy_file[sizeof(policy_dir) + 16];

/* One input, as the peer plays it. */
struct peer {
	char name[32];       /* the Client's unique name */
	int fd;              /* the peer's end; -1 once closed */
	const uint8_t *out;  /* what is still to be written: the handshake, then the messages */
	size_t out_len;
	const uint8_t *next; /* the messages, while the handshake is written */
	size_t next_len;
	bool wait;           /* the messages only once the broker has answered the handshake */
	unsigned int n_fds;  /* sent with the first bytes of the messages */
	bool fds_now;
	int kept[MAX_KEPT_FDS];
	unsigned int n_kept;
	unsigned int turns;
};

/* Whether fds may go with the messages: see kernel_refuses_fds(). */
static bool send_fds = true;

/* stderr as it was before libFuzzer's -close_fd_mask=2 silenced the broker's log. */
static int report_fd = STDERR_FILENO;

static void fail(const char *what, const struct peer *p)
{
	dprintf(report_fd, "fuzz-p2p: %s (client %s, %u turns)\n", what, p->name, p->turns);
	abort();
}

static void teardown(void)
{
	manager_done(&broker);
	unlink(policy_file);
	rmdir(policy_dir);
}

/* The fds this process has open: as many after each input as before. */
static unsigned int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	unsigned int n = 0;

	while (d && (de = readdir(d)))
		n += de->d_name[0] != '.';
	if (d)
		closedir(d);
	return n;
}

/* Can the kernel refuse fds sent to a socket (SO_PASSRIGHTS, Linux 6.16), as the
 * broker asks it to for its end of a private connection? Without that, libsystemd
 * 252 leaves open the fds that come with a message it drops as malformed, and the
 * broker cannot help it: then no fds are sent. */
static bool kernel_refuses_fds(void)
{
	int sv[2], no = 0;
	bool ok;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return false;
	ok = setsockopt(sv[0], SOL_SOCKET, SO_PASSRIGHTS, &no, sizeof(no)) == 0;
	close(sv[0]);
	close(sv[1]);
	return ok;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	FILE *f;
	int r;

	report_fd = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3);
	if (report_fd < 0)
		report_fd = STDERR_FILENO;
	/* Nothing here may reach systemd or the journal. */
	unsetenv("NOTIFY_SOCKET");
	unsetenv("JOURNAL_STREAM");
	unsetenv("RUNTIME_DIRECTORY");
	/* Every message formatted, so that what a caller sent is printed under ASan too. */
	gb_log_max_level = LOG_DEBUG;
	if (!mkdtemp(policy_dir))
		return perror("fuzz-p2p: mkdtemp"), 1;
	snprintf(policy_file, sizeof(policy_file), "%s/fuzz.conf", policy_dir);
	f = fopen(policy_file, "we");
	if (!f || fputs(policy_text, f) < 0 || fclose(f) != 0)
		return perror("fuzz-p2p: policy"), 1;
	r = manager_init(&broker, NULL);
	if (r >= 0)
		r = sd_bus_new(&broker.bus);
	if (r < 0) {
		fprintf(stderr, "fuzz-p2p: %s\n", strerror(-r));
		abort();
	}
	broker.dev_dir = (char *)"/nonexistent";
	broker.policy_dir = policy_dir;
	broker.event_window = GB_FLOW_DEFAULT_WINDOW;
	broker.event_queue = GB_FLOW_DEFAULT_QUEUE;
	broker.limits = (struct gb_limits){ GB_DEFAULT_MAX_REQUESTS_PER_CLIENT,
					    GB_DEFAULT_MAX_LINES_PER_CLIENT,
					    GB_DEFAULT_MAX_PERSISTENT_PER_UID };
	if (manager_load_policy(&broker, true, NULL) < 0 ||
	    broker.policy_status.state != POLICY_LOADED) {
		fprintf(stderr, "fuzz-p2p: the policy did not load:\n%s",
			broker.policy_status.errors ? broker.policy_status.errors : "");
		abort();
	}
	atexit(teardown);
	send_fds = kernel_refuses_fds();
	if (!send_fds)
		dprintf(report_fd, "fuzz-p2p: this kernel cannot refuse fds (no SO_PASSRIGHTS): "
			"sending none\n");
	return 0;
}

/* Write what the peer has to write, with the fds on the first bytes of the messages. */
static void peer_write(struct peer *p)
{
	for (;;) {
		int fds[8];
		unsigned int n;
		union {
			struct cmsghdr h;
			char buf[CMSG_SPACE(sizeof(fds))];
		} control = {};
		struct iovec iov;
		struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
		ssize_t k;

		if (!p->out_len) {
			if (!p->next || p->wait)
				return;
			p->out = p->next;
			p->out_len = p->next_len;
			p->next = NULL;
			p->fds_now = true;
		}
		n = p->fds_now ? p->n_fds : 0;
		iov = (struct iovec){ (void *)p->out, p->out_len };
		for (unsigned int i = 0; i < n; i++)
			fds[i] = open("/dev/null", O_RDONLY | O_CLOEXEC);
		if (n) {
			mh.msg_control = control.buf;
			mh.msg_controllen = CMSG_SPACE(n * sizeof(int));
			control.h.cmsg_level = SOL_SOCKET;
			control.h.cmsg_type = SCM_RIGHTS;
			control.h.cmsg_len = CMSG_LEN(n * sizeof(int));
			memcpy(CMSG_DATA(&control.h), fds, n * sizeof(int));
		}
		k = sendmsg(p->fd, &mh, MSG_DONTWAIT | MSG_NOSIGNAL);
		for (unsigned int i = 0; i < n; i++)
			close(fds[i]);
		/* The kernel refuses fds the broker does not take (SO_PASSRIGHTS): as a
		 * peer would, send the messages without them. */
		if (k < 0 && errno == EPERM && n) {
			p->fds_now = false;
			continue;
		}
		if (k < 0 && (errno == EAGAIN || errno == EINTR))
			return;
		if (k < 0) {
			/* The broker closed the connection: the rest goes nowhere. */
			p->out_len = 0;
			p->next = NULL;
			return;
		}
		p->fds_now = false;
		p->out += k;
		p->out_len -= k;
	}
}

static void keep_fd(int fd, void *userdata)
{
	struct peer *p = userdata;

	if (p->n_kept < MAX_KEPT_FDS)
		p->kept[p->n_kept++] = fd;
	else
		close(fd);
}

/* Read and drop what the broker wrote; keep a few of the fds it passed. */
static void peer_read(struct peer *p)
{
	char buf[4096];

	while (p2p_wire_recv(p->fd, buf, sizeof(buf), keep_fd, p) > 0)
		;
}

static bool fd_ready(int fd, short events)
{
	struct pollfd pfd = { .fd = fd, .events = events };

	return poll(&pfd, 1, 0) > 0;
}

/* Has the broker nothing more to do for this client: nothing to read on any of its
 * connections, nothing to write, nothing sd-bus has queued? */
static bool broker_idle(const struct peer *p)
{
	Client *c = client_find(&broker, p->name);

	for (unsigned int i = 0; c && i < c->n_conns; i++) {
		sd_bus *bus = c->conns[i].bus;
		int ev = sd_bus_get_events(bus);

		if (loop_bus_queued(bus) ||
		    fd_ready(sd_bus_get_fd(bus), POLLIN | (ev > 0 && ev & POLLOUT ? POLLOUT : 0)))
			return false;
	}
	return true;
}

/* The broker idle, a call may still be waiting in sd-bus's buffer, read with the
 * handshake: then nothing would ever wake the broker for it. */
static void check_nothing_left(const struct peer *p)
{
	Client *c = client_find(&broker, p->name);

	for (unsigned int i = 0; c && i < c->n_conns; i++)
		if (sd_bus_process(c->conns[i].bus, NULL) > 0)
			fail("the broker sleeps with a message it has read and not handled", p);
}

/* Before the loop sleeps: the peer writes and reads; once the broker is idle it
 * closes its end, and once the client is gone this input is done. */
static uint64_t peer_turn(void *userdata)
{
	struct peer *p = userdata;

	if (++p->turns > MAX_TURNS)
		fail("the broker does not settle", p);
	if (p->fd >= 0) {
		peer_write(p);
		peer_read(p);
		if (p->out_len || !broker_idle(p))
			return 0;
		check_nothing_left(p);
		if (p->next) {
			p->wait = false;
			return 0;
		}
		close(p->fd);
		p->fd = -1;
		while (p->n_kept)
			close(p->kept[--p->n_kept]);
		return 0;
	}
	if (client_find(&broker, p->name)) {
		if (broker_idle(p))
			fail("the client outlives its closed connections", p);
		return 0;
	}
	sd_event_exit(broker.event, 0);
	return 0;
}

static void check_released(const struct peer *p)
{
	if (hashmap_size(broker.clients) != 0)
		fail("a client is left over", p);
	if (broker.request_list)
		fail("a request is left over", p);
	if (broker.watches && hashmap_size(broker.watches) != 0)
		fail("a watch is left over", p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static unsigned int n_inputs;
	struct peer p = { .fd = -1 };
	unsigned int n_open;
	gid_t gid = FUZZ_UID;
	bool root;
	Client *c;
	int r, sv[2];

	if (size < 1)
		return 0;
	p.n_fds = send_fds ? data[0] & 7 : 0;
	root = data[0] & 8;
	p.wait = !(data[0] & 16);
	p.out = (const uint8_t *)handshake;
	p.out_len = sizeof(handshake) - 1;
	if (size > 1) {
		p.next = data + 1;
		p.next_len = size - 1;
	}
	snprintf(p.name, sizeof(p.name), ":1.%u", ++n_inputs);

	n_open = count_fds();
	if (sd_event_new(&broker.event) < 0 || loop_new(broker.event, &broker.loop) < 0 ||
	    socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		fail("cannot set up", &p);
	p.fd = sv[1];
	r = client_new(&broker, p.name, root ? 0 : FUZZ_UID, gid, &gid, 1, &c);
	if (r >= 0)
		r = bus_p2p_open(&broker, c, sv[0]);
	if (r < 0)
		fail("cannot open the private connection", &p);
	loop_set_prepare(broker.loop, peer_turn, &p);
	r = loop_run(broker.loop);
	if (r != 0)
		fail("the loop failed", &p);
	check_released(&p);
	broker.loop = loop_free(broker.loop);
	broker.event = sd_event_unref(broker.event);
	if (count_fds() != n_open)
		fail("an fd is left open", &p);
	return 0;
}
