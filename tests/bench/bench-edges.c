/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * make bench, edges (bench-edges.h).
 *
 * A program gets an edge asleep in its wait: poll() on a libgpiod request fd,
 * gpiobroker_wait(), or its own poll() on gpiobroker_get_fd(). So the bench toggles
 * the simulated line from another process, the toggler, while the receiver waits,
 * and every path, libgpiod's included, is measured from the kernel's timestamp of
 * the edge to the moment its handler runs. The toggler runs SCHED_FIFO, as a line
 * changes whatever the CPU is doing: in the rate ladder it keeps its pace, and a
 * path that cannot keep up loses edges, which it must count.
 *
 * Every count is checked against the kernel's: each path's request ends a run with a
 * marker edge on its last line, toggled after all of the run's, and the marker's
 * global seqno is the number of events the kernel made for the request. An edge
 * neither delivered nor counted lost is unaccounted: a bug, whatever the rate.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <gpiod.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <systemd/sd-bus.h>
#include <time.h>
#include <unistd.h>

#include "bench-edges.h"
#include "bench-out.h"
#include "bench.h"
#include "broker-calls.h"
#include "gpiosim.h"
#include "procstat.h"
#include "testmain.h"
#include "timing.h"

#define MARKER (EDGE_LINES - 1)
/* The rate ladder toggles each of its lines once per period. The bench's simulator
 * raises its interrupts at the next tick (HZ=100): two toggles of one line within a
 * tick would make one edge. */
#define PERIOD_NS 10000000LL
#define PERIODS_PER_S (1000000000LL / PERIOD_NS)
/* Latency: edges per series in one turn, the series taking turns. */
#define TURN 10
/* What a wait may take before the bench calls it a failure. */
#define EDGE_TIMEOUT_MS 5000
/* A path that has been quiet this long after a run gets another marker edge. */
#define QUIET_MS 500
#define MAX_MARKS 20

/* Lines per period of the rate ladder's steps (edges/s = lines * PERIODS_PER_S). */
static const unsigned int ladder[] = { 1, 2, 4, 8, 16, 24, 32, 40, 48, 56, MARKER };
#define STEPS (sizeof(ladder) / sizeof(ladder[0]))
/* The burst: every line but the marker at once, 20 periods (make bench's older burst
 * figure, kept under its name). The CPU step: a few lines, long enough to count. */
#define BURST_LINES 62
#define BURST_PERIODS 20
#define CPU_LINES 4
/* The stall: more edges than the kernel's buffer (16 per line) and the broker's window
 * and queue (256 + 1024 by default) hold, while the receiver reads nothing. */
#define STALL_PERIODS 40

/* --- the toggler --------------------------------------------------------------- */

enum toggle_op { OP_TOGGLE, OP_MARK, OP_RUN, OP_QUIT };

struct toggle_cmd {
	int op;
	unsigned int first, n; /* lines [first, first + n) */
	int periods;           /* OP_RUN */
	long long tick_ns;     /* OP_RUN: a tick's time, as an edge's kernel timestamp gives it */
	int shift_line;        /* OP_RUN: toggled too each period (the shifter's), or -1 */
};

struct toggle_reply {
	long long toggles, start_ns, end_ns, cpu_ns;
	int error; /* -errno of the first write that failed */
};

struct toggler {
	pid_t pid;
	int sock;
	bool realtime;
};

static int toggle(int fd, bool *level)
{
	const char *v = *level ? "pull-down" : "pull-up";

	if (write(fd, v, strlen(v)) < 0)
		return -errno;
	*level = !*level;
	return 0;
}

static void sleep_until(long long t)
{
	struct timespec ts = { .tv_sec = t / 1000000000LL, .tv_nsec = t % 1000000000LL };

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

/* Each period's toggles start TOGGLE_AFTER_TICK_NS after a tick: a line toggled twice
 * between two ticks, once late and once on time, would make one edge. */
#define TOGGLE_AFTER_TICK_NS 1000000LL

static struct toggle_reply toggler_run(const struct toggle_cmd *c, const int *fds, bool *level)
{
	struct toggle_reply rep = { .cpu_ns = -gb_proc_cpu_ns(getpid()) };
	long long t = gb_now_ns();

	t += (c->tick_ns + TOGGLE_AFTER_TICK_NS - t) % PERIOD_NS + PERIOD_NS;
	sleep_until(t);
	rep.start_ns = t;
	for (int p = 0; p < c->periods; p++) {
		if (c->shift_line >= 0 && toggle(fds[c->shift_line], &level[c->shift_line]) < 0 &&
		    !rep.error)
			rep.error = -errno;
		for (unsigned int i = c->first; i < c->first + c->n; i++) {
			int r = toggle(fds[i], &level[i]);

			if (r < 0 && !rep.error)
				rep.error = r;
			rep.toggles += r == 0;
		}
		t += PERIOD_NS;
		sleep_until(t);
	}
	rep.end_ns = gb_now_ns();
	rep.cpu_ns += gb_proc_cpu_ns(getpid());
	return rep;
}

/* The child: the simulator's pull attribute of every line, opened once, so that a
 * toggle is one write(). Exits 2 if one cannot be opened, 3 on a bad command, 4 if
 * a single toggle fails (the receiver waiting for it then says so). */
static void toggler_main(int sock, const char *chip, unsigned int n)
{
	int *fds = calloc(n, sizeof(*fds));
	bool *level = calloc(n, sizeof(*level));
	struct toggle_cmd c;

	if (!fds || !level)
		_exit(2);
	for (unsigned int i = 0; i < n; i++) {
		char p[256];

		snprintf(p, sizeof(p), "/sys/bus/gpio/devices/%s/sim_gpio%u/pull", chip, i);
		fds[i] = open(p, O_WRONLY | O_CLOEXEC);
		if (fds[i] < 0) {
			fprintf(stderr, "toggler: %s: %m\n", p);
			_exit(2);
		}
	}
	while (recv(sock, &c, sizeof(c), 0) == (ssize_t)sizeof(c) && c.op != OP_QUIT) {
		struct toggle_reply rep;

		if (c.first >= n || c.n > n - c.first || c.op < OP_TOGGLE || c.op > OP_RUN ||
		    c.shift_line >= (int)n)
			_exit(3);
		switch (c.op) {
		case OP_TOGGLE:
			/* The receiver has just entered its wait: let it fall asleep there,
			 * even where a second CPU would run us at once. */
			sleep_until(gb_now_ns() + 2000000LL);
			/* fall through */
		case OP_MARK:
			if (toggle(fds[c.first], &level[c.first]) < 0)
				_exit(4);
			break;
		case OP_RUN:
			rep = toggler_run(&c, fds, level);
			if (send(sock, &rep, sizeof(rep), MSG_NOSIGNAL) != (ssize_t)sizeof(rep))
				_exit(4);
			break;
		}
	}
	_exit(0);
}

/* fork(), the child's Check records pointed away (testmain.h): it is killed, or
 * exits with _exit() and a status the parent checks. 0 in the child. */
static pid_t fork_child(void)
{
	pid_t pid;

	fflush(stdout);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0)
		gb_test_child_unreported();
	return pid;
}

/* The toggler drives lines [0, n) of @p chip (all low when it starts). */
static void toggler_start(struct toggler *t, const char *chip, unsigned int n)
{
	struct sched_param sp = { .sched_priority = 1 };
	int sv[2];

	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
	t->pid = fork_child();
	if (t->pid == 0) {
		close(sv[0]);
		toggler_main(sv[1], chip, n);
	}
	close(sv[1]);
	t->sock = sv[0];
	t->realtime = sched_setscheduler(t->pid, SCHED_FIFO, &sp) == 0;
	if (!t->realtime)
		printf("# the toggler is not SCHED_FIFO (%m): a busy path slows it down\n");
}

/* After a wait that timed out: if the toggler is gone, that is why. */
static void toggler_check(const struct toggler *t)
{
	int status;

	if (waitpid(t->pid, &status, WNOHANG) == t->pid)
		ck_abort_msg("the toggler exited (status %#x): see its message above", status);
}

static void toggler_send(const struct toggler *t, int op, unsigned int line, unsigned int n,
			 int periods, long long tick_ns, int shift_line)
{
	struct toggle_cmd c = { .op = op, .first = line, .n = n, .periods = periods,
				.tick_ns = tick_ns, .shift_line = shift_line };

	if (send(t->sock, &c, sizeof(c), MSG_NOSIGNAL) != (ssize_t)sizeof(c)) {
		toggler_check(t);
		ck_abort_msg("cannot reach the toggler: %m");
	}
}

static void toggler_reply(const struct toggler *t, struct toggle_reply *rep)
{
	if (recv(t->sock, rep, sizeof(*rep), 0) != (ssize_t)sizeof(*rep)) {
		toggler_check(t);
		ck_abort_msg("no reply from the toggler: %m");
	}
	ck_assert_msg(rep->error == 0, "toggler: writing the simulator's pull failed: %s",
		      strerror(-rep->error));
}

static void toggler_stop(struct toggler *t)
{
	int status = 0;

	toggler_send(t, OP_QUIT, 0, 0, 0, 0, -1);
	ck_assert_int_eq(waitpid(t->pid, &status, 0), t->pid);
	close(t->sock);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "toggler status %#x", status);
}

/* The toggler on its own, for another part's edge series (bench-edges.h). */
struct toggler *edge_toggler_new(const char *chip, unsigned int n)
{
	struct toggler *t = calloc(1, sizeof(*t));

	ck_assert_ptr_nonnull(t);
	toggler_start(t, chip, n);
	return t;
}

void edge_toggler_toggle(const struct toggler *t, unsigned int line)
{
	toggler_send(t, OP_TOGGLE, line, 1, 0, 0, -1);
}

void edge_toggler_check(const struct toggler *t)
{
	toggler_check(t);
}

void edge_toggler_free(struct toggler *t)
{
	if (!t)
		return;
	toggler_stop(t);
	free(t);
}

/* --- the paths ------------------------------------------------------------------ */

struct edge_rec {
	long long *lat; /* latency samples of the series being measured, or NULL */
	int n_lat, max_lat;
	unsigned int lat_off, marker_off;
	const char *name;
	uint64_t delivered, lost, last_gseq, last_seqno, last_ts;
	uint64_t max_gseq; /* libgpiod: the highest global seqno read */
	uint64_t disorder; /* events whose global seqno was not above the one before */
	uint64_t marks;     /* marker edges so far: the marker line's line_seqno to wait for */
	uint64_t marks_seen;
	bool marked;        /* the last marker edge arrived */
	uint64_t marker_gseq;
};

struct path {
	const char *name; /* in the figures' names */
	unsigned int first, n; /* the lines of its request, while it has one */
	struct edge_rec rec;
	struct gpiod_chip *gc; /* libgpiod, or ... */
	struct gpiod_line_request *lr;
	struct gpiod_edge_event_buffer *buf;
	struct gpiobroker *b; /* ... libgpiobroker, or ... */
	unsigned int flags;
	struct gpiobroker_request *req;
	const char *relay_chip; /* ... the relay: its chip, process and our socket end */
	pid_t relay_pid;
	int relay_sock;
};

/* An edge as a handler sees it: @c seqno is the broker's (the kernel's global one on
 * libgpiod), @c lost what the library or the seqno counted lost before it. */
struct edge_seen {
	unsigned int off;
	uint64_t ts, gseq, lseq, seqno, lost;
};

/* The handler's part, the same for every path: the time first. */
static void rec_edge(struct edge_rec *r, const struct edge_seen *ev)
{
	long long now = gb_now_ns();

	/* The kernel numbers a request's events in order: anything else is a bug to
	 * chase, shown beside the counts, the first few with their numbers. */
	if (r->delivered && ev->gseq <= r->last_gseq && ++r->disorder <= 5)
		printf("# %s: kernel event %llu (sent as %llu) after %llu (sent as %llu)\n",
		       r->name, (unsigned long long)ev->gseq, (unsigned long long)ev->seqno,
		       (unsigned long long)r->last_gseq, (unsigned long long)r->last_seqno);
	if (r->lat && ev->off == r->lat_off && r->n_lat < r->max_lat)
		r->lat[r->n_lat++] = now - (long long)ev->ts;
	r->delivered++;
	r->lost += ev->lost;
	r->last_gseq = ev->gseq;
	r->last_seqno = ev->seqno;
	r->last_ts = ev->ts;
	if (ev->off != r->marker_off)
		return;
	r->marks_seen++;
	if (ev->lseq == r->marks) {
		r->marked = true;
		r->marker_gseq = ev->gseq;
	}
}

static void on_edge(struct gpiobroker_request *req, const struct gpiobroker_event *ev, void *ud)
{
	struct edge_seen seen;

	(void)req;
	if (gpiobroker_event_get_type(ev) != GPIOBROKER_EVENT_EDGE)
		return;
	seen = (struct edge_seen){ .off = gpiobroker_event_get_offset(ev),
				   .ts = gpiobroker_event_get_timestamp_ns(ev),
				   .gseq = gpiobroker_event_get_global_seqno(ev),
				   .lseq = gpiobroker_event_get_line_seqno(ev),
				   .seqno = gpiobroker_event_get_seqno(ev),
				   .lost = gpiobroker_event_get_lost(ev) };
	rec_edge(ud, &seen);
}

/* Lines [first, first + n) of @p gc as inputs, both edges; NULL with errno set. */
static struct gpiod_line_request *gpiod_request_edges(struct gpiod_chip *gc, unsigned int first,
						      unsigned int n)
{
	struct gpiod_line_settings *ls = gpiod_line_settings_new();
	struct gpiod_line_config *lc = gpiod_line_config_new();
	struct gpiod_line_request *lr = NULL;
	unsigned int offs[EDGE_LINES];

	for (unsigned int i = 0; i < n; i++)
		offs[i] = first + i;
	if (ls && lc && gpiod_line_settings_set_direction(ls, GPIOD_LINE_DIRECTION_INPUT) == 0 &&
	    gpiod_line_settings_set_edge_detection(ls, GPIOD_LINE_EDGE_BOTH) == 0 &&
	    gpiod_line_config_add_line_settings(lc, offs, n, ls) == 0)
		lr = gpiod_chip_request_lines(gc, NULL, lc);
	gpiod_line_config_free(lc);
	gpiod_line_settings_free(ls);
	return lr;
}

static void path_open_gpiod(struct path *p)
{
	p->lr = gpiod_request_edges(p->gc, p->first, p->n);
	ck_assert_msg(p->lr != NULL, "gpiod: request of %u lines: %m", p->n);
}

/* A kernel event as libgpiod reads it; its seqno is the kernel's global one. */
static struct edge_seen gpiod_seen(struct gpiod_edge_event *ev)
{
	uint64_t gseq = gpiod_edge_event_get_global_seqno(ev);

	return (struct edge_seen){ .off = gpiod_edge_event_get_line_offset(ev),
				   .ts = gpiod_edge_event_get_timestamp_ns(ev),
				   .gseq = gseq,
				   .lseq = gpiod_edge_event_get_line_seqno(ev),
				   .seqno = gseq };
}

/* The relay: libgpiod's poll() and read(), then one send() of the events, nothing
 * else (no message format, no policy, no bookkeeping). It ends when the program
 * closes its end of the socket. */
static void relay_main(const char *chip_path, unsigned int first, unsigned int n, int sock)
{
	struct gpiod_chip *gc = gpiod_chip_open(chip_path);
	struct gpiod_line_request *lr = gc ? gpiod_request_edges(gc, first, n) : NULL;
	struct gpiod_edge_event_buffer *buf = gpiod_edge_event_buffer_new(EDGE_LINES);
	struct edge_seen out[EDGE_LINES];
	struct pollfd fds[2] = { { .events = POLLIN }, { .fd = sock, .events = POLLIN } };
	char ready = 'R';

	if (!lr || !buf || send(sock, &ready, 1, MSG_NOSIGNAL) != 1)
		_exit(2);
	fds[0].fd = gpiod_line_request_get_fd(lr);
	for (;;) {
		int k;

		if (poll(fds, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			_exit(3);
		}
		if (fds[1].revents)
			break;
		k = gpiod_line_request_read_edge_events(lr, buf, EDGE_LINES);
		if (k < 0)
			_exit(4);
		for (int i = 0; i < k; i++)
			out[i] = gpiod_seen(gpiod_edge_event_buffer_get_event(buf, i));
		if (k > 0 && send(sock, out, k * sizeof(out[0]), MSG_NOSIGNAL) < 0)
			_exit(5);
	}
	gpiod_line_request_release(lr);
	gpiod_chip_close(gc);
	_exit(0);
}

static void path_open_lib(struct path *p, const char *chip)
{
	struct gpiobroker_line_settings s[EDGE_LINES];
	char names[EDGE_LINES][64];
	const char *lines[EDGE_LINES];

	for (unsigned int i = 0; i < p->n; i++) {
		snprintf(names[i], sizeof(names[i]), "%s:%u", chip, p->first + i);
		lines[i] = names[i];
		gpiobroker_line_settings_init(&s[i]);
		s[i].direction = GPIOBROKER_DIRECTION_INPUT;
		s[i].edge = GPIOBROKER_EDGE_BOTH;
	}
	p->req = gpiobroker_request_array(p->b, p->n, lines, s, "bench-edges", p->flags);
	ck_assert_msg(p->req != NULL, "%s: %s", p->name, gpiobroker_last_error_message(p->b));
	ck_assert(gpiobroker_request_is_direct(p->req) == !!(p->flags & GPIOBROKER_REQUEST_DIRECT));
	ck_assert_int_eq(gpiobroker_to_irq(p->req, on_edge, &p->rec), 0);
}

/* The relay on the path's lines, its request made before this returns. Everything
 * it inherited but its socket is closed: it holds no other path's line or handle. */
static void path_open_relay(struct path *p)
{
	struct pollfd pfd = { .events = POLLIN };
	int sv[2];
	char ready = 0;

	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
	p->relay_pid = fork_child();
	if (p->relay_pid == 0) {
		if (dup2(sv[1], 3) < 0 || close_range(4, ~0U, 0) < 0)
			_exit(6);
		relay_main(p->relay_chip, p->first, p->n, 3);
	}
	close(sv[1]);
	p->relay_sock = sv[0];
	pfd.fd = sv[0];
	ck_assert_msg(poll(&pfd, 1, EDGE_TIMEOUT_MS) == 1 && recv(sv[0], &ready, 1, 0) == 1 &&
			      ready == 'R',
		      "relay: no request of %u lines", p->n);
	ck_assert_int_eq(fcntl(sv[0], F_SETFL, O_NONBLOCK), 0);
}

/* One read, as the program on the other end of any broker would make at the least. */
static void relay_read(struct path *p)
{
	struct edge_seen in[EDGE_LINES];
	ssize_t k = recv(p->relay_sock, in, sizeof(in), 0);

	if (k < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	ck_assert_msg(k > 0 && k % (ssize_t)sizeof(in[0]) == 0, "relay: read %zd bytes: %m", k);
	for (ssize_t i = 0; i < k / (ssize_t)sizeof(in[0]); i++)
		rec_edge(&p->rec, &in[i]);
}

/* A request of @p n lines from @p first, both edges; its counts start at 0, as the
 * kernel's seqnos of a new request start at 1. The bench kernel has interrupts for
 * about 100 lines in all (NR_IRQS): only one path at a time holds a large request. */
static void path_open(struct path *p, const char *chip, unsigned int first, unsigned int n)
{
	p->first = first;
	p->n = n;
	p->rec = (struct edge_rec){ .name = p->name, .lat_off = first,
				    .marker_off = n > 1 ? first + n - 1 : UINT_MAX };
	if (p->gc)
		path_open_gpiod(p);
	else if (p->relay_chip)
		path_open_relay(p);
	else
		path_open_lib(p, chip);
}

static void path_close(struct path *p)
{
	if (p->relay_pid > 0) {
		int status = 0;

		close(p->relay_sock);
		ck_assert_int_eq(waitpid(p->relay_pid, &status, 0), p->relay_pid);
		ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
			      "relay status %#x", status);
		p->relay_pid = 0;
	}
	if (p->lr)
		gpiod_line_request_release(p->lr);
	p->lr = NULL;
	if (p->req)
		ck_assert_int_eq(gpiobroker_free(p->req), 0);
	p->req = NULL;
}

/* Wait at most @p ms for the path (bit 1) or @p ctl (bit 2, if >= 0): the bits ready,
 * 0 if the time ran out. The library's own deadline counts as the path ready. */
static int path_wait(struct path *p, enum edge_wait w, int ctl, int ms)
{
	struct pollfd fds[2] = { { .fd = -1 }, { .fd = ctl, .events = POLLIN } };
	bool due = false;
	int r;

	if (p->lr) {
		fds[0].fd = gpiod_line_request_get_fd(p->lr);
		fds[0].events = POLLIN;
	} else if (p->relay_chip) {
		fds[0] = (struct pollfd){ .fd = p->relay_sock, .events = POLLIN };
	} else if (w == WAIT_REQ) {
		fds[0] = (struct pollfd){ .fd = gpiobroker_request_get_fd(p->req), .events = POLLIN };
		ck_assert_int_ge(fds[0].fd, 0);
	} else if (w == WAIT_LIB) {
		ck_assert_int_lt(ctl, 0);
		r = gpiobroker_wait(p->b, (uint64_t)ms * 1000);
		ck_assert_int_ge(r, 0);
		return r > 0;
	} else {
		int events = gpiobroker_get_events(p->b);
		uint64_t until;

		ck_assert_int_ge(events, 0);
		ck_assert_int_ge(gpiobroker_get_timeout(p->b, &until), 0);
		if (until != UINT64_MAX) {
			long long left = ((long long)until * 1000 - gb_now_ns()) / 1000000;

			due = left < ms;
			ms = left < 0 ? 0 : due ? (int)left : ms;
		}
		fds[0] = (struct pollfd){ .fd = gpiobroker_get_fd(p->b), .events = (short)events };
	}
	do
		r = poll(fds, ctl >= 0 ? 2 : 1, ms);
	while (r < 0 && errno == EINTR);
	ck_assert_int_ge(r, 0);
	return (fds[0].revents || (r == 0 && due) ? 1 : 0) | (ctl >= 0 && fds[1].revents ? 2 : 0);
}

static void path_process(struct path *p, enum edge_wait w)
{
	int n;

	if (p->relay_chip) {
		relay_read(p);
		return;
	}
	if (!p->lr) {
		ck_assert_int_ge(w == WAIT_REQ ? gpiobroker_request_process(p->req) :
						 gpiobroker_process(p->b), 0);
		return;
	}
	n = gpiod_line_request_read_edge_events(p->lr, p->buf, EDGE_LINES);
	ck_assert_int_ge(n, 0);
	for (int i = 0; i < n; i++) {
		struct edge_seen seen = gpiod_seen(gpiod_edge_event_buffer_get_event(p->buf, i));
		uint64_t gseq = seen.gseq;

		/* The kernel's buffer overflowed: its seqno jumps. An event that comes
		 * after a later one (the kernel's interrupt threads, one per line, can
		 * queue them so) was counted lost in that jump, and is not. */
		if (gseq > p->rec.max_gseq + 1)
			seen.lost = gseq - p->rec.max_gseq - 1;
		else if (gseq < p->rec.max_gseq)
			p->rec.lost--;
		if (gseq > p->rec.max_gseq)
			p->rec.max_gseq = gseq;
		rec_edge(&p->rec, &seen);
	}
}

/* --- the bench ------------------------------------------------------------------ */

struct series {
	enum edge_path path;
	enum edge_wait wait;
	const char *name, *title;
	long long *lat;
	int n;
	struct gb_pct pct;
};

static const struct series series_defs[] = {
	{ EDGE_GPIOD, WAIT_POLL, "limit.gpiod_edge_latency", "libgpiod: poll(), read" },
	{ EDGE_RELAY, WAIT_POLL, "limit.relay_edge_latency",
	  "floor of a hop: relay reads, sends; poll(), read" },
	{ EDGE_DIRECT, WAIT_LIB, "direct.edge_latency", "direct: gpiobroker_wait()" },
	{ EDGE_DIRECT, WAIT_POLL, "direct.edge_latency_poll", "direct: own poll()" },
	{ EDGE_DIRECT, WAIT_REQ, "direct.edge_latency_request_fd",
	  "direct: poll() on the request's fd" },
	{ EDGE_P2P, WAIT_LIB, "p2p.edge_latency", "private connection: gpiobroker_wait()" },
	{ EDGE_P2P, WAIT_POLL, "p2p.edge_latency_poll", "private connection: own poll()" },
	{ EDGE_BUS, WAIT_LIB, "broker.edge_latency", "bus: gpiobroker_wait()" },
	{ EDGE_BUS, WAIT_POLL, "broker.edge_latency_poll", "bus: own poll()" },
};
#define SERIES (sizeof(series_defs) / sizeof(series_defs[0]))

struct edge_bench {
	struct toggler tog;
	const char *chip;
	unsigned int first; /* the edge lines: [first, first + EDGE_LINES) */
	long long tick_ns;  /* the kernel's timestamp of the latest edge: a tick on the bench */
	int shift_line;     /* the shifter's line while it runs, else -1 */
	pid_t shifter;
	struct gb_sim_chip *sim;
	struct path paths[EDGE_ALL_PATHS];
	struct series series[SERIES];
	struct edge_peers peers;
};

struct edge_bench *edge_bench_new(struct gb_sim_chip *sim, unsigned int first,
				  struct gpiobroker *direct, struct gpiobroker *p2p,
				  struct gpiobroker *bus, struct edge_peers peers)
{
	static const char *const names[EDGE_ALL_PATHS] = { "gpiod", "direct", "p2p", "broker",
							   "relay" };
	struct gpiobroker *handles[EDGE_ALL_PATHS] = { NULL, direct, p2p, bus, NULL };
	struct edge_bench *e = calloc(1, sizeof(*e));

	ck_assert_ptr_nonnull(e);
	e->chip = gb_sim_chip_name(sim);
	e->first = first;
	e->sim = sim;
	e->shift_line = -1;
	e->peers = peers;
	memcpy(e->series, series_defs, sizeof(series_defs));
	for (unsigned int i = 0; i < EDGE_ALL_PATHS; i++) {
		e->paths[i].name = names[i];
		e->paths[i].b = handles[i];
	}
	e->paths[EDGE_DIRECT].flags = GPIOBROKER_REQUEST_DIRECT;
	e->paths[EDGE_RELAY].relay_chip = gb_sim_chip_path(sim);
	e->paths[EDGE_GPIOD].gc = gpiod_chip_open(gb_sim_chip_path(sim));
	ck_assert_ptr_nonnull(e->paths[EDGE_GPIOD].gc);
	/* One read takes a whole period's edges. */
	e->paths[EDGE_GPIOD].buf = gpiod_edge_event_buffer_new(EDGE_LINES);
	ck_assert_ptr_nonnull(e->paths[EDGE_GPIOD].buf);
	toggler_start(&e->tog, e->chip, first + EDGE_LINES);
	return e;
}

void edge_bench_free(struct edge_bench *e)
{
	if (!e)
		return;
	toggler_stop(&e->tog);
	for (unsigned int i = 0; i < EDGE_ALL_PATHS; i++)
		path_close(&e->paths[i]);
	gpiod_edge_event_buffer_free(e->paths[EDGE_GPIOD].buf);
	gpiod_chip_close(e->paths[EDGE_GPIOD].gc);
	for (unsigned int i = 0; i < SERIES; i++)
		free(e->series[i].lat);
	free(e);
}

/* --- latency -------------------------------------------------------------------- */

/* One edge on the path's first line, the receiver asleep in its wait. Whatever the
 * wait returns, the handle is processed, as gpiobroker.h's loop does: on the bus
 * transport gpiobroker_wait() returns 0 at once when sd-bus holds a message already. */
static void latency_one(struct edge_bench *e, struct path *p, enum edge_wait w)
{
	uint64_t want = p->rec.delivered + 1;
	long long end = gb_now_ns() + EDGE_TIMEOUT_MS * 1000000LL;

	toggler_send(&e->tog, OP_TOGGLE, p->first, 1, 0, 0, -1);
	while (p->rec.delivered < want) {
		long long left = (end - gb_now_ns()) / 1000000;

		if (left < 0) {
			toggler_check(&e->tog);
			ck_abort_msg("%s: no edge %d ms after the toggle", p->name,
				     EDGE_TIMEOUT_MS);
		}
		if (path_wait(p, w, -1, (int)left) || (!p->lr && !p->relay_chip))
			path_process(p, w);
	}
	e->tick_ns = (long long)p->rec.last_ts;
	ck_assert_msg(p->rec.delivered == want && p->rec.lost == 0,
		      "%s: one toggle, %llu edges delivered in all, %llu lost", p->name,
		      (unsigned long long)p->rec.delivered, (unsigned long long)p->rec.lost);
}

/* Samples for tests/bench/bench-edges.gp: one block per series, its title first,
 * then "latency_us fraction" lines, the fraction of edges at that latency or less. */
static void write_plot(const struct edge_bench *e, const char *file, int n)
{
	FILE *f = fopen(file, "we");

	ck_assert_msg(f != NULL, "%s: %m", file);
	fprintf(f, "# make bench: edge latency, kernel timestamp -> handler, %d edges per series\n",
		n);
	for (unsigned int i = 0; i < SERIES; i++) {
		const struct series *s = &e->series[i];

		fprintf(f, "%s\"%s (p50 %.0f µs)\"\n", i ? "\n\n" : "", s->title, s->pct.p50);
		for (int k = 0; k < s->n; k++)
			fprintf(f, "%.1f %.5f\n", s->lat[k] / 1e3, (k + 1) / (double)s->n);
	}
	ck_assert_int_eq(fclose(f), 0);
	printf("# edge latency samples for the plot: %s\n", file);
}

void edge_bench_latency(struct edge_bench *e, int n, const char *plot_file)
{
	/* Every path at once, one line each. */
	for (unsigned int i = 0; i < EDGE_ALL_PATHS; i++)
		path_open(&e->paths[i], e->chip, e->first + i, 1);
	for (unsigned int i = 0; i < SERIES; i++) {
		e->series[i].lat = calloc(n, sizeof(long long));
		ck_assert_ptr_nonnull(e->series[i].lat);
	}
	/* In turns, each turn starting with the next series: what the machine does
	 * meanwhile falls on every series alike. */
	for (int round = 0; round * TURN < n; round++)
		for (unsigned int k = 0; k < SERIES; k++) {
			struct series *s = &e->series[(k + round) % SERIES];
			struct path *p = &e->paths[s->path];
			int end = s->n + TURN < n ? s->n + TURN : n;

			p->rec.lat = s->lat;
			p->rec.n_lat = s->n;
			p->rec.max_lat = end;
			while (p->rec.n_lat < end)
				latency_one(e, p, s->wait);
			s->n = p->rec.n_lat;
			p->rec.lat = NULL;
		}
	for (unsigned int i = 0; i < EDGE_ALL_PATHS; i++)
		path_close(&e->paths[i]);
	for (unsigned int i = 0; i < SERIES; i++) {
		struct series *s = &e->series[i];

		s->pct = gb_pct_us(s->lat, s->n);
		bench_out_pct(s->name, s->pct);
	}
	if (plot_file)
		write_plot(e, plot_file, n);
}

double edge_bench_p50(const struct edge_bench *e, enum edge_path p, enum edge_wait w)
{
	for (unsigned int i = 0; i < SERIES; i++)
		if (e->series[i].path == p &&
		    (p == EDGE_GPIOD || p == EDGE_RELAY || e->series[i].wait == w))
			return e->series[i].pct.p50;
	ck_abort_msg("no series for path %d", p);
	return 0;
}

/* --- the shifter ------------------------------------------------------------------ */

/*
 * CPU time on the bench: UML's scheduler clock is the tick (jiffies), so a process
 * is charged a whole tick when it is on the CPU as a tick passes, and nothing for
 * what it does between two ticks. That is a fair sample only if the work falls at
 * random against the ticks, and an edge's does not: the simulator raises it at a
 * tick, and the whole chain (client, broker, bus daemon) runs right after it and is
 * done long before the next, charged nothing. The shifter holds a line below the
 * path's, toggled with them each period: the kernel wakes it first, and, SCHED_FIFO
 * above the interrupt threads it spins a random part of a whole period before the
 * chain may run, so that the chain falls anywhere against the next tick and is
 * charged in proportion to what it uses. It sleeps at the ticks themselves, which
 * is what lets the chain be the one on the CPU there. On a kernel with a fine
 * scheduler clock it changes nothing but when the chain runs.
 */
static void shifter_main(const char *chip_path, unsigned int line, int ready)
{
	struct gpiod_chip *gc = gpiod_chip_open(chip_path);
	struct gpiod_line_settings *ls = gpiod_line_settings_new();
	struct gpiod_line_config *lc = gpiod_line_config_new();
	struct gpiod_edge_event_buffer *buf = gpiod_edge_event_buffer_new(16);
	struct gpiod_line_request *lr = NULL;
	unsigned int seed = 1;

	if (gc && ls && lc && buf) {
		gpiod_line_settings_set_edge_detection(ls, GPIOD_LINE_EDGE_BOTH);
		if (gpiod_line_config_add_line_settings(lc, &line, 1, ls) == 0)
			lr = gpiod_chip_request_lines(gc, NULL, lc);
	}
	if (!lr) {
		fprintf(stderr, "shifter: cannot request line %u: %m\n", line);
		_exit(2);
	}
	if (write(ready, "", 1) != 1)
		_exit(2);
	close(ready);
	for (;;) {
		struct pollfd p = { .fd = gpiod_line_request_get_fd(lr), .events = POLLIN };
		long long until;

		if (poll(&p, 1, -1) < 0 || gpiod_line_request_read_edge_events(lr, buf, 16) < 0)
			_exit(4);
		until = gb_now_ns() + rand_r(&seed) % PERIOD_NS;
		while (gb_now_ns() < until)
			;
	}
}

static void shifter_start(struct edge_bench *e, struct gb_sim_chip *sim, unsigned int line)
{
	struct sched_param sp = { .sched_priority = sched_get_priority_max(SCHED_FIFO) };
	int ready[2], status = 0;
	char c;

	ck_assert_int_eq(pipe2(ready, O_CLOEXEC), 0);
	e->shifter = fork_child();
	if (e->shifter == 0) {
		close(ready[0]);
		/* Real-time before it takes its line, so that it never runs as less. */
		if (sched_setscheduler(0, SCHED_FIFO, &sp) < 0)
			_exit(5);
		shifter_main(gb_sim_chip_path(sim), line, ready[1]);
	}
	close(ready[1]);
	/* One byte once it holds its line; none if it exited. */
	if (gb_wait_readable(ready[0], EDGE_TIMEOUT_MS) <= 0 || read(ready[0], &c, 1) != 1) {
		kill(e->shifter, SIGKILL);
		waitpid(e->shifter, &status, 0);
		ck_abort_msg("the shifter did not start (status %#x: 5 not SCHED_FIFO, 2 its line)",
			     status);
	}
	close(ready[0]);
	e->shift_line = (int)line;
}

static void shifter_stop(struct edge_bench *e)
{
	int status;

	ck_assert_int_eq(kill(e->shifter, SIGKILL), 0);
	ck_assert_int_eq(waitpid(e->shifter, &status, 0), e->shifter);
	e->shift_line = -1;
}

/* --- rate and CPU ----------------------------------------------------------------- */

struct cpu_sample {
	long long client, broker, bus;
};

struct step {
	unsigned int lines;
	int periods;
	long long toggles, toggler_cpu_ns;
	double seconds;
	/* The run's edges, not the markers': each marker toggle is one kernel event
	 * (they are QUIET_MS apart), delivered or lost. */
	uint64_t kernel, delivered, lost, marks, disorder;
	long long unaccounted;
	struct cpu_sample cpu; /* used during the step */
	bool paced;            /* the toggler kept its pace */
};

/* A request changes 64 lines' info, which the broker reads from the kernel and
 * announces on the bus: work of the request, not of its edges. A round trip to the
 * broker through the bus daemon returns after both have done it (the broker reads
 * its chips' events before a call that came after them, and the bus daemon passes
 * its messages on in order). */
static void settle(const struct edge_bench *e)
{
	ck_assert_int_ge(gb_ping(e->peers.root, NULL), 0);
}

static void cpu_now(const struct edge_bench *e, struct cpu_sample *s)
{
	s->client = gb_proc_cpu_ns(getpid());
	s->broker = gb_proc_cpu_ns(e->peers.broker);
	s->bus = gb_proc_cpu_ns(e->peers.bus);
	ck_assert(s->client >= 0 && s->broker >= 0 && s->bus >= 0);
}

/* The path's @p lines first lines toggled once per period for @p periods periods,
 * then marker edges until the last one arrives; the counts against the kernel's.
 * With @p stall the receiver reads nothing until the toggler is done: whatever does
 * not fit in the kernel's and the broker's queues is lost, and must be counted. */
static void rate_step(struct edge_bench *e, struct path *p, unsigned int lines, int periods,
		      bool stall, struct step *st)
{
	struct edge_rec *r = &p->rec;
	struct toggle_reply rep = { 0 };
	struct cpu_sample c0, c1;
	bool done = false;

	*st = (struct step){ .lines = lines, .periods = periods };
	/* The shifter, while it runs, holds the first line: the kernel has interrupts for
	 * only so many lines. */
	if (e->shift_line >= 0)
		path_open(p, e->chip, e->first + 1, EDGE_LINES - 1);
	else
		path_open(p, e->chip, e->first, EDGE_LINES);
	settle(e);
	cpu_now(e, &c0);
	toggler_send(&e->tog, OP_RUN, p->first, lines, periods, e->tick_ns, e->shift_line);
	while (!r->marked) {
		int ready;

		if (stall && !done) {
			int n = gb_wait_readable(e->tog.sock, periods * 10 + EDGE_TIMEOUT_MS);

			ready = n > 0 ? 2 : 0;
		} else {
			ready = path_wait(p, WAIT_POLL, done ? -1 : e->tog.sock,
					  done ? QUIET_MS : periods * 10 + EDGE_TIMEOUT_MS);
		}
		if (ready & 1)
			path_process(p, WAIT_POLL);
		if (ready & 2) {
			toggler_reply(&e->tog, &rep);
			done = true;
		}
		ck_assert_msg(ready || done, "%s: the toggler's run did not end", p->name);
		/* After the run, or when the path has gone quiet without the last marker
		 * (lost, and counted): a marker edge, behind every edge of the run. */
		if ((ready & 2) || !ready) {
			ck_assert_msg(st->marks < MAX_MARKS, "%s: %d marker edges, none arrived",
				      p->name, MAX_MARKS);
			r->marks++;
			st->marks++;
			toggler_send(&e->tog, OP_MARK, r->marker_off, 1, 0, 0, -1);
		}
	}
	cpu_now(e, &c1);
	path_close(p);
	e->tick_ns = (long long)r->last_ts;
	st->toggles = rep.toggles;
	st->toggler_cpu_ns = rep.cpu_ns;
	st->seconds = (rep.end_ns - rep.start_ns) / 1e9;
	st->paced = rep.toggles == (long long)lines * periods &&
		    st->seconds <= periods * 1.05 / PERIODS_PER_S;
	st->kernel = r->marker_gseq - st->marks;
	st->delivered = r->delivered - r->marks_seen;
	st->lost = r->lost - (st->marks - r->marks_seen);
	st->disorder = r->disorder;
	st->unaccounted = (long long)st->kernel - (long long)st->delivered - (long long)st->lost;
	st->cpu = (struct cpu_sample){ c1.client - c0.client, c1.broker - c0.broker,
				       c1.bus - c0.bus };
}

/* @p a / @p b, 0 if @p b is. */
static double share(double a, double b)
{
	return b > 0 ? a / b : 0;
}

static double rate_of(unsigned int lines)
{
	return (double)lines * PERIODS_PER_S;
}

/* Every edge the kernel made was delivered. (If the toggler was late, the host took
 * the CPU: that is the sim's, rate.sim_max.) */
static bool step_clean(const struct step *st)
{
	return st->lost == 0 && st->unaccounted == 0;
}

static void print_step(const struct path *p, const char *what, const struct step *st)
{
	printf("# %-6s %-5s %5.0f edges/s: toggles %5lld in %.2f s%s, kernel %5llu, "
	       "delivered %5llu, lost %5llu, unaccounted %lld (+%llu marker edges)",
	       p->name, what, rate_of(st->lines), st->toggles, st->seconds,
	       st->paced ? "" : " (late)",
	       (unsigned long long)st->kernel, (unsigned long long)st->delivered,
	       (unsigned long long)st->lost, st->unaccounted, (unsigned long long)st->marks);
	if (st->disorder)
		printf(", %llu out of order", (unsigned long long)st->disorder);
	printf("\n");
}

static void out_cpu(const struct path *p, const struct step *st)
{
	double per = 1000.0 / (double)st->delivered / 1e6;

	bench_outf(st->cpu.client * per, "ms", "cpu.%s.client_per_1000_edges", p->name);
	bench_outf(st->cpu.broker * per, "ms", "cpu.%s.broker_per_1000_edges", p->name);
	bench_outf(st->cpu.bus * per, "ms", "cpu.%s.bus_per_1000_edges", p->name);
	bench_outf((st->cpu.client + st->cpu.broker + st->cpu.bus) * per, "ms",
		   "cpu.%s.total_per_1000_edges", p->name);
}

static void out_burst(const struct path *p, const struct step *st)
{
	bench_outf((double)st->toggles, "events", "%s.burst_sent", p->name);
	bench_outf((double)st->kernel, "events", "%s.burst_kernel", p->name);
	bench_outf((double)st->delivered, "events", "%s.burst_delivered", p->name);
	bench_outf((double)st->lost, "events", "%s.burst_lost_counted", p->name);
	bench_outf((double)st->unaccounted, "events", "%s.burst_unaccounted", p->name);
}

/* A path's counts over all its steps. */
struct totals {
	long long unaccounted; /* either way: too few accounted for, or too many */
	uint64_t disorder;
};

/* One step of path @p k, printed, and added to its totals @p t. */
static void run_step(struct edge_bench *e, unsigned int k, const char *what, unsigned int lines,
		     int periods, bool stall, struct step *st, struct totals *t)
{
	rate_step(e, &e->paths[k], lines, periods, stall, st);
	print_step(&e->paths[k], what, st);
	t->unaccounted += st->unaccounted < 0 ? -st->unaccounted : st->unaccounted;
	t->disorder += st->disorder;
}

void edge_bench_rate(struct edge_bench *e, int step_ms, int cpu_edges)
{
	static struct step steps[STEPS][EDGE_PATHS];
	struct step cpu[EDGE_PATHS], burst[EDGE_PATHS], stall[EDGE_PATHS];
	double sustained[EDGE_PATHS] = { 0 }, sim_max = 0;
	bool failed[EDGE_PATHS] = { false }, sim_ok = true;
	struct totals tot[EDGE_PATHS] = { 0 };
	long long all = 0;
	long long toggler_ns = 0, toggles = 0, coalesced = 0;
	int periods = step_ms * PERIODS_PER_S / 1000 > 0 ? step_ms * PERIODS_PER_S / 1000 : 1;
	int cpu_periods = cpu_edges / CPU_LINES > 0 ? cpu_edges / CPU_LINES : 1;

	printf("# rate ladder: %d ms per step, lines toggled once per %lld ms; toggler %s\n",
	       step_ms, PERIOD_NS / 1000000, e->tog.realtime ? "SCHED_FIFO" : "not real-time");
	/* Step by step, every path at each rate, each step starting with the next path. */
	for (unsigned int s = 0; s < STEPS; s++) {
		for (unsigned int j = 0; j < EDGE_PATHS; j++) {
			unsigned int k = (j + s) % EDGE_PATHS;
			struct step *st = &steps[s][k];

			run_step(e, k, "rate", ladder[s], periods, false, st, &tot[k]);
			/* The sim sustains a rate if the toggler kept its pace, whoever
			 * received the edges. */
			sim_ok = sim_ok && st->paced;
			coalesced += st->toggles - (long long)st->kernel;
			failed[k] = failed[k] || !step_clean(st);
			if (!failed[k])
				sustained[k] = rate_of(ladder[s]);
		}
		if (sim_ok)
			sim_max = rate_of(ladder[s]);
	}
	for (unsigned int k = 0; k < EDGE_PATHS; k++)
		run_step(e, k, "burst", BURST_LINES, BURST_PERIODS, false, &burst[k], &tot[k]);
	for (unsigned int k = 0; k < EDGE_PATHS; k++)
		run_step(e, k, "stall", MARKER, STALL_PERIODS, true, &stall[k], &tot[k]);
	shifter_start(e, e->sim, e->first);
	for (unsigned int k = 0; k < EDGE_PATHS; k++) {
		run_step(e, k, "cpu", CPU_LINES, cpu_periods, false, &cpu[k], &tot[k]);
		toggler_ns += cpu[k].toggler_cpu_ns;
		toggles += cpu[k].toggles;
	}
	shifter_stop(e);

	bench_out("rate.sim_max", sim_max, "edges/s");
	/* Two toggles of a line between the same two ticks make one edge: counted against
	 * the kernel's edges, the paths do not see it. */
	bench_out("rate.sim_toggles_without_edge", (double)coalesced, "toggles");
	for (unsigned int k = 0; k < EDGE_PATHS; k++) {
		bench_outf(sustained[k], "edges/s", "rate.%s.sustained", e->paths[k].name);
		bench_outf((double)stall[k].lost, "events", "rate.%s.stall_lost_counted",
			   e->paths[k].name);
		bench_outf((double)tot[k].unaccounted, "events", "rate.%s.unaccounted",
			   e->paths[k].name);
		bench_outf((double)tot[k].disorder, "events", "rate.%s.out_of_order",
			   e->paths[k].name);
		all += tot[k].unaccounted;
	}
	for (unsigned int k = EDGE_DIRECT; k < EDGE_PATHS; k++)
		bench_outf(share(sustained[k], sustained[EDGE_GPIOD]), "x",
			   "ratio.%s_sustained_vs_gpiod", e->paths[k].name);
	for (unsigned int k = EDGE_DIRECT; k < EDGE_PATHS; k++)
		out_burst(&e->paths[k], &burst[k]);
	bench_out("cpu.rate", rate_of(CPU_LINES), "edges/s");
	bench_out("cpu.sim.toggler_per_1000_toggles", share(toggler_ns / 1e3, (double)toggles),
		  "ms");
	for (unsigned int k = 0; k < EDGE_PATHS; k++)
		out_cpu(&e->paths[k], &cpu[k]);

	bench_target_min("target.direct_sustained_rate",
			 share(sustained[EDGE_DIRECT], sustained[EDGE_GPIOD]), 0.9,
			 "x gpiod (>= 0.9)");
	bench_target("target.edges_unaccounted", (double)all, 0,
		     "events, every path and step (= 0)");
	bench_target("target.burst_unaccounted", (double)burst[EDGE_BUS].unaccounted, 0,
		     "events (= 0)");
	bench_target("target.direct_burst_unaccounted", (double)burst[EDGE_DIRECT].unaccounted, 0,
		     "events (= 0)");
	bench_target("target.p2p_burst_unaccounted", (double)burst[EDGE_P2P].unaccounted, 0,
		     "events (= 0)");
}
