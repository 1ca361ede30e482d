/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "record.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"

void gb_record_init(struct gb_record *rec)
{
	*rec = (struct gb_record){ .gid = (gid_t)-1 };
}

void gb_record_clear(struct gb_record *rec)
{
	for (unsigned int k = 0; rec->chips && k < rec->n_chips; k++)
		free(rec->chips[k].name);
	free(rec->chips);
	free(rec->lines);
	free(rec->groups);
	free(rec->label);
	free(rec->owner);
	gb_record_init(rec);
}

int gb_record_write(const struct gb_record *rec, FILE *f)
{
	fprintf(f, "# gpiod-broker request state, read by the next broker after a restart\n"
		"version=%d\nid=%" PRIu64 "\nlabel=%s\nuid=%u\ngid=%u\ngroups=",
		GB_RECORD_VERSION, rec->id, rec->label, (unsigned)rec->uid, (unsigned)rec->gid);
	for (size_t i = 0; i < rec->n_groups; i++)
		fprintf(f, "%s%u", i ? "," : "", (unsigned)rec->groups[i]);
	fprintf(f, "\npersistent=%d\n", rec->persistent);
	/* Written only when set, so a record of a plain request reads as before. */
	if (rec->direct)
		fprintf(f, "direct=1\n");
	fprintf(f, "owner=%s\nchips=%u\n", rec->owner ? rec->owner : "", rec->n_chips);
	for (unsigned int k = 0; k < rec->n_chips; k++) {
		const struct gb_record_chip *c = &rec->chips[k];

		fprintf(f, "chip=%s %u ", c->name, c->n_kern);
		for (unsigned int i = 0; i < c->n_kern; i++)
			fprintf(f, "%s%u", i ? "," : "", c->kern_offsets[i]);
		fputc('\n', f);
	}
	fprintf(f, "lines=%u\n", rec->n_lines);
	for (unsigned int i = 0; i < rec->n_lines; i++) {
		const struct gb_record_line *l = &rec->lines[i];
		const struct gb_line_config *c = &l->config;

		/* chip-index offset set direction value edge bias drive active-low
		 * debounce-us event-clock safe-state (libgpiod's stable enum values) */
		fprintf(f, "line=%u %u %u %d %d %d %d %d %d %u %d %d\n", l->chip, l->offset, c->set,
			(int)c->direction, c->value, (int)c->edge, (int)c->bias, (int)c->drive,
			c->active_low, c->debounce_us, (int)c->event_clock, (int)l->safe_state);
	}
	if (fflush(f) != 0 || ferror(f))
		return errno ? -errno : -EIO;
	return 0;
}

bool gb_parse_u64(const char *s, uint64_t *ret)
{
	char *end;
	unsigned long long v;

	if (!*s || *s < '0' || *s > '9')
		return false;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end)
		return false;
	*ret = v;
	return true;
}

void gb_record_fd_name(uint64_t id, unsigned int k, char *buf, size_t size)
{
	snprintf(buf, size, "gbreq-%" PRIu64 "-%u", id, k);
}

bool gb_record_parse_fd_name(const char *name, uint64_t *id, unsigned int *k)
{
	char buf[64], *dash;
	uint64_t kk;

	if (strncmp(name, "gbreq-", 6) != 0 || strlen(name) >= sizeof(buf))
		return false;
	strcpy(buf, name + 6);
	dash = strchr(buf, '-');
	if (!dash)
		return false;
	*dash = 0;
	if (!gb_parse_u64(buf, id) || !gb_parse_u64(dash + 1, &kk) || kk >= GB_MAX_LINES_PER_REQUEST)
		return false;
	*k = (unsigned)kk;
	return true;
}

static bool int_in(int v, int lo, int hi)
{
	return v >= lo && v <= hi;
}

enum {
	SEEN_VERSION = 1 << 0,
	SEEN_ID = 1 << 1,
	SEEN_LABEL = 1 << 2,
	SEEN_UID = 1 << 3,
	SEEN_REQUIRED = SEEN_VERSION | SEEN_ID | SEEN_LABEL | SEEN_UID,
};

struct parse_state {
	uint64_t file_id;
	unsigned int n_chips_seen, n_lines_seen, seen;
};

static const char *parse_groups(struct gb_record *rec, const char *s)
{
	uint64_t u;

	free(rec->groups);
	rec->groups = NULL;
	rec->n_groups = 0;
	while (*s) {
		char num[16];
		size_t len = strcspn(s, ",");
		void *g;

		if (len == 0 || len >= sizeof(num) || rec->n_groups >= 65536)
			return "invalid groups";
		memcpy(num, s, len);
		num[len] = 0;
		if (!gb_parse_u64(num, &u) || u > UINT32_MAX)
			return "invalid groups";
		g = realloc(rec->groups, (rec->n_groups + 1) * sizeof(gid_t));
		if (!g)
			return "out of memory";
		rec->groups = g;
		rec->groups[rec->n_groups++] = (gid_t)u;
		s += len;
		if (*s == ',' && *++s == 0)
			return "invalid groups";
	}
	return NULL;
}

static const char *parse_chip(struct gb_record *rec, struct parse_state *ps, const char *val)
{
	struct gb_record_chip *c;
	char name[64];
	unsigned int nk;
	int pos = 0;
	const char *s;

	if (!rec->chips || ps->n_chips_seen >= rec->n_chips)
		return "more chip entries than 'chips'";
	c = &rec->chips[ps->n_chips_seen++];
	if (sscanf(val, "%63[A-Za-z0-9_.-] %u %n", name, &nk, &pos) != 2 || pos == 0 || nk == 0 ||
	    nk > GB_RECORD_MAX_KERN)
		return "invalid chip entry";
	if (!(c->name = strdup(name)))
		return "out of memory";
	s = val + pos;
	for (unsigned int i = 0; i < nk; i++) {
		char *end;
		unsigned long o;

		if (*s < '0' || *s > '9')
			return "invalid chip offsets";
		o = strtoul(s, &end, 10);
		if (o > 65535 || (*end != ',' && *end != 0) || (*end == 0) != (i == nk - 1))
			return "invalid chip offsets";
		c->kern_offsets[i] = (unsigned)o;
		s = *end ? end + 1 : end;
	}
	c->n_kern = nk;
	return NULL;
}

static const char *parse_line(struct gb_record *rec, struct parse_state *ps, const char *val)
{
	struct gb_record_line *l;
	struct gb_line_config *c;
	unsigned int ci, off, set, deb;
	int dir, value, edge, bias, drive, al, clock, safe, pos = 0;

	if (!rec->lines || ps->n_lines_seen >= rec->n_lines)
		return "more line entries than 'lines'";
	l = &rec->lines[ps->n_lines_seen++];
	c = &l->config;
	if (sscanf(val, "%u %u %u %d %d %d %d %d %d %u %d %d%n", &ci, &off, &set, &dir, &value,
		   &edge, &bias, &drive, &al, &deb, &clock, &safe, &pos) != 12 || val[pos])
		return "invalid line entry";
	if (!rec->chips || ci >= rec->n_chips || off > 65535 || set > 0xff ||
	    !int_in(dir, GPIOD_LINE_DIRECTION_AS_IS, GPIOD_LINE_DIRECTION_OUTPUT) ||
	    !int_in(value, 0, 1) || !int_in(al, 0, 1) ||
	    !int_in(edge, GPIOD_LINE_EDGE_NONE, GPIOD_LINE_EDGE_BOTH) ||
	    !int_in(bias, GPIOD_LINE_BIAS_AS_IS, GPIOD_LINE_BIAS_PULL_DOWN) ||
	    !int_in(drive, GPIOD_LINE_DRIVE_PUSH_PULL, GPIOD_LINE_DRIVE_OPEN_SOURCE) ||
	    !int_in(clock, GPIOD_LINE_CLOCK_MONOTONIC, GPIOD_LINE_CLOCK_HTE) ||
	    !int_in(safe, GB_SAFE_AS_IS, GB_SAFE_OUTPUT_HIGH))
		return "line entry out of range";
	l->chip = ci;
	l->offset = off;
	c->set = set;
	c->direction = dir;
	c->value = value;
	c->edge = edge;
	c->bias = bias;
	c->drive = drive;
	c->active_low = al;
	c->debounce_us = deb;
	c->event_clock = clock;
	l->safe_state = safe;
	return NULL;
}

/* One "key=value" line. NULL, or what is wrong. */
static const char *parse_item(struct gb_record *rec, struct parse_state *ps, const char *key,
			      const char *val)
{
	uint64_t u;

	if (strcmp(key, "version") == 0) {
		ps->seen |= SEEN_VERSION;
		return gb_parse_u64(val, &u) && u == GB_RECORD_VERSION ? NULL : "unsupported version";
	}
	if (strcmp(key, "id") == 0) {
		ps->seen |= SEEN_ID;
		if (!gb_parse_u64(val, &u) || u != ps->file_id)
			return "id does not match the file name";
		rec->id = u;
		return NULL;
	}
	if (strcmp(key, "label") == 0) {
		ps->seen |= SEEN_LABEL;
		if (!gb_label_valid(val))
			return "invalid label";
		free(rec->label);
		return (rec->label = strdup(val)) ? NULL : "out of memory";
	}
	if (strcmp(key, "uid") == 0 || strcmp(key, "gid") == 0) {
		if (!gb_parse_u64(val, &u) || u > UINT32_MAX)
			return "invalid uid/gid";
		if (key[0] == 'u') {
			ps->seen |= SEEN_UID;
			rec->uid = (uid_t)u;
		} else {
			rec->gid = (gid_t)u;
		}
		return NULL;
	}
	if (strcmp(key, "groups") == 0)
		return parse_groups(rec, val);
	if (strcmp(key, "persistent") == 0) {
		if (strcmp(val, "0") && strcmp(val, "1"))
			return "invalid persistent flag";
		rec->persistent = val[0] == '1';
		return NULL;
	}
	if (strcmp(key, "direct") == 0) {
		if (strcmp(val, "0") && strcmp(val, "1"))
			return "invalid direct flag";
		rec->direct = val[0] == '1';
		return NULL;
	}
	if (strcmp(key, "owner") == 0) {
		if (*val && (val[0] != ':' || strlen(val) > 255))
			return "invalid owner name";
		free(rec->owner);
		return (rec->owner = strdup(val)) ? NULL : "out of memory";
	}
	if (strcmp(key, "chips") == 0 || strcmp(key, "lines") == 0) {
		if (!gb_parse_u64(val, &u) || u == 0 || u > GB_MAX_LINES_PER_REQUEST)
			return "invalid count";
		if (key[0] == 'c') {
			if (rec->chips)
				return "chips given twice";
			if (!(rec->chips = calloc(u, sizeof(*rec->chips))))
				return "out of memory";
			rec->n_chips = (unsigned)u;
		} else {
			if (rec->lines)
				return "lines given twice";
			if (!(rec->lines = calloc(u, sizeof(*rec->lines))))
				return "out of memory";
			rec->n_lines = (unsigned)u;
		}
		return NULL;
	}
	if (strcmp(key, "chip") == 0)
		return parse_chip(rec, ps, val);
	if (strcmp(key, "line") == 0)
		return parse_line(rec, ps, val);
	return "unknown key";
}

typedef const char *(*item_fn)(void *userdata, const char *key, const char *val);

/* Hand each key=value line of a record to @p item, stopping at the first problem
 * with *lineno at its line: NULL when every line parsed, else what is wrong ("out of
 * memory" included). */
static const char *parse_lines(const char *text, size_t len, unsigned int *lineno, item_fn item,
			       void *userdata)
{
	const char *p = text, *end = text + len, *what = NULL;

	*lineno = 0;
	while (!what && p < end) {
		const char *nl = memchr(p, '\n', end - p);
		_cleanup_free_ char *buf = NULL;
		char *eq;

		++*lineno;
		if (!nl)
			return "truncated";
		if (memchr(p, 0, nl - p))
			return "NUL byte";
		buf = strndup(p, nl - p);
		if (!buf)
			return "out of memory";
		p = nl + 1;
		if (buf[0] == '#' || buf[0] == 0)
			continue;
		eq = strchr(buf, '=');
		if (!eq)
			return "not key=value";
		*eq = 0;
		what = item(userdata, buf, eq + 1);
	}
	return what;
}

struct request_parse {
	struct gb_record *rec;
	struct parse_state *ps;
};

static const char *request_item(void *userdata, const char *key, const char *val)
{
	struct request_parse *rp = userdata;

	return parse_item(rp->rec, rp->ps, key, val);
}

/* The record as a whole, once every line has parsed. */
static const char *check_whole(const struct gb_record *rec, const struct parse_state *ps,
			       char *msg, size_t size)
{
	if ((ps->seen & SEEN_REQUIRED) != SEEN_REQUIRED)
		return "version, id, label or uid missing";
	if (!rec->chips || !rec->lines || ps->n_chips_seen != rec->n_chips ||
	    ps->n_lines_seen != rec->n_lines)
		return "chip or line entries missing";
	for (unsigned int i = 0; i < rec->n_lines; i++) {
		if (gb_line_config_validate(&rec->lines[i].config, msg, size) < 0)
			return msg;
		for (unsigned int j = 0; j < i; j++)
			if (rec->lines[j].chip == rec->lines[i].chip &&
			    rec->lines[j].offset == rec->lines[i].offset)
				return "a line is listed twice";
	}
	return NULL;
}

int gb_record_parse(const char *text, size_t len, uint64_t file_id, struct gb_record *rec,
		    unsigned int *lineno, char *err, size_t errlen)
{
	struct parse_state ps = { .file_id = file_id };
	const char *what;
	char msg[160];

	gb_record_clear(rec);
	*lineno = 0;
	what = parse_lines(text, len, lineno, request_item, &(struct request_parse){ rec, &ps });
	if (!what) {
		*lineno = 0;
		what = check_whole(rec, &ps, msg, sizeof(msg));
	}
	if (what) {
		bool oom = strcmp(what, "out of memory") == 0;

		snprintf(err, errlen, "%s", what);
		gb_record_clear(rec);
		return oom ? -ENOMEM : -EINVAL;
	}
	return 0;
}

/* --- watch records ------------------------------------------------------------ */

void gb_watch_record_init(struct gb_watch_record *rec)
{
	*rec = (struct gb_watch_record){ 0 };
}

void gb_watch_record_clear(struct gb_watch_record *rec)
{
	free(rec->owner);
	free(rec->chip);
	gb_watch_record_init(rec);
}

int gb_watch_record_write(const struct gb_watch_record *rec, FILE *f)
{
	fprintf(f, "# gpiod-broker watch state, read by the next broker after a restart\n"
		"version=%d\nid=%" PRIu64 "\nuid=%u\nowner=%s\nline=%s %u\n", GB_RECORD_VERSION,
		rec->id, (unsigned)rec->uid, rec->owner, rec->chip, rec->offset);
	if (fflush(f) != 0 || ferror(f))
		return errno ? -errno : -EIO;
	return 0;
}

enum {
	SEEN_W_OWNER = 1 << 4,
	SEEN_W_LINE = 1 << 5,
	SEEN_W_REQUIRED = SEEN_VERSION | SEEN_ID | SEEN_UID | SEEN_W_OWNER | SEEN_W_LINE,
};

static const char *parse_watch_item(struct gb_watch_record *rec, unsigned int *seen,
				    uint64_t file_id, const char *key, const char *val)
{
	char name[64];
	unsigned int off;
	uint64_t u;
	int pos = 0;

	if (strcmp(key, "version") == 0) {
		*seen |= SEEN_VERSION;
		return gb_parse_u64(val, &u) && u == GB_RECORD_VERSION ? NULL : "unsupported version";
	}
	if (strcmp(key, "id") == 0) {
		*seen |= SEEN_ID;
		if (!gb_parse_u64(val, &u) || u != file_id)
			return "id does not match the file name";
		rec->id = u;
		return NULL;
	}
	if (strcmp(key, "uid") == 0) {
		*seen |= SEEN_UID;
		if (!gb_parse_u64(val, &u) || u > UINT32_MAX)
			return "invalid uid";
		rec->uid = (uid_t)u;
		return NULL;
	}
	if (strcmp(key, "owner") == 0) {
		/* A watch always has its subscriber: it ends with it. */
		if (val[0] != ':' || strlen(val) > 255 || *seen & SEEN_W_OWNER)
			return "invalid owner name";
		*seen |= SEEN_W_OWNER;
		return (rec->owner = strdup(val)) ? NULL : "out of memory";
	}
	if (strcmp(key, "line") == 0) {
		if (*seen & SEEN_W_LINE ||
		    sscanf(val, "%63[A-Za-z0-9_.-] %u%n", name, &off, &pos) != 2 || val[pos] ||
		    off > 65535 || val[strlen(name)] != ' ' || val[strlen(name) + 1] < '0' ||
		    val[strlen(name) + 1] > '9')
			return "invalid line entry";
		*seen |= SEEN_W_LINE;
		rec->offset = off;
		return (rec->chip = strdup(name)) ? NULL : "out of memory";
	}
	return "unknown key";
}

struct watch_parse {
	struct gb_watch_record *rec;
	unsigned int *seen;
	uint64_t file_id;
};

static const char *watch_item(void *userdata, const char *key, const char *val)
{
	struct watch_parse *wp = userdata;

	return parse_watch_item(wp->rec, wp->seen, wp->file_id, key, val);
}

int gb_watch_record_parse(const char *text, size_t len, uint64_t file_id,
			  struct gb_watch_record *rec, unsigned int *lineno, char *err,
			  size_t errlen)
{
	const char *what;
	unsigned int seen = 0;

	gb_watch_record_clear(rec);
	*lineno = 0;
	what = parse_lines(text, len, lineno, watch_item, &(struct watch_parse){ rec, &seen, file_id });
	if (!what && (seen & SEEN_W_REQUIRED) != SEEN_W_REQUIRED) {
		*lineno = 0;
		what = "version, id, uid, owner or line missing";
	}
	if (what) {
		bool oom = strcmp(what, "out of memory") == 0;

		snprintf(err, errlen, "%s", what);
		gb_watch_record_clear(rec);
		return oom ? -ENOMEM : -EINVAL;
	}
	return 0;
}
