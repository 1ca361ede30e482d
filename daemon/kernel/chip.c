/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Chips and lines: every /dev/gpiochipN becomes a Chip with one Line per offset.
 * Watching a line's info returns its current info and subscribes to its changes,
 * so the cached info is never stale for long and every change is reported from
 * one place (on_info_event).
 */
#include "chip.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-bus.h>

#include "log.h"
#include "macro.h"
#include "org.gpiodbroker1.h"

Chip *chip_free(Chip *c)
{
	if (!c)
		return NULL;
	sd_event_source_disable_unref(c->info_source);
	for (unsigned int i = 0; c->lines && i < c->num_lines; i++) {
		/* Requests and watchers let go first (manager/hotplug.c). */
		assert(!c->lines[i].holder && !c->lines[i].watchers && !c->lines[i].source);
		gpiod_line_info_free(c->lines[i].info);
		free(c->lines[i].path);
	}
	free(c->lines);
	if (c->gc)
		gpiod_chip_close(c->gc);
	free(c->name);
	free(c->label);
	free(c->dev_path);
	free(c->path);
	chip_udev_clear(c);
	free(c);
	return NULL;
}

/* What a line-info event can change, and what the broker shows of it. */
static bool info_same(struct gpiod_line_info *a, struct gpiod_line_info *b)
{
	const char *ca = gpiod_line_info_get_consumer(a), *cb = gpiod_line_info_get_consumer(b);

	return gpiod_line_info_is_used(a) == gpiod_line_info_is_used(b) &&
	       strcmp(ca ? ca : "", cb ? cb : "") == 0 &&
	       gpiod_line_info_get_direction(a) == gpiod_line_info_get_direction(b) &&
	       gpiod_line_info_get_edge_detection(a) == gpiod_line_info_get_edge_detection(b) &&
	       gpiod_line_info_get_bias(a) == gpiod_line_info_get_bias(b) &&
	       gpiod_line_info_get_drive(a) == gpiod_line_info_get_drive(b) &&
	       gpiod_line_info_is_active_low(a) == gpiod_line_info_is_active_low(b) &&
	       gpiod_line_info_get_debounce_period_us(a) == gpiod_line_info_get_debounce_period_us(b);
}

/* The kernel queues 32 line-info events per chip fd and drops any more without a
 * word (gpiolib-cdev). A read that found as many may have lost some: every line's
 * info is then read again, which is newer than anything still to come. */
#define INFO_QUEUE 32

static void resync_lines(Chip *c)
{
	log_debug("%s: %u line-info events at once, the kernel may have dropped some: "
		  "reading every line's info again", c->name, INFO_QUEUE);
	for (unsigned int i = 0; i < c->num_lines; i++)
		if (line_refresh_info(&c->lines[i]))
			c->ops->line_changed(&c->lines[i]);
}

/* Every event queued (the fd is non-blocking), a bounded number per dispatch. */
static int on_info_event(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	Chip *c = userdata;
	unsigned int n;

	if (revents & (EPOLLHUP | EPOLLERR)) {
		c->ops->gone(c);
		return 0;
	}
	for (n = 0; n < 4 * INFO_QUEUE; n++) {
		struct gpiod_info_event *ev = gpiod_chip_read_info_event(c->gc);
		struct gpiod_line_info *info;
		unsigned int off;

		if (!ev) {
			if (errno == EAGAIN || errno == EINTR)
				break;
			log_warning_errno(errno, "reading line-info events of %s: %m", c->name);
			c->ops->gone(c);
			return 0;
		}
		info = gpiod_info_event_get_line_info(ev);
		off = gpiod_line_info_get_offset(info);
		if (off < c->num_lines) {
			struct gpiod_line_info *copy = gpiod_line_info_copy(info);

			if (copy) {
				gpiod_line_info_free(c->lines[off].info);
				c->lines[off].info = copy;
				c->ops->line_changed(&c->lines[off]);
			}
		}
		gpiod_info_event_free(ev);
	}
	if (n >= INFO_QUEUE)
		resync_lines(c);
	return 0;
}

void chip_lines_changed(Chip *c)
{
	loop_want_turn(c->loop);
}

Chip *chip_by_name(Chip *chips, const char *name)
{
	for (Chip *c = chips; c; c = c->next)
		if (strcmp(c->name, name) == 0)
			return c;
	return NULL;
}

Chip *chip_find(Chip *chips, const char *name_or_label)
{
	Chip *c = chip_by_name(chips, name_or_label);

	if (c)
		return c;
	for (c = chips; c; c = c->next)
		if (strcmp(c->label, name_or_label) == 0)
			return c;
	return NULL;
}

bool chip_is_node_name(const char *n)
{
	return strncmp(n, "gpiochip", 8) == 0 && n[8];
}

int chip_new(Broker *b, sd_event *event, Loop *loop, const char *dev_dir, const char *name,
	     const ChipOps *ops, Chip **ret)
{
	struct gpiod_chip_info *ci = NULL;
	Chip *c;
	int r;

	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->broker = b;
	c->loop = loop;
	c->ops = ops;
	chip_udev_clear(c);
	c->name = strdup(name);
	if (!c->name || asprintf(&c->dev_path, "%s/%s", dev_dir, name) < 0) {
		c->dev_path = NULL;
		r = -ENOMEM;
		goto fail;
	}
	c->gc = gpiod_chip_open(c->dev_path);
	if (!c->gc) {
		r = -errno;
		goto fail;
	}
	/* Info events are read until none is left (on_info_event()). */
	if (fcntl(gpiod_chip_get_fd(c->gc), F_SETFL,
		  fcntl(gpiod_chip_get_fd(c->gc), F_GETFL) | O_NONBLOCK) < 0) {
		r = log_warning_errno(errno, "cannot make %s non-blocking: %m", c->dev_path);
		goto fail;
	}
	ci = gpiod_chip_get_info(c->gc);
	if (!ci) {
		r = log_warning_errno(errno, "cannot read chip info of %s: %m", c->dev_path);
		goto fail;
	}
	c->label = strdup(gpiod_chip_info_get_label(ci));
	c->num_lines = gpiod_chip_info_get_num_lines(ci);
	gpiod_chip_info_free(ci);
	r = sd_bus_path_encode(GB_CHIP_PREFIX, name, &c->path);
	if (r < 0 || !c->label) {
		r = -ENOMEM;
		goto fail;
	}
	c->lines = calloc(c->num_lines ? c->num_lines : 1, sizeof(Line));
	if (!c->lines) {
		r = -ENOMEM;
		goto fail;
	}
	for (unsigned int i = 0; i < c->num_lines; i++) {
		Line *l = &c->lines[i];

		l->chip = c;
		l->offset = i;
		if (asprintf(&l->path, "%s/line%u", c->path, i) < 0) {
			l->path = NULL;
			r = -ENOMEM;
			goto fail;
		}
		l->info = gpiod_chip_watch_line_info(c->gc, i);
		if (!l->info) {
			r = log_warning_errno(errno, "cannot watch line %u of %s: %m", i, name);
			goto fail;
		}
	}
	r = sd_event_add_io(event, &c->info_source, gpiod_chip_get_fd(c->gc), EPOLLIN,
			    on_info_event, c);
	/* The kernel queues a line's change as the broker makes it (a release, a
	 * reconfiguration): read it before the next call, which may come on another
	 * connection than the one that caused it, so that no answer is stale. */
	if (r >= 0)
		r = sd_event_source_set_priority(c->info_source, SD_EVENT_PRIORITY_IMPORTANT);
	if (r < 0)
		goto fail;
	*ret = c;
	return 0;
fail:
	chip_free(c);
	return r;
}

Line *line_from_path(Chip *chips, const char *path)
{
	for (Chip *c = chips; c; c = c->next) {
		size_t n = strlen(c->path);
		unsigned int off;
		char extra;

		if (strncmp(path, c->path, n) != 0 || path[n] != '/')
			continue;
		if (sscanf(path + n, "/line%u%c", &off, &extra) != 1 || off >= c->num_lines)
			return NULL;
		/* Reject "line03": one path per line. */
		if (strcmp(path + n + 1, c->lines[off].path + n + 1) != 0)
			return NULL;
		return &c->lines[off];
	}
	return NULL;
}

bool line_refresh_info(Line *l)
{
	struct gpiod_line_info *fresh;
	bool changed;

	if (!l->chip->gc)
		return false;
	fresh = gpiod_chip_get_line_info(l->chip->gc, l->offset);
	if (!fresh)
		return false;
	changed = !info_same(l->info, fresh);
	gpiod_line_info_free(l->info);
	l->info = fresh;
	return changed;
}

const char *line_name(const Line *l)
{
	const char *n = gpiod_line_info_get_name(l->info);

	return n && *n ? n : NULL;
}

void line_describe(const Line *l, char *buf, size_t size)
{
	const char *name = line_name(l);

	if (name)
		snprintf(buf, size, "%s:%u (\"%s\")", l->chip->name, l->offset, name);
	else
		snprintf(buf, size, "%s:%u", l->chip->name, l->offset);
}

void line_set_holder(Line *l, Request *req, LineReq *k, const struct gb_line_config *config)
{
	/* A line has one holder: taking it from another would lose track of it. */
	assert(!req || !l->holder || l->holder == req);
	l->holder = req;
	l->holder_lreq = req ? k : NULL;
	l->holder_config = req ? config : NULL;
}
