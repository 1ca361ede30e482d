/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gpiobrokerctl's raw D-Bus reads, all of them but the caller's own credentials
 * (caller.c): the object tree (chips and lines),
 * one line's or request's properties, Manager.GetAccess, Manager.PolicyStatus, the
 * broker's name appearing, and lines' PropertiesChanged. They return plain structs
 * (ctl.h); the verbs call libgpiobroker for everything else and never sd-bus.
 *
 * Why here and not in libgpiobroker: the library's API and ABI are what applications
 * build on, and these are the CLI's views (gpioinfo's rows, a status report); they
 * read only documented properties (docs/dbus-api.md), with the library's bus
 * connection (gpiobroker_get_bus(), which is the bus even over a private one).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <systemd/sd-bus.h>

#include "ctl.h"

#define PROPERTIES_IFACE "org.freedesktop.DBus.Properties"

static sd_bus *bus(void)
{
	return gpiobroker_get_bus(B);
}

/* --- properties (a{sv}) into structs ------------------------------------------------- */

struct propmap {
	const char *key;
	char **str;
	int *b;
	uint32_t *u32;
	uint64_t *u64;
	bool setting; /* a line setting: notify's "reconfigured" */
};

/* Read one property value (variant) into the matching field, skipping others. */
static int read_prop(sd_bus_message *m, const struct propmap *map, unsigned int *settings)
{
	const char *contents, *v;
	char type;
	int r = sd_bus_message_peek_type(m, &type, &contents);

	if (r >= 0)
		r = sd_bus_message_enter_container(m, 'v', contents);
	if (r < 0)
		return r;
	if (map && map->str && (contents[0] == 's' || contents[0] == 'o')) {
		r = sd_bus_message_read_basic(m, contents[0], &v);
		free(*map->str);
		*map->str = NULL;
		if (r >= 0 && !(*map->str = strdup(v)))
			r = -ENOMEM;
	} else if (map && map->b && contents[0] == 'b') {
		r = sd_bus_message_read_basic(m, 'b', map->b);
	} else if (map && map->u32 && contents[0] == 'u') {
		r = sd_bus_message_read_basic(m, 'u', map->u32);
	} else if (map && map->u64 && contents[0] == 't') {
		r = sd_bus_message_read_basic(m, 't', map->u64);
	} else {
		r = sd_bus_message_skip(m, contents);
		map = NULL;
	}
	if (r < 0)
		return r;
	if (map && map->setting && settings)
		(*settings)++;
	return sd_bus_message_exit_container(m);
}

/* An a{sv} of properties into @map's fields; @settings counts the line settings read. */
static int parse_props(sd_bus_message *m, const struct propmap *map, unsigned int *settings)
{
	int r = sd_bus_message_enter_container(m, 'a', "{sv}");

	while (r >= 0 && (r = sd_bus_message_enter_container(m, 'e', "sv")) > 0) {
		const struct propmap *p = map;
		const char *key;

		r = sd_bus_message_read(m, "s", &key);
		while (p->key && strcmp(p->key, key) != 0)
			p++;
		if (r >= 0)
			r = read_prop(m, p->key ? p : NULL, settings);
		if (r >= 0)
			r = sd_bus_message_exit_container(m);
	}
	return r < 0 ? r : sd_bus_message_exit_container(m);
}

static int parse_chip(sd_bus_message *m, struct chipinfo *c)
{
	const struct propmap map[] = {
		{ "Name", &c->name }, { "Label", &c->label }, { "NumLines", .u32 = &c->num_lines },
		{ "ByPath", &c->by_path }, { "ById", &c->by_id }, { "Serial", &c->serial }, { 0 }
	};

	return parse_props(m, map, NULL);
}

static int parse_line(sd_bus_message *m, struct lineinfo *l, unsigned int *settings)
{
	const struct propmap map[] = {
		{ "Chip", &l->chip }, { "Offset", .u32 = &l->offset }, { "Name", &l->name },
		{ "Used", .b = &l->used }, { "Consumer", &l->consumer },
		{ "Direction", &l->direction, .setting = true }, { "Edge", &l->edge, .setting = true },
		{ "Bias", &l->bias, .setting = true }, { "Drive", &l->drive, .setting = true },
		{ "ActiveLow", .b = &l->active_low, .setting = true }, { "Request", &l->request },
		{ "RequestLabel", &l->request_label }, { "Alias", &l->alias },
		{ "EventClock", &l->clock, .setting = true },
		{ "DebouncePeriodUs", .u64 = &l->debounce, .setting = true }, { 0 }
	};

	return parse_props(m, map, settings);
}

/* --- the object tree --------------------------------------------------------------- */

void lineinfo_clear(struct lineinfo *l)
{
	free(l->path), free(l->chip), free(l->name), free(l->consumer), free(l->direction);
	free(l->edge), free(l->bias), free(l->drive), free(l->request);
	free(l->request_label), free(l->alias), free(l->clock);
	memset(l, 0, sizeof(*l));
}

void tree_free(struct tree *t)
{
	for (size_t i = 0; i < t->n_chips; i++) {
		free(t->chips[i].path);
		free(t->chips[i].name);
		free(t->chips[i].label);
		free(t->chips[i].by_path);
		free(t->chips[i].by_id);
		free(t->chips[i].serial);
	}
	for (size_t i = 0; i < t->n_lines; i++)
		lineinfo_clear(&t->lines[i]);
	free(t->chips);
	free(t->lines);
	memset(t, 0, sizeof(*t));
}

static int cmp_chip(const void *a, const void *b)
{
	const struct chipinfo *x = a, *y = b;

	return strverscmp(x->name ? x->name : "", y->name ? y->name : "");
}

static int cmp_line(const void *a, const void *b)
{
	const struct lineinfo *x = a, *y = b;
	int c = strverscmp(x->chip ? x->chip : "", y->chip ? y->chip : "");

	return c ? c : (x->offset > y->offset) - (x->offset < y->offset);
}

/* A property the broker did not send reads "": an older broker has no ByPath, ById or
 * Serial, and GetManagedObjects leaves them out rather than failing. */
static int chip_defaults(struct chipinfo *c)
{
	char **strs[] = { &c->name, &c->label, &c->by_path, &c->by_id, &c->serial };

	for (size_t i = 0; i < sizeof(strs) / sizeof(strs[0]); i++)
		if (!*strs[i] && !(*strs[i] = strdup("")))
			return -ENOMEM;
	return 0;
}

/* One interface of one object of GetManagedObjects: a chip or a line, or skipped. */
static int tree_add(struct tree *t, sd_bus_message *m, const char *path, const char *iface)
{
	if (strcmp(iface, GB_IFACE_CHIP) == 0) {
		struct chipinfo *c = realloc(t->chips, (t->n_chips + 1) * sizeof(*c));

		if (!c)
			return -ENOMEM;
		t->chips = c;
		c = memset(&t->chips[t->n_chips++], 0, sizeof(*c));
		return (c->path = strdup(path)) ? parse_chip(m, c) : -ENOMEM;
	}
	if (strcmp(iface, GB_IFACE_LINE) == 0) {
		struct lineinfo *l = realloc(t->lines, (t->n_lines + 1) * sizeof(*l));

		if (!l)
			return -ENOMEM;
		t->lines = l;
		l = memset(&t->lines[t->n_lines++], 0, sizeof(*l));
		return (l->path = strdup(path)) ? parse_line(m, l, NULL) : -ENOMEM;
	}
	return sd_bus_message_skip(m, "a{sv}");
}

static int parse_tree(sd_bus_message *m, struct tree *t)
{
	int r = sd_bus_message_enter_container(m, 'a', "{oa{sa{sv}}}");

	while (r >= 0 && (r = sd_bus_message_enter_container(m, 'e', "oa{sa{sv}}")) > 0) {
		const char *path, *iface;

		r = sd_bus_message_read(m, "o", &path);
		if (r >= 0)
			r = sd_bus_message_enter_container(m, 'a', "{sa{sv}}");
		while (r >= 0 && (r = sd_bus_message_enter_container(m, 'e', "sa{sv}")) > 0) {
			r = sd_bus_message_read(m, "s", &iface);
			if (r >= 0)
				r = tree_add(t, m, path, iface);
			if (r >= 0)
				r = sd_bus_message_exit_container(m);
		}
		if (r >= 0)
			r = sd_bus_message_exit_container(m);
		if (r >= 0)
			r = sd_bus_message_exit_container(m);
	}
	return r;
}

int bus_load_tree(struct tree *t, bool quiet)
{
	sd_bus_error e = SD_BUS_ERROR_NULL;
	sd_bus_message *reply = NULL;
	int r;

	memset(t, 0, sizeof(*t));
	r = sd_bus_call_method(bus(), GB_BUS_NAME, GB_ROOT_PATH, "org.freedesktop.DBus.ObjectManager",
			       "GetManagedObjects", &e, &reply, "");
	if (r < 0) {
		bool down = bus_error_is_down(e.name);

		if (!quiet && down)
			not_running();
		else if (!quiet)
			fprintf(stderr, "gpiobrokerctl: %s: cannot read the broker's objects: %s\n",
				cur_cmd, e.message ? e.message : strerror(-r));
		sd_bus_error_free(&e);
		return down ? -EHOSTDOWN : r;
	}
	r = parse_tree(reply, t);
	sd_bus_message_unref(reply);
	for (size_t i = 0; r >= 0 && i < t->n_chips; i++)
		r = chip_defaults(&t->chips[i]);
	if (r < 0) {
		if (!quiet)
			fprintf(stderr, "gpiobrokerctl: %s: cannot parse the broker's objects: %s\n",
				cur_cmd, strerror(-r));
		tree_free(t);
		return r;
	}
	qsort(t->chips, t->n_chips, sizeof(*t->chips), cmp_chip);
	qsort(t->lines, t->n_lines, sizeof(*t->lines), cmp_line);
	return 0;
}

const struct chipinfo *tree_chip_by_path(const struct tree *t, const char *path)
{
	for (size_t i = 0; path && i < t->n_chips; i++)
		if (strcmp(t->chips[i].path, path) == 0)
			return &t->chips[i];
	return NULL;
}

struct lineinfo *tree_line_by_path(const struct tree *t, const char *path)
{
	for (size_t i = 0; path && i < t->n_lines; i++)
		if (strcmp(t->lines[i].path, path) == 0)
			return &t->lines[i];
	return NULL;
}

const struct lineinfo *tree_line_at(const struct tree *t, const char *chip, unsigned int offset)
{
	for (size_t i = 0; chip && i < t->n_lines; i++) {
		const struct chipinfo *ch = tree_chip_by_path(t, t->lines[i].chip);

		if (ch && strcmp(ch->name, chip) == 0 && t->lines[i].offset == offset)
			return &t->lines[i];
	}
	return NULL;
}

/* --- single objects ------------------------------------------------------------------- */

int bus_read_line(const char *path, struct lineinfo *l)
{
	sd_bus_error e = SD_BUS_ERROR_NULL;
	sd_bus_message *reply = NULL;
	int r;

	memset(l, 0, sizeof(*l));
	r = sd_bus_call_method(bus(), GB_BUS_NAME, path, PROPERTIES_IFACE, "GetAll", &e, &reply,
			       "s", GB_IFACE_LINE);
	if (r >= 0)
		r = (l->path = strdup(path)) ? parse_line(reply, l, NULL) : -ENOMEM;
	if (r < 0)
		lineinfo_clear(l);
	sd_bus_message_unref(reply);
	sd_bus_error_free(&e);
	return r;
}

int bus_request_owner(const char *request_path, uint32_t *uid)
{
	sd_bus_error e = SD_BUS_ERROR_NULL;
	int r = sd_bus_get_property_trivial(bus(), GB_BUS_NAME, request_path, GB_IFACE_REQUEST,
					    "OwnerUid", &e, 'u', uid);

	sd_bus_error_free(&e);
	return r;
}

char *bus_version(void)
{
	sd_bus_error e = SD_BUS_ERROR_NULL;
	char *version = NULL;

	sd_bus_get_property_string(bus(), GB_BUS_NAME, GB_ROOT_PATH, GB_IFACE_MANAGER, "Version",
				   &e, &version);
	sd_bus_error_free(&e);
	return version;
}

int bus_count_watchers(const char *line_path)
{
	sd_bus_error e = SD_BUS_ERROR_NULL;
	sd_bus_message *reply = NULL;
	const char *owner;
	uint32_t uid;
	int r, n = 0;

	r = sd_bus_get_property(bus(), GB_BUS_NAME, line_path, GB_IFACE_LINE, "Watchers", &e,
				&reply, "a(su)");
	if (r >= 0)
		r = sd_bus_message_enter_container(reply, 'a', "(su)");
	while (r >= 0 && (r = sd_bus_message_read(reply, "(su)", &owner, &uid)) > 0)
		n++;
	sd_bus_message_unref(reply);
	sd_bus_error_free(&e);
	return n;
}

/* --- Manager.GetAccess --------------------------------------------------------------- */

/* An "as" variant, joined with commas. */
static int read_strv_joined(sd_bus_message *m, char *buf, size_t size)
{
	const char *item;
	size_t len = 0;
	int r;

	buf[0] = '\0';
	r = sd_bus_message_enter_container(m, 'v', "as");
	if (r >= 0)
		r = sd_bus_message_enter_container(m, 'a', "s");
	while (r >= 0 && (r = sd_bus_message_read(m, "s", &item)) > 0) {
		int n = snprintf(buf + len, size - len, "%s%s", len ? "," : "", item);

		if (n > 0 && (size_t)n < size - len)
			len += (size_t)n;
	}
	if (r >= 0)
		r = sd_bus_message_exit_container(m);
	return r < 0 ? r : sd_bus_message_exit_container(m);
}

static int read_access_entry(sd_bus_message *m, const char *key, struct access *a)
{
	const char *str;
	int r;

	if (strcmp(key, "may-use") == 0)
		return sd_bus_message_read(m, "v", "b", &a->may_use);
	if (strcmp(key, "persistent") == 0)
		return sd_bus_message_read(m, "v", "b", &a->persistent);
	if (strcmp(key, "direct") == 0)
		return sd_bus_message_read(m, "v", "b", &a->direct);
	if (strcmp(key, "root-bypass") == 0)
		return sd_bus_message_read(m, "v", "b", &a->bypass);
	if (strcmp(key, "entry") == 0 || strcmp(key, "reason") == 0) {
		r = sd_bus_message_read(m, "v", "s", &str);
		if (r >= 0 && key[0] == 'e')
			snprintf(a->entry, sizeof(a->entry), "%s", str);
		else if (r >= 0)
			snprintf(a->reason, sizeof(a->reason), "%s", str);
		return r;
	}
	if (strcmp(key, "directions") == 0)
		return read_strv_joined(m, a->directions, sizeof(a->directions));
	if (strcmp(key, "edges") == 0)
		return read_strv_joined(m, a->edges, sizeof(a->edges));
	return sd_bus_message_skip(m, "v");
}

void bus_get_access(const char *line_path, struct access *a)
{
	sd_bus_error e = SD_BUS_ERROR_NULL;
	sd_bus_message *reply = NULL;
	int r;

	memset(a, 0, sizeof(*a));
	r = sd_bus_call_method(bus(), GB_BUS_NAME, GB_ROOT_PATH, GB_IFACE_MANAGER, "GetAccess", &e,
			       &reply, "s", line_path);
	if (r < 0) {
		snprintf(a->error, sizeof(a->error), "%s", e.message ? e.message : strerror(-r));
		goto out;
	}
	r = sd_bus_message_enter_container(reply, 'a', "{sv}");
	while (r >= 0 && (r = sd_bus_message_enter_container(reply, 'e', "sv")) > 0) {
		const char *key;

		r = sd_bus_message_read(reply, "s", &key);
		if (r >= 0)
			r = read_access_entry(reply, key, a);
		if (r >= 0)
			r = sd_bus_message_exit_container(reply);
	}
	if (r < 0)
		snprintf(a->error, sizeof(a->error), "unexpected reply: %s", strerror(-r));
	else
		a->known = 1;
out:
	sd_bus_error_free(&e);
	sd_bus_message_unref(reply);
}

/* --- the broker's name ---------------------------------------------------------------- */

static int on_owner(sd_bus_message *m, void *userdata, sd_bus_error *e)
{
	const char *name, *old, *new;

	if (sd_bus_message_read(m, "sss", &name, &old, &new) >= 0 && *new)
		*(int *)userdata = 1;
	return 0;
}

static uint64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

int bus_wait_broker(int64_t timeout_us)
{
	uint64_t deadline = timeout_us >= 0 ? now_us() + (uint64_t)timeout_us : UINT64_MAX;
	sd_bus_error e = SD_BUS_ERROR_NULL;
	sd_bus_message *reply = NULL;
	sd_bus_slot *slot = NULL;
	int r, has = 0;

	/* Match first, then ask: an owner appearing in between is seen either way. */
	r = sd_bus_add_match(bus(), &slot,
			     "type='signal',sender='org.freedesktop.DBus',member='NameOwnerChanged',"
			     "arg0='" GB_BUS_NAME "'", on_owner, &has);
	if (r >= 0)
		r = sd_bus_call_method(bus(), "org.freedesktop.DBus", "/org/freedesktop/DBus",
				       "org.freedesktop.DBus", "NameHasOwner", &e, &reply, "s",
				       GB_BUS_NAME);
	if (r >= 0 && !has)
		r = sd_bus_message_read(reply, "b", &has);
	while (r >= 0 && !has) {
		uint64_t now;

		r = sd_bus_process(bus(), NULL);
		if (r != 0)
			continue;
		now = now_us();
		if (now >= deadline)
			break;
		r = sd_bus_wait(bus(), deadline == UINT64_MAX ? UINT64_MAX : deadline - now);
	}
	sd_bus_message_unref(reply);
	sd_bus_slot_unref(slot);
	if (r < 0)
		fprintf(stderr, "gpiobrokerctl: %s: %s\n", cur_cmd, e.message ? e.message : strerror(-r));
	sd_bus_error_free(&e);
	return r < 0 ? r : has;
}

/* --- lines' PropertiesChanged ----------------------------------------------------------- */

struct line_follow {
	sd_bus_slot *slot;
	struct tree *tree;
	line_change_fn fn;
	void *userdata;
};

static int on_properties_changed(sd_bus_message *m, void *userdata, sd_bus_error *err)
{
	struct line_follow *f = userdata;
	struct line_change c = { .line = tree_line_by_path(f->tree, sd_bus_message_get_path(m)) };
	unsigned int settings = 0;
	const char *iface;

	if (!c.line || sd_bus_message_read(m, "s", &iface) < 0 || strcmp(iface, GB_IFACE_LINE) != 0)
		return 0;
	/* The broker sends every property each time: what changed is told by the line's
	 * previous state; Used is marked absent to tell whether it came. */
	c.was_used = c.line->used;
	c.line->used = -1;
	if (parse_line(m, c.line, &settings) < 0)
		fprintf(stderr, "gpiobrokerctl: %s: a change of %s could not be read\n", cur_cmd,
			c.line->path);
	c.used = c.line->used;
	if (c.line->used < 0)
		c.line->used = c.was_used;
	c.settings = settings > 0;
	f->fn(&c, f->userdata);
	return 0;
}

static int on_lost(sd_bus_message *m, void *userdata, sd_bus_error *e)
{
	struct evloop *l = userdata;

	l->lost = true;
	return sd_event_exit(l->loop, -ENOTCONN);
}

int bus_watch_lost(struct evloop *l)
{
	/* sd-bus's own signal, sent by nobody on the bus: no sender to match. */
	return sd_bus_match_signal(bus(), &l->lost_slot, NULL, "/org/freedesktop/DBus/Local",
				   "org.freedesktop.DBus.Local", "Disconnected", on_lost, l);
}

void bus_unwatch_lost(struct evloop *l)
{
	l->lost_slot = sd_bus_slot_unref(l->lost_slot);
}

struct line_follow *bus_follow_lines(sd_event *loop, struct tree *t, line_change_fn fn,
				     void *userdata)
{
	struct line_follow *f = calloc(1, sizeof(*f));
	int r;

	if (!f)
		return NULL;
	*f = (struct line_follow){ .tree = t, .fn = fn, .userdata = userdata };
	r = sd_bus_attach_event(bus(), loop, 0);
	if (r >= 0)
		r = sd_bus_match_signal(bus(), &f->slot, GB_BUS_NAME, NULL, PROPERTIES_IFACE,
					"PropertiesChanged", on_properties_changed, f);
	if (r < 0) {
		line_follow_free(f);
		errno = -r;
		return NULL;
	}
	return f;
}

struct line_follow *line_follow_free(struct line_follow *f)
{
	if (!f)
		return NULL;
	sd_bus_slot_unref(f->slot);
	sd_bus_detach_event(bus());
	free(f);
	return NULL;
}
