/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Integrator policy: parsing policy files and answering "may this caller do this
 * with this line?". See gpiod-broker.policy(5) for the format.
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

/* --- errors ------------------------------------------------------------------ */

_printf_(4, 5)
static void add_error(char **errors, const char *file, unsigned int line, const char *fmt, ...)
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

/* --- model ------------------------------------------------------------------- */

struct gb_policy *gb_policy_new(void)
{
	struct gb_policy *p = calloc(1, sizeof(*p));

	if (p)
		p->root_bypass = true;
	return p;
}

static void entry_clear(struct gb_policy_entry *e)
{
	free(e->file);
	free(e->name);
	free(e->line_name);
	free(e->chip);
	free(e->offsets);
	free(e->uids);
	free(e->gids);
	free(e->watch_uids);
	free(e->watch_gids);
	free(e->label_prefix);
}

void gb_policy_free(struct gb_policy *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->n_entries; i++)
		entry_clear(&p->entries[i]);
	free(p->entries);
	free(p);
}

const char *gb_safe_state_name(enum gb_safe_state s)
{
	static const char *const names[] = { "as-is", "input", "output-low", "output-high" };

	return s < ELEMENTSOF(names) ? names[s] : "unknown";
}

void gb_policy_entry_describe(const struct gb_policy_entry *e, char *buf, size_t size)
{
	snprintf(buf, size, "[%s %s] (%s:%u)", e->group ? "group" : "line", e->name, e->file,
		 e->lineno);
}

/* --- parsing ----------------------------------------------------------------- */

struct parser {
	struct gb_policy *policy;
	const char *file;
	unsigned int line;
	char **errors;
	int n_errors;
	enum { SEC_NONE, SEC_BROKER, SEC_ENTRY } section;
	struct gb_policy_entry cur;
	unsigned long seen;  /* keys seen in this section (bit per key) */
	bool broker_seen;
};

#define ERR(p, ...) do { add_error((p)->errors, (p)->file, (p)->line, __VA_ARGS__); (p)->n_errors++; } while (0)

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

static int add_user(struct parser *p, const char *key, const char *item, void *ud)
{
	struct id_list *e = ud;
	struct passwd pw, *res = NULL;
	char buf[4096];
	unsigned int id;
	uid_t *n;

	if (strcmp(item, "*") == 0) {
		*e->any = true;
		return 0;
	}
	if (parse_uint(item, UINT_MAX - 1, &id) < 0) {
		if (getpwnam_r(item, &pw, buf, sizeof(buf), &res) != 0 || !res) {
			ERR(p, "unknown user '%s'", item);
			return -EINVAL;
		}
		id = res->pw_uid;
	}
	n = realloc(*e->ids, (*e->n + 1) * sizeof(*n));
	if (!n)
		return -ENOMEM;
	*e->ids = n;
	(*e->ids)[(*e->n)++] = id;
	return 0;
}

static int add_group(struct parser *p, const char *key, const char *item, void *ud)
{
	struct id_list *e = ud;
	struct group gr, *res = NULL;
	char buf[8192];
	unsigned int id;
	gid_t *n;

	if (parse_uint(item, UINT_MAX - 1, &id) < 0) {
		if (getgrnam_r(item, &gr, buf, sizeof(buf), &res) != 0 || !res) {
			ERR(p, "unknown group '%s'", item);
			return -EINVAL;
		}
		id = res->gr_gid;
	}
	n = realloc(*e->ids, (*e->n + 1) * sizeof(*n));
	if (!n)
		return -ENOMEM;
	*e->ids = n;
	(*e->ids)[(*e->n)++] = id;
	return 0;
}

enum {
	K_CHIP, K_OFFSET, K_OFFSETS, K_LINE_NAME, K_USERS, K_GROUPS, K_DIRECTIONS,
	K_DIRECTION_MAY_CHANGE, K_EDGES, K_BIAS, K_DRIVE, K_PERSISTENT, K_LABEL_PREFIX,
	K_SAFE_STATE, K_INITIAL_VALUE, K_ROOT_BYPASS, K_WATCH_USERS, K_WATCH_GROUPS,
	K_MAX_WATCHERS,
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
	{ "label-prefix", K_LABEL_PREFIX, 3 },
	{ "safe-state", K_SAFE_STATE, 3 },
	{ "initial-value", K_INITIAL_VALUE, 3 },
	{ "root-bypass", K_ROOT_BYPASS, 4 },
	{ "watch-users", K_WATCH_USERS, 3 },
	{ "watch-groups", K_WATCH_GROUPS, 3 },
	{ "max-watchers", K_MAX_WATCHERS, 3 },
};

static int set_key(struct parser *p, const char *key, char *value)
{
	struct gb_policy_entry *e = &p->cur;
	unsigned int where = p->section == SEC_BROKER ? 4 : e->group ? 2 : 1;
	int id = -1, r = 0;
	unsigned int v;
	bool b;

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
	if (p->seen & (1ul << id)) {
		ERR(p, "'%s' given twice in this section", key);
		return -EINVAL;
	}
	p->seen |= 1ul << id;
	if (!*value) {
		ERR(p, "'%s' has no value", key);
		return -EINVAL;
	}

	switch (id) {
	case K_CHIP:
		e->chip = strdup(value);
		break;
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

static bool valid_name(const char *s)
{
	if (!isalpha((unsigned char)*s))
		return false;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && !strchr("-_.", *s))
			return false;
	return true;
}

/* A section ends: check it as a whole, then keep or drop it. */
static int end_section(struct parser *p)
{
	struct gb_policy_entry *e = &p->cur;
	unsigned int line = p->line;
	int before = p->n_errors;
	bool out, in;

	if (p->section != SEC_ENTRY)
		goto done;
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
	if (!e->n_uids && !e->n_gids && !e->any_user)
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
	if (e->max_watchers && !e->n_watch_uids && !e->n_watch_gids && !e->watch_any_user)
		ERR(p, "[%s %s]: 'max-watchers' without 'watch-users' or 'watch-groups'",
		    e->group ? "group" : "line", e->name);
	if ((e->n_watch_uids || e->n_watch_gids || e->watch_any_user) && !in)
		ERR(p, "[%s %s]: watching needs input in 'directions'",
		    e->group ? "group" : "line", e->name);
	if (e->initial_value >= 0 && !out)
		ERR(p, "[%s %s]: 'initial-value' needs output in 'directions'",
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
	entry_clear(e);
	memset(e, 0, sizeof(*e));
	p->section = SEC_NONE;
	p->seen = 0;
	return 0;
}

static int begin_section(struct parser *p, char *hdr)
{
	char *close = strchr(hdr, ']'), *kind, *name;

	if (!close || trim(close + 1)[0]) {
		ERR(p, "a section header is '[line NAME]', '[group NAME]' or '[broker]'");
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
	if (strcmp(kind, "line") != 0 && strcmp(kind, "group") != 0) {
		ERR(p, "unknown section kind '%s' (line, group or broker)", kind);
		return -EINVAL;
	}
	if (!valid_name(name)) {
		ERR(p, "'%s' is not a valid %s name (a letter, then letters, digits, '-', '_', '.')",
		    name, kind);
		return -EINVAL;
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
		add_error(errors, name, 0, "contains a NUL byte; not a text file");
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
				entry_clear(&p.cur);
				memset(&p.cur, 0, sizeof(p.cur));
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
	entry_clear(&p.cur);
	return r < 0 ? r : p.n_errors;
}

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
				add_error(errors, a->file, a->lineno, "the name '%s' is already used by %s",
					  a->name, where);
				n++;
			} else if (a->line_name && b->line_name && strcmp(a->line_name, b->line_name) == 0) {
				add_error(errors, a->file, a->lineno,
					  "line '%s' is already covered by %s", a->line_name, where);
				n++;
			} else if (same_chip_offset(a, b, &off)) {
				add_error(errors, a->file, a->lineno,
					  "line %s:%u is already covered by %s", a->chip, off, where);
				n++;
			}
		}
	return n;
}

static int load_file(struct gb_policy *p, int dirfd, const char *dir, const char *name,
		     char **errors)
{
	char path[PATH_MAX];
	struct stat st;
	_cleanup_free_ char *buf = NULL;
	size_t len = 0;
	ssize_t n;
	int fd, r;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0) {
		add_error(errors, path, 0, "cannot open: %s", strerror(errno));
		return 1;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		add_error(errors, path, 0, "not a regular file");
		close(fd);
		return 1;
	}
	/* Whoever can write the policy decides who drives the hardware. */
	if (st.st_uid != 0 || (st.st_mode & (S_IWGRP | S_IWOTH))) {
		add_error(errors, path, 0, "must be owned by root and not writable by group or others "
			  "(is uid %u, mode %04o)", (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777));
		close(fd);
		return 1;
	}
	if (st.st_size > 1024 * 1024) {
		add_error(errors, path, 0, "larger than 1 MiB");
		close(fd);
		return 1;
	}
	buf = malloc(st.st_size + 1);
	if (!buf) {
		close(fd);
		return -ENOMEM;
	}
	while ((n = read(fd, buf + len, st.st_size - len)) > 0 && len < (size_t)st.st_size)
		len += n;
	close(fd);
	if (n < 0) {
		add_error(errors, path, 0, "read error: %s", strerror(errno));
		return 1;
	}
	r = gb_policy_parse(p, path, buf, len, errors);
	return r;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

struct gb_policy *gb_policy_load(const char *dir, char **errors)
{
	struct gb_policy *p = gb_policy_new();
	char **names = NULL;
	size_t n = 0;
	struct dirent *de;
	int nerr = 0, r = 0;
	DIR *d;

	if (!p)
		return NULL;
	d = opendir(dir);
	if (!d) {
		if (errno == ENOENT)
			return p; /* no policy: default deny */
		add_error(errors, dir, 0, "cannot read policy directory: %s", strerror(errno));
		gb_policy_free(p);
		return NULL;
	}
	while ((de = readdir(d))) {
		size_t l = strlen(de->d_name);
		char **nn;

		if (de->d_name[0] == '.' || l < 6 || strcmp(de->d_name + l - 5, ".conf") != 0)
			continue;
		nn = realloc(names, (n + 1) * sizeof(*nn));
		if (!nn || !(nn[n] = strdup(de->d_name))) {
			free(nn ? nn : names);
			names = NULL;
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
	if (r >= 0)
		nerr += gb_policy_finish(p, errors);
	if (r < 0 || nerr) {
		if (r < 0)
			add_error(errors, dir, 0, "out of memory");
		gb_policy_free(p);
		return NULL;
	}
	return p;
}

/* --- evaluation -------------------------------------------------------------- */

static bool entry_covers(const struct gb_policy_entry *e, const struct gb_line_ident *l)
{
	if (e->line_name)
		return l->line_name && strcmp(e->line_name, l->line_name) == 0;
	if (fnmatch(e->chip, l->chip_name, 0) != 0 &&
	    (!l->chip_label || fnmatch(e->chip, l->chip_label, 0) != 0))
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
				snprintf(ambiguous, size,
					 "policy error: %s:%u is covered by both %s and %s; "
					 "the line is unusable until the policy is fixed",
					 l->chip_name, l->offset, a, b);
			return NULL;
		}
		found = &p->entries[i];
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

/* The entry a caller may use for a line, or -EACCES with why not. */
static int entry_for(const struct gb_policy *p, const struct gb_line_ident *l,
		     const struct gb_caller *c, const struct gb_policy_entry **ret,
		     char *reason, size_t size)
{
	const struct gb_policy_entry *e;
	char where[300];

	e = gb_policy_match(p, l, reason, size);
	if (!e) {
		if (!reason[0])
			snprintf(reason, size,
				 "no policy entry covers %s:%u%s%s%s; an integrator must add one "
				 "(see gpiod-broker.policy(5))", l->chip_name, l->offset,
				 l->line_name && *l->line_name ? " (\"" : "",
				 l->line_name && *l->line_name ? l->line_name : "",
				 l->line_name && *l->line_name ? "\")" : "");
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

static const char *bit_name(const struct name_bit *t, size_t n, unsigned int bit)
{
	for (size_t i = 0; i < n; i++)
		if (t[i].bit == bit)
			return t[i].name;
	return "?";
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
			 bit_name(edges, ELEMENTSOF(edges), GB_BIT(cfg->edge)), where);
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

static bool root_bypass(const struct gb_policy *p, const struct gb_caller *c)
{
	return c->uid == 0 && p->root_bypass;
}

int gb_policy_check_request(const struct gb_policy *p, const struct gb_line_ident *l,
			    const struct gb_caller *c, const struct gb_line_config *cfg,
			    bool persistent, const char *label, char *reason, size_t size)
{
	const struct gb_policy_entry *e;
	char where[300];
	int r;

	reason[0] = '\0';
	if (root_bypass(p, c))
		return 0;
	r = entry_for(p, l, c, &e, reason, size);
	if (r < 0)
		return r;
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

	reason[0] = '\0';
	if (root_bypass(p, c))
		return 0;
	r = entry_for(p, l, c, &e, reason, size);
	if (r < 0)
		return r;
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
		if (!reason[0])
			snprintf(reason, size,
				 "no policy entry covers %s:%u%s%s%s; an integrator must add one "
				 "(see gpiod-broker.policy(5))", l->chip_name, l->offset,
				 l->line_name && *l->line_name ? " (\"" : "",
				 l->line_name && *l->line_name ? l->line_name : "",
				 l->line_name && *l->line_name ? "\")" : "");
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

int gb_policy_check_use(const struct gb_policy *p, const struct gb_line_ident *l,
			const struct gb_caller *c, char *reason, size_t size)
{
	const struct gb_policy_entry *e;

	reason[0] = '\0';
	if (root_bypass(p, c))
		return 0;
	return entry_for(p, l, c, &e, reason, size);
}
