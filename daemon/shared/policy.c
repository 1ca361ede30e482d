/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Integrator policy: the model, and answering "may this caller do this with this
 * line?". Parsing is in policy-parse.c, reading a directory in policy-files.c; the
 * helpers both use are here, so that neither calls the other's.
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


/* --- model ------------------------------------------------------------------- */

struct gb_policy *gb_policy_new(void)
{
	struct gb_policy *p = calloc(1, sizeof(*p));

	if (p) {
		p->root_bypass = true;
		p->sysroot_fd = -1;
	}
	return p;
}

void gb_policy_entry_clear(struct gb_policy_entry *e)
{
	free(e->file);
	free(e->name);
	free(e->line_name);
	free(e->chip);
	for (size_t i = 0; i < e->n_chip_props; i++)
		free(e->chip_props[i]);
	free(e->chip_props);
	free(e->ambiguous);
	free(e->offsets);
	free(e->uids);
	free(e->gids);
	free(e->watch_uids);
	free(e->watch_gids);
	free(e->label_prefix);
}

int gb_policy_parse_bool(const char *v, bool *out)
{
	static const char *const yes[] = { "yes", "true", "on", "1" };
	static const char *const no[] = { "no", "false", "off", "0" };

	for (size_t i = 0; i < ELEMENTSOF(yes); i++) {
		if (strcmp(v, yes[i]) == 0) {
			*out = true;
			return 0;
		}
		if (strcmp(v, no[i]) == 0) {
			*out = false;
			return 0;
		}
	}
	return -EINVAL;
}

bool gb_policy_valid_name(const char *s)
{
	if (!isalpha((unsigned char)*s))
		return false;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && !strchr("-_.", *s))
			return false;
	return true;
}

void gb_policy_free(struct gb_policy *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->n_entries; i++)
		gb_policy_entry_clear(&p->entries[i]);
	free(p->entries);
	/* Freed here, not by policy-action.c, which calls this file. */
	for (size_t i = 0; i < p->n_actions; i++) {
		free(p->actions[i].file);
		free(p->actions[i].name);
		free(p->actions[i].line);
		free(p->actions[i].unit);
	}
	free(p->actions);
	for (size_t i = 0; i < p->n_slices; i++)
		gb_policy_slice_clear(&p->slices[i]);
	free(p->slices);
	free(p->sysroot);
	if (p->sysroot_fd >= 0)
		close(p->sysroot_fd);
	free(p->passwd.text);
	free(p->passwd.error);
	free(p->group.text);
	free(p->group.error);
	free(p->warnings);
	free(p);
}

static void strv_free_n(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

/* Here, not in policy-slice.c, which calls this file: the policy's free needs it. */
void gb_policy_slice_clear(struct gb_policy_slice *s)
{
	free(s->file);
	free(s->name);
	strv_free_n(s->lines, s->n_lines);
	strv_free_n(s->users, s->n_users);
	strv_free_n(s->groups, s->n_groups);
	memset(s, 0, sizeof(*s));
}

const char *gb_safe_state_name(enum gb_safe_state s)
{
	static const char *const names[] = { "as-is", "input", "output-low", "output-high" };

	return s < ELEMENTSOF(names) ? names[s] : "unknown";
}

bool gb_safe_state_config(enum gb_safe_state s, struct gb_line_config *c)
{
	if (s == GB_SAFE_AS_IS)
		return false;
	c->edge = GPIOD_LINE_EDGE_NONE;
	c->debounce_us = 0;
	c->active_low = false;
	if (s == GB_SAFE_INPUT) {
		c->direction = GPIOD_LINE_DIRECTION_INPUT;
		c->drive = GPIOD_LINE_DRIVE_PUSH_PULL;
	} else {
		c->direction = GPIOD_LINE_DIRECTION_OUTPUT;
		c->value = s == GB_SAFE_OUTPUT_HIGH;
	}
	return true;
}

void gb_policy_entry_describe(const struct gb_policy_entry *e, char *buf, size_t size)
{
	snprintf(buf, size, "[%s %s] (%s:%u)", e->group ? "group" : "line", e->name, e->file,
		 e->lineno);
}

/* --- errors and names, for the parser and the loader ------------------------- */

_printf_(4, 5)
void gb_policy_add_error(char **errors, const char *file, unsigned int line, const char *fmt, ...)
{
	char msg[512], *n;
	size_t old = *errors ? strlen(*errors) : 0;
	int len;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	len = line ? snprintf(NULL, 0, "%s:%u: %s\n", file, line, msg)
		   : snprintf(NULL, 0, "%s: %s\n", file, msg);
	n = realloc(*errors, old + len + 1);
	if (!n)
		return;
	if (line)
		snprintf(n + old, len + 1, "%s:%u: %s\n", file, line, msg);
	else
		snprintf(n + old, len + 1, "%s: %s\n", file, msg);
	*errors = n;
}

/* One rule for the keys of every kind of section, so that a key given twice (the second
 * would silently win) or given empty is refused alike, in the same words, in each. */
int gb_policy_key_given(const char *key, int id, const char *value, unsigned long *seen,
			char *err, size_t size)
{
	if (*seen & (1ul << id)) {
		snprintf(err, size, "'%s' given twice in this section", key);
		return -EINVAL;
	}
	*seen |= 1ul << id;
	if (!*value) {
		snprintf(err, size, "'%s' has no value", key);
		return -EINVAL;
	}
	return 0;
}

int gb_policy_section_key(const char *const *keys, size_t n_keys, const char *section,
			  const char *key, const char *value, unsigned long *seen, char *err,
			  size_t size)
{
	for (size_t i = 0; i < n_keys; i++)
		if (strcmp(keys[i], key) == 0) {
			int r = gb_policy_key_given(key, (int)i, value, seen, err, size);

			return r < 0 ? r : (int)i;
		}
	snprintf(err, size, "unknown key '%s' in %s section", key, section);
	return -EINVAL;
}

/* The image's @p file, read when a name is first looked up in it; on failure, why is
 * kept for the loader, which reports it once. */
static struct gb_sysroot_names *sysroot_names(struct gb_policy *p, const char *file)
{
	struct gb_sysroot_names *n = strcmp(file, "etc/passwd") == 0 ? &p->passwd : &p->group;
	char path[PATH_MAX], why[64];
	struct stat st;
	int fd, r = 0;

	if (n->text || n->error)
		return n;
	snprintf(path, sizeof(path), "%s/%s", p->sysroot, file);
	fd = gb_open_regular(true, p->sysroot_fd, file, 0, &st, why, sizeof(why));
	if (fd >= 0) {
		r = gb_read_all(fd, GB_POLICY_NAMES_MAX, &n->text, &n->len, why, sizeof(why));
		close(fd);
	}
	if (fd < 0 || r < 0)
		gb_policy_add_error(&n->error, path, 0, "%s", why);
	return n;
}

/* An id field, as in passwd(5) and group(5): digits up to the next ':' or the end. */
static bool parse_id(const char *s, const char *end, unsigned int *id)
{
	unsigned long long v = 0;
	const char *d = s;

	for (; d < end && *d >= '0' && *d <= '9' && v < UINT_MAX; d++)
		v = v * 10 + (unsigned)(*d - '0');
	if (d == s || v >= UINT_MAX || (d < end && *d != ':'))
		return false;
	*id = (unsigned int)v;
	return true;
}

/* The id of @p name in the image's etc/passwd or etc/group: the third field of both.
 * The image's own files, not the build host's NSS. */
int gb_policy_lookup_sysroot(struct gb_policy *p, const char *file, const char *name,
			     unsigned int *id)
{
	const struct gb_sysroot_names *n;
	size_t len = strlen(name);

	if (!p->sysroot || p->sysroot_fd < 0)
		return -EIO;
	n = sysroot_names(p, file);
	if (!n->text)
		return -EIO;
	for (const char *l = n->text, *end; l < n->text + n->len; l = end + 1) {
		const char *f;

		end = memchr(l, '\n', n->text + n->len - l);
		if (!end)
			end = n->text + n->len;
		if ((size_t)(end - l) <= len || memcmp(l, name, len) != 0 || l[len] != ':')
			continue;
		f = memchr(l + len + 1, ':', end - (l + len + 1));
		return f && parse_id(f + 1, end, id);
	}
	return 0;
}

/* The uid or gid of a user or group name: from the image's etc/passwd or etc/group
 * with a sysroot, else NSS. Here, not in the parser, because [line] and [slice]
 * sections both name users and neither file may call the other's. */
int gb_policy_lookup_name(struct gb_policy *p, bool user, const char *name, unsigned int *id)
{
	struct passwd pw, *pwr = NULL;
	struct group gr, *grr = NULL;
	char buf[8192];
	int r;

	if (p->sysroot)
		return gb_policy_lookup_sysroot(p, user ? "etc/passwd" : "etc/group", name, id);
	if (user) {
		r = getpwnam_r(name, &pw, buf, sizeof(buf), &pwr) == 0 && pwr;
		if (r)
			*id = pwr->pw_uid;
	} else {
		r = getgrnam_r(name, &gr, buf, sizeof(buf), &grr) == 0 && grr;
		if (r)
			*id = grr->gr_gid;
	}
	return r;
}

/* A kernel line fd lets whoever holds it set any direction, edge, bias and drive, and
 * the kernel has no way to take that back; so does a chip of one's own. One condition
 * for every way the policy hands such a thing out (direct = yes, a [slice]). */
const char *gb_policy_entry_fd_missing(const struct gb_policy_entry *e, char *buf, size_t size)
{
	const unsigned int all_edges =
		GB_BIT(GPIOD_LINE_EDGE_NONE) | GB_BIT(GPIOD_LINE_EDGE_RISING) |
		GB_BIT(GPIOD_LINE_EDGE_FALLING) | GB_BIT(GPIOD_LINE_EDGE_BOTH);
	const unsigned int all_biases =
		GB_BIT(GPIOD_LINE_BIAS_AS_IS) | GB_BIT(GPIOD_LINE_BIAS_DISABLED) |
		GB_BIT(GPIOD_LINE_BIAS_PULL_UP) | GB_BIT(GPIOD_LINE_BIAS_PULL_DOWN);
	const unsigned int all_drives = GB_BIT(GPIOD_LINE_DRIVE_PUSH_PULL) |
					GB_BIT(GPIOD_LINE_DRIVE_OPEN_DRAIN) |
					GB_BIT(GPIOD_LINE_DRIVE_OPEN_SOURCE);
	const unsigned int both = GB_BIT(GPIOD_LINE_DIRECTION_INPUT) |
				  GB_BIT(GPIOD_LINE_DIRECTION_OUTPUT);
	const struct {
		bool missing;
		const char *text;
	} rules[] = {
		{ (e->directions & both) != both, "directions = input, output" },
		{ !e->direction_may_change, "direction-may-change = yes" },
		{ (e->edges & all_edges) != all_edges, "edges = rising, falling, both" },
		{ (e->biases & all_biases) != all_biases,
		  "bias = as-is, disabled, pull-up, pull-down" },
		{ (e->drives & all_drives) != all_drives,
		  "drive = push-pull, open-drain, open-source" },
	};
	size_t len = 0;

	if (size)
		buf[0] = '\0';
	for (size_t i = 0; i < ELEMENTSOF(rules); i++)
		if (rules[i].missing && len < size)
			len += (size_t)snprintf(buf + len, size - len, "%s%s", len ? "; " : "",
						rules[i].text);
	return len ? buf : NULL;
}

/* --- evaluation -------------------------------------------------------------- */

static bool entry_covers(const struct gb_policy_entry *e, const struct gb_line_ident *l)
{
	if (e->line_name)
		return l->line_name && strcmp(e->line_name, l->line_name) == 0;
	if (!gb_policy_entry_names_chip(e, l->chip_name, l->chip_label, l->chip_udev))
		return false;
	for (size_t i = 0; i < e->n_offsets; i++)
		if (e->offsets[i] == l->offset)
			return true;
	return false;
}

const struct gb_policy_entry *gb_policy_match(const struct gb_policy *p,
					      const struct gb_line_ident *l,
					      char *ambiguous, size_t size)
{
	const struct gb_policy_entry *found = NULL;

	if (ambiguous && size)
		ambiguous[0] = '\0';
	for (size_t i = 0; i < p->n_entries; i++) {
		if (!entry_covers(&p->entries[i], l))
			continue;
		if (found) {
			char a[300], b[300];

			gb_policy_entry_describe(found, a, sizeof(a));
			gb_policy_entry_describe(&p->entries[i], b, sizeof(b));
			if (ambiguous)
				/* Led by the second entry's file:line, like every other
				 * policy error, so an editor can jump to it. */
				snprintf(ambiguous, size,
					 "%s:%u: %s:%u is covered by both %s and %s; "
					 "the line is unusable until the policy is fixed",
					 p->entries[i].file, p->entries[i].lineno, l->chip_name,
					 l->offset, a, b);
			return NULL;
		}
		found = &p->entries[i];
	}
	if (found && found->ambiguous) {
		if (ambiguous)
			snprintf(ambiguous, size, "%s", found->ambiguous);
		return NULL;
	}
	return found;
}

const struct gb_policy_entry *gb_policy_find_alias(const struct gb_policy *p, const char *alias)
{
	for (size_t i = 0; i < p->n_entries; i++)
		if (!p->entries[i].group && strcmp(p->entries[i].name, alias) == 0)
			return &p->entries[i];
	return NULL;
}

bool gb_policy_entry_allows_caller(const struct gb_policy_entry *e, const struct gb_caller *c)
{
	if (e->any_user)
		return true;
	for (size_t i = 0; i < e->n_uids; i++)
		if (e->uids[i] == c->uid)
			return true;
	for (size_t i = 0; i < e->n_gids; i++) {
		if (e->gids[i] == c->gid)
			return true;
		for (size_t j = 0; j < c->n_groups; j++)
			if (e->gids[i] == c->groups[j])
				return true;
	}
	return false;
}

/* Why no entry covers @p l, when the match gave no reason of its own. */
static void no_entry_reason(const struct gb_line_ident *l, char *reason, size_t size)
{
	if (!reason[0])
		snprintf(reason, size,
			 "no policy entry covers %s:%u%s%s%s; an integrator must add one "
			 "(see gpiod-broker.policy(5))", l->chip_name, l->offset,
			 l->line_name && *l->line_name ? " (\"" : "",
			 l->line_name && *l->line_name ? l->line_name : "",
			 l->line_name && *l->line_name ? "\")" : "");
}

static bool root_bypass(const struct gb_policy *p, const struct gb_caller *c)
{
	return c->uid == 0 && p->root_bypass;
}

/* The entry a caller may use for a line: 0 and *@p ret; 1 if root needs none (the
 * policy lets root bypass it); or -EACCES with why not in @p reason. */
static int entry_for(const struct gb_policy *p, const struct gb_line_ident *l,
		     const struct gb_caller *c, const struct gb_policy_entry **ret,
		     char *reason, size_t size)
{
	const struct gb_policy_entry *e;
	char where[300];

	reason[0] = '\0';
	if (root_bypass(p, c))
		return 1;
	e = gb_policy_match(p, l, reason, size);
	if (!e) {
		no_entry_reason(l, reason, size);
		return -EACCES;
	}
	if (!gb_policy_entry_allows_caller(e, c)) {
		gb_policy_entry_describe(e, where, sizeof(where));
		snprintf(reason, size, "uid %u is not among the users or groups of %s",
			 (unsigned)c->uid, where);
		return -EACCES;
	}
	*ret = e;
	return 0;
}

/* Settings within what the entry allows. */
static int check_settings(const struct gb_policy_entry *e, const struct gb_line_config *cfg,
			  char *reason, size_t size)
{
	char where[300];

	gb_policy_entry_describe(e, where, sizeof(where));
	if (cfg->direction != GPIOD_LINE_DIRECTION_AS_IS && !(e->directions & GB_BIT(cfg->direction))) {
		snprintf(reason, size, "direction %s is not allowed by %s (directions = %s)",
			 gb_direction_name(cfg->direction), where,
			 e->directions & GB_BIT(GPIOD_LINE_DIRECTION_INPUT) ? "input" : "output");
		return -EACCES;
	}
	if (!(e->edges & GB_BIT(cfg->edge))) {
		snprintf(reason, size, "edge detection '%s' is not allowed by %s (see 'edges')",
			 gb_edge_name(cfg->edge), where);
		return -EACCES;
	}
	if (!(e->biases & GB_BIT(cfg->bias))) {
		snprintf(reason, size, "bias '%s' is not allowed by %s (see 'bias')",
			 gb_bias_name(cfg->bias), where);
		return -EACCES;
	}
	if (!(e->drives & GB_BIT(cfg->drive))) {
		snprintf(reason, size, "drive '%s' is not allowed by %s (see 'drive')",
			 gb_drive_name(cfg->drive), where);
		return -EACCES;
	}
	return 0;
}

int gb_policy_check_request(const struct gb_policy *p, const struct gb_line_ident *l,
			    const struct gb_caller *c, const struct gb_line_config *cfg,
			    bool persistent, const char *label, char *reason, size_t size)
{
	const struct gb_policy_entry *e;
	char where[300];
	int r;

	r = entry_for(p, l, c, &e, reason, size);
	if (r != 0)
		return r < 0 ? r : 0;
	gb_policy_entry_describe(e, where, sizeof(where));
	if (persistent && !e->persistent) {
		snprintf(reason, size, "persistent requests are not allowed by %s (persistent = no)", where);
		return -EACCES;
	}
	if (e->label_prefix && strncmp(label, e->label_prefix, strlen(e->label_prefix)) != 0) {
		snprintf(reason, size, "the label must start with '%s' (label-prefix of %s)",
			 e->label_prefix, where);
		return -EACCES;
	}
	return check_settings(e, cfg, reason, size);
}

int gb_policy_check_reconfigure(const struct gb_policy *p, const struct gb_line_ident *l,
				const struct gb_caller *c, const struct gb_line_config *old,
				const struct gb_line_config *new, char *reason, size_t size)
{
	const struct gb_policy_entry *e;
	char where[300];
	int r;

	r = entry_for(p, l, c, &e, reason, size);
	if (r != 0)
		return r < 0 ? r : 0;
	if (new->direction != old->direction && !e->direction_may_change) {
		gb_policy_entry_describe(e, where, sizeof(where));
		snprintf(reason, size, "the direction may not change: %s has direction-may-change = no",
			 where);
		return -EACCES;
	}
	return check_settings(e, new, reason, size);
}

static bool id_in(const unsigned int *ids, size_t n, unsigned int id)
{
	for (size_t i = 0; i < n; i++)
		if (ids[i] == id)
			return true;
	return false;
}

int gb_policy_check_watch(const struct gb_policy *p, const struct gb_line_ident *l,
			  const struct gb_caller *c, unsigned int *max_watchers, char *reason,
			  size_t size)
{
	const struct gb_policy_entry *e;
	char where[300];
	bool ok;

	reason[0] = '\0';
	e = gb_policy_match(p, l, reason, size);
	*max_watchers = e && e->max_watchers ? e->max_watchers : GB_DEFAULT_MAX_WATCHERS;
	if (root_bypass(p, c)) {
		reason[0] = '\0';
		return 0;
	}
	if (!e) {
		no_entry_reason(l, reason, size);
		return -EACCES;
	}
	ok = e->watch_any_user || id_in(e->watch_uids, e->n_watch_uids, c->uid) ||
	     id_in(e->watch_gids, e->n_watch_gids, c->gid);
	for (size_t j = 0; !ok && j < c->n_groups; j++)
		ok = id_in(e->watch_gids, e->n_watch_gids, c->groups[j]);
	if (!ok) {
		gb_policy_entry_describe(e, where, sizeof(where));
		snprintf(reason, size, "uid %u is not among the watch-users or watch-groups of %s",
			 (unsigned)c->uid, where);
		return -EACCES;
	}
	return 0;
}

int gb_policy_check_direct(const struct gb_policy *p, const struct gb_line_ident *l,
			   const struct gb_caller *c, char *reason, size_t size)
{
	const struct gb_policy_entry *e;
	char where[300];
	int r;

	r = entry_for(p, l, c, &e, reason, size);
	if (r != 0)
		return r < 0 ? r : 0;
	if (e->direct)
		return 0;
	gb_policy_entry_describe(e, where, sizeof(where));
	snprintf(reason, size, "direct line fds are not allowed by %s: it needs direct = yes", where);
	return -EACCES;
}

int gb_policy_check_use(const struct gb_policy *p, const struct gb_line_ident *l,
			const struct gb_caller *c, char *reason, size_t size)
{
	const struct gb_policy_entry *e;
	int r = entry_for(p, l, c, &e, reason, size);

	return r < 0 ? r : 0;
}
