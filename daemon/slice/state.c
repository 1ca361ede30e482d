/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The slices' state files (slice.h): key=value lines, one line= per slice line. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "macro.h"
#include "slice.h"

void slice_clear(struct slice *s)
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

static bool streq_null(const char *a, const char *b)
{
	return strcmp(a ? a : "", b ? b : "") == 0;
}

bool slice_same(const struct slice *a, const struct slice *b)
{
	if (!streq_null(a->spec, b->spec) || !streq_null(a->users, b->users) ||
	    !streq_null(a->groups, b->groups) || a->n_lines != b->n_lines)
		return false;
	for (size_t i = 0; i < a->n_lines; i++)
		if (strcmp(a->lines[i].parent, b->lines[i].parent) != 0 ||
		    a->lines[i].offset != b->lines[i].offset || a->lines[i].safe != b->lines[i].safe ||
		    !streq_null(a->lines[i].item, b->lines[i].item))
			return false;
	return true;
}

static int write_atomic(const char *path, const char *text)
{
	char tmp[512];
	size_t len = strlen(text);
	int fd, r = 0;

	/* The broker, not root, reads them: world-readable whatever the umask. */
	if (mkdir(SLICE_STATE_DIR, 0755) < 0 && errno != EEXIST)
		return -errno;
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0)
		return -errno;
	if (fchmod(fd, 0644) < 0 || write(fd, text, len) != (ssize_t)len || fsync(fd) < 0)
		r = errno ? -errno : -EIO;
	if (close(fd) < 0 && !r)
		r = -errno;
	/* The broker reads these: it must find the old file or the new, never half. */
	if (!r && rename(tmp, path) < 0)
		r = -errno;
	if (r)
		(void)unlink(tmp);
	return r;
}

int slice_state_write(const struct slice *s)
{
	_cleanup_free_ char *text = NULL;
	char path[512];
	size_t size = 0;
	FILE *f = open_memstream(&text, &size);

	if (!f)
		return -ENOMEM;
	fprintf(f, "device=%s\nchip=%s\nspec=%s\nusers=%s\ngroups=%s\n", s->device, s->chip,
		s->spec ? s->spec : "", s->users ? s->users : "", s->groups ? s->groups : "");
	for (size_t i = 0; i < s->n_lines; i++)
		fprintf(f, "line=%s %u %s %s\n", s->lines[i].parent, s->lines[i].offset,
			gb_safe_state_name(s->lines[i].safe), s->lines[i].item);
	if (fclose(f) != 0)
		return -ENOMEM;
	snprintf(path, sizeof(path), SLICE_STATE_DIR "/%s", s->name);
	return write_atomic(path, text);
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

static int parse_line(struct slice *s, char *v)
{
	struct slice_line *n, *l;
	char *parent = strtok(v, " "), *offset = strtok(NULL, " "), *safe = strtok(NULL, " ");
	char *item = strtok(NULL, ""), *end;

	if (!parent || !offset || !safe || !item || strlen(parent) >= sizeof(l->parent))
		return -EBADMSG;
	n = realloc(s->lines, (s->n_lines + 1) * sizeof(*n));
	if (!n)
		return -ENOMEM;
	s->lines = n;
	l = &s->lines[s->n_lines];
	memset(l, 0, sizeof(*l));
	snprintf(l->parent, sizeof(l->parent), "%s", parent);
	errno = 0;
	l->offset = (unsigned int)strtoul(offset, &end, 10);
	if (errno || *end || parse_safe(safe, &l->safe) < 0)
		return -EBADMSG;
	l->item = strdup(item);
	if (!l->item)
		return -ENOMEM;
	s->n_lines++;
	return 0;
}

static int set_string(char **dst, const char *v)
{
	free(*dst);
	*dst = strdup(v);
	return *dst ? 0 : -ENOMEM;
}

int slice_state_read(const char *name, struct slice *s)
{
	_cleanup_free_ char *line = NULL;
	char path[512];
	size_t cap = 0;
	ssize_t len;
	FILE *f;
	int r = 0;

	slice_clear(s);
	snprintf(path, sizeof(path), SLICE_STATE_DIR "/%s", name);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	s->name = strdup(name);
	if (!s->name)
		r = -ENOMEM;
	while (r >= 0 && (len = getline(&line, &cap, f)) > 0) {
		char *eq;

		if (line[len - 1] == '\n')
			line[len - 1] = '\0';
		eq = strchr(line, '=');
		if (!eq) {
			r = -EBADMSG;
			break;
		}
		*eq++ = '\0';
		if (strcmp(line, "device") == 0)
			snprintf(s->device, sizeof(s->device), "%s", eq);
		else if (strcmp(line, "chip") == 0)
			snprintf(s->chip, sizeof(s->chip), "%s", eq);
		else if (strcmp(line, "spec") == 0)
			r = set_string(&s->spec, eq);
		else if (strcmp(line, "users") == 0)
			r = set_string(&s->users, eq);
		else if (strcmp(line, "groups") == 0)
			r = set_string(&s->groups, eq);
		else if (strcmp(line, "line") == 0)
			r = parse_line(s, eq);
		/* other keys: written by a later version, not needed here */
	}
	fclose(f);
	if (r >= 0 && (!s->device[0] || !s->chip[0]))
		r = -EBADMSG;
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

int slice_state_names(char ***names, bool errors)
{
	DIR *d = opendir(SLICE_STATE_DIR);
	struct dirent *de;
	char **v = NULL;
	size_t n = 0;

	*names = NULL;
	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while ((de = readdir(d))) {
		char **nv;

		size_t len = strlen(de->d_name);

		if (errors) {
			if (!has_suffix(de->d_name, ".error"))
				continue;
			len -= strlen(".error");
		} else if (!gb_policy_valid_name(de->d_name) || has_suffix(de->d_name, ".error") ||
			   has_suffix(de->d_name, ".tmp")) {
			continue;
		}
		nv = realloc(v, (n + 2) * sizeof(*v));
		if (!nv || !(nv[n] = strndup(de->d_name, len))) {
			v = nv ? nv : v;
			for (size_t i = 0; i < n; i++)
				free(v[i]);
			free(v);
			closedir(d);
			return -ENOMEM;
		}
		v = nv;
		v[++n] = NULL;
	}
	closedir(d);
	if (v)
		qsort(v, n, sizeof(*v), cmp_str);
	*names = v;
	return 0;
}

void slice_state_remove(const char *name)
{
	char path[512];

	snprintf(path, sizeof(path), SLICE_STATE_DIR "/%s", name);
	(void)unlink(path);
	(void)slice_error_write(name, NULL);
}

int slice_error_write(const char *name, const char *why)
{
	char path[512], text[2048];

	snprintf(path, sizeof(path), SLICE_STATE_DIR "/%s.error", name);
	if (!why) {
		if (unlink(path) < 0 && errno != ENOENT)
			return -errno;
		return 0;
	}
	snprintf(text, sizeof(text), "%s\n", why);
	return write_atomic(path, text);
}
