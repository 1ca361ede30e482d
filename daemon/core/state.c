/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "state.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <systemd/sd-daemon.h>
#include <unistd.h>

#include "log.h"
#include "macro.h"

#define DEFAULT_STATE_DIR "/run/gpiod-broker"

int state_init(State *s, const char *dir)
{
	const char *ns = getenv("NOTIFY_SOCKET");
	const char *d = dir;

	s->fdstore = ns && *ns;
	if (!d) {
		const char *rd = getenv("RUNTIME_DIRECTORY");

		/* Several RuntimeDirectory= entries come colon-separated; ours is the first. */
		if (rd && *rd)
			s->dir = strndup(rd, strcspn(rd, ":"));
		else
			d = DEFAULT_STATE_DIR;
	}
	if (d)
		s->dir = strdup(d);
	if (!s->dir)
		return -ENOMEM;
	/* Run by hand, nobody would keep the fds: recording is then only asked for
	 * by --state-dir (records alone still give safe states after a crash). */
	s->record = s->fdstore || dir;
	if (s->record && mkdir(s->dir, 0700) < 0 && errno != EEXIST)
		log_warning_errno(errno, "cannot create state directory %s: %m", s->dir);
	log_debug("state directory %s%s%s", s->dir, s->record ? ", recording" : "",
		  s->fdstore ? ", fd store" : "");
	return 0;
}

void state_done(State *s)
{
	free(s->dir);
	s->dir = NULL;
}

static void record_path(const State *s, uint64_t id, bool tmp, char *buf, size_t size)
{
	snprintf(buf, size, tmp ? "%s/.request-%" PRIu64 ".tmp" : "%s/request-%" PRIu64, s->dir, id);
}

void state_remove_fd(State *s, uint64_t id, unsigned int k)
{
	char msg[64], name[40];
	int r;

	if (!s->fdstore)
		return;
	gb_record_fd_name(id, k, name, sizeof(name));
	snprintf(msg, sizeof(msg), "FDSTOREREMOVE=1\nFDNAME=%s", name);
	r = sd_notify(0, msg);
	if (r < 0)
		log_warning_errno(r, "cannot remove %s from the fd store: %m", name);
}

static int write_record(State *s, const struct gb_record *rec)
{
	char path[PATH_MAX], tmp[PATH_MAX];
	FILE *f;
	int fd, e;

	record_path(s, rec->id, false, path, sizeof(path));
	record_path(s, rec->id, true, tmp, sizeof(tmp));
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return -errno;
	f = fdopen(fd, "w");
	if (!f) {
		e = -errno;
		close(fd);
		unlink(tmp);
		return e;
	}
	e = gb_record_write(rec, f);
	if (e < 0) {
		fclose(f);
		unlink(tmp);
		return e;
	}
	if (fclose(f) != 0 || rename(tmp, path) < 0) {
		e = -errno;
		unlink(tmp);
		return e;
	}
	return 0;
}

bool state_save(State *s, const struct gb_record *rec, const int *fds, unsigned int n_fds,
		const char *what)
{
	unsigned int k;
	int r;

	if (!s->record)
		return false;
	r = write_record(s, rec);
	if (r < 0) {
		log_warning_errno(r, "%s: cannot write its state to %s: %m; it will not survive a "
				  "restart", what, s->dir);
		return false;
	}
	for (k = 0, r = 1; s->fdstore && k < n_fds; k++) {
		char msg[80], name[40];
		int fd = fds[k];

		gb_record_fd_name(rec->id, k, name, sizeof(name));
		snprintf(msg, sizeof(msg), "FDSTORE=1\nFDNAME=%s", name);
		r = sd_pid_notify_with_fds(0, 0, msg, &fd, 1);
		if (r <= 0)
			break;
	}
	if (s->fdstore && k < n_fds) {
		/* Half a request in the store is worse than none: take it back. */
		log_warning_errno(r ? r : -ENOTCONN, "%s: cannot hand its fds to the service "
				  "manager: %m; it will not survive a restart", what);
		state_remove(s, rec->id, n_fds);
		return false;
	}
	return true;
}

void state_update(State *s, const struct gb_record *rec, const char *what)
{
	int r = write_record(s, rec);

	if (r < 0)
		log_warning_errno(r, "%s: cannot update its state in %s: %m", what, s->dir);
}

void state_delete(State *s, uint64_t id)
{
	char path[PATH_MAX];

	record_path(s, id, false, path, sizeof(path));
	if (unlink(path) < 0 && errno != ENOENT)
		log_warning_errno(errno, "cannot remove %s: %m", path);
}

void state_remove(State *s, uint64_t id, unsigned int n_fds)
{
	for (unsigned int k = 0; k < n_fds; k++)
		state_remove_fd(s, id, k);
	state_delete(s, id);
}

/* --- at start: what the previous broker left -------------------------------- */

void state_passed_collect(State *s, StatePassed *p, uint64_t *max_id)
{
	int n = sd_listen_fds_with_names(1, &p->names);

	if (n < 0) {
		log_warning_errno(n, "cannot read the fds passed in: %m");
		n = 0;
	}
	if (n > 0 && !(p->v = calloc(n, sizeof(*p->v)))) {
		log_error("out of memory: closing the %d fds passed in", n);
		for (int i = 0; i < n; i++)
			close(SD_LISTEN_FDS_START + i);
		n = 0;
	}
	for (int i = 0; i < n; i++) {
		struct state_fd *e = &p->v[p->n++];
		const char *name = p->names && p->names[i] ? p->names[i] : "unknown";

		e->fd = SD_LISTEN_FDS_START + i;
		e->name = p->names ? p->names[i] : NULL;
		if (!gb_record_parse_fd_name(name, &e->id, &e->k)) {
			log_warning("passed fd %d named \"%s\" is not a line request of ours: closing it",
				    e->fd, name);
			close(e->fd);
			e->fd = -1;
		} else if (*max_id < e->id) {
			*max_id = e->id;
		}
	}
	if (n > 0)
		log_info("%d fd(s) passed in by the service manager", n);
}

int state_passed_take(StatePassed *p, uint64_t id, unsigned int k)
{
	for (size_t i = 0; i < p->n; i++)
		if (p->v[i].fd >= 0 && p->v[i].id == id && p->v[i].k == k) {
			int fd = p->v[i].fd;

			p->v[i].fd = -1;
			return fd;
		}
	return -1;
}

void state_passed_drop(State *s, StatePassed *p, uint64_t id)
{
	for (size_t i = 0; i < p->n; i++)
		if (p->v[i].fd >= 0 && p->v[i].id == id) {
			state_remove_fd(s, id, p->v[i].k);
			close(p->v[i].fd);
			p->v[i].fd = -1;
		}
}

void state_passed_done(State *s, StatePassed *p)
{
	for (size_t i = 0; i < p->n; i++)
		if (p->v[i].fd >= 0) {
			log_warning("passed fd \"%s\" has no state file in %s: closing it (its lines "
				    "go back to the kernel as they are)", p->v[i].name, s->dir);
			state_remove_fd(s, p->v[i].id, p->v[i].k);
			close(p->v[i].fd);
		}
	free(p->v);
	strv_free(p->names);
	*p = (StatePassed){ 0 };
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

int state_list(State *s, uint64_t **ret, size_t *n_ret)
{
	uint64_t *ids = NULL;
	size_t n = 0, cap = 0;
	DIR *d = opendir(s->dir);

	if (!d && errno != ENOENT)
		log_full_errno(s->record ? LOG_WARNING : LOG_DEBUG, errno,
			       "cannot read state directory %s: %m", s->dir);
	for (struct dirent *de; d && (de = readdir(d));) {
		uint64_t id;

		if (strncmp(de->d_name, ".request-", 9) == 0) {
			/* A write cut short by a crash; the renamed version is the state. */
			unlinkat(dirfd(d), de->d_name, 0);
			continue;
		}
		if (strncmp(de->d_name, "request-", 8) != 0 || !gb_parse_u64(de->d_name + 8, &id))
			continue;
		if (n == cap) {
			void *v = realloc(ids, (cap = cap ? cap * 2 : 16) * sizeof(*ids));

			if (!v)
				break;
			ids = v;
		}
		ids[n++] = id;
	}
	if (d)
		closedir(d);
	if (n)
		qsort(ids, n, sizeof(*ids), cmp_u64);
	*ret = ids;
	*n_ret = n;
	return 0;
}

int state_load(State *s, uint64_t id, struct gb_record *rec)
{
	_cleanup_free_ char *text = NULL;
	char path[PATH_MAX], err[160];
	unsigned int lineno;
	size_t size = 0;
	FILE *f;
	int r;

	record_path(s, id, false, path, sizeof(path));
	f = fopen(path, "re");
	if (!f)
		return log_error_errno(errno, "state file %s: cannot open: %m", path);
	/* A record is a few hundred bytes; 1 MiB is damage, not a record. */
	text = malloc(1024 * 1024);
	if (!text) {
		fclose(f);
		return -ENOMEM;
	}
	size = fread(text, 1, 1024 * 1024, f);
	fclose(f);
	r = gb_record_parse(text, size, id, rec, &lineno, err, sizeof(err));
	if (r == -EINVAL) {
		if (lineno)
			log_error("state file %s: line %u: %s; releasing request %" PRIu64, path,
				  lineno, err, id);
		else
			log_error("state file %s: %s; releasing request %" PRIu64, path, err, id);
	} else if (r < 0) {
		log_error_errno(r, "state file %s: %m; releasing request %" PRIu64, path, id);
	}
	return r;
}
