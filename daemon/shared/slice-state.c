/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The slices' state files (slice-state.h): key=value lines, one line= per slice line. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "macro.h"
#include "slice-state.h"

void gb_slice_clear(struct gb_slice *s)
{
	for (size_t i = 0; i < s->n_lines; i++)
		free(s->lines[i].item);
	free(s->lines);
	free(s->name);
	free(s->spec);
	free(s->users);
	free(s->groups);
	memset(s, 0, sizeof(*s));
}

static bool streq_empty(const char *a, const char *b)
{
	return strcmp(a ? a : "", b ? b : "") == 0;
}

bool gb_slice_same(const struct gb_slice *a, const struct gb_slice *b)
{
	if (!streq_empty(a->spec, b->spec) || !streq_empty(a->users, b->users) ||
	    !streq_empty(a->groups, b->groups) || a->n_lines != b->n_lines)
		return false;
	for (size_t i = 0; i < a->n_lines; i++) {
		const struct gb_slice_line *x = &a->lines[i], *y = &b->lines[i];

		if (strcmp(x->parent, y->parent) != 0 || x->offset != y->offset ||
		    x->safe != y->safe || !streq_empty(x->item, y->item))
			return false;
	}
	return true;
}

static int path_of(char *buf, size_t size, const char *dir, const char *name, const char *suffix)
{
	int n = snprintf(buf, size, "%s/%s%s", dir, name, suffix);

	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

static int write_atomic(const char *dir, const char *path, const char *text)
{
	char tmp[PATH_MAX];
	size_t len = strlen(text);
	int fd, r = 0;

	/* The broker, not root, reads them: world-readable whatever the umask. */
	if (mkdir(dir, 0755) < 0 && errno != EEXIST)
		return -errno;
	if (snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0)
		return -errno;
	errno = 0;
	if (fchmod(fd, 0644) < 0 || write(fd, text, len) != (ssize_t)len || fsync(fd) < 0)
		r = errno ? -errno : -EIO;
	if (close(fd) < 0 && !r)
		r = -errno;
	/* A reader must find the old file or the new, never half of one. */
	if (!r && rename(tmp, path) < 0)
		r = -errno;
	if (r)
		(void)unlink(tmp);
	return r;
}

int gb_slice_state_write(const char *dir, const struct gb_slice *s)
{
	_cleanup_free_ char *text = NULL;
	char path[PATH_MAX];
	size_t size = 0;
	FILE *f;
	int r = path_of(path, sizeof(path), dir, s->name, "");

	if (r < 0)
		return r;
	f = open_memstream(&text, &size);
	if (!f)
		return -ENOMEM;
	fprintf(f, "device=%s\nchip=%s\nspec=%s\nusers=%s\ngroups=%s\n", s->device, s->chip,
		s->spec ? s->spec : "", s->users ? s->users : "", s->groups ? s->groups : "");
	for (size_t i = 0; i < s->n_lines; i++)
		fprintf(f, "line=%s %u %s %s\n", s->lines[i].parent, s->lines[i].offset,
			gb_safe_state_name(s->lines[i].safe), s->lines[i].item);
	if (fclose(f) != 0)
		return -ENOMEM;
	return write_atomic(dir, path, text);
}

static int parse_safe(const char *name, enum gb_safe_state *out)
{
	for (int v = GB_SAFE_AS_IS; v <= GB_SAFE_OUTPUT_HIGH; v++)
		if (strcmp(gb_safe_state_name((enum gb_safe_state)v), name) == 0) {
			*out = (enum gb_safe_state)v;
			return 0;
		}
	return -EBADMSG;
}

/* Digits only: strtoul alone would take "-1", " 7" and "0x7". */
static int parse_offset(const char *s, unsigned int *out)
{
	unsigned long v;
	char *end;

	if (!isdigit((unsigned char)*s))
		return -EBADMSG;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v > UINT_MAX)
		return -EBADMSG;
	*out = (unsigned int)v;
	return 0;
}

static int parse_line(struct gb_slice *s, char *v)
{
	struct gb_slice_line l = {}, *n;
	char *save = NULL;
	char *parent = strtok_r(v, " ", &save), *offset = strtok_r(NULL, " ", &save);
	char *safe = strtok_r(NULL, " ", &save), *item = strtok_r(NULL, "", &save);

	if (!parent || !offset || !safe || !item || strlen(parent) >= sizeof(l.parent) ||
	    parse_offset(offset, &l.offset) < 0 || parse_safe(safe, &l.safe) < 0)
		return -EBADMSG;
	memcpy(l.parent, parent, strlen(parent) + 1);
	n = realloc(s->lines, (s->n_lines + 1) * sizeof(*n));
	if (!n)
		return -ENOMEM;
	s->lines = n;
	l.item = strdup(item);
	if (!l.item)
		return -ENOMEM;
	s->lines[s->n_lines++] = l;
	return 0;
}

static int set_string(char **dst, const char *v)
{
	free(*dst);
	*dst = strdup(v);
	return *dst ? 0 : -ENOMEM;
}

static int set_fixed(char *dst, size_t size, const char *v)
{
	if (strlen(v) >= size)
		return -EBADMSG;
	memcpy(dst, v, strlen(v) + 1);
	return 0;
}

/* A key is lower-case letters and '_': anything else is not the helper's file. */
static bool valid_key(const char *k)
{
	if (!*k)
		return false;
	for (; *k; k++)
		if (!islower((unsigned char)*k) && *k != '_')
			return false;
	return true;
}

static int parse_kv(struct gb_slice *s, char *line)
{
	char *eq = strchr(line, '=');

	if (!eq)
		return -EBADMSG;
	*eq++ = '\0';
	if (!valid_key(line))
		return -EBADMSG;
	if (strcmp(line, "device") == 0)
		return set_fixed(s->device, sizeof(s->device), eq);
	if (strcmp(line, "chip") == 0)
		return set_fixed(s->chip, sizeof(s->chip), eq);
	if (strcmp(line, "spec") == 0)
		return set_string(&s->spec, eq);
	if (strcmp(line, "users") == 0)
		return set_string(&s->users, eq);
	if (strcmp(line, "groups") == 0)
		return set_string(&s->groups, eq);
	if (strcmp(line, "line") == 0)
		return parse_line(s, eq);
	return 0; /* written by a later version, not needed here */
}

int gb_slice_state_read(const char *dir, const char *name, struct gb_slice *s)
{
	_cleanup_free_ char *line = NULL;
	char path[PATH_MAX];
	size_t cap = 0;
	ssize_t len;
	FILE *f;
	int r;

	gb_slice_clear(s);
	r = path_of(path, sizeof(path), dir, name, "");
	if (r < 0)
		return r;
	f = fopen(path, "re");
	if (!f)
		return -errno;
	s->name = strdup(name);
	if (!s->name)
		r = -ENOMEM;
	while (r >= 0 && (len = getline(&line, &cap, f)) > 0) {
		if (line[len - 1] == '\n')
			line[--len] = '\0';
		if (len > GB_SLICE_STATE_LINE_MAX || strlen(line) != (size_t)len)
			r = -EBADMSG; /* too long, or a NUL inside */
		else
			r = parse_kv(s, line);
	}
	if (r >= 0 && ferror(f))
		r = -EIO;
	fclose(f);
	if (r >= 0 && (!s->device[0] || !s->chip[0]))
		r = -EBADMSG;
	if (r < 0)
		gb_slice_clear(s);
	return r;
}

static bool has_suffix(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);

	return a >= b && strcmp(s + a - b, suffix) == 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool listed(char **v, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(v[i], name) == 0)
			return true;
	return false;
}

int gb_slice_state_names(const char *dir, bool with_errors, char ***names)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char **v = NULL;
	size_t n = 0;

	*names = NULL;
	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while ((de = readdir(d))) {
		_cleanup_free_ char *name = strdup(de->d_name);
		char **nv;

		if (!name)
			goto oom;
		if (has_suffix(name, ".tmp"))
			continue;
		if (has_suffix(name, ".error")) {
			if (!with_errors)
				continue;
			name[strlen(name) - strlen(".error")] = '\0';
		}
		if (!gb_policy_valid_name(name) || has_suffix(name, ".error") || listed(v, n, name))
			continue;
		nv = realloc(v, (n + 2) * sizeof(*v));
		if (!nv)
			goto oom;
		v = nv;
		v[n++] = TAKE_PTR(name);
		v[n] = NULL;
	}
	closedir(d);
	if (v)
		qsort(v, n, sizeof(*v), cmp_str);
	*names = v;
	return 0;
oom:
	strv_free(v);
	closedir(d);
	return -ENOMEM;
}

void gb_slice_state_remove(const char *dir, const char *name)
{
	char path[PATH_MAX];

	if (path_of(path, sizeof(path), dir, name, "") == 0)
		(void)unlink(path);
	(void)gb_slice_error_write(dir, name, NULL);
}

int gb_slice_error_write(const char *dir, const char *name, const char *why)
{
	_cleanup_free_ char *text = NULL;
	char path[PATH_MAX];
	int r = path_of(path, sizeof(path), dir, name, ".error");

	if (r < 0)
		return r;
	if (!why) {
		if (unlink(path) < 0 && errno != ENOENT)
			return -errno;
		return 0;
	}
	/* One line: the reader takes the first. */
	if (asprintf(&text, "%.*s\n", (int)strcspn(why, "\n"), why) < 0)
		return -ENOMEM;
	return write_atomic(dir, path, text);
}

int gb_slice_error_read(const char *dir, const char *name, char **why)
{
	_cleanup_free_ char *line = NULL;
	char path[PATH_MAX];
	size_t cap = 0;
	ssize_t len;
	FILE *f;
	int r = path_of(path, sizeof(path), dir, name, ".error");

	*why = NULL;
	if (r < 0)
		return r;
	f = fopen(path, "re");
	if (!f)
		return -errno;
	len = getline(&line, &cap, f);
	fclose(f);
	if (len > 0 && line[len - 1] == '\n')
		line[--len] = '\0';
	if (len <= 0 || len > GB_SLICE_STATE_LINE_MAX || strlen(line) != (size_t)len)
		return -EBADMSG;
	*why = TAKE_PTR(line);
	return 0;
}
