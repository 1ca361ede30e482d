/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Integrator policy: [slice NAME] sections, lines that named users and groups get as
 * a chip of their own, made from them by the kernel's gpio-aggregator
 * (gpiod-broker.policy(5), "SLICES"). This file reads and checks the sections; the
 * chip itself is made by gpiod-broker-slices.
 *
 * A slice hands its lines to the kernel: whoever opens the slice's chip sets any
 * direction, bias, drive and edge, and the broker sees none of it. So a slice is
 * refused unless the policy already allows all of that on each of its lines, as for
 * direct = yes, and unless no one else (another slice, an edge action) counts on the
 * line: the aggregator takes it.
 */
#include "policy.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "linespec.h"
#include "macro.h"
#include "sysroot.h"

/* The name is a file name (the slice's state) and a D-Bus path element. */
#define SLICE_NAME_MAX 32
/* A kernel config is some 300 KiB; an image's file larger than this is not one. */
#define KERNEL_CONFIG_MAX (4 * 1024 * 1024)

enum { S_LINES, S_USERS, S_GROUPS };

static const char *const slice_keys[] = {
	[S_LINES] = "lines",
	[S_USERS] = "users",
	[S_GROUPS] = "groups",
};

static bool valid_slice_name(const char *s)
{
	size_t n = strlen(s);

	if (n < 1 || n > SLICE_NAME_MAX)
		return false;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && *s != '-' && *s != '_')
			return false;
	return true;
}

int gb_policy_slice_begin(struct gb_policy_slice *s, const char *name, const char *file,
			  unsigned int lineno, char *err, size_t size)
{
	memset(s, 0, sizeof(*s));
	if (!valid_slice_name(name)) {
		snprintf(err, size, "'%s' is not a valid slice name: 1-%d letters, digits, '-' or "
			 "'_' (it becomes a file name and a D-Bus path element)", name,
			 SLICE_NAME_MAX);
		return -EINVAL;
	}
	s->lineno = lineno;
	s->name = strdup(name);
	s->file = strdup(file);
	return s->name && s->file ? 0 : -ENOMEM;
}

static int push(char ***v, size_t *n, const char *item, size_t len)
{
	char **nv = realloc(*v, (*n + 1) * sizeof(*nv));

	if (!nv)
		return -ENOMEM;
	*v = nv;
	nv[*n] = strndup(item, len);
	if (!nv[*n])
		return -ENOMEM;
	(*n)++;
	return 0;
}

/* Items are separated by white space, as the aggregator's own line list is. Commas,
 * as in the rest of the policy, separate them too, so that "users = alice, bob" does
 * not look up a user "alice,"; an empty item between commas is a mistake, as there. */
static int split(const char *key, const char *value, char ***v, size_t *n, char *err,
		 size_t size)
{
	bool after_item = false, comma = false;

	for (const char *c = value; *c;) {
		size_t len;

		if (isspace((unsigned char)*c)) {
			c++;
			continue;
		}
		if (*c == ',') {
			if (!after_item)
				goto empty;
			after_item = false;
			comma = true;
			c++;
			continue;
		}
		len = strcspn(c, " \t\r\v\f,");
		if (push(v, n, c, len) < 0)
			return -ENOMEM;
		after_item = true;
		comma = false;
		c += len;
	}
	if (!comma)
		return 0;
empty:
	snprintf(err, size, "empty item in '%s'", key);
	return -EINVAL;
}

static int check_line_item(const char *item, char *err, size_t size)
{
	struct gb_linespec spec;
	int r;

	for (const char *c = item; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			goto bad;
	r = gb_linespec_parse(item, &spec);
	if (r == -ENOMEM)
		return r;
	gb_linespec_clear(&spec);
	if (r == 0 && spec.kind != GB_LINESPEC_PATH)
		return 0;
bad:
	snprintf(err, size, "'lines': '%s' is not an alias, a line name or CHIP:OFFSET", item);
	return -EINVAL;
}

static bool all_digits(const char *s)
{
	return *s && strspn(s, "0123456789") == strlen(s);
}

/* Who, as written: a numeric id as it is, a name looked up now only to warn of one
 * nobody has, which is no error (it grants nothing), as in [line] and [group]. */
static int check_who(struct gb_policy *p, const struct gb_policy_slice *s, bool user,
		     const char *item, unsigned int lineno, char *err, size_t size)
{
	unsigned int id;

	if (strcmp(item, "*") == 0) {
		snprintf(err, size, "a slice is for named users and groups: '*' would hand its "
			 "chip to everyone");
		return -EINVAL;
	}
	if (all_digits(item)) {
		errno = 0;
		if (strtoul(item, NULL, 10) < UINT_MAX && !errno)
			return 0;
	}
	if (gb_policy_lookup_name(p, user, item, &id) == 0)
		gb_policy_add_error(&p->warnings, s->file, lineno,
				    "unknown %s '%s': it matches nobody until it exists and the "
				    "policy is reloaded", user ? "user" : "group", item);
	return 0;
}

int gb_policy_slice_set_key(struct gb_policy *p, struct gb_policy_slice *s, const char *key,
			    const char *value, unsigned int lineno, unsigned long *seen, char *err,
			    size_t size)
{
	char ***v;
	size_t *n, before;
	int id, r;

	id = gb_policy_section_key(slice_keys, ELEMENTSOF(slice_keys), "a [slice]", key, value,
				   seen, err, size);
	if (id < 0)
		return id;
	v = id == S_LINES ? &s->lines : id == S_USERS ? &s->users : &s->groups;
	n = id == S_LINES ? &s->n_lines : id == S_USERS ? &s->n_users : &s->n_groups;
	before = *n;
	r = split(key, value, v, n, err, size);
	for (size_t i = before; r == 0 && i < *n; i++) {
		if (id == S_LINES) {
			r = check_line_item((*v)[i], err, size);
			for (size_t j = before; r == 0 && j < i; j++)
				if (strcmp((*v)[i], (*v)[j]) == 0) {
					snprintf(err, size, "'lines' lists '%s' twice", (*v)[i]);
					r = -EINVAL;
				}
		} else {
			r = check_who(p, s, id == S_USERS, (*v)[i], lineno, err, size);
		}
	}
	return r;
}

int gb_policy_slice_end(struct gb_policy *p, struct gb_policy_slice *s, char **errors)
{
	struct gb_policy_slice *v;
	int n = 0;

	if (!s->n_lines) {
		gb_policy_add_error(errors, s->file, s->lineno, "[slice %s]: which lines? give "
				    "'lines' (aliases, line names or CHIP:OFFSET)", s->name);
		n++;
	}
	/* Whether someone was named, not whether they exist: see check_who(). */
	if (!s->n_users && !s->n_groups) {
		gb_policy_add_error(errors, s->file, s->lineno, "[slice %s]: nobody may use it; "
				    "add 'users' or 'groups'", s->name);
		n++;
	}
	if (n)
		return n;
	v = realloc(p->slices, (p->n_slices + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	p->slices = v;
	v[p->n_slices++] = *s;
	memset(s, 0, sizeof(*s));
	return 0;
}

/*
 * Which line an item means, as far as the policy alone can tell: an alias is its
 * entry's line (its line-name, or its chip and offset, as written there); anything
 * else is the item itself. At load no chip is known, so items are compared as text:
 * "gpiochip0:3", "pinctrl:3" (its label) and the line's kernel name may all be one
 * line on the target, and only the chips can say so. A slice names its lines as
 * their entries do, or by their aliases, for these checks to see them. 0, -EINVAL
 * (an object path, or not a line at all), or -ENOMEM; *@p alias is the entry whose
 * alias the item is, or NULL.
 */
static int resolve(const struct gb_policy *p, const char *item, struct gb_linespec *out,
		   const struct gb_policy_entry **alias)
{
	const struct gb_policy_entry *e = gb_policy_find_alias(p, item);
	int r;

	*alias = e;
	*out = (struct gb_linespec){ 0 };
	if (!e) {
		r = gb_linespec_parse(item, out);
		if (r == 0 && out->kind == GB_LINESPEC_PATH) {
			gb_linespec_clear(out);
			return -EINVAL;
		}
		return r;
	}
	if (e->line_name) {
		out->kind = GB_LINESPEC_NAME;
		out->text = strdup(e->line_name);
	} else if (e->chip && e->n_offsets) {
		out->kind = GB_LINESPEC_CHIP_OFFSET;
		out->text = strdup(e->chip);
		out->offset = e->offsets[0];
	} else {
		return -EINVAL;
	}
	return out->text ? 0 : -ENOMEM;
}

static bool same_line(const struct gb_linespec *a, const struct gb_linespec *b)
{
	return a->kind == b->kind && strcmp(a->text, b->text) == 0 &&
	       (a->kind == GB_LINESPEC_NAME || a->offset == b->offset);
}

/* Do two items mean one line (resolve())? */
static bool same_item(const struct gb_policy *p, const char *a, const char *b)
{
	const struct gb_policy_entry *ea, *eb;
	struct gb_linespec la, lb;
	bool same = false;

	if (resolve(p, a, &la, &ea) < 0)
		return false;
	if (resolve(p, b, &lb, &eb) == 0)
		same = same_line(&la, &lb);
	gb_linespec_clear(&la);
	gb_linespec_clear(&lb);
	return same;
}

/* The entry that covers an item as written: its alias's entry, the entry of its
 * line-name, or one whose chip (name or label glob) and offsets hold it. */
static const struct gb_policy_entry *covering(const struct gb_policy *p, const char *item)
{
	const struct gb_policy_entry *alias;
	struct gb_linespec l;
	const struct gb_policy_entry *found = NULL;

	if (resolve(p, item, &l, &alias) < 0)
		return NULL;
	for (size_t i = 0; !alias && !found && i < p->n_entries; i++) {
		const struct gb_policy_entry *e = &p->entries[i];

		if (l.kind == GB_LINESPEC_NAME) {
			if (e->line_name && strcmp(e->line_name, l.text) == 0)
				found = e;
			continue;
		}
		if (e->line_name || !gb_policy_entry_names_chip(e, l.text, NULL, NULL))
			continue;
		for (size_t k = 0; k < e->n_offsets; k++)
			if (e->offsets[k] == l.offset)
				found = e;
	}
	gb_linespec_clear(&l);
	return alias ? alias : found;
}

const struct gb_policy_slice *gb_policy_find_slice(const struct gb_policy *p, const char *name)
{
	for (size_t i = 0; i < p->n_slices; i++)
		if (strcmp(p->slices[i].name, name) == 0)
			return &p->slices[i];
	return NULL;
}

const struct gb_policy_slice *gb_policy_slice_of_item(const struct gb_policy *p, const char *item)
{
	for (size_t i = 0; i < p->n_slices; i++)
		for (size_t k = 0; k < p->slices[i].n_lines; k++)
			if (same_item(p, item, p->slices[i].lines[k]))
				return &p->slices[i];
	return NULL;
}

/* One line of slice @p s: its entry allows all a chip's consumer can set, and no one
 * else counts on it. Returns the number of errors. */
static int check_line(const struct gb_policy *p, const struct gb_policy_slice *s, size_t k,
		      char **errors)
{
	const char *item = s->lines[k];
	const struct gb_policy_entry *e = covering(p, item);
	char missing[300], where[300];
	int n = 0;

#define SERR(...) \
	do { gb_policy_add_error(errors, s->file, s->lineno, __VA_ARGS__); n++; } while (0)
	if (!e) {
		SERR("[slice %s]: no entry covers line '%s': a slice hands out only lines the "
		     "policy has (name it as its entry does, or by its alias)", s->name, item);
	} else if (gb_policy_entry_fd_missing(e, missing, sizeof(missing))) {
		gb_policy_entry_describe(e, where, sizeof(where));
		SERR("[slice %s]: line '%s' goes to a chip whose consumer can set anything, which "
		     "the kernel cannot hold to the policy; its entry %s must allow all of it: "
		     "missing %s", s->name, item, where, missing);
	}
	for (size_t j = 0; j < k; j++)
		if (same_item(p, item, s->lines[j]))
			SERR("[slice %s]: '%s' and '%s' are the same line", s->name, s->lines[j],
			     item);
	for (const struct gb_policy_slice *o = p->slices; o < s; o++)
		for (size_t j = 0; j < o->n_lines; j++)
			if (same_item(p, item, o->lines[j]))
				SERR("[slice %s]: line '%s' is already in [slice %s] (%s:%u)",
				     s->name, item, o->name, o->file, o->lineno);
	for (size_t j = 0; j < p->n_actions; j++) {
		const struct gb_policy_action *a = &p->actions[j];

		if (a->line && same_item(p, item, a->line))
			SERR("[slice %s]: line '%s' is observed by [action %s] (%s:%u); an "
			     "action's watch and a slice cannot share a line: the aggregator "
			     "takes the line", s->name, item, a->name, a->file, a->lineno);
	}
#undef SERR
	return n;
}

int gb_policy_slices_finish(struct gb_policy *p, char **errors)
{
	int n = 0;

	for (size_t i = 0; i < p->n_slices; i++) {
		const struct gb_policy_slice *s = &p->slices[i];

		for (size_t j = 0; j < i; j++)
			if (strcmp(s->name, p->slices[j].name) == 0) {
				const struct gb_policy_slice *o = &p->slices[j];

				gb_policy_add_error(errors, s->file, s->lineno,
						    "the slice name '%s' is already used at %s:%u",
						    s->name, o->file, o->lineno);
				n++;
				break;
			}
		for (size_t k = 0; k < s->n_lines; k++)
			n += check_line(p, s, k, errors);
	}
	return n;
}

/* --- can the kernel make them? (--check-policy) ------------------------------ */

/* "CONFIG_GPIO_AGGREGATOR=y" or "=m" on a line of its own. */
static bool config_has_aggregator(const char *text)
{
	static const char opt[] = "CONFIG_GPIO_AGGREGATOR=";

	for (const char *l = text; l && *l;) {
		const char *nl = strchr(l, '\n');

		if (strncmp(l, opt, sizeof(opt) - 1) == 0 &&
		    (l[sizeof(opt) - 1] == 'y' || l[sizeof(opt) - 1] == 'm') &&
		    (l[sizeof(opt)] == '\n' || !l[sizeof(opt)]))
			return true;
		l = nl ? nl + 1 : NULL;
	}
	return false;
}

/* The image's kernels, from each boot/config-* (read inside the image, as everything
 * --root reads): 1 if they all build the aggregator, 0 if one does not (named in
 * @p which), -ENOENT if there is no config to tell. */
static int image_has_aggregator(const char *sysroot, char *which, size_t size)
{
	int rootfd = open(sysroot, O_PATH | O_DIRECTORY | O_CLOEXEC), fd, found = 0, r = 1;
	struct dirent *de;
	DIR *d = NULL;

	if (rootfd < 0)
		return -ENOENT;
	fd = gb_sysroot_open(rootfd, "boot", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0 && !(d = fdopendir(fd)))
		close(fd);
	while (d && (de = readdir(d))) {
		char path[300], why[64], *text = NULL;
		struct stat st;
		size_t len;

		if (strncmp(de->d_name, "config-", 7) != 0)
			continue;
		snprintf(path, sizeof(path), "boot/%s", de->d_name);
		fd = gb_open_regular(true, rootfd, path, 0, &st, why, sizeof(why));
		if (fd < 0)
			continue;
		if (gb_read_all(fd, KERNEL_CONFIG_MAX, &text, &len, why, sizeof(why)) == 0) {
			found++;
			if (r && !config_has_aggregator(text)) {
				r = 0;
				snprintf(which, size, "%s", path);
			}
		}
		free(text);
		close(fd);
	}
	if (d)
		closedir(d);
	close(rootfd);
	return found ? r : -ENOENT;
}

/* Does @p path (modules.builtin, modules.dep) list gpio-aggregator.ko? */
static bool lists_aggregator(const char *path)
{
	FILE *f = fopen(path, "re");
	char *line = NULL;
	size_t cap = 0;
	bool found = false;

	while (f && !found && getline(&line, &cap, f) > 0) {
		const char *end = line + strcspn(line, ":\n");
		const char *m = strstr(line, "gpio-aggregator.ko");

		found = m && m < end && (m == line || m[-1] == '/');
	}
	free(line);
	if (f)
		fclose(f);
	return found;
}

/* This machine: the driver registered, or built in or a module of the running kernel
 * (not loaded yet: gpiod-broker-slices loads it). */
static bool host_has_aggregator(void)
{
	static const char *const lists[] = { "modules.builtin", "modules.dep" };
	struct utsname u;
	char path[PATH_MAX];

	if (access("/sys/bus/platform/drivers/gpio-aggregator", F_OK) == 0)
		return true;
	if (uname(&u) < 0)
		return false;
	for (size_t i = 0; i < ELEMENTSOF(lists); i++) {
		snprintf(path, sizeof(path), "/lib/modules/%s/%s", u.release, lists[i]);
		if (lists_aggregator(path))
			return true;
	}
	return false;
}

int gb_policy_slices_check_kernel(const struct gb_policy *p, const char *sysroot, FILE *out)
{
	char which[300] = "";
	int has, n = 0;

	if (!p->n_slices)
		return 0;
	has = sysroot ? image_has_aggregator(sysroot, which, sizeof(which)) : host_has_aggregator();
	if (has < 0) {
		int l = (int)strlen(sysroot);

		while (l > 0 && sysroot[l - 1] == '/')
			l--;
		fprintf(out, "%s:%u: note: no kernel config in %.*s/boot: the aggregator could not "
			"be checked\n", p->slices[0].file, p->slices[0].lineno, l, sysroot);
		return 0;
	}
	for (size_t i = 0; !has && i < p->n_slices; i++, n++)
		fprintf(out, "%s:%u: warning: this kernel has no gpio-aggregator "
			"(CONFIG_GPIO_AGGREGATOR): the slice cannot be made%s%s%s\n",
			p->slices[i].file, p->slices[i].lineno, *which ? " (" : "", which,
			*which ? ")" : "");
	return n;
}
