/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Chips come and go with their device nodes (inotify on the device directory).
 * When one goes, everything that used it hears of it first: requests tell their
 * owners (ChipGone) and let go of its lines, watchers are told; then its objects
 * leave the bus.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <unistd.h>

#include "action.h"
#include "announce.h"
#include "chip.h"
#include "log.h"
#include "manager.h"
#include "replug.h"
#include "request.h"
#include "sliced.h"
#include "watch.h"

static void chip_remove(Chip *c);
static void line_changed(Line *l);

static const ChipOps chip_ops = {
	.line_changed = line_changed,
	.gone = chip_remove,
};

/*
 * A line's watchers lose it while something outside the broker holds it, and also
 * for a moment after a request is released under an fd store: the store's copy of
 * the kernel fd keeps the line requested until systemd has handled FDSTOREREMOVE.
 * The kernel tells when the line is free again; take it back for the watchers then.
 */
static void line_changed(Line *l)
{
	announce_line_changed(l);
	slice_line_changed(l);
	if ((l->n_watchers || l->taps) && !l->holder && !l->source &&
	    !gpiod_line_info_is_used(l->info))
		watch_line_resync(l);
}

static void chip_remove(Chip *c)
{
	Broker *b = c->broker;

	log_notice("chip %s (%s) is gone", c->name, c->label);
	slice_chip_gone(c);
	for (unsigned int i = 0; i < c->num_lines; i++) {
		if (c->lines[i].holder)
			request_chip_gone(c->lines[i].holder, c);
		watch_chip_gone(&c->lines[i]);
	}
	announce_chip_removed(c);
	for (Chip **pp = &b->chips; *pp; pp = &(*pp)->next)
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	chip_free(c);
	manager_policy_chips_changed(b);
}

/* A node that has just appeared is root's until udev gives it the broker's group
 * (90-gpiod-broker.rules): until then opening it fails with EACCES. udev's change is
 * an IN_ATTRIB event, which retries; a timer retries too, in case that event comes
 * before the node is really ready, and only past the bound is it a warning. */
#define NODE_SETTLE_USEC   (10 * 1000 * 1000)
#define NODE_RETRY_USEC    (200 * 1000)

struct pending_node {
	struct pending_node *next;
	uint64_t deadline;
	char name[];
};

static struct pending_node *pending;
static sd_event_source *retry_source;

static int chip_add(Broker *b, const char *name);

static void pending_drop(const char *name)
{
	for (struct pending_node **pp = &pending; *pp; pp = &(*pp)->next)
		if (strcmp((*pp)->name, name) == 0) {
			struct pending_node *p = *pp;

			*pp = p->next;
			free(p);
			return;
		}
}

static int on_retry(sd_event_source *s, uint64_t usec, void *userdata)
{
	Broker *b = userdata;

	for (struct pending_node *p = pending, *next; p; p = next) {
		char name[64];

		next = p->next;
		snprintf(name, sizeof(name), "%s", p->name);
		chip_add(b, name);
	}
	if (pending)
		return sd_event_source_set_time_relative(s, NODE_RETRY_USEC) < 0 ? 0 :
		       sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
	return 0;
}

/* EACCES on a node not yet settled: quiet, retried. True if it is to be retried. */
static bool pending_note(Broker *b, const char *name)
{
	uint64_t now = 0;
	struct pending_node *p;

	sd_event_now(b->event, CLOCK_MONOTONIC, &now);
	for (p = pending; p; p = p->next)
		if (strcmp(p->name, name) == 0)
			break;
	if (!p) {
		p = calloc(1, sizeof(*p) + strlen(name) + 1);
		if (!p)
			return false;
		strcpy(p->name, name);
		p->deadline = now + NODE_SETTLE_USEC;
		p->next = pending;
		pending = p;
		log_debug("%s/%s is not accessible yet: waiting for udev", b->dev_dir, name);
	} else if (now >= p->deadline) {
		pending_drop(name);
		return false;
	}
	if (!retry_source) {
		if (sd_event_add_time_relative(b->event, &retry_source, CLOCK_MONOTONIC,
					       NODE_RETRY_USEC, 0, on_retry, b) < 0)
			return true; /* IN_ATTRIB still retries */
	} else {
		sd_event_source_set_time_relative(retry_source, NODE_RETRY_USEC);
		sd_event_source_set_enabled(retry_source, SD_EVENT_ONESHOT);
	}
	return true;
}

static int chip_add(Broker *b, const char *name)
{
	Chip *c;
	int r;

	if (chip_by_name(b->chips, name)) {
		pending_drop(name);
		return 0;
	}
	r = chip_new(b, b->event, b->loop, b->dev_dir, name, &chip_ops, &c);
	if (r < 0) {
		if ((r == -EACCES || r == -EPERM) && pending_note(b, name))
			return r;
		if (r != -ENOMEM)
			log_warning_errno(r, "cannot open %s/%s: %m", b->dev_dir, name);
		return r;
	}
	/* Its identity decides which entries cover it and what comes back to it: wait
	 * for udev to describe it, as for its group, and as long. */
	if (chip_read_udev(c) == -EAGAIN) {
		if (pending_note(b, name)) {
			chip_free(c);
			return -EAGAIN;
		}
		log_warning("%s/%s: udev has not described it in %u s: taken without its identity",
			    b->dev_dir, name, (unsigned)(NODE_SETTLE_USEC / 1000000));
	}
	pending_drop(name);
	c->next = b->chips;
	b->chips = c;
	manager_policy_chips_changed(b);
	announce_chip_added(c);
	if (c->identity)
		log_info("chip %s (%s): %u lines, %s", c->name, c->label, c->num_lines, c->identity);
	else
		log_info("chip %s (%s): %u lines", c->name, c->label, c->num_lines);
	replug_chip_added(b, c);
	actions_bind(b);
	return 0;
}

static int scan(Broker *b)
{
	struct dirent *de;
	DIR *d = opendir(b->dev_dir);

	if (!d)
		return log_error_errno(errno, "cannot read %s: %m", b->dev_dir);
	while ((de = readdir(d)))
		if (chip_is_node_name(de->d_name))
			chip_add(b, de->d_name);
	closedir(d);
	return 0;
}

static int on_dev_change(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	Broker *b = userdata;
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	ssize_t n = read(fd, buf, sizeof(buf));

	if (n < 0)
		return errno == EAGAIN || errno == EINTR ? 0 : log_error_errno(errno, "inotify: %m");
	for (char *p = buf; p < buf + n;) {
		struct inotify_event *ev = (struct inotify_event *)p;

		p += sizeof(*ev) + ev->len;
		if (ev->mask & IN_Q_OVERFLOW) {
			log_warning("device notifications overflowed; rescanning %s", b->dev_dir);
			scan(b);
			continue;
		}
		if (!ev->len || !chip_is_node_name(ev->name))
			continue;
		if (ev->mask & (IN_CREATE | IN_ATTRIB)) {
			chip_add(b, ev->name);
		} else if (ev->mask & IN_DELETE) {
			Chip *c = chip_by_name(b->chips, ev->name);

			pending_drop(ev->name);
			if (c)
				chip_remove(c);
		}
	}
	return 0;
}

int manager_chips_start(Broker *b)
{
	int r;

	b->inotify_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (b->inotify_fd < 0)
		return log_error_errno(errno, "inotify_init1: %m");
	if (inotify_add_watch(b->inotify_fd, b->dev_dir, IN_CREATE | IN_DELETE | IN_ATTRIB) < 0)
		return log_error_errno(errno, "cannot watch %s: %m", b->dev_dir);
	r = sd_event_add_io(b->event, &b->inotify_source, b->inotify_fd, EPOLLIN, on_dev_change, b);
	if (r < 0)
		return log_error_errno(r, "cannot watch %s: %m", b->dev_dir);
	return scan(b);
}

void manager_chips_stop(Broker *b)
{
	while (b->chips) {
		Chip *c = b->chips;

		b->chips = c->next;
		chip_free(c);
	}
	while (pending)
		pending_drop(pending->name);
	retry_source = sd_event_source_disable_unref(retry_source);
	b->inotify_source = sd_event_source_disable_unref(b->inotify_source);
	if (b->inotify_fd >= 0)
		close(b->inotify_fd);
	b->inotify_fd = -1;
}
