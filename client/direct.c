/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libgpiobroker's direct requests: values and edges on the kernel line fds the
 * broker handed over, with the GPIO v2 uAPI. It knows the kernel and sd-bus, and
 * none of the library's handles: an edge goes up to the function the request gave
 * at gb_direct_open(), with its subscription.
 *
 * The fds are dups of the broker's: they share one open file description, whose
 * O_NONBLOCK is set here so that a read never blocks. The broker reads no events
 * of a direct request (they are its owner's), and its ioctls do not care.
 * Each line fd is in the handle's epoll set on its own: the caller's epoll_wait()
 * names the fd, and its edges are one read() away.
 */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/gpio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <unistd.h>

#define MAX_KERN GPIO_V2_LINES_MAX
/* Edge events read per read(2). */
#define EVENT_BATCH 16

struct line_fd {
	struct gb_source src;        /* GB_SOURCE_LINE, for the epoll set */
	struct gb_direct_req *req;
	char *chip;
	int fd;
	unsigned int n_kern;
	unsigned int kern[MAX_KERN]; /* offsets in the kernel request's order */
	bool have_seqno;
	uint32_t last_seqno;         /* the kernel's per-request seqno */
	sd_event_source *source;
};

struct gb_direct_req {
	struct gb_direct_conn *conn;
	struct gb_direct_req *next;
	gb_direct_edge_fn on_edge;
	struct gb_subscription *sub;
	size_t n_fds;
	struct line_fd *fds;
	size_t n_lines;
	unsigned int *line_fd;  /* per request index: which fd ... */
	unsigned int *line_bit; /* ... and which bit of its value bitmaps */
	unsigned int *line_off;
	bool dead;              /* freed while an edge was being delivered */
};

struct gb_direct_conn {
	int epfd;               /* the handle's (not ours to close); -1 until the first */
	struct gb_direct_req *reqs;
	unsigned int delivering; /* nesting of edge delivery: frees are deferred */
	sd_event *event;
	int priority;
};

static struct gb_direct_conn *conn_get(struct gb_direct_conn **connp)
{
	if (!*connp) {
		*connp = calloc(1, sizeof(**connp));
		if (*connp)
			(*connp)->epfd = -1;
	}
	return *connp;
}

static int on_io(sd_event_source *s, int fd, uint32_t revents, void *userdata);

static int line_fd_watch(struct gb_direct_conn *c, struct line_fd *lf)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = &lf->src };
	int r;

	lf->src.kind = GB_SOURCE_LINE;
	if (epoll_ctl(c->epfd, EPOLL_CTL_ADD, lf->fd, &ev) < 0)
		return -errno;
	if (!c->event)
		return 0;
	r = sd_event_add_io(c->event, &lf->source, lf->fd, EPOLLIN, on_io, lf);
	if (r >= 0)
		r = sd_event_source_set_priority(lf->source, c->priority);
	return r < 0 ? r : 0;
}

static void line_fd_close(struct gb_direct_conn *c, struct line_fd *lf)
{
	lf->source = sd_event_source_disable_unref(lf->source);
	if (lf->fd >= 0) {
		if (c->epfd >= 0)
			epoll_ctl(c->epfd, EPOLL_CTL_DEL, lf->fd, NULL);
		close(lf->fd);
		lf->fd = -1;
	}
	free(lf->chip);
	lf->chip = NULL;
}

static void req_destroy(struct gb_direct_req *d)
{
	free(d->fds);
	free(d->line_fd);
	free(d->line_bit);
	free(d->line_off);
	free(d);
}

static void sweep(struct gb_direct_conn *c)
{
	for (struct gb_direct_req **pp = &c->reqs; *pp;) {
		struct gb_direct_req *d = *pp;

		if (d->dead) {
			*pp = d->next;
			req_destroy(d);
		} else {
			pp = &d->next;
		}
	}
}

void gb_direct_req_free(struct gb_direct_conn *c, struct gb_direct_req *d)
{
	if (!d)
		return;
	for (size_t k = 0; k < d->n_fds; k++)
		line_fd_close(c, &d->fds[k]);
	d->n_fds = 0;
	d->dead = true;
	if (!c->delivering)
		sweep(c);
}

/* Read one (sauh) entry of GetLineFds' reply into @p lf. */
static int read_entry(sd_bus_message *reply, struct line_fd *lf)
{
	const char *chip;
	const void *offs;
	size_t size;
	int fd, r;

	r = sd_bus_message_enter_container(reply, 'r', "sauh");
	if (r <= 0)
		return r;
	r = sd_bus_message_read(reply, "s", &chip);
	if (r >= 0)
		r = sd_bus_message_read_array(reply, 'u', &offs, &size);
	if (r >= 0)
		r = sd_bus_message_read(reply, "h", &fd);
	if (r >= 0)
		r = sd_bus_message_exit_container(reply);
	if (r < 0)
		return r;
	if (size / sizeof(uint32_t) > MAX_KERN)
		return -EBADMSG;
	/* The message owns its fd: ours is a copy, close-on-exec. */
	lf->fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	if (lf->fd < 0)
		return -errno;
	if (fcntl(lf->fd, F_SETFL, fcntl(lf->fd, F_GETFL) | O_NONBLOCK) < 0)
		return -errno;
	lf->chip = strdup(chip);
	if (!lf->chip)
		return -ENOMEM;
	lf->n_kern = size / sizeof(uint32_t);
	memcpy(lf->kern, offs, size);
	/* Only the connection that made the request gets its fds, right after: the
	 * kernel numbers its events from 1, so a first event numbered 5 means the
	 * four before it overflowed the kernel's buffer. */
	lf->have_seqno = true;
	lf->last_seqno = 0;
	return 1;
}

int gb_direct_open(struct gb_direct_conn **connp, sd_bus *bus, int epfd, const char *path,
		   size_t n_lines, char *const *chips, const unsigned int *offsets,
		   gb_direct_edge_fn on_edge, struct gb_subscription *sub,
		   struct gb_direct_req **ret, sd_bus_error *e)
{
	struct gb_direct_conn *c = conn_get(connp);
	sd_bus_message *reply = NULL;
	struct gb_direct_req *d;
	int r;

	if (!c)
		return -ENOMEM;
	c->epfd = epfd;
	d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	d->conn = c;
	d->on_edge = on_edge;
	d->sub = sub;
	d->n_lines = n_lines;
	d->fds = calloc(n_lines ? n_lines : 1, sizeof(*d->fds));
	d->line_fd = calloc(n_lines ? n_lines : 1, sizeof(unsigned int));
	d->line_bit = calloc(n_lines ? n_lines : 1, sizeof(unsigned int));
	d->line_off = calloc(n_lines ? n_lines : 1, sizeof(unsigned int));
	if (!d->fds || !d->line_fd || !d->line_bit || !d->line_off) {
		req_destroy(d);
		return -ENOMEM;
	}
	d->next = c->reqs;
	c->reqs = d;

	r = sd_bus_call_method(bus, GB_BUS_NAME, path, GB_IFACE_REQUEST, "GetLineFds", e, &reply,
			       "");
	if (r >= 0)
		r = sd_bus_message_enter_container(reply, 'a', "(sauh)");
	while (r >= 0 && d->n_fds < n_lines) {
		struct line_fd *lf = &d->fds[d->n_fds];

		lf->fd = -1;
		lf->req = d;
		r = read_entry(reply, lf);
		if (r <= 0) {
			free(lf->chip);
			lf->chip = NULL;
			if (lf->fd >= 0)
				close(lf->fd);
			lf->fd = -1;
			break;
		}
		d->n_fds++;
	}
	sd_bus_message_unref(reply);
	/* Where each line of the request is: its chip's fd, its place in that order. */
	for (size_t i = 0; r >= 0 && i < n_lines; i++) {
		bool found = false;

		for (size_t k = 0; !found && k < d->n_fds; k++)
			for (unsigned int j = 0; !found && strcmp(d->fds[k].chip, chips[i]) == 0 &&
						 j < d->fds[k].n_kern; j++)
				if (d->fds[k].kern[j] == offsets[i]) {
					d->line_fd[i] = k;
					d->line_bit[i] = j;
					d->line_off[i] = offsets[i];
					found = true;
				}
		if (!found)
			r = -EBADMSG; /* the broker did not hand over every line */
	}
	for (size_t k = 0; r >= 0 && k < d->n_fds; k++)
		r = line_fd_watch(c, &d->fds[k]);
	if (r < 0) {
		gb_direct_req_free(c, d);
		return r;
	}
	*ret = d;
	return 0;
}

void gb_direct_conn_free(struct gb_direct_conn *c)
{
	if (!c)
		return;
	for (struct gb_direct_req *d = c->reqs; d; d = d->next)
		for (size_t k = 0; k < d->n_fds; k++)
			line_fd_close(c, &d->fds[k]);
	for (struct gb_direct_req *d = c->reqs; d; d = d->next)
		d->dead = true;
	sweep(c);
	c->event = sd_event_unref(c->event);
	free(c);
}

static bool indices_valid(const struct gb_direct_req *d, size_t n, const unsigned int idx[])
{
	for (size_t i = 0; i < n; i++)
		if (GB_IDX(idx, i) >= d->n_lines)
			return false;
	return true;
}

int gb_direct_get(struct gb_direct_req *d, size_t n, const unsigned int idx[], int values[])
{
	if (!indices_valid(d, n, idx))
		return -EINVAL;
	/* One ioctl per fd that has any of the lines. */
	for (size_t k = 0; k < d->n_fds; k++) {
		struct gpio_v2_line_values v = { 0 };

		for (size_t i = 0; i < n; i++)
			if (d->line_fd[GB_IDX(idx, i)] == k)
				v.mask |= 1ull << d->line_bit[GB_IDX(idx, i)];
		if (!v.mask)
			continue;
		if (ioctl(d->fds[k].fd, GPIO_V2_LINE_GET_VALUES_IOCTL, &v) < 0)
			return -errno;
		for (size_t i = 0; i < n; i++)
			if (d->line_fd[GB_IDX(idx, i)] == k)
				values[i] = !!(v.bits & (1ull << d->line_bit[GB_IDX(idx, i)]));
	}
	return 0;
}

int gb_direct_set(struct gb_direct_req *d, size_t n, const unsigned int idx[], const int values[])
{
	if (!values)
		return -EINVAL;
	if (!indices_valid(d, n, idx))
		return -EINVAL;
	for (size_t k = 0; k < d->n_fds; k++) {
		struct gpio_v2_line_values v = { 0 };

		for (size_t i = 0; i < n; i++)
			if (d->line_fd[GB_IDX(idx, i)] == k) {
				uint64_t bit = 1ull << d->line_bit[GB_IDX(idx, i)];

				v.mask |= bit;
				if (values[i])
					v.bits |= bit;
			}
		/* The kernel refuses inputs with EPERM, as the broker's NotOutput. */
		if (v.mask && ioctl(d->fds[k].fd, GPIO_V2_LINE_SET_VALUES_IOCTL, &v) < 0)
			return -errno;
	}
	return 0;
}

/* Stop waking for @p lf: its chip is gone (the broker says ChipGone). */
static void line_fd_quiet(struct line_fd *lf)
{
	if (lf->req->conn->epfd >= 0)
		epoll_ctl(lf->req->conn->epfd, EPOLL_CTL_DEL, lf->fd, NULL);
	lf->source = sd_event_source_disable_unref(lf->source);
}

/* Read what @p lf has queued now, delivering each edge. Count, or -errno. */
static int read_fd(struct line_fd *lf)
{
	struct gb_direct_req *d = lf->req;
	struct gpio_v2_line_event ev[EVENT_BATCH];
	ssize_t len;
	int n = 0;

	if (lf->fd < 0)
		return 0;
again:
	len = read(lf->fd, ev, sizeof(ev));
	if (len < 0) {
		int err = errno;

		if (err == EAGAIN || err == EINTR)
			return 0;
		line_fd_quiet(lf);
		return err == ENODEV ? 0 : -err;
	}
	/* In the kernel's own order (its interrupt threads may queue two lines' edges
	 * the other way round): a gap within one read is then a loss. */
	for (size_t i = 1; i < (size_t)len / sizeof(ev[0]); i++) {
		struct gpio_v2_line_event t = ev[i];
		size_t j = i;

		for (; j > 0 && ev[j - 1].seqno > t.seqno; j--)
			ev[j] = ev[j - 1];
		ev[j] = t;
	}
	for (size_t e = 0; e < (size_t)len / sizeof(ev[0]) && !d->dead; e++) {
		bool rising = ev[e].id == GPIO_V2_LINE_EVENT_RISING_EDGE, late = false;
		struct gpiobroker_event edge;
		uint64_t lost = 0;
		int index = -1;

		/* A gap in the kernel's seqno: its buffer overflowed, counted as lost. An
		 * event numbered below the last one came late (the kernel numbers lines'
		 * edges as their interrupts come, and queues them as its threads run):
		 * the gap that counted it lost is taken back. */
		if (lf->have_seqno && ev[e].seqno > lf->last_seqno + 1)
			lost = ev[e].seqno - lf->last_seqno - 1;
		if (lf->have_seqno && ev[e].seqno <= lf->last_seqno)
			late = true;
		else
			lf->last_seqno = ev[e].seqno;
		lf->have_seqno = true;
		for (size_t i = 0; i < d->n_lines; i++)
			if (&d->fds[d->line_fd[i]] == lf && d->line_off[i] == ev[e].offset)
				index = (int)i;
		if (index < 0)
			continue;
		n++;
		/* Its seqno and lost count are the subscription's to give. */
		edge = (struct gpiobroker_event){
			.type = GPIOBROKER_EVENT_EDGE, .index = (unsigned int)index,
			.offset = ev[e].offset,
			.edge = rising ? GPIOBROKER_EDGE_RISING : GPIOBROKER_EDGE_FALLING,
			.value = rising, .timestamp_ns = ev[e].timestamp_ns,
			.global_seqno = ev[e].seqno, .line_seqno = ev[e].line_seqno,
		};
		if (!d->on_edge(d->sub, &edge, lost, late))
			return n;
	}
	/* A full buffer: there may be more. */
	if (len == sizeof(ev) && !d->dead && lf->fd >= 0)
		goto again;
	return n;
}

void gb_direct_hold(struct gb_direct_conn *c)
{
	if (c)
		c->delivering++;
}

void gb_direct_release(struct gb_direct_conn *c)
{
	if (c && !--c->delivering)
		sweep(c);
}

static int on_io(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	struct line_fd *lf = userdata;
	struct gb_direct_conn *c = lf->req->conn;

	gb_direct_hold(c);
	read_fd(lf);
	gb_direct_release(c);
	return 0;
}

int gb_direct_read(struct gb_source *src, uint32_t revents)
{
	struct line_fd *lf = gb_container_of(src, struct line_fd, src);

	if (lf->fd < 0 || lf->req->dead)
		return 0;
	if (!(revents & EPOLLIN)) {
		/* Hung up without anything to read: the chip is gone. */
		if (revents & (EPOLLHUP | EPOLLERR))
			line_fd_quiet(lf);
		return 0;
	}
	return read_fd(lf);
}

int gb_direct_process(struct gb_direct_conn *c, struct gb_direct_req *only)
{
	int total = 0, r = 0;

	if (!c)
		return 0;
	gb_direct_hold(c);
	for (struct gb_direct_req *d = c->reqs; d && r >= 0; d = d->next) {
		if (only && d != only)
			continue;
		for (size_t k = 0; !d->dead && k < d->n_fds && r >= 0; k++) {
			r = read_fd(&d->fds[k]);
			if (r > 0)
				total += r;
		}
	}
	gb_direct_release(c);
	return r < 0 ? r : total;
}

int gb_direct_req_fd(const struct gb_direct_req *d)
{
	return d->n_fds == 1 ? d->fds[0].fd : -EXDEV;
}

int gb_direct_attach_event(struct gb_direct_conn **connp, sd_event *e, int priority)
{
	struct gb_direct_conn *c = conn_get(connp);
	int r = 0;

	if (!c)
		return -ENOMEM;
	if (c->event)
		return -EBUSY;
	if (e)
		c->event = sd_event_ref(e);
	else if ((r = sd_event_default(&c->event)) < 0)
		return r;
	c->priority = priority;
	for (struct gb_direct_req *d = c->reqs; d && r >= 0; d = d->next)
		for (size_t k = 0; !d->dead && k < d->n_fds && r >= 0; k++) {
			struct line_fd *lf = &d->fds[k];

			r = sd_event_add_io(c->event, &lf->source, lf->fd, EPOLLIN, on_io, lf);
			if (r >= 0)
				r = sd_event_source_set_priority(lf->source, priority);
		}
	if (r < 0)
		gb_direct_detach_event(c);
	return r < 0 ? r : 0;
}

void gb_direct_detach_event(struct gb_direct_conn *c)
{
	if (!c)
		return;
	for (struct gb_direct_req *d = c->reqs; d; d = d->next)
		for (size_t k = 0; k < d->n_fds; k++)
			d->fds[k].source = sd_event_source_disable_unref(d->fds[k].source);
	c->event = sd_event_unref(c->event);
}
