/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Integrator policy: reading a policy directory, and the checks that need every
 * file at once (a line covered twice). See gpiod-broker.policy(5).
 *
 * The parser is strict on purpose: an integrator's typo must not silently widen
 * or narrow access, so unknown keys, repeated keys, contradictions and a line
 * covered by two entries are all errors, reported as "file:line: message".
 */
#include "policy.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "macro.h"
#include "sysroot.h"

/* --- whole-policy checks ----------------------------------------------------- */

static bool same_chip_offset(const struct gb_policy_entry *a, const struct gb_policy_entry *b,
			     unsigned int *off)
{
	if (!a->chip || !b->chip || strcmp(a->chip, b->chip) != 0)
		return false;
	for (size_t i = 0; i < a->n_offsets; i++)
		for (size_t j = 0; j < b->n_offsets; j++)
			if (a->offsets[i] == b->offsets[j]) {
				*off = a->offsets[i];
				return true;
			}
	return false;
}

/* Checks across entries (and files): names are unique, no line is covered twice as
 * far as can be told without the hardware. Entries naming a line by kernel name and
 * by chip+offset can still meet on a real line: gb_policy_match() refuses those. */
int gb_policy_finish(struct gb_policy *p, char **errors)
{
	int n = 0;

	for (size_t i = 0; i < p->n_entries; i++)
		for (size_t j = 0; j < i; j++) {
			struct gb_policy_entry *a = &p->entries[i], *b = &p->entries[j];
			char where[300];
			unsigned int off;

			gb_policy_entry_describe(b, where, sizeof(where));
			if (strcmp(a->name, b->name) == 0) {
				gb_policy_add_error(errors, a->file, a->lineno, "the name '%s' is already used by %s",
					  a->name, where);
				n++;
			} else if (a->line_name && b->line_name && strcmp(a->line_name, b->line_name) == 0) {
				gb_policy_add_error(errors, a->file, a->lineno,
					  "line '%s' is already covered by %s", a->line_name, where);
				n++;
			} else if (same_chip_offset(a, b, &off)) {
				gb_policy_add_error(errors, a->file, a->lineno,
					  "line %s:%u is already covered by %s", a->chip, off, where);
				n++;
			}
		}
	n += gb_policy_actions_finish(p, errors);
	return n + gb_policy_slices_finish(p, errors);
}

static int load_file(struct gb_policy *p, int dirfd, const char *dir, const char *name,
		     char **errors)
{
	char path[PATH_MAX], why[64];
	struct stat st;
	_cleanup_free_ char *buf = NULL;
	size_t len = 0;
	int fd, r;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	/* The broker does not follow a symlink here, in the image or on this machine. */
	fd = gb_open_regular(p->sysroot != NULL, dirfd, name, O_NOFOLLOW, &st, why, sizeof(why));
	if (fd < 0) {
		gb_policy_add_error(errors, path, 0, "%s", why);
		return 1;
	}
	/* Whoever can write the policy decides who drives the hardware. An image's
	 * tree (sysroot) belongs to whoever builds it; its modes are the image's. */
	if ((st.st_uid != 0 && !p->sysroot) || (st.st_mode & (S_IWGRP | S_IWOTH))) {
		gb_policy_add_error(errors, path, 0, "must be owned by root and not writable by group or others "
			  "(is uid %u, mode %04o)", (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777));
		close(fd);
		return 1;
	}
	r = gb_read_all(fd, GB_POLICY_FILE_MAX, &buf, &len, why, sizeof(why));
	close(fd);
	if (r == -ENOMEM)
		return r;
	if (r < 0) {
		gb_policy_add_error(errors, path, 0, "%s", why);
		return 1;
	}
	return gb_policy_parse(p, path, buf, len, errors);
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static struct gb_policy *gb_policy_load_into(struct gb_policy *p, const char *dir, char **errors,
					     char **warnings);

/* Appends @p text (taken) to the growing string *@p to. */
static void append(char **to, char *text)
{
	size_t old = *to ? strlen(*to) : 0;
	char *n;

	if (!text)
		return;
	n = realloc(*to, old + strlen(text) + 1);
	if (n) {
		strcpy(n + old, text);
		*to = n;
	}
	free(text);
}

unsigned int gb_policy_count_lines(const char *s)
{
	unsigned int n = 0;

	for (; s && *s; s++)
		n += *s == '\n';
	return n;
}

struct gb_policy *gb_policy_load_from(const char *dir, const char *sysroot, char **errors,
				      char **warnings)
{
	struct gb_policy *p = gb_policy_new();
	size_t l = sysroot ? strlen(sysroot) : 0;
	char *w = NULL;

	while (l > 0 && sysroot[l - 1] == '/')
		l--;
	if (p && sysroot && !(p->sysroot = strndup(sysroot, l))) {
		gb_policy_free(p);
		p = NULL;
	}
	if (!p) {
		gb_policy_add_error(errors, dir, 0, "out of memory");
		return NULL;
	}
	if (sysroot && (p->sysroot_fd = open(sysroot, O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0) {
		gb_policy_add_error(errors, sysroot, 0, "cannot open the image's root: %s",
				    strerror(errno));
		gb_policy_free(p);
		return NULL;
	}
	p = gb_policy_load_into(p, dir, errors, warnings ? &w : NULL);
	if (warnings)
		append(warnings, w);
	return p;
}

struct gb_policy *gb_policy_load(const char *dir, char **errors)
{
	return gb_policy_load_from(dir, NULL, errors, NULL);
}

/* The policy directory: with an image, a @p dir under SYSROOT/ is resolved in the
 * image, as the broker there would see it. Returns an fd or -errno. */
static int open_dir(const struct gb_policy *p, const char *dir)
{
	const int flags = O_RDONLY | O_DIRECTORY | O_NONBLOCK | O_CLOEXEC;
	size_t l = p->sysroot ? strlen(p->sysroot) : 0;

	int fd;

	if (p->sysroot_fd >= 0 && strncmp(dir, p->sysroot, l) == 0 && dir[l] == '/')
		return gb_sysroot_open(p->sysroot_fd, dir + l, flags);
	fd = open(dir, flags);
	return fd < 0 ? -errno : fd;
}

/* Why the image's etc/passwd or etc/group could not be used, moved to @p errors;
 * returns how many errors that is. */
static int names_errors(struct gb_sysroot_names *n, char **errors)
{
	int k = (int)gb_policy_count_lines(n->error);

	append(errors, TAKE_PTR(n->error));
	return k;
}

/* Fills @p p (freed on failure); with @p warnings, they are handed out there. */
static struct gb_policy *gb_policy_load_into(struct gb_policy *p, const char *dir, char **errors,
					     char **warnings)
{
	char **names = NULL;
	size_t n = 0;
	struct dirent *de;
	int nerr = 0, r = 0, fd;
	DIR *d;

	fd = open_dir(p, dir);
	d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		r = fd >= 0 ? errno : -fd;
		if (fd >= 0)
			close(fd);
		/* No policy: default deny. Offline, in an image, a typo must show. */
		if (r == ENOENT && !p->sysroot)
			return p;
		gb_policy_add_error(errors, dir, 0, "cannot read policy directory: %s",
				    strerror(r));
		gb_policy_free(p);
		return NULL;
	}
	for (;;) {
		size_t l;
		char **nn;

		/* A directory that cannot be read whole must not load as fewer rules. */
		errno = 0;
		de = readdir(d);
		if (!de) {
			if (errno) {
				gb_policy_add_error(errors, dir, 0, "cannot read policy directory: %s",
						    strerror(errno));
				nerr++;
			}
			break;
		}
		l = strlen(de->d_name);

		if (de->d_name[0] == '.' || l < 6 || strcmp(de->d_name + l - 5, ".conf") != 0)
			continue;
		nn = realloc(names, (n + 1) * sizeof(*nn));
		if (!nn || !(nn[n] = strdup(de->d_name))) {
			if (nn)
				names = nn;
			r = -ENOMEM;
			break;
		}
		names = nn;
		n++;
	}
	if (names)
		qsort(names, n, sizeof(*names), cmp_names);
	for (size_t i = 0; i < n; i++) {
		if (r >= 0) {
			r = load_file(p, dirfd(d), dir, names[i], errors);
			if (r > 0) {
				nerr += r;
				r = 0;
			}
		}
		free(names[i]);
	}
	free(names);
	closedir(d);
	nerr += names_errors(&p->passwd, errors) + names_errors(&p->group, errors);
	if (r >= 0 && !nerr && p->sysroot_fd >= 0)
		nerr += gb_policy_actions_check_units(p, p->sysroot_fd, errors);
	if (p->sysroot_fd >= 0) {
		close(p->sysroot_fd);
		p->sysroot_fd = -1;
	}
	if (r >= 0)
		nerr += gb_policy_finish(p, errors);
	if (warnings)
		*warnings = TAKE_PTR(p->warnings);
	if (r < 0 || nerr) {
		if (r < 0)
			gb_policy_add_error(errors, dir, 0, "out of memory");
		gb_policy_free(p);
		return NULL;
	}
	return p;
}

static bool chip_named(const struct gb_policy_entry *e, const struct gb_chip_ident *c)
{
	return gb_policy_entry_names_chip(e, c->name, c->label, c->udev);
}

static int cmp_uint(const void *a, const void *b)
{
	unsigned int x = *(const unsigned int *)a, y = *(const unsigned int *)b;

	return x < y ? -1 : x > y;
}

/* One warning for all of an entry's offsets beyond the chip, as ranges ("4-63"): a
 * group written for a bigger chip must not flood the journal with a line each. */
static void beyond_warning(const struct gb_policy_entry *e, const struct gb_chip_ident *c,
			   char **warnings)
{
	_cleanup_free_ unsigned int *o = NULL;
	char list[200] = "";
	size_t n = 0, len = 0;

	for (size_t i = 0; i < e->n_offsets; i++)
		n += e->offsets[i] >= c->num_lines;
	if (!n || !(o = malloc(n * sizeof(*o))))
		return;
	n = 0;
	for (size_t i = 0; i < e->n_offsets; i++)
		if (e->offsets[i] >= c->num_lines)
			o[n++] = e->offsets[i];
	qsort(o, n, sizeof(*o), cmp_uint);
	for (size_t i = 0; i < n && len < sizeof(list) - 16;) {
		size_t j = i;

		while (j + 1 < n && o[j + 1] <= o[j] + 1)
			j++;
		len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%u", i ? ", " : "", o[i]);
		if (o[j] != o[i] && len < sizeof(list))
			len += (size_t)snprintf(list + len, sizeof(list) - len, "-%u", o[j]);
		i = j + 1;
		if (i < n && len >= sizeof(list) - 16)
			snprintf(list + len, sizeof(list) - len, ", ...");
	}
	gb_policy_add_error(warnings, e->file, e->lineno,
			    "[%s %s]: %s %s %s beyond chip %s (%s), which has %u lines: %s nothing there",
			    e->group ? "group" : "line", e->name, n == 1 ? "offset" : "offsets", list,
			    n == 1 ? "is" : "are", c->name, c->label ? c->label : "", c->num_lines,
			    n == 1 ? "it matches" : "they match");
}

int gb_policy_check_chips(const struct gb_policy *p, const struct gb_chip_ident *chips,
			  size_t n_chips, char **errors, char **warnings)
{
	int n = 0;

	/* Two entries covering one line can only be seen with the hardware present. */
	for (size_t k = 0; k < n_chips; k++)
		for (unsigned int i = 0; i < chips[k].num_lines; i++) {
			struct gb_line_ident id = {
				.chip_name = chips[k].name,
				.chip_label = chips[k].label,
				.offset = i,
				.line_name = chips[k].line_names ? chips[k].line_names[i] : NULL,
				.chip_udev = chips[k].udev,
			};
			char msg[700];

			if (!gb_policy_match(p, &id, msg, sizeof(msg)) && msg[0]) {
				size_t len = strlen(msg);
				char *copy = malloc(len + 2);

				if (copy)
					memcpy(copy, msg, len), strcpy(copy + len, "\n");
				append(errors, copy);
				n++;
			}
		}
	if (!warnings || !n_chips)
		return n;
	for (size_t i = 0; i < p->n_entries; i++) {
		const struct gb_policy_entry *e = &p->entries[i];
		bool found = false;

		for (size_t k = 0; k < n_chips; k++) {
			const struct gb_chip_ident *c = &chips[k];

			for (unsigned int l = 0; e->line_name && c->line_names && l < c->num_lines; l++)
				found |= c->line_names[l] && strcmp(c->line_names[l], e->line_name) == 0;
			if (!chip_named(e, c))
				continue;
			beyond_warning(e, c, warnings);
		}
		if (e->line_name && !found)
			gb_policy_add_error(warnings, e->file, e->lineno,
					    "[line %s]: no line of the chips present is named '%s': "
					    "it matches nothing yet", e->name, e->line_name);
	}
	return n;
}

/* Entries by identity single out one chip (policy-chip.c). */
int gb_policy_check_identity(struct gb_policy *p, const struct gb_chip_ident *chips,
			     size_t n_chips, char **errors)
{
	int n = 0;

	for (size_t i = 0; i < p->n_entries; i++) {
		struct gb_policy_entry *e = &p->entries[i];
		const struct gb_chip_ident *first = NULL;
		char msg[512];
		size_t hits = 0;

		free(e->ambiguous);
		e->ambiguous = NULL;
		if (!e->chip || e->chip_by == GB_CHIP_BY_NAME)
			continue;
		for (size_t k = 0; k < n_chips; k++) {
			if (!gb_policy_entry_names_chip(e, chips[k].name, chips[k].label, chips[k].udev))
				continue;
			if (++hits == 1) {
				first = &chips[k];
				continue;
			}
			if (hits > 2)
				continue;
			snprintf(msg, sizeof(msg),
				 "[%s %s]: chip = %s matches both %s (%s) and %s (%s); name one "
				 "chip (a /dev/gpio/by-id/ or by-path/ link, or more udev properties): "
				 "its lines are unusable until then",
				 e->group ? "group" : "line", e->name, e->chip, first->name,
				 first->label ? first->label : "", chips[k].name,
				 chips[k].label ? chips[k].label : "");
		}
		if (hits < 2)
			continue;
		gb_policy_add_error(errors, e->file, e->lineno, "%s", msg);
		/* For the lines' own refusal, with where it comes from. */
		if (asprintf(&e->ambiguous, "%s:%u: %s", e->file, e->lineno, msg) < 0)
			e->ambiguous = NULL;
		n++;
	}
	return n;
}
