/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A policy slice's lines as the parent chips' lines (slice.h). Each item of
 * "lines" is an alias (its [line] entry's target), CHIP:OFFSET (the chip named as
 * an entry's "chip" names one), or a kernel line name; the chips are those under
 * /dev, but for the aggregator's own: a slice is never made of another slice.
 */
#include <dirent.h>
#include <errno.h>
#include <gpiod.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "slice.h"

struct chip {
	char name[64];
	char label[64];
	struct gpiod_chip *gc;
	unsigned int num_lines;
};

struct chips {
	struct chip *v;
	size_t n;
};

static void chips_free(struct chips *c)
{
	for (size_t i = 0; i < c->n; i++)
		gpiod_chip_close(c->v[i].gc);
	free(c->v);
}

static bool is_slice_chip(const char *name)
{
	char path[300], real[PATH_MAX];

	snprintf(path, sizeof(path), "/sys/bus/gpio/devices/%s", name);
	return realpath(path, real) && strstr(real, "/gpio-aggregator.");
}

static int chips_scan(struct chips *c)
{
	DIR *d = opendir("/dev");
	struct dirent *de;

	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		struct gpiod_chip_info *info;
		struct gpiod_chip *gc;
		struct chip *n;
		char path[300];

		if (strncmp(de->d_name, "gpiochip", 8) != 0 || is_slice_chip(de->d_name))
			continue;
		snprintf(path, sizeof(path), "/dev/%s", de->d_name);
		gc = gpiod_chip_open(path);
		if (!gc)
			continue;
		info = gpiod_chip_get_info(gc);
		n = realloc(c->v, (c->n + 1) * sizeof(*n));
		if (!info || !n) {
			gpiod_chip_info_free(info);
			gpiod_chip_close(gc);
			if (n)
				c->v = n;
			closedir(d);
			return -ENOMEM;
		}
		c->v = n;
		n = &c->v[c->n++];
		snprintf(n->name, sizeof(n->name), "%s", gpiod_chip_info_get_name(info));
		snprintf(n->label, sizeof(n->label), "%s", gpiod_chip_info_get_label(info));
		n->num_lines = (unsigned int)gpiod_chip_info_get_num_lines(info);
		n->gc = gc;
		gpiod_chip_info_free(info);
	}
	closedir(d);
	return 0;
}

/* The failure of one item, "file:line: slice NAME: line 'ITEM': why". */
static int fail(int r, const struct gb_policy_slice *ps, const char *item, char *err, size_t size,
		const char *fmt, ...) _printf_(6, 7);
static int fail(int r, const struct gb_policy_slice *ps, const char *item, char *err, size_t size,
		const char *fmt, ...)
{
	char why[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	snprintf(err, size, "%s:%u: slice %s: line '%s': %s", ps->file, ps->lineno, ps->name, item,
		 why);
	return r;
}

static int add_line(struct gb_slice *s, const struct chip *c, unsigned int offset,
		    const char *item)
{
	struct gb_slice_line *n = realloc(s->lines, (s->n_lines + 1) * sizeof(*n));

	if (!n)
		return -ENOMEM;
	s->lines = n;
	n = &s->lines[s->n_lines];
	memset(n, 0, sizeof(*n));
	snprintf(n->parent, sizeof(n->parent), "%s", c->name);
	n->offset = offset;
	n->item = strdup(item);
	if (!n->item)
		return -ENOMEM;
	s->n_lines++;
	return 0;
}

/* The one chip with a line named @p name: 1, 0 if none, -ENOTUNIQ if two have one. */
static int find_line_name(const struct chips *c, const char *name, size_t *ci,
			  unsigned int *offset)
{
	int found = 0;

	for (size_t i = 0; i < c->n; i++) {
		int o = gpiod_chip_get_line_offset_from_name(c->v[i].gc, name);

		if (o < 0)
			continue;
		if (found)
			return -ENOTUNIQ;
		found = 1;
		*ci = i;
		*offset = (unsigned int)o;
	}
	return found;
}

/* The one chip @p e names (by name or label: the helper knows no udev identity). */
static int find_entry_chip(const struct chips *c, const struct gb_policy_entry *e, size_t *ci)
{
	int found = 0;

	for (size_t i = 0; i < c->n; i++) {
		if (!gb_policy_entry_names_chip(e, c->v[i].name, c->v[i].label, NULL))
			continue;
		if (found)
			return -ENOTUNIQ;
		found = 1;
		*ci = i;
	}
	return found;
}

/* "CHIP:OFFSET": 1 with the chip in @p e and the offset, 0 if @p item is not one. */
static int parse_chip_offset(const char *item, struct gb_policy_entry *e, unsigned int *offset,
			     char *why, size_t size)
{
	const char *colon = strrchr(item, ':');
	_cleanup_free_ char *chip = NULL;
	unsigned long v;
	char *end;

	if (!colon || colon == item || !colon[1] || strspn(colon + 1, "0123456789") != strlen(colon + 1))
		return 0;
	errno = 0;
	v = strtoul(colon + 1, &end, 10);
	if (errno || v > UINT_MAX)
		return 0;
	chip = strndup(item, (size_t)(colon - item));
	if (!chip)
		return -ENOMEM;
	*offset = (unsigned int)v;
	return gb_policy_parse_chip(e, chip, why, size) < 0 ? -EINVAL : 1;
}

/* The entry covering the line, for its safe state; as-is for a line none covers. */
static enum gb_safe_state safe_of(const struct gb_policy *p, const struct chip *c,
				  unsigned int offset)
{
	struct gpiod_line_info *info = gpiod_chip_get_line_info(c->gc, offset);
	struct gb_line_ident l = {
		.chip_name = c->name, .chip_label = c->label, .offset = offset,
		.line_name = info ? gpiod_line_info_get_name(info) : NULL,
	};
	const struct gb_policy_entry *e;
	char ambiguous[256];

	e = gb_policy_match(p, &l, ambiguous, sizeof(ambiguous));
	gpiod_line_info_free(info);
	return e ? e->safe_state : GB_SAFE_AS_IS;
}

static int resolve_entry(const struct chips *c, const struct gb_policy_slice *ps,
			 const struct gb_policy_entry *e, const char *item, struct gb_slice *out,
			 char *err, size_t size)
{
	size_t ci = 0, first = out->n_lines;
	unsigned int offset;
	int r;

	if (e->line_name) {
		r = find_line_name(c, e->line_name, &ci, &offset);
		if (r == -ENOTUNIQ)
			return fail(-EINVAL, ps, item, err, size, "line name '%s' is on more than one chip", e->line_name);
		if (r == 0)
			return fail(-EINVAL, ps, item, err, size, "no chip has a line named '%s'", e->line_name);
		r = add_line(out, &c->v[ci], offset, item);
	} else {
		r = find_entry_chip(c, e, &ci);
		if (r == -ENOTUNIQ)
			return fail(-EINVAL, ps, item, err, size, "chip '%s' matches more than one chip", e->chip);
		if (r == 0)
			return fail(-EINVAL, ps, item, err, size, "no chip present is '%s'%s", e->chip,
				    e->chip_by != GB_CHIP_BY_NAME ? " (slices name chips by name or label only)" : "");
		for (size_t i = 0; r >= 0 && i < e->n_offsets; i++) {
			if (e->offsets[i] >= c->v[ci].num_lines)
				return fail(-EINVAL, ps, item, err, size, "%s has no offset %u",
					    c->v[ci].name, e->offsets[i]);
			r = add_line(out, &c->v[ci], e->offsets[i], item);
		}
	}
	for (size_t i = first; r >= 0 && i < out->n_lines; i++)
		out->lines[i].safe = e->safe_state;
	return r;
}

static int resolve_item(const struct gb_policy *p, const struct chips *c,
			const struct gb_policy_slice *ps, const char *item, struct gb_slice *out,
			char *err, size_t size)
{
	const struct gb_policy_entry *e = gb_policy_find_alias(p, item);
	struct gb_policy_entry tmp = { 0 };
	unsigned int offset = 0;
	char why[512] = "";
	size_t ci = 0;
	int r;

	if (e && !e->group)
		return resolve_entry(c, ps, e, item, out, err, size);
	r = parse_chip_offset(item, &tmp, &offset, why, sizeof(why));
	if (r > 0) {
		r = find_entry_chip(c, &tmp, &ci);
		gb_policy_entry_clear(&tmp);
		if (r == -ENOTUNIQ)
			return fail(-EINVAL, ps, item, err, size, "the chip matches more than one chip");
		if (r == 0)
			return fail(-EINVAL, ps, item, err, size, "no chip present has that name or label");
		if (offset >= c->v[ci].num_lines)
			return fail(-EINVAL, ps, item, err, size, "%s has no offset %u", c->v[ci].name, offset);
	} else if (r < 0) {
		gb_policy_entry_clear(&tmp);
		if (r == -ENOMEM)
			return r;
		return fail(-EINVAL, ps, item, err, size, "%s", why);
	} else {
		r = find_line_name(c, item, &ci, &offset);
		if (r == -ENOTUNIQ)
			return fail(-EINVAL, ps, item, err, size, "more than one chip has a line of that name");
		if (r == 0)
			return fail(-EINVAL, ps, item, err, size,
				    "not an alias, a kernel line name or CHIP:OFFSET of a chip present");
	}
	r = add_line(out, &c->v[ci], offset, item);
	if (r >= 0)
		out->lines[out->n_lines - 1].safe = safe_of(p, &c->v[ci], offset);
	return r;
}

static const struct chip *chip_by_name(const struct chips *c, const char *name)
{
	for (size_t i = 0; i < c->n; i++)
		if (strcmp(c->v[i].name, name) == 0)
			return &c->v[i];
	return NULL;
}

/* The aggregator finds a chip by its label: it must be unique and one word. */
static int check_label(const struct chips *c, const struct chip *chip)
{
	if (!chip->label[0] || strpbrk(chip->label, " \t\n"))
		return -EINVAL;
	for (size_t i = 0; i < c->n; i++)
		if (&c->v[i] != chip && strcmp(c->v[i].label, chip->label) == 0)
			return -ENOTUNIQ;
	return 0;
}

static char *join(char **v, size_t n)
{
	size_t len = 1;
	char *s;

	for (size_t i = 0; i < n; i++)
		len += strlen(v[i]) + 1;
	s = calloc(1, len);
	for (size_t i = 0; s && i < n; i++) {
		if (i)
			strcat(s, ",");
		strcat(s, v[i]);
	}
	return s;
}

static int make_spec(const struct chips *c, const struct gb_policy_slice *ps, struct gb_slice *out,
		     char *err, size_t size)
{
	size_t len = 0;
	FILE *f = open_memstream(&out->spec, &len);

	if (!f)
		return -ENOMEM;
	for (size_t i = 0; i < out->n_lines; i++) {
		const struct gb_slice_line *l = &out->lines[i];
		const struct chip *chip = chip_by_name(c, l->parent);
		int r = check_label(c, chip);

		for (size_t j = 0; j < i && r >= 0; j++)
			if (strcmp(out->lines[j].parent, l->parent) == 0 && out->lines[j].offset == l->offset)
				r = -EEXIST;
		if (r < 0)
			fclose(f);
		if (r == -EEXIST)
			return fail(-EINVAL, ps, l->item, err, size, "%s:%u is in the slice twice",
				    chip->name, l->offset);
		if (r == -ENOTUNIQ)
			return fail(-EINVAL, ps, l->item, err, size, "%s's label '%s' is not unique, "
				    "and the aggregator finds chips by label", chip->name, chip->label);
		if (r < 0)
			return fail(-EINVAL, ps, l->item, err, size, "%s's label '%s' cannot name it "
				    "to the aggregator", chip->name, chip->label);
		/* One chip and one offset at a time: the aggregator sorts the offsets of a
		 * list, and the slice keeps the policy's order. */
		fprintf(f, "%s%s %u", i ? " " : "", chip->label, l->offset);
	}
	return fclose(f) == 0 ? 0 : -ENOMEM;
}

/* A line someone holds cannot go into the aggregator: say who holds it. */
static int check_free(const struct chips *c, const struct gb_policy_slice *ps, struct gb_slice *out,
		      const char *own_device, char *err, size_t size)
{
	for (size_t i = 0; i < out->n_lines; i++) {
		const struct gb_slice_line *l = &out->lines[i];
		struct gpiod_line_info *info = gpiod_chip_get_line_info(chip_by_name(c, l->parent)->gc,
									 l->offset);
		int r = 0;

		if (!info)
			return fail(-errno, ps, l->item, err, size, "%s:%u: %m", l->parent, l->offset);
		/* The slice's own aggregator device holds the lines of a slice kept. */
		if (gpiod_line_info_is_used(info) &&
		    !(own_device && *own_device &&
		      strcmp(gpiod_line_info_get_consumer(info) ?: "", own_device) == 0)) {
			const char *consumer = gpiod_line_info_get_consumer(info);

			r = fail(-EBUSY, ps, l->item, err, size, "%s:%u is busy, held by '%s'", l->parent,
				 l->offset, consumer && *consumer ? consumer : "(the kernel)");
		}
		gpiod_line_info_free(info);
		if (r < 0)
			return r;
	}
	return 0;
}

int slice_resolve(const struct gb_policy *p, const struct gb_policy_slice *ps,
		  const char *own_device, struct gb_slice *out, char *err, size_t size)
{
	struct chips c = { 0 };
	int r;

	gb_slice_clear(out);
	out->name = strdup(ps->name);
	out->users = join(ps->users, ps->n_users);
	out->groups = join(ps->groups, ps->n_groups);
	if (!out->name || !out->users || !out->groups)
		return -ENOMEM;
	r = chips_scan(&c);
	if (r < 0) {
		snprintf(err, size, "%s:%u: slice %s: cannot list the chips: %s", ps->file, ps->lineno,
			 ps->name, strerror(-r));
		return r;
	}
	for (size_t i = 0; r >= 0 && i < ps->n_lines; i++)
		r = resolve_item(p, &c, ps, ps->lines[i], out, err, size);
	if (r >= 0 && !out->n_lines)
		r = fail(-EINVAL, ps, "", err, size, "the slice has no lines");
	if (r >= 0)
		r = make_spec(&c, ps, out, err, size);
	if (r >= 0)
		r = check_free(&c, ps, out, own_device, err, size);
	chips_free(&c);
	return r;
}
