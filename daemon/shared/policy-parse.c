/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Integrator policy: reading policy files. See gpiod-broker.policy(5) for the
 * format.
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

#define MAX_LABEL 31
#define MAX_OFFSET 4095

/* --- parsing ----------------------------------------------------------------- */

struct parser {
	struct gb_policy *policy;
	const char *file;
	unsigned int line;
	char **errors;
	int n_errors;
	enum { SEC_NONE, SEC_BROKER, SEC_ENTRY, SEC_ACTION, SEC_SLICE } section;
	struct gb_policy_entry cur;
	struct gb_policy_action act;
	struct gb_policy_slice slice;
	unsigned long seen;  /* keys seen in this section (bit per key) */
	bool broker_seen;
};

#define ERR(p, ...) do { gb_policy_add_error((p)->errors, (p)->file, (p)->line, __VA_ARGS__); (p)->n_errors++; } while (0)

static char *trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	return s;
}

/* Split a comma-separated list in place; calls fn for each trimmed item. An empty
 * item (",," or a trailing comma) is a mistake, not something to skip. */
static int for_each_item(struct parser *p, const char *key, char *value,
			 int (*fn)(struct parser *p, const char *key, const char *item, void *ud),
			 void *ud)
{
	for (char *s = value; s;) {
		char *comma = strchr(s, ',');
		char *item;
		int r;

		if (comma)
			*comma = '\0';
		item = trim(s);
		if (!*item) {
			ERR(p, "empty item in '%s'", key);
			return -EINVAL;
		}
		r = fn(p, key, item, ud);
		if (r < 0)
			return r;
		s = comma ? comma + 1 : NULL;
	}
	return 0;
}

static int parse_bool(struct parser *p, const char *key, const char *v, bool *out)
{
	if (gb_policy_parse_bool(v, out) == 0)
		return 0;
	ERR(p, "'%s' must be yes or no, not '%s'", key, v);
	return -EINVAL;
}

static int parse_uint(const char *s, unsigned int max, unsigned int *out)
{
	unsigned long v;
	char *end;

	if (!isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

struct name_bit {
	const char *name;
	unsigned int bit;
};

static const struct name_bit directions[] = {
	{ "input", GB_BIT(GPIOD_LINE_DIRECTION_INPUT) },
	{ "output", GB_BIT(GPIOD_LINE_DIRECTION_OUTPUT) },
};
static const struct name_bit edges[] = {
	{ "none", GB_BIT(GPIOD_LINE_EDGE_NONE) },
	{ "rising", GB_BIT(GPIOD_LINE_EDGE_RISING) },
	{ "falling", GB_BIT(GPIOD_LINE_EDGE_FALLING) },
	{ "both", GB_BIT(GPIOD_LINE_EDGE_BOTH) },
};
static const struct name_bit biases[] = {
	{ "as-is", GB_BIT(GPIOD_LINE_BIAS_AS_IS) },
	{ "disabled", GB_BIT(GPIOD_LINE_BIAS_DISABLED) },
	{ "pull-up", GB_BIT(GPIOD_LINE_BIAS_PULL_UP) },
	{ "pull-down", GB_BIT(GPIOD_LINE_BIAS_PULL_DOWN) },
};
static const struct name_bit drives[] = {
	{ "push-pull", GB_BIT(GPIOD_LINE_DRIVE_PUSH_PULL) },
	{ "open-drain", GB_BIT(GPIOD_LINE_DRIVE_OPEN_DRAIN) },
	{ "open-source", GB_BIT(GPIOD_LINE_DRIVE_OPEN_SOURCE) },
};

struct bitset_ctx {
	const struct name_bit *table;
	size_t n;
	unsigned int *out;
};

static int add_bit(struct parser *p, const char *key, const char *item, void *ud)
{
	struct bitset_ctx *c = ud;
	char choices[128] = "";

	for (size_t i = 0; i < c->n; i++) {
		if (strcmp(c->table[i].name, item) == 0) {
			if (*c->out & c->table[i].bit) {
				ERR(p, "'%s' lists '%s' twice", key, item);
				return -EINVAL;
			}
			*c->out |= c->table[i].bit;
			return 0;
		}
		snprintf(choices + strlen(choices), sizeof(choices) - strlen(choices), "%s%s",
			 i ? ", " : "", c->table[i].name);
	}
	ERR(p, "'%s' is not a valid value for '%s' (one of: %s)", item, key, choices);
	return -EINVAL;
}

static int parse_bits(struct parser *p, const char *key, char *value, const struct name_bit *t,
		      size_t n, unsigned int *out)
{
	struct bitset_ctx c = { t, n, out };

	*out = 0;
	return for_each_item(p, key, value, add_bit, &c);
}

static int add_offset(struct parser *p, const char *key, const char *item, void *ud)
{
	struct gb_policy_entry *e = ud;
	unsigned int lo, hi;
	char buf[64], *dash;

	snprintf(buf, sizeof(buf), "%s", item);
	dash = strchr(buf, '-');
	if (dash)
		*dash = '\0';
	if (parse_uint(trim(buf), MAX_OFFSET, &lo) < 0 ||
	    (dash && parse_uint(trim(dash + 1), MAX_OFFSET, &hi) < 0)) {
		ERR(p, "'%s' in '%s' is not an offset or a range N-M (0-%d)", item, key, MAX_OFFSET);
		return -EINVAL;
	}
	if (!dash)
		hi = lo;
	if (hi < lo) {
		ERR(p, "range '%s' in '%s' runs backwards", item, key);
		return -EINVAL;
	}
	for (unsigned int o = lo; o <= hi; o++) {
		unsigned int *n;

		for (size_t i = 0; i < e->n_offsets; i++)
			if (e->offsets[i] == o) {
				ERR(p, "offset %u is listed twice in '%s'", o, key);
				return -EINVAL;
			}
		n = realloc(e->offsets, (e->n_offsets + 1) * sizeof(*n));
		if (!n)
			return -ENOMEM;
		e->offsets = n;
		e->offsets[e->n_offsets++] = o;
	}
	return 0;
}

/* Where a list of users or groups goes: users/groups or watch-users/watch-groups. */
struct id_list {
	unsigned int **ids;
	size_t *n;
	bool *any;
};

/* A name nobody has yet matches nobody: the entry grants it nothing, which is
 * safe, so one missing user does not reject the whole policy. The name is looked
 * up again at every reload. */
static int unknown_id(struct parser *p, const char *what, const char *item)
{
	gb_policy_add_error(&p->policy->warnings, p->file, p->line,
			    "unknown %s '%s': it matches nobody until it exists and the policy "
			    "is reloaded", what, item);
	return 0;
}

/* 1 found; 0 unknown (a warning); < 0 the image's file cannot be used, an error the
 * loader reports once. */
static int lookup_id(struct parser *p, bool user, const char *item, unsigned int *id)
{
	int r = gb_policy_lookup_name(p->policy, user, item, id);

	if (r == 0)
		unknown_id(p, user ? "user" : "group", item);
	return r;
}

static int add_id(struct parser *p, bool user, const char *item, struct id_list *e)
{
	unsigned int id, *n;

	if (parse_uint(item, UINT_MAX - 1, &id) < 0 && lookup_id(p, user, item, &id) <= 0)
		return 0;
	n = realloc(*e->ids, (*e->n + 1) * sizeof(*n));
	if (!n)
		return -ENOMEM;
	*e->ids = n;
	(*e->ids)[(*e->n)++] = id;
	return 0;
}

static int add_user(struct parser *p, const char *key, const char *item, void *ud)
{
	struct id_list *e = ud;

	if (strcmp(item, "*") == 0) {
		*e->any = true;
		return 0;
	}
	return add_id(p, true, item, e);
}

static int add_group(struct parser *p, const char *key, const char *item, void *ud)
{
	return add_id(p, false, item, ud);
}

enum {
	K_CHIP, K_OFFSET, K_OFFSETS, K_LINE_NAME, K_USERS, K_GROUPS, K_DIRECTIONS,
	K_DIRECTION_MAY_CHANGE, K_EDGES, K_BIAS, K_DRIVE, K_PERSISTENT, K_LABEL_PREFIX,
	K_SAFE_STATE, K_INITIAL_VALUE, K_ROOT_BYPASS, K_WATCH_USERS, K_WATCH_GROUPS,
	K_MAX_WATCHERS, K_DIRECT, K_RESTORE_ON_REPLUG,
};

static const struct {
	const char *name;
	int id;
	unsigned int sections; /* 1: line, 2: group, 4: broker */
} keys[] = {
	{ "chip", K_CHIP, 3 },
	{ "offset", K_OFFSET, 1 },
	{ "offsets", K_OFFSETS, 2 },
	{ "line-name", K_LINE_NAME, 1 },
	{ "users", K_USERS, 3 },
	{ "groups", K_GROUPS, 3 },
	{ "directions", K_DIRECTIONS, 3 },
	{ "direction-may-change", K_DIRECTION_MAY_CHANGE, 3 },
	{ "edges", K_EDGES, 3 },
	{ "bias", K_BIAS, 3 },
	{ "drive", K_DRIVE, 3 },
	{ "persistent", K_PERSISTENT, 3 },
	{ "restore-on-replug", K_RESTORE_ON_REPLUG, 3 },
	{ "label-prefix", K_LABEL_PREFIX, 3 },
	{ "safe-state", K_SAFE_STATE, 3 },
	{ "initial-value", K_INITIAL_VALUE, 3 },
	{ "root-bypass", K_ROOT_BYPASS, 4 },
	{ "watch-users", K_WATCH_USERS, 3 },
	{ "watch-groups", K_WATCH_GROUPS, 3 },
	{ "max-watchers", K_MAX_WATCHERS, 3 },
	{ "direct", K_DIRECT, 3 },
};

static int set_key(struct parser *p, const char *key, char *value)
{
	struct gb_policy_entry *e = &p->cur;
	unsigned int where = p->section == SEC_BROKER ? 4 : e->group ? 2 : 1;
	int id = -1, r = 0;
	unsigned int v;
	char msg[400];
	bool b;

	if (p->section == SEC_ACTION || p->section == SEC_SLICE) {
		r = p->section == SEC_ACTION ?
			gb_policy_action_set_key(&p->act, key, value, &p->seen, msg, sizeof(msg)) :
			gb_policy_slice_set_key(p->policy, &p->slice, key, value, p->line, &p->seen,
						msg, sizeof(msg));
		if (r == -EINVAL)
			ERR(p, "%s", msg);
		return r;
	}
	/* [line], [group] and [broker] share one table, a key belonging to some of them
	 * only: found here, then checked as every section's keys are. */
	for (size_t i = 0; i < ELEMENTSOF(keys); i++)
		if (strcmp(keys[i].name, key) == 0) {
			if (!(keys[i].sections & where)) {
				ERR(p, "'%s' does not belong in a [%s] section", key,
				    where == 4 ? "broker" : where == 2 ? "group" : "line");
				return -EINVAL;
			}
			id = keys[i].id;
		}
	if (id < 0) {
		ERR(p, "unknown key '%s'", key);
		return -EINVAL;
	}
	r = gb_policy_key_given(key, id, value, &p->seen, msg, sizeof(msg));
	if (r < 0) {
		ERR(p, "%s", msg);
		return r;
	}

	switch (id) {
	case K_CHIP:
		r = gb_policy_parse_chip(e, value, msg, sizeof(msg));
		if (r == -EINVAL)
			ERR(p, "%s", msg);
		return r;
	case K_LINE_NAME:
		e->line_name = strdup(value);
		break;
	case K_OFFSET:
		if (parse_uint(value, MAX_OFFSET, &v) < 0) {
			ERR(p, "'offset' must be a number 0-%d, not '%s'", MAX_OFFSET, value);
			return -EINVAL;
		}
		return add_offset(p, key, value, e);
	case K_OFFSETS:
		return for_each_item(p, key, value, add_offset, e);
	case K_USERS:
		return for_each_item(p, key, value, add_user,
				     &(struct id_list){ &e->uids, &e->n_uids, &e->any_user });
	case K_GROUPS:
		return for_each_item(p, key, value, add_group,
				     &(struct id_list){ &e->gids, &e->n_gids, NULL });
	case K_WATCH_USERS:
		return for_each_item(p, key, value, add_user,
				     &(struct id_list){ &e->watch_uids, &e->n_watch_uids,
							&e->watch_any_user });
	case K_WATCH_GROUPS:
		return for_each_item(p, key, value, add_group,
				     &(struct id_list){ &e->watch_gids, &e->n_watch_gids, NULL });
	case K_MAX_WATCHERS:
		if (parse_uint(value, GB_MAX_MAX_WATCHERS, &v) < 0 || v == 0) {
			ERR(p, "'max-watchers' must be a number 1-%d, not '%s'", GB_MAX_MAX_WATCHERS,
			    value);
			return -EINVAL;
		}
		e->max_watchers = v;
		break;
	case K_DIRECTIONS:
		return parse_bits(p, key, value, directions, ELEMENTSOF(directions), &e->directions);
	case K_EDGES:
		r = parse_bits(p, key, value, edges, ELEMENTSOF(edges), &e->edges);
		e->edges |= GB_BIT(GPIOD_LINE_EDGE_NONE);
		return r;
	case K_BIAS:
		r = parse_bits(p, key, value, biases, ELEMENTSOF(biases), &e->biases);
		e->biases |= GB_BIT(GPIOD_LINE_BIAS_AS_IS);
		return r;
	case K_DRIVE:
		r = parse_bits(p, key, value, drives, ELEMENTSOF(drives), &e->drives);
		e->drives |= GB_BIT(GPIOD_LINE_DRIVE_PUSH_PULL);
		return r;
	case K_DIRECTION_MAY_CHANGE:
		return parse_bool(p, key, value, &e->direction_may_change);
	case K_PERSISTENT:
		return parse_bool(p, key, value, &e->persistent);
	case K_RESTORE_ON_REPLUG:
		return parse_bool(p, key, value, &e->restore_on_replug);
	case K_DIRECT:
		return parse_bool(p, key, value, &e->direct);
	case K_ROOT_BYPASS:
		r = parse_bool(p, key, value, &b);
		if (r >= 0)
			p->policy->root_bypass = b;
		return r;
	case K_LABEL_PREFIX:
		if (strlen(value) > MAX_LABEL) {
			ERR(p, "'label-prefix' is longer than a label may be (%d)", MAX_LABEL);
			return -EINVAL;
		}
		for (const char *c = value; *c; c++)
			if (*c < 0x21 || *c > 0x7e) {
				ERR(p, "'label-prefix' must be printable ASCII without spaces");
				return -EINVAL;
			}
		e->label_prefix = strdup(value);
		break;
	case K_SAFE_STATE:
		for (int s = GB_SAFE_AS_IS; s <= GB_SAFE_OUTPUT_HIGH; s++)
			if (strcmp(value, gb_safe_state_name(s)) == 0) {
				e->safe_state = s;
				return 0;
			}
		ERR(p, "'safe-state' must be as-is, input, output-low or output-high, not '%s'", value);
		return -EINVAL;
	case K_INITIAL_VALUE:
		if (strcmp(value, "0") && strcmp(value, "1")) {
			ERR(p, "'initial-value' must be 0 or 1, not '%s'", value);
			return -EINVAL;
		}
		e->initial_value = value[0] - '0';
		break;
	}
	return r;
}

/* The kernel fd lets its holder set any direction, edge, bias and drive, and the
 * kernel has no way to take it back: "direct" is accepted only where the entry
 * already allows all of that, so the fd gives away nothing the policy withholds. */
static void check_direct(struct parser *p, const struct gb_policy_entry *e)
{
	char missing[300];

	if (gb_policy_entry_fd_missing(e, missing, sizeof(missing)))
		ERR(p, "[%s %s]: direct = yes hands out the kernel line fd, which can set anything; "
		    "the entry must allow all of it: missing %s", e->group ? "group" : "line",
		    e->name, missing);
}

/* A section ends: check it as a whole, then keep or drop it. */
static int end_section(struct parser *p)
{
	struct gb_policy_entry *e = &p->cur;
	unsigned int line = p->line;
	int before = p->n_errors;
	bool out, in;

	if (p->section == SEC_ACTION || p->section == SEC_SLICE) {
		int n = p->section == SEC_ACTION ? gb_policy_action_end(p->policy, &p->act, p->errors) :
			gb_policy_slice_end(p->policy, &p->slice, p->errors);

		if (n < 0)
			return n;
		p->n_errors += n;
	}
	if (p->section != SEC_ENTRY)
		goto done; /* [broker], [action] and [slice] are checked as they are read */
	/* Errors about the section as a whole point at its header. */
	p->line = e->lineno;
	out = e->directions & GB_BIT(GPIOD_LINE_DIRECTION_OUTPUT);
	in = e->directions & GB_BIT(GPIOD_LINE_DIRECTION_INPUT);
	if (!e->group) {
		if (e->line_name && (e->chip || e->n_offsets))
			ERR(p, "[line %s]: give either line-name or chip and offset, not both", e->name);
		else if (!e->line_name && !(e->chip && e->n_offsets))
			ERR(p, "[line %s]: which line? give line-name, or chip and offset", e->name);
	} else if (!e->chip || !e->n_offsets) {
		ERR(p, "[group %s]: needs chip and offsets", e->name);
	}
	if (!e->directions)
		ERR(p, "[%s %s]: 'directions' is required (input, output or both)",
		    e->group ? "group" : "line", e->name);
	/* Whether users were named, not whether they exist: see unknown_id(). */
	if (!(p->seen & (GB_BIT(K_USERS) | GB_BIT(K_GROUPS))))
		ERR(p, "[%s %s]: nobody may use it; add 'users' or 'groups'",
		    e->group ? "group" : "line", e->name);
	if (e->direction_may_change && !(in && out))
		ERR(p, "[%s %s]: direction-may-change = yes needs directions = input, output",
		    e->group ? "group" : "line", e->name);
	if ((e->edges & ~GB_BIT(GPIOD_LINE_EDGE_NONE)) && !in)
		ERR(p, "[%s %s]: edge detection needs input in 'directions'",
		    e->group ? "group" : "line", e->name);
	if ((e->drives & ~GB_BIT(GPIOD_LINE_DRIVE_PUSH_PULL)) && !out)
		ERR(p, "[%s %s]: 'drive' needs output in 'directions'", e->group ? "group" : "line",
		    e->name);
	if (e->max_watchers && !(p->seen & (GB_BIT(K_WATCH_USERS) | GB_BIT(K_WATCH_GROUPS))))
		ERR(p, "[%s %s]: 'max-watchers' without 'watch-users' or 'watch-groups'",
		    e->group ? "group" : "line", e->name);
	if ((p->seen & (GB_BIT(K_WATCH_USERS) | GB_BIT(K_WATCH_GROUPS))) && !in)
		ERR(p, "[%s %s]: watching needs input in 'directions'",
		    e->group ? "group" : "line", e->name);
	if (e->initial_value >= 0 && !out)
		ERR(p, "[%s %s]: 'initial-value' needs output in 'directions'",
		    e->group ? "group" : "line", e->name);
	if (e->direct)
		check_direct(p, e);
	/* Only a persistent request outlives its chip, to be made again. */
	if (e->restore_on_replug && !e->persistent)
		ERR(p, "[%s %s]: 'restore-on-replug' needs persistent = yes",
		    e->group ? "group" : "line", e->name);
	p->line = line;

	if (p->n_errors == before) {
		struct gb_policy_entry *n = realloc(p->policy->entries,
						    (p->policy->n_entries + 1) * sizeof(*n));
		if (!n)
			return -ENOMEM;
		p->policy->entries = n;
		n[p->policy->n_entries++] = *e;
		memset(e, 0, sizeof(*e));
	}
done:
	gb_policy_action_clear(&p->act);
	gb_policy_slice_clear(&p->slice);
	gb_policy_entry_clear(e);
	memset(e, 0, sizeof(*e));
	p->section = SEC_NONE;
	p->seen = 0;
	return 0;
}

static int begin_section(struct parser *p, char *hdr)
{
	char *close = strchr(hdr, ']'), *kind, *name;

	if (!close || trim(close + 1)[0]) {
		ERR(p, "a section header is '[line NAME]', '[group NAME]', '[action NAME]', "
		    "'[slice NAME]' or '[broker]'");
		return -EINVAL;
	}
	*close = '\0';
	kind = trim(hdr + 1);
	name = kind + strcspn(kind, " \t");
	if (*name)
		*name++ = '\0';
	name = trim(name);

	if (strcmp(kind, "broker") == 0) {
		if (*name) {
			ERR(p, "[broker] takes no name");
			return -EINVAL;
		}
		if (p->broker_seen) {
			ERR(p, "[broker] given twice");
			return -EINVAL;
		}
		p->broker_seen = true;
		p->section = SEC_BROKER;
		return 0;
	}
	if (strcmp(kind, "slice") == 0) {
		char msg[300];
		int r = gb_policy_slice_begin(&p->slice, name, p->file, p->line, msg, sizeof(msg));

		if (r == -EINVAL)
			ERR(p, "%s", msg);
		p->section = SEC_SLICE;
		return r;
	}
	if (strcmp(kind, "line") != 0 && strcmp(kind, "group") != 0 && strcmp(kind, "action") != 0) {
		ERR(p, "unknown section kind '%s' (line, group, action, slice or broker)", kind);
		return -EINVAL;
	}
	if (!gb_policy_valid_name(name)) {
		ERR(p, "'%s' is not a valid %s name (a letter, then letters, digits, '-', '_', '.')",
		    name, kind);
		return -EINVAL;
	}
	if (strcmp(kind, "action") == 0) {
		p->section = SEC_ACTION;
		return gb_policy_action_begin(&p->act, name, p->file, p->line);
	}
	p->section = SEC_ENTRY;
	p->cur.group = strcmp(kind, "group") == 0;
	p->cur.name = strdup(name);
	p->cur.file = strdup(p->file);
	p->cur.lineno = p->line;
	p->cur.initial_value = -1;
	p->cur.edges = GB_BIT(GPIOD_LINE_EDGE_NONE);
	p->cur.biases = GB_BIT(GPIOD_LINE_BIAS_AS_IS);
	p->cur.drives = GB_BIT(GPIOD_LINE_DRIVE_PUSH_PULL);
	return p->cur.name && p->cur.file ? 0 : -ENOMEM;
}

int gb_policy_parse(struct gb_policy *policy, const char *name, const char *text, size_t len,
		    char **errors)
{
	struct parser p = { .policy = policy, .file = name, .errors = errors };
	_cleanup_free_ char *copy = malloc(len + 1);
	char *save = NULL;
	int r = 0;

	if (!copy)
		return -ENOMEM;
	memcpy(copy, text, len);
	copy[len] = '\0';
	if (memchr(text, '\0', len)) {
		gb_policy_add_error(errors, name, 0, "contains a NUL byte; not a text file");
		return 1;
	}

	/* Walk lines by hand: strtok would skip empty lines and break the numbering. */
	for (char *s = copy; s && r >= 0; s = save) {
		char *nl = strchr(s, '\n'), *l, *eq;

		save = nl ? nl + 1 : NULL;
		if (nl)
			*nl = '\0';
		p.line++;
		l = trim(s);
		if (!*l || *l == '#' || *l == ';')
			continue;
		if (*l == '[') {
			r = end_section(&p);
			if (r >= 0)
				r = begin_section(&p, l);
			if (r == -EINVAL) {
				r = 0;
				p.section = SEC_NONE;
				gb_policy_entry_clear(&p.cur);
				memset(&p.cur, 0, sizeof(p.cur));
				gb_policy_action_clear(&p.act);
				gb_policy_slice_clear(&p.slice);
				p.section = -1; /* skip keys until the next valid header */
			}
			continue;
		}
		eq = strchr(l, '=');
		if (!eq) {
			ERR(&p, "expected 'key = value' or a [section]");
			continue;
		}
		*eq = '\0';
		if ((int)p.section == -1)
			continue; /* inside a section whose header was wrong: already reported */
		if (p.section == SEC_NONE) {
			ERR(&p, "'%s' outside any section", trim(l));
			continue;
		}
		r = set_key(&p, trim(l), trim(eq + 1));
		if (r == -EINVAL)
			r = 0;
	}
	if (r >= 0 && (int)p.section != -1) {
		p.line++;
		r = end_section(&p);
	}
	gb_policy_entry_clear(&p.cur);
	gb_policy_action_clear(&p.act);
	gb_policy_slice_clear(&p.slice);
	return r < 0 ? r : p.n_errors;
}

