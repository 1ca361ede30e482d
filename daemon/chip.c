/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Chips and lines: the kernel's GPIO chips as bus objects.
 *
 * Every /dev/gpiochipN becomes /org/gpiodbroker1/chip/gpiochipN with one child per
 * line (.../lineM). Line properties mirror the kernel's line info; the kernel's
 * line-info watch tells us of every change, whoever made it (the broker itself or
 * another process), so properties are never stale and PropertiesChanged is emitted
 * from one place. Chips come and go with their device nodes (inotify on /dev).
 */

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <unistd.h>

#include "broker.h"
#include "errors.h"
#include "linespec.h"
#include "log.h"
#include "macro.h"

static const char *const line_props[] = {
	"Name", "Used", "Consumer", "Direction", "Edge", "Bias", "Drive", "ActiveLow",
	"Debounced", "DebouncePeriodUs", "EventClock", "Request", "RequestLabel",
	"Alias", "Policy", NULL,
};

void line_emit_changed(Line *l)
{
	int r = sd_bus_emit_properties_changed_strv(l->chip->broker->bus, l->path, GB_IFACE_LINE,
						    (char **)line_props);
	if (r < 0)
		log_debug_errno(r, "cannot emit PropertiesChanged for %s: %m", l->path);
}

static void chip_free(Chip *c)
{
	if (!c)
		return;
	sd_event_source_disable_unref(c->info_source);
	for (unsigned int i = 0; c->lines && i < c->num_lines; i++) {
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
	free(c);
}

static void chip_remove(Chip *c)
{
	Broker *b = c->broker;
	Chip **pp;

	log_notice("chip %s (%s) is gone", c->name, c->label);
	/* Requests first: they notify their owners and let go of the lines. */
	for (unsigned int i = 0; i < c->num_lines; i++) {
		if (c->lines[i].holder)
			request_chip_gone(c->lines[i].holder, c);
		watch_chip_gone(&c->lines[i]);
	}
	for (unsigned int i = 0; i < c->num_lines; i++)
		sd_bus_emit_object_removed(b->bus, c->lines[i].path);
	sd_bus_emit_object_removed(b->bus, c->path);
	for (pp = &b->chips; *pp; pp = &(*pp)->next)
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	chip_free(c);
}

static int on_info_event(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	Chip *c = userdata;
	struct gpiod_info_event *ev;
	struct gpiod_line_info *info;
	unsigned int off;

	if (revents & (EPOLLHUP | EPOLLERR)) {
		chip_remove(c);
		return 0;
	}
	ev = gpiod_chip_read_info_event(c->gc);
	if (!ev) {
		if (errno == EAGAIN || errno == EINTR)
			return 0;
		log_warning_errno(errno, "reading line-info events of %s: %m", c->name);
		chip_remove(c);
		return 0;
	}
	info = gpiod_info_event_get_line_info(ev);
	off = gpiod_line_info_get_offset(info);
	if (off < c->num_lines) {
		struct gpiod_line_info *copy = gpiod_line_info_copy(info);

		if (copy) {
			gpiod_line_info_free(c->lines[off].info);
			c->lines[off].info = copy;
			line_emit_changed(&c->lines[off]);
		}
	}
	gpiod_info_event_free(ev);
	return 0;
}

static Chip *chip_by_name(Broker *b, const char *name)
{
	for (Chip *c = b->chips; c; c = c->next)
		if (strcmp(c->name, name) == 0)
			return c;
	return NULL;
}

Chip *chip_find(Broker *b, const char *name_or_label)
{
	Chip *c = chip_by_name(b, name_or_label);

	if (c)
		return c;
	for (c = b->chips; c; c = c->next)
		if (strcmp(c->label, name_or_label) == 0)
			return c;
	return NULL;
}

static int chip_add(Broker *b, const char *name)
{
	struct gpiod_chip_info *ci = NULL;
	Chip *c;
	int r;

	if (chip_by_name(b, name))
		return 0;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->broker = b;
	c->name = strdup(name);
	if (!c->name || asprintf(&c->dev_path, "%s/%s", b->dev_dir, name) < 0) {
		c->dev_path = NULL;
		r = -ENOMEM;
		goto fail;
	}
	c->gc = gpiod_chip_open(c->dev_path);
	if (!c->gc) {
		r = log_warning_errno(errno, "cannot open %s: %m", c->dev_path);
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
	if (r < 0 || !c->label)
		goto fail;
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
		/* Watching returns the current info and subscribes to its changes. */
		l->info = gpiod_chip_watch_line_info(c->gc, i);
		if (!l->info) {
			r = log_warning_errno(errno, "cannot watch line %u of %s: %m", i, name);
			goto fail;
		}
	}
	r = sd_event_add_io(b->event, &c->info_source, gpiod_chip_get_fd(c->gc), EPOLLIN,
			    on_info_event, c);
	if (r < 0)
		goto fail;
	c->next = b->chips;
	b->chips = c;
	sd_bus_emit_object_added(b->bus, c->path);
	for (unsigned int i = 0; i < c->num_lines; i++)
		sd_bus_emit_object_added(b->bus, c->lines[i].path);
	log_info("chip %s (%s): %u lines", c->name, c->label, c->num_lines);
	return 0;
fail:
	chip_free(c);
	return r;
}

static bool is_chip_name(const char *n)
{
	return strncmp(n, "gpiochip", 8) == 0 && n[8];
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
			chips_start(b);
			continue;
		}
		if (!ev->len || !is_chip_name(ev->name))
			continue;
		if (ev->mask & (IN_CREATE | IN_ATTRIB)) {
			chip_add(b, ev->name);
		} else if (ev->mask & IN_DELETE) {
			Chip *c = chip_by_name(b, ev->name);

			if (c)
				chip_remove(c);
		}
	}
	return 0;
}

int chips_start(Broker *b)
{
	DIR *d;
	struct dirent *de;
	int r;

	if (b->inotify_fd < 0) {
		b->inotify_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
		if (b->inotify_fd < 0)
			return log_error_errno(errno, "inotify_init1: %m");
		if (inotify_add_watch(b->inotify_fd, b->dev_dir, IN_CREATE | IN_DELETE | IN_ATTRIB) < 0)
			return log_error_errno(errno, "cannot watch %s: %m", b->dev_dir);
		r = sd_event_add_io(b->event, &b->inotify_source, b->inotify_fd, EPOLLIN,
				    on_dev_change, b);
		if (r < 0)
			return r;
	}
	d = opendir(b->dev_dir);
	if (!d)
		return log_error_errno(errno, "cannot read %s: %m", b->dev_dir);
	while ((de = readdir(d)))
		if (is_chip_name(de->d_name))
			chip_add(b, de->d_name);
	closedir(d);
	return 0;
}

void chips_stop(Broker *b)
{
	while (b->chips) {
		Chip *c = b->chips;

		b->chips = c->next;
		chip_free(c);
	}
	b->inotify_source = sd_event_source_disable_unref(b->inotify_source);
	if (b->inotify_fd >= 0)
		close(b->inotify_fd);
	b->inotify_fd = -1;
}

/* --- D-Bus ------------------------------------------------------------------ */

static Chip *chip_from_path(Broker *b, const char *path)
{
	for (Chip *c = b->chips; c; c = c->next)
		if (strcmp(c->path, path) == 0)
			return c;
	return NULL;
}

Line *line_from_path(Broker *b, const char *path)
{
	for (Chip *c = b->chips; c; c = c->next) {
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

static int find_chip(sd_bus *bus, const char *path, const char *iface, void *userdata,
		     void **found, sd_bus_error *error)
{
	Chip *c = chip_from_path(userdata, path);

	if (!c)
		return 0;
	*found = c;
	return 1;
}

static int find_line(sd_bus *bus, const char *path, const char *iface, void *userdata,
		     void **found, sd_bus_error *error)
{
	Line *l = line_from_path(userdata, path);

	if (!l)
		return 0;
	*found = l;
	return 1;
}

static int enumerate_chips(sd_bus *bus, const char *prefix, void *userdata, char ***nodes,
			   sd_bus_error *error)
{
	Broker *b = userdata;
	size_t n = 0, k = 0;
	char **l;

	for (Chip *c = b->chips; c; c = c->next)
		n += 1 + c->num_lines;
	l = calloc(n + 1, sizeof(char *));
	if (!l)
		return -ENOMEM;
	for (Chip *c = b->chips; c; c = c->next) {
		if (!(l[k++] = strdup(c->path)))
			goto oom;
		for (unsigned int i = 0; i < c->num_lines; i++)
			if (!(l[k++] = strdup(c->lines[i].path)))
				goto oom;
	}
	*nodes = l;
	return 0;
oom:
	strv_free(l);
	return -ENOMEM;
}

#define CHIP_STR_PROP(fn, field)                                                          \
	static int fn(sd_bus *bus, const char *path, const char *iface, const char *prop,   \
		      sd_bus_message *reply, void *userdata, sd_bus_error *error)            \
	{                                                                                    \
		return sd_bus_message_append(reply, "s", ((Chip *)userdata)->field);         \
	}
CHIP_STR_PROP(chip_get_name, name)
CHIP_STR_PROP(chip_get_label, label)
CHIP_STR_PROP(chip_get_dev_path, dev_path)

static int chip_get_num_lines(sd_bus *bus, const char *path, const char *iface, const char *prop,
			      sd_bus_message *reply, void *userdata, sd_bus_error *error)
{
	return sd_bus_message_append(reply, "u", ((Chip *)userdata)->num_lines);
}

static const sd_bus_vtable chip_vtable[] = {
	SD_BUS_VTABLE_START(0),
	SD_BUS_PROPERTY("Name", "s", chip_get_name, 0, SD_BUS_VTABLE_PROPERTY_CONST),
	SD_BUS_PROPERTY("Label", "s", chip_get_label, 0, SD_BUS_VTABLE_PROPERTY_CONST),
	SD_BUS_PROPERTY("Path", "s", chip_get_dev_path, 0, SD_BUS_VTABLE_PROPERTY_CONST),
	SD_BUS_PROPERTY("NumLines", "u", chip_get_num_lines, 0, SD_BUS_VTABLE_PROPERTY_CONST),
	SD_BUS_VTABLE_END
};

/* One getter for all line properties: they all come from the same cached info. */
static int line_get(sd_bus *bus, const char *path, const char *iface, const char *prop,
		    sd_bus_message *reply, void *userdata, sd_bus_error *error)
{
	Line *l = userdata;
	struct gpiod_line_info *i = l->info;
	const char *s;

	if (strcmp(prop, "Chip") == 0)
		return sd_bus_message_append(reply, "o", l->chip->path);
	if (strcmp(prop, "Offset") == 0)
		return sd_bus_message_append(reply, "u", l->offset);
	if (strcmp(prop, "Name") == 0)
		return sd_bus_message_append(reply, "s", (s = gpiod_line_info_get_name(i)) ? s : "");
	if (strcmp(prop, "Used") == 0)
		return sd_bus_message_append(reply, "b", gpiod_line_info_is_used(i));
	if (strcmp(prop, "Consumer") == 0)
		return sd_bus_message_append(reply, "s",
					     (s = gpiod_line_info_get_consumer(i)) ? s : "");
	if (strcmp(prop, "Direction") == 0)
		return sd_bus_message_append(reply, "s",
					     gb_direction_name(gpiod_line_info_get_direction(i)));
	if (strcmp(prop, "Edge") == 0)
		return sd_bus_message_append(reply, "s",
					     gb_edge_name(gpiod_line_info_get_edge_detection(i)));
	if (strcmp(prop, "Bias") == 0)
		return sd_bus_message_append(reply, "s", gb_bias_name(gpiod_line_info_get_bias(i)));
	if (strcmp(prop, "Drive") == 0)
		return sd_bus_message_append(reply, "s", gb_drive_name(gpiod_line_info_get_drive(i)));
	if (strcmp(prop, "ActiveLow") == 0)
		return sd_bus_message_append(reply, "b", gpiod_line_info_is_active_low(i));
	if (strcmp(prop, "Debounced") == 0)
		return sd_bus_message_append(reply, "b", gpiod_line_info_is_debounced(i));
	if (strcmp(prop, "DebouncePeriodUs") == 0)
		return sd_bus_message_append(reply, "t",
					     (uint64_t)gpiod_line_info_get_debounce_period_us(i));
	if (strcmp(prop, "EventClock") == 0)
		return sd_bus_message_append(reply, "s",
					     gb_clock_name(gpiod_line_info_get_event_clock(i)));
	if (strcmp(prop, "Watchers") == 0) {
		int r = sd_bus_message_open_container(reply, 'a', "(su)");

		for (Watch *w = l->watchers; r >= 0 && w; w = w->line_next)
			r = sd_bus_message_append(reply, "(su)", w->client ? w->client->name : "",
						  w->client ? (uint32_t)w->client->uid : 0);
		return r < 0 ? r : sd_bus_message_close_container(reply);
	}
	if (strcmp(prop, "Request") == 0)
		return sd_bus_message_append(reply, "o", l->holder ? l->holder->path : "/");
	if (strcmp(prop, "RequestLabel") == 0)
		return sd_bus_message_append(reply, "s", l->holder ? l->holder->label : "");
	if (strcmp(prop, "Alias") == 0 || strcmp(prop, "Policy") == 0) {
		const struct gb_policy_entry *e = line_policy_entry(l);
		char where[300] = "";

		if (strcmp(prop, "Alias") == 0)
			return sd_bus_message_append(reply, "s", e && !e->group ? e->name : "");
		if (e)
			gb_policy_entry_describe(e, where, sizeof(where));
		return sd_bus_message_append(reply, "s", where);
	}
	return -ENOENT;
}

#define LINE_PROP(name, sig) SD_BUS_PROPERTY(name, sig, line_get, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE)

static const sd_bus_vtable line_vtable[] = {
	SD_BUS_VTABLE_START(0),
	SD_BUS_PROPERTY("Chip", "o", line_get, 0, SD_BUS_VTABLE_PROPERTY_CONST),
	SD_BUS_PROPERTY("Offset", "u", line_get, 0, SD_BUS_VTABLE_PROPERTY_CONST),
	LINE_PROP("Name", "s"),
	LINE_PROP("Used", "b"),
	LINE_PROP("Consumer", "s"),
	LINE_PROP("Direction", "s"),
	LINE_PROP("Edge", "s"),
	LINE_PROP("Bias", "s"),
	LINE_PROP("Drive", "s"),
	LINE_PROP("ActiveLow", "b"),
	LINE_PROP("Debounced", "b"),
	LINE_PROP("DebouncePeriodUs", "t"),
	LINE_PROP("EventClock", "s"),
	LINE_PROP("Request", "o"),
	LINE_PROP("RequestLabel", "s"),
	LINE_PROP("Watchers", "a(su)"),
	LINE_PROP("Alias", "s"),
	LINE_PROP("Policy", "s"),
	SD_BUS_VTABLE_END
};

int chip_add_vtables(Broker *b)
{
	int r;

	r = sd_bus_add_fallback_vtable(b->bus, NULL, GB_CHIP_PREFIX, GB_IFACE_CHIP, chip_vtable,
				       find_chip, b);
	if (r >= 0)
		r = sd_bus_add_fallback_vtable(b->bus, NULL, GB_CHIP_PREFIX, GB_IFACE_LINE,
					       line_vtable, find_line, b);
	if (r >= 0)
		r = sd_bus_add_node_enumerator(b->bus, NULL, GB_CHIP_PREFIX, enumerate_chips, b);
	return r;
}

/* --- finding lines ------------------------------------------------------------ */

int line_resolve(Broker *b, const struct gb_linespec *ls, Line **ret, sd_bus_error *error)
{
	Line *found = NULL;
	Chip *c;
	unsigned int matches = 0;
	char others[128] = "";

	switch (ls->kind) {
	case GB_LINESPEC_PATH:
		found = line_from_path(b, ls->text);
		if (!found)
			return sd_bus_error_setf(error, GB_ERROR_NOT_FOUND, "no line object %s", ls->text);
		break;
	case GB_LINESPEC_CHIP_OFFSET:
		c = chip_find(b, ls->text);
		if (!c)
			return sd_bus_error_setf(error, GB_ERROR_NOT_FOUND,
						 "no chip named or labelled '%s'", ls->text);
		if (ls->offset >= c->num_lines)
			return sd_bus_error_setf(error, GB_ERROR_NOT_FOUND,
						 "chip %s has %u lines (0-%u); there is no line %u",
						 c->name, c->num_lines, c->num_lines - 1, ls->offset);
		found = &c->lines[ls->offset];
		break;
	case GB_LINESPEC_NAME:
		/* An integrator's alias (gpio_export_link) names the line first. */
		if (gb_policy_find_alias(b->policy, ls->text))
			return line_resolve_alias(b, ls->text, ret, error);
		/* Names need not be unique across chips; an ambiguous name is refused
		 * rather than resolved to whichever chip came first. */
		for (c = b->chips; c; c = c->next)
			for (unsigned int i = 0; i < c->num_lines; i++) {
				const char *n = gpiod_line_info_get_name(c->lines[i].info);
				size_t len = strlen(others);

				if (!n || strcmp(n, ls->text) != 0)
					continue;
				if (matches++ == 0)
					found = &c->lines[i];
				snprintf(others + len, sizeof(others) - len, "%s%s:%u",
					 len ? ", " : "", c->name, i);
			}
		if (!found)
			return sd_bus_error_setf(error, GB_ERROR_NOT_FOUND, "no line named '%s'",
						 ls->text);
		if (matches > 1)
			return sd_bus_error_setf(error, GB_ERROR_INVALID_ARGS,
						 "line name '%s' is not unique (%s); use CHIP:OFFSET",
						 ls->text, others);
		break;
	}
	*ret = found;
	return 0;
}

int line_resolve_spec(Broker *b, const char *spec, Line **ret, sd_bus_error *error)
{
	struct gb_linespec ls;
	int r = gb_linespec_parse(spec, &ls);

	if (r == -ENOMEM)
		return r;
	if (r < 0)
		return sd_bus_error_setf(error, GB_ERROR_INVALID_ARGS,
					 "'%s' is not a line: use an alias, a line name, CHIP:OFFSET or an object path",
					 spec);
	r = line_resolve(b, &ls, ret, error);
	gb_linespec_clear(&ls);
	return r;
}
